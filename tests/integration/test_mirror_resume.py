"""A restarted scheduler resumes its mirror from disk: what it shows once synced is what the API server holds,
including what changed while it was down, and a file it cannot resume from is listed over."""

from __future__ import annotations

import asyncio
import dataclasses
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from volcano_py.devcluster import DevCluster
from volcano_py.kube import mirror_file
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES
from volcano_py.kube.mirror_file import MirrorFile
from volcano_py.kube.waiting import within
from volcano_py.scheduler.runtime.cache import SchedulerCache

pytestmark = pytest.mark.integration


def _pod(name: str, step: str = "created") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"step": step}},
        "spec": {
            "schedulerName": "nobody",  # no scheduler of the suite takes it
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }


@pytest.fixture
async def client(cluster: DevCluster) -> AsyncIterator[KubeClient]:
    client = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield client
    await client.close()


async def _synced(cache: SchedulerCache) -> asyncio.Task[None]:
    task = asyncio.create_task(cache.run())
    await within(cache.wait_synced(), 60)
    return task


async def _stopped(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _mirrored(cache: SchedulerCache, namespace: str) -> dict[str, str]:
    """The pods of ``namespace`` as the cache shows them: name -> their label."""
    return {
        pod["metadata"]["name"]: pod["metadata"]["labels"]["step"]
        for pod in cache.informers["pods"].store.values()
        if pod["metadata"]["namespace"] == namespace
    }


async def _saved_with_pods(client: KubeClient, namespace: str, path: Path) -> MirrorFile:
    """A first scheduler cache that mirrors two pods and saves, then stops."""
    mirror = MirrorFile(path)
    first = SchedulerCache(client, mirror=mirror)
    task = await _synced(first)
    try:
        await first.ensure_default_queues()
        pods = PODS.collection_path(namespace)
        for name in ("kept", "deleted"):
            await client.create(pods, _pod(name))

        async def seen() -> None:
            while True:
                if first.queue("root") is not None and len(_mirrored(first, namespace)) == 2:
                    return
                await asyncio.sleep(0.05)

        await within(seen(), 30)
        await first.save_mirror()
    finally:
        await _stopped(task)
    assert mirror.path.exists()
    return mirror


async def _rewritten(
    client: KubeClient,
    mirror: MirrorFile,
    *,
    cluster: str | None = None,
    podgroups_version: str | None = None,
) -> None:
    """The saved mirror written again, marked as another cluster's or its PodGroups at another version."""
    root = await client.get(QUEUES.object_path("root"))
    saved = mirror.read(root["metadata"]["uid"])
    assert saved is not None
    if podgroups_version is not None:
        saved["podgroups"] = dataclasses.replace(saved["podgroups"], resource_version=podgroups_version)
    mirror.write(cluster or root["metadata"]["uid"], saved)


async def test_a_restart_resumes_from_the_saved_mirror_and_shows_what_changed_meanwhile(
    cluster: DevCluster, namespace: str, client: KubeClient, tmp_path: Path
) -> None:
    mirror = await _saved_with_pods(client, namespace, tmp_path / "scheduler.mirror")
    pods = PODS.collection_path(namespace)
    # While no scheduler runs: one pod changes, one goes, one arrives.
    await client.patch(f"{pods}/kept", {"metadata": {"labels": {"step": "patched"}}})
    await client.delete(f"{pods}/deleted")
    await client.create(pods, _pod("arrived"))

    again = SchedulerCache(client, mirror=mirror)
    task = await _synced(again)
    try:
        informer = again.informers["pods"]
        assert informer.resumed and informer.relists == 0, "the pods were resumed, not listed"
        assert not again.mirror_expired()
        # Synced means caught up: no waiting for the watch here.
        assert _mirrored(again, namespace) == {"kept": "patched", "arrived": "created"}
        listed = await client.get(pods)
        assert {p["metadata"]["name"] for p in listed["items"]} == {"kept", "arrived"}
    finally:
        await _stopped(task)


async def _restarted_after_a_delete(
    client: KubeClient, namespace: str, mirror: MirrorFile
) -> tuple[SchedulerCache, asyncio.Task[None]]:
    """One pod deleted while no scheduler runs, then a cache started on ``mirror`` and synced."""
    await client.delete(f"{PODS.collection_path(namespace)}/deleted")
    again = SchedulerCache(client, mirror=mirror)
    return again, await _synced(again)


def _aged(mirror: MirrorFile, seconds: float) -> None:
    """The file's header says it was saved ``seconds`` earlier than it was."""
    whole = mirror.path.read_bytes()
    (length,) = struct.unpack_from("<Q", whole)
    header = orjson.loads(whole[8 : 8 + length])
    header["saved_at"] -= seconds
    mirror.path.write_bytes(mirror_file.frame(orjson.dumps(header)) + whole[8 + length :])


async def test_a_mirror_older_than_the_servers_watch_history_is_not_read(
    cluster: DevCluster, namespace: str, client: KubeClient, tmp_path: Path
) -> None:
    mirror = await _saved_with_pods(client, namespace, tmp_path / "scheduler.mirror")
    # PodGroups from the cluster's first moments: their CRD, and the server's watch history of them, came
    # later, so the server cannot watch them from there.
    await _rewritten(client, mirror, podgroups_version="2")
    _aged(mirror, 600)  # a file this old is checked before it is read
    await client.delete(f"{PODS.collection_path(namespace)}/deleted")

    again = SchedulerCache(client, mirror=mirror)
    # One watch request per kind says so, before the file is read.
    groups = PODGROUPS.collection_path()
    assert not await again.informers["podgroups"].watchable_from("2", 5.0)
    current = (await client.get(groups))["metadata"]["resourceVersion"]
    assert await again.informers["podgroups"].watchable_from(current, 0.5)
    task = await _synced(again)
    try:
        assert not any(informer.resumed for informer in again.informers.values()), "nothing read from it"
        assert again.informers["pods"].relists == 1
        assert _mirrored(again, namespace) == {"kept": "created"}
    finally:
        await _stopped(task)


async def test_a_kind_resumed_from_too_far_back_marks_the_mirror_expired(
    cluster: DevCluster, namespace: str, client: KubeClient, tmp_path: Path
) -> None:
    mirror = await _saved_with_pods(client, namespace, tmp_path / "scheduler.mirror")
    # The PodGroups are from the first moments; the file is new, so it is read without a check first.
    await _rewritten(client, mirror, podgroups_version="2")
    again, task = await _restarted_after_a_delete(client, namespace, mirror)
    try:
        assert again.informers["pods"].resumed and again.informers["pods"].relists == 0
        groups = again.informers["podgroups"]
        assert groups.resumed and groups.relists == 1 and groups.mirror_expired
        # So the scheduler reads the listed cluster rather than the mirror it started from.
        assert again.mirror_expired()
        assert _mirrored(again, namespace) == {"kept": "created"}
    finally:
        await _stopped(task)


async def test_a_mirror_of_another_cluster_is_not_resumed(
    cluster: DevCluster, namespace: str, client: KubeClient, tmp_path: Path
) -> None:
    mirror = await _saved_with_pods(client, namespace, tmp_path / "scheduler.mirror")
    await _rewritten(client, mirror, cluster="the-uid-of-another-clusters-root-queue")
    again, task = await _restarted_after_a_delete(client, namespace, mirror)
    try:
        assert not any(informer.resumed for informer in again.informers.values())
        assert _mirrored(again, namespace) == {"kept": "created"}
    finally:
        await _stopped(task)


async def _written(mirror: MirrorFile, seconds: float) -> None:
    async def exists() -> None:
        while True:
            if mirror.path.exists():
                return
            await asyncio.sleep(0.1)

    await within(exists(), seconds)


async def test_a_scheduler_cache_saves_its_mirror_as_soon_as_it_is_synced(
    cluster: DevCluster, client: KubeClient, tmp_path: Path
) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    cache = SchedulerCache(client, mirror=mirror)
    task = await _synced(cache)
    try:
        await cache.ensure_default_queues()

        # Not at the first 30 s tick: a restart soon after the first start resumes too.
        await _written(mirror, 10)
        root = cache.queue("root")
        assert root is not None
        saved = mirror.read(root["metadata"]["uid"])
        assert saved is not None
        # What the server held at the saved version, exactly: the live store may have moved on since (other
        # tests' pods come and go in the shared cluster).
        pods = saved["pods"]
        path, labels, fields = pods.selection
        selected = {"labelSelector": labels, "fieldSelector": fields}
        then = await client.get(
            path,
            resourceVersion=pods.resource_version,
            resourceVersionMatch="Exact",
            **{k: v for k, v in selected.items() if v},
        )
        assert sorted(p["metadata"]["uid"] for p in pods.items) == sorted(
            p["metadata"]["uid"] for p in then["items"]
        )
    finally:
        await _stopped(task)


async def test_a_scheduler_cache_holds_its_save_while_told_to_wait(
    cluster: DevCluster, client: KubeClient, tmp_path: Path
) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    cache = SchedulerCache(client, mirror=mirror)
    held = [True]  # as the scheduler's binder says while its bind queue is full
    cache.save_waits = lambda: held[0]
    task = await _synced(cache)
    try:
        await cache.ensure_default_queues()
        await asyncio.sleep(2.5)
        assert not mirror.path.exists(), "saved while the binds came first"
        held[0] = False

        await _written(mirror, 5)
    finally:
        await _stopped(task)
