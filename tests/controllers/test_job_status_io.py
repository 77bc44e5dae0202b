"""A Job status written by the controller reads back the same, in Volcano's field names."""

from __future__ import annotations

from volcano_py.api.batch import JobPhase
from volcano_py.controllers.job.status import Counts, JobStatus, read_status, status_to_dict, transition


def test_status_round_trips_through_the_api_shape() -> None:
    status = JobStatus(
        version=2,
        retry_count=1,
        min_available=3,
        counts=Counts(pending=1, running=2, tasks={"w": {"Pending": 1, "Running": 2}}),
        controlled_resources={"plugin-svc": "svc"},
    )
    status = transition(transition(status, JobPhase.PENDING, "t1"), JobPhase.RUNNING, "t2")
    body = {"status": status_to_dict(status)}
    assert body["status"]["taskStatusCount"] == {"w": {"phase": {"Pending": 1, "Running": 2}}}
    assert body["status"]["state"]["phase"] == "Running"
    assert read_status(body) == status


def test_a_phase_entered_again_moves_its_condition_to_the_end() -> None:
    status = JobStatus()
    for phase, at in [(JobPhase.PENDING, "t1"), (JobPhase.RUNNING, "t2"), (JobPhase.RESTARTING, "t3"),
                      (JobPhase.PENDING, "t4")]:  # fmt: skip
        status = transition(status, phase, at)
    assert status.conditions == (("Running", "t2"), ("Restarting", "t3"), ("Pending", "t4"))
