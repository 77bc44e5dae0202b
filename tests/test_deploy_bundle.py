"""``deploy/volcano-py.yaml``: committed as rendered, well-formed, least-privilege, runnable as written."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.deploy import BundleError, render_bundle
from volcano_py.cli.main import build_parser
from volcano_py.cli.main import main as volcano_py_main
from volcano_py.scheduler.core import load_conf

REPO = Path(__file__).resolve().parents[1]
PARTS, CRDS, BUNDLE = REPO / "deploy" / "parts", REPO / "crds", REPO / "deploy" / "volcano-py.yaml"
NAMESPACE = "volcano-system"
JSON = dict[str, Any]

# The most each role may ever hold, per (apiGroup, resource). Widening a role means widening this list too,
# in review, next to the reason.
WHITELIST: dict[str, dict[tuple[str, str], set[str]]] = {
    "volcano-scheduler": {
        ("", "nodes"): {"list", "watch"},
        ("", "pods"): {"list", "watch", "patch", "delete"},  # patch: the queue-allocation gate removed
        ("", "pods/binding"): {"create"},
        ("", "pods/status"): {"patch"},
        ("", "events"): {"create", "patch"},
        ("scheduling.k8s.io", "priorityclasses"): {"list", "watch"},
        # The pdb plugin spares victims a budget protects; resourcequota holds enqueue within a quota.
        ("policy", "poddisruptionbudgets"): {"list", "watch"},
        ("", "resourcequotas"): {"list", "watch"},
        ("scheduling.volcano.sh", "podgroups"): {"list", "watch", "patch"},
        # create: the root and default queues at start-up; patch: proportion's recent-usage annotation.
        ("scheduling.volcano.sh", "queues"): {"list", "watch", "create", "patch"},
        ("scheduling.volcano.sh", "queues/status"): {"patch"},
        ("topology.volcano.sh", "hypernodes"): {"list", "watch"},
        ("nodeinfo.volcano.sh", "numatopologies"): {"list", "watch"},
        # DRA: a pod's claims are allocated and reserved for it before its bind (kube/claims.py).
        ("resource.k8s.io", "deviceclasses"): {"list", "watch"},
        ("resource.k8s.io", "resourceslices"): {"list", "watch"},
        ("resource.k8s.io", "resourceclaims"): {"list", "watch", "get"},
        ("resource.k8s.io", "resourceclaims/status"): {"update"},
        # Node sharding: the NodeShards mirrored, the scheduler's own one's nodesInUse written.
        ("shard.volcano.sh", "nodeshards"): {"list", "watch"},
        ("shard.volcano.sh", "nodeshards/status"): {"update"},
    },
    "volcano-controllers": {
        ("batch.volcano.sh", "jobs"): {"list", "watch", "get", "create", "delete"},
        ("batch.volcano.sh", "jobs/status"): {"update"},
        ("batch.volcano.sh", "cronjobs"): {"list", "watch"},
        ("batch.volcano.sh", "cronjobs/status"): {"patch"},
        ("flow.volcano.sh", "jobflows"): {"list", "watch"},
        ("flow.volcano.sh", "jobtemplates"): {"list", "watch"},
        ("flow.volcano.sh", "jobflows/status"): {"patch"},
        ("flow.volcano.sh", "jobtemplates/status"): {"patch"},
        ("", "nodes"): {"list", "watch"},
        ("topology.volcano.sh", "hypernodes"): {"list", "watch", "create", "update", "delete"},
        ("topology.volcano.sh", "hypernodes/status"): {"patch"},
        ("shard.volcano.sh", "nodeshards"): {"list", "watch", "create", "patch", "delete"},
        ("shard.volcano.sh", "nodeshards/status"): {"patch"},
        ("bus.volcano.sh", "commands"): {"list", "watch", "delete"},
        ("scheduling.volcano.sh", "podgroups"): {"list", "watch", "create", "patch", "delete"},
        ("scheduling.volcano.sh", "queues"): {"list", "watch", "patch"},
        ("scheduling.volcano.sh", "queues/status"): {"patch"},
        ("", "pods"): {"list", "watch", "create", "patch", "delete"},
        ("", "persistentvolumeclaims"): {"get", "create"},
        # Only the svc plugin's hosts ConfigMap is read back and replaced; the rest is made and deleted.
        ("", "services"): {"create", "delete"},
        # list and watch by name only: the sharding ConfigMap (a rule with resourceNames).
        ("", "configmaps"): {"get", "create", "update", "delete", "list", "watch"},
        ("", "secrets"): {"create", "delete"},
        ("networking.k8s.io", "networkpolicies"): {"create", "delete"},
        ("", "events"): {"create", "patch"},
        ("scheduling.k8s.io", "priorityclasses"): {"get"},
        ("apps", "replicasets"): {"get", "list", "watch"},
        ("apps", "statefulsets"): {"get"},
        ("apps", "daemonsets"): {"get"},
        ("batch", "jobs"): {"get"},
        ("", "namespaces"): {"get"},
        ("apiextensions.k8s.io", "customresourcedefinitions"): {"list", "watch"},
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): {"create", "get", "update"},
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): {"create", "get", "update"},
    },
    # Read-only: the dashboard watches what it shows and never writes.
    "volcano-dashboard": {
        ("", "nodes"): {"list", "watch"},
        ("", "pods"): {"list", "watch"},
        ("", "events"): {"list", "watch"},
        ("scheduling.k8s.io", "priorityclasses"): {"list", "watch"},
        ("scheduling.volcano.sh", "podgroups"): {"list", "watch"},
        ("scheduling.volcano.sh", "queues"): {"list", "watch"},
        ("batch.volcano.sh", "jobs"): {"list", "watch"},
        ("topology.volcano.sh", "hypernodes"): {"list", "watch"},
        ("policy", "poddisruptionbudgets"): {"list", "watch"},
        ("", "resourcequotas"): {"list", "watch"},
        ("nodeinfo.volcano.sh", "numatopologies"): {"list", "watch"},
        ("resource.k8s.io", "deviceclasses"): {"list", "watch"},
        ("resource.k8s.io", "resourceslices"): {"list", "watch"},
        ("resource.k8s.io", "resourceclaims"): {"list", "watch"},
        ("shard.volcano.sh", "nodeshards"): {"list", "watch"},
    },
    "volcano-dashboard-leases": {("coordination.k8s.io", "leases"): {"list", "watch"}},
    "volcano-scheduler-leader-election": {("coordination.k8s.io", "leases"): {"create", "get", "update"}},
    "volcano-controllers-leader-election": {("coordination.k8s.io", "leases"): {"create", "get", "update"}},
}


@pytest.fixture(scope="module")
def objects() -> list[JSON]:
    return [doc for doc in yaml.safe_load_all(BUNDLE.read_text(encoding="utf-8")) if doc is not None]


def _one(objects: list[JSON], kind: str, name: str) -> JSON:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected exactly one {kind} {name} in the bundle, found {len(found)}"
    return found[0]


def test_committed_bundle_is_the_render() -> None:
    assert BUNDLE.read_text(encoding="utf-8") == render_bundle(PARTS, CRDS), (
        "deploy/volcano-py.yaml is stale: run `volcano-py deploy render` and commit it"
    )


def test_render_check_exits_1_when_stale_and_0_once_rendered(tmp_path: Path) -> None:
    output, chart = tmp_path / "bundle.yaml", tmp_path / "chart"
    argv = ["deploy", "render", "--parts", str(PARTS), "--crds", str(CRDS), "--output", str(output)]
    argv += ["--chart", str(chart)]
    assert volcano_py_main([*argv, "--check"]) == 1  # missing counts as stale
    assert not output.exists(), "--check must write nothing"
    assert volcano_py_main(argv) == 0
    assert volcano_py_main([*argv, "--check"]) == 0
    output.write_text(output.read_text() + "# edited by hand\n")
    assert volcano_py_main([*argv, "--check"]) == 1
    assert volcano_py_main(argv) == 0
    # The chart's generated files count too: a hand edit, or a CRD file no longer in crds/.
    rbac = chart / "templates" / "rbac-scheduler.yaml"
    rbac.write_text(rbac.read_text().replace("verbs: [list, watch]", "verbs: ['*']", 1))
    assert volcano_py_main([*argv, "--check"]) == 1
    assert volcano_py_main(argv) == 0
    (chart / "crds" / "gone.example.com.yaml").write_text("kind: CustomResourceDefinition\n")
    assert volcano_py_main([*argv, "--check"]) == 1
    assert volcano_py_main(argv) == 0
    assert not (chart / "crds" / "gone.example.com.yaml").exists()


def test_render_refuses_an_unnamed_object(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
    with pytest.raises(BundleError, match=r"bad\.yaml: document 1 \(ConfigMap\) has no metadata\.name"):
        render_bundle(tmp_path, CRDS)


def test_render_without_sources_says_where_to_run_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "deploy",
        "render",
        "--parts",
        str(tmp_path),
        "--crds",
        str(CRDS),
        "--output",
        str(tmp_path / "o"),
        "--chart",
        str(tmp_path / "chart"),
    ]
    assert volcano_py_main(argv) == 2
    assert f"no *.yaml in {tmp_path} (deploy parts); run from the repository root" in capsys.readouterr().err


def test_every_object_is_named_and_namespaced_objects_live_in_volcano_system(objects: list[JSON]) -> None:
    cluster_scoped = {"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding"}
    for obj in objects:
        assert obj.get("apiVersion") and obj.get("kind") and obj["metadata"].get("name"), obj
        if obj["kind"] not in cluster_scoped:
            assert obj["metadata"].get("namespace") == NAMESPACE, f"{obj['kind']} {obj['metadata']['name']}"
    crds = sorted(o["metadata"]["name"] for o in objects if o["kind"] == "CustomResourceDefinition")
    assert crds == sorted(
        ["jobs.batch.volcano.sh", "commands.bus.volcano.sh", "podgroups.scheduling.volcano.sh",
         "queues.scheduling.volcano.sh", "hypernodes.topology.volcano.sh",
         "numatopologies.nodeinfo.volcano.sh", "cronjobs.batch.volcano.sh", "jobflows.flow.volcano.sh",
         "jobtemplates.flow.volcano.sh", "nodeshards.shard.volcano.sh"]
    )  # fmt: skip
    _one(objects, "Namespace", NAMESPACE)


# A default Volcano install (`helm install volcano ... -n volcano-system`) names these objects so (its chart's
# scheduler.yaml, controllers.yaml, admission.yaml); users' scripts say `logs deploy/volcano-scheduler`.
VOLCANO_DEFAULT_NAMES = {
    ("Deployment", "volcano-scheduler"),
    ("Deployment", "volcano-controllers"),
    ("ServiceAccount", "volcano-scheduler"),
    ("ServiceAccount", "volcano-controllers"),
    ("ClusterRole", "volcano-scheduler"),
    ("ClusterRole", "volcano-controllers"),
    ("ClusterRoleBinding", "volcano-scheduler-role"),
    ("ClusterRoleBinding", "volcano-controllers-role"),
    ("ConfigMap", "volcano-scheduler-configmap"),
    ("Service", "volcano-scheduler-service"),
    ("Service", "volcano-controllers-service"),
    ("Service", "volcano-admission-service"),
}


def test_names_are_those_of_a_default_volcano_install(objects: list[JSON]) -> None:
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert VOLCANO_DEFAULT_NAMES - names == set()
    # Ours alone (the dashboard, the leader-election Roles) carry the same release prefix; nothing else.
    ours = {n for n in names - VOLCANO_DEFAULT_NAMES if n[0] not in ("CustomResourceDefinition", "Namespace")}
    assert {name for _, name in ours} == {
        "volcano-dashboard", "volcano-dashboard-role", "volcano-dashboard-leases",
        "volcano-scheduler-leader-election", "volcano-controllers-leader-election",
    }  # fmt: skip
    controllers = _container(_one(objects, "Deployment", "volcano-controllers"))
    assert "--webhook-service=volcano-system/volcano-admission-service" in controllers["args"]


def test_rbac_stays_within_each_roles_whitelist(objects: list[JSON]) -> None:
    roles = [o for o in objects if o["kind"] in ("ClusterRole", "Role")]
    assert sorted(r["metadata"]["name"] for r in roles) == sorted(WHITELIST)
    for role in roles:
        allowed = WHITELIST[role["metadata"]["name"]]
        for rule in role["rules"]:
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule[field], f"{role['metadata']['name']}: wildcard in {field}"
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    extra = set(rule["verbs"]) - allowed.get((group, resource), set())
                    assert not extra, (
                        f"{role['metadata']['name']} grants {extra} on {group or 'core'}/{resource}"
                    )


def test_leases_other_than_our_own_cannot_be_read_or_written(objects: list[JSON]) -> None:
    # The scheduler's ServiceAccount also runs the agent scheduler (its election) and writes the queue turns.
    scheduler = ["vc-scheduler", "agent-scheduler", "volcano-queue-turns"]
    for name, leases in (("volcano-scheduler-leader-election", scheduler),
                         ("volcano-controllers-leader-election", ["volcano-py-controller"]),
                         ("volcano-dashboard-leases", ["vc-scheduler"])):  # fmt: skip
        for rule in _one(objects, "Role", name)["rules"]:
            if set(rule["verbs"]) & {"get", "update", "list", "watch"}:
                assert rule.get("resourceNames") == leases


def test_bindings_give_each_service_account_its_own_roles(objects: list[JSON]) -> None:
    for binding in (o for o in objects if o["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        name = binding["metadata"]["name"]
        _one(objects, binding["roleRef"]["kind"], binding["roleRef"]["name"])
        account = next(
            a for a in ("volcano-scheduler", "volcano-dashboard", "volcano-controllers") if name.startswith(a)
        )
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
        _one(objects, "ServiceAccount", account)


def _container(deployment: JSON) -> JSON:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    container: JSON = containers[0]
    return container


@pytest.mark.parametrize(
    ("name", "command", "ready_path"),
    [("volcano-scheduler", "scheduler", "/readyz"), ("volcano-controllers", "controller", "/healthz")],
)
def test_deployment_runs_the_real_cli_safely(
    objects: list[JSON], name: str, command: str, ready_path: str
) -> None:
    deployment = _one(objects, "Deployment", name)
    spec, pod = deployment["spec"], deployment["spec"]["template"]["spec"]
    assert spec["replicas"] == 1 and spec["strategy"] == {"type": "Recreate"}
    assert pod["serviceAccountName"] == name
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    container = _container(deployment)
    assert container["image"] == "ghcr.io/volcano-py/volcano-py:0.1.0"
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"]["requests"] and container["resources"]["limits"]
    # The args as the container gets them (the Dockerfile's ENTRYPOINT is `volcano-py`), through our parser.
    args = [a.replace("$(POD_NAME)", "pod-0") for a in container["args"]]
    assert args[0] == command
    parsed = build_parser().parse_args(args)
    assert parsed.leader_elect is True and parsed.lease_namespace == NAMESPACE and parsed.identity == "pod-0"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert parsed.metrics_port == ports["metrics"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": ready_path, "port": "metrics"}
    # Each Role pins the Lease name the process will use.
    role = _one(objects, "Role", f"{name}-leader-election")
    pinned = [r["resourceNames"] for r in role["rules"] if r.get("resourceNames")]
    assert any(parsed.lease_name in names for names in pinned), shlex.join(args)


def test_scheduler_reads_volcanos_conf_from_the_configmap(objects: list[JSON]) -> None:
    deployment = _one(objects, "Deployment", "volcano-scheduler")
    container = _container(deployment)
    parsed = build_parser().parse_args([a.replace("$(POD_NAME)", "p") for a in container["args"]])
    conf_path = Path(parsed.scheduler_conf)
    mount = next(m for m in container["volumeMounts"] if Path(m["mountPath"]) == conf_path.parent)
    assert "subPath" not in mount, (
        "a subPath mount never sees ConfigMap updates, so conf reload would not work"
    )
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"])
    configmap = _one(objects, "ConfigMap", volume["configMap"]["name"])
    assert configmap["metadata"]["name"] == "volcano-scheduler-configmap"
    conf = load_conf(configmap["data"][conf_path.name])
    assert conf.actions == ("enqueue", "allocate", "backfill")
    first_tier = ["priority", "gang", "conformance"]
    second_tier = ["overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack", "cpsat"]
    assert [[p.name for p in tier] for tier in conf.tiers] == [first_tier, second_tier]


@pytest.mark.parametrize(
    ("service", "port", "target"),
    [
        ("volcano-scheduler-service", 8080, "metrics"),
        ("volcano-controllers-service", 8081, "metrics"),
        ("volcano-admission-service", 443, "webhook"),
    ],
)
def test_services_reach_a_named_container_port(
    objects: list[JSON], service: str, port: int, target: str
) -> None:
    svc = _one(objects, "Service", service)
    [svc_port] = svc["spec"]["ports"]
    assert (svc_port["port"], svc_port["targetPort"]) == (port, target)
    selected = [
        d for d in objects
        if d["kind"] == "Deployment"
        and svc["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
    ]  # fmt: skip
    assert len(selected) == 1, f"{service} must select exactly one Deployment's pods"
    assert target in {p["name"] for p in _container(selected[0])["ports"]}


def test_dashboard_is_read_only_and_runs_the_real_cli(objects: list[JSON]) -> None:
    for name in ("volcano-dashboard", "volcano-dashboard-leases"):
        role = next(
            o for o in objects if o["kind"] in ("ClusterRole", "Role") and o["metadata"]["name"] == name
        )
        for rule in role["rules"]:
            assert set(rule["verbs"]) <= {"get", "list", "watch"}, f"{name} may write: {rule}"
    deployment = _one(objects, "Deployment", "volcano-dashboard")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "volcano-dashboard"
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = _container(deployment)
    parsed = build_parser().parse_args(container["args"])
    assert parsed.command == "dashboard"
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert parsed.port == ports["http"] and parsed.host == "0.0.0.0"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert parsed.scheduler_conf.rsplit("/", 1)[0] in mounts
    # It has no authentication of its own: reachable from inside the cluster only (port-forward or a proxy).
    service = _one(objects, "Service", "volcano-dashboard")
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP", service["spec"]
    assert not any("nodePort" in port for port in service["spec"]["ports"])
    assert not [o for o in objects if o["kind"] == "Ingress"]
