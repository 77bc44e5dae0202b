"""Position and estimated start on a real cluster: jobs that declare their runtimes finish on their own
(KWOK ends their pods after it), and ``vcctl job why`` / ``vcctl queue get`` say where a waiting job stands
and when it starts; it then starts within 20% of the wait they said."""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from ctl_harness import Env, env, vcjob, wait_for
from test_scheduler_binding import POOL_LABEL, pool  # type: ignore[import-not-found]

from volcano_py.api import constants as c
from volcano_py.cli.vcctl import main as vcctl
from volcano_py.devcluster import COMPLETE_AFTER
from volcano_py.kube.client import ApiError
from volcano_py.kube.kinds import QUEUES
from volcano_py.scheduler.core import DEFAULT_CONF

pytestmark = pytest.mark.integration
__all__ = ["env", "pool"]  # fixtures used here by name

RUNTIME = 15  # seconds the first job runs, declared and enacted alike


def _gpu_task(replicas: int, runtime: str, pool: str) -> dict[str, Any]:
    """Whole-node pods (8 GPUs) on the test's pool that declare ``runtime`` and finish after it."""
    return {
        "name": "worker",
        "replicas": replicas,
        "template": {
            "metadata": {"annotations": {COMPLETE_AFTER: runtime, c.EXPECTED_RUNTIME_KEY: runtime}},
            "spec": {
                "restartPolicy": "Never",
                "nodeSelector": {POOL_LABEL: pool},
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "resources": {
                            "requests": {"cpu": "1", "nvidia.com/gpu": "8"},
                            "limits": {"nvidia.com/gpu": "8"},
                        },
                    }
                ],
            },
        },
    }


async def _vcctl(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert await asyncio.to_thread(vcctl, list(argv)) == 0
    return capsys.readouterr().out


async def test_a_waiting_job_is_told_its_position_and_starts_when_estimated(
    env: Env, pool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queue = f"eta-{uuid.uuid4().hex[:6]}"
    await env.ensure_queue(queue)
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(DEFAULT_CONF)  # the scheduler's own: the env fixture runs it with the default
    common = ("-n", env.ns, "-k", env.kubeconfig, "--scheduler-conf", str(conf))
    try:
        # The pool's two 8-GPU nodes are both taken by "first"; "second" (both nodes) and "third" (one)
        # wait behind it.
        await env.create_job(vcjob("first", _gpu_task(2, f"{RUNTIME}s", pool), queue=queue, minAvailable=2))
        await env.wait_phase("first", "Running", seconds=30)
        await env.create_job(vcjob("second", _gpu_task(2, "5s", pool), queue=queue, minAvailable=2))
        await env.create_job(vcjob("third", _gpu_task(1, "5s", pool), queue=queue, minAvailable=1))

        async def both_waiting() -> bool:
            names = [pg["metadata"]["name"] for pg in await env.podgroups()]
            return sum(n.startswith(("second-", "third-")) for n in names) == 2

        await wait_for("the waiting jobs' PodGroups", both_waiting, 15)
        asked = datetime.now(UTC)
        out = await _vcctl(capsys, "job", "why", "second", *common, "--whatif-seconds", "0")
        assert f"  Position: 1 of 2 waiting in queue {queue}\n" in out, out
        assert "  Basis: runtimes the running pods declare" in out, out
        found = re.search(r"  Estimated start: in \S+ \((\S+)\)\n", out)
        assert found, out
        eta = datetime.fromisoformat(found[1].replace("Z", "+00:00"))

        table = await _vcctl(capsys, "queue", "get", "-n", queue, *common[2:])
        listed = table.split("Waiting jobs in the scheduler's order")[1]
        rows = [line.split()[:2] for line in listed.splitlines() if re.match(r"\d+ +\S+/", line)]
        assert rows == [["1", f"{env.ns}/second"], ["2", f"{env.ns}/third"]], table

        async def second_bound() -> bool:
            pods = await env.live_pods("second")
            return len(pods) == 2 and all(p["spec"].get("nodeName") for p in pods)

        await wait_for("the second job to start", second_bound, RUNTIME + 15)
        started = datetime.now(UTC)
        waited = (started - asked).total_seconds()
        error = abs((started - eta).total_seconds())
        assert error <= 0.2 * waited, f"estimated {eta}, started {started} (asked {asked})"
    finally:
        for name in ("first", "second", "third"):
            with contextlib.suppress(ApiError):
                await env.api.delete(f"/apis/{c.BATCH_API_VERSION}/namespaces/{env.ns}/jobs/{name}")
        with contextlib.suppress(ApiError):
            await env.api.delete(QUEUES.object_path(queue))
