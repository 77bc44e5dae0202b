"""What one cycle's outcome turns into: Events once per reason and message (new counts in the same words
at most once per retell window), and Volcano's gauges."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import EventRecorder
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.retell import RETELL_SECONDS
from volcano_py.scheduler.runtime.cycle import CycleOutcome, Unschedulable
from volcano_py.scheduler.runtime.cycle_report import CycleReport
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics

POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns", "uid": "u1"}}


@pytest.fixture
async def report() -> AsyncIterator[CycleReport]:
    client = KubeClient(k8s_client.ApiClient(k8s_client.Configuration()))
    yield CycleReport(SchedulerMetrics(), EventRecorder(client, component="volcano"))
    await client.close()


def queued(report: CycleReport) -> list[Any]:
    events = []
    for queue in report.recorder.queues:
        while not queue.empty():
            events.append(queue.get_nowait())
    return events


def outcome(message: str, pending: int = 3) -> CycleOutcome:
    return CycleOutcome(
        result=SessionResult(timings={"open": 0.001, "allocate": 0.002, "close": 0.001}),
        warnings=(Unschedulable(POD, "FailedScheduling", message),),
        unscheduled_tasks={"ns/pg": pending},
    )


async def test_a_waiting_pod_is_told_once_until_the_reason_changes(report: CycleReport) -> None:
    report.record(outcome("0/8 nodes: insufficient nvidia.com/gpu"))
    report.record(outcome("0/8 nodes: insufficient nvidia.com/gpu"))
    [event] = queued(report)
    assert (event.type, event.reason, event.ref.name) == ("Warning", "FailedScheduling", "p")
    report.record(outcome("0/8 nodes: insufficient cpu"))
    assert [e.message for e in queued(report)] == ["0/8 nodes: insufficient cpu"]


async def test_new_counts_in_the_same_words_are_told_again_only_after_the_retell_window(
    report: CycleReport,
) -> None:
    now = [1000.0]
    report.said.clock = lambda: now[0]
    report.record(outcome("Not enough valid tasks for gang-scheduling, valid: 3, min: 20"))
    now[0] += 1
    report.record(outcome("Not enough valid tasks for gang-scheduling, valid: 8, min: 20"))
    assert [e.message for e in queued(report)] == [
        "Not enough valid tasks for gang-scheduling, valid: 3, min: 20"
    ]
    now[0] += RETELL_SECONDS
    report.record(outcome("Not enough valid tasks for gang-scheduling, valid: 19, min: 20"))
    assert [e.message for e in queued(report)] == [
        "Not enough valid tasks for gang-scheduling, valid: 19, min: 20"
    ]
    now[0] += 1
    report.record(outcome("0/8 nodes: insufficient cpu"))  # other words: told at once
    assert [e.message for e in queued(report)] == ["0/8 nodes: insufficient cpu"]


async def test_a_pod_of_a_forming_gang_is_told_only_once_it_has_waited_long_enough(
    report: CycleReport,
) -> None:
    now = [1000.0]
    report.said.clock = lambda: now[0]
    waiting = Unschedulable(POD, "FailedScheduling", "Not enough valid tasks for gang-scheduling", after=30.0)

    def cycle() -> None:
        report.record(CycleOutcome(result=SessionResult(), warnings=(waiting,)))

    cycle()
    now[0] += 29
    cycle()
    assert queued(report) == []
    now[0] += 1
    cycle()
    assert [e.message for e in queued(report)] == ["Not enough valid tasks for gang-scheduling"]
    # A gang that fills up and is short again starts a new wait.
    report.record(CycleOutcome(result=SessionResult()))
    cycle()
    now[0] += 10
    cycle()
    assert queued(report) == []


async def test_a_pod_that_recovers_and_fails_again_is_told_again(report: CycleReport) -> None:
    report.record(outcome("no room"))
    report.record(CycleOutcome(result=SessionResult()))
    report.record(outcome("no room"))
    assert len(queued(report)) == 2


async def test_unschedulable_gauges_follow_the_outcome(report: CycleReport) -> None:
    report.record(outcome("no room", pending=3))
    text = report.metrics.expose().decode()
    assert 'volcano_unschedule_task_count{job_id="ns/pg"} 3.0' in text
    assert "volcano_unschedule_job_count 1.0" in text
    assert 'volcano_action_scheduling_latency_milliseconds_count{action="allocate"} 1.0' in text
    assert (
        'volcano_plugin_scheduling_latency_milliseconds_count{OnSession="OnSessionOpen",plugin="all"}' in text
    )
    report.record(CycleOutcome(result=SessionResult()))
    text = report.metrics.expose().decode()
    assert 'job_id="ns/pg"' not in text
    assert "volcano_unschedule_job_count 0.0" in text


async def test_a_recalled_outcome_neither_tells_nor_restarts_a_forming_gangs_wait(
    report: CycleReport,
) -> None:
    now = [1000.0]
    report.said.clock = lambda: now[0]
    waiting = Unschedulable(POD, "FailedScheduling", "Not enough valid tasks for gang-scheduling", after=30.0)
    report.record(CycleOutcome(result=SessionResult(), warnings=(waiting,)))
    now[0] += 20
    # The core handed back its memo: no session ran, so nothing is told and the wait goes on.
    report.record(CycleOutcome(result=SessionResult(), unscheduled_tasks={"ns/pg": 5}, quiet=True))
    assert 'volcano_unschedule_task_count{job_id="ns/pg"} 5.0' in report.metrics.expose().decode()
    now[0] += 10
    report.record(CycleOutcome(result=SessionResult(), warnings=(waiting,)))
    assert [e.message for e in queued(report)] == ["Not enough valid tasks for gang-scheduling"]
