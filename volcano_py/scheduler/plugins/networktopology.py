"""network-topology-aware: Volcano's name for HyperNode-aware placement, answered by the ``cpsat`` plugin.

Jobs and PodGroups with ``networkTopology`` (``hard``: within ``highestTierAllowed``/``highestTierName`` or
not at all; ``soft``: as low a tier as fits) and gangs are placed by the CP-SAT solver over the HyperNode
tree, packing into the lowest-tier domain that fits (see docs/solver.md). This is the same code as
``cpsat``, under Volcano's name and arguments:

* ``weight`` (default 1) must be positive: 0 would ask for no topology scoring, which this plugin is;
* ``hypernode.binpack.cpu`` / ``.memory`` / ``.resources`` / ``.resources.<name>`` and
  ``hypernode.binpack.normal-pod.fading`` tune Volcano's weighted HyperNode score; the solver packs by its
  own objective, so only Volcano's defaults (weights 1, fading 0.8) are accepted and any other value is
  refused by name rather than silently ignored;
* ``hypernode.binpack.normal-pod.enable`` (default true): single pods are packed by HyperNode too (cpsat's
  ``cpsat.singlePods``), when the cluster has HyperNodes: without them there is no domain to pack into,
  and single pods keep the greedy path (a solver call per pod at 5,000 nodes would cost seconds per cycle);
* ``hypernode.gradient.evict.max-hypernodes`` bounds Volcano's HyperNode-domain preemption, which is not
  how victims are chosen here: only its default (8) is accepted;
* ``cpsat.timeBudgetMs`` and ``cpsat.maxDomains`` as for ``cpsat``.
"""

from __future__ import annotations

from ..framework.arguments import Arguments, ConfError
from .cpsat import CpsatPlugin

WEIGHT = "weight"
BINPACK_PREFIX = "hypernode.binpack."
NORMAL_POD_ENABLE = "hypernode.binpack.normal-pod.enable"
NORMAL_POD_FADING = "hypernode.binpack.normal-pod.fading"
EVICT_MAX_HYPERNODES = "hypernode.gradient.evict.max-hypernodes"
_FIXED_WEIGHTS = ("hypernode.binpack.cpu", "hypernode.binpack.memory")


class NetworkTopologyAwarePlugin(CpsatPlugin):
    name = "network-topology-aware"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known(
            {WEIGHT, NORMAL_POD_ENABLE, NORMAL_POD_FADING, EVICT_MAX_HYPERNODES, "cpsat.timeBudgetMs",
             "cpsat.maxDomains", *_FIXED_WEIGHTS},
            prefixes=("hypernode.binpack.resources",),
        )  # fmt: skip
        arguments.get_int(WEIGHT, 1, minimum=1)

        def refuse(key: str, value: object, why: str) -> ConfError:
            return ConfError(f"{arguments.owner}: {key}: {value!r} is not supported: {why}; remove it")

        untunable = "the CP-SAT solver packs HyperNodes by its own objective, not by weighted scores"
        for key in (
            *_FIXED_WEIGHTS,
            *(k for k in arguments.values if k.startswith(BINPACK_PREFIX + "resources.")),
        ):
            if arguments.get_int(key, 1, minimum=0) != 1:
                raise refuse(key, arguments.values[key], untunable)
        resources = arguments.get_list(BINPACK_PREFIX + "resources")
        if resources:
            raise refuse(
                BINPACK_PREFIX + "resources", arguments.values[BINPACK_PREFIX + "resources"], untunable
            )
        if arguments.get_float(NORMAL_POD_FADING, 0.8, minimum=0.0) != 0.8:
            raise refuse(NORMAL_POD_FADING, arguments.values[NORMAL_POD_FADING], untunable)
        if arguments.get_int(EVICT_MAX_HYPERNODES, 8, minimum=1) != 8:
            raise refuse(
                EVICT_MAX_HYPERNODES,
                arguments.values[EVICT_MAX_HYPERNODES],
                "preemption here plans victims node by node, not by HyperNode domain",
            )
        single = arguments.get_bool(NORMAL_POD_ENABLE, True)
        passed: dict[str, object] = {
            key: arguments.values[key]
            for key in ("cpsat.timeBudgetMs", "cpsat.maxDomains")
            if key in arguments.values
        }
        super().__init__(Arguments(arguments.owner, {**passed, "cpsat.singlePods": single}))

    def _solves_single_pods(self) -> bool:
        return self.single_pods and self.tree is not None
