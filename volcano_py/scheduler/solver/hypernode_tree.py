"""The HyperNode tree: which nodes share a network domain, and how far apart two nodes are.

Volcano's ``topology.volcano.sh/v1alpha1`` HyperNode groups nodes (or other HyperNodes) into a network
domain with a ``tier``: tier 1 is the closest (a rack, an NVLink island), higher tiers are wider (a spine,
a pod). Members are picked by ``exactMatch`` (a name), ``regexMatch`` (a pattern over node names) or
``labelMatch`` (a label selector; Node members only). Top-tier HyperNodes hang under a virtual root whose
tier is one more than the highest real tier, so "anywhere in the cluster" is a domain like any other.

A PodGroup's ``networkTopology`` (mode ``hard``/``soft`` with ``highestTierAllowed`` or
``highestTierName``) is the constraint the solver reads against this tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import ValidationError

from volcano_py.api.bodies.hypernode import hypernode_for_model, hypernode_spec_problem
from volcano_py.api.goregexp import GoRegexpError, compile_go
from volcano_py.api.meta import LabelSelector, NetworkTopologyMode
from volcano_py.api.objects import name_of
from volcano_py.api.problems import from_validation_error, join_path
from volcano_py.api.topology import HyperNode, MemberSelector, MemberSpec, MemberType

ROOT: Final = "<cluster>"


class TopologyError(ValueError):
    """A HyperNode set or a networkTopology spec that cannot be used as written."""


@dataclass(frozen=True, slots=True)
class NetworkTopology:
    """A PodGroup's ``spec.networkTopology``; Volcano's default mode is ``hard``."""

    mode: NetworkTopologyMode = NetworkTopologyMode.HARD
    highest_tier_allowed: int | None = None
    highest_tier_name: str | None = None

    def __post_init__(self) -> None:
        if self.highest_tier_allowed is not None and self.highest_tier_name:
            raise TopologyError("networkTopology: set either highestTierAllowed or highestTierName, not both")
        if self.highest_tier_allowed is not None and self.highest_tier_allowed < 0:
            raise TopologyError(
                f"networkTopology.highestTierAllowed is {self.highest_tier_allowed}; it must be >= 0"
            )
        if (
            self.mode is NetworkTopologyMode.HARD
            and self.highest_tier_allowed is None
            and not self.highest_tier_name
        ):
            raise TopologyError(
                "networkTopology: mode 'hard' needs a tier boundary; set highestTierAllowed (e.g. 1) "
                "or highestTierName (e.g. 'rack')"
            )

    @classmethod
    def parse(cls, spec: Mapping[str, object]) -> NetworkTopology:
        """From the YAML/JSON shape: ``{"mode": "hard", "highestTierAllowed": 1}``."""
        raw_mode = spec.get("mode", "hard")
        try:
            mode = NetworkTopologyMode(str(raw_mode))
        except ValueError:
            raise TopologyError(f"networkTopology.mode is {raw_mode!r}; use 'hard' or 'soft'") from None
        tier = spec.get("highestTierAllowed")
        if tier is not None and (not isinstance(tier, int) or isinstance(tier, bool)):
            raise TopologyError(f"networkTopology.highestTierAllowed is {tier!r}; it must be an integer")
        name = spec.get("highestTierName")
        if name is not None and not isinstance(name, str):
            raise TopologyError(f"networkTopology.highestTierName is {name!r}; it must be a string")
        return cls(mode=mode, highest_tier_allowed=tier, highest_tier_name=name or None)


def hypernodes_from_objects(objects: Iterable[Mapping[str, Any]]) -> list[HyperNode]:
    """HyperNode API objects (plain dicts, as the API server and the snapshot hold them) read through the
    api model; a bad object raises TopologyError naming the HyperNode and the field."""
    out: list[HyperNode] = []
    for obj in objects:
        name = name_of(obj)
        problem = hypernode_spec_problem(obj)
        if problem:
            raise TopologyError(f"HyperNode {name}: {problem}")
        try:
            out.append(HyperNode.model_validate(hypernode_for_model(obj)))
        except ValidationError as err:
            raise TopologyError(f"HyperNode {name}: {_field_error(err)}") from None
    return out


def _field_error(err: ValidationError) -> str:
    error = err.errors()[0]
    path = join_path(*error["loc"])
    value = error.get("input")
    if error["loc"][-1:] == ("type",) and error["type"] == "enum":  # a member's type
        return f"{path} is {value!r}; use Node or HyperNode"
    if error["type"] in ("int_type", "int_parsing", "int_from_float"):
        return f"{path} is {value!r}; it must be an integer"
    return str(from_validation_error(err)[0])


def _selector_kinds(selector: MemberSelector) -> list[str]:
    out = []
    if selector.exact_match is not None:
        out.append("exactMatch")
    if selector.regex_match is not None:
        out.append("regexMatch")
    if selector.label_match is not None:
        out.append("labelMatch")
    return out


def matches_labels(selector: LabelSelector, labels: Mapping[str, str]) -> bool:
    try:
        return selector.matches(labels)
    except ValueError as err:
        raise TopologyError(f"labelMatch.matchExpressions {err}") from None


@dataclass(slots=True)
class HyperNodeTree:
    """Resolved HyperNodes: parent links, tiers and the nodes under each, plus the virtual root."""

    tiers: dict[str, int]
    parent: dict[str, str]
    children: dict[str, list[str]]
    node_members: dict[str, list[str]]
    leaf_of_node: dict[str, str]
    tier_names: dict[str, int] = field(default_factory=dict)
    _nodes_cache: dict[str, frozenset[str]] = field(default_factory=dict)
    _leaf_index: dict[str, int] | None = None
    _tier_index: dict[int, tuple[list[int], list[str]]] = field(default_factory=dict)

    @property
    def root_tier(self) -> int:
        return max(self.tiers.values(), default=0) + 1

    def tier(self, hypernode: str) -> int:
        return self.root_tier if hypernode == ROOT else self.tiers[hypernode]

    def tier_of_name(self, name: str) -> int | None:
        return self.tier_names.get(name)

    def at_tier(self, tier: int) -> list[str]:
        """The HyperNodes of one tier, by name; the virtual root is the only member of the root tier."""
        if tier >= self.root_tier:
            return [ROOT]
        return sorted(name for name, t in self.tiers.items() if t == tier)

    def tier_levels(self) -> list[int]:
        return sorted(set(self.tiers.values()))

    def nodes(self, hypernode: str) -> frozenset[str]:
        """Every node under ``hypernode``, through child HyperNodes; ROOT: every node in some HyperNode."""
        cached = self._nodes_cache.get(hypernode)
        if cached is not None:
            return cached
        if hypernode == ROOT:
            out = frozenset(self.leaf_of_node)
        else:
            acc: set[str] = set(self.node_members.get(hypernode, ()))
            for child in self.children.get(hypernode, ()):
                acc |= self.nodes(child)
            out = frozenset(acc)
        self._nodes_cache[hypernode] = out
        return out

    def leaf_order(self) -> list[str]:
        """Every HyperNode by name; positions in this list are the leaf indices below."""
        return sorted(self.tiers)

    def leaf_index(self) -> dict[str, int]:
        """Node name -> index (in ``leaf_order``) of the lowest HyperNode holding it; built once per tree."""
        if self._leaf_index is None:
            position = {name: i for i, name in enumerate(self.leaf_order())}
            self._leaf_index = {node: position[leaf] for node, leaf in self.leaf_of_node.items()}
        return self._leaf_index

    def tier_index(self, tier: int) -> tuple[list[int], list[str]]:
        """Per leaf index, its HyperNode's index at ``tier`` (-1 when none), and those HyperNodes' names."""
        cached = self._tier_index.get(tier)
        if cached is None:
            names = self.at_tier(tier)
            position = {name: i for i, name in enumerate(names)}
            per_leaf = []
            for leaf in self.leaf_order():
                cursor: str | None = leaf
                while cursor is not None and self.tiers[cursor] < tier:
                    cursor = self.parent.get(cursor)
                found = cursor is not None and self.tiers[cursor] == tier
                per_leaf.append(position[cursor] if found and cursor is not None else -1)
            cached = (per_leaf, names)
            self._tier_index[tier] = cached
        return cached

    def ancestors(self, node: str) -> list[str]:
        """The HyperNodes holding ``node``, lowest tier first, ending with ROOT."""
        chain: list[str] = []
        current = self.leaf_of_node.get(node)
        while current is not None:
            chain.append(current)
            current = self.parent.get(current)
        chain.append(ROOT)
        return chain

    def enclosing(self, nodes: Iterable[str]) -> str:
        """The lowest HyperNode that holds all of ``nodes`` (ROOT when they span top-tier HyperNodes)."""
        common: list[str] | None = None
        for node in nodes:
            chain = self.ancestors(node)
            if common is None:
                common = chain
            else:
                members = set(chain)
                common = [h for h in common if h in members]
        return common[0] if common else ROOT


def _member_nodes(hn: HyperNode, member: MemberSpec, nodes: Mapping[str, Mapping[str, str]]) -> list[str]:
    sel = member.selector
    if sel.exact_match is not None:
        return [sel.exact_match.name] if sel.exact_match.name in nodes else []
    if sel.regex_match is not None:
        pattern = sel.regex_match.pattern
        try:
            compiled = compile_go(pattern)
        except GoRegexpError as err:
            raise TopologyError(
                f"HyperNode {hn.name}: regexMatch.pattern {pattern!r} "
                f"is not a valid regular expression ({err.go_error}; {err.advice})"
            ) from None
        return sorted(name for name in nodes if compiled.match_string(name))
    label_match = sel.label_match or LabelSelector()
    return sorted(name for name, labels in nodes.items() if matches_labels(label_match, labels))


def _check_member(hn: HyperNode, index: int, member: MemberSpec) -> None:
    kinds = _selector_kinds(member.selector)
    where = f"HyperNode {hn.name}: spec.members[{index}].selector"
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none"
        raise TopologyError(
            f"{where} must set exactly one of exactMatch, regexMatch or labelMatch (found: {found})"
        )
    if member.type is MemberType.HYPERNODE and kinds[0] != "exactMatch":
        raise TopologyError(
            f"{where}: a HyperNode member is named with exactMatch; {kinds[0]} selects Nodes only"
        )


def build_tree(hypernodes: Sequence[HyperNode], nodes: Mapping[str, Mapping[str, str]]) -> HyperNodeTree:
    """Resolve HyperNode members against the cluster's nodes (name -> labels) into a tree.

    Raises TopologyError naming the HyperNode when the set is not a tree: a HyperNode listed by two parents,
    a cycle, a child whose tier is not below its parent's, or a node claimed by two unrelated HyperNodes.
    """
    tiers: dict[str, int] = {}
    tier_names: dict[str, int] = {}
    for hn in hypernodes:
        tier, tier_name = hn.spec.tier, hn.spec.tier_name
        if hn.name in tiers:
            raise TopologyError(f"HyperNode {hn.name} is defined twice")
        if tier < 0:
            raise TopologyError(f"HyperNode {hn.name}: spec.tier is {tier}; it must be >= 0")
        tiers[hn.name] = tier
        if tier_name:
            known = tier_names.setdefault(tier_name, tier)
            if known != tier:
                raise TopologyError(
                    f"HyperNode {hn.name}: tierName {tier_name!r} is tier {tier} here "
                    f"but tier {known} elsewhere"
                )
    parent: dict[str, str] = {}
    children: dict[str, list[str]] = {name: [] for name in tiers}
    node_members: dict[str, list[str]] = {name: [] for name in tiers}
    for hn in hypernodes:
        for index, member in enumerate(hn.spec.members):
            _check_member(hn, index, member)
            if member.type is MemberType.HYPERNODE:
                exact = member.selector.exact_match
                child = exact.name if exact is not None else ""
                if child not in tiers:
                    continue  # Volcano tolerates a member that does not exist yet; it joins when created.
                if child in parent and parent[child] != hn.name:
                    raise TopologyError(
                        f"HyperNode {child} is a member of both {parent[child]} and {hn.name}"
                    )
                if tiers[child] >= hn.spec.tier:
                    raise TopologyError(
                        f"HyperNode {hn.name} (tier {hn.spec.tier}) lists {child} (tier {tiers[child]}) "
                        "as a member; a member HyperNode must have a lower tier"
                    )
                parent[child] = hn.name
                children[hn.name].append(child)
            else:
                node_members[hn.name].extend(_member_nodes(hn, member, nodes))
    leaf_of_node: dict[str, str] = {}
    for name in sorted(tiers, key=lambda n: (tiers[n], n)):
        for node in node_members[name]:
            previous = leaf_of_node.get(node)
            if previous is None:
                leaf_of_node[node] = name
                continue
            if previous == name:
                continue
            # A node listed again by an ancestor of its leaf is redundant, not a conflict.
            cursor: str | None = previous
            while cursor is not None and cursor != name:
                cursor = parent.get(cursor)
            if cursor is None:
                raise TopologyError(f"node {node} is a member of both HyperNode {previous} and {name}")
    return HyperNodeTree(
        tiers=tiers,
        parent=parent,
        children=children,
        node_members={k: sorted(set(v)) for k, v in node_members.items()},
        leaf_of_node=leaf_of_node,
        tier_names=tier_names,
    )


def resolve_highest_tier(topology: NetworkTopology, tree: HyperNodeTree) -> int | None:
    """The numeric tier bound of a constraint, or None when highestTierName names no tier in the tree."""
    if topology.highest_tier_allowed is not None:
        return topology.highest_tier_allowed
    if topology.highest_tier_name:
        return tree.tier_of_name(topology.highest_tier_name)
    return None
