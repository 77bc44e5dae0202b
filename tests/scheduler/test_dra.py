"""Dynamic Resource Allocation in a session: a pod goes only where its ResourceClaims can be satisfied, and
its bind carries the devices chosen. Each case names the kube-scheduler DRA rule it copies (the
dynamicresources plugin and its structured allocator, Kubernetes 1.34)."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.scheduler.framework.decisions import SessionResult

from .builders import make_node, make_pg, make_pod, make_priority_class, make_queue
from .dra_builders import DRIVER, gpu, gpus, make_claim, make_class, make_slice, request
from .harness import Scenario, check

PLAIN = 'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: gang}, {name: predicates}]'
MEM80 = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0'


def _nodes(*names: str) -> list[dict[str, Any]]:
    return [make_node(n, cpu="32", memory="128Gi").obj() for n in names]


def _pod(name: str, claim: str | None = None, group: str | None = None) -> Any:
    """A pod whose entry ``gpu`` comes from template ``two-gpus``; ``claim``: the claim made for it."""
    return make_pod(name).req(cpu=1).group(group or name).claim_template("gpu", "two-gpus", claim)


def _devices(result: SessionResult, pod: str) -> list[str]:
    bind = next(b for b in result.binds if b.name == pod)
    out = []
    for write in bind.claims:
        assert write.allocation is not None
        out += [r["device"] for r in write.allocation["devices"]["results"]]
    return sorted(out)


def test_pod_goes_to_the_node_whose_slice_has_the_devices() -> None:
    # Filter: a node passes only if the pod's unallocated claims can be allocated from its devices.
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 1), gpus("n2", 2)],
            resource_claims=[make_claim("p-gpu", [request(count=2)], owner_pod="p")],
            conf=PLAIN,
            binds={"p": "n2"},
        )
    )
    (write,) = result.binds[0].claims
    assert (write.namespace, write.name, write.uid) == ("default", "p-gpu", "claim-uid-p-gpu")
    assert write.allocation is not None
    assert write.allocation["devices"]["results"] == [
        {"request": "gpus", "driver": DRIVER, "pool": "n2", "device": f"gpu-{i}"} for i in range(2)
    ]
    terms = write.allocation["nodeSelector"]["nodeSelectorTerms"]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]


def test_a_selector_on_capacity_picks_only_matching_devices() -> None:
    # Device selectors: the class's and the request's CEL expressions must all be true for a device.
    slices = [
        make_slice("n1", [gpu("small-0", memory="40Gi"), gpu("big-0", memory="80Gi")]),
        make_slice("n2", [gpu("big-0"), gpu("big-1", memory="96Gi")]),
    ]
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=slices,
            resource_claims=[make_claim("p-gpu", [request("gpus", 2, MEM80)], owner_pod="p")],
            conf=PLAIN,
            binds={"p": "n2"},
        )
    )
    assert _devices(result, "p") == ["big-0", "big-1"]


def test_devices_held_by_an_allocated_claim_are_not_offered_and_the_claim_is_named() -> None:
    # Allocated devices: a device in any claim's status.allocation is in use.
    other = make_claim("other", allocated=[(DRIVER, "n1", "gpu-0")], node="n1", reserved_for=["x"])
    check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 2)],
            resource_claims=[make_claim("p-gpu", [request(count=2)], owner_pod="p"), other],
            conf=PLAIN,
            bind_count=0,
            explains={
                "p": [
                    "1 node have fewer than 2 free gpu.example.com devices for ResourceClaim default/p-gpu "
                    "(request gpus)"
                ]
            },
        )
    )


@pytest.mark.parametrize(
    ("devices", "bound"),
    [
        pytest.param(3, 0, id="3-devices-hold-one-of-two-pods-so-neither"),
        pytest.param(4, 2, id="4-devices-hold-both"),
    ],
)
@pytest.mark.parametrize("conf", [PLAIN, None], ids=["greedy", "cpsat"])
def test_a_gang_is_placed_only_if_every_members_claims_fit_together(
    devices: int, bound: int, conf: str | None
) -> None:
    pods = [_pod(f"w{i}", f"w{i}-gpu", group="job").obj() for i in range(2)]
    claims = [make_claim(f"w{i}-gpu", [request(count=2)], owner_pod=f"w{i}") for i in range(2)]
    result = check(
        Scenario(
            nodes=_nodes("n1"),
            pods=pods,
            podgroups=[make_pg("job").min(2).obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", devices)],
            resource_claims=claims,
            conf=conf,
            bind_count=bound,
        )
    )
    if bound:
        assert sorted(_devices(result, "w0") + _devices(result, "w1")) == [f"gpu-{i}" for i in range(4)]


def test_cpsat_spreads_a_gang_by_devices_per_node() -> None:
    # 4 pods x 2 devices over 2 nodes x 4 devices: CP-SAT counts devices per node as a resource.
    pods = [_pod(f"w{i}", f"w{i}-gpu", group="job").obj() for i in range(4)]
    claims = [make_claim(f"w{i}-gpu", [request(count=2)], owner_pod=f"w{i}") for i in range(4)]
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=pods,
            podgroups=[make_pg("job").min(4).obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 4), gpus("n2", 4)],
            resource_claims=claims,
            bind_count=4,
        )
    )
    per_node: dict[str, list[str]] = {}
    for bind in result.binds:
        per_node.setdefault(bind.node, []).extend(_devices(result, bind.name))
    assert {n: sorted(d) for n, d in per_node.items()} == {
        "n1": [f"gpu-{i}" for i in range(4)],
        "n2": [f"gpu-{i}" for i in range(4)],
    }


def test_an_allocated_claim_pins_the_pod_to_its_node_and_is_only_reserved() -> None:
    # An allocated claim's nodeSelector limits the pod's nodes; its allocation is kept.
    claim = make_claim("p-gpu", owner_pod="p", allocated=[(DRIVER, "n2", "gpu-0")], node="n2")
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 8), gpus("n2", 1)],
            resource_claims=[claim],
            conf=PLAIN,
            binds={"p": "n2"},
        )
    )
    (write,) = result.binds[0].claims
    assert write.allocation is None


def test_a_shared_claim_puts_its_pods_on_one_node() -> None:
    # A claim referenced by several pods is allocated once; every pod using it goes where it is.
    pods = [make_pod(f"s{i}").req(cpu=1).group("job").claim("gpu", "shared").obj() for i in range(2)]
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=pods,
            podgroups=[make_pg("job").min(2).obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 1), gpus("n2", 1)],
            resource_claims=[make_claim("shared")],
            conf=PLAIN,
            bind_count=2,
        )
    )
    assert len({b.node for b in result.binds}) == 1
    bodies = [b.claims[0].allocation for b in result.binds]
    assert bodies[0] is not None and bodies[0] == bodies[1]


@pytest.mark.parametrize(
    ("pod", "claims", "needle"),
    [
        pytest.param(
            _pod("p"),
            [],
            "waits for the ResourceClaim of spec.resourceClaims[gpu] (template two-gpus) to be created",
            id="claim-not-created-yet",
        ),
        pytest.param(
            make_pod("p").req(cpu=1).group("p").claim("gpu", "absent"),
            [],
            "ResourceClaim default/absent does not exist",
            id="named-claim-missing",
        ),
        pytest.param(
            _pod("p", "p-gpu"),
            [make_claim("p-gpu", owner_pod="someone-else")],
            "ResourceClaim default/p-gpu was not created for the pod",
            id="claim-of-another-pod",
        ),
        pytest.param(
            _pod("p", "p-gpu"),
            [
                make_claim(
                    "p-gpu",
                    [{"name": "gpus", "firstAvailable": [{"name": "a", "deviceClassName": DRIVER}]}],
                    owner_pod="p",
                )
            ],
            "ResourceClaim default/p-gpu spec.devices.requests[0].firstAvailable: (prioritized list) "
            "is not supported by volcano-py; use exactly",
            id="prioritized-list-refused",
        ),
        pytest.param(
            _pod("p", "p-gpu"),
            [make_claim("p-gpu", [request("gpus", 1, "device.attributes[")], owner_pod="p")],
            'Invalid value: "device.attributes[": compilation failed: ERROR: <input>:1:',
            id="selector-does-not-compile",
        ),
        pytest.param(
            _pod("p", "p-gpu"),
            [make_claim("p-gpu", [request("gpus", 1, device_class="nope")], owner_pod="p")],
            "DeviceClass nope of ResourceClaim default/p-gpu (request gpus) does not exist",
            id="class-missing",
        ),
        pytest.param(
            _pod("p", "p-gpu"),
            [make_claim("p-gpu", [request("gpus", 1, 'device.attributes["x"].y == 1')], owner_pod="p")],
            "CEL selector 'device.attributes[\"x\"].y == 1' failed",
            id="selector-fails-at-run-time",
        ),
    ],
)
def test_a_pod_whose_claims_cannot_be_used_waits_with_the_claim_named(
    pod: Any, claims: list[dict[str, Any]], needle: str
) -> None:
    check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[pod.obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 2)],
            resource_claims=claims,
            conf=PLAIN,
            bind_count=0,
            explains={"p": [needle]},
        )
    )


def test_match_attribute_needs_devices_that_agree() -> None:
    # constraints[].matchAttribute: every device of the named requests has the same value.
    claim = make_claim(
        "p-gpu",
        [request("a", 1), request("b", 1)],
        owner_pod="p",
        constraints=[{"requests": ["a", "b"], "matchAttribute": f"{DRIVER}/model"}],
    )
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[
                make_slice("n1", [gpu("g0", model="a100"), gpu("g1", model="h100")]),
                make_slice("n2", [gpu("g0", model="h100"), gpu("g1", model="a100"), gpu("g2", model="h100")]),
            ],
            resource_claims=[claim],
            conf=PLAIN,
            binds={"p": "n2"},
        )
    )
    assert _devices(result, "p") == ["g0", "g2"]


def test_all_mode_takes_every_matching_device_of_the_node() -> None:
    # allocationMode All: all matching devices, and none of them may be held already.
    claim = make_claim("p-gpu", [request("gpus", mode="All")], owner_pod="p")
    held = make_claim("held", allocated=[(DRIVER, "n1", "gpu-0")], node="n1")
    result = check(
        Scenario(
            nodes=_nodes("n1", "n2"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 4), gpus("n2", 3)],
            resource_claims=[claim, held],
            conf=PLAIN,
            binds={"p": "n2"},
        )
    )
    assert _devices(result, "p") == ["gpu-0", "gpu-1", "gpu-2"]


def test_an_incomplete_pool_is_not_offered_and_all_nodes_slices_are() -> None:
    # Pools: only the newest generation of a pool whose resourceSliceCount slices are all published.
    partial = make_slice("n1", [gpu("g0"), gpu("g1")], count=2)
    stale = make_slice(None, [gpu("net-0"), gpu("net-1")], pool="net", all_nodes=True, generation=0, name="a")
    fresh = make_slice(None, [gpu("net-2"), gpu("net-3")], pool="net", all_nodes=True, generation=1, name="b")
    result = check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[partial, stale, fresh],
            resource_claims=[make_claim("p-gpu", [request(count=2)], owner_pod="p")],
            conf=PLAIN,
            binds={"p": "n1"},
        )
    )
    assert _devices(result, "p") == ["net-2", "net-3"]


def test_with_dra_switched_off_a_claiming_pod_is_refused_not_placed_as_if_it_claimed_nothing() -> None:
    conf = (
        'actions: "allocate"\ntiers:\n- plugins: [{name: gang}, {name: predicates, arguments: '
        "{predicate.DynamicResourceAllocationEnable: false}}]"
    )
    check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            resource_claims=[make_claim("p-gpu", owner_pod="p")],
            conf=conf,
            bind_count=0,
            reasons={"p": "DynamicResourceAllocation"},
        )
    )


CAPACITY = (
    'actions: "enqueue, allocate"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: predicates}, {name: capacity}]"
)


def _team_job(i: int, phase: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    pod = _pod(f"j{i}", f"j{i}-gpu").obj()
    # A PodGroup without minResources is admitted unchecked (Volcano's enqueue action).
    pg = make_pg(f"j{i}", phase=phase).queue("team").min_res(cpu=1).obj()
    return pod, pg, make_claim(f"j{i}-gpu", [request(count=2)], owner_pod=f"j{i}")


@pytest.mark.parametrize(
    ("phase", "reason", "needle"),
    [
        pytest.param(
            "Inqueue",
            "NotEnoughResources",
            "queue 'team' deviceclass/gpu.example.com: would hold 6, capability is 4",
            id="allocate-holds-the-third-claim",
        ),
        pytest.param(
            "Pending",
            "NotInqueueable",
            "deviceclass/gpu.example.com",
            id="enqueue-holds-the-third-job",
        ),
    ],
)
def test_a_queue_capped_on_a_device_class_holds_the_claim_beyond_it(
    phase: str, reason: str, needle: str
) -> None:
    # Volcano's capacity.DynamicResourceAllocationEnable: a queue's capability names deviceclass/<class>, and
    # the devices its pods' claims ask for count against it (pkg/scheduler/plugins/capacity/capacity.go).
    jobs = [_team_job(i, phase) for i in range(3)]
    queue = make_queue("team").capability(cpu=100, deviceclass__gpu_example_com=4).obj()
    result = check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[p for p, _, _ in jobs],
            podgroups=[g for _, g, _ in jobs],
            queues=[queue],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 8)],
            resource_claims=[c for _, _, c in jobs],
            conf=CAPACITY,
            bound=["j0", "j1"],
            reasons={"j2": reason},
            explains={"j2": [needle]},
        )
    )
    # As Volcano's queue status: what the queue's claims hold, by DeviceClass.
    (team,) = [u for u in result.queue_updates if u.name == "team"]
    assert team.allocated.to_quantities() == {"cpu": "2", "deviceclass/gpu.example.com": "4"}


def test_a_running_pods_claim_counts_in_its_queue() -> None:
    running = _pod("old", "old-gpu").obj()
    running["spec"]["nodeName"] = "n1"
    running["status"]["phase"] = "Running"
    held = make_claim("old-gpu", [request(count=3)], owner_pod="old", allocated=[(DRIVER, "n1", "gpu-0")])
    pod, pg, claim = _team_job(1, "Inqueue")
    queue = make_queue("team").capability(cpu=100, deviceclass__gpu_example_com=4).obj()
    check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[running, pod],
            podgroups=[make_pg("old").queue("team").obj(), pg],
            queues=[queue],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 8)],
            resource_claims=[held, claim],
            conf=CAPACITY,
            bind_count=0,
            explains={"j1": ["deviceclass/gpu.example.com: would hold 5, capability is 4"]},
        )
    )


PREEMPT = (
    'actions: "enqueue, allocate, preempt"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
    "- plugins: [{name: predicates}]"
)


def _running(name: str, claim: str, prio: int) -> dict[str, Any]:
    pod = _pod(name, claim).priority(prio, "low" if prio < 100 else "high").obj()
    pod["spec"]["nodeName"] = "n1"
    pod["status"]["phase"] = "Running"
    return pod


@pytest.mark.parametrize(
    ("sharers", "evicted"),
    [
        pytest.param(["low"], ["low"], id="victims-claim-frees-its-devices"),
        pytest.param(["low", "keeper"], [], id="a-claim-another-running-pod-shares-is-not-freed"),
    ],
)
def test_preemption_frees_the_devices_of_victims_claims(sharers: list[str], evicted: list[str]) -> None:
    # Preemption with DRA: a victim's devices count as free for the preemptor only when no pod that stays
    # holds its claim (kube-scheduler's preemption re-runs the DRA filter without the victims).
    claim = make_claim(
        "low-gpu", [request(count=2)], allocated=[(DRIVER, "n1", "gpu-0"), (DRIVER, "n1", "gpu-1")],
        node="n1", reserved_for=sharers,
    )  # fmt: skip
    pods = [_running("low", "low-gpu", 1), _pod("high", "high-gpu").priority(1000, "high").obj()]
    groups = [make_pg("low").priority_class("low").obj(), make_pg("high").priority_class("high").obj()]
    if "keeper" in sharers:
        keeper = make_pod("keeper").req(cpu=1).group("keeper").claim("gpu", "low-gpu").priority(1000, "high")
        keeper_pod = keeper.obj()
        keeper_pod["spec"]["nodeName"] = "n1"
        keeper_pod["status"]["phase"] = "Running"
        pods.append(keeper_pod)
        groups.append(make_pg("keeper").priority_class("high").obj())
    result = check(
        Scenario(
            nodes=_nodes("n1"),
            pods=pods,
            podgroups=groups,
            priority_classes=[make_priority_class("low", 1), make_priority_class("high", 1000)],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 2)],
            resource_claims=[claim, make_claim("high-gpu", [request(count=2)], owner_pod="high")],
            conf=PREEMPT,
            bind_count=0,
            pipelined={"high": "n1"} if evicted else {},
        )
    )
    assert [e.name for e in result.evictions] == evicted


def test_reclaim_frees_the_devices_of_the_victims_claim() -> None:
    # Reclaim as preempt: queue b below its deserved share takes back the pod of queue a (over its share)
    # whose claim holds the devices b's pod needs, not a's other pod, which frees only cpu.
    conf = (
        'actions: "enqueue, allocate, reclaim"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n'
        "- plugins: [{name: predicates}, {name: capacity}]"
    )
    queues = []
    for name in ("a", "b"):
        queue = make_queue(name).obj()
        queue["spec"]["deserved"] = {"cpu": "2"}
        queues.append(queue)
    holder = _pod("holder", "holder-gpu").obj()
    other = make_pod("other").req(cpu=2).group("other").obj()
    holder["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    for pod in (holder, other):
        pod["spec"]["nodeName"] = "n1"
        pod["status"]["phase"] = "Running"
    claim = make_claim(
        "holder-gpu", [request(count=2)], allocated=[(DRIVER, "n1", "gpu-0"), (DRIVER, "n1", "gpu-1")],
        node="n1", reserved_for=["holder"],
    )  # fmt: skip
    wanting = _pod("wanting", "wanting-gpu").obj()
    wanting["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2"}}
    result = check(
        Scenario(
            nodes=[make_node("n1", cpu="4", memory="16Gi").obj()],
            pods=[holder, other, wanting],
            podgroups=[
                make_pg("holder").queue("a").obj(),
                make_pg("other").queue("a").obj(),
                make_pg("wanting").queue("b").obj(),
            ],
            queues=queues,
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 2)],
            resource_claims=[claim, make_claim("wanting-gpu", [request(count=2)], owner_pod="wanting")],
            conf=conf,
            bind_count=0,
            pipelined={"wanting": "n1"},
        )
    )
    assert [e.name for e in result.evictions] == ["holder"]


def test_a_claim_shared_by_a_queues_pods_counts_once() -> None:
    # Volcano's claim reference count per queue: two pods of one shared claim of 2 devices fit a cap of 2.
    pods = [make_pod(f"s{i}").req(cpu=1).group("job").claim("gpu", "shared").obj() for i in range(2)]
    queue = make_queue("team").capability(cpu=100, deviceclass__gpu_example_com=2).obj()
    result = check(
        Scenario(
            nodes=_nodes("n1"),
            pods=pods,
            podgroups=[make_pg("job").min(2).queue("team").min_res(cpu=2).obj()],
            queues=[queue],
            device_classes=[make_class()],
            resource_slices=[gpus("n1", 4)],
            resource_claims=[make_claim("shared", [request(count=2)])],
            conf=CAPACITY,
            bind_count=2,
        )
    )
    (team,) = [u for u in result.queue_updates if u.name == "team"]
    assert team.allocated.to_quantities()["deviceclass/gpu.example.com"] == "2"


def test_a_selector_no_device_meets_is_named_in_the_reason() -> None:
    # The class has the devices; the request's selector is what no node meets, so the reason quotes it.
    check(
        Scenario(
            nodes=_nodes("n1"),
            pods=[_pod("p", "p-gpu").obj()],
            podgroups=[make_pg("p").obj()],
            device_classes=[make_class()],
            resource_slices=[make_slice("n1", [gpu("g0", memory="40Gi"), gpu("g1", memory="40Gi")])],
            resource_claims=[make_claim("p-gpu", [request("gpus", 2, MEM80)], owner_pod="p")],
            conf=PLAIN,
            bind_count=0,
            explains={
                "p": [
                    "1 node have fewer than 2 free gpu.example.com devices for ResourceClaim default/p-gpu "
                    f"(request gpus) that match {MEM80}"
                ]
            },
        )
    )
