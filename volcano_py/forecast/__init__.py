"""Each waiting job's position in its queue and its estimated start, from a forward simulation of the
cluster with the scheduler's own sessions (pure core: no I/O); from the same simulation, a blocked FIFO
head's shadow for the scheduler's backfill (``head_shadow``)."""

from volcano_py.api.runtimes import declared_runtime

from .model import BACKFILL_BOUNDS, BASIS_TEXT, Basis, Bounds, Eta, Forecast, job_section
from .runtimes import RuntimeModel
from .simulate import backfill_shadow, forecast, head_shadow

__all__ = [
    "BACKFILL_BOUNDS",
    "BASIS_TEXT",
    "Basis",
    "Bounds",
    "Eta",
    "Forecast",
    "RuntimeModel",
    "backfill_shadow",
    "declared_runtime",
    "forecast",
    "head_shadow",
    "job_section",
]
