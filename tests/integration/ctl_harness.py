"""Shared pieces of the controller's integration tests: the operator and the scheduler run in-process
against the session's real control plane, scoped to the test's namespace."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from stopping import stop_within

from volcano_py.api import constants as c
from volcano_py.cli.scheduler import scheduler_core
from volcano_py.controllers.operator import ControllerOptions, run_controller
from volcano_py.devcluster import COMPLETE_AFTER, EXIT_CODE, FAIL_AFTER, audit
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import COMMANDS, JOBS, PODGROUPS, PODS, QUEUES
from volcano_py.scheduler.runtime.runner import SchedulerOptions, run_scheduler

JSON = dict[str, Any]


async def wait_for(what: str, probe: Callable[[], Awaitable[Any]], seconds: float = 60.0) -> Any:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` and the last value seen."""
    deadline = time.monotonic() + seconds
    last: Any = None
    while time.monotonic() < deadline:
        last = await probe()
        if last:
            return last
        await asyncio.sleep(0.25)
    pytest.fail(f"timed out after {seconds:.0f}s waiting for {what}; last seen: {last!r}")


class Operator:
    """One operator instance; ``stop()`` ends it the way a killed process would (no cleanup of objects)."""

    def __init__(self, kubeconfig: str, namespace: str, **overrides: Any) -> None:
        overrides.setdefault("leader_elect", False)
        self.options = ControllerOptions(
            kubeconfig=kubeconfig,
            namespaces=(namespace,),
            metrics_host="127.0.0.1",
            metrics_port=0,
            **overrides,
        )
        self._stop = asyncio.Event()
        self.task: asyncio.Task[None] = asyncio.create_task(run_controller(self.options, self._stop))

    async def stop(self) -> None:
        self._stop.set()
        await stop_within(self.task, "the operator", 30)


class Env:
    """The API as a test drives it, plus the operator and scheduler running for it."""

    def __init__(
        self, api: KubeClient, namespace: str, kubeconfig: str, audit_log: Path | None = None
    ) -> None:
        self.api, self.ns, self.kubeconfig = api, namespace, kubeconfig
        self.operator: Operator | None = None
        self.audit_log = audit_log

    def start_operator(self, **overrides: Any) -> Operator:
        self.operator = Operator(self.kubeconfig, self.ns, **overrides)
        return self.operator

    async def create_job(self, body: JSON) -> JSON:
        return await self.api.create(JOBS.collection_path(self.ns), body)

    async def job(self, name: str) -> JSON | None:
        try:
            return await self.api.get(JOBS.object_path(name, self.ns))
        except ApiError as exc:
            if exc.not_found:
                return None
            raise

    async def history(self) -> str:
        """The namespace's Events in order, one line each, then who deleted its pods (from the API server's
        audit log): what a failed assertion on a Job's counts shows, whole (pytest shortens a list)."""
        listed = await self.api.get(f"/api/v1/namespaces/{self.ns}/events")
        items = sorted(
            listed.get("items") or (), key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""
        )
        events = [
            f"{e.get('lastTimestamp') or e.get('eventTime')} {e['involvedObject'].get('kind')}/"
            f"{e['involvedObject'].get('name')} {e.get('reason')}: {e.get('message')}"
            for e in items
        ]
        if self.audit_log is not None and self.audit_log.exists():
            events += audit.pod_deletions(audit.read_from(self.audit_log, 0), self.ns)
        return "\n".join(events)

    async def phase(self, name: str) -> str:
        job = await self.job(name)
        return str(((job or {}).get("status") or {}).get("state", {}).get("phase", ""))

    async def wait_phase(self, name: str, *phases: str, seconds: float = 60.0) -> JSON:
        async def probe() -> JSON | None:
            job = await self.job(name)
            phase = ((job or {}).get("status") or {}).get("state", {}).get("phase")
            return job if phase in phases else None

        job: JSON = await wait_for(f"job {name} to be {'/'.join(phases)}", probe, seconds)
        return job

    async def pods(self, job: str) -> list[JSON]:
        listed = await self.api.get(PODS.collection_path(self.ns), labelSelector=f"{c.JOB_NAME_KEY}={job}")
        return list(listed.get("items") or [])

    async def live_pods(self, job: str) -> list[JSON]:
        return [p for p in await self.pods(job) if not p["metadata"].get("deletionTimestamp")]

    async def podgroups(self) -> list[JSON]:
        return list((await self.api.get(PODGROUPS.collection_path(self.ns))).get("items") or [])

    async def command(self, action: str, kind: str, name: str, uid: str = "") -> None:
        api_version = c.BATCH_API_VERSION if kind == c.JOB_KIND else c.SCHEDULING_API_VERSION
        target = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid or "0" * 32}
        body = {
            "apiVersion": c.BUS_API_VERSION,
            "kind": c.COMMAND_KIND,
            "metadata": {"generateName": f"{name}-{action.lower()}-", "namespace": self.ns},
            "action": action,
            "target": target,
        }
        await self.api.create(COMMANDS.collection_path(self.ns), body)

    async def commands(self) -> list[JSON]:
        return list((await self.api.get(COMMANDS.collection_path(self.ns))).get("items") or [])

    async def ensure_queue(self, name: str, **spec: Any) -> None:
        body = {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": name},
                "spec": {"weight": 1, **spec}}  # fmt: skip
        try:
            await self.api.create(QUEUES.collection_path(), body)
        except ApiError as exc:
            if not exc.conflict:
                raise


def task(
    name: str,
    replicas: int,
    *,
    complete_after: str = "",
    fail_after: str = "",
    exit_code: int = 1,
    cpu: str = "100m",
    policies: list[JSON] | None = None,
    min_available: int | None = None,
) -> JSON:
    annotations: dict[str, str] = {}
    if complete_after:
        annotations[COMPLETE_AFTER] = complete_after
    if fail_after:
        annotations[FAIL_AFTER] = fail_after
        annotations[EXIT_CODE] = str(exit_code)
    out: JSON = {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"annotations": annotations},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            },
        },
    }
    if policies:
        out["policies"] = policies
    if min_available is not None:
        out["minAvailable"] = min_available
    return out


def vcjob(name: str, *tasks: JSON, **spec: Any) -> JSON:
    return {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.JOB_KIND,
        "metadata": {"name": name},
        "spec": {"schedulerName": c.SCHEDULER_NAME, "queue": "default", "tasks": list(tasks), **spec},
    }


@pytest.fixture
async def env(cluster: Any, namespace: str) -> AsyncIterator[Env]:
    """The operator (scoped to the test's namespace) and a scheduler, both in this event loop."""
    kubeconfig = str(cluster.kubeconfig)
    api = KubeClient(await load_api_client(kubeconfig))
    environment = Env(api, namespace, kubeconfig, cluster.audit_log)
    await environment.ensure_queue(c.DEFAULT_QUEUE, reclaimable=True)
    stop_scheduler = asyncio.Event()
    options = SchedulerOptions(
        kubeconfig=kubeconfig,
        leader_elect=False,
        metrics_host="127.0.0.1",
        metrics_port=0,
        schedule_period=0.2,
    )
    scheduler = asyncio.create_task(run_scheduler(options, stop_scheduler, core=scheduler_core(options)))
    environment.start_operator()
    try:
        yield environment
    finally:
        if environment.operator is not None and not environment.operator.task.done():
            await environment.operator.stop()
        stop_scheduler.set()
        await stop_within(scheduler, "the scheduler", 30)
        await api.close()
