"""Fixtures for any test directory: ``helm``, ``promtool`` and ``prometheus``, the pinned tools (built from
their Go modules on first use, cached with the control-plane binaries). Without Go they skip; under
``CI=true`` they fail."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest

from volcano_py.devcluster import BuildError, ToolchainMissing, ensure_tools


def _tool(name: str, config: pytest.Config) -> Path:
    # A cold build takes minutes: its progress goes to the terminal, past pytest's capture (which holds file
    # descriptor 2 itself while tests and fixtures run, so even sys.__stderr__ would be hidden).
    capture = config.pluginmanager.getplugin("capturemanager")
    try:
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            return ensure_tools(out=sys.stderr)[name]
    except (ToolchainMissing, BuildError) as err:
        if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
            pytest.fail(f"CI=true and {name} cannot be built: {err}", pytrace=False)
        pytest.skip(f"no {name} (run `volcano-py dev build` to see why): {err}")


@pytest.fixture(scope="session")
def helm(pytestconfig: pytest.Config) -> Path:
    return _tool("helm", pytestconfig)


@pytest.fixture(scope="session")
def promtool(pytestconfig: pytest.Config) -> Path:
    return _tool("promtool", pytestconfig)


@pytest.fixture(scope="session")
def prometheus(pytestconfig: pytest.Config) -> Path:
    return _tool("prometheus", pytestconfig)
