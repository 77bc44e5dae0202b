"""Build Volcano's own scheduler and controller-manager (or other binaries of BINARIES, such as its
webhook-manager) from a Volcano source tree, for ``bench_e2e.py --system volcano``; prints the folder that
holds them (cached: built once per source tree).

Volcano is not served by the Go module proxy here, so it is built from a checkout (``git clone
https://github.com/volcano-sh/volcano``, or any copy of its tree): ``go build ./cmd/scheduler
./cmd/controller-manager`` inside it, with its go.mod's replace directives and its dependencies from the
proxy. The cache key is a digest of the tree's go.mod, go.sum and Go sources, so an edited tree is rebuilt.
Here it took 1m52s on two cores, with Go's caches warm from the control plane's build. Nothing of Volcano's
goes into this project; the binaries live in the control plane's cache
(``~/.cache/volcano-py/bin/volcano-<digest>``).

Usage: python -m benchmarks.build_volcano SRC [BINARY ...]
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from volcano_py.devcluster.build import BuildError, check_go, format_elapsed, go_environment, wait_reporting
from volcano_py.home import cache_dir

# Binary name -> package inside the Volcano tree; the names are those of Volcano's images. ensure_volcano
# builds DEFAULT_BINARIES unless asked for others (volcano_admission_differential.py: the webhook-manager).
BINARIES = {
    "vc-scheduler": "./cmd/scheduler",
    "vc-controller-manager": "./cmd/controller-manager",
    "vc-webhook-manager": "./cmd/webhook-manager",
    "vc-agent-scheduler": "./cmd/agent-scheduler",
}
DEFAULT_BINARIES = ("vc-scheduler", "vc-controller-manager")


def progress(message: str) -> None:
    print(f"[build_volcano] {message}", file=sys.stderr, flush=True)


def tree_digest(src: Path, tops: tuple[str, ...] = ("cmd", "pkg", "staging", "third_party")) -> str:
    digest = hashlib.sha256()
    files = [src / "go.mod", src / "go.sum"]
    for top in tops:
        files += sorted(p for p in (src / top).rglob("*") if p.is_file() and p.suffix in {".go", ".mod"})
    for path in files:
        digest.update(str(path.relative_to(src)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def go_build(
    go: str,
    args: list[str],
    src: Path,
    name: str,
    *,
    say: Callable[[str], None] = progress,
    log_name: str = "volcano",
) -> None:
    """Run one ``go`` command in ``src``, a progress line every half minute; BuildError with its log tail
    (the log is ``<cache>/logs/<log_name>.log``)."""
    log_path = cache_dir() / "logs" / f"{log_name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    say(f"building {name} from {src} (log: {log_path})")
    with log_path.open("a") as log_file:
        build = subprocess.Popen(
            [go, *args], cwd=src, env=dict(go_environment(), CGO_ENABLED="0"),
            stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            preexec_fn=lambda: os.nice(10),  # two shared cores: the build yields to interactive work
        )  # fmt: skip
        wait_reporting(build, lambda: say(f"{name} ... {format_elapsed(time.monotonic() - began)}"))
    if build.returncode != 0:
        tail = "\n".join(log_path.read_text().splitlines()[-20:])
        raise BuildError(f"building {name} failed (log: {log_path}):\n{tail}")
    say(f"{name}: built in {format_elapsed(time.monotonic() - began)}")


def build_binary(
    go: str,
    flags: list[str],
    package: str,
    src: Path,
    target: Path,
    name: str,
    *,
    say: Callable[[str], None] = progress,
    log_name: str = "volcano",
) -> None:
    """``go build flags -o target package`` in ``src``, through a scratch file beside ``target`` renamed into
    place once whole (a killed build leaves no binary a later run would trust); SystemExit with the log's tail
    when it fails."""
    scratch = target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:
        go_build(go, ["build", *flags, "-o", str(scratch), package], src, name, say=say, log_name=log_name)
    except BuildError as err:
        scratch.unlink(missing_ok=True)
        raise SystemExit(str(err)) from err
    scratch.rename(target)


def ensure_volcano(src: Path, names: tuple[str, ...] = DEFAULT_BINARIES) -> Path:
    """The folder with the binaries ``names`` (of BINARIES) built from ``src``; builds those missing."""
    if not (src / "go.mod").is_file() or "module volcano.sh/volcano" not in (src / "go.mod").read_text():
        raise SystemExit(f"{src}: not a Volcano source tree (its go.mod must declare volcano.sh/volcano)")
    final = cache_dir() / "bin" / f"volcano-{tree_digest(src)}"
    missing = [name for name in names if not (final / name).is_file()]
    if not missing:
        return final
    go = check_go()
    final.mkdir(parents=True, exist_ok=True)
    for name in missing:
        build_binary(go, ["-trimpath", "-ldflags", "-s -w"], BINARIES[name], src, final / name, name)
    return final


def main() -> None:
    if len(sys.argv) < 2 or any(name not in BINARIES for name in sys.argv[2:]):
        raise SystemExit(__doc__.strip().splitlines()[-1] + f"  (BINARY: one of {', '.join(BINARIES)})")
    print(ensure_volcano(Path(sys.argv[1]).resolve(), tuple(sys.argv[2:]) or DEFAULT_BINARIES))


if __name__ == "__main__":
    main()
