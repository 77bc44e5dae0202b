"""A Job status written by the controller reads back the same, in Volcano's field names."""

from __future__ import annotations

from volcano_py.api.batch import JobPhase, JobStatus, TaskState
from volcano_py.api.common import format_time
from volcano_py.api.job_view import read_status, status_to_dict
from volcano_py.controllers.job.status import transition

T1, T2, T3, T4 = (f"2026-01-01T00:00:0{i}Z" for i in range(1, 5))


def test_status_round_trips_through_the_api_shape() -> None:
    status = JobStatus(
        version=2,
        retry_count=1,
        min_available=3,
        pending=1,
        running=2,
        task_status_count={"w": TaskState(phase={"Pending": 1, "Running": 2})},
        controlled_resources={"plugin-svc": "svc"},
    )
    status = transition(transition(status, JobPhase.PENDING, T1), JobPhase.RUNNING, T2)
    body = {"status": status_to_dict(status)}
    assert body["status"]["taskStatusCount"] == {"w": {"phase": {"Pending": 1, "Running": 2}}}
    assert body["status"]["state"]["phase"] == "Running"
    assert read_status(body) == status


def test_a_phase_entered_again_moves_its_condition_to_the_end() -> None:
    status = JobStatus()
    for phase, at in [(JobPhase.PENDING, T1), (JobPhase.RUNNING, T2), (JobPhase.RESTARTING, T3),
                      (JobPhase.PENDING, T4)]:  # fmt: skip
        status = transition(status, phase, at)
    assert [(c.status, format_time(c.last_transition_time)) for c in status.conditions] == [
        ("Running", T2),
        ("Restarting", T3),
        ("Pending", T4),
    ]
