"""Command lines of the five control-plane processes, and the files they share in a run directory.

Pure: paths and ports in, argv out, so the flags are reviewable in one place and unit-tested without starting
anything. Flags that look odd carry the reason next to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from volcano_py.devcluster import audit
from volcano_py.devcluster.nodes import KWOK_NODE_ANNOTATION, KWOK_NODE_VALUE
from volcano_py.devcluster.ports import LOOPBACK

SERVICE_CLUSTER_IP_RANGE = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"  # kwok's pod IP pool; its default /24 runs out after ~254 pods
# kwok renews a node's lease every quarter of its duration with four workers; at kubelet's 40 s, 5,000 nodes
# want 500 renewals a second, more than those workers got from a busy API server on two cores (40-170 a
# second), so leases lapsed, the node-lifecycle controller marked nodes NotReady and tainted them, and each
# benchmark window paid for thousands of node writes according to how busy it kept the API server. A longer
# lease asks 167 a second of 5,000 nodes, and a grace period of two leases keeps a late renewal from flapping
# the node.
NODE_LEASE_DURATION_SECONDS = 120
NODE_MONITOR_GRACE_SECONDS = 2 * NODE_LEASE_DURATION_SECONDS
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"

# KCM runs its default controllers, as on a real cluster (Volcano's e2e suites use ReplicationControllers,
# DaemonSets, StatefulSets, ResourceQuotas, Services' endpoints). What cannot work here KCM skips by itself:
# the cloud-provider controllers (no cloud provider), node-ipam (no --allocate-node-cidrs: kwok hands out pod
# IPs from its own --cidr) and the CSR signer (no signing key). One more stays off:
DISABLED_CONTROLLERS: dict[str, str] = {
    # It stamps every node with a cache TTL that only a kubelet reads, and kwok runs none; at the thousands of
    # nodes of the benchmarks it would be a patch per node for nothing.
    "ttl-controller": "only kubelets read its node annotation, and kwok nodes have none",
}


@dataclass(frozen=True, slots=True)
class RunLayout:
    """Where one cluster keeps its state. Everything lives under ``root``; deleting it forgets the cluster."""

    root: Path

    @property
    def etcd_data(self) -> Path:
        return self.root / "etcd"

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def serving_cert(self) -> Path:
        # kube-apiserver writes its self-signed certificate (leaf followed by its CA) here on first start.
        return self.pki / "apiserver.crt"

    @property
    def token_file(self) -> Path:
        return self.pki / "tokens.csv"

    @property
    def service_account_key(self) -> Path:
        return self.pki / "service-account.key"

    @property
    def kubeconfig(self) -> Path:
        return self.root / "kubeconfig"

    @property
    def kwok_config(self) -> Path:
        return self.root / "kwok.yaml"

    @property
    def kwok_home(self) -> Path:
        return self.root / "kwok-home"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def audit_policy(self) -> Path:
        return self.root / "audit-policy.yaml"

    @property
    def audit_log(self) -> Path:
        return self.logs / "audit.jsonl"


@dataclass(frozen=True, slots=True)
class Ports:
    etcd_client: int
    etcd_peer: int
    apiserver: int

    @property
    def etcd_url(self) -> str:
        return f"http://{LOOPBACK}:{self.etcd_client}"

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self.apiserver}"


def etcd_args(binary: Path, layout: RunLayout, ports: Ports) -> list[str]:
    peer = f"http://{LOOPBACK}:{ports.etcd_peer}"
    return [
        str(binary),
        "--name=volcano-py-dev",
        f"--data-dir={layout.etcd_data}",
        f"--listen-client-urls={ports.etcd_url}",
        f"--advertise-client-urls={ports.etcd_url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=volcano-py-dev={peer}",
        # Throw-away data: durability costs seconds per test on a slow disk and buys nothing.
        "--unsafe-no-fsync=true",
        "--quota-backend-bytes=8589934592",
        "--auto-compaction-mode=periodic",
        "--auto-compaction-retention=5m",
        "--log-level=warn",
    ]


def apiserver_args(binary: Path, layout: RunLayout, ports: Ports, *, audit_log: bool = False) -> list[str]:
    """``audit_log``: the requests ``layout.audit_policy`` selects are logged to ``layout.audit_log``."""
    key = layout.service_account_key
    audit_flags = audit.apiserver_flags(layout.audit_policy, layout.audit_log) if audit_log else []
    return [
        str(binary),
        f"--etcd-servers={ports.etcd_url}",
        f"--bind-address={LOOPBACK}",
        # Without it the apiserver looks for a default-route interface and fails on hosts without one.
        f"--advertise-address={LOOPBACK}",
        f"--secure-port={ports.apiserver}",
        f"--cert-dir={layout.pki}",
        f"--token-auth-file={layout.token_file}",
        "--authorization-mode=RBAC",
        f"--service-account-issuer={SERVICE_ACCOUNT_ISSUER}",
        f"--service-account-key-file={key}",
        f"--service-account-signing-key-file={key}",
        f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
        "--allow-privileged=true",
        # Keeps the loopback address out of the `kubernetes` Endpoints; nothing in-cluster dials it.
        "--endpoint-reconciler-type=none",
        # Flow control queues a benchmark's bursts of binds behind a per-user budget; here there is one user.
        "--enable-priority-and-fairness=false",
        "--max-requests-inflight=2000",
        "--max-mutating-requests-inflight=1000",
        # Default admission plugins stay on (ServiceAccount, TaintNodesByCondition, ...): KCM runs, so the
        # cluster behaves like a real one.
        *audit_flags,
    ]


def controller_manager_args(binary: Path, layout: RunLayout) -> list[str]:
    return [
        str(binary),
        f"--kubeconfig={layout.kubeconfig}",
        "--leader-elect=false",
        "--secure-port=0",
        "--controllers=" + ",".join(["*", *(f"-{name}" for name in DISABLED_CONTROLLERS)]),
        f"--service-account-private-key-file={layout.service_account_key}",
        f"--root-ca-file={layout.serving_cert}",
        "--use-service-account-credentials=false",
        # The defaults (20 qps) make namespace deletion and large Jobs crawl.
        "--kube-api-qps=200",
        "--kube-api-burst=400",
        f"--node-monitor-grace-period={NODE_MONITOR_GRACE_SECONDS}s",
    ]


def scheduler_args(binary: Path, layout: RunLayout) -> list[str]:
    """kube-scheduler with its default profile: it places only pods of schedulerName default-scheduler."""
    return [
        str(binary),
        f"--kubeconfig={layout.kubeconfig}",
        "--leader-elect=false",
        # Nothing scrapes or probes it here; serving would need a port and delegated authentication.
        "--secure-port=0",
    ]


def kwok_args(binary: Path, layout: RunLayout) -> list[str]:
    return [
        str(binary),
        f"--kubeconfig={layout.kubeconfig}",
        f"--config={layout.kwok_config}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}={KWOK_NODE_VALUE}",
        # Non-zero: kwok then keeps node leases fresh, so the node-lifecycle controller sees healthy nodes.
        f"--node-lease-duration-seconds={NODE_LEASE_DURATION_SECONDS}",
        f"--cidr={POD_CIDR}",
    ]
