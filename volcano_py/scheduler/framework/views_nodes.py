"""The kept views' nodes, brought up to date by what changed: a heartbeat keeps everything, a node that
changed is read again and takes its predecessor's place and tasks, and a node that comes or goes has the
views built again (``Reset``): every row of the node table would move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from volcano_py.api.objects import name_of

from .meaning import node_meaning
from .node import NodeInfo
from .nodetable import NodeTable
from .views_diff import Obj, Reset
from .views_state import NodeEntry, ViewsState


class NodeViews(ViewsState):
    """The nodes of ``views.Views``."""

    def _update_nodes(self, nodes: Sequence[Obj]) -> None:
        if nodes is self._nodes_seen:
            return  # the cache's very list: not one node changed
        entries = self.node_entries
        # The cache's listing says which nodes changed since the one these views read last (``Listing`` in
        # ``kube/store.py``: ``base`` and ``replaced``): a heartbeat in 5,000 nodes then costs one node.
        if getattr(nodes, "base", None) is self._nodes_seen is not None:
            replaced: Mapping[str, tuple[Obj, Obj]] = getattr(nodes, "replaced", {})
            changed = [(entries.get(id(old)), obj) for old, obj in replaced.values()]
            known = [(entry, obj) for entry, obj in changed if entry is not None]
            if len(known) == len(changed):
                self._take_changes(known)
                return
        # Set operations, not a loop over the nodes: a heartbeat or two in thousands of nodes is the usual
        # change, and this runs once per session (the agent scheduler's: once per pod or few).
        by_id = dict(zip(map(id, nodes), nodes, strict=True))
        new_ids = by_id.keys() - entries.keys()
        if not new_ids and len(by_id) == len(entries):
            return
        gone = [entries[i] for i in entries.keys() - by_id.keys()]
        new = [by_id[i] for i in new_ids]
        if len(gone) != len(new):
            raise Reset
        old_by_name = {e.node.name: e for e in gone}
        changes: list[tuple[NodeEntry, Obj]] = []
        for obj in new:
            old = old_by_name.pop(name_of(obj), None)
            if old is None:
                raise Reset  # a node came and another went
            changes.append((old, obj))
        self._take_changes(changes)

    def _take_changes(self, changes: Sequence[tuple[NodeEntry, Obj]]) -> None:
        """Each node of ``changes`` (as held, as now) in its new version: a heartbeat keeps everything."""
        for old, obj in changes:
            if node_meaning(obj) == node_meaning(old.obj):
                # A heartbeat: the node as read, its place and the plugins' facts of it all stand.
                del self.node_entries[id(old.obj)]
                self.node_entries[id(obj)] = NodeEntry(obj, old.record, old.node)
                continue
            record = NodeInfo.from_node(obj)
            self._replace_node(old, NodeEntry(obj, record, record.fresh()))

    def _replace_node(self, old: NodeEntry, new: NodeEntry) -> None:
        self.node_facts = {}
        del self.node_entries[id(old.obj)]
        self.node_entries[id(new.obj)] = new
        node = new.node
        for task in old.node.tasks.values():
            node.add_task(task)
        if self._node_at is None:
            self._node_at = {n.name: i for i, n in enumerate(self.nodes)}
        index = self._node_at[node.name]
        self.nodes[index] = node
        self.by_name[node.name] = node
        table = self.table
        if table is not None:
            if tuple(new.record.allocatable) != tuple(old.record.allocatable):
                self.table = NodeTable(self.nodes)  # its columns may change
            else:
                table.set_allocatable(index, node.allocatable)
