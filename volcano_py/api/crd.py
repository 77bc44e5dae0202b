"""CustomResourceDefinitions generated from the models, so the API server and our code agree on every field.

pydantic's JSON schema is the starting point; it is rewritten into a Kubernetes *structural* schema: ``$ref``
inlined, ``Optional`` unions collapsed (we omit unset fields rather than send ``null``), titles dropped,
quantities as int-or-string, free-form maps as ``x-kubernetes-preserve-unknown-fields``, and only the
defaults Volcano's own CRDs declare (``crd_default``), so the server fills in what Volcano's would and nothing
more. Names, scope, short names, printer columns and the status subresource follow Volcano's CRDs.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

import yaml

from volcano_py.api import constants
from volcano_py.api.batch import Job
from volcano_py.api.bus import Command
from volcano_py.api.common import CRD_DEFAULT
from volcano_py.api.cron import CronJob
from volcano_py.api.flow import JobFlow, JobTemplate
from volcano_py.api.meta import KubeObject
from volcano_py.api.nodeinfo import Numatopology
from volcano_py.api.scheduling import PodGroup, Queue
from volcano_py.api.shard import NodeShard
from volcano_py.api.topology import HyperNode


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    name: str
    type: str
    json_path: str
    priority: int = 0


@dataclass(frozen=True, slots=True)
class CRDInfo:
    model: type[KubeObject]
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    status_subresource: bool = False
    columns: tuple[PrinterColumn, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def file_name(self) -> str:
        return f"{self.group}_{self.plural}.yaml"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


_AGE = PrinterColumn("AGE", "date", ".metadata.creationTimestamp")

CRDS: tuple[CRDInfo, ...] = (
    CRDInfo(
        model=Job,
        group=constants.BATCH_GROUP,
        version=constants.BATCH_VERSION,
        kind=constants.JOB_KIND,
        plural=constants.JOB_PLURAL,
        singular="job",
        namespaced=True,
        short_names=("vcjob", "vj"),
        status_subresource=True,
        columns=(
            PrinterColumn("STATUS", "string", ".status.state.phase"),
            PrinterColumn("minAvailable", "integer", ".status.minAvailable"),
            PrinterColumn("RUNNINGS", "integer", ".status.running"),
            _AGE,
            PrinterColumn("QUEUE", "string", ".spec.queue", priority=1),
        ),
    ),
    CRDInfo(
        model=PodGroup,
        group=constants.SCHEDULING_GROUP,
        version=constants.SCHEDULING_VERSION,
        kind=constants.PODGROUP_KIND,
        plural=constants.PODGROUP_PLURAL,
        singular="podgroup",
        namespaced=True,
        short_names=("pg", "podgroup-v1beta1"),
        # Volcano's PodGroup has no status subresource: the scheduler writes status with a plain update.
        status_subresource=False,
        columns=(
            PrinterColumn("STATUS", "string", ".status.phase"),
            PrinterColumn("minMember", "integer", ".spec.minMember"),
            PrinterColumn("RUNNINGS", "integer", ".status.running"),
            _AGE,
            PrinterColumn("QUEUE", "string", ".spec.queue", priority=1),
        ),
    ),
    CRDInfo(
        model=Queue,
        group=constants.SCHEDULING_GROUP,
        version=constants.SCHEDULING_VERSION,
        kind=constants.QUEUE_KIND,
        plural=constants.QUEUE_PLURAL,
        singular="queue",
        namespaced=False,
        short_names=("q", "queue-v1beta1"),
        status_subresource=True,
        columns=(PrinterColumn("PARENT", "string", ".spec.parent"),),
    ),
    CRDInfo(
        model=Command,
        group=constants.BUS_GROUP,
        version=constants.BUS_VERSION,
        kind=constants.COMMAND_KIND,
        plural=constants.COMMAND_PLURAL,
        singular="command",
        namespaced=True,
    ),
    CRDInfo(
        model=HyperNode,
        group=constants.TOPOLOGY_GROUP,
        version=constants.TOPOLOGY_VERSION,
        kind=constants.HYPERNODE_KIND,
        plural=constants.HYPERNODE_PLURAL,
        singular="hypernode",
        namespaced=False,
        short_names=("hn",),
        status_subresource=True,
        columns=(
            PrinterColumn("Tier", "string", ".spec.tier"),
            PrinterColumn("TierName", "string", ".spec.tierName"),
            PrinterColumn("NodeCount", "integer", ".status.nodeCount"),
            PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
        ),
    ),
    CRDInfo(
        model=Numatopology,
        group=constants.NODEINFO_GROUP,
        version=constants.NODEINFO_VERSION,
        kind=constants.NUMATOPOLOGY_KIND,
        plural=constants.NUMATOPOLOGY_PLURAL,
        singular="numatopology",
        namespaced=False,
        short_names=("numatopo",),
    ),
    CRDInfo(
        model=CronJob,
        group=constants.BATCH_GROUP,
        version=constants.BATCH_VERSION,
        kind=constants.CRONJOB_KIND,
        plural=constants.CRONJOB_PLURAL,
        singular="cronjob",
        namespaced=True,
        short_names=("cronvcjob", "cronvj"),
        status_subresource=True,
    ),
    CRDInfo(
        model=JobFlow,
        group=constants.FLOW_GROUP,
        version=constants.FLOW_VERSION,
        kind=constants.JOBFLOW_KIND,
        plural=constants.JOBFLOW_PLURAL,
        singular="jobflow",
        namespaced=True,
        short_names=("jf",),
        status_subresource=True,
        columns=(
            PrinterColumn("Status", "string", ".status.state.phase"),
            PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
        ),
    ),
    CRDInfo(
        model=JobTemplate,
        group=constants.FLOW_GROUP,
        version=constants.FLOW_VERSION,
        kind=constants.JOBTEMPLATE_KIND,
        plural=constants.JOBTEMPLATE_PLURAL,
        singular="jobtemplate",
        namespaced=True,
        short_names=("jt",),
        status_subresource=True,
    ),
    CRDInfo(
        model=NodeShard,
        group=constants.SHARD_GROUP,
        version=constants.SHARD_VERSION,
        kind=constants.NODESHARD_KIND,
        plural=constants.NODESHARD_PLURAL,
        singular="nodeshard",
        namespaced=False,
        short_names=("nsh",),
        # The scheduler writes status through the subresource; the controller's spec updates leave it alone.
        status_subresource=True,
        columns=(_AGE,),
    ),
)


def structural(node: Any, defs: dict[str, Any]) -> Any:
    """Rewrite one pydantic JSON-schema node into a structural OpenAPI v3 node."""
    if isinstance(node, list):
        return [structural(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    ref = node.pop("$ref", None)
    if ref is not None:
        target = defs[ref.rsplit("/", 1)[-1]]
        node = {**target, **node}
    if "anyOf" in node and not node.get("x-kubernetes-int-or-string"):
        branches = [b for b in node.pop("anyOf") if b != {"type": "null"}]
        if len(branches) != 1:
            raise ValueError(f"cannot express a union of {branches} in a structural schema")
        return structural({**branches[0], **node}, defs)
    keep_default = node.pop(CRD_DEFAULT, False)
    if not keep_default or node.get("default") is None:
        node.pop("default", None)
    node.pop("title", None)
    if "description" in node:
        # Docstrings use reStructuredText literals; `kubectl explain` reads better with single backticks.
        node["description"] = node["description"].replace("``", "`")
    if "enum" in node:
        # An enum's docstring would be repeated at every use; the values speak for themselves.
        node.pop("description", None)
    if node.get("additionalProperties") is True or node.get("additionalProperties") is False:
        node.pop("additionalProperties")
    if node.get("x-kubernetes-preserve-unknown-fields"):
        node.pop("additionalProperties", None)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: structural(sub, defs) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = structural(value, defs)
        elif key == "anyOf":
            out[key] = [structural(b, defs) for b in value]
        else:
            out[key] = value
    if "properties" in out and "type" not in out:
        out["type"] = "object"
    return out


@functools.cache
def openapi_schema(info: CRDInfo) -> dict[str, Any]:
    """The structural schema, computed once per kind; shared, so callers must not modify it."""
    raw = info.model.model_json_schema(by_alias=True, mode="validation")
    defs = raw.pop("$defs", {})
    schema: dict[str, Any] = structural(raw, defs)
    props = schema["properties"]
    # The server owns these three; their schemas are fixed by Kubernetes.
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {"type": "object"}
    schema.pop("required", None)
    return schema


def build_crd(info: CRDInfo) -> dict[str, Any]:
    """The full apiextensions.k8s.io/v1 CustomResourceDefinition for one kind."""
    version: dict[str, Any] = {
        "name": info.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": copy.deepcopy(openapi_schema(info))},
        "subresources": {"status": {}} if info.status_subresource else {},
    }
    if info.columns:
        version["additionalPrinterColumns"] = [
            {
                "name": c.name,
                "type": c.type,
                "jsonPath": c.json_path,
                **({"priority": c.priority} if c.priority else {}),
            }
            for c in info.columns
        ]
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": f"{info.kind}List",
        "plural": info.plural,
        "singular": info.singular,
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": info.name},
        "spec": {
            "group": info.group,
            "names": names,
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "versions": [version],
        },
    }


class _NoAliasDumper(yaml.SafeDumper):
    """Writes repeated sub-schemas out in full: anchors and aliases are legal YAML but unreadable here."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render_crd(info: CRDInfo) -> str:
    """The CRD as YAML text, byte-for-byte stable for a given set of models."""
    header = "# Generated by `volcano-py crds` from volcano_py/api; do not edit by hand.\n"
    body = yaml.dump(build_crd(info), Dumper=_NoAliasDumper, sort_keys=True, width=110, allow_unicode=True)
    return header + body


def crd_for(api_version: str, kind: str) -> CRDInfo | None:
    for info in CRDS:
        if info.api_version == api_version and info.kind == kind:
            return info
    return None
