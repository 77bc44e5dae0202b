"""What the dashboard shows, computed from the API's objects without I/O: queues, jobs, GPUs, health.

The shell (``state``) mirrors the objects with watches and hands them here as a ``Cluster`` (the scheduler's
``ClusterObjects`` plus the Volcano Jobs the pages list); these
functions return frozen rows the HTML renderer prints and the JSON API serialises. Node usage is read
through the scheduler's own ``Snapshot`` so "used" and "free" mean what they mean to the scheduler
(terminating pods still hold their room), and stranded GPUs are the solver's measure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.job import job_min_available, job_queue, job_tasks, task_replicas
from volcano_py.api.bodies.pod import pod_node_name, pod_scheduler_name
from volcano_py.api.bodies.podgroup import podgroup_queue, podgroup_shown_phase
from volcano_py.api.bodies.queue import queue_capability, queue_parent, queue_state, queue_weight
from volcano_py.api.objects import (
    annotation_of,
    creation_timestamp_of,
    name_of,
    namespace_of,
    owner_references_of,
    spec_of,
    uid_of,
)
from volcano_py.api.podspec import PodPhase, pod_phase
from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.scheduling import min_member_of
from volcano_py.kube.kinds import PODS
from volcano_py.resources import CPU, GPU, MEMORY, Resource, format_quantity, total
from volcano_py.scheduler.core import (
    ALLOCATED_STATUSES,
    ClusterObjects,
    SchedulerConf,
    SessionResult,
    Snapshot,
    build_snapshot,
    run_session,
)
from volcano_py.whatif.why import job_phase, latest_unschedulable, unschedulable_condition

Obj = dict[str, Any]
BAR_RESOURCES = (GPU, CPU, MEMORY)


@dataclass(frozen=True, slots=True)
class Cluster(ClusterObjects):
    """The objects one page is drawn from (the API's JSON, as the watches hold it): what the scheduler reads,
    the Volcano Jobs the job rows show, and the schedulers whose pods are ours."""

    jobs: Sequence[Obj] = ()
    scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,)


def _key(obj: Obj) -> str:
    return f"{namespace_of(obj) or 'default'}/{name_of(obj)}"


def amount_text(name: str, amount: int) -> str:
    """A canonical amount as a person reads it: whole GPUs, cores, GiB."""
    if name == MEMORY:
        gib = amount / 2**30
        return f"{gib:,.0f}Gi" if gib == int(gib) else f"{gib:,.1f}Gi"
    text = format_quantity(name, amount)
    if text.endswith("m"):  # a milli amount (a share of 92.571 GPUs): one decimal reads better
        return f"{amount / 1000:,.1f}"
    return text


def age_text(created: str | None, now: datetime) -> str:
    if not created:
        return "-"
    try:
        then = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return "-"
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# --- queues ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bar:
    """One resource of one queue, canonical units; ``scale`` is the cluster's total (the bar's full width)."""

    resource: str
    allocated: int
    deserved: int | None
    capability: int | None
    scale: int

    def text(self, value: int | None) -> str:
        return "-" if value is None else amount_text(self.resource, value)


@dataclass(frozen=True, slots=True)
class QueueRow:
    name: str
    parent: str
    depth: int
    weight: int
    state: str
    bars: tuple[Bar, ...]
    pending_jobs: int
    running_jobs: int
    overused: bool


def queue_rows(cluster: Cluster, snapshot: Snapshot, deserved: Mapping[str, Resource]) -> list[QueueRow]:
    """Every queue in tree order (root first, children under their parent), with a bar per resource."""
    cluster_total = total(n.allocatable for n in snapshot.nodes)
    allocated: dict[str, Resource] = {}
    pending: dict[str, int] = {}
    running: dict[str, int] = {}
    for job in snapshot.jobs.values():
        if job.shadow:
            continue
        held = total(t.resreq for t in job.tasks_in(*ALLOCATED_STATUSES))
        allocated[job.queue] = allocated.get(job.queue, Resource()) + held
        if job.is_ready():
            running[job.queue] = running.get(job.queue, 0) + 1
        elif job.phase.value in ("Pending", "Inqueue") or job.pending_tasks:
            pending[job.queue] = pending.get(job.queue, 0) + 1
    by_name = {name_of(q): q for q in cluster.queues}
    children: dict[str, list[str]] = {}
    for name, queue in by_name.items():
        parent = queue_parent(queue)
        if parent and parent not in by_name:
            parent = ""
        children.setdefault(parent, []).append(name)
    rows: list[QueueRow] = []
    seen: set[str] = set()

    def subtree(name: str) -> Resource:
        return allocated.get(name, Resource()) + total(subtree(ch) for ch in children.get(name, ()))

    def walk(name: str, depth: int) -> None:
        if name in seen:
            return
        seen.add(name)
        queue = by_name[name]
        quantities = queue_capability(queue)
        capability = Resource.parse(quantities) if quantities else None
        held = subtree(name)
        mine = deserved.get(name)
        if children.get(name) and (mine is None or mine.is_zero()) and deserved:
            # A parent the plugin gives no share of its own (proportion is flat): its children's sum.
            mine = total(deserved.get(ch, Resource()) for ch in _descendants(name, children))
        bars = tuple(
            Bar(
                resource=r,
                allocated=held.amount(r),
                deserved=None if mine is None else mine.amount(r),
                capability=None if capability is None or r not in capability else capability.amount(r),
                scale=max(cluster_total.amount(r), 1),
            )
            for r in BAR_RESOURCES
            if cluster_total.amount(r) or held.amount(r)
        )
        rows.append(
            QueueRow(
                name=name,
                parent=queue_parent(queue),
                depth=depth,
                weight=queue_weight(queue),
                state=queue_state(queue),
                bars=bars,
                pending_jobs=pending.get(name, 0),
                running_jobs=running.get(name, 0),
                overused=mine is not None
                and any(b.allocated > (b.deserved or 0) for b in bars if b.deserved),
            )
        )
        for child in sorted(children.get(name, ())):
            walk(child, depth + 1)

    for top in sorted(children.get("", ())):
        walk(top, 0)
    return rows


def _descendants(name: str, children: Mapping[str, list[str]]) -> list[str]:
    out: list[str] = []
    stack = list(children.get(name, ()))
    while stack:
        child = stack.pop()
        if child not in out:
            out.append(child)
            stack.extend(children.get(child, ()))
    return out


# --- jobs ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class JobRow:
    namespace: str
    name: str
    # "Job" (batch.volcano.sh), "PodGroup" (plain pods, other workloads), "Pod" (the agent scheduler's)
    kind: str
    queue: str
    phase: str
    running: int
    tasks: int
    min_available: int
    age: str
    created: str
    reason: str
    podgroup: str

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def pending(self) -> bool:
        return self.phase in ("Pending", "Inqueue") or (self.kind == "Job" and self.phase == "Restarting")


def unschedulable_message(podgroup: Obj | None) -> str:
    """The scheduler's latest Unschedulable condition message: what ``vcctl job why`` prints first."""
    if podgroup is None:
        return ""
    return latest_unschedulable(podgroup) or ""


def podgroup_of(job: Obj, podgroups: Mapping[str, Obj], by_owner: Mapping[str, Obj]) -> Obj | None:
    return podgroups.get(f"{namespace_of(job)}/{name_of(job)}-{uid_of(job)}") or by_owner.get(uid_of(job))


def job_rows(cluster: Cluster, now: datetime) -> list[JobRow]:
    """Volcano Jobs, then PodGroups no Job owns; each with its pods' counts and the scheduler's reason."""
    podgroups = {_key(pg): pg for pg in cluster.podgroups}
    by_owner = {str(ref.get("uid")): pg for pg in cluster.podgroups for ref in owner_references_of(pg)}
    running: dict[str, int] = {}
    count: dict[str, int] = {}
    for pod in cluster.pods:
        group = annotation_of(pod, c.KUBE_GROUP_NAME_KEY)
        if not group:
            continue
        key = f"{namespace_of(pod) or 'default'}/{group}"
        count[key] = count.get(key, 0) + 1
        if pod_phase(pod) is PodPhase.RUNNING:
            running[key] = running.get(key, 0) + 1
    rows: list[JobRow] = []
    owned: set[str] = set()
    for job in cluster.jobs:
        pg = podgroup_of(job, podgroups, by_owner)
        pg_key = _key(pg) if pg is not None else ""
        owned.add(pg_key)
        replicas = sum(task_replicas(task) for task in job_tasks(job))
        rows.append(
            JobRow(
                namespace=namespace_of(job) or "default",
                name=name_of(job),
                kind=c.JOB_KIND,
                queue=job_queue(job),
                phase=job_phase(job),
                running=running.get(pg_key, 0),
                tasks=replicas,
                min_available=job_min_available(job) or replicas,
                age=age_text(creation_timestamp_of(job), now),
                created=creation_timestamp_of(job),
                reason=unschedulable_message(pg),
                podgroup=name_of(pg) if pg is not None else "",
            )
        )
    for key, pg in podgroups.items():
        if key in owned:
            continue
        rows.append(
            JobRow(
                namespace=namespace_of(pg) or "default",
                name=name_of(pg),
                kind=c.PODGROUP_KIND,
                queue=podgroup_queue(pg),
                phase=podgroup_shown_phase(pg),
                running=running.get(key, 0),
                tasks=count.get(key, 0),
                min_available=min_member_of(pg),
                age=age_text(creation_timestamp_of(pg), now),
                created=creation_timestamp_of(pg),
                reason=unschedulable_message(pg),
                podgroup=name_of(pg),
            )
        )
    rows.extend(_waiting_pod_rows(cluster, now))
    # Waiting jobs first (longest waiting on top), then the rest, newest first.
    rows.sort(key=lambda r: (not r.pending, r.created if r.pending else _neg(r.created), r.key))
    return rows


def _waiting_pod_rows(cluster: Cluster, now: datetime) -> list[JobRow]:
    """Pods placed one by one (the agent scheduler's: no PodGroup) that their scheduler could not place yet,
    with what it wrote in their ``PodScheduled`` condition."""
    rows: list[JobRow] = []
    for pod in cluster.pods:
        if pod_scheduler_name(pod) != c.AGENT_SCHEDULER_NAME or pod_node_name(pod):
            continue
        condition = unschedulable_condition(pod)
        if condition is None or pod_phase(pod) is not PodPhase.PENDING:
            continue
        rows.append(
            JobRow(
                namespace=namespace_of(pod) or "default",
                name=name_of(pod),
                kind=PODS.kind,
                queue=queue_of_pod(pod, lambda _group: None),
                phase=PodPhase.PENDING.value,
                running=0,
                tasks=1,
                min_available=1,
                age=age_text(creation_timestamp_of(pod), now),
                created=creation_timestamp_of(pod),
                reason=str(condition.get("message") or condition.get("reason") or ""),
                podgroup="",
            )
        )
    return rows


def _neg(stamp: str) -> str:
    return "".join(chr(0x10FFFF - ord(ch)) for ch in stamp)


# --- scheduler health ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Health:
    leader: str  # holder of the scheduler's Lease, or why there is none
    lease_age: str
    binds_per_second: float
    cycle_ms: float | None  # mean of the last scrape interval, when the scheduler's metrics are reachable
    errors: tuple[tuple[str, str, str], ...] = field(default_factory=tuple)  # (age, object, message)


def leader_of(lease: Obj | None, now: datetime) -> tuple[str, str]:
    if lease is None:
        return "no Lease (leader election off, or not started)", "-"
    spec = spec_of(lease)
    holder = spec.get("holderIdentity") or "nobody"
    return str(holder), age_text(spec.get("renewTime"), now)


def warning_rows(events: Sequence[Obj], now: datetime, limit: int = 8) -> tuple[tuple[str, str, str], ...]:
    """The scheduler's latest Warning events, newest first."""
    ordered = sorted(
        events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""), reverse=True
    )
    out = []
    for event in ordered[:limit]:
        obj = event.get("involvedObject") or {}
        out.append(
            (
                age_text(event.get("lastTimestamp") or event.get("eventTime"), now),
                f"{obj.get('kind', '')} {obj.get('namespace', '')}/{obj.get('name', '')}",
                f"{event.get('reason', '')}: {event.get('message', '')}",
            )
        )
    return tuple(out)


def snapshot_of(cluster: Cluster) -> Snapshot:
    """The scheduler's snapshot of the page's objects; one malformed object is left out (as the scheduler
    leaves it out, reporting it as a Warning event the health page shows) rather than blanking the page."""
    snapshot, _dropped = build_snapshot(cluster, cluster.scheduler_names)
    return snapshot


def session_of(cluster: Cluster, conf: SchedulerConf, now: str) -> SessionResult:
    """One session of ``conf`` over the page's objects: what the scheduler would decide now (the queues'
    deserved shares are read from it)."""
    return run_session(snapshot_of(cluster), conf, now)
