"""Kubernetes matching rules, pure: label selectors, node selector terms, taints and tolerations.

``NodeLabels`` evaluates a selector over all nodes at once by encoding each label key's values as small
integers, so a nodeSelector over 5,000 nodes is a handful of numpy comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
MISSING = -1


class SelectorError(ValueError):
    """A selector operator Kubernetes does not define."""


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return not key or key == taint.get("key")
    return key == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated(
    taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]], effects: frozenset[str]
) -> list[Mapping[str, Any]]:
    return [
        t for t in taints if t.get("effect") in effects and not any(tolerates(tol, t) for tol in tolerations)
    ]


def taint_text(taint: Mapping[str, Any]) -> str:
    value = taint.get("value")
    return f"{taint.get('key')}{'=' + value if value else ''}:{taint.get('effect')}"


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A ``metav1.LabelSelector``; an empty selector matches everything, a missing one nothing."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if op == "In":
            ok = present and labels[key] in values
        elif op == "NotIn":
            ok = not present or labels[key] not in values
        elif op == "Exists":
            ok = present
        elif op == "DoesNotExist":
            ok = not present
        else:
            raise SelectorError(f"label selector operator {op!r} is not In, NotIn, Exists or DoesNotExist")
        if not ok:
            return False
    return True


class NodeLabels:
    """Node labels encoded per key as integer codes, for vectorised selectors over all nodes."""

    def __init__(self, labels: Sequence[Mapping[str, str]], names: Sequence[str]) -> None:
        self._labels = labels
        self._names = list(names)
        self._codes: dict[str, tuple[npt.NDArray[np.int32], dict[str, int]]] = {}

    def _column(self, key: str) -> tuple[npt.NDArray[np.int32], dict[str, int]]:
        column = self._codes.get(key)
        if column is None:
            values: dict[str, int] = {}
            codes = np.fromiter(
                (values.setdefault(lab[key], len(values)) if key in lab else MISSING for lab in self._labels),
                dtype=np.int32,
                count=len(self._labels),
            )
            column = self._codes[key] = (codes, values)
        return column

    def values_in(self, key: str, wanted: Sequence[str]) -> BoolArray:
        """Nodes whose label ``key`` has one of ``wanted``."""
        return self._in(key, wanted)

    def _in(self, key: str, wanted: Sequence[str]) -> BoolArray:
        codes, values = self._column(key)
        ids = [values[v] for v in wanted if v in values]
        return np.isin(codes, ids) if ids else np.zeros(len(codes), dtype=np.bool_)

    def _numeric(self, key: str, bound: str, greater: bool) -> BoolArray:
        codes, values = self._column(key)
        try:
            limit = int(bound)
        except ValueError:
            raise SelectorError(
                f"node selector Gt/Lt value {bound!r} for {key!r} is not an integer"
            ) from None
        table = np.full(len(values) + 1, False)
        for value, code in values.items():
            try:
                number = int(value)
            except ValueError:
                continue
            table[code] = number > limit if greater else number < limit
        result: BoolArray = table[codes]  # MISSING indexes the trailing False
        return result

    def equals(self, selector: Mapping[str, str]) -> BoolArray:
        ok = np.ones(len(self._labels), dtype=np.bool_)
        for key, value in selector.items():
            ok &= self._in(key, [value])
        return ok

    def term(self, term: Mapping[str, Any]) -> BoolArray:
        """A ``NodeSelectorTerm``: all of its expressions and fields must match."""
        ok = np.ones(len(self._labels), dtype=np.bool_)
        for expr in term.get("matchExpressions") or ():
            key, op, values = expr.get("key", ""), expr.get("operator"), list(expr.get("values") or [])
            codes, _ = self._column(key)
            if op == "In":
                ok &= self._in(key, values)
            elif op == "NotIn":
                ok &= ~self._in(key, values)
            elif op == "Exists":
                ok &= codes != MISSING
            elif op == "DoesNotExist":
                ok &= codes == MISSING
            elif op in ("Gt", "Lt"):
                ok &= self._numeric(key, values[0] if values else "", op == "Gt")
            else:
                raise SelectorError(
                    f"node selector operator {op!r} is not In, NotIn, Exists, DoesNotExist, Gt or Lt"
                )
        for expr in term.get("matchFields") or ():
            if expr.get("key") != "metadata.name":
                raise SelectorError(f"node selector field {expr.get('key')!r} is not metadata.name")
            names = np.array(self._names, dtype=object)
            hit = np.isin(names, list(expr.get("values") or []))
            ok &= hit if expr.get("operator") == "In" else ~hit
        return ok

    def terms(self, terms: Sequence[Mapping[str, Any]]) -> BoolArray:
        """Terms are ORed; no terms match no node (as Kubernetes reads an empty list)."""
        ok = np.zeros(len(self._labels), dtype=np.bool_)
        for term in terms:
            ok |= self.term(term)
        return ok
