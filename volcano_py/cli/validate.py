"""``volcano-py validate FILE...``: check manifests offline, as the CRD schemas and Volcano's admission would.

Exit 0 when every object is valid, 1 when any problem is found (one line each:
``FILE: Kind/namespace/name: field.path: what is wrong (how to fix)``), 2 when a file cannot be read.
Kinds that are not ours are skipped, except Pods, whose scheduling-relevant spec is checked.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api.validation import object_ref, validate_object


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate", help="check Volcano manifests (Job, PodGroup, Queue, Command, HyperNode, Pod) offline"
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories ('-' for stdin)")
    parser.set_defaults(func=run)


class _DuplicateKey(yaml.MarkedYAMLError):
    pass


class _StrictLoader(yaml.SafeLoader):
    """Refuses a key given twice in one mapping, which PyYAML would resolve silently to the last value."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _DuplicateKey(
                    problem=f"key {key!r} is given twice and only the last would count (keep one)",
                    problem_mark=key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _objects(doc: Any) -> list[Any]:
    """A document's objects: a ``kind: List`` (what ``kubectl get -o yaml`` prints) counts as its items."""
    if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        return list(doc["items"])
    return [doc]


def check_text(text: str, source: str) -> tuple[int, list[str]]:
    """(objects checked, problem lines) for one multi-document YAML text."""
    lines: list[str] = []
    try:
        documents = [obj for doc in yaml.load_all(text, Loader=_StrictLoader) for obj in _objects(doc)]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        fix = "" if problem.endswith(")") else " (fix the syntax)"
        return 0, [f"{source}: {where}not valid YAML: {problem}{fix}"]
    count = 0
    for doc in documents:
        if doc is None:
            continue
        count += 1
        ref = object_ref(doc)
        lines += [f"{source}: {ref}: {problem}" for problem in validate_object(doc)]
    return count, lines


def _expand(paths: list[str]) -> Iterator[str]:
    for raw in paths:
        path = Path(raw)
        if raw != "-" and path.is_dir():
            yield from sorted(str(p) for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        else:
            yield raw


def run(args: argparse.Namespace) -> int:
    objects = 0
    problems: list[str] = []
    unreadable = False
    for source in _expand(args.files):
        try:
            text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        except OSError as err:
            print(f"{source}: cannot read: {err.strerror or err}", file=sys.stderr)
            unreadable = True
            continue
        count, lines = check_text(text, "<stdin>" if source == "-" else source)
        objects += count
        problems += lines
    for line in problems:
        print(line)
    print(f"{objects} object(s) checked, {len(problems)} problem(s)", file=sys.stderr)
    if unreadable:
        return 2
    return 1 if problems else 0
