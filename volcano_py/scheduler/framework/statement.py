"""Statement: a transaction over the session's state.

``allocate``, ``pipeline`` and ``evict`` change the session at once (so later decisions in the same cycle
see them) and are recorded. ``discard()`` undoes them exactly, newest first. ``commit()`` turns them into
decisions (binds, evictions); ``hold()`` keeps them in the session without binding (a pipelined gang keeps
its nominated room for this cycle). A statement opened inside another one hands its changes to the outer
one on commit, so what-ifs nest and only the outermost commit reaches the API.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .decisions import Bind, Evict
from .status import TaskStatus
from .task import TaskInfo

if TYPE_CHECKING:
    from .session import Session


class Op(enum.Enum):
    ALLOCATE = "allocate"
    PIPELINE = "pipeline"
    EVICT = "evict"


@dataclass(slots=True)
class _Change:
    op: Op
    task: TaskInfo
    row: int
    vec: npt.NDArray[np.int64]
    previous: TaskStatus
    reason: str = ""
    preemptor: str | None = None
    detail: str = ""


class StatementClosed(RuntimeError):
    """A statement was used after commit, hold or discard."""


class Statement:
    def __init__(self, ssn: Session, parent: Statement | None = None) -> None:
        self.ssn = ssn
        self.parent = parent
        self.changes: list[_Change] = []
        self.open = True

    def _check(self) -> None:
        if not self.open:
            raise StatementClosed("statement already committed, held or discarded")

    def _vec(self, task: TaskInfo) -> npt.NDArray[np.int64]:
        return self.ssn.task_class(task).vec

    def allocate(self, task: TaskInfo, row: int) -> None:
        """Give ``task`` the node at table row ``row`` now; it binds when the statement commits."""
        self._check()
        if task.status is not TaskStatus.PENDING:
            raise ValueError(f"cannot allocate {task.key}: it is {task.status.value}, not Pending")
        vec = self._vec(task)
        self.ssn.table.charge(row, vec)
        self._place(task, row, TaskStatus.ALLOCATED)
        self.changes.append(_Change(Op.ALLOCATE, task, row, vec, TaskStatus.PENDING))
        self.ssn.on_allocate(task)

    def pipeline(self, task: TaskInfo, row: int) -> None:
        """Nominate the node at ``row`` for ``task``: it fits once releasing pods there are gone."""
        self._check()
        if task.status is not TaskStatus.PENDING:
            raise ValueError(f"cannot pipeline {task.key}: it is {task.status.value}, not Pending")
        vec = self._vec(task)
        self.ssn.table.pipeline(row, vec)
        self._place(task, row, TaskStatus.PIPELINED)
        self.changes.append(_Change(Op.PIPELINE, task, row, vec, TaskStatus.PENDING))
        self.ssn.on_allocate(task)

    def evict(
        self, task: TaskInfo, reason: str, preemptor: TaskInfo | None = None, *, detail: str = ""
    ) -> None:
        """Mark a running task as releasing; its node's future idle grows by its request. ``reason`` is the
        evicting action; ``detail`` why this pod, when no preemptor says it."""
        self._check()
        if not task.node_name:
            raise ValueError(f"cannot evict {task.key}: it is on no node")
        row = self.ssn.node_of(task)
        vec = self.ssn.table.vector(task.resreq)
        previous = task.status
        self.ssn.table.releasing[row] += vec
        self._set_status(task, TaskStatus.RELEASING)
        self.changes.append(
            _Change(Op.EVICT, task, row, vec, previous, reason, preemptor.key if preemptor else None, detail)
        )
        self.ssn.on_deallocate(task)

    def _set_status(self, task: TaskInfo, status: TaskStatus) -> None:
        self.ssn.touch(task)
        job = self.ssn.jobs.get(task.job_id or "")
        if job is not None:
            job.set_status(task, status)
        else:
            task.status = status

    def _place(self, task: TaskInfo, row: int, status: TaskStatus) -> None:
        node = self.ssn.nodes[row]
        task.node_name = node.name
        node.tasks[task.uid] = task
        self._set_status(task, status)

    def discard(self) -> None:
        """Undo every change, newest first, restoring the session exactly."""
        self._check()
        table = self.ssn.table
        for change in reversed(self.changes):
            task = change.task
            if change.op is Op.EVICT:
                table.releasing[change.row] -= change.vec
                self._set_status(task, change.previous)
                self.ssn.on_allocate(task)
                continue
            if change.op is Op.ALLOCATE:
                table.charge(change.row, change.vec, -1)
            else:
                table.pipeline(change.row, -change.vec, -1)
            self.ssn.nodes[change.row].tasks.pop(task.uid, None)
            task.node_name = ""
            self._set_status(task, change.previous)
            self.ssn.on_deallocate(task)
        self.changes.clear()
        self.open = False

    def commit(self) -> list[Bind | Evict]:
        """Turn the changes into decisions (or hand them to the outer statement); returns them."""
        self._check()
        self.open = False
        if self.parent is not None:
            self.parent.changes.extend(self.changes)
            return []
        out: list[Bind | Evict] = []
        for change in self.changes:
            task = change.task
            if change.op is Op.ALLOCATE:
                self._set_status(task, TaskStatus.BINDING)
                bind = Bind(
                    task.namespace,
                    task.name,
                    task.uid,
                    task.node_name,
                    task.job_id or "",
                    dict(task.bind_annotations),
                    task.claim_writes,
                )
                self.ssn.binds.append(bind)
                out.append(bind)
            elif change.op is Op.EVICT:
                evict = Evict(
                    task.namespace, task.name, task.uid, change.reason, change.preemptor, change.detail
                )
                self.ssn.evictions.append(evict)
                out.append(evict)
        return out

    def hold(self) -> None:
        """Keep the changes in the session without deciding anything (a pipelined, not yet ready gang)."""
        self._check()
        self.open = False
        if self.parent is not None:
            self.parent.changes.extend(self.changes)
