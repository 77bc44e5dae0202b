"""``--admission-conf``: the ``volcano-admission.conf`` file the pod mutating webhook reads its resource
groups from, re-read when it changes, as Volcano's webhook manager watches its ConfigMap.

A conf that cannot be read or used at start-up is fatal, with the reason; a bad edit later is refused (logged)
and the last good conf kept, as the scheduler does with its own conf. The file is looked at from the request
path, at most once per ``interval``: no task to start or leak, and an edit reaches the next pod created a
second later (a ConfigMap's update reaches the mounted file within the kubelet's sync period anyway).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from volcano_py.api.admission_conf import AdmissionConf, AdmissionConfError, load_admission_conf
from volcano_py.log import get_logger

_log = get_logger(__name__)


class AdmissionConfFile:
    def __init__(
        self, path: str | Path, *, interval: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.path = Path(path)
        self._interval = interval
        self._clock = clock
        self._text = self._read()
        self._conf = self._parse(self._text)
        self._checked = clock()

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ValueError(f"--admission-conf {self.path}: cannot read it ({reason})") from None

    def _parse(self, text: str) -> AdmissionConf:
        try:
            return load_admission_conf(text)
        except AdmissionConfError as exc:
            raise ValueError(f"--admission-conf {self.path}: {exc}") from None

    def reload(self) -> bool:
        """Re-read the file now; True if a new conf took effect."""
        try:
            text = self._read()
        except ValueError as exc:
            _log.warning("admission conf unreadable; keeping the previous one", error=str(exc))
            return False
        if text == self._text:
            return False
        self._text = text
        try:
            self._conf = self._parse(text)
        except ValueError as exc:
            _log.error("admission conf rejected; keeping the previous one", error=str(exc))
            return False
        _log.info(
            "admission conf reloaded", path=str(self.path), resource_groups=len(self._conf.resource_groups)
        )
        return True

    def conf(self) -> AdmissionConf:
        """The conf in force, the file looked at again if ``interval`` has passed since the last look."""
        now = self._clock()
        if now - self._checked >= self._interval:
            self._checked = now
            self.reload()
        return self._conf
