"""Each queue's recent usage, accrued cycle by cycle and kept on its Queue (proportion's ``recentUsage``).

The session is pure and sees only what the cluster holds, so the memory of past use lives here: after every
cycle (a recalled one too) the queues' allocation is accrued into their ledgers, and every ``write_every``
seconds a ledger that changed is written to its Queue's annotation. A restarted or newly elected scheduler
reads the annotations back and carries on; at most ``write_every`` seconds of accrual are lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.constants import RECENT_USAGE_KEY
from volcano_py.api.objects import annotations_of, name_of
from volcano_py.api.recent_usage import RecentUsage, read_recent_usage
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.kinds import QUEUES
from volcano_py.log import get_logger

from ..framework.arguments import Arguments
from ..framework.conf import SchedulerConf
from ..framework.decisions import QueueUpdate
from ..plugins.proportion import RecentUsageArguments

_log = get_logger(__name__)

WRITE_EVERY_SECONDS = 30.0


def half_life_of(conf: SchedulerConf) -> float:
    """The conf's ``recentUsage.halfLife`` in seconds (0: shares forget, nothing to keep)."""
    option = conf.option("proportion")
    if option is None:
        return 0.0
    return RecentUsageArguments.parse(Arguments("proportion", option.arguments)).half_life


@dataclass(slots=True)
class UsageLedger:
    write_every: float = WRITE_EVERY_SECONDS
    ledgers: dict[str, RecentUsage] = field(default_factory=dict)
    written: dict[str, float] = field(default_factory=dict)

    def observe(
        self,
        updates: Sequence[QueueUpdate],
        queues: Iterable[Mapping[str, Any]],
        now: float,
        half_life: float,
    ) -> dict[str, str]:
        """Accrue the allocations of ``updates`` up to ``now``; the annotations due to be written."""
        if half_life <= 0:
            self.ledgers.clear()
            return {}
        on_queue = {name_of(q): annotations_of(q) for q in queues}
        due: dict[str, str] = {}
        for update in updates:
            ledger = self.ledgers.get(update.name)
            if ledger is None:
                # A ledger written by an earlier scheduler resumes; else this queue's memory starts now.
                ledger = read_recent_usage(on_queue.get(update.name, {})) or RecentUsage(now)
                self.written[update.name] = now
            held = {r: float(v) for r, v in update.allocated.items() if v}
            ledger = self.ledgers[update.name] = ledger.accrue(held, now, half_life)
            if now - self.written.get(update.name, now) >= self.write_every and update.name in on_queue:
                due[update.name] = ledger.to_annotation()
        for name in set(self.ledgers) - {u.name for u in updates}:
            del self.ledgers[name]  # a deleted queue
        return due

    async def write(self, client: KubeClient, due: Mapping[str, str], now: float) -> None:
        for name, text in due.items():
            try:
                await client.patch(
                    QUEUES.object_path(name), {"metadata": {"annotations": {RECENT_USAGE_KEY: text}}}
                )
            except (ApiError, *NETWORK_ERRORS) as exc:
                _log.warning("recent usage not written", queue=name, error=str(exc))
                continue
            self.written[name] = now
