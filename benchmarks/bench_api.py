"""How fast the API layer reads, writes and validates objects; JSON on stdout.

The scheduler's cache and the controllers parse every PodGroup, Queue and Job they watch, and the admission
webhook validates every write, so these rates bound how much churn one process can follow. The scheduler's
own edge (``TaskInfo.from_pod``, ``JobInfo.from_podgroup``: read straight from the raw body, for every pod
of every cycle) and the controller's (``resolve_job``) are measured beside the pydantic models. Reported per
operation: objects per second and microseconds per object (best of ``--repeat`` runs of ``--count``), with
the machine's load average so that runs can be compared.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api.batch import Job
from volcano_py.api.job_view import resolve_job
from volcano_py.api.scheduling import PodGroup
from volcano_py.api.validation import validate_object
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.task import TaskInfo

REPO = Path(__file__).resolve().parent.parent


def _gang_job() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "gang-job.yaml").read_text())
    return doc


def _podgroup(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": f"pg-{i}", "namespace": "default", "uid": f"uid-{i}", "resourceVersion": str(i)},
        "spec": {"minMember": 8, "queue": "default", "minResources": {"cpu": "8", "memory": "32Gi"}},
        "status": {"phase": "Running", "running": 8, "conditions": [{"type": "Scheduled", "status": "True"}]},
    }


def _pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"job-{i // 8}-worker-{i % 8}",
            "namespace": "default",
            "uid": f"pod-uid-{i}",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "annotations": {"scheduling.k8s.io/group-name": f"pg-{i // 8}"},
            "labels": {"volcano.sh/job-name": f"job-{i // 8}", "volcano.sh/task-spec": "worker"},
        },
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "trainer",
                    "resources": {
                        "requests": {"cpu": "8", "memory": "64Gi"},
                        "limits": {"nvidia.com/gpu": "4", "memory": "64Gi"},
                    },
                }
            ],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
        "status": {"phase": "Pending"},
    }


def measure(name: str, fn: Callable[[int], object], count: int, repeat: int) -> dict[str, Any]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(count):
            fn(i)
        best = min(best, time.perf_counter() - start)
    return {
        "operation": name,
        "count": count,
        "per_second": round(count / best),
        "us_per_object": round(best / count * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    job_doc = _gang_job()
    job = Job.model_validate(job_doc)
    pg_docs = [_podgroup(i) for i in range(args.count)]
    pg = PodGroup.model_validate(pg_docs[0])
    cases: list[tuple[str, Callable[[int], object]]] = [
        ("PodGroup.model_validate", lambda i: PodGroup.model_validate(pg_docs[i])),
        ("PodGroup.to_dict", lambda i: pg.to_dict()),
        ("Job.model_validate (gang example)", lambda i: Job.model_validate(job_doc)),
        ("Job.to_dict (gang example)", lambda i: job.to_dict()),
        ("validate_object (gang example)", lambda i: validate_object(job_doc)),
        ("resolve_job (controller, gang example)", lambda i: resolve_job(job_doc)),
        ("TaskInfo.from_pod (scheduler snapshot)", lambda i: TaskInfo.from_pod(pod_docs[i])),
        ("JobInfo.from_podgroup (scheduler snapshot)", lambda i: JobInfo.from_podgroup(pg_docs[i])),
    ]
    pod_docs = [_pod(i) for i in range(args.count)]
    results = [measure(name, fn, args.count, args.repeat) for name, fn in cases]
    load = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps({"benchmark": "api", "load_average": load, "results": results}, indent=2))


if __name__ == "__main__":
    main()
