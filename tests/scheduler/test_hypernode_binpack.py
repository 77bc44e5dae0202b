"""Volcano's HyperNode scores (plugins/hypernode_binpack.py), table-driven."""

from __future__ import annotations

import numpy as np
import pytest

from volcano_py.scheduler.plugins.hypernode_binpack import (
    BinpackWeights,
    faded_scores,
    fill_score,
    hypernode_scores,
    hypernode_totals,
    tier_weights,
)

GPU = "nvidia.com/gpu"
ALLOC = {"cpu": 16_000, "memory": 16, GPU: 8}


@pytest.mark.parametrize(
    ("request_", "used", "weights", "score"),
    [
        pytest.param(
            {"cpu": 4_000, "memory": 4}, {"cpu": 4_000, "memory": 4}, BinpackWeights(), 0.5, id="mean"
        ),
        pytest.param(
            {"cpu": 4_000, "memory": 4}, {"cpu": 12_000}, BinpackWeights(cpu=3), 0.8125, id="cpu-3x"
        ),
        pytest.param({"cpu": 4_000, "memory": 4}, {"cpu": 13_000}, BinpackWeights(), 0.0, id="cpu-overflows"),
        pytest.param({GPU: 2, "cpu": 0}, {GPU: 6}, BinpackWeights(), 0.0, id="gpu-not-listed-counts-nothing"),
        pytest.param({GPU: 2}, {GPU: 6}, BinpackWeights(others={GPU: 2}), 1.0, id="gpu-listed"),
        pytest.param({"cpu": 8_000}, {}, BinpackWeights(cpu=0, memory=0), 0.0, id="all-weights-zero"),
    ],
)
def test_fill_score(
    request_: dict[str, float], used: dict[str, float], weights: BinpackWeights, score: float
) -> None:
    assert fill_score(request_, used, ALLOC, weights) == pytest.approx(score)


@pytest.mark.parametrize(
    ("fill", "there", "weight", "scores"),
    [
        pytest.param({"a": 0.5, "b": 0.25}, {"b": 2}, 1, {"a": 50.0, "b": 25.0}, id="best-fill-no-tiebreak"),
        pytest.param({"a": 0.5, "b": 0.5}, {"b": 2}, 1, {"a": 50.0, "b": 100.0}, id="tie-broken-by-running"),
        pytest.param(
            {"a": 0.5, "b": 0.5, "c": 0.1}, {"c": 4}, 2, {"a": 100.0, "b": 100.0, "c": 20.0}, id="x-w"
        ),
    ],
)
def test_hypernode_scores(
    fill: dict[str, float], there: dict[str, int], weight: int, scores: dict[str, float]
) -> None:
    assert hypernode_scores(fill, there, 4, weight) == pytest.approx(scores)


@pytest.mark.parametrize(
    ("fading", "per_tier", "score"),
    [
        pytest.param(0.8, {1: 0.5, 2: 0.25}, (0.5 + 0.8 * 0.25) / 1.8, id="faded"),
        pytest.param(0.0, {1: 0.5, 2: 0.25}, 0.5, id="fading-0-tier-1-only"),
        pytest.param(0.5, {1: float("nan"), 2: 0.5}, (1.0 + 0.5 * 0.5) / 1.5, id="none-there-scores-1"),
        pytest.param(0.5, {2: 0.5}, (1.0 + 0.5 * 0.5) / 1.5, id="a-tier-without-hypernodes-scores-1"),
    ],
)
def test_faded_scores(fading: float, per_tier: dict[int, float], score: float) -> None:
    arrays = {tier: np.array([value, 0.0]) for tier, value in per_tier.items()}
    got = faded_scores(arrays, tier_weights([1, 2], fading), 2)
    assert got[0] == pytest.approx(score)


def test_hypernode_totals_sum_the_nodes_of_each_hypernode() -> None:
    index = np.array([0, 0, 1, -1])
    amounts = np.array([[1, 10], [2, 20], [4, 40], [8, 80]])
    got = hypernode_totals(index, amounts, np.array([1]), 2)
    assert got.tolist() == [[30], [40]]
