"""``volcano-py validate FILE...``: check manifests offline, as the CRD schemas and Volcano's admission would,
and scheduler confs (a ``volcano-scheduler.conf``, or a ConfigMap holding one) as the scheduler loads them.

Exit 0 when every object is valid, 1 when any problem is found (one line each on stdout:
``FILE: Kind/namespace/name: field.path: what is wrong (how to fix)``), 2 when a file cannot be read (missing,
not UTF-8). A file with no objects is a problem, as ``kubectl apply`` refuses it.
Kinds that are not Volcano's, and Volcano kinds not modelled yet, are named on stderr as not checked (Pods are
checked: their scheduling-relevant spec). Queues are checked together, in file order, as ``kubectl apply``
would create them: a child against the parent defined before it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from volcano_py.api.admission_conf import ADMISSION_CONF_KEY
from volcano_py.api.constants import FLOW_API_VERSION, QUEUE_KIND
from volcano_py.api.flow_rules import templates_missing_across
from volcano_py.api.queue_hierarchy import offline_hierarchy_problems
from volcano_py.api.validation import object_ref, unchecked_reason, validate_object

from .validate_conf import conf_problem, held_confs, is_admission_conf, is_scheduler_conf


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check Volcano manifests (Job, PodGroup, Queue, Command, HyperNode, Pod) and scheduler confs",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="YAML files or directories ('-' for stdin)")
    parser.set_defaults(func=run)


class _BadKey(yaml.MarkedYAMLError):
    pass


class _StrictLoader(yaml.SafeLoader):
    """Refuses a key given twice in one mapping, which PyYAML would resolve silently to the last value."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                # ``? {a: 1}`` makes a mapping a key; Kubernetes objects have only string keys.
                raise _BadKey(
                    problem=f"a key must be a plain value, not a {type(key).__name__} (write 'name: value')",
                    problem_mark=key_node.start_mark,
                )
            if key in seen:
                raise _BadKey(
                    problem=f"key {key!r} is given twice and only the last would count (keep one)",
                    problem_mark=key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_document(self, node: yaml.Node) -> Any:
        _refuse_alias_bomb(node)
        return super().construct_document(node)


# Kubernetes reads YAML with go-yaml, which stops decoding a document once the nodes its aliases expand to
# outgrow this share of all the nodes decoded: 99% up to 400,000 nodes, falling to 10% at 4,000,000.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000
_EXCESSIVE_ALIASING = "document contains excessive aliasing"


class _AliasBomb(yaml.MarkedYAMLError):
    pass


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _refuse_alias_bomb(root: yaml.Node) -> None:
    """Refuse a document as Kubernetes' YAML decoder does when its aliases expand it out of proportion (the
    "billion laughs"), before anything expands it here. PyYAML shares one node among its aliases, so the
    composed document is small; it is what is made of it (JSON, a copy, a model) that would not be. go-yaml
    counts each node it decodes, an alias's target once more per alias, and gives up past its ratio; so does
    this, which also bounds the work: counting stops where go-yaml stops."""
    # Which child slots are aliases: a node met again, in document order, was defined before.
    defined: set[int] = set()
    aliased: set[tuple[int, int]] = set()

    def children(node: yaml.Node) -> list[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        return []

    def define(node: yaml.Node) -> None:
        defined.add(id(node))
        for i, child in enumerate(children(node)):
            if id(child) in defined:
                aliased.add((id(node), i))
            else:
                define(child)

    define(root)
    if not aliased:
        return
    decoded = from_aliases = 0
    expanding: list[yaml.Node] = []

    def decode(node: yaml.Node, in_alias: bool) -> None:
        nonlocal decoded, from_aliases
        decoded += 1
        from_aliases += in_alias
        if from_aliases > 100 and decoded > 1000 and from_aliases / decoded > _allowed_alias_ratio(decoded):
            raise _AliasBomb(
                problem=f"{_EXCESSIVE_ALIASING} (a YAML alias bomb: its aliases expand it past {decoded:,} "
                "nodes, and Kubernetes refuses it; write the values out instead of aliasing aliases)",
                # The outermost anchor being expanded: the aliases of its value are what explode.
                problem_mark=expanding[0].start_mark if expanding else node.start_mark,
            )
        for i, child in enumerate(children(node)):
            if (id(node), i) not in aliased:
                decode(child, in_alias)
                continue
            if any(child is outer for outer in expanding):
                raise _AliasBomb(
                    problem="an anchor's value contains an alias to itself (Kubernetes refuses it; break "
                    "the cycle)",
                    problem_mark=child.start_mark,
                )
            decoded += 1  # the alias itself
            from_aliases += in_alias
            expanding.append(child)
            decode(child, True)
            expanding.pop()

    decode(root, False)


def _objects(doc: Any) -> list[Any]:
    """A document's objects: a ``kind: List`` (what ``kubectl get -o yaml`` prints) counts as its items."""
    if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        return list(doc["items"])
    return [doc]


@dataclass
class Report:
    """What ``validate`` found: objects checked, problem lines (stdout) and not-checked notes (stderr)."""

    checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # (source, queue object) in file order, for the hierarchy checks across files.
    queues: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # (source, JobFlow or JobTemplate), for the flows' templates across files.
    flows: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _load(text: str, source: str) -> tuple[list[Any] | None, str | None]:
    try:
        documents = [obj for doc in yaml.load_all(text, Loader=_StrictLoader) for obj in _objects(doc)]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        tab = _tab_problem(mark)
        if tab is not None and mark is not None:
            where, problem = f"line {mark.line + 1}, column {mark.column + 1}: ", tab
        fix = "" if problem.endswith(")") else " (fix the syntax)"
        return None, f"{source}: {where}not valid YAML: {problem}{fix}"
    except RecursionError:
        return None, f"{source}: not valid YAML: nested too deeply (flatten the document)"
    return [doc for doc in documents if doc is not None], None


def _tab_problem(mark: Any) -> str | None:
    """What a tab at ``mark`` breaks, where PyYAML's own words ("found character '\\t' that cannot start any
    token") would not tell a user that the character is a tab, nor what to do."""
    buffer = getattr(mark, "buffer", None)
    pointer = getattr(mark, "pointer", -1)
    if not isinstance(buffer, str) or not 0 <= pointer < len(buffer) or buffer[pointer] != "\t":
        return None
    before = buffer[buffer.rfind("\n", 0, pointer) + 1 : pointer]
    if not before.strip(" \t"):
        return "a tab indents this line (YAML indents with spaces only: replace the tab with spaces)"
    return "a tab where YAML expects a space (replace the tab with spaces)"


def check_text(text: str, source: str, report: Report | None = None) -> Report:
    """Check one multi-document YAML text, adding to ``report`` (a new one if None)."""
    report = report if report is not None else Report()
    documents, error = _load(text, source)
    if error is not None or documents is None:
        report.problems.append(error or f"{source}: not valid YAML")
        return report
    if not documents:
        report.problems.append(
            f"{source}: no objects (the file holds no YAML document; kubectl apply refuses it)"
        )
        return report
    for doc in documents:
        if is_scheduler_conf(doc):
            report.checked += 1
            problem = conf_problem(text if len(documents) == 1 else yaml.safe_dump(doc))
            if problem is not None:
                report.problems.append(f"{source}: scheduler conf: {problem}")
            continue
        if is_admission_conf(doc):
            report.checked += 1
            text_of_doc = text if len(documents) == 1 else yaml.safe_dump(doc)
            problem = conf_problem(text_of_doc, ADMISSION_CONF_KEY)
            if problem is not None:
                report.problems.append(f"{source}: admission conf: {problem}")
            continue
        confs = held_confs(doc)
        if confs:
            report.checked += 1
            for key, conf in sorted(confs.items()):
                problem = conf_problem(conf, key)
                if problem is not None:
                    report.problems.append(f"{source}: {object_ref(doc)}: data[{key}]: {problem}")
            continue
        ref = object_ref(doc)
        reason = unchecked_reason(doc)
        if reason is not None:
            report.notes.append(f"{source}: {ref}: {reason}")
            continue
        report.checked += 1
        found = validate_object(doc)
        report.problems += [f"{source}: {ref}: {problem}" for problem in found]
        if not found and isinstance(doc, dict) and doc.get("kind") == QUEUE_KIND:
            report.queues.append((source, doc))
        if not found and isinstance(doc, dict) and doc.get("apiVersion") == FLOW_API_VERSION:
            report.flows.append((source, doc))
    return report


def finish(report: Report) -> Report:
    """The checks across all files: the queue hierarchy (parents, depth, cycles, capability, shares), and
    the JobTemplates the JobFlows name."""
    problems, notes = offline_hierarchy_problems(report.queues)
    report.problems += [f"{source}: {object_ref(queue)}: {problem}" for source, queue, problem in problems]
    report.notes += [f"{source}: {object_ref(queue)}: {note}" for source, queue, note in notes]
    sources = {id(doc): source for source, doc in report.flows}
    for doc, problem in templates_missing_across([doc for _, doc in report.flows]):
        report.problems.append(f"{sources[id(doc)]}: {object_ref(doc)}: {problem}")
    return report


def _expand(paths: list[str]) -> Iterator[str]:
    for raw in paths:
        path = Path(raw)
        if raw != "-" and path.is_dir():
            yield from sorted(str(p) for p in path.rglob("*") if p.suffix in (".yaml", ".yml"))
        else:
            yield raw


def _read(source: str) -> str:
    data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    return data.decode("utf-8")


def run(args: argparse.Namespace) -> int:
    report = Report()
    unreadable = False
    for source in _expand(args.files):
        name = "<stdin>" if source == "-" else source
        try:
            text = _read(source)
        except OSError as err:
            print(f"{name}: unreadable: cannot read: {err.strerror or err}", file=sys.stderr)
            unreadable = True
            continue
        except UnicodeDecodeError as err:
            at_line = err.object[: err.start].count(b"\n") + 1
            print(
                f"{name}: unreadable: not UTF-8 text (line {at_line}, "
                f"byte {err.start}: {err.reason}; save it as UTF-8)",
                file=sys.stderr,
            )
            unreadable = True
            continue
        check_text(text, name, report)
    finish(report)
    for line in report.problems:
        print(line)
    for line in report.notes:
        print(line, file=sys.stderr)
    skipped = f", {len(report.notes)} not checked" if report.notes else ""
    print(f"{report.checked} object(s) checked{skipped}, {len(report.problems)} problem(s)", file=sys.stderr)
    if unreadable:
        return 2
    return 1 if report.problems else 0
