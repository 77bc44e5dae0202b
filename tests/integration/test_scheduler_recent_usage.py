"""Fair share that remembers, on a real cluster: with proportion's ``recentUsage.halfLife`` the queue that
used less recently is served first, and the scheduler keeps each queue's ledger on the Queue."""

from __future__ import annotations

import contextlib
import json
import math
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    POOL_LABEL,
    api,
    pod_manifest,
    pods_by_name,
    start_scheduler,
    wait_until,
)

from volcano_py.api.constants import RECENT_USAGE_KEY
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES

pytestmark = pytest.mark.integration
__all__ = ["api", "start_scheduler"]  # fixtures used here by name

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
    arguments:
      recentUsage.halfLife: 1h
  - name: nodeorder
"""


@pytest.fixture
def one_node_pool(cluster: Any) -> Any:
    name = f"ru{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(1, prefix=f"{name}-", cpu="16", memory="64Gi", gpus=8, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


async def test_the_queue_that_used_less_recently_goes_first_and_its_ledger_is_kept(
    api: KubeClient, namespace: str, one_node_pool: str, start_scheduler: Any, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    heavy, light = f"heavy-{suffix}", f"light-{suffix}"
    # As a previous scheduler would have left it: the heavy queue held 8 GPUs (8000 milli-units) for hours.
    ledger = {"at": time.time(), "usage": {"nvidia.com/gpu": 8000 * 3600 / math.log(2)}}
    for queue, notes in ((heavy, {RECENT_USAGE_KEY: json.dumps(ledger)}), (light, {})):
        await api.create(
            QUEUES.collection_path(),
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": queue, "annotations": notes}, "spec": {"weight": 1}},
        )  # fmt: skip
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    scheduler = f"vc-{one_node_pool}"
    try:
        # Both wait before the scheduler starts, the heavy queue's first: only one fits the pool's node.
        for job, queue in (("from-heavy", heavy), ("from-light", light)):
            await api.create(
                PODGROUPS.collection_path(namespace),
                {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": job},
                 "spec": {"minMember": 1, "queue": queue}},
            )  # fmt: skip
            pod = pod_manifest(f"{job}-0", scheduler, one_node_pool, gpus=8, group=job)
            await api.create(PODS.collection_path(namespace), pod)

        def quick_ledger(s: Any) -> None:
            s.recent_usage.write_every = 0.5

        await start_scheduler(scheduler, scheduler_conf=str(conf), before=quick_ledger)

        async def someone_bound() -> list[str]:
            current = await pods_by_name(api, namespace)
            return [name for name, pod in current.items() if pod["spec"].get("nodeName")]

        assert await wait_until(someone_bound, "one of the two pods bound", 30) == ["from-light-0"]

        async def light_ledger() -> dict[str, Any]:
            queue = await api.get(QUEUES.object_path(light))
            text = ((queue.get("metadata") or {}).get("annotations") or {}).get(RECENT_USAGE_KEY)
            usage = json.loads(text)["usage"] if text else {}
            return usage if usage.get("nvidia.com/gpu", 0) > 0 else {}

        usage = await wait_until(light_ledger, "the light queue's ledger written with its GPU use", 30)
        # 8 GPUs (8000 milli-units) for the few seconds the pod has held them, not more.
        assert usage["nvidia.com/gpu"] < 8000 * 60, usage
    finally:
        for job in ("from-heavy", "from-light"):
            with contextlib.suppress(ApiError):
                await api.delete(PODGROUPS.object_path(job, namespace))
        for queue in (heavy, light):
            with contextlib.suppress(ApiError):
                await api.delete(QUEUES.object_path(queue))
