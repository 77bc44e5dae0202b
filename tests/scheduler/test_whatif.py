"""What would make a pending job run: each answer is what a what-if session proved, shown as text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_priority_class, make_queue
from tests.scheduler.records_probe import counting_parses, watching_reads
from volcano_py.scheduler.core import load_conf
from volcano_py.whatif import (
    AddNodes,
    Budget,
    ClusterObjects,
    EndJobs,
    RaiseCapability,
    what_would_make_it_run,
)

NOW = "2026-01-01T00:00:00Z"
Obj = dict[str, Any]


def gang(
    name: str,
    size: int,
    gpus: int,
    *,
    on: Sequence[str] = (),
    queue: str = "default",
    priority: str = "",
    phase: str = "Inqueue",
) -> list[Obj]:
    """A PodGroup of ``size`` pods of ``gpus`` GPUs; running on ``on`` (one pod per entry) or pending."""
    pg = make_pg(name, min_member=size, phase="Running" if on else phase).queue(queue)
    if priority:
        pg = pg.priority_class(priority)
    out = [pg.obj()]
    for i in range(size):
        pod = make_pod(f"{name}-{i}").req(cpu="1", gpu=gpus).group(name)
        if priority:
            pod = pod.priority(100 if priority == "high" else 1, priority)
        if on:
            pod = pod.running(on[i])
        out.append(pod.obj())
    return out


def objects(
    nodes: Sequence[Obj], *jobs: list[Obj], queues: Sequence[Obj] = (), **extra: Any
) -> ClusterObjects:
    flat = [o for job in jobs for o in job]
    return ClusterObjects(
        nodes=tuple(nodes),
        pods=tuple(o for o in flat if o["kind"] == "Pod"),
        podgroups=tuple(o for o in flat if o["kind"] == "PodGroup"),
        queues=(make_queue("root").obj(), make_queue("default").obj(), *queues),
        priority_classes=(make_priority_class("high", 100), make_priority_class("low", 1)),
        **extra,
    )


def gpu_nodes(count: int, gpus: int = 8) -> list[Obj]:
    return [make_node(f"n{i}", cpu="64", memory="256Gi", gpu=gpus).obj() for i in range(count)]


@dataclass
class Case:
    objs: ClusterObjects
    job: str = "default/want"
    runs_now: bool = False
    # Each expected suggestion as the substrings its text must hold, in order of the answer.
    suggestions: Sequence[Sequence[str]] = ()
    text: Sequence[str] = ()
    budget: Budget = field(default_factory=Budget)


def shares_held() -> ClusterObjects:
    """Queues a and b of equal weight, each wanting 16 of 24 GPUs: a's job needs weight 2 (or a node)."""
    return objects(
        gpu_nodes(3),
        gang("a-run", 1, 8, on=["n0"], queue="a"),
        gang("b-run", 1, 8, on=["n1"], queue="b"),
        gang("b-more", 1, 8, queue="b"),
        gang("want", 1, 8, queue="a"),
        queues=[make_queue("a").obj(), make_queue("b").obj()],
    )


CASES = [
    pytest.param(
        Case(
            objects(gpu_nodes(1), gang("want", 1, 8)),
            runs_now=True,
            text=["Nothing: a session on the current state schedules it"],
        ),
        id="room-already",
    ),
    pytest.param(
        Case(
            objects(
                gpu_nodes(2),
                gang("a", 1, 8, on=["n0"], priority="low"),
                gang("b", 2, 4, on=["n1", "n1"], priority="low"),
                gang("want", 1, 8, priority="high"),
            ),
            suggestions=[
                ["free 8 nvidia.com/gpu on node n0 by ending or preempting default/a"],
                ["nothing short of 1 more node like n"],
            ],
        ),
        id="end-the-one-job-on-one-node",
    ),
    pytest.param(
        Case(
            objects(
                gpu_nodes(2),
                gang("small", 1, 6, on=["n0"], priority="low"),
                gang("big", 1, 8, on=["n1"], priority="low"),
                gang("want", 1, 4, priority="high"),
            ),
            suggestions=[
                ["free 6 nvidia.com/gpu on node n0 by ending or preempting default/small"],
                ["1 more"],
            ],
        ),
        id="the-smallest-job-that-makes-room",
    ),
    pytest.param(
        Case(
            objects(
                gpu_nodes(2),
                gang("run", 1, 8, on=["n0"], queue="team"),
                gang("want", 1, 8, queue="team"),
                queues=[make_queue("team").capability(cpu="64", gpu=8).obj()],
            ),
            suggestions=[
                ["raise queue team's capability by 8 nvidia.com/gpu (to 16 nvidia.com/gpu, 64 cpu)"],
                ["by ending or preempting default/run"],
            ],
        ),
        id="queue-capability-is-the-limit",
    ),
    pytest.param(
        Case(
            objects(gpu_nodes(1), gang("want", 3, 8)),
            suggestions=[["nothing short of 2 more nodes like n0"]],
        ),
        id="gang-bigger-than-the-cluster",
    ),
    pytest.param(
        # Two queues of equal weight each want 16 of 24 GPUs: each deserves 12, so neither may take the
        # free node. Weight 2 gives a 16; ending a's own running job also fits it; so does one more node.
        Case(
            shares_held(),
            suggestions=[
                ["raise queue a's weight from 1 to 2"],
                ["free 8 nvidia.com/gpu on node n0 by ending or preempting default/a-run"],
                ["nothing short of 1 more node like n"],
            ],
        ),
        id="queue-held-to-its-deserved-share",
    ),
    pytest.param(
        Case(
            objects(
                gpu_nodes(1),
                gang("want", 1, 8, queue="shut", phase="Pending"),
                queues=[make_queue("shut").state("Closed").obj()],
            ),
            suggestions=[["open queue shut"]],
        ),
        id="closed-queue",
    ),
    pytest.param(
        # Ending "a" alone frees n0, but the higher-priority "rival" would take it first: both must go.
        Case(
            objects(
                gpu_nodes(2),
                gang("a", 1, 8, on=["n0"], priority="low"),
                gang("b", 1, 8, on=["n1"], priority="low"),
                gang("rival", 1, 8, priority="high"),
                gang("want", 1, 8, priority="low"),
            ),
            suggestions=[
                ["free 16 nvidia.com/gpu on the cluster by ending or preempting default/a, default/b"],
                ["nothing short of 2 more nodes like n"],
            ],
        ),
        id="a-rival-takes-the-first-freed-node",
    ),
    pytest.param(
        Case(
            objects(gpu_nodes(1), gang("want", 3, 8)),
            budget=Budget(sessions=1),
            text=["No single change found", "search stopped at its budget: 1 what-if sessions"],
        ),
        id="budget-bounds-the-search",
    ),
    pytest.param(
        Case(
            objects(gpu_nodes(1), gang("want", 1, 8)),
            job="default/ghost",
            text=["PodGroup default/ghost is not in the cluster"],
        ),
        id="unknown-job",
    ),
    pytest.param(
        Case(objects(gpu_nodes(1), gang("want", 1, 8, on=["n0"])), text=["Nothing: it is not waiting"]),
        id="running-job",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_what_would_make_it_run(case: Case) -> None:
    answer = what_would_make_it_run(case.objs, case.job, load_conf(), now=NOW, budget=case.budget)
    assert answer.runs_now is case.runs_now
    texts = [s.text() for s in answer.suggestions]
    assert len(texts) == len(case.suggestions), texts
    for got, needles in zip(texts, case.suggestions, strict=True):
        for needle in needles:
            assert needle in got, got
    for needle in case.text:
        assert needle in answer.text(), answer.text()


CUT = "the search stopped at its budget before it knew"
UNTRIED = "options not yet tried may also work"


@pytest.mark.parametrize(
    ("objs", "sessions", "lines"),
    [
        pytest.param(
            # Baseline, weight, the 9 nodes the doubling proves, then the bisection's 4 (no): the budget ends
            # it before 5 to 8 are tried, so 9 is proved and not known to be the fewest.
            objects(gpu_nodes(1), gang("want", 9, 8)),
            4,
            [
                f"- 9 more nodes like n0 (or fewer, down to 5: {CUT})",
                f"(search stopped at its budget: 4 what-if sessions, 0.0s; {UNTRIED})",
            ],
            id="add-nodes-bisection-cut",
        ),
        pytest.param(
            shares_held(),
            3,
            [
                f"- raise queue a's weight from 1 to 32 (or less, down to 2: {CUT})",
                f"(search stopped at its budget: 3 what-if sessions, 0.0s; {UNTRIED})",
            ],
            id="raise-weight-bisection-cut",
        ),
    ],
)
def test_a_bisection_the_budget_cuts_short_says_its_answer_may_not_be_the_least(
    objs: ClusterObjects, sessions: int, lines: list[str]
) -> None:
    """The proved upper end is offered, never called the fewest ("nothing short of"), and the answer says
    the search stopped at its budget though no step after the bisection asked for a session."""
    answer = what_would_make_it_run(
        objs, "default/want", load_conf(), now=NOW, budget=Budget(sessions=sessions), clock=lambda: 0.0
    )
    assert answer.exhausted
    assert answer.text().splitlines() == lines


def test_every_suggestion_really_schedules_the_job() -> None:
    """Applying a suggestion to the objects and running one session binds the whole gang."""
    from volcano_py.scheduler.core import run_session
    from volcano_py.scheduler.framework.snapshot import Snapshot

    objs = objects(
        gpu_nodes(2),
        gang("a", 1, 8, on=["n0"], priority="low"),
        gang("b", 2, 4, on=["n1", "n1"], priority="low"),
        gang("want", 2, 8, priority="high"),
    )
    answer = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW)
    ends = [c for s in answer.suggestions for c in s.changes if isinstance(c, EndJobs)]
    assert ends and set(ends[0].jobs) == {"default/a", "default/b"}
    gone = {f"{j.split('/')[1]}-{i}" for j in ends[0].jobs for i in range(2)}
    snapshot = Snapshot.build(
        nodes=objs.nodes,
        pods=[p for p in objs.pods if p["metadata"]["name"] not in gone],
        podgroups=[g for g in objs.podgroups if f"default/{g['metadata']['name']}" not in ends[0].jobs],
        queues=objs.queues,
        priority_classes=objs.priority_classes,
    )
    result = run_session(snapshot, load_conf(), NOW)
    assert sorted(b.name for b in result.binds) == ["want-0", "want-1"]
    assert not any(isinstance(c, RaiseCapability) for s in answer.suggestions for c in s.changes)
    assert any(isinstance(c, AddNodes) and c.count == 2 for s in answer.suggestions for c in s.changes)


def test_a_job_whose_pods_do_not_exist_yet_is_tried_with_the_pods_it_would_have() -> None:
    pg = make_pg("want", min_member=2, phase="Pending").obj()
    pods = [make_pod(f"want-{i}").req(cpu="1", gpu=8).group("want").obj() for i in range(2)]
    objs = ClusterObjects(nodes=tuple(gpu_nodes(1)), podgroups=(pg,), queues=(make_queue("default").obj(),))
    bare = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW)
    assert "Its pods do not exist yet" in bare.text()
    answer = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW, extra_pods=pods)
    assert [s.text() for s in answer.suggestions] == ["nothing short of 1 more node like n0"]


def test_new_nodes_join_a_rack_for_a_job_bound_to_one() -> None:
    rack = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "rack-a"},
        "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"regexMatch": {"pattern": "^n"}}}]},
    }
    want = gang("want", 2, 8)
    want[0]["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    objs = objects(gpu_nodes(1), gang("a", 1, 8, on=["n0"], priority="low"), want, hypernodes=(rack,))
    answer = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW)
    assert [s.text() for s in answer.suggestions] == ["nothing short of 2 more nodes like n0"]


def test_a_volcano_job_waiting_for_enqueue_gets_its_pods_from_the_controllers_builder() -> None:
    from volcano_py.whatif.jobpods import missing_pods

    template = {
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "x",
                    "resources": {
                        "requests": {"cpu": "1", "nvidia.com/gpu": "8"},
                        "limits": {"nvidia.com/gpu": "8"},
                    },
                }
            ]
        }
    }
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "default", "uid": "u1"},
        "spec": {"minAvailable": 2, "tasks": [{"name": "worker", "replicas": 2, "template": template}]},
    }
    pg = make_pg("train-u1", min_member=2, phase="Pending").obj()
    objs = ClusterObjects(nodes=tuple(gpu_nodes(1)), podgroups=(pg,), queues=(make_queue("default").obj(),))
    pods = missing_pods(job, "default/train-u1", objs.pods, created=NOW)
    assert [p["metadata"]["name"] for p in pods] == ["train-worker-0", "train-worker-1"]
    answer = what_would_make_it_run(objs, "default/train-u1", load_conf(), now=NOW, extra_pods=pods)
    assert [s.text() for s in answer.suggestions] == ["nothing short of 1 more node like n0"]
    # Once the controller has made them, the real pods are used instead.
    assert missing_pods(job, "default/train-u1", (*objs.pods, *pods), created=NOW) == []


def test_a_victim_is_named_by_the_volcano_job_that_owns_its_podgroup() -> None:
    run = gang("run-u1", 1, 8, on=["n0"], queue="team")
    run[0]["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "run",
            "uid": "u1",
            "controller": True,
        }
    ]
    objs = objects(
        gpu_nodes(2),
        run,
        gang("want", 1, 8, queue="team"),
        queues=[make_queue("team").capability(cpu="64", gpu=8).obj()],
    )
    answer = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW)
    assert [s.text() for s in answer.suggestions][1] == (
        "free 8 nvidia.com/gpu on node n0 by ending or preempting default/run"
    )


def test_a_pod_claiming_devices_is_offered_nodes_with_devices_and_the_end_of_whoever_holds_them() -> None:
    from tests.scheduler.dra_builders import DRIVER, gpus, make_claim, make_class, request

    holder = make_pod("old-0").req(cpu="1").group("old").claim("gpu", "old-gpu").obj()
    holder["spec"]["nodeName"] = "n0"
    holder["status"]["phase"] = "Running"
    held = make_claim(
        "old-gpu", [request(count=2)], allocated=[(DRIVER, "n0", "gpu-0"), (DRIVER, "n0", "gpu-1")],
        node="n0", reserved_for=["old-0"],
    )  # fmt: skip
    want = make_pod("want-0").req(cpu="1").group("want").claim_template("gpu", "two", "want-gpu").obj()
    objs = ClusterObjects(
        nodes=(
            make_node("n0", cpu="8", memory="32Gi").obj(),
            make_node("n1", cpu="64", memory="256Gi").obj(),
        ),
        pods=(holder, want),
        podgroups=(make_pg("old").obj(), make_pg("want").obj()),
        queues=(make_queue("default").obj(),),
        device_classes=(make_class(),),
        resource_slices=(gpus("n0", 2),),
        resource_claims=(held, make_claim("want-gpu", [request(count=2)], owner_pod="want-0")),
    )
    answer = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW)
    texts = [s.text() for s in answer.suggestions]
    assert "nothing short of 1 more node like n0" in texts, texts
    ends = [c for s in answer.suggestions for c in s.changes if isinstance(c, EndJobs)]
    assert [e.jobs for e in ends] == [("default/old",)], texts


# --- records kept from one trial's snapshot to the next --------------------------------------------------


def every_kind_of_change() -> ClusterObjects:
    """Two queues held to their shares: the search tries a weight, victims and nodes (many trials, each
    changing the cluster another way)."""
    return objects(
        gpu_nodes(3),
        gang("a-run", 1, 8, on=["n0"], queue="a"),
        gang("b-run", 1, 8, on=["n1"], queue="b"),
        gang("b-more", 1, 8, queue="b"),
        gang("want", 1, 8, queue="a", phase="Pending"),
        queues=[make_queue("a").obj(), make_queue("b").obj()],
    )


@pytest.mark.parametrize(
    ("objs", "job", "budget"),
    [
        *(
            pytest.param(c.objs, c.job, c.budget, id=p.id)
            for p in CASES
            if isinstance(c := p.values[0], Case)
        ),
        pytest.param(every_kind_of_change(), "default/want", Budget(), id="every-kind-of-change"),
    ],
)
def test_kept_records_give_the_answer_fresh_snapshots_give(
    objs: ClusterObjects, job: str, budget: Budget
) -> None:
    def answer(keep: bool) -> object:
        found = what_would_make_it_run(objs, job, load_conf(), now=NOW, budget=budget, keep_records=keep)
        return replace(found, seconds=0.0)  # wall seconds are the one thing that may differ

    assert answer(True) == answer(False)


@pytest.mark.parametrize("keep", [True, False])
def test_each_pod_is_read_once_however_many_trials_run(monkeypatch: pytest.MonkeyPatch, keep: bool) -> None:
    parsed = counting_parses(monkeypatch)
    objs = every_kind_of_change()
    found = what_would_make_it_run(objs, "default/want", load_conf(), now=NOW, keep_records=keep)
    assert found.sessions >= 8 and len(found.suggestions) == 3
    assert {p["metadata"]["name"] for p in objs.pods} == set(parsed)
    if keep:
        # Once for the search's view and its trials alike (new nodes and queue edits read no pod); a victim's
        # pods again only when they come back after a trial that ended their job.
        assert parsed["want-0"] == parsed["b-more-0"] == 1, parsed
        assert parsed.total() < len(objs.pods) + found.sessions, parsed
    else:
        assert parsed["want-0"] == found.sessions + 1  # the view, then every trial's snapshot


def test_no_dict_a_trial_has_read_is_changed_afterwards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each trial changes the cluster by new dicts (``edits``), as kept records require."""
    reads = watching_reads(monkeypatch)
    what_would_make_it_run(every_kind_of_change(), "default/want", load_conf(), now=NOW)
    assert reads.seen and reads.changed() == []
