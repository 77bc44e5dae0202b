"""Turn a :class:`~volcano_py.controllers.job.state.Step` and the observed pods into a plan of writes.

The plan says which pods to create (by task and index), which to delete, whether to drop the PodGroup, and the
status the Job should have once those writes succeed. The shell carries it out and writes the status only if
it differs from the current one, so running the same plan twice is harmless.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from volcano_py.api.batch import JobStatus
from volcano_py.api.job_view import ResolvedJob, ResolvedTask
from volcano_py.api.scheduling import PodGroupPhase
from volcano_py.controllers.job.podview import FAILED, PENDING, RUNNING, SUCCEEDED, PodView
from volcano_py.controllers.job.state import Op, Step, Target
from volcano_py.controllers.job.status import CountBuilder, transition

# PodGroup phases in which the scheduler has admitted the group, so its pods may be created.
ADMITTED_PODGROUP_PHASES = frozenset(
    {PodGroupPhase.INQUEUE, PodGroupPhase.RUNNING, PodGroupPhase.UNKNOWN, PodGroupPhase.COMPLETED}
)


@dataclass(frozen=True, slots=True)
class Plan:
    create: tuple[tuple[str, int], ...] = ()  # (task name, index)
    delete: tuple[str, ...] = ()  # pod names; the shell marks them out-of-sync first
    delete_podgroup: bool = False
    status: JobStatus = field(default_factory=JobStatus)
    phase_changed: bool = False
    waiting_on_dependencies: tuple[str, ...] = ()  # tasks whose pods wait for dependsOn


def pod_name(job: str, task: str, index: int) -> str:
    return f"{job}-{task}-{index}"


def dependencies_ready(spec: ResolvedJob, task: ResolvedTask, pods: Iterable[PodView]) -> bool:
    """Volcano's dependsOn: each dependency task has ``minAvailable`` pods running-and-ready or succeeded."""
    if not task.depends_on:
        return True
    ready: dict[str, int] = {}
    for pod in pods:
        if not pod.deleting and (pod.phase == SUCCEEDED or (pod.phase == RUNNING and pod.ready)):
            ready[pod.task] = ready.get(pod.task, 0) + 1

    def one_ready(name: str) -> bool:
        dep = spec.task(name)
        return dep is not None and ready.get(name, 0) >= dep.min_available

    names = task.depends_on
    if task.depends_on_any and len(names) > 1:
        return any(one_ready(n) for n in names)
    return all(one_ready(n) for n in names)


def _finish(
    spec: ResolvedJob, before: JobStatus, after: JobStatus, step: Step, now: str
) -> tuple[JobStatus, bool]:
    change = step.rule(spec, after) if step.rule else None
    if change is None:
        return after, False
    if change.retry:
        after = after.model_copy(update={"retry_count": after.retry_count + 1})
    if change.phase == before.state.phase and not change.retry:
        return after, False
    return transition(after, change.phase, now, reason=after.state.reason or ""), True


def plan_sync(
    spec: ResolvedJob,
    status: JobStatus,
    pods: Sequence[PodView],
    podgroup_phase: str | None,
    step: Step,
    now: str,
) -> Plan:
    """Volcano's SyncJob: pods only once the PodGroup is admitted; counts from what exists or is created."""
    base = status.model_copy(update={"min_available": spec.min_available})
    if podgroup_phase is None or podgroup_phase in ("", PodGroupPhase.PENDING):
        # Not admitted yet: counts stay as observed last time, only the phase rule runs.
        new_status, changed = _finish(spec, status, base, step, now)
        return Plan(status=new_status, phase_changed=changed)

    by_name: dict[str, PodView] = {p.name: p for p in pods}
    builder = CountBuilder()
    create: list[tuple[str, int]] = []
    delete: list[str] = []
    waiting: list[str] = []
    for task in spec.tasks:
        ready = dependencies_ready(spec, task, pods)
        for index in range(task.replicas):
            pod = by_name.pop(pod_name(spec.name, task.name, index), None)
            if pod is None:
                if ready:
                    create.append((task.name, index))
                    builder.add_phase(task.name, PENDING)
                elif task.name not in waiting:
                    waiting.append(task.name)
                continue
            if pod.deleting:
                builder.add_terminating()
            elif pod.out_of_sync or (pod.phase == FAILED and pod.disrupted):
                # Out-of-sync pods were being killed; disrupted ones are replaced, not counted as failures.
                delete.append(pod.name)
                builder.add_terminating()
            else:
                builder.add(pod)
    for pod in by_name.values():  # beyond the replicas (scale down) or of a task that no longer exists
        builder.add_terminating()
        if not pod.deleting:
            delete.append(pod.name)
    after = builder.apply(base)
    new_status, changed = _finish(spec, status, after, step, now)
    return Plan(tuple(create), tuple(delete), False, new_status, changed, tuple(waiting))


def _targeted(target: Target | None, pod: PodView) -> bool:
    if target is None or pod.task != target.task:
        return False
    if target.partition is not None:
        return pod.partition == target.partition
    return not target.pod or pod.name == target.pod


def plan_kill(spec: ResolvedJob, status: JobStatus, pods: Sequence[PodView], step: Step, now: str) -> Plan:
    """Volcano's KillJob / KillTarget: delete pods (keeping ``step.retain`` phases), recount, apply the rule.

    On the last retry Volcano keeps finished pods even for a hard kill, so their logs survive the failure.
    """
    retain = step.retain
    if step.op is Op.KILL_JOB and status.retry_count >= spec.max_retry - 1:
        retain = retain | {SUCCEEDED, FAILED}
    builder = CountBuilder()
    delete: list[str] = []
    for pod in pods:
        if pod.deleting:
            builder.add_terminating()
            continue
        hit = _targeted(step.target, pod) if step.op is Op.KILL_TARGET else pod.phase not in retain
        if hit:
            delete.append(pod.name)
            builder.add_terminating()
        else:
            builder.add(pod)
    partition = step.target.partition if step.op is Op.KILL_TARGET and step.target else None
    if partition is not None and not delete:
        # Volcano leaves the Job as it is when the partition has no pod (or the task no partitions).
        return Plan(status=status)
    after = builder.apply(status)
    new_status, changed = _finish(spec, status, after, step, now)
    # A kill of the whole job starts a new generation of pods: events from older pods are then stale.
    if step.op is Op.KILL_JOB and (delete or changed):
        new_status = new_status.model_copy(update={"version": status.version + 1})
    return Plan((), tuple(delete), step.op is Op.KILL_JOB, new_status, changed)


def plan_step(
    spec: ResolvedJob,
    status: JobStatus,
    pods: Sequence[PodView],
    podgroup_phase: str | None,
    step: Step,
    now: str,
) -> Plan:
    if step.op is Op.SYNC:
        return plan_sync(spec, status, pods, podgroup_phase, step, now)
    return plan_kill(spec, status, pods, step, now)


def task_pods(pods: Iterable[PodView]) -> Mapping[str, list[PodView]]:
    out: dict[str, list[PodView]] = {}
    for pod in pods:
        out.setdefault(pod.task, []).append(pod)
    return out
