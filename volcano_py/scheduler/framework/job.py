"""JobInfo: a PodGroup and its pods, with the counters that gang scheduling reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api import constants as k
from volcano_py.api.bodies import podgroup as read
from volcano_py.api.objects import creation_timestamp_of, name_of, namespace_of
from volcano_py.api.queue_charge import queue_of_pod
from volcano_py.api.queue_gate import only_queue_gate
from volcano_py.api.scheduling import PodGroupPhase, SubGroupPolicySpec
from volcano_py.api.subgroups import SubGroupKey, min_sub_groups, parse_policies, sub_group_of, sub_group_size
from volcano_py.resources import QuantityError, Resource, total

from .status import ALLOCATED_STATUSES, VALID_STATUSES, TaskStatus, is_ready_status, parse_podgroup_phase
from .task import TaskInfo

# Statuses counted by ``ready_task_num`` (Volcano's ReadyTaskNum).
_READY = ALLOCATED_STATUSES | {TaskStatus.SUCCEEDED}
_NOTHING = Resource()
# ALLOCATED_STATUSES in the order its frozenset iterates, the order ``tasks_in`` sums them in.
_HELD: Final = tuple(ALLOCATED_STATUSES)


# Equal holdings as one object: per-queue and per-share passes key dicts by a job's holding every session,
# and a key found by identity skips comparing amounts (thousands of alike jobs, 5 lookups each per cycle).
_HOLDINGS: dict[Resource, Resource] = {}
_HOLDINGS_MAX: Final = 4096


def _held(amount: Resource) -> Resource:
    found = _HOLDINGS.get(amount)
    if found is not None:
        return found
    if len(_HOLDINGS) >= _HOLDINGS_MAX:
        _HOLDINGS.clear()  # distinct holdings are few; this bounds a cluster where they are not
    _HOLDINGS[amount] = amount
    return amount


def _sum_requests(tasks: list[TaskInfo]) -> Resource:
    # One task is the common case (a plain pod's job): its request is the sum, and Resources are immutable.
    return tasks[0].resreq if len(tasks) == 1 else total(t.resreq for t in tasks)


@dataclass(slots=True, eq=False)
class JobInfo:
    """One PodGroup (``namespace/name``) and the tasks that name it in ``scheduling.k8s.io/group-name``."""

    uid: str
    namespace: str
    name: str
    queue: str = k.DEFAULT_QUEUE
    min_available: int = 1
    min_task_member: Mapping[str, int] = field(default_factory=dict)
    min_resources: Resource | None = None
    priority: int = 0
    priority_class: str = ""
    phase: PodGroupPhase = PodGroupPhase.PENDING
    created: str = ""
    conditions: tuple[Mapping[str, Any], ...] = ()
    network_topology: Mapping[str, Any] | None = None
    # ``spec.subGroupPolicy``: sub-groups placed all or nothing up to their size, some needed for readiness.
    sub_group_policies: tuple[SubGroupPolicySpec, ...] = ()
    podgroup: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # A job made up for pods that name no PodGroup: one pod, minAvailable 1, in the default queue.
    shadow: bool = False
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    by_status: dict[TaskStatus, dict[str, TaskInfo]] = field(default_factory=dict)
    # Kept in step with ``by_status``: job order asks for readiness on every heap comparison.
    ready_task_num: int = 0
    # Pending tasks held by scheduling gates: valid gang members (as Volcano counts them), never placed.
    gated_task_num: int = 0
    # ``allocated`` as last summed; dropped whenever a task joins or changes status.
    _allocated: Resource | None = field(default=None, repr=False)
    # ``sub_groups()`` as last grouped: membership reads labels only, so only a joining task drops it.
    _sub_groups: dict[SubGroupKey | None, list[TaskInfo]] | None = field(default=None, repr=False)
    # Bumped on every change of the job's tasks or phase, so what was worked out of it can be kept.
    version: int = field(default=0, repr=False)
    # (version, the condition the session gave it) when its PodGroup's status needed no update then.
    settled: tuple[int, object] | None = field(default=None, repr=False)
    # (conditions, what they say of it) for a plugin that reads the same thing of them every session; kept
    # while the conditions are the same tuple.
    said_of_conditions: tuple[object, str] | None = field(default=None, repr=False)

    @classmethod
    def from_podgroup(
        cls, podgroup: Mapping[str, Any], *, priority_classes: Mapping[str, int] | None = None
    ) -> JobInfo:
        namespace = namespace_of(podgroup) or "default"
        name = name_of(podgroup)
        where = f"PodGroup {namespace}/{name}"
        try:
            min_member = read.podgroup_min_member(podgroup)
            min_task_member = read.podgroup_min_task_member(podgroup)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        raw_min_resources = read.podgroup_min_resources(podgroup)
        try:
            # Quota names (pods, count/pods, requests.*, limits.*) ride along in Volcano's minResources; only
            # what pods ask of nodes is weighed, so nothing is counted twice or against a node's pod slots.
            min_resources = (
                Resource.parse(raw_min_resources).without_quota_only() if raw_min_resources else None
            )
        except QuantityError as err:
            raise ValueError(f"{where}: spec.minResources: {err}") from None
        try:
            phase = parse_podgroup_phase(read.podgroup_phase(podgroup))
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        priority_class = read.podgroup_priority_class(podgroup)
        sub_group_policies = parse_policies(read.podgroup_sub_group_policy(podgroup), where)
        return cls(
            uid=f"{namespace}/{name}",
            namespace=namespace,
            name=name,
            queue=read.podgroup_queue(podgroup),
            min_available=min_member,
            min_task_member=min_task_member,
            min_resources=min_resources,
            priority=(priority_classes or {}).get(priority_class, 0),
            priority_class=priority_class,
            phase=phase,
            created=creation_timestamp_of(podgroup),
            conditions=read.podgroup_conditions(podgroup),
            network_topology=read.podgroup_network_topology(podgroup),
            sub_group_policies=sub_group_policies,
            podgroup=podgroup,
        )

    def fresh(self) -> JobInfo:
        """A twin for a new snapshot: the PodGroup's facts shared, phase as read, no tasks yet. Written out
        field by field: ``dataclasses.replace`` cost three times as much, once per job per cycle."""
        twin = _new_job(JobInfo)
        twin.uid = self.uid
        twin.namespace = self.namespace
        twin.name = self.name
        twin.queue = self.queue
        twin.min_available = self.min_available
        twin.min_task_member = self.min_task_member
        twin.min_resources = self.min_resources
        twin.priority = self.priority
        twin.priority_class = self.priority_class
        twin.phase = self.phase
        twin.created = self.created
        twin.conditions = self.conditions
        twin.network_topology = self.network_topology
        twin.sub_group_policies = self.sub_group_policies
        twin.podgroup = self.podgroup
        twin.shadow = self.shadow
        twin.tasks = {}
        twin.by_status = {}
        twin.ready_task_num = 0
        twin.gated_task_num = 0
        twin._allocated = None
        twin._sub_groups = None
        twin.version = 0
        twin.settled = None
        twin.said_of_conditions = None
        return twin

    @classmethod
    def shadow_for(cls, task: TaskInfo) -> JobInfo:
        """The implicit one-pod job of a pod that names no PodGroup; it needs no enqueue. Its queue is the
        one Volcano's PodGroup controller would give the pod's PodGroup (its annotation, else default)."""
        job = _SHADOW.fresh()
        job.queue = queue_of_pod(task.pod, lambda _group: None)
        job.uid = f"{task.namespace}/{task.name}"
        job.namespace = task.namespace
        job.name = task.name
        job.priority = task.priority
        job.priority_class = task.priority_class
        job.created = task.created
        return job

    # --- membership and status index -----------------------------------------------------------------

    def add_task(self, task: TaskInfo) -> None:
        self.version += 1
        self._allocated = None
        self._sub_groups = None
        self.tasks[task.uid] = task
        self.by_status.setdefault(task.status, {})[task.uid] = task
        self.ready_task_num += task.status in _READY
        if task.gated:
            self.gated_task_num += task.status is TaskStatus.PENDING

    def remove_task(self, task: TaskInfo) -> None:
        """Undo ``add_task``, under the status the job counted the task in (a session may have changed the
        task's status without this job hearing of it, when it had set the job aside)."""
        if self.tasks.pop(task.uid, None) is None:
            return
        self.version += 1
        self._allocated = None
        self._sub_groups = None
        status = task.status
        bucket = self.by_status.get(status)
        if bucket is None or bucket.pop(task.uid, None) is None:
            for status, bucket in self.by_status.items():  # noqa: B007 - the status found is used below
                if bucket.pop(task.uid, None) is not None:
                    break
            else:
                return
        if not bucket:
            del self.by_status[status]
        self.ready_task_num -= status in _READY
        if task.gated:
            self.gated_task_num -= status is TaskStatus.PENDING

    def set_status(self, task: TaskInfo, status: TaskStatus) -> None:
        """Move a task to another status, keeping the per-status index exact."""
        self.version += 1
        self._allocated = None
        bucket = self.by_status.get(task.status)
        if bucket is not None:
            bucket.pop(task.uid, None)
        self.ready_task_num += (status in _READY) - (task.status in _READY)
        if task.gated:
            self.gated_task_num += (status is TaskStatus.PENDING) - (task.status is TaskStatus.PENDING)
        task.status = status
        self.by_status.setdefault(status, {})[task.uid] = task

    def count(self, *statuses: TaskStatus) -> int:
        # A loop, not sum(genexpr): asked a few times per job per cycle, for every job in the cluster.
        by_status = self.by_status
        n = 0
        for status in statuses:
            bucket = by_status.get(status)
            if bucket:
                n += len(bucket)
        return n

    def tasks_in(self, *statuses: TaskStatus) -> list[TaskInfo]:
        # Asked several times for every job placed: empty statuses are skipped without a lookup default.
        by_status = self.by_status
        if len(statuses) == 1:
            bucket = by_status.get(statuses[0])
            return list(bucket.values()) if bucket else []
        return [t for s in statuses if (b := by_status.get(s)) for t in b.values()]

    # --- gang counters (Volcano's ReadyTaskNum, WaitingTaskNum, ValidTaskNum) ------------------------------

    @property
    def waiting_task_num(self) -> int:
        return self.count(TaskStatus.PIPELINED)

    @property
    def valid_task_num(self) -> int:
        return self.count(*VALID_STATUSES)

    @property
    def pending_tasks(self) -> list[TaskInfo]:
        """The pending tasks a scheduler may place: all but those held by scheduling gates."""
        tasks = self.tasks_in(TaskStatus.PENDING)
        if self.gated_task_num:
            return [t for t in tasks if not t.gated]
        return tasks

    def _per_role(self, tasks: Iterable[TaskInfo]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in tasks:
            counts[task.role] = counts.get(task.role, 0) + 1
        return counts

    @property
    def role_minimums(self) -> Mapping[str, int]:
        """The per-role minimums gang checks enforce: ``minTaskMember``, or none at all when the job's
        ``minAvailable`` is below their sum. As in Volcano, such a job (a ``dependsOn`` chain, whose later
        tasks' pods do not exist yet) is held only to ``minAvailable``; enforcing every role would wait
        forever for pods the controller creates only after the first ones run."""
        if self.min_available < sum(self.min_task_member.values()):
            return {}
        return self.min_task_member

    def roles_short(
        self, *, include_pipelined: bool = False, include_pending: bool = False
    ) -> dict[str, int]:
        """Per task role with an enforced minimum (``role_minimums``), how many members it lacks."""
        minimums = self.role_minimums
        if not minimums:
            return {}
        counts = self._per_role(
            t
            for t in self.tasks.values()
            if is_ready_status(t.status)
            or (include_pipelined and t.status is TaskStatus.PIPELINED)
            or (include_pending and t.status is TaskStatus.PENDING)
        )
        return {
            role: need - counts.get(role, 0)
            for role, need in sorted(minimums.items())
            if counts.get(role, 0) < need
        }

    def needed_to_be_ready(self, pending: Sequence[TaskInfo]) -> list[TaskInfo]:
        """Of ``pending`` (in task order), the first ones that would make the job ready: each role's
        shortfall of its minimum, then others up to ``minAvailable``. Volcano's allocate stops placing a job
        there and puts it back in line, so every gang gets its minimum before any grows beyond it."""
        chosen: list[TaskInfo] = []
        short = dict(self.roles_short())
        rest: list[TaskInfo] = []
        for task in pending:
            if short.get(task.role, 0) > 0:
                short[task.role] -= 1
                chosen.append(task)
            else:
                rest.append(task)
        wanted = self.min_available - self.ready_task_num - len(chosen)
        if wanted > 0:
            chosen.extend(rest[:wanted])
        picked = {id(t) for t in chosen}
        return [t for t in pending if id(t) in picked]

    def is_ready(self) -> bool:
        """``minAvailable`` (and every ``minTaskMember`` and ``minSubGroups``) met by tasks holding
        resources or done."""
        return (
            self.ready_task_num >= self.min_available
            and not (self.min_task_member and self.roles_short())  # asked of every job at each close
            and not (self.sub_group_policies and self.sub_groups_short())
        )

    def is_pipelined(self) -> bool:
        """Met when counting pipelined tasks too: the gang will start once releasing pods are gone."""
        return (
            self.ready_task_num + self.waiting_task_num >= self.min_available
            and not self.roles_short(include_pipelined=True)
            and not (self.sub_group_policies and self.sub_groups_short(include_pipelined=True))
        )

    # --- sub-groups (spec.subGroupPolicy; Volcano's SubJobs) ------------------------------------------------

    def sub_groups(self) -> dict[SubGroupKey | None, list[TaskInfo]]:
        """The job's tasks by sub-group (None: the default one), sub-groups in policy then partition order.
        Asked on every job comparison of a job with sub-groups: grouped once, statuses read live."""
        if self._sub_groups is not None:
            return self._sub_groups
        groups: dict[SubGroupKey | None, list[TaskInfo]] = {}
        policies = self.sub_group_policies
        for task in self.tasks.values():
            groups.setdefault(sub_group_of(policies, task.labels), []).append(task)
        self._sub_groups = dict(
            sorted(groups.items(), key=lambda kv: (1, (0, ())) if kv[0] is None else (0, kv[0].order()))
        )
        return self._sub_groups

    def sub_group_size(self, key: SubGroupKey | None) -> int:
        """Pods the sub-group places all or nothing; the default sub-group's pods go one by one."""
        return 1 if key is None else sub_group_size(self.sub_group_policies[key.policy])

    def sub_group_ready(
        self, key: SubGroupKey | None, members: Sequence[TaskInfo], *, include_pipelined: bool = False
    ) -> bool:
        """Its size met by members holding resources or done (pipelined ones too when asked)."""
        return self.sub_group_missing(key, members, include_pipelined=include_pipelined) == 0

    def sub_group_missing(
        self, key: SubGroupKey | None, members: Sequence[TaskInfo], *, include_pipelined: bool = True
    ) -> int:
        """Pods the sub-group still needs placed to be ready: a pending best-effort pod counts as placed, as
        it needs nothing (Volcano's ReadyTaskNum + PendingBestEffortTaskNum)."""
        held = sum(
            1
            for t in members
            if t.status in _READY
            or (include_pipelined and t.status is TaskStatus.PIPELINED)
            or (t.status is TaskStatus.PENDING and t.best_effort)
        )
        return max(self.sub_group_size(key) - held, 0)

    def sub_groups_short(self, *, include_pipelined: bool = False) -> dict[int, tuple[int, int]]:
        """Per policy with ``minSubGroups`` it does not meet: (ready sub-groups, minSubGroups)."""
        needs = {i: min_sub_groups(p) for i, p in enumerate(self.sub_group_policies) if min_sub_groups(p)}
        if not needs:
            return {}
        ready = dict.fromkeys(needs, 0)
        for key, members in self.sub_groups().items():
            if key is not None and key.policy in needs:
                ready[key.policy] += self.sub_group_ready(key, members, include_pipelined=include_pipelined)
        return {i: (ready[i], need) for i, need in needs.items() if ready[i] < need}

    def sub_groups_missing(self) -> dict[int, tuple[int, int]]:
        """Per policy whose pods form fewer sub-groups than its ``minSubGroups``: (count, minSubGroups)."""
        counts: dict[int, int] = {}
        for key in self.sub_groups():
            if key is not None:
                counts[key.policy] = counts.get(key.policy, 0) + 1
        return {
            i: (counts.get(i, 0), min_sub_groups(p))
            for i, p in enumerate(self.sub_group_policies)
            if counts.get(i, 0) < min_sub_groups(p)
        }

    def sub_group_size_of(self, policy: int) -> int:
        return sub_group_size(self.sub_group_policies[policy])

    def policy_name(self, index: int) -> str:
        name = self.sub_group_policies[index].name
        return f"spec.subGroupPolicy[{index}]" + (f" ({name!r})" if name else "")

    def is_starving(self) -> bool:
        return self.ready_task_num + self.waiting_task_num < self.min_available

    @property
    def allocated(self) -> Resource:
        """Requests of tasks holding resources (allocated, binding, bound, running)."""
        if self._allocated is None:
            held: list[TaskInfo] = []
            by_status = self.by_status
            for status in _HELD:  # a loop, not any(genexpr): asked for every job of every session
                bucket = by_status.get(status)
                if bucket:
                    held.extend(bucket.values())
            self._allocated = _held(_sum_requests(held)) if held else _NOTHING
        return self._allocated

    @property
    def min_request(self) -> Resource:
        """What the job needs to start, for enqueue: ``spec.minResources``, or nothing when unset."""
        return self.min_resources if self.min_resources is not None else Resource()

    @property
    def pending_request(self) -> Resource:
        bucket = self.by_status.get(TaskStatus.PENDING)
        return _sum_requests(list(bucket.values())) if bucket else _NOTHING

    def deduct_gated(self, amount: Resource) -> Resource:
        """``amount`` less what the job's gate-held pods ask (Volcano's ``DeductSchGatedResources``): a gang
        whose pods wait behind ``spec.schedulingGates`` holds no queue room for them, so other jobs get in.
        Pods held only by Volcano's own queue-allocation gate wait for that very room, so they still count."""
        if not self.gated_task_num:
            return amount
        held = [t for t in self.tasks_in(TaskStatus.PENDING) if t.gated and not only_queue_gate(t.pod)]
        return (amount - _sum_requests(held)).clamp_min_zero() if held else amount


_new_job = object.__new__
# What every shadow job starts from: one pod, minAvailable 1, the default queue, no enqueue.
_SHADOW: Final = JobInfo(uid="", namespace="", name="", phase=PodGroupPhase.INQUEUE, shadow=True)
