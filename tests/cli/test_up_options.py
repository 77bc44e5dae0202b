"""`volcano-py up` flags checked before a control plane is started for nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.cli.main import build_parser


def test_a_bad_admission_conf_is_refused_before_the_cluster_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = tmp_path / "volcano-admission.conf"
    conf.write_text("resourceGroups:\n- resourceGroup: gpu\n  object: {key: label}\n")
    args = build_parser().parse_args(
        ["up", "--run-dir", str(tmp_path / "run"), "--admission-conf", str(conf)]
    )
    assert args.func(args) == 2
    assert capsys.readouterr().err == (
        f"volcano-py up: --admission-conf {conf}: resourceGroups[0].object.key: 'label' is not allowed "
        "(use one of 'namespace', 'annotation')\n"
    )
    assert not (tmp_path / "run").exists()
