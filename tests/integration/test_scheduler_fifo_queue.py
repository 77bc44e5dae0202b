"""A Queue's ``spec.dequeueStrategy`` on a real cluster: under ``fifo`` a job waits behind a head that
cannot be scheduled and its PodGroup says so; switched to ``traverse`` the same job binds past the head."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    api,
    pod_manifest,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name


def _podgroup(name: str, queue: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": members, "queue": queue},
    }


async def test_fifo_holds_a_job_behind_its_head_and_traverse_lets_it_pass(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    queue = f"fifo-{uuid.uuid4().hex[:6]}"
    await api.create(
        QUEUES.collection_path(),
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": queue},
         "spec": {"weight": 1, "dequeueStrategy": "fifo"}},
    )  # fmt: skip
    scheduler = f"vc-{pool}"
    try:
        await start_scheduler(scheduler)
        # The pool has 2 nodes of 8 GPUs: a 3 x 8-GPU gang at the head can never fit.
        await api.create(PODGROUPS.collection_path(namespace), _podgroup("head", queue, 3))
        for i in range(3):
            pod = pod_manifest(f"head-{i}", scheduler, pool, gpus=8, group="head")
            await api.create(PODS.collection_path(namespace), pod)
        await api.create(PODGROUPS.collection_path(namespace), _podgroup("small", queue, 1))
        await api.create(
            PODS.collection_path(namespace), pod_manifest("small-0", scheduler, pool, gpus=1, group="small")
        )

        async def small_told_why() -> str:
            podgroup = await api.get(PODGROUPS.object_path("small", namespace))
            return " ".join(
                c.get("message") or "" for c in (podgroup.get("status") or {}).get("conditions") or []
            )

        why = await wait_until(small_told_why, "the held job's PodGroup told why", 30)
        assert "spec.dequeueStrategy: fifo" in why and f"waiting behind {namespace}/head" in why, why
        assert not (await pods_by_name(api, namespace))["small-0"]["spec"].get("nodeName")

        await api.patch(QUEUES.object_path(queue), {"spec": {"dequeueStrategy": "traverse"}})

        async def small_bound() -> bool:
            return bool((await pods_by_name(api, namespace))["small-0"]["spec"].get("nodeName"))

        await wait_until(small_bound, "the job bound past the head once the queue traverses", 30)
        assert not any(
            p["spec"].get("nodeName")
            for n, p in (await pods_by_name(api, namespace)).items()
            if n.startswith("head")
        )
    finally:
        for name in ("head", "small"):
            with contextlib.suppress(ApiError):
                await api.delete(PODGROUPS.object_path(name, namespace))
        with contextlib.suppress(ApiError):
            await api.delete(QUEUES.object_path(queue))
