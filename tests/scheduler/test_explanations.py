"""Explanations read as a person would want them: counts over nodes and tasks, amounts, the fix."""

from __future__ import annotations

from tests.scheduler.builders import make_node, make_pg, make_pod, make_queue
from tests.scheduler.harness import Scenario, check


def test_gang_explanation_aggregates_resources_and_taints() -> None:
    nodes = [make_node(f"g{i}", gpu=8).obj() for i in range(5)]
    nodes += [make_node(f"t{i}", gpu=8).taint("dedicated", "infer").obj() for i in range(2)]
    running = [
        make_pod(f"r{i}").req(cpu=1, gpu=4).scheduler("other").running(f"g{i}").obj() for i in range(5)
    ]
    gang = [make_pod(f"w{i}").req(cpu=1, gpu=8).group("train").obj() for i in range(8)]
    result = check(
        Scenario(
            nodes=nodes,
            pods=running + gang,
            podgroups=[make_pg("train", 8).obj()],
            bind_count=0,
            reasons={"train": "NotEnoughResources"},
        )
    )
    message = result.explanations["default/train"].message
    assert message == (
        "8/8 tasks unschedulable: 2 nodes have untolerated taint dedicated=infer:NoSchedule; "
        "5 nodes insufficient nvidia.com/gpu (need 8, best node has 4 free)"
    )
    update = next(u for u in result.podgroup_updates if u.name == "train")
    condition = next(c for c in update.conditions if c.type == "Unschedulable")
    assert condition.message == message and condition.last_transition_time == "2026-01-01T00:00:00Z"


def test_partial_gang_counts_only_the_tasks_left_over() -> None:
    nodes = [make_node(f"n{i}", gpu=8).obj() for i in range(5)]
    gang = [make_pod(f"w{i}").req(cpu=1, gpu=8).group("train").obj() for i in range(8)]
    result = check(Scenario(nodes=nodes, pods=gang, podgroups=[make_pg("train", 8).obj()], bind_count=0))
    assert result.explanations["default/train"].message.startswith(
        "3/8 tasks unschedulable: 5 nodes insufficient nvidia.com/gpu (need 8, best node has 0 free)"
    )


def test_queue_capability_explanation_names_queue_resource_and_amounts() -> None:
    result = check(
        Scenario(
            nodes=[make_node(f"n{i}", gpu=8, cpu=96).obj() for i in range(10)],
            pods=[make_pod(f"r{i}").req(cpu=1, gpu=8).group("old").running(f"n{i}").obj() for i in range(5)]
            + [make_pod(f"w{i}").req(cpu=1, gpu=8).group("new").obj() for i in range(2)],
            podgroups=[
                make_pg("old", 5, phase="Running").queue("team-a").obj(),
                make_pg("new", 1).queue("team-a").obj(),
            ],
            queues=[make_queue("team-a").capability(gpu=48).obj()],
            bind_count=1,
        )
    )
    assert "queue team-a over capability on nvidia.com/gpu: 48 allocated + 8 requested > 48" in (
        result.explanations["default/new"].message
    )


def test_scheduled_job_gets_no_explanation_and_a_scheduled_condition() -> None:
    result = check(
        Scenario(
            nodes=[make_node("n").obj()],
            pods=[make_pod("p").req(cpu=1).group("pg").obj()],
            podgroups=[make_pg("pg").obj()],
            reasons={"pg": "Scheduled"},
        )
    )
    assert result.explanations == {}


def test_pipelined_gang_says_it_waits_for_releasing_pods() -> None:
    result = check(
        Scenario(
            nodes=[make_node("n0", cpu=8).obj()],
            pods=[
                make_pod("old").req(cpu=8).group("old").running("n0").terminating().obj(),
                make_pod("g").req(cpu=4).group("gang").obj(),
            ],
            podgroups=[make_pg("old", 1, phase="Running").obj(), make_pg("gang", 1).obj()],
            pipelined={"g": "n0"},
        )
    )
    update = next(u for u in result.podgroup_updates if u.name == "gang")
    condition = next(c for c in update.conditions if c.type == "Unschedulable")
    assert condition.message == "1/1 tasks in gang unschedulable: 1 pipelined onto resources being released"
