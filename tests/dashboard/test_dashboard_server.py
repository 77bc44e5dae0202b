"""The dashboard server over a filled mirror (no API server involved): pages, fragments, JSON, the stream."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

from aiohttp.test_utils import TestClient, TestServer

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.api import constants as c
from volcano_py.dashboard.server import Dashboard
from volcano_py.dashboard.state import DashboardState
from volcano_py.kube.store import EventType
from volcano_py.kube.waiting import within
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
            line = await within(stream.content.readline(), 5)
        stream.close()
        fragment = await (await client.get("/nodes?fragment=1")).text()
        assert re.search(r'id="gpu-free">0<', fragment)
    notifier.cancel()


async def test_position_and_estimated_start_pages_and_json() -> None:
    state = DashboardState(None, load_conf(None), conf_source="the built-in default conf")  # type: ignore[arg-type]
    started = (datetime.now(UTC) - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")
    running = make_pod("run-0").req(cpu="1", gpu=8).group("run").running("n0")
    running = running.annotate(c.EXPECTED_RUNTIME_KEY, "1h").obj()
    running["status"]["startTime"] = started
    objects = {
        "nodes": [make_node("n0", cpu="64", memory="256Gi", gpu=8).obj()],
        "pods": [running, make_pod("want-0").req(cpu="1", gpu=8).group("want").obj()],
        "podgroups": [make_pg("run", phase="Running").obj(), make_pg("want").obj()],
        "queues": [make_queue("root").obj(), make_queue("default").obj()],
    }
    for kind, items in objects.items():
        informer = state.informers[kind]
        for i, item in enumerate(items):
            item["metadata"]["resourceVersion"] = str(i + 1)
        for delta in informer.store.replace(items):
            informer._dispatch(delta)
    async with TestClient(TestServer(Dashboard(state).app)) as client:
        assert (await client.get("/api/eta.json")).status == 503  # not computed yet: said, not faked
        assert state._store_forecast(state._forecast(state.derived().cluster))
        body = json.loads(await (await client.get("/api/eta.json")).text())
        [eta] = body["jobs"]
        assert (eta["podgroup"], eta["position"], eta["waiting"], eta["basis"]) == (
            "default/want",
            1,
            1,
            "declared",
        )
        one = json.loads(await (await client.get("/api/eta/default/want.json")).text())
        assert one["eta"] == eta and one["text"][0] == "Position: 1 of 1 waiting in queue default"
        assert one["text"][1].startswith("Estimated start: in 50m (") or one["text"][1].startswith(
            "Estimated start: in 49m ("
        )
        page = await (await client.get("/jobs/default/want")).text()
        assert "Position and estimated start" in page and "Position: 1 of 1 waiting in queue default" in page
        queues = await (await client.get("/queues?fragment=1")).text()
        assert 'data-head="default/want" data-basis="declared"' in queues
        jobs = await (await client.get("/jobs?fragment=1")).text()
        assert 'data-position="1" data-basis="declared"' in jobs


async def test_a_waiting_agent_pod_has_a_page_with_its_schedulers_reason() -> None:
    state = _state()
    waiting = make_pod("sandbox").req(cpu="1", gpu=16).scheduler(c.AGENT_SCHEDULER_NAME).obj()
    waiting["metadata"]["resourceVersion"] = "20"
    waiting["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
            }
        ],
    }
    informer = state.informers["pods"]
    informer._dispatch(informer.store.apply(EventType.ADDED, waiting))
    async with TestClient(TestServer(Dashboard(state).app)) as client:
        jobs = await (await client.get("/jobs")).text()
        assert 'href="/jobs/default/sandbox"' in jobs and "1 Insufficient nvidia.com/gpu" in jobs
        page = await (await client.get("/jobs/default/sandbox")).text()
        assert "Pod default/sandbox: scheduler agent-scheduler, queue default, not bound" in page
        assert "Unschedulable: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in page
        assert (await client.get("/jobs/default/nobody")).status == 404
