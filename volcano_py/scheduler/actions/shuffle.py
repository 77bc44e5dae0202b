"""shuffle: evict the running pods that plugins name as victims (``rescheduling``, ``tdm``).

The candidates are every running pod of the session; the victims are what the plugins' ``victim_tasks``
name, by Volcano's rule (the first tier naming any decides, the union of its plugins). Volcano's shuffle
evicts them all; here they first pass the protections preempt and reclaim keep:

- a protected pod (``volcano.sh/preemptable: "false"``, kube-system, system-critical) is never evicted;
- the eviction guards may keep some (``pdb``: a budget's ``disruptionsAllowed``; ``cdp``: a pod in its
  cooldown);
- a gang is never broken: a job gives up at most its pods above ``minAvailable``, unless every pod it holds
  is named (and allowed), when it goes whole.

Each eviction goes through the statement like preempt's, so the runtime's binder carries it out alike (the
``DisruptionTarget`` condition, a uid-guarded delete, the ``pod_evictions{action="shuffle"}`` count) and the
pod's ``Evict`` Event says why, in the naming plugin's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.extension import Victim
from ..framework.session import Session
from ..framework.status import ALLOCATED_STATUSES, TaskStatus
from .victims import protected

log = get_logger(__name__)

SHUFFLE: Final = "shuffle"


def gang_safe(ssn: Session, named: Sequence[Victim]) -> list[Victim]:
    """Of ``named`` (in the plugins' order), those a gang survives: per job, the first ones down to its
    ``minAvailable``, or all of them when they are every pod the job holds."""
    by_job: dict[str, list[Victim]] = {}
    for victim in named:
        by_job.setdefault(victim.task.job_id or victim.task.uid, []).append(victim)
    keep: set[str] = set()
    for job_id, victims in by_job.items():
        job = ssn.jobs.get(job_id)
        if job is None:
            continue
        uids = {v.task.uid for v in victims}
        if all(t.uid in uids for t in job.tasks_in(*ALLOCATED_STATUSES)):
            keep |= uids
            continue
        spare = max(job.ready_task_num - job.min_available, 0)
        keep |= {v.task.uid for v in victims[:spare]}
    return [v for v in named if v.task.uid in keep]


class Shuffle:
    name = SHUFFLE

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()

    def execute(self, ssn: Session) -> None:
        candidates = [t for job in ssn.jobs.values() for t in job.tasks_in(TaskStatus.RUNNING)]
        named = [
            v
            for v in ssn.victim_tasks(candidates)
            if v.task.status is TaskStatus.RUNNING and v.task.node_name and not protected(v.task)
        ]
        if not named:
            return
        allowed = {t.uid for t in ssn.evictable([v.task for v in named])}
        chosen = gang_safe(ssn, [v for v in named if v.task.uid in allowed])
        if len(chosen) < len(named):
            log.info(
                "shuffle kept victims to protect gangs, budgets or cooldowns", kept=len(named) - len(chosen)
            )
        if not chosen:
            return
        with ssn.statement() as stmt:
            for victim in chosen:
                stmt.evict(victim.task, SHUFFLE, detail=victim.why)
            stmt.commit()
        log.info("shuffled", victims=[v.task.key for v in chosen])
