"""How soon a new Queue is Open, and whether a Job submitted right after it is admitted; JSON on stdout.

Starts ``volcano-py up`` (from ``--tree``, default this checkout) on a fresh local control plane, then, one
queue at a time, does what ``kubectl apply -f`` of a file holding a Queue and a Job in it does: create the
Queue, create the Job at once. Reported: the time from the Queue's create to the watch event that shows
``status.state: Open`` (p50, p90, max) and how many of the Jobs admission accepted. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.benchlib.objects import container, make_job
from volcano_py.api import constants as c
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import QUEUES, ResourceKind
from volcano_py.kube.waiting import within

JOBS = ResourceKind(c.BATCH_GROUP, c.BATCH_VERSION, c.JOB_PLURAL, c.JOB_KIND, namespaced=True)

REPO = Path(__file__).resolve().parents[1]
PREFIX = "bench-open-"


def _job(name: str, queue: str) -> dict[str, Any]:
    return make_job(name).ns("default").queue(queue).task("w", 1, container("main", cpu="100m")).obj()


def _start_up(tree: Path, run_dir: Path, log: Any) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(tree)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "volcano_py", "--log-level", "warning", "up", "--nodes", "2",
         "--run-dir", str(run_dir), "--dashboard-port", "0"],
        cwd=tree, stdout=subprocess.PIPE, stderr=log, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            raise SystemExit(f"volcano-py up exited with {proc.returncode}; see {log.name}")
        if line.startswith("export KUBECONFIG="):
            return proc, line.split("=", 1)[1].strip()
    proc.kill()
    raise SystemExit("volcano-py up printed no KUBECONFIG line within 300 s")


class OpenWatch:
    """Watches Queues; remembers when each was first seen Open (monotonic seconds)."""

    def __init__(self, api: KubeClient) -> None:
        self.api = api
        self.opened: dict[str, float] = {}
        self.changed = asyncio.Event()

    async def run(self, resource_version: str) -> None:
        query = {"watch": "1", "resourceVersion": resource_version, "allowWatchBookmarks": "false"}
        async for event in self.api.stream(QUEUES.collection_path(), query, read_timeout=600):
            obj = event.get("object") or {}
            name = (obj.get("metadata") or {}).get("name", "")
            if (obj.get("status") or {}).get("state") == "Open" and name not in self.opened:
                self.opened[name] = time.monotonic()
                self.changed.set()

    async def wait_open(self, name: str, seconds: float) -> float | None:
        deadline = time.monotonic() + seconds
        while name not in self.opened and time.monotonic() < deadline:
            self.changed.clear()
            try:
                await within(self.changed.wait(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                break
        return self.opened.get(name)


async def _measure(kubeconfig: str, count: int, spacing: float) -> dict[str, Any]:
    api = KubeClient(await load_api_client(kubeconfig))
    try:
        listed = await api.get(QUEUES.collection_path())
        watch = OpenWatch(api)
        watcher = asyncio.create_task(watch.run(listed["metadata"]["resourceVersion"]))
        # The controller serves admission once it leads: wait until a warm-up Job is answered by it.
        deadline = time.monotonic() + 120
        while True:
            try:
                await api.create(JOBS.collection_path("default"), _job("warmup", "nope"))
            except ApiError as exc:
                if "does not exist" in exc.message:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("admission never answered within 120 s")
            await asyncio.sleep(0.5)
        latencies: list[float] = []
        refused: list[str] = []
        never_open: list[str] = []
        for i in range(count):
            name = f"{PREFIX}{i}"
            body = {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": name},
                    "spec": {"weight": 1}}  # fmt: skip
            began = time.monotonic()
            await api.create(QUEUES.collection_path(), body)
            try:
                await api.create(JOBS.collection_path("default"), _job(name, name))
            except ApiError as exc:
                refused.append(exc.message)
            opened = await watch.wait_open(name, 30)
            if opened is None:
                never_open.append(name)
            else:
                latencies.append(opened - began)
            if (i + 1) % 10 == 0:
                print(f"  {i + 1}/{count} queues", file=sys.stderr, flush=True)
            await asyncio.sleep(spacing)
        watcher.cancel()
    finally:
        await api.close()
    ms = sorted(round(x * 1000, 1) for x in latencies)
    return {
        "queues": count,
        "open_ms": {
            "p50": statistics.median(ms) if ms else None,
            "p90": ms[int(0.9 * (len(ms) - 1))] if ms else None,
            "max": ms[-1] if ms else None,
        },
        "jobs_admitted": count - len(refused),
        "jobs_refused": len(refused),
        "first_refusal": refused[0] if refused else None,
        "never_open": len(never_open),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", type=Path, default=REPO, help="checkout whose `volcano-py up` runs")
    parser.add_argument("--count", type=int, default=50, help="queues to create (default 50)")
    parser.add_argument("--spacing", type=float, default=0.2, help="seconds between queues (default 0.2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-queue-open-") as tmp:
        log_path = Path(tmp) / "up.log"
        with log_path.open("w") as log:
            print(f"starting volcano-py up from {args.tree} ...", file=sys.stderr, flush=True)
            proc, kubeconfig = _start_up(args.tree.resolve(), Path(tmp) / "run", log)
            try:
                result = asyncio.run(_measure(kubeconfig, args.count, args.spacing))
            finally:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=90)
                except subprocess.TimeoutExpired:
                    proc.kill()
    git = ["git", "-C", str(args.tree)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    changes = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    dirty = bool(changes.stdout.strip())
    print(json.dumps({"tree": f"{commit.strip()}{'+changes' if dirty else ''}", **result}, indent=2))


if __name__ == "__main__":
    main()
