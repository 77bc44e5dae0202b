"""Volcano's gang eviction suite (``test/e2e/gangevict``) as session scenarios, one per spec.

Each case is the cluster a spec builds once its victims run: four nodes with 1 CPU and 1 GiB free each (the
suite's placeholders fill the rest), the suite's scheduler conf (``gangreclaim`` and ``gangpreempt`` with
``capacity`` in tier 1), and the preemptor or reclaimer pending. One session decides; the case states what a
user would see: which pods go and which are nominated to the room they free. The rules pinned: a victim
gang keeps its ``minAvailable`` and every role's ``minTaskMember`` when it gives single pods (surplus first),
a gang is taken whole or not at all, the fewest gangs are broken, and neither crosses a queue it may not.
The topology and sub-group specs (GP-T*, GR-T*, GP-S1, GR-S1) run on the suite's four 8-CPU kwok nodes in
two tier-1 HyperNodes under one of tier 2, with nothing else free: a hard tier-1 gang lands inside one
tier-1 domain or not at all, a tier-2 gang takes a tier-1 domain when one suffices, and a victim with two
sub-groups and ``minSubGroups: 1`` loses pods of one sub-group only.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.scheduler.evict_harness import Cluster

GANGEVICT_CONF = """
actions: "allocate, backfill, gangreclaim, gangpreempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
  - name: capacity
    enableHierarchy: false
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""

NODES = ("n0", "n1", "n2", "n3")
PS_AND_WORKERS = (("ps", 1, 1), ("worker", 3, 2))


def deserved(cpu: int) -> dict[str, str]:
    return {"cpu": str(cpu), "memory": f"{cpu}Gi"}


def cluster(**queues: int) -> Cluster:
    c = Cluster().nodes_named("n", 4, cpu=1, memory="1Gi")
    for name, cpu in queues.items():
        c.queue(name, deserved=deserved(cpu))
    return c


def gang(
    c: Cluster, name: str, queue: str, priority: str, on: tuple[str, ...], minimum: int, **kw: object
) -> Cluster:
    return c.job(name, queue=queue, priority=priority, memory="1Gi", running_on=on, min_member=minimum, **kw)  # type: ignore[arg-type]


def want(c: Cluster, name: str, queue: str, priority: str, pods: int, created: int = 5) -> Cluster:
    return c.job(name, queue=queue, priority=priority, memory="1Gi", pending=pods, created=created)


Case = Callable[[], Cluster]
TIER1 = {"s0": ("k0", "k1"), "s1": ("k2", "k3")}
KWOK = ("k0", "k1", "k2", "k3")


def topo_cluster(**queues: int) -> Cluster:
    c = Cluster().nodes_named("k", 4, cpu=8, memory="8Gi")
    for name, cpu in queues.items():
        c.queue(name, deserved=deserved(cpu))

    def hypernode(name: str, tier: int, kind: str, members: tuple[str, ...]) -> None:
        c.hypernodes.append(
            {
                "apiVersion": "topology.volcano.sh/v1alpha1",
                "kind": "HyperNode",
                "metadata": {"name": name},
                "spec": {
                    "tier": tier,
                    "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}} for m in members],
                },
            }
        )

    for name, members in TIER1.items():
        hypernode(name, 1, "Node", members)
    hypernode("s2", 2, "HyperNode", tuple(TIER1))
    return c


def hard(c: Cluster, tier: int) -> Cluster:
    c.podgroups[-1]["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    return c


def topo_gang(c: Cluster, name: str, queue: str, priority: str, minimum: int, **kw: object) -> Cluster:
    """The victim: four 1-CPU pods, one per kwok node, hard tier 2."""
    return hard(gang(c, name, queue, priority, KWOK, minimum, **kw), 2)


def topo_want(
    c: Cluster, name: str, queue: str, priority: str, pods: int, tier: int, cpu: str = "1"
) -> Cluster:
    c.job(name, queue=queue, priority=priority, cpu=cpu, memory="1Gi", pending=pods, created=5)
    return hard(c, tier)


def in_two_sub_groups(c: Cluster) -> Cluster:
    """The victim as the Job controller writes a partitionPolicy of 2 partitions of 2, minPartitions 1."""
    c.podgroups[-1]["spec"]["subGroupPolicy"] = [
        {
            "name": "default0",
            "subGroupSize": 2,
            "minSubGroups": 1,
            "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "default0"}},
            "matchLabelKeys": ["volcano.sh/partition-id"],
        }
    ]
    victim = c.podgroups[-1]["metadata"]["name"]
    for pod in c.pods:
        name = pod["metadata"]["name"]
        if name.startswith(f"{victim}-"):
            index = int(name.rsplit("-", 1)[1])
            pod["metadata"]["labels"].update(
                {"volcano.sh/task-spec": "default0", "volcano.sh/partition-id": str(index // 2)}
            )
    return c


CASES = [
    pytest.param(
        lambda: want(gang(cluster(q=4), "v", "q", "low", NODES, 2), "p", "q", "high", 2),
        {"survivors": {"v": 2}, "placed": 2},
        id="GP-1-safe-bundle-surplus-evicted-victim-survives",
    ),
    pytest.param(
        lambda: want(
            gang(gang(cluster(q=4), "a", "q", "low", NODES[:2], 1), "b", "q", "low", NODES[2:], 1, created=1),
            "p",
            "q",
            "high",
            2,
        ),
        {"survivors": {"a": 1, "b": 1}, "placed": 2},
        id="GP-2-safe-bundles-across-gangs-none-broken",
    ),
    pytest.param(
        lambda: want(
            gang(gang(cluster(q=4), "a", "q", "low", NODES[:2], 2), "b", "q", "low", NODES[2:], 2, created=1),
            "p",
            "q",
            "high",
            2,
        ),
        {"one_broken": ("a", "b"), "placed": 2},
        id="GP-3-whole-bundle-breaks-exactly-one-gang",
    ),
    pytest.param(
        lambda: want(
            gang(gang(cluster(q=4), "a", "q", "low", NODES[:2], 2), "b", "q", "low", NODES[2:], 2, created=1),
            "p",
            "q",
            "high",
            4,
        ),
        {"survivors": {"a": 0, "b": 0}, "placed": 4},
        id="GP-4-large-preemptor-breaks-both-gangs",
    ),
    pytest.param(
        lambda: want(gang(cluster(q=4), "v", "q", "low", NODES, 4), "p", "q", "high", 2),
        {"survivors": {"v": 0}, "placed": 2},
        id="GP-5-basic-gang-preemption",
    ),
    pytest.param(
        lambda: want(
            gang(
                cluster(q1=2).queue("q2", deserved=deserved(2), reclaimable=False), "v", "q2", "low", NODES, 4
            ),
            "p",
            "q1",
            "high",
            2,
        ),
        {"survivors": {"v": 4}, "placed": 0},
        id="GP-6-no-preemption-across-queues",
    ),
    pytest.param(
        lambda: want(gang(cluster(q=4), "v", "q", "mid", NODES, 4), "p", "q", "mid", 2),
        {"survivors": {"v": 4}, "placed": 0},
        id="GP-7-equal-priority-not-preempted",
    ),
    pytest.param(
        lambda: want(
            gang(
                gang(cluster(q=4), "a", "q", "high", NODES[:2], 2), "b", "q", "low", NODES[2:], 2, created=1
            ),
            "p",
            "q",
            "mid",
            4,
        ),
        {"survivors": {"a": 2, "b": 2}, "placed": 0},
        id="GP-8-medium-preemptor-cannot-evict-high-priority",
    ),
    pytest.param(
        lambda: want(
            gang(cluster(q=4), "v", "q", "low", NODES, 3, roles=PS_AND_WORKERS), "p", "q", "high", 1
        ),
        {"survivors": {"v": 3}, "roles": {"v-0": "ps"}, "placed": 1},
        id="GP-R1-role-tight-ps-survives",
    ),
    pytest.param(
        lambda: want(gang(cluster(q1=2, q2=2), "v", "q2", "low", NODES, 2), "r", "q1", "low", 2),
        {"survivors": {"v": 2}, "placed": 2},
        id="GR-1-safe-bundle-reclaim-victim-survives",
    ),
    pytest.param(
        lambda: want(
            gang(
                gang(cluster(q1=2, q2=2), "a", "q2", "low", NODES[:2], 2),
                "b",
                "q2",
                "low",
                NODES[2:],
                2,
                created=1,
            ),
            "r",
            "q1",
            "low",
            2,
        ),
        {"one_broken": ("a", "b"), "placed": 2},
        id="GR-2-whole-bundle-reclaim-breaks-exactly-one-gang",
    ),
    pytest.param(
        lambda: want(gang(cluster(q1=2, q2=2), "v", "q2", "low", NODES, 2), "r", "q1", "low", 2),
        {"placed": 2},
        id="GR-3-basic-reclaim-from-overusing-queue",
    ),
    pytest.param(
        lambda: want(
            gang(
                gang(cluster(q1=2, q2=2, q3=2), "a", "q2", "low", NODES[:2], 2),
                "b",
                "q3",
                "low",
                NODES[2:],
                2,
            ),
            "r",
            "q1",
            "low",
            2,
        ),
        {"survivors": {"a": 2, "b": 2}, "placed": 0},
        id="GR-4-no-reclaim-from-queues-within-deserved",
    ),
    pytest.param(
        lambda: want(
            gang(
                cluster(q1=2).queue("q2", deserved=deserved(2), reclaimable=False), "v", "q2", "low", NODES, 2
            ),
            "r",
            "q1",
            "low",
            2,
        ),
        {"survivors": {"v": 4}, "placed": 0},
        id="GR-5-victim-queue-not-reclaimable",
    ),
    pytest.param(
        lambda: want(
            gang(
                cluster(q1=4).queue("q2", deserved=deserved(2), guarantee=deserved(2)),
                "v",
                "q2",
                "low",
                NODES,
                2,
            ),
            "r",
            "q1",
            "low",
            4,
        ),
        {"survivors": {"v": 4}, "placed": 0},
        id="GR-6-reclaim-stops-at-guarantee",
    ),
    pytest.param(
        lambda: want(
            gang(gang(cluster(q1=1, q2=3), "j1", "q1", "low", NODES[:2], 2), "j2", "q2", "low", NODES[2:], 2),
            "r",
            "q1",
            "low",
            2,
        ),
        {"survivors": {"j1": 2, "j2": 2}, "placed": 0},
        id="GR-7-overused-queue-is-no-reclaimer",
    ),
    pytest.param(
        lambda: want(
            gang(cluster(q1=1, q2=3), "v", "q2", "low", NODES, 3, roles=PS_AND_WORKERS), "r", "q1", "low", 1
        ),
        {"survivors": {"v": 3}, "roles": {"v-0": "ps"}, "placed": 1},
        id="GR-R1-role-tight-ps-survives",
    ),
]


CASES += [
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q=4), "v", "q", "low", 2), "p", "q", "high", 2, 1),
        {"survivors": {"v": 4}, "placed": 2, "domain": 1},
        id="GP-T1-hard-tier-1-within-one-domain",
    ),
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q=16), "v", "q", "low", 4), "p", "q", "high", 3, 1, cpu="5"),
        {"survivors": {"v": 4}, "placed": 0},
        id="GP-T2-hard-tier-1-domain-too-small",
    ),
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q=4), "v", "q", "low", 2), "p", "q", "high", 3, 2),
        {"placed": 3},
        id="GP-T3-hard-tier-2-wider-domain",
    ),
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q=4), "v", "q", "low", 2), "p", "q", "high", 2, 2),
        {"survivors": {"v": 4}, "placed": 2, "domain": 1},
        id="GP-T4-tier-2-allowed-tier-1-domain-chosen",
    ),
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q1=2, q2=2), "v", "q2", "low", 2), "r", "q1", "low", 2, 1),
        {"survivors": {"v": 4}, "placed": 2, "domain": 1},
        id="GR-T1-hard-tier-1-within-one-domain",
    ),
    pytest.param(
        lambda: topo_want(
            topo_gang(topo_cluster(q1=16, q2=16), "v", "q2", "low", 4), "r", "q1", "low", 3, 1, cpu="5"
        ),
        {"survivors": {"v": 4}, "placed": 0},
        id="GR-T2-hard-tier-1-domain-too-small",
    ),
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q1=2, q2=2), "v", "q2", "low", 2), "r", "q1", "low", 3, 2),
        {"placed": 3},
        id="GR-T3-hard-tier-2-wider-domain",
    ),
    pytest.param(
        lambda: topo_want(topo_gang(topo_cluster(q1=2, q2=2), "v", "q2", "low", 2), "r", "q1", "low", 2, 2),
        {"survivors": {"v": 4}, "placed": 2, "domain": 1},
        id="GR-T4-tier-2-allowed-tier-1-domain-chosen",
    ),
]


def full_kwok_cluster(**queues: int) -> Cluster:
    """The sub-group specs' cluster once their victim runs: 1 CPU and 1 GiB free on each kwok node."""
    c = topo_cluster(**queues)
    for node in c.nodes:
        node["status"]["allocatable"].update({"cpu": "1", "memory": "1Gi"})
    return c


CASES += [
    pytest.param(
        lambda: topo_want(
            in_two_sub_groups(topo_gang(full_kwok_cluster(q=4), "v", "q", "low", 2)), "p", "q", "high", 2, 2
        ),
        {"survivors": {"v": 2}, "placed": 2, "sub_group_kept": "v"},
        id="GP-S1-sub-group-slack-one-sub-group-kept",
    ),
    pytest.param(
        lambda: topo_want(
            in_two_sub_groups(topo_gang(full_kwok_cluster(q1=2, q2=2), "v", "q2", "low", 2)),
            "r",
            "q1",
            "low",
            2,
            2,
        ),
        {"survivors": {"v": 2}, "placed": 2, "sub_group_kept": "v"},
        id="GR-S1-sub-group-slack-one-sub-group-kept",
    ),
]


@pytest.mark.parametrize(("build", "expect"), CASES)
def test_gang_eviction(build: Case, expect: dict[str, object]) -> None:
    c = build()
    outcome = c.run(GANGEVICT_CONF)
    gone = outcome.evicted
    placed = {**{b.name: b.node for b in outcome.result.binds}, **outcome.nominated}
    assert len([n for n in placed if n.startswith(("p-", "r-"))]) == expect["placed"], (gone, placed)

    def left(job: str) -> int:
        return sum(1 for p in c.pods if p["metadata"]["name"].startswith(f"{job}-")
                   and p["spec"].get("nodeName") and p["metadata"]["name"] not in gone)  # fmt: skip

    for job, count in dict(expect.get("survivors", {})).items():  # type: ignore[call-overload]
        assert left(job) == count, (job, gone)
    if "one_broken" in expect:
        a, b = expect["one_broken"]  # type: ignore[misc]
        assert sorted((left(a), left(b))) == [0, 2], gone
    for pod in dict(expect.get("roles", {})):  # type: ignore[call-overload]
        assert pod not in gone, f"{pod} keeps its role's minimum and must not be evicted; evicted: {gone}"
    if expect.get("domain") == 1:
        used = {node for name, node in placed.items() if name.startswith(("p-", "r-"))}
        assert any(used <= set(members) for members in TIER1.values()), f"spread over tier-1 domains: {used}"
    if "sub_group_kept" in expect:
        # The evictions break one sub-group only: one partition keeps both its pods (minSubGroups 1).
        evicted_partitions = {int(n.rsplit("-", 1)[1]) // 2 for n in gone if n.startswith("v-")}
        assert len(evicted_partitions) == 1, gone
