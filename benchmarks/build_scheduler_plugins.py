"""Build kubernetes-sigs/scheduler-plugins' scheduler (kube-scheduler with the out-of-tree plugins, the
Coscheduling plugin among them) from a source tree, for ``bench_scale.py --system coscheduling``; prints the
binary's path (cached: built once per source tree).

Take the release whose Kubernetes minor is the control plane's (v0.34.x for Kubernetes 1.34): ``git clone
--branch v0.34.7 https://github.com/kubernetes-sigs/scheduler-plugins``. It is built as its Makefile's
``build-scheduler`` builds it (``go build ./cmd/scheduler``), but with the version of Kubernetes it embeds
as the binary's version rather than its release tag: Kubernetes 1.34's version check reads the tag (v0.34.7)
as Kubernetes 0.34, and the scheduler then refuses to start ("emulation version 0.34 is not between [1.31,
0.34.0]"). Its dependencies come from the Go module proxy; one the proxy here does not serve at the version
the tree pins is taken at the version in SUBSTITUTES instead, through a copy of go.mod in the cache (``go
build -modfile``), so the tree itself is left as checked out. The cache key is a digest of the tree's go.mod,
go.sum and Go sources and of those substitutions; beside the binary, ``built.json`` records the commit, the
tag, the substitutions and how long the build took. Nothing of the peer's goes into this project: the binary
lives in the control plane's cache (``~/.cache/volcano-py/bin/scheduler-plugins-<digest>``).

Usage: python -m benchmarks.build_scheduler_plugins --scheduler-plugins-src DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.build_volcano import build_binary, go_build, tree_digest
from volcano_py.devcluster.build import BuildError, check_go, format_elapsed
from volcano_py.home import cache_dir

MODULE = "module sigs.k8s.io/scheduler-plugins"
BINARY = "kube-scheduler"  # the name of the release image's binary
TOPS = ("apis", "cmd", "pkg")  # where the tree's Go sources are
# (module, version the tree pins) -> the version built instead. v0.34.7 pins k8s.io/csi-translation-lib
# v0.34.7, which the module proxy here refuses (403, "This module version is not available"); v0.34.4 is the
# version the control plane's own kube-scheduler is built with, and the library's Go sources are the same in
# v0.34.4 and v0.34.8 (only go.mod and go.sum differ), so in v0.34.7 too.
SUBSTITUTES = {("k8s.io/csi-translation-lib", "v0.34.7"): "v0.34.4"}


def progress(message: str) -> None:
    print(f"[build_scheduler_plugins] {message}", file=sys.stderr, flush=True)


def git(src: Path, *args: str) -> str:
    """One line of ``git`` output in ``src``, or "" where it is not a git checkout."""
    done = subprocess.run(["git", "-C", str(src), *args], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def kubernetes_version(go_mod: str) -> str:
    """The k8s.io/kubernetes version ``go_mod`` requires (the kube-scheduler the plugins are built into)."""
    found = re.search(r"^\s*k8s\.io/kubernetes (v\S+)", go_mod, re.MULTILINE)
    if found is None:
        raise SystemExit("its go.mod requires no k8s.io/kubernetes: not a scheduler-plugins tree this builds")
    return found.group(1)


def substitutions(go_mod: str) -> dict[str, str]:
    """``module -> module@version`` for each of SUBSTITUTES that ``go_mod``'s replace directives pin."""
    return {
        module: f"{module}@{instead}"
        for (module, pinned), instead in SUBSTITUTES.items()
        if f"{module} => {module} {pinned}" in go_mod
    }


def build_modfile(go: str, src: Path, folder: Path, replaced: dict[str, str]) -> list[str]:
    """The ``go build`` flags that take the substitutions: a copy of the tree's go.mod and go.sum in
    ``folder``, edited (none when there are none)."""
    if not replaced:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    modfile = folder / "build.mod"
    modfile.write_text((src / "go.mod").read_text())
    (folder / "build.sum").write_text((src / "go.sum").read_text())
    edits = [f"-replace={module}={instead}" for module, instead in replaced.items()]
    go_build(go, ["mod", "edit", f"-modfile={modfile}", *edits], src, "go.mod with substitutions",
             say=progress, log_name="scheduler-plugins")  # fmt: skip
    return ["-mod=mod", f"-modfile={modfile}"]


def ensure_scheduler_plugins(src: Path) -> Path:
    """The scheduler binary built from ``src``; built when the cache has none for this tree."""
    if not (src / "go.mod").is_file() or MODULE not in (src / "go.mod").read_text():
        raise SystemExit(f"{src}: not a scheduler-plugins source tree (its go.mod must declare {MODULE})")
    replaced = substitutions((src / "go.mod").read_text())
    key = hashlib.sha256(f"{tree_digest(src, TOPS)} {sorted(replaced.items())}".encode()).hexdigest()[:12]
    final = cache_dir() / "bin" / f"scheduler-plugins-{key}"
    if (final / BINARY).is_file():
        return final / BINARY
    commit, tag = git(src, "rev-parse", "HEAD"), git(src, "describe", "--tags", "--match", "v*")
    go = check_go()
    final.mkdir(parents=True, exist_ok=True)
    kubernetes = kubernetes_version((src / "go.mod").read_text())
    version = f"-X k8s.io/component-base/version.gitVersion={kubernetes} -w"
    began = time.monotonic()
    try:
        modfile = build_modfile(go, src, cache_dir() / "src" / f"scheduler-plugins-{key}", replaced)
    except BuildError as err:
        raise SystemExit(str(err)) from err
    build_binary(
        go, [*modfile, "-ldflags", version], "./cmd/scheduler", src, final / BINARY, BINARY,
        say=progress, log_name="scheduler-plugins",
    )  # fmt: skip
    seconds = time.monotonic() - began
    built = {"commit": commit or "unknown (not a git checkout)", "tag": tag, "kubernetes": kubernetes,
             "seconds": round(seconds, 1), "substituted": replaced, "src": str(src),
             "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}  # fmt: skip
    (final / "built.json").write_text(json.dumps(built, indent=2) + "\n")
    progress(f"{tag or commit} ({commit}) built in {format_elapsed(seconds)}")
    return final / BINARY


def built_from(binary: Path) -> dict[str, object]:
    """What ``ensure_scheduler_plugins`` recorded beside ``binary`` (empty if nothing was)."""
    record = binary.parent / "built.json"
    return dict(json.loads(record.read_text())) if record.is_file() else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scheduler-plugins-src", type=Path, required=True, help="a scheduler-plugins tree")
    args = parser.parse_args()
    binary = ensure_scheduler_plugins(args.scheduler_plugins_src.resolve())
    progress(f"built from {json.dumps(built_from(binary))}")
    print(binary)


if __name__ == "__main__":
    main()
