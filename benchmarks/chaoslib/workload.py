"""The chaos run's workload: Volcano Jobs of gangs 1-64 that finish or fail through KWOK's annotations.

Pure: a seed in, job plans and manifests out. Each pod asks for one GPU, so gangs contend for whole nodes; a
share of jobs runs at a higher priority and preempts (the victims restart through ``PodEvicted ->
RestartJob``); a share fails on purpose. Every plan says the phase its Job must end in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.batch import JobPhase
from volcano_py.devcluster.stages import COMPLETE_AFTER, FAIL_AFTER

LOW_PRIORITY = "chaos-low"
HIGH_PRIORITY = "chaos-high"
PRIORITY_VALUES = {LOW_PRIORITY: 100, HIGH_PRIORITY: 1000}
# Gang sizes and how often each is drawn: mostly small, a few that take half the cluster.
SIZE_WEIGHTS: tuple[tuple[int, int], ...] = ((1, 30), (2, 15), (4, 15), (8, 15), (16, 10), (32, 8), (64, 7))
TASK = "w"
# The preemption scenario's queue: its own, so the enqueue gate counts only its Jobs and admits a
# high-priority gang while the default queue is over its capability (where the steady workload keeps it).
PREEMPT_QUEUE = "chaos-preempt"


@dataclass(frozen=True, slots=True)
class JobPlan:
    name: str
    size: int
    priority: str = LOW_PRIORITY
    outcome: JobPhase = JobPhase.COMPLETED  # COMPLETED, FAILED, or RUNNING for a job that never ends
    seconds: float = 5.0
    gpus: int = 1
    # Below ``size``: an elastic Job whose pods beyond it another gang may preempt (its pods are recreated);
    # None: a whole gang, restarted whole if a pod is evicted.
    min_available: int | None = None
    queue: str = c.DEFAULT_QUEUE
    nodes: tuple[str, ...] = ()  # only these nodes (by name), if any

    @property
    def gpu_total(self) -> int:
        return self.size * self.gpus


def plan_jobs(
    count: int,
    *,
    seed: int,
    max_gang: int = 64,
    fail_fraction: float = 0.15,
    high_fraction: float = 0.2,
    seconds: tuple[float, float] = (3.0, 10.0),
) -> list[JobPlan]:
    if count < 0 or max_gang < 1:
        raise ValueError(f"jobs must be >= 0 and max_gang >= 1, got {count}, {max_gang}")
    rng = random.Random(seed)
    sizes = [s for s, _ in SIZE_WEIGHTS if s <= max_gang]
    weights = [w for s, w in SIZE_WEIGHTS if s <= max_gang]
    plans = []
    for i in range(count):
        size = rng.choices(sizes, weights)[0]
        fails = size <= 4 and rng.random() < fail_fraction
        plans.append(
            JobPlan(
                name=f"j{i:03d}-{size}",
                size=size,
                priority=HIGH_PRIORITY if rng.random() < high_fraction else LOW_PRIORITY,
                outcome=JobPhase.FAILED if fails else JobPhase.COMPLETED,
                seconds=round(rng.uniform(*seconds), 1),
            )
        )
    return plans


def _pinned(nodes: tuple[str, ...]) -> dict[str, Any]:
    if not nodes:
        return {}
    # A node field selector takes one value per requirement: one term (terms are ORed) per node.
    terms = [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]} for node in nodes
    ]
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": terms}}}}  # fmt: skip


def queue(name: str) -> dict[str, Any]:
    return {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": name},
            "spec": {"weight": 1, "reclaimable": True}}  # fmt: skip


def priority_class(name: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": PRIORITY_VALUES[name], "description": "chaos workload"}  # fmt: skip


def job_manifest(plan: JobPlan, namespace: str, *, scheduler: str = c.SCHEDULER_NAME) -> dict[str, Any]:
    annotations: dict[str, str] = {}
    if plan.outcome is JobPhase.COMPLETED:
        annotations[COMPLETE_AFTER] = f"{plan.seconds}s"
    elif plan.outcome is JobPhase.FAILED:
        annotations[FAIL_AFTER] = f"{plan.seconds}s"
    requests = {"cpu": "1", "memory": "1Gi"}
    limits = {}
    if plan.gpus:
        requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(plan.gpus)
    else:
        requests["cpu"] = "100m"
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "metadata": {"name": plan.name, "namespace": namespace},
        "spec": {
            "schedulerName": scheduler,
            "queue": plan.queue,
            "minAvailable": plan.size if plan.min_available is None else plan.min_available,
            "priorityClassName": plan.priority,
            "policies": (
                [{"event": "PodEvicted", "action": "RestartJob"}] if plan.min_available is None else []
            ),
            "tasks": [
                {
                    "name": TASK,
                    "replicas": plan.size,
                    "template": {
                        "metadata": {"annotations": annotations},
                        "spec": {
                            **_pinned(plan.nodes),
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": TASK,
                                    "image": "busybox",
                                    "resources": {"requests": requests, "limits": limits},
                                }
                            ],
                        },
                    },
                }
            ],
        },
    }
