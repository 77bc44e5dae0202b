"""The ``extender`` plugin's conf and its HTTP contract with an extender, without the I/O.

``ExtenderConf.of`` reads Volcano's ``extender.*`` arguments and refuses what cannot be honoured here: the
verbs Volcano asks *during* its decisions (preemptable, reclaimable, jobReady, allocateFunc, ...) take
objects that exist only inside a session, which makes no calls. ``consultation`` turns a Snapshot into what
the runtime sends before the session: the request bodies in Volcano's JSON (its ``TaskInfo``, ``NodeInfo``,
``JobInfo`` and ``QueueInfo`` under Go's field names). ``read_predicate`` and ``read_prioritize`` read the
answers as Volcano's plugin does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from volcano_py.api import extender as x
from volcano_py.api.objects import spec_of
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import CPU, MEMORY, PODS, unit_scale

from ..framework.arguments import Arguments, ConfError
from ..framework.conf import SchedulerConf
from ..framework.extenders import CallFailed, Refusal
from ..framework.job import JobInfo
from ..framework.node import NodeInfo, QueueInfo
from ..framework.snapshot import Snapshot
from ..framework.task import TaskInfo

PLUGIN = "extender"

_SUPPORTED = (
    x.URL_PREFIX,
    x.HTTP_TIMEOUT,
    x.ON_SESSION_OPEN_VERB,
    x.ON_SESSION_CLOSE_VERB,
    x.PREDICATE_VERB,
    x.PRIORITIZE_VERB,
    x.JOB_ENQUEUEABLE_VERB,
    x.QUEUE_OVERUSED_VERB,
    x.IGNORABLE,
    x.MANAGED_RESOURCES,
)
_IN_SESSION = "Volcano asks it from inside its decisions"
# Verbs whose question only exists mid-session: why each is refused.
_REFUSED_VERBS = {
    x.PREEMPTABLE_VERB: f"{_IN_SESSION}, with the victims preempt is weighing for one preemptor",
    x.RECLAIMABLE_VERB: f"{_IN_SESSION}, with the victims reclaim is weighing for one reclaimer",
    x.JOB_READY_VERB: f"{_IN_SESSION}, with the job as this session's allocations have left it",
    x.ALLOCATE_FUNC_VERB: f"{_IN_SESSION}: it is told of each allocation as it is made and may undo it",
    x.DEALLOCATE_FUNC_VERB: f"{_IN_SESSION}: it is told of each eviction or undo as it is made",
    x.JOB_ENQUEUED_VERB: (
        f"{_IN_SESSION}: it is told of each job as enqueue admits it, so that its jobEnqueueable answers for "
        "the next jobs of the same session can count it"
    ),
}


@dataclass(frozen=True, slots=True)
class ExtenderConf:
    """The ``extender`` plugin's arguments. A verb left empty is not called, as in Volcano."""

    url_prefix: str = ""
    timeout: float = x.DEFAULT_HTTP_TIMEOUT_SECONDS
    on_session_open: str = ""
    on_session_close: str = ""
    predicate: str = ""
    prioritize: str = ""
    job_enqueueable: str = ""
    queue_overused: str = ""
    ignorable: bool = False
    managed_resources: frozenset[str] = frozenset()

    @classmethod
    def of(cls, arguments: Arguments) -> ExtenderConf:
        arguments.check_known((*_SUPPORTED, *_REFUSED_VERBS))
        for key, why in _REFUSED_VERBS.items():
            if arguments.get_str(key, ""):
                raise ConfError(
                    f"{arguments.owner}: argument {key!r} is not supported by volcano-py: {why}, and the "
                    "scheduling session here makes no calls (extenders are asked before it opens); remove it"
                )
        timeout = arguments.get_duration(x.HTTP_TIMEOUT, timedelta(seconds=x.DEFAULT_HTTP_TIMEOUT_SECONDS))
        assert timeout is not None
        conf = cls(
            url_prefix=arguments.get_str(x.URL_PREFIX, "").strip(),
            timeout=timeout.total_seconds(),
            on_session_open=arguments.get_str(x.ON_SESSION_OPEN_VERB, "").strip(),
            on_session_close=arguments.get_str(x.ON_SESSION_CLOSE_VERB, "").strip(),
            predicate=arguments.get_str(x.PREDICATE_VERB, "").strip(),
            prioritize=arguments.get_str(x.PRIORITIZE_VERB, "").strip(),
            job_enqueueable=arguments.get_str(x.JOB_ENQUEUEABLE_VERB, "").strip(),
            queue_overused=arguments.get_str(x.QUEUE_OVERUSED_VERB, "").strip(),
            ignorable=arguments.get_bool(x.IGNORABLE, False),
            managed_resources=_managed(arguments),
        )
        if conf.verbs and not conf.url_prefix.startswith(("http://", "https://")):
            raise ConfError(
                f"{arguments.owner}: argument {x.URL_PREFIX!r} must be the extender's http:// or https:// "
                f"address (verbs are POSTed to <urlPrefix>/<verb>), got {conf.url_prefix!r}"
            )
        return conf

    @property
    def verbs(self) -> tuple[str, ...]:
        verbs = (
            self.on_session_open,
            self.on_session_close,
            self.predicate,
            self.prioritize,
            self.job_enqueueable,
            self.queue_overused,
        )
        return tuple(v for v in verbs if v)

    def url(self, verb: str) -> str:
        return f"{self.url_prefix.rstrip('/')}/{verb}"

    def interested(self, task: TaskInfo) -> bool:
        """Whether the extender is asked about ``task``: always, unless ``extender.managedResources`` is set;
        then only for a pod whose containers or init containers request or limit one of them."""
        if not self.managed_resources:
            return True
        spec = spec_of(task.pod)
        for container in (*(spec.get("containers") or ()), *(spec.get("initContainers") or ())):
            resources = container.get("resources") or {}
            for part in ("requests", "limits"):
                if self.managed_resources.intersection(resources.get(part) or {}):
                    return True
        return False


def _managed(arguments: Arguments) -> frozenset[str]:
    raw = arguments.values.get(x.MANAGED_RESOURCES)
    if raw is None:
        return frozenset()
    # Volcano decodes a YAML list only, and stops at start on anything else.
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfError(
            f"{arguments.owner}: argument {x.MANAGED_RESOURCES!r} must be a YAML list of resource names "
            f"such as [nvidia.com/gpu], got {raw!r}"
        )
    return frozenset(item.strip() for item in raw if item.strip())


def extender_conf(conf: SchedulerConf) -> ExtenderConf | None:
    """The conf's extender, when it names one that calls at least one verb."""
    option = conf.option(PLUGIN)
    if option is None:
        return None
    found = ExtenderConf.of(Arguments(f"plugin {PLUGIN}", option.arguments))
    return found if found.verbs else None


# --- request bodies: Volcano's records as Go's encoding/json writes them ----------------------------------


def resource_doc(resource: Mapping[str, int]) -> dict[str, Any]:
    """Volcano's ``Resource``: cpu in millicores, memory in bytes, every other resource in milli-units
    (``pods`` as a count, also its ``MaxTaskNum``)."""
    scalars: dict[str, float] = {}
    for name, amount in resource.items():
        if name in (CPU, MEMORY):
            continue
        # Ours are canonical units (bytes, milli-units, a count of pods); Volcano's scalars are milli-units.
        scalars[name] = float(amount if name == PODS else amount * 1000 // unit_scale(name))
    return {
        "MilliCPU": float(resource.get(CPU, 0)),
        "Memory": float(resource.get(MEMORY, 0)),
        "ScalarResources": scalars or None,
        "MaxTaskNum": int(resource.get(PODS, 0)),
    }


def task_doc(task: TaskInfo) -> dict[str, Any]:
    """Volcano's ``TaskInfo`` (its embedded transaction context's fields at the top, as Go embeds them)."""
    status = x.TASK_STATUS_BITS[task.status]
    request = resource_doc(task.resreq)
    return {
        "UID": task.uid,
        "Job": task.job_id or "",
        "Name": task.name,
        "Namespace": task.namespace,
        "TaskRole": task.role,
        "Resreq": request,
        "InitResreq": request,
        "NodeName": task.node_name,
        "EvictionOccurred": False,
        "JobAllocatedHyperNode": "",
        "Status": status,
        "Priority": task.priority,
        "Preemptable": task.preemptable,
        "BestEffort": task.best_effort,
        "SchGated": task.gated,
        "Pod": task.pod,
    }


def node_doc(node: NodeInfo, raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Volcano's ``NodeInfo``: the Node object, its resource sums and the tasks on it."""
    phase = x.NODE_PHASE_READY if node.ready else x.NODE_PHASE_NOT_READY
    return {
        "Name": node.name,
        "Node": raw,
        "State": {"Phase": phase, "Reason": "" if node.ready else "NotReady"},
        "Releasing": resource_doc(node.releasing),
        "Pipelined": resource_doc(node.pipelined),
        "Idle": resource_doc(node.idle),
        "Used": resource_doc(node.used),
        "Allocatable": resource_doc(node.allocatable),
        "Capacity": resource_doc(node.allocatable),
        "Tasks": {uid: task_doc(task) for uid, task in node.tasks.items()},
    }


def job_doc(job: JobInfo) -> dict[str, Any]:
    """Volcano's ``JobInfo``: the PodGroup, its gang numbers and its tasks."""
    return {
        "UID": job.uid,
        "Name": job.name,
        "Namespace": job.namespace,
        "Queue": job.queue,
        "Priority": job.priority,
        "MinAvailable": job.min_available,
        "PodGroup": job.podgroup or None,
        "Tasks": {uid: task_doc(task) for uid, task in job.tasks.items()},
    }


def queue_doc(queue: QueueInfo, raw: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"UID": queue.name, "Name": queue.name, "Weight": queue.weight, "Queue": raw}


def _encode(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class Consultation:
    """What to ask one extender before a session, each body encoded once. ``tasks``: the pending tasks it is
    interested in, and ``nodes``: every node, combined per call by ``predicate_body`` and
    ``prioritize_body``; ``jobs``: per Pending job with ``minResources``, its jobEnqueueable body;
    ``queues``: per queue with pending pods, its queueOverused body."""

    conf: ExtenderConf
    open_body: bytes | None
    tasks: tuple[tuple[str, bytes], ...]
    nodes: tuple[tuple[str, bytes], ...]
    ask_predicate: bool
    ask_prioritize: bool
    jobs: tuple[tuple[str, bytes], ...] = ()
    queues: tuple[tuple[str, bytes], ...] = ()


def consultation(
    conf: ExtenderConf,
    snapshot: Snapshot,
    *,
    raw_nodes: Mapping[str, Mapping[str, Any]],
    raw_queues: Mapping[str, Mapping[str, Any]],
    flags: Mapping[str, bool],
    enqueue: bool = True,
) -> Consultation:
    """The calls for ``snapshot``. ``flags``: the plugin's conf flags (``enablePredicate``,
    ``enableNodeOrder``, ``enableJobEnqueued``, ``enableOverused`` false leave that verb uncalled, as
    Volcano's session never calls it then); ``enqueue``: whether the conf runs the enqueue action (the only
    one that asks jobEnqueueable)."""
    pending = [
        task
        for job in snapshot.jobs.values()
        for task in job.pending_tasks
        if not task.gated and conf.interested(task)
    ]
    ask_predicate = bool(conf.predicate) and flags.get("enablePredicate", True)
    ask_prioritize = bool(conf.prioritize) and flags.get("enableNodeOrder", True)
    asking = bool(pending) and (ask_predicate or ask_prioritize)
    open_body = None
    if conf.on_session_open:
        open_body = _encode(
            {
                "Jobs": {uid: job_doc(job) for uid, job in snapshot.jobs.items()},
                "Nodes": {n.name: node_doc(n, raw_nodes.get(n.name)) for n in snapshot.nodes},
                "Queues": {name: queue_doc(q, raw_queues.get(name)) for name, q in snapshot.queues.items()},
                # Volcano's namespace weights and revocable zones are not modelled here: sent empty.
                "NamespaceInfo": {},
                "RevocableNodes": {},
                "NodeList": None,
            }
        )
    jobs: tuple[tuple[str, bytes], ...] = ()
    if conf.job_enqueueable and enqueue and flags.get("enableJobEnqueued", True):
        # As Volcano's enqueue: a Pending job without minResources is admitted without asking.
        jobs = tuple(
            (uid, _encode({"job": job_doc(job)}))
            for uid, job in snapshot.jobs.items()
            if job.phase is PodGroupPhase.PENDING and job.min_resources is not None
        )
    queues: tuple[tuple[str, bytes], ...] = ()
    if conf.queue_overused and flags.get("enableOverused", True):
        # Allocate and reclaim ask it of the queues they have pods to place for.
        waiting = sorted({job.queue for job in snapshot.jobs.values() if job.pending_tasks})
        queues = tuple(
            (name, _encode({"queue": queue_doc(snapshot.queues[name], raw_queues.get(name))}))
            for name in waiting
            if name in snapshot.queues
        )
    return Consultation(
        conf=conf,
        open_body=open_body,
        tasks=tuple((t.uid, _encode(task_doc(t))) for t in pending) if asking else (),
        nodes=tuple((n.name, _encode(node_doc(n, raw_nodes.get(n.name)))) for n in snapshot.nodes)
        if asking
        else (),
        ask_predicate=ask_predicate,
        ask_prioritize=ask_prioritize,
        jobs=jobs,
        queues=queues,
    )


def predicate_body(task: bytes, node: bytes) -> bytes:
    return b'{"task":' + task + b',"node":' + node + b"}"


def prioritize_body(task: bytes, nodes: Iterable[bytes]) -> bytes:
    return b'{"task":' + task + b',"nodes":[' + b",".join(nodes) + b"]}"


# --- answers ------------------------------------------------------------------------------------------------


def read_predicate(payload: object) -> Refusal | CallFailed | None:
    """A predicate answer ``{"status": message, "code": n}``: None passes the node. A message with code 0
    is an error (code 1), as Volcano keeps older extenders that send no code."""
    if not isinstance(payload, dict):
        return CallFailed(f"the predicate answer is not a JSON object: {payload!r:.200}")
    message = payload.get("status") or ""  # raw read: the extender's HTTP answer, no Kubernetes object
    code = payload.get("code") or 0
    if not isinstance(message, str) or not isinstance(code, int) or isinstance(code, bool):
        return CallFailed(f"the predicate answer is not {{status: string, code: int}}: {payload!r:.200}")
    if not message:
        return None
    return Refusal(message, code or int(x.FitCode.ERROR))


def read_prioritize(payload: object) -> Mapping[str, float] | CallFailed:
    """A prioritize answer ``{"nodeScore": {node: score}, "errorMessage": text}``. An error message, or no
    ``nodeScore``, is the extender's own error."""
    if not isinstance(payload, dict):
        return CallFailed(f"the prioritize answer is not a JSON object: {payload!r:.200}")
    message = payload.get("errorMessage") or ""
    scores = payload.get("nodeScore")
    if not isinstance(message, str):
        return CallFailed(f"the prioritize answer's errorMessage is not a string: {message!r:.200}")
    if message or scores is None:
        return CallFailed(message or "the prioritize answer has no nodeScore", answered=True)
    if not isinstance(scores, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in scores.values()
    ):
        return CallFailed(f"the prioritize answer's nodeScore is not {{node: number}}: {scores!r:.200}")
    return {str(name): float(score) for name, score in scores.items()}


def read_enqueueable(payload: object) -> int | CallFailed:
    """A jobEnqueueable answer ``{"status": n}``: above 0 permits, 0 abstains, below 0 rejects."""
    status = payload.get("status", 0) if isinstance(payload, dict) else None  # raw read: an HTTP answer
    if not isinstance(status, int) or isinstance(status, bool):
        return CallFailed(f"the jobEnqueueable answer is not {{status: int}}: {payload!r:.200}")
    return status


def read_overused(payload: object) -> bool | CallFailed:
    """A queueOverused answer ``{"overused": true|false}``."""
    overused = payload.get("overused", False) if isinstance(payload, dict) else None
    if not isinstance(overused, bool):
        return CallFailed(f"the queueOverused answer is not {{overused: bool}}: {payload!r:.200}")
    return overused


def passed_nodes(consulted: Consultation, refused: Mapping[str, Refusal | CallFailed]) -> list[bytes]:
    """The nodes a task is prioritized over: those its predicate passed (Volcano scores the nodes that
    passed the predicates; a failed call passes with ``extender.ignorable``)."""
    ignorable = consulted.conf.ignorable
    return [
        body
        for name, body in consulted.nodes
        if (answer := refused.get(name)) is None or (ignorable and isinstance(answer, CallFailed))
    ]
