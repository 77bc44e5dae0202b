"""svc: give a Job's pods stable DNS names and tell each pod where every other pod is.

Creates the headless Service ``<job>`` (so ``<pod>.<job>`` resolves), the ConfigMap ``<job>-svc`` with one
entry per task (``<task>.host``: one host per line; ``VC_<TASK>_HOSTS``: comma-separated;
``VC_<TASK>_NUM``: the count) mounted at ``/etc/volcano``, and a NetworkPolicy ``<job>`` that admits traffic
only from the Job's own pods. Arguments (Volcano's): ``--publish-not-ready-addresses`` (default false),
``--disable-network-policy`` (default false), ``--inject-hosts-env`` (default true).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.bodies.job import job_tasks
from volcano_py.api.objects import name_of
from volcano_py.jobplugins.flags import Flag, parse_flags
from volcano_py.jobplugins.helpers import (
    add_volume,
    append_env,
    containers,
    env_key,
    job_namespace,
    job_selector,
    owned_metadata,
    task_hosts,
)
from volcano_py.jobplugins.types import JSON, ApplyPolicy, ManagedObject, ObjectRef

CONFIG_MAP_MOUNT_PATH = "/etc/volcano"
FLAGS = (
    Flag("publish-not-ready-addresses", False),
    Flag("disable-network-policy", False),
    Flag("inject-hosts-env", True),
)


def config_map_name(job: Mapping[str, Any]) -> str:
    return f"{name_of(job)}-svc"


def hosts_data(job: Mapping[str, Any]) -> dict[str, str]:
    """The hosts ConfigMap's data: it changes when a task is scaled, so the controller replaces it."""
    data: dict[str, str] = {}
    for task in job_tasks(job):
        hosts = task_hosts(job, task)
        key = env_key(task["name"])
        data[f"{task['name'].replace('-', '_')}.host"] = "\n".join(hosts)
        data[f"VC_{key}_HOSTS"] = ",".join(hosts)
        data[f"VC_{key}_NUM"] = str(len(hosts))
    return data


@dataclass(frozen=True, slots=True)
class SvcPlugin:
    publish_not_ready_addresses: bool = False
    disable_network_policy: bool = False
    inject_hosts_env: bool = True
    name: str = "svc"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> SvcPlugin:
        values = parse_flags("svc", FLAGS, args)
        return cls(
            publish_not_ready_addresses=values.get_bool("publish-not-ready-addresses"),
            disable_network_policy=values.get_bool("disable-network-policy"),
            inject_hosts_env=values.get_bool("inject-hosts-env"),
        )

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        spec = pod.setdefault("spec", {})
        spec["hostname"] = spec.get("hostname") or name_of(pod)
        spec["subdomain"] = spec.get("subdomain") or name_of(job)
        cm_name = config_map_name(job)
        if self.inject_hosts_env:
            env = [
                {"name": name, "valueFrom": {"configMapKeyRef": {"name": cm_name, "key": name}}}
                for task in job_tasks(job)
                for name in (f"VC_{env_key(task['name'])}_HOSTS", f"VC_{env_key(task['name'])}_NUM")
            ]
            for container in containers(pod):
                append_env(container, *env)
        add_volume(
            pod,
            {"name": cm_name, "configMap": {"name": cm_name}},
            {"name": cm_name, "mountPath": CONFIG_MAP_MOUNT_PATH},
        )

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        objects = [
            self._hosts(job),
            ManagedObject(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": owned_metadata(job, name_of(job)),
                    "spec": {
                        "clusterIP": "None",
                        "selector": job_selector(job),
                        "publishNotReadyAddresses": self.publish_not_ready_addresses,
                    },
                },
                ApplyPolicy.CREATE,
            ),
        ]
        if not self.disable_network_policy:
            objects.append(ManagedObject(self._network_policy(job), ApplyPolicy.CREATE))
        return objects

    def on_job_update(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        """The hosts ConfigMap only: the Service and NetworkPolicy select by job name and do not change."""
        return [self._hosts(job)]

    @staticmethod
    def _hosts(job: Mapping[str, Any]) -> ManagedObject:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": owned_metadata(job, config_map_name(job)),
            "data": hosts_data(job),
        }
        return ManagedObject(body, ApplyPolicy.REPLACE)

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        namespace = job_namespace(job)
        refs = [
            ObjectRef("v1", "ConfigMap", namespace, config_map_name(job)),
            ObjectRef("v1", "Service", namespace, name_of(job)),
        ]
        if not self.disable_network_policy:
            refs.append(ObjectRef("networking.k8s.io/v1", "NetworkPolicy", namespace, name_of(job)))
        return refs

    @staticmethod
    def _network_policy(job: Mapping[str, Any]) -> JSON:
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": owned_metadata(job, name_of(job)),
            "spec": {
                "podSelector": {"matchLabels": job_selector(job)},
                "ingress": [{"from": [{"podSelector": {"matchLabels": job_selector(job)}}]}],
                "policyTypes": ["Ingress"],
            },
        }
