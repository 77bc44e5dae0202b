"""Pieces the benchmarks share: how each system under test starts as its own process (``systems``), what a
process costs as /proc reports it (``procfs``), and pure helpers that tests import (``stats``, ``limits``,
``scaleplot``). Imported as ``benchmarks.benchlib.…`` by the scripts and the tests alike; nothing here imports
a benchmark script (``lint-imports``)."""
