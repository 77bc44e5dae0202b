"""Volcano's refusal texts: each is written once and used by a rule (an unused one is a refusal we lost)."""

from __future__ import annotations

import re
from pathlib import Path

from volcano_py.api import messages
from volcano_py.api.messages import volcano_said

ROOT = Path(messages.__file__).parents[1]


def test_volcano_words_come_first_and_ours_follow() -> None:
    assert volcano_said("No task specified in job spec", "add a task") == (
        "No task specified in job spec; add a task"
    )
    assert volcano_said("invalid policy action", "") == "invalid policy action"
    assert volcano_said("", "queue 'org' has child queues") == "queue 'org' has child queues"


def test_every_volcano_text_is_used_by_a_rule() -> None:
    names = [name for name in vars(messages) if name.startswith("VOLCANO_")]
    sources = "\n".join(path.read_text() for path in ROOT.rglob("*.py") if path.name != "messages.py")
    unused = [name for name in names if not re.search(rf"\b{name}\b", sources)]
    assert names and unused == []
