"""pytorch: the environment ``torch.distributed`` reads with ``init_method="env://"``.

Every container gets ``MASTER_ADDR`` (pod 0 of the master task), ``MASTER_PORT``, ``WORLD_SIZE`` (master plus
worker replicas) and, in master and worker pods, ``RANK``: 0 for the master, ``index + 1`` for worker
``index`` (Volcano's numbering, which assumes one master). Containers declare the port as
``pytorchjob-port``. Arguments (Volcano's): ``--master`` (``master``), ``--worker`` (``worker``), ``--port``
(23456), ``--wait-master-enabled`` (false; adds an init container to workers that waits until the master's
port answers), ``--wait-master-timeout`` (300 seconds), ``--wait-master-image`` (``busybox:1.36.1``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.api.bodies.job import task_replicas
from volcano_py.jobplugins.flags import Flag, parse_flags, port_flag
from volcano_py.jobplugins.helpers import (
    append_env,
    containers,
    find_task,
    first_host,
    open_port,
)
from volcano_py.jobplugins.types import JSON, JobPluginError, ManagedObject, ObjectRef

PORT_NAME = "pytorchjob-port"
WAIT_CONTAINER = "wait-for-master"
FLAGS = (
    Flag("master", "master"),
    Flag("worker", "worker"),
    Flag("port", 23456),
    Flag("wait-master-enabled", False),
    Flag("wait-master-timeout", 300),
    Flag("wait-master-image", "busybox:1.36.1"),
)


def wait_for_master_script(host: str, port: int, timeout: int) -> str:
    """A POSIX shell loop polling ``host:port`` every 2 s; exits 1 after ``timeout`` seconds."""
    return (
        f"deadline=$(( $(date +%s) + {timeout} ))\n"
        f"until nc -z {host} {port} 2>/dev/null; do\n"
        f'  if [ "$(date +%s)" -ge "$deadline" ]; then\n'
        f'    echo "master {host}:{port} did not open within {timeout}s"; exit 1\n'
        f"  fi\n"
        f"  sleep 2\n"
        f"done\n"
        f'echo "master {host}:{port} is up"\n'
    )


@dataclass(frozen=True, slots=True)
class PytorchPlugin:
    master: str = "master"
    worker: str = "worker"
    port: int = 23456
    wait_master_enabled: bool = False
    wait_master_timeout: int = 300
    wait_master_image: str = "busybox:1.36.1"
    name: str = "pytorch"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> PytorchPlugin:
        values = parse_flags("pytorch", FLAGS, args)
        timeout = values.get_int("wait-master-timeout")
        if timeout <= 0:
            raise JobPluginError(
                "spec.plugins.pytorch", f"--wait-master-timeout={timeout} must be > 0 seconds"
            )
        return cls(
            values.get_str("master"),
            values.get_str("worker"),
            port_flag("pytorch", values, "port"),
            values.get_bool("wait-master-enabled"),
            timeout,
            values.get_str("wait-master-image"),
        )

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        master = find_task(job, self.master)
        if master is None:
            # Admission refuses such a Job; one created around the webhook runs without rendezvous env.
            return
        master_addr = first_host(job, master)
        world_size = sum(
            task_replicas(task) for task in (master, find_task(job, self.worker)) if task is not None
        )
        rank: int | None = None
        if task_name == self.worker:
            rank = index + 1
            if self.wait_master_enabled:
                self._add_wait_container(pod, master_addr)
        elif task_name == self.master:
            rank = 0
        for container in containers(pod, init=False):
            open_port(container, PORT_NAME, self.port)
            append_env(
                container,
                {"name": "MASTER_ADDR", "value": master_addr},
                {"name": "MASTER_PORT", "value": str(self.port)},
                {"name": "WORLD_SIZE", "value": str(world_size)},
            )
            if rank is not None:
                append_env(container, {"name": "RANK", "value": str(rank)})

    def _add_wait_container(self, pod: JSON, master_addr: str) -> None:
        init: list[JSON] = pod.setdefault("spec", {}).setdefault("initContainers", [])
        if any(container.get("name") == WAIT_CONTAINER for container in init):
            return
        script = wait_for_master_script(master_addr, self.port, self.wait_master_timeout)
        init.append(
            {"name": WAIT_CONTAINER, "image": self.wait_master_image, "command": ["sh", "-c", script]}
        )

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        return []

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return []
