"""`volcano-py controller` flags: read into the options, and a bad value refused naming the flag."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from volcano_py.cli import controller
from volcano_py.kube.leader import LeaseTiming


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    controller.register(parser.add_subparsers())
    return parser.parse_args(["controller", *argv])


def test_create_concurrency_is_read() -> None:
    assert controller.options_from(parse()).create_concurrency == 64
    assert controller.options_from(parse("--create-concurrency", "4")).create_concurrency == 4


@pytest.mark.parametrize("flag", ["--create-concurrency", "--workers"])
def test_zero_is_refused_naming_the_flag(flag: str) -> None:
    with pytest.raises(ValueError, match=f"{flag} must be at least 1, got 0"):
        controller.options_from(parse(flag, "0"))


def test_admission_conf_is_read_and_a_bad_one_refused_before_start(tmp_path: Path) -> None:
    assert controller.options_from(parse()).admission_conf is None
    conf = tmp_path / "volcano-admission.conf"
    conf.write_text("resourceGroups:\n- resourceGroup: gpu\n  schedulerName: volcano\n")
    assert controller.options_from(parse("--admission-conf", str(conf))).admission_conf == str(conf)
    conf.write_text("resourceGroups:\n- resourceGroup: gpu\n  schedulerNme: volcano\n")
    with pytest.raises(ValueError, match=r"resourceGroups\[0\]\.schedulerNme: unknown field"):
        controller.options_from(parse("--admission-conf", str(conf)))


def test_lease_timing_is_read_as_volcano_writes_it_and_a_bad_one_refused_naming_the_flags() -> None:
    assert controller.options_from(parse()).lease_timing == LeaseTiming(10, 8.0, 2.0)
    timing = controller.options_from(
        parse(
            "--leader-elect-lease-duration=4s",
            "--leader-elect-renew-deadline=3s",
            "--leader-elect-retry-period=500ms",
        )
    ).lease_timing
    assert timing == LeaseTiming(4, 3.0, 0.5)
    with pytest.raises(ValueError, match="--leader-elect-lease-duration must be whole seconds"):
        controller.options_from(parse("--leader-elect-lease-duration=4.5s"))
    with pytest.raises(ValueError, match="--leader-elect-renew-deadline < --leader-elect-lease-duration"):
        controller.options_from(parse("--leader-elect-lease-duration=4s"))
