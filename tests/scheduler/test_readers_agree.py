"""Every reader of the scheduler decides as the scheduler does: the same objects (a PodDisruptionBudget, a
ResourceQuota, a Numatopology and a malformed pod among them) under a conf with ``pdb``, ``resourcequota``
and ``numa-aware`` give the same decisions and the same explanation in the scheduler's cycle, the
dashboard, the what-if, ``vcctl job why`` and the simulator's first cycle."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.scheduler.builders import make_pg, make_pod
from tests.scheduler.evict_harness import PREEMPT_CONF, Cluster
from tests.scheduler.test_numaaware import pinned, topo
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.cli.vcctl import views as vcctl_views
from volcano_py.dashboard import views as dashboard_views
from volcano_py.resources import Resource
from volcano_py.scheduler.core import ClusterObjects, SchedulerConf, SessionResult, load_conf
from volcano_py.scheduler.framework.objects import KINDS
from volcano_py.scheduler.framework.podgroup_status import podgroup_status
from volcano_py.scheduler.runtime.cycle import default_core
from volcano_py.sim.cluster import NAMESPACE, SimCluster
from volcano_py.sim.engine import Simulator
from volcano_py.sim.workload import SimJob, SimNode, Workload
from volcano_py.whatif import what_would_make_it_run
from volcano_py.whatif.why import what_would_make_it_run as whatif_text

Obj = dict[str, Any]
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
STAMP = "2026-01-01T12:00:00Z"
OURS = ("volcano",)
CONF = PREEMPT_CONF.replace("  - name: conformance\n", "  - name: conformance\n  - name: pdb\n").replace(
    "  - name: nodeorder\n", "  - name: nodeorder\n  - name: resourcequota\n  - name: numa-aware\n"
)


def _pdb(namespace: str, allowed: int) -> Obj:
    return {
        "metadata": {"name": "web-pdb", "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 1},
        "status": {"disruptionsAllowed": allowed},
    }


def _quota(namespace: str, cpu: str) -> Obj:
    hard = {"requests.cpu": cpu}
    return {"metadata": {"name": "team-quota", "namespace": namespace}, "spec": {"hard": hard},
            "status": {"hard": hard, "used": {}}}  # fmt: skip


def cluster_objects() -> ClusterObjects:
    """n0, n1 (pool=web) full of a low-priority job whose budget allows no disruption; ``hi`` wants them;
    ``q`` in namespace team asks more CPU than its quota; ``pin`` needs 6 CPUs of one NUMA node, which only
    m0's Numatopology shows it has; ``bad`` asks a CPU amount that is no quantity."""
    cluster = (
        Cluster()
        .nodes_named("n", 2, cpu=4)
        .node("m0", cpu=16)
        .job("web", priority="low", cpu="4", running_on=["n0", "n1"], min_member=1, pod_labels={"app": "web"})
        .job("hi", priority="high", cpu="4", pending=2, created=1)
        .job("q", namespace="team", cpu="2", pending=1, phase="Pending", min_resources=True, created=2)
    )
    for node in cluster.nodes[:2]:
        node["metadata"]["labels"]["pool"] = "web"
    for pod in cluster.pods:
        if pod["metadata"]["name"].startswith("hi-"):
            pod["spec"]["nodeSelector"] = {"pool": "web"}
    bad = make_pod("bad").req(cpu="lots").group("bad").obj()
    return ClusterObjects(
        nodes=cluster.nodes,
        pods=[*cluster.pods, pinned("pin", 6).obj(), bad],
        podgroups=[*cluster.podgroups, make_pg("pin").obj(), make_pg("bad").obj()],
        queues=cluster.queues,
        priority_classes=cluster.priority_classes,
        pdbs=[_pdb("default", 0)],
        resource_quotas=[_quota("team", "1")],
        numatopologies=[topo("m0", per_cell=8)],
    )


def decisions(result: SessionResult) -> dict[str, Any]:
    return {
        "binds": sorted((b.namespace, b.name, b.node) for b in result.binds),
        "evictions": sorted((e.namespace, e.name) for e in result.evictions),
        "pipelined": sorted((p.name, p.node) for p in result.pipelined),
        "phases": sorted((u.namespace, u.name, u.phase.value) for u in result.podgroup_updates),
        "explanations": {job: (e.reason, e.message) for job, e in result.explanations.items()},
    }


def scheduler(objects: ClusterObjects, conf: SchedulerConf) -> SessionResult:
    return default_core(OURS).run(objects, conf, NOW).result


def _page(objects: ClusterObjects) -> dashboard_views.Cluster:
    """The dashboard's ``Cluster`` of the same objects, as its watches hold them."""
    return dashboard_views.Cluster(**{name: getattr(objects, name) for name in KINDS})


def dashboard(objects: ClusterObjects, conf: SchedulerConf) -> SessionResult:
    return dashboard_views.session_of(_page(objects), conf, STAMP)


def job_why(podgroup: Obj, result: SessionResult) -> str:
    """What ``vcctl job why`` prints first: the PodGroup as the scheduler's status write leaves it."""
    meta = podgroup["metadata"]
    update = next(
        u for u in result.podgroup_updates if (u.namespace, u.name) == (meta["namespace"], meta["name"])
    )
    written = {**podgroup, "status": podgroup_status(update, podgroup.get("status"))}
    return vcctl_views.why(None, written, [], NOW)


def test_the_scheduler_decides_what_its_pdb_quota_and_numa_objects_say() -> None:
    objects, conf = cluster_objects(), load_conf(CONF)
    seen = decisions(scheduler(objects, conf))
    assert seen["binds"] == [("default", "pin", "m0")]  # the only node whose NUMA cells can hold it
    assert seen["evictions"] == []  # web's budget allows no disruption
    assert ("team", "q", "Pending") in seen["phases"]  # over its namespace's quota
    blind = decisions(scheduler(replace(objects, pdbs=(), resource_quotas=(), numatopologies=()), conf))
    # Without those objects the same session decides otherwise on every count: what a reader that drops
    # them would have shown.
    assert (
        blind["binds"] != seen["binds"]
        and blind["evictions"]
        and ("team", "q", "Pending") not in blind["phases"]
    )


def test_every_reader_gives_the_schedulers_decisions_and_explanation() -> None:
    objects, conf = cluster_objects(), load_conf(CONF)
    outcome = default_core(OURS).run(objects, conf, NOW)
    dropped = [
        w for w in outcome.warnings if w.obj.get("kind") == "Pod" and w.obj["metadata"]["name"] == "bad"
    ]
    assert [(w.reason, "lots" in w.message) for w in dropped] == [("FailedScheduling", True)]
    expected = decisions(outcome.result)
    assert decisions(dashboard(objects, conf)) == expected
    # The page's own snapshot (node usage) leaves the malformed pod out as the scheduler does, not blank.
    page = dashboard_views.snapshot_of(_page(objects))
    assert {key: len(job.tasks) for key, job in page.jobs.items()} == {
        "default/web": 2, "default/hi": 2, "team/q": 1, "default/pin": 1, "default/bad": 0
    }  # fmt: skip

    quota_why = expected["explanations"]["team/q"][1]
    assert "team-quota insufficient on requests.cpu" in quota_why
    for key, placed in (("team/q", False), ("default/hi", False), ("default/pin", True)):
        answer = what_would_make_it_run(objects, key, conf, now=STAMP)
        assert answer.runs_now is placed, (key, answer.text())
    q = next(pg for pg in objects.podgroups if pg["metadata"]["name"] == "q")
    printed = job_why(q, outcome.result)
    assert f"Why pending: {quota_why}\n" in printed
    held = what_would_make_it_run(objects, "team/q", conf, now=STAMP)
    assert "a session on the current state schedules it" not in whatif_text(held, "the conf")


@pytest.mark.parametrize("quota_cpu", ["3", "100"], ids=["quota-holds-big", "quota-holds-none"])
def test_the_simulators_first_cycle_is_the_schedulers(quota_cpu: str) -> None:
    workload = Workload(
        nodes=(SimNode("s0", Resource.of(cpu="16", memory="64Gi", pods=110)),),
        jobs=(
            SimJob("small", 0.0, 60.0, 1, Resource.of(cpu="1", memory="1Gi"), 1),
            SimJob("big", 0.0, 60.0, 2, Resource.of(cpu="2", memory="1Gi"), 2),
        ),
        pdbs=(_pdb(NAMESPACE, 0),),
        resource_quotas=(_quota(NAMESPACE, quota_cpu),),
        numatopologies=(topo("s0", per_cell=8),),
    )
    conf = load_conf(CONF)
    before = SimCluster(workload)
    for job in workload.jobs:
        before.admit(job, 0.0)
    objects = before.objects()
    result = scheduler(objects, conf)
    sim = Simulator(workload, conf, horizon=0.0)
    sim.run()
    phases = {key: pg["status"]["phase"] for key, pg in sim.cluster.podgroups.items()}
    assert phases == {f"{u.namespace}/{u.name}": u.phase.value for u in result.podgroup_updates}
    assert decisions(dashboard(objects, conf)) == decisions(result)
    big = f"{NAMESPACE}/big"
    if quota_cpu == "3":
        assert phases[big] == PodGroupPhase.PENDING.value
        message = result.explanations[big].message
        assert "team-quota insufficient on requests.cpu" in message
        assert f"Why pending: {message}\n" in vcctl_views.why(None, sim.cluster.podgroups[big], [], NOW)
        assert what_would_make_it_run(objects, big, conf, now=STAMP).runs_now is False
    else:
        assert set(phases.values()) == {PodGroupPhase.INQUEUE.value}
