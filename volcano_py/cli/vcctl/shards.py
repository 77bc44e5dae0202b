"""``vcctl nodeshard list`` and ``get -N NAME``: which scheduler owns which node.

Volcano's vcctl has no NodeShard command; these follow its ``queue list/get`` (a table per shard), and
``get`` adds the shard's nodes, each with its owner as ``api.shard.node_owners`` reads it (a node another
shard still uses is shown as handed over, not as this shard's yet).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

from volcano_py.api.shard import NodeOwner, NodeShard, node_owners, read_nodeshards
from volcano_py.cli.vcctl import _common, commands
from volcano_py.cli.vcctl.commands import _call, _require
from volcano_py.cli.vcctl.render import table
from volcano_py.kube.kinds import NODESHARDS

Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]
SHARD_HEADERS = ("Name", "Desired", "InUse", "ToAdd", "ToRemove")
NODE_HEADERS = ("Node", "Owner")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verbs = sub.add_parser("nodeshard", help="NodeShards: which scheduler owns which node").add_subparsers(
        dest="verb", required=True
    )
    _common(verbs.add_parser("list", help="list the NodeShards"))
    get = verbs.add_parser("get", help="get a NodeShard and the owner of each of its nodes")
    _common(get)
    get.add_argument("-N", "--name", default="", help="the name of the NodeShard (its scheduler's)")


def shard_list(shards: Sequence[NodeShard]) -> str:
    if not shards:
        return "No resources found\n"
    rows: list[list[object]] = [
        [s.name, len(s.spec.nodes_desired), len(s.status.nodes_in_use), len(s.status.nodes_to_add),
         len(s.status.nodes_to_remove)]
        for s in shards
    ]  # fmt: skip
    return table(SHARD_HEADERS, rows)


def shard_nodes(shard: NodeShard, owners: Mapping[str, NodeOwner]) -> str:
    """The nodes the shard desires or still uses, each with its owner across all shards."""
    nodes = sorted({*shard.spec.nodes_desired, *shard.status.nodes_in_use, *shard.status.nodes_to_remove})
    if not nodes:
        return "\nNo nodes.\n"
    rows: list[list[object]] = [[n, owners[n].text if n in owners else "<none>"] for n in nodes]
    return "\n" + table(NODE_HEADERS, rows)


async def _shards(args: argparse.Namespace, name: str | None) -> tuple[list[NodeShard], list[str]]:
    """Every NodeShard (its owners need them all), sorted by name; with ``name``, that one must exist."""
    # Looked up on the module at each call, so tests can stand an API in for it.
    client = await commands._client(args)
    try:
        if name is not None:
            await _call(client.get(NODESHARDS.object_path(name)), f"nodeshard {name}")
        answer = await _call(client.get(NODESHARDS.collection_path()), "nodeshards")
    finally:
        await client.close()
    shards, problems = read_nodeshards(answer.get("items", []))
    return sorted(shards, key=lambda s: s.name), problems


def _report(problems: Sequence[str]) -> None:
    for problem in problems:
        print(problem, file=sys.stderr)


async def nodeshard_list(args: argparse.Namespace) -> int:
    shards, problems = await _shards(args, None)
    sys.stdout.write(shard_list(shards))
    _report(problems)
    return 0


async def nodeshard_get(args: argparse.Namespace) -> int:
    name = _require(args.name, "--name", "nodeshard")
    shards, problems = await _shards(args, name)
    _report(problems)
    shard = next((s for s in shards if s.name == name), None)
    if shard is None:  # it exists (asked above), so it is one of the malformed ones just reported
        return 1
    sys.stdout.write(shard_list([shard]) + shard_nodes(shard, node_owners(shards)))
    return 0


HANDLERS: dict[tuple[str, str], Handler] = {
    ("nodeshard", "list"): nodeshard_list,
    ("nodeshard", "get"): nodeshard_get,
}

__all__ = ["HANDLERS", "register", "shard_list", "shard_nodes"]
