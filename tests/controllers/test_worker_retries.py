"""A controller's work item whose write got no answer at all (the API server restarting, a connection reset,
a timeout) is tried again, as one the API server refused is: before, only a refusal (ApiError) was, and the
work queue logged the rest and dropped the item, so a command or a pod's eviction acted on by no policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp
import pytest
from ctl_builders import JobBuilder  # type: ignore[import-not-found]

from volcano_py.api.bus import Action, Event
from volcano_py.controllers.flow.worker import FlowControllers
from volcano_py.controllers.job.policies import Request
from volcano_py.controllers.job.worker import JobWorker
from volcano_py.controllers.queue.worker import QueueWorker
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.client import ApiError

FAILURES: dict[str, Callable[[], BaseException]] = {
    "refused-500": lambda: ApiError(500, "InternalError", "etcd leader changed"),
    "connection-refused": lambda: aiohttp.ClientConnectionError("Cannot connect to host: connection refused"),
    "disconnected": lambda: aiohttp.ServerDisconnectedError(),
    "timed-out": lambda: TimeoutError(),
    "reset": lambda: ConnectionResetError(104, "Connection reset by peer"),
}


def context() -> ControllerContext:
    ctx = ControllerContext(
        options=ControllerOptions(), client=None, recorder=None, metrics=ControllerMetrics()
    )  # type: ignore[arg-type]
    ctx.jobs[("ns", "job")] = JobBuilder("job").task("w", replicas=2).obj()
    return ctx


def failing(error: Callable[[], BaseException]) -> Callable[..., Any]:
    async def reconcile(*_: Any) -> None:
        raise error()

    return reconcile


def later(queue: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """What ``queue`` is asked to do again later (key, request)."""
    asked: list[tuple[Any, Any]] = []
    monkeypatch.setattr(queue, "add_after", lambda _delay, key, request: asked.append((key, request)))
    return asked


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
@pytest.mark.parametrize(
    "request_",
    [
        pytest.param(Request(action=Action.ABORT_JOB), id="command"),
        pytest.param(Request(event=Event.POD_EVICTED, task="w", pod="job-w-0"), id="pod-evicted"),
    ],
)
async def test_a_job_request_whose_write_failed_is_tried_again_as_it_was(
    failure: str, request_: Request, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context()
    worker = JobWorker(ctx)
    monkeypatch.setattr(worker, "_reconcile", failing(FAILURES[failure]))
    asked = later(ctx.job_queue, monkeypatch)
    await worker.handle(("ns", "job"), request_)
    assert asked == [(("ns", "job"), request_)]


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
async def test_a_queue_action_whose_write_failed_is_tried_again(
    failure: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context()
    worker = QueueWorker(ctx)
    monkeypatch.setattr(worker, "_reconcile", failing(FAILURES[failure]))
    asked = later(ctx.queue_queue, monkeypatch)
    await worker.handle("research", "CloseQueue")
    assert asked == [("research", "CloseQueue")]


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
async def test_a_flow_sync_whose_write_failed_is_tried_again(
    failure: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    flows = FlowControllers(context())
    asked = later(flows.flows, monkeypatch)
    handle = flows._guard(failing(FAILURES[failure]), flows.flows)
    await handle(("ns", "flow"), "sync")
    assert asked == [(("ns", "flow"), "sync")]
