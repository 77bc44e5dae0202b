"""bench_scale's trace mode, its pure parts: the openb trace read, drawn to a cluster size and given its
gangs (``benchlib/openb``), each job's objects in each system's own terms with its GPU requests, what the
bound pods leave of the cluster (GPUs allocated and stranded) and how long they waited."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_scale import parse_args
from benchmarks.benchlib import openb
from benchmarks.benchlib import peer_kai as kai
from benchmarks.benchlib.objects import api_pod, api_podgroup
from benchmarks.scale import tracework as tw
from volcano_py.resources import CPU, GPU, MEMORY, Resource

JSON = dict[str, Any]
GI = 2**30
NODES_CSV = """sn,cpu_milli,memory_mib,gpu,model
n0,32000,262144,0,
n1,96000,393216,8,G2
n2,16000,122880,2,P100
"""
PODS_CSV = """name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,creation_time
late,4000,8192,1,1000,LS,900
share,6000,12288,1,460,LS,10
cpu,2000,0,0,0,BE,500
eight,64000,262144,8,1000,LS,20
"""


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    (tmp_path / openb.NODE_FILE).write_text(NODES_CSV)
    (tmp_path / openb.POD_FILE).write_text(PODS_CSV)
    return tmp_path


def test_the_trace_is_read_nodes_in_file_order_pods_in_creation_order(trace_dir: Path) -> None:
    assert openb.read_nodes(trace_dir) == [
        openb.TraceNode("n0", 32000, 262144, 0, ""),
        openb.TraceNode("n1", 96000, 393216, 8, "G2"),
        openb.TraceNode("n2", 16000, 122880, 2, "P100"),
    ]
    assert openb.read_pods(trace_dir) == [
        ("share", openb.Shape(6000, 12288, 460)),
        ("eight", openb.Shape(64000, 262144, 8000)),
        ("cpu", openb.Shape(2000, 0, 0)),
        ("late", openb.Shape(4000, 8192, 1000)),
    ]


@pytest.mark.parametrize(
    ("gpu_milli", "whole"), [(0, 0), (1, 1), (460, 1), (999, 1), (1000, 1), (2000, 2), (8000, 8)]
)
def test_a_share_of_a_gpu_is_asked_for_as_the_whole_card(gpu_milli: int, whole: int) -> None:
    assert openb.Shape(1000, 1024, gpu_milli).whole_gpus == whole


@pytest.mark.parametrize(
    ("items", "count", "expected"),
    [
        ("abcdef", 3, list("ace")),  # fewer: every k-th, in order
        ("abc", 3, list("abc")),
        ("abc", 7, list("aaabbcc")),  # more: each repeated in place
        ("abc", 0, []),
    ],
)
def test_stretch_draws_evenly_in_order(items: str, count: int, expected: list[str]) -> None:
    assert openb.stretch(items, count) == expected


def test_stretch_keeps_the_mix_of_a_sorted_list() -> None:
    kinds = ["cpu"] * 300 + ["gpu"] * 700
    for count in (50, 1000, 5000):
        drawn = openb.stretch(kinds, count)
        assert len(drawn) == count
        assert drawn.count("gpu") / count == pytest.approx(0.7, abs=0.02)


@pytest.mark.parametrize(
    ("pods", "trace_nodes", "nodes", "expected"),
    [(8152, 1523, 1523, 8152), (8152, 1523, 1000, 5353), (8152, 1523, 5000, 26763), (10, 1000, 1, 1)],
)
def test_the_pods_scale_with_the_nodes(pods: int, trace_nodes: int, nodes: int, expected: int) -> None:
    assert openb.scaled_pod_count(pods, trace_nodes, nodes) == expected


def test_a_gang_of_eight_gpu_pods_follows_every_fortieth_pod() -> None:
    pods = [(f"p{i}", openb.Shape(1000, 1024, 1000)) for i in range(100)]
    jobs = list(openb.arrivals(pods, gangs=True))
    gang_at = [i for i, job in enumerate(jobs) if job.gang]
    assert gang_at == [40, 81]  # after pods 39 and 79
    for index in gang_at:
        assert jobs[index].shape == openb.GANG_POD
        assert jobs[index].size in openb.GANG_SIZES
    assert [job.name for job in jobs if job.gang] == ["gang-39", "gang-79"]
    assert [job.size for job in jobs if job.gang] == [
        job.size for job in openb.arrivals(pods, True) if job.gang
    ]
    assert [job for job in openb.arrivals(pods, gangs=False) if job.gang] == []


def test_the_workload_is_the_trace_drawn_to_the_run(trace_dir: Path) -> None:
    work = tw.workload(trace_dir, 6)  # twice the trace's 3 nodes: twice its 4 pods
    assert [node.name for node in work.nodes] == ["n0", "n0", "n1", "n1", "n2", "n2"]
    assert work.gpus == 20
    assert [job.shape.gpu_milli for job in work.jobs] == [460, 460, 8000, 8000, 0, 0, 1000, 1000]
    assert work.pods == 8


def test_the_nodes_carry_the_traces_cores_memory_and_gpus() -> None:
    nodes = [openb.TraceNode("a", 96000, 393216, 8, "G2"), openb.TraceNode("b", 32000, 262144, 0, "")]
    bodies = tw.node_bodies(nodes)
    assert [body["metadata"]["name"] for body in bodies] == ["node-0", "node-1"]
    first, second = (body["status"]["allocatable"] for body in bodies)
    assert (first["cpu"], first["memory"], first[GPU]) == ("96000m", "393216Mi", "8")
    assert (second["cpu"], second["memory"]) == ("32000m", "262144Mi")
    assert GPU not in second


GANG = openb.Job("gang-39", 3, openb.GANG_POD, gang=True)
SHARE = openb.Job("share", 1, openb.Shape(6000, 12288, 460), gang=False)
GROUP_MARKS = {  # where each system reads a pod's group
    "volcano-py": ("annotations", "scheduling.k8s.io/group-name"),
    "volcano": ("annotations", "scheduling.k8s.io/group-name"),
    "kai": ("annotations", "pod-group-name"),
    "coscheduling": ("labels", "scheduling.x-k8s.io/pod-group"),
    "yunikorn": ("annotations", "yunikorn.apache.org/task-group-name"),
}


@pytest.mark.parametrize(
    ("system", "job", "group_path", "scheduler", "grouped"),
    [
        ("null", GANG, None, "volcano", False),
        ("kube-scheduler", GANG, None, "kube-scheduler-peer", False),
        ("volcano-py", GANG, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups", "volcano", True),
        ("volcano", GANG, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups", "volcano", True),
        ("kai", GANG, "/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups", "kai-scheduler", True),
        ("coscheduling", GANG, "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/podgroups", "coscheduling",
         True),
        ("yunikorn", GANG, None, "yunikorn", True),  # task groups on the pods
        ("null", SHARE, None, "volcano", False),
        ("volcano-py", SHARE, None, "volcano", False),  # a bare pod: volcano-py schedules it so
        ("volcano", SHARE, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups", "volcano", True),
        ("kai", SHARE, "/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups", "kai-scheduler", True),
        ("yunikorn", SHARE, None, "yunikorn", False),
        ("coscheduling", SHARE, None, "coscheduling", False),
    ],
)  # fmt: skip
def test_each_system_gets_the_job_in_its_own_terms_with_its_gpu_requests(
    system: str, job: openb.Job, group_path: str | None, scheduler: str, grouped: bool
) -> None:
    bodies = tw.job_bodies("ns", "g000040", job, system)
    groups = [(path, body) for path, body in bodies if body["kind"] != "Pod"]
    pods = [body for path, body in bodies if body["kind"] == "Pod"]
    assert [path for path, _ in groups] == ([group_path] if group_path else [])
    assert [body["spec"]["minMember"] for _, body in groups] == ([job.size] if group_path else [])
    assert bodies[: len(groups)] == groups  # the gang object before its pods
    assert [pod["metadata"]["name"] for pod in pods] == [f"g000040-{i}" for i in range(job.size)]
    want = {"cpu": f"{job.shape.cpu_milli}m", "memory": f"{job.shape.memory_mib}Mi",
            GPU: str(job.shape.whole_gpus)}  # fmt: skip
    for pod in pods:
        assert pod["spec"]["schedulerName"] == scheduler
        resources = pod["spec"]["containers"][0]["resources"]
        assert resources == {"requests": want, "limits": {GPU: want[GPU]}}
        if system in GROUP_MARKS:
            where, key = GROUP_MARKS[system]
            assert (key in (pod["metadata"].get(where) or {})) is grouped
        else:
            assert "scheduling.k8s.io/group-name" not in (pod["metadata"].get("annotations") or {})


def test_yunikorns_task_group_reserves_a_members_gpus() -> None:
    pod = next(body for _, body in tw.job_bodies("ns", "g1", GANG, "yunikorn") if body["kind"] == "Pod")
    (group,) = json.loads(pod["metadata"]["annotations"]["yunikorn.apache.org/task-groups"])
    assert group["minMember"] == 3
    assert group["minResource"][GPU] == "8"


def test_kai_translate_keeps_the_requests_and_names_kais_group() -> None:
    body = api_pod("g1-0").req(cpu="2", gpu=4).limit_gpus().group("g1").obj()
    translated = kai.translate([("/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups",
                                 api_podgroup("g1", 2)), ("/api/v1/namespaces/ns/pods", body)])  # fmt: skip
    (group_path, group), (pod_path, pod) = translated
    assert group_path == "/apis/scheduling.run.ai/v2alpha2/namespaces/ns/podgroups"
    assert group == kai.podgroup("g1", 2)
    assert pod_path == "/api/v1/namespaces/ns/pods"
    assert pod["metadata"]["annotations"] == {"pod-group-name": "g1"}
    assert pod["spec"]["containers"] == body["spec"]["containers"]
    assert "scheduling.k8s.io/group-name" in body["metadata"]["annotations"]  # the original left alone


def test_a_pod_without_gpus_gets_no_gpu_limit() -> None:
    body = api_pod("p").req(cpu="1").limit_gpus().obj()
    assert body["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1"}}


CAPS = {"a": (96000, 384 * GI, 8000), "b": (16000, 120 * GI, 2000), "c": (32000, 256 * GI, 0)}
ONE_GPU = Resource({CPU: 12000, MEMORY: 16 * GI, GPU: 1000})
EIGHT = Resource({CPU: 32000, MEMORY: 128 * GI, GPU: 8000})


@pytest.mark.parametrize(
    ("placed", "likely", "allocated", "stranded", "in_use", "over"),
    [
        ([], [ONE_GPU], 0, 0, 0, 0),  # idle nodes strand nothing
        ([("a", (12000, 16 * GI, 1000))], [ONE_GPU], 1, 0, 1, 0),  # 7 free GPUs a 1-GPU pod can use
        ([("a", (12000, 16 * GI, 1000))], [EIGHT], 1, 7, 1, 0),  # none of the likely sizes fits beside
        ([("a", (90000, 16 * GI, 0))], [ONE_GPU], 0, 8, 1, 0),  # GPUs left without the cores to use them
        ([("b", (5000, 8 * GI, 1000)), ("c", (4000, 8 * GI, 0))], [ONE_GPU], 1, 1, 2, 0),  # b: 11 cores left
        ([("b", (1000, GI, 1000)), ("b", (1000, GI, 1000)), ("b", (1000, GI, 1000))], [ONE_GPU], 3, 0, 1, 1),
    ],
)
def test_gpus_allocated_and_stranded_from_the_bound_pods(
    placed: list[tuple[str, tw.Vector]], likely: list[Resource], allocated: int, stranded: int, in_use: int,
    over: int,
) -> None:  # fmt: skip
    result = tw.placement(CAPS, placed, likely)
    assert result["gpus_allocated"] == allocated
    assert result["stranded_gpus"] == stranded
    assert result["nodes_in_use"] == in_use
    assert result["overcommitted_nodes"] == over
    assert result["gpu_allocation_pct"] == round(100 * allocated / 10, 2)


GANG_POD = (32000, 128 * GI, 8000)


@pytest.mark.parametrize(
    ("placed", "room", "split"),
    [
        ([], 1, 0),  # a: three by cores and memory, one by its 8 GPUs; b and c: none
        ([("a", (12000, 16 * GI, 1000))], 0, 7),  # one GPU used: a takes no gang pod, 7 GPUs split off
        ([("b", (1000, GI, 1000))], 1, 0),  # b never took one: its free GPU is not split off
        ([("a", (70000, 16 * GI, 0))], 0, 8),  # the cores are gone: 8 free GPUs no gang pod can use
    ],
)
def test_room_for_gang_pods_and_gpus_split_below_their_size(
    placed: list[tuple[str, tw.Vector]], room: int, split: int
) -> None:
    caps = {**CAPS, "d": (96000, 384 * GI, 16000)}  # d takes two
    result = tw.placement(caps, placed, [ONE_GPU, EIGHT], GANG_POD)
    assert result["gang_pod_room"] == room + 2
    assert result["gpus_free_split"] == split
    assert "gang_pod_room" not in tw.placement(caps, placed, [ONE_GPU])


def test_the_gang_request_is_the_largest_gang_pods() -> None:
    assert tw.gang_request([GANG, SHARE]) == GANG_POD
    assert tw.gang_request([SHARE]) is None


def test_likely_requests_are_the_distinct_gpu_requests() -> None:
    jobs = [GANG, SHARE, openb.Job("x", 1, openb.Shape(6000, 12288, 1000), False),
            openb.Job("cpu", 1, openb.Shape(1000, 0, 0), False)]  # fmt: skip
    assert tw.likely_requests(jobs) == [
        Resource({CPU: 6000, MEMORY: 12288 * 2**20, GPU: 1000}),
        Resource({CPU: 32000, MEMORY: 128 * GI, GPU: 8000}),
    ]


@pytest.mark.parametrize(
    ("shape", "fits"),
    [
        (openb.Shape(96000, 393216, 8000), True),
        (openb.Shape(96001, 1024, 1000), False),  # the only 96-core node
        (openb.Shape(1000, 1024, 9000), False),  # no node has 9 GPUs
        (openb.Shape(32000, 262144, 0), True),
    ],
)
def test_a_pod_fits_an_empty_node_or_none(shape: openb.Shape, fits: bool) -> None:
    assert tw.fits_empty(shape, CAPS.values()) is fits


def test_gang_wait_runs_from_its_first_pod_created_to_its_last_bound() -> None:
    created = {"g1-0": 10.0, "g1-1": 10.5, "g2-0": 11.0, "g2-1": 11.0, "g3-0": 12.0, "g3-1": 12.0,
               "p1-0": 10.0, "p2-0": 20.0, "p3-0": 30.0}  # fmt: skip
    bound = {"g1-0": 12.0, "g1-1": 13.0, "g2-0": 11.5, "p1-0": 10.25, "p2-0": 21.0}
    result = tw.waits(created, bound, ["g1", "g2", "g3"])
    assert result["gangs"] == 3
    assert result["gangs_whole"] == 1
    assert result["partial_gangs"] == 1  # g2: one of two
    assert result["gang_wait_ms_p50"] == result["gang_wait_ms_p90"] == 3000.0
    assert result["one_pod_wait_ms_p50"] == 1000.0
    assert result["one_pod_wait_ms_p99"] == 1000.0


def test_waits_of_nothing_bound_are_none() -> None:
    result = tw.waits({"g1-0": 1.0, "p1-0": 1.0}, {}, ["g1"])
    assert result["gang_wait_ms_p50"] is None
    assert result["one_pod_wait_ms_p99"] is None
    assert result["partial_gangs"] == 0


def test_the_first_refusal_is_the_first_pod_left_waiting() -> None:
    refusal = tw.FirstRefusal(after=30.0)
    for name in ("a", "b", "c"):
        refusal.created(name)
    created = {"a": 0.0, "b": 1.0}  # c's create still in flight
    assert refusal.check(created, {}, 29.0) is None
    assert refusal.check(created, {"a": 2.0}, 30.5) is None  # b has waited 29.5 s
    assert refusal.check(created, {"a": 2.0}, 31.0) == "b"
    assert refusal.check(created, {"a": 2.0, "b": 40.0}, 100.0) is None  # c not created yet
    created["c"] = 50.0
    assert refusal.check(created, {"a": 2.0, "b": 40.0}, 80.0) == "c"
    assert refusal.check(created, {"a": 2.0, "b": 40.0, "c": 90.0}, 200.0) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mode", "trace", "churn"], "runs alone"),
        (["--mode", "trace", "--system", "volcano-py-sharded"], "does not run"),
        (["--mode", "trace", "--system", "null", "volcano-py-agent"], "does not run volcano-py-agent"),
        (["--mode", "trace", "--trace-rate", "0"], "above 0"),
    ],
)
def test_the_trace_modes_arguments_refused(
    argv: list[str], message: str, trace_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse_args([*argv, "--trace-dir", str(trace_dir)])
    assert message in capsys.readouterr().err


def test_the_trace_mode_is_not_among_the_default_modes(trace_dir: Path) -> None:
    assert "trace" not in parse_args([]).mode
    assert parse_args(["--mode", "trace", "--trace-dir", str(trace_dir)]).mode == ["trace"]
    assert math.isclose(parse_args(["--mode", "trace", "--trace-dir", str(trace_dir)]).trace_rate, 20.0)
