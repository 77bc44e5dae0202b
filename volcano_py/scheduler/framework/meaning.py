"""What the scheduler reads of an object, apart from what changes on every write without changing what the
object says: two versions with the same meaning schedule alike.

Kept here once for the views (a node's heartbeat keeps its record, its place and the plugins' facts of it)
and for the runtime's quiet memo, which reads pods more narrowly on top of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.objects import metadata_of, status_of

Obj = Mapping[str, Any]

# Metadata that changes on every write without changing what the object says.
VOLATILE_METADATA: Final = frozenset({"resourceVersion", "managedFields", "generation"})
# A node's conditions are re-stamped on every heartbeat; their type, status and reason are what counts.
NODE_CONDITION_STAMPS: Final = frozenset({"lastHeartbeatTime", "lastTransitionTime"})


def lasting_metadata(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in metadata_of(obj).items() if k not in VOLATILE_METADATA}


def node_meaning(node: Obj) -> dict[str, Any]:
    """Everything of a node but its volatile metadata and its conditions' time stamps."""
    status = status_of(node)
    conditions = status.get("conditions")
    if conditions:
        status = {
            **status,
            "conditions": [
                {k: v for k, v in cond.items() if k not in NODE_CONDITION_STAMPS} for cond in conditions
            ],
        }
    rest = {k: v for k, v in node.items() if k not in ("metadata", "status")}
    return {**rest, "metadata": lasting_metadata(node), "status": status}
