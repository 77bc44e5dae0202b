"""Which status writes the binder sends: only real changes, with stable transition times, and new counts in
the same condition words at most once per retell window."""

import asyncio
import itertools
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.store import EventType
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.decisions import Condition, PodGroupUpdate, SessionResult
from volcano_py.scheduler.framework.podgroup_status import (
    allocated_patch,
    podgroup_status,
    same_podgroup_status,
)
from volcano_py.scheduler.framework.retell import FORMING_GANG_SECONDS, RETELL_SECONDS
from volcano_py.scheduler.runtime.binder import Binder
from volcano_py.scheduler.runtime.cache import SchedulerCache
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.status_writes import BINDS_FIRST_LIMIT, START_HOLD_LIMIT, START_HOLD_SECONDS

UNSCHEDULABLE = Condition("Unschedulable", "True", "NotEnoughResources", "3/4 tasks in gang unschedulable")


def update(
    *conditions: Condition, phase: PodGroupPhase = PodGroupPhase.INQUEUE, running: int = 0
) -> PodGroupUpdate:
    return PodGroupUpdate("ns", "pg", phase, conditions, running, 0, 0)


def test_first_status_gets_a_transition_time_and_counters() -> None:
    status = podgroup_status(update(UNSCHEDULABLE), None)
    assert status["phase"] == "Inqueue"
    [cond] = status["conditions"]
    assert cond["reason"] == "NotEnoughResources" and cond["message"].startswith("3/4")
    assert cond["lastTransitionTime"].endswith("Z")
    assert (status["running"], status["succeeded"], status["failed"]) == (0, 0, 0)


def test_unchanged_condition_keeps_its_transition_time() -> None:
    current = podgroup_status(update(UNSCHEDULABLE), None)
    current["conditions"][0]["lastTransitionTime"] = "2020-01-01T00:00:00Z"
    again = podgroup_status(update(UNSCHEDULABLE), current)
    assert again["conditions"][0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert same_podgroup_status(again, current)


def test_phase_counter_or_message_change_is_a_change() -> None:
    current = podgroup_status(update(UNSCHEDULABLE), None)
    assert not same_podgroup_status(podgroup_status(update(UNSCHEDULABLE, running=1), current), current)
    assert not same_podgroup_status(
        podgroup_status(update(UNSCHEDULABLE, phase=PodGroupPhase.RUNNING), current), current
    )
    other = Condition("Unschedulable", "True", "NotEnoughResources", "1/4 tasks in gang unschedulable")
    assert not same_podgroup_status(podgroup_status(update(other), current), current)


def test_missing_status_equals_a_fresh_pending_one() -> None:
    assert same_podgroup_status(None, {"phase": "Pending", "running": 0})


def test_queue_allocated_written_only_when_changed_and_removed_resources_nulled() -> None:
    current = {"allocated": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "8"}}
    assert allocated_patch(Resource.of(cpu="2000m", memory="4Gi", gpu=8), current) is None
    body = allocated_patch(Resource.of(cpu="3", memory="4Gi"), current)
    assert body == {"allocated": {"cpu": "3", "memory": "4Gi", "nvidia.com/gpu": None}}
    assert allocated_patch(Resource.of(cpu=1), None) == {"allocated": {"cpu": "1"}}


def test_queue_allocated_is_compared_with_the_write_on_its_way_and_its_resources_nulled_too() -> None:
    current = {"allocated": {"cpu": "2"}}
    on_its_way = Resource.of(cpu=3, gpu=1)
    assert allocated_patch(Resource.of(cpu=3, gpu=1), current, on_its_way) is None
    body = allocated_patch(Resource.of(cpu=2), current, on_its_way)
    assert body == {"allocated": {"cpu": "2", "nvidia.com/gpu": None}}


@pytest.fixture
async def binder() -> AsyncIterator[Binder]:
    # Nothing listens on the default host: each write fails at once and is logged, as a refused one would be.
    NOW[0] = 1000.0  # each test starts its clock afresh
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration(host="http://127.0.0.1:9")))
    cache = SchedulerCache(client)
    yield Binder(client, cache, EventRecorder(client), SchedulerMetrics(), clock=lambda: NOW[0])
    await client.close()


NOW = [1000.0]
# The API server's resourceVersions: each object the watch brings, and each write that lands, takes the next.
VERSIONS = itertools.count(1000)


def gang_waiting(valid: int) -> Condition:
    return Condition(
        "Unschedulable",
        "True",
        "NotEnoughPods",
        f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: 20",
    )


def watched(binder: Binder, status: dict[str, Any] | None) -> None:
    informer = binder.cache.informers["podgroups"]
    obj = {
        "metadata": {"name": "pg", "namespace": "ns", "uid": "pg-1", "resourceVersion": str(next(VERSIONS))},
        "spec": {"minMember": 1},
        "status": status,
    }
    informer._dispatch(informer.store.apply(EventType.ADDED, obj))


async def offered(binder: Binder, update: PodGroupUpdate) -> dict[str, Any] | None:
    """What the binder queues for one session's update, after writing it (refused, unless ``writes_land``)."""
    binder.submit(SessionResult(podgroup_updates=(update,)))
    queued = binder.statuses._pending_pg.get("ns/pg")
    await binder.flush_statuses()
    return queued


def writes_land(binder: Binder) -> None:
    """The API server takes the writes: a refused one told nothing, and is written again at once."""

    async def patch(path: str, body: Any, content_type: str | None = None) -> dict[str, Any]:
        return {"metadata": {"name": "pg", "namespace": "ns", "resourceVersion": str(next(VERSIONS))}}

    binder.client.patch = patch  # type: ignore[method-assign]


async def test_new_counts_in_the_same_condition_wait_for_the_retell_window(binder: Binder) -> None:
    writes_land(binder)
    watched(binder, None)
    first = await offered(binder, update(gang_waiting(3), phase=PodGroupPhase.PENDING))
    assert first is not None and "valid: 3" in first["conditions"][0]["message"]
    watched(binder, first)  # the watch shows the write
    NOW[0] += 1
    assert await offered(binder, update(gang_waiting(8), phase=PodGroupPhase.PENDING)) is None
    # Anything but the numbers is written at once: here the phase.
    inqueue = await offered(binder, update(gang_waiting(8), phase=PodGroupPhase.INQUEUE))
    assert inqueue is not None and inqueue["phase"] == "Inqueue"
    watched(binder, inqueue)
    NOW[0] += RETELL_SECONDS
    later = await offered(binder, update(gang_waiting(19), phase=PodGroupPhase.INQUEUE))
    assert later is not None and "valid: 19" in later["conditions"][0]["message"]


async def test_new_counts_wait_even_when_the_watch_has_not_shown_the_last_write(binder: Binder) -> None:
    writes_land(binder)
    watched(binder, {"phase": "Inqueue"})
    first = await offered(binder, update(UNSCHEDULABLE))
    assert first is not None
    # Under load the watch can lag by seconds: the cache still shows no condition, but it was told.
    NOW[0] += 1
    again = Condition("Unschedulable", "True", "NotEnoughResources", "1/4 tasks in gang unschedulable")
    assert await offered(binder, update(again)) is None
    NOW[0] += RETELL_SECONDS
    assert await offered(binder, update(again)) is not None


def short_of_pods(valid: int) -> Condition:
    return Condition(
        "Unschedulable",
        "True",
        "NotEnoughTasks",
        f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: 20",
    )


async def test_a_gang_short_of_pods_is_told_on_its_podgroup_only_once_it_stays_short(binder: Binder) -> None:
    watched(binder, {"phase": "Inqueue"})
    assert await offered(binder, update(short_of_pods(3))) is None
    NOW[0] += FORMING_GANG_SECONDS - 1
    assert await offered(binder, update(short_of_pods(12))) is None
    NOW[0] += 1
    told = await offered(binder, update(short_of_pods(12)))
    assert told is not None and told["conditions"][0]["reason"] == "NotEnoughTasks"


async def test_a_gang_that_completes_in_time_never_shows_it_was_short(binder: Binder) -> None:
    watched(binder, {"phase": "Inqueue"})
    assert await offered(binder, update(short_of_pods(3))) is None
    NOW[0] += 5
    scheduled = Condition("Scheduled", "True", "tasks in gang are ready to be scheduled", "")
    running = await offered(binder, update(scheduled, phase=PodGroupPhase.RUNNING))
    assert running is not None
    assert [(x["type"], x["status"]) for x in running["conditions"]] == [("Scheduled", "True")]
    # Short again later (a pod deleted): its Scheduled condition turning False is news, told at once.
    watched(binder, running)
    NOW[0] += 1
    unscheduled = Condition("Scheduled", "False", "tasks in gang are ready to be scheduled", "")
    lost = await offered(binder, update(unscheduled, short_of_pods(19), phase=PodGroupPhase.RUNNING))
    assert lost is not None
    assert sorted((x["type"], x["status"]) for x in lost["conditions"]) == [
        ("Scheduled", "False"),
        ("Unschedulable", "True"),
    ]


async def test_a_short_gang_whose_phase_changes_is_written_at_once_with_its_condition(binder: Binder) -> None:
    watched(binder, None)
    enqueued = await offered(binder, update(short_of_pods(3), phase=PodGroupPhase.INQUEUE))
    assert enqueued is not None and enqueued["phase"] == "Inqueue"
    assert enqueued["conditions"][0]["reason"] == "NotEnoughTasks"


async def test_a_status_on_its_way_shows_in_the_next_snapshot_until_its_write_is_refused(
    binder: Binder,
) -> None:
    # The next cycle must see the gang admitted (not admit it again) while the write is on its way.
    watched(binder, {"phase": "Pending"})
    binder.submit(SessionResult(podgroup_updates=(update(phase=PodGroupPhase.INQUEUE),)))
    (shown,) = binder.cache.snapshot().podgroups
    assert shown["status"]["phase"] == "Inqueue"
    assert binder.cache.podgroup("ns/pg")["status"] == {"phase": "Pending"}  # type: ignore[index]
    await binder.flush_statuses()  # refused here: no server
    (shown,) = binder.cache.snapshot().podgroups
    assert shown["status"] == {"phase": "Pending"}


async def test_running_waits_for_its_pods_to_start_so_one_write_says_both(binder: Binder) -> None:
    # Bound, not started: the status that counts the pod follows within a second or two and replaces it.
    watched(binder, {"phase": "Inqueue"})
    assert await offered(binder, update(phase=PodGroupPhase.RUNNING)) is not None
    assert binder.statuses._pending_pg["ns/pg"]["phase"] == "Running"  # held, not written
    (shown,) = binder.cache.snapshot().podgroups
    assert shown["status"]["phase"] == "Running"  # the next cycle sees it all the same
    started = await offered(binder, update(phase=PodGroupPhase.RUNNING, running=1))
    assert started is not None and started["running"] == 1
    assert "ns/pg" not in binder.statuses._pending_pg  # written at once


async def still_held_after(binder: Binder, seconds: float) -> bool:
    """Whether the PodGroup's status is still held back after ``seconds`` more and a flush."""
    NOW[0] += seconds
    await binder.flush_statuses()
    return "ns/pg" in binder.statuses._pending_pg


async def test_running_is_written_once_the_hold_is_over_even_if_the_pods_never_start(binder: Binder) -> None:
    watched(binder, {"phase": "Inqueue"})
    await offered(binder, update(phase=PodGroupPhase.RUNNING))
    assert await still_held_after(binder, START_HOLD_SECONDS - 1)
    assert not await still_held_after(binder, 2)


async def test_running_waits_while_the_gangs_binds_are_still_on_their_way(binder: Binder) -> None:
    # In a backlog a gang's binds wait their turn behind thousands of others: the hold counts from their
    # answers, not from the session that decided them.
    watched(binder, {"phase": "Inqueue"})
    binder.statuses._binding["ns/pg"] = 1  # one gang of it queued behind the bind slots
    await offered(binder, update(phase=PodGroupPhase.RUNNING))
    assert await still_held_after(binder, START_HOLD_SECONDS + 1)
    del binder.statuses._binding["ns/pg"]
    binder.statuses._answered_at["ns/pg"] = NOW[0]
    assert await still_held_after(binder, START_HOLD_SECONDS - 1)
    assert not await still_held_after(binder, 2)
    NOW[0] += START_HOLD_LIMIT  # the next test's clock starts past every hold


async def test_running_out_of_pending_is_written_at_once(binder: Binder) -> None:
    # Volcano's PodGroup is never Pending while its pods run (its e2e suite checks it the moment one runs):
    # the first step out of Pending is not held, whatever the counters say.
    watched(binder, {"phase": "Pending"})
    assert await offered(binder, update(phase=PodGroupPhase.RUNNING)) is not None
    assert "ns/pg" not in binder.statuses._pending_pg


async def test_a_full_bind_queue_goes_first_and_one_write_then_says_both_steps(binder: Binder) -> None:
    # A backlog: more binds wait than the binder sends at once (64 by default).
    watched(binder, {"phase": "Pending"})
    binder.binds.unanswered = 65
    await offered(binder, update(phase=PodGroupPhase.RUNNING))
    assert binder.statuses._pending_pg["ns/pg"]["phase"] == "Running"  # not written: the binds go first
    assert await still_held_after(binder, 30)
    # Its pod runs meanwhile: the status saying so replaces the one waiting.
    binder.submit(SessionResult(podgroup_updates=(update(phase=PodGroupPhase.RUNNING, running=1),)))
    assert binder.statuses._pending_pg["ns/pg"]["running"] == 1
    binder.binds.unanswered = 64  # the queue fits the bind slots again
    assert not await still_held_after(binder, 0)


async def test_a_bind_queue_that_stays_full_holds_a_status_back_only_so_long(binder: Binder) -> None:
    watched(binder, {"phase": "Pending"})
    binder.binds.unanswered = 10_000
    await offered(binder, update(phase=PodGroupPhase.INQUEUE))
    assert await still_held_after(binder, BINDS_FIRST_LIMIT - 1)
    assert not await still_held_after(binder, 2)


async def test_a_podgroup_leaving_pending_is_written_before_the_counts_of_running_ones(
    binder: Binder,
) -> None:
    # A restarted scheduler may have thousands of running gangs' counts to write; a Volcano Job's pods are
    # created only once its PodGroup is out of Pending, so that write takes the first slot.
    informer = binder.cache.informers["podgroups"]
    for i, phase in enumerate(["Running"] * 3 + ["Pending"]):
        obj = {
            "metadata": {"name": f"pg{i}", "namespace": "ns", "uid": f"u{i}", "resourceVersion": str(10 + i)},
            "status": {"phase": phase, "running": 0},
        }
        informer._dispatch(informer.store.apply(EventType.ADDED, obj))
    sent: list[str] = []

    async def write(key: str, status: dict[str, Any]) -> None:
        sent.append(key)

    binder.statuses._write_podgroup = write  # type: ignore[method-assign]
    updates = [PodGroupUpdate("ns", f"pg{i}", PodGroupPhase.RUNNING, (), 2, 0, 0) for i in range(3)]
    updates.append(PodGroupUpdate("ns", "pg3", PodGroupPhase.INQUEUE, (), 0, 0, 0))
    binder.submit(SessionResult(podgroup_updates=tuple(updates)))
    await binder.flush_statuses()
    assert sent == ["ns/pg3", "ns/pg0", "ns/pg1", "ns/pg2"]


def _podgroups(binder: Binder, phases: list[str]) -> None:
    informer = binder.cache.informers["podgroups"]
    for i, phase in enumerate(phases):
        obj = {
            "metadata": {"name": f"pg{i}", "namespace": "ns", "uid": f"u{i}", "resourceVersion": str(10 + i)},
            "status": {"phase": phase, "running": 0},
        }
        informer._dispatch(informer.store.apply(EventType.ADDED, obj))


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_podgroup_leaving_pending_later_waits_for_one_write_not_for_all_handed_over_before(
    binder: Binder,
) -> None:
    # A restarted scheduler had 10,000 running gangs to write Running for, still shown Pending (the scheduler
    # before it was killed before it wrote theirs; 45 s of writes on a busy API server); a new Volcano Job's
    # PodGroup admitted meanwhile waited for all of them, and so did its pods (bench_scale restart at 1,000
    # nodes / 30,000 pods: 24 s from PodGroup to pod). Its Inqueue goes next: no one waits for theirs.
    counts = 40
    _podgroups(binder, ["Pending"] * (counts + 1))
    answers: dict[str, asyncio.Future[None]] = {}

    async def write(key: str, status: dict[str, Any]) -> None:
        answers[key] = asyncio.get_running_loop().create_future()
        await answers[key]

    binder.statuses._write_podgroup = write  # type: ignore[method-assign]
    running = [PodGroupUpdate("ns", f"pg{i}", PodGroupPhase.RUNNING, (), 2, 0, 0) for i in range(counts)]
    binder.submit(SessionResult(podgroup_updates=tuple(running)))
    flushing = asyncio.create_task(binder.flush_statuses())
    await _settle()
    writers = len(answers)
    assert 0 < writers < counts  # as many as the writers; the rest wait for them
    leaving = PodGroupUpdate("ns", f"pg{counts}", PodGroupPhase.INQUEUE, (), 0, 0, 0)
    binder.submit(SessionResult(podgroup_updates=(leaving,)))
    binder.statuses._hand_over()
    answers["ns/pg0"].set_result(None)  # one write answers: its writer takes the next
    await _settle()
    assert list(answers)[writers] == f"ns/pg{counts}"
    while not flushing.done():
        for answer in answers.values():
            if not answer.done():
                answer.set_result(None)
        await _settle()
    assert sorted(answers) == sorted(f"ns/pg{i}" for i in range(counts + 1))


async def test_a_newer_status_waits_for_the_one_on_its_way_to_answer(binder: Binder) -> None:
    _podgroups(binder, ["Pending"])
    written: list[tuple[str, int]] = []
    answer = asyncio.Event()

    async def write(key: str, status: dict[str, Any]) -> None:
        binder.statuses._sent_pg[key] = status
        written.append((status["phase"], status["running"]))
        await answer.wait()
        binder.statuses._sent_pg.pop(key, None)

    binder.statuses._write_podgroup = write  # type: ignore[method-assign]
    inqueue = PodGroupUpdate("ns", "pg0", PodGroupPhase.INQUEUE, (), 0, 0, 0)
    binder.submit(SessionResult(podgroup_updates=(inqueue,)))
    flushing = asyncio.create_task(binder.flush_statuses())
    await _settle()
    running = PodGroupUpdate("ns", "pg0", PodGroupPhase.RUNNING, (), 1, 0, 0)
    binder.submit(SessionResult(podgroup_updates=(running,)))
    binder.statuses._hand_over()
    await _settle()
    assert written == [("Inqueue", 0)]  # not two writes of one PodGroup at once
    answer.set()
    await flushing
    await binder.flush_statuses()
    assert written == [("Inqueue", 0), ("Running", 1)]


async def test_a_status_handed_over_and_not_taken_yet_is_replaced_by_a_newer_one_not_written_twice(
    binder: Binder,
) -> None:
    _podgroups(binder, ["Pending", "Pending"])
    binder.statuses._writers = 1
    answers: list[asyncio.Future[None]] = []
    written: list[tuple[str, str]] = []

    async def write(key: str, status: dict[str, Any]) -> None:
        written.append((key, status["phase"]))
        answers.append(asyncio.get_running_loop().create_future())
        await answers[-1]

    binder.statuses._write_podgroup = write  # type: ignore[method-assign]
    first = PodGroupUpdate("ns", "pg0", PodGroupPhase.INQUEUE, (), 0, 0, 0)
    binder.submit(SessionResult(podgroup_updates=(first,)))
    flushing = asyncio.create_task(binder.flush_statuses())
    await _settle()
    # pg1 waits behind the one writer as Running, then the session says Inqueue (admitted) for it instead.
    binder.submit(
        SessionResult(podgroup_updates=(PodGroupUpdate("ns", "pg1", PodGroupPhase.RUNNING, (), 1, 0, 0),))
    )
    binder.statuses._hand_over()
    binder.submit(
        SessionResult(podgroup_updates=(PodGroupUpdate("ns", "pg1", PodGroupPhase.INQUEUE, (), 0, 0, 0),))
    )
    binder.statuses._hand_over()
    while not flushing.done():
        for answer in answers:
            if not answer.done():
                answer.set_result(None)
        await _settle()
    assert written == [("ns/pg0", "Inqueue"), ("ns/pg1", "Inqueue")]
