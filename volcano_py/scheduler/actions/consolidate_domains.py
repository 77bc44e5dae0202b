"""Where a waiting gang's place may be: the whole cluster, or, for a hard ``networkTopology``, one HyperNode.

A gang bound to a HyperNode of tier ``t`` or lower (``highestTierAllowed``, or the tier named by
``highestTierName``) is planned inside each HyperNode of tier ``t`` in turn (a place inside a lower one is
inside one of those too); the moved pods may go anywhere. A soft topology is a preference and is planned at
node level. A hard one that cannot be resolved (no HyperNodes, a tier name that names none) is refused with
the reason, never planned as if it had no bound.
"""

from __future__ import annotations

import numpy as np

from volcano_py.api.meta import NetworkTopologyMode

from ..framework.job import JobInfo
from ..framework.nodetable import BoolArray
from ..framework.session import Session
from ..solver.hypernode_tree import (
    NetworkTopology,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
    resolve_highest_tier,
)

# (HyperNode name, mask over the node table), or (None, None): anywhere.
Domain = tuple[str | None, BoolArray | None]
ANYWHERE: Domain = (None, None)


def hard_topology(job: JobInfo) -> NetworkTopology | None:
    """The job's ``networkTopology`` when it is hard (Volcano's default mode), else None. An unreadable one
    raises ``TopologyError`` naming the field."""
    if not job.network_topology:
        return None
    topology = NetworkTopology.parse(job.network_topology)
    return topology if topology.mode is NetworkTopologyMode.HARD else None


def domains(ssn: Session, job: JobInfo) -> list[Domain] | str:
    """Where ``job``'s gang may be placed, or why that cannot be said (a refusal in words)."""
    try:
        topology = hard_topology(job)
    except TopologyError as err:
        return str(err)
    if topology is None:
        return [ANYWHERE]
    try:
        specs = hypernodes_from_objects(ssn.snapshot.hypernodes)
        tree = build_tree(specs, {n.name: n.labels for n in ssn.nodes}) if specs else None
    except TopologyError as err:
        return f"its hard networkTopology cannot be resolved: {err}"
    if tree is None:
        return "it has a hard networkTopology and the cluster has no HyperNodes to place it in"
    tier = resolve_highest_tier(topology, tree)
    if tier is None:
        return f"networkTopology.highestTierName {topology.highest_tier_name!r} names no HyperNode tier"
    if tier >= tree.root_tier:
        return [ANYWHERE]
    index = ssn.table.node_index
    out: list[Domain] = []
    for tier_level in sorted(t for t in tree.tier_levels() if t <= tier)[-1:]:
        for name in tree.at_tier(tier_level):
            mask: BoolArray = np.zeros(len(ssn.table), dtype=np.bool_)
            rows = [index[n] for n in tree.nodes(name) if n in index]
            if rows:
                mask[rows] = True
                out.append((name, mask))
    if not out:
        return f"no HyperNode of tier {tier} or lower holds a node of the cluster"
    return out
