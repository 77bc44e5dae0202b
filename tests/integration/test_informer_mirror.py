"""The informer's mirror against a real API server: what it keeps of each object."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import PODS
from volcano_py.kube.store import Delta
from volcano_py.kube.waiting import within
from volcano_py.scheduler.runtime.cache import SchedulerCache

pytestmark = pytest.mark.integration


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"step": "created"}},
        "spec": {
            "containers": [{"name": "main", "image": "busybox"}],
            "nodeSelector": {"no-such-node": "true"},  # stays Pending: only this test writes it
        },
    }


async def test_the_mirror_keeps_no_managed_fields_and_still_sees_every_change(
    cluster: DevCluster, namespace: str
) -> None:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    seen: list[Delta] = []
    informer = Informer(client, PODS, seen.append, namespace=namespace)
    task = asyncio.create_task(informer.run())
    try:
        path = PODS.collection_path(namespace)
        await client.create(path, _pod("listed"))
        await within(informer.synced.wait(), 30)
        await client.create(path, _pod("watched"))
        await client.patch(f"{path}/listed", {"metadata": {"labels": {"step": "patched"}}})

        async def mirrored() -> None:
            while True:
                listed = informer.store.get(f"{namespace}/listed")
                if (
                    informer.store.get(f"{namespace}/watched")
                    and listed
                    and (listed["metadata"]["labels"]["step"] == "patched")
                ):
                    return
                await asyncio.sleep(0.1)

        await within(mirrored(), 30)
        served = await client.get(f"{path}/listed")
        assert served["metadata"].get("managedFields"), "the API server keeps its field ledger"
        for name in ("listed", "watched"):
            kept = informer.store.get(f"{namespace}/{name}")
            assert kept is not None
            assert "managedFields" not in kept["metadata"], f"{name}: the mirror keeps no field ledger"
            assert kept["metadata"]["uid"] and kept["kind"] == "Pod"
        assert all("managedFields" not in (d.new or {}).get("metadata", {}) for d in seen), (
            "handlers are handed the trimmed object"
        )
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()


async def test_the_schedulers_pod_mirror_keeps_what_it_reads_of_a_running_pod(
    cluster: DevCluster, namespace: str
) -> None:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    cache = SchedulerCache(client)
    task = asyncio.create_task(cache.run())
    try:
        body = _pod("running")
        body["spec"] = {"nodeName": "node-0", "containers": [{"name": "main", "image": "busybox"}]}
        await client.create(PODS.collection_path(namespace), body)
        key = f"{namespace}/running"

        async def running() -> dict[str, Any]:
            while True:
                served = await client.get(f"{PODS.collection_path(namespace)}/running")
                kept = cache.informers["pods"].store.get(key)
                if (
                    served["status"].get("containerStatuses")
                    and kept
                    and (kept["status"].get("phase") == "Running")
                ):
                    return kept
                await asyncio.sleep(0.2)

        kept = await within(running(), 60)
        status = kept["status"]
        assert status["conditions"] and status["startTime"], "what the scheduler reads is kept"
        for dropped in ("containerStatuses", "podIPs", "hostIPs"):
            assert dropped not in status, f"status.{dropped} is never read by the scheduler"
        assert "managedFields" not in kept["metadata"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()
