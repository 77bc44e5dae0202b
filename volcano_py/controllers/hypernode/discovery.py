"""HyperNodes from node labels (Volcano's ``networkTopologyDiscovery`` source ``label``), without I/O.

The controller reads key ``volcano-controller.conf`` of ConfigMap
``volcano-system/volcano-controller-configmap``::

    networkTopologyDiscovery:
      - source: label
        enabled: true
        config:
          networkTopologyTypes:
            rack-topology:                       # at most 20 characters
              - nodeLabel: topology.example.com/spine    # highest tier first
              - nodeLabel: topology.example.com/rack
              - nodeLabel: kubernetes.io/hostname        # the nodes themselves: the last entry is skipped

Each label value becomes one HyperNode of its tier (the last label listed before the hostname is tier 1 and
has the nodes as members, the one above it is tier 2 and has the tier-1 HyperNodes as members, ...). A node
missing a label stops its chain there. Discovered HyperNodes carry ``volcano.sh/network-topology-source:
label`` and their ``<label>: <value>``; reconciling creates, updates and deletes exactly those, never a
HyperNode written by hand. Names are Volcano's ``hypernode-<type>-tier<n>-<suffix>``; where Volcano draws a
random suffix we hash the label and value, so the same topology gets the same names after a restart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from volcano_py.api import constants as c
from volcano_py.api.bodies.hypernode import (
    exact_members,
    hypernode_body,
    hypernode_members,
    same_hypernode_spec,
    with_hypernode_spec,
)
from volcano_py.api.goregexp import GoRegexpError, compile_go
from volcano_py.api.objects import label_of, labels_of, name_of
from volcano_py.api.topology import MemberType

JSON = dict[str, Any]
LABEL_SOURCE = "label"
MAX_TYPE_NAME = 20


@dataclass(frozen=True, slots=True)
class LabelDiscovery:
    """Per topology type, its labels from tier 1 upwards (the hostname entry already dropped)."""

    types: Mapping[str, tuple[str, ...]]


@dataclass(slots=True)
class DiscoveryConfig:
    label: LabelDiscovery | None = None
    problems: list[str] = field(default_factory=list)  # what was refused, with the fix


def parse_config(text: str | None) -> DiscoveryConfig:
    """The label source's settings from the ConfigMap's ``volcano-controller.conf``; problems say what was
    ignored and why (a source we cannot run, a malformed type)."""
    out = DiscoveryConfig()
    if not text:
        return out
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        out.problems.append(f"{c.CONTROLLER_CONFIG_KEY} is not valid YAML ({err}); fix the ConfigMap")
        return out
    sources = doc.get("networkTopologyDiscovery") if isinstance(doc, dict) else None
    if not isinstance(sources, list):
        return out
    for i, source in enumerate(sources):
        if not isinstance(source, dict) or not source.get("enabled"):
            continue
        name = source.get("source")
        if name != LABEL_SOURCE:
            out.problems.append(
                f"networkTopologyDiscovery[{i}].source {name!r} is not supported by volcano-py "
                "(only 'label' discovers HyperNodes here; disable it or describe the topology with "
                "node labels)"
            )
            continue
        types = ((source.get("config") or {}).get("networkTopologyTypes")) or {}
        parsed: dict[str, tuple[str, ...]] = {}
        for type_name, entries in types.items() if isinstance(types, dict) else ():
            labels = [str(e.get("nodeLabel", "")) for e in entries or () if isinstance(e, dict)]
            where = f"networkTopologyDiscovery[{i}].config.networkTopologyTypes.{type_name}"
            if len(str(type_name)) > MAX_TYPE_NAME:
                out.problems.append(
                    f"{where}: the name is longer than {MAX_TYPE_NAME} characters (shorten it)"
                )
            elif len(set(labels)) != len(labels) or not all(labels):
                out.problems.append(f"{where}: labels repeat or are empty (list each nodeLabel once)")
            elif len(labels) < 2:
                out.problems.append(f"{where}: needs a topology label above the hostname label (add one)")
            else:
                # Listed top-down and ending with the hostname label, which names the nodes themselves.
                parsed[str(type_name)] = tuple(reversed(labels[:-1]))
        out.label = LabelDiscovery(parsed)
    return out


def _clean(text: str) -> str:
    return "".join(ch.lower() if ch.isalpha() else ch if ch.isdigit() or ch in ".-" else "-" for ch in text)


def hypernode_name(type_name: str, tier: int, label: str, value: str) -> str:
    suffix = hashlib.sha256(f"{label}={value}".encode()).hexdigest()[:5]
    return f"hypernode-{_clean(type_name)}-tier{tier}-{suffix}"


def discover(nodes: Iterable[Mapping[str, Any]], config: LabelDiscovery,
             existing: Iterable[Mapping[str, Any]] = ()) -> list[JSON]:  # fmt: skip
    """The HyperNodes the node labels describe, as API objects sorted by name. ``existing`` discovered
    HyperNodes keep their names (one made by Volcano, with its random suffix, is adopted, not replaced)."""
    names_in_use: dict[tuple[str, str], str] = {}
    for hn in sorted(existing, key=name_of):
        labels = labels_of(hn)
        if labels.get(c.NETWORK_TOPOLOGY_SOURCE_KEY) != LABEL_SOURCE:
            continue
        for key, value in labels.items():
            if key != c.NETWORK_TOPOLOGY_SOURCE_KEY:
                names_in_use.setdefault((key, value), name_of(hn))
    # HyperNode name -> (its tier, the label it stands for, that label's value)
    found: dict[str, tuple[int, str, str]] = {}
    members: dict[str, set[str]] = {}
    by_label: dict[tuple[str, str], str] = {}
    for node in sorted(nodes, key=name_of):
        labels = labels_of(node)
        for type_name in sorted(config.types):
            member = name_of(node)
            for tier, key in enumerate(config.types[type_name], start=1):
                if key not in labels:
                    break
                value = str(labels[key])
                name = by_label.get((key, value)) or names_in_use.get((key, value))
                name = name or hypernode_name(type_name, tier, key, value)
                by_label[(key, value)] = name
                if name not in found:
                    found[name] = (tier, key, value)
                    members[name] = set()
                members[name].add(member)
                member = name
    out = []
    for name in sorted(found):
        tier, key, value = found[name]
        kind = MemberType.NODE if tier == 1 else MemberType.HYPERNODE
        labels = {c.NETWORK_TOPOLOGY_SOURCE_KEY: LABEL_SOURCE, key: value}
        out.append(hypernode_body(name, labels, tier, key, exact_members(kind, sorted(members[name]))))
    return out


@dataclass(slots=True)
class Reconcile:
    create: list[JSON] = field(default_factory=list)
    update: list[JSON] = field(default_factory=list)  # existing object with the discovered spec and labels
    delete: list[str] = field(default_factory=list)


def reconcile(discovered: Iterable[JSON], existing: Iterable[Mapping[str, Any]]) -> Reconcile:
    """What to write so the label-sourced HyperNodes are exactly ``discovered``; others are left alone."""
    mine = {name_of(h): h for h in existing if label_of(h, c.NETWORK_TOPOLOGY_SOURCE_KEY) == LABEL_SOURCE}
    out = Reconcile()
    for want in discovered:
        have = mine.pop(name_of(want), None)
        if have is None:
            out.create.append(want)
            continue
        labels = {**labels_of(have), **labels_of(want)}
        if not same_hypernode_spec(have, want) or labels != labels_of(have):
            out.update.append(with_hypernode_spec(have, labels, want))
    out.delete = sorted(mine)
    return out


def _selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    wanted = selector.get("matchLabels") or {}
    if any(labels.get(k) != v for k, v in wanted.items()):
        return False
    for req in selector.get("matchExpressions") or ():
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or ()
        ok = {
            "In": labels.get(key) in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(str(op), False)
        if not ok:
            return False
    return True


def member_count(hypernode: Mapping[str, Any], nodes: Mapping[str, Mapping[str, str]]) -> int:
    """``status.nodeCount`` as Volcano's HyperNode controller keeps it: the distinct direct members (a
    HyperNode member counts once; node selectors count the nodes they match now)."""
    members: set[str] = set()
    for member in hypernode_members(hypernode):
        selector = member.get("selector") or {}
        exact = (selector.get("exactMatch") or {}).get("name")
        pattern = (selector.get("regexMatch") or {}).get("pattern")
        if exact:
            members.add(str(exact))
        elif pattern:
            try:
                compiled = compile_go(str(pattern))
            except GoRegexpError:
                continue  # admission refuses it; an old object with one counts nothing
            members.update(name for name in nodes if compiled.match_string(name))
        elif selector.get("labelMatch") is not None:
            members.update(name for name, labels in nodes.items() if _selects(selector["labelMatch"], labels))
    return len(members)
