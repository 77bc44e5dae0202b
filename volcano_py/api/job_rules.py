"""The checks Volcano's job admission (webhook + ValidatingAdmissionPolicy) makes, as pure functions.

Each rule reports every problem it finds (Volcano stops at the first), with the field path and the fix.
Checks that need the cluster (does the queue exist, is it open, is it a leaf) belong to the webhook; here is
everything that can be decided from the object alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from volcano_py.api import constants
from volcano_py.api.batch import Job, NumaPolicy, TaskSpec
from volcano_py.api.common import dns1123_label_problem, dns1123_subdomain_problem
from volcano_py.api.job_defaults import default_task_name
from volcano_py.api.job_policies import check_policies
from volcano_py.api.kube_names import metadata_problems
from volcano_py.api.messages import (
    VOLCANO_BOTH_CLAIMS,
    VOLCANO_CLAIM_NAME,
    VOLCANO_CPU_NOT_INTEGER,
    VOLCANO_DUPLICATED_MOUNT_PATH,
    VOLCANO_DUPLICATED_TASK_NAME,
    VOLCANO_JOB_MIN_AVAILABLE,
    VOLCANO_JOB_NAME,
    VOLCANO_MPI_MASTER,
    VOLCANO_NO_CLAIM,
    VOLCANO_NO_TASK,
    VOLCANO_NOT_DAG,
    VOLCANO_PARTITION_MIN_AVAILABLE,
    VOLCANO_PARTITION_REPLICAS,
    VOLCANO_POD_NAME,
    VOLCANO_ROOT_QUEUE_JOB,
    VOLCANO_TASK_MIN_AVAILABLE,
    VOLCANO_UNKNOWN_PLUGIN,
    volcano_said,
)
from volcano_py.api.podspec import check_pod_spec
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.rules import check_network_topology, object_name_problems
from volcano_py.resources import QuantityError, parse_quantity

# Job plugins the Job controller knows (Volcano's controller plugin registry).
JOB_PLUGINS: Final = ("env", "svc", "ssh", "mpi", "pytorch", "tensorflow", "hcclrank", "ray")
MPI_DEFAULT_MASTER: Final = "master"


def task_name(task: TaskSpec, index: int) -> str:
    """The name a task has after admission: an unnamed task is called ``default<index>``, as in Volcano."""
    return task.name or default_task_name(index)


def validate_job(job: Job) -> list[Problem]:
    # Volcano names pods and Services after the job, so it must also fit in a 63-character label.
    problems = [
        Problem(p.path, volcano_said(VOLCANO_JOB_NAME.format(job=job.metadata.name), p.message))
        if job.metadata.name
        else p
        for p in object_name_problems(job.metadata, max_length=63)
    ]
    spec = job.spec
    if not spec.tasks:
        problems.append(Problem("spec.tasks", volcano_said(VOLCANO_NO_TASK, "add at least one task")))
    seen: dict[str, int] = {}
    for i, task in enumerate(spec.tasks):
        here = join_path("spec", "tasks", i)
        name = task_name(task, i)
        if task.name and (msg := dns1123_label_problem(task.name)):
            problems.append(Problem(join_path(here, "name"), msg))
        if name in seen:
            problems.append(
                Problem(
                    join_path(here, "name"),
                    volcano_said(
                        VOLCANO_DUPLICATED_TASK_NAME.format(task=name),
                        f"also used by spec.tasks[{seen[name]}] (give each task a unique name)",
                    ),
                )
            )
        else:
            seen[name] = i
        problems += _check_task(job, task, i, here)
    total = spec.total_replicas()
    if spec.tasks and spec.min_available > total:
        problems.append(
            Problem(
                "spec.minAvailable",
                volcano_said(
                    VOLCANO_JOB_MIN_AVAILABLE,
                    f"{spec.min_available} is greater than the sum of task replicas {total} "
                    f"(lower minAvailable to at most {total} or add replicas)",
                ),
            )
        )
    if spec.tasks and spec.min_success is not None and spec.min_success > total:
        # Volcano admits it; such a Job could only ever fail.
        problems.append(
            Problem(
                "spec.minSuccess",
                f"{spec.min_success} is greater than the sum of task replicas {total} "
                f"(lower minSuccess to at most {total} or add replicas)",
            )
        )
    problems += check_policies(spec.policies, "spec.policies")
    problems += _check_plugins(job)
    problems += _check_volumes(job)
    problems += check_network_topology(spec.network_topology, "spec.networkTopology")
    if spec.queue == constants.ROOT_QUEUE:
        problems.append(Problem("spec.queue", volcano_said(VOLCANO_ROOT_QUEUE_JOB, "use a leaf queue")))
    problems += _check_dependencies(spec.tasks)
    return problems


def _check_task(job: Job, task: TaskSpec, index: int, here: str) -> list[Problem]:
    problems: list[Problem] = []
    if task.min_available is not None and task.min_available > task.replicas:
        problems.append(
            Problem(
                join_path(here, "minAvailable"),
                volcano_said(
                    VOLCANO_TASK_MIN_AVAILABLE.format(task=task_name(task, index), job=job.metadata.name),
                    f"{task.min_available} is greater than replicas {task.replicas} "
                    f"(lower minAvailable to at most {task.replicas} or raise replicas)",
                ),
            )
        )
    problems += check_policies(task.policies, join_path(here, "policies"))
    if job.metadata.name and task.replicas > 0:
        # Pods are named <job>-<task>-<index>; the longest index decides.
        pod_name = f"{job.metadata.name}-{task_name(task, index)}-{task.replicas - 1}"
        if len(pod_name) > 63:
            problems.append(
                Problem(
                    join_path(here, "name"),
                    volcano_said(
                        VOLCANO_POD_NAME.format(pod=pod_name),
                        "the pod name would be longer than 63 characters (shorten the job or task name)",
                    ),
                )
            )
    problems += metadata_problems(task.template.get("metadata"), join_path(here, "template", "metadata"))
    template_spec = task.template.get("spec")
    if template_spec is None:
        problems.append(
            Problem(join_path(here, "template", "spec"), "is required (add the pod spec with its containers)")
        )
    else:
        problems += check_pod_spec(template_spec, join_path(here, "template", "spec"))
        problems += _check_numa_cpus(task, index, here)
    problems += _check_partition_policy(job, task, index, here)
    return problems


def _check_numa_cpus(task: TaskSpec, index: int, here: str) -> list[Problem]:
    # A NUMA topology policy pins whole CPUs, so every container must request a whole number of them.
    if task.topology_policy in (None, NumaPolicy.NONE):
        return []
    problems: list[Problem] = []
    spec = task.pod_spec
    # Volcano numbers containers and then init containers in one sequence.
    position = -1
    for field in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(field) or []):
            position += 1
            if not isinstance(container, dict):
                continue
            resources = container.get("resources") or {}
            cpu = (resources.get("requests") or {}).get("cpu", (resources.get("limits") or {}).get("cpu"))
            try:
                whole = cpu is not None and parse_quantity(cpu).denominator == 1 and parse_quantity(cpu) > 0
            except QuantityError:
                continue  # reported by the pod-spec check
            if not whole:
                problems.append(
                    Problem(
                        join_path(here, "template", "spec", field, i, "resources", "requests", "cpu"),
                        volcano_said(
                            VOLCANO_CPU_NOT_INTEGER.format(task=index, container=position),
                            f"must be a whole number of CPUs with topologyPolicy "
                            f"{task.topology_policy.value!r} (request e.g. '2', not {cpu!r})",
                        ),
                    )
                )
    return problems


def _check_partition_policy(job: Job, task: TaskSpec, index: int, here: str) -> list[Problem]:
    policy = task.partition_policy
    if policy is None:
        return []
    path = join_path(here, "partitionPolicy")
    problems: list[Problem] = []
    names = {"task": task_name(task, index), "job": job.metadata.name}
    product = policy.total_partitions * policy.partition_size
    if task.replicas != product:
        problems.append(
            Problem(
                path,
                volcano_said(
                    VOLCANO_PARTITION_REPLICAS.format(**names),
                    f"totalPartitions x partitionSize = {product} but replicas is {task.replicas} "
                    "(make replicas equal to totalPartitions x partitionSize)",
                ),
            )
        )
    if task.min_available is not None and policy.min_partitions > 0:
        wanted = policy.min_partitions * policy.partition_size
        if task.min_available != wanted:
            problems.append(
                Problem(
                    join_path(here, "minAvailable"),
                    volcano_said(
                        VOLCANO_PARTITION_MIN_AVAILABLE.format(**names),
                        f"{task.min_available} differs from minPartitions x partitionSize = {wanted} "
                        f"(set minAvailable to {wanted} or drop it)",
                    ),
                )
            )
    problems += check_network_topology(policy.network_topology, join_path(path, "networkTopology"))
    return problems


def _check_plugins(job: Job) -> list[Problem]:
    problems = [
        Problem(
            join_path("spec", "plugins", name),
            volcano_said(VOLCANO_UNKNOWN_PLUGIN.format(plugin=name), f"use one of {', '.join(JOB_PLUGINS)}"),
        )
        for name in job.spec.plugins
        if name not in JOB_PLUGINS
    ]
    if "mpi" in job.spec.plugins:
        master = MPI_DEFAULT_MASTER
        for arg in job.spec.plugins["mpi"]:
            if arg.startswith("--master="):
                master = arg.split("=", 1)[1]
        names = [task_name(t, i) for i, t in enumerate(job.spec.tasks)]
        if master not in names:
            problems.append(
                Problem(
                    "spec.plugins.mpi",
                    volcano_said(
                        VOLCANO_MPI_MASTER,
                        f"the MPI master task {master!r} is not among the tasks {names} "
                        "(name a task after it or pass --master=<task>)",
                    ),
                )
            )
    return problems


def _check_volumes(job: Job) -> list[Problem]:
    problems: list[Problem] = []
    mount_paths: dict[str, int] = {}
    for i, volume in enumerate(job.spec.volumes):
        here = join_path("spec", "volumes", i)
        if volume.mount_path in mount_paths:
            problems.append(
                Problem(
                    join_path(here, "mountPath"),
                    volcano_said(
                        VOLCANO_DUPLICATED_MOUNT_PATH.format(path=volume.mount_path),
                        f"also used by spec.volumes[{mount_paths[volume.mount_path]}] "
                        "(mount each volume at its own path)",
                    ),
                )
            )
        else:
            mount_paths[volume.mount_path] = i
        if volume.volume_claim is None and not volume.volume_claim_name:
            problems.append(
                Problem(
                    here,
                    volcano_said(
                        VOLCANO_NO_CLAIM,
                        "sets neither volumeClaim nor volumeClaimName "
                        "(name an existing PVC or describe a new one)",
                    ),
                )
            )
        elif volume.volume_claim is not None and volume.volume_claim_name:
            problems.append(
                Problem(
                    here,
                    volcano_said(
                        VOLCANO_BOTH_CLAIMS,
                        "sets both volumeClaim and volumeClaimName (use volumeClaimName for an existing PVC, "
                        "volumeClaim to create one)",
                    ),
                )
            )
        elif volume.volume_claim_name and (msg := dns1123_subdomain_problem(volume.volume_claim_name)):
            problems.append(
                Problem(
                    join_path(here, "volumeClaimName"),
                    volcano_said(VOLCANO_CLAIM_NAME.format(name=volume.volume_claim_name), msg),
                )
            )
    return problems


def _check_dependencies(tasks: Sequence[TaskSpec]) -> list[Problem]:
    names = {task_name(t, i): i for i, t in enumerate(tasks)}
    problems: list[Problem] = []
    edges: dict[str, list[str]] = {name: [] for name in names}
    for i, task in enumerate(tasks):
        if task.depends_on is None:
            continue
        for j, dep in enumerate(task.depends_on.name):
            if dep not in names:
                problems.append(
                    Problem(
                        join_path("spec", "tasks", i, "dependsOn", "name", j),
                        f"task {dep!r} does not exist (depend on one of {sorted(names)})",
                    )
                )
            else:
                edges[task_name(task, i)].append(dep)
    cycle = _find_cycle(edges)
    if cycle:
        problems.append(
            Problem(
                "spec.tasks",
                volcano_said(
                    VOLCANO_NOT_DAG,
                    f"dependsOn forms a cycle {' -> '.join(cycle)} (remove one of these dependencies)",
                ),
            )
        )
    return problems


def _find_cycle(edges: dict[str, list[str]]) -> list[str]:
    """One dependency cycle as a list of task names (first repeated at the end), or [] for a DAG."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, []):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in edges:
        if node not in state and (found := visit(node)):
            return found
    return []
