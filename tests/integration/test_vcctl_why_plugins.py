"""``vcctl job why`` answers as the scheduler decides when its conf has ``resourcequota`` and ``pdb``: the
reason is the scheduler's, and the what-if, which reads the same ResourceQuotas and PodDisruptionBudgets,
does not claim the job would run."""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from ctl_harness import Operator
from test_scheduler_binding import (  # type: ignore[import-not-found]
    GROUP_KEY,
    api,
    pod_manifest,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)

from volcano_py.api import constants as c
from volcano_py.cli.vcctl import main as vcctl
from volcano_py.kube.client import ApiError, KubeClient
from volcano_py.kube.kinds import PODDISRUPTIONBUDGETS, PODGROUPS, PODS, PRIORITY_CLASSES, RESOURCEQUOTAS

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name

CONF = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: pdb
- plugins:
  - name: overcommit
  - name: predicates
  - name: proportion
  - name: resourcequota
  - name: nodeorder
"""
# The what-if's words when a session places the job, or nominates it to nodes its victims free.
RUNS_NOW = "a session on the current state schedules it"
NOMINATED = "nominated to nodes that free up"
# The in-process scheduler and controller log to the same stdout; vcctl's lines are the others.
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[")


@pytest.fixture
def conf(tmp_path: Path) -> str:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(CONF)
    return str(path)


async def _why(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert await asyncio.to_thread(vcctl, ["job", "why", *argv, "--whatif-seconds", "3"]) == 0
    out = capsys.readouterr().out
    return "".join(line for line in out.splitlines(keepends=True) if not _LOG_LINE.match(line))


async def _unschedulable(api: KubeClient, ns: str, name: str) -> str:
    """The reason the scheduler gives for a PodGroup's wait, once it is about its pods' placement: a session
    that ran between the PodGroup's create and its pod's first said only that the gang was short of pods."""
    found = await api.get(PODGROUPS.object_path(name, ns))
    conditions = (found.get("status") or {}).get("conditions") or []
    return next(
        (
            str(x["message"])
            for x in conditions
            if x.get("type") == "Unschedulable" and x.get("reason") not in c.REASONS_PODS_MISSING
        ),
        "",
    )


async def test_why_gives_the_quota_that_holds_a_job(
    cluster: Any, api: KubeClient, namespace: str, start_scheduler: Any, conf: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    await api.create(
        RESOURCEQUOTAS.collection_path(namespace),
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "team"},
         "spec": {"hard": {"requests.cpu": "2"}}},
    )  # fmt: skip
    await start_scheduler(c.SCHEDULER_NAME, scheduler_conf=conf)
    operator = Operator(str(cluster.kubeconfig), namespace)
    try:
        kc = ("-k", str(cluster.kubeconfig), "-n", namespace)
        run = ["job", "run", "-N", "big", "-R", "cpu=4,memory=1Gi", "-L", "cpu=4,memory=1Gi", *kc]
        assert await asyncio.to_thread(vcctl, run) == 0

        async def podgroup_told() -> str:
            listed = await api.get(PODGROUPS.collection_path(namespace))
            names = [pg["metadata"]["name"] for pg in listed["items"]]
            return await _unschedulable(api, namespace, names[0]) if names else ""

        reason = await wait_until(podgroup_told, "the scheduler to say why the job waits", 30)
        assert "resource quota team insufficient on requests.cpu: requested 4" in reason
        out = await _why(capsys, "big", *kc, "--scheduler-conf", conf)
        assert f"Why pending: {reason}\n" in out
        whatif = out.split("What would make it run", 1)[1]
        # Blind to the quota, the what-if would find that a session places the job at once.
        assert RUNS_NOW not in whatif
    finally:
        await operator.stop()


async def test_why_keeps_a_pdb_protected_victim(
    cluster: Any, api: KubeClient, namespace: str, pool: str, start_scheduler: Any, conf: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    suffix = uuid.uuid4().hex[:6]
    low, high = f"it-why-low-{suffix}", f"it-why-high-{suffix}"
    for name, value in ((low, 10), (high, 1000)):
        await api.create(
            PRIORITY_CLASSES.collection_path(),
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
             "value": value},
        )  # fmt: skip
    try:
        await api.create(
            PODDISRUPTIONBUDGETS.collection_path(namespace),
            {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
             "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}},
        )  # fmt: skip
        await start_scheduler(c.SCHEDULER_NAME, scheduler_conf=conf)
        for i in range(2):  # two 8-GPU pods fill the pool's two nodes
            victim = pod_manifest(f"web-{i}", c.SCHEDULER_NAME, pool, gpus=8)
            victim["metadata"]["labels"] = {"app": "web"}
            victim["spec"]["priorityClassName"] = low
            await api.create(PODS.collection_path(namespace), victim)

        async def both_bound() -> bool:
            current = await pods_by_name(api, namespace)
            return all(current[f"web-{i}"]["spec"].get("nodeName") for i in range(2))

        await wait_until(both_bound, "the budgeted pods bound", 30)
        await api.create(
            PODGROUPS.collection_path(namespace),
            {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.PODGROUP_KIND, "metadata": {"name": "urgent"},
             "spec": {"minMember": 1, "queue": c.DEFAULT_QUEUE, "priorityClassName": high}},
        )  # fmt: skip
        preemptor = pod_manifest("urgent-0", c.SCHEDULER_NAME, pool, gpus=8, group="urgent")
        preemptor["metadata"]["annotations"][GROUP_KEY] = "urgent"
        preemptor["spec"]["priorityClassName"] = high
        await api.create(PODS.collection_path(namespace), preemptor)

        reason = await wait_until(
            lambda: _unschedulable(api, namespace, "urgent"), "the scheduler to say why urgent waits", 30
        )
        out = await _why(capsys, "urgent", "-k", str(cluster.kubeconfig), "-n", namespace,
                         "--scheduler-conf", conf)  # fmt: skip
        assert f"Why pending: {reason}\n" in out
        whatif = out.split("What would make it run", 1)[1]
        # Blind to the budget, the what-if would preempt web's pods and find urgent nominated to their nodes.
        assert NOMINATED not in whatif and RUNS_NOW not in whatif
        current = await pods_by_name(api, namespace)
        assert all(not current[f"web-{i}"]["metadata"].get("deletionTimestamp") for i in range(2))
    finally:
        for name in (low, high):
            with contextlib.suppress(ApiError):
                await api.delete(PRIORITY_CLASSES.object_path(name))
