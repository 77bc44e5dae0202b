"""The scheduler's word on its NodeShard: which of the shard's nodes it uses (``status.nodesInUse``).

After each cycle, the runner hands this the NodeShards that cycle's snapshot was built from. The nodes the
session could use (the shard's desired nodes no other scheduler still uses: ``framework/sharding.py``) are
written as ``nodesInUse``, the desired ones it waits for as ``nodesToAdd``, as Volcano's scheduler does, and
only when that differs from what the shard says. A node taken out of the shard is thus dropped from
``nodesInUse`` only after a cycle that no longer placed on it, and the sharding controller hands it to its new
shard only then. The write is an update of the status subresource at the version read: a conflict (the
controller changed the shard meanwhile) is left to the next cycle, which reads the newer shard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.bodies.nodeshard import (
    nodeshard_nodes_in_use,
    nodeshard_nodes_to_add,
    nodeshard_nodes_to_remove,
    with_nodeshard_status,
)
from volcano_py.api.common import now_time
from volcano_py.api.objects import name_of, resource_version_of
from volcano_py.api.shard import NodeShardStatus, shard_status
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.kinds import NODESHARDS
from volcano_py.log import get_logger
from volcano_py.scheduler.core import Sharding, shard_scope

_log = get_logger(__name__)

Obj = Mapping[str, Any]


def _said(obj: Obj) -> tuple[list[str], list[str], list[str]]:
    return (
        sorted(nodeshard_nodes_in_use(obj)),
        sorted(nodeshard_nodes_to_add(obj)),
        sorted(nodeshard_nodes_to_remove(obj)),
    )


def status_update(sharding: Sharding, nodeshards: Sequence[Obj]) -> Obj | None:
    """The NodeShard to write back (its status replaced), or None when there is nothing to say: sharding
    off, no shard of ours, a malformed one, or a status that already says it."""
    own = next((s for s in nodeshards if name_of(s) == sharding.name), None)
    if own is None:
        return None
    try:
        scope = shard_scope(sharding, nodeshards)
    except ValueError:
        return None  # left out of the snapshot too, with a Warning on it
    if scope is None:
        return None
    status: NodeShardStatus = shard_status(scope.desired, scope.nodes)
    wanted = (status.nodes_in_use, status.nodes_to_add, status.nodes_to_remove)
    if _said(own) == wanted:
        return None
    return with_nodeshard_status(own, status, now_time())


class ShardStatusWriter:
    """Writes the scheduler's NodeShard status when it changes (see the module docstring)."""

    def __init__(self, client: KubeClient, sharding: Sharding) -> None:
        self.client = client
        self.sharding = sharding
        # The last update sent, by the shard version it was made from: not sent twice while the watch lags.
        self._sent: tuple[str, tuple[list[str], list[str], list[str]]] | None = None

    async def publish(self, nodeshards: Sequence[Obj]) -> bool:
        """Write the status the cycle over ``nodeshards`` calls for; True when one was written."""
        body = status_update(self.sharding, nodeshards)
        if body is None:
            return False
        sent = (resource_version_of(body), _said(body))
        if self._sent == sent:
            return False
        path = NODESHARDS.object_path(self.sharding.name, None, "status")
        try:
            await self.client.replace(path, dict(body))
        except ApiError as exc:
            if not exc.conflict:
                _log.warning("cannot write the NodeShard status", shard=self.sharding.name, error=str(exc))
            return False
        except NETWORK_ERRORS as exc:
            _log.warning("cannot write the NodeShard status", shard=self.sharding.name, error=str(exc))
            return False
        self._sent = sent
        _log.info(
            "NodeShard status written",
            shard=self.sharding.name,
            nodes_in_use=len(nodeshard_nodes_in_use(body)),
            nodes_to_add=len(nodeshard_nodes_to_add(body)),
        )
        return True
