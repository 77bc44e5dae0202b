"""``volcano-py sim --report``: one offline HTML page whose SVG plots hold every policy's data."""

from __future__ import annotations

import re
from pathlib import Path

from volcano_py.cli.main import main
from volcano_py.sim.engine import Sample, SimResult
from volcano_py.sim.html import render, wait_cdf
from volcano_py.sim.svg import nice_ticks, thin


def _result(name: str, delays: list[float], allocated: list[int]) -> SimResult:
    return SimResult(
        workload=name,
        total_gpus=16_000,
        samples=[
            Sample(at=float(i * 10), allocated_gpus=a, stranded_gpus=1000, pending_jobs=2)
            for i, a in enumerate(allocated)
        ],
        queueing_delay=delays,
        completion_time=[d + 5 for d in delays],
    )


def test_the_page_draws_each_policy_in_each_plot_and_fetches_nothing() -> None:
    page = render(
        {
            "greedy": _result("w", [1.0, 3.0, 9.0], [0, 8000, 16000]),
            "cpsat": _result("w", [1.0, 2.0], [8000]),
        },
        title="sim",
    )
    for plot in ("wait-cdf", "gpu-allocation", "stranded-gpus", "pending-jobs"):
        svg = re.search(rf'<svg[^>]*data-plot="{plot}".*?</svg>', page, re.S)
        assert svg is not None, plot
        assert re.findall(r'data-series="([^"]+)"', svg.group(0)) == ["greedy", "cpsat"]
    assert not re.search(r"<script|https?://(?!www\.w3\.org/2000/svg)", page)
    # The summary table puts the policies side by side.
    assert "<th>greedy</th><th>cpsat</th>" in page
    assert "<td>jobs completed</td><td>3</td><td>2</td>" in page


def test_wait_cdf_rises_to_one_at_the_longest_wait() -> None:
    assert wait_cdf(_result("w", [9.0, 1.0, 3.0, 3.0], [0])) == [
        (0.0, 0.0),
        (1.0, 0.25),
        (3.0, 0.5),
        (3.0, 0.75),
        (9.0, 1.0),
    ]
    assert wait_cdf(_result("w", [], [0])) == []


def test_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 730) == [0, 200, 400, 600, 800]
    assert nice_ticks(5, 5)[0] <= 5 <= nice_ticks(5, 5)[-1]


def test_thinning_keeps_the_ends_and_the_peaks() -> None:
    points = [(float(i), 1.0 if i != 5000 else 99.0) for i in range(20_000)]
    kept = thin(points, limit=400)
    assert len(kept) <= 420
    assert kept[0] == points[0] and kept[-1] == points[-1]
    assert (5000.0, 99.0) in kept


def test_cli_writes_the_report(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert (
        main(["sim", "synthetic", "--nodes", "4", "--jobs", "6", "--policy", "greedy", "--report", str(out)])
        == 0
    )
    page = out.read_text()
    assert page.count("<svg") == 4
    assert 'data-series="greedy"' in page
