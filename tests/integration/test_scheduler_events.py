"""What the scheduler tells users through Events once work is done: nothing about finished pods.

Helpers and fixtures (``pool``, ``api``, ``start_scheduler``) come from ``test_scheduler_binding``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_scheduler_binding import (  # type: ignore[import-not-found]
    api,
    events_for,
    pod_manifest,
    podgroup_manifest,
    pods_by_name,
    pool,
    start_scheduler,
    wait_until,
)
from test_scheduler_ha import kill  # type: ignore[import-not-found]

from volcano_py.devcluster.stages import COMPLETE_AFTER
from volcano_py.kube.client import KubeClient
from volcano_py.kube.kinds import PODGROUPS, PODS

pytestmark = pytest.mark.integration
__all__ = ["api", "pool", "start_scheduler"]  # fixtures used here by name


async def group_not_found(api: KubeClient, namespace: str, pod: str) -> list[dict[str, Any]]:
    """FailedScheduling events saying the pod's PodGroup is missing (it may have had others while waiting)."""
    return [
        e
        for e in await events_for(api, namespace, pod)
        if e["reason"] == "FailedScheduling" and "not found" in e["message"]
    ]


async def test_finished_pods_of_a_deleted_podgroup_get_no_warning_even_after_a_restart(
    api: KubeClient, namespace: str, pool: str, start_scheduler: Any
) -> None:
    name = f"vc-{pool}"
    first = await start_scheduler(name)
    await api.create(PODGROUPS.collection_path(namespace), podgroup_manifest("done", 3))
    finished = [f"done-{i}" for i in range(3)]
    for pod in finished:  # the gang runs for a second, then KWOK completes each pod
        manifest = pod_manifest(pod, name, pool, group="done")
        manifest["metadata"]["annotations"][COMPLETE_AFTER] = "1s"
        await api.create(PODS.collection_path(namespace), manifest)

    async def all_succeeded() -> bool:
        pods = await pods_by_name(api, namespace)
        return all(pods[p].get("status", {}).get("phase") == "Succeeded" for p in finished)

    await wait_until(all_succeeded, "the gang's pods Succeeded", 60)
    await api.delete(PODGROUPS.object_path("done", namespace))  # as a completed job's owner does
    # A pod that still waits for a node and names a missing PodGroup is reported: its events show that the
    # scheduler ran cycles over the finished pods too, and wrote what they produced.
    await api.create(PODS.collection_path(namespace), pod_manifest("waiting", name, pool, group="missing"))

    async def reported(times: int) -> bool:
        return len(await group_not_found(api, namespace, "waiting")) >= times

    await wait_until(lambda: reported(1), "the waiting pod's FailedScheduling event", 30)
    await first.scheduler.recorder.flush()
    for pod in finished:
        assert await group_not_found(api, namespace, pod) == [], f"{pod} finished but was warned about"

    await kill(first)
    second = await start_scheduler(name)  # a new process knows nothing of what the first one said
    await wait_until(lambda: reported(2), "the restarted scheduler's event for the waiting pod", 30)
    await second.scheduler.recorder.flush()
    for pod in finished:
        assert await group_not_found(api, namespace, pod) == [], f"{pod} warned about after the restart"
    message = (await group_not_found(api, namespace, "waiting"))[0]["message"]
    assert f"PodGroup {namespace}/missing not found" in message
