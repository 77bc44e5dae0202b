"""What would make a pending job run: changes proved by what-if sessions (pure core: no I/O)."""

from volcano_py.scheduler.core import ClusterObjects

from .model import (
    AddNodes,
    Budget,
    Change,
    EndJobs,
    OpenQueue,
    RaiseCapability,
    RaiseWeight,
    Suggestion,
    WhatIf,
)
from .search import what_would_make_it_run

__all__ = [
    "AddNodes",
    "Budget",
    "Change",
    "ClusterObjects",
    "EndJobs",
    "OpenQueue",
    "RaiseCapability",
    "RaiseWeight",
    "Suggestion",
    "WhatIf",
    "what_would_make_it_run",
]
