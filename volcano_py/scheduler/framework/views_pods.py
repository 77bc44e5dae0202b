"""The kept views' pods, brought up to date by what changed: each pod's task charged to its node (and the
node table) and put in its job, as the from-scratch build does, and taken off again as it was put on.

A new version of a pod held is, most of the time, a bind or the kubelet moving it on (most of a backlog's
drain: each pod bound, then started); its task then keeps its places on its node and in its job
(``_revise``). Anything else takes the old task off and puts a new one on.
"""

from __future__ import annotations

from collections.abc import Sequence

from volcano_py.api.objects import uid_of

from . import dra
from .job import JobInfo
from .node import NodeInfo
from .status import OCCUPYING_STATUSES, TaskStatus
from .task import TaskInfo
from .views_diff import Obj, listing_ids, renumber
from .views_state import PodEntry, ViewsState

_DONE = (TaskStatus.SUCCEEDED, TaskStatus.FAILED)


class PodViews(ViewsState):
    """The pods of ``views.Views``: what they charge to nodes and add to jobs."""

    def _read_pod(self, obj: Obj, previous: PodEntry | None) -> TaskInfo:
        if previous is not None:
            revised = previous.record.revised(previous.obj, obj)
            if revised is not None:
                return revised
        return TaskInfo.from_pod(obj, priority_classes=self.priorities)

    def _update_pods(self, pods: Sequence[Obj]) -> None:
        entries = self.pods
        if self.claiming:
            for entry in list(self.claiming.values()):
                self._remove(entry)
                entry.task = entry.record.fresh()
                self._add(entry, charge=True)
        ids = listing_ids(pods, self._pods_seen, self._pod_ids)
        in_place = self._in_place(pods, ids, self._pod_ids, entries, self._pod_base)
        if in_place is not None:
            new, gone = in_place
        else:
            new, gone = self._pods_renumbered(pods)
        self._pod_ids, self._pods_seen = ids, pods
        if gone:
            # A new version of a pod held: when a bind or the kubelet is all that changed it, its task keeps
            # its places on its node and in its job. When every pod was numbered afresh, the gone ones still
            # hold old numbers among the new: a task moved meanwhile cannot be placed by its neighbour's
            # number (``_appended``), so whatever it joins is sorted.
            self._stale_places = in_place is None
            kept: list[tuple[int, Obj]] = []
            for at, obj in new:
                previous = self.pod_of.get(uid_of(obj))
                if previous is None or gone.pop(id(previous.obj), None) is None:
                    kept.append((at, obj))
                elif not self._revise(previous, obj, at):
                    gone[id(previous.obj)] = previous
                    kept.append((at, obj))
            self._stale_places = False
            new = kept
        by_uid: dict[str, PodEntry] = {}
        for i, entry in gone.items():
            del entries[i]
            if self.pod_of.get(entry.record.uid) is entry:
                del self.pod_of[entry.record.uid]
            by_uid[entry.record.uid] = entry
            self._remove(entry)
        for at, obj in new:
            uid = uid_of(obj)
            record = self._read_pod(obj, by_uid.get(uid) if uid else None)
            entry = PodEntry(obj, record, record.fresh(), pos=at)
            entries[id(obj)] = entry
            self.pod_of[record.uid] = entry
            self._add(entry, charge=True)

    def _revise(self, entry: PodEntry, obj: Obj, at: int) -> bool:
        """Bring ``entry`` to ``obj``, a later version of its pod, without taking its task off its node and
        job: the twin (as read, never a session's: ``Views._undo`` came first) takes the new status and node
        where it is. False when the pod must be read again (more than a bind's or the kubelet's fields
        changed), or its task is one whose class or job is derived from more than its pod's status (claims,
        a shadow job)."""
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

    def _pods_renumbered(self, pods: Sequence[Obj]) -> tuple[list[tuple[int, Obj]], dict[int, PodEntry]]:
        """The new pods and the gone ones, every pod numbered afresh: one pass over the list."""
        entries = self.pods
        base = self._pod_base = self._numbering(len(pods))
        new = renumber(pods, entries, base)
        # What is gone: first the old versions of the new pods (found by uid, the usual change), then, only
        # if some are still missing, whatever else was not seen.
        missing = len(entries) - (len(pods) - len(new))
        gone: dict[int, PodEntry] = {}
        for _, obj in new if missing else ():
            old = self.pod_of.get(uid_of(obj))
            if old is not None and old.pos < base:
                gone[id(old.obj)] = old
        if len(gone) != missing:
            gone = {i: e for i, e in entries.items() if e.pos < base}
        return new, gone

    def _add(self, entry: PodEntry, *, charge: bool) -> None:
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

    def _remove(self, entry: PodEntry) -> None:
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

    def _charge(self, entry: PodEntry, node: NodeInfo, *, charge: bool) -> None:
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

    def _uncharge(self, entry: PodEntry) -> None:
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
