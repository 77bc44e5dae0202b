"""Equivalence classes: pods that ask for the same thing under the same constraints place alike.

The session computes predicates and static scores once per class; a gang of 256 identical pods costs one
scan of the nodes, not 256.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from volcano_py.resources import Resource

from .task import TaskInfo


@dataclass(frozen=True, slots=True, eq=False)
class TaskClass:
    """The placement-relevant part of a pod spec, shared by every pod with the same ``class_key``."""

    key: Hashable
    # Everything but the request: predicates and fixed scores depend only on this, so pods that differ
    # only in size share them.
    constraint: Hashable
    request: Resource
    vec: npt.NDArray[np.int64]
    namespace: str
    labels: Mapping[str, str]
    node_selector: Mapping[str, str]
    affinity: Mapping[str, Any]
    tolerations: tuple[Mapping[str, Any], ...]
    host_ports: tuple[tuple[str, str, int], ...]
    # The queue of the pod's job: queue-scoped predicates and scores (nodegroup) differ per queue.
    queue: str = ""
    # The pod's leave to run on revocable nodes (tdm), ``*`` or "".
    revocable_zone: str = ""
    # The request as (name, amount) pairs: plugins' per-pod bookkeeping iterates this, not a Mapping.
    items: tuple[tuple[str, int], ...] = ()
    # Columns of the resources the class requests (the pod count always among them).
    asked: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # What ``TaskSplit`` plugins tell apart though the spec is alike (task-topology: job, task, bucket; an
    # HTTP extender: its answers), one value per plugin; None when none did. It is part of ``key`` and
    # ``constraint``: split classes may pass different nodes, so they share no cached answer.
    split: tuple[Hashable, ...] | None = None
    # ``asked`` with the amounts, as plain ints, for a scan column by column (derived, not passed).
    needs: tuple[tuple[int, int], ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        needs = tuple(zip(self.asked.tolist(), self.vec[self.asked].tolist(), strict=True))
        object.__setattr__(self, "needs", needs)

    @classmethod
    def of(
        cls,
        task: TaskInfo,
        vec: npt.NDArray[np.int64],
        labels: Hashable = (),
        queue: str = "",
        split: tuple[Hashable, ...] | None = None,
    ) -> TaskClass:
        """``labels``: the pod's values for label keys some pod-affinity term selects on; pods that differ
        there can be told apart by another pod's (anti-)affinity, so they must not share a class."""
        return cls(
            key=(task.namespace, queue, task.class_key, labels, split),
            constraint=(
                task.namespace,
                queue,
                task.class_key[1:] if isinstance(task.class_key, tuple) else task.class_key,
                labels,
                split,
            ),
            request=task.resreq,
            vec=vec,
            namespace=task.namespace,
            labels=task.labels,
            node_selector=task.node_selector,
            affinity=task.affinity,
            tolerations=task.tolerations,
            host_ports=task.host_ports,
            queue=queue,
            revocable_zone=task.revocable_zone,
            items=tuple(task.resreq.items()),
            asked=vec.nonzero()[0],
            split=split,
        )

    @property
    def has_pod_affinity(self) -> bool:
        return bool(self.affinity.get("podAffinity") or self.affinity.get("podAntiAffinity"))


def selector_label_keys(tasks: Iterable[TaskInfo]) -> tuple[str, ...]:
    """Label keys that some required pod (anti-)affinity term among ``tasks`` selects on, sorted."""
    keys: set[str] = set()
    for task in tasks:
        affinity = task.affinity
        if not affinity:  # most pods: asked of every task on every node, every session
            continue
        for kind in ("podAffinity", "podAntiAffinity"):
            for term in (affinity.get(kind) or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            ) or ():
                selector = term.get("labelSelector") or {}
                keys.update(selector.get("matchLabels") or {})
                keys.update(e.get("key", "") for e in selector.get("matchExpressions") or ())
    return tuple(sorted(keys))
