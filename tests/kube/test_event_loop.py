"""The event loop a process runs on: uvloop by default, asyncio's own on request, a bad choice named."""

import asyncio
import sys

import pytest

from volcano_py.cli.controller import options_from as controller_options
from volcano_py.cli.main import build_parser
from volcano_py.kube import eventloop


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_the_default_runs_on_uvloop() -> None:
    assert eventloop.run(_loop_module()).startswith("uvloop")


def test_asyncio_runs_on_the_standard_loop() -> None:
    assert eventloop.run(_loop_module(), "asyncio").startswith("asyncio")


def test_an_unknown_loop_names_the_flag_and_the_choices() -> None:
    coro = _loop_module()
    with pytest.raises(ValueError, match=r"--event-loop must be one of uvloop, asyncio, got 'tokio'"):
        eventloop.run(coro, "tokio")
    assert coro.cr_frame is None  # closed, not left to warn "never awaited"


def test_without_uvloop_the_error_says_how_to_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # an import of it now fails, as where it is missing
    with pytest.raises(ValueError, match=r"pip install uvloop.*--event-loop asyncio"):
        eventloop.loop_factory("uvloop")


@pytest.mark.parametrize("command", ["scheduler", "controller"])
def test_the_flag_defaults_to_uvloop_and_refuses_others(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = build_parser()
    assert parser.parse_args([command]).event_loop == "uvloop"
    assert parser.parse_args([command, "--event-loop", "asyncio"]).event_loop == "asyncio"
    with pytest.raises(SystemExit):
        parser.parse_args([command, "--event-loop", "tokio"])
    assert "invalid choice: 'tokio'" in capsys.readouterr().err


def test_the_controller_runs_its_operator_on_the_chosen_loop() -> None:
    parser = build_parser()
    assert controller_options(parser.parse_args(["controller"])).event_loop == "uvloop"
    assert (
        controller_options(parser.parse_args(["controller", "--event-loop", "asyncio"])).event_loop
        == "asyncio"
    )
