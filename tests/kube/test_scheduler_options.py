"""The scheduler's configuration surface: command line, options validation, conf reload."""

import argparse
from pathlib import Path

import pytest

from volcano_py.cli.main import build_parser
from volcano_py.cli.scheduler import options_from
from volcano_py.scheduler.runtime.cycle import ConfSource, default_core
from volcano_py.scheduler.runtime.runner import SchedulerOptions

GOOD_CONF = """\
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
"""


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["scheduler", *argv])


def test_defaults_match_volcano() -> None:
    options = options_from(parse())
    assert options.scheduler_names == ("volcano",)
    assert options.schedule_period == 1.0
    assert options.metrics_port == 8080
    assert options.leader_elect is True
    assert options.lease_namespace == "volcano-system"
    # kube-scheduler's client connection, which its Events are held to
    assert (options.scheduled_event_qps, options.scheduled_event_burst) == (50.0, 100)


def test_the_mirror_is_kept_in_the_cache_directory_unless_told_otherwise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOLCANO_PY_CACHE", str(tmp_path))
    assert options_from(parse()).mirror_dir == str(tmp_path / "mirror")
    assert options_from(parse("--mirror-dir", "/var/state")).mirror_dir == "/var/state"
    assert options_from(parse("--no-mirror")).mirror_dir is None


def test_flags_are_read() -> None:
    options = options_from(
        parse(
            "--scheduler-name", "a", "--scheduler-name", "b", "--schedule-period", "0.5",
            "--metrics-port", "9090", "--no-leader-elect", "--lease-namespace", "kube-system",
            "--bind-concurrency", "4", "--scheduled-event-qps", "0", "--scheduled-event-burst", "7",
        )
    )  # fmt: skip
    assert options.scheduler_names == ("a", "b")
    assert (options.schedule_period, options.metrics_port, options.leader_elect) == (0.5, 9090, False)
    assert options.lease_namespace == "kube-system"
    assert options.bind_concurrency == 4
    assert (options.scheduled_event_qps, options.scheduled_event_burst) == (0.0, 7)


@pytest.mark.parametrize(
    ("kwargs", "flag"),
    [
        pytest.param({"schedule_period": 0}, "--schedule-period", id="zero-period"),
        pytest.param({"scheduler_names": ()}, "--scheduler-name", id="no-name"),
        pytest.param({"scheduler_names": ("",)}, "--scheduler-name", id="empty-name"),
        pytest.param({"metrics_port": 70000}, "--metrics-port", id="port-out-of-range"),
        pytest.param({"bind_concurrency": 0}, "--bind-concurrency", id="no-binds"),
        pytest.param({"scheduled_event_qps": -1}, "--scheduled-event-qps", id="negative-event-qps"),
        pytest.param({"scheduled_event_burst": 0}, "--scheduled-event-burst", id="no-event-burst"),
    ],
)
def test_bad_options_name_the_flag(kwargs: dict[str, object], flag: str) -> None:
    with pytest.raises(ValueError, match=flag):
        SchedulerOptions(**kwargs)  # type: ignore[arg-type]


def test_conf_file_is_reloaded_and_a_bad_edit_keeps_the_last_good_conf(tmp_path: Path) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(GOOD_CONF)
    source = ConfSource(str(path), default_core(("volcano",)))
    assert source.conf.actions == ("enqueue", "allocate")
    assert source.reload() is False  # unchanged
    path.write_text(GOOD_CONF.replace('"enqueue, allocate"', '"enqueue, allocate, backfill"'))
    assert source.reload() is True
    assert source.conf.actions == ("enqueue", "allocate", "backfill")
    path.write_text(GOOD_CONF.replace("gang", "no-such-plugin"))
    assert source.reload() is False
    assert source.conf.actions == ("enqueue", "allocate", "backfill")


def test_bad_conf_at_start_up_is_an_error_naming_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "bad.conf"
    path.write_text('actions: "enqueue, allocate, teleport"\ntiers: []\n')
    with pytest.raises(ValueError, match="teleport"):
        ConfSource(str(path), default_core(("volcano",)))
    with pytest.raises(ValueError, match="cannot read"):
        ConfSource(str(tmp_path / "missing.conf"), default_core(("volcano",)))


def test_no_conf_file_means_volcanos_default() -> None:
    source = ConfSource(None, default_core(("volcano",)))
    assert source.conf.actions == ("enqueue", "allocate", "backfill")
    assert source.reload() is False


@pytest.mark.parametrize("process", ["scheduler", "controller"])
def test_feature_gates_reach_both_processes(process: str) -> None:
    from volcano_py.cli import controller

    args = build_parser().parse_args([process, "--feature-gates", "SchedulingGatesQueueAdmission=true"])
    read = options_from if process == "scheduler" else controller.options_from
    assert read(args).feature_gates.queue_admission_gates
    assert not read(build_parser().parse_args([process])).feature_gates.queue_admission_gates


@pytest.mark.parametrize("process", ["scheduler", "controller", "up"])
def test_bad_feature_gate_is_refused_at_start(process: str, capsys: pytest.CaptureFixture[str]) -> None:
    from volcano_py.cli.main import main

    # Refused before anything starts: no API server is needed to see it (nor a cluster, for up).
    code = main([process, "--feature-gates", "Bogus=true"])
    assert code == 2
    err = capsys.readouterr().err
    assert f"volcano-py {process}: --feature-gates: unknown feature gate 'Bogus'" in err
    assert "SchedulingGatesQueueAdmission (default false)" in err
