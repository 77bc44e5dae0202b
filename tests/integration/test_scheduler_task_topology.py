"""task-topology through the real API, under the default conf (cpsat) with task-topology added: a Volcano Job
annotated ``volcano.sh/task-topology-affinity: ps,worker`` and ``-anti-affinity: ps`` gets its two ps on
different nodes, each with workers; one whose annotation names a task it lacks runs as if it had none."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from ctl_harness import Env, task, vcjob, wait_for
from stopping import stop_within

from volcano_py.api import constants as c
from volcano_py.cli.vcctl import main as vcctl
from volcano_py.kube.client import KubeClient, load_api_client
from volcano_py.scheduler.framework.conf import DEFAULT_CONF, with_plugin
from volcano_py.scheduler.runtime.runner import SchedulerOptions, run_scheduler

pytestmark = pytest.mark.integration

POOL_LABEL = "volcano-py.io/test-pool"
TF = {c.TASK_TOPOLOGY_AFFINITY_KEY: "ps,worker", c.TASK_TOPOLOGY_ANTI_AFFINITY_KEY: "ps"}


@pytest.fixture
def pool(cluster: Any) -> Iterator[str]:
    """Three 4-CPU nodes of their own: a job of six 1-CPU pods could pack onto two of them in many ways."""
    name = f"tt{uuid.uuid4().hex[:6]}"
    cluster.create_nodes(3, prefix=f"{name}-", cpu="4", memory="8Gi", gpus=0, labels={POOL_LABEL: name})
    yield name
    cluster.delete_nodes(f"{name}-")


@pytest.fixture
async def topo_env(cluster: Any, namespace: str, tmp_path: Path) -> AsyncIterator[Env]:
    """The operator and a scheduler whose conf is the default one with task-topology added."""
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(with_plugin(DEFAULT_CONF, "task-topology"))
    kubeconfig = str(cluster.kubeconfig)
    api = KubeClient(await load_api_client(kubeconfig))
    environment = Env(api, namespace, kubeconfig)
    await environment.ensure_queue(c.DEFAULT_QUEUE, reclaimable=True)
    stop = asyncio.Event()
    options = SchedulerOptions(kubeconfig=kubeconfig, scheduler_conf=str(conf), leader_elect=False,
                               metrics_host="127.0.0.1", metrics_port=0, schedule_period=0.2)  # fmt: skip
    scheduler = asyncio.create_task(run_scheduler(options, stop))
    environment.start_operator()
    try:
        yield environment
    finally:
        if environment.operator is not None and not environment.operator.task.done():
            await environment.operator.stop()
        stop.set()
        await stop_within(scheduler, "the scheduler", 30)
        await api.close()


def _tf_job(name: str, pool: str, annotations: dict[str, str]) -> dict[str, Any]:
    tasks = [task("ps", 2, cpu="1"), task("worker", 4, cpu="1")]
    for t in tasks:
        t["template"]["spec"]["nodeSelector"] = {POOL_LABEL: pool}
    job = vcjob(name, *tasks)
    job["metadata"]["annotations"] = dict(annotations)
    return job


async def _placed(env: Env, job: str, pods: int) -> dict[str, list[str]]:
    """Node -> the tasks of the job's pods bound there, once all ``pods`` are bound."""

    async def probe() -> dict[str, list[str]] | None:
        bound = [p for p in await env.live_pods(job) if p["spec"].get("nodeName")]
        if len(bound) < pods:
            return None
        on: dict[str, list[str]] = {}
        for pod in bound:
            on.setdefault(pod["spec"]["nodeName"], []).append(pod["metadata"]["annotations"][c.TASK_SPEC_KEY])
        return on

    placed: dict[str, list[str]] = await wait_for(f"the {pods} pods of job {job} bound", probe, 60)
    return placed


async def test_affine_tasks_share_a_node_and_anti_affine_ones_keep_apart(topo_env: Env, pool: str) -> None:
    await topo_env.create_job(_tf_job("tf", pool, TF))
    on = await _placed(topo_env, "tf", 6)
    ps_nodes = [node for node, tasks in on.items() for t in tasks if t == "ps"]
    assert len(ps_nodes) == 2 and len(set(ps_nodes)) == 2, on  # anti-affine: apart
    assert all("ps" in tasks for tasks in on.values()), on  # every worker shares its node with a ps
    await topo_env.wait_phase("tf", "Running")


async def test_a_job_naming_a_task_it_lacks_runs_without_its_topology(
    topo_env: Env, pool: str, cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    annotations = {**TF, c.TASK_TOPOLOGY_TASK_ORDER_KEY: "ps,chef"}
    await topo_env.create_job(_tf_job("typo", pool, annotations))
    on = await _placed(topo_env, "typo", 6)
    assert sum(len(tasks) for tasks in on.values()) == 6
    await topo_env.wait_phase("typo", "Running")
    capsys.readouterr()
    argv = ["job", "why", "typo", "-n", topo_env.ns, "-k", str(cluster.kubeconfig), "--whatif-seconds", "0"]
    assert await asyncio.to_thread(vcctl, argv) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Note: ")]
    assert said == [
        "Note: task-topology annotations ignored (volcano.sh/task-topology-task-order: task 'chef' is not "
        "a task of this job (its tasks: ps, worker); name one of them); the job is placed as if it had none, "
        "as Volcano does: fix the annotation and the next session follows it."
    ]
