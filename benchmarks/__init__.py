"""The benchmarks, fault runs and differential checks: scripts run from the repository's root as
``python -m benchmarks.NAME`` (none of this is shipped), with what they share in ``benchmarks.benchlib`` (the
systems under test as processes, /proc figures, percentiles, plots, the objects a benchmark creates) and
``benchmarks.chaoslib`` (the fault runs). Every import of them is absolute, ``from benchmarks.… import …``;
``lint-imports`` keeps the layering (``pyproject.toml``)."""
