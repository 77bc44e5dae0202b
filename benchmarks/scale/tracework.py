"""``bench_scale --mode trace``'s pure parts: the openb trace drawn to the run's size (``workload``), its
nodes as KWOK Node manifests, each job's objects in each system's own terms (``job_bodies``), and what the
bound pods leave of the cluster (``placement``: GPUs allocated and stranded) and how long they waited
(``waits``).

The rules, stated once (the module docstring of ``scale/trace.py`` and the JSON carry them too):

- size: the trace's 1,523 nodes and 8,152 pods drawn evenly to ``--nodes`` (``benchlib.openb.stretch``:
  below 1,523 every k-th node, above it each node repeated in place) and the pods in the same proportion
  (5,352 pods at 1,000 nodes), in creation order; then ``openb-gangs``' gangs laid over them as
  ``bench_placement`` lays them (after every 40th pod a gang of 2-4 eight-GPU pods, 32 cores and 128Gi each);
- GPUs: ``nvidia.com/gpu`` is an integer resource every peer reads, so a pod asking for a share of one card
  (``gpu_milli`` < 1000, 3,078 of the trace's pods) asks for the whole card (``GPU_RULE``);
- gangs: Volcano's PodGroup for volcano-py and Volcano, KAI's PodGroup, YuniKorn's task group, coscheduling's
  ``scheduling.x-k8s.io`` PodGroup, each of minMember the gang's size; the null binder and kube-scheduler
  have no gang object, and get the gang's pods bare (``GANGLESS``). A one-pod job is a bare pod, but for
  Volcano and KAI, which schedule a pod only once it has a PodGroup and whose controllers do not run here:
  there it gets a PodGroup of minMember 1, as their controllers would give it (``SINGLES_GROUPED``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.benchlib import openb, peer_kube
from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.stats import percentile
from benchmarks.scale.systems import in_own_terms
from volcano_py.devcluster.nodes import node_manifests
from volcano_py.kube.kinds import PODGROUPS, PODS
from volcano_py.resources import CPU, GPU, MEMORY, Resource
from volcano_py.scheduler.solver.fragmentation import StrandedGpus

JSON = dict[str, Any]
Vector = tuple[int, int, int]  # millicores, bytes of memory, milli-GPUs
DIMS = (CPU, MEMORY, GPU)
MI = 2**20
GANGLESS = ("null", peer_kube.PLAIN)
SINGLES_GROUPED = ("volcano", kai.SYSTEM)
GPU_RULE = "a share of one GPU (gpu_milli < 1000) is asked for as one whole nvidia.com/gpu"
SIZE_RULE = (
    "the trace's nodes drawn evenly to the run's (every k-th, or each repeated in place), its pods in "
    "proportion, in creation order, with openb-gangs' gangs (2-4 eight-GPU pods after every 40th pod)"
)


@dataclass(frozen=True, slots=True)
class Workload:
    nodes: list[openb.TraceNode]  # node i of the cluster is nodes[i], named node-<i>
    jobs: list[openb.Job]  # in arrival order, named by ``job_name``

    @property
    def pods(self) -> int:
        return sum(job.size for job in self.jobs)

    @property
    def gpus(self) -> int:
        return sum(node.gpus for node in self.nodes)


def workload(directory: Path, nodes: int) -> Workload:
    """The trace drawn to ``nodes`` nodes, its pods in proportion, with ``openb-gangs``' gangs."""
    trace_nodes = openb.read_nodes(directory)
    pods = openb.read_pods(directory)
    drawn = openb.stretch(pods, openb.scaled_pod_count(len(pods), len(trace_nodes), nodes))
    return Workload(openb.stretch(trace_nodes, nodes), list(openb.arrivals(drawn, gangs=True)))


def job_name(index: int, job: openb.Job) -> str:
    """``g<index>`` for a gang, ``p<index>`` for a trace pod (the trace's names repeat once stretched); its
    pods are ``<job>-<i>``, as ``stats.partial_gangs`` reads them."""
    return f"{'g' if job.gang else 'p'}{index:06d}"


def node_bodies(nodes: Sequence[openb.TraceNode]) -> list[JSON]:
    """KWOK nodes ``node-<i>`` with the trace node's cores, memory and GPUs (``nvidia.com/gpu``; none on a
    CPU-only node)."""
    return [
        node_manifests(1, start=i, cpu=f"{node.cpu_milli}m", memory=f"{node.memory_mib}Mi", gpus=node.gpus)[0]
        for i, node in enumerate(nodes)
    ]


def capacity(node: openb.TraceNode) -> Vector:
    return node.cpu_milli, node.memory_mib * MI, node.gpus * 1000


def request(shape: openb.Shape) -> Vector:
    """What a pod of ``shape`` asks of the API: a share of a GPU rounded up to the card (``GPU_RULE``)."""
    return shape.cpu_milli, shape.memory_mib * MI, shape.whole_gpus * 1000


def trace_pod(name: str, shape: openb.Shape, group: str | None) -> JSON:
    """The bench's pod of ``shape`` in Volcano's terms (``api_pod``: busybox, for KWOK), member of
    ``group`` if any."""
    body = api_pod(name).req(
        cpu=f"{shape.cpu_milli}m",
        memory=f"{shape.memory_mib}Mi" if shape.memory_mib else None,
        gpu=shape.whole_gpus,
    )
    return body.limit_gpus().group(group).obj()


def job_bodies(namespace: str, name: str, job: openb.Job, system: str) -> list[tuple[str, JSON]]:
    """``(path, body)`` to create for one job, its gang object first, in ``system``'s own terms."""
    grouped = job.gang if system not in SINGLES_GROUPED else True
    group = name if grouped and system not in GANGLESS else None
    bodies = [(PODGROUPS.collection_path(namespace), api_podgroup(name, job.size))] if group else []
    bodies += [
        (PODS.collection_path(namespace), trace_pod(f"{name}-{i}", job.shape, group)) for i in range(job.size)
    ]
    return in_own_terms(system, bodies)


def likely_requests(jobs: Iterable[openb.Job]) -> list[Resource]:
    """The workload's distinct GPU requests: the sizes ``StrandedGpus`` asks whether a free GPU can serve."""
    vectors = sorted({request(job.shape) for job in jobs if job.shape.whole_gpus})
    return [Resource(dict(zip(DIMS, vector, strict=True))) for vector in vectors]


def fits_empty(shape: openb.Shape, capacities: Iterable[Vector]) -> bool:
    """Whether a pod of ``shape`` fits an empty node of these capacities: one that fits none is never
    placed by any system, and says nothing about a full cluster."""
    want = request(shape)
    return any(all(have >= need for have, need in zip(cap, want, strict=True)) for cap in capacities)


def gang_request(jobs: Iterable[openb.Job]) -> Vector | None:
    """The largest request of a gang's pod (None: the workload has no gang)."""
    return max((request(job.shape) for job in jobs if job.gang), default=None, key=lambda v: v[::-1])


def fits_in(free: Sequence[int], want: Vector) -> int:
    """How many pods asking ``want`` fit in ``free``."""
    return min((have // need for have, need in zip(free, want, strict=True) if need), default=0)


def placement(
    capacities: Mapping[str, Vector],
    placed: Iterable[tuple[str, Vector]],
    likely: Sequence[Resource],
    gang: Vector | None = None,
) -> JSON:
    """GPUs allocated and stranded (``StrandedGpus``: free GPUs of a node in use that no likely request
    fits beside, on every resource) once the ``placed`` pods (node, request) sit on nodes of ``capacities``.
    ``overcommitted_nodes``: nodes given more than they have (the null binder ignores capacity). With a
    ``gang`` pod's request: ``gang_pod_room``, how many such pods the free room still takes, and
    ``gpus_free_split``, the free GPUs of nodes that could take one empty but cannot now (the room the
    one-GPU pods split below a gang pod's size, which ``StrandedGpus`` does not count: a one-GPU pod could
    still use it)."""
    free = {name: list(cap) for name, cap in capacities.items()}
    allocated = 0
    for node, want in placed:
        row = free[node]
        for d, amount in enumerate(want):
            row[d] -= amount
        allocated += want[2]
    measure = StrandedGpus(list(DIMS), likely)
    stranded = sum(measure.of(tuple(row), row != list(capacities[n])) for n, row in free.items())
    total = sum(cap[2] for cap in capacities.values())
    result: JSON = {
        "gpus_allocated": allocated / 1000,
        "gpu_allocation_pct": round(100.0 * allocated / total, 2) if total else 0.0,
        "stranded_gpus": stranded / 1000,
        "nodes_in_use": sum(1 for n, row in free.items() if row != list(capacities[n])),
        "overcommitted_nodes": sum(1 for row in free.values() if min(row) < 0),
    }
    if gang is not None:
        room = {name: fits_in(row, gang) for name, row in free.items()}
        result["gang_pod_room"] = sum(max(0, count) for count in room.values())
        split = [row[2] for name, row in free.items() if room[name] <= 0 and fits_in(capacities[name], gang)]
        result["gpus_free_split"] = sum(max(0, gpus) for gpus in split) / 1000
    return result


def waits(created: Mapping[str, float], bound: Mapping[str, float], gangs: Iterable[str]) -> JSON:
    """Gang wait (a gang's first pod created to its last bound, gangs whole only) p50/p90 and one-pod wait
    (created to bound) p50/p99, in ms; gangs whole, partly bound and not bound at all."""
    gang_set = set(gangs)
    members: dict[str, list[str]] = {}
    single: list[float] = []
    for name, at in created.items():
        job = name.rsplit("-", 1)[0]
        if job in gang_set:
            members.setdefault(job, []).append(name)
        elif name in bound:
            single.append((bound[name] - at) * 1000)
    whole: list[float] = []
    partial = 0
    for pods in members.values():
        done = [name for name in pods if name in bound]
        if len(done) == len(pods):
            whole.append((max(bound[n] for n in pods) - min(created[n] for n in pods)) * 1000)
        elif done:
            partial += 1
    return {
        "gangs": len(members),
        "gangs_whole": len(whole),
        "partial_gangs": partial,
        "gang_wait_ms_p50": round(percentile(whole, 0.50), 1) if whole else None,
        "gang_wait_ms_p90": round(percentile(whole, 0.90), 1) if whole else None,
        "one_pod_wait_ms_p50": round(percentile(single, 0.50), 1) if single else None,
        "one_pod_wait_ms_p99": round(percentile(single, 0.99), 1) if single else None,
    }


class FirstRefusal:
    """The first pod, in creation order, still unbound ``after`` seconds past its creation (pods that fit no
    empty node left out): the moment the cluster began to refuse work."""

    def __init__(self, after: float) -> None:
        self.after = after
        self.order: list[str] = []
        self._next = 0

    def created(self, name: str) -> None:
        self.order.append(name)

    def check(self, created: Mapping[str, float], bound: Mapping[str, float], now: float) -> str | None:
        while self._next < len(self.order) and self.order[self._next] in bound:
            self._next += 1
        if self._next == len(self.order) or (at := created.get(self.order[self._next])) is None:
            return None  # none waiting, or the next one's create still in flight
        return self.order[self._next] if now - at >= self.after else None
