"""Which control-plane binaries are already built: a cached one counts only if it runs and reports the
pinned version (and, for kwok, has its stage files beside it)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from volcano_py.devcluster.versions import (
    COMPONENTS,
    KWOK,
    KWOK_STAGE_FILES,
    Component,
    kwok_stage_dir,
    reports_version,
)


def version_output(binary: Path, args: Sequence[str]) -> str:
    try:
        done = subprocess.run(
            [str(binary), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


def is_cached(component: Component, cache: Path) -> bool:
    """The binary exists, runs, and reports the pinned version (and kwok's stage files are beside it)."""
    binary = component.binary(cache)
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        return False
    if component is KWOK and not all(
        (kwok_stage_dir(cache) / Path(f).name).is_file() for f in KWOK_STAGE_FILES
    ):
        return False
    return reports_version(component, version_output(binary, component.version_args))


def missing(cache: Path, components: Sequence[Component] = COMPONENTS) -> list[Component]:
    return [component for component in components if not is_cached(component, cache)]


def binary_paths(cache: Path, components: Sequence[Component] = COMPONENTS) -> dict[str, Path]:
    return {component.name: component.binary(cache) for component in components}
