"""Validation of one API object, shared by ``volcano-py validate`` and the admission webhook.

Three layers, in order: the model (types, enums, ranges -- what the CRD schema enforces too), unknown fields
(which the API server would silently prune, so a typo like ``replica:`` is lost without a word), and the
cross-field rules of Volcano's admission (``job_rules``, ``rules``). Objects of other kinds are skipped,
except plain Pods, whose spec we read when ``schedulerName: volcano``, and DRA's DeviceClasses, ResourceClaims
and ResourceClaimTemplates, whose selectors must compile and whose requests the scheduler must be able to
allocate (``dra_rules``).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from volcano_py.api import constants
from volcano_py.api.batch import Job
from volcano_py.api.bus import Command
from volcano_py.api.crd import crd_for, openapi_schema
from volcano_py.api.cron import CronJob
from volcano_py.api.dra import (
    DEVICE_CLASS_KIND,
    RESOURCE_API_VERSION,
    RESOURCE_CLAIM_KIND,
    RESOURCE_CLAIM_TEMPLATE_KIND,
    DeviceClass,
    ResourceClaim,
    ResourceClaimSpec,
)
from volcano_py.api.dra_fields import dra_field_problems
from volcano_py.api.dra_rules import validate_dra_object
from volcano_py.api.flow import JobFlow, JobTemplate
from volcano_py.api.flow_rules import validate_cronjob, validate_jobflow, validate_jobtemplate
from volcano_py.api.jdb import check_jdb_annotations
from volcano_py.api.job_defaults import with_job_defaults
from volcano_py.api.job_policies import check_policies
from volcano_py.api.job_rules import validate_job
from volcano_py.api.kube_names import metadata_problems, name_problems
from volcano_py.api.meta import KubeObject, ObjectMeta
from volcano_py.api.nodeinfo import Numatopology, validate_numatopology
from volcano_py.api.podspec import check_pod_priority, check_pod_spec
from volcano_py.api.problems import Problem, from_validation_error, join_path
from volcano_py.api.rules import validate_command, validate_hypernode, validate_podgroup, validate_queue
from volcano_py.api.scheduling import PodGroup, Queue
from volcano_py.api.shard import NodeShard, validate_nodeshard
from volcano_py.api.topology import HyperNode

__all__ = [
    "KINDS",
    "NOT_MODELLED",
    "NOT_VOLCANO",
    "Problem",
    "check_policies",
    "parse_object",
    "unchecked_reason",
    "unknown_fields",
    "validate_command",
    "validate_hypernode",
    "validate_job",
    "validate_object",
    "validate_podgroup",
    "validate_queue",
]

KINDS: Final[dict[tuple[str, str], type[KubeObject]]] = {
    (constants.BATCH_API_VERSION, constants.JOB_KIND): Job,
    (constants.SCHEDULING_API_VERSION, constants.PODGROUP_KIND): PodGroup,
    (constants.SCHEDULING_API_VERSION, constants.QUEUE_KIND): Queue,
    (constants.BUS_API_VERSION, constants.COMMAND_KIND): Command,
    (constants.TOPOLOGY_API_VERSION, constants.HYPERNODE_KIND): HyperNode,
    (constants.NODEINFO_API_VERSION, constants.NUMATOPOLOGY_KIND): Numatopology,
    (constants.BATCH_API_VERSION, constants.CRONJOB_KIND): CronJob,
    (constants.FLOW_API_VERSION, constants.JOBFLOW_KIND): JobFlow,
    (constants.FLOW_API_VERSION, constants.JOBTEMPLATE_KIND): JobTemplate,
    (constants.SHARD_API_VERSION, constants.NODESHARD_KIND): NodeShard,
}
# Dynamic Resource Allocation: what the scheduler can allocate of these is checked too (``dra_rules``).
DRA_KINDS: Final = frozenset(
    (RESOURCE_API_VERSION, kind)
    for kind in (DEVICE_CLASS_KIND, RESOURCE_CLAIM_KIND, RESOURCE_CLAIM_TEMPLATE_KIND)
)
_GROUP_VERSIONS: Final = {api_version.split("/")[0]: api_version for api_version in constants.VOLCANO_KINDS}
NOT_VOLCANO: Final = "not a Volcano kind, not checked"
NOT_MODELLED: Final = "a Volcano kind volcano-py does not model yet, not checked"


def _rules(obj: KubeObject) -> list[Problem]:
    checks: dict[type[KubeObject], Callable[[Any], list[Problem]]] = {
        Job: validate_job,
        PodGroup: validate_podgroup,
        Queue: validate_queue,
        Command: validate_command,
        HyperNode: validate_hypernode,
        Numatopology: validate_numatopology,
        CronJob: validate_cronjob,
        JobFlow: validate_jobflow,
        JobTemplate: validate_jobtemplate,
        NodeShard: validate_nodeshard,
    }
    return checks[type(obj)](obj)


def _type_problems(obj: Mapping[str, Any]) -> list[Problem]:
    """``apiVersion`` and ``kind``: both required strings (kubectl refuses a manifest without them)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    problems: list[Problem] = []
    if not isinstance(kind, str) or not kind:
        problems.append(Problem("kind", f"is required, got {kind!r} (add e.g. 'kind: Job')"))
    if not isinstance(api_version, str) or not api_version:
        served = [v for v, kinds in constants.VOLCANO_KINDS.items() if kind in kinds]
        example = served[0] if served else constants.BATCH_API_VERSION
        problems.append(
            Problem("apiVersion", f"is required, got {api_version!r} (add 'apiVersion: {example}')")
        )
    return problems


def unchecked_reason(obj: Any) -> str | None:
    """Why ``validate_object`` checks nothing in ``obj`` (a kind outside Volcano, or one we do not model yet),
    or None when it checks it. A document with a missing apiVersion or kind is checked (and refused)."""
    if not isinstance(obj, Mapping) or _type_problems(obj):
        return None
    api_version, kind = obj["apiVersion"], obj["kind"]
    if (
        (api_version, kind) in KINDS
        or (api_version, kind) == ("v1", "Pod")
        or (api_version, kind) in DRA_KINDS
    ):
        return None
    group = api_version.split("/")[0]
    if group not in _GROUP_VERSIONS:
        return NOT_VOLCANO
    if kind in constants.VOLCANO_KINDS.get(api_version, ()):
        return NOT_MODELLED
    return None  # an unknown kind or version in a Volcano group: refused by parse_object


def parse_object(obj: Mapping[str, Any]) -> tuple[KubeObject | None, list[Problem]]:
    """The model for one of our kinds, or None with the problems that stopped it (None, [] if not ours)."""
    if problems := _type_problems(obj):
        return None, problems
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    model = KINDS.get((api_version, kind))
    if model is None:
        group = api_version.split("/")[0]
        served = _GROUP_VERSIONS.get(group)
        if served is None or kind in constants.VOLCANO_KINDS.get(api_version, ()):
            return None, []
        kinds = constants.VOLCANO_KINDS[served]
        elsewhere = [v for v, names in constants.VOLCANO_KINDS.items() if kind in names]
        if elsewhere:
            message = f"{api_version} does not serve kind {kind} (use apiVersion {elsewhere[0]})"
            field = "apiVersion"
        else:
            message = (
                f"{kind!r} is not a Volcano kind in {group} "
                f"(use apiVersion {served} with kind one of {', '.join(kinds)})"
            )
            field = "kind"
        return None, [Problem(field, message)]
    try:
        return model.model_validate(obj), []
    except ValidationError as err:
        return None, from_validation_error(err)


def unknown_fields(model: BaseModel, path: str = "") -> list[Problem]:
    """Fields the models do not know, which the API server would drop without telling anyone."""
    problems: list[Problem] = []
    if isinstance(model, ObjectMeta):
        return problems  # metadata has many server-managed fields we deliberately pass through
    known = [f.alias or name for name, f in type(model).model_fields.items()]
    for key in model.model_extra or {}:
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known fields: {', '.join(sorted(known))}"
        problems.append(
            Problem(join_path(path, key), f"unknown field (remove it or fix the spelling; {hint})")
        )
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        here = join_path(path, field.alias or name)
        if isinstance(value, BaseModel):
            problems += unknown_fields(value, here)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    problems += unknown_fields(item, join_path(here, i))
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, BaseModel):
                    problems += unknown_fields(item, join_path(here, str(key)))
    return problems


_INT_RANGES: Final = {"int32": 2**31, "int64": 2**63}


def integer_range_problems(value: Any, schema: Mapping[str, Any], path: str = "") -> list[Problem]:
    """Numbers too wide for the Go type behind the field: the server stores them, then Go clients cannot read
    the object at all. The widths come from the CRD schema (``format: int32``), so they are Volcano's."""
    if isinstance(value, Mapping):
        props: Mapping[str, Any] = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out: list[Problem] = []
        for key, item in value.items():
            sub = props.get(key, extra if isinstance(extra, Mapping) else None)
            if sub is not None:
                out += integer_range_problems(item, sub, join_path(path, str(key)))
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [
            p
            for i, item in enumerate(value)
            for p in integer_range_problems(item, schema["items"], join_path(path, i))
        ]
    bound = _INT_RANGES.get(schema.get("format", ""))
    if bound and isinstance(value, int) and not isinstance(value, bool) and not -bound <= value < bound:
        bits = schema["format"][3:]
        return [
            Problem(
                path,
                f"{value} does not fit in a {bits}-bit integer (use a value from {-bound} to {bound - 1})",
            )
        ]
    return []


def _validate_pod(obj: Mapping[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, Mapping) or not (metadata.get("name") or metadata.get("generateName")):
        problems.append(Problem("metadata.name", "is required (name the pod)"))
    else:
        problems += name_problems(metadata.get("name"), metadata.get("generateName"))
    problems += metadata_problems(metadata, "metadata")
    problems += check_pod_spec(obj.get("spec"), "spec")
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        problems += check_pod_priority(spec, "spec")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    scheduled_by_us = isinstance(spec, Mapping) and spec.get("schedulerName") == constants.SCHEDULER_NAME
    if scheduled_by_us and isinstance(annotations, Mapping) and annotations:
        problems += check_jdb_annotations(annotations)
    return problems


def _dra_unknown_fields(obj: Mapping[str, Any], kind: str) -> list[Problem]:
    """Unknown fields of a DRA object's spec, which ``kubectl apply`` refuses (strict field validation)."""
    try:
        if kind == DEVICE_CLASS_KIND:
            return unknown_fields(DeviceClass.model_validate(obj).spec, "spec")
        if kind == RESOURCE_CLAIM_KIND:
            return unknown_fields(ResourceClaim.model_validate(obj).spec, "spec")
        outer = obj.get("spec")
        if not isinstance(outer, Mapping):
            return []
        problems = [
            Problem(
                join_path("spec", str(key)),
                "unknown field (a ResourceClaimTemplate's spec has metadata and spec)",
            )
            for key in outer
            if key not in ("metadata", "spec")
        ]
        return problems + unknown_fields(
            ResourceClaimSpec.model_validate(outer.get("spec") or {}), "spec.spec"
        )
    except ValidationError:
        return []  # reported by validate_dra_object


def validate_object(obj: Any) -> list[Problem]:
    """Every problem in one manifest document; [] when it is valid or not a kind we check."""
    if not isinstance(obj, Mapping):
        return [Problem("", f"expected a mapping (a Kubernetes object), got {type(obj).__name__}")]
    if obj.get("apiVersion") == "v1" and obj.get("kind") == "Pod":
        return _validate_pod(obj)
    if (devices := validate_dra_object(obj)) is not None:
        kind = str(obj.get("kind"))
        return dra_field_problems(obj, kind) + _dra_unknown_fields(obj, kind) + devices
    info = crd_for(str(obj.get("apiVersion")), str(obj.get("kind")))
    if info is not None and (too_wide := integer_range_problems(obj, openapi_schema(info))):
        return too_wide
    if (obj.get("apiVersion"), obj.get("kind")) == (constants.BATCH_API_VERSION, constants.JOB_KIND):
        # Judged as the validating webhook sees it: after the mutating webhook wrote Volcano's defaults.
        obj = with_job_defaults(obj)
    model, problems = parse_object(obj)
    if model is None:
        return problems
    # The API server checks every object's labels and annotations before any webhook sees it.
    return metadata_problems(obj.get("metadata"), "metadata") + unknown_fields(model) + _rules(model)


def object_ref(obj: Any) -> str:
    """``Kind/namespace/name`` (``Kind/name`` when the manifest gives no namespace) for messages."""
    if not isinstance(obj, Mapping):
        return "<not an object>"
    raw_meta = obj.get("metadata")
    metadata: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    name = metadata.get("name") or metadata.get("generateName") or "<unnamed>"
    kind = obj.get("kind") or "<no kind>"
    namespace = metadata.get("namespace")
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"
