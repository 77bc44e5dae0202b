"""deviceshare: shared GPUs placed per card, the chosen card written on the pod, refusals explained."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api import constants as k
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.arguments import ConfError
from volcano_py.scheduler.framework.devices import (
    DeviceKind,
    decode_vgpu,
    device_request,
    gpushare_cards,
    vgpu_cards,
)

from .builders import make_node, make_pg, make_pod
from .harness import Scenario, check, run

MEM, NUM = k.GPU_MEMORY_RESOURCE, k.GPU_NUMBER_RESOURCE
VNUM, VMEM, VCORES, VPCT = (
    k.VGPU_NUMBER_RESOURCE,
    k.VGPU_MEMORY_RESOURCE,
    k.VGPU_CORES_RESOURCE,
    k.VGPU_MEMORY_PERCENTAGE_RESOURCE,
)


def _conf(**args: Any) -> str:
    arguments = ", ".join(f"deviceshare.{key}: {value}" for key, value in args.items())
    return (
        'actions: "allocate"\ntiers:\n- plugins: [{name: gang}, {name: predicates}, '
        f"{{name: deviceshare, arguments: {{{arguments}}}}}]"
    )


SHARE = _conf(GPUSharingEnable="true", GPUNumberEnable="true")


def share_node(name: str, cards: int = 4, per_card: int = 16000) -> Any:
    return make_node(name, cpu="32", memory="128Gi").cap(
        cpu="32", memory="128Gi", pods=110, **{MEM: cards * per_card, NUM: cards}
    )


def share_pod(name: str, memory: int = 0, number: int = 0) -> Any:
    limits = {MEM: memory} if memory else {NUM: number}
    return make_pod(name).req(cpu=1).limits(**limits).group(name)


def _index(result: Any) -> dict[str, str]:
    return {b.name: b.annotations.get(k.GPU_INDEX_KEY, "") for b in result.binds}


def test_two_pods_of_40_percent_share_a_card_and_a_third_takes_the_next() -> None:
    pods = [share_pod(f"p{i}", memory=6400).obj() for i in range(3)]
    result = check(
        Scenario(
            nodes=[share_node("n1").obj()],
            pods=pods,
            podgroups=[make_pg(f"p{i}").obj() for i in range(3)],
            conf=SHARE,
            bind_count=3,
        )
    )
    assert _index(result) == {"p0": "0", "p1": "0", "p2": "1"}
    assert all(k.PREDICATE_TIME_KEY in b.annotations for b in result.binds)


def test_cards_held_by_running_pods_count() -> None:
    running = share_pod("old", memory=12000).running("n1").annotate(k.GPU_INDEX_KEY, "0").obj()
    result = check(
        Scenario(
            nodes=[share_node("n1", cards=2).obj()],
            pods=[running, share_pod("new", memory=6000).obj()],
            podgroups=[make_pg("old").obj(), make_pg("new").obj()],
            conf=SHARE,
            binds={"new": "n1"},
        )
    )
    assert _index(result) == {"new": "1"}


def test_unhealthy_cards_are_skipped() -> None:
    node = share_node("n1", cards=2).annotate(k.GPU_UNHEALTHY_IDS_KEY, "0").obj()
    result = check(
        Scenario(
            nodes=[node], pods=[share_pod("p", memory=1000).obj()], podgroups=[make_pg("p").obj()], conf=SHARE
        )
    )
    assert _index(result) == {"p": "1"}


def test_per_card_fit_refuses_what_the_node_total_would_allow() -> None:
    # 2 x 16000 MiB: the node has 32000 free in total, but no single card has 20000.
    check(
        Scenario(
            nodes=[share_node("n1", cards=2).obj()],
            pods=[share_pod("big", memory=12000).obj(), share_pod("big2", memory=12000).obj(),
                  share_pod("big3", memory=12000).obj()],
            podgroups=[make_pg("big").obj(), make_pg("big2").obj(), make_pg("big3").obj()],
            conf=SHARE,
            bound=["big", "big2"],
            explains={"big3": [f"have no GPU with 12000 MiB of {MEM} free"]},
        )
    )  # fmt: skip


def test_more_memory_than_any_card_is_explained_with_the_largest_card() -> None:
    check(
        Scenario(
            nodes=[share_node("n1", cards=4, per_card=16000).obj()],
            pods=[share_pod("huge", memory=20000).obj()],
            podgroups=[make_pg("huge").obj()],
            conf=SHARE,
            bind_count=0,
            explains={"huge": ["the largest GPU in the cluster has 16000 MiB"]},
        )
    )


def test_gpu_number_takes_idle_cards_only() -> None:
    sharing = share_pod("s", memory=1000).running("n1").annotate(k.GPU_INDEX_KEY, "0").obj()
    result = check(
        Scenario(
            nodes=[share_node("n1", cards=3).obj()],
            pods=[sharing, share_pod("whole", number=2).obj(), share_pod("more", number=1).obj()],
            podgroups=[make_pg(n).obj() for n in ("s", "whole", "more")],
            conf=SHARE,
            bound=["whole"],
            explains={"more": ["have fewer than 1 idle GPUs"]},
        )
    )
    assert _index(result) == {"whole": "1,2"}


def test_without_the_plugin_the_cards_are_not_checked() -> None:
    conf = 'actions: "allocate"\ntiers:\n- plugins: [{name: gang}, {name: predicates}]'
    result = run(
        Scenario(
            nodes=[share_node("n1", cards=2).obj()],
            pods=[share_pod(f"p{i}", memory=12000).obj() for i in range(2)],
            podgroups=[make_pg(f"p{i}").obj() for i in range(2)],
            conf=conf,
        )
    )
    assert len(result.binds) == 2 and all(not b.annotations for b in result.binds)


# --- vGPU -------------------------------------------------------------------------------------------------


def vgpu_node(name: str, cards: int = 2, split: int = 4, memory: int = 16000) -> Any:
    register = ":".join(f"GPU-{name}-{i},{split},{memory},NVIDIA-A100,true,hami-core" for i in range(cards))
    return (
        make_node(name, cpu="32", memory="128Gi")
        .cap(
            cpu="32", memory="128Gi", pods=110,
            **{VNUM: cards * split, VMEM: cards * memory, VCORES: cards * 100},
        )
        .annotate(k.VGPU_NODE_REGISTER_KEY, register)
    )  # fmt: skip


def vgpu_pod(name: str, memory: int = 0, cores: int = 0, number: int = 1, percent: int = 0) -> Any:
    limits: dict[str, int] = {VNUM: number}
    if memory:
        limits[VMEM] = memory
    if cores:
        limits[VCORES] = cores
    if percent:
        limits[VPCT] = percent
    return make_pod(name).req(cpu=1).limits(**limits).group(name)


def _cards(result: Any) -> dict[str, list[str]]:
    return {
        b.name: [u for u, _, _ in decode_vgpu(b.annotations.get(k.VGPU_IDS_KEY, ""))] for b in result.binds
    }


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        pytest.param("binpack", {"a": ["GPU-n1-0"], "b": ["GPU-n1-0"], "c": ["GPU-n1-0"]}, id="binpack"),
        pytest.param("spread", {"a": ["GPU-n1-0"], "b": ["GPU-n1-1"], "c": ["GPU-n1-0"]}, id="spread"),
    ],
)
def test_vgpu_schedule_policy_picks_cards(policy: str, expected: dict[str, list[str]]) -> None:
    result = check(
        Scenario(
            nodes=[vgpu_node("n1").obj()],
            pods=[vgpu_pod(n, memory=4000).obj() for n in "abc"],
            podgroups=[make_pg(n).obj() for n in "abc"],
            conf=_conf(VGPUEnable="true", SchedulePolicy=policy),
            bind_count=3,
        )
    )
    assert _cards(result) == expected
    bind = result.binds[0]
    assert bind.annotations[k.VGPU_NODE_KEY] == "n1"
    assert bind.annotations[k.VGPU_BIND_PHASE_KEY] == "allocating"
    assert bind.annotations[k.VGPU_DEVICES_TO_ALLOCATE_KEY] == bind.annotations[k.VGPU_IDS_KEY]


def test_vgpu_limits_memory_cores_and_split_are_respected() -> None:
    # One card, split 2: 60% cores twice do not fit; the split limits sharers; memory per card too.
    pods = [
        vgpu_pod("c1", memory=1000, cores=60).obj(),
        vgpu_pod("c2", memory=1000, cores=60).obj(),
        vgpu_pod("m1", memory=15001).obj(),
    ]
    check(
        Scenario(
            nodes=[vgpu_node("n1", cards=1, split=2).obj()],
            pods=pods,
            podgroups=[make_pg(n).obj() for n in ("c1", "c2", "m1")],
            conf=_conf(VGPUEnable="true", SchedulePolicy="binpack"),
            bound=["c1"],
            explains={
                "c2": ["no GPUs with enough free vGPU memory, cores or share slots"],
                "m1": ["no GPUs with enough free vGPU memory, cores or share slots"],
            },
        )
    )


def test_vgpu_split_count_limits_sharers() -> None:
    check(
        Scenario(
            nodes=[vgpu_node("n1", cards=1, split=2).obj()],
            pods=[vgpu_pod(n, memory=100).obj() for n in "abc"],
            podgroups=[make_pg(n).obj() for n in "abc"],
            conf=_conf(VGPUEnable="true"),
            bound=["a", "b"],
        )
    )


def test_vgpu_percentage_is_a_share_of_the_card_not_node_capacity() -> None:
    result = check(
        Scenario(
            nodes=[vgpu_node("n1", cards=1, memory=20000).obj()],
            pods=[vgpu_pod("half", percent=50).obj()],
            podgroups=[make_pg("half").obj()],
            conf=_conf(VGPUEnable="true"),
            bound=["half"],
        )
    )
    assert result.binds[0].annotations[k.VGPU_IDS_KEY] == "GPU-n1-0,NVIDIA,10000,0:"


def test_vgpu_pods_need_a_registered_node() -> None:
    check(
        Scenario(
            nodes=[share_node("n1").obj()],
            pods=[vgpu_pod("v", memory=1000).obj()],
            podgroups=[make_pg("v").obj()],
            conf=_conf(VGPUEnable="true"),
            bind_count=0,
            explains={"v": ["1 node report no hamivgpu GPUs"]},
        )
    )


# --- pure parts -------------------------------------------------------------------------------------------


def test_node_parsing() -> None:
    share = gpushare_cards(Resource.parse({MEM: "32000", NUM: "2"}), {k.GPU_UNHEALTHY_IDS_KEY: "1,x"})
    assert share is not None and share.kind is DeviceKind.GPUSHARE
    assert [(c.index, c.memory) for c in share.cards.values()] == [(0, 16000)]
    register = "GPU-a,10,24000,NVIDIA-A10,true,hami-core:GPU-b,10,24000,NVIDIA-A10,false,hami-core:"
    vgpu = vgpu_cards(
        Resource.parse({VNUM: "20", VMEM: "48000", VCORES: "200"}), {k.VGPU_NODE_REGISTER_KEY: register}
    )
    assert vgpu is not None and [(c.uuid, c.split, c.memory) for c in vgpu.cards.values()] == [
        ("GPU-a", 10, 24000)
    ]
    assert vgpu_cards(Resource.parse({VNUM: "0"}), {k.VGPU_NODE_REGISTER_KEY: register}) is None


def test_pod_request_sums_containers_and_reads_percentage_default() -> None:
    pod = make_pod("p").limits(**{MEM: 1000}).obj()
    pod["spec"]["containers"].append({"name": "b", "resources": {"limits": {MEM: "500", VNUM: "2"}}})
    request = device_request(pod)
    assert request.memory == 1500
    assert [(a.number, a.percentage) for a in request.vgpu] == [(2, 100)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"NodeLockEnable": "true"}, "deviceshare.NodeLockEnable is not supported", id="node-lock"
        ),
        pytest.param(
            {"VGPUEnable": "true", "GPUSharingEnable": "true"}, "cannot be combined", id="vgpu-and-share"
        ),
        pytest.param({"SchedulePolicy": "pack"}, "must be binpack or spread, got 'pack'", id="policy"),
        pytest.param({"ScheduleWeight": "-1"}, "deviceshare.ScheduleWeight", id="weight"),
    ],
)
def test_bad_arguments_are_refused_at_load(args: dict[str, str], message: str) -> None:
    with pytest.raises(ConfError, match=message):
        run(Scenario(nodes=[share_node("n1").obj()], conf=_conf(**args)))


# --- the cpsat placer counts cards, not node totals ---------------------------------------------------------

CPSAT = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins:
  - name: predicates
  - name: deviceshare
    arguments: {deviceshare.GPUSharingEnable: true}
  - name: binpack
  - name: cpsat
    arguments: {cpsat.timeBudgetMs: 5000}
"""


def _crowded(name: str) -> list[Any]:
    # Every card of this node has 6000 MiB free: 24000 in total, room for three 8000 MiB pods by the
    # node's numbers, for none by its cards.
    return [
        share_pod(f"{name}-old{i}", memory=10000).running(name).annotate(k.GPU_INDEX_KEY, str(i)).obj()
        for i in range(4)
    ]


@pytest.mark.parametrize("conf", [pytest.param(CPSAT, id="cpsat"), pytest.param(SHARE, id="greedy")])
def test_a_gang_of_eight_half_gpu_pods_packs_onto_four_cards(conf: str) -> None:
    gang = [make_pod(f"w{i}").req(cpu=1).limits(**{MEM: 8000}).group("gang").obj() for i in range(8)]
    result = check(
        Scenario(
            nodes=[share_node("crowded").obj(), share_node("idle").obj()],
            pods=[*_crowded("crowded"), *gang],
            podgroups=[
                make_pg("gang", min_member=8).obj(),
                *(make_pg(f"crowded-old{i}").obj() for i in range(4)),
            ],
            conf=conf,
            bind_count=8,
        )
    )
    assert {b.node for b in result.binds} == {"idle"}
    assert sorted(_index(result).values()) == ["0", "0", "1", "1", "2", "2", "3", "3"]


def test_cpsat_leaves_a_gang_that_no_cards_can_hold_pending() -> None:
    gang = [make_pod(f"w{i}").req(cpu=1).limits(**{MEM: 8000}).group("gang").obj() for i in range(3)]
    check(
        Scenario(
            nodes=[share_node("crowded").obj()],
            pods=[*_crowded("crowded"), *gang],
            podgroups=[
                make_pg("gang", min_member=3).obj(),
                *(make_pg(f"crowded-old{i}").obj() for i in range(4)),
            ],
            conf=CPSAT,
            bind_count=0,
            explains={"gang": [f"have no GPU with 8000 MiB of {MEM} free"]},
        )
    )


def test_cpsat_uses_exactly_the_card_room_when_totals_say_more() -> None:
    # crowded: one card with 8000 MiB free, three with 6000 (26000 in total: three pods by the numbers, one
    # by the cards); small: two idle cards (four pods). Five pods fit only as one + four.
    used = [8000, 10000, 10000, 10000]
    old = [
        share_pod(f"old{i}", memory=m).running("crowded").annotate(k.GPU_INDEX_KEY, str(i)).obj()
        for i, m in enumerate(used)
    ]
    gang = [make_pod(f"w{i}").req(cpu=1).limits(**{MEM: 8000}).group("gang").obj() for i in range(5)]
    result = check(
        Scenario(
            nodes=[share_node("crowded").obj(), share_node("small", cards=2).obj()],
            pods=[*old, *gang],
            podgroups=[make_pg("gang", min_member=5).obj(), *(make_pg(f"old{i}").obj() for i in range(4))],
            conf=CPSAT,
            bind_count=5,
        )
    )
    placed = sorted((b.node, b.annotations[k.GPU_INDEX_KEY]) for b in result.binds)
    assert placed == [("crowded", "0"), ("small", "0"), ("small", "0"), ("small", "1"), ("small", "1")]
