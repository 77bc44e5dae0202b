"""What the dashboard shows, from API objects: queue bars, job rows with the scheduler's words, GPU grid."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime

from tests.scheduler.builders import make_node, make_nodeshard, make_pg, make_pod, make_queue
from volcano_py.dashboard import node_views, render, views

NOW = datetime(2026, 1, 1, 1, 0, 0, tzinfo=UTC)


def _cluster() -> views.Cluster:
    nodes = [
        make_node(f"n{i}", cpu="64", memory="256Gi", gpu=8).label("rack", "r0" if i < 2 else "r1").obj()
        for i in range(3)
    ]
    pods = [
        make_pod("run-0").req(cpu="4", gpu=4).group("run").running("n0").obj(),
        make_pod("run-1").req(cpu="4", gpu=8).group("run").running("n1").obj(),
        make_pod("wait-0").req(cpu="4", gpu=8).group("wait").obj(),
    ]
    waiting = make_pg("wait", phase="Inqueue").queue("team").obj()
    waiting["status"]["conditions"] = [
        {
            "type": "Unschedulable",
            "status": "True",
            "reason": "NotEnoughResources",
            "message": "1/1 tasks unschedulable: 3 nodes insufficient nvidia.com/gpu",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    queues = [
        make_queue("root").obj(),
        make_queue("default").obj(),
        {
            **make_queue("team", weight=3).capability(gpu=16).obj(),
            "spec": {"weight": 3, "parent": "root", "capability": {"nvidia.com/gpu": "16"}},
        },
    ]
    racks = [
        {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": r},
            "spec": {
                "tier": 1,
                "members": [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": r}}}}],
            },
        }
        for r in ("r0", "r1")
    ]
    return views.Cluster(
        nodes=nodes,
        pods=pods,
        podgroups=[make_pg("run", min_member=2, phase="Running").queue("team").obj(), waiting],
        queues=queues,
        hypernodes=racks,
    )


def test_queue_rows_nest_children_and_carry_their_numbers() -> None:
    cluster = _cluster()
    snapshot = views.snapshot_of(cluster)
    rows = views.queue_rows(
        cluster, snapshot, {"team": snapshot.queues["team"].guarantee + {"nvidia.com/gpu": 8000}}
    )
    assert [(r.name, r.depth) for r in rows] == [("root", 0), ("default", 1), ("team", 1)]
    team = rows[2]
    assert (team.weight, team.pending_jobs, team.running_jobs) == (3, 1, 1)
    gpu = team.bars[0]
    assert (gpu.text(gpu.allocated), gpu.text(gpu.deserved), gpu.text(gpu.capability)) == ("12", "8", "16")
    assert team.overused
    html = render.queues_table(rows)
    assert re.search(
        r'data-queue="team" data-resource="nvidia.com/gpu" data-allocated="12" '
        r'data-deserved="8" data-capability="16"',
        html,
    )
    # The root's bar sums its subtree.
    assert rows[0].bars[0].allocated == 12000


def test_job_rows_show_waiting_jobs_first_with_the_schedulers_reason() -> None:
    rows = views.job_rows(_cluster(), NOW)
    assert [(r.name, r.kind, r.phase, r.running, r.tasks) for r in rows] == [
        ("wait", "PodGroup", "Inqueue", 0, 1),
        ("run", "PodGroup", "Running", 2, 2),
    ]
    assert rows[0].reason == "1/1 tasks unschedulable: 3 nodes insufficient nvidia.com/gpu"
    assert "3 nodes insufficient nvidia.com/gpu" in render.jobs_table(rows)


def test_a_waiting_agent_pod_is_a_row_with_its_schedulers_reason() -> None:
    waiting = make_pod("sandbox").req(cpu="1", gpu=9).obj()
    waiting["spec"]["schedulerName"] = "agent-scheduler"
    waiting["metadata"]["annotations"] = {"scheduling.volcano.sh/queue-name": "team"}
    waiting["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
            }
        ],
    }
    placing = make_pod("fresh").req(cpu="1").obj()  # not yet tried: no condition, no row
    placing["spec"]["schedulerName"] = "agent-scheduler"
    cluster = dataclasses.replace(_cluster(), pods=[*_cluster().pods, waiting, placing])
    rows = views.job_rows(cluster, NOW)
    pods = [r for r in rows if r.kind == "Pod"]
    assert [(r.name, r.queue, r.phase, r.tasks, r.pending) for r in pods] == [
        ("sandbox", "team", "Pending", 1, True)
    ]
    assert pods[0].reason == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    assert "3 Insufficient nvidia.com/gpu" in render.jobs_table(rows)


def test_gpu_grid_counts_free_used_and_stranded_per_rack() -> None:
    cluster = _cluster()
    snapshot = views.snapshot_of(cluster)
    cells = {c.name: c for c in node_views.node_cells(snapshot)}
    # n0 has 4 of 8 GPUs free, but the only waiting pod needs 8: those 4 are stranded. n2 is idle: free.
    assert (cells["n0"].used, cells["n0"].free, cells["n0"].stranded) == (4, 4, 4)
    assert (cells["n1"].used, cells["n1"].free) == (8, 0)
    assert (cells["n2"].free, cells["n2"].stranded) == (8, 0)
    groups = node_views.node_groups(list(cells.values()), snapshot)
    assert [(g.name, [n.name for n in g.cells()]) for g in groups] == [("r0", ["n0", "n1"]), ("r1", ["n2"])]
    totals = node_views.gpu_totals(list(cells.values()))
    html = render.gpu_grid(groups, totals)
    assert 'id="gpu-free">12<' in html
    assert html.count('<i class="stranded">') == 4 + 1  # and the legend's swatch
    assert re.search(r'data-group="r0" data-free="4"', html)


def test_gpu_grid_shows_each_nodes_shard_owner() -> None:
    cluster = _cluster()
    shards = [
        make_nodeshard("volcano", ["n0", "n1"], in_use=["n0", "n1"]),
        # n2 is desired by agent, whose scheduler has not started using it yet.
        make_nodeshard("agent", ["n2"]),
    ]
    cluster = dataclasses.replace(cluster, nodeshards=shards)
    snapshot = views.snapshot_of(cluster)
    cells = node_views.node_cells(snapshot, cluster.nodeshards)
    assert {c.name: c.owner.text if c.owner else None for c in cells} == {
        "n0": "volcano",
        "n1": "volcano",
        "n2": "agent (waiting)",
    }
    html = render.gpu_grid(node_views.node_groups(cells, snapshot), node_views.gpu_totals(cells))
    assert re.search(r'data-node="n2"[^>]*data-shard="agent"', html)
    assert '<span class="nname">n0</span><span class="shard">volcano</span>' in html
    assert "the NodeShard (scheduler) that owns it" in html
    # Without NodeShards (no sharding), no owner and no legend for one.
    plain = node_views.node_cells(snapshot)
    assert all(c.owner is None for c in plain)
    assert "data-shard" not in render.gpu_grid(
        node_views.node_groups(plain, snapshot), node_views.gpu_totals(plain)
    )
