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


def check_text(text: str, source: str) -> tuple[int, list[str]]:
    """(objects checked, problem lines) for one multi-document YAML text."""
    lines: list[str] = []
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        return 0, [f"{source}: {where}not valid YAML: {problem} (fix the syntax)"]
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
