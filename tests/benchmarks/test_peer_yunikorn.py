"""bench_scale's ``yunikorn`` system, its pure parts: each shape's bodies in YuniKorn's terms (applications,
task groups), placeholders told apart, the queue configuration, partial gangs, and how the build proves a
release tag holds the files go.sum pins for a release-candidate tag."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.benchlib import peer_yunikorn as yk
from benchmarks.benchlib.gosum import hash1, pinned_sum, release_of, zip_sum_as
from benchmarks.benchlib.stats import partial_gangs
from benchmarks.build_yunikorn import module_version
from benchmarks.scale.backlog import backlog_bodies
from volcano_py.api import constants as c

JSON = dict[str, Any]


def pods_of(bodies: list[tuple[str, JSON]]) -> list[JSON]:
    return [body for _, body in bodies if body["kind"] == "Pod"]


def task_groups(pod: JSON) -> list[JSON]:
    groups: list[JSON] = json.loads(pod["metadata"]["annotations"][yk.TASK_GROUPS])
    return groups


@pytest.mark.parametrize("size", [20, 500], ids=["gangs-of-20", "gangs-of-500"])
def test_a_gang_is_one_application_with_one_hard_task_group_of_its_size(size: int) -> None:
    bodies = yk.translate(backlog_bodies("ns", 2 * size, size, gang_singles=False))
    assert all(body["kind"] == "Pod" for _, body in bodies)  # no PodGroups: YuniKorn reads none
    assert len(bodies) == 2 * size
    for path, pod in bodies:
        meta = pod["metadata"]
        app = meta["name"].rsplit("-", 1)[0]
        assert path == "/api/v1/namespaces/ns/pods"
        assert pod["spec"]["schedulerName"] == "yunikorn"
        assert meta["labels"] == {"applicationId": app, "queue": "root.bench"}
        assert c.KUBE_GROUP_NAME_KEY not in meta["annotations"]
        assert meta["annotations"][yk.TASK_GROUP_NAME] == "members"
        assert meta["annotations"][yk.POLICY] == "gangSchedulingStyle=Hard"
        assert json.loads(meta["annotations"][yk.USER_INFO])["user"] == "bench"
        # Placeholders as large as a member: a member larger than its placeholder would cancel it.
        assert task_groups(pod) == [{"name": "members", "minMember": size, "minResource": {"cpu": "100m"}}]
    assert len({pod["metadata"]["labels"]["applicationId"] for _, pod in bodies}) == 2


def test_a_one_pod_job_is_an_application_of_its_own_without_task_groups() -> None:
    bodies = yk.translate(backlog_bodies("ns", 3, 1, gang_singles=False))
    assert [pod["metadata"]["labels"]["applicationId"] for pod in pods_of(bodies)] == [
        "job0-0", "job1-0", "job2-0",
    ]  # fmt: skip
    assert all(yk.TASK_GROUPS not in pod["metadata"]["annotations"] for pod in pods_of(bodies))


def test_with_gang_singles_a_one_pod_job_has_a_task_group_of_one() -> None:
    (pod,) = pods_of(yk.translate(backlog_bodies("ns", 1, 1, gang_singles=True)))
    assert pod["metadata"]["labels"]["applicationId"] == "job0"
    assert task_groups(pod)[0]["minMember"] == 1


def test_a_pod_keeps_everything_else_and_its_source_is_untouched() -> None:
    (source,) = pods_of(backlog_bodies("ns", 1, 1, gang_singles=True))
    source["metadata"]["annotations"]["kwok.volcano-py.io/complete-after"] = "30s"
    before = json.dumps(source, sort_keys=True)
    member = yk.as_member(source, "c7", 10)
    assert json.dumps(source, sort_keys=True) == before
    assert member["metadata"]["annotations"]["kwok.volcano-py.io/complete-after"] == "30s"
    assert member["spec"]["containers"] == source["spec"]["containers"]


def test_a_pod_of_several_containers_is_refused() -> None:
    (source,) = pods_of(backlog_bodies("ns", 1, 1, gang_singles=False))
    source["spec"]["containers"].append(dict(source["spec"]["containers"][0], name="sidecar"))
    with pytest.raises(ValueError, match="one container expected"):
        yk.as_member(source, "a", 2)


def test_placeholders_are_told_from_the_workloads_pods() -> None:
    placeholder = {"metadata": {"annotations": {"internal.yunikorn.apache.org/placeholder": "true"}}}
    (member,) = pods_of(yk.translate(backlog_bodies("ns", 20, 20, gang_singles=False))[:1])
    assert yk.is_placeholder(placeholder)
    assert not yk.is_placeholder(member)
    assert not yk.is_placeholder({"metadata": {"annotations": None}})


def test_the_queue_configuration_is_one_unlimited_queue_named_by_the_label() -> None:
    data = yk.configmap("warning")["data"]
    assert data["log.level"] == "warn"
    (partition,) = yaml.safe_load(data["queues.yaml"])["partitions"]
    assert partition["placementrules"] == [{"name": "provided"}]
    (root,) = partition["queues"]
    assert root["name"] == "root" and root["submitacl"] == "*"
    assert root["queues"] == [{"name": "bench"}]  # no resources: no limit


def test_schedulable_nodes_are_counted() -> None:
    assert yk.schedulable_nodes([{"schedulable": True}, {"schedulable": False}, {}]) == 1


@pytest.mark.parametrize(
    ("bound", "partial"),
    [
        (set(), 0),
        ({"g0-0", "g0-1"}, 0),
        ({"g0-0"}, 1),
        ({"g0-0", "g1-1"}, 2),
        ({"g0-0", "g0-1", "g1-0", "g1-1", "s-0"}, 0),
    ],
)
def test_partial_gangs(bound: set[str], partial: int) -> None:
    assert partial_gangs(["g0-0", "g0-1", "g1-0", "g1-1", "s-0"], bound) == partial


# -- the build -----------------------------------------------------------------------------------------------


def test_release_candidate_tags_lead_to_their_release() -> None:
    assert release_of("v1.9.0-1") == "v1.9.0"
    assert release_of("v1.9.0") is None
    assert release_of("v0.0.0-20260810093905-7dc1287c839f") is None  # a pseudo-version has no release


GO_MOD = """module github.com/apache/yunikorn-k8shim

require (
\tgithub.com/apache/yunikorn-core v1.9.0-1
\tgithub.com/apache/yunikorn-scheduler-interface v1.9.0-0
)

require github.com/google/uuid v1.6.0
"""


def test_module_versions_are_read_from_go_mod() -> None:
    assert module_version(GO_MOD, "github.com/apache/yunikorn-core") == "v1.9.0-1"
    assert module_version(GO_MOD, "github.com/google/uuid") == "v1.6.0"
    assert module_version(GO_MOD, "k8s.io/api") is None


def test_the_pinned_sum_is_the_files_not_the_go_mod() -> None:
    go_sum = "m v1.0.0-1 h1:files=\nm v1.0.0-1/go.mod h1:gomod=\n"
    assert pinned_sum(go_sum, "m", "v1.0.0-1") == "h1:files="
    assert pinned_sum(go_sum, "m", "v1.0.0") is None


def module_zip(tmp_path: Path, prefix: str, files: dict[str, bytes]) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(f"{prefix}/{name}", data)
    path = tmp_path / "m.zip"
    path.write_bytes(buffer.getvalue())
    return path


def test_a_release_zip_is_summed_as_the_pinned_version(tmp_path: Path) -> None:
    files = {"go.mod": b"module m\n", "a/b.go": b"package a\n"}
    zipped = module_zip(tmp_path, "m@v1.0.0", files)
    as_pinned = hash1({f"m@v1.0.0-1/{name}": data for name, data in files.items()})
    assert zip_sum_as(zipped, "m", "v1.0.0", "v1.0.0-1") == as_pinned
    assert zip_sum_as(zipped, "m", "v1.0.0", "v1.0.0") != as_pinned  # the names are part of the sum
    changed = module_zip(tmp_path, "m@v1.0.0", {**files, "a/b.go": b"package b\n"})
    assert zip_sum_as(changed, "m", "v1.0.0", "v1.0.0-1") != as_pinned
