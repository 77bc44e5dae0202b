"""The objects benchmarks create through the API or hand a session in-process, built one way: fluent builders,
``make_pod("p").stored(n).req(cpu="2", gpu=1).group("pg").obj()``, each giving the plain dict the API server
would take or list (the tests' builders are ``tests/scheduler/builders.py``; benchmarks do not import tests).

A builder starts from what every benchmark's object of its kind has, and each method adds one thing, so the
dict holds only what the benchmark asked for: a session's cost depends on what its objects carry.
"""

from __future__ import annotations

import copy
from typing import Any, Self

from volcano_py.api import constants as c
from volcano_py.resources import GPU

Obj = dict[str, Any]
NAMESPACE = "bench"
CREATED = "2026-01-01T00:00:00Z"
POD_API_VERSION = "v1"


def created_at(n: int) -> str:
    """The ``n``-th object's creation time, distinct and increasing up to 3,600 objects (the order in which
    a session takes jobs of one priority)."""
    return f"2026-01-01T00:{n // 3600 % 60:02d}:{n % 3600 // 60:02d}Z"


def node_name(i: int) -> str:
    return f"node-{i:05d}"


def requests(cpu: str | None = None, memory: str | None = None, gpu: int = 0) -> dict[str, str]:
    """A container's requests: only the resources given (a GPU count of 0 is none)."""
    out: dict[str, str] = {}
    if cpu is not None:
        out["cpu"] = cpu
    if memory is not None:
        out["memory"] = memory
    if gpu:
        out[GPU] = str(gpu)
    return out


def container(name: str, image: str = "busybox", **quantities: str) -> Obj:
    """One container asking for ``quantities`` (``cpu="100m"``, ``memory="1Gi"``)."""
    return {"name": name, "image": image, "resources": {"requests": dict(quantities)}}


class _Builder:
    __slots__ = ("_body",)

    def __init__(self, body: Obj) -> None:
        self._body = body

    def obj(self) -> Obj:
        """The object built (the builder's own dict: build each object with a builder of its own)."""
        return self._body

    def ns(self, namespace: str = NAMESPACE) -> Self:
        self._body["metadata"]["namespace"] = namespace
        return self

    def uid(self, uid: str) -> Self:
        self._body["metadata"]["uid"] = uid
        return self

    def version(self, version: int) -> Self:
        """``metadata.resourceVersion``: what the scheduler's cache compares to see a change."""
        self._body["metadata"]["resourceVersion"] = str(version)
        return self

    def created(self, timestamp: str = CREATED) -> Self:
        self._body["metadata"]["creationTimestamp"] = timestamp
        return self

    def label(self, key: str, value: str) -> Self:
        self._body["metadata"].setdefault("labels", {})[key] = value
        return self

    def annotate(self, key: str, value: str) -> Self:
        self._body["metadata"].setdefault("annotations", {})[key] = value
        return self


class PodBuilder(_Builder):
    __slots__ = ()

    def api(self) -> Self:
        """``apiVersion`` and ``kind``, as a create through the API sends them."""
        self._body["apiVersion"] = POD_API_VERSION
        self._body["kind"] = "Pod"
        return self

    def stored(self, n: int = 0, namespace: str = NAMESPACE) -> Self:
        """As the API server lists a new pod: a namespace, a uid (``uid-<name>``), the ``n``-th creation time
        (``created_at``), Pending."""
        meta = self._body["metadata"]
        meta["namespace"] = namespace
        meta["uid"] = f"uid-{meta['name']}"
        meta["creationTimestamp"] = created_at(n)
        return self.phase("Pending")

    def image(self, image: str = "busybox") -> Self:
        self._body["spec"]["containers"][0]["image"] = image
        return self

    def req(self, cpu: str | None = None, memory: str | None = None, gpu: int = 0) -> Self:
        self._body["spec"]["containers"][0]["resources"] = {"requests": requests(cpu, memory, gpu)}
        return self

    def limit_gpus(self) -> Self:
        """``nvidia.com/gpu``'s limit equal to its request: the API server refuses an extended resource
        requested without one."""
        resources = self._body["spec"]["containers"][0]["resources"]
        if GPU in resources.get("requests", {}):
            resources["limits"] = {GPU: resources["requests"][GPU]}
        return self

    def group(self, podgroup: str | None) -> Self:
        """Member of ``podgroup`` (Volcano's annotation); None: of no PodGroup."""
        return self.annotate(c.KUBE_GROUP_NAME_KEY, podgroup) if podgroup else self

    def on(self, node: str | None) -> Self:
        """``spec.nodeName``: bound to ``node`` (None or empty: not bound)."""
        if node:
            self._body["spec"]["nodeName"] = node
        return self

    def phase(self, phase: str) -> Self:
        self._body.setdefault("status", {})["phase"] = phase
        return self

    def priority(self, class_name: str, value: int) -> Self:
        """A PriorityClass and the priority admission resolved from it."""
        self._body["spec"]["priorityClassName"] = class_name
        self._body["spec"]["priority"] = value
        return self

    def scheduler(self, name: str) -> Self:
        self._body["spec"]["schedulerName"] = name
        return self

    def never_restart(self) -> Self:
        self._body["spec"]["restartPolicy"] = "Never"
        return self


def make_pod(name: str) -> PodBuilder:
    """A pod for Volcano's scheduler with one container ``c``, asking for nothing yet."""
    return PodBuilder(
        {
            "metadata": {"name": name},
            "spec": {"schedulerName": c.SCHEDULER_NAME, "containers": [{"name": "c"}]},
        }
    )


def api_pod(name: str) -> PodBuilder:
    """The pod the benchmarks on a control plane create: busybox, 100m of CPU (KWOK runs it)."""
    return make_pod(name).api().image().req(cpu="100m")


class NodeBuilder(_Builder):
    __slots__ = ()

    def api(self) -> Self:
        self._body["apiVersion"] = POD_API_VERSION
        self._body["kind"] = "Node"
        return self

    def gpus(self, count: int) -> Self:
        """``count`` GPUs allocatable as ``nvidia.com/gpu`` (0: none, as when they are DRA devices)."""
        allocatable = self._body["status"]["allocatable"]
        if count:
            allocatable[GPU] = str(count)
        else:
            allocatable.pop(GPU, None)
        return self

    def ready(self) -> Self:
        self._body["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        return self


def make_node(i: int) -> NodeBuilder:
    """Node ``node-<i:05d>`` (its hostname label too): 96 CPUs, 768Gi, 8 GPUs, 110 pods."""
    name = node_name(i)
    return NodeBuilder(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"allocatable": {"cpu": "96", "memory": "768Gi", GPU: "8", "pods": "110"}},
        }
    )


class PodGroupBuilder(_Builder):
    __slots__ = ()

    def api(self) -> Self:
        self._body["apiVersion"] = c.SCHEDULING_API_VERSION
        self._body["kind"] = c.PODGROUP_KIND
        return self

    def queue(self, name: str) -> Self:
        self._body["spec"]["queue"] = name
        return self

    def priority_class(self, name: str) -> Self:
        self._body["spec"]["priorityClassName"] = name
        return self

    def phase(self, phase: str) -> Self:
        self._body.setdefault("status", {})["phase"] = phase
        return self

    def running(self, count: int) -> Self:
        self._body.setdefault("status", {})["running"] = count
        return self

    def condition(self, condition: Obj) -> Self:
        self._body.setdefault("status", {}).setdefault("conditions", []).append(condition)
        return self


def make_podgroup(name: str, min_member: int) -> PodGroupBuilder:
    """A PodGroup of ``min_member`` in queue ``default``."""
    return PodGroupBuilder(
        {"metadata": {"name": name}, "spec": {"minMember": min_member, "queue": c.DEFAULT_QUEUE}}
    )


def api_podgroup(name: str, min_member: int) -> Obj:
    """The PodGroup the benchmarks on a control plane create."""
    return make_podgroup(name, min_member).api().obj()


class QueueBuilder(_Builder):
    __slots__ = ()

    def api(self) -> Self:
        self._body["apiVersion"] = c.SCHEDULING_API_VERSION
        self._body["kind"] = c.QUEUE_KIND
        return self

    def deserved(self, **quantities: str) -> Self:
        """``spec.deserved``; ``gpu=`` names ``nvidia.com/gpu``."""
        self._body["spec"]["deserved"] = {GPU if name == "gpu" else name: v for name, v in quantities.items()}
        return self

    def open(self) -> Self:
        """``status.state: Open``, as the controller leaves a queue it admitted."""
        self._body["status"] = {"state": "Open"}
        return self


def make_queue(name: str, weight: int = 1) -> QueueBuilder:
    return QueueBuilder({"metadata": {"name": name}, "spec": {"weight": weight}})


class JobBuilder(_Builder):
    __slots__ = ()

    def scheduler(self, name: str = c.SCHEDULER_NAME) -> Self:
        """``spec.schedulerName`` (else the admission webhook's default)."""
        self._body["spec"]["schedulerName"] = name
        return self

    def queue(self, name: str) -> Self:
        self._body["spec"]["queue"] = name
        return self

    def min_available(self, count: int) -> Self:
        self._body["spec"]["minAvailable"] = count
        return self

    def max_retry(self, count: int) -> Self:
        self._body["spec"]["maxRetry"] = count
        return self

    def plugins(self, *names: str) -> Self:
        """Job plugins, each with no arguments."""
        self._body["spec"]["plugins"] = {name: [] for name in names}
        return self

    def task(
        self,
        name: str,
        replicas: int,
        main: Obj,
        *,
        annotations: dict[str, str] | None = None,
        restart_never: bool = False,
    ) -> Self:
        """A task of ``replicas`` pods running container ``main`` (a copy: tasks never share one)."""
        template: Obj = {"spec": {"containers": [copy.deepcopy(main)]}}
        if annotations is not None:
            template["metadata"] = {"annotations": dict(annotations)}
        if restart_never:
            template["spec"] = {"restartPolicy": "Never", **template["spec"]}
        self._body["spec"]["tasks"].append({"name": name, "replicas": replicas, "template": template})
        return self


def make_job(name: str) -> JobBuilder:
    """A Volcano Job in queue ``default``, ``minAvailable`` 1, no tasks yet."""
    return JobBuilder(
        {
            "apiVersion": c.BATCH_API_VERSION,
            "kind": c.JOB_KIND,
            "metadata": {"name": name},
            "spec": {"queue": c.DEFAULT_QUEUE, "minAvailable": 1, "tasks": []},
        }
    )


def gang_job(name: str, workers: int, main: Obj) -> JobBuilder:
    """A master and ``workers`` workers, all needed (``minAvailable``), each running ``main``: the shape of
    an MPI or PyTorch Job."""
    return make_job(name).min_available(workers + 1).task("master", 1, main).task("worker", workers, main)
