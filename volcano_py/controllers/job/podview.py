"""What the Job controller needs to know about one of its pods, read once from the pod's JSON body."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.conditions import condition_is_true
from volcano_py.api.objects import metadata_of, status_of
from volcano_py.api.podspec import PodPhase, pod_phase

# The pod phases the Job controller counts, by their api names (``PodPhase`` is a ``str``, so status maps
# keyed by phase text read them alike).
PENDING, RUNNING, SUCCEEDED, FAILED, UNKNOWN = (
    PodPhase.PENDING,
    PodPhase.RUNNING,
    PodPhase.SUCCEEDED,
    PodPhase.FAILED,
    PodPhase.UNKNOWN,
)

# Reasons Kubernetes puts on a pod's DisruptionTarget condition when something other than the workload
# itself ended it (preemption, API eviction, taint eviction, node pressure): not the job's failure.
_DISRUPTION_REASONS = frozenset(
    {
        "PreemptionByScheduler",
        "PreemptionByKubeScheduler",
        "EvictionByEvictionAPI",
        "DeletionByTaintManager",
        "TerminationByKubelet",
        "DeletionByPodGC",
    }
)


@dataclass(frozen=True, slots=True)
class PodView:
    name: str
    uid: str
    task: str
    index: int
    version: int
    retry_count: int
    phase: str
    deleting: bool = False
    out_of_sync: bool = False
    disrupted: bool = False  # preempted or evicted: replaced, never counted as a failure
    exit_code: int = 0
    ready: bool = False
    restarts: int = 0
    job_uid: str = ""
    partition: str = ""  # the partition-id label of a partitioned task's pod


def _int_or(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def read_pod(body: Mapping[str, Any]) -> PodView:
    # Read per pod of a Job at each of its syncs: the metadata and status once each, then plain lookups.
    meta = metadata_of(body)
    ann: Mapping[str, str] = meta.get("annotations") or {}
    status = status_of(body)
    phase = pod_phase(body)
    statuses = list(status.get("containerStatuses") or ())
    exit_code = 0
    if statuses:
        terminated = (statuses[0].get("state") or {}).get("terminated") or {}
        exit_code = _int_or(terminated.get("exitCode"), 0)
    disrupted = any(
        condition_is_true(cond, "DisruptionTarget")
        and cond.get("reason", "PreemptionByScheduler") in _DISRUPTION_REASONS
        for cond in status.get("conditions") or ()
    )
    owner_uid = next(
        (ref.get("uid", "") for ref in meta.get("ownerReferences") or () if ref.get("controller")), ""
    )
    restarts = sum(_int_or(s.get("restartCount"), 0) for s in statuses)
    restarts += sum(_int_or(s.get("restartCount"), 0) for s in status.get("initContainerStatuses") or ())
    return PodView(
        name=str(meta.get("name", "")),
        uid=str(meta.get("uid", "")),
        task=str(ann.get(c.TASK_SPEC_KEY, "")),
        index=_int_or(ann.get(c.TASK_INDEX_KEY), -1),
        version=_int_or(ann.get(c.JOB_VERSION_KEY), 0),
        retry_count=_int_or(ann.get(c.JOB_RETRY_COUNT_KEY), 0),
        phase=phase,
        deleting=bool(meta.get("deletionTimestamp")),
        out_of_sync=c.CONTROLLER_OUT_OF_SYNC_KEY in ann,
        disrupted=disrupted,
        exit_code=exit_code,
        ready=bool(statuses) and all(bool(s.get("ready")) for s in statuses),
        restarts=restarts,
        job_uid=str(owner_uid),
        partition=str((meta.get("labels") or {}).get(c.TASK_PARTITION_ID_KEY, "")),
    )


def slim_pod(body: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a pod body :func:`read_pod` reads; what the operator keeps in memory per pod."""
    meta = metadata_of(body)
    status = status_of(body)
    return {
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
            "annotations": {
                k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith("volcano.sh/")
            },
            "labels": {k: v for k, v in (meta.get("labels") or {}).items() if k == c.TASK_PARTITION_ID_KEY},
            "deletionTimestamp": meta.get("deletionTimestamp"),
            "ownerReferences": [
                {"uid": r.get("uid"), "controller": r.get("controller"), "kind": r.get("kind")}
                for r in meta.get("ownerReferences") or ()
            ],
        },
        "status": {
            "phase": status.get("phase"),
            # Only a DisruptionTarget condition is read: kept whole, the others dropped.
            "conditions": [
                dict(x) for x in status.get("conditions") or () if x.get("type") == "DisruptionTarget"
            ],
            "containerStatuses": [
                {"ready": s.get("ready"), "restartCount": s.get("restartCount"), "state": s.get("state")}
                for s in status.get("containerStatuses") or ()
            ],
            "initContainerStatuses": [
                {"restartCount": s.get("restartCount")} for s in status.get("initContainerStatuses") or ()
            ],
        },
    }
