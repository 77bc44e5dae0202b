"""Volcano's HTTP scheduler-extender contract: the plugin's argument names and the numbers on the wire.

An extender is a web service Volcano's ``extender`` plugin POSTs JSON to, one URL per verb
(``<extender.urlPrefix>/<verb>``). Its request bodies carry Volcano's scheduler records under Go's own field
names (``TaskInfo.Status`` as a bit, ``Resource.ScalarResources`` in milli-units), and its predicate answer
carries a status code; both are Volcano's numbers, kept here once.
"""

from __future__ import annotations

import enum
from typing import Final

from .scheduling import TaskStatus

URL_PREFIX: Final = "extender.urlPrefix"
HTTP_TIMEOUT: Final = "extender.httpTimeout"
ON_SESSION_OPEN_VERB: Final = "extender.onSessionOpenVerb"
ON_SESSION_CLOSE_VERB: Final = "extender.onSessionCloseVerb"
PREDICATE_VERB: Final = "extender.predicateVerb"
PRIORITIZE_VERB: Final = "extender.prioritizeVerb"
PREEMPTABLE_VERB: Final = "extender.preemptableVerb"
RECLAIMABLE_VERB: Final = "extender.reclaimableVerb"
QUEUE_OVERUSED_VERB: Final = "extender.queueOverusedVerb"
JOB_ENQUEUEABLE_VERB: Final = "extender.jobEnqueueableVerb"
JOB_ENQUEUED_VERB: Final = "extender.jobEnqueuedVerb"
JOB_READY_VERB: Final = "extender.jobReadyVerb"
ALLOCATE_FUNC_VERB: Final = "extender.allocateFuncVerb"
DEALLOCATE_FUNC_VERB: Final = "extender.deallocateFuncVerb"
IGNORABLE: Final = "extender.ignorable"
MANAGED_RESOURCES: Final = "extender.managedResources"

# Volcano's default for extender.httpTimeout.
DEFAULT_HTTP_TIMEOUT_SECONDS: Final = 1.0
# The largest answer Volcano reads from an extender (10 MiB); a longer one is an error.
MAX_RESPONSE_BYTES: Final = 10 << 20


class FitCode(enum.IntEnum):
    """The ``code`` of a predicate answer (Volcano's ``api.Status`` codes)."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


# Volcano's TaskStatus is a bit flag, and a TaskInfo's ``Status`` goes on the wire as that number.
TASK_STATUS_BITS: Final[dict[TaskStatus, int]] = {
    TaskStatus.PENDING: 1 << 0,
    TaskStatus.ALLOCATED: 1 << 1,
    TaskStatus.PIPELINED: 1 << 2,
    TaskStatus.BINDING: 1 << 3,
    TaskStatus.BOUND: 1 << 4,
    TaskStatus.RUNNING: 1 << 5,
    TaskStatus.RELEASING: 1 << 6,
    TaskStatus.SUCCEEDED: 1 << 7,
    TaskStatus.FAILED: 1 << 8,
    TaskStatus.UNKNOWN: 1 << 9,
}

# A NodeInfo's ``State.Phase``: Ready 1, NotReady 2.
NODE_PHASE_READY: Final = 1
NODE_PHASE_NOT_READY: Final = 2
