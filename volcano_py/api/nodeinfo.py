"""``nodeinfo.volcano.sh/v1alpha1`` Numatopology: one per node, written by the node agent, read by the
``numa-aware`` plugin. It says which kubelet CPU and topology manager policies the node runs, which CPUs are
allocatable, and which NUMA node (cell) each CPU belongs to, so the scheduler can tell whether a CPU-pinned
pod fits within one cell before the kubelet refuses it with a TopologyAffinityError.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, StrictInt

from volcano_py.api import constants
from volcano_py.api.common import VolcanoModel
from volcano_py.api.kube_names import name_problems
from volcano_py.api.meta import KubeObject
from volcano_py.api.problems import Problem, join_path


class PolicyName(StrEnum):
    CPU_MANAGER = constants.CPU_MANAGER_POLICY
    TOPOLOGY_MANAGER = constants.TOPOLOGY_MANAGER_POLICY


class ResourceInfo(VolcanoModel):
    """A resource on the node: ``allocatable`` as a cpuset-style list (``"0-3,8"``) and its capacity."""

    allocatable: str | None = None
    capacity: StrictInt | None = None


class CPUInfo(VolcanoModel):
    """Where one CPU sits: its NUMA node, socket and core."""

    numa: StrictInt = Field(default=0, ge=0)
    socket: StrictInt = Field(default=0, ge=0)
    core: StrictInt = Field(default=0, ge=0)


class ContainerAllocation(VolcanoModel):
    name: str | None = None
    # Resource name -> what the container holds: a cpuset ("0,2-4") for cpu, a quantity otherwise.
    allocations: dict[str, str] = Field(default_factory=dict)


class PodAllocation(VolcanoModel):
    uid: str | None = None
    name: str | None = None
    namespace: str | None = None
    container_allocations: list[ContainerAllocation] = Field(default_factory=list)


class NumatopoSpec(VolcanoModel):
    # PolicyName -> the kubelet's policy ("static", "single-numa-node", ...).
    policies: dict[str, str] = Field(default_factory=dict)
    res_reserved: dict[str, str] = Field(default_factory=dict)
    # Resource name -> its NUMA info; Volcano spells this field ``numares``.
    numa_res_map: dict[str, ResourceInfo] = Field(default_factory=dict, alias="numares")
    # CPU id (as a string) -> its place in the topology.
    cpu_detail: dict[str, CPUInfo] = Field(default_factory=dict)
    pod_allocations: list[PodAllocation] = Field(default_factory=list)


class Numatopology(KubeObject):
    """A cluster-scoped record of one node's NUMA topology (named after the node)."""

    api_version: str = constants.NODEINFO_API_VERSION
    kind: str = constants.NUMATOPOLOGY_KIND
    spec: NumatopoSpec = Field(default_factory=NumatopoSpec)


class CpusetError(ValueError):
    pass


def parse_cpuset(text: str) -> frozenset[int]:
    """A Linux cpuset list (``"0-3,8,10-11"``) as a set of CPU ids; empty text is the empty set."""
    cpus: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        low, sep, high = part.partition("-")
        try:
            first, last = int(low), int(high) if sep else int(low)
        except ValueError:
            raise CpusetError(f"{text!r} is not a cpuset list (write e.g. '0-3,8')") from None
        if first < 0 or last < first:
            raise CpusetError(f"{text!r}: range {part!r} is empty or negative (write e.g. '0-3')")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def validate_numatopology(topo: Numatopology) -> list[Problem]:
    """Policy names the plugin reads, cpuset lists it can parse, and allocatable CPUs it can place."""
    problems = name_problems(topo.metadata.name, topo.metadata.generate_name)
    spec = topo.spec
    known = [p.value for p in PolicyName]
    for name in spec.policies:
        if name not in known:
            problems.append(
                Problem(
                    join_path("spec", "policies", name), f"unknown policy (use one of {', '.join(known)})"
                )
            )
    for resource, info in spec.numa_res_map.items():
        if info.allocatable is None:
            continue
        here = join_path("spec", "numares", resource, "allocatable")
        try:
            cpus = parse_cpuset(info.allocatable)
        except CpusetError as err:
            problems.append(Problem(here, str(err)))
            continue
        if resource == "cpu" and spec.cpu_detail:
            missing = sorted(c for c in cpus if str(c) not in spec.cpu_detail)
            if missing:
                problems.append(
                    Problem(
                        here, f"CPUs {missing[:8]} have no spec.cpuDetail entry (add their numa/socket/core)"
                    )
                )
    for key in spec.cpu_detail:
        if not key.isdigit():
            problems.append(Problem(join_path("spec", "cpuDetail", key), "keys are CPU ids (write e.g. '0')"))
    return problems
