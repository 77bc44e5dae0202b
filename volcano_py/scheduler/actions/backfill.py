"""backfill: place best-effort pods (no requests at all) of admitted jobs on any node that passes the
predicates; they take no resources, so they never wait for a gang or for the queue's share."""

from __future__ import annotations

import numpy as np

from volcano_py.api.scheduling import PodGroupPhase

from ..framework.arguments import Arguments
from ..framework.explain import node_reasons
from ..framework.session import Session
from ..framework.status import TaskStatus


class Backfill:
    name = "backfill"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()

    def execute(self, ssn: Session) -> None:
        # Only jobs with pending pods can have work here; most jobs of a busy cluster are running.
        waiting = [j for j in ssn.waiting_jobs() if j.count(TaskStatus.PENDING)]
        for job in sorted(waiting, key=lambda j: (j.created, j.uid)):
            if ssn.enqueue_enabled and job.phase is PodGroupPhase.PENDING:
                continue
            tasks = [t for t in job.pending_tasks if t.best_effort]
            for task in ssn.sorted_tasks(tasks):
                klass = ssn.task_class(task)
                verdict = ssn.predicate(klass)
                table = ssn.table
                rows = np.flatnonzero(verdict.ok & table.fits(klass.vec, table.room_now))
                if rows.size == 0:
                    ssn.fit_failures_of(job).add(1, node_reasons(ssn, klass))
                    continue
                row = int(rows[int(np.argmax(ssn.node_scores(klass, rows)))])
                with ssn.statement() as stmt:
                    stmt.allocate(task, row)
                    stmt.commit()
