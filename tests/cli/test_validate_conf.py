"""``volcano-py validate`` on scheduler confs: a conf file or a ConfigMap holding one, with the scheduler's
own load messages and the manifests' exit codes (0 loads, 1 refused, 2 unreadable)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.scheduler.test_catalogue import HELM_CI
from volcano_py.cli.main import build_parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


def _configmap(conf: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": conf},
        }
    )


def test_volcanos_ci_conf_file_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(HELM_CI)
    assert main(["validate", str(path)]) == 0
    assert "1 object(s) checked, 0 problem(s)" in capsys.readouterr().err


def test_refused_metrics_source_in_a_configmap_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(_configmap(HELM_CI + "metrics: {type: elasticsearch, address: 'http://es:9200'}\n"))
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [
        f"{path}: ConfigMap/volcano-system/volcano-scheduler-configmap: data[volcano-scheduler.conf]: "
        "metrics.type: 'elasticsearch' is not supported: Elasticsearch is not read by volcano-py; use type: "
        "prometheus with the address of a Prometheus that scrapes node-exporter (node_cpu_seconds_total, "
        "node_memory_*)"
    ]


def test_bad_argument_in_a_conf_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(
        HELM_CI.replace("predicate.DynamicResourceAllocationEnable: true", "predicate.Typo: true")
    )
    assert main(["validate", str(path)]) == 1
    assert "plugin predicates: unknown argument(s) predicate.Typo" in capsys.readouterr().out


def test_shipped_configmap_and_missing_conf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shipped = Path(__file__).resolve().parents[2] / "deploy" / "parts" / "30-scheduler-configmap.yaml"
    assert main(["validate", str(shipped)]) == 0
    assert main(["validate", str(tmp_path / "absent.conf")]) == 2


ADMISSION_CONF = (
    "resourceGroups:\n- resourceGroup: gpu\n  schedulerName: volcano\n  labels: {volcano.sh/nodetype: gpu}\n"
)


def test_an_admission_conf_file_and_configmap_are_checked_by_its_own_loader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "volcano-admission.conf"
    path.write_text(ADMISSION_CONF)
    assert main(["validate", str(path)]) == 0
    configmap = tmp_path / "admission-cm.yaml"

    def write_configmap(conf: str) -> None:
        configmap.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "volcano-admission-configmap", "namespace": "volcano-system"},
                    "data": {"volcano-admission.conf": conf},
                }
            )
        )

    write_configmap(ADMISSION_CONF)
    assert main(["validate", str(configmap)]) == 0
    path.write_text(ADMISSION_CONF.replace("schedulerName", "scheduler"))
    write_configmap(ADMISSION_CONF.replace("resourceGroup: gpu", "resourceGroup: gpu\n  object: {key: x}"))
    assert main(["validate", str(path), str(configmap)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [
        f"{path}: admission conf: resourceGroups[0].scheduler: unknown field (remove it or fix its spelling)",
        f"{configmap}: ConfigMap/volcano-system/volcano-admission-configmap: data[volcano-admission.conf]: "
        "resourceGroups[0].object.key: 'x' is not allowed (use one of 'namespace', 'annotation')",
    ]
