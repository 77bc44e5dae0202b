"""``volcano-py``: one entry point, one module per command group.

Each module named in ``COMMANDS`` exposes ``register(subparsers)``, which adds its sub-command(s) and sets
``func`` on the parser to a callable taking the parsed namespace and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules under volcano_py.cli, in the order their commands appear in --help; each module's top-level command
# is named as the module is (a dash for each underscore).
COMMANDS: tuple[str, ...] = (
    "dev", "crds", "validate", "scheduler", "agent-scheduler", "controller", "dashboard", "sim", "up",
    "deploy",
)  # fmt: skip


def _global_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="volcano-py",
        description="A Kubernetes batch scheduler that speaks Volcano's APIs.",
    )
    parser.add_argument("--log-level", default=None, help="debug, info, warning or error (default: info)")
    parser.add_argument(
        "--log-format",
        default=None,
        choices=("auto", "json", "console"),
        help="auto (default): readable lines at a terminal, JSON lines otherwise and in a pod",
    )
    return parser


def named_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names, when it plainly names one: its first word that is not a global option
    (or an option's value). None for anything else (no command, help, an abbreviated option, a typo): the
    whole parser then says what is wrong, as it always has."""
    valued = {
        option
        for action in _global_parser()._actions
        if action.nargs is None
        for option in action.option_strings
    }
    words = iter(argv)
    for word in words:
        if word in COMMANDS:
            return word
        if word in valued:
            next(words, None)
        elif not word.startswith("-") or word in ("-h", "--help"):
            return None
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone: each command's module imports what it runs
    (Kopf for the controller, the control plane's tools for ``dev``), and a scheduler restarted on a busy
    node should not wait for the others' (a fifth of its start-up to a parsed command line, idle)."""
    parser = _global_parser()
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if command is None else (command,):
        module = importlib.import_module(f"volcano_py.cli.{name.replace('-', '_')}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(named_command(words))
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from volcano_py import log

    try:
        log.configure(args.log_level, fmt=args.log_format)
    except ValueError as err:
        parser.error(f"--log-level/--log-format: {err}")
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
