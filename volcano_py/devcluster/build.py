"""Build the pinned control-plane binaries from Go modules into the version-keyed cache, skipping good ones.

``ensure_binaries()`` is the one entry point: it returns the binary paths, building only what is missing or
reports the wrong version. Builds are serialised by a lock file, so a test session and
``volcano-py dev build`` may start together. Each binary is built into a scratch directory and moved into
place only after its ``--version`` checks out, so an interrupted build leaves no binary that looks cached.

Measured on two shared cores: a cold build (empty Go caches) takes about 10 minutes, most of it compiling
Kubernetes; with Go's own caches (GOMODCACHE, GOCACHE) warm, rebuilding all five after wiping our cache takes
about a minute. Generated go.mod files live under ``<cache>/src``.

``ensure_tools()`` does the same for the tools around the cluster (helm, for the chart's tests): a cold helm
build took 8m50s on two cores busy with a Kubernetes build (load 10), and 8s once Go's caches were warm;
promtool (the Prometheus module, with every service-discovery SDK) 13m10s cold on the same busy cores, and
prometheus (the same module) 1m21s after it, with Go's caches warm from promtool.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from volcano_py.devcluster import gomod
from volcano_py.devcluster.cache import binary_paths, is_cached, missing, version_output
from volcano_py.devcluster.versions import (
    COMPONENTS,
    ETCD,
    GO_DOWNLOAD_URL,
    HELM,
    KUBERNETES_COMPONENTS,
    KUBERNETES_VERSION,
    KWOK,
    KWOK_STAGE_FILES,
    MIN_GO,
    PROMETHEUS,
    PROMTOOL,
    TOOLS,
    Component,
    parse_go_version,
    reports_version,
)
from volcano_py.home import cache_dir
from volcano_py.log import get_logger

log = get_logger(__name__)

PROGRESS_EVERY_SECONDS = 30.0

# The Go variable each tool prints as its version.
_VERSION_VARIABLE = {
    HELM.name: "helm.sh/helm/v3/internal/version.version",
    PROMTOOL.name: "github.com/prometheus/common/version.Version",
    PROMETHEUS.name: "github.com/prometheus/common/version.Version",
}


class ToolchainMissing(RuntimeError):
    """No usable Go toolchain: the binaries cannot be built here."""


class BuildError(RuntimeError):
    """A go command failed; the message names the step and ends with the tail of its log."""


def format_elapsed(seconds: float) -> str:
    whole = int(seconds)
    minutes, secs = divmod(whole, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def wait_reporting(
    proc: subprocess.Popen[bytes], report: Callable[[], None], every: float = PROGRESS_EVERY_SECONDS
) -> None:
    """Until ``proc`` exits, calling ``report()`` every ``every`` seconds meanwhile (a progress line)."""
    while True:
        try:
            proc.wait(timeout=every)
            return
        except subprocess.TimeoutExpired:
            report()


def go_environment() -> dict[str, str]:
    env = dict(os.environ)
    # A local toolchain only (no surprise downloads of another Go), and static binaries.
    env.update(GOTOOLCHAIN="local", CGO_ENABLED="0")
    return env


def check_go() -> str:
    """Path of a Go >= 1.26 on PATH, or ToolchainMissing saying what to install."""
    go = shutil.which("go")
    install = f"install Go >= {MIN_GO[0]}.{MIN_GO[1]} from {GO_DOWNLOAD_URL} and put its bin/ on PATH"
    if go is None:
        raise ToolchainMissing(f"`go` is not on PATH, so the control plane cannot be built: {install}")
    done = subprocess.run(
        [go, "env", "GOVERSION"], capture_output=True, text=True, env=go_environment(), check=False
    )
    try:
        found = parse_go_version(done.stdout)
    except ValueError as err:
        raise ToolchainMissing(f"{go} does not report its version ({err}): {install}") from err
    if found < MIN_GO:
        raise ToolchainMissing(
            f"{go} is Go {found[0]}.{found[1]}, too old for kwok {KWOK.version}: {install}"
        )
    return go


class _Builder:
    def __init__(self, go: str, cache: Path, out: TextIO) -> None:
        self.go = go
        self.cache = cache
        self.out = out
        self.env = go_environment()
        self.logs = cache / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def run(
        self, step: str, args: Sequence[str], cwd: Path, *, label: str, env: dict[str, str] | None = None
    ) -> str:
        """Run one go command, printing a progress line every half minute; returns its stdout+stderr."""
        log_path = self.logs / f"{label}.log"
        started = time.monotonic()
        with log_path.open("w") as log_file:
            log_file.write(f"$ (cd {cwd} && go {' '.join(args)})\n")
            log_file.flush()
            proc = subprocess.Popen(
                [self.go, *args],
                cwd=cwd,
                env=env or self.env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                wait_reporting(
                    proc, lambda: self.say(f"{step} {label} ... {format_elapsed(time.monotonic() - started)}")
                )
            except BaseException:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
        text = log_path.read_text()
        if proc.returncode != 0:
            tail = "\n".join(text.splitlines()[-25:])
            raise BuildError(
                f"{step} `go {' '.join(args[:2])}` for {label} failed (log: {log_path}):\n{tail}"
            )
        return text

    def install(self, component: Component, scratch: Path) -> Path:
        """Move a freshly built component directory into the cache after checking its version."""
        built = scratch / component.name
        output = version_output(built, component.version_args)
        if not reports_version(component, output):
            raise BuildError(
                f"built {component.name} does not report {component.version_marker!r}; "
                f"it printed: {output[:300]!r}"
            )
        final = component.directory(self.cache)
        if final.exists():
            shutil.rmtree(final)
        scratch.rename(final)
        return component.binary(self.cache)

    def scratch(self, component: Component) -> Path:
        path = component.directory(self.cache).with_name(
            f".{component.name}-{component.version}.tmp{os.getpid()}"
        )
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        return path

    def build_etcd(self, step: str) -> None:
        src = self.cache / "src" / f"etcd-{ETCD.version}"
        if src.exists():
            shutil.rmtree(src)
        src.mkdir(parents=True)
        self.run(step, ["mod", "init", "local/etcdbuild"], src, label="etcd-mod-init")
        self.run(step, ["get", "-tool", f"{ETCD.package}@{ETCD.version}"], src, label="etcd-get")
        scratch = self.scratch(ETCD)
        # `-o` with a file name: the package path ends in /v3, which would otherwise name the binary "v3".
        self.run(
            step,
            ["build", "-trimpath", "-ldflags", "-s -w", "-o", str(scratch / ETCD.name), ETCD.package],
            src,
            label="etcd",
        )
        self.install(ETCD, scratch)

    def kubernetes_module(self, step: str) -> Path:
        """The wrapper module dir with a tidy go.mod/go.sum (tidied again only when go.mod changes)."""
        src = self.cache / "src" / f"kubernetes-{KUBERNETES_VERSION}"
        src.mkdir(parents=True, exist_ok=True)
        listing = self.run(
            step,
            ["mod", "download", "-json", f"k8s.io/kubernetes@{KUBERNETES_VERSION}"],
            self.cache / "src",
            label="kubernetes-download",
        )
        upstream = Path(json.loads(listing[listing.index("{") :])["GoMod"]).read_text()
        tools = [component.package for component in KUBERNETES_COMPONENTS]
        text = gomod.kubernetes_wrapper_gomod(upstream, KUBERNETES_VERSION, tools)
        stamp = src / ".tidy-done"
        if (src / "go.mod").exists() and (src / "go.mod").read_text() == text and stamp.exists():
            return src
        (src / "go.mod").write_text(text)
        stamp.unlink(missing_ok=True)
        self.run(step, ["mod", "tidy"], src, label="kubernetes-mod-tidy")
        stamp.write_text(text)
        return src

    def build_kubernetes(self, step: str, component: Component, src: Path) -> None:
        scratch = self.scratch(component)
        ldflags = gomod.kubernetes_ldflags(KUBERNETES_VERSION)
        self.run(
            step,
            [
                "build",
                "-trimpath",
                "-ldflags",
                ldflags,
                "-o",
                str(scratch / component.name),
                component.package,
            ],
            src,
            label=component.name,
        )
        self.install(component, scratch)

    def build_kwok(self, step: str) -> None:
        scratch = self.scratch(KWOK)
        env = dict(self.env, GOBIN=str(scratch))
        src = self.cache / "src"
        self.run(
            step,
            ["install", "-trimpath", "-ldflags", "-s -w", f"{KWOK.package}@{KWOK.version}"],
            src,
            label="kwok",
            env=env,
        )
        listing = self.run(
            step, ["mod", "download", "-json", f"sigs.k8s.io/kwok@{KWOK.version}"], src, label="kwok-src"
        )
        module_dir = Path(json.loads(listing[listing.index("{") :])["Dir"])
        stages = scratch / "stages"
        stages.mkdir()
        for relative in KWOK_STAGE_FILES:
            shutil.copyfile(module_dir / relative, stages / Path(relative).name)
        self.install(KWOK, scratch)

    def build_tool(self, step: str, tool: Component) -> None:
        scratch = self.scratch(tool)
        # Their release builds stamp the version; a plain `go install` leaves it short ("v3.22") or empty.
        ldflags = f"-s -w -X {_VERSION_VARIABLE[tool.name]}={tool.version}"
        self.run(
            step,
            ["install", "-trimpath", "-ldflags", ldflags, f"{tool.package}@{tool.version}"],
            self.cache / "src",
            label=tool.name,
            env=dict(self.env, GOBIN=str(scratch)),
        )
        self.install(tool, scratch)


@contextmanager
def _build_lock(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_binaries(cache: Path | None = None, *, out: TextIO | None = None) -> dict[str, Path]:
    """Build whatever is missing into ``cache`` and return ``{binary name: path}`` for all components.

    Raises ToolchainMissing when something must be built and there is no Go >= 1.26, BuildError when a build
    fails. Progress lines go to ``out`` (stderr by default).
    """
    return _ensure(COMPONENTS, "control plane binaries", cache, out)


def ensure_tools(cache: Path | None = None, *, out: TextIO | None = None) -> dict[str, Path]:
    """``ensure_binaries`` for the tools (helm, promtool): built by ``dev build``, not by ``dev up``."""
    return _ensure(TOOLS, "tools", cache, out)


def ensure_plan(
    components: Sequence[Component], cache: Path | None = None, *, out: TextIO | None = None
) -> dict[str, Path]:
    """``ensure_binaries`` for the components of a plan (``versions.build_plan``), as ``dev build`` asks."""
    return _ensure(components, "binaries", cache, out)


def _ensure(
    components: Sequence[Component], what: str, cache: Path | None, out: TextIO | None
) -> dict[str, Path]:
    root = cache or cache_dir()
    stream = out or sys.stderr
    if not missing(root, components):
        return binary_paths(root, components)
    go = check_go()
    with _build_lock(root):
        (root / "src").mkdir(parents=True, exist_ok=True)
        builder = _Builder(go, root, stream)
        total = len(components)
        started = time.monotonic()
        kubernetes_src: Path | None = None
        for number, component in enumerate(components, start=1):
            step = f"[{number}/{total}]"
            # Checked again under the lock: a concurrent build may have finished it meanwhile.
            if is_cached(component, root):
                builder.say(f"{step} {component.name} {component.version}: cached")
                continue
            builder.say(f"{step} building {component.name} {component.version} ...")
            began = time.monotonic()
            if component is ETCD:
                builder.build_etcd(step)
            elif component is KWOK:
                builder.build_kwok(step)
            elif component in TOOLS:
                builder.build_tool(step, component)
            else:
                kubernetes_src = kubernetes_src or builder.kubernetes_module(step)
                builder.build_kubernetes(step, component, kubernetes_src)
            builder.say(
                f"{step} {component.name} {component.version}: "
                f"built in {format_elapsed(time.monotonic() - began)}"
            )
            log.info("devcluster.built", component=component.name, version=component.version)
        builder.say(f"{what} ready in {root / 'bin'} ({format_elapsed(time.monotonic() - started)})")
    return binary_paths(root, components)
