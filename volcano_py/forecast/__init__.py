"""Each waiting job's position in its queue and its estimated start, from a forward simulation of the
cluster with the scheduler's own sessions (pure core: no I/O)."""

from .model import BASIS_TEXT, Basis, Bounds, Eta, Forecast, job_section
from .runtimes import RuntimeModel, declared_runtime
from .simulate import forecast

__all__ = [
    "BASIS_TEXT",
    "Basis",
    "Bounds",
    "Eta",
    "Forecast",
    "RuntimeModel",
    "declared_runtime",
    "forecast",
    "job_section",
]
