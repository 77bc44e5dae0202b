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

The work is shared by what it indexes: ``views_nodes``, ``views_groups`` and ``views_pods`` bring each kind
up to date over the state and order of ``views_state``, and ``views_diff`` finds what changed in a list.
This module is the way in (``update``, ``fill``) and what the snapshot reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .job import JobInfo
from .node import NodeInfo
from .nodetable import NodeTable
from .status import TaskStatus
from .task import TaskInfo
from .views_diff import Obj, Reset, object_ids
from .views_groups import GroupViews
from .views_nodes import NodeViews
from .views_pods import PodViews
from .views_state import GroupEntry, NodeEntry, PodEntry

__all__ = ["Reset", "Touched", "Views"]


@dataclass(slots=True)
class Touched:
    """What a session changed in the views it was handed (a task may be listed more than once)."""

    tasks: list[TaskInfo] = field(default_factory=list)
    jobs: list[JobInfo] = field(default_factory=list)
    # Tasks the session gave an equivalence class (``TaskInfo.klass``, a cache of that session's).
    classed: list[TaskInfo] = field(default_factory=list)


class Views(PodViews, GroupViews, NodeViews):
    """Nodes, jobs and the node table of the objects last given to ``update``."""

    # --- the one way in -------------------------------------------------------------------------------------

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
        read: list[NodeEntry] = []
        for obj in nodes:
            old = old_nodes.get(id(obj))
            record = old.record if old is not None and old.obj is obj else NodeInfo.from_node(obj)
            read.append(NodeEntry(obj, record, record.fresh() if self.keep else record))
        read.sort(key=lambda e: e.node.name)
        for node_entry in read:
            self.node_entries[id(node_entry.obj)] = node_entry
            self.nodes.append(node_entry.node)
            self.by_name[node_entry.node.name] = node_entry.node
        base = self._numbering(len(podgroups))
        self._group_base, self._group_ids = base, object_ids(podgroups)
        for i, obj in enumerate(podgroups):
            prev = old_groups.get(id(obj))
            job_record = prev.record if prev is not None and prev.obj is obj else self._read_group(obj)
            group = GroupEntry(obj, job_record, job_record.fresh() if self.keep else job_record, base + i)
            self.groups[id(obj)] = group
            self.group_of[group.job.uid] = group
            self.jobs[group.job.uid] = group.job
        base = self._numbering(len(pods))
        self._pod_base, self._pod_ids, self._pods_seen = base, object_ids(pods), pods
        for i, obj in enumerate(pods):
            was = old_pods.get(id(obj))
            task_record = was.record if was is not None and was.obj is obj else self._read_pod(obj, None)
            twin = task_record.fresh() if self.keep else task_record
            entry = PodEntry(obj, task_record, twin, pos=base + i)
            self.pods[id(obj)] = entry
            self.pod_of[task_record.uid] = entry
            self._add(entry, charge=False)
        self._filling = False
        self._nodes_seen = nodes
        if self.keep:
            self.table = NodeTable(self.nodes)
            self._changed.update(self.jobs, self.shadows)
            self._judge_steady()

    # --- what the snapshot reads ----------------------------------------------------------------------------

    def all_jobs(self) -> dict[str, JobInfo]:
        return {**self.jobs, **self.shadows} if self.shadows else dict(self.jobs)

    def orphaned(self) -> list[TaskInfo]:
        """Pending pods of ours whose PodGroup does not exist."""
        pending = TaskStatus.PENDING
        waiting = [t for tasks in self.unowned.values() for t in tasks.values() if t.status is pending]
        return sorted(waiting, key=self._pos) if len(waiting) > 1 else waiting

    # --- a session's changes, undone ------------------------------------------------------------------------

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

    # --- steady jobs ----------------------------------------------------------------------------------------

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
