"""The schedulingaction suite's "Guarantee reserved resource" specs as session scenarios.

Placeholder pods of another scheduler fill the cluster but one node's 2 CPUs and 2 GiB; queue1 guarantees
2 CPUs (or 1), queue2 none, and a Job of queue2 asks 500m (or 1500m). Volcano's proportion plugin reserves
other queues' guarantees out of the cluster's allocatable total (queue2's real capability is the whole
cluster less queue1's guarantee), not out of what is free now, so with four 4-CPU nodes queue2's Job fits and
is bound; queue1 gets its guarantee back by reclaim when it asks. Only when the guarantee takes the whole
cluster is queue2 held back, and then its Job says why. Kept views and a fresh build decide alike.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.evict_harness import Cluster
from tests.scheduler.test_catalogue import HELM_CI
from volcano_py.scheduler.core import load_conf, run_session
from volcano_py.scheduler.framework.snapshot import Records, Snapshot

# Volcano's CI conf, as its Helm chart ships it (the schedulingaction suite's scheduler).
CI_CONF = HELM_CI


def guarantee_cluster(guarantee_cpu: str, ask_cpu: str, *, nodes: int = 4) -> Cluster:
    c = Cluster().nodes_named("n", nodes, cpu=4, memory="16Gi")
    c.queue("default").queue("queue1", guarantee={"cpu": guarantee_cpu, "memory": "2Gi"}).queue("queue2")

    def foreign(name: str, node: str, cpu: str, memory: str) -> None:
        c.pods.append(
            {
                "metadata": {"name": name, "namespace": "t", "uid": name},
                "spec": {
                    "schedulerName": "default-scheduler",
                    "nodeName": node,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                },
                "status": {"phase": "Running"},
            }
        )

    for i in range(nodes):
        # Everything but 2 CPUs and 2 GiB of the last node, as the spec's placeholders leave it.
        last = i == nodes - 1
        foreign(f"placeholder-{i}", f"n{i}", "2" if last else "4", "14Gi" if last else "16Gi")
    c.job("queue2-job", queue="queue2", cpu=ask_cpu, memory="512Mi", pending=1, phase="Pending")
    c.podgroups[-1]["spec"]["minResources"] = {"cpu": ask_cpu, "memory": "512Mi"}
    return c


@pytest.mark.parametrize(
    ("guarantee_cpu", "ask_cpu"),
    [pytest.param("2", "500m", id="reserve-all-free"), pytest.param("1", "1500m", id="reserve-some-free")],
)
def test_another_queues_guarantee_is_reserved_from_the_total_not_from_the_free_room(
    guarantee_cpu: str, ask_cpu: str
) -> None:
    outcome = guarantee_cluster(guarantee_cpu, ask_cpu).run(CI_CONF)
    assert outcome.bound == {"queue2-job-0"}


def test_a_guarantee_of_the_whole_cluster_holds_other_queues_back_and_says_why() -> None:
    c = guarantee_cluster("4", "500m", nodes=1)
    outcome = c.run(CI_CONF)
    assert outcome.bound == set()
    (update,) = [u for u in outcome.result.podgroup_updates if u.name == "queue2-job"]
    said = " ".join(x.message for x in update.conditions) + " ".join(
        e.message for e in outcome.result.explanations.values()
    )
    assert "queue2" in said and "cpu" in said, said


def test_kept_views_decide_the_guarantee_scenarios_as_a_fresh_build() -> None:
    conf = load_conf(CI_CONF)
    records = Records()
    for guarantee_cpu, ask_cpu, nodes in (("2", "500m", 4), ("1", "1500m", 4), ("4", "500m", 1)):
        c = guarantee_cluster(guarantee_cpu, ask_cpu, nodes=nodes)
        objects: dict[str, Any] = {
            "nodes": c.nodes, "pods": c.pods, "podgroups": c.podgroups, "queues": c.queues,
            "priority_classes": c.priority_classes,
        }  # fmt: skip
        kept = run_session(Snapshot.build(**objects, records=records), conf, "2026-01-01T12:00:00Z")
        fresh = run_session(Snapshot.build(**objects), conf, "2026-01-01T12:00:00Z")
        assert sorted((b.name, b.node) for b in kept.binds) == sorted((b.name, b.node) for b in fresh.binds)
        assert [(q.name, q.allocated, q.deserved) for q in kept.queue_updates] == [
            (q.name, q.allocated, q.deserved) for q in fresh.queue_updates
        ]
