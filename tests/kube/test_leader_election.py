import asyncio
from datetime import UTC, datetime

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.client import KubeClient
from volcano_py.kube.leader import (
    ElectionState,
    LeaderElector,
    LeaseRecord,
    LeaseTiming,
    fence_holds,
    format_micro_time,
    through_fence,
)
from volcano_py.kube.waiting import within

T0 = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def other(holder: str = "b", duration: int = 10, renew: str = "r1", transitions: int = 3) -> LeaseRecord:
    return LeaseRecord(holder, duration, "a0", renew, transitions)


def test_micro_time_format() -> None:
    assert format_micro_time(T0) == "2026-01-02T03:04:05.678901Z"


def test_free_or_own_lease_can_be_taken_at_once() -> None:
    state = ElectionState("a", 10)
    assert state.can_take(now=0.0)  # nothing observed: no lease yet
    state.observe(other(holder=""), now=0.0)
    assert state.can_take(now=0.0)
    state.observe(other(holder="a"), now=1.0)
    assert state.can_take(now=1.0)


def test_live_lease_of_another_expires_by_our_own_clock() -> None:
    state = ElectionState("a", 10)
    state.observe(other(duration=10), now=100.0)
    assert not state.can_take(now=109.9)
    assert state.can_take(now=110.0)


def test_a_renewal_restarts_the_expiry() -> None:
    state = ElectionState("a", 10)
    state.observe(other(renew="r1"), now=100.0)
    state.observe(other(renew="r1"), now=108.0)  # unchanged: still counted from 100
    assert state.can_take(now=110.0)
    state.observe(other(renew="r2"), now=110.0)  # the holder renewed
    assert not state.can_take(now=115.0)


def test_claim_counts_transitions_and_keeps_acquire_time_on_renewal() -> None:
    state = ElectionState("a", 15)
    state.observe(other(holder="b", transitions=3), now=0.0)
    taken = state.claim(T0)
    assert (taken.holder, taken.transitions, taken.duration_seconds) == ("a", 4, 15)
    assert taken.acquire_time == taken.renew_time == "2026-01-02T03:04:05.678901Z"
    state.observe(taken, now=1.0)
    renewed = state.claim(datetime(2026, 1, 2, 3, 4, 9, tzinfo=UTC))
    assert renewed.acquire_time == taken.acquire_time
    assert renewed.renew_time == "2026-01-02T03:04:09.000000Z"
    assert renewed.transitions == 4


def test_lease_round_trips_through_its_spec() -> None:
    record = other()
    assert LeaseRecord.from_lease({"spec": record.to_spec()}) == record
    assert LeaseRecord.from_lease({}) == LeaseRecord("", 0, "", "", 0)


@pytest.mark.parametrize(
    ("is_leader", "renewed_at", "now", "holds"),
    [
        pytest.param(True, 100.0, 100.0, True, id="just-renewed"),
        pytest.param(True, 100.0, 107.9, True, id="within-the-deadline"),
        pytest.param(True, 100.0, 108.0, False, id="at-the-deadline"),
        pytest.param(True, 100.0, 130.0, False, id="woke-from-a-freeze"),
        pytest.param(False, 100.0, 100.5, False, id="stepped-down"),
        pytest.param(True, None, 0.0, False, id="never-renewed"),
    ],
)
def test_the_fence_lets_a_leader_write_only_within_the_renew_deadline_of_its_last_renewal(
    is_leader: bool, renewed_at: float | None, now: float, holds: bool
) -> None:
    assert fence_holds(is_leader=is_leader, renewed_at=renewed_at, renew_deadline=8.0, now=now) is holds


@pytest.mark.parametrize(
    ("lease", "renew", "retry"), [(10, 10.0, 2.0), (10, 8.0, 8.0), (10, 12.0, 2.0), (10, 8.0, 0.0)]
)
def test_lease_timing_must_be_ordered(lease: int, renew: float, retry: float) -> None:
    with pytest.raises(ValueError, match="--leader-elect-retry-period < --leader-elect-renew-deadline"):
        LeaseTiming(lease, renew, retry)


def elector_at(now: list[float]) -> LeaderElector:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration(host="http://127.0.0.1:9")))
    elector = LeaderElector(
        client,
        namespace="ns",
        name="lease",
        identity="a",
        timing=LeaseTiming(3, 2.0, 1.0),
        clock=lambda: now[0],
    )
    elector.is_leader, elector.renewed_at = True, 0.0
    return elector


async def test_a_leader_that_finds_the_fence_failed_drops_the_write_and_steps_down_at_once() -> None:
    now = [1.9]
    elector = elector_at(now)
    assert elector.may_write("bind ns/p0")
    hold = asyncio.create_task(elector.hold())
    await asyncio.sleep(0)
    now[0] = 30.0  # the process was stopped for half a minute
    assert not elector.may_write("bind ns/p1")
    assert not elector.may_write("bind ns/p2")
    # hold() returns without waiting for its next round (the retry period is 1s of real time).
    await within(hold, 0.5)
    assert not elector.is_leader
    assert elector.fenced_writes == 2
    await elector.client.close()


def test_a_write_through_the_fence_is_stamped_when_it_was_asked_and_when_let_through() -> None:
    asked: list[str] = []

    def fence(what: str) -> bool:
        asked.append(what)
        return what != "bind ns/late"

    stamp = through_fence(fence, "bind ns/p0")
    assert stamp is not None and stamp.checked <= stamp.sent
    assert set(stamp.fields()) == {"checked", "sent"}
    assert through_fence(fence, "bind ns/late") is None
    assert asked == ["bind ns/p0", "bind ns/late"]
