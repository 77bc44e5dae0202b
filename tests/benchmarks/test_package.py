"""``benchmarks`` is a package imported one way: every module imports as ``benchmarks.…`` (which is how
``python -m benchmarks.NAME`` runs it), and no file imports a part of it by another name (``benchlib``,
``chaoslib``, a script beside it), relatively, or after editing ``sys.path``. Its modules stay small, as
``volcano_py``'s do (``tests/test_module_size.py``)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
MODULES = sorted(
    ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
    for path in BENCHMARKS.rglob("*.py")
)
# The names a part of benchmarks would have if benchmarks/ itself were on sys.path.
MAX_LINES = 450
# Over the limit before the limit covered benchmarks/, each held to its size then until it is split.
NOT_YET_SPLIT = {
    "benchmarks/volcano_e2e.py": 777,
    "benchmarks/bench_e2e.py": 533,
    "benchmarks/chaoslib/invariants.py": 489,
    "benchmarks/volcano_admission_differential.py": 473,
}
INNER_NAMES = {path.stem for path in BENCHMARKS.glob("*.py")} | {
    path.parent.name for path in BENCHMARKS.glob("*/__init__.py")
}


def _wrong_imports(path: Path) -> list[str]:
    wrong = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level and path.is_relative_to(BENCHMARKS):
            wrong.append(f"{path.relative_to(REPO)}:{node.lineno}: relative import")
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        for name in names:
            if name.split(".")[0] in INNER_NAMES:
                wrong.append(f"{path.relative_to(REPO)}:{node.lineno}: import {name} (benchmarks.{name})")
    return wrong


def test_every_part_of_benchmarks_is_imported_as_benchmarks_something() -> None:
    files = sorted(BENCHMARKS.rglob("*.py")) + sorted((REPO / "tests").rglob("*.py"))
    assert [line for path in files for line in _wrong_imports(path)] == []


def test_no_benchmark_edits_sys_path() -> None:
    edits = [path for path in BENCHMARKS.rglob("*.py") if "sys.path." in path.read_text()]
    assert edits == []


@pytest.mark.parametrize("name", MODULES)
def test_each_module_imports_under_its_package_name(name: str) -> None:
    importlib.import_module(name)


def test_no_module_grows_past_the_limit() -> None:
    too_long = {}
    for path in sorted(BENCHMARKS.rglob("*.py")):
        name = str(path.relative_to(REPO))
        with path.open("rb") as f:
            lines = sum(1 for _ in f)
        if lines > NOT_YET_SPLIT.get(name, MAX_LINES):
            too_long[name] = lines
    assert too_long == {}, f"split these by responsibility (at most {MAX_LINES} lines each): {too_long}"
