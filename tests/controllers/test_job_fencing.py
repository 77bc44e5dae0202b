"""A controller that lost its lease (frozen past it, say) creates and deletes no pod it had planned."""

from __future__ import annotations

from typing import Any

import pytest
from ctl_builders import JobBuilder  # type: ignore[import-not-found]

from volcano_py.controllers.flow.worker import FlowControllers
from volcano_py.controllers.job.plan import Plan
from volcano_py.controllers.job.worker import JobWorker
from volcano_py.controllers.runtime.context import ControllerContext, ControllerOptions
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.kube.leader import Fenced


class Recording:
    """A client that records every write and answers it."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []

    async def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.writes.append(("create", body["metadata"]["name"]))
        return body

    async def patch(self, path: str, *_: Any) -> dict[str, Any]:
        self.writes.append(("patch", path.rsplit("/", 1)[-1]))
        return {}

    async def delete(self, path: str, *_: Any) -> dict[str, Any]:
        self.writes.append(("delete", path.rsplit("/", 1)[-1]))
        return {}


@pytest.mark.parametrize("leading", [True, False])
async def test_planned_pod_writes_go_out_only_while_the_fence_holds(leading: bool) -> None:
    client = Recording()
    asked: list[str] = []

    def fence(what: str) -> bool:
        asked.append(what)
        return leading

    ctx = ControllerContext(
        options=ControllerOptions(),
        client=client,  # type: ignore[arg-type]
        recorder=None,  # type: ignore[arg-type]
        metrics=ControllerMetrics(),
        may_write=fence,
    )
    body = JobBuilder("job").task("w", replicas=2).obj()
    worker = JobWorker(ctx)
    plan = Plan(create=(("w", 0), ("w", 1)), delete=("job-w-9",))
    if leading:
        await worker._execute(ctx.spec(body), body, plan, None, {})
        assert sorted(client.writes) == [
            ("create", "job-w-0"), ("create", "job-w-1"), ("delete", "job-w-9"), ("patch", "job-w-9")
        ]  # fmt: skip
    else:
        with pytest.raises(Fenced):
            await worker._execute(ctx.spec(body), body, plan, None, {})
        assert client.writes == []
    assert sorted(asked) == [
        f"create pod {body['metadata']['namespace']}/job-w-0",
        f"create pod {body['metadata']['namespace']}/job-w-1",
        f"delete pod {body['metadata']['namespace']}/job-w-9",
    ]


@pytest.mark.parametrize("leading", [True, False])
async def test_a_cronjob_or_jobflow_creates_and_deletes_jobs_only_while_the_fence_holds(
    leading: bool,
) -> None:
    client = Recording()
    ctx = ControllerContext(
        options=ControllerOptions(),
        client=client,  # type: ignore[arg-type]
        recorder=RecordingEvents(),  # type: ignore[arg-type]
        metrics=ControllerMetrics(),
        may_write=lambda _what: leading,
    )
    flows = FlowControllers(ctx)
    owner = {"kind": "CronJob", "metadata": {"name": "nightly", "namespace": "ns"}}
    job = {"metadata": {"name": "nightly-29000000", "namespace": "ns"}}
    if leading:
        await flows._create_job(owner, job)
        await flows._delete_job("ns", "nightly-28999999")
        assert client.writes == [("create", "nightly-29000000"), ("delete", "nightly-28999999")]
    else:
        with pytest.raises(Fenced):
            await flows._create_job(owner, job)
        with pytest.raises(Fenced):
            await flows._delete_job("ns", "nightly-28999999")
        assert client.writes == []


class RecordingEvents:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def record(self, _obj: dict[str, Any], event_type: str, reason: str, _message: str) -> None:
        self.events.append((event_type, reason))
