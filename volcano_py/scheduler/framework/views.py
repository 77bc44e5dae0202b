"""The views a snapshot hands its session: nodes with the tasks charged to them, jobs with their tasks, the
node table. Built once, then kept and brought up to date by what changed.

``Views.update`` takes the cluster's objects as lists of the API's dicts, finds what changed since the last
update by the dicts' identities (the informers replace a changed object's dict and never change a dict they
handed out, and the views keep each dict they read, so an id cannot be reused meanwhile) and applies only
that: a pod added, replaced or gone is taken off its node, its job and the table and put back. From empty,
the same steps are the from-scratch build, so both give the same views; ``keep=False`` (a one-off build)
keeps nothing for next time.

A session changes the tasks, nodes and jobs it is handed (statuses, placements, a job's phase) and records
each one it changes in ``Touched``. The next update first puts those back as read (a touched task is taken
off and a fresh twin of its record put on; a touched job is replaced by a fresh twin), so nothing a session
decided survives but through the watch. The node table is never handed out: a session works on a copy.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from . import dra
from .job import JobInfo
from .meaning import node_meaning
from .node import NodeInfo
from .nodetable import NodeTable
from .status import OCCUPYING_STATUSES, TaskStatus
from .steady import SteadyJobs
from .task import TaskInfo

Obj = Any  # Mapping[str, Any]: the API's JSON, read-only here

_DONE = (TaskStatus.SUCCEEDED, TaskStatus.FAILED)


@dataclass(slots=True)
class Touched:
    """What a session changed in the views it was handed (a task may be listed more than once)."""

    tasks: list[TaskInfo] = field(default_factory=list)
    jobs: list[JobInfo] = field(default_factory=list)
    # Tasks the session gave an equivalence class (``TaskInfo.klass``, a cache of that session's).
    classed: list[TaskInfo] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class _Pod:
    obj: Obj
    record: TaskInfo  # as read; never handed to a session
    task: TaskInfo  # the views' twin of it
    # The node the table charged it to, and how (None: not charged).
    charged: tuple[str, TaskStatus] | None = None
    # Its place in the pods last given (numbered afresh each update, above every earlier number): the
    # views keep each node's, job's and status's tasks in this order, the order a from-scratch build has.
    pos: int = 0


@dataclass(slots=True, eq=False)
class _Group:
    obj: Obj
    record: JobInfo
    job: JobInfo
    pos: int = 0  # as ``_Pod.pos``, among the PodGroups


@dataclass(slots=True, eq=False)
class _Node:
    obj: Obj
    record: NodeInfo
    node: NodeInfo


def _ids(objs: Sequence[Obj]) -> npt.NDArray[np.int64]:
    return np.fromiter(map(id, objs), dtype=np.int64, count=len(objs))


_Entry = TypeVar("_Entry")


def _in_place(
    objs: Sequence[Obj],
    ids: npt.NDArray[np.int64],
    last: npt.NDArray[np.int64] | None,
    entries: dict[int, _Entry],
    base: int,
) -> tuple[list[tuple[int, Obj]], dict[int, _Entry]] | None:
    """The new objects (with their places) and the gone entries when ``objs`` is the last list (``last``,
    its ids) with a few objects replaced where they stood and a few added at the end (what an informer's
    mirror hands over between two cycles), found by comparing the two lists' ids in one vector operation;
    None when it is anything else. Every object keeps its place number (``base`` + index), so nothing is
    renumbered."""
    if last is None or len(ids) < len(last):
        return None
    changed = np.flatnonzero(ids[: len(last)] != last)
    added = len(ids) - len(last)
    if 8 * (len(changed) + added) > len(ids):
        return None  # many changes: the loop is as cheap
    new: list[tuple[int, Obj]] = []
    gone: dict[int, _Entry] = {}
    seen: set[int] = set()
    for i in itertools.chain(changed.tolist(), range(len(last), len(ids))):
        obj = objs[i]
        if id(obj) in entries or id(obj) in seen:
            return None  # an object the views hold moved (the order changed), or one is listed twice
        seen.add(id(obj))
        new.append((base + i, obj))
        if i < len(last):
            old_id = int(last[i])
            gone[old_id] = entries[old_id]
    return new, gone


class Reset(Exception):
    """The change cannot be applied in place (a node came or went, or objects held are listed in another
    order): the views are built again."""


class Views:
    """Nodes, jobs and the node table of the objects last given to ``update``."""

    def __init__(self, ours: frozenset[str], priorities: dict[str, int], *, keep: bool) -> None:
        self.ours = ours
        self.priorities = priorities
        self.keep = keep
        self.pods: dict[int, _Pod] = {}
        self.pod_of: dict[str, _Pod] = {}  # by uid
        self.groups: dict[int, _Group] = {}
        self.group_of: dict[str, _Group] = {}  # by the job's uid
        self.node_entries: dict[int, _Node] = {}
        self.nodes: list[NodeInfo] = []
        self._nodes_seen: Sequence[Obj] | None = None  # the node list last read whole
        self.by_name: dict[str, NodeInfo] = {}
        # Jobs of PodGroups, in the PodGroups' order; then the one-pod jobs of pods naming none.
        self.jobs: dict[str, JobInfo] = {}
        self.shadows: dict[str, JobInfo] = {}
        # Pods of ours naming a PodGroup that does not exist, by the PodGroup's ``namespace/name``.
        self.unowned: dict[str, dict[int, TaskInfo]] = {}
        # Pending pods with ResourceClaims: their class depends on the claims, read anew every update.
        self.claiming: dict[int, _Pod] = {}
        self.claim_index: dict[str, dra.Claim] | None = None
        self._claims: Sequence[Obj] = ()
        self.table: NodeTable | None = None
        # Each node's place in ``nodes`` (sorted by name: a replaced node keeps it), built when first needed.
        self._node_at: dict[str, int] | None = None
        # Plugins' facts of the nodes alone (``Snapshot.node_facts``): dropped when any node changes.
        self.node_facts: dict[str, Any] = {}
        # The first number of the next update's places (``_Pod.pos``), and the dicts whose order an update
        # may have broken, put back in order at its end.
        self._next_pos = 0
        # The ids of the pods last given, in order, and the number of the first: the pod at index i has
        # ``_Pod.pos == _pod_base + i`` (see ``_pods_in_place``).
        self._pod_ids: npt.NDArray[np.int64] | None = None
        self._pod_base = 0
        # The same for the PodGroups (``_Group.pos == _group_base + i``).
        self._group_ids: npt.NDArray[np.int64] | None = None
        self._group_base = 0
        self._unsorted: dict[int, dict[str, Any]] = {}
        self._filling = False
        self._jobs_unsorted = False
        # Tasks charged to a node that have any (anti-)affinity: the few whose terms bind other pods.
        self.affine: dict[int, TaskInfo] = {}
        # The jobs nothing happened to since a session settled them (kept views only), and the uids of
        # jobs changed since the last update judged them.
        self.steady: SteadyJobs | None = SteadyJobs() if keep else None
        self._changed: set[str] = set()

    # --- the one way in ------------------------------------------------------------------------------------

    def update(
        self,
        nodes: Sequence[Obj],
        pods: Sequence[Obj],
        podgroups: Sequence[Obj],
        claims: Sequence[Obj],
        touched: Touched | None,
    ) -> None:
        """Bring the views to ``nodes``, ``pods`` and ``podgroups``, after undoing ``touched``. Raises
        ``Reset`` when they must be built again from empty (see ``fill``)."""
        self._claims = claims
        self.claim_index = None
        stale = self._undo(touched) if touched is not None else ()
        self._update_nodes(nodes)
        self._update_groups(podgroups)
        for job in stale:
            group = self.group_of.get(job.uid)
            if group is not None and group.job is job:  # not replaced by a new version of its PodGroup
                self._retwin_group(group, group)
        self._update_pods(pods)
        self._sort()
        self._judge_steady()
        self._nodes_seen = nodes

    def fill(
        self,
        nodes: Sequence[Obj],
        pods: Sequence[Obj],
        podgroups: Sequence[Obj],
        claims: Sequence[Obj],
        parsed: Views | None = None,
    ) -> None:
        """Build the views from empty (``parsed``: views whose records may be reused, not their twins)."""
        self._claims = claims
        self.claim_index = None
        self._filling = True
        old_nodes = parsed.node_entries if parsed is not None else {}
        old_groups = parsed.groups if parsed is not None else {}
        old_pods = parsed.pods if parsed is not None else {}
        read: list[_Node] = []
        for obj in nodes:
            old = old_nodes.get(id(obj))
            record = old.record if old is not None and old.obj is obj else NodeInfo.from_node(obj)
            read.append(_Node(obj, record, record.fresh() if self.keep else record))
        read.sort(key=lambda e: e.node.name)
        for node_entry in read:
            self.node_entries[id(node_entry.obj)] = node_entry
            self.nodes.append(node_entry.node)
            self.by_name[node_entry.node.name] = node_entry.node
        base = self._numbering(len(podgroups))
        self._group_base, self._group_ids = base, _ids(podgroups)
        for i, obj in enumerate(podgroups):
            prev = old_groups.get(id(obj))
            job_record = prev.record if prev is not None and prev.obj is obj else self._read_group(obj)
            group = _Group(obj, job_record, job_record.fresh() if self.keep else job_record, base + i)
            self.groups[id(obj)] = group
            self.group_of[group.job.uid] = group
            self.jobs[group.job.uid] = group.job
        base = self._numbering(len(pods))
        self._pod_base, self._pod_ids = base, _ids(pods)
        for i, obj in enumerate(pods):
            was = old_pods.get(id(obj))
            task_record = was.record if was is not None and was.obj is obj else self._read_pod(obj, None)
            entry = _Pod(obj, task_record, task_record.fresh() if self.keep else task_record, pos=base + i)
            self.pods[id(obj)] = entry
            self.pod_of[task_record.uid] = entry
            self._add(entry, charge=False)
        self._filling = False
        self._nodes_seen = nodes
        if self.keep:
            self.table = NodeTable(self.nodes)
            self._changed.update(self.jobs, self.shadows)
            self._judge_steady()

    # --- what the snapshot reads ---------------------------------------------------------------------------

    def all_jobs(self) -> dict[str, JobInfo]:
        return {**self.jobs, **self.shadows} if self.shadows else dict(self.jobs)

    def orphaned(self) -> list[TaskInfo]:
        """Pending pods of ours whose PodGroup does not exist."""
        pending = TaskStatus.PENDING
        waiting = [t for tasks in self.unowned.values() for t in tasks.values() if t.status is pending]
        return sorted(waiting, key=self._pos) if len(waiting) > 1 else waiting

    # --- reading -------------------------------------------------------------------------------------------

    def _read_pod(self, obj: Obj, previous: _Pod | None) -> TaskInfo:
        if previous is not None:
            revised = previous.record.revised(previous.obj, obj)
            if revised is not None:
                return revised
        return TaskInfo.from_pod(obj, priority_classes=self.priorities)

    def _read_group(self, obj: Obj) -> JobInfo:
        return JobInfo.from_podgroup(obj, priority_classes=self.priorities)

    # --- a session's changes, undone -----------------------------------------------------------------------

    def _undo(self, touched: Touched) -> list[JobInfo]:
        """Put the touched tasks back as read; returns the touched jobs, for the caller to replace by fresh
        twins once the PodGroups are brought up to date (a job whose PodGroup changed gets its twin there:
        after a backlog's first session, every job)."""
        for task in touched.classed:
            task.klass = None
        done: set[int] = set()
        for task in touched.tasks:
            if id(task) in done:
                continue
            done.add(id(task))
            entry = self.pods.get(id(task.pod))
            if entry is None or entry.task is not task:
                continue  # gone from the views already
            self._remove(entry)
            entry.task = entry.record.fresh()
            entry.charged = None
            self._add(entry, charge=True)
        return touched.jobs

    # --- nodes ---------------------------------------------------------------------------------------------

    def _update_nodes(self, nodes: Sequence[Obj]) -> None:
        if nodes is self._nodes_seen:
            return  # the cache's very list: not one node changed
        entries = self.node_entries
        # Set operations, not a loop over the nodes: a heartbeat or two in thousands of nodes is the usual
        # change, and this runs once per session (the agent scheduler's: once per pod or few).
        by_id = dict(zip(map(id, nodes), nodes, strict=True))
        new_ids = by_id.keys() - entries.keys()
        if not new_ids and len(by_id) == len(entries):
            return
        gone = [entries[i] for i in entries.keys() - by_id.keys()]
        new = [by_id[i] for i in new_ids]
        if len(gone) != len(new):
            raise Reset
        old_by_name = {e.node.name: e for e in gone}
        for obj in new:
            old = old_by_name.pop(str((obj.get("metadata") or {}).get("name")), None)
            if old is None:
                raise Reset  # a node came and another went
            if node_meaning(obj) == node_meaning(old.obj):
                # A heartbeat: the node as read, its place and the plugins' facts of it all stand.
                del self.node_entries[id(old.obj)]
                self.node_entries[id(obj)] = _Node(obj, old.record, old.node)
                continue
            record = NodeInfo.from_node(obj)
            self._replace_node(old, _Node(obj, record, record.fresh()))

    def _replace_node(self, old: _Node, new: _Node) -> None:
        self.node_facts = {}
        del self.node_entries[id(old.obj)]
        self.node_entries[id(new.obj)] = new
        node = new.node
        for task in old.node.tasks.values():
            node.add_task(task)
        if self._node_at is None:
            self._node_at = {n.name: i for i, n in enumerate(self.nodes)}
        index = self._node_at[node.name]
        self.nodes[index] = node
        self.by_name[node.name] = node
        table = self.table
        if table is not None:
            if tuple(new.record.allocatable) != tuple(old.record.allocatable):
                self.table = NodeTable(self.nodes)  # its columns may change
            else:
                table.set_allocatable(index, node.allocatable)

    # --- PodGroups -----------------------------------------------------------------------------------------

    def _update_groups(self, podgroups: Sequence[Obj]) -> None:
        groups = self.groups
        ids = _ids(podgroups)
        in_place = _in_place(podgroups, ids, self._group_ids, groups, self._group_base)
        if in_place is not None:
            new, gone_entries = in_place
            self._next_pos = max(self._next_pos, self._group_base + len(ids) + 1)
        else:
            new, gone_entries = self._groups_renumbered(podgroups)
        self._group_ids = ids
        if not new and not gone_entries:
            return
        gone: dict[str, _Group] = {}
        for i, old in gone_entries.items():
            del groups[i]
            gone[old.record.uid] = old
            if self.group_of.get(old.record.uid) is old:
                del self.group_of[old.record.uid]
        self._jobs_unsorted = True
        for at, obj in new:
            record = self._read_group(obj)
            group = _Group(obj, record, record.fresh(), at)
            groups[id(obj)] = group
            self.group_of[record.uid] = group
            replaced = gone.pop(record.uid, None)
            if replaced is not None:
                self._retwin_group(replaced, group)
                continue
            job = group.job
            self.jobs[job.uid] = job
            self._changed.add(job.uid)
            for task in self.unowned.pop(job.uid, {}).values():
                self._join(job, task)
        for old in gone.values():
            job = old.job
            if self.jobs.get(job.uid) is job:
                del self.jobs[job.uid]
                self._changed.add(job.uid)
                if job.tasks:
                    self.unowned[job.uid] = {id(t): t for t in job.tasks.values()}

    def _groups_renumbered(self, podgroups: Sequence[Obj]) -> tuple[list[tuple[int, Obj]], dict[int, _Group]]:
        """The new PodGroups and the gone ones, every one numbered afresh: one pass over the list."""
        groups = self.groups
        base = self._group_base = self._numbering(len(podgroups))
        get = groups.get
        new: list[tuple[int, Obj]] = []
        before = -1
        for i, obj in enumerate(podgroups):
            found = get(id(obj))
            if found is None:
                new.append((base + i, obj))
            else:
                if found.pos < before:
                    raise Reset  # as for pods: another order, so jobs would be in another order too
                before = found.pos
                found.pos = base + i
        if not new and len(podgroups) == len(groups):
            return new, {}
        return new, {i: g for i, g in groups.items() if g.pos < base}

    def _retwin_group(self, old: _Group, new: _Group) -> None:
        """A fresh twin of ``new``'s record takes the place and tasks of ``old``'s (which may be ``new``)."""
        job = new.record.fresh()
        for task in old.job.tasks.values():
            self._join(job, task)
        new.job = job
        self.jobs[job.uid] = job
        self._changed.add(job.uid)

    # --- pods ----------------------------------------------------------------------------------------------

    def _update_pods(self, pods: Sequence[Obj]) -> None:
        entries = self.pods
        if self.claiming:
            for entry in list(self.claiming.values()):
                self._remove(entry)
                entry.task = entry.record.fresh()
                self._add(entry, charge=True)
        ids = _ids(pods)
        in_place = self._pods_in_place(pods, ids)
        if in_place is not None:
            new, gone = in_place
        else:
            new, gone = self._pods_renumbered(pods)
        self._pod_ids = ids
        if gone:
            # A new version of a pod held: when a bind or the kubelet is all that changed it, its task keeps
            # its places on its node and in its job (most of a backlog's drain: each pod bound, then started).
            kept: list[tuple[int, Obj]] = []
            for at, obj in new:
                previous = self.pod_of.get((obj.get("metadata") or {}).get("uid") or "")
                if previous is None or gone.pop(id(previous.obj), None) is None:
                    kept.append((at, obj))
                elif not self._revise(previous, obj, at):
                    gone[id(previous.obj)] = previous
                    kept.append((at, obj))
            new = kept
        by_uid: dict[str, _Pod] = {}
        for i, entry in gone.items():
            del entries[i]
            if self.pod_of.get(entry.record.uid) is entry:
                del self.pod_of[entry.record.uid]
            by_uid[entry.record.uid] = entry
            self._remove(entry)
        for at, obj in new:
            uid = (obj.get("metadata") or {}).get("uid")
            record = self._read_pod(obj, by_uid.get(uid) if uid else None)
            entry = _Pod(obj, record, record.fresh(), pos=at)
            entries[id(obj)] = entry
            self.pod_of[record.uid] = entry
            self._add(entry, charge=True)

    def _revise(self, entry: _Pod, obj: Obj, at: int) -> bool:
        """Bring ``entry`` to ``obj``, a later version of its pod, without taking its task off its node and
        job: the twin (as read, never a session's: ``_undo`` came first) takes the new status and node where
        it is. False when the pod must be read again (more than a bind's or the kubelet's fields changed),
        or its task is one whose class or job is derived from more than its pod's status (claims, a shadow
        job)."""
        record = entry.record.revised(entry.obj, obj)
        if record is None:
            return False
        task = entry.task
        status, node_name = record.status, record.node_name
        moved = status is not task.status or node_name != task.node_name
        ours = task.scheduler_name in self.ours
        # A pod with claims is kept by its pod's id among those re-classed every update (``claiming``).
        if task.claims_used or (moved and ours and entry.record.job_id is None):
            return False
        del self.pods[id(entry.obj)]
        self.pods[id(obj)] = entry
        entry.obj, entry.record, entry.pos = obj, record, at
        task.pod = obj
        if not moved:
            return True
        node = self.by_name.get(node_name) if node_name and status in OCCUPYING_STATUSES else None
        charged = entry.charged
        same_charge = (
            node is not None
            and charged is not None
            and charged[0] == node_name
            and (charged[1] is TaskStatus.RELEASING) == (status is TaskStatus.RELEASING)
        )
        if charged is not None and not same_charge:
            self._uncharge(entry)
        owner = self.jobs.get(task.job_id) if ours and task.job_id is not None else None
        if owner is not None and owner.tasks.get(task.uid) is task:
            owner.set_status(task, status)
            self._appended(owner.by_status[status])
            self._changed.add(owner.uid)
        else:
            task.status = status
        task.node_name = node_name
        if same_charge:
            entry.charged = (node_name, status)
        elif node is not None:
            self._charge(entry, node, charge=True)
        return True

    def _pods_in_place(
        self, pods: Sequence[Obj], ids: npt.NDArray[np.int64]
    ) -> tuple[list[tuple[int, Obj]], dict[int, _Pod]] | None:
        """``_in_place`` for the pods."""
        found = _in_place(pods, ids, self._pod_ids, self.pods, self._pod_base)
        if found is not None:
            self._next_pos = max(self._next_pos, self._pod_base + len(ids) + 1)
        return found

    def _pods_renumbered(self, pods: Sequence[Obj]) -> tuple[list[tuple[int, Obj]], dict[int, _Pod]]:
        """The new pods and the gone ones, every pod numbered afresh: one pass over the list."""
        entries = self.pods
        # A loop, not set arithmetic over ids: at 10,000 pods the sets cost three times as much. A dict the
        # views hold cannot share its id with another one, so an id found is the same pod.
        base = self._pod_base = self._numbering(len(pods))
        get = entries.get
        new: list[tuple[int, Obj]] = []
        pos = base
        before = -1
        for obj in pods:
            found = get(id(obj))
            if found is None:
                new.append((pos, obj))
            else:
                if found.pos < before:
                    raise Reset  # pods held are listed in another order (a relist): build afresh
                before = found.pos
                found.pos = pos
            pos += 1
        # What is gone: first the old versions of the new pods (found by uid, the usual change), then, only
        # if some are still missing, whatever else was not seen.
        missing = len(entries) - (len(pods) - len(new))
        gone: dict[int, _Pod] = {}
        for _, obj in new if missing else ():
            old = self.pod_of.get((obj.get("metadata") or {}).get("uid") or "")
            if old is not None and old.pos < base:
                gone[id(old.obj)] = old
        if len(gone) != missing:
            gone = {i: e for i, e in entries.items() if e.pos < base}
        return new, gone

    def _add(self, entry: _Pod, *, charge: bool) -> None:
        """Charge the pod to its node and put it in its job, as the from-scratch build does."""
        task = entry.task
        if task.claims_used and task.status is TaskStatus.PENDING:
            if self.claim_index is None:
                self.claim_index = {c.key: c for c in (dra.read_claim(obj) for obj in self._claims)}
            # Pods differ by their claims' state, which is not in the pod: this twin says it.
            base = task.class_key if isinstance(task.class_key, tuple) else (task.class_key,)
            task.class_key = (*base, dra.claims_class_key(task.pod, self.claim_index))
            if self.keep:
                self.claiming[id(entry.obj)] = entry
        node = self.by_name.get(task.node_name) if task.node_name else None
        status = task.status
        if node is not None and status in OCCUPYING_STATUSES:
            self._charge(entry, node, charge=charge)
        if task.scheduler_name not in self.ours:
            return
        if task.job_id is None:
            if status in _DONE:
                return
            job = JobInfo.shadow_for(task)
            self.shadows[job.uid] = job
            task.job_id = job.uid
            job.add_task(task)
            self._appended(self.shadows)
            self._changed.add(job.uid)
            return
        owner = self.jobs.get(task.job_id)
        if owner is None:
            self.unowned.setdefault(task.job_id, {})[id(task)] = task
            return
        self._join(owner, task)

    def _remove(self, entry: _Pod) -> None:
        """Undo ``_add`` for the pod as it is now (a session may have moved it since)."""
        task = entry.task
        self.claiming.pop(id(entry.obj), None)
        self._uncharge(entry)
        if task.node_name:
            node = self.by_name.get(task.node_name)
            if node is not None and node.tasks.get(task.uid) is task:
                node.remove_task(task)
        if task.scheduler_name not in self.ours or task.job_id is None:
            return
        if entry.record.job_id is None:
            shadow = self.shadows.get(task.job_id)
            if shadow is not None and shadow.tasks.get(task.uid) is task:
                del self.shadows[task.job_id]
                self._changed.add(task.job_id)
            return
        owner = self.jobs.get(task.job_id)
        if owner is not None and owner.tasks.get(task.uid) is task:
            owner.remove_task(task)
            self._changed.add(owner.uid)
            return
        waiting = self.unowned.get(task.job_id)
        if waiting is not None and waiting.pop(id(task), None) is not None and not waiting:
            del self.unowned[task.job_id]

    def _charge(self, entry: _Pod, node: NodeInfo, *, charge: bool) -> None:
        """Count the pod's task on ``node`` (and in the node table unless ``charge`` is False: a table
        built afterwards counts it itself)."""
        task = entry.task
        node.add_task(task)
        self._appended(node.tasks)
        if charge and self.table is not None:
            self.table.charge_task(self.table.node_index[node.name], task.resreq, task.status, 1)
        entry.charged = (node.name, task.status)
        if task.affinity:
            self.affine[id(task)] = task

    def _uncharge(self, entry: _Pod) -> None:
        """Undo ``_charge``, as the task was counted then."""
        charged = entry.charged
        if charged is None:
            return
        task = entry.task
        entry.charged = None
        self.affine.pop(id(task), None)
        node = self.by_name.get(charged[0])
        if node is not None:
            node.remove_task(task)
            if self.table is not None:
                self.table.charge_task(self.table.node_index[node.name], task.resreq, charged[1], -1)

    # --- steady jobs ---------------------------------------------------------------------------------------

    def _judge_steady(self) -> None:
        """Judge again the jobs changed since the last update and those the last session settled."""
        steady = self.steady
        if steady is None:
            return
        changed = self._changed
        changed.update(job.uid for job in steady.settling)
        steady.settling.clear()
        jobs, shadows = self.jobs, self.shadows
        for uid in changed:
            steady.judge(jobs.get(uid) or shadows.get(uid), uid)
        changed.clear()

    # --- order ---------------------------------------------------------------------------------------------

    def _numbering(self, count: int) -> int:
        """The first of ``count`` places for the objects of one list, above every place given before."""
        base = self._next_pos
        self._next_pos += count + 1
        return base

    def _entry(self, value: TaskInfo | JobInfo) -> _Pod | None:
        task = value if isinstance(value, TaskInfo) else next(iter(value.tasks.values()))  # a shadow's one
        return self.pods.get(id(task.pod))

    def _pos(self, value: TaskInfo | JobInfo) -> int:
        entry = self._entry(value)
        assert entry is not None, "a task in the views without its pod"
        return entry.pos

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
