"""Probes for the forecast's and the what-if's kept records: how often each pod is read, and whether a dict
a snapshot has read is changed afterwards (kept records take a dict's identity for its version, so one
changed in place would be taken for the version already read)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

import volcano_py.whatif.trials as trials
from volcano_py.scheduler.core import ClusterObjects, Records, Snapshot, Unschedulable, build_snapshot
from volcano_py.scheduler.framework.task import TaskInfo

Obj = dict[str, Any]


def counting_parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Each pod's name, counted every time a snapshot's builder reads it."""
    parsed: Counter[str] = Counter()
    original = TaskInfo.from_pod.__func__  # type: ignore[attr-defined]

    def counting(cls: type[TaskInfo], /, pod: Obj, **kwargs: Any) -> TaskInfo:
        parsed[pod["metadata"]["name"]] += 1
        return original(cls, pod, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(TaskInfo, "from_pod", classmethod(counting))
    return parsed


class ReadDicts:
    """Every node, pod and PodGroup dict a forecast or what-if snapshot was built from, as it was then."""

    def __init__(self) -> None:
        self.seen: dict[int, tuple[Obj, Obj]] = {}

    def note(self, objs: Sequence[Obj]) -> None:
        for obj in objs:
            if id(obj) not in self.seen:
                self.seen[id(obj)] = (obj, copy.deepcopy(obj))

    def changed(self) -> list[str]:
        """The names of those changed in place since they were read."""
        return [now["metadata"]["name"] for now, then in self.seen.values() if now != then]


def watching_reads(monkeypatch: pytest.MonkeyPatch) -> ReadDicts:
    reads = ReadDicts()
    original = build_snapshot

    def watching(
        objects: ClusterObjects, names: Sequence[str], records: Records | None = None
    ) -> tuple[Snapshot, list[Unschedulable]]:
        for kind in (objects.nodes, objects.pods, objects.podgroups):
            reads.note(kind)
        return original(objects, names, records)

    monkeypatch.setattr(trials, "build_snapshot", watching)  # what snapshot_with calls
    return reads
