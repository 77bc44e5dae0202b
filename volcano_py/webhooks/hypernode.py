"""HyperNode admission: Volcano's rules for a HyperNode's members (at least one, one selector each, a regex
that compiles), on create and update, for users' HyperNodes and the topology controller's alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.problems import Problem
from volcano_py.api.topology import HyperNode
from volcano_py.api.validation import parse_object, unknown_fields, validate_hypernode


def validate_hypernode_write(hypernode: Mapping[str, Any]) -> list[Problem]:
    model, problems = parse_object(hypernode)
    if not isinstance(model, HyperNode):
        return problems
    return unknown_fields(model) + validate_hypernode(model)
