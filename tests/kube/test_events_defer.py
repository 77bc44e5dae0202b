"""Normal events wait for the binds they report on; Warnings do not; no event waits for ever."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from kubernetes_asyncio import client as k8s_client

from volcano_py.kube.client import KubeClient
from volcano_py.kube.events import NORMAL, WARNING, EventRecorder, ObjectRef, PendingEvent

POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns", "uid": "u1"}}


def event(kind: str) -> PendingEvent:
    return PendingEvent(ObjectRef.of(POD), kind, "Scheduled", "assigned ns/p to n1", datetime.now(UTC))


def recorder(**kwargs: float) -> EventRecorder:
    return EventRecorder(KubeClient(k8s_client.ApiClient(k8s_client.Configuration())), **kwargs)


async def test_a_normal_event_waits_until_the_binds_are_done() -> None:
    rec = recorder()
    bound = asyncio.Event()
    rec.yield_to = bound.wait
    turn = asyncio.ensure_future(rec.wait_turn(event(NORMAL)))
    await asyncio.sleep(0.05)
    assert not turn.done()
    bound.set()
    await asyncio.wait_for(turn, timeout=1.0)
    await rec.client.close()


async def test_a_warning_never_waits() -> None:
    rec = recorder()
    rec.yield_to = asyncio.Event().wait  # never set
    await asyncio.wait_for(rec.wait_turn(event(WARNING)), timeout=1.0)
    await rec.client.close()


async def test_a_normal_event_waits_no_longer_than_its_bound() -> None:
    rec = recorder(max_defer_seconds=0.05)
    rec.yield_to = asyncio.Event().wait  # binds that never end
    await asyncio.wait_for(rec.wait_turn(event(NORMAL)), timeout=1.0)
    await rec.client.close()


async def test_the_bound_counts_from_when_the_event_was_recorded() -> None:
    rec = recorder(max_defer_seconds=10.0)
    rec.yield_to = asyncio.Event().wait  # binds that never end
    late = PendingEvent(
        ObjectRef.of(POD), NORMAL, "Scheduled", "assigned", datetime.now(UTC) - timedelta(seconds=11)
    )
    await asyncio.wait_for(rec.wait_turn(late), timeout=1.0)
    await rec.client.close()
