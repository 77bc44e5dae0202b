from datetime import UTC, datetime

from volcano_py.kube.leader import ElectionState, LeaseRecord, format_micro_time

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
