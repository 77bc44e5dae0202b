"""How fast admission decides and Job plugins dress pods; JSON on stdout.

Admission sits on every Job/Queue/PodGroup write with a 5-second timeout, and the Job controller runs every
plugin once per pod it creates, so these rates bound a burst of submissions or a 1,000-pod MPI launch.
Reported per operation: operations per second and microseconds per operation (best of ``--repeat`` runs).
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from collections.abc import Callable
from typing import Any

from benchmarks.benchlib.objects import container, gang_job
from volcano_py.jobplugins import build_plugins
from volcano_py.jobplugins.ssh import KeyPair
from volcano_py.webhooks.job import mutate_job, validate_job_create
from volcano_py.webhooks.queue import validate_queue_write


def _keys() -> KeyPair:
    return b"private", b"ssh-rsa public\n"


def _job(workers: int) -> dict[str, Any]:
    main = container("main", "mpi:latest", cpu="4", memory="8Gi")
    return (
        gang_job("bench", workers, main)
        .ns("default")
        .uid("uid-bench")
        .plugins("mpi", "svc", "ssh", "env")
        .obj()
    )


def _queues(count: int) -> dict[str, dict[str, Any]]:
    queues = {
        f"q{i}": {
            "metadata": {"name": f"q{i}"},
            "spec": {"parent": "org", "deserved": {"cpu": "1"}},
            "status": {"state": "Open"},
        }
        for i in range(count)
    }
    queues["org"] = {
        "metadata": {"name": "org"},
        "spec": {"deserved": {"cpu": str(count + 10)}},
        "status": {},
    }
    queues["default"] = {"metadata": {"name": "default"}, "status": {"state": "Open"}}
    return queues


def _rate(fn: Callable[[], object], count: int, repeat: int) -> dict[str, float]:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(count):
            fn()
        best = min(best, time.perf_counter() - start)
    return {"per_second": round(count / best, 1), "us_per_op": round(best / count * 1e6, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=127, help="worker replicas of the benchmark MPI Job")
    parser.add_argument("--queues", type=int, default=500, help="queues in the admission snapshot")
    args = parser.parse_args()
    job, queues = _job(args.workers), _queues(args.queues)
    plugins = build_plugins(job, ssh_keygen=_keys)
    pod = {
        "metadata": {"name": "bench-worker-7"},
        "spec": copy.deepcopy(job["spec"]["tasks"][1]["template"]["spec"]),
    }
    new_queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "new"},
        "spec": {"parent": "org", "deserved": {"cpu": "1"}},
    }
    results = {
        "mutate_job": _rate(lambda: mutate_job(job), args.count, args.repeat),
        "validate_job_create": _rate(lambda: validate_job_create(job, queues), args.count, args.repeat),
        "validate_queue_create": _rate(
            lambda: validate_queue_write(new_queue, queues), args.count, args.repeat
        ),
        "build_plugins": _rate(lambda: build_plugins(job, ssh_keygen=_keys), args.count, args.repeat),
        "on_pod_create": _rate(
            lambda: plugins.on_pod_create(job, copy.deepcopy(pod), "worker", 7), args.count, args.repeat
        ),
        "on_job_add": _rate(lambda: plugins.on_job_add(job), args.count, args.repeat),
    }
    print(
        json.dumps({"workers": args.workers, "queues": args.queues, "count": args.count, "results": results})
    )


if __name__ == "__main__":
    main()
