"""The simulator: jobs arrive, run for their duration and finish under the real Session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main
from volcano_py.resources import Resource
from volcano_py.scheduler.core import load_conf
from volcano_py.sim.cluster import EPOCH
from volcano_py.sim.engine import Simulator
from volcano_py.sim.policies import conf_for
from volcano_py.sim.report import percentile, summary
from volcano_py.sim.workload import SimJob, SimNode, Workload, openb, racked_nodes, synthetic


def _node(name: str, gpus: int = 8) -> SimNode:
    return SimNode(name, Resource.of(cpu="96", memory="768Gi", pods=110, gpu=gpus))


def _job(name: str, arrival: float, duration: float, replicas: int = 1, gpus: int = 8) -> SimJob:
    return SimJob(
        name=name,
        arrival=arrival,
        duration=duration,
        replicas=replicas,
        request=Resource.of(cpu="8", memory="64Gi", gpu=gpus),
        min_available=replicas,
    )


def _run(workload: Workload, period: float = 1.0) -> Simulator:
    sim = Simulator(workload, conf_for("greedy"), period=period)
    sim.result = sim.run()  # type: ignore[attr-defined]
    return sim


def test_jobs_that_share_one_node_run_one_after_another() -> None:
    work = Workload((_node("n0"),), (_job("a", 0, 100), _job("b", 0, 50)), name="two")
    result = _run(work).result  # type: ignore[attr-defined]
    assert result.unfinished_jobs == 0
    # One ran after the enqueue cycle; the other waited for it to finish, then for its own enqueue cycle
    # (pods of a Volcano job exist only once its PodGroup is Inqueue, so admission costs one period).
    first, second = sorted(result.queueing_delay)
    assert first == 1.0
    assert second in (1.0 + 50.0 + 1.0, 1.0 + 100.0 + 1.0)
    assert max(s.allocated_gpus for s in result.samples) == 8000


def test_a_gang_larger_than_the_cluster_never_binds_a_single_pod() -> None:
    work = Workload(
        tuple(_node(f"n{i}") for i in range(3)),
        (_job("big", 0, 10, replicas=4), _job("small", 5, 10, replicas=2)),
        name="gang",
    )
    sim = _run(work)
    result = sim.result  # type: ignore[attr-defined]
    assert result.unfinished_jobs == 1
    assert result.gangs_placed == 1  # "small" ran; "big" stayed whole and pending
    assert result.gang_delay == [1.0]  # small's wait, once admitted; big's is never counted
    assert summary(result)["gang_wait_p95"] == 1.0
    big = sim.cluster.jobs["sim/big"]
    assert all(not pod["spec"].get("nodeName") for pod in big.pods.values())
    assert all(s.allocated_gpus <= 24000 for s in result.samples)


def test_synthetic_workload_completes_within_capacity() -> None:
    work = synthetic(nodes=16, jobs=30, seed=7, topology_fraction=0.5)
    result = _run(work).result  # type: ignore[attr-defined]
    report = summary(result)
    assert report["jobs_completed"] == 30
    assert report["jobs_unfinished"] == 0
    assert 0 < report["gpu_allocation_mean"] <= 1
    assert all(s.allocated_gpus <= result.total_gpus for s in result.samples)
    assert report["gangs_in_one_tier1_hypernode"] is not None
    assert report["gangs_in_one_tier1_hypernode"] <= report["gangs_placed"]


def test_racked_nodes_and_hypernodes() -> None:
    nodes, hypernodes = racked_nodes(20, gpus=8, cpu="96", memory="768Gi", rack_size=8, racks_per_spine=2)
    assert len(nodes) == 20
    tiers = sorted((h["metadata"]["name"], h["spec"]["tier"]) for h in hypernodes)  # type: ignore[index]
    assert tiers == [("rack-0", 1), ("rack-1", 1), ("rack-2", 1), ("spine-0", 2), ("spine-1", 2)]


def test_openb_reader(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn-0,32000,262144,8,V100M16\nn-1,32000,262144,0,\n")
    pods = tmp_path / "pods.csv"
    pods.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
        "p-0,12000,16384,1,460,,LS,Running,10,110,10\n"
        "p-1,4000,8192,8,1000,,LS,Running,0,500,0\n"
    )
    work = openb(nodes, pods, gang_variant=True, seed=1)
    assert [n.allocatable.amount("nvidia.com/gpu") for n in work.nodes] == [8000, 0]
    first, second = work.jobs  # sorted by arrival
    assert (first.name, first.arrival, first.duration, first.replicas) == ("p-1", 0.0, 500.0, first.replicas)
    assert first.replicas in (2, 4) and first.request.amount("nvidia.com/gpu") == 8000
    assert (second.name, second.duration, second.request.amount("nvidia.com/gpu")) == ("p-0", 100.0, 460)


def test_percentile_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0


def test_sim_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "--log-level",
            "warning",
            "sim",
            "synthetic",
            "--nodes",
            "16",
            "--jobs",
            "10",
            "--policy",
            "greedy",
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["greedy"]["jobs_completed"] == 10


def test_unknown_policy_is_named() -> None:
    with pytest.raises(ValueError, match="unknown placement policy 'fast'; use one of greedy, cpsat"):
        conf_for("fast")


def _openb_files(tmp_path: Path, pod_rows: list[str]) -> tuple[Path, Path]:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn-0,64000,262144,2,V100M16\n")
    pods = tmp_path / "pods.csv"
    pods.write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n" + "".join(row + "\n" for row in pod_rows)
    )
    return nodes, pods


def test_shared_gpu_openb_places_fractions_per_card(tmp_path: Path) -> None:
    # Two 0.6-GPU pods cannot share a card: each takes its own, leaving 0.4 of each card free; a third
    # 0.6-GPU pod waits for one of them. Per card, 0.8 GPU is free on partly used cards, and stranded while
    # the third waits (no waiting shape fits 0.4).
    rows = [f"p-{i},1000,1024,1,600,,LS,Running,{i},{1000 + i * 1000},0" for i in range(3)]
    work = openb(*_openb_files(tmp_path, rows), shared_gpus=True)
    assert work.nodes[0].allocatable.amount("volcano.sh/gpu-number") == 2000  # canonical: 2 cards
    assert work.jobs[0].request.amount("volcano.sh/gpu-memory") == 9830 * 1000
    result = Simulator(work, conf_for("greedy", shared_gpus=True), period=1.0).run()
    report = summary(result)
    assert report["total_gpus"] == 2.0
    assert report["jobs_completed"] == 3
    busy = [s for s in result.samples if s.allocated_gpus == 1200]
    assert busy and all(s.partial_free_gpus == 800 for s in busy)
    assert any(s.stranded_gpus == 800 and s.pending_jobs == 1 for s in busy)


def test_shared_gpus_are_refused_for_synthetic(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="--shared-gpus is for openb"):
        main(["sim", "synthetic", "--shared-gpus"])


def test_a_periodic_plugins_clock_runs_on_simulated_time() -> None:
    work = Workload((_node("n0"),), (_job("a", 0, 100), _job("b", 0, 50)), name="two")
    conf = load_conf(
        'actions: "enqueue, allocate, shuffle"\ntiers:\n- plugins:\n  - name: gang\n'
        "  - name: rescheduling\n    arguments: {interval: 1h}\n"
    )
    sim = Simulator(work, conf, period=1.0)
    sim.run()
    # The interval started at the first simulated session (the epoch), not at the wall clock's now.
    assert sim.timers == {"rescheduling": EPOCH.timestamp()}


def _fragmented() -> Workload:
    """Four 8-GPU nodes filled by sixteen 2-GPU jobs; one per node ends at t=50, leaving 2 GPUs free on each;
    an 8-GPU job arrives at t=60."""
    fillers = tuple(_job(f"f{i:02d}", 0, 50 if i % 4 == 0 else 2000, gpus=2) for i in range(16))
    return Workload(tuple(_node(f"n{i}") for i in range(4)), (*fillers, _job("big", 60, 10)), name="frag")


@pytest.mark.parametrize(
    ("policy", "evictions", "waits_for_an_end"),
    [("cpsat", 0, True), ("consolidate", 3, False), ("consolidate-greedy", 3, False)],
)
def test_consolidate_moves_pods_so_a_one_node_job_starts_at_once(
    policy: str, evictions: int, waits_for_an_end: bool
) -> None:
    sim = Simulator(_fragmented(), conf_for(policy), period=1.0)
    result = sim.run()
    assert result.unfinished_jobs == 0
    assert result.evictions == evictions
    big = sim.cluster.jobs.get("sim/big")
    assert big is None  # finished
    big_delay = max(result.queueing_delay)  # the fillers started at once; big is the one that waited
    assert (big_delay > 1900) is waits_for_an_end
    # Each moved 2-GPU pod had run about a minute and was bound again to a hole on another node.
    assert len(result.moved_wait) == evictions
    assert result.evicted_gpu_seconds == pytest.approx(evictions * 2 * 59, abs=evictions * 4)
    assert summary(result)["evicted_gpu_minutes"] == pytest.approx(evictions * 2 * 59 / 60, abs=0.5)
