"""Load a ``volcano-scheduler.conf`` against the built-in registry (Volcano's default when none is given)."""

from __future__ import annotations

from pathlib import Path

from .framework.arguments import ConfError
from .framework.conf import SchedulerConf, parse_conf
from .framework.confs import DEFAULT_CONF
from .framework.registry import Registry
from .registry import default_registry

__all__ = ["DEFAULT_CONF", "ConfError", "SchedulerConf", "load_conf", "load_conf_file"]


def load_conf(text: str | None = None, *, registry: Registry | None = None) -> SchedulerConf:
    """Parse conf text; raises ``ConfError`` naming the bad entry."""
    return parse_conf(text, registry or default_registry())


def load_conf_file(path: str | Path, *, registry: Registry | None = None) -> SchedulerConf:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfError(f"cannot read scheduler conf {path}: {err.strerror}") from None
    return load_conf(text, registry=registry)
