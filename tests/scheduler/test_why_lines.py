"""The first lines of ``vcctl job why`` (and the dashboard's job page): what the job's objects say."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.whatif.why import why_lines


def job(phase: str) -> dict[str, Any]:
    return {"metadata": {"name": "j", "namespace": "ns"}, "status": {"state": {"phase": phase}}}


def podgroup(phase: str, conditions: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "j-pg"},
        "spec": {"queue": "default"},
        "status": {"phase": phase, "conditions": conditions or []},
    }


@pytest.mark.parametrize(
    ("job_phase", "pg_phase", "said"),
    [
        ("Running", "Running", "Not pending: the scheduler placed this job."),
        # The Job's phase can run ahead of the scheduler's PodGroup status write: still placed.
        ("Running", "Inqueue", "Not pending: the scheduler placed this job."),
        ("Completed", "Inqueue", "Not pending: the scheduler placed this job."),
        ("Pending", "Inqueue", "No Unschedulable condition: the scheduler has not reported a reason yet."),
        ("Pending", "Pending", "Waiting for enqueue: the queue or the cluster cannot yet take the job's "
                               "minResources, or the scheduler has not run a session since it was created."),
    ],
)  # fmt: skip
def test_what_the_phases_say(job_phase: str, pg_phase: str, said: str) -> None:
    assert why_lines(job(job_phase), podgroup(pg_phase)) == [
        f"Job ns/j: phase {job_phase}",
        f"PodGroup j-pg: phase {pg_phase}, queue default",
        said,
    ]


def test_an_unschedulable_condition_is_the_reason_while_the_job_waits() -> None:
    condition = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
                 "message": "3/4 tasks in gang unschedulable"}  # fmt: skip
    lines = why_lines(job("Pending"), podgroup("Inqueue", [condition]))
    assert lines[-1] == "Why pending: 3/4 tasks in gang unschedulable"
    # A running Job can still have pods beyond minAvailable that do not fit: that is still the reason.
    assert why_lines(job("Running"), podgroup("Running", [condition]))[-1] == lines[-1]


def test_a_running_job_whose_podgroup_still_says_it_waits_for_pods_is_placed() -> None:
    # Written when the PodGroup was admitted and its pods did not exist yet; the next status write clears it.
    condition = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughTasks",
                 "message": "Not enough valid tasks for gang-scheduling, valid: 0, min: 1"}  # fmt: skip
    assert why_lines(job("Running"), podgroup("Inqueue", [condition]))[-1] == (
        "Not pending: the scheduler placed this job."
    )
    assert why_lines(job("Pending"), podgroup("Inqueue", [condition]))[-1] == (
        "Why pending: Not enough valid tasks for gang-scheduling, valid: 0, min: 1"
    )


@pytest.mark.parametrize(
    ("affinity", "note"),
    [
        ("ps,worker", None),
        (
            "ps,chef",
            "Note: task-topology annotations ignored (volcano.sh/task-topology-affinity: task 'chef' is not "
            "a task of this job (its tasks: ps, worker); name one of them); the job is placed as if it had "
            "none, as Volcano does: fix the annotation and the next session follows it.",
        ),
    ],
    ids=["good", "names-a-task-the-job-lacks"],
)
def test_an_ignored_task_topology_is_told(affinity: str, note: str | None) -> None:
    tf = job("Running")
    tf["spec"] = {"tasks": [{"name": "ps"}, {"name": "worker"}]}
    pg = podgroup("Running")
    pg["metadata"]["annotations"] = {"volcano.sh/task-topology-affinity": affinity}
    lines = why_lines(tf, pg)
    assert lines[2] == "Not pending: the scheduler placed this job."
    assert lines[3:] == ([note] if note else [])
