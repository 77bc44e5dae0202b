"""A real local Kubernetes control plane for tests, demos and benchmarks: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler (for pods of the default scheduler) and KWOK, built from Go modules
at pinned versions and started as child processes.

Use it from Python::

    from volcano_py.devcluster import DevCluster, COMPLETE_AFTER

    with DevCluster() as cluster:                      # builds missing binaries first (needs Go >= 1.26)
        cluster.create_nodes(4, gpus=8)                # Ready fake nodes: nvidia.com/gpu 8, rack/spine/zone
        cluster.apply_crds(Path("crds"))               # server-side apply, waits for Established
        ns = cluster.create_namespace()                # waits for its default ServiceAccount
        cluster.kubectl("get", "nodes")                # our pinned kubectl, pointed at the cluster
        subprocess.run([...], env=cluster.env)         # KUBECONFIG set for child processes
        cluster.post_json(f"/api/v1/namespaces/{ns}/pods/p/binding", binding)   # raw API calls as admin
        cluster.wait_for("pod p Running", lambda: ..., timeout=30)
        # cluster.kubeconfig -> Path for kopf / kubernetes_asyncio; cluster.server, cluster.token

or from a shell: ``volcano-py dev build`` (binaries only), ``volcano-py dev up --nodes 4 --gpus-per-node 8``
(runs until Ctrl-C or ``volcano-py dev down``). In pytest, use the ``cluster`` and ``namespace`` fixtures of
``tests/integration/conftest.py``.

Fake pods finish through pod annotations (``stages``): ``COMPLETE_AFTER`` ("5s" -> Succeeded, exit code 0),
``FAIL_AFTER`` with ``EXIT_CODE`` (-> Failed with that code). Nodes carry ``ZONE_LABEL``, ``SPINE_LABEL`` and
``RACK_LABEL``. ``DevCluster(audit_user_groups=("system:serviceaccounts:ns",))`` has the API server log those
users' requests (``cluster.audit_log``, read with ``devcluster.audit``; ``devcluster.rbac_coverage`` compares
them with RBAC rules). Binaries are cached in ``$VOLCANO_PY_CACHE`` (default ``~/.cache/volcano-py``) under
``bin/<component>-<version>/``.
"""

from volcano_py.devcluster.build import (
    BuildError,
    ToolchainMissing,
    ensure_binaries,
    ensure_plan,
    ensure_tools,
)
from volcano_py.devcluster.cluster import DevCluster
from volcano_py.devcluster.errors import ClusterError, KubectlError
from volcano_py.devcluster.nodes import (
    GPU_RESOURCE,
    RACK_LABEL,
    SPINE_LABEL,
    ZONE_LABEL,
    GpuSharing,
    Topology,
    node_manifests,
)
from volcano_py.devcluster.stages import COMPLETE_AFTER, EXIT_CODE, FAIL_AFTER

__all__ = [
    "COMPLETE_AFTER",
    "EXIT_CODE",
    "FAIL_AFTER",
    "GPU_RESOURCE",
    "RACK_LABEL",
    "SPINE_LABEL",
    "ZONE_LABEL",
    "BuildError",
    "ClusterError",
    "DevCluster",
    "GpuSharing",
    "KubectlError",
    "ToolchainMissing",
    "Topology",
    "ensure_binaries",
    "ensure_plan",
    "ensure_tools",
    "node_manifests",
]
