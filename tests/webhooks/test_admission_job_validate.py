"""Job validation on create and update: every rejection names the field and the fix, word for word."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from admission_builders import job, queue, snapshot, task

from volcano_py.webhooks.common import denial
from volcano_py.webhooks.job import job_warnings, validate_job_create, validate_job_update

QUEUES = snapshot(
    queue("closed", state="Closed"),
    queue("closing", state="Closing"),
    queue("fresh", state=None),
    queue("fresh-child", state=None, parent="fresh-parent"),
    queue("fresh-parent", state=None),
    queue("shut-parent", state="Closed"),
    queue("orphan-of-shut", state=None, parent="shut-parent"),
    queue("org"),
    queue("team", parent="org"),
)


def _create(body: dict[str, Any]) -> list[str]:
    return [str(problem) for problem in validate_job_create(body, QUEUES)]


def test_a_valid_job_is_admitted() -> None:
    assert _create(job()) == []


def test_a_valid_job_in_a_leaf_queue_is_admitted() -> None:
    assert _create(job(queue="team")) == []


@pytest.mark.parametrize("name", ["fresh", "fresh-child"])
def test_a_queue_the_controller_has_not_opened_yet_admits_jobs(name: str) -> None:
    # One `kubectl apply -f` of a Queue (and its parent) and a Job in it: the controller opens the queue next.
    assert _create(job(queue=name)) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            job(tasks=[task("w"), task("w")]),
            "spec.tasks[1].name: duplicated task name w; also used by spec.tasks[0] (give each task a "
            "unique name)",
            id="duplicate-task-names",
        ),
        pytest.param(
            job(minAvailable=5),
            "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; 5 is "
            "greater than the sum of task replicas 2 (lower minAvailable to at most 2 or add replicas)",
            id="job-min-available-above-replicas",
        ),
        pytest.param(
            job(tasks=[task("w", 2, minAvailable=3)]),
            "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: w, job: job1; 3 "
            "is greater than replicas 2 (lower minAvailable to at most 2 or raise replicas)",
            id="task-min-available-above-replicas",
        ),
        pytest.param(
            job(tasks=[]),
            "spec.tasks: No task specified in job spec; add at least one task",
            id="no-tasks",
        ),
        pytest.param(
            job(policies=[{"event": "PodFailed", "exitCode": 1, "action": "RestartJob"}]),
            "spec.policies[0]: must not specify event and exitCode simultaneously; keep one of event and "
            "exitCode: a policy reacts to events or to an exit code",
            id="policy-event-and-exit-code",
        ),
        pytest.param(
            job(policies=[{"exitCode": 0, "action": "RestartJob"}]),
            "spec.policies[0].exitCode: 0 is not a valid error code; 0 means success (use a non-zero exit "
            "code)",
            id="policy-exit-code-zero",
        ),
        pytest.param(
            job(
                policies=[
                    {"event": "PodFailed", "action": "RestartJob"},
                    {"event": "PodFailed", "action": "AbortJob"},
                ]
            ),
            "spec.policies[1].event: duplicate policy event found; event 'PodFailed' is already handled by "
            "spec.policies[0] (keep one policy per event)",
            id="policy-duplicate-event",
        ),
        pytest.param(
            job(plugins={"horovod": []}),
            "spec.plugins.horovod: unable to find job plugin: horovod; use one of env, svc, ssh, mpi, "
            "pytorch, tensorflow, hcclrank, ray",
            id="unknown-plugin",
        ),
        pytest.param(
            job(plugins={"svc": ["--disable-network-policy=maybe"]}),
            "spec.plugins.svc[0]: --disable-network-policy takes true or false, not 'maybe'",
            id="bad-plugin-boolean",
        ),
        pytest.param(
            job(plugins={"mpi": []}),
            "spec.plugins.mpi: The specified mpi master task was not found; the MPI master task 'master' is "
            "not among the tasks ['worker'] (name a task after it or pass --master=<task>)",
            id="mpi-without-master",
        ),
        pytest.param(
            job(plugins={"ray": []}),
            "spec.tasks: the ray plugin's head task 'head' was not found; add a task with that name or pass "
            "--head=<task name>",
            id="ray-without-head",
        ),
        pytest.param(
            job(queue="nope"),
            'spec.queue: unable to find job queue: queue.scheduling.volcano.sh "nope" not found; create it '
            "first, or use an existing queue: 'closed', 'closing', 'default', 'fresh', 'fresh-child'",
            id="missing-queue",
        ),
        pytest.param(
            job(queue="closed"),
            "spec.queue: can only submit job to queue with state `Open`, queue `closed` status is `Closed`; "
            "queue 'closed' is Closed; jobs can only be submitted to an Open queue (open it with 'vcctl "
            "queue operate -n closed -a open', or use another queue)",
            id="closed-queue",
        ),
        pytest.param(
            job(queue="closing"),
            "spec.queue: can only submit job to queue with state `Open`, queue `closing` status is "
            "`Closing`; queue 'closing' is Closing; jobs can only be submitted to an Open queue (open it "
            "with 'vcctl queue operate -n closing -a open', or use another queue)",
            id="closing-queue",
        ),
        pytest.param(
            job(queue="orphan-of-shut"),
            "spec.queue: can only submit job to queue with state `Open`, queue `orphan-of-shut` status is "
            "`Closing`; queue 'orphan-of-shut' is being closed with its ancestor 'shut-parent'; jobs can "
            "only be submitted to an Open queue (open 'shut-parent' with 'vcctl queue operate -n "
            "shut-parent -a open', or use another queue)",
            id="new-queue-under-a-closed-parent",
        ),
        pytest.param(
            job(queue="org"),
            "spec.queue: can only submit job to leaf queue, queue `org` has 1 child queues; queue 'org' has "
            "child queues (team); jobs go to leaf queues (submit to 'team' or another queue without "
            "children)",
            id="parent-queue",
        ),
        pytest.param(
            job(queue="root"),
            "spec.queue: can not submit job to root queue; use a leaf queue",
            id="root-queue",
        ),
        pytest.param(
            job(tasks=[task("Worker_1")]),
            "spec.tasks[0].name: 'Worker_1' is not a DNS-1123 label (use lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, e.g. 'worker-0')",
            id="task-name-not-dns",
        ),
    ],
)
def test_create_is_rejected_with_the_field_and_fix(body: dict[str, Any], expected: str) -> None:
    assert _create(body) == [expected]


def _gpu_task(limits: dict[str, str]) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "resources": {"limits": limits}}
    return task("w", template={"spec": {"containers": [container]}})


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        pytest.param(
            {"nvidia.com/gpu": "1", "volcano.sh/gpu-memory": "4000"},
            "spec.tasks[0].template.spec.containers[0].resources.limits.volcano.sh/gpu-memory: asks for a "
            "shared GPU while spec.tasks[0].template.spec.containers[0].resources.limits.nvidia.com/gpu asks "
            "for whole GPUs (nvidia.com/gpu); a pod gets either whole GPUs or a share of one "
            "(drop one of them)",
            id="whole-and-shared",
        ),
        pytest.param(
            {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-cores": "150"},
            "spec.tasks[0].template.spec.containers[0].resources.limits.volcano.sh/vgpu-cores: '150' is a "
            "percentage of one GPU (use at most 100)",
            id="vgpu-cores-over-100",
        ),
    ],
)
def test_gpu_requests_that_cannot_be_placed_are_refused(limits: dict[str, str], expected: str) -> None:
    assert _create(job(tasks=[_gpu_task(limits)], minAvailable=1)) == [expected]


def test_a_shared_gpu_job_is_admitted() -> None:
    assert _create(job(tasks=[_gpu_task({"volcano.sh/gpu-memory": "4000"})], minAvailable=1)) == []


def test_every_problem_is_reported_in_one_denial() -> None:
    body = job(queue="closed", minAvailable=9, plugins={"nope": []})
    assert denial(validate_job_create(body, QUEUES)) == (
        "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; 9 is "
        "greater than the sum of task replicas 2 (lower minAvailable to at most 2 or add replicas); "
        "spec.plugins.nope: unable to find job plugin: nope; use one of env, svc, ssh, mpi, pytorch, "
        "tensorflow, hcclrank, ray; spec.queue: can only submit job to queue with state `Open`, queue "
        "`closed` status is `Closed`; queue 'closed' is Closed; jobs can only be submitted to an Open queue "
        "(open it with 'vcctl queue operate -n closed -a open', or use another queue)"
    )


def test_an_argument_volcano_does_not_read_is_admitted_with_a_warning() -> None:
    # Volcano's e2e suite submits svc [--enable-networking]: its svc plugin has no such flag, and admits it.
    body = job(
        plugins={"svc": ["--publish-not-ready-addresses", "--enable-networking", "--inject-hosts-env=0"]}
    )
    assert _create(body) == []
    assert job_warnings(body) == [
        "spec.plugins.svc[1]: plugin svc has no argument '--enable-networking', so it has no effect: as in "
        "Volcano, the plugin stops reading its arguments there and ignores '--enable-networking', "
        "'--inject-hosts-env=0' (arguments it takes: --publish-not-ready-addresses, "
        "--disable-network-policy, --inject-hosts-env)"
    ]
    assert job_warnings(job(plugins={"svc": ["--disable-network-policy"], "env": []})) == []


def test_malformed_job_names_the_field() -> None:
    body = job(tasks=[task("w", "two")])  # type: ignore[arg-type]
    assert _create(body) == ["spec.tasks[0].replicas: 'two' is not an integer (write a whole number)"]


# --- update -------------------------------------------------------------------------------------------------


def _updated(**changes: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    old = job(tasks=[task("ps", 1), task("worker", 2)], minAvailable=3)
    new = copy.deepcopy(old)
    new["spec"].update(changes)
    return old, new


def _update(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return [str(problem) for problem in validate_job_update(old, new)]


def test_scaling_replicas_and_min_available_is_allowed() -> None:
    old, new = _updated(minAvailable=4)
    new["spec"]["tasks"][1]["replicas"] = 3
    new["spec"]["tasks"][1]["minAvailable"] = 3
    assert _update(old, new) == []


def test_metadata_only_update_is_allowed_even_for_a_job_that_would_now_fail() -> None:
    old = job(minAvailable=99)
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["kopf.zalando.org/KopfFinalizerMarker"]
    assert _update(old, new) == []


def test_adding_a_task_is_rejected() -> None:
    old, new = _updated()
    new["spec"]["tasks"].append(task("eval", 1))
    assert _update(old, new) == [
        "spec.tasks: job updates may not add or remove tasks; had 2, now 3; "
        "delete the Job and create it again with the new spec"
    ]


def test_changing_the_queue_is_rejected() -> None:
    old, new = _updated(queue="team")
    assert _update(old, new) == [
        "spec.queue: job updates may not change fields other than `minAvailable`, `tasks[*].replicas under "
        "spec` and `PriorityClassName`; the queue cannot change from 'default' to 'team' on an existing "
        "job; delete the Job and create it in the new queue"
    ]


def test_changing_a_task_template_is_rejected() -> None:
    old, new = _updated()
    new["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] = "python:3.12"
    assert _update(old, new) == [
        "spec.tasks[0].template: job updates may not change fields other than `minAvailable`, "
        "`tasks[*].replicas under spec` and `PriorityClassName`; this field cannot change on an existing "
        "job (only replicas and minAvailable of a task can); delete the Job and create it again with the "
        "new spec"
    ]


def test_changing_plugins_is_rejected() -> None:
    old, new = _updated(plugins={"env": []})
    assert _update(old, new) == [
        "spec.plugins: job updates may not change fields other than `minAvailable`, `tasks[*].replicas "
        "under spec` and `PriorityClassName`; this field cannot change on an existing job (only "
        "minAvailable, tasks[*].replicas, tasks[*].minAvailable and priorityClassName can); delete the Job "
        "and create it again with the new spec"
    ]


def test_scaling_below_min_available_is_rejected() -> None:
    old, new = _updated()
    new["spec"]["tasks"][1]["replicas"] = 1
    assert _update(old, new) == [
        "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; 3 is "
        "greater than the sum of task replicas 2 (lower minAvailable to at most 2 or add replicas)"
    ]


def test_controller_filling_in_a_claim_name_is_allowed() -> None:
    old, new = _updated(volumes=[{"mountPath": "/data", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}}])
    old["spec"]["volumes"] = copy.deepcopy(new["spec"]["volumes"])
    new["spec"]["volumes"][0]["volumeClaimName"] = "job1-pvc-abc"
    assert _update(old, new) == []
