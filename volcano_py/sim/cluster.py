"""The simulated cluster as the Kubernetes objects a session reads, and the bookkeeping of what runs where.

Objects are plain dicts in the API's wire form, handed to the scheduler's ``build_snapshot`` as one
``ClusterObjects`` (``objects()``), exactly as the runtime cache does. A job's PodGroup is created when the
job arrives and its pods once the PodGroup is Inqueue, as Volcano's Job controller does: admission costs one
period.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from volcano_py.api import constants as c
from volcano_py.api.bodies.pod import pod_node_name, with_node_name
from volcano_py.api.common import format_time
from volcano_py.api.objects import annotations_of, metadata_of, name_of, status_of, uid_of
from volcano_py.api.podspec import PodPhase
from volcano_py.api.scheduling import PodGroupPhase, QueueState
from volcano_py.resources import CPU, GPU, MEMORY
from volcano_py.scheduler.core import ClusterObjects, PodGroupUpdate

from .workload import SimJob, SimNode, Workload, device_amount

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
NAMESPACE = "sim"
DIMS = (CPU, MEMORY, GPU)
Obj = dict[str, Any]


def timestamp(seconds: float) -> str:
    """Simulated seconds as the RFC 3339 time the API would write (second precision, as Kubernetes)."""
    return format_time(EPOCH + timedelta(seconds=int(seconds)))


def node_object(node: SimNode) -> Obj:
    quantities = node.allocatable.to_quantities()
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": {"kubernetes.io/hostname": node.name, **node.labels}},
        "spec": {},
        "status": {
            "capacity": quantities,
            "allocatable": quantities,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


@dataclass(slots=True)
class JobState:
    """A job's life in the simulation; times are simulated seconds."""

    job: SimJob
    pods: dict[str, Obj] = field(default_factory=dict)  # uid -> pod
    finish_at: dict[str, float] = field(default_factory=dict)  # uid of a running pod -> when it ends
    ready_at: float | None = None
    completed_at: float | None = None
    succeeded: int = 0
    evictions: int = 0
    racks: set[str] = field(default_factory=set)

    @property
    def key(self) -> str:
        return f"{NAMESPACE}/{self.job.name}"


class SimCluster:
    """Objects plus per-node usage along ``DIMS`` (numpy, for the stranded-GPU measure)."""

    def __init__(self, workload: Workload) -> None:
        self.nodes = [node_object(n) for n in workload.nodes]
        self.node_index = {n.name: i for i, n in enumerate(workload.nodes)}
        self.node_labels = {n.name: n.labels for n in workload.nodes}
        self.allocatable = np.array(
            [[n.allocatable.amount(d) for d in DIMS] for n in workload.nodes], dtype=np.int64
        ).reshape(len(workload.nodes), len(DIMS))
        self.used = np.zeros_like(self.allocatable)
        # Shared GPUs (Volcano's gpushare): the cards of each node and the milli-GPUs used on each, from the
        # card indices the scheduler writes on a pod at bind (-1 marks a card the node does not have).
        cards = [device_amount(n.allocatable, c.GPU_NUMBER_RESOURCE) for n in workload.nodes]
        self.shared = any(cards)
        self.card_memory = [
            device_amount(n.allocatable, c.GPU_MEMORY_RESOURCE) // count if count else 0
            for n, count in zip(workload.nodes, cards, strict=True)
        ]
        self.card_used = np.full((len(cards), max(cards, default=0)), -1, dtype=np.int64)
        for row, count in enumerate(cards):
            self.card_used[row, :count] = 0
        self._cards_of: dict[str, tuple[int, list[int], int]] = {}  # pod uid -> (row, cards, milli each)
        self.queues: list[Obj] = [
            {
                "metadata": {"name": c.DEFAULT_QUEUE},
                "spec": {"weight": 1},
                "status": {"state": QueueState.OPEN.value},
            },
            *workload.queues,
        ]
        self.hypernodes = list(workload.hypernodes)
        self.workload = workload
        self.podgroups: dict[str, Obj] = {}
        self.jobs: dict[str, JobState] = {}
        self._pod_serial = 0

    # --- objects ---------------------------------------------------------------------------------------

    def admit(self, job: SimJob, now: float) -> JobState:
        state = JobState(job)
        spec: Obj = {
            "minMember": job.min_available,
            "queue": job.queue,
            "minResources": (job.request * job.min_available).to_quantities(),
        }
        if job.priority_class:
            spec["priorityClassName"] = job.priority_class
        if job.network_topology:
            spec["networkTopology"] = dict(job.network_topology)
        self.podgroups[state.key] = {
            "apiVersion": c.SCHEDULING_API_VERSION,
            "kind": c.PODGROUP_KIND,
            "metadata": {"name": job.name, "namespace": NAMESPACE, "creationTimestamp": timestamp(now)},
            "spec": spec,
            "status": {"phase": PodGroupPhase.PENDING.value},
        }
        self.jobs[state.key] = state
        return state

    def _new_pod(self, state: JobState, index: int, now: float) -> Obj:
        self._pod_serial += 1
        uid = f"pod-{self._pod_serial}"
        pod: Obj = {
            "metadata": {
                "name": f"{state.job.name}-{index}-{self._pod_serial}",
                "namespace": NAMESPACE,
                "uid": uid,
                "creationTimestamp": timestamp(now),
                "annotations": {c.KUBE_GROUP_NAME_KEY: state.job.name, c.TASK_SPEC_KEY: "worker"},
                # A Volcano Job controls the pod: an evicted pod is made again (``evict``), which is what
                # lets consolidate move it.
                "ownerReferences": [
                    {
                        "apiVersion": c.BATCH_API_VERSION,
                        "kind": c.JOB_KIND,
                        "name": state.job.name,
                        "uid": f"job-{state.job.name}",
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "schedulerName": c.SCHEDULER_NAME,
                "containers": [
                    {"name": "main", "resources": {"requests": state.job.request.to_quantities()}}
                ],
                **({"priorityClassName": state.job.priority_class} if state.job.priority_class else {}),
            },
            "status": {"phase": PodGroupPhase.PENDING.value},
        }
        state.pods[uid] = pod
        return pod

    def write_status(self, update: PodGroupUpdate, now: float) -> None:
        """What the binder would write: the next session compares against it, so nothing is re-sent. The
        first write past Pending is when the controller would create the job's pods: they appear now."""
        key = f"{update.namespace}/{update.name}"
        pg = self.podgroups.get(key)
        if pg is None:
            return
        state = self.jobs.get(key)
        if state is not None and not state.pods and update.phase is not PodGroupPhase.PENDING:
            for index in range(state.job.replicas):
                self._new_pod(state, index, now)
        status = {
            "phase": update.phase.value,
            "conditions": [
                {
                    "type": cond.type,
                    "status": cond.status,
                    "reason": cond.reason,
                    "message": cond.message,
                    "lastTransitionTime": cond.last_transition_time,
                }
                for cond in update.conditions
            ],
            "running": update.running,
            "succeeded": update.succeeded,
            "failed": update.failed,
        }
        self.podgroups[key] = {**pg, "status": status}  # a new version, as the watch hands it out

    def pods(self) -> Iterator[Obj]:
        for state in self.jobs.values():
            yield from state.pods.values()

    def objects(self) -> ClusterObjects:
        """What a session reads now."""
        workload = self.workload
        return ClusterObjects(
            nodes=self.nodes,
            pods=list(self.pods()),
            podgroups=list(self.podgroups.values()),
            queues=self.queues,
            priority_classes=workload.priority_classes,
            hypernodes=self.hypernodes,
            pdbs=workload.pdbs,
            resource_quotas=workload.resource_quotas,
            numatopologies=workload.numatopologies,
        )

    # --- changes decided by a session ----------------------------------------------------------------

    def _charge(self, node: str, state: JobState, sign: int) -> None:
        row = self.node_index[node]
        self.used[row] += sign * np.array([state.job.request.amount(d) for d in DIMS], dtype=np.int64)

    def bind(
        self, job_key: str, uid: str, node: str, now: float, annotations: Mapping[str, str] | None = None
    ) -> None:
        state = self.jobs[job_key]
        pod = state.pods[uid]
        bound = pod_node_name(pod)
        if bound:
            raise RuntimeError(f"pod {name_of(pod)} bound twice ({bound}, {node})")
        # A new version of the pod, as the API's watch hands one out: the snapshot builder keeps what it
        # read of the old one, by the dict's identity.
        meta = metadata_of(pod)
        if annotations:
            meta = {**meta, "annotations": {**annotations_of(pod), **annotations}}
        state.pods[uid] = {
            **with_node_name(pod, node),
            "metadata": meta,
            "status": {"phase": PodPhase.RUNNING.value},
        }
        state.finish_at[uid] = now + state.job.duration
        self._charge(node, state, +1)
        self._hold_cards(uid, node, state, annotations or {})
        rack = self.node_labels[node].get("topology.volcano-py.io/rack")
        if rack:
            state.racks.add(rack)

    def _hold_cards(self, uid: str, node: str, state: JobState, annotations: Mapping[str, str]) -> None:
        indices = [int(i) for i in annotations.get(c.GPU_INDEX_KEY, "").split(",") if i.strip().isdigit()]
        if not self.shared or not indices:
            return
        row = self.node_index[node]
        memory = device_amount(state.job.request, c.GPU_MEMORY_RESOURCE)
        milli = -(-memory * 1000 // self.card_memory[row]) if memory else 1000
        self.card_used[row, indices] += milli
        self._cards_of[uid] = (row, indices, milli)

    def _release_cards(self, uid: str) -> None:
        held = self._cards_of.pop(uid, None)
        if held is not None:
            row, indices, milli = held
            self.card_used[row, indices] -= milli

    def nominate(self, job_key: str, uid: str, node: str) -> None:
        """What the binder writes for a pipelined pod: the node it waits for (its nominatedNodeName)."""
        state = self.jobs.get(job_key)
        pod = state.pods.get(uid) if state is not None else None
        if state is not None and pod is not None and not pod_node_name(pod):
            # A new dict, as the watch hands out: kept snapshot records take an unchanged dict as unchanged.
            state.pods[uid] = {**pod, "status": {**status_of(pod), "nominatedNodeName": node}}

    def evict(self, job_key: str, uid: str, now: float) -> str:
        """The pod is deleted; its controller makes a fresh pending one (Volcano's RestartTask shape), whose
        uid is returned."""
        state = self.jobs[job_key]
        pod = state.pods.pop(uid)
        state.finish_at.pop(uid, None)
        node = pod_node_name(pod)
        if node:
            self._charge(node, state, -1)
            self._release_cards(uid)
        state.evictions += 1
        return uid_of(self._new_pod(state, len(state.pods), now))

    def finish_due(self, now: float) -> list[JobState]:
        """Pods whose run time is over succeed; return the jobs that completed with them."""
        done: list[JobState] = []
        for state in list(self.jobs.values()):
            for uid, end in list(state.finish_at.items()):
                if end <= now:
                    pod = state.pods[uid]
                    state.pods[uid] = {**pod, "status": {"phase": PodPhase.SUCCEEDED.value}}
                    del state.finish_at[uid]
                    self._charge(pod_node_name(pod), state, -1)
                    self._release_cards(uid)
                    state.succeeded += 1
            if state.succeeded >= state.job.replicas:
                state.completed_at = now
                done.append(state)
                del self.jobs[state.key]
                del self.podgroups[state.key]
        return done

    def next_finish(self) -> float | None:
        ends = [end for state in self.jobs.values() for end in state.finish_at.values()]
        return min(ends) if ends else None
