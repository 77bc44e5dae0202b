"""Fixtures for any test directory: ``helm``, the pinned helm binary (built from its Go module on first use,
cached with the control-plane binaries). Without Go it skips, except under ``CI=true``, where it fails."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from volcano_py.devcluster import BuildError, ToolchainMissing, ensure_tools


@pytest.fixture(scope="session")
def helm() -> Path:
    try:
        # Build progress goes straight to the terminal: a cold build takes minutes and pytest would hide it.
        return ensure_tools(out=sys.__stderr__)["helm"]
    except (ToolchainMissing, BuildError) as err:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"CI=true and helm cannot be built: {err}", pytrace=False)
        pytest.skip(f"no helm (run `volcano-py dev build` to see why): {err}")
