"""The preemption scenario: a full queue, a high-priority gang admitted into it, the scheduler killed between
the evictions it decided for that gang.

Preempt only considers gangs that ``enqueue`` admitted, and enqueue admits a gang only while its queue's
allocated, admitted and requested resources fit the queue's capability (less what its jobs hold beyond their
``minAvailable``, which other gangs may take). So the scenario runs in a queue of its own
(``workload.PREEMPT_QUEUE``): an elastic low-priority filler (``minAvailable`` 1) first takes every free GPU
and asks for more, then a high-priority gang arrives; the queue's capability is the cluster's, the filler's
pods beyond its minimum do not count against it, so the gang is admitted, finds the cluster full, and preempt
evicts filler pods for it. The kill is on the scheduler's first ``evicted`` line for the gang, with at most 4
evictions in flight (``--bind-concurrency``): the rest of the plan, and its binds, are left to the next
scheduler. Filler and gang are pinned to a few nodes (``PREEMPT_NODES``), so "full" costs a few dozen pods on
a cluster of any size.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from benchmarks.chaoslib.processes import Component, LogLine
from benchmarks.chaoslib.workload import HIGH_PRIORITY, LOW_PRIORITY, PREEMPT_QUEUE, JobPlan
from volcano_py.api import constants as c
from volcano_py.kube.kinds import NODES, PODS
from volcano_py.resources import Resource, pod_request

if TYPE_CHECKING:
    from benchmarks.chaoslib.driver import ChaosRun

GANG = 8  # the preemptor gang's pods, one GPU each
PREEMPT_NODES = 3  # the first nodes by name: 24 GPUs with 8 each
GPU = "nvidia.com/gpu"
FILL_SECONDS = 30.0


async def pinned_nodes(run: ChaosRun) -> tuple[str, ...]:
    return tuple(sorted(str(n["metadata"]["name"]) for n in await run._list(NODES))[:PREEMPT_NODES])


async def free_gpus(run: ChaosRun, nodes: tuple[str, ...]) -> int:
    """Free GPUs on ``nodes``, read node by node (a cluster of 1,000 nodes is not listed for three)."""
    total = used = 0
    for node in nodes:
        for listed in await run._list(NODES, fieldSelector=f"metadata.name={node}"):
            total += Resource.parse((listed.get("status") or {}).get("allocatable")).amount(GPU)
        for pod in await run._list(PODS, fieldSelector=f"spec.nodeName={node}"):
            if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                used += pod_request(pod.get("spec") or {}).amount(GPU)
    return max(0, round((total - used) / 1000))  # amounts are in thousandths


async def fill(run: ChaosRun, number: int) -> tuple[str, tuple[str, ...]]:
    """Submit a filler that takes every free GPU and waits for more; return when it holds the GPUs it could
    get and still has pods pending (the cluster is full), or after FILL_SECONDS."""
    nodes = await pinned_nodes(run)
    free = await free_gpus(run, nodes)
    filler = JobPlan(
        f"filler-{number:03d}",
        free + GANG,
        priority=LOW_PRIORITY,
        seconds=15.0,
        min_available=1,
        queue=PREEMPT_QUEUE,
        nodes=nodes,
    )
    await run.submit(filler)
    selector = f"{c.JOB_NAME_KEY}={filler.name}"
    deadline = time.monotonic() + FILL_SECONDS
    placed = pending = 0
    while time.monotonic() < deadline:
        pods = await run._list(PODS, run.namespace, labelSelector=selector)
        placed = sum(1 for p in pods if (p.get("spec") or {}).get("nodeName"))
        pending = len(pods) - placed
        if placed > GANG and pending > 0 and await free_gpus(run, nodes) == 0:
            break
        await asyncio.sleep(0.3)
    return f"{filler.name}: {placed} placed on {len(nodes)} nodes, {pending} pending", nodes


def preemptor(number: int, nodes: tuple[str, ...]) -> JobPlan:
    return JobPlan(
        f"preemptor-{number:03d}", GANG, priority=HIGH_PRIORITY, seconds=3.0, queue=PREEMPT_QUEUE, nodes=nodes
    )


def first_eviction_for(plan: JobPlan, namespace: str) -> Callable[[LogLine], bool]:
    prefix = f"{namespace}/{plan.name}-"

    def matches(line: LogLine) -> bool:
        return line.get("event") == "evicted" and str(line.get("preemptor") or "").startswith(prefix)

    return matches


def evicted_for(component: Component, plan: JobPlan, namespace: str) -> int:
    """Evictions for ``plan``'s gang that the component's last start saw answered (its ``evicted`` lines;
    a kill can land before the ``Evict`` Event of an eviction that was done is written)."""
    starts = component.log_starts(b'"evicted"')
    lines = starts[-1][1] if starts else []
    prefix = f"{namespace}/{plan.name}-"
    return sum(1 for line in lines if str(line.get("preemptor") or "").startswith(prefix))
