"""The dashboard server over a filled mirror (no API server involved): pages, fragments, JSON, the stream."""

from __future__ import annotations

import asyncio
import json
import re

from aiohttp.test_utils import TestClient, TestServer

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.dashboard.server import Dashboard
from volcano_py.dashboard.state import DashboardState
from volcano_py.kube.store import EventType
from volcano_py.scheduler.core import load_conf


def _state() -> DashboardState:
    state = DashboardState(None, load_conf(None), conf_source="the built-in default conf")  # type: ignore[arg-type]
    objects = {
        "nodes": [make_node("n0", cpu="64", memory="256Gi", gpu=8).obj()],
        "pods": [
            make_pod("run-0").req(cpu="1", gpu=4).group("run").running("n0").obj(),
            make_pod("big-0").req(cpu="1", gpu=16).group("big").obj(),
        ],
        "podgroups": [make_pg("run", phase="Running").obj(), make_pg("big").obj()],
        "queues": [make_queue("root").obj(), make_queue("default").obj()],
    }
    for kind, items in objects.items():
        informer = state.informers[kind]
        for i, item in enumerate(items):
            item["metadata"]["resourceVersion"] = str(i + 1)
        for delta in informer.store.replace(items):
            informer._dispatch(delta)
    return state


async def test_pages_json_and_a_live_change() -> None:
    state = _state()
    notifier = asyncio.create_task(state._notify(interval=0.05))
    async with TestClient(TestServer(Dashboard(state).app)) as client:
        page = await (await client.get("/nodes")).text()
        assert page.startswith("<!DOCTYPE html>") and '<script defer src="/static/app.js">' in page
        assert 'id="gpu-free">4<' in page
        fragment = await (await client.get("/nodes?fragment=1")).text()
        assert "<html" not in fragment and 'id="gpu-free">4<' in fragment
        assert (await client.get("/static/app.js")).status == 200
        assert (await client.get("/static/../state.py")).status == 404

        overview = json.loads(await (await client.get("/api/overview.json")).text())
        # The 4 free GPUs are stranded: the only waiting pod needs 16.
        assert overview["gpus"] == {"total": 8, "used": 4, "free": 4, "stranded": 4}
        assert [j["key"] for j in overview["jobs"]] == ["default/big", "default/run"]

        whatif = json.loads(await (await client.get("/api/whatif/default/big.json")).text())
        assert whatif["suggestions"] == []
        assert "No node in the cluster is large enough" in whatif["text"]

        # A pod bound (as the pod watch reports it): the stream says so, and the page shows it.
        stream = await client.get("/stream")
        assert (await stream.content.readline()).startswith(b"retry:")
        informer = state.informers["pods"]
        bound = make_pod("new-0").req(cpu="1", gpu=4).running("n0").obj()
        bound["metadata"]["resourceVersion"] = "9"
        informer._dispatch(informer.store.apply(EventType.ADDED, bound))
        line = b""
        while not line.startswith(b"event: change"):
            line = await asyncio.wait_for(stream.content.readline(), 5)
        stream.close()
        fragment = await (await client.get("/nodes?fragment=1")).text()
        assert re.search(r'id="gpu-free">0<', fragment)
    notifier.cancel()
