"""A Queue's ``spec.dequeueStrategy`` on a real cluster: under ``fifo`` a job waits behind a head that
cannot be scheduled and its PodGroup says so; switched to ``traverse`` the same job binds past the head.
Under ``fifo`` a job that ends before the head's estimated start backfills, and the head still starts then."""

from __future__ import annotations

import contextlib
import re
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

from volcano_py.api import constants as c
from volcano_py.api.common import parse_time
from volcano_py.devcluster import COMPLETE_AFTER
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name


async def _fifo_queue(api: KubeClient) -> str:
    queue = f"fifo-{uuid.uuid4().hex[:6]}"
    await api.create(
        QUEUES.collection_path(),
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": queue},
         "spec": {"weight": 1, "dequeueStrategy": "fifo"}},
    )  # fmt: skip
    return queue


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
    queue = await _fifo_queue(api)
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
            # Before its pod is seen the PodGroup may say it has none (a loaded machine can show that
            # moment): what it says once the gang is whole is what a user reads.
            podgroup = await api.get(PODGROUPS.object_path("small", namespace))
            said = " ".join(
                c.get("message") or "" for c in (podgroup.get("status") or {}).get("conditions") or []
            )
            return "" if "Not enough valid tasks" in said else said

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


def _conditions(podgroup: dict[str, Any]) -> str:
    return " ".join(c.get("message") or "" for c in (podgroup.get("status") or {}).get("conditions") or [])


async def test_fifo_backfills_a_short_job_holds_a_long_one_and_the_head_starts_on_time(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    queue = await _fifo_queue(api)
    scheduler = f"vc-{pool}"
    names = ("runner", "head", "short", "long")

    async def job(name: str, members: int, gpus: int, runtime: str, *, runs_for: str = "") -> None:
        await api.create(PODGROUPS.collection_path(namespace), _podgroup(name, queue, members))
        for i in range(members):
            pod = pod_manifest(f"{name}-{i}", scheduler, pool, gpus=gpus, group=name)
            pod["metadata"]["annotations"][c.EXPECTED_RUNTIME_KEY] = runtime
            if runs_for:
                pod["metadata"]["annotations"][COMPLETE_AFTER] = runs_for
            await api.create(PODS.collection_path(namespace), pod)

    async def pod(name: str) -> dict[str, Any]:
        return (await pods_by_name(api, namespace))[name]

    try:
        await start_scheduler(scheduler)
        # The pool has 2 nodes of 8 GPUs. The runner holds one node's 8 for 8s (declared, and KWOK ends
        # it then); the 2 x 8-GPU head waits for it, and the other node's 8 GPUs are free until then.
        await job("runner", 1, 8, "8s", runs_for="8s")

        async def runner_started() -> str:
            return str(((await pod("runner-0")).get("status") or {}).get("startTime") or "")

        await wait_until(runner_started, "the runner running", 30)
        await job("head", 2, 8, "10m")
        await job("short", 1, 4, "2s", runs_for="2s")  # ends well before the head's start: backfills
        await job("long", 1, 4, "10m")  # would still hold 4 GPUs at the head's start: held

        async def short_told() -> str:
            said = _conditions(await api.get(PODGROUPS.object_path("short", namespace)))
            return said if "backfilled behind" in said else ""

        said = await wait_until(short_told, "the short job backfilled", 10)
        assert f"backfilled behind {namespace}/head" in said and "it ends by" in said, said
        assert (await pod("short-0"))["spec"].get("nodeName")
        estimated = re.search(r"estimated to start at (\S+)\)", said)
        assert estimated, said
        head_at = parse_time(estimated.group(1))
        runner_at = parse_time(await runner_started())
        assert abs((head_at - runner_at).total_seconds() - 8) <= 1, (head_at, runner_at)  # the runner's end

        async def long_told() -> str:
            said = _conditions(await api.get(PODGROUPS.object_path("long", namespace)))
            return said if "may not backfill" in said else ""

        said = await wait_until(long_told, "the long job held with its reason", 10)
        assert f"waiting behind {namespace}/head" in said and "after" in said, said
        assert not (await pod("long-0"))["spec"].get("nodeName")

        async def head_started() -> list[str]:
            pods = [await pod(f"head-{i}") for i in range(2)]
            stamps = [str((p.get("status") or {}).get("startTime") or "") for p in pods]
            return stamps if all(stamps) else []

        try:
            stamps = await wait_until(head_started, "the head running", 30)
        except AssertionError as err:
            head = _conditions(await api.get(PODGROUPS.object_path("head", namespace)))
            phases = {
                n: (p.get("status") or {}).get("phase")
                for n, p in (await pods_by_name(api, namespace)).items()
            }
            raise AssertionError(f"{err}; head says: {head}; pods: {phases}") from None
        for stamp in stamps:
            late = (parse_time(stamp) - head_at).total_seconds()
            # Second-resolution stamps, KWOK's stage delay and a scheduling period or two.
            assert -1.5 <= late <= 4.0, f"head started {late:+.1f}s from its estimated start"
        assert not (await pod("long-0"))["spec"].get("nodeName")
    finally:
        for name in names:
            with contextlib.suppress(ApiError):
                await api.delete(PODGROUPS.object_path(name, namespace))
        with contextlib.suppress(ApiError):
            await api.delete(QUEUES.object_path(queue))
