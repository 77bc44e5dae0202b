"""Object metadata and the small sub-objects several Volcano kinds share (owner references, label selectors,
conditions, network-topology limits), as Kubernetes and Volcano spell them.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final

from pydantic import Field, StrictBool, StrictInt

from volcano_py.api.common import Int64, Time, VolcanoModel, crd_default

# --- metadata -------------------------------------------------------------------------------------------


class OwnerReference(VolcanoModel):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: StrictBool | None = None
    block_owner_deletion: StrictBool | None = None


class ObjectMeta(VolcanoModel):
    """The parts of metav1.ObjectMeta we read; everything else the server sends is kept verbatim."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)


class KubeObject(VolcanoModel):
    """A top-level API object: its ``to_dict`` always carries ``apiVersion`` and ``kind``."""

    api_version: str
    kind: str
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    def to_dict(self) -> dict[str, Any]:
        return {"apiVersion": self.api_version, "kind": self.kind, **super().to_dict()}

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or ""


# metav1.LabelSelectorRequirement's operators (a node selector's add Gt and Lt).
LABEL_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


class LabelSelectorRequirement(VolcanoModel):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Raises ValueError for an operator a label selector does not have."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return labels.get(self.key) not in self.values
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        raise ValueError(f"operator {self.operator!r}; use {', '.join(LABEL_SELECTOR_OPERATORS)}")


class LabelSelector(VolcanoModel):
    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """metav1's rule: every matchLabels pair and every expression hold (an empty selector selects all)."""
        return all(labels.get(k) == v for k, v in self.match_labels.items()) and all(
            req.matches(labels) for req in self.match_expressions
        )


class Condition(VolcanoModel):
    """metav1.Condition, as used by HyperNode status."""

    type: str
    status: str
    observed_generation: Int64 | None = Field(default=None, ge=0)
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


# --- network topology (identical in batch.volcano.sh and scheduling.volcano.sh) --------------------------


class NetworkTopologyMode(StrEnum):
    HARD = "hard"
    SOFT = "soft"


class NetworkTopologySpec(VolcanoModel):
    """How far (in HyperNode tiers) the pods of a job or group may spread."""

    mode: NetworkTopologyMode = crd_default(NetworkTopologyMode.HARD)
    highest_tier_allowed: StrictInt | None = Field(default=None, ge=0)
    highest_tier_name: str | None = Field(default=None, max_length=253)
