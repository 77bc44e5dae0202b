"""When the next cycle starts: the period at the latest, earlier once a burst of new pods is over."""

import pytest

from volcano_py.scheduler.framework.pacing import (
    BACKLOG_HOLD_SECONDS,
    BACKLOG_PERIOD_SECONDS,
    BACKLOG_PIPELINES,
    EARLY_CPU_SHARE,
    Pacing,
    backlogged,
)

NO_ARRIVAL = float("-inf")


@pytest.mark.parametrize(
    ("burst_quiet", "cycle_cpu", "last_arrival", "expected", "why"),
    [
        (0.1, 0.01, NO_ARRIVAL, 101.0, "nothing arrived: the full period"),
        (0.1, 0.01, 99.5, 101.0, "arrived before the cycle began: it was in that cycle"),
        (0.1, 0.01, 100.3, 100.4, "a burst ended at 100.3: start 0.1 s later"),
        (0.1, 0.01, 100.95, 101.0, "a burst that ends late never delays the regular start"),
        (0.0, 0.01, 100.3, 101.0, "0 turns early starts off, as Volcano's fixed period"),
        (0.1, 0.2, 100.3, 100.0 + 0.2 / EARLY_CPU_SHARE, "an expensive cycle spaces the early one out"),
        (0.1, 0.5, 100.3, 101.0, "so expensive that the early start would be past the period"),
    ],
)
def test_next_start(
    burst_quiet: float, cycle_cpu: float, last_arrival: float, expected: float, why: str
) -> None:
    pacing = Pacing(period=1.0, burst_quiet=burst_quiet)
    assert pacing.next_start(100.0, cycle_cpu, last_arrival) == pytest.approx(expected), why


PACING = Pacing(period=1.0)

WHOLE_CASES = [
    # (cycle CPU, last arrival, last whole, expected start, why)
    (0.01, 100.5, 100.5, 100.5, "a gang whole in a steady stream starts at once, with no pause to wait for"),
    (0.01, 100.5, 100.3, 100.3, "more pods after a whole gang do not put its start off"),
    (0.2, 100.5, 100.5, 100.8, "still no closer than the cycle's CPU allows"),
    (0.01, 100.5, 99.0, 100.6, "a gang whole before the cycle began was in it: only the pause counts"),
]


@pytest.mark.parametrize(("cycle_cpu", "last_arrival", "last_whole", "expected", "why"), WHOLE_CASES)
def test_a_whole_gang_starts_the_next_cycle_without_a_pause(
    cycle_cpu: float, last_arrival: float, last_whole: float, expected: float, why: str
) -> None:
    start = PACING.next_start(100.0, cycle_cpu, last_arrival, last_whole=last_whole)
    assert start == pytest.approx(expected), why


def test_a_whole_gang_starts_nothing_early_with_early_starts_off_or_binds_backed_up() -> None:
    fixed = Pacing(period=1.0, burst_quiet=0)
    assert fixed.next_start(100.0, 0.01, 100.5, last_whole=100.5) == pytest.approx(101.0)
    assert PACING.next_start(100.0, 0.01, 100.5, last_whole=100.5, backlogged=True) == pytest.approx(
        100 + BACKLOG_PERIOD_SECONDS
    )


def test_a_pending_early_start_is_known_once_pods_arrived_after_the_cycle_began() -> None:
    pacing = Pacing(period=1.0)
    assert not pacing.early_pending(100.0, 99.0)
    assert pacing.early_pending(100.0, 100.2)
    assert not Pacing(period=1.0, burst_quiet=0).early_pending(100.0, 100.2)


@pytest.mark.parametrize(
    ("period", "quiet", "message"),
    [(0, 0.1, "--schedule-period must be > 0"), (1, -0.5, "--burst-quiet must be >= 0")],
)
def test_bad_settings_name_the_flag(period: float, quiet: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Pacing(period, quiet)


def test_binds_backed_up_hold_the_next_start_for_the_stretched_period() -> None:
    pacing = Pacing(period=1.0)
    assert pacing.next_start(100.0, 0.01, 100.3, backlogged=True) == pytest.approx(
        100 + BACKLOG_PERIOD_SECONDS
    )
    assert pacing.next_start(100.0, 0.01, NO_ARRIVAL, backlogged=True) == pytest.approx(
        100 + BACKLOG_PERIOD_SECONDS
    )
    assert pacing.next_start(100.0, 0.01, 100.3, backlogged=False) == pytest.approx(100.4)
    # A period longer than the stretch is kept; Volcano's fixed period (no early starts) never stretches.
    assert Pacing(period=8.0).next_start(100.0, 0.01, NO_ARRIVAL, backlogged=True) == pytest.approx(108.0)
    fixed = Pacing(period=1.0, burst_quiet=0)
    assert fixed.next_start(100.0, 0.01, NO_ARRIVAL, backlogged=True) == pytest.approx(101.0)


@pytest.mark.parametrize(
    ("unanswered", "held"),
    [(0, False), (64, False), (BACKLOG_PIPELINES * 64, False), (BACKLOG_PIPELINES * 64 + 1, True)],
)
def test_a_backlog_is_more_binds_waiting_than_the_pipelines_hold(unanswered: int, held: bool) -> None:
    assert backlogged(unanswered, bind_concurrency=64) is held


def test_a_cycle_that_left_nothing_waiting_holds_the_next_one_while_the_binds_are_backed_up() -> None:
    pacing = Pacing(period=1.0)
    held = pacing.next_start(100.0, 0.01, NO_ARRIVAL, backlogged=True, settled=True)
    assert held == pytest.approx(100 + BACKLOG_HOLD_SECONDS)
    # A pod that came since may be placed: the stretched period, as when something waits.
    assert pacing.next_start(100.0, 0.01, 100.3, backlogged=True, settled=True) == pytest.approx(
        100 + BACKLOG_PERIOD_SECONDS
    )
    assert pacing.next_start(100.0, 0.01, NO_ARRIVAL, backlogged=True, settled=False) == pytest.approx(
        100 + BACKLOG_PERIOD_SECONDS
    )
    # The backlog drained: the regular period, already due when the hold was long.
    assert pacing.next_start(100.0, 0.01, NO_ARRIVAL, backlogged=False, settled=True) == pytest.approx(101.0)
    # Volcano's fixed period (no early starts) is never held.
    fixed = Pacing(period=1.0, burst_quiet=0)
    assert fixed.next_start(100.0, 0.01, NO_ARRIVAL, backlogged=True, settled=True) == pytest.approx(101.0)
