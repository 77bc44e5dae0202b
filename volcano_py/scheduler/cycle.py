"""The contract between the scheduler process and the scheduling core, and the conf it runs with.

``Core`` is what the runner needs from the pure core (parse a conf; turn a ``ClusterState`` into a
``CycleOutcome``); ``session_adapter`` implements it over ``run_session``. ``ConfSource`` holds the conf in
force and re-reads its file when it changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from volcano_py.log import get_logger
from volcano_py.scheduler.cache import ClusterState
from volcano_py.scheduler.framework.decisions import SessionResult

_log = get_logger(__name__)


class Core(Protocol):
    """The pure scheduling core as the runtime uses it (see ``session_adapter``)."""

    def load_conf(self, text: str | None) -> Any:
        """Parse and validate a conf (None: Volcano's default); raise ValueError naming the bad entry."""
        ...

    def run(self, state: ClusterState, conf: Any, now: datetime) -> CycleOutcome: ...


@dataclass(frozen=True, slots=True)
class Unschedulable:
    """A pod or PodGroup the session could not place, with the reason to show on it."""

    obj: Mapping[str, Any]
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class CycleOutcome:
    result: SessionResult
    # Warnings that belong on objects (missing PodGroup/queue, unschedulable pods and PodGroups).
    warnings: tuple[Unschedulable, ...] = ()
    # Per unschedulable job: how many of its tasks are still pending (Volcano's unschedule_task_count).
    unscheduled_tasks: Mapping[str, int] = field(default_factory=dict)


class ConfSource:
    """The conf file, re-read when its content changes; a bad edit is refused and the last good conf kept."""

    def __init__(self, path: str | None, core: Core) -> None:
        self.path = Path(path) if path else None
        self.core = core
        self._text = self._read()
        self.conf = core.load_conf(self._text)  # a bad conf at start-up is fatal, with the reason

    def _read(self) -> str | None:
        if self.path is None:
            return None
        try:
            return self.path.read_text()
        except OSError as exc:
            raise ValueError(f"--scheduler-conf {self.path}: cannot read it ({exc.strerror})") from None

    def reload(self) -> bool:
        """Re-read the file; True if a new conf took effect."""
        if self.path is None:
            return False
        try:
            text = self._read()
        except ValueError as exc:
            _log.warning("scheduler conf unreadable; keeping the previous one", error=str(exc))
            return False
        if text == self._text:
            return False
        self._text = text
        try:
            self.conf = self.core.load_conf(text)
        except ValueError as exc:
            _log.error(
                "scheduler conf rejected; keeping the previous one", path=str(self.path), error=str(exc)
            )
            return False
        _log.info("scheduler conf reloaded", path=str(self.path))
        return True

    async def watch(self, interval: float = 1.0) -> None:
        while True:
            await asyncio.sleep(interval)
            self.reload()
