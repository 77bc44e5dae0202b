"""shuffle with rescheduling on a real control plane: pods piled on one node are evicted by the scheduler
(condition, Event, metric, as preempt's) and their ReplicaSet's replacements land on the node with room."""

from __future__ import annotations

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

from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import NODES, PODS, REPLICASETS

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name

SHUFFLE_CONF = """\
actions: "enqueue, allocate, backfill, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: nodeorder
  - name: rescheduling
    arguments:
      interval: 1s
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 20}
          targetThresholds: {cpu: 50}
"""


def replicaset(name: str, scheduler: str, pool: str, replicas: int, cpu: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": scheduler,
                    "nodeSelector": {POOL_LABEL: pool},
                    "containers": [
                        {"name": "main", "image": "busybox",
                         "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}
                    ],
                },
            },
        },
    }  # fmt: skip


async def _cordon(api: KubeClient, node: str, cordoned: bool) -> None:
    await api.patch(NODES.object_path(node), {"spec": {"unschedulable": cordoned or None}})


async def test_shuffle_moves_pods_off_an_over_used_node(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(SHUFFLE_CONF)
    scheduler = f"vc-{pool}"
    crowded, empty = f"{pool}-0", f"{pool}-1"
    await _cordon(api, empty, True)  # every pod lands on the first node: 4 x 3 of its 16 cpu (75%)
    running = await start_scheduler(scheduler, scheduler_conf=str(conf))
    await api.create(REPLICASETS.collection_path(namespace), replicaset("web", scheduler, pool, 4, "3"))

    async def placed() -> dict[str, str]:
        current = await pods_by_name(api, namespace)
        return {
            n: p["spec"].get("nodeName", "")
            for n, p in current.items()
            if not p["metadata"].get("deletionTimestamp")
        }

    async def all_on_crowded() -> bool:
        nodes = await placed()
        return len(nodes) == 4 and set(nodes.values()) == {crowded}

    await wait_until(all_on_crowded, "the 4 pods bound to the one schedulable node", 30)
    first = set(await placed())
    await _cordon(api, empty, False)  # now it is under its thresholds (0%) and the first is over target

    async def spread() -> dict[str, str] | None:
        nodes = await placed()
        on_empty = [n for n, node in nodes.items() if node == empty]
        return nodes if len(nodes) == 4 and len(on_empty) == 2 and all(nodes.values()) else None

    nodes = await wait_until(spread, "two pods moved to the node with room", 40)
    # Exactly two left (75% -> 50%, no longer over the 50% target), the two lowest in order; the rest stayed.
    evicted = first - set(nodes)
    assert len(evicted) == 2 and first - evicted <= set(nodes)
    for name in evicted:
        events = [e for e in await events_for(api, namespace, name) if e["reason"] == "Evict"]
        assert events and "shuffle: rescheduling lowNodeUtilization: node " + crowded in events[0]["message"]
    assert running.scheduler.metrics.evictions.labels("shuffle")._value.get() == 2
    # Balanced now (each node at 37.5%, neither under its 20% threshold): nothing more is evicted.
    cycles = running.scheduler.cycles
    await wait_until(lambda: running.scheduler.cycles > cycles + 10, "ten more scheduling cycles", 10)
    assert running.scheduler.metrics.evictions.labels("shuffle")._value.get() == 2
    still = await api.get(PODS.collection_path(namespace))
    assert sum(1 for p in still["items"] if not p["metadata"].get("deletionTimestamp")) == 4
