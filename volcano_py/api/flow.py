"""``flow.volcano.sh/v1alpha1``: JobTemplate (a Job spec kept for later), JobFlow (a DAG of templates).

A JobFlow names templates in ``flows[]``; the flow controller creates Job ``<flow>-<template>`` from each once
every ``dependsOn.targets`` Job of the same flow is Completed, and reports the flow's phase (Pending, Running,
Succeed, Failed, Terminating) from those Jobs. Field names, enums and the status layout are Volcano's.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from volcano_py.api import constants
from volcano_py.api.batch import JobPhase, JobSpec, TaskSpec, TaskState
from volcano_py.api.common import Duration, Int32, SubdomainName, Time, VolcanoModel
from volcano_py.api.meta import KubeObject


class FlowPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEED = "Succeed"
    FAILED = "Failed"
    TERMINATING = "Terminating"


# Phases a flow never leaves by itself.
FLOW_FINISHED_PHASES = frozenset({FlowPhase.SUCCEED, FlowPhase.FAILED})


class RetainPolicy(StrEnum):
    """What happens to a flow's Jobs once the flow has succeeded."""

    RETAIN = "retain"
    DELETE = "delete"


class HttpHeader(VolcanoModel):
    name: str
    value: str


class HttpGet(VolcanoModel):
    task_name: str | None = Field(default=None, max_length=253)
    path: str | None = None
    port: Int32 | None = Field(default=None, ge=0, le=65535)
    http_header: HttpHeader | None = None


class TcpSocket(VolcanoModel):
    task_name: str | None = Field(default=None, max_length=253)
    port: Int32 = Field(ge=0, le=65535)


class TaskStatusProbe(VolcanoModel):
    task_name: str | None = Field(default=None, max_length=253)
    phase: str | None = Field(default=None, max_length=63)


class Probe(VolcanoModel):
    """Volcano reserves these for readiness checks between steps; its controller does not act on them yet."""

    http_get_list: list[HttpGet] = Field(default_factory=list)
    tcp_socket_list: list[TcpSocket] = Field(default_factory=list)
    task_status_list: list[TaskStatusProbe] = Field(default_factory=list)


# A JobFlow step's ``dependsOn`` (flow.volcano.sh), not a Job task's (``batch.DependsOn``).
class FlowDependsOn(VolcanoModel):
    targets: list[str] = Field(default_factory=list)
    probe: Probe | None = None


class JobSpecPatch(JobSpec):
    """A partial JobSpec laid over a template: nothing is required and nothing is defaulted, so the API server
    does not fill in ``queue: default`` or ``maxRetry: 3`` that would then override the template's values."""

    tasks: list[TaskSpec] = Field(default_factory=list)
    queue: SubdomainName | None = None  # type: ignore[assignment]
    max_retry: Int32 | None = Field(default=None, ge=0)  # type: ignore[assignment]


class Patch(VolcanoModel):
    job_spec: JobSpecPatch | None = None


class Flow(VolcanoModel):
    """One step: the JobTemplate of this name, run once its targets completed, with ``patch`` laid over it."""

    name: str = Field(min_length=1)
    depends_on: FlowDependsOn | None = None
    patch: Patch | None = None

    def targets(self) -> list[str]:
        return list(self.depends_on.targets) if self.depends_on else []


class JobFlowSpec(VolcanoModel):
    flows: list[Flow] = Field(default_factory=list)
    job_retain_policy: RetainPolicy | None = None


class JobRunningHistory(VolcanoModel):
    start_timestamp: Time | None = None
    end_timestamp: Time | None = None
    state: JobPhase | None = None


class FlowJobStatus(VolcanoModel):
    """One Job of the flow as the flow saw it (Volcano's ``JobStatus`` of the flow group)."""

    name: str | None = None
    state: JobPhase | None = None
    start_timestamp: Time | None = None
    end_timestamp: Time | None = None
    restart_count: Int32 | None = Field(default=None, ge=0)
    running_histories: list[JobRunningHistory] = Field(default_factory=list)


class FlowCondition(VolcanoModel):
    phase: JobPhase | None = None
    create_time: Time | None = None
    running_duration: Duration | None = None
    task_status_count: dict[str, TaskState] = Field(default_factory=dict)


class FlowState(VolcanoModel):
    phase: FlowPhase | None = None


class JobFlowStatus(VolcanoModel):
    pending_jobs: list[str] = Field(default_factory=list)
    running_jobs: list[str] = Field(default_factory=list)
    failed_jobs: list[str] = Field(default_factory=list)
    completed_jobs: list[str] = Field(default_factory=list)
    terminated_jobs: list[str] = Field(default_factory=list)
    # Volcano's spelling.
    un_know_jobs: list[str] = Field(default_factory=list, alias="unKnowJobs")
    job_status_list: list[FlowJobStatus] = Field(default_factory=list)
    conditions: dict[str, FlowCondition] = Field(default_factory=dict)
    state: FlowState = Field(default_factory=FlowState)


class JobFlow(KubeObject):
    """A DAG of JobTemplates run in dependency order."""

    api_version: str = constants.FLOW_API_VERSION
    kind: str = constants.JOBFLOW_KIND
    spec: JobFlowSpec = Field(default_factory=JobFlowSpec)
    status: JobFlowStatus | None = None


class JobTemplateStatus(VolcanoModel):
    job_depends_on_list: list[str] = Field(default_factory=list)


class JobTemplate(KubeObject):
    """A Job spec with a name, for JobFlows to instantiate; its ``spec`` is exactly a Job's spec."""

    api_version: str = constants.FLOW_API_VERSION
    kind: str = constants.JOBTEMPLATE_KIND
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobTemplateStatus | None = None
