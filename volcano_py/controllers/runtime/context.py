"""What every handler and worker of one operator instance shares: client, caches, queues, timers, metrics.

Jobs, their pods and PodGroups are cached by informers of our own (``kube.informer``), and the Job workers
start only once all of them have listed, so after a restart no reconcile runs on a half-known world (it would
count missing pods and create duplicates or lose track of existing ones). Queues, which are few, are a Kopf
index. Kopf holds every handler until each object of each kind it indexes has been indexed, and its gate
wakes every waiting object's task whenever one more object is indexed: a cost that grows with the square of
the objects. With 1,000 finished Jobs in a Kopf index a restarted controller spent some 5 s of CPU there
before it handled a new Job, and the history of a long-lived cluster is tens of thousands of Jobs. Kopf event
handlers without an index (``--job-watch kopf``) took over a 1,000-node cluster 1.5-2.7 times slower, on
2.4-3.6 times the CPU (docs/architecture.md, "Two watch mechanisms in the controller").
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from volcano_py.api import constants as c
from volcano_py.api.bus import Action
from volcano_py.api.controller_gates import DEFAULT_GATES, ControllerGates
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.job_view import ResolvedJob, resolve_job
from volcano_py.api.objects import generation_of, is_deleting, resource_version_of, uid_of
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.controllers.runtime.workqueue import KeyedQueue
from volcano_py.kube.client import KubeClient
from volcano_py.kube.eventloop import DEFAULT_EVENT_LOOP
from volcano_py.kube.events import EventRecorder
from volcano_py.kube.leader import Fenced, LeaseTiming, WriteStamp, through_fence
from volcano_py.log import get_logger

if TYPE_CHECKING:  # the Job worker's types; runtime imports no kind's code
    from volcano_py.controllers.job.policies import Decision, Request

_log = get_logger(__name__)


# Index names: Kopf passes each index to handlers as a keyword argument of that name.
QUEUE_INDEX = "vc_queues"

SYNC_QUEUE = Action.SYNC_QUEUE.value
# How long a queue's status may lag its PodGroups' phases while they change.
QUEUE_RECOUNT_SECONDS = 0.5

JobKey = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True, slots=True)
class ControllerOptions:
    kubeconfig: str | None = None
    namespaces: tuple[str, ...] = ()  # empty: the whole cluster
    scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,)
    workers: int = 16
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 8081  # 0: any free port
    leader_elect: bool = True
    lease_namespace: str = "kube-system"
    lease_name: str = "volcano-py-controller"
    identity: str = ""  # default: hostname + pid
    lease_timing: LeaseTiming = field(default_factory=LeaseTiming)
    create_concurrency: int = 64
    # Admission webhooks (volcano_py.webhooks): off when ``webhook_port`` is None. ``webhook_service`` is
    # the "namespace/name" of the Service in front of the server (in a cluster); without it the API server
    # calls https://<first webhook host>:<port> (a controller beside the API server, as in `volcano-py up`).
    webhook_port: int | None = None
    webhook_addr: str = "0.0.0.0"
    webhook_hosts: tuple[str, ...] = ("127.0.0.1", "localhost")
    webhook_service: str | None = None
    webhook_cert_dir: str | None = None
    webhook_timeout_seconds: int = 5
    webhook_failure_policy: str = "Fail"  # or "Ignore": admit unchecked while no controller serves
    # Volcano's --feature-gates, read by admission (SchedulingGatesQueueAdmission: the pod gate injection).
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES
    # A volcano-admission.conf: its resource groups mutate new pods (re-read when the file changes).
    admission_conf: str | None = None
    # The operator thread's event loop (``kube.eventloop``). uvloop's TLS costs the webhook server a few
    # tens of KB per connection a client opens and leaves silent, asyncio's some 100-300 KB.
    event_loop: str = DEFAULT_EVENT_LOOP
    # Volcano's --controllers: which optional controllers run (the sharding controller is off by default).
    controllers: ControllerGates = DEFAULT_GATES
    # The sharding controller's ConfigMap (Volcano's --sharding-configmap and --sharding-configmap-namespace).
    sharding_configmap: str = c.SHARDING_CONFIGMAP
    sharding_configmap_namespace: str = c.VOLCANO_SYSTEM_NAMESPACE
    # How Jobs, their pods and PodGroups are watched: "informer" (informers of our own) or "kopf" (Kopf event
    # handlers, an experiment kept to be measured again: ``job/watch.py``, ``docs/architecture.md``).
    job_watch: str = "informer"


@dataclass(slots=True)
class DelayedAction:
    decision: Decision
    handle: asyncio.TimerHandle


def _values(index: Mapping[Any, Iterable[Any]] | None, key: Any) -> list[Any]:
    if index is None:
        return []
    store = index.get(key)
    return list(store) if store is not None else []


@dataclass
class ControllerContext:
    options: ControllerOptions
    client: KubeClient
    recorder: EventRecorder
    metrics: ControllerMetrics
    job_queue: KeyedQueue[JobKey, Request] = field(
        default_factory=lambda: KeyedQueue(
            is_resync=lambda r: r.action is None and r.event.value == "OutOfSync"
        )
    )
    queue_queue: KeyedQueue[str, str] = field(
        default_factory=lambda: KeyedQueue(is_resync=lambda a: a == SYNC_QUEUE)
    )
    indices: dict[str, Mapping[Any, Iterable[Any]]] = field(default_factory=dict)
    # Jobs and PodGroups by (namespace, name), kept by the operator's informers (``job.feed.job_changed``,
    # ``job.feed.podgroup_changed``).
    jobs: dict[JobKey, dict[str, Any]] = field(default_factory=dict)
    podgroups_by_key: dict[JobKey, dict[str, Any]] = field(default_factory=dict)
    # Newest Job bodies this controller wrote; fresher than the index until the watch catches up.
    written_jobs: dict[JobKey, dict[str, Any]] = field(default_factory=dict)
    pod_phases: dict[str, str] = field(default_factory=dict)  # pod uid -> last phase seen
    # Uids of pods this controller deleted, until their deletion is seen. The out-of-sync mark says the same
    # to a restarted controller, but a watch that was cut and relisted shows a deletion with the pod's last
    # version it saw, which may predate the mark: without this, that pod's deletion would read as an
    # eviction and restart its task a second time.
    killed_pods: set[str] = field(default_factory=set)
    delayed: dict[JobKey, dict[str, DelayedAction]] = field(default_factory=dict)
    ttl_timers: dict[JobKey, asyncio.TimerHandle] = field(default_factory=dict)
    specs: dict[str, tuple[int, ResolvedJob]] = field(default_factory=dict)
    # Set once Jobs, their pods and PodGroups have been listed: the Job, queue, flow and plain-pod workers
    # wait for it.
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    # The pods of each Job (namespace, job name) -> pod uid -> slim pod, kept by the job-pod informer, not by
    # a Kopf index: Kopf holds every handler until each object of each indexed kind has been indexed, at a
    # cost that grows faster than linearly with the objects -- with thousands of finished pods, tens of
    # seconds before a restarted controller handled its first Job (docs/reliability.md).
    pods_by_job: dict[JobKey, dict[str, dict[str, Any]]] = field(default_factory=dict)
    # Queues whose recount is due within QUEUE_RECOUNT_SECONDS (see ``sync_queue_soon``).
    recounts_due: set[str] = field(default_factory=set)
    # The leader's fence (``kube.leader``); always true without leader election.
    may_write: Callable[[str], bool] = lambda _what: True

    def ensure_leading(self, what: str) -> WriteStamp:
        """Raise ``Fenced`` when this replica may no longer write (its lease lapsed, say while frozen):
        pod creations and deletions decided before are dropped; the next leader decides them again."""
        stamp = through_fence(self.may_write, what)
        if stamp is None:
            raise Fenced(what)
        return stamp

    def sync_queue_soon(self, name: str) -> None:
        """Queue ``name`` or one of its PodGroups changed: sync the queue within QUEUE_RECOUNT_SECONDS, once
        however many change meanwhile. A sync counts the queue's PodGroups by phase over all of them, and
        writes the queue's status, whose echo is a queue event: one sync per event kept the controller
        recounting the whole time 5,000 plain pods arrived, a third of its CPU. Commands sync at once."""
        if name in self.recounts_due:
            return
        self.recounts_due.add(name)

        def due() -> None:
            self.recounts_due.discard(name)
            self.queue_queue.add(name, SYNC_QUEUE)

        asyncio.get_running_loop().call_later(QUEUE_RECOUNT_SECONDS, due)

    def job(self, key: JobKey) -> dict[str, Any] | None:
        observed = self.jobs.get(key)
        written = self.written_jobs.get(key)
        if written is None:
            return observed
        if observed is None:
            return None  # deleted since we wrote it
        if uid_of(observed) != uid_of(written):
            self.written_jobs.pop(key, None)
            return observed
        if _rv(observed) >= _rv(written):
            self.written_jobs.pop(key, None)
            return observed
        return written

    def job_pods(self, key: JobKey) -> list[dict[str, Any]]:
        return list(self.pods_by_job.get(key, {}).values())

    def podgroup(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.podgroups_by_key.get((namespace, name))

    def podgroups(self) -> Iterator[dict[str, Any]]:
        yield from self.podgroups_by_key.values()

    def queues(self) -> list[dict[str, Any]]:
        index = self.indices.get(QUEUE_INDEX)
        return [q for store in (index or {}).values() for q in store]

    def queue(self, name: str) -> dict[str, Any] | None:
        found = _values(self.indices.get(QUEUE_INDEX), name)
        return found[0] if found else None

    def spec(self, body: Mapping[str, Any]) -> ResolvedJob:
        """The parsed Job, cached per (uid, generation): pod events read it far more often than it changes."""
        uid, generation = uid_of(body), generation_of(body)
        cached = self.specs.get(uid)
        if cached is not None and cached[0] == generation and not is_deleting(body):
            return cached[1]
        parsed = resolve_job(body)
        self.specs[uid] = (generation, parsed)
        return parsed

    def remember_written(self, key: JobKey, body: dict[str, Any]) -> None:
        self.written_jobs[key] = body

    def cancel_timers(self, key: JobKey) -> None:
        body = self.job(key)
        if body is not None:
            self.specs.pop(uid_of(body), None)
        for delayed in self.delayed.pop(key, {}).values():
            delayed.handle.cancel()
        ttl = self.ttl_timers.pop(key, None)
        if ttl is not None:
            ttl.cancel()


def _rv(body: Mapping[str, Any]) -> int:
    # Resource versions are opaque to clients in general but are etcd revisions here; only used to pick
    # the newer of two copies of one object.
    try:
        return int(resource_version_of(body) or 0)
    except (TypeError, ValueError):
        return 0
