"""Job admission: Volcano's defaults on create, and the checks that need the cluster or the previous version.

Every rule that can be decided from the Job alone lives in ``volcano_py.api.job_rules`` (``volcano-py
validate`` runs the same ones); plugin arguments are checked by the plugin registry that will run them. Here:
the queue (exists, Open, a leaf) and what an update may change (replicas and minAvailable, not the tasks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api import constants
from volcano_py.api.batch import Job
from volcano_py.api.bodies.job import job_spec, job_tasks, job_written_spec
from volcano_py.api.job_defaults import with_job_defaults
from volcano_py.api.messages import (
    VOLCANO_JOB_LEAF_QUEUE,
    VOLCANO_JOB_QUEUE_MISSING,
    VOLCANO_JOB_QUEUE_NOT_OPEN,
    VOLCANO_PODGROUP_QUEUE_MISSING,
    VOLCANO_PODGROUP_QUEUE_NOT_OPEN,
    VOLCANO_UPDATE_FIELDS,
    VOLCANO_UPDATE_TASKS,
    volcano_said,
)
from volcano_py.api.problems import Problem, join_path
from volcano_py.api.queue_hierarchy import admission_state, closed_ancestor, written_state
from volcano_py.api.scheduling import QueueState
from volcano_py.api.validation import parse_object, unknown_fields, validate_job
from volcano_py.jobplugins import argument_problems, argument_warnings
from volcano_py.webhooks.common import Queues, children
from volcano_py.webhooks.patch import PatchOp

# Tells a field left out from one written as null.
_ABSENT: Final = object()
# What Volcano lets an update change: scaling and the priority class.
MUTABLE_SPEC: Final = frozenset({"minAvailable", "priorityClassName"})
MUTABLE_TASK: Final = frozenset({"replicas", "minAvailable"})
_SCALING_PATH: Final = re.compile(
    r"^spec\.(minAvailable|priorityClassName|tasks\[\d+\]\.(replicas|minAvailable|partitionPolicy))"
)


def mutate_job(job: Mapping[str, Any]) -> list[PatchOp]:
    """Volcano's defaults for a new Job (``api.job_defaults``), as JSON Patch operations (empty when nothing
    is missing).

    Never raises: a malformed field is left as it is, for validation to name it and say how to fix it.
    """
    try:
        written = job_written_spec(job)
    except ValueError:
        return []  # mutation runs before the schema check: leave a spec that is no mapping to validation
    spec: Mapping[str, Any] = written or {}
    wanted = job_spec(with_job_defaults(job))
    ops: list[PatchOp] = []
    if written is None:
        ops.append(PatchOp("add", "/spec", {}))
    for key in ("queue", "schedulerName", "maxRetry", "tasks", "minAvailable", "plugins"):
        if key in wanted and wanted[key] != spec.get(key, _ABSENT):
            ops.append(PatchOp("replace" if key in spec else "add", f"/spec/{key}", wanted[key]))
    return ops


def queue_problems(queue_name: str, queues: Queues, *, kind: str = "jobs") -> list[Problem]:
    """The submitting queue must exist, be Open and be a leaf of the hierarchy."""
    queue = queues.get(queue_name)
    jobs = kind == "jobs"
    if queue is None:
        known = ", ".join(repr(name) for name in sorted(queues)[:5]) or "none yet"
        missing = VOLCANO_JOB_QUEUE_MISSING if jobs else VOLCANO_PODGROUP_QUEUE_MISSING
        return [
            Problem(
                "spec.queue",
                volcano_said(
                    missing.format(queue=queue_name),
                    f"create it first, or use an existing queue: {known}",
                ),
            )
        ]
    problems: list[Problem] = []
    state = admission_state(queues, queue_name)
    if state != QueueState.OPEN:
        if written_state(queue):
            why = f"queue {queue_name!r} is {state}"
            fix = f"open it with 'vcctl queue operate -n {queue_name} -a open'"
        else:
            ancestor = closed_ancestor(queues, queue_name)
            why = f"queue {queue_name!r} is being closed with its ancestor {ancestor!r}"
            fix = f"open {ancestor!r} with 'vcctl queue operate -n {ancestor} -a open'"
        not_open = VOLCANO_JOB_QUEUE_NOT_OPEN if jobs else VOLCANO_PODGROUP_QUEUE_NOT_OPEN
        problems.append(
            Problem(
                "spec.queue",
                volcano_said(
                    not_open.format(queue=queue_name, state=state),
                    f"{why}; {kind} can only be submitted to an Open queue ({fix}, or use another queue)",
                ),
            )
        )
    kids = children(queues, queue_name)
    if kids and queue_name != constants.ROOT_QUEUE:
        problems.append(
            Problem(
                "spec.queue",
                volcano_said(
                    # Volcano refuses a Job in a parent queue; a PodGroup there is our refusal alone.
                    VOLCANO_JOB_LEAF_QUEUE.format(queue=queue_name, count=len(kids)) if jobs else "",
                    f"queue {queue_name!r} has child queues ({', '.join(kids)}); {kind} go to leaf queues "
                    f"(submit to {kids[0]!r} or another queue without children)",
                ),
            )
        )
    return problems


def validate_job_create(job: Mapping[str, Any], queues: Queues) -> list[Problem]:
    model, problems = parse_object(job)
    if not isinstance(model, Job):
        return problems
    # What ``volcano-py validate`` checks, then what needs the plugins and the cluster.
    problems = unknown_fields(model) + validate_job(model)
    problems += [Problem(err.field, err.message) for err in argument_problems(job)]
    if model.spec.queue != constants.ROOT_QUEUE:  # the rules already refused root
        problems += queue_problems(model.spec.queue, queues)
    return problems


def job_warnings(job: Mapping[str, Any]) -> list[str]:
    """What an admitted Job should know: plugin arguments its plugins will not read (Volcano admits them)."""
    return argument_warnings(job)


def _masked_task(task: Any) -> Any:
    if not isinstance(task, Mapping):
        return task
    return {key: value for key, value in task.items() if key not in MUTABLE_TASK}


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _masked_volumes(volumes: list[Any]) -> list[Any]:
    # The controller writes the generated PVC name into a volume that asked for a new claim.
    return [
        {k: v for k, v in volume.items() if not (k == "volumeClaimName" and volume.get("volumeClaim"))}
        if isinstance(volume, dict)
        else volume
        for volume in volumes
    ]


def update_problems(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Problem]:
    """What changed in ``spec`` that Volcano does not let an existing Job change."""
    old_spec, new_spec = job_spec(old), job_spec(new)
    fix = "delete the Job and create it again with the new spec"
    problems: list[Problem] = []
    old_tasks, new_tasks = job_tasks(old), job_tasks(new)
    if len(old_tasks) != len(new_tasks):
        problems.append(
            Problem(
                "spec.tasks",
                volcano_said(VOLCANO_UPDATE_TASKS, f"had {len(old_tasks)}, now {len(new_tasks)}; {fix}"),
            )
        )
    else:
        for i, (old_task, new_task) in enumerate(zip(old_tasks, new_tasks, strict=True)):
            before, after = _masked_task(old_task), _masked_task(new_task)
            if not (isinstance(before, Mapping) and isinstance(after, Mapping)):
                if before != after:
                    problems.append(
                        Problem(
                            join_path("spec", "tasks", i),
                            volcano_said(VOLCANO_UPDATE_FIELDS, f"the task cannot change; {fix}"),
                        )
                    )
                continue
            for key in sorted(before.keys() | after.keys(), key=str):
                if before.get(key) != after.get(key):
                    problems.append(
                        Problem(
                            join_path("spec", "tasks", i, str(key)),
                            volcano_said(
                                VOLCANO_UPDATE_FIELDS,
                                "this field cannot change on an existing job (only replicas and minAvailable "
                                f"of a task can); {fix}",
                            ),
                        )
                    )
    if old_spec.get("queue") != new_spec.get("queue"):
        problems.append(
            Problem(
                "spec.queue",
                volcano_said(
                    VOLCANO_UPDATE_FIELDS,
                    f"the queue cannot change from {old_spec.get('queue')!r} to {new_spec.get('queue')!r} on "
                    "an existing job; delete the Job and create it in the new queue",
                ),
            )
        )
    for key in sorted((old_spec.keys() | new_spec.keys()) - MUTABLE_SPEC - {"tasks", "queue"}, key=str):
        before, after = old_spec.get(key), new_spec.get(key)
        if key == "volumes":
            before, after = _masked_volumes(_items(before)), _masked_volumes(_items(after))
        if before != after:
            problems.append(
                Problem(
                    join_path("spec", str(key)),
                    volcano_said(
                        VOLCANO_UPDATE_FIELDS,
                        "this field cannot change on an existing job (only minAvailable, tasks[*].replicas, "
                        f"tasks[*].minAvailable and priorityClassName can); {fix}",
                    ),
                )
            )
    return problems


def validate_job_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Problem]:
    if job_spec(old) == job_spec(new):
        # Metadata and status updates (finalizers, labels) pass: refusing them would wedge the controllers.
        return []
    problems = update_problems(old, new)
    if problems:
        return problems
    model, problems = parse_object(new)
    if not isinstance(model, Job):
        return problems
    # Only what an update may change is re-checked: the rest was admitted at create time, and the controller
    # fills in fields (a generated claim name) that the create-time rules would refuse from a user.
    return [problem for problem in validate_job(model) if _SCALING_PATH.match(problem.path)]
