"""Models read Volcano's wire form, keep it exactly, and fill in Volcano's defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from volcano_py.api.batch import Job, JobPhase, JobStatus, LifecyclePolicy, TaskSpec, TaskState
from volcano_py.api.bus import Action, Command, Event
from volcano_py.api.common import parse_duration
from volcano_py.api.meta import NetworkTopologyMode, ObjectMeta
from volcano_py.api.scheduling import DequeueStrategy, PodGroup, PodGroupPhase, PodGroupSpec, Queue
from volcano_py.api.topology import HyperNode, MemberType
from volcano_py.api.validation import KINDS
from volcano_py.resources import Resource

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example_docs() -> list[Any]:
    params = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if doc is not None and (doc["apiVersion"], doc["kind"]) in KINDS:
                params.append(pytest.param(doc, id=f"{path.stem}-{i}"))
    return params


@pytest.mark.parametrize("doc", _example_docs())
def test_every_example_round_trips_exactly(doc: dict[str, Any]) -> None:
    model = KINDS[(doc["apiVersion"], doc["kind"])]
    assert model.model_validate(doc).to_dict() == doc


def test_examples_cover_every_required_scenario() -> None:
    names = {p.stem for p in EXAMPLES.glob("*.yaml")}
    assert {"single-task-job", "gang-job", "lifecycle-policies-job", "queues", "plain-pod"} <= names


def test_job_defaults_are_volcanos() -> None:
    job = Job.model_validate({"metadata": {"name": "j"}, "spec": {"tasks": [{"replicas": 2}]}})
    assert job.api_version == "batch.volcano.sh/v1alpha1"
    assert job.spec.queue == "default"
    assert job.spec.max_retry == 3
    assert job.spec.min_available == 0
    assert job.spec.tasks[0].min_available is None
    assert job.status is None


def test_to_dict_writes_only_what_was_set_and_always_the_type() -> None:
    job = Job(metadata=ObjectMeta(name="j"), spec={"tasks": [TaskSpec(name="t", replicas=1)]})
    assert job.to_dict() == {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"tasks": [{"name": "t", "replicas": 1}]},
    }


def test_python_names_and_wire_names_both_work() -> None:
    by_wire = TaskSpec.model_validate({"minAvailable": 2, "maxRetry": 5, "topologyPolicy": "best-effort"})
    by_python = TaskSpec(min_available=2, max_retry=5, topology_policy="best-effort")
    assert by_wire == by_python
    assert by_python.to_dict() == {"minAvailable": 2, "maxRetry": 5, "topologyPolicy": "best-effort"}


def test_unknown_fields_survive_a_round_trip() -> None:
    doc = {
        "metadata": {"name": "j", "managedFields": [{"manager": "kubectl"}]},
        "spec": {"futureField": {"a": 1}},
    }
    assert Job.model_validate(doc).to_dict()["spec"]["futureField"] == {"a": 1}
    assert Job.model_validate(doc).to_dict()["metadata"]["managedFields"] == [{"manager": "kubectl"}]


def test_status_round_trips_with_times_and_counts() -> None:
    status = {
        "state": {"phase": "Running", "lastTransitionTime": "2024-05-01T12:00:00Z"},
        "minAvailable": 3,
        "running": 3,
        "taskStatusCount": {"worker": {"phase": {"Running": 2}}},
        "conditions": [{"status": "Pending", "lastTransitionTime": "2024-05-01T11:59:00Z"}],
        "controlledResources": {"plugin-svc": "svc"},
        "retryCount": 1,
        "version": 2,
    }
    parsed = JobStatus.model_validate(status)
    assert parsed.state.phase is JobPhase.RUNNING
    assert parsed.state.last_transition_time is not None
    assert parsed.state.last_transition_time.hour == 12
    assert parsed.to_dict() == status


def test_policy_events_merge_event_and_events_without_repeats() -> None:
    policy = LifecyclePolicy.model_validate(
        {
            "event": "PodFailed",
            "events": ["PodEvicted", "PodFailed"],
            "action": "RestartJob",
            "timeout": "1m30s",
        }
    )
    assert policy.all_events() == [Event.POD_EVICTED, Event.POD_FAILED]
    assert policy.action is Action.RESTART_JOB
    assert policy.timeout is not None and parse_duration(policy.timeout).total_seconds() == 90


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0), ("30s", 30), ("10m", 600), ("1h30m", 5400), ("1.5h", 5400), ("250ms", 0.25), ("-2s", -2)],
)
def test_go_durations_parse(text: str, seconds: float) -> None:
    assert parse_duration(text).total_seconds() == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "10", "1d", "m", "1h 30m"])
def test_bad_durations_are_refused_with_an_example(text: str) -> None:
    with pytest.raises(ValueError, match=r"\(write it like '30s'"):
        parse_duration(text)


def test_podgroup_defaults_and_min_resources() -> None:
    pg = PodGroup.model_validate(
        {
            "metadata": {"name": "pg"},
            "spec": {"minMember": 3, "minResources": {"cpu": "1500m", "memory": "1Gi"}},
        }
    )
    assert pg.spec.queue == "default"
    assert pg.spec.min_resource() == Resource.of(cpu="1.5", memory="1Gi")
    assert PodGroupSpec().min_member == 0
    assert PodGroupPhase("Inqueue") is PodGroupPhase.INQUEUE


def test_queue_defaults_are_volcanos() -> None:
    queue = Queue.model_validate({"metadata": {"name": "q"}})
    assert queue.spec.weight == 1
    assert queue.spec.dequeue_strategy is DequeueStrategy.TRAVERSE
    assert queue.spec.is_reclaimable  # unset means reclaimable, as in Volcano
    assert queue.spec.capability_resource().is_zero()


def test_queue_quantities_keep_their_written_form() -> None:
    doc = {
        "metadata": {"name": "q"},
        "spec": {"capability": {"cpu": 4, "memory": "8Gi", "nvidia.com/gpu": "500m"}},
    }
    queue = Queue.model_validate(doc)
    assert queue.to_dict()["spec"] == doc["spec"]
    assert queue.spec.capability_resource() == Resource(
        {"cpu": 4000, "memory": 8 * 2**30, "nvidia.com/gpu": 500}
    )


def test_float_quantity_is_refused_with_the_quoted_form() -> None:
    with pytest.raises(
        ValidationError, match=r"1\.5 is a floating-point number \(quote it as a string: '1\.5'\)"
    ):
        Queue.model_validate({"spec": {"capability": {"cpu": 1.5}}})


def test_network_topology_mode_defaults_to_hard() -> None:
    job = Job.model_validate({"spec": {"networkTopology": {"highestTierAllowed": 2}}})
    assert job.spec.network_topology is not None
    assert job.spec.network_topology.mode is NetworkTopologyMode.HARD


def test_hypernode_members() -> None:
    hn = HyperNode.model_validate(
        {
            "metadata": {"name": "rack-1"},
            "spec": {
                "tier": 1,
                "members": [
                    {"type": "Node", "selector": {"regexMatch": {"pattern": "^node-[0-9]+$"}}},
                    {"type": "HyperNode", "selector": {"exactMatch": {"name": "leaf-a"}}},
                ],
            },
        }
    )
    assert [m.type for m in hn.spec.members] == [MemberType.NODE, MemberType.HYPERNODE]
    assert hn.spec.members[1].selector.exact_match is not None


def test_command_target_is_an_owner_reference() -> None:
    doc = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"name": "abort-j", "namespace": "default"},
        "action": "AbortJob",
        "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "j", "uid": "u-1"},
    }
    command = Command.model_validate(doc)
    assert command.target is not None and command.target.name == "j"
    assert command.to_dict() == doc


def test_in_place_changes_to_defaults_are_written() -> None:
    status = JobStatus()
    status.state.phase = JobPhase.RUNNING
    status.task_status_count["worker"] = TaskState(phase={"Running": 2})
    assert status.to_dict() == {
        "state": {"phase": "Running"},
        "taskStatusCount": {"worker": {"phase": {"Running": 2}}},
    }
    queue = Queue.model_validate({"metadata": {"name": "q"}})
    queue.spec.capability["cpu"] = "2"
    assert queue.to_dict()["spec"] == {"capability": {"cpu": "2"}}


def test_a_default_written_by_the_user_is_kept() -> None:
    doc = {"metadata": {"name": "j"}, "spec": {"maxRetry": 3, "queue": "default"}}
    assert Job.model_validate(doc).to_dict()["spec"] == {"maxRetry": 3, "queue": "default"}
