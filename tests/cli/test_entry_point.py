"""``volcano-py COMMAND``: only the named command's module is imported, and what it parses is unchanged."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from volcano_py.cli.main import COMMANDS, build_parser, named_command


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["scheduler", "--kubeconfig", "k"], "scheduler"),
        (["--log-level", "debug", "controller"], "controller"),
        (["--log-format", "json", "--log-level", "info", "dev", "up"], "dev"),
        (["--log-level=debug", "scheduler"], "scheduler"),
        # The value of a global option is never taken for the command.
        (["--log-level", "scheduler", "controller"], "controller"),
        # Help, a typo, no command, an abbreviated option: the whole parser answers, as before.
        (["--help"], None),
        (["-h", "scheduler"], None),
        (["schedular"], None),
        ([], None),
        (["--log-l", "debug", "scheduler"], None),
    ],
)
def test_named_command(argv: list[str], command: str | None) -> None:
    assert named_command(argv) == command


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_registers_itself_under_its_module_name(command: str) -> None:
    parser = build_parser(command)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert command in subparsers.choices


@pytest.mark.parametrize(
    "argv",
    [
        ["--log-level", "debug", "scheduler", "--kubeconfig", "k", "--scheduler-name", "a"],
        ["controller", "--kubeconfig", "k"],
        ["validate", "job.yaml"],
    ],
)
def test_one_command_parses_as_the_whole_parser_does(argv: list[str]) -> None:
    whole = vars(build_parser().parse_args(argv))
    alone = vars(build_parser(named_command(argv)).parse_args(argv))
    assert alone.keys() == whole.keys()
    assert {k: v for k, v in alone.items() if k != "func"} == {k: v for k, v in whole.items() if k != "func"}
    assert alone["func"].__qualname__ == whole["func"].__qualname__


def test_scheduler_start_imports_neither_kopf_nor_the_dev_cluster() -> None:
    probe = (
        "import sys\n"
        "from volcano_py.cli.main import main\n"
        "try:\n"
        "    main(['scheduler', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "unwanted = ('kopf', 'volcano_py.devcluster', 'volcano_py.dashboard')\n"
        "print(sorted(m for m in unwanted if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "--scheduler-conf" in done.stdout  # the scheduler's own help was printed
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_unknown_command_still_lists_every_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "volcano_py.cli.main", "schedular"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "invalid choice: 'schedular'" in done.stderr
    assert all(name in done.stderr for name in COMMANDS)
