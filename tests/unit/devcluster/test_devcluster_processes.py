"""Children in their own process groups, stopped for certain; the state file that `dev down` reads."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from volcano_py.devcluster import commands, processes

SLEEP = shutil.which("sleep") or "/bin/sleep"
SH = shutil.which("sh") or "/bin/sh"


def test_stopping_a_child_kills_its_whole_group(tmp_path: Path) -> None:
    # The shell forks a grandchild; both must be gone after stop.
    child = processes.spawn("forker", [SH, "-c", f"{SLEEP} 300 & {SLEEP} 300"], tmp_path)
    pgid = child.process.pid
    assert os.getpgid(pgid) == pgid  # a session/group leader of its own
    processes.stop_children([child], grace_seconds=5)
    assert processes.group_members(pgid) == []
    assert child.process.returncode is not None


def test_a_child_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    child = processes.spawn("stubborn", [SH, "-c", f"trap '' TERM; {SLEEP} 300"], tmp_path)
    assert processes.stop_group(child.process.pid, grace_seconds=0.5, reap=child.process.poll)
    assert processes.group_members(child.process.pid) == []


def test_state_round_trips_and_dev_down_stops_recorded_children(tmp_path: Path) -> None:
    child = processes.spawn("sleeper", [SLEEP, "300"], tmp_path)
    state = processes.ClusterState(
        supervisor_pid=os.getpid(),
        supervisor_argv0="not-running",
        kubeconfig=str(tmp_path / "kubeconfig"),
        children=(child.record(),),
    )
    state.write(tmp_path)
    assert processes.ClusterState.read(tmp_path) == state
    assert processes.stop_recorded(tmp_path) == ["sleeper"]
    child.process.wait(timeout=5)
    assert not (tmp_path / processes.STATE_FILE).exists()
    assert processes.stop_recorded(tmp_path) == []


def test_a_reused_pid_is_not_ours(tmp_path: Path) -> None:
    record = processes.ChildRecord(name="etcd", pid=os.getpid(), argv0="/no/such/etcd", log="")
    assert not processes.is_same_process(record)


def test_a_corrupt_state_file_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / processes.STATE_FILE).write_text("{}")
    with pytest.raises(ValueError, match="delete it by hand"):
        processes.ClusterState.read(tmp_path)


def test_command_lines_wire_the_components_together(tmp_path: Path) -> None:
    layout = commands.RunLayout(tmp_path)
    ports = commands.Ports(etcd_client=2379, etcd_peer=2380, apiserver=6443)
    apiserver = commands.apiserver_args(Path("/bin/kube-apiserver"), layout, ports)
    assert "--etcd-servers=http://127.0.0.1:2379" in apiserver
    assert "--secure-port=6443" in apiserver
    assert f"--token-auth-file={layout.token_file}" in apiserver
    assert "--authorization-mode=RBAC" in apiserver
    assert not any(arg.startswith("--disable-admission-plugins") for arg in apiserver)
    kcm = commands.controller_manager_args(Path("/bin/kcm"), layout)
    assert f"--kubeconfig={layout.kubeconfig}" in kcm
    # Every default controller (ReplicationControllers included) but the kubelet-only TTL annotator.
    assert "--controllers=*,-ttl-controller" in kcm
    scheduler = commands.scheduler_args(Path("/bin/kube-scheduler"), layout)
    assert f"--kubeconfig={layout.kubeconfig}" in scheduler and "--leader-elect=false" in scheduler
    kwok = commands.kwok_args(Path("/bin/kwok"), layout)
    assert "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake" in kwok
    # Leases long enough for kwok's four renewal workers at 5,000 nodes, and a grace of two of them.
    assert "--node-lease-duration-seconds=120" in kwok
    assert "--node-monitor-grace-period=240s" in kcm
    etcd = commands.etcd_args(Path("/bin/etcd"), layout, ports)
    assert f"--data-dir={layout.etcd_data}" in etcd
