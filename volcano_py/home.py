"""Where volcano-py keeps its files on this machine: built binaries, logs, and the scheduler's mirror.

Its own module, as light as can be: the scheduler reads it at start, and the developer cluster's machinery
(which also keeps its binaries here) takes a tenth of a second to import.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

CACHE_ENV: Final = "VOLCANO_PY_CACHE"


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """``$VOLCANO_PY_CACHE`` or ``~/.cache/volcano-py``."""
    env = os.environ if environ is None else environ
    configured = env.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "volcano-py"
