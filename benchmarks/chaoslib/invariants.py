"""What must hold after any fault, read from the API alone (pods, PodGroups, Jobs, Queues, nodes, Events).

Pure: lists of Kubernetes objects in, ``Violation``s out. Checks that can be transiently false while work
moves (a gang half-way through its binds, a Job between its pods) compare two samples taken at least one
scheduling cycle apart and report only what did not move; status checks run when the cluster is quiet.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from volcano_py.api import constants as k
from volcano_py.api.batch import FINISHED_PHASES, JobPhase
from volcano_py.resources import Resource, format_quantity, pod_request

Obj = Mapping[str, Any]

# The resources a queue's status.allocated and a node's capacity are compared on.
COMPARED_RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
_ASSIGNED = re.compile(r"^Successfully assigned (?P<pod>\S+) to (?P<node>\S+)$")
# The binder's Evict Event: "Pod ns/name evicted: <action>[ (preempted for ns/preemptor)][: detail]".
_EVICTED = re.compile(
    r"^Pod (?P<pod>\S+) evicted: (?P<action>[^ :]+)(?: \(preempted for (?P<preemptor>[^)]+)\))?"
)


@dataclass(frozen=True, slots=True)
class Violation:
    invariant: str
    subject: str
    detail: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.subject}: {self.detail}"


@dataclass(frozen=True, slots=True)
class ApiState:
    """One reading of the API (each list as listed, in one namespace for namespaced kinds)."""

    pods: Sequence[Obj] = ()
    podgroups: Sequence[Obj] = ()
    jobs: Sequence[Obj] = ()
    queues: Sequence[Obj] = ()
    nodes: Sequence[Obj] = ()
    events: Sequence[Obj] = ()
    _members: dict[tuple[str, str], list[Obj]] = field(default_factory=dict, compare=False, repr=False)

    def members(self, namespace: str, group: str) -> list[Obj]:
        """The pods of one PodGroup that are not being deleted."""
        if not self._members:
            for pod in self.pods:
                meta = pod.get("metadata") or {}
                name = (meta.get("annotations") or {}).get(k.KUBE_GROUP_NAME_KEY)
                if name and not meta.get("deletionTimestamp"):
                    self._members.setdefault((str(meta.get("namespace")), str(name)), []).append(pod)
        return self._members.get((namespace, group), [])


def _meta(obj: Obj) -> Mapping[str, Any]:
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def _key(obj: Obj) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))


def _phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _finished(pod: Obj) -> bool:
    return _phase(pod) in ("Succeeded", "Failed")


def _job_phase(job: Obj) -> str:
    return str(((job.get("status") or {}).get("state") or {}).get("phase") or "")


def _compared(resource: Resource) -> dict[str, str]:
    return {name: format_quantity(name, resource.amount(name)) for name in COMPARED_RESOURCES}


# --- checks on any one reading -----------------------------------------------------------------------------


def double_binds(state: ApiState) -> list[Violation]:
    """A pod assigned to two nodes (two Scheduled events naming different nodes), or to another node than the
    one it runs on."""
    nodes_of: dict[str, set[str]] = defaultdict(set)
    names: dict[str, str] = {}
    for event in state.events:
        if event.get("reason") != "Scheduled":
            continue
        match = _ASSIGNED.match(str(event.get("message", "")))
        involved = event.get("involvedObject") or {}
        if match is None or not involved.get("uid"):
            continue
        nodes_of[str(involved["uid"])].add(match["node"])
        names[str(involved["uid"])] = match["pod"]
    bound = {str(_meta(p).get("uid")): (p.get("spec") or {}).get("nodeName") for p in state.pods}
    found = []
    for uid, nodes in sorted(nodes_of.items()):
        if len(nodes) > 1:
            found.append(Violation("bound twice", names[uid], f"assigned to {', '.join(sorted(nodes))}"))
        elif uid in bound and bound[uid] and bound[uid] not in nodes:
            found.append(
                Violation("bound twice", names[uid], f"assigned to {next(iter(nodes))}, runs on {bound[uid]}")
            )
    return found


def overcommitted_nodes(state: ApiState) -> list[Violation]:
    """A node holding more than it has: every pod on it that has not finished counts, terminating ones too
    (their containers may still run)."""
    used: dict[str, Resource] = defaultdict(Resource)
    for pod in state.pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if node and not _finished(pod):
            used[node] = used[node] + pod_request(pod.get("spec") or {})
    found = []
    for node in state.nodes:
        name = str(_meta(node).get("name"))
        allocatable = Resource.parse((node.get("status") or {}).get("allocatable"))
        over = [
            f"{r} {format_quantity(r, used[name].amount(r))} > {format_quantity(r, allocatable.amount(r))}"
            for r in COMPARED_RESOURCES
            if used[name].amount(r) > allocatable.amount(r)
        ]
        if name in used and over:
            found.append(Violation("node over-committed", name, "; ".join(over)))
    return found


def pods_without_job(state: ApiState) -> list[Violation]:
    """A live pod whose owning Volcano Job no longer exists."""
    jobs = {str(_meta(j).get("uid")) for j in state.jobs}
    found = []
    for pod in state.pods:
        meta = _meta(pod)
        if meta.get("deletionTimestamp"):
            continue
        for ref in meta.get("ownerReferences") or ():
            ours = ref.get("kind") == k.JOB_KIND and str(ref.get("apiVersion", "")).startswith(k.BATCH_GROUP)
            if ours and str(ref.get("uid")) not in jobs:
                found.append(Violation("pod without its job", _key(pod), f"Job {ref.get('name')} is gone"))
    return found


def partial_gangs(state: ApiState) -> dict[str, frozenset[str]]:
    """PodGroups with some but fewer than minMember live pods on nodes: PodGroup -> the placed pods' uids."""
    partial = {}
    for pg in state.podgroups:
        meta = _meta(pg)
        min_member = int((pg.get("spec") or {}).get("minMember") or 1)
        placed = [
            p for p in state.members(str(meta.get("namespace")), str(meta.get("name")))
            if (p.get("spec") or {}).get("nodeName")
        ]  # fmt: skip
        if 0 < len(placed) < min_member:
            partial[_key(pg)] = frozenset(str(_meta(p).get("uid")) for p in placed)
    return partial


def running_jobs_without_pods(state: ApiState) -> set[str]:
    """Jobs in phase Running with no live pod."""
    live: set[tuple[str, str]] = set()
    for pod in state.pods:
        meta = _meta(pod)
        job = (meta.get("labels") or {}).get(k.JOB_NAME_KEY)
        if job and not meta.get("deletionTimestamp"):
            live.add((str(meta.get("namespace")), str(job)))
    return {
        _key(j)
        for j in state.jobs
        if _job_phase(j) == JobPhase.RUNNING
        and (str(_meta(j).get("namespace")), str(_meta(j).get("name"))) not in live
    }


@dataclass(frozen=True, slots=True)
class Eviction:
    uid: str  # the evicted pod's (a pod recreated under its name has another)
    pod: str  # namespace/name
    preemptor: str | None  # namespace/name of the pod it made room for, if preempt's


def evictions(state: ApiState) -> list[Eviction]:
    """The scheduler's evictions, from its ``Evict`` Events."""
    found = []
    for event in state.events:
        match = _EVICTED.match(str(event.get("message", ""))) if event.get("reason") == "Evict" else None
        involved = event.get("involvedObject") or {}
        if match is not None:
            found.append(Eviction(str(involved.get("uid") or ""), match["pod"], match["preemptor"]))
    return found


def evicted_pods_still_running(state: ApiState) -> list[Violation]:
    """An ``Evict`` Event names a pod that is neither gone nor being deleted nor finished (the Event is
    written only after the delete was accepted)."""
    live = {
        str(_meta(p).get("uid")): p
        for p in state.pods
        if not _meta(p).get("deletionTimestamp") and not _finished(p)
    }
    return [
        Violation("evicted pod still running", e.pod, f"uid {e.uid} has an Evict Event and no deletion")
        for e in evictions(state)
        if e.uid in live
    ]


def check(state: ApiState) -> list[Violation]:
    """Every invariant that holds at any instant."""
    return [
        *double_binds(state),
        *overcommitted_nodes(state),
        *pods_without_job(state),
        *evicted_pods_still_running(state),
    ]


# --- checks over two readings at least one cycle apart ----------------------------------------------------


def stuck(first: ApiState, second: ApiState) -> list[Violation]:
    """What a fault may leave for a moment but must not leave for a cycle: a gang partly bound (the same pods
    placed in both readings, still fewer than minMember), a Running Job without pods."""
    found = []
    before, after = partial_gangs(first), partial_gangs(second)
    for pg, placed in sorted(after.items()):
        if before.get(pg) == placed:
            found.append(Violation("gang partly bound", pg, f"{len(placed)} pods placed, below minMember"))
    for job in sorted(running_jobs_without_pods(first) & running_jobs_without_pods(second)):
        found.append(Violation("job without pods", job, "Running with no live pod"))
    found += half_evicted(first, second)
    return found


def _groups_evicted_from(state: ApiState) -> set[str]:
    """PodGroups (namespace/name) that lost a pod to an eviction: found through the pod recreated under the
    evicted one's name, which carries the group's annotation."""
    group_of = {}
    for pod in state.pods:
        meta = _meta(pod)
        group = (meta.get("annotations") or {}).get(k.KUBE_GROUP_NAME_KEY)
        if group:
            group_of[_key(pod)] = f"{meta.get('namespace')}/{group}"
    return {group_of[e.pod] for e in evictions(state) if e.pod in group_of}


def half_evicted(first: ApiState, second: ApiState) -> list[Violation]:
    """A gang that lost pods to evictions and, in both readings, kept some placed but fewer than minMember:
    evictions must leave a gang its minimum or take it whole."""
    evicted = _groups_evicted_from(second)
    before, after = partial_gangs(first), partial_gangs(second)
    return [
        Violation("gang half-evicted", pg, f"{len(placed)} pods placed after evictions, below minMember")
        for pg, placed in sorted(after.items())
        if pg in evicted and before.get(pg) == placed
    ]


# --- writes against the leader's terms ----------------------------------------------------------------------

# The log lines of our processes that record a write, each with its WriteStamp (``volcano_py.kube.leader``):
# ``checked``, the wall clock just before the leader's fence was asked, and ``sent``, once it let it through.
WRITE_EVENTS = {
    "bound": "bind",
    "evicted": "evict",
    "pod created": "create pod",
    "pod deleted": "delete pod",
    "job created": "create job",  # by a CronJob or a JobFlow
}


@dataclass(frozen=True, slots=True)
class Write:
    identity: str
    checked: float  # wall clock, seconds since the epoch: when the fence was asked
    what: str  # e.g. "bind ns/pod"
    sent: float | None = None  # when it let the write through; long after ``checked``: frozen in between

    def late(self, seconds: float = 1.0) -> bool:
        """Through the fence before a freeze, out after it: what no client-side fence can stop."""
        return self.sent is not None and self.sent - self.checked >= seconds


@dataclass(frozen=True, slots=True)
class Term:
    """One holder of a lease from ``start`` (its acquireTime; a release starts a term of nobody)."""

    holder: str  # "" once released
    start: float  # wall clock, seconds since the epoch


def micro_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def term_of(lease: Obj) -> Term | None:
    """The term a Lease object records now, or None if it names no time."""
    spec = lease.get("spec") or {}
    holder = str(spec.get("holderIdentity") or "")
    stamp = spec.get("acquireTime") if holder else (spec.get("renewTime") or spec.get("acquireTime"))
    return Term(holder, micro_time(str(stamp))) if stamp else None


def writes_in_log(lines: Iterable[Obj], identity: str) -> list[Write]:
    """The writes one process logged (its lines as parsed JSON)."""
    found = []
    for line in lines:
        verb = WRITE_EVENTS.get(str(line.get("event")))
        checked = line.get("checked", line.get("sent"))
        if verb is not None and checked is not None:
            sent = line.get("sent")
            found.append(
                Write(
                    identity,
                    float(checked),
                    f"{verb} {line.get('pod') or line.get('job')}",
                    float(sent) if sent else None,
                )
            )
    return found


def writes_by_non_leaders(writes: Iterable[Write], terms: Sequence[Term]) -> list[Violation]:
    """A write let through the fence while another identity (or nobody) held the lease its writer leads under.

    Writes before the first term seen are not judged. A writer's own term starts at its acquireTime, stamped
    by its own clock before its first write, so a leader's writes always fall inside its term; a frozen
    leader's writes let through after it woke fall in its successor's.
    """
    ordered = sorted(terms, key=lambda t: t.start)
    starts = [t.start for t in ordered]
    found = []
    for write in sorted(writes, key=lambda w: w.checked):
        at = bisect_right(starts, write.checked) - 1
        if at < 0:
            continue
        term = ordered[at]
        if term.holder != write.identity:
            held = f"{term.holder} held the lease" if term.holder else "the lease was released"
            found.append(
                Violation(
                    "write by a non-leader",
                    write.identity,
                    f"{write.what} at {_clock(write.checked)}; {held} since {_clock(term.start)}",
                )
            )
    return found


def _clock(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%H:%M:%S.%f")[:-3]


# --- checks once the cluster is quiet -----------------------------------------------------------------------


def podgroup_status(state: ApiState) -> list[Violation]:
    """Each PodGroup's running/succeeded/failed counts are its pods'."""
    found = []
    for pg in state.podgroups:
        meta = _meta(pg)
        members = state.members(str(meta.get("namespace")), str(meta.get("name")))
        status = pg.get("status") or {}
        for field_name, phase in (("running", "Running"), ("succeeded", "Succeeded"), ("failed", "Failed")):
            counted = sum(1 for p in members if _phase(p) == phase)
            if int(status.get(field_name) or 0) != counted:
                found.append(
                    Violation(
                        "PodGroup status",
                        _key(pg),
                        f"status.{field_name} {status.get(field_name) or 0}, pods {counted}",
                    )
                )
    return found


def queue_allocated(state: ApiState) -> list[Violation]:
    """Each Queue's status.allocated is what the live, placed, unfinished pods of its PodGroups request."""
    queue_of = {
        (str(_meta(pg).get("namespace")), str(_meta(pg).get("name"))): str(
            (pg.get("spec") or {}).get("queue") or k.DEFAULT_QUEUE
        )
        for pg in state.podgroups
    }
    held: dict[str, Resource] = defaultdict(Resource)
    for pod in state.pods:
        meta = _meta(pod)
        group = (meta.get("annotations") or {}).get(k.KUBE_GROUP_NAME_KEY)
        in_queue = queue_of.get((str(meta.get("namespace")), str(group)))
        spec = pod.get("spec") or {}
        if in_queue and spec.get("nodeName") and not meta.get("deletionTimestamp") and not _finished(pod):
            held[in_queue] = held[in_queue] + pod_request(spec)
    found = []
    for queue in state.queues:
        name = str(_meta(queue).get("name"))
        allocated = _compared(Resource.parse((queue.get("status") or {}).get("allocated")))
        expected = _compared(held[name])
        if allocated != expected:
            found.append(
                Violation("Queue status", name, f"status.allocated {allocated}, pods hold {expected}")
            )
    return found


def final_phases(state: ApiState, expected: Mapping[str, str]) -> list[Violation]:
    """Every submitted Job exists and ended in the phase its workload promised."""
    phases = {str(_meta(j).get("name")): _job_phase(j) for j in state.jobs}
    found = []
    for name, want in sorted(expected.items()):
        got = phases.get(name)
        if got is None:
            found.append(Violation("job lost", name, f"gone; expected {want}"))
        elif got != want:
            final = "final" if got in FINISHED_PHASES else "not final"
            found.append(
                Violation("wrong final phase", name, f"{got or 'no phase'} ({final}); expected {want}")
            )
    return found


def completed_work(state: ApiState) -> list[Violation]:
    """A Completed Job kept its finished pods: at least minAvailable of them Succeeded."""
    succeeded: dict[str, int] = defaultdict(int)
    for pod in state.pods:
        job = (_meta(pod).get("labels") or {}).get(k.JOB_NAME_KEY)
        if job and _phase(pod) == "Succeeded":
            succeeded[f"{_meta(pod).get('namespace')}/{job}"] += 1
    found = []
    for job in state.jobs:
        if _job_phase(job) != JobPhase.COMPLETED:
            continue
        need = int((job.get("spec") or {}).get("minAvailable") or 0)
        if succeeded[_key(job)] < need:
            found.append(
                Violation(
                    "work lost", _key(job), f"Completed with {succeeded[_key(job)]} of {need} pods Succeeded"
                )
            )
    return found


def preemptors_never_placed(state: ApiState) -> list[Violation]:
    """Pods were evicted to make room for a preemptor that, once the cluster is quiet, never ran: it is
    neither placed nor finished (victims lost for nothing)."""
    pods = {_key(p): p for p in state.pods}
    found = []
    for preemptor in sorted({e.preemptor for e in evictions(state) if e.preemptor}):
        pod = pods.get(preemptor)
        placed = pod is not None and ((pod.get("spec") or {}).get("nodeName") or _finished(pod))
        if not placed:
            victims = sum(1 for e in evictions(state) if e.preemptor == preemptor)
            state_now = "gone" if pod is None else f"{_phase(pod)}, not placed"
            found.append(
                Violation("evicted for nothing", preemptor, f"{victims} victims; preemptor {state_now}")
            )
    return found


def quiet(state: ApiState, expected: Mapping[str, str]) -> list[Violation]:
    """Everything checked when nothing moves any more (the end of a run)."""
    return [
        *check(state),
        *preemptors_never_placed(state),
        *podgroup_status(state),
        *queue_allocated(state),
        *final_phases(state, expected),
        *completed_work(state),
    ]


def count_by_invariant(violations: Iterable[Violation]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for violation in violations:
        counts[violation.invariant] += 1
    return dict(sorted(counts.items()))
