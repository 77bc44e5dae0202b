"""The wrapper go.mod and ldflags that let us build Kubernetes commands from the module proxy."""

from __future__ import annotations

import pytest

from volcano_py.devcluster import gomod

UPSTREAM = """module k8s.io/kubernetes

go 1.24.0

godebug default=go1.24

require (
\tgithub.com/spf13/cobra v1.9.1
\tk8s.io/api v0.0.0
\tk8s.io/apimachinery v0.0.0
\tk8s.io/kubectl v0.0.0 // indirect
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
)
"""

TOOLS = ["k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kubectl"]


def test_staging_tag_follows_the_kubernetes_minor_and_patch() -> None:
    assert gomod.staging_version("v1.34.4") == "v0.34.4"
    assert gomod.staging_version("v1.36.13") == "v0.36.13"


@pytest.mark.parametrize("bad", ["1.34.4", "v1.34", "v2.0.0", "v1.34.4-rc.1"])
def test_a_non_release_version_is_refused_with_the_expected_form(bad: str) -> None:
    with pytest.raises(ValueError, match=r"use the form v1\.Y\.Z"):
        gomod.staging_version(bad)


def test_staging_modules_are_the_v0_0_0_requires_only() -> None:
    assert gomod.staging_modules(UPSTREAM) == ["k8s.io/api", "k8s.io/apimachinery", "k8s.io/kubectl"]


def test_wrapper_replaces_every_staging_module_with_its_published_tag() -> None:
    text = gomod.kubernetes_wrapper_gomod(UPSTREAM, "v1.34.4", TOOLS)
    lines = text.splitlines()
    assert lines[0] == "module local/k8sbuild"
    assert "go 1.24.0" in lines
    assert "godebug default=go1.24" in lines
    assert "require k8s.io/kubernetes v1.34.4" in lines
    for module in ("k8s.io/api", "k8s.io/apimachinery", "k8s.io/kubectl"):
        assert f"\t{module} => {module} v0.34.4" in lines
    assert "\tk8s.io/kubernetes/cmd/kubectl" in lines
    assert "v0.0.0" not in text
    assert "./staging" not in text


def test_wrapper_without_godebug_upstream_has_none() -> None:
    upstream = UPSTREAM.replace("godebug default=go1.24\n", "")
    assert "godebug" not in gomod.kubernetes_wrapper_gomod(upstream, "v1.34.4", TOOLS)


def test_wrapper_refuses_a_file_that_is_not_kubernetes_go_mod() -> None:
    with pytest.raises(ValueError, match="staging module"):
        gomod.kubernetes_wrapper_gomod("module example.com/x\n\ngo 1.24.0\n", "v1.34.4", TOOLS)
    with pytest.raises(ValueError, match="tools is empty"):
        gomod.kubernetes_wrapper_gomod(UPSTREAM, "v1.34.4", [])


def test_ldflags_stamp_the_release_for_servers_and_kubectl() -> None:
    flags = gomod.kubernetes_ldflags("v1.34.4")
    assert flags.startswith("-s -w ")
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"-X {package}.gitVersion=v1.34.4" in flags
        assert f"-X {package}.gitMinor=34" in flags
        assert f"-X {package}.gitMajor=1" in flags
