"""Which status writes the binder sends: only real changes, with stable transition times."""

from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.decisions import Condition, PodGroupUpdate
from volcano_py.scheduler.runtime.binder import allocated_patch, podgroup_status, same_podgroup_status

UNSCHEDULABLE = Condition("Unschedulable", "True", "NotEnoughResources", "3/4 tasks in gang unschedulable")


def update(
    *conditions: Condition, phase: PodGroupPhase = PodGroupPhase.INQUEUE, running: int = 0
) -> PodGroupUpdate:
    return PodGroupUpdate("ns", "pg", phase, conditions, running, 0, 0)


def test_first_status_gets_a_transition_time_and_counters() -> None:
    status = podgroup_status(update(UNSCHEDULABLE), None)
    assert status["phase"] == "Inqueue"
    [cond] = status["conditions"]
    assert cond["reason"] == "NotEnoughResources" and cond["message"].startswith("3/4")
    assert cond["lastTransitionTime"].endswith("Z")
    assert (status["running"], status["succeeded"], status["failed"]) == (0, 0, 0)


def test_unchanged_condition_keeps_its_transition_time() -> None:
    current = podgroup_status(update(UNSCHEDULABLE), None)
    current["conditions"][0]["lastTransitionTime"] = "2020-01-01T00:00:00Z"
    again = podgroup_status(update(UNSCHEDULABLE), current)
    assert again["conditions"][0]["lastTransitionTime"] == "2020-01-01T00:00:00Z"
    assert same_podgroup_status(again, current)


def test_phase_counter_or_message_change_is_a_change() -> None:
    current = podgroup_status(update(UNSCHEDULABLE), None)
    assert not same_podgroup_status(podgroup_status(update(UNSCHEDULABLE, running=1), current), current)
    assert not same_podgroup_status(
        podgroup_status(update(UNSCHEDULABLE, phase=PodGroupPhase.RUNNING), current), current
    )
    other = Condition("Unschedulable", "True", "NotEnoughResources", "1/4 tasks in gang unschedulable")
    assert not same_podgroup_status(podgroup_status(update(other), current), current)


def test_missing_status_equals_a_fresh_pending_one() -> None:
    assert same_podgroup_status(None, {"phase": "Pending", "running": 0})


def test_queue_allocated_written_only_when_changed_and_removed_resources_nulled() -> None:
    current = {"allocated": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "8"}}
    assert allocated_patch(Resource.of(cpu="2000m", memory="4Gi", gpu=8), current) is None
    body = allocated_patch(Resource.of(cpu="3", memory="4Gi"), current)
    assert body == {"allocated": {"cpu": "3", "memory": "4Gi", "nvidia.com/gpu": None}}
    assert allocated_patch(Resource.of(cpu=1), None) == {"allocated": {"cpu": "1"}}
