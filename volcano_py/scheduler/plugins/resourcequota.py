"""resourcequota: a job is admitted (enqueue) only while its ``minResources`` fit every ResourceQuota of its
namespace: ``status.used`` + what this session already admitted there + the job's minimum must stay within
``spec.hard`` for each resource the quota limits. The refusal names the quota and the resource.

Quota names are read as the quota controller counts pods: ``cpu`` and ``requests.cpu`` (likewise memory,
ephemeral-storage and extended resources) against the job's minimum request, ``pods`` and ``count/pods``
against its ``minMember``. Limits (``limits.*``) and object counts of other kinds are not checked here: a
PodGroup's minimum says nothing about them, and the API server still enforces every quota at pod creation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api.objects import name_of, namespace_of, spec_of, status_of
from volcano_py.log import get_logger
from volcano_py.resources import PODS, QuantityError, format_quantity, to_canonical

from ..framework.arguments import Arguments
from ..framework.extension import Vote
from ..framework.job import JobInfo
from ..framework.session import Session

log = get_logger(__name__)

_REQUESTS = "requests."
_POD_COUNTS = (PODS, "count/pods")


def _base(name: str) -> str | None:
    """The resource a quota name limits in terms of a job's minimum, or None when it is not ours to check."""
    if name in _POD_COUNTS:
        return PODS
    if name.startswith(_REQUESTS):
        return name[len(_REQUESTS) :]
    if name.startswith(("limits.", "count/")):
        return None  # limits and object counts: a job's minimum says nothing of them
    return name  # a name no job minimum carries (e.g. a storage class's) asks nothing and is never exceeded


@dataclass(frozen=True, slots=True)
class Quota:
    name: str
    # quota resource name -> (the job-minimum resource it limits, hard, used), canonical units
    limits: tuple[tuple[str, str, int, int], ...]

    @classmethod
    def of(cls, quota: Mapping[str, Any]) -> Quota:
        hard = status_of(quota).get("hard") or spec_of(quota).get("hard") or {}
        used = status_of(quota).get("used") or {}
        limits = []
        for name, value in sorted(hard.items()):
            base = _base(name)
            if base is None:
                continue
            try:
                limits.append((name, base, to_canonical(base, value), to_canonical(base, used.get(name, 0))))
            except QuantityError as err:
                log.warning(
                    "resourcequota: unreadable quantity ignored", quota=name_of(quota), error=str(err)
                )
        return cls(name=name_of(quota), limits=tuple(limits))


class ResourceQuotaPlugin:
    name = "resourcequota"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known()
        self.quotas: dict[str, list[Quota]] = {}
        # What jobs admitted this session already take of each namespace's quotas (Volcano's
        # pendingResources), per (quota, resource name).
        self.admitted: dict[str, dict[tuple[str, str], int]] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.quotas = {}
        self.admitted = {}
        for quota in ssn.snapshot.resource_quotas:
            namespace = namespace_of(quota) or "default"
            self.quotas.setdefault(namespace, []).append(Quota.of(quota))

    def on_session_close(self, ssn: Session) -> None:
        self.quotas = {}
        self.admitted = {}

    @staticmethod
    def _minimum(job: JobInfo) -> dict[str, int]:
        need = dict(job.min_request)
        need[PODS] = job.min_available
        return need

    def _exceeded(self, job: JobInfo) -> list[str]:
        need = self._minimum(job)
        admitted = self.admitted.get(job.namespace, {})
        out = []
        for quota in self.quotas.get(job.namespace, ()):
            for name, base, hard, used in quota.limits:
                asked = need.get(base, 0)
                if not asked:
                    continue
                held = used + admitted.get((quota.name, name), 0)
                if held + asked > hard:
                    out.append(
                        f"resource quota {quota.name} insufficient on {name}: requested "
                        f"{format_quantity(base, asked)}, used {format_quantity(base, held)}, "
                        f"limited {format_quantity(base, hard)}"
                    )
        return out

    def job_enqueueable(self, job: JobInfo) -> Vote:
        if job.min_resources is None or job.namespace not in self.quotas:
            return Vote.PERMIT
        return Vote.REJECT if self._exceeded(job) else Vote.PERMIT

    def job_enqueued(self, job: JobInfo) -> None:
        if job.min_resources is None or job.namespace not in self.quotas:
            return
        need = self._minimum(job)
        admitted = self.admitted.setdefault(job.namespace, {})
        for quota in self.quotas[job.namespace]:
            for name, base, _hard, _used in quota.limits:
                key = (quota.name, name)
                admitted[key] = admitted.get(key, 0) + need.get(base, 0)

    def explain_enqueue(self, job: JobInfo) -> str | None:
        return "; ".join(self._exceeded(job)) or None
