"""network-topology-aware: Volcano's HyperNode placement, under Volcano's name and with its arguments.

A job with ``networkTopology`` is placed as Volcano's allocate places it
(``actions.placement.place_in_hypernodes`` walks what this plugin offers): the HyperNodes it may use
(``hard``: up to ``highestTierAllowed``/``highestTierName``; ``soft``: any tier, then the whole cluster) are
tried tier by tier from the lowest; in one tier the job is placed greedily inside each HyperNode where its
``minResources`` fit (idle or future idle) and taken back, and of those where it fitted the one with the
best score (``hypernode_binpack``: the fullest after it) gets it. A job with running pods stays inside the
HyperNode of the highest allowed tier above them. When no tier fits, a ``hard`` job waits and says why.
Pods of jobs without a topology get a node score (``hypernode.binpack.normal-pod.*``): how full their pod
would leave the node's HyperNode at each tier, weighted ``fading ** (tier - 1)``.

Arguments: ``weight`` (default 1, >= 0) scales the node score; ``hypernode.binpack.cpu`` / ``.memory``
(default 1) and ``hypernode.binpack.resources`` (a comma-separated list) with ``.resources.<name>`` (default
1) weight the fill ratio per resource; ``hypernode.binpack.normal-pod.enable`` (default true) and
``.fading`` (default 0.8, >= 0); ``hypernode.gradient.evict.max-hypernodes`` bounds Volcano's HyperNode-domain
preemption, which is not how victims are chosen here: only its default (8) is accepted. The ``cpsat`` plugin
keeps this project's own objective (fewest domains, least stranded GPU) for the same constraints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from volcano_py.api.bodies.podgroup import podgroup_sub_group_policy
from volcano_py.api.meta import NetworkTopologyMode
from volcano_py.api.subgroups import SubGroupKey
from volcano_py.log import get_logger
from volcano_py.resources import Resource

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.extension import Gradients, HyperNodeWalk, SubJobWalk
from ..framework.job import JobInfo
from ..framework.nodetable import BoolArray, FloatArray, IntArray
from ..framework.session import Session
from ..framework.status import ALLOCATED_STATUSES
from ..framework.task import TaskInfo
from ..solver.hypernode_tree import (
    ROOT,
    HyperNodeTree,
    NetworkTopology,
    TopologyError,
    build_tree,
    hypernodes_from_objects,
    resolve_highest_tier,
)
from . import scoring
from .hypernode_binpack import (
    MAX_SCORE,
    BinpackWeights,
    faded_scores,
    fill_score,
    hypernode_scores,
    hypernode_totals,
    tier_weights,
)
from .hypernode_gradients import gradients

log = get_logger(__name__)

WEIGHT = "weight"
BINPACK_CPU = "hypernode.binpack.cpu"
BINPACK_MEMORY = "hypernode.binpack.memory"
BINPACK_RESOURCES = "hypernode.binpack.resources"
NORMAL_POD_ENABLE = "hypernode.binpack.normal-pod.enable"
NORMAL_POD_FADING = "hypernode.binpack.normal-pod.fading"
EVICT_MAX_HYPERNODES = "hypernode.gradient.evict.max-hypernodes"


def binpack_weights(arguments: Arguments) -> BinpackWeights:
    others = {
        name: arguments.get_int(f"{BINPACK_RESOURCES}.{name}", 1, minimum=0)
        for name in arguments.get_list(BINPACK_RESOURCES)
    }
    listed = {f"{BINPACK_RESOURCES}.{name}" for name in others}
    for key in arguments.values:
        if key.startswith(BINPACK_RESOURCES + ".") and key not in listed:
            raise ConfError(
                f"{arguments.owner}: {key}: the resource is not listed in {BINPACK_RESOURCES}, so its "
                f"weight would be ignored; add it to {BINPACK_RESOURCES} or remove this key"
            )
    return BinpackWeights(
        cpu=arguments.get_int(BINPACK_CPU, 1, minimum=0),
        memory=arguments.get_int(BINPACK_MEMORY, 1, minimum=0),
        others=others,
    )


class NetworkTopologyAwarePlugin:
    name = "network-topology-aware"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known(
            {WEIGHT, BINPACK_CPU, BINPACK_MEMORY, BINPACK_RESOURCES, NORMAL_POD_ENABLE, NORMAL_POD_FADING,
             EVICT_MAX_HYPERNODES},
            prefixes=(BINPACK_RESOURCES + ".",),
        )  # fmt: skip
        self.weight = arguments.get_int(WEIGHT, 1, minimum=0)
        self.weights = binpack_weights(arguments)
        self.normal_pods = arguments.get_bool(NORMAL_POD_ENABLE, True)
        self.fading = arguments.get_float(NORMAL_POD_FADING, 0.8, minimum=0.0)
        if arguments.get_int(EVICT_MAX_HYPERNODES, 8, minimum=1) != 8:
            value = arguments.values[EVICT_MAX_HYPERNODES]
            raise ConfError(
                f"{arguments.owner}: {EVICT_MAX_HYPERNODES}: {value!r} is not supported: preemption here "
                "plans victims node by node, not by HyperNode domain; remove it"
            )
        self.tree: HyperNodeTree | None = None
        self.tree_error = ""
        self._masks: dict[str, BoolArray] = {}
        self._tier_rows: dict[int, IntArray] = {}  # per tier: each node's HyperNode index there, -1: none
        self._tier_names: dict[int, list[str]] = {}
        self._weight_vector: FloatArray | None = None

    # --- session ------------------------------------------------------------------------------------------

    def on_session_open(self, ssn: Session) -> None:
        self.tree, self.tree_error, self._masks, self._weight_vector = None, "", {}, None
        self._tier_rows, self._tier_names = {}, {}
        try:
            specs = hypernodes_from_objects(ssn.snapshot.hypernodes)
            if specs:
                self.tree = build_tree(specs, {n.name: n.labels for n in ssn.nodes})
        except TopologyError as err:
            self.tree_error = str(err)
            log.warning("HyperNodes ignored", error=self.tree_error)
        if self.tree is None:
            return
        leaf = self.tree.leaf_index()
        leaves = np.array([leaf.get(n, -1) for n in ssn.table.node_names], dtype=np.int64)
        for tier in self.tree.tier_levels():
            per_leaf, hypernodes = self.tree.tier_index(tier)
            lookup = np.array([*per_leaf, -1], dtype=np.int64)  # a leaf index of -1 reads the last: none
            self._tier_rows[tier] = lookup[leaves]
            self._tier_names[tier] = hypernodes

    def on_session_close(self, ssn: Session) -> None:
        self.tree, self._masks, self._tier_rows, self._tier_names = None, {}, {}, {}

    def _mask(self, ssn: Session, hypernode: str) -> BoolArray:
        mask = self._masks.get(hypernode)
        if mask is None:
            names = ssn.table.node_names
            if hypernode == ROOT:  # the whole cluster, nodes outside every HyperNode too (Volcano's top)
                mask = np.ones(len(names), dtype=np.bool_)
            elif self.tree is not None and hypernode in self.tree.tiers:
                # Each node's HyperNode at that tier is known per session: one comparison, no name lookups.
                tier = self.tree.tiers[hypernode]
                mask = self._tier_rows[tier] == self._tier_names[tier].index(hypernode)
            else:
                mask = np.zeros(len(names), dtype=np.bool_)
            self._masks[hypernode] = mask
        return mask

    # --- jobs with a topology -----------------------------------------------------------------------------

    def hypernode_walk(self, ssn: Session, job: JobInfo) -> HyperNodeWalk | None:
        policies = podgroup_sub_group_policy(job.podgroup) or []
        if not job.network_topology and not policies:
            return None
        tree = self.tree
        try:
            topology = NetworkTopology.parse(job.network_topology) if job.network_topology else None
        except TopologyError as err:
            return HyperNodeWalk((), _no_score, f"PodGroup spec.{err}")
        hard = topology is not None and topology.mode is NetworkTopologyMode.HARD
        if tree is None:
            if (hard or policies) and self.tree_error:
                return HyperNodeWalk((), _no_score, f"HyperNodes are invalid: {self.tree_error}")
            return None  # no HyperNodes: the cluster is the one domain
        highest = tree.root_tier
        if topology is not None and hard:
            found = resolve_highest_tier(topology, tree)
            if found is None:
                reason = (
                    f"networkTopology.highestTierName {topology.highest_tier_name!r} names no HyperNode tier"
                )
                return HyperNodeWalk((), _no_score, reason)
            highest = found
        tasks = list(job.tasks.values())
        if topology is None:
            tiers: list[list[str]] = [[ROOT]]  # sub-groups only: the whole cluster is the job's domain
        else:
            tiers = self._gradients(ssn, tasks, job.min_request, tree, highest)
        named = self._named(ssn, tiers)
        subjobs = self._subjobs(ssn, job, policies, tree, highest) if policies else ()
        if isinstance(subjobs, str):
            return HyperNodeWalk((), _no_score, subjobs)
        unplaced = None
        if hard or subjobs:
            unplaced = f"no HyperNode up to tier {highest} holds the gang" + (
                " by partitions" if subjobs else ""
            )
        log.debug("hypernode walk", job=job.uid, tiers=len(named), subjobs=len(subjobs))
        return HyperNodeWalk(named, lambda fitted: self._scores(ssn, tasks, fitted), unplaced, subjobs)

    def _subjobs(
        self, ssn: Session, job: JobInfo, policies: list[Any], tree: HyperNodeTree, job_tier: int
    ) -> tuple[SubJobWalk, ...] | str:
        """The job's sub-groups (``spec.subGroupPolicy``), each bounded by its own topology's tier (at most
        the job's); tasks of no sub-group form one more, bounded by the job's alone."""
        bounds: list[int] = []
        for i, raw in enumerate(policies):
            try:
                spec = raw.get("networkTopology")
                topology = NetworkTopology.parse(spec) if spec else None
            except TopologyError as err:
                return f"PodGroup spec.subGroupPolicy[{i}]: {err}"
            highest = job_tier
            if topology is not None and topology.mode is NetworkTopologyMode.HARD:
                found = resolve_highest_tier(topology, tree)
                if found is None:
                    return f"PodGroup spec.subGroupPolicy[{i}].networkTopology names no HyperNode tier"
                highest = min(found, job_tier)
            bounds.append(highest)
        return tuple(
            self._subjob(ssn, key, members, tree, job_tier if key is None else bounds[key.policy])
            for key, members in job.sub_groups().items()
        )

    def _subjob(
        self,
        ssn: Session,
        key: SubGroupKey | None,
        members: list[TaskInfo],
        tree: HyperNodeTree,
        highest: int,
    ) -> SubJobWalk:
        need = Resource()
        for task in members:
            need = need + task.resreq

        def inside(at: str) -> Gradients:
            return self._named(ssn, self._gradients(ssn, members, need, tree, highest, under=at))

        return SubJobWalk(tuple(members), inside, lambda fitted: self._scores(ssn, members, fitted), key)

    def _named(self, ssn: Session, tiers: list[list[str]]) -> Gradients:
        return tuple(tuple((name, self._mask(ssn, name)) for name in tier) for tier in tiers)

    def _gradients(
        self,
        ssn: Session,
        tasks: Sequence[TaskInfo],
        need: Resource,
        tree: HyperNodeTree,
        highest: int,
        under: str | None = None,
    ) -> list[list[str]]:
        table = ssn.table
        vec = table.vector(need, pods=0)
        idle = np.maximum(table.allocatable - table.used, 0)
        future = table.future_idle

        def fits(hypernode: str) -> bool:
            mask = self._mask(ssn, hypernode)
            return bool((idle[mask].sum(axis=0) >= vec).all() or (future[mask].sum(axis=0) >= vec).all())

        running = [t.node_name for t in tasks if t.status in ALLOCATED_STATUSES and t.node_name]
        return gradients(tree, highest, running=running, fits=fits, under=under)

    def _scores(self, ssn: Session, tasks: Sequence[TaskInfo], fitted: Sequence[str]) -> dict[str, float]:
        """Volcano's HyperNode order: the fill score of the whole request of ``tasks`` (placed or not), then
        how many of them already run there."""
        request: dict[str, float] = {}
        for task in tasks:
            for name, amount in task.resreq.items():
                request[name] = request.get(name, 0.0) + amount
        table = ssn.table
        fill: dict[str, float] = {}
        there: dict[str, int] = {}
        rows = [table.node_index[t.node_name] for t in tasks if t.status in ALLOCATED_STATUSES]
        for hypernode in fitted:
            mask = self._mask(ssn, hypernode)
            used = table.to_resource(table.used[mask].sum(axis=0))
            allocatable = table.to_resource(table.allocatable[mask].sum(axis=0))
            fill[hypernode] = fill_score(request, used, allocatable, self.weights)
            there[hypernode] = sum(1 for row in rows if mask[row])
        return hypernode_scores(fill, there, len(tasks), self.weight)

    # --- pods of jobs without a topology ------------------------------------------------------------------

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        # A job with a topology being tried in one HyperNode is not a normal pod's job: Volcano scores its
        # pods by their distance to the job's other pods, which is equal inside the HyperNode it tries.
        if not self.normal_pods or not self.weight or not self._tier_rows or ssn.narrowed:
            return np.zeros(len(rows), dtype=np.float64)
        table = ssn.table
        if self._weight_vector is None or len(self._weight_vector) != len(table.names):
            self._weight_vector = np.array([self.weights.of(n) or 0 for n in table.names], dtype=np.float64)
        asked = np.flatnonzero((klass.vec > 0) & (self._weight_vector > 0))
        request, weights = klass.vec[asked], self._weight_vector[asked]
        per_tier: dict[int, FloatArray | None] = {}
        for tier, index in self._tier_rows.items():
            count = len(self._tier_names[tier])
            hypernode = index[rows]
            mine = np.maximum(hypernode, 0)
            used = hypernode_totals(index, table.used, asked, count)[mine] + np.outer(extra, request)
            allocatable = hypernode_totals(index, table.allocatable, asked, count)[mine]
            fill = scoring.binpack(allocatable, used, request, weights) / scoring.MAX_NODE_SCORE
            per_tier[tier] = np.where(hypernode >= 0, fill, np.nan)
        levels = range(min(self._tier_rows), max(self._tier_rows) + 1)
        scores = faded_scores(per_tier, tier_weights(levels, self.fading), len(rows))
        result: FloatArray = scores * MAX_SCORE * self.weight
        return result


def _no_score(fitted: Sequence[str]) -> Mapping[str, float]:
    return {}
