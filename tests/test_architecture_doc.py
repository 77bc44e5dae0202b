"""docs/architecture.md walks one Job from ``kubectl apply`` to ``pods/binding`` file by file; each module
and package it names exists and imports, so the walk stays true when code moves."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PATH = re.compile(r"`(volcano_py/[\w/]+(?:\.py|/))`")


def _named() -> list[str]:
    return sorted(set(PATH.findall(DOC.read_text())))


def test_the_walk_names_the_three_processes_modules() -> None:
    named = _named()
    # The stops a newcomer follows: webhook, controller, scheduler front door, binder, the bind itself.
    for stop in (
        "volcano_py/webhooks/job.py",
        "volcano_py/controllers/job/worker.py",
        "volcano_py/scheduler/core.py",
        "volcano_py/scheduler/runtime/binder.py",
        "volcano_py/kube/binding.py",
    ):
        assert stop in named


@pytest.mark.parametrize("path", _named())
def test_each_module_named_exists_and_imports(path: str) -> None:
    where = ROOT / path
    found = where.is_file() or (where / "__init__.py").is_file()
    assert found, f"docs/architecture.md names {path}, which is not in the repository"
    importlib.import_module(path.removesuffix("/").removesuffix(".py").replace("/", "."))
