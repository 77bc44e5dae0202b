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


@dataclass(frozen=True, slots=True)
class JobPlan:
    name: str
    size: int
    priority: str = LOW_PRIORITY
    outcome: JobPhase = JobPhase.COMPLETED  # COMPLETED, FAILED, or RUNNING for a job that never ends
    seconds: float = 5.0
    gpus: int = 1

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
            "queue": c.DEFAULT_QUEUE,
            "minAvailable": plan.size,
            "priorityClassName": plan.priority,
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "tasks": [
                {
                    "name": TASK,
                    "replicas": plan.size,
                    "template": {
                        "metadata": {"annotations": annotations},
                        "spec": {
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
