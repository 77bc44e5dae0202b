"""The sharding controller's shell: the sharding ConfigMap, nodes, bound pods and NodeShards in; NodeShard
writes out.

Everything comes from informers of our own: the ConfigMap by name (a field selector, so no other ConfigMap
is read), nodes and bound pods trimmed to what the utilisation needs, and the NodeShards. A change that can
move a node (a new config; a node added, removed, relabelled or resized; a pod's CPU on a node; a NodeShard
deleted or its scheduler's ``nodesInUse`` moved) queues one sync after ``DEBOUNCE_SECONDS``, so a burst makes
one run; a sync also runs every ``shardSyncPeriod``. With ``enableNodeEventTrigger: false`` node and pod
changes wait for that period, as in Volcano. A ConfigMap that does not parse is refused with a Warning
Event on it naming each bad field, and the last good config stays in force (none at start: no shard is
written until one parses). The decisions are ``rules``, ``assign``, ``plan`` and ``writes`` beside this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from volcano_py.api import constants as c
from volcano_py.api.bodies.node import node_capacity
from volcano_py.api.bodies.nodeshard import nodeshard_assignment
from volcano_py.api.bodies.pod import pod_node_name
from volcano_py.api.common import now_time
from volcano_py.api.objects import annotations_of, labels_of, metadata_of, name_of, spec_of, status_of
from volcano_py.api.shard import NodeShard
from volcano_py.api.sharding_config import ShardingConfig, ShardingConfigError, parse_sharding_configmap
from volcano_py.controllers.runtime.context import ControllerContext
from volcano_py.controllers.runtime.workqueue import KeyedQueue
from volcano_py.controllers.sharding.plan import plan_shards
from volcano_py.controllers.sharding.rules import node_usage, pod_cpu_milli
from volcano_py.controllers.sharding.writes import ShardWrite, shard_writes
from volcano_py.kube.client import ApiError
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import CONFIGMAPS, NODES, NODESHARDS, PODS
from volcano_py.kube.leader import Fenced
from volcano_py.kube.store import Delta, EventType, Obj
from volcano_py.log import get_logger

_log = get_logger(__name__)

DEBOUNCE_SECONDS = 0.5
RETRY_SECONDS = 2.0
INVALID_CONFIG_REASON = "InvalidShardingConfig"
_SYNC = "sync"
# What the trimmed mirrors drop of each object's metadata (the rules read names, labels and one annotation).
_UNREAD_NODE_METADATA = frozenset({"annotations", "ownerReferences", "finalizers"})
_UNREAD_POD_METADATA = frozenset({"labels", "annotations", "ownerReferences", "finalizers"})


def _trim_node(node: Obj) -> None:
    """Keep what the rules read (labels, CPU capacity): a node's status heartbeats are most of its bytes."""
    cpu = node_capacity(node).get("cpu")
    node.pop("spec", None)
    node.update(
        status={"capacity": {"cpu": cpu}},
        metadata={k: v for k, v in metadata_of(node).items() if k not in _UNREAD_NODE_METADATA},
    )


def _trim_pod(pod: Obj) -> None:
    """Keep the node, the phase, the containers' CPU requests, and whether it mirrors a static pod."""
    spec = spec_of(pod)
    meta = {k: v for k, v in metadata_of(pod).items() if k not in _UNREAD_POD_METADATA}
    if c.MIRROR_POD_ANNOTATION_KEY in annotations_of(pod):
        meta["annotations"] = {c.MIRROR_POD_ANNOTATION_KEY: ""}
    pod.update(
        spec={
            "nodeName": spec.get("nodeName"),
            "containers": [
                {
                    "resources": {
                        "requests": {"cpu": ((ctr.get("resources") or {}).get("requests") or {}).get("cpu")}
                    }
                }
                for ctr in spec.get("containers") or ()
            ],
        },
        status={"phase": status_of(pod).get("phase")},
        metadata=meta,
    )


def _node_view(node: Obj | None) -> Any:
    if node is None:
        return None
    return (labels_of(node), status_of(node))


def _pod_load(pod: Obj | None) -> tuple[str, int] | None:
    if pod is None:
        return None
    return pod_node_name(pod), pod_cpu_milli(pod)


class ShardingController:
    def __init__(
        self,
        ctx: ControllerContext,
        *,
        configmap: str,
        namespace: str,
        now: Callable[[], str] = now_time,
    ) -> None:
        self.ctx = ctx
        self.configmap, self.namespace = configmap, namespace
        self.now = now
        self.queue: KeyedQueue[str, str] = KeyedQueue(is_resync=lambda _r: True)
        self.config: ShardingConfig | None = None
        self._resync: asyncio.TimerHandle | None = None
        client = ctx.client
        self.configmaps = Informer(
            client,
            CONFIGMAPS,
            self.configmap_changed,
            namespace=namespace,
            field_selector=f"metadata.name={configmap}",
        )
        self.nodes = Informer(client, NODES, self.node_changed, trim=_trim_node)
        # Bound pods only: a pending pod holds no node's CPU.
        self.pods = Informer(client, PODS, self.pod_changed, field_selector="spec.nodeName!=", trim=_trim_pod)
        self.shards = Informer(client, NODESHARDS, self.shard_changed)
        self._informers = (self.configmaps, self.nodes, self.pods, self.shards)

    # --- the informers' handlers (no I/O) ------------------------------------------------------------------

    def _soon(self) -> None:
        self.queue.add_after(DEBOUNCE_SECONDS, _SYNC, _SYNC)

    def _node_events_trigger(self) -> bool:
        return self.config is not None and self.config.enable_node_event_trigger

    def configmap_changed(self, delta: Delta) -> None:
        where = f"{self.namespace}/{self.configmap}"
        if delta.type is EventType.DELETED:
            _log.warning("sharding configmap deleted; keeping the last config", configmap=where)
            return
        try:
            config = parse_sharding_configmap(delta.new.get("data") or {})
        except ShardingConfigError as err:
            kept = "the last good config stays" if self.config is not None else "no shard is written"
            self.ctx.recorder.record(
                delta.new, "Warning", INVALID_CONFIG_REASON, f"sharding config refused ({kept}): {err}"
            )
            _log.warning(
                "sharding config refused", configmap=where, kept=self.config is not None,
                problems=[str(problem) for problem in err.problems],
            )  # fmt: skip
            return
        if config != self.config:
            _log.info("sharding config loaded", configmap=where,
                      schedulers=[s.name for s in config.schedulers])  # fmt: skip
            self.config = config
            self._soon()

    def node_changed(self, delta: Delta) -> None:
        if self._node_events_trigger() and _node_view(delta.old) != _node_view(
            None if delta.type is EventType.DELETED else delta.new
        ):
            self._soon()

    def pod_changed(self, delta: Delta) -> None:
        after = None if delta.type is EventType.DELETED else delta.new
        if self._node_events_trigger() and _pod_load(delta.old) != _pod_load(after):
            self._soon()

    def shard_changed(self, delta: Delta) -> None:
        old = delta.old or {}
        # Our own spec and status writes come back too; they need no sync, the rest do (a deletion to undo,
        # a scheduler's nodesInUse moving the hand-over on, a hand edit to put right).
        moved = nodeshard_assignment(old) != nodeshard_assignment(delta.new)
        if delta.type is not EventType.MODIFIED or moved:
            self._soon()

    # --- the sync ------------------------------------------------------------------------------------------

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            for informer in self._informers:
                group.create_task(informer.run())
            group.create_task(self.queue.run(self._handle, 1))

    async def _handle(self, _key: str, _request: str) -> None:
        try:
            await self.sync()
        except ApiError as exc:
            _log.warning("nodeshard sync failed; retrying", error=str(exc))
            self.queue.add_after(RETRY_SECONDS, _SYNC, _SYNC)
        except Fenced as exc:  # the lease lapsed: the next leader syncs
            _log.warning("nodeshard write dropped: no longer leading", write=str(exc))

    def _schedule_resync(self, config: ShardingConfig) -> None:
        if self._resync is not None:
            self._resync.cancel()
        self._resync = self.queue.add_after(config.shard_sync_period.total_seconds(), _SYNC, _SYNC)

    async def sync(self) -> None:
        """Assign the nodes and write the NodeShards that differ from the assignment."""
        # A partial view of the nodes or pods would move nodes for nothing; of the shards, recreate them.
        await asyncio.gather(*(informer.synced.wait() for informer in self._informers))
        config = self.config
        if config is None:
            return
        self._schedule_resync(config)
        pods_by_node: dict[str, list[Obj]] = {}
        for pod in self.pods.store.values():
            pods_by_node.setdefault(pod_node_name(pod), []).append(pod)
        nodes = [node_usage(node, pods_by_node.get(name_of(node), ())) for node in self.nodes.store.values()]
        stored = {shard.name: shard for shard in map(NodeShard.model_validate, self.shards.store.values())}
        plan = plan_shards(config, nodes, list(stored.values()))
        todo = shard_writes(plan, stored, self.now())
        for write in todo.writes:
            await self._write(write)
        for name in todo.delete:
            self.ctx.ensure_leading(f"delete NodeShard {name}")
            try:
                await self.ctx.client.delete(NODESHARDS.object_path(name))
            except ApiError as exc:
                if not exc.not_found:
                    raise
            _log.info("stale nodeshard deleted", shard=name)
        for shard in plan.shards:
            if shard.choice.short_of_min_nodes is not None:
                _log.warning("nodeshard below minNodes", shard=shard.name, nodes=len(shard.nodes_desired),
                             min_nodes=shard.choice.short_of_min_nodes)  # fmt: skip
        if todo.writes or todo.delete:
            _log.info(
                "nodeshards synced", nodes=len(nodes), unassigned=len(plan.unassigned),
                written=[w.name for w in todo.writes], deleted=list(todo.delete),
            )  # fmt: skip

    async def _write(self, write: ShardWrite) -> None:
        client = self.ctx.client
        self.ctx.ensure_leading(f"write NodeShard {write.name}")
        if write.create is not None:
            try:
                await client.create(NODESHARDS.collection_path(), write.create)
                _log.info("nodeshard created", shard=write.name)
            except ApiError as exc:
                if not exc.conflict:
                    raise
                self._soon()  # created meanwhile (by a predecessor): the next sync updates it
                return
        if write.spec_patch is not None:
            await client.patch(NODESHARDS.object_path(write.name), write.spec_patch)
        if write.status_patch is not None:
            await client.patch(NODESHARDS.object_path(write.name, subresource="status"), write.status_patch)
