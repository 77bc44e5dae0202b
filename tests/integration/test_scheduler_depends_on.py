"""Jobs shaped as Volcano's task-start-dependency examples run: a ``dependsOn`` chain whose job
``minAvailable`` is below the sum of its tasks' minimums starts task by task, and an MPI job's workers
start before the master that depends on them. Before the gang validity fix neither ever started."""

from __future__ import annotations

from typing import Any

import pytest
from ctl_harness import Env, env, task, vcjob, wait_for

pytestmark = pytest.mark.integration
__all__ = ["env"]


def _after(spec: dict[str, Any], *names: str) -> dict[str, Any]:
    spec["dependsOn"] = {"name": list(names)}
    spec["template"]["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}
    return spec


async def _running_tasks(env: Env, job: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pod in await env.live_pods(job):
        if (pod.get("status") or {}).get("phase") == "Running":
            role = pod["metadata"]["name"].rsplit("-", 2)[1]
            counts[role] = counts.get(role, 0) + 1
    return counts


async def test_depends_on_chain_and_mpi_shape_run(env: Env) -> None:
    # job.yaml's shape: minAvailable 1, tasks of 1, 5 and 5 replicas, each after the one before.
    chain = vcjob(
        "chain",
        task("first", 1),
        _after(task("second", 5), "first"),
        _after(task("third", 5), "second"),
        minAvailable=1,
    )
    # mpi.yaml's shape: minAvailable 3, a master after 10 workers, with the ssh and svc plugins.
    mpi = vcjob(
        "mpi",
        _after(task("mpimaster", 1), "mpiworker"),
        task("mpiworker", 10),
        minAvailable=3,
        plugins={"ssh": [], "svc": []},
    )
    await env.create_job(chain)
    await env.create_job(mpi)

    async def all_running() -> dict[str, dict[str, int]] | None:
        seen = {"chain": await _running_tasks(env, "chain"), "mpi": await _running_tasks(env, "mpi")}
        want = {"chain": {"first": 1, "second": 5, "third": 5}, "mpi": {"mpimaster": 1, "mpiworker": 10}}
        return seen if seen == want else None

    await wait_for("every task of both jobs to run", all_running, seconds=90)
    await env.wait_phase("chain", "Running")
    await env.wait_phase("mpi", "Running")
