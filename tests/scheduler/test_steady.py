"""Which jobs are steady (taken from the per-queue sums instead of walked), and the sums themselves."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scheduler.builders import make_pg, make_pod
from volcano_py.resources import Resource
from volcano_py.scheduler.framework.job import JobInfo
from volcano_py.scheduler.framework.steady import SteadyJobs, steady_now
from volcano_py.scheduler.framework.task import TaskInfo

SCHEDULED = ("Scheduled", "True", "", "")
UNSCHEDULABLE = ("Unschedulable", "True", "NotEnoughResources", "1/2 tasks in gang unschedulable")


def job(
    *pods: dict[str, Any], phase: str = "Running", said: object = SCHEDULED, settled: bool = True
) -> JobInfo:
    info = JobInfo.from_podgroup(make_pg("pg", len(pods) or 1, phase=phase).min_res(cpu="1").obj()).fresh()
    for pod in pods:
        info.add_task(TaskInfo.from_pod(pod))
    if settled:
        info.settled = (info.version, said)
    return info


def running(name: str) -> dict[str, Any]:
    return make_pod(name).req(cpu="2").group("pg").running("n1").obj()


@pytest.mark.parametrize(
    ("case", "made", "steady"),
    [
        ("pods running, settled, told Scheduled", lambda: job(running("a"), running("b")), True),
        (
            "a pod done, one running",
            lambda: job(running("a"), make_pod("b").group("pg").phase("Succeeded").obj()),
            True,
        ),
        ("no pods (a finished Job's PodGroup)", lambda: job(phase="Completed", said=None), True),
        ("a pod waiting", lambda: job(running("a"), make_pod("b").group("pg").obj()), False),
        ("a pod bound, not started", lambda: job(make_pod("a").group("pg").node("n1").obj()), True),
        (
            "a pod terminating",
            lambda: job(make_pod("a").group("pg").running("n1").terminating().obj()),
            False,
        ),
        ("not settled by a session", lambda: job(running("a"), settled=False), False),
        ("Inqueue: proportion counts what it is owed", lambda: job(running("a"), phase="Inqueue"), False),
        ("Pending: enqueue decides it", lambda: job(phase="Pending", said=None), False),
        (
            "told it is unschedulable: only a session says it still is",
            lambda: job(running("a"), said=UNSCHEDULABLE),
            False,
        ),
    ],
)
def test_which_jobs_are_steady(case: str, made: Any, steady: bool) -> None:
    assert steady_now(made()) is steady, case


def test_a_change_after_the_session_that_settled_it_unsettles_a_job() -> None:
    info = job(running("a"))
    info.add_task(TaskInfo.from_pod(running("b")))  # its version moved on
    assert not steady_now(info)


def test_steady_jobs_are_summed_per_queue_and_taken_out_as_they_were_put_in() -> None:
    steady = SteadyJobs()
    first, second = job(running("a"), running("b")), job(running("c"))
    second.uid = "default/other"
    steady.judge(first, first.uid)
    steady.judge(second, second.uid)
    assert steady.held_by("default") == Resource({"cpu": 6000})
    # What it holds beyond minResources (1 CPU): Running jobs only.
    elastic = [c.resource * c.n for c in steady.elastic["default"].values()]
    assert sum(elastic, Resource()) == Resource({"cpu": 4000})
    first.add_task(TaskInfo.from_pod(make_pod("d").group("pg").obj()))  # a pod joins: judged again
    steady.judge(first, first.uid)
    assert set(steady.jobs) == {"default/other"}
    assert steady.held_by("default") == Resource({"cpu": 2000})
    steady.judge(None, "default/other")  # gone
    assert not steady.jobs and steady.held_by("default") == Resource()
