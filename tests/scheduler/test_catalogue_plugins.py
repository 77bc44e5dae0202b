"""What each of Volcano's plugins added for the catalogue does, as a user sees it after one session:
sla, cdp, pdb, resourcequota, nodegroup, network-topology-aware, and the gangpreempt name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from tests.scheduler.evict_harness import PREEMPT_CONF, Cluster
from tests.scheduler.harness import NOW, Scenario, check, run
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.snapshot import Snapshot


def _session(conf: str, **objects: Any) -> SessionResult:
    return run_session(Snapshot.build(**objects), load_conf(conf), NOW)


EARLIER = "2025-12-31T23:00:00Z"  # an hour before the harness's NOW
SLA_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: sla}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


SLA_KEY = "volcano.sh/sla-waiting-time"


def _annotated(pg: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    pg["metadata"]["annotations"] = dict(annotations)
    return pg


def _big_pending(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    # minResources beyond the over-commit limit (2 nodes x 8 cpu x 1.2): overcommit alone keeps it Pending.
    pg = make_pg(name, 4, phase="Pending").min_res(cpu=40).created(EARLIER).obj()
    return _annotated(pg, annotations or {})


@pytest.mark.parametrize(
    ("annotations", "phase"),
    [
        ({SLA_KEY: "30m"}, "Inqueue"),  # waited 1h > 30m: admitted regardless
        ({SLA_KEY: "2h"}, None),  # not yet
        ({"sla-waiting-time": "10m"}, "Inqueue"),  # Volcano's older bare key
        ({}, None),
    ],
    ids=["waited-past-sla", "within-sla", "legacy-key", "no-sla"],
)
def test_sla_admits_a_job_that_waited_past_its_time(annotations: dict[str, str], phase: str | None) -> None:
    result = run(Scenario(nodes=[make_node("n0").obj(), make_node("n1").obj()],
                          podgroups=[_big_pending("big", annotations)], conf=SLA_CONF))  # fmt: skip
    updates = {u.name: u for u in result.podgroup_updates}
    if phase is None:
        assert "big" not in updates or updates["big"].phase.value == "Pending"
        assert "over-commit limit" in result.explanations["default/big"].message
    else:
        assert updates["big"].phase.value == phase


def test_sla_global_waiting_time_argument() -> None:
    conf = SLA_CONF.replace("{name: sla}", "{name: sla, arguments: {sla-waiting-time: 45m}}")
    result = run(Scenario(nodes=[make_node("n0").obj()], podgroups=[_big_pending("big")], conf=conf))
    assert {u.name: u.phase.value for u in result.podgroup_updates}["big"] == "Inqueue"


def test_sla_orders_jobs_by_deadline() -> None:
    # One node fits one of two equal jobs; the younger one has a deadline, the other none: it goes first.
    plain = make_pg("plain", 1).created("2025-12-31T22:00:00Z").obj()
    urgent = _annotated(make_pg("urgent", 1).created(EARLIER).obj(), {SLA_KEY: "1m"})
    check(
        Scenario(
            nodes=[make_node("n0", cpu=4).obj()],
            pods=[
                make_pod("p0").req(cpu=4).group("plain").obj(),
                make_pod("u0").req(cpu=4).group("urgent").obj(),
            ],
            podgroups=[plain, urgent],
            conf=SLA_CONF,
            binds={"u0": "n0"},
        )
    )


def _scheduled_at(cluster: Cluster, job: str, when: str) -> Cluster:
    for pod in cluster.pods:
        if pod["metadata"]["name"].startswith(f"{job}-") and pod["spec"].get("nodeName"):
            pod["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": when}
            ]
    return cluster


CDP_CONF = PREEMPT_CONF.replace("  - name: conformance\n", "  - name: conformance\n  - name: cdp\n")


@pytest.mark.parametrize(
    ("scheduled", "evicted"),
    [("2026-01-01T11:55:00Z", set()), ("2026-01-01T11:00:00Z", {"low-0"})],
    ids=["cooling-down-is-kept", "cooled-down-is-a-victim"],
)
def test_cdp_keeps_pods_in_cooldown(scheduled: str, evicted: set[str]) -> None:
    cluster = (
        Cluster()
        .nodes_named("n", 1, cpu=4)
        .job(
            "low", priority="low", cpu="4", running_on=["n0"], pod_labels={"volcano.sh/cooldown-time": "10m"}
        )
        .job("hi", priority="high", cpu="4", pending=1, created=1)
    )
    assert _scheduled_at(cluster, "low", scheduled).run(CDP_CONF).evicted == evicted


PDB_CONF = PREEMPT_CONF.replace("  - name: conformance\n", "  - name: conformance\n  - name: pdb\n")


def _pdb(allowed: int, disrupted: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "metadata": {"name": "web-pdb", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": 1},
        "status": {
            "disruptionsAllowed": allowed,
            "disruptedPods": {p: "2026-01-01T11:59:00Z" for p in disrupted},
        },
    }


@pytest.mark.parametrize(
    ("budget", "evicted"),
    [
        (None, {"web-0", "web-1"}),
        (_pdb(0), set()),
        (_pdb(1), set()),  # the gang needs both pods gone; one allowed disruption is not enough: no eviction
        (_pdb(0, ("web-0", "web-1")), {"web-0", "web-1"}),  # already being disrupted: not counted again
    ],
    ids=["no-budget", "budget-exhausted", "budget-short-of-the-gang", "already-disrupted"],
)
def test_pdb_bounds_victims(budget: dict[str, Any] | None, evicted: set[str]) -> None:
    cluster = (
        Cluster()
        .nodes_named("n", 2, cpu=4)
        .job("web", priority="low", cpu="4", running_on=["n0", "n1"], min_member=1, pod_labels={"app": "web"})
        .job("hi", priority="high", cpu="4", pending=2, created=1)
    )
    if budget is not None:
        cluster.pdbs.append(budget)
    assert cluster.run(PDB_CONF).evicted == evicted


def test_pdb_allowance_lets_some_go() -> None:
    cluster = (
        Cluster()
        .nodes_named("n", 2, cpu=4)
        .job("web", priority="low", cpu="4", running_on=["n0", "n1"], min_member=1, pod_labels={"app": "web"})
        .job("hi", priority="high", cpu="4", pending=1, created=1)
    )
    cluster.pdbs.append(_pdb(1))
    assert len(cluster.run(PDB_CONF).evicted) == 1


RQ_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: resourcequota}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def _quota(hard: dict[str, str], used: dict[str, str], name: str = "team-quota") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"hard": hard},
            "status": {"hard": hard, "used": used}}  # fmt: skip


@pytest.mark.parametrize(
    ("quota", "admitted", "says"),
    [
        (
            _quota({"requests.cpu": "8"}, {"requests.cpu": "2"}),
            {"a"},
            "team-quota insufficient on requests.cpu",
        ),
        (_quota({"cpu": "10"}, {"cpu": "2"}), {"a", "b"}, None),
        (_quota({"pods": "5"}, {"pods": "2"}), {"a"}, "insufficient on pods: requested 2, used 4, limited 5"),
        (_quota({"limits.cpu": "1"}, {}), {"a", "b"}, None),  # limits are the API server's to enforce
    ],
    ids=["second-job-over-cpu", "both-fit", "pod-count", "limits-not-checked"],
)
def test_resourcequota_holds_jobs_beyond_the_quota(
    quota: dict[str, Any], admitted: set[str], says: str | None
) -> None:
    podgroups = [
        make_pg("a", 2, phase="Pending").min_res(cpu=4).obj(),
        make_pg("b", 2, phase="Pending").min_res(cpu=4).obj(),
    ]
    result = _session(
        RQ_CONF, nodes=[make_node("n0", cpu=32).obj()], podgroups=podgroups, resource_quotas=[quota]
    )
    phases = {u.name: u.phase.value for u in result.podgroup_updates}
    assert {name for name, phase in phases.items() if phase == "Inqueue"} == admitted
    if says:
        assert says in result.explanations["default/b"].message


# Volcano's job controller writes a PodGroup's minResources as the pods' quota usage (pods, count/pods,
# requests.*, limits.* beside the bare names); ours does too. 2 pods of 2 cpu each:
VOLCANO_MIN_RESOURCES = {"cpu": 4, "requests_cpu": 4, "limits_cpu": 4, "pods": 2, "count__pods": 2}
QUOTA_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: overcommit}, {name: resourcequota}, {name: predicates}, {name: %s}, {name: nodeorder}]
"""


@pytest.mark.parametrize("share", ["proportion", "capacity"])
@pytest.mark.parametrize(
    ("quota", "admitted", "says"),
    [
        (None, {"a", "b"}, None),
        (_quota({"pods": "5"}, {"pods": "2"}), {"a"}, "insufficient on pods: requested 2, used 4, limited 5"),
        (_quota({"count/pods": "4"}, {"count/pods": "0"}), {"a", "b"}, None),
        (_quota({"requests.cpu": "6"}, {}), {"a"}, "insufficient on requests.cpu: requested 4, used 4"),
    ],
    ids=["no-quota", "pod-count-once", "count-pods-fit", "requests-cpu"],
)
def test_volcanos_quota_keys_in_min_resources_are_counted_once(
    share: str, quota: dict[str, Any] | None, admitted: set[str], says: str | None
) -> None:
    podgroups = [make_pg(name, 2, phase="Pending").min_res(**VOLCANO_MIN_RESOURCES).obj() for name in "ab"]
    result = _session(
        QUOTA_CONF % share,
        nodes=[make_node("n0", cpu=32).obj()],
        podgroups=podgroups,
        resource_quotas=[quota] if quota else [],
    )
    phases = {u.name: u.phase.value for u in result.podgroup_updates}
    assert {name for name, phase in phases.items() if phase == "Inqueue"} == admitted
    if says:
        assert says in result.explanations["default/b"].message


NG_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: nodegroup, arguments: {strict: %s}}, {name: nodeorder}]
"""


def _group_nodes() -> list[dict[str, Any]]:
    nodes = []
    for name, group in (("a0", "groupa"), ("a1", "groupa"), ("b0", "groupb"), ("plain", None)):
        builder = make_node(name)
        if group:
            builder.label("volcano.sh/nodegroup-name", group)
        nodes.append(builder.obj())
    return nodes


def _ng_queue(name: str, affinity: dict[str, Any] | None) -> dict[str, Any]:
    queue = make_queue(name).obj()
    if affinity is not None:
        queue["spec"]["affinity"] = affinity
    return queue


def _ng_job(queue: str, pods: int = 3) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    pg = make_pg(f"job-{queue}", 1).queue(queue).obj()
    return [make_pod(f"{queue}-{i}").req(cpu=6).group(f"job-{queue}").obj() for i in range(pods)], pg


@pytest.mark.parametrize(
    ("affinity", "strict", "allowed"),
    [
        (
            {"nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["groupa"]}},
            "true",
            {"a0", "a1"},
        ),
        (
            {"nodeGroupAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": ["groupb"]}},
            "true",
            {"b0"},
        ),
        (
            {
                "nodeGroupAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["groupa", "groupb"]},
                "nodeGroupAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": ["groupa"]},
            },
            "true",
            {"b0"},
        ),
        (None, "true", set()),
        (None, "false", {"plain"}),
    ],
    ids=["required", "preferred", "anti-required-wins", "no-affinity-strict", "no-affinity-lenient"],
)
def test_nodegroup_keeps_a_queue_on_its_groups(
    affinity: dict[str, Any] | None, strict: str, allowed: set[str]
) -> None:
    pods, pg = _ng_job("q1")
    queue = _ng_queue("q1", affinity)
    result = run(
        Scenario(nodes=_group_nodes(), pods=pods, podgroups=[pg], queues=[queue], conf=NG_CONF % strict)
    )
    assert {b.node for b in result.binds} == allowed
    if not allowed:
        assert "queue q1 has no nodeGroupAffinity" in result.explanations["default/job-q1"].message


def test_nodegroup_prefers_the_preferred_group_and_splits_classes_by_queue() -> None:
    # Two queues with identical pods each land on their own groups: the predicate is per queue, not per shape.
    pods_a, pg_a = _ng_job("qa", pods=1)
    pods_b, pg_b = _ng_job("qb", pods=1)
    required, preferred = (
        "requiredDuringSchedulingIgnoredDuringExecution",
        "preferredDuringSchedulingIgnoredDuringExecution",
    )
    affinity_a = {"nodeGroupAffinity": {required: ["groupa", "groupb"], preferred: ["groupb"]}}
    affinity_b = {"nodeGroupAffinity": {required: ["groupa"]}}
    result = run(
        Scenario(
            nodes=_group_nodes(),
            pods=pods_a + pods_b,
            podgroups=[pg_a, pg_b],
            queues=[_ng_queue("qa", affinity_a), _ng_queue("qb", affinity_b)],
            conf=NG_CONF % "true",
        )
    )
    placed = {b.name: b.node for b in result.binds}
    assert placed["qa-0"] == "b0"
    assert placed["qb-0"] in {"a0", "a1"}


def test_network_topology_aware_places_a_hard_topology_gang_in_one_rack() -> None:
    nodes = [make_node(f"r{r}n{i}", cpu=4).label("rack", f"r{r}").obj() for r in range(2) for i in range(2)]
    members = [
        {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": f"r{r}"}}}} for r in range(2)
    ]
    hypernodes = [
        {"metadata": {"name": f"rack{r}"}, "spec": {"tier": 1, "members": [members[r]]}} for r in range(2)
    ]
    # rack 0 already half used: only rack 1 holds the whole gang.
    busy = make_pod("busy").req(cpu=4).running("r0n0").scheduler("other").obj()
    pg = make_pg("tp", 2).obj()
    pg["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    pods = [make_pod(f"tp-{i}").req(cpu=3).group("tp").obj() for i in range(2)]
    result = _session(
        HELM_CI_PLACEMENT, nodes=nodes, pods=[busy, *pods], podgroups=[pg], hypernodes=hypernodes
    )
    assert {b.node for b in result.binds} == {"r1n0", "r1n1"}


HELM_CI_PLACEMENT = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: sla}]
- plugins: [{name: predicates}, {name: proportion}, {name: nodeorder}, {name: network-topology-aware}]
"""


def test_gangpreempt_is_preempt_under_volcanos_name() -> None:
    conf = PREEMPT_CONF.replace(
        "enqueue, allocate, preempt, backfill", "enqueue, allocate, gangpreempt, backfill"
    )

    def cluster() -> Cluster:
        return (
            Cluster()
            .nodes_named("n", 2, cpu=4)
            .job("low", priority="low", cpu="2", running_on=["n0", "n0", "n1", "n1"], min_member=1)
            .job("hi", priority="high", cpu="2", pending=2)
        )

    assert cluster().run(conf).evicted == cluster().run(PREEMPT_CONF).evicted == {"low-0", "low-1"}


RSF_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins:
  - name: predicates
  - name: resource-strategy-fit
    arguments:
      resources: {cpu: {type: %s, weight: 1}, "example.com/*": {type: MostAllocated, weight: 3}}
      sra: {enable: %s, resources: nvidia.com/gpu, weight: 10}
"""


def _rsf_nodes() -> list[dict[str, Any]]:
    # "busy" already runs 4 of its 8 cpu; "idle" runs nothing; "gpu" is idle too but has GPUs.
    return [
        make_node("busy", cpu=8).obj(),
        make_node("idle", cpu=8).obj(),
        make_node("gpu", cpu=8, gpu=8).obj(),
    ]


@pytest.mark.parametrize(
    ("strategy", "sra", "node"),
    [("MostAllocated", "false", "busy"), ("LeastAllocated", "true", "idle")],
    ids=["most-allocated-packs", "least-allocated-spreads-and-sra-spares-the-gpu-node"],
)
def test_resource_strategy_fit_scores_per_resource(strategy: str, sra: str, node: str) -> None:
    running = make_pod("other").req(cpu=4).running("busy").obj()
    check(
        Scenario(
            nodes=_rsf_nodes(),
            pods=[running, make_pod("p").req(cpu=2).obj()],
            conf=RSF_CONF % (strategy, sra),
            binds={"p": node},
        )
    )


def test_resource_strategy_fit_wildcard_rule_scores_an_extended_resource() -> None:
    # "a" has 3 of its 4 example.com/foo taken: MostAllocated (weight 3, via "example.com/*") outweighs cpu's
    # LeastAllocated, which alone would pick the emptier "b".
    nodes = [make_node(n, cpu=8).cap(cpu=8, memory="32Gi", pods=110, example_com__foo=4).obj() for n in "ab"]
    running = make_pod("other").req(cpu=1, example_com__foo=3).running("a").obj()
    pod = make_pod("p").req(cpu=1, example_com__foo=1).obj()
    check(
        Scenario(
            nodes=nodes, pods=[running, pod], conf=RSF_CONF % ("LeastAllocated", "false"), binds={"p": "a"}
        )
    )
    plain = RSF_CONF.replace(', "example.com/*": {type: MostAllocated, weight: 3}', "")
    check(
        Scenario(nodes=nodes, pods=[running, pod], conf=plain % ("LeastAllocated", "false"), binds={"p": "b"})
    )
