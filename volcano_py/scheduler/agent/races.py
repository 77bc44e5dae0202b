"""Which placements lost a race for a node's room: the agent scheduler's optimistic binder.

Workers decide on views of the cluster taken at different moments. Each node carries a binding version,
bumped whenever a pod lands on it (a bind this scheduler sends, or a bind by anyone that the watch shows). A
worker notes the last version it saw (``mark``) when it takes its view; a placement on a node whose version
moved since then was decided without the pod that landed meanwhile, and is refused. Its pod is retried first
(``SchedulingQueue.conflicted``), on a view that has the new pod. A placement on an unchanged node is safe:
nothing landed there since the view that chose it. Volcano's binder keeps the same per-node versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class BindVersions:
    _clock: int = 0
    _last: dict[str, int] = field(default_factory=dict)

    def mark(self) -> int:
        """The version a view taken now includes everything up to."""
        return self._clock

    def landed(self, node: str) -> None:
        """A pod now holds room on ``node`` (assumed or seen bound)."""
        self._clock += 1
        self._last[node] = self._clock

    def raced(self, node: str, mark: int) -> bool:
        """Whether a pod landed on ``node`` after the view marked ``mark`` was taken."""
        return self._last.get(node, 0) > mark

    def forget(self, node: str) -> None:
        """The node is gone."""
        self._last.pop(node, None)
