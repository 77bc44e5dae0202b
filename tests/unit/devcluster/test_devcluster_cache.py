"""Cache hits: a cached binary counts only if it runs and reports the pinned version."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from volcano_py import home
from volcano_py.devcluster import build, cache, versions
from volcano_py.devcluster.ports import free_ports
from volcano_py.devcluster.versions import ETCD, KUBE_APISERVER, KUBECTL, KWOK, Component


def _fake_binary(cache: Path, component: Component, prints: str) -> Path:
    binary = component.binary(cache)
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text(f"#!/bin/sh\necho '{prints}'\n")
    binary.chmod(0o755)
    return binary


def test_reports_version_is_exact() -> None:
    assert versions.reports_version(KUBE_APISERVER, "Kubernetes v1.34.4\n")
    assert not versions.reports_version(KUBE_APISERVER, "Kubernetes v1.34.40\n")
    assert not versions.reports_version(KUBE_APISERVER, "Kubernetes v0.0.0-master+$Format:%H$\n")
    assert versions.reports_version(KUBECTL, "Client Version: v1.34.4\nKustomize Version: v5.7.1\n")
    assert versions.reports_version(ETCD, "etcd Version: 3.6.16\nGit SHA: Not provided\n")
    assert versions.reports_version(KWOK, "kwok version v0.8.0 go1.26.8 (linux/amd64)\n")


def test_cached_binary_with_the_right_version_is_a_hit(tmp_path: Path) -> None:
    _fake_binary(tmp_path, KUBE_APISERVER, "Kubernetes v1.34.4")
    assert cache.is_cached(KUBE_APISERVER, tmp_path)


def test_wrong_version_or_broken_or_missing_binary_is_a_miss(tmp_path: Path) -> None:
    _fake_binary(tmp_path, KUBE_APISERVER, "Kubernetes v1.33.0")
    assert not cache.is_cached(KUBE_APISERVER, tmp_path)
    binary = _fake_binary(tmp_path, ETCD, "etcd Version: 3.6.16")
    binary.chmod(0o644)
    assert not cache.is_cached(ETCD, tmp_path)
    assert not cache.is_cached(KUBECTL, tmp_path)


def test_kwok_without_its_stage_files_is_a_miss(tmp_path: Path) -> None:
    _fake_binary(tmp_path, KWOK, "kwok version v0.8.0")
    assert not cache.is_cached(KWOK, tmp_path)
    stage_dir = versions.kwok_stage_dir(tmp_path)
    stage_dir.mkdir()
    for relative in versions.KWOK_STAGE_FILES:
        (stage_dir / Path(relative).name).write_text("kind: Stage\n")
    assert cache.is_cached(KWOK, tmp_path)


def test_ensure_binaries_builds_nothing_when_all_are_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for component, prints in [
        (ETCD, "etcd Version: 3.6.16"),
        (KUBE_APISERVER, "Kubernetes v1.34.4"),
        (versions.KUBE_CONTROLLER_MANAGER, "Kubernetes v1.34.4"),
        (versions.KUBE_SCHEDULER, "Kubernetes v1.34.4"),
        (KUBECTL, "Client Version: v1.34.4"),
        (KWOK, "kwok version v0.8.0"),
    ]:
        _fake_binary(tmp_path, component, prints)
    versions.kwok_stage_dir(tmp_path).mkdir()
    for relative in versions.KWOK_STAGE_FILES:
        (versions.kwok_stage_dir(tmp_path) / Path(relative).name).write_text("kind: Stage\n")
    monkeypatch.setenv("PATH", "/nonexistent")  # no Go: any build attempt would fail loudly
    paths = build.ensure_binaries(tmp_path)
    assert paths["kube-apiserver"] == KUBE_APISERVER.binary(tmp_path)
    assert cache.missing(tmp_path) == []


def test_missing_go_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(build.ToolchainMissing, match=r"install Go >= 1\.26 from https://go\.dev/dl/"):
        build.ensure_binaries(tmp_path / "cache")


def test_old_go_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_go = tmp_path / "go"
    fake_go.write_text("#!/bin/sh\necho go1.22.5\n")
    fake_go.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}/usr/bin:/bin")
    with pytest.raises(build.ToolchainMissing, match=r"Go 1\.22, too old"):
        build.check_go()


def test_parse_go_version() -> None:
    assert versions.parse_go_version("go1.26.8\n") == (1, 26)
    assert versions.parse_go_version("go1.27rc1") == (1, 27)
    with pytest.raises(ValueError, match="cannot read a Go version"):
        versions.parse_go_version("devel")


def test_cache_dir_honours_the_environment(tmp_path: Path) -> None:
    assert home.cache_dir({"VOLCANO_PY_CACHE": str(tmp_path)}) == tmp_path
    assert home.cache_dir({}) == Path.home() / ".cache" / "volcano-py"
    assert KUBE_APISERVER.binary(tmp_path) == tmp_path / "bin" / "kube-apiserver-v1.34.4" / "kube-apiserver"


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(5)
    assert len(set(ports)) == 5
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_format_elapsed() -> None:
    assert build.format_elapsed(7.9) == "7s"
    assert build.format_elapsed(192) == "3m12s"
