"""An HTTP scheduler extender through the real API: the scheduler asks a test extender served here, whose
filter refuses one node and whose scores pick another than the scheduler's own choice."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from test_scheduler_binding import (  # type: ignore[import-not-found]
    POOL_LABEL,
    api,
    events_for,
    pod_manifest,
    pods_by_name,
    start_scheduler,
    wait_until,
)

from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODS

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]  # fixtures used here by name


class TestExtender:
    """Refuses ``<pool>-0`` ("draining") and scores ``<pool>-2`` above every other node."""

    __test__ = False

    def __init__(self, pool: str) -> None:
        self.pool = pool
        self.calls: list[tuple[str, Any]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        verb = request.match_info["verb"]
        body = await request.json()
        self.calls.append((verb, body))
        if verb == "filter":
            if body["node"]["Name"] == f"{self.pool}-0":
                return web.json_response({"status": "draining for maintenance", "code": 2})
            return web.json_response({"status": "", "code": 0})
        if verb == "prioritize":
            scores = {n["Name"]: (100.0 if n["Name"] == f"{self.pool}-2" else 0.0) for n in body["nodes"]}
            return web.json_response({"nodeScore": scores, "errorMessage": ""})
        return web.json_response({})

    def asked(self, verb: str, pod: str) -> list[Any]:
        return [body for v, body in self.calls if v == verb and body["task"]["Name"] == pod]


@pytest.fixture
def pool(cluster: Any) -> Iterator[str]:
    name = f"ex{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(3, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=8, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


@pytest.fixture
async def extender(pool: str) -> AsyncIterator[TestExtender]:
    served = TestExtender(pool)
    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/ext/{verb}", served.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    served.url = f"http://{host}:{port}/ext"
    try:
        yield served
    finally:
        await runner.cleanup()


def _conf(tmp_path: Path, url: str) -> str:
    arguments = {
        "extender.urlPrefix": url,
        "extender.httpTimeout": "2s",
        "extender.onSessionOpenVerb": "open",
        "extender.onSessionCloseVerb": "close",
        "extender.predicateVerb": "filter",
        "extender.prioritizeVerb": "prioritize",
    }
    body = "".join(f"      {key}: {json.dumps(value)}\n" for key, value in arguments.items())
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(
        'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
        "- plugins:\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: cpsat\n"
        f"  - name: extender\n    arguments:\n{body}"
    )
    return str(path)


async def test_the_extenders_filter_removes_a_node_and_its_score_changes_the_choice(
    api: KubeClient,
    namespace: str,
    pool: str,
    extender: TestExtender,
    start_scheduler: Any,
    tmp_path: Path,
) -> None:
    name = f"vc-{pool}"
    # Half of <pool>-2 is taken by a pod of another scheduler: on its own, least-requested scoring sends a
    # new pod to <pool>-0 or <pool>-1.
    busy = pod_manifest("busy", "default-scheduler", pool, gpus=0)
    busy["spec"]["nodeName"] = f"{pool}-2"
    busy["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "8"
    await api.create(PODS.collection_path(namespace), busy)
    await start_scheduler(name, scheduler_conf=_conf(tmp_path, extender.url))
    await api.create(PODS.collection_path(namespace), pod_manifest("placed", name, pool))
    # Only <pool>-0 is allowed by its selector, and the extender refuses it.
    pinned = pod_manifest("pinned", name, pool)
    pinned["spec"]["nodeSelector"]["kubernetes.io/hostname"] = f"{pool}-0"
    await api.create(PODS.collection_path(namespace), pinned)

    async def placed_node() -> str:
        pods = await pods_by_name(api, namespace)
        return str(pods["placed"]["spec"].get("nodeName") or "")

    assert await wait_until(placed_node, "pod placed bound", 30) == f"{pool}-2"
    filtered = {body["node"]["Name"] for body in extender.asked("filter", "placed")}
    assert {f"{pool}-0", f"{pool}-1", f"{pool}-2"} <= filtered
    ranked = extender.asked("prioritize", "placed")
    assert ranked and f"{pool}-0" not in {n["Name"] for n in ranked[0]["nodes"]}
    verbs = [verb for verb, _ in extender.calls]
    assert verbs[0] == "open" and "close" in verbs

    async def refused() -> list[str]:
        events = await events_for(api, namespace, "pinned")
        return [e["message"] for e in events if e["reason"] == "FailedScheduling"]

    messages = await wait_until(refused, "a FailedScheduling event on pod pinned", 30)
    assert any(f"refused by extender {extender.url}: draining for maintenance" in m for m in messages), (
        messages
    )
    assert not (await pods_by_name(api, namespace))["pinned"]["spec"].get("nodeName")
