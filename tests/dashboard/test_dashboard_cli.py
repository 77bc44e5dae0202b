"""``volcano-py dashboard``: bad flags are refused naming the flag, before anything connects."""

from __future__ import annotations

import pytest

from volcano_py.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "70000"], "--port 70000: must be 0-65535"),
        (["--whatif-seconds", "0"], "--whatif-seconds 0.0: must be > 0"),
        (["--scheduler-conf", "/nonexistent/volcano-scheduler.conf"], "cannot read scheduler conf"),
    ],
)
def test_bad_flags_are_refused_by_name(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A kubeconfig that does not exist would fail later, at connect; the flags are checked first.
    assert main(["dashboard", "--kubeconfig", "/nonexistent/kubeconfig", *argv]) == 2
    assert message in capsys.readouterr().err
