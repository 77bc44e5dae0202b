"""Volcano's queue-allocation gate on a real control plane (``SchedulingGatesQueueAdmission``), as Volcano's
e2e ``schedulinggates`` suite drives it: admission gives an opted-in pod the gate at CREATE, the scheduler
removes it once the pod's queue has room and then places it; a pod the queue admitted but no node takes
holds the queue's room, so the next one keeps its gate until it is gone; a pod with another gate too keeps
both until that one is removed.

Our webhooks run in-process for this module's label, the operator for the test's namespace, and a scheduler
with the capacity plugin (as the e2e suite switches to it), both with the feature gate on.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from admission_harness import serving_admission
from ctl_harness import Operator, wait_for
from stopping import stop_within

from volcano_py.api import constants as c
from volcano_py.api.features import parse_feature_gates
from volcano_py.devcluster import DevCluster
from volcano_py.kube.client import JSON_PATCH, ApiError, KubeClient, load_api_client
from volcano_py.kube.kinds import PODGROUPS, PODS, QUEUES
from volcano_py.scheduler.runtime.runner import SchedulerOptions, run_scheduler

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
LABEL = {"volcano-py.test/queue-gate": RUN}
GATES = parse_feature_gates("SchedulingGatesQueueAdmission=true")
GATE = c.QUEUE_ALLOCATION_GATE_KEY
OTHER = "example.com/other-gate"
SLOT = {"cpu": "500m", "memory": "512Mi"}
CAPACITY_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: capacity}, {name: nodeorder}, {name: binpack}]
"""
# How long a pod must be seen keeping its gates to count as kept: ten scheduling periods.
HELD_SECONDS = 2.0


class Gated:
    def __init__(self, api: KubeClient, namespace: str, queue: str) -> None:
        self.api, self.ns, self.queue = api, namespace, queue

    async def create_pod(self, name: str, *, gates: tuple[str, ...] = (), **spec: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "labels": dict(LABEL),
                "annotations": {
                    c.KUBE_GROUP_NAME_KEY: "pg",
                    GATE: "true",
                    c.QUEUE_NAME_ANNOTATION_KEY: self.queue,
                },
            },
            "spec": {
                "schedulerName": c.SCHEDULER_NAME,
                "restartPolicy": "Never",
                "containers": [
                    {"name": "main", "image": "busybox", "resources": {"requests": SLOT, "limits": SLOT}}
                ],
                **spec,
            },
        }
        if gates:
            body["spec"]["schedulingGates"] = [{"name": gate} for gate in gates]
        created: dict[str, Any] = await self.api.create(PODS.collection_path(self.ns), body)
        return created

    async def pod(self, name: str) -> dict[str, Any]:
        got: dict[str, Any] = await self.api.get(PODS.object_path(name, self.ns))
        return got

    async def delete(self, name: str) -> None:
        await self.api.delete(PODS.object_path(name, self.ns), {"gracePeriodSeconds": 0})

    async def gates(self, name: str) -> list[str]:
        return [g["name"] for g in (await self.pod(name))["spec"].get("schedulingGates") or ()]

    async def wait_ungated_and_running(self, name: str) -> None:
        async def running() -> bool:
            pod = await self.pod(name)
            return (
                not pod["spec"].get("schedulingGates") and (pod.get("status") or {}).get("phase") == "Running"
            )

        await wait_for(f"{name} ungated and Running", running, 60)

    async def wait_ungated(self, name: str) -> None:
        async def ungated() -> bool:
            return not await self.gates(name)

        await wait_for(f"{name}'s gate removed", ungated, 60)

    async def held(self, name: str, gates: list[str]) -> None:
        """``name`` keeps exactly ``gates``, unbound and Pending, for ``HELD_SECONDS``."""
        for _ in range(int(HELD_SECONDS / 0.25)):
            pod = await self.pod(name)
            assert [g["name"] for g in pod["spec"].get("schedulingGates") or ()] == gates
            assert not pod["spec"].get("nodeName") and pod["status"]["phase"] == "Pending"
            await asyncio.sleep(0.25)


@pytest.fixture
async def gated(cluster: DevCluster, namespace: str, tmp_path: Path) -> AsyncIterator[Gated]:
    kubeconfig = str(cluster.kubeconfig)
    api = KubeClient(await load_api_client(kubeconfig))
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CAPACITY_CONF)
    stop = asyncio.Event()
    scheduler = asyncio.create_task(
        run_scheduler(
            SchedulerOptions(
                kubeconfig=kubeconfig, scheduler_conf=str(conf), leader_elect=False, metrics_host="127.0.0.1",
                metrics_port=0, schedule_period=0.2, feature_gates=GATES,
            ),
            stop,
        )
    )  # fmt: skip
    operator = Operator(kubeconfig, namespace)
    queue = f"gate-{RUN}-{namespace[-6:]}"
    with serving_admission(cluster, tmp_path / "certs", LABEL, GATES):
        try:
            await api.create(
                QUEUES.collection_path(),
                {
                    "apiVersion": c.SCHEDULING_API_VERSION,
                    "kind": c.QUEUE_KIND,
                    "metadata": {"name": queue},
                    "spec": {"weight": 1, "capability": SLOT},
                },
            )

            async def opened() -> bool:
                got = await api.get(QUEUES.object_path(queue))
                return (got.get("status") or {}).get("state") == "Open"

            await wait_for(f"queue {queue} Open", opened, 30)
            await api.create(
                PODGROUPS.collection_path(namespace),
                {
                    "apiVersion": c.SCHEDULING_API_VERSION,
                    "kind": c.PODGROUP_KIND,
                    "metadata": {"name": "pg"},
                    "spec": {"minMember": 1, "queue": queue, "minResources": SLOT},
                },
            )
            yield Gated(api, namespace, queue)
        finally:
            await asyncio.to_thread(
                cluster.kubectl, "delete", "pods,podgroups", "--all", "-n", namespace, "--grace-period=0",
                "--wait=false", check=False,
            )  # fmt: skip
            with_pods = True
            for _ in range(40):
                listed = await api.get(PODS.collection_path(namespace))
                with_pods = bool(listed.get("items"))
                if not with_pods:
                    break
                await asyncio.sleep(0.25)
            try:
                await api.delete(QUEUES.object_path(queue))
            except ApiError as err:
                if not err.not_found:
                    raise
            await operator.stop()
            stop.set()
            await stop_within(scheduler, "the scheduler", 30)
            await api.close()


async def test_admitted_pod_is_ungated_and_runs_and_an_unplaced_one_holds_the_queue(gated: Gated) -> None:
    created = await gated.create_pod("pod-1")
    # Admission added the gate synchronously, in the create itself.
    assert [g["name"] for g in created["spec"]["schedulingGates"]] == [GATE]
    await gated.wait_ungated_and_running("pod-1")
    await gated.delete("pod-1")

    # Admitted by its queue, so ungated, but no node has the label: it stays Pending and keeps the one slot.
    await gated.create_pod("pod-2", nodeSelector={"kubernetes.io/fake-node": "fake"})
    await gated.wait_ungated("pod-2")
    await gated.create_pod("pod-3")
    await gated.held("pod-3", [GATE])
    assert (await gated.pod("pod-2"))["status"]["phase"] == "Pending"

    async def told() -> str:
        podgroup = await gated.api.get(PODGROUPS.object_path("pg", gated.ns))
        messages = [
            str(cond.get("message")) for cond in (podgroup.get("status") or {}).get("conditions") or ()
        ]
        return next((m for m in messages if "keeps the queue-allocation gate" in m), "")

    message = await wait_for("the PodGroup told why pod-3 keeps its gate", told, 30)
    assert f"until queue {gated.queue} has room: queue quota exceeded" in message

    await gated.delete("pod-2")
    await gated.wait_ungated_and_running("pod-3")


async def test_another_gate_keeps_both_until_only_ours_is_left(gated: Gated) -> None:
    created = await gated.create_pod("pod-multigate", gates=(OTHER,))
    assert [g["name"] for g in created["spec"]["schedulingGates"]] == [OTHER, GATE]
    await gated.held("pod-multigate", [OTHER, GATE])

    await gated.api.patch(
        PODS.object_path("pod-multigate", gated.ns),
        [{"op": "replace", "path": "/spec/schedulingGates", "value": [{"name": GATE}]}],
        JSON_PATCH,
    )
    await gated.wait_ungated_and_running("pod-multigate")
