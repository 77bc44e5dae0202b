"""Logging through structlog: JSON lines in a cluster, readable lines at a terminal.

Our own loggers (structlog) and the libraries' (Kopf, aiohttp: stdlib ``logging``) go through one handler and
one renderer, so a pod's log is JSON throughout and a terminal shows one aligned format, not two.

Three library lines are dropped because they are noise by design here, not news:

- ``aiohttp.access``: one INFO line per admission request from the webhook server. The API server already
  records every admission call (its audit log and ``apiserver_admission_webhook_*`` metrics); at ``--log-level
  debug`` they are shown again.
- Kopf's "Webhook '...' failed permanently: ..." at ERROR for each admission we deny: a denial is our
  decision, not a failure, and ``webhooks.server`` logs it once as ``admission denied`` with the kind, name
  and problems. A webhook handler that fails with an exception is still logged by Kopf, traceback included.
- Kopf's "OS signals are ignored: running not in the main thread": the controller runs Kopf in a thread of its
  own on purpose (``controllers/operator.py``), and the caller's loop owns SIGINT/SIGTERM and stops Kopf.
"""

from __future__ import annotations

import logging
import os
import re
import sys

import structlog

FORMAT_ENV = "VOLCANO_PY_LOG_FORMAT"
LEVEL_ENV = "VOLCANO_PY_LOG_LEVEL"
# Set in a pod by Kubernetes: a container may have a TTY (kubectl run -t), but its log is still collected.
_IN_CLUSTER_ENV = "KUBERNETES_SERVICE_HOST"
_KOPF_SIGNALS = "OS signals are ignored: running not in the main thread"
_KOPF_DENIAL = re.compile(r"Webhook '[^']*' failed permanently: ")

FORMATS: tuple[str, ...] = ("auto", "json", "console")

_writes = 0


def writes() -> int:
    """Log records written to stderr so far: a live table redraws in place only if none came since."""
    return _writes


class _Stderr:
    """Whatever ``sys.stderr`` is at write time: tests swap it, and a bound stream would go stale."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    _volcano_py = True

    def emit(self, record: logging.LogRecord) -> None:
        global _writes
        _writes += 1
        super().emit(record)


class _Quiet(logging.Filter):
    """Drops the library lines the module docstring names; ``debug`` keeps the access log."""

    def __init__(self, keep_access_log: bool) -> None:
        super().__init__()
        self.keep_access_log = keep_access_log

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "aiohttp.access":
            return self.keep_access_log
        if not record.name.startswith("kopf"):
            return True
        message = str(record.msg)
        return _KOPF_SIGNALS not in message and not _KOPF_DENIAL.match(message)


def use_json(
    fmt: str | None = None, *, tty: bool | None = None, environ: dict[str, str] | None = None
) -> bool:
    """Whether to render JSON: asked for, or ``auto`` and (not a terminal, or inside a pod)."""
    env = os.environ if environ is None else environ
    chosen = (fmt or env.get(FORMAT_ENV) or "auto").lower()
    if chosen not in FORMATS:
        raise ValueError(
            f"unknown log format {chosen!r}; use {', '.join(FORMATS)} ({FORMAT_ENV} or --log-format)"
        )
    if chosen != "auto":
        return chosen == "json"
    at_terminal = sys.stderr.isatty() if tty is None else tty
    return not at_terminal or bool(env.get(_IN_CLUSTER_ENV))


def configure(level: str | None = None, *, json: bool | None = None, fmt: str | None = None) -> None:
    """Configure structlog and the stdlib root logger once for the process.

    ``json`` (or ``fmt``: auto, json, console) defaults to JSON when stderr is not a terminal or the process
    runs in a pod, so a cluster gets one JSON object per line and a person at a shell gets aligned, coloured
    text.
    """
    level_name = (level or os.environ.get(LEVEL_ENV, "info")).upper()
    numeric = logging.getLevelName(level_name)
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level_name.lower()!r}; use debug, info, warning or error")
    as_json = json if json is not None else use_json(fmt)
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    handler = _Handler(_Stderr())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info if as_json else _keep,
                renderer,
            ],
        )
    )
    handler.addFilter(_Quiet(keep_access_log=numeric <= logging.DEBUG))
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers if not getattr(h, "_volcano_py", False)]
    root.addHandler(handler)
    root.setLevel(numeric)


def _keep(
    _logger: structlog.types.WrappedLogger, _name: str, event: structlog.types.EventDict
) -> structlog.types.EventDict:
    # The console renderer prints exc_info itself (with a readable traceback); JSON needs it as a string.
    return event


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    logger: structlog.stdlib.BoundLogger = structlog.get_logger(name)
    return logger
