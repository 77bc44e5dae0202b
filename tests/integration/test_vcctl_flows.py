"""``vcctl jobflow/jobtemplate/cronjob/pod`` and the one-verb aliases on the real control plane."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.vcctl import main as vcctl
from volcano_py.cli.vcctl.aliases import vjobs, vqueues

pytestmark = pytest.mark.integration

TASKS = [
    {"name": "work", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
]


def _write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_jobtemplate_jobflow_cronjob_and_pod_verbs(
    cluster: Any, namespace: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    ns = ["-n", namespace]
    templates = _write(tmp_path / "t.yaml", *[
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
         "metadata": {"name": n, "namespace": namespace}, "spec": {"tasks": TASKS}} for n in ("prep", "train")
    ])  # fmt: skip
    flow = _write(tmp_path / "f.yaml", {
        "apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
        "metadata": {"name": "pipeline", "namespace": namespace},
        "spec": {"flows": [{"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}}]},
    })  # fmt: skip
    assert vcctl(["jobtemplate", "create", "-f", templates, *kc]) == 0
    assert vcctl(["jobflow", "create", "-f", flow, *kc]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"Created JobTemplate: {namespace}/prep",
        f"Created JobTemplate: {namespace}/train",
        f"Created JobFlow: {namespace}/pipeline",
    ]
    assert vcctl(["jobtemplate", "list", *ns, *kc]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Name", "Namespace"] and [ln.split()[0] for ln in lines[1:]] == [
        "prep",
        "train",
    ]
    assert vcctl(["jobflow", "get", "-N", "pipeline", *ns, *kc]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["Name", "Namespace", "Phase", "Age"] and row.split()[:2] == [
        "pipeline",
        namespace,
    ]
    assert vcctl(["jobflow", "describe", "-N", "pipeline", "-o", "json", *ns, *kc]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["spec"]["flows"][1]["dependsOn"]["targets"] == ["prep"]
    assert "managedFields" not in described["metadata"]
    assert vcctl(["jobflow", "delete", "-N", "pipeline", *ns, *kc]) == 0
    assert vcctl(["jobtemplate", "delete", "-f", templates, *kc]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"Deleted JobFlow: {namespace}/pipeline",
        f"Deleted JobTemplate: {namespace}/prep",
        f"Deleted JobTemplate: {namespace}/train",
    ]
    assert vcctl(["jobflow", "list", *ns, *kc]) == 0
    assert capsys.readouterr().out == "No resources found\n"

    cron = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": namespace},
        "spec": {
            "schedule": "0 3 * * *",
            "timeZone": "Europe/Paris",
            "jobTemplate": {"spec": {"tasks": TASKS}},
        },
    }
    cluster.kubectl("apply", "-f", _write(tmp_path / "c.yaml", cron))  # fmt: skip
    assert vcctl(["cronjob", "suspend", "-N", "nightly", *ns, *kc]) == 0
    assert vcctl(["cronjob", "get", "-N", "nightly", *ns, *kc]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "suspend cronjob nightly successfully"
    assert out[1].split() == ["Name", "Schedule", "TimeZone", "Suspend", "Active", "LastSchedule", "Age"]
    assert out[2].split()[:7] == ["nightly", "0", "3", "*", "*", "*", "Europe/Paris"]
    assert out[2].split()[7] == "True"
    assert vcctl(["cronjob", "resume", "-N", "nightly", *ns, *kc]) == 0
    assert vcctl(["cronjob", "list", *ns, *kc]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "resume cronjob nightly successfully" and out[2].split()[7] == "False"

    assert vcctl(["pod", "list", "-j", "nothing", *ns, *kc]) == 0
    assert capsys.readouterr().out == "No resources found\n"
    assert vjobs(["-N", namespace, *kc]) == 0
    assert capsys.readouterr().out == "No resources found\n"
    assert vqueues(["-n", "absent", *kc]) == 1
    assert capsys.readouterr().err == "Error: queue absent not found\n"
    assert vcctl(["jobflow", "get", "-N", "gone", *ns, *kc]) == 1
    assert "jobflow" in capsys.readouterr().err.lower()
