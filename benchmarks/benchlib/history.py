"""A cluster's history: finished Volcano Jobs (Completed, no pod left), which a restarted controller lists
again (Volcano's issue #5819 had 87,031). ``bench_scale``'s restart and ``bench_controller`` make it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from benchmarks.benchlib.apiserver import create_all
from benchmarks.benchlib.objects import container, make_job
from benchmarks.benchlib.pool import each
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import JOBS

JSON = dict[str, Any]


def one_pod_job(name: str, *, annotations: dict[str, str] | None = None) -> JSON:
    """A one-task, one-pod Volcano Job, complete without the admission webhook's defaults."""
    main = container("w", cpu="100m")
    return (
        make_job(name)
        .scheduler()
        .max_retry(3)
        .task("w", 1, main, annotations=annotations or {}, restart_never=True)
        .obj()
    )


def completed_status() -> JSON:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"status": {"state": {"phase": "Completed", "reason": "", "lastTransitionTime": now},
                       "minAvailable": 1, "succeeded": 1, "version": 1}}  # fmt: skip


async def finished_jobs(client: KubeClient, namespace: str, jobs: int, concurrency: int) -> None:
    """``jobs`` Volcano Jobs in ``namespace``, each created and then given a Completed status (the status
    subresource)."""
    bodies = [(JOBS.collection_path(namespace), one_pod_job(f"done-{i}")) for i in range(jobs)]
    await create_all(client, bodies, concurrency)

    async def complete(i: int) -> None:
        path = JOBS.object_path(f"done-{i}", namespace, "status")
        while True:
            try:
                await client.patch(path, completed_status())
                return
            except ApiError as exc:
                if exc.status not in (429, 500, 503, 504):
                    raise
                await asyncio.sleep(0.2)

    await each(list(range(jobs)), complete, concurrency)
