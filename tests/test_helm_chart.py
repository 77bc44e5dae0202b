"""The Helm chart ``deploy/helm/volcano-py``: by default the objects of ``deploy/volcano-py.yaml``; its values
do what their (Volcano) names say; bad values fail the render naming the key; ``helm lint`` passes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.api.admission_conf import ADMISSION_CONF_KEY, load_admission_conf
from volcano_py.cli.deploy import BundleError, chart_files
from volcano_py.cli.main import build_parser
from volcano_py.scheduler.core import load_conf

REPO = Path(__file__).resolve().parents[1]
CHART, BUNDLE = REPO / "deploy" / "helm" / "volcano-py", REPO / "deploy" / "volcano-py.yaml"
NAMESPACE = "volcano-system"
# The release the bundle is: its objects get the names of a default Volcano install.
RELEASE = "volcano"
JSON = dict[str, Any]
Key = tuple[str, str, str]


def render(
    helm: Path,
    *sets: str,
    namespace: str = NAMESPACE,
    release: str = RELEASE,
    values: Path | None = None,
    check: bool = True,
) -> list[JSON]:
    args = [str(helm), "template", release, str(CHART), "-n", namespace, "--include-crds"]
    if values is not None:
        args += ["-f", str(values)]
    for item in sets:
        args += ["--set", item]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    if check:
        assert done.returncode == 0, done.stderr
    elif done.returncode != 0:
        raise ValueError(done.stderr)
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _key(obj: JSON) -> Key:
    return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _one(objects: list[JSON], kind: str, name: str) -> JSON:
    [found] = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def _container(objects: list[JSON], name: str) -> JSON:
    container: JSON = _one(objects, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]
    return container


def _parsed_args(objects: list[JSON], name: str) -> Any:
    return build_parser().parse_args(
        [a.replace("$(POD_NAME)", "p") for a in _container(objects, name)["args"]]
    )


def test_chart_generated_files_are_committed_as_rendered() -> None:
    stale = [
        name
        for name, text in chart_files(REPO / "deploy" / "parts", REPO / "crds").items()
        if not (CHART / name).is_file() or (CHART / name).read_text(encoding="utf-8") != text
    ]
    assert stale == [], "run `volcano-py deploy render` and commit the result"


def test_a_copied_part_naming_an_object_outside_the_release_is_refused(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    shutil.copytree(REPO / "deploy" / "parts", parts)
    dashboard = parts / "42-dashboard.yaml"
    dashboard.write_text(
        dashboard.read_text().replace("name: volcano-dashboard-leases", "name: dashboard-leases")
    )
    with pytest.raises(
        BundleError, match=r"42-dashboard\.yaml: Role dashboard-leases is not named volcano-<comp"
    ):
        chart_files(parts, REPO / "crds")


def test_default_render_is_the_bundle_object_by_object(helm: Path) -> None:
    bundle = {_key(o): o for o in yaml.safe_load_all(BUNDLE.read_text(encoding="utf-8")) if o}
    chart = {_key(o): o for o in render(helm)}
    # Helm creates the release namespace (`--create-namespace`); a chart that also made it would collide.
    assert set(bundle) - set(chart) == {("Namespace", "", NAMESPACE)}
    assert set(chart) - set(bundle) == set()
    differing = [key for key in chart if chart[key] != bundle[key]]
    assert differing == [], f"the chart and deploy/volcano-py.yaml differ in {differing}"


def test_helm_lint_passes_strict(helm: Path) -> None:
    done = subprocess.run(
        [str(helm), "lint", "--strict", str(CHART)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in done.stdout


def test_another_namespace_reaches_every_namespaced_reference(helm: Path) -> None:
    objects = render(helm, namespace="batch-system")
    assert {o["metadata"].get("namespace") for o in objects if o["kind"] not in _CLUSTER_SCOPED} == {
        "batch-system"
    }
    for binding in (o for o in objects if o["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert binding["subjects"][0]["namespace"] == "batch-system"
    assert _parsed_args(objects, "volcano-scheduler").lease_namespace == "batch-system"
    controller = _parsed_args(objects, "volcano-controllers")
    assert controller.webhook_service == "batch-system/volcano-admission-service"


_CLUSTER_SCOPED = {"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding"}


def test_release_integration_has_the_deployments_volcanos_e2e_reads(helm: Path) -> None:
    """Volcano's e2e "HyperNode controller runtime deploys exactly one HyperNode controller owner", against
    the release its CI installs: `integration-controllers` owns HyperNode discovery (no
    `-hyperNode-controller` in its args) and there is no standalone `integration-hypernode-controller`."""
    objects = render(helm, release="integration")
    deployments = {o["metadata"]["name"] for o in objects if o["kind"] == "Deployment"}
    assert deployments == {"integration-scheduler", "integration-controllers", "integration-dashboard"}
    assert "integration-hypernode-controller" not in deployments
    args = _container(objects, "integration-controllers")["args"]
    assert [a for a in args if "-hyperNode-controller" in a] == []
    names = [o["metadata"]["name"] for o in objects if o["kind"] != "CustomResourceDefinition"]
    assert [name for name in names if not name.startswith("integration-")] == []


def test_every_reference_names_an_object_of_the_same_release(helm: Path, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"custom": {"admission_config_override": ADMISSION_CONF}}))
    objects = render(helm, release="integration", namespace="batch-system", values=values)
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    for binding in (o for o in objects if o["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in names, binding["metadata"]["name"]
        for subject in binding["subjects"]:
            assert ("ServiceAccount", subject["name"]) in names, binding["metadata"]["name"]
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        assert ("ServiceAccount", pod["serviceAccountName"]) in names
        for volume in (v for v in pod["volumes"] if "configMap" in v):
            assert ("ConfigMap", volume["configMap"]["name"]) in names
    assert ("ConfigMap", "integration-admission-configmap") in names
    controller = _parsed_args(objects, "integration-controllers")
    assert controller.webhook_service == "batch-system/integration-admission-service"
    assert ("Service", "integration-admission-service") in names
    dashboard = build_parser().parse_args(_container(objects, "integration-dashboard")["args"])
    assert dashboard.scheduler_metrics == "http://integration-scheduler-service.batch-system:8080/metrics"
    assert ("Service", "integration-scheduler-service") in names


CONF = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n'


def test_scheduler_config_override_replaces_the_conf(helm: Path, tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"custom": {"scheduler_config_override": CONF}}))
    done = subprocess.run(
        [str(helm), "template", RELEASE, str(CHART), "-n", NAMESPACE, "-f", str(values)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    objects = [o for o in yaml.safe_load_all(done.stdout) if o]
    conf = load_conf(
        _one(objects, "ConfigMap", "volcano-scheduler-configmap")["data"]["volcano-scheduler.conf"]
    )
    assert conf.actions == ("enqueue", "allocate")
    assert [[p.name for p in tier] for tier in conf.tiers] == [["gang", "predicates"]]


ADMISSION_CONF = """\
resourceGroups:
- resourceGroup: management
  object: {key: namespace, value: [mng-ns-1]}
  schedulerName: default-scheduler
  labels: {volcano.sh/nodetype: management}
"""


def test_admission_config_override_reaches_the_controller_as_its_admission_conf(
    helm: Path, tmp_path: Path
) -> None:
    assert "--admission-conf" not in " ".join(_container(render(helm), "volcano-controllers")["args"])
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump({"custom": {"admission_config_override": ADMISSION_CONF}}))
    done = subprocess.run(
        [str(helm), "template", RELEASE, str(CHART), "-n", NAMESPACE, "-f", str(values)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    objects = [o for o in yaml.safe_load_all(done.stdout) if o]
    configmap = _one(objects, "ConfigMap", "volcano-admission-configmap")
    conf = load_admission_conf(configmap["data"][ADMISSION_CONF_KEY])
    assert [group.resource_group for group in conf.resource_groups] == ["management"]
    path = Path(_parsed_args(objects, "volcano-controllers").admission_conf)
    pod = _one(objects, "Deployment", "volcano-controllers")["spec"]["template"]["spec"]
    [volume] = [
        v for v in pod["volumes"] if v.get("configMap", {}).get("name") == "volcano-admission-configmap"
    ]
    [mount] = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == volume["name"]]
    # The whole ConfigMap as a directory (no subPath), so an edit reaches the file the controller re-reads.
    assert "subPath" not in mount and Path(mount["mountPath"]) / ADMISSION_CONF_KEY == path


def test_component_values_reach_the_deployments(helm: Path) -> None:
    objects = render(
        helm,
        "custom.scheduler_replicas=2",
        "custom.controller_worker_threads=4",
        "custom.scheduler_schedule_period=500ms",
        "custom.scheduler_name=gpu-scheduler",
        "custom.scheduler_log_level=debug",
        "custom.admission_failure_policy=Ignore",
        "custom.admission_timeout_seconds=10",
        "basic.image_tag_version=0.2.0",
        "basic.scheduler_image_tag_version=0.2.1",
        "custom.default_ns.pool=system",
        "custom.controller_ns.pool=control",
        "custom.scheduler_tolerations[0].key=dedicated",
        "custom.scheduler_tolerations[0].operator=Exists",
        "custom.scheduler_resources.limits.cpu=4",
        "custom.common_labels.team=batch",
        "custom.scheduler_feature_gates=SchedulingGatesQueueAdmission=true",
        "custom.admission_feature_gates=SchedulingGatesQueueAdmission=true",
    )
    scheduler = _one(objects, "Deployment", "volcano-scheduler")
    pod = scheduler["spec"]["template"]["spec"]
    assert scheduler["spec"]["replicas"] == 2
    assert pod["nodeSelector"] == {"pool": "system"}
    assert pod["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    assert pod["containers"][0]["image"] == "ghcr.io/volcano-py/volcano-py:0.2.1"
    assert pod["containers"][0]["resources"]["limits"] == {"cpu": 4, "memory": "2Gi"}
    assert {"name": "VOLCANO_PY_LOG_LEVEL", "value": "debug"} in pod["containers"][0]["env"]
    parsed = _parsed_args(objects, "volcano-scheduler")
    assert parsed.schedule_period == 0.5 and parsed.scheduler_names == ["gpu-scheduler"]
    assert parsed.feature_gates == "SchedulingGatesQueueAdmission=true"

    controller = _one(objects, "Deployment", "volcano-controllers")["spec"]["template"]["spec"]
    assert controller["nodeSelector"] == {"pool": "control"} and "tolerations" not in controller
    assert controller["containers"][0]["image"] == "ghcr.io/volcano-py/volcano-py:0.2.0"
    parsed = _parsed_args(objects, "volcano-controllers")
    assert (parsed.workers, parsed.scheduler_names) == (4, ["gpu-scheduler"])
    assert (parsed.webhook_failure_policy, parsed.webhook_timeout) == ("Ignore", 10)
    assert parsed.feature_gates == "SchedulingGatesQueueAdmission=true"
    assert all(
        o["metadata"]["labels"]["team"] == "batch" for o in objects if o["kind"] != "CustomResourceDefinition"
    )


def test_sharding_values_reach_the_scheduler_args(helm: Path) -> None:
    parsed = _parsed_args(render(helm), "volcano-scheduler")
    assert (parsed.sharding_mode, parsed.sharding_name) == ("none", "volcano")  # Volcano's defaults
    objects = render(helm, "custom.scheduler_sharding_mode=hard", "custom.scheduler_sharding_name=batch")
    parsed = _parsed_args(objects, "volcano-scheduler")
    assert (parsed.sharding_mode, parsed.sharding_name) == ("hard", "batch")


def test_switches_leave_out_what_they_turn_off(helm: Path) -> None:
    objects = render(
        helm,
        "custom.admission_enable=false",
        "custom.leader_elect_enable=false",
        "custom.scheduler_metrics_enable=false",
    )
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("Service", "volcano-admission-service") not in names
    assert ("Service", "volcano-scheduler-service") not in names
    assert ("Service", "volcano-controllers-service") in names
    controller = _parsed_args(objects, "volcano-controllers")
    assert controller.webhook_port == 0 and controller.leader_elect is False
    assert [p["name"] for p in _container(objects, "volcano-controllers")["ports"]] == ["metrics"]
    assert _parsed_args(objects, "volcano-scheduler").leader_elect is False

    only_controller = render(helm, "custom.scheduler_enable=false")
    # Its ServiceAccount and RBAC stay (generated from the parts, without a switch); its workload goes.
    assert not [
        o
        for o in only_controller
        if o["kind"] in ("Deployment", "Service", "ConfigMap")
        and o["metadata"]["name"].startswith("volcano-scheduler")
    ]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        pytest.param(
            "custom.scheduler_log_level=4",
            'custom.scheduler_log_level is "4": use debug, info, warning or error',
            id="klog-number",
        ),
        pytest.param(
            "custom.admission_timeout_seconds=60",
            "custom.admission_timeout_seconds is 60: the API server takes 1 to 30 seconds",
            id="timeout",
        ),
        pytest.param(
            "custom.admission_enable=false,custom.admission_config_override=x",
            "custom.admission_config_override needs custom.controller_enable and custom.admission_enable",
            id="admission-conf-without-admission",
        ),
        pytest.param(
            "custom.admission_failure_policy=Retry",
            'custom.admission_failure_policy is "Retry": use Fail or Ignore',
            id="failure-policy",
        ),
    ],
)
def test_bad_values_fail_the_render_naming_the_key(helm: Path, setting: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render(helm, setting, check=False)


def test_agent_scheduler_values_reach_its_deployment(helm: Path) -> None:
    assert not [
        o for o in render(helm) if o["metadata"]["name"] == "volcano-agent-scheduler"
    ]  # off by default
    objects = render(
        helm,
        "custom.agent_scheduler_enable=true",
        "custom.agent_scheduler_worker_count=2",
        "custom.agent_scheduler_sharding_mode=soft",
        "custom.agent_scheduler_config_override=actions: allocate",
    )
    deployment = _one(objects, "Deployment", "volcano-agent-scheduler")
    # Volcano's e2e suite finds the agent scheduler by this label.
    assert deployment["metadata"]["labels"]["app"] == "agent-scheduler"
    parsed = _parsed_args(objects, "volcano-agent-scheduler")
    assert parsed.command == "agent-scheduler"
    assert (parsed.scheduler_name, parsed.scheduler_worker_count) == ("agent-scheduler", 2)
    assert (parsed.sharding_mode, parsed.sharding_name) == ("soft", "agent-scheduler")
    assert parsed.scheduler_conf == "/etc/volcano/agent-scheduler.conf"
    conf = _one(objects, "ConfigMap", "volcano-agent-scheduler-configmap")
    assert conf["data"]["agent-scheduler.conf"].strip() == "actions: allocate"
