"""The cpsat plugin inside a real session: Kubernetes dicts in, binds and explanations out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from volcano_py.api import constants as k
from volcano_py.scheduler.builtin import default_registry
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot

NOW = "2026-01-01T00:00:00Z"
CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins:
  - name: predicates
  - name: binpack
  - name: cpsat
    arguments: {cpsat.timeBudgetMs: 5000}
"""
Obj = dict[str, Any]


def node(name: str, gpus: int, *, zone: str = "a") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
        "spec": {},
        "status": {
            "allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, group: str, gpus: int, *, on: str | None = None) -> Obj:
    spec: Obj = {
        "schedulerName": k.SCHEDULER_NAME,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": str(gpus)}}}],
    }
    status = {"phase": "Pending"}
    if on is not None:
        spec["nodeName"] = on
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"uid-{name}",
            "creationTimestamp": NOW,
            "annotations": {k.KUBE_GROUP_NAME_KEY: group},
        },
        "spec": spec,
        "status": status,
    }


def podgroup(name: str, min_member: int, topology: Obj | None = None) -> Obj:
    spec: Obj = {"minMember": min_member, "queue": "default"}
    if topology is not None:
        spec["networkTopology"] = topology
    return {
        "apiVersion": k.SCHEDULING_API_VERSION,
        "kind": k.PODGROUP_KIND,
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": NOW},
        "spec": spec,
        "status": {"phase": "Inqueue"},
    }


def rack(name: str, *nodes: str) -> Obj:
    members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in nodes]
    return {"metadata": {"name": name}, "spec": {"tier": 1, "tierName": "rack", "members": members}}


def run(
    nodes: list[Obj], pods: list[Obj], podgroups: list[Obj], hypernodes: list[Obj], conf: str = CONF
) -> SessionResult:
    registry = default_registry()
    snapshot = Snapshot.build(nodes=nodes, pods=pods, podgroups=podgroups, hypernodes=hypernodes)
    return run_session(snapshot, load_conf(conf, registry=registry), NOW, registry=registry)


def test_hard_topology_gang_binds_inside_one_rack() -> None:
    # r0 has 8 + 4 free GPUs (12), r1 has 8 + 8 (16): a gang of 16 one-GPU pods fits only in r1.
    nodes = [node("a0", 8), node("a1", 8), node("b0", 8), node("b1", 8)]
    busy = [pod("busy", "other", 4, on="a1")]
    pods = busy + [pod(f"w{i}", "train", 1) for i in range(16)]
    groups = [podgroup("other", 1), podgroup("train", 16, {"mode": "hard", "highestTierAllowed": 1})]
    result = run(nodes, pods, groups, [rack("r0", "a0", "a1"), rack("r1", "b0", "b1")])
    assert {b.node for b in result.binds} == {"b0", "b1"}
    assert len(result.binds) == 16


def test_hard_topology_gang_that_fits_no_rack_stays_pending_with_the_reason() -> None:
    nodes = [node("a0", 8), node("a1", 8), node("b0", 8), node("b1", 4)]
    pods = [pod(f"w{i}", "train", 1) for i in range(20)]
    groups = [podgroup("train", 20, {"mode": "hard", "highestTierAllowed": 1})]
    result = run(nodes, pods, groups, [rack("r0", "a0", "a1"), rack("r1", "b0", "b1")])
    assert not result.binds
    message = result.explanations["default/train"].message
    assert "no HyperNode of tier <= 1 has room for 20 pods" in message
    assert "the best, r0, has room for 16" in message


def test_gang_without_topology_avoids_fragmenting_gpus() -> None:
    # A 4-GPU pod waits in the queue (its node selector matches nothing yet). Binpack sends the two 1-GPU
    # pods to the fuller node (4 free -> 2), leaving no node with 4 free GPUs; the solver uses the node
    # with 6 free instead, so both nodes keep room for a 4-GPU pod.
    nodes = [node("six", 8), node("four", 8)]
    running = [pod("r1", "bg", 2, on="six"), pod("r2", "bg2", 4, on="four")]
    waiting = pod("q0", "later", 4)
    waiting["spec"]["nodeSelector"] = {"zone": "nowhere"}
    pods = [*running, pod("p0", "pair", 1), pod("p1", "pair", 1), waiting]
    groups = [podgroup("bg", 1), podgroup("bg2", 1), podgroup("pair", 2), podgroup("later", 1)]
    bound = {b.name: b.node for b in run(nodes, pods, groups, []).binds}
    assert bound == {"p0": "six", "p1": "six"}
    greedy_conf = CONF.replace("  - name: cpsat\n    arguments: {cpsat.timeBudgetMs: 5000}\n", "")
    assert "cpsat" not in greedy_conf
    bound = {b.name: b.node for b in run(nodes, pods, groups, [], conf=greedy_conf).binds}
    assert bound == {"p0": "four", "p1": "four"}


def test_unknown_argument_is_a_start_up_error() -> None:
    registry = default_registry()
    bad = CONF.replace("cpsat.timeBudgetMs", "cpsat.budget")
    with pytest.raises(ConfError, match=r"cpsat\.budget"):
        snapshot = Snapshot.build(nodes=[node("n", 8)])
        run_session(snapshot, load_conf(bad, registry=registry), NOW, registry=registry)


def test_roles_and_min_task_member_reach_the_solver() -> None:
    # 12 GPUs free: 4 workers x 2 GPUs fit beside 2 CPU-only ps pods; minTaskMember asks for all of them.
    nodes = [node("n0", 8), node("n1", 4)]
    ps = [pod(f"ps{i}", "tf", 0) for i in range(2)]
    workers = [pod(f"w{i}", "tf", 2) for i in range(4)]
    for p in ps:
        p["metadata"]["annotations"][k.TASK_SPEC_KEY] = "ps"
    for p in workers:
        p["metadata"]["annotations"][k.TASK_SPEC_KEY] = "worker"
    group = podgroup("tf", 6)
    group["spec"]["minTaskMember"] = {"ps": 2, "worker": 4}
    result = run(nodes, ps + workers, [group], [])
    assert sorted(b.name for b in result.binds) == ["ps0", "ps1", "w0", "w1", "w2", "w3"]


def test_min_task_member_that_cannot_be_met_names_the_role() -> None:
    nodes = [node("n0", 4)]
    workers = [pod(f"w{i}", "tf", 2) for i in range(3)]
    for p in workers:
        p["metadata"]["annotations"][k.TASK_SPEC_KEY] = "worker"
    group = podgroup("tf", 3, {"mode": "hard", "highestTierAllowed": 1})
    result = run(nodes, workers, [group], [rack("r0", "n0")])
    assert not result.binds
    assert "worker x3 (cpu 1, nvidia.com/gpu 2)" in result.explanations["default/tf"].message


def test_a_solve_leaves_sigint_to_the_process(tmp_path: Path) -> None:
    """CP-SAT must not reset SIGINT to its default: Ctrl-C has to reach our shutdown code after a solve."""
    script = tmp_path / "solve_then_sigint.py"
    script.write_text(
        "import os, signal, sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import test_solver_adapter as t\n"
        "signal.signal(signal.SIGINT, lambda *_: print('handled', flush=True))\n"
        "t.test_gang_without_topology_avoids_fragmenting_gpus()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(0.2)\n"
        "print('alive', flush=True)\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == ["handled", "alive"]
