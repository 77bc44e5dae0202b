"""Reads of a raw ``bus.volcano.sh`` Command: what it asks (``action``) of which object (``target``).

A Command has no spec or status: its fields sit at the top level, as in Volcano's ``bus/v1alpha1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.bodies._fields import EMPTY, str_at
from volcano_py.api.bus import Action
from volcano_py.api.objects import Obj


def command_action_text(command: Obj) -> str:
    """The action as written, for a log line about one that is not carried out."""
    return str_at(command, "action")


def command_action(command: Obj) -> Action | None:
    """The action asked for, or None for one that is no ``Action`` at all."""
    try:
        return Action(command_action_text(command))
    except ValueError:
        return None


def command_target(command: Obj) -> Mapping[str, Any]:
    """The owner reference of the object the Command is for (``target``; ``targetObject`` as some clients
    write it)."""
    target = command.get("target") or command.get("targetObject")
    return target if isinstance(target, Mapping) else EMPTY


def command_target_kind(command: Obj) -> str:
    return str_at(command_target(command), "kind")


def command_target_name(command: Obj) -> str:
    return str_at(command_target(command), "name")
