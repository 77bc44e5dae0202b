"""What test_rbac.py has the processes do under their ServiceAccounts: every code path that needs a
permission of the deployed roles, each driven to the outcome a user sees, and all at once so the run is short.

``Workload.prepare`` makes what must exist before the processes start (as an admin); ``drive`` runs the
scenes concurrently and asserts their outcomes; ``clean`` removes the cluster-scoped objects it made.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from ctl_harness import task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.api import dra
from volcano_py.controllers.hypernode.discovery import LABEL_SOURCE
from volcano_py.controllers.hypernode.worker import CONFIGMAP_PATH
from volcano_py.controllers.queue.state import CLOSED_BY_PARENT_KEY
from volcano_py.devcluster.dra import device_class, gpu_slice
from volcano_py.devcluster.nodes import HOSTNAME_LABEL
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH, ApiError, KubeClient
from volcano_py.kube.kinds import (
    COMMANDS,
    CRONJOBS,
    EVENTS,
    HYPERNODES,
    JOBFLOWS,
    JOBS,
    JOBTEMPLATES,
    NODES,
    PODGROUPS,
    PODS,
    PRIORITY_CLASSES,
    QUEUES,
    RESOURCE_CLAIMS,
)

JSON = dict[str, Any]
POOL_LABEL = "test.volcano-py.io/rbac-pool"
RACK_LABEL = "test.volcano-py.io/rbac-rack"
GPU = "nvidia.com/gpu"
# Owners a plain pod's PodGroup reads its annotations from (controllers/podgroup/worker.py OWNER_PATHS).
OWNER_KINDS = ("ReplicaSet", "StatefulSet", "DaemonSet", "Job")


def _discovery_conf() -> str:
    return (
        "networkTopologyDiscovery:\n- source: label\n  enabled: true\n  config:\n    networkTopologyTypes:\n"
        f"      rbac:\n      - nodeLabel: {RACK_LABEL}\n      - nodeLabel: kubernetes.io/hostname\n"
    )


def _pod(name: str, node: str, *, gpus: int = 0, priority: str = "", annotations: JSON | None = None) -> JSON:
    requests: JSON = {"cpu": "100m", **({GPU: str(gpus)} if gpus else {})}
    spec: JSON = {
        "schedulerName": c.SCHEDULER_NAME,
        "nodeSelector": {HOSTNAME_LABEL: node},
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": requests, "limits": requests}}
        ],
    }
    if priority:
        spec["priorityClassName"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
            "spec": spec}  # fmt: skip


def _obj(api_version: str, kind: str, name: str, **fields: Any) -> JSON:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **fields}


CLAIM = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}


def _command(name: str, action: str, target: JSON) -> JSON:
    ref = {"apiVersion": target["apiVersion"], "kind": target["kind"], "name": target["metadata"]["name"],
           "uid": target["metadata"]["uid"]}  # fmt: skip
    return {"apiVersion": c.BUS_API_VERSION, "kind": c.COMMAND_KIND, "metadata": {"name": name},
            "action": action, "target": ref}  # fmt: skip


def _member_names(hypernode: JSON) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in hypernode["spec"]["members"]]


class Workload:
    def __init__(self, cluster: Any, admin: KubeClient, namespace: str) -> None:
        self.cluster, self.api, self.ns = cluster, admin, namespace
        suffix = uuid.uuid4().hex[:6]
        self.pool = f"rbac{suffix}"
        self.nodes = [f"{self.pool}-0", f"{self.pool}-1"]
        self.low, self.high = f"rbac-low-{suffix}", f"rbac-high-{suffix}"
        self.parent, self.child = f"rbac-parent-{suffix}", f"rbac-child-{suffix}"
        self.owned_queue = f"rbac-owned-{suffix}"
        self.hypernode = f"rbac-{suffix}"

    # --- before the processes start -------------------------------------------------------------------------

    async def prepare(self) -> None:
        # Two 8-GPU nodes of their own, for the preemption (and the discovery of their rack label).
        self.cluster.create_nodes(
            2, prefix=f"{self.pool}-", cpu="16", memory="64Gi", gpus=8,
            labels={POOL_LABEL: self.pool, RACK_LABEL: f"{self.pool}a"},
        )  # fmt: skip
        for name, value in ((self.low, 10), (self.high, 1000)):
            body = _obj("scheduling.k8s.io/v1", "PriorityClass", name, value=value)
            await self.api.create(PRIORITY_CLASSES.collection_path(), body)
        for name, parent in (
            (self.parent, c.ROOT_QUEUE),
            (self.child, self.parent),
            (self.owned_queue, c.ROOT_QUEUE),
        ):
            body = _obj(c.SCHEDULING_API_VERSION, c.QUEUE_KIND, name, spec={"weight": 1, "parent": parent})
            await self.api.create(QUEUES.collection_path(), body)
        # A HyperNode made by hand: the controller keeps its status.nodeCount.
        members = [{"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in self.nodes]
        hypernode = _obj(
            c.TOPOLOGY_API_VERSION, c.HYPERNODE_KIND, self.hypernode, spec={"tier": 1, "members": members}
        )
        await self.api.create(HYPERNODES.collection_path(), hypernode)
        # HyperNode discovery from the pool's rack label, read by the controller at start.
        with contextlib.suppress(ApiError):
            await self.api.delete(CONFIGMAP_PATH)
        discovery = _obj(
            "v1", "ConfigMap", c.CONTROLLER_CONFIGMAP, data={c.CONTROLLER_CONFIG_KEY: _discovery_conf()}
        )
        await self.api.create(CONFIGMAP_PATH.rsplit("/", 1)[0], discovery)
        # A claim the Job names (read), beside the one it asks the controller to make.
        # The fake DRA driver's DeviceClass and one GPU on the pool's second node.
        driver = {"apiVersion": "v1", "kind": "List", "items": [device_class(), gpu_slice(self.nodes[1], 1)]}
        self.cluster.kubectl("apply", "-f", "-", input=json.dumps(driver))
        claim = _obj("v1", "PersistentVolumeClaim", "rbac-data", spec=CLAIM)
        await self.api.create(f"/api/v1/namespaces/{self.ns}/persistentvolumeclaims", claim)

    # --- while they run -------------------------------------------------------------------------------------

    async def drive(self) -> None:
        scenes: list[Callable[[], Awaitable[None]]] = [
            self.full_job,
            self.scaled_then_terminated_job,
            self.preemption,
            self.queue_allocation_gate,
            self.owned_plain_pods,
            self.jobflow,
            self.queue_close_and_open,
            self.hypernodes,
            self.repeated_warning,
            self.dynamic_resource_claim,
            self.jobflow_name_taken,
        ]
        await asyncio.gather(*(scene() for scene in scenes))

    async def full_job(self) -> None:
        """Two tasks with the svc, ssh and env plugins, a priority class, a claim read and a claim made."""
        tasks = [task(name, 1, complete_after="2s") for name in ("ps", "worker")]
        for body in tasks:
            body["template"]["spec"]["priorityClassName"] = self.low
        volumes = [
            {"mountPath": "/data", "volumeClaimName": "rbac-data"},
            {"mountPath": "/scratch", "volumeClaim": CLAIM},
        ]
        plugins: JSON = {"svc": [], "ssh": [], "env": []}
        job = vcjob("rbac", *tasks, minAvailable=2, plugins=plugins, volumes=volumes)
        await self.api.create(JOBS.collection_path(self.ns), job)
        await wait_for("Job rbac Completed", lambda: self._phase_is("rbac", "Completed"), 90)
        listed = await self.api.get(PODS.collection_path(self.ns), labelSelector=f"{c.JOB_NAME_KEY}=rbac")
        pods = listed["items"]
        assert len(pods) == 2
        for pod in pods:  # the ssh plugin's Secret, made under the controller's token, is mounted
            secrets = [v["secret"]["secretName"] for v in pod["spec"]["volumes"] if "secret" in v]
            assert "rbac-ssh" in secrets, pod["spec"]["volumes"]
        claims = await self.api.get(f"/api/v1/namespaces/{self.ns}/persistentvolumeclaims")
        assert len(claims["items"]) == 2, [x["metadata"]["name"] for x in claims["items"]]
        for path in (  # the plugins' objects are released with the finished Job
            f"/api/v1/namespaces/{self.ns}/secrets/rbac-ssh",
            f"/api/v1/namespaces/{self.ns}/services/rbac",
            f"/api/v1/namespaces/{self.ns}/configmaps/rbac-svc",
            f"/apis/networking.k8s.io/v1/namespaces/{self.ns}/networkpolicies/rbac",
        ):
            await wait_for(f"{path} to be released", lambda p=path: self._gone(p), 30)  # type: ignore[misc]

    async def scaled_then_terminated_job(self) -> None:
        """A running Job owned by a CronJob (its status lists it), scaled up (its PodGroup and hosts follow),
        then terminated by a Command (pods killed) and deleted by its ttlSecondsAfterFinished."""
        template = {"spec": vcjob("t", task("w", 1))["spec"]}
        yearly = _obj(c.BATCH_API_VERSION, c.CRONJOB_KIND, "rbac-cron",
                      spec={"schedule": "0 0 1 1 *", "jobTemplate": template})  # fmt: skip
        cron = await self.api.create(CRONJOBS.collection_path(self.ns), yearly)
        job = vcjob("held", task("w", 1), minAvailable=1, plugins={"svc": []}, ttlSecondsAfterFinished=0)
        job["metadata"]["ownerReferences"] = [{
            "apiVersion": c.BATCH_API_VERSION, "kind": c.CRONJOB_KIND, "name": "rbac-cron",
            "uid": cron["metadata"]["uid"], "controller": True}]  # fmt: skip
        await self.api.create(JOBS.collection_path(self.ns), job)
        await wait_for("Job held Running", lambda: self._phase_is("held", "Running"), 60)

        async def cron_lists_it() -> bool:
            body = await self.api.get(CRONJOBS.object_path("rbac-cron", self.ns))
            return [r.get("name") for r in (body.get("status") or {}).get("active") or []] == ["held"]

        await wait_for("CronJob rbac-cron's status.active to list Job held", cron_lists_it, 30)
        scaled = {"spec": {"minAvailable": 2, "tasks": [task("w", 2)]}}
        await self.api.patch(JOBS.object_path("held", self.ns), scaled)

        async def scaled_up() -> bool:
            group = await self.api.get(PODGROUPS.object_path(await self._podgroup_of("held"), self.ns))
            hosts = await self.api.get(f"/api/v1/namespaces/{self.ns}/configmaps/held-svc")
            return group["spec"].get("minMember") == 2 and "held-w-1" in hosts["data"].get("w.host", "")

        await wait_for("Job held's PodGroup and hosts scaled to 2", scaled_up, 30)
        # Pending again while its new pod waits, then Running again: the same Event, its count bumped.
        again = "Job held is Running"
        await wait_for(f"the Event {again!r} counted twice", lambda: self._told("held", again, 2), 30)
        held = await self.api.get(JOBS.object_path("held", self.ns))
        await self.api.create(
            COMMANDS.collection_path(self.ns), _command("held-terminate", "TerminateJob", held)
        )
        await wait_for("Job held deleted after it terminated",
                       lambda: self._gone(JOBS.object_path("held", self.ns)), 60)  # fmt: skip

    async def preemption(self) -> None:
        """A low-priority pod fills the first pool node's GPUs; a high-priority one evicts it and binds.
        Every other scene's pods go to the second node, so none of them is a victim."""
        preempting = self.nodes[0]
        low = _pod("low", preempting, gpus=8, priority=self.low)
        await self.api.create(PODS.collection_path(self.ns), low)
        await wait_for("the low-priority pod bound", lambda: self._bound("low"), 60)
        high = _pod("high", preempting, gpus=8, priority=self.high)
        await self.api.create(PODS.collection_path(self.ns), high)
        await wait_for("the high-priority pod bound where the low one was", lambda: self._bound("high"), 90)

    async def queue_allocation_gate(self) -> None:
        """A pod opted in to the queue-allocation gate: the scheduler removes the gate and binds it."""
        pod = _pod("gated", self.nodes[1], annotations={c.QUEUE_ALLOCATION_GATE_KEY: "true"})
        pod["spec"]["schedulingGates"] = [{"name": c.QUEUE_ALLOCATION_GATE_KEY}]
        await self.api.create(PODS.collection_path(self.ns), pod)
        await wait_for("the gated pod ungated and bound", lambda: self._bound("gated"), 60)

    async def owned_plain_pods(self) -> None:
        """Pods of a Deployment, a StatefulSet, a DaemonSet and a batch Job: each gets a PodGroup in the queue
        its owner's annotation names, so the controller reads each owner."""
        template = {"metadata": {"labels": {"app": "rbac-owned"}},
                    "spec": {k: v for k, v in _pod("x", self.nodes[1])["spec"].items()}}  # fmt: skip
        selector = {"matchLabels": {"app": "rbac-owned"}}
        annotations = {c.QUEUE_NAME_ANNOTATION_KEY: self.owned_queue}
        owners = [
            ("/apis/apps/v1", "deployments", {"apiVersion": "apps/v1", "kind": "Deployment",
             "spec": {"replicas": 1, "selector": selector, "template": template}}),
            ("/apis/apps/v1", "statefulsets", {"apiVersion": "apps/v1", "kind": "StatefulSet",
             "spec": {"replicas": 1, "selector": selector, "template": template, "serviceName": ""}}),
            ("/apis/apps/v1", "daemonsets", {"apiVersion": "apps/v1", "kind": "DaemonSet",
             "spec": {"selector": selector, "template": template}}),
            ("/apis/batch/v1", "jobs", {"apiVersion": "batch/v1", "kind": "Job",
             "spec": {"template": {**template, "spec": {**template["spec"], "restartPolicy": "Never"}}}}),
        ]  # fmt: skip
        for prefix, plural, body in owners:
            body["metadata"] = {"name": f"rbac-{plural}", "annotations": annotations}
            await self.api.create(f"{prefix}/namespaces/{self.ns}/{plural}", body)

        async def all_grouped() -> bool:
            groups = (await self.api.get(PODGROUPS.collection_path(self.ns)))["items"]
            kinds = {
                ref["kind"]
                for group in groups
                if group["spec"].get("queue") == self.owned_queue
                for ref in group["metadata"].get("ownerReferences") or []
            }
            return kinds == set(OWNER_KINDS)

        await wait_for(f"a PodGroup in its owner's queue for the pods of each {OWNER_KINDS}", all_grouped, 60)

    async def jobflow(self) -> None:
        """A one-step JobFlow with jobRetainPolicy delete: its Job made, run, listed, then deleted."""
        step = vcjob("step", task("w", 1, complete_after="1s"))
        await self.api.create(JOBTEMPLATES.collection_path(self.ns), {
            "apiVersion": c.FLOW_API_VERSION, "kind": c.JOBTEMPLATE_KIND, "metadata": {"name": "step"},
            "spec": step["spec"]})  # fmt: skip
        await self.api.create(JOBFLOWS.collection_path(self.ns), {
            "apiVersion": c.FLOW_API_VERSION, "kind": c.JOBFLOW_KIND, "metadata": {"name": "flow"},
            "spec": {"flows": [{"name": "step"}], "jobRetainPolicy": "delete"}})  # fmt: skip

        listed: list[bool] = []

        async def succeeded_and_cleared() -> bool:
            # The template lists the Job while it exists (a second or so), then the flow deletes it.
            template = await self.api.get(JOBTEMPLATES.object_path("step", self.ns))
            if "flow-step" in ((template.get("status") or {}).get("jobDependsOnList") or []):
                listed.append(True)
            flow = await self.api.get(JOBFLOWS.object_path("flow", self.ns))
            phase = ((flow.get("status") or {}).get("state") or {}).get("phase")
            return phase == "Succeed" and await self._gone(JOBS.object_path("flow-step", self.ns))

        await wait_for(
            "JobFlow flow Succeed and its Job deleted (jobRetainPolicy: delete)", succeeded_and_cleared, 60
        )
        assert listed, "JobTemplate step never listed Job flow-step in status.jobDependsOnList"

    async def queue_close_and_open(self) -> None:
        """CloseQueue on a parent closes its child too (marked closed by its parent); OpenQueue reopens
        both."""
        for action, state, mark in (("CloseQueue", "Closed", "true"), ("OpenQueue", "Open", "false")):
            parent = await self.api.get(QUEUES.object_path(self.parent))
            command = _command(f"rbac-{action.lower()}", action, parent)
            await self.api.create(COMMANDS.collection_path(self.ns), command)

            async def followed(state: str = state, mark: str = mark) -> bool:
                child = await self.api.get(QUEUES.object_path(self.child))
                parent = await self.api.get(QUEUES.object_path(self.parent))
                return (
                    (parent.get("status") or {}).get("state") == state
                    and (child.get("status") or {}).get("state") == state
                    and (child["metadata"].get("annotations") or {}).get(CLOSED_BY_PARENT_KEY) == mark
                )

            await wait_for(f"queues {self.parent} and {self.child} {state}", followed, 30)

    async def hypernodes(self) -> None:
        """The made HyperNode's nodeCount is kept; discovery creates, replaces and deletes HyperNodes as the
        pool's rack label changes."""

        async def counted() -> bool:
            body = await self.api.get(HYPERNODES.object_path(self.hypernode))
            return (body.get("status") or {}).get("nodeCount") == 2

        await wait_for(f"HyperNode {self.hypernode} status.nodeCount 2", counted, 30)
        a, b = f"{self.pool}a", f"{self.pool}b"
        await wait_for("rack a discovered with both nodes",
                       lambda: self._racks({a: sorted(self.nodes)}), 40)  # fmt: skip
        await self._label(self.nodes[1], b)
        await wait_for("rack b discovered, rack a shrunk",
                       lambda: self._racks({a: [self.nodes[0]], b: [self.nodes[1]]}), 30)  # fmt: skip
        await self._label(self.nodes[1], None)
        await wait_for("rack b deleted once empty", lambda: self._racks({a: [self.nodes[0]]}), 30)

    async def repeated_warning(self) -> None:
        """A pod's warning told again after a different one: one Event, its count bumped to 2."""
        await self.api.create(PODS.collection_path(self.ns), _pod("lost", self.nodes[1], annotations={
            c.KUBE_GROUP_NAME_KEY: "ghost"}))  # fmt: skip
        missing = f"PodGroup {self.ns}/ghost not found"
        await wait_for(f"the warning {missing!r}", lambda: self._told("lost", missing), 30)
        group = _obj(c.SCHEDULING_API_VERSION, c.PODGROUP_KIND, "ghost",
                     spec={"minMember": 1, "queue": f"{self.pool}-nowhere"})  # fmt: skip
        await self.api.create(PODGROUPS.collection_path(self.ns), group)
        await wait_for("the warning of the PodGroup's missing queue",
                       lambda: self._told("lost", f"queue {self.pool}-nowhere"), 30)  # fmt: skip
        await self.api.delete(PODGROUPS.object_path("ghost", self.ns))
        await wait_for(f"the warning {missing!r} counted twice", lambda: self._told("lost", missing, 2), 30)

    async def dynamic_resource_claim(self) -> None:
        """A pod claiming one DRA GPU: the scheduler allocates and reserves the claim, then binds the pod."""
        request = {"name": "gpu", "exactly": {"deviceClassName": dra.EXAMPLE_GPU_CLASS, "count": 1}}
        template = _obj(dra.RESOURCE_API_VERSION, dra.RESOURCE_CLAIM_TEMPLATE_KIND, "one-gpu",
                        spec={"spec": {"devices": {"requests": [request]}}})  # fmt: skip
        await self.api.create(
            f"/apis/{dra.RESOURCE_API_VERSION}/namespaces/{self.ns}/resourceclaimtemplates", template
        )
        pod = _pod("claimer", self.nodes[1])
        pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        await self.api.create(PODS.collection_path(self.ns), pod)
        await wait_for("the claiming pod bound", lambda: self._bound("claimer"), 60)
        claims = (await self.api.get(RESOURCE_CLAIMS.collection_path(self.ns)))["items"]
        [reserved] = [x for x in claims if x["metadata"]["name"].startswith("claimer-")]
        assert [r["name"] for r in reserved["status"]["reservedFor"]] == ["claimer"], reserved["status"]

    async def jobflow_name_taken(self) -> None:
        """A JobFlow whose step's Job name is taken by a Job it does not own: the controller reads that Job
        and warns instead of adopting it."""
        await self.api.create(JOBS.collection_path(self.ns), vcjob("taken-step-of-taken", task("w", 1)))
        template = vcjob("taken", task("w", 1, complete_after="1s"))
        step = _obj(c.FLOW_API_VERSION, c.JOBTEMPLATE_KIND, "step-of-taken", spec=template["spec"])
        await self.api.create(JOBTEMPLATES.collection_path(self.ns), step)
        flow = _obj(c.FLOW_API_VERSION, c.JOBFLOW_KIND, "taken", spec={"flows": [{"name": "step-of-taken"}]})
        await self.api.create(JOBFLOWS.collection_path(self.ns), flow)
        warning = "Job taken-step-of-taken exists and is not controlled by JobFlow taken"
        await wait_for(f"the warning {warning!r}", lambda: self._told("taken", warning), 30)

    # --- afterwards -----------------------------------------------------------------------------------------

    async def clean(self) -> None:
        paths = [
            *(PRIORITY_CLASSES.object_path(name) for name in (self.low, self.high)),
            *(QUEUES.object_path(name) for name in (self.child, self.parent, self.owned_queue)),
            HYPERNODES.object_path(self.hypernode),
            CONFIGMAP_PATH,
        ]
        for path in paths:
            with contextlib.suppress(ApiError):
                await self.api.delete(path)
        with contextlib.suppress(ApiError):
            selector = f"{RACK_LABEL} in ({self.pool}a,{self.pool}b)"
            await self.api.request("DELETE", HYPERNODES.collection_path(), query={"labelSelector": selector})
        self.cluster.kubectl("delete", "resourceslice", f"{self.nodes[1]}-{dra.EXAMPLE_GPU_DRIVER}",
                             "--ignore-not-found", check=False)  # fmt: skip
        self.cluster.delete_nodes(f"{self.pool}-")

    # --- reading the cluster --------------------------------------------------------------------------------

    async def _phase_is(self, name: str, phase: str) -> bool:
        body = await self.api.get(JOBS.object_path(name, self.ns))
        return bool(((body.get("status") or {}).get("state") or {}).get("phase") == phase)

    async def _podgroup_of(self, job: str) -> str:
        for group in (await self.api.get(PODGROUPS.collection_path(self.ns)))["items"]:
            if any(ref.get("name") == job for ref in group["metadata"].get("ownerReferences") or []):
                return str(group["metadata"]["name"])
        raise AssertionError(f"Job {job} has no PodGroup")

    async def _gone(self, path: str) -> bool:
        try:
            await self.api.get(path)
        except ApiError as exc:
            if exc.not_found:
                return True
            raise
        return False

    async def _bound(self, *names: str) -> bool:
        pods = {
            p["metadata"]["name"]: p for p in (await self.api.get(PODS.collection_path(self.ns)))["items"]
        }
        return all(name in pods and pods[name]["spec"].get("nodeName") for name in names)

    async def _told(self, name: str, text: str, count: int = 1) -> bool:
        """An Event about the object ``name`` says ``text`` and was told at least ``count`` times."""
        selector = f"involvedObject.name={name}"
        events = (await self.api.get(EVENTS.collection_path(self.ns), fieldSelector=selector))["items"]
        return any(text in str(e.get("message")) and int(e.get("count") or 1) >= count for e in events)

    async def _label(self, node: str, rack: str | None) -> None:
        patch = {"metadata": {"labels": {RACK_LABEL: rack}}}
        await self.api.patch(NODES.object_path(node), patch, STRATEGIC_MERGE_PATCH)

    async def _racks(self, want: dict[str, list[str]]) -> bool:
        """The discovered HyperNodes of the pool's racks are ``want`` (rack value -> member nodes)."""
        selector = f"{c.NETWORK_TOPOLOGY_SOURCE_KEY}={LABEL_SOURCE},{RACK_LABEL}"
        items = (await self.api.get(HYPERNODES.collection_path(), labelSelector=selector))["items"]
        found = {h["metadata"]["labels"][RACK_LABEL]: sorted(_member_names(h)) for h in items}
        return found == want
