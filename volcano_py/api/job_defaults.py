"""Volcano's defaults for a Job, in one place: what its mutating webhook writes on create (``mutate_job.go``).

:func:`with_job_defaults` is read by every path a Job takes: the webhook's patch is the difference it makes,
the controller resolves a Job through it (a Job stored while the webhook was away runs as the same Job
admitted through it), and ``volcano-py validate`` and vcctl show it. It never raises: a field of the wrong
shape is left as written, for validation to name it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from volcano_py.api import constants as c
from volcano_py.api.batch import DEFAULT_MAX_RETRY

# The plugins a framework plugin relies on (Volcano's ``patchDefaultPlugins``).
NEEDS_SVC: Final = frozenset({"tensorflow", "mpi", "pytorch", "ray"})
NEEDS_SSH: Final = frozenset({"mpi"})


def with_default_plugins(plugins: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """Add the plugins the named frameworks rely on: svc for tensorflow/mpi/pytorch/ray, ssh for mpi."""
    result = {name: list(args) for name, args in plugins.items()}
    if NEEDS_SVC & result.keys():
        result.setdefault("svc", [])
    if NEEDS_SSH & result.keys():
        result.setdefault("ssh", [])
    return result


def default_task_name(index: int) -> str:
    """An unnamed task's name: ``default0``, ``default1``, ... by its place in ``spec.tasks``."""
    return f"{c.DEFAULT_TASK_SPEC}{index}"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _task_min_available(task: Mapping[str, Any]) -> int | None:
    partition = task.get("partitionPolicy")
    if isinstance(partition, Mapping) and (_count(partition.get("minPartitions")) or 0) > 0:
        # A task split into partitions needs its minimum number of whole partitions.
        size = _count(partition.get("partitionSize"))
        return None if size is None else int(partition["minPartitions"]) * size
    # Replicas left out are 0 (the CRD has no default for them).
    return _count(task.get("replicas", 0))


def _default_task(task: dict[str, Any], index: int) -> None:
    if not task.get("name"):
        task["name"] = default_task_name(index)
    template = task.get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(pod_spec, dict) and pod_spec.get("hostNetwork") and not pod_spec.get("dnsPolicy"):
        # Without it a host-network pod cannot resolve the Job's other pods by their Service names.
        pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if task.get("minAvailable") is None and (min_available := _task_min_available(task)) is not None:
        task["minAvailable"] = min_available
    if not task.get("maxRetry"):
        task["maxRetry"] = DEFAULT_MAX_RETRY


def with_job_defaults(body: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the Job ``body`` with Volcano's defaults written in: queue ``default``, schedulerName
    ``volcano``, maxRetry 3 (the Job's and each task's, where 0 or absent), an unnamed task ``default<i>``,
    a task's minAvailable its replicas (or ``minPartitions`` x ``partitionSize``), the Job's minAvailable the
    tasks' sum (where 0 or absent), ``ClusterFirstWithHostNet`` for a host-network pod without a dnsPolicy,
    svc for the framework plugins and ssh for mpi."""
    out = dict(body)
    raw_spec = body.get("spec")
    if raw_spec is not None and not isinstance(raw_spec, Mapping):
        return out  # no mapping: validation says so
    spec = copy.deepcopy(dict(raw_spec or {}))
    out["spec"] = spec
    if not spec.get("queue"):
        spec["queue"] = c.DEFAULT_QUEUE
    if not spec.get("schedulerName"):
        spec["schedulerName"] = c.SCHEDULER_NAME
    if not spec.get("maxRetry"):
        spec["maxRetry"] = DEFAULT_MAX_RETRY
    tasks = spec.get("tasks")
    counts: list[int | None] = []
    if isinstance(tasks, list):
        for index, task in enumerate(tasks):
            if isinstance(task, dict):
                _default_task(task, index)
            counts.append(_count(task.get("minAvailable")) if isinstance(task, dict) else None)
    if not spec.get("minAvailable") and all(count is not None for count in counts):
        spec["minAvailable"] = sum(count or 0 for count in counts)
    plugins = spec.get("plugins")
    if isinstance(plugins, Mapping) and all(isinstance(args, list) for args in plugins.values()):
        spec["plugins"] = with_default_plugins(plugins)
    return out
