"""The registry of action and plugin factories: a value built by a function, refusing duplicates."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .arguments import Arguments

if TYPE_CHECKING:
    from .session import Session


class Plugin(Protocol):
    """A plugin: a name plus any of the extension-point methods in ``extension``."""

    name: str


class Action(Protocol):
    """One step of a scheduling cycle (enqueue, allocate, backfill, preempt, reclaim)."""

    name: str

    def execute(self, ssn: Session) -> None: ...


PluginFactory = Callable[[Arguments], Plugin]
ActionFactory = Callable[[Arguments], Action]


@dataclass(slots=True)
class Registry:
    """Names -> factories. A factory validates its arguments and raises ``ConfError`` naming the bad one."""

    actions: dict[str, ActionFactory] = field(default_factory=dict)
    plugins: dict[str, PluginFactory] = field(default_factory=dict)

    def add_action(self, name: str, factory: ActionFactory) -> None:
        if name in self.actions:
            raise ValueError(f"action {name!r} is registered twice")
        self.actions[name] = factory

    def add_plugin(self, name: str, factory: PluginFactory) -> None:
        if name in self.plugins:
            raise ValueError(f"plugin {name!r} is registered twice")
        self.plugins[name] = factory

    def action(self, name: str, arguments: Mapping[str, Any] | None = None) -> Action:
        return self.actions[name](Arguments(f"action {name}", arguments or {}))

    def plugin(self, name: str, arguments: Mapping[str, Any] | None = None) -> Plugin:
        return self.plugins[name](Arguments(f"plugin {name}", arguments or {}))
