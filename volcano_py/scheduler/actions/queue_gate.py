"""Queue admission through Volcano's queue-allocation scheduling gate (``SchedulingGatesQueueAdmission``).

A pod that opted in (annotation ``scheduling.volcano.sh/queue-allocation-gate: "true"``) is created holding
the gate of that name. When allocate reaches its job and the pod's queue would take it (``allocatable``), the
session decides to remove the gate; the pod is placed like any other in a later session, once the API server
shows it ungated. A pod with other gates too waits, untouched, until only ours is left: whoever set them has
not let it go yet. A pod holding our gate without the annotation is never ungated (nothing says it wants
queue admission), as in Volcano, which warns of it.
"""

from __future__ import annotations

from volcano_py.api import constants as k
from volcano_py.api.queue_gate import only_queue_gate, opted_in
from volcano_py.log import get_logger

from ..framework.job import JobInfo
from ..framework.node import QueueInfo
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo

log = get_logger(__name__)


def awaiting_admission(job: JobInfo) -> list[TaskInfo]:
    """The job's pending pods held by nothing but our gate, with requests (best-effort pods take no room)."""
    if not job.gated_task_num:
        return []
    return [
        t
        for t in job.tasks_in(TaskStatus.PENDING)
        if t.gated and not t.best_effort and only_queue_gate(t.pod)
    ]


def admit_gated(ssn: Session, queue: QueueInfo, job: JobInfo) -> None:
    """Ungate, in task order, each of the job's waiting pods the queue takes now; each one admitted holds its
    room in the quota plugins that keep track (``GateAdmitted``), so the next one is judged after it."""
    for task in ssn.sorted_tasks(awaiting_admission(job)):
        if task.uid in ssn.ungates:
            continue
        if not opted_in(task.pod):
            log.warning(
                "pod holds the queue-allocation gate without opting in; the gate is not removed",
                pod=task.key,
                annotation=f'{k.QUEUE_ALLOCATION_GATE_KEY}: "true"',
            )
            continue
        if ssn.allocatable(queue, task):
            ssn.admit_gated(task)
