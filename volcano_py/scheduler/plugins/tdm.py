"""tdm (time-division multiplexing): revocable nodes lent to preemptable work during time windows.

A node labelled ``volcano.sh/revocable-zone: <zone>`` belongs to that zone; the plugin's argument
``tdm.revocable-zone.<zone>: "HH:MM-HH:MM"`` is the zone's window (UTC, on the session's clock; see
``tdm_rules``). As Volcano's:

- predicate: a revocable node takes a pod only while its zone's window is open, and only a pod with leave to
  use revocable nodes (annotation ``volcano.sh/revocable-zone: "*"``, or ``volcano.sh/preemptable: "true"``);
  a zone without a window takes none;
- node order: an open revocable node scores 100 for such a pod (it goes there before ordinary nodes);
- victim tasks (for ``shuffle``): once a zone's window has closed, its running preemptable pods, at most
  ``tdm.evict.period`` apart (default 1m; the first round at once), and per job at most what its disruption
  budget allows (one pod without one);
- preemptable: a preemptable pod, or one with revocable leave, preempts nothing; others may evict only
  preemptable pods on ordinary nodes, within each job's budget;
- job order: jobs whose PodGroup is not ``volcano.sh/preemptable`` first; job starving: a preemptable job
  never starves, another does while it has pending pods; job pipelined: as gang's (pipelined pods count).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

import numpy as np

from volcano_py.api import constants as k
from volcano_py.api.objects import annotations_of, metadata_of
from volcano_py.api.revocable import node_revocable_zone, podgroup_preemptable
from volcano_py.log import get_logger

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.extension import NodeVerdict, Victim, Vote
from ..framework.job import JobInfo
from ..framework.nodetable import BoolArray, FloatArray, IntArray
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo
from .tdm_rules import Window, max_evictions

log = get_logger(__name__)

NAME: Final = "tdm"
ZONE_PREFIX: Final = "tdm.revocable-zone."
EVICT_PERIOD: Final = "tdm.evict.period"
DEFAULT_EVICT_PERIOD: Final = timedelta(minutes=1)
# kube-scheduler's MaxNodeScore: what an open revocable node scores for a pod that may use it.
MAX_NODE_SCORE: Final = 100.0


class TdmPlugin:
    name = NAME

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({EVICT_PERIOD}, prefixes=(ZONE_PREFIX,))
        self.windows: dict[str, Window] = {}
        for key in arguments.values:
            if key.startswith(ZONE_PREFIX):
                zone = key[len(ZONE_PREFIX) :]
                if not zone:
                    raise ConfError(
                        f"{arguments.owner}: argument {key!r} names no zone; write {ZONE_PREFIX}<zone>"
                    )
                try:
                    self.windows[zone] = Window.parse(arguments.get_str(key, ""))
                except ValueError as err:
                    raise ConfError(f"{arguments.owner}: argument {key!r}: {err}") from None
        period = arguments.get_duration(EVICT_PERIOD, DEFAULT_EVICT_PERIOD) or DEFAULT_EVICT_PERIOD
        self.evict_period = period.total_seconds()
        self.zones: list[str] = []  # each node's zone, by row ("" for an ordinary node)
        self.open: dict[str, bool] = {}
        self.ssn: Session | None = None
        self._verdicts: dict[bool, NodeVerdict] = {}
        self._open_scores: FloatArray = np.zeros(0, dtype=np.float64)

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        moment = datetime.fromtimestamp(ssn.now_seconds, UTC)
        self.zones = [node_revocable_zone(n.labels) for n in ssn.nodes]
        self.open = {zone: window.open_at(moment) for zone, window in self.windows.items()}
        self._verdicts = {}
        in_open_zone = np.array([self.open.get(zone, False) for zone in self.zones], dtype=np.bool_)
        self._open_scores = np.where(in_open_zone, MAX_NODE_SCORE, 0.0)

    def on_session_close(self, ssn: Session) -> None:
        self.ssn = None
        self._verdicts = {}

    # --- placement ----------------------------------------------------------------------------------------

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return False

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        """The same two answers for every class: with revocable leave or without (computed once each)."""
        leave = bool(klass.revocable_zone)
        cached = self._verdicts.get(leave)
        if cached is not None:
            return cached
        zones = np.array(self.zones, dtype=object)
        ok: BoolArray = zones == ""
        failures: list[tuple[str, BoolArray]] = []
        for zone in sorted(set(self.zones) - {""}):
            here: BoolArray = zones == zone
            window = self.windows.get(zone)
            if window is None:
                failures.append((f"in revocable zone {zone}, which has no {ZONE_PREFIX}{zone} window", here))
            elif not self.open[zone]:
                failures.append((f"in revocable zone {zone} outside its window {window.text} (UTC)", here))
            elif not leave:
                failures.append((f"revocable (zone {zone}), and the pod is not {k.PREEMPTABLE_KEY}", here))
            else:
                ok = ok | here
        verdict = self._verdicts[leave] = NodeVerdict(ok, failures)
        return verdict

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        if not klass.revocable_zone:
            return np.zeros(len(rows), dtype=np.float64)
        scores: FloatArray = self._open_scores[rows]
        return scores

    # --- jobs ---------------------------------------------------------------------------------------------

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        return self.job_order_key(left) - self.job_order_key(right)

    def job_order_key(self, job: JobInfo) -> int:
        return 1 if _preemptable(job) else 0

    def job_pipelined(self, job: JobInfo) -> Vote:
        return Vote.PERMIT if job.is_pipelined() else Vote.REJECT

    def job_starving(self, job: JobInfo) -> bool:
        return not _preemptable(job) and bool(job.count(TaskStatus.PENDING))

    # --- victims ------------------------------------------------------------------------------------------

    def preemptable(self, preemptor: TaskInfo, preemptees: Sequence[TaskInfo]) -> list[TaskInfo] | None:
        if preemptor.preemptable or preemptor.revocable_zone:
            return []  # Volcano's tdm rejects: preemptable work preempts nothing
        assert self.ssn is not None
        ssn = self.ssn
        on_ordinary = [
            t
            for t in preemptees
            if t.preemptable
            and t.status is TaskStatus.RUNNING
            and t.node_name in ssn.table.node_index
            and not self.zones[ssn.node_of(t)]
        ]
        return self._within_budgets(ssn, on_ordinary)

    def victim_tasks(self, ssn: Session, candidates: Sequence[TaskInfo]) -> list[Victim]:
        now = ssn.now_seconds
        last = ssn.timers.get(NAME)
        if last is not None and last + self.evict_period > now:
            return []
        ssn.timers[NAME] = now
        closed = {zone for zone, is_open in self.open.items() if not is_open}
        if not closed:
            return []
        stranded = [
            t
            for t in candidates
            if t.preemptable
            and t.status is TaskStatus.RUNNING
            and t.node_name in ssn.table.node_index
            and self.zones[ssn.node_of(t)] in closed
        ]
        out = []
        for task in self._within_budgets(ssn, stranded):
            zone = self.zones[ssn.node_of(task)]
            out.append(
                Victim(
                    task, f"tdm: revocable zone {zone}'s window {self.windows[zone].text} (UTC) has closed"
                )
            )
        return out

    def _within_budgets(self, ssn: Session, tasks: Sequence[TaskInfo]) -> list[TaskInfo]:
        """The first pods of each job, as many as its disruption budget lets one round take."""
        by_job: dict[str, list[TaskInfo]] = {}
        for task in tasks:
            by_job.setdefault(task.job_id or task.uid, []).append(task)
        out: list[TaskInfo] = []
        for job_id, pods in by_job.items():
            job = ssn.jobs.get(job_id)
            if job is None:
                continue
            annotations = annotations_of(job.podgroup)
            cap = max_evictions(
                annotations,
                tasks=len(job.tasks),
                running=job.count(TaskStatus.RUNNING),
                finished=job.count(TaskStatus.SUCCEEDED, TaskStatus.FAILED),
            )
            out += pods[:cap]
        return out


def _preemptable(job: JobInfo) -> bool:
    return podgroup_preemptable(metadata_of(job.podgroup))
