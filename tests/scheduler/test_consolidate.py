"""consolidate: the fewest moves that open a one-node place for a waiting GPU gang, and when it makes none.

The fragmented cluster: four nodes of 8 GPUs, 2 free on each. n0 runs one 6-GPU pod, n1 three one-pod jobs
of 2 GPUs (b0, b1, b2), n2 six 1-GPU pods of one elastic job (c), n3 a 4-GPU and a 2-GPU pod. A one-pod gang
asking 8 GPUs on one node waits. Emptying n1 takes 3 moves (each pod to a 2-GPU hole elsewhere); emptying
n3 takes 4 (two of c's pods leave n2 to make a 4-GPU hole for n3's 4-GPU pod, its 2-GPU pod takes a hole);
n2 takes 6; n0 cannot be emptied (its 6-GPU pod fits no hole, whatever moves).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.scheduler.evict_harness import NOW, Cluster, Obj, Outcome
from volcano_py.api import constants as k
from volcano_py.scheduler.core import (
    DEFAULT_CONF,
    ConfError,
    gangs_left_partly_evicted,
    load_conf,
    run_session,
)
from volcano_py.scheduler.framework.decisions import Bind, Evict, SessionResult

RECENT = 110  # minutes after 10:00: the running pods started ten minutes before the session (12:00)


def conf(**arguments: Any) -> str:
    args = "".join(f"      {key}: {value!r}\n" for key, value in arguments.items())
    configurations = f"configurations:\n- name: consolidate\n  arguments:\n{args}" if args else ""
    return f"""
actions: "enqueue, consolidate, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
  - name: pdb
  - name: cdp
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
{configurations}"""


def _gpu_nodes(cluster: Cluster) -> Cluster:
    for i in range(4):
        cluster.node(f"n{i}", cpu=64, memory="256Gi", gpu=8)
    return cluster


def fragmented(b_pods: dict[str, Any] | None = None) -> Cluster:
    """The cluster of the module docstring; ``b_pods``: extra ``Cluster.job`` arguments for b0, b1, b2."""
    cluster = _gpu_nodes(Cluster())
    cluster.job("big", gpu=6, running_on=["n0"], created=RECENT, owned=True)
    for i in range(3):
        cluster.job(f"b{i}", gpu=2, running_on=["n1"], created=RECENT, **({"owned": True} | (b_pods or {})))
    cluster.job("c", gpu=1, running_on=["n2"] * 6, min_member=1, created=RECENT, owned=True)
    cluster.job("d", gpu=4, running_on=["n3"], created=RECENT, owned=True)
    cluster.job("e", gpu=2, running_on=["n3"], created=RECENT, owned=True)
    return cluster.job("g", gpu=8, pending=1, created=0)


def run(cluster: Cluster, text: str) -> Outcome:
    return Outcome(run_session(cluster.snapshot(), load_conf(text), NOW))


def why(outcome: Outcome, job: str = "g") -> str:
    explanation = outcome.result.explanations.get(f"default/{job}")
    return explanation.message if explanation else ""


def events(outcome: Outcome) -> dict[str, str]:
    return {e.name: e.message for e in outcome.result.podgroup_events if e.reason == "Consolidated"}


def _pod(cluster: Cluster, name: str) -> Obj:
    return next(p for p in cluster.pods if p["metadata"]["name"] == name)


def recreate_moved(cluster: Cluster, outcome: Outcome) -> Cluster:
    """The cluster once the evicted pods are gone and their controllers made new pending ones, with the
    nominations the binder wrote."""
    for name in outcome.evicted:
        old = _pod(cluster, name)
        cluster.pods.remove(old)
        new = {
            "metadata": {**old["metadata"], "name": f"{name}-r", "uid": old["metadata"]["uid"] + "-r"},
            "spec": {key: value for key, value in old["spec"].items() if key != "nodeName"},
            "status": {"phase": "Pending"},
        }
        cluster.pods.append(new)
    for name, node in outcome.nominated.items():
        _pod(cluster, name)["status"]["nominatedNodeName"] = node
    return cluster


def test_plan_moves_the_fewest_pods_and_each_moved_pod_gets_a_new_place() -> None:
    cluster = fragmented()
    first = run(cluster, conf())
    assert first.evicted == {"b0-0", "b1-0", "b2-0"}
    assert {e.reason for e in first.result.evictions} == {"consolidate"}
    assert first.nominated == {"g-0": "n1"}
    assert first.bound == set()
    assert events(first) == {
        f"b{i}": f"1 pod moved to make room for PodGroup default/g: b{i}-0" for i in range(3)
    }
    assert "consolidate: 3 pods of default/b0, default/b1, default/b2 moved to open room on n1" in why(first)
    assert gangs_left_partly_evicted(cluster.pods, cluster.podgroups, first.result) == []

    second = run(recreate_moved(cluster, first), conf())
    binds = {b.name: b.node for b in second.result.binds}
    assert binds["g-0"] == "n1"
    moved = {name: node for name, node in binds.items() if name.endswith("-r")}
    assert set(moved) == {"b0-0-r", "b1-0-r", "b2-0-r"}
    assert sorted(moved.values()) == ["n0", "n2", "n3"]  # one 2-GPU hole each
    assert second.evicted == set()


def test_the_room_opened_is_kept_for_the_gang_from_a_job_ahead_of_it() -> None:
    cluster = fragmented()
    first = run(cluster, conf())
    assert first.nominated == {"g-0": "n1"}
    # Before the gang binds, an 8-GPU job created before it (so ahead of it in job order) arrives.
    after = recreate_moved(cluster, first).job("thief", gpu=8, pending=1, created=-1)
    second = run(after, conf())
    binds = {b.name: b.node for b in second.result.binds}
    assert binds.get("g-0") == "n1"
    assert "thief-0" not in binds


def test_while_the_moved_pods_leave_no_pod_is_bound_into_the_room_kept() -> None:
    cluster = fragmented()
    first = run(cluster, conf())
    for name in first.evicted:  # still terminating on n1
        _pod(cluster, name)["metadata"]["deletionTimestamp"] = NOW
    _pod(cluster, "g-0")["status"]["nominatedNodeName"] = "n1"
    # n1 has 2 GPUs idle beside the leaving pods, and a 2-GPU pod that may only go there arrives.
    cluster.job("thief", gpu=2, pending=1, created=-1)
    _pod(cluster, "thief-0")["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n1"}
    second = run(cluster, conf())
    assert second.nominated.get("g-0") == "n1"
    assert "thief-0" not in second.bound
    assert second.evicted == set()


def _protect(cluster: Cluster) -> Cluster:
    for i in range(3):
        _pod(cluster, f"b{i}-0")["metadata"]["annotations"][k.PREEMPTABLE_KEY] = "false"
    return cluster


def _budget(cluster: Cluster) -> Cluster:
    for i in range(3):
        _pod(cluster, f"b{i}-0")["metadata"]["labels"] = {"app": "b"}
    cluster.pdbs.append(
        {"metadata": {"name": "keep-b", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": "b"}}}, "status": {"disruptionsAllowed": 0}}
    )  # fmt: skip
    return cluster


def _cooling(cluster: Cluster) -> Cluster:
    for i in range(3):
        pod = _pod(cluster, f"b{i}-0")
        pod["metadata"]["labels"] = {"volcano.sh/cooldown-time": "1h"}
        pod["status"]["conditions"] = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-01T11:50:00Z"}
        ]
    return cluster


KEPT = [
    pytest.param(lambda: _protect(fragmented()), id="preemptable-false"),
    pytest.param(lambda: _budget(fragmented()), id="pdb-allows-no-disruption"),
    pytest.param(lambda: _cooling(fragmented()), id="cdp-cooldown"),
    pytest.param(lambda: fragmented({"owned": False}), id="no-controller-to-recreate-them"),
    pytest.param(lambda: fragmented({"priority": "high"}), id="higher-priority-than-the-gang"),
    pytest.param(lambda: fragmented({"namespace": "kube-system"}), id="kube-system"),
]


@pytest.mark.parametrize("build", KEPT)
def test_pods_that_may_not_move_stay_and_the_next_cheapest_plan_is_taken(
    build: Callable[[], Cluster],
) -> None:
    outcome = run(build(), conf())
    # n3 emptied instead: its two pods, and two of c's to make room for its 4-GPU pod (c keeps 4 >= 1).
    assert {"d-0", "e-0"} <= outcome.evicted
    assert len(outcome.evicted) == 4 and len({p for p in outcome.evicted if p.startswith("c-")}) == 2
    assert outcome.nominated == {"g-0": "n3"}


def whole_gang_b() -> Cluster:
    """b is one gang of 4 (minMember 4): three pods on n1, one on n3 (beside a 4-GPU pod)."""
    cluster = _gpu_nodes(Cluster())
    cluster.job("big", gpu=6, running_on=["n0"], created=RECENT, owned=True)
    cluster.job("b", gpu=2, running_on=["n1", "n1", "n1", "n3"], created=RECENT, owned=True)
    cluster.job("c", gpu=1, running_on=["n2"] * 6, min_member=1, created=RECENT, owned=True)
    cluster.job("d", gpu=4, running_on=["n3"], created=RECENT, owned=True)
    return cluster.job("g", gpu=8, pending=1, created=0)


def test_a_gang_moves_whole_never_in_part() -> None:
    cluster = whole_gang_b()
    outcome = run(cluster, conf())
    assert outcome.evicted == {"b-0", "b-1", "b-2", "b-3"}  # 4 moves, not 3 of them, and fewer than c's 6
    assert outcome.nominated == {"g-0": "n1"}
    assert events(outcome) == {"b": "4 pods moved to make room for PodGroup default/g: b-0, b-1, b-2"
                               " and 1 more"}  # fmt: skip
    assert gangs_left_partly_evicted(cluster.pods, cluster.podgroups, outcome.result) == []


def test_no_plan_within_max_moves_evicts_nothing_and_says_so() -> None:
    outcome = run(whole_gang_b(), conf(maxMoves=3))
    assert outcome.evicted == set()
    assert "consolidate: no plan: no set of at most 3 moves (maxMoves)" in why(outcome)


def test_no_plan_when_the_moved_pods_could_not_be_placed_elsewhere() -> None:
    cluster = _gpu_nodes(Cluster())
    for i in range(4):  # 8 GPUs free in all, 2 per node; every pod asks 6: none fits another node's hole
        cluster.job(f"w{i}", gpu=6, running_on=[f"n{i}"], created=RECENT, owned=True)
    cluster.job("g", gpu=8, pending=1, created=0)
    outcome = run(cluster, conf())
    assert outcome.evicted == set()
    assert outcome.nominated == {}
    assert "consolidate: no plan: no set of at most 8 moves (maxMoves)" in why(outcome)


def test_no_plan_when_waiting_is_cheaper_than_the_moves() -> None:
    outcome = run(fragmented(), conf(waitMinutes=5))
    assert outcome.evicted == set()
    # 3 pods x 2 GPUs x 10 minutes run = 60 GPU-minutes, against 8 GPUs x 5 minutes of waiting.
    assert (
        "consolidate: no plan: 3 moves needed, cost 60 GPU-minutes (x costRatio 1) >= waiting 40 "
        "GPU-minutes (8 GPUs x waitMinutes 5)"
    ) in why(outcome)


def test_cost_ratio_weighs_the_moves() -> None:
    assert run(fragmented(), conf(costRatio=8)).evicted == set()  # 480 >= 480
    assert run(fragmented(), conf(costRatio=7)).evicted == {"b0-0", "b1-0", "b2-0"}


def test_off_unless_the_conf_names_it() -> None:
    for text in (DEFAULT_CONF, conf().replace("consolidate, ", "")):
        outcome = run(fragmented(), text)
        assert outcome.evicted == set()
        assert "consolidate" not in why(outcome)


def racks() -> Cluster:
    """Three racks of two nodes. rack-a: n0 runs three 2-GPU pods, n1 four; rack-b: n2 a protected 6-GPU
    pod, n3 three 2-GPU pods; rack-c: n4 and n5 (16 GPUs) a protected 10-GPU pod each. A gang of two 8-GPU
    pods waits. Any two nodes: n0 and n3, 6 moves (rack-b's n2 and rack-c's nodes cannot be emptied). In one
    rack: only rack-a, 7 moves."""
    cluster = Cluster()
    for i in range(4):
        cluster.node(f"n{i}", cpu=64, memory="256Gi", gpu=8)
    for i in (4, 5):
        cluster.node(f"n{i}", cpu=64, memory="256Gi", gpu=16)
    for i in range(7):
        cluster.job(f"a{i}", gpu=2, running_on=["n0" if i < 3 else "n1"], created=RECENT, owned=True)
    for i in range(3):
        cluster.job(f"b{i}", gpu=2, running_on=["n3"], created=RECENT, owned=True)
    keep = {k.PREEMPTABLE_KEY: "false"}
    cluster.job("big2", gpu=6, running_on=["n2"], created=RECENT, owned=True, pod_annotations=keep)
    cluster.job("c4", gpu=10, running_on=["n4"], created=RECENT, owned=True, pod_annotations=keep)
    cluster.job("c5", gpu=10, running_on=["n5"], created=RECENT, owned=True, pod_annotations=keep)
    cluster.job("g", gpu=8, pending=2, created=0)
    cluster.hypernodes = [
        {"metadata": {"name": rack}, "spec": {"tier": 1, "members": [
            {"type": "Node", "selector": {"exactMatch": {"name": node}}} for node in nodes]}}
        for rack, nodes in (("rack-a", ("n0", "n1")), ("rack-b", ("n2", "n3")), ("rack-c", ("n4", "n5")))
    ]  # fmt: skip
    return cluster


def _hard(cluster: Cluster, **topology: Any) -> Cluster:
    cluster.podgroups[-1]["spec"]["networkTopology"] = {"mode": "hard", **topology}
    return cluster


def test_at_node_level_the_fewest_moves_may_span_racks() -> None:
    outcome = run(racks(), conf())
    assert outcome.evicted == {"a0-0", "a1-0", "a2-0", "b0-0", "b1-0", "b2-0"}
    assert sorted(outcome.nominated.values()) == ["n0", "n3"]


def test_a_hard_topology_gang_gets_its_place_in_one_hypernode() -> None:
    outcome = run(_hard(racks(), highestTierAllowed=1), conf())
    assert outcome.evicted == {f"a{i}-0" for i in range(7)}
    assert sorted(outcome.nominated.values()) == ["n0", "n1"]
    assert "to open room on n0, n1 in HyperNode rack-a" in why(outcome)


def test_a_soft_topology_is_planned_at_node_level() -> None:
    cluster = racks()
    cluster.podgroups[-1]["spec"]["networkTopology"] = {"mode": "soft"}
    assert run(cluster, conf()).evicted == {"a0-0", "a1-0", "a2-0", "b0-0", "b1-0", "b2-0"}


def test_a_hard_topology_gang_without_hypernodes_is_refused_in_words() -> None:
    cluster = _hard(fragmented(), highestTierAllowed=1)
    outcome = run(cluster, conf())
    assert outcome.evicted == set()
    assert "consolidate: not planned: it has a hard networkTopology and the cluster has no HyperNodes" in why(
        outcome
    )


def test_a_gang_its_queue_cannot_take_is_not_planned_for() -> None:
    cluster = fragmented()
    cluster.queue("default").queue(
        "capped", capability={"cpu": "64", "memory": "256Gi", "nvidia.com/gpu": "4"}
    )
    cluster.podgroups[-1]["spec"]["queue"] = "capped"
    outcome = run(cluster, conf())
    assert outcome.evicted == set()
    assert "consolidate: not planned: its queue has no room for it" in why(outcome)


def test_a_gang_asking_no_gpu_is_refused_in_words_only_when_it_would_need_moves() -> None:
    cluster = fragmented()
    cluster.job("cpu-wide", cpu="64", pending=1, created=0)  # every node runs something: no 64 free cpu
    cluster.job("cpu-small", cpu="2", pending=1, created=0)
    outcome = run(cluster, conf())
    assert "consolidate: not planned: it asks no nvidia.com/gpu" in why(outcome, "cpu-wide")
    assert "cpu-small-0" in outcome.bound


def _keep_big(cluster: Cluster) -> Cluster:
    _pod(cluster, "big-0")["metadata"]["annotations"][k.PREEMPTABLE_KEY] = "false"
    return cluster


# Every node of these clusters runs 6 GPUs, so the greedy planner's emptiest is the first it may empty.
GREEDY = [
    pytest.param(fragmented, {"big-0"}, "n0", id="first-emptiest-node-though-its-pod-has-nowhere-to-go"),
    pytest.param(
        lambda: _keep_big(fragmented()), {"b0-0", "b1-0", "b2-0"}, "n1", id="immovable-pods-pass-the-node"
    ),
    pytest.param(
        lambda: _keep_big(whole_gang_b()), {"b-0", "b-1", "b-2", "b-3"}, "n1", id="a-gang-goes-whole"
    ),
]


@pytest.mark.parametrize(("build", "evicted", "node"), GREEDY)
def test_greedy_planner_empties_the_emptiest_node_the_gang_fits_on(
    build: Callable[[], Cluster], evicted: set[str], node: str
) -> None:
    cluster = build()
    outcome = run(cluster, conf(planner="greedy"))
    assert outcome.evicted == evicted
    assert {e.reason for e in outcome.result.evictions} == {"consolidate"}
    assert outcome.nominated == {"g-0": node}
    assert "(planner greedy: the emptiest nodes emptied)" in why(outcome)
    assert gangs_left_partly_evicted(cluster.pods, cluster.podgroups, outcome.result) == []


def test_greedy_planner_plans_no_place_for_the_pod_it_moves() -> None:
    cluster = fragmented()
    first = run(cluster, conf(planner="greedy"))
    assert first.evicted == {"big-0"}  # CP-SAT never moves it: its 6 GPUs fit no 2-GPU hole
    second = run(recreate_moved(cluster, first), conf(planner="greedy"))
    binds = {b.name: b.node for b in second.result.binds}
    assert binds["g-0"] == "n0"
    assert "big-0-r" not in binds  # it waits for room, as it would after any eviction
    assert second.evicted == set()


def test_greedy_planner_without_a_plan_says_so_and_keeps_the_cost_gate() -> None:
    said = run(whole_gang_b(), conf(planner="greedy", maxMoves=3))
    assert said.evicted == {"big-0"}  # one move suffices on n0
    stuck = run(_keep_big(whole_gang_b()), conf(planner="greedy", maxMoves=3))
    assert stuck.evicted == set()
    assert (
        "consolidate: no plan: emptying the emptiest nodes (planner greedy) opens no room for the gang "
        "within 3 moves (maxMoves)"
    ) in why(stuck)
    gated = run(fragmented(), conf(planner="greedy", waitMinutes=5))
    assert gated.evicted == set()
    assert "consolidate: no plan: 1 move needed, cost 60 GPU-minutes" in why(gated)


BAD_CONFS = [
    pytest.param(conf(costRatio=-1), "argument 'costRatio' must be a number >= 0.0", id="negative-ratio"),
    pytest.param(conf(maxMoves=0), "argument 'maxMoves' must be an integer >= 1", id="no-moves"),
    pytest.param(conf(timeLimitSeconds=0), "'timeLimitSeconds' must be above 0", id="no-time"),
    pytest.param(conf(maxMovez=3), "unknown argument(s) maxMovez; accepted: costRatio", id="typo"),
    pytest.param(
        conf(planner="kai"), "argument 'planner' must be one of cpsat, greedy", id="unknown-planner"
    ),
    pytest.param(
        conf(planner="greedy", maxNodes=16),
        "argument(s) maxNodes bound the CP-SAT model and planner greedy has none",
        id="model-bound-with-greedy",
    ),
    pytest.param(
        conf().replace("enqueue, consolidate, allocate", "enqueue, allocate, consolidate"),
        "actions: consolidate must come before allocate",
        id="after-allocate",
    ),
]


@pytest.mark.parametrize(("text", "said"), BAD_CONFS)
def test_bad_confs_are_refused_naming_the_field(text: str, said: str) -> None:
    with pytest.raises(ConfError, match=None) as err:
        load_conf(text)
    assert said in str(err.value)


def _gang_pods(pg: str, count: int, minimum: int) -> tuple[list[Obj], list[Obj]]:
    pods = [
        {"metadata": {"name": f"{pg}-{i}", "namespace": "default", "uid": f"{pg}-{i}",
                      "annotations": {k.KUBE_GROUP_NAME_KEY: pg}},
         "spec": {"nodeName": "n0"}, "status": {"phase": "Running"}}
        for i in range(count)
    ]  # fmt: skip
    return pods, [{"metadata": {"name": pg, "namespace": "default"}, "spec": {"minMember": minimum}}]


INVARIANT = [
    pytest.param((), (), [], id="nothing-evicted"),
    pytest.param(("a-0",), (), [], id="one-above-the-minimum"),
    pytest.param(("a-0", "a-1", "a-2", "a-3"), (), [], id="whole-gang"),
    pytest.param(
        ("a-0", "a-1"), (), ["default/a keeps 2 of its minMember 3 pods after evictions"], id="below-minimum"
    ),
    pytest.param(("a-0", "a-1"), ("a-9",), [], id="a-pod-bound-in-the-same-session-keeps-it-whole"),
]


@pytest.mark.parametrize(("evicted", "bound", "said"), INVARIANT)
def test_no_gang_left_partly_evicted_invariant(
    evicted: tuple[str, ...], bound: tuple[str, ...], said: list[str]
) -> None:
    pods, podgroups = _gang_pods("a", 4, 3)
    pending = {
        "name": "a-9",
        "namespace": "default",
        "uid": "a-9",
        "annotations": {k.KUBE_GROUP_NAME_KEY: "a"},
    }
    pods.append({"metadata": pending, "spec": {}, "status": {}})
    result = SessionResult(
        evictions=tuple(Evict("default", uid, uid, "consolidate") for uid in evicted),
        binds=tuple(Bind("default", uid, uid, "n1", "default/a") for uid in bound),
    )
    assert gangs_left_partly_evicted(pods, podgroups, result) == said
