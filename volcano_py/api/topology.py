"""``topology.volcano.sh/v1alpha1`` HyperNode: a named group of nodes (or of other HyperNodes) that share a
network tier, such as a rack switch (tier 1) or a spine (tier 2). Jobs with ``networkTopology`` are kept
within a HyperNode of at most their allowed tier.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field, StrictInt

from volcano_py.api import constants
from volcano_py.api.common import Int64, SubdomainName, VolcanoModel
from volcano_py.api.messages import VOLCANO_HYPERNODE_NO_SELECTOR, VOLCANO_HYPERNODE_SELECTORS
from volcano_py.api.meta import Condition, KubeObject, LabelSelector


class MemberType(StrEnum):
    NODE = "Node"
    HYPERNODE = "HyperNode"


class ExactMatch(VolcanoModel):
    # minLength in the CRD too, so the API server words an empty name as for Volcano's CRD.
    name: SubdomainName = Field(min_length=1, json_schema_extra={"minLength": 1})


class RegexMatch(VolcanoModel):
    pattern: str = Field(min_length=1)


class MemberSelector(VolcanoModel):
    """Exactly one of the three ways to pick members."""

    # The API server holds the one-of rule too, as Volcano's CRD does: a HyperNode stored while no webhook
    # runs cannot carry a selector that picks nothing or two ways at once.
    model_config = ConfigDict(
        **VolcanoModel.model_config,
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)",
                    "message": VOLCANO_HYPERNODE_NO_SELECTOR,
                },
                {
                    "rule": "(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0)"
                    " + (has(self.labelMatch) ? 1 : 0) <= 1",
                    "message": VOLCANO_HYPERNODE_SELECTORS,
                },
            ]
        },
    )

    exact_match: ExactMatch | None = None
    regex_match: RegexMatch | None = None
    label_match: LabelSelector | None = None


class MemberSpec(VolcanoModel):
    type: MemberType
    selector: MemberSelector = Field(default_factory=MemberSelector)


class HyperNodeSpec(VolcanoModel):
    tier: StrictInt = Field(ge=0)
    tier_name: str | None = Field(default=None, max_length=253)
    # The CRD refuses an empty list; the rule (api.rules.validate_hypernode) words it as Volcano does.
    members: list[MemberSpec] = Field(default_factory=list, json_schema_extra={"minItems": 1})


class HyperNodeStatus(VolcanoModel):
    conditions: list[Condition] = Field(default_factory=list)
    node_count: Int64 = Field(default=0, ge=0)


class HyperNode(KubeObject):
    """A cluster-scoped network-topology domain."""

    api_version: str = constants.TOPOLOGY_API_VERSION
    kind: str = constants.HYPERNODE_KIND
    spec: HyperNodeSpec = Field(default_factory=HyperNodeSpec)
    status: HyperNodeStatus | None = None
