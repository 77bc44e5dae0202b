"""The pinned control-plane components, where each lives in the cache, and how to tell a cached one is right.

One table so that the builder, the launcher and the tests agree on versions and paths. A cached binary counts
only if it runs and reports the pinned version: a half-written or stale file is rebuilt, never trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KUBERNETES_VERSION = "v1.34.4"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.8.0"
# Helm renders and lints deploy/helm/volcano-py in the tests; not needed to run a cluster.
HELM_VERSION = "v3.22.0"
# promtool checks deploy/prometheus/rules.yaml in the tests, and prometheus serves the node load the `usage`
# plugin reads in its real-cluster test (the Prometheus module's own version tag, one for both).
PROMETHEUS_MODULE_VERSION = "v0.316.0"

# kwok v0.8.0's go.mod says `go 1.26.0`; older toolchains cannot build it.
MIN_GO = (1, 26)
GO_DOWNLOAD_URL = "https://go.dev/dl/"


@dataclass(frozen=True, slots=True)
class Component:
    """One binary of the control plane, built from one Go package at a pinned version."""

    name: str
    version: str
    package: str
    version_args: tuple[str, ...]
    # Text that `<binary> <version_args>` prints when the binary is the pinned build.
    version_marker: str

    def directory(self, cache: Path) -> Path:
        return cache / "bin" / f"{self.name}-{self.version}"

    def binary(self, cache: Path) -> Path:
        return self.directory(cache) / self.name


ETCD = Component(
    name="etcd",
    version=ETCD_VERSION,
    package="go.etcd.io/etcd/server/v3",
    version_args=("--version",),
    version_marker=f"etcd Version: {ETCD_VERSION.removeprefix('v')}",
)
KUBE_APISERVER = Component(
    name="kube-apiserver",
    version=KUBERNETES_VERSION,
    package="k8s.io/kubernetes/cmd/kube-apiserver",
    version_args=("--version",),
    version_marker=f"Kubernetes {KUBERNETES_VERSION}",
)
KUBE_CONTROLLER_MANAGER = Component(
    name="kube-controller-manager",
    version=KUBERNETES_VERSION,
    package="k8s.io/kubernetes/cmd/kube-controller-manager",
    version_args=("--version",),
    version_marker=f"Kubernetes {KUBERNETES_VERSION}",
)
# Places the pods of the default scheduler (``schedulerName: default-scheduler`` or none), as on a real
# cluster; it leaves pods named for any other scheduler (volcano) alone.
KUBE_SCHEDULER = Component(
    name="kube-scheduler",
    version=KUBERNETES_VERSION,
    package="k8s.io/kubernetes/cmd/kube-scheduler",
    version_args=("--version",),
    version_marker=f"Kubernetes {KUBERNETES_VERSION}",
)
KUBECTL = Component(
    name="kubectl",
    version=KUBERNETES_VERSION,
    package="k8s.io/kubernetes/cmd/kubectl",
    version_args=("version", "--client"),
    version_marker=f"Client Version: {KUBERNETES_VERSION}",
)
KWOK = Component(
    name="kwok",
    version=KWOK_VERSION,
    package="sigs.k8s.io/kwok/cmd/kwok",
    version_args=("--version",),
    version_marker=KWOK_VERSION,
)

HELM = Component(
    name="helm",
    version=HELM_VERSION,
    package="helm.sh/helm/v3/cmd/helm",
    version_args=("version", "--short"),
    version_marker=HELM_VERSION,
)

PROMTOOL = Component(
    name="promtool",
    version=PROMETHEUS_MODULE_VERSION,
    package="github.com/prometheus/prometheus/cmd/promtool",
    version_args=("--version",),
    version_marker=f"promtool, version {PROMETHEUS_MODULE_VERSION}",
)

PROMETHEUS = Component(
    name="prometheus",
    version=PROMETHEUS_MODULE_VERSION,
    package="github.com/prometheus/prometheus/cmd/prometheus",
    version_args=("--version",),
    version_marker=f"prometheus, version {PROMETHEUS_MODULE_VERSION}",
)

# Build order: etcd is small and proves the toolchain works before the long Kubernetes compile.
COMPONENTS: tuple[Component, ...] = (
    ETCD,
    KUBE_APISERVER,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    KUBECTL,
    KWOK,
)
KUBERNETES_COMPONENTS: tuple[Component, ...] = (
    KUBE_APISERVER,
    KUBE_CONTROLLER_MANAGER,
    KUBE_SCHEDULER,
    KUBECTL,
)
# Tools only the tests use around the cluster (the chart's helm, the usage plugin's Prometheus): built when
# the test command first needs them (``tests/conftest.py``), or by ``volcano-py dev build --with-test-tools``.
TOOLS: tuple[Component, ...] = (HELM, PROMTOOL, PROMETHEUS)


def build_plan(*, with_test_tools: bool = False) -> tuple[Component, ...]:
    """What ``volcano-py dev build`` builds: what ``volcano-py up --demo`` runs (the control plane, kubectl,
    KWOK), and the tests' tools only when asked, so a newcomer waits for nothing the demo does not start."""
    return COMPONENTS + TOOLS if with_test_tools else COMPONENTS


# kwok's own stage files we run unchanged; copied next to the kwok binary when it is built so that starting a
# cluster needs neither Go nor the module cache.
KWOK_STAGE_FILES: tuple[str, ...] = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)


def kwok_stage_dir(cache: Path) -> Path:
    return KWOK.directory(cache) / "stages"


def reports_version(component: Component, output: str) -> bool:
    """Whether the text a binary printed for its version query names the pinned version exactly.

    A marker followed by another digit (``v1.34.40`` for ``v1.34.4``) is a different release, not a match.
    """
    start = output.find(component.version_marker)
    while start != -1:
        end = start + len(component.version_marker)
        if end == len(output) or not output[end].isdigit():
            return True
        start = output.find(component.version_marker, start + 1)
    return False


def parse_go_version(text: str) -> tuple[int, int]:
    """``go1.26.8`` (from ``go env GOVERSION``) -> ``(1, 26)``; raises ValueError on anything else."""
    raw = text.strip().removeprefix("go")
    parts = raw.split(".")
    if len(parts) < 2 or not parts[0].isdigit():
        raise ValueError(f"cannot read a Go version from {text.strip()!r}")
    # Leading digits only: "27rc1" is minor 27.
    minor = parts[1][: len(parts[1]) - len(parts[1].lstrip("0123456789"))]
    if not minor:
        raise ValueError(f"cannot read a Go version from {text.strip()!r}")
    return int(parts[0]), int(minor)
