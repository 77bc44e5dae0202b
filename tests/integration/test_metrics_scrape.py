"""A real scrape of the scheduler's and the controller's ``/metrics`` after they ran some jobs.

The scheduler and the controller run in-process against the session's control plane with a HyperNode over one
rack and a queue with a GPU capability; a GPU job completes, one fails, one cannot be placed (9 GPUs, nodes
have 8). Then every metric either process declares has at least one sample, and every metric a Grafana panel,
a dashboard variable or an alert rule reads is among the scraped samples: a dashboard never shows "No data"
for a name we do not export.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from ctl_harness import task, vcjob, wait_for
from observability import metric_names, queries
from prometheus_client.parser import text_string_to_metric_families
from stopping import stop_within

from volcano_py.api import constants as c
from volcano_py.controllers.operator import ControllerOptions, run_controller
from volcano_py.controllers.runtime.metrics import ControllerMetrics
from volcano_py.devcluster.nodes import RACK_LABEL
from volcano_py.devcluster.ports import free_ports
from volcano_py.kube.client import ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import HYPERNODES, JOBS, QUEUES
from volcano_py.scheduler.runtime.metrics import SchedulerMetrics
from volcano_py.scheduler.runtime.runner import SchedulerOptions, run_scheduler

pytestmark = pytest.mark.integration

QUEUE = "metrics-scrape"
HYPERNODE = "metrics-scrape-rack"
Samples = dict[str, list[Any]]
# Counted per outcome of a kind this test does not run (tests/integration/test_flows.py runs JobFlows); every
# other declared metric must have a sample.
NOT_EXERCISED = {"volcano_jobflow_failed_phase_count", "volcano_jobflow_succeed_phase_count"}


@pytest.fixture
async def admin(cluster: Any) -> AsyncIterator[KubeClient]:
    api = KubeClient(await load_api_client(str(cluster.kubeconfig)))
    yield api
    await api.close()


async def _scrape(port: int) -> Samples:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/metrics") as response:
        text = await response.text()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        samples.setdefault(family.name, [])
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(sample)
            if sample.name != family.name:  # a histogram's _bucket, a counter's _total: the family has it too
                samples[family.name].append(sample)
    return samples


def _gpu_job(name: str, gpus: int, **extra: Any) -> dict[str, Any]:
    worker = task("worker", 1, **extra)
    worker["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m", "nvidia.com/gpu": str(gpus)},
        "limits": {"nvidia.com/gpu": str(gpus)},
    }
    return vcjob(name, worker, queue=QUEUE, minAvailable=1, maxRetry=1)


async def _delete(admin: KubeClient, path: str) -> None:
    try:
        await admin.delete(path)
    except ApiError as exc:
        if not exc.not_found:
            raise


async def test_every_declared_and_dashboard_metric_has_samples(
    cluster: Any, namespace: str, admin: KubeClient
) -> None:
    scheduler_port, controller_port = free_ports(2)
    await admin.create(
        QUEUES.collection_path(),
        {"apiVersion": c.SCHEDULING_API_VERSION, "kind": c.QUEUE_KIND, "metadata": {"name": QUEUE},
         "spec": {"weight": 1, "capability": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "32"}}},
    )  # fmt: skip
    selector = {"labelMatch": {"matchLabels": {RACK_LABEL: "rack-0"}}}
    await admin.create(
        HYPERNODES.collection_path(),
        {"apiVersion": c.TOPOLOGY_API_VERSION, "kind": c.HYPERNODE_KIND, "metadata": {"name": HYPERNODE},
         "spec": {"tier": 1, "members": [{"type": "Node", "selector": selector}]}},
    )  # fmt: skip
    stop = asyncio.Event()
    kubeconfig = str(cluster.kubeconfig)
    processes = [
        asyncio.create_task(run_scheduler(SchedulerOptions(
            kubeconfig=kubeconfig, leader_elect=False, metrics_host="127.0.0.1", metrics_port=scheduler_port,
            schedule_period=0.2), stop)),
        asyncio.create_task(run_controller(ControllerOptions(
            kubeconfig=kubeconfig, namespaces=(namespace,), leader_elect=False, metrics_host="127.0.0.1",
            metrics_port=controller_port), stop)),
    ]  # fmt: skip
    try:
        policies = [{"event": "PodFailed", "action": "RestartJob"}]
        for job in (
            _gpu_job("done", 2, complete_after="1s"),
            _gpu_job("broken", 1, fail_after="1s", exit_code=3, policies=policies),
            _gpu_job("too-big", 9),
        ):
            await admin.create(JOBS.collection_path(namespace), job)

        async def finished() -> Samples | None:
            phases = {}
            for name in ("done", "broken"):
                body = await admin.get(JOBS.object_path(name, namespace))
                phases[name] = ((body.get("status") or {}).get("state") or {}).get("phase")
            if phases != {"done": "Completed", "broken": "Failed"}:
                return None
            scheduler = await _scrape(scheduler_port)
            # The unplaceable job shows once a session has tried its pod.
            return scheduler if scheduler.get("volcano_unschedule_task_count") else None

        scheduler = await wait_for("done Completed, broken Failed, too-big unschedulable", finished, 120)
        controller = await _scrape(controller_port)
    finally:
        stop.set()
        await stop_within(processes, "the processes", 60)
        await _delete(admin, HYPERNODES.object_path(HYPERNODE))
    for process in processes:
        assert process.exception() is None, repr(process.exception())

    for name, scraped in (("scheduler", scheduler), ("controller", controller)):
        registry = (SchedulerMetrics() if name == "scheduler" else ControllerMetrics()).registry
        declared = {family.name for family in registry.collect()} - NOT_EXERCISED
        empty = sorted(family for family in declared if not scraped.get(family))
        assert empty == [], f"{name} metrics declared but never set: {empty}"

    exported = set(scheduler) | set(controller)
    missing = {where: sorted(metric_names(expr) - exported) for where, expr in queries()}
    assert {where: names for where, names in missing.items() if names} == {}

    # The numbers say what happened, not only that a series exists.
    def value(samples: Samples, name: str, **labels: str) -> float:
        return float(sum(s.value for s in samples[name] if labels.items() <= s.labels.items()))

    assert value(scheduler, "volcano_hypernode_gpu_capacity", hypernode=HYPERNODE) == 32  # 4 nodes x 8
    assert value(scheduler, "volcano_queue_capacity_scalar_resources", queue_name=QUEUE) == 32
    assert value(scheduler, "volcano_unschedule_task_count") >= 1  # too-big's one pod
    assert value(scheduler, "volcano_unschedule_job_count") >= 1
    assert value(controller, "volcano_job_completed_phase_count_total", job_name=f"{namespace}/done") == 1
    assert value(controller, "volcano_job_failed_phase_count_total", job_name=f"{namespace}/broken") == 1
    await _delete(admin, JOBS.object_path("too-big", namespace))
