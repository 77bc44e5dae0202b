"""Properties of sync plans over random pod populations: every replica exists exactly once afterwards."""

from __future__ import annotations

from ctl_builders import JobBuilder, PodBuilder
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.batch import JobPhase, JobState, JobStatus
from volcano_py.api.bus import Action
from volcano_py.api.job_view import resolve_job
from volcano_py.controllers.job.plan import plan_step
from volcano_py.controllers.job.podview import read_pod
from volcano_py.controllers.job.state import step_for

PHASES = ("Pending", "Running", "Succeeded", "Failed")


@st.composite
def populations(draw: st.DrawFn) -> tuple[int, int, list[tuple[str, int, str, bool]]]:
    masters = draw(st.integers(0, 3))
    workers = draw(st.integers(0, 6))
    pods = draw(
        st.lists(
            st.tuples(
                st.sampled_from(("master", "worker")),
                st.integers(0, 8),
                st.sampled_from(PHASES),
                st.booleans(),
            ),
            max_size=12,
            unique_by=lambda p: (p[0], p[1]),
        )
    )
    return masters, workers, pods


@settings(max_examples=200, deadline=None)
@given(populations())
def test_sync_creates_exactly_the_missing_replicas_and_deletes_the_surplus(
    case: tuple[int, int, list[tuple[str, int, str, bool]]],
) -> None:
    masters, workers, raw = case
    builder = JobBuilder()
    if masters:
        builder.task("master", masters)
    builder.task("worker", workers).set(minAvailable=0)
    spec = resolve_job(builder.obj())
    pods = []
    for task, index, phase, deleting in raw:
        pod = PodBuilder("job", task, index).phase(phase)
        pods.append(read_pod((pod.deleting() if deleting else pod).obj()))
    plan = plan_step(
        spec,
        JobStatus(state=JobState(phase=JobPhase.RUNNING)),
        pods,
        "Running",
        step_for(JobPhase.RUNNING, Action.SYNC_JOB),
        "2026-01-01T00:00:00Z",
    )

    wanted = {f"job-{t.name}-{i}" for t in spec.tasks for i in range(t.replicas)}
    existing = {p.name for p in pods}
    created = {f"job-{t}-{i}" for t, i in plan.create}
    assert created == wanted - existing  # nothing created twice, nothing missing
    assert set(plan.delete) == {p.name for p in pods if not p.deleting and p.name not in wanted}
    counts = plan.status
    total = (
        counts.pending
        + counts.running
        + counts.succeeded
        + counts.failed
        + counts.terminating
        + counts.unknown
    )
    assert total == len(existing | created)
