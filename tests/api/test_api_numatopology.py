"""Numatopology (nodeinfo.volcano.sh): Volcano's wire form round-trips; bad cpusets and policies are named."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.nodeinfo import CpusetError, Numatopology, parse_cpuset
from volcano_py.api.validation import validate_object


def _topo(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nodeinfo.volcano.sh/v1alpha1",
        "kind": "Numatopology",
        "metadata": {"name": "node-1"},
        "spec": spec,
    }


VOLCANO_FORM = _topo(
    policies={"CPUManagerPolicy": "static", "TopologyManagerPolicy": "single-numa-node"},
    resReserved={"cpu": "1", "memory": "1Gi"},
    numares={"cpu": {"allocatable": "0-3", "capacity": 4}},
    cpuDetail={
        "0": {"numa": 0, "socket": 0, "core": 0},
        "1": {"numa": 0, "socket": 0, "core": 1},
        "2": {"numa": 1, "socket": 1, "core": 2},
        "3": {"numa": 1, "socket": 1, "core": 3},
    },
    podAllocations=[
        {
            "uid": "u1",
            "name": "p",
            "namespace": "ns",
            "containerAllocations": [{"name": "c", "allocations": {"cpu": "0-1"}}],
        }
    ],
)


def test_volcano_form_round_trips_and_is_valid() -> None:
    topo = Numatopology.model_validate(VOLCANO_FORM)
    assert topo.to_dict() == VOLCANO_FORM
    assert topo.spec.numa_res_map["cpu"].capacity == 4
    assert topo.spec.cpu_detail["2"].numa == 1
    assert validate_object(VOLCANO_FORM) == []


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"policies": {"TopologyPolicy": "x"}},
            "spec.policies.TopologyPolicy: unknown policy "
            "(use one of CPUManagerPolicy, TopologyManagerPolicy)",
            id="unknown-policy-key",
        ),
        pytest.param(
            {"numares": {"cpu": {"allocatable": "0-a"}}},
            "spec.numares.cpu.allocatable: '0-a' is not a cpuset list (write e.g. '0-3,8')",
            id="bad-cpuset",
        ),
        pytest.param(
            {"numares": {"cpu": {"allocatable": "0-1"}}, "cpuDetail": {"0": {"numa": 0}}},
            "spec.numares.cpu.allocatable: CPUs [1] have no spec.cpuDetail entry "
            "(add their numa/socket/core)",
            id="cpu-without-detail",
        ),
        pytest.param(
            {"cpuDetail": {"cpu0": {"numa": 0}}},
            "spec.cpuDetail.cpu0: keys are CPU ids (write e.g. '0')",
            id="cpu-key-not-id",
        ),
    ],
)
def test_problems_name_the_field(spec: dict[str, Any], expected: str) -> None:
    assert [str(p) for p in validate_object(_topo(**spec))] == [expected]


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        ("", set()),
        ("0", {0}),
        ("0-3", {0, 1, 2, 3}),
        ("0-1,8,10-11", {0, 1, 8, 10, 11}),
        (" 2 , 4-5", {2, 4, 5}),
    ],
)
def test_parse_cpuset(text: str, cpus: set[int]) -> None:
    assert parse_cpuset(text) == cpus


@pytest.mark.parametrize("text", ["a", "3-1", "1-", "-1"])
def test_parse_cpuset_refuses(text: str) -> None:
    with pytest.raises(CpusetError):
        parse_cpuset(text)
