"""The kube-scheduler peers' workload in their own terms: each backlog shape's bodies as coscheduling's
PodGroups and labelled pods, or kube-scheduler's plain pods; the shapes each supports; their configuration."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from benchmarks.benchlib import peer_kube
from benchmarks.benchlib.peer_kube import COSCHEDULING, PLAIN, POD_GROUP_LABEL, SCHEDULER_NAMES
from benchmarks.scale.backlog import backlog_bodies
from volcano_py.api import constants as c

NS = "backlog-ns"
X_GROUPS = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{NS}/podgroups"
PODS = f"/api/v1/namespaces/{NS}/pods"


def kinds(objects: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [body["kind"] for _, body in objects]


@pytest.mark.parametrize(
    ("total", "size"),
    [pytest.param(40, 20, id="20-pod gangs"), pytest.param(1000, 500, id="500-pod gangs")],
)
def test_coscheduling_gangs_are_its_podgroups_and_labelled_pods(total: int, size: int) -> None:
    objects = peer_kube.own_terms(COSCHEDULING, backlog_bodies(NS, total, size, False))
    groups = [body for path, body in objects if path == X_GROUPS]
    pods = [body for path, body in objects if path == PODS]
    assert len(groups) == total // size and len(pods) == total and len(objects) == len(groups) + len(pods)
    assert kinds(objects) == ["PodGroup"] * len(groups) + ["Pod"] * total  # a group before its members
    for group in groups:
        assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
        assert group["spec"] == {"minMember": size}
    members: dict[str, int] = {}
    for body in pods:
        group_name = body["metadata"]["labels"][POD_GROUP_LABEL]
        members[group_name] = members.get(group_name, 0) + 1
        assert body["metadata"]["name"].startswith(f"{group_name}-")
        assert c.KUBE_GROUP_NAME_KEY not in body["metadata"]["annotations"]  # its own gang object only
        assert body["spec"]["schedulerName"] == SCHEDULER_NAMES[COSCHEDULING]
    assert members == {group["metadata"]["name"]: size for group in groups}


@pytest.mark.parametrize("system", [PLAIN, COSCHEDULING])
@pytest.mark.parametrize("gang_singles", [False, True], ids=["plain pods", "one-pod PodGroups"])
def test_one_pod_jobs(system: str, gang_singles: bool) -> None:
    objects = peer_kube.own_terms(system, backlog_bodies(NS, 5, 1, gang_singles))
    pods = [body for path, body in objects if path == PODS]
    assert len(pods) == 5
    assert all(body["spec"]["schedulerName"] == SCHEDULER_NAMES[system] for body in pods)
    grouped = system == COSCHEDULING and gang_singles
    assert len(objects) == 5 + (5 if grouped else 0)  # kube-scheduler drops a one-pod group: nothing to hold
    assert all((POD_GROUP_LABEL in (body["metadata"].get("labels") or {})) == grouped for body in pods)


def test_plain_kube_scheduler_refuses_a_gang() -> None:
    with pytest.raises(ValueError, match="no gangs"):
        peer_kube.own_terms(PLAIN, backlog_bodies(NS, 40, 20, False))


def test_other_systems_and_the_inputs_are_left_alone() -> None:
    bodies = backlog_bodies(NS, 40, 20, False)
    before = copy.deepcopy(bodies)
    assert peer_kube.own_terms("volcano-py", bodies) == before
    peer_kube.own_terms(COSCHEDULING, bodies)
    assert bodies == before


def test_scheduler_config() -> None:
    plain = peer_kube.scheduler_config(PLAIN, Path("/run/kubeconfig"), 2000.0, 2000)
    assert plain["clientConnection"] == {"kubeconfig": "/run/kubeconfig", "qps": 2000.0, "burst": 2000}
    assert plain["leaderElection"] == {"leaderElect": False}
    assert plain["profiles"] == [{"schedulerName": SCHEDULER_NAMES[PLAIN]}]
    (profile,) = peer_kube.scheduler_config(COSCHEDULING, Path("/k"), 50.0, 100)["profiles"]
    assert profile["schedulerName"] == SCHEDULER_NAMES[COSCHEDULING]
    assert profile["plugins"]["queueSort"] == {
        "enabled": [{"name": "Coscheduling"}],
        "disabled": [{"name": "*"}],
    }
    assert "default-scheduler" not in SCHEDULER_NAMES.values()  # the control plane's own takes none


def test_namespace_of() -> None:
    assert peer_kube.namespace_of(PODS) == NS
    assert peer_kube.namespace_of("/apis/scheduling.volcano.sh/v1beta1/namespaces/x/podgroups") == "x"
