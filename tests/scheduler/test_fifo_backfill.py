"""EASY backfill in a ``spec.dequeueStrategy: fifo`` queue: a later job passes a head that cannot be placed
only if it cannot delay the head's estimated start, which the forecast's simulation gives (the head's shadow
time, and what each node has spare once the head has started). One session each, as data.

The cluster: two 8-GPU nodes; ``r`` runs 8 GPUs on n0 for 9 more minutes; the head of fifo queue ``q``
needs 2 x 8 GPUs, so it starts when ``r`` ends, taking every GPU; n1's 8 GPUs are free until then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import pytest

from tests.scheduler.builders import make_pg, make_pod, make_queue
from tests.scheduler.test_forecast import MODEL, NOW, Obj, cluster, job
from volcano_py.api import constants as k
from volcano_py.api.common import format_time
from volcano_py.forecast import backfill_shadow, forecast
from volcano_py.scheduler.core import (
    ClusterObjects,
    SchedulerConf,
    SessionResult,
    Shadow,
    build_snapshot,
    load_conf,
    run_session,
)
from volcano_py.scheduler.runtime.cycle import default_core

OURS = (k.SCHEDULER_NAME,)
HEAD_START = format_time(NOW + timedelta(minutes=9))  # r started a minute ago and runs 10m


def fifo(strategy: str = "fifo") -> Obj:
    return make_queue("q").dequeue(strategy).obj()


def blocked_head(
    *later: Callable[[], list[Obj]], strategy: str = "fifo", runner: str = "10m"
) -> ClusterObjects:
    running = job("r", 8, on="n0", started=-60, runtime=runner)
    head = job("head", 8, size=2, queue="q")
    return cluster(2, running, head, *(make() for make in later), queues=[fifo(strategy)])


def session(objects: ClusterObjects, *, shadows: bool = True) -> SessionResult:
    conf = load_conf(None)
    snapshot, _ = build_snapshot(objects, OURS)
    if shadows:
        snapshot.shadows = lambda head: backfill_shadow(objects, conf, NOW, head, OURS)
    return run_session(snapshot, conf, format_time(NOW))


def why(result: SessionResult, name: str) -> str:
    return result.explanations[f"default/{name}"].message


def scheduled(result: SessionResult, name: str) -> str:
    update = next(u for u in result.podgroup_updates if u.name == name)
    return next(c.message for c in update.conditions if c.type == k.PODGROUP_CONDITION_SCHEDULED)


@dataclass(frozen=True)
class Case:
    later: Callable[[], list[Obj]]  # built after the head, so it is younger (creation order)
    backfills: bool
    said: str  # in the Scheduled condition of a job that backfilled, else in its pending reason


CASES = [
    pytest.param(
        Case(lambda: job("short", 2, queue="q", runtime="5m"), True, "it ends by 2026-01-01T01:05:00Z"),
        id="short-declared-runtime-ends-before-the-shadow-backfills",
    ),
    pytest.param(
        Case(lambda: job("dl", 2, queue="q", deadline=300), True, "it ends by 2026-01-01T01:05:00Z"),
        id="active-deadline-seconds-counts-as-declared",
    ),
    pytest.param(
        Case(
            lambda: job("long", 2, queue="q", runtime="1h"), False, "it ends by 2026-01-01T02:00:00Z, after"
        ),
        id="long-job-is-held",
    ),
    pytest.param(
        Case(
            lambda: job("unknown", 2, queue="q"),
            False,
            "it declares no runtime (volcano-py.io/expected-runtime annotation or "
            "spec.activeDeadlineSeconds), so it may still run at default/head's estimated start",
        ),
        id="unknown-runtime-is-held-and-told-why",
    ),
    pytest.param(
        Case(
            lambda: job("cpu", 0, queue="q"),
            True,
            "it uses only what default/head leaves free at its estimated",
        ),
        id="job-using-only-what-the-head-leaves-free-backfills",
    ),
    pytest.param(
        Case(
            lambda: job("big", 8, size=2, queue="q", runtime="1m"),
            False,
            "waiting behind default/head, which",
        ),
        id="a-job-that-does-not-fit-now-is-held",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_a_later_job_backfills_only_if_it_cannot_delay_the_head(case: Case) -> None:
    objects = blocked_head(case.later)
    name = objects.podgroups[-1]["metadata"]["name"]
    result = session(objects)
    bound = {b.name for b in result.binds}
    assert not any(n.startswith("head") for n in bound)
    if case.backfills:
        assert bound == {f"{name}-0"}
        message = scheduled(result, name)
        assert f"backfilled behind default/head (estimated to start at {HEAD_START})" in message
        assert case.said in message, message
    else:
        assert bound == set()
        message = why(result, name)
        assert "dequeues in strict FIFO order (spec.dequeueStrategy: fifo)" in message
        assert case.said in message, message


def test_traverse_is_unchanged() -> None:
    result = session(
        blocked_head(
            lambda: job("short", 2, queue="q", runtime="5m"),
            lambda: job("long", 2, queue="q", runtime="1h"),
            lambda: job("x", 2, queue="q"),
            strategy="traverse",
        )
    )
    assert {b.name for b in result.binds} == {"short-0", "long-0", "x-0"}


def test_without_a_forecast_the_queue_is_held_strictly() -> None:
    result = session(blocked_head(lambda: job("short", 2, queue="q", runtime="5m")), shadows=False)
    assert not result.binds
    assert "none may backfill, its start is not known" in why(result, "short")


def test_a_head_whose_start_is_past_the_horizon_lets_none_pass() -> None:
    result = session(blocked_head(lambda: job("short", 2, queue="q", runtime="5m"), runner="48h"))
    assert not result.binds
    assert "none may backfill, its start is not known (no start within the horizon" in why(result, "short")


def test_the_backfilled_job_leaves_the_heads_estimated_start_where_it_was() -> None:
    objects = blocked_head(lambda: job("short", 2, queue="q", runtime="5m"))
    before = forecast(objects, load_conf(None), NOW, model=MODEL).etas["default/head"].start
    assert before is not None and format_time(before) == HEAD_START
    running = blocked_head(lambda: job("short", 2, on="n1", queue="q", runtime="5m"))
    after = forecast(running, load_conf(None), NOW, model=MODEL).etas["default/head"].start
    assert after == before


def test_the_shadow_is_the_heads_start_and_what_it_leaves_idle() -> None:
    objects = blocked_head(lambda: job("short", 2, queue="q", runtime="5m"))
    conf = load_conf(None)
    shadow = backfill_shadow(objects, conf, NOW, "default/head", OURS)
    assert shadow == backfill_shadow(objects, conf, NOW, "default/head", OURS)  # deterministic
    assert shadow.start == (NOW + timedelta(minutes=9)).timestamp()
    # The head takes every GPU at its start; of each node's 64 CPUs it takes one. The later job's share of
    # that moment counts as spare: it is the one that might backfill instead.
    assert {n: (s.amount("nvidia.com/gpu"), s.amount("cpu")) for n, s in shadow.spare.items()} == {
        "n0": (0, 63_000),
        "n1": (0, 63_000),
    }


def test_the_runtime_asks_the_forecast_only_for_a_blocked_head_once_per_cluster_state() -> None:
    calls: list[str] = []

    def counting(
        objects: ClusterObjects, conf: SchedulerConf, now: datetime, head: str, names: tuple[str, ...]
    ) -> Shadow:
        calls.append(head)
        return backfill_shadow(objects, conf, now, head, names)

    core = default_core(OURS, head_shadow=counting)
    conf = core.load_conf(None)
    objects = replace(blocked_head(lambda: job("short", 2, queue="q", runtime="5m")), generation=7)
    assert {b.name for b in core.run(objects, conf, NOW).result.binds} == {"short-0"}
    core.run(objects, conf, NOW)
    assert calls == ["default/head"]
    core.run(replace(objects, generation=8), conf, NOW)
    assert calls == ["default/head", "default/head"]
    nothing_blocked = replace(cluster(2, job("r", 8, on="n0", runtime="10m"), queues=[fifo()]), generation=9)
    core.run(nothing_blocked, conf, NOW)
    assert len(calls) == 2


def test_a_backfilled_job_keeps_saying_so_while_it_runs() -> None:
    first = session(blocked_head(lambda: job("short", 2, queue="q", runtime="5m")))
    said = scheduled(first, "short")
    objects = blocked_head(lambda: job("short", 2, on="n1", queue="q", runtime="5m"))
    short = objects.podgroups[-1]
    short["status"] = {
        "phase": "Running",
        "running": 1,
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
            for u in first.podgroup_updates
            if u.name == "short"
            for c in u.conditions
        ],
    }
    later = session(objects)
    update = next((u for u in later.podgroup_updates if u.name == "short"), None)
    assert update is None or scheduled(later, "short") == said


def cpu_job(name: str, cpus: int, gpus: int = 0) -> list[Obj]:
    """One pod of ``cpus`` CPUs (and ``gpus`` GPUs) in queue ``q``, declaring no runtime."""
    pod = make_pod(f"{name}-0").req(cpu=cpus, gpu=gpus or None).group(name).obj()
    return [make_pg(name, min_member=1, phase="Inqueue").queue("q").obj(), pod]


def test_what_a_job_takes_of_the_spare_is_no_longer_there_for_the_next() -> None:
    """One node: the head (8 GPUs, 40 CPUs) waits for r's GPUs and leaves 24 CPUs spare at its start. The
    first 20-CPU job takes 20 of them; the second, which fits now as well, finds 4 and is held."""
    running = job("r", 8, on="n0", started=-60, runtime="10m")
    head = cpu_job("head", 40, gpus=8)
    objects = cluster(1, running, head, cpu_job("a", 20), cpu_job("b", 20), queues=[fifo()])
    result = session(objects)
    assert {b.name for b in result.binds} == {"a-0"}
    assert "it uses only what default/head leaves free at its estimated start" in scheduled(result, "a")
    assert "it declares no runtime" in why(result, "b")


def test_a_failing_forecast_costs_only_the_backfill() -> None:
    def failing(
        objects: ClusterObjects, conf: SchedulerConf, now: datetime, head: str, names: tuple[str, ...]
    ) -> Shadow:
        raise RuntimeError("boom")

    core = default_core(OURS, head_shadow=failing)
    objects = blocked_head(lambda: job("short", 2, queue="q", runtime="5m"))
    result = core.run(objects, core.load_conf(None), NOW).result
    assert not result.binds
    assert "none may backfill, its start is not known (the forecast failed: boom)" in why(result, "short")


def test_a_running_job_growing_past_its_minimum_takes_only_the_spare() -> None:
    def elastic() -> list[Obj]:
        group = make_pg("elastic", min_member=1, phase="Running").queue("q").obj()
        running = make_pod("elastic-0").req(cpu=1, gpu=2).group("elastic").running("n1").obj()
        running["status"]["startTime"] = format_time(NOW)
        running["metadata"]["annotations"][k.EXPECTED_RUNTIME_KEY] = "1m"
        more = make_pod("elastic-1").req(cpu=1, gpu=2).group("elastic").obj()
        more["metadata"]["annotations"][k.EXPECTED_RUNTIME_KEY] = "1m"
        return [group, running, more]

    result = session(blocked_head(elastic))
    assert not result.binds
    assert "it is running already, so its new pods could still run at" in why(result, "elastic")
