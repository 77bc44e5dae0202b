"""`volcano-py dev`: bad input is refused before anything starts, and `dev down` is safe to repeat."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from volcano_py.cli import dev as dev_cli
from volcano_py.cli.main import main
from volcano_py.devcluster import restarts
from volcano_py.devcluster.versions import Component, build_plan


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--cpu", "lots"], "--cpu: cpu='lots'"),
        (["--memory", "1 GB"], "--memory: memory='1 GB'"),
        (["--pods", "0"], "--pods: pods=0"),
        (["--gpus-per-node", "-1"], "--gpus-per-node: gpus=-1"),
        (["--nodes", "-2"], "--nodes -2: must be >= 0"),
    ],
)
def test_dev_up_refuses_bad_node_sizes_naming_the_flag(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dev", "up", "--run-dir", str(tmp_path), *argv]) == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "state.json").exists()


def test_dev_down_without_a_cluster_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dev", "down", "--run-dir", str(tmp_path)]) == 0
    assert "no control plane running" in capsys.readouterr().out


def test_dev_build_without_go_explains_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VOLCANO_PY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["dev", "build"]) == 2
    assert "https://go.dev/dl/" in capsys.readouterr().err


TEST_ONLY_TOOLS = {"helm", "promtool", "prometheus"}


def test_the_first_commands_build_names_no_test_only_tool() -> None:
    # `volcano-py dev build` (the README's first command) builds what `up --demo` starts, and nothing else.
    demo = {component.name for component in build_plan()}
    assert demo == {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"}
    assert not demo & TEST_ONLY_TOOLS
    assert {c.name for c in build_plan(with_test_tools=True)} == demo | TEST_ONLY_TOOLS


@pytest.mark.parametrize(("argv", "tools"), [([], False), (["--with-test-tools"], True)])
def test_dev_build_builds_the_plan(
    argv: list[str], tools: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []

    def ensure(components: Sequence[Component]) -> dict[str, Path]:
        asked.extend(c.name for c in components)
        return {c.name: Path("/cache/bin") / c.name for c in components}

    monkeypatch.setattr(dev_cli, "ensure_plan", ensure)
    assert main(["dev", "build", *argv]) == 0
    assert bool(set(asked) & TEST_ONLY_TOOLS) is tools
    assert "kube-apiserver: /cache/bin/kube-apiserver" in capsys.readouterr().out


def test_dev_restart_without_a_dev_up_says_how_to_start_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dev", "restart", "kwok", "--run-dir", str(tmp_path)]) == 1
    assert "no `volcano-py dev up` is running" in capsys.readouterr().err


def test_dev_restart_refuses_a_negative_down_time_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dev", "restart", "etcd", "--down-seconds", "-1", "--run-dir", str(tmp_path)]) == 2
    assert "--down-seconds must be >= 0" in capsys.readouterr().err


def test_dev_restart_refuses_an_unknown_component_listing_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["dev", "restart", "kubelet"])
    choices = "choose from 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'"
    assert choices in capsys.readouterr().err


def test_a_restart_request_is_taken_once_by_the_supervisor(tmp_path: Path) -> None:
    request = restarts.new_request("kube-apiserver", down_seconds=2, hard=True)
    (tmp_path / restarts.REQUEST_FILE).write_text(json.dumps(dataclasses.asdict(request)))
    assert restarts.take_request(tmp_path) == request
    assert restarts.take_request(tmp_path) is None
