"""``bus.volcano.sh/v1alpha1``: the events and actions of Volcano's lifecycle policies, and the Command kind.

Events and actions live here, not in ``batch``, because Volcano defines them in its bus package: a Command
(``vcctl job suspend``) carries the same action names a Job's lifecycle policy does.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from volcano_py.api import constants
from volcano_py.api.meta import KubeObject, OwnerReference


class Event(StrEnum):
    """What happened to a pod, task or job; lifecycle policies react to these."""

    ANY = "*"
    POD_FAILED = "PodFailed"
    POD_EVICTED = "PodEvicted"
    POD_PENDING = "PodPending"
    POD_RUNNING = "PodRunning"
    JOB_UNKNOWN = "Unknown"
    TASK_COMPLETED = "TaskCompleted"
    TASK_FAILED = "TaskFailed"
    # Raised by the controller itself.
    OUT_OF_SYNC = "OutOfSync"
    COMMAND_ISSUED = "CommandIssued"
    JOB_UPDATED = "JobUpdated"


class Action(StrEnum):
    """What the Job controller does in response to an event or a Command."""

    ABORT_JOB = "AbortJob"
    RESTART_JOB = "RestartJob"
    RESTART_TASK = "RestartTask"
    RESTART_POD = "RestartPod"
    RESTART_PARTITION = "RestartPartition"
    TERMINATE_JOB = "TerminateJob"
    COMPLETE_JOB = "CompleteJob"
    RESUME_JOB = "ResumeJob"
    # Used by the controllers internally.
    SYNC_JOB = "SyncJob"
    ENQUEUE_JOB = "EnqueueJob"
    SYNC_QUEUE = "SyncQueue"
    OPEN_QUEUE = "OpenQueue"
    CLOSE_QUEUE = "CloseQueue"


# What a user may write in a lifecycle policy (Volcano's job admission webhook allows exactly these).
POLICY_EVENTS: Final = (
    Event.ANY,
    Event.POD_FAILED,
    Event.POD_EVICTED,
    Event.POD_PENDING,
    Event.JOB_UNKNOWN,
    Event.TASK_COMPLETED,
    Event.TASK_FAILED,
    Event.JOB_UPDATED,
)
POLICY_ACTIONS: Final = (
    Action.ABORT_JOB,
    Action.RESTART_JOB,
    Action.RESTART_TASK,
    Action.RESTART_POD,
    Action.RESTART_PARTITION,
    Action.TERMINATE_JOB,
    Action.COMPLETE_JOB,
    Action.RESUME_JOB,
)
# What a Command may ask of a Job, of a Queue, and of either (vcctl's verbs).
JOB_COMMAND_ACTIONS: Final = (
    Action.ABORT_JOB,
    Action.RESTART_JOB,
    Action.RESUME_JOB,
    Action.TERMINATE_JOB,
    Action.COMPLETE_JOB,
)
QUEUE_COMMAND_ACTIONS: Final = (Action.OPEN_QUEUE, Action.CLOSE_QUEUE)
COMMAND_ACTIONS: Final = JOB_COMMAND_ACTIONS + QUEUE_COMMAND_ACTIONS


class Command(KubeObject):
    """A one-shot request to the controllers, such as "abort job x"; deleted once acted upon."""

    api_version: str = constants.BUS_API_VERSION
    kind: str = constants.COMMAND_KIND
    action: str | None = None
    target: OwnerReference | None = None
    reason: str | None = None
    message: str | None = None
