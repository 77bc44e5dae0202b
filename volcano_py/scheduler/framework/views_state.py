"""What the kept views hold, and the order they keep it in: the state the node, PodGroup and pod pieces of
``views.Views`` share (``views_nodes``, ``views_groups``, ``views_pods``).

Each object read is held as an entry: the dict, its record as read (never handed to a session) and the
views' twin of that record (what a session gets and may change). Every pod and PodGroup entry carries its
place in the list last given; the views keep each node's, job's and status's tasks, and the jobs, in that
order, the order a from-scratch build has, because decisions between equals go by it. A change puts an
entry last wherever it belongs; ``_appended`` notes the dicts that left out of order and ``_sort`` puts
them back once per update.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from . import dra
from .job import JobInfo
from .node import NodeInfo
from .nodetable import NodeTable
from .status import TaskStatus
from .steady import SteadyJobs
from .task import TaskInfo
from .views_diff import Ids, Obj, in_place

_Entry = TypeVar("_Entry")


@dataclass(slots=True, eq=False)
class PodEntry:
    obj: Obj
    record: TaskInfo  # as read; never handed to a session
    task: TaskInfo  # the views' twin of it
    # The node the table charged it to, and how (None: not charged).
    charged: tuple[str, TaskStatus] | None = None
    # Its place in the pods last given (numbered afresh each update, above every earlier number): the
    # views keep each node's, job's and status's tasks in this order, the order a from-scratch build has.
    pos: int = 0


@dataclass(slots=True, eq=False)
class GroupEntry:
    obj: Obj
    record: JobInfo
    job: JobInfo
    pos: int = 0  # as ``PodEntry.pos``, among the PodGroups


@dataclass(slots=True, eq=False)
class NodeEntry:
    obj: Obj
    record: NodeInfo
    node: NodeInfo


class ViewsState:
    """Nodes, jobs and the node table of the objects last given to ``Views.update``, and their order."""

    def __init__(self, ours: frozenset[str], priorities: dict[str, int], *, keep: bool) -> None:
        self.ours = ours
        self.priorities = priorities
        self.keep = keep
        self.pods: dict[int, PodEntry] = {}
        self.pod_of: dict[str, PodEntry] = {}  # by uid
        self.groups: dict[int, GroupEntry] = {}
        self.group_of: dict[str, GroupEntry] = {}  # by the job's uid
        self.node_entries: dict[int, NodeEntry] = {}
        self.nodes: list[NodeInfo] = []
        self._nodes_seen: Sequence[Obj] | None = None  # the node list last read whole
        self.by_name: dict[str, NodeInfo] = {}
        # Jobs of PodGroups, in the PodGroups' order; then the one-pod jobs of pods naming none.
        self.jobs: dict[str, JobInfo] = {}
        self.shadows: dict[str, JobInfo] = {}
        # Pods of ours naming a PodGroup that does not exist, by the PodGroup's ``namespace/name``.
        self.unowned: dict[str, dict[int, TaskInfo]] = {}
        # Pending pods with ResourceClaims: their class depends on the claims, read anew every update.
        self.claiming: dict[int, PodEntry] = {}
        self.claim_index: dict[str, dra.Claim] | None = None
        self._claims: Sequence[Obj] = ()
        self.table: NodeTable | None = None
        # Each node's place in ``nodes`` (sorted by name: a replaced node keeps it), built when first needed.
        self._node_at: dict[str, int] | None = None
        # Plugins' facts of the nodes alone (``Snapshot.node_facts``): dropped when any node changes.
        self.node_facts: dict[str, Any] = {}
        # The first number of the next update's places (``PodEntry.pos``), and the dicts whose order an
        # update may have broken, put back in order at its end.
        self._next_pos = 0
        # The ids of the pods last given, in order, and the number of the first: the pod at index i has
        # ``PodEntry.pos == _pod_base + i`` (see ``_in_place``).
        self._pod_ids: Ids | None = None
        self._pod_base = 0
        # The pod list those ids are of: a listing that says how it differs from it (``listing_ids``) needs
        # no walk over every pod.
        self._pods_seen: Sequence[Obj] | None = None
        # The same for the PodGroups (``GroupEntry.pos == _group_base + i``).
        self._group_ids: Ids | None = None
        self._group_base = 0
        self._unsorted: dict[int, dict[str, Any]] = {}
        self._filling = False
        self._jobs_unsorted = False
        # Set while the places of the last update's pods and of this one's are mixed (``_update_pods``).
        self._stale_places = False
        # Tasks charged to a node that have any (anti-)affinity: the few whose terms bind other pods.
        self.affine: dict[int, TaskInfo] = {}
        # The jobs nothing happened to since a session settled them (kept views only), and the uids of
        # jobs changed since the last update judged them.
        self.steady: SteadyJobs | None = SteadyJobs() if keep else None
        self._changed: set[str] = set()

    # --- places ---------------------------------------------------------------------------------------------

    def _numbering(self, count: int) -> int:
        """The first of ``count`` places for the objects of one list, above every place given before."""
        base = self._next_pos
        self._next_pos += count + 1
        return base

    def _in_place(
        self,
        objs: Sequence[Obj],
        ids: Ids,
        last: Ids | None,
        entries: dict[int, _Entry],
        base: int,
    ) -> tuple[list[tuple[int, Obj]], dict[int, _Entry]] | None:
        """``views_diff.in_place``; the places it keeps (``base`` on) stay taken for later numbering."""
        found = in_place(objs, ids, last, entries, base)
        if found is not None:
            self._next_pos = max(self._next_pos, base + len(ids) + 1)
        return found

    def _entry(self, value: TaskInfo | JobInfo) -> PodEntry | None:
        task = value if isinstance(value, TaskInfo) else next(iter(value.tasks.values()))  # a shadow's one
        return self.pods.get(id(task.pod))

    def _pos(self, value: TaskInfo | JobInfo) -> int:
        entry = self._entry(value)
        assert entry is not None, "a task in the views without its pod"
        return entry.pos

    # --- order ----------------------------------------------------------------------------------------------

    def _join(self, job: JobInfo, task: TaskInfo) -> None:
        job.add_task(task)
        self._changed.add(job.uid)
        self._appended(job.tasks)
        self._appended(job.by_status[task.status])

    def _appended(self, added: dict[str, Any]) -> None:
        """Note ``added`` for ``_sort`` when the entry just put last belongs before the one it follows (a
        pod changed or a session's change undone: the task goes last, its place may be anywhere)."""
        if self._filling or len(added) < 2 or id(added) in self._unsorted:
            return  # filled from empty, everything goes in in order
        if self._stale_places:
            self._unsorted[id(added)] = added
            return
        values = reversed(added.values())
        last, before = next(values), next(values)
        if self._pos(before) > self._pos(last):
            self._unsorted[id(added)] = added

    def _sort(self) -> None:
        """Put the tasks of every node, job and status, and the jobs, back in the order of the lists given,
        as a from-scratch build has them: decisions between equals go by it."""
        for tasks in self._unsorted.values():
            if all(self._entry(value) is not None for value in tasks.values()):  # not a dropped job's
                ordered = sorted(tasks.items(), key=lambda item: self._pos(item[1]))
                tasks.clear()
                tasks.update(ordered)
        self._unsorted.clear()
        if self._jobs_unsorted:
            self._jobs_unsorted = False
            places = [self.group_of[uid].pos for uid in self.jobs]
            if any(a > b for a, b in itertools.pairwise(places)):
                ordered_jobs = sorted(self.jobs.items(), key=lambda item: self.group_of[item[0]].pos)
                self.jobs.clear()
                self.jobs.update(ordered_jobs)
