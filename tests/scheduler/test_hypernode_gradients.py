"""Where Volcano's allocate tries a job in the HyperNode tree (plugins/hypernode_gradients.py)."""

from __future__ import annotations

import pytest

from volcano_py.scheduler.plugins.hypernode_gradients import gradients, search_root
from volcano_py.scheduler.solver.hypernode_tree import (
    ROOT,
    HyperNodeTree,
    build_tree,
    hypernodes_from_objects,
)

from .test_hypernode_placement import _hypernodes


def _tree() -> HyperNodeTree:
    """Volcano's e2e tree: s6 (tier 3) over s4 {s0, s1} and s5 {s2, s3}; s<i> holds n<2i>, n<2i+1>."""
    return build_tree(hypernodes_from_objects(_hypernodes()), {f"n{i}": {} for i in range(8)})


@pytest.mark.parametrize(
    ("highest", "running", "fits", "under", "expected"),
    [
        pytest.param(1, [], None, None, [["s0", "s1", "s2", "s3"]], id="tier-1-only"),
        pytest.param(2, [], {"s0", "s3"}, None, [["s0", "s3"]], id="pre-filtered"),
        pytest.param(
            9, [], None, None, [["s0", "s1", "s2", "s3"], ["s4", "s5"], ["s6"], [ROOT]], id="soft-to-root"
        ),
        pytest.param(2, ["n0"], set(), None, [["s0", "s1"], ["s4"]], id="running-stays-under-s4-unfiltered"),
        pytest.param(1, ["n0", "n2"], None, None, [], id="running-across-racks-beyond-tier-1"),
        pytest.param(1, [], None, "s5", [["s2", "s3"]], id="under-the-jobs-hypernode"),
    ],
)
def test_gradients(
    highest: int, running: list[str], fits: set[str] | None, under: str | None, expected: list[list[str]]
) -> None:
    # fits: the HyperNodes passing the resource pre-filter (None: all); a running job is not filtered.
    got = gradients(
        _tree(),
        highest,
        running=running,
        fits=lambda h: fits is None or h in fits,
        under=under,
    )
    assert got == expected


def test_search_root_is_the_highest_allowed_above_the_running_pods() -> None:
    tree = _tree()
    assert search_root(tree, ["n0", "n1"], 2) == "s4"
    assert search_root(tree, ["n0", "n3"], 1) is None
