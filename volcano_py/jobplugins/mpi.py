"""mpi: tell the launcher where its workers are and open the ssh port everywhere.

The master task's containers get ``MPI_HOST``, the comma-separated DNS names of the worker task's pods (what
``mpirun --host`` takes); every container declares ``--port`` (default 22, named ``mpijob-port``). Arguments
(Volcano's): ``--master`` (default ``master``), ``--worker`` (default ``worker``), ``--port`` (default 22).
The admission webhook adds the svc and ssh plugins this one relies on, and rejects a Job without its master.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volcano_py.jobplugins.flags import Flag, parse_flags, port_flag
from volcano_py.jobplugins.helpers import append_env, containers, find_task, open_port, task_hosts
from volcano_py.jobplugins.types import JSON, ManagedObject, ObjectRef

MPI_HOST_ENV = "MPI_HOST"
PORT_NAME = "mpijob-port"
FLAGS = (Flag("master", "master"), Flag("worker", "worker"), Flag("port", 22))


@dataclass(frozen=True, slots=True)
class MpiPlugin:
    master: str = "master"
    worker: str = "worker"
    port: int = 22
    name: str = "mpi"

    @classmethod
    def from_args(cls, args: Sequence[str]) -> MpiPlugin:
        values = parse_flags("mpi", FLAGS, args)
        return cls(values.get_str("master"), values.get_str("worker"), port_flag("mpi", values, "port"))

    def on_pod_create(self, job: Mapping[str, Any], pod: JSON, task_name: str, index: int) -> None:
        env: JSON | None = None
        if task_name == self.master:
            worker = find_task(job, self.worker)
            if worker is None:
                # A master without workers runs alone (mpirun on localhost); nothing to point it at.
                return
            env = {"name": MPI_HOST_ENV, "value": ",".join(task_hosts(job, worker))}
        for container in containers(pod):
            open_port(container, PORT_NAME, self.port)
            if env is not None:
                append_env(container, dict(env))

    def on_job_add(self, job: Mapping[str, Any]) -> list[ManagedObject]:
        return []

    def on_job_delete(self, job: Mapping[str, Any]) -> list[ObjectRef]:
        return []
