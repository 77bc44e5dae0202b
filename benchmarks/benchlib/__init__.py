"""Pieces the benchmarks share: how each system under test starts as its own process (``systems``), what a
process costs as /proc reports it (``procfs``), and pure helpers that tests import (``stats``, ``limits``,
``scaleplot``). Modules here import each other relatively, so a bench script (``from benchlib.systems import
...``, with ``benchmarks/`` first on its path) and a test (``from benchmarks.benchlib.stats import ...``)
both load them."""
