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
from volcano_py.whatif.why import unschedulable_condition

Obj = dict[str, Any]
BAR_RESOURCES = (GPU, CPU, MEMORY)


@dataclass(frozen=True, slots=True)
class Cluster(ClusterObjects):
    """The objects one page is drawn from (the API's JSON, as the watches hold it): what the scheduler reads,
    the Volcano Jobs the job rows show, and the schedulers whose pods are ours."""

    jobs: Sequence[Obj] = ()
    scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,)


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _key(obj: Obj) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


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
    by_name = {_meta(q).get("name") or "": q for q in cluster.queues}
    children: dict[str, list[str]] = {}
    for name, queue in by_name.items():
        parent = (queue.get("spec") or {}).get("parent") or (c.ROOT_QUEUE if name != c.ROOT_QUEUE else "")
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
        spec, status = queue.get("spec") or {}, queue.get("status") or {}
        capability = Resource.parse(spec.get("capability") or {}) if spec.get("capability") else None
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
                parent=(spec.get("parent") or "") if name != c.ROOT_QUEUE else "",
                depth=depth,
                weight=int(spec.get("weight") or 1),
                state=str(status.get("state") or "Open"),
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
    conditions = [
        cond
        for cond in (podgroup.get("status") or {}).get("conditions") or ()
        if cond.get("type") == c.PODGROUP_CONDITION_UNSCHEDULABLE and cond.get("status") == "True"
    ]
    if not conditions:
        return ""
    latest = max(conditions, key=lambda cond: str(cond.get("lastTransitionTime", "")))
    return str(latest.get("message") or latest.get("reason") or "")


def podgroup_of(job: Obj, podgroups: Mapping[str, Obj], by_owner: Mapping[str, Obj]) -> Obj | None:
    meta = _meta(job)
    return podgroups.get(f"{meta.get('namespace')}/{meta.get('name')}-{meta.get('uid')}") or by_owner.get(
        str(meta.get("uid"))
    )


def job_rows(cluster: Cluster, now: datetime) -> list[JobRow]:
    """Volcano Jobs, then PodGroups no Job owns; each with its pods' counts and the scheduler's reason."""
    podgroups = {_key(pg): pg for pg in cluster.podgroups}
    by_owner = {
        str(ref.get("uid")): pg for pg in cluster.podgroups for ref in _meta(pg).get("ownerReferences") or ()
    }
    running: dict[str, int] = {}
    count: dict[str, int] = {}
    for pod in cluster.pods:
        meta = _meta(pod)
        group = (meta.get("annotations") or {}).get(c.KUBE_GROUP_NAME_KEY)
        if not group:
            continue
        key = f"{meta.get('namespace') or 'default'}/{group}"
        count[key] = count.get(key, 0) + 1
        if pod_phase(pod) is PodPhase.RUNNING:
            running[key] = running.get(key, 0) + 1
    rows: list[JobRow] = []
    owned: set[str] = set()
    for job in cluster.jobs:
        meta, spec, status = _meta(job), job.get("spec") or {}, job.get("status") or {}
        pg = podgroup_of(job, podgroups, by_owner)
        pg_key = _key(pg) if pg is not None else ""
        owned.add(pg_key)
        replicas = sum(int(t.get("replicas", 0)) for t in spec.get("tasks") or ())
        rows.append(
            JobRow(
                namespace=meta.get("namespace") or "default",
                name=meta.get("name") or "",
                kind=c.JOB_KIND,
                queue=spec.get("queue") or c.DEFAULT_QUEUE,
                phase=str((status.get("state") or {}).get("phase") or "Pending"),
                running=running.get(pg_key, 0),
                tasks=replicas,
                min_available=int(spec.get("minAvailable") or replicas),
                age=age_text(meta.get("creationTimestamp"), now),
                created=str(meta.get("creationTimestamp") or ""),
                reason=unschedulable_message(pg),
                podgroup=_meta(pg).get("name", "") if pg is not None else "",
            )
        )
    for key, pg in podgroups.items():
        if key in owned:
            continue
        meta, spec = _meta(pg), pg.get("spec") or {}
        rows.append(
            JobRow(
                namespace=meta.get("namespace") or "default",
                name=meta.get("name") or "",
                kind=c.PODGROUP_KIND,
                queue=spec.get("queue") or c.DEFAULT_QUEUE,
                phase=str((pg.get("status") or {}).get("phase") or "Pending"),
                running=running.get(key, 0),
                tasks=count.get(key, 0),
                min_available=min_member_of(pg),
                age=age_text(meta.get("creationTimestamp"), now),
                created=str(meta.get("creationTimestamp") or ""),
                reason=unschedulable_message(pg),
                podgroup=meta.get("name") or "",
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
        meta, spec = _meta(pod), pod.get("spec") or {}
        if spec.get("schedulerName") != c.AGENT_SCHEDULER_NAME or spec.get("nodeName"):
            continue
        condition = unschedulable_condition(pod)
        if condition is None or pod_phase(pod) is not PodPhase.PENDING:
            continue
        rows.append(
            JobRow(
                namespace=meta.get("namespace") or "default",
                name=meta.get("name") or "",
                kind=PODS.kind,
                queue=queue_of_pod(pod, lambda _group: None),
                phase=PodPhase.PENDING.value,
                running=0,
                tasks=1,
                min_available=1,
                age=age_text(meta.get("creationTimestamp"), now),
                created=str(meta.get("creationTimestamp") or ""),
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
    spec = lease.get("spec") or {}
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
