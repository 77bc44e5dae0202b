"""Every predicate, as scenarios: which node a pod lands on, or why it lands nowhere."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.builders import make_node, make_pg, make_pod
from tests.scheduler.harness import Scenario, check

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def required(*exprs: dict[str, Any]) -> dict[str, Any]:
    term = {"matchExpressions": list(exprs)}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def pod_term(kind: str, topology: str, **labels: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": topology}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def preferred(kind: str, topology: str, weight: int, **labels: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": topology}
    return {
        kind: {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "podAffinityTerm": term}]
        }
    }


def one(pod: Any, *nodes: Any, others: tuple[Any, ...] = (), groups: tuple[Any, ...] = ()) -> dict[str, Any]:
    """A one-pod job named pg plus optional already-running pods."""
    return {
        "nodes": [n.obj() for n in nodes],
        "pods": [pod.group("pg").obj(), *(o.obj() for o in others)],
        "podgroups": [make_pg("pg").obj(), *groups],
    }


A, B = make_node("a"), make_node("b")

CASES = [
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).selector(disk="ssd"),
                make_node("a"),
                make_node("b").label("disk", "ssd"),
            ),
            binds={"p": "b"},
        ),
        id="node-selector-picks-labelled-node",
    ),
    pytest.param(
        Scenario(
            **one(make_pod("p").req(cpu=1).selector(disk="ssd"), make_node("a"), make_node("b")),
            bind_count=0,
            explains={"pg": ["2 nodes do not match nodeSelector disk=ssd"]},
        ),
        id="node-selector-matching-nothing-explained",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).affinity(required(expr("gpu", "In", "a100", "h100"))),
                make_node("a").label("gpu", "t4"),
                make_node("b").label("gpu", "h100"),
            ),
            binds={"p": "b"},
        ),
        id="node-affinity-in",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).affinity(required(expr("gpu", "NotIn", "t4"))),
                make_node("a").label("gpu", "t4"),
                make_node("b").label("gpu", "h100"),
            ),
            binds={"p": "b"},
        ),
        id="node-affinity-not-in",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).affinity(required(expr("spot", "DoesNotExist"))),
                make_node("a").label("spot", "yes"),
                make_node("b"),
            ),
            binds={"p": "b"},
        ),
        id="node-affinity-does-not-exist",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).affinity(required(expr("cores", "Gt", "64"))),
                make_node("a").label("cores", "32"),
                make_node("b").label("cores", "128"),
            ),
            binds={"p": "b"},
        ),
        id="node-affinity-gt",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).affinity(required(expr("zone", "Exists"))),
                make_node("a"),
                make_node("b"),
            ),
            bind_count=0,
            explains={"pg": ["2 nodes do not match required node affinity"]},
        ),
        id="node-affinity-unmet-explained",
    ),
    pytest.param(
        Scenario(
            **one(make_pod("p").req(cpu=1), make_node("a").taint("dedicated", "infer"), make_node("b")),
            binds={"p": "b"},
        ),
        id="untolerated-noschedule-taint-avoided",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1),
                make_node("a").taint("dedicated", "infer"),
                make_node("b").taint("gpu", "", "NoExecute"),
            ),
            bind_count=0,
            explains={
                "pg": [
                    "1 node have untolerated taint dedicated=infer:NoSchedule",
                    "1 node have untolerated taint gpu:NoExecute",
                ]
            },
        ),
        id="untolerated-taints-explained",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).toleration("dedicated", "infer"),
                make_node("a").taint("dedicated", "infer"),
            ),
            binds={"p": "a"},
        ),
        id="tolerated-taint-allowed",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).toleration("dedicated", operator="Exists", effect=""),
                make_node("a").taint("dedicated", "x"),
            ),
            binds={"p": "a"},
        ),
        id="exists-toleration-any-value-any-effect",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1),
                make_node("a").taint("soft", "x", "PreferNoSchedule"),
                make_node("b"),
            ),
            binds={"p": "b"},
        ),
        id="prefer-no-schedule-taint-scored-lower",
    ),
    pytest.param(
        Scenario(
            **one(make_pod("p").req(cpu=1), make_node("a").taint("soft", "x", "PreferNoSchedule")),
            binds={"p": "a"},
        ),
        id="prefer-no-schedule-taint-still-usable",
    ),
    pytest.param(
        Scenario(**one(make_pod("p").req(cpu=1), make_node("a").cordon(), make_node("b")), binds={"p": "b"}),
        id="cordoned-node-skipped",
    ),
    pytest.param(
        Scenario(
            **one(make_pod("p").req(cpu=1), make_node("a").cordon()),
            bind_count=0,
            explains={"pg": ["1 node are cordoned (spec.unschedulable)"]},
        ),
        id="cordoned-explained",
    ),
    pytest.param(
        Scenario(
            **one(make_pod("p").req(cpu=1), make_node("a").not_ready(), make_node("b")), binds={"p": "b"}
        ),
        id="not-ready-node-skipped",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p").req(cpu=1).host_port(8080),
                make_node("a"),
                make_node("b"),
                others=(
                    make_pod("web").req(cpu=1).host_port(8080).scheduler("default-scheduler").running("b"),
                ),
            ),
            binds={"p": "a"},
        ),
        id="host-port-in-use-avoided",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a", cpu=64).obj(), make_node("b", cpu=1).obj()],
            pods=[make_pod(f"p{i}").req(cpu="500m").host_port(9000).group("pg").obj() for i in range(2)],
            podgroups=[make_pg("pg", 2).obj()],
            binds={"p0": "a", "p1": "b"},
        ),
        id="gang-members-with-same-host-port-split",
    ),
    pytest.param(
        Scenario(
            nodes=[
                make_node("a").zone("z1").obj(),
                make_node("b").zone("z2").obj(),
                make_node("c").zone("z2").obj(),
            ],
            pods=[
                make_pod("db").req(cpu=4).labels(app="db").scheduler("default-scheduler").running("b").obj(),
                make_pod("p").req(cpu=1).affinity(pod_term("podAffinity", ZONE, app="db")).group("pg").obj(),
            ],
            podgroups=[make_pg("pg").obj()],
            binds={"p": "c"},
        ),
        id="pod-affinity-same-zone",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a").obj(), make_node("b").obj()],
            pods=[
                make_pod(f"p{i}")
                .req(cpu=1)
                .labels(app="x")
                .affinity(pod_term("podAffinity", HOST, app="x"))
                .group("pg")
                .obj()
                for i in range(2)
            ],
            podgroups=[make_pg("pg", 2).obj()],
            binds={"p0": "a", "p1": "a"},
        ),
        id="self-affinity-first-pod-free-rest-follow",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a").obj(), make_node("b").obj()],
            pods=[
                make_pod(f"p{i}")
                .req(cpu=1)
                .labels(app="x")
                .affinity(pod_term("podAntiAffinity", HOST, app="x"))
                .group("pg")
                .obj()
                for i in range(2)
            ],
            podgroups=[make_pg("pg", 2).obj()],
            binds={"p0": "a", "p1": "b"},
        ),
        id="anti-affinity-spreads-gang",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a").obj(), make_node("b").obj()],
            pods=[
                make_pod(f"p{i}")
                .req(cpu=1)
                .labels(app="x")
                .affinity(pod_term("podAntiAffinity", HOST, app="x"))
                .group("pg")
                .obj()
                for i in range(3)
            ],
            podgroups=[make_pg("pg", 3).obj()],
            bind_count=0,
            explains={"pg": ["violate pod anti-affinity to app=x on kubernetes.io/hostname"]},
        ),
        id="anti-affinity-gang-too-big-binds-nothing",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a").obj(), make_node("b").obj()],
            pods=[
                make_pod("guard")
                .req(cpu=1)
                .affinity(pod_term("podAntiAffinity", HOST, app="web"))
                .scheduler("default-scheduler")
                .running("b")
                .obj(),
                make_pod("p").req(cpu=1).labels(app="web").group("pg").obj(),
            ],
            podgroups=[make_pg("pg").obj()],
            conf='actions: "allocate"\ntiers:\n- plugins: [{name: gang}, {name: predicates}]',
            binds={"p": "a"},
        ),
        id="existing-pod-anti-affinity-respected",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p")
                .req(cpu=1)
                .affinity(
                    {
                        "nodeAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 50,
                                    "preference": {"matchExpressions": [expr("fast", "In", "yes")]},
                                }
                            ]
                        }
                    }
                ),
                make_node("a"),
                make_node("b").label("fast", "yes"),
            ),
            binds={"p": "b"},
        ),
        id="preferred-node-affinity-scored",
    ),
    pytest.param(
        Scenario(
            **one(
                make_pod("p")
                .req(cpu=1)
                .affinity(
                    {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {
                                        "matchFields": [
                                            {"key": "metadata.name", "operator": "In", "values": ["b"]}
                                        ]
                                    }
                                ]
                            }
                        }
                    }
                ),
                make_node("a"),
                make_node("b"),
            ),
            binds={"p": "b"},
        ),
        id="node-affinity-match-fields-name",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a").zone("z1").obj(), make_node("b").zone("z2").obj()],
            pods=[
                make_pod("cache").req(cpu=1).labels(app="cache").scheduler("other").running("b").obj(),
                make_pod("p")
                .req(cpu=1)
                .affinity(preferred("podAffinity", ZONE, 80, app="cache"))
                .group("pg")
                .obj(),
            ],
            podgroups=[make_pg("pg").obj()],
            binds={"p": "b"},
        ),
        id="preferred-pod-affinity-scored",
    ),
    pytest.param(
        Scenario(
            nodes=[make_node("a").zone("z1").obj(), make_node("b").zone("z2").obj()],
            pods=[
                make_pod("noisy").req(cpu=1).labels(app="noisy").scheduler("other").running("a").obj(),
                # b is busier, so resource scores alone would pick a.
                make_pod("busy").req(cpu=4).scheduler("other").running("b").obj(),
                make_pod("p")
                .req(cpu=1)
                .affinity(preferred("podAntiAffinity", ZONE, 80, app="noisy"))
                .group("pg")
                .obj(),
            ],
            podgroups=[make_pg("pg").obj()],
            binds={"p": "b"},
        ),
        id="preferred-pod-anti-affinity-scored",
    ),
]


@pytest.mark.parametrize("scenario", CASES)
def test_predicate(scenario: Scenario) -> None:
    check(scenario)


def test_only_pods_an_anti_affinity_term_matches_are_re_evaluated_per_placement() -> None:
    from volcano_py.scheduler.builtin import default_registry
    from volcano_py.scheduler.core import load_conf
    from volcano_py.scheduler.framework.session import Session
    from volcano_py.scheduler.framework.snapshot import Snapshot

    guard = make_pod("guard").req(cpu=1).affinity(pod_term("podAntiAffinity", HOST, app="web"))
    snapshot = Snapshot.build(
        nodes=[make_node("a").obj()],
        pods=[
            guard.scheduler("default-scheduler").running("a").obj(),
            make_pod("web").req(cpu=1).labels(app="web").group("pg").obj(),
            make_pod("batch").req(cpu=1).labels(app="batch").group("pg").obj(),
        ],
        podgroups=[make_pg("pg", 1).obj()],
    )
    ssn = Session(snapshot, load_conf(), default_registry(), now="t")
    ssn.open()
    tasks = {t.name: t for t in ssn.jobs["default/pg"].tasks.values()}
    assert ssn.is_dynamic(ssn.task_class(tasks["web"]))
    assert not ssn.is_dynamic(ssn.task_class(tasks["batch"]))
