"""How fast the API layer reads, writes and validates objects; JSON on stdout.

The scheduler's cache and the controllers parse every PodGroup, Queue and Job they watch, and the admission
webhook validates every write, so these rates bound how much churn one process can follow. Reported per
operation: objects per second and microseconds per object (best of ``--repeat`` runs of ``--count``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api.batch import Job
from volcano_py.api.scheduling import PodGroup
from volcano_py.api.validation import validate_object

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
    ]
    results = [measure(name, fn, args.count, args.repeat) for name, fn in cases]
    print(json.dumps({"benchmark": "api", "results": results}, indent=2))


if __name__ == "__main__":
    main()
