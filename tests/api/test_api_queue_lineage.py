"""The walk up the queue tree that every reader of an inherited queue setting takes."""

from __future__ import annotations

import pytest

from volcano_py.api.queue_hierarchy import queue_lineage, queue_parent

TREE = {"root": "", "research": "root", "vision": "research", "loop-a": "loop-b", "loop-b": "loop-a"}


@pytest.mark.parametrize(
    ("name", "lineage"),
    [
        ("vision", ["vision", "research", "root"]),
        ("root", ["root"]),
        ("loop-a", ["loop-a", "loop-b"]),  # a cycle ends the walk instead of looping
        ("orphan", []),  # a queue that does not exist has no lineage
    ],
)
def test_queue_lineage(name: str, lineage: list[str]) -> None:
    assert queue_lineage(name, TREE.get) == lineage


def test_a_queue_without_a_parent_hangs_under_root_and_root_has_none() -> None:
    assert queue_parent({"metadata": {"name": "team"}, "spec": {}}) == "root"
    assert queue_parent({"metadata": {"name": "root"}, "spec": {"parent": "x"}}) == ""
