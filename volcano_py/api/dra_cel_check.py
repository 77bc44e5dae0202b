"""The API server's compile-time verdict on a DRA CEL device selector, reproduced offline.

Kubernetes (v1.34, the version of our control plane) refuses a selector when it is longer than 10 KiB, when
it does not parse, when it does not type-check against the environment it declares (a ``device`` object with
``driver``, ``attributes`` and ``capacity``; the Kubernetes CEL libraries), when its result is neither
``bool`` nor the attribute values' unknown type, and when its estimated worst-case cost exceeds 1,000,000.
cel-python only parses, so the type checker and the cost estimator are ours, written over cel-python's parse
tree: the declarations, messages and cost model follow cel-go and Kubernetes' DRA compiler, so that
``volcano-py validate`` refuses what ``kubectl create`` would, in the words it would use.

Not reproduced (parsed by cel-go, not by cel-python, so refused here as syntax errors): optional field
selection ``a.?b`` / ``a[?b]`` and backquoted identifiers. Syntax errors are placed where cel-python stops,
in our words, not cel-go's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from celpy.celparser import CELParseError

from volcano_py.api.dra_cel_cost import estimated_cost
from volcano_py.api.dra_cel_env import ANY, BOOL
from volcano_py.api.dra_cel_tree import Builder, Syntax, display, location
from volcano_py.api.dra_cel_typecheck import Checker

# Limits of resource.k8s.io/v1: CELSelectorExpressionMaxLength, CELSelectorExpressionMaxCost.
MAX_LENGTH = 10 * 1024
MAX_COST = 1_000_000


@dataclass(frozen=True, slots=True)
class SelectorVerdict:
    """Why the API server refuses a selector: its error type (as kubectl prints it) and its detail."""

    kind: str  # "Invalid value", "Too long", "Forbidden"
    detail: str

    def api_text(self, expression: str) -> str:
        if self.kind == "Invalid value":
            return f'Invalid value: "{_go_quote(expression)}": {self.detail}'
        return f"{self.kind}: {self.detail}"


def _go_quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _parse(expression: str) -> Any:
    from volcano_py.api.dra_cel import _environment  # the same cached parser the evaluator uses

    return _environment().compile(expression)


@functools.lru_cache(maxsize=4096)
def check_selector(expression: str) -> SelectorVerdict | None:
    """The API server's objection to ``expression`` as a new DRA selector, or None when it accepts it."""
    if len(expression.encode()) > MAX_LENGTH:
        return SelectorVerdict("Too long", f"may not be more than {MAX_LENGTH} bytes")
    try:
        tree = _parse(expression)
    except CELParseError as err:
        line, column = getattr(err, "line", None), getattr(err, "column", None)
        pos = _offset(expression, line, column)
        what = "Syntax error: the expression does not parse from here"
        return SelectorVerdict("Invalid value", "compilation failed: " + display(expression, pos, what))
    try:
        root = Builder(expression).build(tree)
    except Syntax as err:
        return SelectorVerdict(
            "Invalid value", "compilation failed: " + display(expression, err.pos, err.message)
        )
    checker = Checker(expression)
    result = checker.check(root)
    if checker.errors:
        ordered = sorted(checker.errors, key=lambda e: location(expression, e[0]))
        shown = "\n".join(display(expression, pos, msg) for pos, msg in ordered[:100])
        return SelectorVerdict("Invalid value", "compilation failed: " + shown)
    if result != BOOL and result != ANY:
        return SelectorVerdict("Invalid value", f"must evaluate to bool or the unknown type, not {result}")
    if estimated_cost(root) > MAX_COST:
        return SelectorVerdict("Forbidden", "too complex, exceeds cost limit")
    return None


def _offset(text: str, line: int | None, column: int | None) -> int:
    if line is None or column is None:
        return len(text)
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + max(column - 1, 0)


def selector_cost(expression: str) -> int:
    """The worst-case cost the API server estimates for a selector that type-checks (for tests and tools)."""
    root = Builder(expression).build(_parse(expression))
    Checker(expression).check(root)
    return estimated_cost(root)


__all__ = ["MAX_COST", "MAX_LENGTH", "SelectorVerdict", "check_selector", "selector_cost"]
