"""Which asyncio event loop a long-running process runs on.

The scheduler's event loop carries every watch event, bind and Event of the cluster through TLS. uvloop
(libuv, with its own TLS transport) does that work in C where the standard loop does it in Python, and on a
small machine every CPU-second the scheduler saves is one the API server gets. ``asyncio`` keeps the
standard loop, for a platform without uvloop or to compare the two.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar

T = TypeVar("T")

EVENT_LOOPS: Final = ("uvloop", "asyncio")
DEFAULT_EVENT_LOOP: Final = "uvloop"


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory for ``name`` (None: asyncio's own); a ValueError says how to fix an unusable choice."""
    if name == "asyncio":
        return None
    if name != "uvloop":
        raise ValueError(f"--event-loop must be one of {', '.join(EVENT_LOOPS)}, got {name!r}")
    try:
        import uvloop
    except ImportError:
        raise ValueError(
            "--event-loop uvloop needs the uvloop package (pip install uvloop); "
            "or run with --event-loop asyncio"
        ) from None
    return uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], event_loop: str = DEFAULT_EVENT_LOOP) -> T:
    """``asyncio.run(main)`` on the chosen loop."""
    try:
        factory = loop_factory(event_loop)
    except ValueError:
        main.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
