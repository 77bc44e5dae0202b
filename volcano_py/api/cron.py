"""``batch.volcano.sh/v1alpha1`` CronJob: a Volcano Job created on a cron schedule.

The kind as the API server stores it, shared by the CRD, the webhook and the controller. What its
``spec.schedule`` and ``spec.timeZone`` mean is kept out of the model: ``cron_parse`` reads them as Volcano
does and ``cron_schedule`` steps from one run to the next, so the model stays a plain description of the
object.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, StrictBool

from volcano_py.api import constants
from volcano_py.api.batch import JobSpec
from volcano_py.api.common import Int32, Int64, Time, VolcanoModel, crd_default
from volcano_py.api.meta import KubeObject, ObjectMeta


class ConcurrencyPolicy(StrEnum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


class CronJobTemplate(VolcanoModel):
    """The Job a run creates: its labels and annotations, and its spec."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)


class CronJobSpec(VolcanoModel):
    schedule: str
    time_zone: str | None = None
    starting_deadline_seconds: Int64 | None = Field(default=None, ge=0)
    concurrency_policy: ConcurrencyPolicy = crd_default(ConcurrencyPolicy.ALLOW)
    suspend: StrictBool = crd_default(False)
    job_template: CronJobTemplate
    successful_jobs_history_limit: Int32 = crd_default(3, ge=0)
    failed_jobs_history_limit: Int32 = crd_default(1, ge=0)


class ObjectReference(VolcanoModel):
    api_version: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    resource_version: str | None = None


class CronJobStatus(VolcanoModel):
    active: list[ObjectReference] = Field(default_factory=list)
    last_schedule_time: Time | None = None
    last_successful_time: Time | None = None


class CronJob(KubeObject):
    api_version: str = constants.BATCH_API_VERSION
    kind: str = constants.CRONJOB_KIND
    spec: CronJobSpec
    status: CronJobStatus | None = None
