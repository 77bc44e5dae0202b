"""Fixtures for any test directory: ``helm``, ``promtool`` and ``prometheus``, the pinned tools (built from
their Go modules on first use, cached with the control-plane binaries). Without Go they skip; under
``CI=true`` they fail."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from volcano_py.devcluster import BuildError, ToolchainMissing, ensure_tools


def _tool(name: str) -> Path:
    try:
        # Build progress goes straight to the terminal: a cold build takes minutes and pytest would hide it.
        return ensure_tools(out=sys.__stderr__)[name]
    except (ToolchainMissing, BuildError) as err:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"CI=true and {name} cannot be built: {err}", pytrace=False)
        pytest.skip(f"no {name} (run `volcano-py dev build` to see why): {err}")


@pytest.fixture(scope="session")
def helm() -> Path:
    return _tool("helm")


@pytest.fixture(scope="session")
def promtool() -> Path:
    return _tool("promtool")


@pytest.fixture(scope="session")
def prometheus() -> Path:
    return _tool("prometheus")
