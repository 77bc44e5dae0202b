"""The wrapper ``go.mod`` that lets us build Kubernetes commands from the module proxy, and their ldflags.

``k8s.io/kubernetes`` requires each of its staging modules at ``v0.0.0`` and maps them to ``./staging/...``
with ``replace`` lines, which Go ignores outside the main module. A wrapper main module that requires
``k8s.io/kubernetes vX.Y.Z`` and replaces every staging module with its published ``v0.Y.Z`` tag resolves. The
staging list is read from Kubernetes' own go.mod, so a new release needs no hand-kept list. Pure text in, text
out: the builder does the I/O.
"""

from __future__ import annotations

import re

_STAGING_REQUIRE = re.compile(r"^\s*(k8s\.io/[a-z0-9-]+) v0\.0\.0\s*(?://.*)?$")
_RELEASE = re.compile(r"^v1\.(\d+)\.(\d+)$")

# The build date is fixed so that rebuilding the same release gives the same bytes.
_BUILD_DATE = "1970-01-01T00:00:00Z"


def staging_version(kubernetes_version: str) -> str:
    """``v1.34.4`` -> ``v0.34.4``: staging modules are tagged ``v0.Y.Z`` for Kubernetes ``v1.Y.Z``."""
    match = _RELEASE.match(kubernetes_version)
    if not match:
        raise ValueError(
            f"kubernetes version {kubernetes_version!r} is not a release tag; "
            "use the form v1.Y.Z, e.g. v1.34.4"
        )
    return f"v0.{match.group(1)}.{match.group(2)}"


def staging_modules(upstream_gomod: str) -> list[str]:
    """The staging modules that k8s.io/kubernetes requires at ``v0.0.0``, in file order."""
    modules = []
    for line in upstream_gomod.splitlines():
        match = _STAGING_REQUIRE.match(line)
        if match and match.group(1) not in modules:
            modules.append(match.group(1))
    return modules


def _directive(upstream_gomod: str, keyword: str) -> str | None:
    for line in upstream_gomod.splitlines():
        if line.startswith(keyword + " "):
            return line.strip()
    return None


def kubernetes_wrapper_gomod(upstream_gomod: str, kubernetes_version: str, tools: list[str]) -> str:
    """The go.mod of a main module that builds ``tools`` (package paths) from ``k8s.io/kubernetes``.

    The ``go`` and ``godebug`` lines are copied from upstream so a newer toolchain keeps the runtime defaults
    Kubernetes was released with. The ``tool`` block keeps ``go mod tidy`` from dropping the requirement.
    """
    if not tools:
        raise ValueError(
            "tools is empty; name at least one package, e.g. k8s.io/kubernetes/cmd/kube-apiserver"
        )
    go_line = _directive(upstream_gomod, "go")
    if go_line is None:
        raise ValueError("the k8s.io/kubernetes go.mod has no `go` line; is it really that file?")
    staging = staging_modules(upstream_gomod)
    if not staging:
        raise ValueError(
            "the k8s.io/kubernetes go.mod requires no staging module at v0.0.0; is it really that file?"
        )
    target = staging_version(kubernetes_version)
    lines = ["module local/k8sbuild", "", go_line]
    godebug = _directive(upstream_gomod, "godebug")
    if godebug is not None:
        lines.append(godebug)
    lines += ["", "tool ("]
    lines += [f"\t{tool}" for tool in tools]
    lines += [")", "", f"require k8s.io/kubernetes {kubernetes_version}", "", "replace ("]
    lines += [f"\t{module} => {module} {target}" for module in staging]
    lines += [")", ""]
    return "\n".join(lines)


def kubernetes_ldflags(kubernetes_version: str) -> str:
    """Linker flags that strip symbols and stamp the release into ``--version`` and ``/version``.

    Without them the binaries say ``v0.0.0-master``, and we could not tell a cached build's version.
    Both variable sets are stamped: servers read component-base, kubectl's client half reads client-go.
    """
    match = _RELEASE.match(kubernetes_version)
    if not match:
        raise ValueError(
            f"kubernetes version {kubernetes_version!r} is not a release tag; "
            "use the form v1.Y.Z, e.g. v1.34.4"
        )
    flags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {package}.gitVersion={kubernetes_version}",
            f"-X {package}.gitMajor=1",
            f"-X {package}.gitMinor={match.group(1)}",
            f"-X {package}.gitTreeState=clean",
            f"-X {package}.buildDate={_BUILD_DATE}",
        ]
    return " ".join(flags)
