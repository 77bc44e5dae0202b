"""resource-strategy-fit: per-resource MostAllocated / LeastAllocated node scores, and ``sra`` (scarce
resource avoidance: pods that do not ask for a scarce resource keep off the nodes that have it).

Arguments (Volcano's):

* ``resourceStrategyFitWeight`` (default 10): the score is sum(resource score) / sum(weights) x 100 x this;
* ``resources``: ``{<name or prefix*>: {type: MostAllocated|LeastAllocated, weight: n}}`` (default cpu and
  memory, LeastAllocated, weight 1); a resource the pod asks for and no entry names is not scored. A resource
  scores (used + request) / allocatable x weight (MostAllocated) or its complement (LeastAllocated); a node
  where some scored resource would overflow scores 0;
* ``sra``: ``{enable, resources: "a,b", weight, resourceWeight: {a: n}}``: a node scores
  (1 - sum of the weights of the listed resources it has / sum of all their weights) x 100 x ``weight``,
  and 0 when it lacks a resource the pod asks for;
* ``proportional`` with ``enable: true`` is refused (its per-GPU cpu/memory reservation is not implemented).

Volcano's pod-level override (annotations ``volcano.sh/resource-strategy-scoring-type`` and ``-weight``) is
not read here: such pods are scored by the conf's ``resources``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from volcano_py.resources import PODS

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.extension import FloatArray, IntArray
from ..framework.session import Session
from . import scoring

DEFAULT_WEIGHT = 10


class Strategy(enum.Enum):
    MOST = "MostAllocated"
    LEAST = "LeastAllocated"


@dataclass(frozen=True, slots=True)
class ResourceRule:
    strategy: Strategy
    weight: int


def _mapping(arguments: Arguments, key: str) -> Mapping[str, Any]:
    value = arguments.values.get(key) or {}
    if not isinstance(value, Mapping):
        raise ConfError(f"{arguments.owner}: argument {key!r} must be a mapping, got {value!r}")
    return value


def _int(owner: str, where: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConfError(f"{owner}: {where} must be an integer >= {minimum}, got {value!r}")
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfError(f"{owner}: {where} must be an integer >= {minimum}, got {value!r}") from None
    if number < minimum:
        raise ConfError(f"{owner}: {where} must be an integer >= {minimum}, got {value!r}")
    return number


def _rules(arguments: Arguments) -> dict[str, ResourceRule]:
    raw = _mapping(arguments, "resources")
    if not raw:
        return {"cpu": ResourceRule(Strategy.LEAST, 1), "memory": ResourceRule(Strategy.LEAST, 1)}
    rules = {}
    for name, spec in raw.items():
        where = f"resources[{name}]"
        if "*" in name and (name == "*" or not name.endswith("*") or name.count("*") != 1):
            raise ConfError(f"{arguments.owner}: {where}: a wildcard must end a prefix, as in 'nvidia.com/*'")
        if not isinstance(spec, Mapping):
            raise ConfError(f"{arguments.owner}: {where} must be {{type, weight}}, got {spec!r}")
        unknown = sorted(set(spec) - {"type", "weight"})
        if unknown:
            raise ConfError(
                f"{arguments.owner}: {where}: unknown key(s) {', '.join(unknown)}; use type, weight"
            )
        try:
            strategy = Strategy(spec.get("type", Strategy.LEAST.value))
        except ValueError:
            raise ConfError(
                f"{arguments.owner}: {where}.type must be MostAllocated or LeastAllocated, "
                f"got {spec.get('type')!r}"
            ) from None
        rules[str(name)] = ResourceRule(
            strategy, _int(arguments.owner, f"{where}.weight", spec.get("weight", 1), 1)
        )
    return rules


def rule_for(name: str, rules: Mapping[str, ResourceRule]) -> ResourceRule | None:
    """The exact entry, else the one with the longest matching ``prefix*``."""
    if name in rules:
        return rules[name]
    best: tuple[int, ResourceRule] | None = None
    for key, rule in rules.items():
        prefix = key[:-1] if key.endswith("*") else None
        if prefix is not None and name.startswith(prefix) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), rule)
    return best[1] if best else None


class ResourceStrategyFitPlugin:
    name = "resource-strategy-fit"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"resourceStrategyFitWeight", "resources", "sra", "proportional"})
        self.weight = arguments.get_int("resourceStrategyFitWeight", DEFAULT_WEIGHT, minimum=0)
        self.rules = _rules(arguments)
        proportional = _mapping(arguments, "proportional")
        if proportional.get("enable"):
            raise ConfError(
                f"{arguments.owner}: proportional.enable: true is not supported: reserving cpu/memory per "
                "GPU is not implemented; remove it"
            )
        sra = _mapping(arguments, "sra")
        unknown = sorted(set(sra) - {"enable", "resources", "weight", "resourceWeight"})
        if unknown:
            raise ConfError(f"{arguments.owner}: sra: unknown key(s) {', '.join(unknown)}")
        self.sra_weight = 0
        self.sra_resources: dict[str, int] = {}
        if sra.get("enable"):
            self.sra_weight = _int(arguments.owner, "sra.weight", sra.get("weight", 1), 0)
            weights = sra.get("resourceWeight") or {}
            for name in str(sra.get("resources") or "").split(","):
                if name.strip():
                    self.sra_resources[name.strip()] = _int(
                        arguments.owner,
                        f"sra.resourceWeight[{name.strip()}]",
                        weights.get(name.strip(), 1),
                        0,
                    )
        self._sra_cache: dict[tuple[int, ...], FloatArray] = {}

    def on_session_open(self, ssn: Session) -> None:
        self._sra_cache = {}

    def on_session_close(self, ssn: Session) -> None:
        self._sra_cache = {}

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        table = ssn.table
        score: FloatArray = np.zeros(len(rows), dtype=np.float64)
        asked = [int(c) for c in klass.asked if table.names[int(c)] != PODS]
        if self.weight:
            total = np.zeros(len(rows), dtype=np.float64)
            overflow = np.zeros(len(rows), dtype=np.bool_)
            weights = 0
            for column in asked:
                rule = rule_for(table.names[column], self.rules)
                if rule is None:
                    continue
                alloc = table.allocatable[rows, column].astype(np.float64)
                used = table.used[rows, column] + (extra + 1) * klass.vec[column]
                overflow |= used > alloc
                share = np.divide(used, alloc, out=np.zeros_like(alloc), where=alloc > 0)
                part = share if rule.strategy is Strategy.MOST else np.where(alloc > 0, 1.0 - share, 0.0)
                total += part * rule.weight
                weights += rule.weight
            if weights:
                total = np.where(overflow, 0.0, total / weights)
                score += total * scoring.MAX_NODE_SCORE * self.weight
        if self.sra_weight and self.sra_resources:
            score += self._sra(ssn, klass, asked)[rows]
        return score

    def _sra(self, ssn: Session, klass: TaskClass, asked: list[int]) -> FloatArray:
        key = tuple(asked)
        cached = self._sra_cache.get(key)
        if cached is not None:
            return cached
        table = ssn.table
        n = len(table.node_names)
        held = np.zeros(n, dtype=np.float64)
        weight_sum = sum(self.sra_resources.values())
        for name, weight in self.sra_resources.items():
            column = table.index.get(name)
            if column is not None:
                held += np.where(table.allocatable[:, column] > 0, weight, 0)
        lacking = np.zeros(n, dtype=np.bool_)
        for column in asked:
            lacking |= table.allocatable[:, column] == 0
        share = 1.0 - held / weight_sum if weight_sum else held
        result: FloatArray = np.where(lacking, 0.0, share * scoring.MAX_NODE_SCORE * self.sra_weight)
        self._sra_cache[key] = result
        return result
