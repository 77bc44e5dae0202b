"""``volcano-py``: one entry point, one module per command group.

Each module named in ``COMMANDS`` exposes ``register(subparsers)``, which adds its sub-command(s) and sets
``func`` on the parser to a callable taking the parsed namespace and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules under volcano_py.cli, in the order their commands appear in --help.
COMMANDS: tuple[str, ...] = (
    "dev", "crds", "validate", "scheduler", "controller", "dashboard", "sim", "up", "deploy",
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
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
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"volcano_py.cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
