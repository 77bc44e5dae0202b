"""`volcano-py up` flags checked before a control plane is started for nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.cli.main import build_parser
from volcano_py.cli.scheduler import sharding_from


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


@pytest.mark.parametrize(
    ("argv", "mode", "name"),
    [
        pytest.param([], "none", "volcano", id="defaults-as-volcano"),
        pytest.param(
            ["--scheduler-sharding-mode", "hard", "--scheduler-sharding-name", "batch"],
            "hard",
            "batch",
            id="set",
        ),
    ],
)
@pytest.mark.parametrize("command", ["up", "scheduler"])
def test_sharding_flags_reach_the_scheduler_options(
    command: str, argv: list[str], mode: str, name: str
) -> None:

    sharding = sharding_from(build_parser().parse_args([command, *argv]))
    assert (sharding.mode.value, sharding.name) == (mode, name)


def test_an_unknown_sharding_mode_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["scheduler", "--scheduler-sharding-mode", "strict"])
    assert "invalid choice: 'strict'" in capsys.readouterr().err
