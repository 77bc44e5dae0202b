"""What every plugin reads from a Job and writes into a pod: names, DNS names, containers, env, ports, owners.

A Job's pod ``i`` of task ``t`` is named ``<job>-<t>-<i>`` and, unless its template sets ``hostname`` or
``subdomain``, is reachable as ``<job>-<t>-<i>.<job>`` through the headless Service the svc plugin creates.
These are Volcano's conventions; frameworks' launchers depend on them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from volcano_py.api import constants
from volcano_py.api.bodies.job import job_tasks, task_name, task_pod_spec, task_replicas
from volcano_py.api.objects import name_of, namespace_of, uid_of
from volcano_py.jobplugins.types import JSON


def job_namespace(job: Mapping[str, Any]) -> str:
    return namespace_of(job) or "default"


def find_task(job: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    return next((task for task in job_tasks(job) if task_name(task) == name), None)


def pod_name(job: str, task: str, index: int) -> str:
    return f"{job}-{task}-{index}"


def task_hosts(job: Mapping[str, Any], task: Mapping[str, Any]) -> list[str]:
    """The DNS names of a task's pods; one name when the template pins ``hostname`` (all pods share it)."""
    spec = task_pod_spec(task)
    hostname, subdomain = spec.get("hostname") or "", spec.get("subdomain") or name_of(job)
    if hostname:
        return [f"{hostname}.{subdomain}"] if task_replicas(task) > 0 else []
    return [f"{pod_name(name_of(job), task_name(task), i)}.{subdomain}" for i in range(task_replicas(task))]


def task_host_names(job: Mapping[str, Any], task: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(short name, FQDN under the subdomain)`` per pod, as an ssh config lists them."""
    return [(host.split(".", 1)[0], host) for host in task_hosts(job, task)]


def domain_name(job: Mapping[str, Any], task: Mapping[str, Any], index: int) -> str:
    """The DNS name of pod ``index`` of ``task`` (the template's hostname/subdomain win when set)."""
    spec = task_pod_spec(task)
    hostname = spec.get("hostname") or pod_name(name_of(job), task_name(task), index)
    return f"{hostname}.{spec.get('subdomain') or name_of(job)}"


def first_host(job: Mapping[str, Any], task: Mapping[str, Any]) -> str:
    """The DNS name of pod 0 of ``task``: where a master or head listens."""
    return domain_name(job, task, 0)


def env_key(task_name: str) -> str:
    """``worker-a`` -> ``WORKER_A``: a task name as it appears inside an environment variable name."""
    return task_name.replace("-", "_").upper()


def containers(pod: JSON, *, init: bool = True) -> Iterator[JSON]:
    spec = pod.setdefault("spec", {})
    yield from spec.get("containers") or []
    if init:
        yield from spec.get("initContainers") or []


def append_env(container: JSON, *env: JSON) -> None:
    container.setdefault("env", []).extend(env)


def open_port(container: JSON, name: str, port: int) -> None:
    """Declare ``port`` on the container unless some port entry already uses that number."""
    ports: list[JSON] = container.setdefault("ports", [])
    if not any(entry.get("containerPort") == port for entry in ports):
        ports.append({"name": name, "containerPort": port})


def add_volume(pod: JSON, volume: JSON, mount: JSON) -> None:
    """Add a pod volume and mount it into every container and init container, once."""
    spec = pod.setdefault("spec", {})
    volumes: list[JSON] = spec.setdefault("volumes", [])
    if not any(existing.get("name") == volume["name"] for existing in volumes):
        volumes.append(volume)
    for container in containers(pod):
        mounts: list[JSON] = container.setdefault("volumeMounts", [])
        if not any(existing.get("mountPath") == mount["mountPath"] for existing in mounts):
            mounts.append(dict(mount))


def owner_reference(job: Mapping[str, Any]) -> JSON:
    """A controller reference to the Job, so the garbage collector removes the object with the Job."""
    return {
        "apiVersion": constants.BATCH_API_VERSION,
        "kind": constants.JOB_KIND,
        "name": name_of(job),
        "uid": uid_of(job),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owned_metadata(job: Mapping[str, Any], name: str) -> JSON:
    return {
        "name": name,
        "namespace": job_namespace(job),
        "labels": {constants.JOB_NAME_KEY: name_of(job), constants.JOB_NAMESPACE_KEY: job_namespace(job)},
        "ownerReferences": [owner_reference(job)],
    }


def job_selector(job: Mapping[str, Any]) -> dict[str, str]:
    """Labels the Job controller puts on every pod of the Job."""
    return {constants.JOB_NAME_KEY: name_of(job), constants.JOB_NAMESPACE_KEY: job_namespace(job)}
