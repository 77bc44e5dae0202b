"""Volcano's ``volcano-admission.conf``: the resource groups the pod mutating webhook applies at pod create.

Format (Volcano's, read by its webhook manager from ``--admission-conf``)::

    resourceGroups:
    - resourceGroup: management        # the group's name
      object:                          # which pods belong to it
        key: namespace                 # namespace | annotation
        value: [mng-ns-1]              # namespaces, or "annotation-key: value" strings
      schedulerName: default-scheduler # then set on the pod
      tolerations: [...]               # appended to the pod's
      labels: {volcano.sh/nodetype: management}  # merged into the pod's nodeSelector
      affinity: '{"nodeAffinity": ...}'          # a JSON string; set only when the pod has none

A group without ``object`` takes the pods annotated ``volcano.sh/resource-group: <its name>``. Volcano reads
the file leniently (an unknown key is ignored, a bad annotation entry or affinity skipped, a YAML error drops
the whole conf); here each of those is refused at load with the field named, so a typo cannot quietly leave
pods on the wrong nodes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from functools import cached_property
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError
from pydantic.alias_generators import to_camel

from volcano_py.api import constants
from volcano_py.api.common import dns1123_label_problem
from volcano_py.api.kube_names import label_problems, qualified_name_problem
from volcano_py.api.podspec import check_affinity, check_tolerations
from volcano_py.api.problems import Problem, from_validation_error, join_path

# The file name Volcano's chart gives the conf inside its ConfigMap ``<release>-admission-configmap``.
ADMISSION_CONF_KEY: Final = "volcano-admission.conf"
RESOURCE_GROUPS_FIELD: Final = "resourceGroups"
TOLERATION_FIELDS: Final = ("key", "operator", "value", "effect", "tolerationSeconds")


class ObjectKey(StrEnum):
    """What ``object.value`` lists: namespaces, or annotations the pod must carry."""

    NAMESPACE = "namespace"
    ANNOTATION = "annotation"


class _ConfModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class ResourceGroupObject(_ConfModel):
    key: ObjectKey | None = None
    value: list[StrictStr] = Field(default_factory=list)


class ResourceGroup(_ConfModel):
    resource_group: StrictStr = Field(min_length=1)
    object: ResourceGroupObject = Field(default_factory=ResourceGroupObject)
    scheduler_name: StrictStr = ""
    tolerations: list[dict[str, Any]] = Field(default_factory=list)
    labels: dict[str, StrictStr] = Field(default_factory=dict)
    affinity: StrictStr = ""

    @cached_property
    def annotations(self) -> dict[str, str]:
        """``object.value`` as annotations, any of which puts a pod in the group; empty for namespaces."""
        if self.object.key is ObjectKey.NAMESPACE:
            return {}
        found: dict[str, str] = {}
        for entry in self.object.value:
            for key, value in _annotation_entry(entry).items():
                found.setdefault(key, value)  # Volcano keeps the first value given for a key
        return found

    @cached_property
    def affinity_object(self) -> dict[str, Any] | None:
        """The ``affinity`` JSON as the pod's ``spec.affinity``; None when not set."""
        if not self.affinity:
            return None
        parsed: dict[str, Any] = json.loads(self.affinity)
        return parsed

    def by_default_annotation(self) -> bool:
        """A group with no ``object.key`` also takes pods annotated with its name (Volcano's default)."""
        return self.object.key is None


class AdmissionConf(_ConfModel):
    resource_groups: list[ResourceGroup] = Field(default_factory=list)


class AdmissionConfError(ValueError):
    """A conf that cannot be used; the message names each bad field and its fix."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(problem) for problem in problems))
        self.problems = problems


def _annotation_entry(entry: str) -> dict[str, str]:
    # Volcano decodes each entry as YAML into a string map: every scalar, numbers too, is taken as written.
    loaded = yaml.load(entry, Loader=yaml.BaseLoader)
    if not isinstance(loaded, dict) or not all(isinstance(v, str) for v in loaded.values()):
        raise ValueError(entry)
    return {str(key): value for key, value in loaded.items()}


def _object_problems(group: ResourceGroup, path: str) -> list[Problem]:
    obj = group.object
    values_path = join_path(path, "object", "value")
    if obj.key is not None and not obj.value:
        what = "namespaces" if obj.key is ObjectKey.NAMESPACE else "'annotation-key: value' entries"
        return [Problem(values_path, f"is empty, so no pod would match (list the {what})")]
    problems: list[Problem] = []
    first: dict[str, tuple[str, int]] = {}
    for i, entry in enumerate(obj.value):
        here = join_path(values_path, i)
        if obj.key is ObjectKey.NAMESPACE:
            if msg := dns1123_label_problem(entry):
                problems.append(Problem(here, f"not a namespace name: {msg}"))
            continue
        try:
            annotations = _annotation_entry(entry)
        except (ValueError, yaml.YAMLError):
            problems.append(
                Problem(
                    here,
                    f"{entry!r} is not an annotation (write 'key: value', e.g. "
                    f"'{constants.RESOURCE_GROUP_ANNOTATION_KEY}: {group.resource_group}')",
                )
            )
            continue
        for key, value in annotations.items():
            if msg := qualified_name_problem(key):
                problems.append(Problem(here, msg))
            if not value:
                problems.append(
                    Problem(
                        here, f"{key!r} has an empty value, which every pod without it would match (give one)"
                    )
                )
            if key in first and first[key][0] != value:
                problems.append(
                    Problem(
                        here,
                        f"{key!r} is already given as {first[key][0]!r} in value[{first[key][1]}]; only the "
                        "first is used (give each annotation key once)",
                    )
                )
            first.setdefault(key, (value, i))
    return problems


def _toleration_problems(group: ResourceGroup, path: str) -> list[Problem]:
    here = join_path(path, "tolerations")
    problems = [
        Problem(
            join_path(here, i, str(key)), f"unknown toleration field (use {', '.join(TOLERATION_FIELDS)})"
        )
        for i, toleration in enumerate(group.tolerations)
        for key in toleration
        if key not in TOLERATION_FIELDS
    ]
    return problems + check_tolerations(group.tolerations, here)


def _affinity_problems(group: ResourceGroup, path: str) -> list[Problem]:
    here = join_path(path, "affinity")
    if not group.affinity:
        return []
    try:
        affinity = json.loads(group.affinity)
    except json.JSONDecodeError as err:
        return [
            Problem(here, f"is not JSON ({err.msg} at character {err.pos}); write the pod's affinity as JSON")
        ]
    if not isinstance(affinity, Mapping):
        return [Problem(here, "must be a JSON object such as '{\"nodeAffinity\": {...}}'")]
    return check_affinity(affinity, here)


def group_problems(group: ResourceGroup, path: str) -> list[Problem]:
    """What in one resource group (at ``path``) Volcano would skip or never match."""
    return [
        *_object_problems(group, path),
        *_toleration_problems(group, path),
        *label_problems(group.labels, join_path(path, "labels")),
        *_affinity_problems(group, path),
    ]


def load_admission_conf(text: str) -> AdmissionConf:
    """Parse a ``volcano-admission.conf``; raise AdmissionConfError naming every bad field and its fix.

    A file with nothing but comments (Volcano's chart ships one) is a conf without groups.
    """
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise AdmissionConfError(
            [Problem("", f"not valid YAML ({_yaml_error(err)}); fix the syntax")]
        ) from None
    if raw is None:
        return AdmissionConf()
    if not isinstance(raw, Mapping):
        return _refuse(
            Problem("", f"expected a mapping with '{RESOURCE_GROUPS_FIELD}:', got {type(raw).__name__}")
        )
    if raw.get(RESOURCE_GROUPS_FIELD) is None and RESOURCE_GROUPS_FIELD in raw:
        raw = {key: value for key, value in raw.items() if key != RESOURCE_GROUPS_FIELD}
    try:
        conf = AdmissionConf.model_validate(raw)
    except ValidationError as err:
        raise AdmissionConfError(from_validation_error(err)) from None
    problems = [
        problem
        for i, group in enumerate(conf.resource_groups)
        for problem in group_problems(group, join_path(RESOURCE_GROUPS_FIELD, i))
    ]
    if problems:
        raise AdmissionConfError(problems)
    return conf


def _yaml_error(err: yaml.YAMLError) -> str:
    # One line, as a refusal is logged and printed by ``validate``: where, and what the parser saw.
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else str(problem)


def _refuse(problem: Problem) -> AdmissionConf:
    raise AdmissionConfError([problem])
