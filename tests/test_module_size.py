"""Small modules with one job each: no module of ``volcano_py/`` grows past ``MAX_LINES``.

Seven modules had grown past it again by the time anyone looked (issue 61); this keeps the next one from
doing so silently. A module that reaches the limit is split by responsibility, not trimmed of its comments.
"""

from __future__ import annotations

from pathlib import Path

import volcano_py

MAX_LINES = 450
PACKAGE = Path(volcano_py.__file__).parent


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def test_no_module_is_over_the_limit() -> None:
    too_long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _lines(path)) > MAX_LINES
    }
    assert too_long == {}, f"split these by responsibility (at most {MAX_LINES} lines each): {too_long}"


def test_the_check_sees_the_whole_package() -> None:
    # A wrong root would pass with nothing to check.
    modules = list(PACKAGE.rglob("*.py"))
    assert len(modules) > 300
    assert PACKAGE / "scheduler" / "runtime" / "cache.py" in modules
