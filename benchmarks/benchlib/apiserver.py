"""What benchmarks on a control plane read of the API server and do to it, the same way in each: its own
counters (``api_counts``, and their cost ``per_pod``), counts without a full list, creates many in flight
that survive the server's 429s and 5xx (``create_all``), a cluster filled with bound gangs (``fill``), when
each pod of a namespace was first seen bound (``BindWatch``), and a namespace emptied between runs
(``clear``). Progress goes to stderr under the running benchmark's name."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.benchlib.peer_yunikorn import is_placeholder
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import PODGROUPS, PODS
from volcano_py.kube.waiting import event_within

JSON = dict[str, Any]
GANG = 10


def progress(message: str) -> None:
    print(f"[{Path(sys.argv[0]).stem}] {message}", file=sys.stderr, flush=True)


def api_counts(cluster: DevCluster) -> dict[str, float]:
    """The API server's counters: requests by ``VERB resource[/subresource]``, watch events sent by kind.

    The difference between two scrapes around a shape is what that shape cost the API server, by kind of
    work; between systems it is what the binding process adds (the creator and KWOK are the same for both).
    """
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "apiserver_request_total":
                resource = labels.get("resource", "")
                if labels.get("subresource"):
                    resource += "/" + labels["subresource"]
                key = f"{labels.get('verb', '')} {resource}"
            elif sample.name == "apiserver_watch_events_total":
                key = f"WATCH-EVENT {labels.get('kind', '') or labels.get('resource', '')}"
            elif sample.name == "apiserver_terminated_watchers_total":
                # Watchers the server closed for reading too slowly; each resumes, and is sent again what
                # its buffer held.
                key = f"WATCH-CUT {labels.get('resource', '')}"
            else:
                continue
            counts[key] = counts.get(key, 0.0) + sample.value
    return counts


def per_pod(before: dict[str, float], after: dict[str, float], pods: int) -> dict[str, float]:
    """Requests (``VERB resource``) and watch events sent (``WATCH-EVENT kind``) per pod, from two scrapes of
    ``api_counts``, the largest first, without those under 0.01 per pod (noise of the harness): what the
    pods' binding cost the API server, by kind of work (node heartbeats included)."""
    rates = {key: (after[key] - before.get(key, 0.0)) / max(1, pods) for key in after}
    return {key: round(rate, 3) for key, rate in sorted(rates.items(), key=lambda kv: -kv[1]) if rate >= 0.01}


async def count(client: KubeClient, path: str) -> int:
    """Objects in a collection, from one item and the server's remaining count (no full list)."""
    page = await client.get(path, limit=1)
    return len(page.get("items") or []) + int((page.get("metadata") or {}).get("remainingItemCount") or 0)


async def count_where(client: KubeClient, path: str, field_selector: str) -> int:
    """Objects matching a field selector, by pages: the server gives no remaining count under a selector."""
    total, token = 0, ""
    while True:
        page = await client.get(
            path, limit=500, fieldSelector=field_selector, **({"continue": token} if token else {})
        )
        total += len(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return total


async def resource_version(client: KubeClient, path: str) -> str:
    return str((await client.get(path, limit=1))["metadata"]["resourceVersion"])


async def create_all(client: KubeClient, bodies: list[tuple[str, dict[str, Any]]], concurrency: int) -> None:
    queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    for item in bodies:
        queue.put_nowait(item)
    done = [0]

    async def worker() -> None:
        while not queue.empty():
            path, body = queue.get_nowait()
            while True:
                try:
                    await client.create(path, body)
                    break
                except ApiError as exc:
                    if exc.conflict:
                        break
                    if exc.status not in (429, 500, 503, 504):
                        raise
                    await asyncio.sleep(0.2)
            done[0] += 1
            if done[0] % 2000 == 0:
                progress(f"created {done[0]}/{len(bodies)}")

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def fill(
    kubeconfig: str, nodes: int, pods: int, concurrency: int, namespace: str, gang: int = GANG
) -> None:
    """``pods`` pods in gangs of ``gang``, each gang with its PodGroup, created bound (round-robin)."""
    client = KubeClient(await load_api_client(kubeconfig))
    try:
        groups = [
            (PODGROUPS.collection_path(namespace), api_podgroup(f"run-{j}", gang))
            for j in range(pods // gang)
        ]
        await create_all(client, groups, concurrency)
        members = [
            (
                PODS.collection_path(namespace),
                api_pod(f"run-{j}-{i}").group(f"run-{j}").on(f"node-{(j * gang + i) % nodes}").obj(),
            )
            for j in range(pods // gang)
            for i in range(gang)
        ]
        await create_all(client, members, concurrency)
    finally:
        await client.close()


class BindWatch:
    """When each pod of a namespace was first seen bound (and created, for the pods ``created`` stamps)."""

    def __init__(self, client: KubeClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.bound: dict[str, float] = {}
        self.node: dict[str, str] = {}  # the node each was bound to
        self.created: dict[str, float] = {}
        self.changed = asyncio.Event()

    async def next_change(self, within: float) -> None:
        """Until the next pod is seen bound, at most ``within`` seconds."""
        self.changed.clear()
        await event_within(self.changed, within)

    def _seen(self, obj: JSON) -> None:
        # A pod YuniKorn makes to hold a gang's room is not the workload's (peer_yunikorn).
        if (node := (obj.get("spec") or {}).get("nodeName")) and not is_placeholder(obj):
            self.bound.setdefault(obj["metadata"]["name"], time.time())
            self.node.setdefault(obj["metadata"]["name"], str(node))
            self.changed.set()

    async def from_now(self) -> asyncio.Task[None]:
        """``run`` in a task, from the namespace's pods as they are now: the caller cancels it."""
        since = await resource_version(self.client, PODS.collection_path(self.namespace))
        return asyncio.create_task(self.run(since))

    async def run(self, since: str) -> None:
        path = PODS.collection_path(self.namespace)
        query: dict[str, str | int] = {"watch": "true", "allowWatchBookmarks": "true",
                                       "resourceVersion": since, "timeoutSeconds": 3600}  # fmt: skip
        while True:
            try:
                async for event in self.client.stream(path, query, read_timeout=3600):
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        raise RuntimeError(f"watch error: {obj}")
                    query["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion", since)
                    if event.get("type") in ("ADDED", "MODIFIED"):
                        self._seen(obj)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a dropped or expired watch: catch up from a list, then watch again
                progress(f"watch of {self.namespace} dropped ({exc!r}); listing and resuming")
                await asyncio.sleep(0.5)
                query["resourceVersion"] = await self._relist(path)

    async def _relist(self, path: str) -> str:
        token = ""
        while True:
            page = await self.client.get(path, limit=500, **({"continue": token} if token else {}))
            for obj in page.get("items") or []:
                self._seen(obj)
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return str(page["metadata"]["resourceVersion"])


async def _names(client: KubeClient, path: str) -> list[str]:
    names: list[str] = []
    token = ""
    while True:
        page = await client.get(path, limit=1000, **({"continue": token} if token else {}))
        names += [item["metadata"]["name"] for item in page.get("items") or ()]
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return names


async def _delete_each(client: KubeClient, path: str, options: dict[str, Any], concurrency: int) -> None:
    """One DELETE per pod, many in flight: the API server runs a delete-collection's deletes one at a
    time (``--delete-collection-workers`` is 1), 20-odd pods a second at 50,000 pods on 2 cores."""
    limit = asyncio.Semaphore(concurrency)

    async def one(name: str) -> None:
        # Gone already, or left for the delete-collection below.
        async with limit:
            with contextlib.suppress(ApiError, TimeoutError, aiohttp.ClientError):
                await client.request("DELETE", f"{path}/{name}", body=options, request_timeout=60)

    await asyncio.gather(*(one(name) for name in await _names(client, path)))


async def _clear_kind(client: KubeClient, path: str, what: str, concurrency: int) -> None:
    """Delete every object of ``path`` (grace 0) and wait until none is left.

    Each object is deleted by its own request first; what is left then goes by delete-collection, which
    outlives the API server's request timeout at 10,000 objects on 2 cores (504 after deleting part of
    them), so it is repeated until the collection is empty.
    """
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    await _delete_each(client, path, options, concurrency)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        try:
            await client.request("DELETE", path, body=options, request_timeout=120)
        except (ApiError, TimeoutError, aiohttp.ClientError) as exc:
            progress(f"deleting {what}: {exc!r}; again")
        if not (await client.get(path, limit=1)).get("items"):
            return


async def clear(client: KubeClient, cluster: DevCluster, namespace: str, concurrency: int = 64) -> None:
    """Delete the shape's pods, then its PodGroups: the next shape starts clean."""
    await _clear_kind(client, PODS.collection_path(namespace), f"the pods of {namespace}", concurrency)
    await _clear_kind(
        client, PODGROUPS.collection_path(namespace), f"the PodGroups of {namespace}", concurrency
    )
    cluster.kubectl("delete", "namespace", namespace, "--wait=false")
