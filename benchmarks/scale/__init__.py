"""The parts of ``bench_scale`` (run as ``python -m benchmarks.bench_scale``): what its modes share
(``bench``), the systems it starts (``systems``) and one module per mode (``backlog``, ``restart``,
``churn``)."""
