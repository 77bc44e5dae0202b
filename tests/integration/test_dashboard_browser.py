"""The dashboard in a real browser (headless Chromium) against the real control plane, as a person sees it.

The operator and the scheduler run in-process for the test's namespace (the ``env`` fixture), the dashboard
too; Chromium renders each page (scripts run) and the test reads the DOM it produced: the waiting job's
reason and what would make it run, the queue's bar numbers, the GPU grid's free count (checked against the
API), and the simulator's report with its plots. Screenshots go to ``.artifacts/dashboard/`` (gitignored).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import yaml
from ctl_harness import Env, env, task, vcjob, wait_for
from stopping import stop_within

from volcano_py.api import constants as c
from volcano_py.cli.main import main as volcano_py
from volcano_py.dashboard import DashboardOptions, run_dashboard
from volcano_py.kube import client as kube_client
from volcano_py.kube.client import ApiError
from volcano_py.kube.kinds import JOBS, NODES, PODS, QUEUES
from volcano_py.kube.waiting import within
from volcano_py.resources import GPU, Resource

pytestmark = pytest.mark.integration
SYSTEM = "volcano-system"
DASHBOARD_SA = f"system:serviceaccount:{SYSTEM}:volcano-dashboard"
RBAC_KINDS = ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
__all__ = ["env"]
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".artifacts" / "dashboard"
BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--window-size=1400,1100",
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail("CI=true and no chromium: .ci/run installs the Debian package `chromium`", pytrace=False)
    pytest.skip("no chromium on PATH (apt-get install -y chromium)")


class Browser:
    """One headless Chromium per call, each with a fresh profile: dump the rendered DOM, or screenshot."""

    def __init__(self, binary: str, profile: Path) -> None:
        self.binary, self.profile = binary, profile
        self.runs = 0

    async def _run(self, *args: str) -> str:
        self.runs += 1
        profile = self.profile / f"p{self.runs}"
        cmd = [self.binary, *BROWSER_FLAGS, f"--user-data-dir={profile}", *args]
        done = await asyncio.to_thread(subprocess.run, cmd, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"chromium failed ({done.returncode}): {done.stderr[-2000:]}"
        return done.stdout

    async def dom(self, url: str) -> str:
        # Dumped after the load event, once the page's scripts have run. (No --virtual-time-budget: the live
        # stream is a request that never ends, and virtual time waits for the network to go quiet.)
        return await self._run("--dump-dom", url)

    async def screenshot(self, url: str, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        await self._run(f"--screenshot={path}", url)
        assert path.stat().st_size > 10_000, f"{path} looks blank"
        return path


def _text(html: str) -> str:
    """The page's visible text, roughly as a person reads it (tags dropped, entities decoded)."""
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


async def _api_free_gpus(env: Env) -> int:
    """Free whole GPUs as the API says: each node's allocatable minus the pods holding it."""
    nodes = (await env.api.get(NODES.collection_path()))["items"]
    pods = (await env.api.get(PODS.collection_path()))["items"]
    used: dict[str, int] = {}
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for container in pod["spec"].get("containers") or ():
            requests = (container.get("resources") or {}).get("requests") or {}
            used[node] = used.get(node, 0) + Resource.parse({GPU: requests.get(GPU, 0)}).amount(GPU)
    free = 0
    for node in nodes:
        gpus = Resource.parse({GPU: node["status"].get("allocatable", {}).get(GPU, 0)}).amount(GPU)
        free += max(0, gpus - used.get(node["metadata"]["name"], 0)) // 1000
    return free


def _gpu_task(name: str, gpus: int) -> dict[str, Any]:
    body = task(name, 1)
    body["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1", GPU: str(gpus)},
        "limits": {GPU: str(gpus)},  # an extended resource needs its limit
    }
    return body


def _dashboard_kubeconfig(cluster: Any, path: Path) -> str:
    """The deployed RBAC of the dashboard applied, and a kubeconfig holding its ServiceAccount's token: the
    dashboard runs with exactly the read-only rights its Deployment gets."""
    parts = [REPO / "deploy" / "parts" / name for name in ("00-namespace.yaml", "42-dashboard.yaml")]
    docs = [d for p in parts for d in yaml.safe_load_all(p.read_text()) if d and d["kind"] in RBAC_KINDS]
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    made = cluster.kubectl("create", "token", "volcano-dashboard", "-n", SYSTEM, "--duration=1h")
    token = made.stdout.strip()
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    for user in config["users"]:
        user["user"] = {"token": token}
    path.write_text(yaml.safe_dump(config))
    return str(path)


@pytest.fixture
def denials(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """RBAC refusals of the dashboard's ServiceAccount seen by our client, where every API error decodes."""
    seen: list[str] = []
    decode = kube_client._error_from

    def recording(status: int, raw: bytes) -> ApiError:
        err = decode(status, raw)
        if status in (401, 403) and DASHBOARD_SA in err.message:
            seen.append(f"{status}: {err.message}")
        return err

    monkeypatch.setattr(kube_client, "_error_from", recording)
    return seen


async def test_what_a_person_sees_in_the_dashboard(
    cluster: Any, env: Env, tmp_path: Path, denials: list[str]
) -> None:
    browser = Browser(_chromium(), tmp_path / "chromium")
    kubeconfig = _dashboard_kubeconfig(cluster, tmp_path / "dashboard.kubeconfig")
    queue = f"dash-{env.ns}"[:60]
    await env.api.create(
        QUEUES.collection_path(),
        {
            "apiVersion": c.SCHEDULING_API_VERSION,
            "kind": c.QUEUE_KIND,
            "metadata": {"name": queue},
            "spec": {"weight": 1, "reclaimable": True, "capability": {"cpu": "16", GPU: "8"}},
        },
    )
    try:
        await env.create_job(vcjob("holds", _gpu_task("w", 8), queue=queue))
        await env.wait_phase("holds", "Running")
        await env.create_job(vcjob("waits", _gpu_task("w", 8), queue=queue))
        stop = asyncio.Event()
        started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        options = DashboardOptions(kubeconfig=kubeconfig, port=0, whatif_seconds=10)
        dashboard = asyncio.create_task(run_dashboard(options, stop, started))
        try:
            port = await within(started, 30)
            base = f"http://127.0.0.1:{port}"
            await _check_pages(env, browser, base, queue)
            # The events page lists what the API says about the job (the link on its page leads here).
            events = _text(await browser.dom(f"{base}/events/{env.ns}/Job/waits"))
            assert f"Events of Job {env.ns}/waits" in events
        finally:
            stop.set()
            await stop_within(dashboard, "the dashboard", 30)
    finally:
        # Leave no queue behind for later tests: its jobs first (an admission rule keeps non-empty queues).
        for name in ("waits", "holds"):
            with contextlib.suppress(ApiError):
                await env.api.delete(JOBS.object_path(name, env.ns))
        with contextlib.suppress(ApiError):
            await wait_for("the test's PodGroups to go", lambda: _no_podgroups(env), 60)
            await env.api.delete(QUEUES.object_path(queue))
    # The read-only RBAC of deploy/parts/42-dashboard.yaml was enough for everything above (the conf's
    # ConfigMap is the one read it may be refused: the Deployment mounts it instead).
    assert [d for d in denials if "configmaps" not in d] == []
    await _check_sim_report(browser, tmp_path)


async def _no_podgroups(env: Env) -> bool:
    return not await env.podgroups()


async def _check_pages(env: Env, browser: Browser, base: str, queue: str) -> None:
    # 1. The waiting job: the scheduler's reason, and the what-if's answer, on its page.
    async def job_page() -> str | None:
        html = await browser.dom(f"{base}/jobs/{env.ns}/waits")
        text = _text(html)
        return text if "Why pending:" in text and "What would make it run" in text else None

    text = await wait_for("the waiting job's page to show the scheduler's reason", job_page, 90)
    assert f"queue {queue}" in text
    reason = re.search(r"Why pending: (.*?) What would make it run", text)
    assert reason and "nvidia.com/gpu" in reason.group(1), text
    assert f"raise queue {queue}'s capability by 8 nvidia.com/gpu" in text, text
    # The victim is named as the user named it: the Volcano Job, not its PodGroup.
    assert re.search(rf"by ending or preempting {re.escape(env.ns)}/holds( |$)", text), text
    await browser.screenshot(f"{base}/jobs/{env.ns}/waits", "job-waits")

    # 2. The queue's bar: 8 GPUs allocated against a capability of 8.
    html = await browser.dom(f"{base}/queues")
    row = re.search(
        rf'<div class="barrow" data-queue="{re.escape(queue)}" data-resource="{GPU}"[^>]*>.*?</div>',
        html,
        re.S,
    )
    assert row is not None, html[:3000]
    assert 'data-allocated="8"' in row.group(0) and 'data-capability="8"' in row.group(0)
    assert re.search(r"8 / [\d-]+ / 8", _text(row.group(0))), row.group(0)
    await browser.screenshot(f"{base}/queues", "queues")

    # 3. The GPU grid's free count is the API's (polled: other tests' pods may still be going away).
    async def grid_matches() -> tuple[int, int] | None:
        shown = re.search(r'id="gpu-free">(\d+)<', await browser.dom(f"{base}/nodes"))
        expected = await _api_free_gpus(env)
        return (int(shown.group(1)), expected) if shown and int(shown.group(1)) == expected else None

    await wait_for("the GPU grid's free count to match the API", grid_matches, 30)

    # 4. Scheduler health lists the scheduler's warning about a pod naming a PodGroup that does not exist.
    lost = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "lost", "annotations": {c.KUBE_GROUP_NAME_KEY: "ghost"}},
        "spec": {"schedulerName": c.SCHEDULER_NAME, "containers": [{"name": "c", "image": "busybox"}]},
    }
    await env.api.create(PODS.collection_path(env.ns), lost)

    async def warned() -> str | None:
        text = _text(await browser.dom(f"{base}/health"))
        return text if f"Pod {env.ns}/lost" in text and "ghost not found" in text else None

    await wait_for("the scheduler's warning on the health page", warned, 30)
    await browser.screenshot(f"{base}/nodes", "gpus")
    await browser.screenshot(f"{base}/", "overview")


async def _check_sim_report(browser: Browser, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    code = await asyncio.to_thread(
        volcano_py,
        [
            "sim",
            "synthetic",
            "--nodes",
            "8",
            "--jobs",
            "12",
            "--policy",
            "greedy",
            "--policy",
            "cpsat",
            "--report",
            str(report),
        ],
    )
    assert code == 0
    dom = await browser.dom(report.as_uri())
    plots = re.findall(r'<svg[^>]*data-plot="([^"]+)".*?</svg>', dom, re.S)
    assert plots == ["wait-cdf", "gpu-allocation", "stranded-gpus", "pending-jobs"]
    for svg in re.findall(r"<svg.*?</svg>", dom, re.S):
        assert re.findall(r'data-series="([^"]+)"', svg) == ["greedy", "cpsat"]
        assert all(len(pts.split()) >= 2 for pts in re.findall(r'points="([^"]*)"', svg)), "an empty line"
    await browser.screenshot(report.as_uri(), "sim-report")
