"""The openb GPU trace (Alibaba's cluster-trace-gpu-v2023, ``openb_node_list_all_node.csv`` and
``openb_pod_list_default.csv``) as the benchmarks read it, written once: its nodes in file order, its pods in
creation order, the gangs ``openb-gangs`` lays over them (``arrivals``), and the trace drawn to another
cluster size (``stretch``). Pure: the files are read from where they are, never copied.

``arrivals`` is the sequence ``bench_placement``'s ``openb-gangs`` replays offline and ``bench_scale --mode
trace`` creates through the API: every pod a one-pod job, and after every ``GANG_EVERY``-th pod a gang of
2-4 pods (seeded) of ``GANG_POD``, an eight-GPU pod.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

NODE_FILE = "openb_node_list_all_node.csv"
POD_FILE = "openb_pod_list_default.csv"
GANG_EVERY = 40  # a gang after every 40th pod of the trace
GANG_SIZES = (2, 3, 4)
GANG_SEED = 7
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Shape:
    """What one pod asks for: millicores, MiB of memory, milli-GPUs (a share of one card below 1000)."""

    cpu_milli: int
    memory_mib: int
    gpu_milli: int

    @property
    def whole_gpus(self) -> int:
        """GPUs as ``nvidia.com/gpu``, an integer resource: a share of a card rounded up to the card."""
        return -(-self.gpu_milli // 1000)


GANG_POD = Shape(32000, 128 * 1024, 8000)  # 32 cores, 128Gi, 8 GPUs: a whole eight-GPU node's cards


@dataclass(frozen=True, slots=True)
class TraceNode:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str


@dataclass(frozen=True, slots=True)
class Job:
    """``size`` pods of one shape; a gang when ``gang`` (all or none), else a trace pod, a one-pod job."""

    name: str
    size: int
    shape: Shape
    gang: bool


def read_nodes(directory: Path) -> list[TraceNode]:
    with (directory / NODE_FILE).open() as fh:
        return [
            TraceNode(r["sn"], int(r["cpu_milli"]), int(r["memory_mib"]), int(r["gpu"]), r.get("model") or "")
            for r in csv.DictReader(fh)
        ]


def pod_shape(row: dict[str, str]) -> Shape:
    """A trace row's request: ``num_gpu`` cards of ``gpu_milli`` each (a share when ``num_gpu`` is 1)."""
    gpus = int(row["num_gpu"])
    return Shape(int(row["cpu_milli"]), int(row["memory_mib"]), gpus * int(row["gpu_milli"]) if gpus else 0)


def read_pods(directory: Path) -> list[tuple[str, Shape]]:
    """The trace's pods (name, shape), in creation order (the file's order among equal times)."""
    with (directory / POD_FILE).open() as fh:
        rows = sorted(csv.DictReader(fh), key=lambda r: int(r["creation_time"]))
    return [(r["name"], pod_shape(r)) for r in rows]


def arrivals(pods: Sequence[tuple[str, Shape]], gangs: bool, seed: int = GANG_SEED) -> Iterator[Job]:
    """Each pod a one-pod job; with ``gangs``, after every ``GANG_EVERY``-th pod (index ``i``) a gang
    ``gang-<i>`` of 2-4 ``GANG_POD`` pods, its size drawn from ``random.Random(seed)``."""
    rng = random.Random(seed)
    for i, (name, shape) in enumerate(pods):
        yield Job(name, 1, shape, gang=False)
        if gangs and i % GANG_EVERY == GANG_EVERY - 1:
            yield Job(f"gang-{i}", rng.choice(GANG_SIZES), GANG_POD, gang=True)


def stretch(items: Sequence[T], count: int) -> list[T]:
    """``count`` items drawn evenly, in order, from ``items``: item ``i`` is ``items[i * len // count]``.
    Fewer than ``len(items)`` samples every k-th; more repeats each item in place (a node list stretched
    to 5,000 nodes holds each of its 1,523 nodes three or four times, side by side), so the mix of kinds
    along the list, and the order of arrivals along the trace, are kept at any size."""
    if count < 0:
        raise ValueError(f"count={count}: must be >= 0")
    if not items and count:
        raise ValueError("nothing to draw from")
    return [items[i * len(items) // count] for i in range(count)]


def scaled_pod_count(pods: int, trace_nodes: int, nodes: int) -> int:
    """The trace's ``pods`` scaled from its ``trace_nodes`` nodes to ``nodes``, at least one."""
    return max(1, round(pods * nodes / trace_nodes))
