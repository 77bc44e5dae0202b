"""``volcano-py crds``: write (or check) the CRD YAMLs generated from ``volcano_py.api`` into ``crds/``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from volcano_py.api.crd import CRDS, render_crd


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "crds", help="write the CustomResourceDefinitions for Volcano's kinds, generated from the models"
    )
    parser.add_argument(
        "--output-dir", type=Path, default=Path("crds"), help="one YAML per CRD goes here (default: crds)"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file differs from the models"
    )
    parser.add_argument(
        "--stdout", action="store_true", help="print all CRDs as one YAML stream (for kubectl apply -f -)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rendered = {info.file_name: render_crd(info) for info in CRDS}
    if args.stdout:
        sys.stdout.write("---\n".join(rendered.values()))
        return 0
    out_dir: Path = args.output_dir
    if args.check:
        stale = [name for name, text in rendered.items() if _read(out_dir / name) != text]
        for name in stale:
            print(f"{out_dir / name}: differs from the models (run `volcano-py crds` and commit the result)")
        return 1 if stale else 0
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        path = out_dir / name
        if _read(path) != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 0


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
