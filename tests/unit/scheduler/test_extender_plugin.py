"""The ``extender`` plugin without a network: its conf, the bodies it sends, how it reads answers, and what a
session decides from answers handed in on the snapshot."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from volcano_py.scheduler.core import (
    CallFailed,
    ConfError,
    Consultation,
    ExtenderAnswers,
    ExtenderConf,
    Refusal,
    consultation,
    extender_conf,
    load_conf,
    passed_nodes,
    read_enqueueable,
    read_overused,
    read_predicate,
    read_prioritize,
    run_session,
)
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.plugins.extender_wire import resource_doc, task_doc

NOW = "2026-01-01T00:00:00Z"


def _conf(arguments: dict[str, Any], *, cpsat: bool = False) -> str:
    body = "".join(f"      {key}: {json.dumps(value)}\n" for key, value in arguments.items())
    placement = "  - name: cpsat\n" if cpsat else ""
    return (
        'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
        f"- plugins:\n  - name: predicates\n  - name: nodeorder\n{placement}"
        f"  - name: extender\n    arguments:\n{body}"
    )


BASE = {
    "extender.urlPrefix": "http://127.0.0.1:8888/ext/",
    "extender.predicateVerb": "filter",
    "extender.prioritizeVerb": "prioritize",
}
PLAIN = ExtenderConf(url_prefix="http://127.0.0.1:8888/ext/", predicate="filter", prioritize="prioritize")


# --- conf -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            BASE,
            PLAIN,
            id="defaults-timeout-1s-not-ignorable",
        ),
        pytest.param(
            {
                **BASE,
                "extender.httpTimeout": "250ms",
                "extender.onSessionOpenVerb": "open",
                "extender.onSessionCloseVerb": "close",
                "extender.jobEnqueueableVerb": "enqueueable",
                "extender.queueOverusedVerb": "overused",
                "extender.ignorable": "true",
                "extender.managedResources": ["nvidia.com/gpu", "example.com/fpga"],
            },
            ExtenderConf(
                url_prefix="http://127.0.0.1:8888/ext/",
                timeout=0.25,
                on_session_open="open",
                on_session_close="close",
                predicate="filter",
                prioritize="prioritize",
                job_enqueueable="enqueueable",
                queue_overused="overused",
                ignorable=True,
                managed_resources=frozenset({"nvidia.com/gpu", "example.com/fpga"}),
            ),
            id="every-supported-argument",
        ),
        pytest.param(
            {**BASE, "extender.preemptableVerb": "", "extender.jobReadyVerb": ""},
            PLAIN,
            id="empty-in-session-verbs-are-unset-as-in-volcano",
        ),
    ],
)
def test_conf_reads_volcanos_arguments(arguments: dict[str, Any], expected: ExtenderConf) -> None:
    conf = extender_conf(load_conf(_conf(arguments)))
    assert conf == expected
    assert conf.url("filter") == "http://127.0.0.1:8888/ext/filter"


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        pytest.param(
            {**BASE, "extender.preemptableVerb": "preemptable"},
            "argument 'extender.preemptableVerb' is not supported by volcano-py: Volcano asks it from inside "
            "its decisions, with the victims preempt is weighing",
            id="preemptable",
        ),
        pytest.param(
            {**BASE, "extender.reclaimableVerb": "r"},
            "'extender.reclaimableVerb' is not supported",
            id="reclaim",
        ),
        pytest.param(
            {**BASE, "extender.jobReadyVerb": "r"},
            "with the job as this session's allocations",
            id="job-ready",
        ),
        pytest.param({**BASE, "extender.allocateFuncVerb": "a"}, "may undo it", id="allocate-func"),
        pytest.param({**BASE, "extender.deallocateFuncVerb": "d"}, "each eviction", id="deallocate-func"),
        pytest.param(
            {**BASE, "extender.jobEnqueuedVerb": "e"},
            "'extender.jobEnqueuedVerb' is not supported by volcano-py: Volcano asks it from inside its "
            "decisions: it is told of each job as enqueue admits it",
            id="job-enqueued",
        ),
        pytest.param(
            {"extender.predicateVerb": "filter"},
            "argument 'extender.urlPrefix' must be the extender's http:// or https:// address",
            id="verb-without-url",
        ),
        pytest.param(
            {**BASE, "extender.urlPrefix": "127.0.0.1:8888"},
            "http:// or https:// address",
            id="url-no-scheme",
        ),
        pytest.param(
            {**BASE, "extender.httpTimeout": "soon"},
            "'extender.httpTimeout' must be a positive",
            id="timeout",
        ),
        pytest.param(
            {**BASE, "extender.managedResources": "nvidia.com/gpu"},
            "'extender.managedResources' must be a YAML list of resource names",
            id="managed-resources-not-a-list",
        ),
        pytest.param({**BASE, "extender.ignorable": "maybe"}, "must be true or false", id="ignorable"),
        pytest.param(
            {**BASE, "extender.prioritiseVerb": "p"}, "unknown argument(s) extender.prior", id="typo"
        ),
    ],
)
def test_conf_refuses_what_cannot_be_honoured(arguments: dict[str, Any], refusal: str) -> None:
    with pytest.raises(ConfError, match="plugin extender") as err:
        load_conf(_conf(arguments))
    assert refusal in str(err.value)


def test_conf_without_verbs_asks_nothing() -> None:
    # As Volcano's plugin: no verb, no call (and nothing for the runtime to do).
    assert extender_conf(load_conf(_conf({"extender.urlPrefix": "http://e"}))) is None
    assert extender_conf(load_conf(None)) is None


# --- what is sent -------------------------------------------------------------------------------------------


def test_resource_doc_uses_volcanos_units() -> None:
    pod = make_pod("p").req(cpu="1500m", memory="1Gi", gpu=2, **{"ephemeral-storage": "1Ki"}).obj()
    snapshot = Snapshot.build(nodes=[make_node("n0", gpu=8).obj()], pods=[pod])
    task = next(t for job in snapshot.jobs.values() for t in job.tasks.values())
    doc = task_doc(task)
    assert doc["Resreq"] == {
        "MilliCPU": 1500.0,
        "Memory": float(1 << 30),
        "ScalarResources": {"nvidia.com/gpu": 2000.0, "ephemeral-storage": 1024000.0},
        "MaxTaskNum": 0,
    }
    assert (doc["Name"], doc["Namespace"], doc["Status"], doc["Pod"]) == ("p", "default", 1, pod)
    assert resource_doc({"pods": 110})["MaxTaskNum"] == 110


@pytest.mark.parametrize(
    ("arguments", "flags", "asked", "predicate", "prioritize"),
    [
        pytest.param(BASE, "", ["p-cpu", "p-gpu"], True, True, id="every-pending-pod"),
        pytest.param(
            {**BASE, "extender.managedResources": ["nvidia.com/gpu"]}, "", ["p-gpu"], True, True, id="managed"
        ),
        pytest.param(
            BASE, "    enablePredicate: false\n", ["p-cpu", "p-gpu"], False, True, id="no-predicate"
        ),
        pytest.param(BASE, "    enableNodeOrder: false\n", ["p-cpu", "p-gpu"], True, False, id="no-order"),
    ],
)
def test_consultation_asks_about_the_pending_pods_it_is_interested_in(
    arguments: dict[str, Any], flags: str, asked: list[str], predicate: bool, prioritize: bool
) -> None:
    text = _conf(arguments).replace("  - name: extender\n", f"  - name: extender\n{flags}")
    conf = load_conf(text)
    found = extender_conf(conf)
    assert found is not None
    nodes = [make_node("n0", gpu=8).obj(), make_node("n1").obj()]
    pods = [
        make_pod("p-cpu").req(cpu=1).obj(),
        make_pod("p-gpu").req(cpu=1, gpu=1).obj(),
        make_pod("running").req(cpu=1).running("n1").obj(),
        make_pod("gated").req(cpu=1).gates("example.com/hold").obj(),
    ]
    snapshot = Snapshot.build(nodes=nodes, pods=pods)
    option = conf.option("extender")
    assert option is not None
    raw = {n["metadata"]["name"]: n for n in nodes}
    plan = consultation(found, snapshot, raw_nodes=raw, raw_queues={}, flags=option.flags)
    assert sorted(json.loads(body)["Name"] for _, body in plan.tasks) == asked
    assert [name for name, _ in plan.nodes] == ["n0", "n1"]
    assert json.loads(plan.nodes[1][1])["Node"] == nodes[1]
    assert (plan.ask_predicate, plan.ask_prioritize, plan.open_body) == (predicate, prioritize, None)


def test_session_open_body_carries_volcanos_keys() -> None:
    conf = load_conf(_conf({**BASE, "extender.onSessionOpenVerb": "open"}))
    found = extender_conf(conf)
    assert found is not None
    pg = make_pg("pg", 1).obj()
    pod = make_pod("p").group("pg").obj()
    snapshot = Snapshot.build(nodes=[make_node("n0").obj()], pods=[pod], podgroups=[pg])
    plan = consultation(found, snapshot, raw_nodes={}, raw_queues={}, flags={})
    assert plan.open_body is not None
    body = json.loads(plan.open_body)
    assert set(body) == {"Jobs", "Nodes", "Queues", "NamespaceInfo", "RevocableNodes", "NodeList"}
    assert body["Jobs"]["default/pg"]["PodGroup"] == pg
    assert [t["Name"] for t in body["Jobs"]["default/pg"]["Tasks"].values()] == ["p"]
    assert set(body["Queues"]) == {"default"}


# --- how answers are read -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param({}, None, id="empty-passes"),
        pytest.param({"status": "", "code": 0}, None, id="no-message-passes"),
        pytest.param({"status": "too hot", "code": 2}, Refusal("too hot", 2), id="unschedulable"),
        pytest.param({"status": "too hot"}, Refusal("too hot", 1), id="message-without-code-is-error"),
        pytest.param({"status": 3}, "is not {status: string, code: int}", id="status-not-a-string"),
        pytest.param([], "is not a JSON object", id="not-an-object"),
    ],
)
def test_read_predicate(payload: object, expected: Refusal | str | None) -> None:
    got = read_predicate(payload)
    if isinstance(expected, str):
        assert isinstance(got, CallFailed) and expected in got.message and not got.answered
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param({"nodeScore": {"n0": 1, "n1": 2.5}}, {"n0": 1.0, "n1": 2.5}, id="scores"),
        pytest.param({"nodeScore": {}}, {}, id="empty-scores"),
        pytest.param(
            {"nodeScore": {"n0": 1}, "errorMessage": "busy"}, CallFailed("busy", answered=True), id="error"
        ),
        pytest.param({}, CallFailed("the prioritize answer has no nodeScore", answered=True), id="no-scores"),
        pytest.param({"nodeScore": {"n0": "high"}}, "is not {node: number}", id="score-not-a-number"),
    ],
)
def test_read_prioritize(payload: object, expected: object) -> None:
    got = read_prioritize(payload)
    if isinstance(expected, str):
        assert isinstance(got, CallFailed) and expected in got.message
    else:
        assert got == expected


def test_prioritize_goes_over_the_nodes_the_predicate_passed() -> None:
    nodes = (("n0", b"0"), ("n1", b"1"), ("n2", b"2"))
    refused: dict[str, Refusal | CallFailed] = {"n0": Refusal("no", 2), "n1": CallFailed("timeout")}
    strict = Consultation(ExtenderConf(url_prefix="http://e"), None, (), nodes, True, True)
    assert passed_nodes(strict, refused) == [b"2"]
    ignorable = Consultation(ExtenderConf(url_prefix="http://e", ignorable=True), None, (), nodes, True, True)
    assert passed_nodes(ignorable, refused) == [b"1", b"2"]


# --- what a session decides from the answers -----------------------------------------------------------

P0 = "uid-default-p0"


def _session(
    answers: ExtenderAnswers | None,
    *,
    ignorable: bool = False,
    cpsat: bool = False,
    pods: list[dict[str, Any]] | None = None,
    podgroups: list[dict[str, Any]] | None = None,
) -> SessionResult:
    snapshot = Snapshot.build(
        nodes=[make_node(f"n{i}").obj() for i in range(3)],
        pods=pods if pods is not None else [make_pod("p0").req(cpu=1).obj()],
        podgroups=podgroups or (),
    )
    snapshot.extender = answers
    conf = load_conf(_conf({**BASE, "extender.ignorable": ignorable}, cpsat=cpsat))
    return run_session(snapshot, conf, NOW)


def _answers(
    fits: dict[str, Refusal | CallFailed] | None = None,
    scores: dict[str, float] | CallFailed | None = None,
    *,
    opened: CallFailed | None = None,
) -> ExtenderAnswers:
    return ExtenderAnswers(
        opened=opened,
        asked=frozenset({P0}),
        fits={P0: fits} if fits else {},
        scores={P0: scores} if scores is not None else {},
    )


HOT = Refusal("node too hot", 2)
DOWN = CallFailed("filter at http://127.0.0.1:8888/ext/filter: no answer within 1s")
REFUSE_N0 = {"n0": HOT}


# Without the extender the pod goes to n0 (equal nodes, first by name).
@pytest.mark.parametrize(
    ("answers", "ignorable", "node", "reason"),
    [
        pytest.param(None, False, "n0", "", id="not-asked-abstains"),
        pytest.param(_answers(REFUSE_N0), False, "n1", "", id="predicate-refuses-n0"),
        pytest.param(_answers(scores={"n2": 50.0, "n1": 10.0}), False, "n2", "", id="score-picks-n2"),
        pytest.param(
            _answers(REFUSE_N0, {"n0": 90.0, "n1": 10.0}), False, "n1", "", id="refused-beats-score"
        ),
        pytest.param(
            _answers({"n0": HOT, "n1": HOT, "n2": HOT}),
            True,
            None,
            "3 nodes refused by extender http://127.0.0.1:8888/ext/: node too hot",
            id="all-refused",
        ),
        pytest.param(_answers({"n0": DOWN}), True, "n0", "", id="failed-call-ignorable-passes"),
        pytest.param(_answers({"n0": DOWN}), False, "n1", "", id="failed-call-fails-the-node"),
        pytest.param(
            _answers({"n0": DOWN, "n1": DOWN, "n2": DOWN}),
            False,
            None,
            "3 nodes not checked: extender filter call failed (filter at",
            id="all-failed-not-ignorable",
        ),
        pytest.param(_answers(scores=CallFailed("refused")), True, "n0", "", id="failed-score-ignorable"),
        pytest.param(
            _answers(scores=CallFailed("refused")),
            False,
            None,
            "3 nodes not scored: extender prioritize call failed (refused)",
            id="failed-score-not-ignorable",
        ),
        pytest.param(
            _answers(scores=CallFailed("busy", answered=True)),
            True,
            None,
            "not scored: extender prioritize call failed (busy)",
            id="extender-error-even-if-ignorable",
        ),
        pytest.param(
            _answers(REFUSE_N0, opened=CallFailed("down")), False, "n0", "", id="open-failed-plugin-off"
        ),
        pytest.param(
            _answers(REFUSE_N0, opened=CallFailed("down")), True, "n1", "", id="open-failed-ignorable"
        ),
    ],
)
def test_session_reads_the_answers(
    answers: ExtenderAnswers | None, ignorable: bool, node: str | None, reason: str
) -> None:
    result = _session(answers, ignorable=ignorable)
    assert {b.name: b.node for b in result.binds} == ({"p0": node} if node else {})
    if reason:
        assert reason in result.explanations["default/p0"].message


def test_pods_of_one_spec_answered_differently_go_where_each_was_let() -> None:
    pods = [make_pod(f"p{i}").req(cpu=1).obj() for i in range(3)]
    answers = ExtenderAnswers(
        asked=frozenset(f"uid-default-p{i}" for i in range(3)),
        fits={
            "uid-default-p0": {"n0": HOT, "n1": HOT},
            "uid-default-p1": {"n1": HOT, "n2": HOT},
            "uid-default-p2": {"n0": HOT, "n2": HOT},
        },
    )
    result = _session(answers, pods=pods)
    assert {b.name: b.node for b in result.binds} == {"p0": "n2", "p1": "n0", "p2": "n1"}


@pytest.mark.parametrize("cpsat", [False, True], ids=["greedy", "cpsat"])
def test_a_gang_keeps_off_the_refused_nodes(cpsat: bool) -> None:
    # n0 is refused for every pod of the gang; each node holds one pod (cpu 8 each).
    pods = [make_pod(f"g{i}").req(cpu=8).group("g").obj() for i in range(2)]
    answers = ExtenderAnswers(
        asked=frozenset(f"uid-default-g{i}" for i in range(2)),
        fits={f"uid-default-g{i}": {"n0": HOT} for i in range(2)},
    )
    result = _session(answers, pods=pods, podgroups=[make_pg("g", 2).obj()], cpsat=cpsat)
    assert sorted(b.node for b in result.binds) == ["n1", "n2"]


def test_under_cpsat_a_one_pod_job_follows_the_score() -> None:
    result = _session(_answers(scores={"n1": 5.0}), cpsat=True)
    assert [b.node for b in result.binds] == ["n1"]


# --- jobEnqueueable and queueOverused, asked once before the session ----------------------------------------


def test_consultation_asks_about_pending_jobs_with_min_resources_and_queues_with_pending_pods() -> None:
    arguments = {
        **BASE,
        "extender.jobEnqueueableVerb": "enqueueable",
        "extender.queueOverusedVerb": "overused",
    }
    conf = extender_conf(load_conf(_conf(arguments)))
    assert conf is not None
    snapshot = Snapshot.build(
        nodes=[make_node("n0").obj()],
        pods=[make_pod("w0").req(cpu=1).group("running").obj()],
        podgroups=[
            make_pg("asks", 1, phase="Pending").min_res(cpu=1).obj(),
            make_pg("no-min", 1, phase="Pending").obj(),  # admitted without asking, as in Volcano
            make_pg("running", 1).queue("busy").obj(),
        ],
        queues=[make_queue("busy").obj(), make_queue("idle").obj()],
    )
    plan = consultation(conf, snapshot, raw_nodes={}, raw_queues={}, flags={})
    assert [uid for uid, _ in plan.jobs] == ["default/asks"]
    assert json.loads(plan.jobs[0][1])["job"]["Name"] == "asks"
    assert [name for name, _ in plan.queues] == ["busy"]
    assert json.loads(plan.queues[0][1])["queue"]["Name"] == "busy"
    for flags, enqueue in (({"enableJobEnqueued": False}, True), ({}, False)):
        assert not consultation(
            conf, snapshot, raw_nodes={}, raw_queues={}, flags=flags, enqueue=enqueue
        ).jobs
    assert not consultation(
        conf, snapshot, raw_nodes={}, raw_queues={}, flags={"enableOverused": False}
    ).queues


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param({"status": 1}, 1, id="permit"),
        pytest.param({"status": -1}, -1, id="reject"),
        pytest.param({}, 0, id="abstain"),
        pytest.param({"status": "yes"}, "is not {status: int}", id="not-an-int"),
    ],
)
def test_read_enqueueable(payload: object, expected: int | str) -> None:
    got = read_enqueueable(payload)
    if isinstance(expected, str):
        assert isinstance(got, CallFailed) and expected in got.message
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param({"overused": True}, True, id="overused"),
        pytest.param({}, False, id="not-said"),
        pytest.param({"overused": "yes"}, "is not {overused: bool}", id="not-a-bool"),
    ],
)
def test_read_overused(payload: object, expected: bool | str) -> None:
    got = read_overused(payload)
    if isinstance(expected, str):
        assert isinstance(got, CallFailed) and expected in got.message
    else:
        assert got is expected


@pytest.mark.parametrize(
    ("answer", "ignorable", "phase", "reason"),
    [
        pytest.param(None, False, "Inqueue", "", id="not-asked-abstains"),
        pytest.param(1, False, "Inqueue", "", id="permit"),
        pytest.param(0, False, "Inqueue", "", id="abstain"),
        pytest.param(
            -1,
            False,
            "Pending",
            "extender http://127.0.0.1:8888/ext/ does not let it in (enqueueable answered -1)",
            id="reject",
        ),
        pytest.param(CallFailed("down"), True, "Inqueue", "", id="failed-ignorable-permits"),
        pytest.param(
            CallFailed("down"),
            False,
            "Pending",
            "extender enqueueable call failed (down)",
            id="failed-rejects",
        ),
    ],
)
def test_job_enqueueable_votes_on_admitting_a_job(
    answer: int | CallFailed | None, ignorable: bool, phase: str, reason: str
) -> None:
    snapshot = Snapshot.build(
        nodes=[make_node("n0").obj()], podgroups=[make_pg("pg", 1, phase="Pending").min_res(cpu=1).obj()]
    )
    snapshot.extender = ExtenderAnswers(enqueueable={"default/pg": answer} if answer is not None else {})
    arguments = {**BASE, "extender.jobEnqueueableVerb": "enqueueable", "extender.ignorable": ignorable}
    result = run_session(snapshot, load_conf(_conf(arguments)), NOW)
    (update,) = [u for u in result.podgroup_updates if u.name == "pg"]
    assert update.phase.value == phase
    if reason:
        assert result.explanations["default/pg"].message == reason


@pytest.mark.parametrize(
    ("answer", "ignorable", "placed"),
    [
        pytest.param(False, False, True, id="not-overused"),
        pytest.param(True, False, False, id="overused"),
        pytest.param(CallFailed("down"), True, True, id="failed-ignorable"),
        pytest.param(CallFailed("down"), False, False, id="failed-counts-as-overused"),
    ],
)
def test_queue_overused_stops_the_queues_placements(
    answer: bool | CallFailed, ignorable: bool, placed: bool
) -> None:
    snapshot = Snapshot.build(nodes=[make_node("n0").obj()], pods=[make_pod("p0").req(cpu=1).obj()])
    snapshot.extender = ExtenderAnswers(overused={"default": answer})
    arguments = {**BASE, "extender.queueOverusedVerb": "overused", "extender.ignorable": ignorable}
    result = run_session(snapshot, load_conf(_conf(arguments)), NOW)
    assert bool(result.binds) is placed
    if not placed:
        assert "queue default is overused" in result.explanations["default/p0"].message
