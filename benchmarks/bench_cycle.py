"""The cost of one scheduler cycle on a busy, steady cluster, as the runtime runs it; prints JSON lines.

A cluster of ``--nodes`` nodes (8 GPUs each) already running ``--running`` pods in gangs of 10, and the
runtime's ``DefaultCore.run`` (snapshot from the cache's ``ClusterObjects``, then one session with the
default conf) timed in the cases a live scheduler meets:

  cold          the first cycle after start: every object parsed
  nothing-new   the same objects again (an idle cluster re-checked)
  one-change    one running pod replaced by a new version of itself (its status updated)
  one-finished  one running pod succeeds: its job's counts change, so a whole session runs
  new-job       one 8-pod gang arrives and is placed
  gang-wave     40 complete 20-pod gangs arrive at once and are placed (800 binds in one cycle)
  forming       64 20-pod gangs whose pods are still being created: one more pod each per cycle, none
                complete, so nothing can be placed (the first 20 s of a run of 20-pod gangs); after the
                first session the quiet memo recalls it, until the gangs start over (pods deleted)
  admit-forming 64 new PodGroups (Pending, 20-pod gangs) arrive with 5 pods each: enqueue admits them, and
                none can be placed yet

Each case is run ``--repeat`` times (what it adds to the cluster built before its clock starts) and
reported as p50/max milliseconds of wall and CPU time, with the load average, so a reader can tell a quiet
run from a loaded one. The runner itself skips a cycle when the cache's generation has not moved;
``nothing-new`` is what a cycle costs when it does run on an unchanged cluster. With nothing waiting,
``nothing-new`` and ``one-change`` are recalled by the core's quiet memo (``runtime/quiet.py``) instead of
running a session; ``quiet`` in their lines says whether they were.

The garbage collector is set as the scheduler process sets it (``runtime/heap.py``: a raised young threshold,
the steady cluster frozen out of the collector's reach as the process freezes its first listing);
``--gc default`` keeps CPython's settings, as this benchmark did before it followed the process.

Usage: python -m benchmarks.bench_cycle [--nodes 1000] [--running 10000] [--repeat 20] [--gc process]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from benchmarks.benchlib.objects import Obj, make_node, make_pod, make_podgroup, make_queue, node_name
from volcano_py import log
from volcano_py.scheduler.core import ClusterObjects
from volcano_py.scheduler.framework.podgroup_status import podgroup_status
from volcano_py.scheduler.runtime.cycle import CycleOutcome, default_core
from volcano_py.scheduler.runtime.heap import collect_from_here, tune_collector

GANG = 10
WAVE_GANGS = 40
WAVE_SIZE = 20
FORMING_GANGS = 64


def pod(name: str, group: str, node: str, phase: str, version: int = 1, gpus: int = 0) -> Obj:
    return (
        make_pod(name).stored().version(version).image().req(cpu="2", memory="8Gi", gpu=gpus).group(group)
        .on(node).phase(phase).obj()
    )  # fmt: skip


def podgroup(name: str, size: int, phase: str) -> Obj:
    return (
        make_podgroup(name, size).ns().uid(f"uid-pg-{name}").version(1).created().phase(phase).running(size)
        .obj()
    )  # fmt: skip


def steady_cluster(nodes: int, running: int) -> tuple[list[Obj], list[Obj], list[Obj]]:
    node_objs = [make_node(i).uid(f"uid-{node_name(i)}").version(1).obj() for i in range(nodes)]
    pods: list[Obj] = []
    groups: list[Obj] = []
    for j in range(running // GANG):
        group = f"run-{j}"
        groups.append(podgroup(group, GANG, "Running"))
        for i in range(GANG):
            n = len(pods)
            pods.append(pod(f"{group}-{i}", group, node_name(n % nodes), "Running"))
    return node_objs, pods, groups


def state(nodes: list[Obj], pods: list[Obj], groups: list[Obj], generation: int) -> ClusterObjects:
    return ClusterObjects(nodes=list(nodes), pods=list(pods), podgroups=list(groups),
                        queues=[make_queue(q).version(1).open().obj() for q in ("root", "default")],
                        priority_classes=[], hypernodes=[],
                        generation=generation)  # fmt: skip


def echoed(groups: list[Obj], outcome: CycleOutcome) -> list[Obj]:
    """The PodGroups as the watch returns them once the binder has written the session's status updates."""
    updates = {(u.namespace, u.name): u for u in outcome.result.podgroup_updates}
    out: list[Obj] = []
    for group in groups:
        meta = group["metadata"]
        update = updates.get((meta["namespace"], meta["name"]))
        if update is None:
            out.append(group)
            continue
        version = str(int(meta["resourceVersion"]) + 1)
        out.append({**group, "metadata": {**meta, "resourceVersion": version},
                    "status": podgroup_status(update, group.get("status"))})  # fmt: skip
    return out


def timed(
    fn: Callable[[], CycleOutcome], repeat: int, arrive: Callable[[], None] = lambda: None
) -> dict[str, float]:
    """``fn`` (one cycle) timed ``repeat`` times, each after ``arrive()``, untimed: the objects a case adds
    are the harness's work, not the cycle's."""
    walls: list[float] = []
    cpus: list[float] = []
    quiet = 0
    for _ in range(repeat):
        arrive()
        wall, cpu = time.perf_counter(), time.process_time()
        quiet += fn().quiet
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return {
        "wall_ms_p50": round(statistics.median(walls), 2),
        "wall_ms_max": round(max(walls), 2),
        "cpu_ms_p50": round(statistics.median(cpus), 2),
        "quiet": quiet,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--running", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--gc", choices=("process", "default"), default="process")
    args = parser.parse_args(argv)
    log.configure("warning")
    if args.gc == "process":
        tune_collector()
    nodes, pods, groups = steady_cluster(args.nodes, args.running)
    # The status the first session writes (the gangs' Scheduled condition) comes back through the watch
    # before the cluster is steady; until then every cycle writes it again.
    warm = default_core(("volcano",))
    groups = echoed(groups, warm.run(state(nodes, pods, groups, 0), warm.load_conf(None), datetime.now(UTC)))
    now = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
    if args.gc == "process":
        collect_from_here()  # the listed cluster frozen, as the process does once its caches are synced
    base = {"nodes": args.nodes, "running_pods": len(pods), "gc": args.gc}

    def report(case: str, figures: dict[str, float]) -> None:
        line = {"case": case, **base, **figures, "load_average": round(os.getloadavg()[0], 2)}
        print(json.dumps(line), flush=True)

    def cold() -> CycleOutcome:
        core = default_core(("volcano",))
        conf = core.load_conf(None)
        return core.run(state(nodes, pods, groups, 0), conf, now)

    report("cold", timed(cold, max(1, args.repeat // 5)))

    core = default_core(("volcano",))
    conf = core.load_conf(None)
    first = core.run(state(nodes, pods, groups, 0), conf, now)
    if first.result.podgroup_updates:
        updates = len(first.result.podgroup_updates)
        raise SystemExit(f"steady cluster: {updates} PodGroup updates after the echo")
    report("nothing-new", timed(lambda: core.run(state(nodes, pods, groups, 1), conf, now), args.repeat))

    version = [1]

    def change_one() -> None:
        version[0] += 1
        target = pods[len(pods) // 2]
        meta = target["metadata"]
        pods[len(pods) // 2] = pod(meta["name"], meta["annotations"]["scheduling.k8s.io/group-name"],
                                   target["spec"]["nodeName"], "Running", version[0])  # fmt: skip

    def one_change() -> CycleOutcome:
        return core.run(state(nodes, pods, groups, version[0]), conf, now)

    report("one-change", timed(one_change, args.repeat, change_one))

    finished = [0]

    def finish_one() -> None:
        # A pod that ends is a change the session must see (its job's counts move): a whole session runs.
        finished[0] += 1
        index = (finished[0] * 7919) % len(pods)
        target = pods[index]
        meta = target["metadata"]
        group = meta["annotations"]["scheduling.k8s.io/group-name"]
        version = int(meta["resourceVersion"]) + 1
        pods[index] = pod(meta["name"], group, target["spec"]["nodeName"], "Succeeded", version)

    def one_finished() -> CycleOutcome:
        outcome = core.run(state(nodes, pods, groups, 20_000 + finished[0]), conf, now)
        if outcome.quiet:
            raise SystemExit("one-finished: a finished pod must not be recalled as quiet")
        return outcome

    report("one-finished", timed(one_finished, args.repeat, finish_one))

    # What each of the cases below adds to the steady cluster (built before the clock starts).
    new_groups: list[Obj] = []
    new_pods: list[Obj] = []

    def arriving(groups_now: list[Obj], pods_now: list[Obj]) -> None:
        new_groups[:], new_pods[:] = groups_now, pods_now

    def gangs_arrive(prefix: str, count: int, phase: str, pods_each: int) -> None:
        """``count`` 20-pod gangs, their PodGroups in ``phase``, with ``pods_each`` pods created so far."""
        names = [f"{prefix}-{j}" for j in range(count)]
        arriving([podgroup(g, WAVE_SIZE, phase) for g in names],
                 [pod(f"{g}-{i}", g, "", "Pending") for g in names for i in range(pods_each)])  # fmt: skip

    arrivals = [0]

    def job_arrives() -> None:
        arrivals[0] += 1
        group = f"new-{arrivals[0]}"
        arriving(
            [podgroup(group, 8, "Inqueue")],
            [pod(f"{group}-{i}", group, "", "Pending", gpus=1) for i in range(8)],
        )

    def new_job() -> CycleOutcome:
        extra_groups = [*groups, *new_groups]
        extra_pods = [*pods, *new_pods]
        outcome = core.run(state(nodes, extra_pods, extra_groups, 10_000 + arrivals[0]), conf, now)
        if len(outcome.result.binds) != 8:
            raise SystemExit(f"new-job: expected 8 binds, got {len(outcome.result.binds)}")
        return outcome

    report("new-job", timed(new_job, args.repeat, job_arrives))

    waves = [0]

    def wave_arrives() -> None:
        # What a cycle meets in the middle of a run of 20-pod gangs: a wave of them completed at once.
        waves[0] += 1
        gangs_arrive(f"wave-{waves[0]}", WAVE_GANGS, "Inqueue", WAVE_SIZE)

    def gang_wave() -> CycleOutcome:
        extra_groups = [*groups, *new_groups]
        extra_pods = [*pods, *new_pods]
        outcome = core.run(state(nodes, extra_pods, extra_groups, 30_000 + waves[0]), conf, now)
        if len(outcome.result.binds) != WAVE_GANGS * WAVE_SIZE:
            raise SystemExit(
                f"gang-wave: expected {WAVE_GANGS * WAVE_SIZE} binds, got {len(outcome.result.binds)}"
            )
        return outcome

    report("gang-wave", timed(gang_wave, max(1, args.repeat // 4), wave_arrives))

    # The counters of the gangs one-finished changed, written back as the binder would: the cluster is
    # steady again before gangs start to form.
    groups = echoed(groups, core.run(state(nodes, pods, groups, 39_999), conf, now))
    forming_names = [f"forming-{j}" for j in range(FORMING_GANGS)]
    forming_groups = [*groups, *(podgroup(g, WAVE_SIZE, "Inqueue") for g in forming_names)]
    forming_pods = list(pods)
    grown = [0]

    def grow() -> None:
        # Gangs fill one pod per cycle and wrap before the last one, so none is ever complete.
        grown[0] += 1
        arriving([], [pod(f"{g}-{grown[0]}", g, "", "Pending") for g in forming_names])

    def forming() -> CycleOutcome:
        if grown[0] % (WAVE_SIZE - 1) == 0:
            del forming_pods[len(pods) :]
        size = grown[0] % (WAVE_SIZE - 1)
        forming_pods.extend(new_pods)
        outcome = core.run(state(nodes, forming_pods, forming_groups, 40_000 + grown[0]), conf, now)
        if outcome.result.binds or outcome.quiet != (grown[0] > 1 and size != 0):
            raise SystemExit(
                f"forming: {size}/{WAVE_SIZE} pods per gang must bind nothing, and be recalled unless the "
                "gangs started over"
            )
        return outcome

    report("forming", timed(forming, args.repeat, grow))

    admitted = [0]

    def admissions_arrive() -> None:
        admitted[0] += 1
        gangs_arrive(f"admit-{admitted[0]}", FORMING_GANGS, "Pending", 5)
        for group in new_groups:
            group["status"] = {"phase": "Pending"}

    def admit_forming() -> CycleOutcome:
        names = {str(g["metadata"]["name"]) for g in new_groups}
        extra_groups = [*groups, *new_groups]
        extra_pods = [*pods, *new_pods]
        outcome = core.run(state(nodes, extra_pods, extra_groups, 50_000 + admitted[0]), conf, now)
        admitted_now = {u.name for u in outcome.result.podgroup_updates if u.phase.value == "Inqueue"}
        if outcome.result.binds or not admitted_now >= names:
            raise SystemExit("admit-forming: every new PodGroup must be admitted and none placed")
        return outcome

    report("admit-forming", timed(admit_forming, args.repeat, admissions_arrive))
    return 0


if __name__ == "__main__":
    sys.exit(main())
