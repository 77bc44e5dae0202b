"""What a test or benchmark creates on a ``DevCluster``: namespaces, fake nodes, CRDs.

A mixin of ``DevCluster``: its methods use only the cluster's kubectl and API access (``ClusterAccess``), so
the process lifecycle in ``cluster.py`` and the objects made on the cluster are read apart.
"""

from __future__ import annotations

import functools
import json
import subprocess
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from volcano_py.api.bodies.conditions import any_true
from volcano_py.api.bodies.node import node_conditions, node_taints
from volcano_py.api.objects import name_of, spec_of, status_of
from volcano_py.devcluster.dra import fake_gpu_driver
from volcano_py.devcluster.nodes import GpuSharing, Topology, node_manifests

NODES_PER_KUBECTL = 100
PARALLEL_KUBECTLS = 4


class ClusterAccess(Protocol):
    def kubectl(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]: ...

    def get_json(self, path: str) -> Any: ...

    def wait_for(
        self, what: str, ready: Callable[[], bool], timeout: float = 60.0, *, interval: float = 0.2
    ) -> None: ...

    def wait_for_default_service_account(self, namespace: str, timeout: float = 60.0) -> None: ...

    def ready_nodes(self) -> set[str]: ...

    def _is_served(self, path: str) -> bool: ...


class ClusterObjects:
    def create_namespace(
        self: ClusterAccess, name: str | None = None, *, labels: Mapping[str, str] | None = None
    ) -> str:
        """Create a namespace (``t-<random>`` by default) and wait until pods can be created in it."""
        namespace = name or f"t-{uuid.uuid4().hex[:10]}"
        manifest = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": dict(labels or {})},
        }
        self.kubectl("create", "-f", "-", input=json.dumps(manifest))
        self.wait_for_default_service_account(namespace)
        return namespace

    def create_nodes(
        self: ClusterAccess,
        count: int,
        *,
        prefix: str = "node-",
        cpu: str = "32",
        memory: str = "256Gi",
        pods: int = 110,
        gpus: int = 8,
        labels: Mapping[str, str] | None = None,
        topology: Topology | None = None,
        start: int = 0,
        timeout: float | None = None,
        gpu_sharing: GpuSharing | None = None,
    ) -> list[str]:
        """Create fake nodes (see ``nodes.node_manifests``) and wait until they are all ready.

        ``timeout`` defaults to 2 minutes plus a quarter second per node (measured: ~10-15 nodes/s on two
        busy cores).
        """
        manifests = node_manifests(
            count,
            prefix=prefix,
            cpu=cpu,
            memory=memory,
            pods=pods,
            gpus=gpus,
            labels=labels,
            topology=topology,
            start=start,
            gpu_sharing=gpu_sharing,
        )
        return _create_ready(self, manifests, timeout)

    def create_node_manifests(
        self: ClusterAccess, manifests: Sequence[dict[str, Any]], *, timeout: float | None = None
    ) -> list[str]:
        """Create these Node manifests (``nodes.node_manifests``: one call per kind of node, for a cluster of
        several kinds) and wait until they are all ready, as ``create_nodes`` does."""
        return _create_ready(self, manifests, timeout)

    def publish_fake_gpus(self: ClusterAccess, nodes: Sequence[str], gpus: int) -> None:
        """Publish ``gpus`` DRA devices per node as a GPU driver would (``devcluster.dra``)."""
        manifests = fake_gpu_driver(nodes, gpus)
        for i in range(0, len(manifests), NODES_PER_KUBECTL):
            chunk = manifests[i : i + NODES_PER_KUBECTL]
            self.kubectl(
                "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": chunk})
            )

    def ready_nodes(self: ClusterAccess) -> set[str]:
        """Nodes that are Ready and carry none of the node.kubernetes.io/* taints.

        Admission taints every new node not-ready; KCM lifts the taint a few seconds after kwok reports
        Ready. Until then a scheduler that honours taints would refuse the node, so that is not "ready".
        """
        listing = self.get_json("/api/v1/nodes")
        ready = set()
        for node in listing.get("items", []):
            if any_true(node_conditions(node), "Ready") and not any(
                str(t.get("key", "")).startswith("node.kubernetes.io/") for t in node_taints(node)
            ):
                ready.add(name_of(node))
        return ready

    def delete_nodes(self: ClusterAccess, prefix: str) -> list[str]:
        """Delete every node whose name starts with ``prefix``; returns their names."""
        if not prefix:
            raise ValueError("prefix is empty; it would delete every node")
        names = sorted(name_of(n) for n in self.get_json("/api/v1/nodes").get("items", []))
        doomed = [name for name in names if name.startswith(prefix)]
        for chunk in range(0, len(doomed), 200):
            self.kubectl("delete", "node", "--wait=true", *doomed[chunk : chunk + 200])
        return doomed

    def apply_crds(self: ClusterAccess, path: Path, timeout: float = 60.0) -> list[str]:
        """Apply CRD manifests (a file or a directory) and wait until every one is Established.

        Server-side apply: Volcano-sized CRDs overflow the annotation that client-side apply stores.
        """
        if not Path(path).exists():
            raise FileNotFoundError(f"{path}: no such CRD file or directory")
        applied = self.kubectl("apply", "--server-side", "--force-conflicts", "-o", "name", "-f", str(path))
        names = [
            line.strip()
            for line in applied.stdout.splitlines()
            if line.strip().startswith("customresourcedefinition")
        ]
        for name in names:
            crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name.split('/')[-1]}"
            # Polled here rather than by `kubectl wait`, which fails outright ("status.conditions accessor
            # error") when it reads a CRD the API server has not given a status yet.
            established = functools.partial(_established, self, crd_path)
            self.wait_for(f"{name} to be Established", established, timeout)
            # Established is not yet served: for a moment lists answer 429 "storage is (re)initializing".
            spec = spec_of(self.get_json(crd_path))
            version = next(v["name"] for v in spec["versions"] if v.get("served", True))
            served = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}?limit=1"
            self.wait_for(f"{name} to be served", functools.partial(self._is_served, served), timeout)
        return names


def _established(cluster: ClusterAccess, path: str) -> bool:
    return any_true(status_of(cluster.get_json(path)).get("conditions") or (), "Established")


def _create_ready(
    cluster: ClusterAccess, manifests: Sequence[dict[str, Any]], timeout: float | None
) -> list[str]:
    """Create the Node ``manifests``, a few kubectls in parallel, and wait until they are all Ready."""
    names = [name_of(m) for m in manifests]
    if not names:
        return []
    # kubectl creates a List one object at a time; a few kubectls in parallel make 1,000s of nodes quick.
    chunks = [manifests[i : i + NODES_PER_KUBECTL] for i in range(0, len(manifests), NODES_PER_KUBECTL)]
    with ThreadPoolExecutor(max_workers=min(PARALLEL_KUBECTLS, len(chunks))) as pool:
        done = pool.map(
            lambda chunk: cluster.kubectl(
                "create",
                "-f",
                "-",
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": chunk}),
            ),
            chunks,
        )
        list(done)  # re-raises the first KubectlError
    wanted = set(names)
    # Listing every node is heavy at thousands of nodes: poll less often the more there are.
    cluster.wait_for(
        f"{len(names)} nodes ({names[0]}, ...) to be Ready",
        lambda: wanted <= cluster.ready_nodes(),
        timeout if timeout is not None else 120.0 + 0.25 * len(names),
        interval=min(2.0, max(0.2, len(names) / 1000)),
    )
    return names
