"""When a scale point does not fit: the stop rules, pure so they are tested without a cluster.

A point is skipped, and the run stops with the reason in its JSON, when the machine's memory in use is above
the limit before the point starts or while its objects are created, or when creating them does not finish
within the deadline: a larger point would not fit either.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Memory:
    total_mib: float
    available_mib: float

    @property
    def used_fraction(self) -> float:
        return 1.0 - self.available_mib / self.total_mib if self.total_mib else 0.0


def parse_meminfo(text: str) -> Memory:
    """MemTotal and MemAvailable of a /proc/meminfo text (kB there), in MiB."""
    fields: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable") and rest.split():
            fields[key] = int(rest.split()[0]) / 1024
    if "MemTotal" not in fields or "MemAvailable" not in fields:
        raise ValueError("/proc/meminfo has no MemTotal or MemAvailable line")
    return Memory(fields["MemTotal"], fields["MemAvailable"])


def memory_stop(memory: Memory, max_used_fraction: float) -> str | None:
    """The reason to stop when more than ``max_used_fraction`` of the machine's memory is in use."""
    if memory.used_fraction <= max_used_fraction:
        return None
    return (
        f"the machine's memory is {memory.used_fraction:.0%} used ({memory.available_mib / 1024:.1f} GiB "
        f"available of {memory.total_mib / 1024:.1f} GiB), above --max-memory-used {max_used_fraction:.0%}"
    )


def deadline_stop(what: str, done: int, wanted: int, elapsed: float, deadline: float) -> str | None:
    """The reason to stop when fewer than ``wanted`` of ``what`` are done after ``deadline`` seconds."""
    if done >= wanted or elapsed < deadline:
        return None
    return f"only {done:,} of {wanted:,} {what} within the {deadline:.0f} s deadline"


def scale_points(nodes: list[int], pods: list[int]) -> list[tuple[int, int]]:
    """The (nodes, pods) points of ``--nodes`` and ``--pods``: paired in order when both lists are as long,
    a single value paired with each of the other list's; smallest first is up to the caller."""
    if any(n < 1 for n in nodes) or any(p < 1 for p in pods):
        raise ValueError(f"--nodes and --pods must be positive, got {nodes} and {pods}")
    if len(nodes) == len(pods):
        return list(zip(nodes, pods, strict=True))
    if len(nodes) == 1:
        return [(nodes[0], p) for p in pods]
    if len(pods) == 1:
        return [(n, pods[0]) for n in nodes]
    raise ValueError(
        f"--nodes has {len(nodes)} values and --pods {len(pods)}: give both the same number of values "
        "(paired in order) or one of them a single value"
    )
