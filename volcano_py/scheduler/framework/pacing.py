"""When the next scheduling cycle starts.

Volcano runs a session every ``--schedule-period``. Here the period is the longest wait, not the only one:
a Job's pods are created in one burst, and a gang can only be placed once its last pod exists. So once new
pending pods have stopped arriving for ``burst_quiet`` seconds, the next cycle starts without waiting for
the rest of the period. In a steady stream of pods there is no such pause; there the arrival of a gang's
last pod (the pods of its PodGroup reach its ``minMember``; a pod joining a running gang, or a one-pod
group, is whole at once) starts the next cycle without waiting for a pause.

An early cycle is never closer to the last one than that cycle's CPU time divided by
``EARLY_CPU_SHARE``: on a small machine every CPU-second the scheduler spends is taken from the API
server, and a trickle of pods must not turn a one-per-period cost into a many-per-period one.

Nor does a cycle start early while the binds already decided are backed up (more waiting than
``BACKLOG_PIPELINES`` times the binds allowed in flight): the binds of an early cycle would only queue
behind them, so it would cost a session and bind nothing sooner. For the same reason the period itself
stretches to ``BACKLOG_PERIOD_SECONDS`` while they are: a backlog of 50,000 binds drains for minutes, and a
session a second over it took the GIL from the event loop that sends them. The wait is re-checked every
``BACKLOG_POLL_SECONDS``, so the next cycle starts once the backlog has drained below that. With early
starts off (``burst_quiet`` 0, Volcano's fixed period) the period never stretches.

And when the last cycle left nothing waiting (no pending pod or PodGroup of ours, no pod without its
PodGroup) and nothing has come since that could wait (a new pending pod, a new PodGroup, a bind that
failed), a session while the binds are backed up can only re-read the binds already decided as the watch
brings them back: the next cycle waits for the backlog to drain, ``BACKLOG_HOLD_SECONDS`` at most. A
backlog of 50,000 one-pod jobs placed by one session then costs one more session after its binds, not one
every few seconds while they go out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# The most of one core that cycles started early may take, measured by the CPU of the cycle before.
EARLY_CPU_SHARE: Final = 0.25
# The default ``--burst-quiet``: a pause in pod creates this long ends a burst.
BURST_QUIET_SECONDS: Final = 0.1
# Binds waiting for an answer, in pipelines of ``--bind-concurrency``, that hold back an early start.
BACKLOG_PIPELINES: Final = 2
# The longest wait between cycles while binds are backed up, and how often the backlog is looked at then.
BACKLOG_PERIOD_SECONDS: Final = 5.0
BACKLOG_POLL_SECONDS: Final = 0.1
# The longest wait between cycles while binds are backed up and nothing waits (see above).
BACKLOG_HOLD_SECONDS: Final = 60.0


@dataclass(frozen=True, slots=True)
class Pacing:
    period: float
    # Seconds without a new pending pod that end a burst; 0 waits out every period, as Volcano does.
    burst_quiet: float = BURST_QUIET_SECONDS

    def __post_init__(self) -> None:
        if self.period <= 0:
            raise ValueError(f"--schedule-period must be > 0 seconds, got {self.period}")
        if self.burst_quiet < 0:
            raise ValueError(
                f"--burst-quiet must be >= 0 seconds (0 turns early cycles off), got {self.burst_quiet}"
            )

    def next_start(
        self,
        began: float,
        cycle_cpu: float,
        last_arrival: float,
        *,
        last_whole: float = float("-inf"),
        backlogged: bool = False,
        settled: bool = False,
    ) -> float:
        """The time the cycle after the one that began at ``began`` (and spent ``cycle_cpu``) should start.

        ``last_arrival`` is when the newest pending pod was seen, ``last_whole`` when the newest one that
        made its gang whole was; one seen before ``began`` was in that cycle's snapshot already and starts
        nothing. ``backlogged``: the binds sent are backed up (see ``backlogged``), so no early start for
        now, and the period stretched. ``settled``: that cycle left nothing waiting, and nothing that could
        wait has come since it began (``last_arrival`` included): then, backed up, it is held.
        """
        stretched = backlogged and self.burst_quiet > 0
        if stretched and settled and not self.early_pending(began, last_arrival):
            return began + max(self.period, BACKLOG_HOLD_SECONDS)
        regular = began + (max(self.period, BACKLOG_PERIOD_SECONDS) if stretched else self.period)
        if backlogged or not self.early_pending(began, last_arrival):
            return regular
        due = last_arrival + self.burst_quiet
        if last_whole > began:
            due = min(due, last_whole)
        return min(regular, max(due, began + cycle_cpu / EARLY_CPU_SHARE))

    def early_pending(self, began: float, last_arrival: float) -> bool:
        """Whether pods arrived since ``began``, so an early start is due."""
        return self.burst_quiet > 0 and last_arrival > began


def backlogged(binds_unanswered: int, bind_concurrency: int) -> bool:
    """Whether so many binds wait for an answer that an early cycle's binds would only queue behind them."""
    return binds_unanswered > BACKLOG_PIPELINES * bind_concurrency
