"""Build NVIDIA KAI-Scheduler's scheduler, binder and pod-grouper from a KAI-Scheduler source tree, for
``bench_scale.py --system kai``; prints the folder that holds them (cached: built once per source tree).

KAI-Scheduler is built from a checkout (``git clone https://github.com/NVIDIA/KAI-Scheduler``): ``go build
./cmd/scheduler ./cmd/binder ./cmd/podgrouper`` inside it, its dependencies from the Go module proxy. The
cache key is a digest of the tree's go.mod, go.sum and Go sources (``build_volcano.tree_digest``), so an
edited tree is rebuilt; the commit built, when the tree is a git checkout, is written beside the binaries
(``COMMIT``) for a run to record. Nothing of KAI's goes into this project; the binaries live in the control
plane's cache (``~/.cache/volcano-py/bin/kai-<digest>``).

Usage: python -m benchmarks.build_kai --kai-src DIR [BINARY ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.build_volcano import build_binary, tree_digest
from volcano_py.devcluster.build import check_go, format_elapsed
from volcano_py.home import cache_dir

# Binary name -> package inside the KAI tree; the names are those of KAI's images.
BINARIES = {
    "scheduler": "./cmd/scheduler",
    "binder": "./cmd/binder",
    "podgrouper": "./cmd/podgrouper",
}
MODULE = "module github.com/NVIDIA/KAI-scheduler"
COMMIT_FILE = "COMMIT"


def progress(message: str) -> None:
    print(f"[build_kai] {message}", file=sys.stderr, flush=True)


def source_commit(src: Path) -> str | None:
    """The commit checked out in ``src``; None when it is not a git checkout."""
    done = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def built_commit(folder: Path) -> str | None:
    """The commit the binaries in ``folder`` were built from, as ``ensure_kai`` recorded it."""
    path = folder / COMMIT_FILE
    return path.read_text().strip() or None if path.is_file() else None


def ensure_kai(src: Path, names: tuple[str, ...] = tuple(BINARIES)) -> Path:
    """The folder with the binaries ``names`` (of BINARIES) built from ``src``; builds those missing."""
    if not (src / "go.mod").is_file() or MODULE not in (src / "go.mod").read_text():
        raise SystemExit(f"{src}: not a KAI-Scheduler source tree (its go.mod must declare {MODULE[7:]})")
    final = cache_dir() / "bin" / f"kai-{tree_digest(src, ('cmd', 'pkg'))}"
    missing = [name for name in names if not (final / name).is_file()]
    if not missing:
        return final
    go = check_go()
    final.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    for name in missing:
        build_binary(
            go, ["-trimpath", "-ldflags", "-s -w"], BINARIES[name], src, final / name, f"kai {name}",
            say=progress, log_name="kai",
        )  # fmt: skip
    (final / COMMIT_FILE).write_text(f"{source_commit(src) or 'unknown (not a git checkout)'}\n")
    progress(f"{', '.join(missing)} built in {format_elapsed(time.monotonic() - began)} into {final}")
    return final


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--kai-src", type=Path, required=True, help="a KAI-Scheduler checkout")
    parser.add_argument("binaries", nargs="*", help=f"of {', '.join(BINARIES)} (default: all)")
    args = parser.parse_args()
    if unknown := [name for name in args.binaries if name not in BINARIES]:
        parser.error(f"no binary {', '.join(unknown)}: one of {', '.join(BINARIES)}")
    print(ensure_kai(args.kai_src.resolve(), tuple(args.binaries) or tuple(BINARIES)))


if __name__ == "__main__":
    main()
