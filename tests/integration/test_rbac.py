"""The deploy RBAC covers exactly what the code calls, proven on a real API server with RBAC authorization.

The scheduler, the controller and the dashboard run in-process, each with a kubeconfig holding a token of its
deployed ServiceAccount (TokenRequest API), leader election on in ``volcano-system`` as deployed, and drive
``rbac_workload``'s scenes: every code path that needs a permission, to the outcome a user sees. Every API
answer is watched for an RBAC denial (ours through ``kube.client``, Kopf's through its request-retry log).
Then the API server's audit log says which (verb, group, resource/subresource, name) each ServiceAccount
requested; ``devcluster.rbac_coverage`` compares that with the roles bound to it: a request not granted, or a
permission never requested and not in NOT_EXERCISED (the one list of those, each with the code needing it),
fails the test. ``kubectl auth can-i --as`` then shows what each ServiceAccount must not be able to do.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from ctl_harness import wait_for
from rbac_workload import Workload
from stopping import stop_within

from volcano_py.api import constants as c
from volcano_py.api.features import parse_feature_gates
from volcano_py.controllers.operator import ControllerOptions, run_controller
from volcano_py.dashboard import DashboardOptions, run_dashboard
from volcano_py.devcluster import audit, rbac_coverage
from volcano_py.devcluster.rbac_coverage import Permission, Request
from volcano_py.kube import client as kube_client
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import LEASES, PODS
from volcano_py.kube.waiting import within
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
    "42-dashboard.yaml",  # its RBAC objects only: the Deployment and Service are left out
)
RBAC_KINDS = ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
SYSTEM = "volcano-system"
SCHEDULER_SA = f"system:serviceaccount:{SYSTEM}:volcano-scheduler"
CONTROLLER_SA = f"system:serviceaccount:{SYSTEM}:volcano-controllers"
DASHBOARD_SA = f"system:serviceaccount:{SYSTEM}:volcano-dashboard"
SCHEDULER_LEASE, CONTROLLER_LEASE = "vc-scheduler", "volcano-py-controller"

# What the roles grant but the run does not exercise: each entry names the code that needs it (grep the
# reference) and why the run does not reach it. Keep it short: a rule that can be exercised cheaply belongs in
# rbac_workload.py instead. An entry whose rule is gone fails the test, so removing any rule fails it.
NOT_EXERCISED: dict[str, dict[str, str]] = {
    SCHEDULER_SA: {
        "create queues.scheduling.volcano.sh": "scheduler/runtime/cache.py ensure_default_queues: only while "
        "root or default is missing, i.e. when this test is the session's first to run a scheduler",
        "patch queues.scheduling.volcano.sh": "scheduler/runtime/usage_ledger.py: proportion's recentUsage "
        "annotation, written every WRITE_EVERY_SECONDS (30 s) and only with recentUsage configured",
        "list nodeshards.shard.volcano.sh": "scheduler/runtime/cache.py: the NodeShards are mirrored only "
        "with --scheduler-sharding-mode soft or hard (tests/integration/test_scheduler_sharding.py has it)",
        "watch nodeshards.shard.volcano.sh": "scheduler/runtime/cache.py: as list, only with sharding on",
        "update nodeshards.shard.volcano.sh/status": "scheduler/runtime/shard_status.py: the scheduler's own "
        "NodeShard's nodesInUse, only with sharding on",
        "get leases.coordination.k8s.io name=agent-scheduler namespace=volcano-system": "kube/leader.py "
        "for the agent scheduler (scheduler/runtime/agent.py), which the chart runs under this "
        "ServiceAccount with agent_scheduler_enable (tests/integration/test_agent_scheduler.py elects one)",
        "update leases.coordination.k8s.io name=agent-scheduler namespace=volcano-system": "as its get",
        "get leases.coordination.k8s.io name=volcano-queue-turns namespace=volcano-system": "scheduler/"
        "runtime/queue_room.py: the turns at a capped Queue, taken only while agent scheduler pods exist "
        "(tests/integration/test_agent_scheduler.py churns both schedulers' pods into one)",
        "update leases.coordination.k8s.io name=volcano-queue-turns namespace=volcano-system": "as its get",
    },
    CONTROLLER_SA: {
        "get namespaces": "webhooks/server.py ApiNamespaces: PodGroup admission, which this run does not "
        "serve to the API server (tests/integration/test_webhooks_admission.py does)",
        **{
            f"{verb} {what}": "controllers/sharding/worker.py: the sharding controller, off by default "
            "(--controllers); tests/integration/test_controller_sharding.py runs it"
            for verb, what in (
                ("list", "nodeshards.shard.volcano.sh"),
                ("watch", "nodeshards.shard.volcano.sh"),
                ("create", "nodeshards.shard.volcano.sh"),
                ("patch", "nodeshards.shard.volcano.sh"),
                ("delete", "nodeshards.shard.volcano.sh"),
                ("patch", "nodeshards.shard.volcano.sh/status"),
                ("list", f"configmaps name={c.SHARDING_CONFIGMAP}"),
                ("watch", f"configmaps name={c.SHARDING_CONFIGMAP}"),
            )
        },
    },
}


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


def _apply_rbac(cluster: Any) -> list[dict[str, Any]]:
    """Apply the deployed RBAC; return its objects (the roles and bindings the run is checked against)."""
    docs = [
        doc
        for name in RBAC_PARTS
        for doc in yaml.safe_load_all((PARTS / name).read_text())
        if doc and doc["kind"] in RBAC_KINDS
    ]
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    return docs


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


async def test_roles_cover_exactly_what_the_code_calls(
    cluster: Any, namespace: str, denials: Denials, admin: KubeClient, tmp_path: Path
) -> None:
    manifests = _apply_rbac(cluster)
    since = cluster.audit_log.stat().st_size if cluster.audit_log.exists() else 0
    for lease in (SCHEDULER_LEASE, CONTROLLER_LEASE):  # a holder left by an earlier run would make us wait
        cluster.kubectl("delete", "lease", lease, "-n", SYSTEM, "--ignore-not-found")
    kubeconfigs = {
        account: _service_account_kubeconfig(cluster, account, tmp_path / f"{account}.kc")
        for account in ("volcano-scheduler", "volcano-controllers", "volcano-dashboard")
    }
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(_scheduler_conf())
    workload = Workload(cluster, admin, namespace)
    stops = {name: asyncio.Event() for name in ("scheduler", "controller", "dashboard")}
    processes: dict[str, asyncio.Task[None]] = {}
    try:
        await workload.prepare()
        processes["scheduler"] = asyncio.create_task(
            run_scheduler(
                SchedulerOptions(
                    kubeconfig=kubeconfigs["volcano-scheduler"], scheduler_conf=str(conf),
                    identity="rbac-scheduler", leader_elect=True, lease_namespace=SYSTEM,
                    lease_name=SCHEDULER_LEASE, metrics_host="127.0.0.1", metrics_port=0, schedule_period=0.2,
                    feature_gates=parse_feature_gates("SchedulingGatesQueueAdmission=true"),
                ),
                stops["scheduler"],
            )
        )  # fmt: skip
        # Cluster-wide, as deployed: Kopf then needs no namespace list/watch.
        processes["controller"] = asyncio.create_task(
            run_controller(
                ControllerOptions(
                    kubeconfig=kubeconfigs["volcano-controllers"], leader_elect=True,
                    identity="rbac-controller", lease_namespace=SYSTEM, lease_name=CONTROLLER_LEASE,
                    metrics_host="127.0.0.1", metrics_port=0,
                ),
                stops["controller"],
            )
        )  # fmt: skip
        dashboard_port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        processes["dashboard"] = asyncio.create_task(
            run_dashboard(
                DashboardOptions(
                    kubeconfig=kubeconfigs["volcano-dashboard"], port=0, scheduler_conf=str(conf),
                    lease_namespace=SYSTEM, lease_name=SCHEDULER_LEASE,
                ),
                stops["dashboard"],
                dashboard_port,
            )
        )  # fmt: skip
        await wait_for("the scheduler to lead", lambda: _is(admin, SCHEDULER_LEASE, "rbac-scheduler"), 30)
        await wait_for("the controller to lead", lambda: _is(admin, CONTROLLER_LEASE, "rbac-controller"), 30)
        await workload.drive()
        await _install_webhook_configurations(kubeconfigs["volcano-controllers"], admin)
        await _browse(await within(dashboard_port, 30), namespace)
    except (Exception, pytest.fail.Exception) as exc:
        # Reported after the denials, which usually explain it (a refused write stalls a scene).
        stalled = exc
    else:
        stalled = None
    finally:
        for stop in stops.values():
            stop.set()
        await stop_within(processes.values(), "the processes", 60)
        await workload.clean()
    problems = [f"RBAC refused a request the code makes: {denial}" for denial in denials.all()]
    problems += [
        f"the {name} failed under its ServiceAccount: {process.exception()!r}"
        for name, process in processes.items()
        if process.exception() is not None
    ]
    if stalled is not None:
        problems.append(f"the run did not finish: {stalled}")
    made = audit.requests_by_user(audit.read_from(cluster.audit_log, since))
    problems += [
        problem
        for user in (SCHEDULER_SA, CONTROLLER_SA, DASHBOARD_SA)
        for problem in rbac_problems(
            user,
            rbac_coverage.bound_permissions(manifests, user),
            made.get(user, set()),
            NOT_EXERCISED.get(user, {}),
            finished=stalled is None,
        )
    ]
    assert problems == [], "the roles differ from what the code calls:\n" + "\n".join(problems)


def rbac_problems(
    user: str,
    granted: set[Permission],
    requests: set[Request],
    not_exercised: Mapping[str, str],
    *,
    finished: bool,
) -> list[str]:
    """What is wrong with ``user``'s roles given the requests it made and the allow-list of NOT_EXERCISED.
    A run that did not finish says nothing about unused rules: only what it was refused counts then."""
    account = user.rsplit(":", 1)[1]
    excused = {Permission.parse(text) for text in not_exercised}
    found = rbac_coverage.coverage(granted, requests)
    return [
        *(f"{account}: requested but not granted: {request}" for request in found.missing),
        *(
            f"{account}: granted but never requested (remove the rule, or name the code needing it in "
            f"NOT_EXERCISED): "
            f"{permission}"
            for permission in found.unused
            if finished and permission not in excused
        ),
        *(
            f"{account}: NOT_EXERCISED lists what no role grants (restore the rule or drop the entry): {p}"
            for p in sorted(excused - granted)
        ),
    ]


def _scheduler_conf() -> str:
    """The conf the Deployment mounts, so its plugins run too, with preempt added: evictions are a code path
    of the scheduler's role that a user's conf turns on."""
    configmap = yaml.safe_load((PARTS / "30-scheduler-configmap.yaml").read_text())
    shipped = str(configmap["data"]["volcano-scheduler.conf"])
    actions = 'actions: "enqueue, allocate, backfill"'
    assert actions in shipped, "the shipped conf's actions changed: update _scheduler_conf"
    return shipped.replace(actions, 'actions: "enqueue, allocate, preempt, backfill"')


async def _install_webhook_configurations(kubeconfig: str, admin: KubeClient) -> None:
    """The admission bootstrap (create, then replace on restart) under the controller's token."""
    api = KubeClient(await load_api_client(kubeconfig))
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


async def _is(admin: KubeClient, lease: str, identity: str) -> bool:
    return await _holder(admin, lease) == identity


async def _browse(port: int, namespace: str) -> None:
    """The dashboard's pages, as a person opens them: each reads what it shows under the dashboard's token."""
    pages = ["/", "/queues", "/jobs", "/nodes", "/health", f"/jobs/{namespace}/rbac",
             f"/events/{namespace}/Job/rbac", "/api/overview.json"]  # fmt: skip
    async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as session:
        for page in pages:
            async with session.get(page) as answer:
                assert answer.status == 200, f"{page}: {answer.status} {await answer.text()}"


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
    (CONTROLLER_SA, ("get", "secrets", "-n", "default")),
    (CONTROLLER_SA, ("create", "queues.scheduling.volcano.sh")),
    (CONTROLLER_SA, ("delete", "queues.scheduling.volcano.sh")),
    (CONTROLLER_SA, ("update", "jobs.batch.volcano.sh", "-n", "default")),
    (CONTROLLER_SA, ("update", "nodes")),
    (CONTROLLER_SA, ("list", "namespaces")),
    (CONTROLLER_SA, ("update", "namespaces/default")),
    (CONTROLLER_SA, ("update", "validatingwebhookconfigurations/some-other-webhook")),
    (CONTROLLER_SA, ("update", f"leases/{SCHEDULER_LEASE}", "-n", SYSTEM)),
    (CONTROLLER_SA, ("create", "clusterroles")),
    # The dashboard only reads, and not Secrets.
    (DASHBOARD_SA, ("get", "secrets", "-n", "default")),
    (DASHBOARD_SA, ("patch", "pods", "-n", "default")),
    (DASHBOARD_SA, ("create", "jobs.batch.volcano.sh", "-n", "default")),
    (DASHBOARD_SA, ("update", "queues.scheduling.volcano.sh")),
    (DASHBOARD_SA, ("update", f"leases/{SCHEDULER_LEASE}", "-n", SYSTEM)),
    (DASHBOARD_SA, ("watch", f"leases/{CONTROLLER_LEASE}", "-n", SYSTEM)),
    (DASHBOARD_SA, ("list", "leases", "-n", SYSTEM)),
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
