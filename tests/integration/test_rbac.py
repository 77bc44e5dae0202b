"""The deploy RBAC is enough and no wider than needed, proven on a real API server with RBAC authorization.

The controller and the scheduler run in-process, each with a kubeconfig holding its ServiceAccount's token
(TokenRequest API), with leader election on in ``volcano-system`` as deployed, and take a Volcano Job with
two tasks and the svc/ssh/env plugins to Completed. Every API answer is watched for an RBAC denial: ours
through ``kube.client`` (all our requests decode errors there) and Kopf's through its request-retry log.
``kubectl auth can-i --as`` then shows what each ServiceAccount must not be able to do.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from ctl_harness import task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.controllers.operator import ControllerOptions, run_controller
from volcano_py.controllers.runtime.context import JOBS
from volcano_py.kube import client as kube_client
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import LEASES, PODS, QUEUES
from volcano_py.scheduler.runtime.runner import SchedulerOptions, run_scheduler
from volcano_py.webhooks.server import ADMISSION_API, install_configurations, remove_configurations

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PARTS = REPO / "deploy" / "parts"
RBAC_PARTS = (
    "00-namespace.yaml",
    "10-serviceaccounts.yaml",
    "20-rbac-scheduler.yaml",
    "21-rbac-controller.yaml",
)
SYSTEM = "volcano-system"
SCHEDULER_SA = f"system:serviceaccount:{SYSTEM}:volcano-scheduler"
CONTROLLER_SA = f"system:serviceaccount:{SYSTEM}:volcano-controllers"
SCHEDULER_LEASE, CONTROLLER_LEASE = "vc-scheduler", "volcano-py-controller"


@dataclass
class Denials:
    """RBAC refusals seen by our client (``ApiError``) and by Kopf (its logged request failures)."""

    ours: list[str] = field(default_factory=list)
    kopf: list[str] = field(default_factory=list)

    def all(self) -> list[str]:
        return self.ours + self.kopf


class _KopfDenials(logging.Handler):
    def __init__(self, denials: Denials) -> None:
        super().__init__(logging.WARNING)
        self.denials = denials

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "APIForbiddenError" in text or "APIUnauthorizedError" in text or "Not enough permissions" in text:
            self.denials.kopf.append(text)


@pytest.fixture
def denials(monkeypatch: pytest.MonkeyPatch) -> Iterator[Denials]:
    seen = Denials()
    decode = kube_client._error_from

    def recording(status: int, raw: bytes) -> ApiError:
        err = decode(status, raw)
        # A refusal by RBAC names the user; a 403 for a namespace being deleted does not, and is no denial.
        if status == 401 or (status == 403 and "system:serviceaccount:" in err.message):
            seen.ours.append(f"{status}: {err.message}")
        return err

    monkeypatch.setattr(kube_client, "_error_from", recording)
    handler = _KopfDenials(seen)
    kopf_logger = logging.getLogger("kopf")
    kopf_logger.addHandler(handler)
    try:
        yield seen
    finally:
        kopf_logger.removeHandler(handler)


def _apply_rbac(cluster: Any) -> None:
    for name in RBAC_PARTS:
        cluster.kubectl("apply", "-f", str(PARTS / name))


def _service_account_kubeconfig(cluster: Any, account: str, path: Path) -> str:
    """The cluster's kubeconfig with the admin token swapped for a fresh token of ``account``."""
    token = cluster.kubectl("create", "token", account, "-n", SYSTEM, "--duration=1h").stdout.strip()
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture
async def admin(cluster: Any) -> AsyncIterator[KubeClient]:
    api = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield api
    await api.close()


async def _holder(admin: KubeClient, lease: str) -> str:
    try:
        body = await admin.get(LEASES.object_path(lease, SYSTEM))
    except ApiError as exc:
        if exc.not_found:
            return ""
        raise
    return str(body["spec"].get("holderIdentity") or "")


async def test_recorder_sees_a_real_denial(cluster: Any, denials: Denials, tmp_path: Path) -> None:
    """The watch on denials is not blind: the scheduler's token creating a pod is refused and recorded."""
    _apply_rbac(cluster)
    api = KubeClient(
        await load_api_client(_service_account_kubeconfig(cluster, "volcano-scheduler", tmp_path / "kc"))
    )
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nope"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    try:
        with pytest.raises(ApiError) as refused:
            await api.create(PODS.collection_path("default"), pod)
    finally:
        await api.close()
    assert refused.value.status == 403
    assert len(denials.ours) == 1 and SCHEDULER_SA in denials.ours[0] and 'resource "pods"' in denials.ours[0]


async def test_roles_are_enough_for_a_full_job(
    cluster: Any, namespace: str, denials: Denials, admin: KubeClient, tmp_path: Path
) -> None:
    _apply_rbac(cluster)
    for lease in (SCHEDULER_LEASE, CONTROLLER_LEASE):  # a holder left by an earlier run would make us wait
        cluster.kubectl("delete", "lease", lease, "-n", SYSTEM, "--ignore-not-found")
    scheduler_kc = _service_account_kubeconfig(cluster, "volcano-scheduler", tmp_path / "scheduler.kc")
    controller_kc = _service_account_kubeconfig(cluster, "volcano-controllers", tmp_path / "controller.kc")
    # The conf the Deployment mounts, so the shipped plugins run too.
    configmap = yaml.safe_load((PARTS / "30-scheduler-configmap.yaml").read_text())
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(configmap["data"]["volcano-scheduler.conf"])
    stop_scheduler, stop_controller = asyncio.Event(), asyncio.Event()
    scheduler = asyncio.create_task(
        run_scheduler(
            SchedulerOptions(
                kubeconfig=scheduler_kc, scheduler_conf=str(conf), identity="rbac-scheduler",
                leader_elect=True, lease_namespace=SYSTEM, lease_name=SCHEDULER_LEASE,
                metrics_host="127.0.0.1", metrics_port=0, schedule_period=0.2,
            ),
            stop_scheduler,
        )
    )  # fmt: skip
    # Cluster-wide, as deployed: Kopf then needs no namespace list/watch.
    controller = asyncio.create_task(
        run_controller(
            ControllerOptions(
                kubeconfig=controller_kc, leader_elect=True, identity="rbac-controller",
                lease_namespace=SYSTEM, lease_name=CONTROLLER_LEASE, metrics_host="127.0.0.1", metrics_port=0,
            ),
            stop_controller,
        )
    )  # fmt: skip
    try:
        await wait_for("the scheduler to lead", lambda: _is(admin, SCHEDULER_LEASE, "rbac-scheduler"), 30)
        await wait_for("the controller to lead", lambda: _is(admin, CONTROLLER_LEASE, "rbac-controller"), 30)
        job = vcjob(
            "rbac",
            task("ps", 1, complete_after="2s"),
            task("worker", 1, complete_after="2s"),
            minAvailable=2,
            plugins={"svc": [], "ssh": [], "env": []},
        )
        await admin.create(JOBS.collection_path(namespace), job)

        finished = await _finished_phase(admin, namespace, "rbac", seconds=90)
        if finished == "Completed":
            # The plugins ran under the controller's token: pods mount the ssh Secret it created, and the
            # Secret, Service and NetworkPolicy are deleted again now the Job is finished.
            listed = await admin.get(PODS.collection_path(namespace), labelSelector=f"{c.JOB_NAME_KEY}=rbac")
            pods = listed["items"]
            assert len(pods) == 2
            for pod in pods:
                secrets = [v["secret"]["secretName"] for v in pod["spec"]["volumes"] if "secret" in v]
                assert "rbac-ssh" in secrets, pod["spec"]["volumes"]
            for path in (
                f"/api/v1/namespaces/{namespace}/secrets/rbac-ssh",
                f"/api/v1/namespaces/{namespace}/services/rbac",
                f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/rbac",
            ):
                await wait_for(f"{path} to be released", functools.partial(_gone, admin, path), 30)
            queue = await admin.get(QUEUES.object_path(c.DEFAULT_QUEUE))
            assert queue["status"].get("state") == "Open"
    finally:
        stop_controller.set()
        stop_scheduler.set()
        await asyncio.wait_for(asyncio.gather(controller, scheduler, return_exceptions=True), 60)
    for process in (controller, scheduler):
        assert process.exception() is None, (
            f"a process failed under its ServiceAccount: {process.exception()!r}"
        )
    assert denials.all() == [], "RBAC refused requests the code makes:\n" + "\n".join(denials.all())
    assert finished == "Completed", f"job rbac did not complete in 90s (phase {finished or 'none'})"


async def _finished_phase(admin: KubeClient, namespace: str, name: str, *, seconds: float) -> str:
    """The Job's phase once finished, else its last phase after ``seconds`` (denials get reported first)."""
    deadline = asyncio.get_running_loop().time() + seconds
    phase = ""
    while asyncio.get_running_loop().time() < deadline:
        body = await admin.get(JOBS.object_path(name, namespace))
        phase = str(((body.get("status") or {}).get("state") or {}).get("phase") or "")
        if phase in ("Completed", "Failed", "Aborted"):
            break
        await asyncio.sleep(0.25)
    return phase


async def _is(admin: KubeClient, lease: str, identity: str) -> bool:
    return await _holder(admin, lease) == identity


async def _gone(admin: KubeClient, path: str) -> bool:
    try:
        await admin.get(path)
    except ApiError as exc:
        if exc.not_found:
            return True
        raise
    return False


async def test_controller_can_install_the_webhook_configurations(
    cluster: Any, denials: Denials, admin: KubeClient, tmp_path: Path
) -> None:
    """The admission bootstrap (create, then replace on restart) works under the controller's token."""
    _apply_rbac(cluster)
    api = KubeClient(
        await load_api_client(_service_account_kubeconfig(cluster, "volcano-controllers", tmp_path / "kc"))
    )
    service = {"namespace": SYSTEM, "name": "volcano-admission-service", "port": 443}
    # Selects no object, so the shared cluster's other tests never call this (absent) server.
    nothing = {"matchLabels": {"volcano-py.io/rbac-test": "selects-nothing"}}
    try:
        for ca in (b"first start", b"restart"):
            await install_configurations(
                api, name="volcano-py", ca_bundle=ca, service=service, object_selector=nothing
            )
        validating = await admin.get(f"{ADMISSION_API}/validatingwebhookconfigurations/volcano-py")
        assert {hook["clientConfig"]["caBundle"] for hook in validating["webhooks"]} == {
            base64.b64encode(b"restart").decode()
        }
    finally:
        await api.close()
        await remove_configurations(admin, name="volcano-py")
    assert denials.all() == []


CANNOT: list[tuple[str, tuple[str, ...]]] = [
    # The scheduler binds and evicts; it never makes pods, touches Jobs, Commands or Secrets, or edits nodes.
    (SCHEDULER_SA, ("create", "pods", "-n", "default")),
    (SCHEDULER_SA, ("delete", "jobs.batch.volcano.sh", "-n", "default")),
    (SCHEDULER_SA, ("create", "commands.bus.volcano.sh", "-n", "default")),
    (SCHEDULER_SA, ("get", "secrets", "-n", "default")),
    (SCHEDULER_SA, ("update", "nodes")),
    (SCHEDULER_SA, ("delete", "queues.scheduling.volcano.sh")),
    (SCHEDULER_SA, ("update", f"leases/{CONTROLLER_LEASE}", "-n", SYSTEM)),
    (SCHEDULER_SA, ("get", "leases/kube-scheduler", "-n", "kube-system")),
    # The controller makes pods but never binds them, cannot enumerate Secrets, and owns no queue lifecycle.
    (CONTROLLER_SA, ("create", "pods", "--subresource=binding", "-n", "default")),
    (CONTROLLER_SA, ("list", "secrets", "--all-namespaces")),
    (CONTROLLER_SA, ("watch", "secrets", "-n", "default")),
    (CONTROLLER_SA, ("create", "queues.scheduling.volcano.sh")),
    (CONTROLLER_SA, ("delete", "queues.scheduling.volcano.sh")),
    (CONTROLLER_SA, ("update", "jobs.batch.volcano.sh", "-n", "default")),
    (CONTROLLER_SA, ("update", "nodes")),
    (CONTROLLER_SA, ("list", "namespaces")),
    (CONTROLLER_SA, ("update", "namespaces/default")),
    (CONTROLLER_SA, ("update", "validatingwebhookconfigurations/some-other-webhook")),
    (CONTROLLER_SA, ("update", f"leases/{SCHEDULER_LEASE}", "-n", SYSTEM)),
    (CONTROLLER_SA, ("create", "clusterroles")),
]


# A ServiceAccount's token also carries these groups; bindings to them count, so the question includes them.
SA_GROUPS = ("system:serviceaccounts", f"system:serviceaccounts:{SYSTEM}", "system:authenticated")


def _can(cluster: Any, user: str, *args: str) -> str:
    groups = [f"--as-group={group}" for group in SA_GROUPS]
    done = cluster.kubectl("auth", "can-i", *args, f"--as={user}", *groups, check=False)
    return str(done.stdout).strip()


def test_no_wider_than_needed(cluster: Any) -> None:
    _apply_rbac(cluster)
    allowed = [
        f"{user.rsplit(':', 1)[1]} can {' '.join(args)}"
        for user, args in CANNOT
        if _can(cluster, user, *args) != "no"
    ]
    assert allowed == []


def test_what_the_code_does_is_allowed(cluster: Any) -> None:
    """The positive side of the same check, naming the requests the processes make most."""
    _apply_rbac(cluster)
    can = [
        (SCHEDULER_SA, ("create", "pods", "--subresource=binding", "-n", "default")),
        (SCHEDULER_SA, ("patch", "podgroups.scheduling.volcano.sh", "-n", "default")),
        (SCHEDULER_SA, ("update", f"leases/{SCHEDULER_LEASE}", "-n", SYSTEM)),
        # Evictions (preempt/reclaim, not in the shipped conf): a DisruptionTarget condition, then the delete.
        (SCHEDULER_SA, ("patch", "pods", "--subresource=status", "-n", "default")),
        (SCHEDULER_SA, ("delete", "pods", "-n", "default")),
        # The queue-allocation gate's removal (SchedulingGatesQueueAdmission): a patch of the pod's spec.
        (SCHEDULER_SA, ("patch", "pods", "-n", "default")),
        (SCHEDULER_SA, ("patch", "queues.scheduling.volcano.sh", "--subresource=status")),
        (SCHEDULER_SA, ("watch", "hypernodes.topology.volcano.sh")),
        (CONTROLLER_SA, ("create", "pods", "-n", "default")),
        (CONTROLLER_SA, ("delete", "podgroups.scheduling.volcano.sh", "-n", "default")),
        (CONTROLLER_SA, ("create", "persistentvolumeclaims", "-n", "default")),
        (CONTROLLER_SA, ("get", "replicasets.apps", "-n", "default")),
        (CONTROLLER_SA, ("watch", "customresourcedefinitions.apiextensions.k8s.io")),
        (CONTROLLER_SA, ("update", "jobs.batch.volcano.sh", "--subresource=status", "-n", "default")),
        (CONTROLLER_SA, ("get", "secrets", "-n", "default")),
        (CONTROLLER_SA, ("update", "validatingwebhookconfigurations/volcano-py")),
        (CONTROLLER_SA, ("update", f"leases/{CONTROLLER_LEASE}", "-n", SYSTEM)),
        # JobFlow / CronJob controllers create Jobs and patch their status; HyperNode discovery.
        (CONTROLLER_SA, ("create", "jobs.batch.volcano.sh", "-n", "default")),
        (CONTROLLER_SA, ("patch", "jobflows.flow.volcano.sh", "--subresource=status", "-n", "default")),
        (CONTROLLER_SA, ("patch", "cronjobs.batch.volcano.sh", "--subresource=status", "-n", "default")),
        (CONTROLLER_SA, ("create", "hypernodes.topology.volcano.sh")),
        (CONTROLLER_SA, ("patch", "hypernodes.topology.volcano.sh", "--subresource=status")),
        (CONTROLLER_SA, ("get", f"configmaps/{c.CONTROLLER_CONFIGMAP}", "-n", SYSTEM)),
        # PodGroup admission reads the namespace's queue annotation.
        (CONTROLLER_SA, ("get", "namespaces/default")),
    ]
    refused = [
        f"{user.rsplit(':', 1)[1]} cannot {' '.join(args)}"
        for user, args in can
        if _can(cluster, user, *args) != "yes"
    ]
    assert refused == []
