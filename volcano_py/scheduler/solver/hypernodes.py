"""HyperNode API objects (plain dicts, as the API server and the snapshot hold them) to ``HyperNodeSpec``.

Field errors name the HyperNode and the path, so a bad object is reported, not skipped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from volcano_py.api.topology import MemberType
from volcano_py.scheduler.solver.hypernode_tree import (
    HyperNodeMember,
    HyperNodeSpec,
    LabelRequirement,
    MemberSelector,
    TopologyError,
)


def _selector_from(raw: Mapping[str, object], where: str) -> MemberSelector:
    exact = raw.get("exactMatch")
    regex = raw.get("regexMatch")
    labels = raw.get("labelMatch")
    name = exact.get("name") if isinstance(exact, Mapping) else None
    pattern = regex.get("pattern") if isinstance(regex, Mapping) else None
    match_labels: dict[str, str] | None = None
    expressions: list[LabelRequirement] = []
    if isinstance(labels, Mapping):
        match_labels = {str(k): str(v) for k, v in (labels.get("matchLabels") or {}).items()}
        for i, expr in enumerate(labels.get("matchExpressions") or ()):
            if not isinstance(expr, Mapping) or "key" not in expr or "operator" not in expr:
                raise TopologyError(f"{where}.labelMatch.matchExpressions[{i}] needs key and operator")
            expressions.append(
                LabelRequirement(str(expr["key"]), str(expr["operator"]), tuple(expr.get("values") or ()))
            )
    return MemberSelector(
        exact_name=str(name) if name else None,
        pattern=str(pattern) if pattern else None,
        match_labels=match_labels,
        match_expressions=tuple(expressions),
    )


def hypernodes_from_objects(objects: Iterable[Mapping[str, object]]) -> list[HyperNodeSpec]:
    """HyperNode API objects (plain dicts, as the API server returns them) to specs, naming bad fields."""
    out: list[HyperNodeSpec] = []
    for obj in objects:
        metadata = obj.get("metadata")
        spec = obj.get("spec")
        name = str(metadata.get("name", "")) if isinstance(metadata, Mapping) else ""
        if not isinstance(spec, Mapping):
            raise TopologyError(f"HyperNode {name}: spec is missing")
        tier = spec.get("tier")
        if isinstance(tier, str) and tier.isdigit():
            tier = int(tier)  # v1alpha1 once typed tier as a string
        if not isinstance(tier, int) or isinstance(tier, bool):
            raise TopologyError(f"HyperNode {name}: spec.tier is {tier!r}; it must be an integer")
        members: list[HyperNodeMember] = []
        for i, raw in enumerate(spec.get("members") or ()):
            where = f"HyperNode {name}: spec.members[{i}]"
            if not isinstance(raw, Mapping):
                raise TopologyError(f"{where} must be an object with type and selector")
            try:
                member_type = MemberType(raw.get("type", "Node"))
            except ValueError:
                raise TopologyError(f"{where}.type is {raw.get('type')!r}; use Node or HyperNode") from None
            selector = raw.get("selector")
            members.append(
                HyperNodeMember(
                    member_type, _selector_from(selector if isinstance(selector, Mapping) else {}, where)
                )
            )
        tier_name = spec.get("tierName")
        out.append(HyperNodeSpec(name, tier, tuple(members), str(tier_name) if tier_name else None))
    return out
