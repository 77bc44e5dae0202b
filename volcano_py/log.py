"""Logging through structlog: JSON lines in a cluster, readable lines at a terminal."""

from __future__ import annotations

import logging
import os
import sys

import structlog


class _Stderr:
    """Whatever ``sys.stderr`` is at write time: tests swap it, and a bound stream would go stale."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(level: str | None = None, *, json: bool | None = None) -> None:
    """Configure structlog and the stdlib root logger once for the process.

    ``json`` defaults to True when stderr is not a terminal (a pod's log), so a cluster gets one JSON object
    per line and a person at a shell gets aligned, coloured text.
    """
    level_name = (level or os.environ.get("VOLCANO_PY_LOG_LEVEL", "info")).upper()
    numeric = logging.getLevelName(level_name)
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level_name!r}; use debug, info, warning or error")
    use_json = json if json is not None else not sys.stderr.isatty()
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer(colors=True)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(_Stderr())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers if not getattr(h, "_volcano_py", False)]
    handler._volcano_py = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(numeric)


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
