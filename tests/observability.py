"""What the Grafana dashboards and the alert rules ask Prometheus for, as (where, PromQL) pairs, and the
metric names a PromQL expression reads. Shared by the unit test of their shape and the scrape test that checks
each name is exported."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
DASHBOARDS = sorted((REPO / "deploy" / "grafana").glob("*.json"))
RULES = REPO / "deploy" / "prometheus" / "rules.yaml"

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
# by/without/on/ignoring/group_left/group_right take a list of label names, not metrics.
_LABEL_LIST = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
             "group_right", "inf", "nan"}  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """Metric names in ``expr``: identifiers left once strings, label matchers, ranges, grouping lists,
    function calls and keywords are taken out. Grafana's ``$variables`` sit in matchers or ranges."""
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _LABEL_LIST.sub(" ", text)
    names = set()
    for match in _IDENT.finditer(text):
        rest = text[match.end() :].lstrip()
        word = match.group(0)
        if rest.startswith("(") or word.lower() in _KEYWORDS:
            continue
        if match.start() > 0 and (text[match.start() - 1].isdigit() or text[match.start() - 1] == "."):
            continue  # the exponent or unit of a number (1e3)
        names.add(word)
    return names


def load_dashboards() -> dict[str, dict[str, Any]]:
    return {path.name: json.loads(path.read_text(encoding="utf-8")) for path in DASHBOARDS}


def load_rules() -> dict[str, Any]:
    rules: dict[str, Any] = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return rules


def queries() -> list[tuple[str, str]]:
    """Every PromQL of every dashboard panel and template variable, and of every alert rule."""
    out: list[tuple[str, str]] = []
    for name, board in load_dashboards().items():
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                out.append((f"{name}: panel {panel['title']!r} {target['refId']}", target["expr"]))
        for variable in board["templating"]["list"]:
            if variable["type"] == "query":
                query = variable["query"]["query"]
                inner = re.fullmatch(r"label_values\((.*),\s*\w+\)", query)
                out.append((f"{name}: variable ${variable['name']}", inner.group(1) if inner else query))
    for group in load_rules()["groups"]:
        for rule in group["rules"]:
            out.append((f"rules.yaml: {rule['alert']}", rule["expr"]))
    return out
