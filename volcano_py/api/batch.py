"""``batch.volcano.sh/v1alpha1`` Job: a gang of tasks, each a pod template with replicas, and the policies
that decide what happens when a pod fails, is evicted or a task completes.

The pod template stays a plain mapping (it is Kubernetes' PodTemplateSpec, kept verbatim); the parts we read
are checked by ``volcano_py.api.podspec``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

from volcano_py.api import constants
from volcano_py.api.bus import POLICY_ACTIONS, POLICY_EVENTS, Action, Event
from volcano_py.api.common import (
    DNS1123_LABEL_RE,
    Duration,
    FreeForm,
    Int32,
    SubdomainName,
    Time,
    VolcanoModel,
    crd_default,
)
from volcano_py.api.messages import VOLCANO_INVALID_ACTION, VOLCANO_INVALID_EVENT, volcano_said
from volcano_py.api.meta import KubeObject, NetworkTopologySpec


class JobPhase(StrEnum):
    PENDING = "Pending"
    ABORTING = "Aborting"
    ABORTED = "Aborted"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"
    FAILED = "Failed"


# Phases after which a Job is finished: its ``ttlSecondsAfterFinished`` starts (Volcano's ``isJobFinished``).
# Aborted is not one of them: an aborted Job can be resumed.
FINISHED_PHASES = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED})
# Phases a Job stays in until someone acts on it (finished, or aborted and waiting for a resume).
FINAL_PHASES = FINISHED_PHASES | {JobPhase.ABORTED}

# ``spec.maxRetry`` when the Job leaves it out (Volcano's webhook and CRD default).
DEFAULT_MAX_RETRY = 3


class JobEvent(StrEnum):
    """Reasons of the Kubernetes Events the Job controller records on a Job."""

    COMMAND_ISSUED = "CommandIssued"
    PLUGIN_ERROR = "PluginError"
    PVC_ERROR = "PVCError"
    PODGROUP_ERROR = "PodGroupError"
    EXECUTE_ACTION = "ExecuteAction"
    JOB_STATUS_ERROR = "JobStatusError"
    PODGROUP_PENDING = "PodGroupPending"


class NumaPolicy(StrEnum):
    NONE = "none"
    BEST_EFFORT = "best-effort"
    RESTRICTED = "restricted"
    SINGLE_NUMA_NODE = "single-numa-node"


class Iteration(StrEnum):
    ANY = "any"
    ALL = "all"


def _known(enum: type[Event] | type[Action], allowed: tuple[StrEnum, ...], what: str) -> Any:
    """A before-validator naming, for a value that is no event/action at all, only what a user may write
    (the enum also holds the controller's internal values, which ``check_policies`` refuses with their own
    message)."""
    values = {member.value for member in enum}
    choices = ", ".join(member.value for member in allowed)

    volcano = VOLCANO_INVALID_EVENT if what == "event" else VOLCANO_INVALID_ACTION

    def check(value: Any) -> Any:
        if isinstance(value, str) and value not in values:
            ours = f"{value!r} is not a policy {what} (use one of {choices})"
            raise ValueError(volcano_said(volcano, ours))
        return value

    return BeforeValidator(check)


PolicyEvent = Annotated[Event, _known(Event, POLICY_EVENTS, "event")]
# Volcano's CRD leaves a policy's action a plain string (its events are an enum): a wrong action reaches the
# webhook, which answers in Volcano's words ("invalid policy action"), not the API server's enum message.
PolicyAction = Annotated[Action, _known(Action, POLICY_ACTIONS, "action"), WithJsonSchema({"type": "string"})]


class LifecyclePolicy(VolcanoModel):
    """On ``event`` (or any of ``events``), or on a container exiting with ``exitCode``, do ``action``."""

    action: PolicyAction | None = None
    event: PolicyEvent | None = None
    events: list[PolicyEvent] = Field(default_factory=list)
    exit_code: Int32 | None = None
    timeout: Duration | None = None

    def all_events(self) -> list[Event]:
        """``events`` plus ``event``, without repeats, in the order written."""
        out: list[Event] = []
        for event in [*self.events, *([self.event] if self.event else [])]:
            if event not in out:
                out.append(event)
        return out


class DependsOn(VolcanoModel):
    name: list[str] = Field(default_factory=list)
    iteration: Iteration | None = None


class PartitionPolicySpec(VolcanoModel):
    total_partitions: Int32 = Field(ge=1)
    partition_size: Int32 = Field(ge=1)
    network_topology: NetworkTopologySpec | None = None
    min_partitions: Int32 = crd_default(0, ge=0)


class TaskSpec(VolcanoModel):
    # The pattern is for the API server; ``volcano-py validate`` reports a bad name with its own message.
    name: str | None = Field(
        default=None, max_length=63, json_schema_extra={"pattern": DNS1123_LABEL_RE.pattern}
    )
    replicas: Int32 = Field(default=0, ge=0)
    min_available: Int32 | None = Field(default=None, ge=0)
    template: FreeForm = Field(default_factory=dict)
    policies: list[LifecyclePolicy] = Field(default_factory=list)
    topology_policy: NumaPolicy | None = None
    max_retry: Int32 = Field(default=0, ge=0)
    depends_on: DependsOn | None = None
    partition_policy: PartitionPolicySpec | None = None

    @property
    def pod_spec(self) -> dict[str, Any]:
        spec = self.template.get("spec")
        return spec if isinstance(spec, dict) else {}


class VolumeSpec(VolcanoModel):
    mount_path: str = Field(min_length=1, pattern=r"^[^:]+$")
    volume_claim_name: str | None = Field(default=None, max_length=253)
    volume_claim: FreeForm | None = None


class JobSpec(VolcanoModel):
    scheduler_name: str | None = Field(default=None, max_length=63)
    min_available: Int32 = Field(default=0, ge=0)
    volumes: list[VolumeSpec] = Field(default_factory=list)
    # The CRD refuses an empty list; the rule (api.job_rules) words a Job without tasks as Volcano does.
    tasks: list[TaskSpec] = Field(default_factory=list, json_schema_extra={"minItems": 1})
    policies: list[LifecyclePolicy] = Field(default_factory=list)
    plugins: dict[str, list[str]] = Field(default_factory=dict)
    running_estimate: Duration | None = None
    queue: SubdomainName = crd_default(constants.DEFAULT_QUEUE)
    max_retry: Int32 = crd_default(DEFAULT_MAX_RETRY, ge=0)
    ttl_seconds_after_finished: Int32 | None = Field(default=None, ge=0)
    priority_class_name: SubdomainName | None = None
    min_success: Int32 | None = Field(default=None, ge=1)
    network_topology: NetworkTopologySpec | None = None

    def total_replicas(self) -> int:
        return sum(task.replicas for task in self.tasks)


class JobState(VolcanoModel):
    phase: JobPhase | None = None
    reason: str | None = None
    message: str | None = None
    last_transition_time: Time | None = None


class TaskState(VolcanoModel):
    # Pod phase (Pending, Running, Succeeded, Failed, Unknown) -> number of pods of the task in it.
    phase: dict[str, Int32] = Field(default_factory=dict)


class JobCondition(VolcanoModel):
    status: JobPhase
    last_transition_time: Time | None = None


class JobStatus(VolcanoModel):
    state: JobState = Field(default_factory=JobState)
    min_available: Int32 = Field(default=0, ge=0)
    task_status_count: dict[str, TaskState] = Field(default_factory=dict)
    pending: Int32 = Field(default=0, ge=0)
    running: Int32 = Field(default=0, ge=0)
    succeeded: Int32 = Field(default=0, ge=0)
    failed: Int32 = Field(default=0, ge=0)
    terminating: Int32 = Field(default=0, ge=0)
    unknown: Int32 = Field(default=0, ge=0)
    version: Int32 = Field(default=0, ge=0)
    retry_count: Int32 = Field(default=0, ge=0)
    running_duration: Duration | None = None
    controlled_resources: dict[str, str] = Field(default_factory=dict)
    conditions: list[JobCondition] = Field(default_factory=list)


class Job(KubeObject):
    """A Volcano Job (``vcjob``)."""

    api_version: str = constants.BATCH_API_VERSION
    kind: str = constants.JOB_KIND
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus | None = None
