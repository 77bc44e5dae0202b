"""tdm on a real control plane: a preemptable pod waits off a revocable node while its zone's window is
closed, runs there once the window opens, and is evicted by shuffle when it closes again. The window is set
relative to now and moved by rewriting the conf file, which the scheduler re-reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    POOL_LABEL,
    api,
    events_for,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from volcano_py.api import constants as c
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import NODES, PODS

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name


def _window(start: timedelta, end: timedelta) -> str:
    now = datetime.now(UTC)
    return f"{(now + start):%H:%M}-{(now + end):%H:%M}"


def conf(zone: str, window: str) -> str:
    return f"""\
actions: "enqueue, allocate, backfill, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: tdm
    arguments:
      tdm.revocable-zone.{zone}: "{window}"
      tdm.evict.period: 1s
- plugins:
  - name: predicates
  - name: nodeorder
"""


def pod(name: str, scheduler: str, pool: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "schedulerName": scheduler,
            "nodeSelector": {POOL_LABEL: pool},
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }  # fmt: skip


async def test_tdm_lends_a_revocable_node_only_inside_its_window(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    ordinary, lent = f"{pool}-0", f"{pool}-1"
    zone = f"rz-{pool}"
    await api.patch(NODES.object_path(lent), {"metadata": {"labels": {c.REVOCABLE_ZONE_KEY: zone}}})
    await api.patch(
        NODES.object_path(ordinary), {"spec": {"unschedulable": True}}
    )  # only the lent node is left
    path = tmp_path / "volcano-scheduler.conf"
    closed = _window(timedelta(hours=2), timedelta(hours=3))
    path.write_text(conf(zone, closed))
    scheduler = f"vc-{pool}"
    running = await start_scheduler(scheduler, scheduler_conf=str(path))
    await api.create(
        PODS.collection_path(namespace), pod("spot", scheduler, pool, {c.PREEMPTABLE_KEY: "true"})
    )
    await api.create(PODS.collection_path(namespace), pod("steady", scheduler, pool, {}))

    async def told(name: str, words: str) -> bool:
        return any(words in e["message"] for e in await events_for(api, namespace, name))

    for name in ("spot", "steady"):
        await wait_until(
            lambda n=name: told(n, f"in revocable zone {zone} outside its window"), f"{name} told", 20
        )
    assert not any(p["spec"].get("nodeName") for p in (await pods_by_name(api, namespace)).values())

    path.write_text(conf(zone, _window(timedelta(hours=-1), timedelta(hours=1))))  # the window opens

    async def spot_on_lent_node() -> bool:
        return (await pods_by_name(api, namespace))["spot"]["spec"].get("nodeName") == lent

    await wait_until(spot_on_lent_node, "the preemptable pod bound to the revocable node", 20)
    await wait_until(
        lambda: told("steady", "and the pod is not volcano.sh/preemptable"), "steady kept off", 20
    )
    assert not (await pods_by_name(api, namespace))["steady"]["spec"].get("nodeName")

    path.write_text(conf(zone, closed))  # the window closes

    async def spot_evicted() -> bool:
        current = (await pods_by_name(api, namespace)).get("spot")
        return current is None or bool(current["metadata"].get("deletionTimestamp"))

    await wait_until(spot_evicted, "the preemptable pod evicted once the window closed", 20)

    async def evict_events() -> list[dict[str, Any]]:
        return [e for e in await events_for(api, namespace, "spot") if e["reason"] == "Evict"]

    # The event is recorded beside the eviction, not before it: a reader may see the pod go first.
    evict = await wait_until(evict_events, "the Evict event on the preemptable pod", 10)
    assert f"shuffle: tdm: revocable zone {zone}'s window {closed} (UTC) has closed" in evict[0]["message"]
    assert running.scheduler.metrics.evictions.labels("shuffle")._value.get() == 1
