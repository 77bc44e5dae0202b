"""Build Apache YuniKorn's standalone scheduler from a yunikorn-k8shim source tree, for ``bench_scale.py
--system yunikorn``; prints the folder that holds it (cached: built once per source tree).

The k8shim's scheduler command (``pkg/cmd/shim``) is YuniKorn's whole scheduler in one process: the shim's
informers and binds around yunikorn-core, which, with the scheduler interface, comes in as a Go module
through the proxy at the version the shim's go.mod pins. A checkout (``git clone
https://github.com/apache/yunikorn-k8shim``) is built with ``go build ./pkg/cmd/shim``; the cache key is a
digest of its go.mod, go.sum and Go sources (``build_volcano.tree_digest``), so an edited tree is rebuilt.
A release's shim pins the core and the interface at release-candidate tags the proxy here does not serve; they
are built from the release tags once their files are proved the same as go.sum pins (``benchlib/gosum.py``),
through a go.mod of the build's own beside the binary (``-modfile``), the checkout left untouched.
Beside the binary, ``built.json`` records what was built: the shim's commit (when the tree is a git checkout),
the core's and the scheduler interface's module versions, the Go version and how long the build took.
Nothing of YuniKorn's goes into this project; the binary lives in the control plane's cache
(``~/.cache/volcano-py/bin/yunikorn-<digest>``).

Usage: python -m benchmarks.build_yunikorn --yunikorn-src SRC
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.benchlib.gosum import pinned_sum, release_of, zip_sum_as
from benchmarks.build_volcano import build_binary, tree_digest
from volcano_py.devcluster.build import check_go, format_elapsed, go_environment
from volcano_py.home import cache_dir

BINARY = "yunikorn-scheduler"  # the name of YuniKorn's image's binary
PACKAGE = "./pkg/cmd/shim"
SHIM_MODULE = "github.com/apache/yunikorn-k8shim"
CORE_MODULE = "github.com/apache/yunikorn-core"
SI_MODULE = "github.com/apache/yunikorn-scheduler-interface"
RECORD = "built.json"


def progress(message: str) -> None:
    print(f"[build_yunikorn] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Built:
    """The folder holding the scheduler, and what it was built from (``built.json``)."""

    folder: Path
    record: dict[str, str | float | None]

    @property
    def scheduler(self) -> Path:
        return self.folder / BINARY


def module_version(go_mod: str, module: str) -> str | None:
    """The version ``go_mod`` requires of ``module`` (a replace directive's target is not followed: the
    shim replaces none of YuniKorn's own modules)."""
    for line in go_mod.splitlines():
        words = line.split()
        if words[:1] == ["require"]:
            words = words[1:]
        if len(words) >= 2 and words[0] == module:
            return words[1]
    return None


def source_commit(src: Path) -> str | None:
    """The commit checked out in ``src``, when it is a git checkout (a worktree of a bare mirror too)."""
    done = subprocess.run(
        ["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def go_version(go: str) -> str:
    done = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, env=go_environment())
    return done.stdout.strip()


def download(go: str, src: Path, module: str, version: str) -> dict[str, str] | None:
    """``go mod download``'s record of ``module@version`` (its zip's path among it); None if not served."""
    done = subprocess.run(
        [go, "mod", "download", "-json", f"{module}@{version}"],
        cwd=src, capture_output=True, text=True, env=go_environment(), check=False,
    )  # fmt: skip
    try:
        info: dict[str, str] = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None
    return info if done.returncode == 0 and "Error" not in info else None


def substitutes(go: str, src: Path, go_mod: str, go_sum: str) -> dict[str, tuple[str, str]]:
    """Per YuniKorn module whose pinned version the proxy does not serve: (pinned, release), the release's
    files proved the same as go.sum pins; SystemExit when they are not, or when there is no release."""
    found: dict[str, tuple[str, str]] = {}
    for module in (CORE_MODULE, SI_MODULE):
        pinned = module_version(go_mod, module)
        if pinned is None or download(go, src, module, pinned) is not None:
            continue
        release = release_of(pinned)
        fetched = download(go, src, module, release) if release else None
        if release is None or fetched is None:
            raise SystemExit(f"the module proxy serves neither {module}@{pinned} nor a release of it")
        if zip_sum_as(Path(fetched["Zip"]), module, release, pinned) != pinned_sum(go_sum, module, pinned):
            raise SystemExit(f"{module}@{release} does not hold the files go.sum pins for {pinned}")
        progress(f"{module}@{pinned} is not served; building {release}, the same files")
        found[module] = (pinned, release)
    return found


def ensure_yunikorn(src: Path) -> Built:
    """The folder with YuniKorn's scheduler built from ``src``; builds it if missing."""
    go_mod_path = src / "go.mod"
    if not go_mod_path.is_file() or f"module {SHIM_MODULE}" not in go_mod_path.read_text():
        raise SystemExit(f"{src}: not a yunikorn-k8shim source tree (its go.mod must declare {SHIM_MODULE})")
    final = cache_dir() / "bin" / f"yunikorn-{tree_digest(src, ('pkg',))}"
    if (final / BINARY).is_file() and (final / RECORD).is_file():
        return Built(final, json.loads((final / RECORD).read_text()))
    go = check_go()
    go_mod = go_mod_path.read_text()
    commit = source_commit(src)
    core = module_version(go_mod, CORE_MODULE)
    # What the shim logs at start and serves on its web app, as its Makefile sets it.
    stamp = " ".join(
        f"-X {SHIM_MODULE}/pkg/conf.{var}={value}"
        for var, value in (("shimSHA", commit), ("coreSHA", core), ("buildVersion", "bench")) if value
    )  # fmt: skip
    final.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    go_sum = (src / "go.sum").read_text()
    swapped = substitutes(go, src, go_mod, go_sum)
    modfile: list[str] = []
    if swapped:  # go.mod's own pins kept, each replaced by its release; go adds the releases' sums
        replaces = "".join(
            f"replace {m} {pinned} => {m} {release}\n" for m, (pinned, release) in swapped.items()
        )
        (final / "build.mod").write_text(f"{go_mod}\n{replaces}")
        (final / "build.sum").write_text(go_sum)
        modfile = ["-modfile", str(final / "build.mod"), "-mod=mod"]
    build_binary(
        go, [*modfile, "-trimpath", "-ldflags", f"-s -w {stamp}"], PACKAGE, src, final / BINARY, BINARY,
        say=progress, log_name="yunikorn",
    )  # fmt: skip
    record: dict[str, str | float | None] = {
        "shim_commit": commit,
        "core": core,
        "scheduler_interface": module_version(go_mod, SI_MODULE),
        "built_from": ", ".join(f"{m}@{release}" for m, (_, release) in swapped.items()) or None,
        "go": go_version(go),
        "build_s": round(time.monotonic() - began, 1),
    }
    (final / RECORD).write_text(json.dumps(record, indent=2))
    return Built(final, record)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--yunikorn-src", type=Path, required=True, help="a yunikorn-k8shim checkout")
    args = parser.parse_args()
    began = time.monotonic()
    built = ensure_yunikorn(args.yunikorn_src.resolve())
    progress(f"ready in {format_elapsed(time.monotonic() - began)}: {json.dumps(built.record)}")
    print(built.folder)


if __name__ == "__main__":
    main()
