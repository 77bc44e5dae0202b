"""The runtime's extender client against a local HTTP extender: what it sends, how it reads what comes back,
and one cycle of the core with its answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web

from tests.scheduler.builders import make_node, make_pg, make_pod
from volcano_py.scheduler.core import CallFailed, ClusterObjects, Refusal
from volcano_py.scheduler.runtime.cycle import default_core
from volcano_py.scheduler.runtime.extender import ExtenderClient

NOW = datetime(2026, 1, 1, tzinfo=UTC)
JSON = dict[str, Any]
Handler = Callable[[JSON], Any]


def _filter(body: JSON) -> JSON:
    # Refuses n0 for every pod, as a node-health extender would.
    if body["node"]["Name"] == "n0":
        return {"status": f"{body['node']['Name']} is draining", "code": 2}
    return {"status": "", "code": 0}


def _prioritize(body: JSON) -> JSON:
    return {"nodeScore": {node["Name"]: 10.0 * i for i, node in enumerate(body["nodes"])}, "errorMessage": ""}


class FakeExtender:
    """Answers each verb with its handler (a JSON value, or a ``web.Response`` as is); records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.handlers: dict[str, Handler] = {
            "open": lambda body: {},
            "close": lambda body: {},
            "filter": _filter,
            "prioritize": _prioritize,
        }
        self.delay = 0.0
        self.url = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        verb = request.match_info["verb"]
        body = await request.json()
        self.calls.append((verb, body))
        if self.delay:
            await asyncio.sleep(self.delay)
        answer = self.handlers[verb](body)
        return answer if isinstance(answer, web.StreamResponse) else web.json_response(answer)

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.calls]


@pytest.fixture
async def extender() -> AsyncIterator[FakeExtender]:
    fake = FakeExtender()
    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/ext/{verb}", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    fake.url = f"http://{host}:{port}/ext"
    try:
        yield fake
    finally:
        await runner.cleanup()


@pytest.fixture
async def client() -> AsyncIterator[ExtenderClient]:
    found = ExtenderClient()
    yield found
    await found.close()


def _conf(url: str, **extra: Any) -> str:
    arguments = {
        "extender.urlPrefix": url,
        "extender.predicateVerb": "filter",
        "extender.prioritizeVerb": "prioritize",
        **extra,
    }
    body = "".join(f"      {key}: {json.dumps(value)}\n" for key, value in arguments.items())
    return (
        'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: predicates\n'
        f"  - name: nodeorder\n  - name: extender\n    arguments:\n{body}"
    )


def _state(pods: int = 1) -> ClusterObjects:
    return ClusterObjects(
        nodes=[make_node(f"n{i}").obj() for i in range(3)],
        pods=[make_pod(f"p{i}").req(cpu=1).obj() for i in range(pods)],
    )


async def _cycle(client: ExtenderClient, text: str, state: ClusterObjects) -> tuple[Any, Any]:
    core = default_core(("volcano",))
    conf = core.load_conf(text)
    plan = core.consult(state, conf, NOW)
    assert plan is not None
    answers = await client.ask(plan)
    outcome = core.run(state, conf, NOW, answers)
    await client.closed(plan)
    return answers, outcome


async def test_a_cycle_follows_the_extenders_filter_and_scores(
    extender: FakeExtender, client: ExtenderClient
) -> None:
    answers, outcome = await _cycle(client, _conf(extender.url), _state())
    assert answers.fits == {"uid-default-p0": {"n0": Refusal("n0 is draining", 2)}}
    # Scores over the nodes the filter passed, in node order: n1 10 x 0, n2 10 x 1.
    assert answers.scores == {"uid-default-p0": {"n1": 0.0, "n2": 10.0}}
    assert [(b.name, b.node) for b in outcome.result.binds] == [("p0", "n2")]
    filters = [body for verb, body in extender.calls if verb == "filter"]
    assert sorted(body["node"]["Name"] for body in filters) == ["n0", "n1", "n2"]
    assert {body["task"]["Pod"]["metadata"]["name"] for body in filters} == {"p0"}
    assert filters[0]["node"]["Node"]["metadata"]["name"] == filters[0]["node"]["Name"]
    (ranked,) = [body for verb, body in extender.calls if verb == "prioritize"]
    assert [node["Name"] for node in ranked["nodes"]] == ["n1", "n2"]
    assert ranked["task"]["Name"] == "p0"


async def test_session_open_and_close_are_sent_around_the_questions(
    extender: FakeExtender, client: ExtenderClient
) -> None:
    text = _conf(
        extender.url, **{"extender.onSessionOpenVerb": "open", "extender.onSessionCloseVerb": "close"}
    )
    await _cycle(client, text, _state())
    verbs = extender.verbs()
    assert verbs[0] == "open" and verbs[-1] == "close"
    assert set(extender.calls[0][1]) == {
        "Jobs",
        "Nodes",
        "Queues",
        "NamespaceInfo",
        "RevocableNodes",
        "NodeList",
    }
    assert extender.calls[-1][1] == {}


@pytest.mark.parametrize(
    ("ignorable", "asked", "node"),
    [
        pytest.param(False, ["open"], "n0", id="not-ignorable-asks-nothing-more-and-the-plugin-is-off"),
        pytest.param(
            True, ["open", "filter", "filter", "filter", "prioritize"], "n2", id="ignorable-goes-on"
        ),
    ],
)
async def test_a_failed_session_open(
    extender: FakeExtender, client: ExtenderClient, ignorable: bool, asked: list[str], node: str
) -> None:
    extender.handlers["open"] = lambda body: web.Response(status=503)
    text = _conf(extender.url, **{"extender.onSessionOpenVerb": "open", "extender.ignorable": ignorable})
    answers, outcome = await _cycle(client, text, _state())
    assert answers.opened == CallFailed(f"failed open with extender at URL {extender.url}/open, code 503")
    assert sorted(extender.verbs()) == sorted(asked)
    assert [b.node for b in outcome.result.binds] == [node]


@pytest.mark.parametrize(
    ("answer", "delay", "failure"),
    [
        pytest.param(
            lambda body: web.Response(status=500), 0.0, "failed filter with extender at URL", id="500"
        ),
        pytest.param(lambda body: web.Response(text="<html>"), 0.0, "the answer is not JSON", id="not-json"),
        pytest.param(_filter, 1.0, "no answer within 0.2s (extender.httpTimeout)", id="timeout"),
        pytest.param(
            lambda body: web.Response(body=b'{"status":"' + b"x" * (10 << 20) + b'"}'),
            0.0,
            "answer over 10485760 bytes",
            id="over-10MiB",
        ),
        pytest.param(lambda body: [], 0.0, "the predicate answer is not a JSON object", id="not-an-object"),
    ],
)
async def test_a_failed_predicate_call_fails_the_node_unless_ignorable(
    extender: FakeExtender, client: ExtenderClient, answer: Handler, delay: float, failure: str
) -> None:
    extender.handlers["filter"] = answer
    extender.delay = delay
    # A short timeout only where the wait is the point: a 10 MiB answer takes a while on a busy machine.
    timeout = "200ms" if delay else "20s"
    answers, outcome = await _cycle(
        client, _conf(extender.url, **{"extender.httpTimeout": timeout}), _state()
    )
    failed = answers.fits["uid-default-p0"]
    assert sorted(failed) == ["n0", "n1", "n2"]
    assert all(isinstance(f, CallFailed) and failure in f.message for f in failed.values()), failed
    assert not outcome.result.binds
    (warning,) = [w for w in outcome.warnings if w.reason == "FailedScheduling"]
    assert "3 nodes not checked: extender filter call failed" in warning.message


async def test_an_unreachable_extender_is_ignored_when_ignorable(client: ExtenderClient) -> None:
    text = _conf("http://127.0.0.1:9", **{"extender.ignorable": True, "extender.httpTimeout": "500ms"})
    answers, outcome = await _cycle(client, text, _state())
    assert all(isinstance(f, CallFailed) for f in answers.fits["uid-default-p0"].values())
    assert [b.node for b in outcome.result.binds] == ["n0"]


async def test_the_extenders_own_error_stops_the_pod_even_if_ignorable(
    extender: FakeExtender, client: ExtenderClient
) -> None:
    extender.handlers["prioritize"] = lambda body: {"nodeScore": None, "errorMessage": "scores stale"}
    answers, outcome = await _cycle(client, _conf(extender.url, **{"extender.ignorable": True}), _state())
    assert answers.scores == {"uid-default-p0": CallFailed("scores stale", answered=True)}
    assert not outcome.result.binds


async def test_job_enqueueable_and_queue_overused_are_asked_once_before_the_session(
    extender: FakeExtender, client: ExtenderClient
) -> None:
    extender.handlers["enqueueable"] = lambda body: {"status": -1 if body["job"]["Name"] == "held" else 1}
    extender.handlers["overused"] = lambda body: {"overused": body["queue"]["Name"] == "default"}
    text = _conf(
        extender.url,
        **{"extender.jobEnqueueableVerb": "enqueueable", "extender.queueOverusedVerb": "overused"},
    )
    state = ClusterObjects(
        nodes=[make_node("n0").obj()],
        pods=[make_pod("p0").req(cpu=1).obj()],
        podgroups=[make_pg(name, 1, phase="Pending").min_res(cpu=1).obj() for name in ("held", "let")],
    )
    answers, outcome = await _cycle(client, text, state)
    assert answers.enqueueable == {"default/held": -1, "default/let": 1}
    assert answers.overused == {"default": True}
    phases = {u.name: u.phase.value for u in outcome.result.podgroup_updates}
    assert (phases["held"], phases["let"]) == ("Pending", "Inqueue")
    assert not outcome.result.binds  # the extender says queue default is overused
    assert sorted(v for v in extender.verbs() if v in ("enqueueable", "overused")) == [
        "enqueueable",
        "enqueueable",
        "overused",
    ]
