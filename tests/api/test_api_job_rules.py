"""Each of Volcano's job admission rules, with the exact message a user sees."""

from __future__ import annotations

from typing import Any

import pytest
from api_builders import make_job, pod_template

from volcano_py.api.validation import validate_object


def problems(doc: dict[str, Any]) -> list[str]:
    return [str(p) for p in validate_object(doc)]


def test_a_valid_gang_job_has_no_problems() -> None:
    job = make_job("train").task("master", 1).task("worker", 4).min_available(5).obj()
    assert problems(job) == []


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        pytest.param(
            make_job().task("worker", 1).task("worker", 2).obj(),
            "spec.tasks[1].name: duplicated task name worker; also used by spec.tasks[0] (give each task a "
            "unique name)",
            id="duplicate-task-name",
        ),
        pytest.param(
            make_job().task(None, 1).task("default0", 1).obj(),
            "spec.tasks[1].name: duplicated task name default0; also used by spec.tasks[0] (give each task "
            "a unique name)",
            id="duplicate-of-defaulted-name",
        ),
        pytest.param(
            make_job().task("a", 2).task("b", 1).min_available(4).obj(),
            "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; 4 is "
            "greater than the sum of task replicas 3 (lower minAvailable to at most 3 or add replicas)",
            id="min-available-over-replicas",
        ),
        pytest.param(
            make_job().task("a", 2, minAvailable=3).obj(),
            "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: a, job: job; 3 "
            "is greater than replicas 2 (lower minAvailable to at most 2 or raise replicas)",
            id="task-min-available-over-replicas",
        ),
        pytest.param(
            make_job().task("Worker_1", 1).obj(),
            "spec.tasks[0].name: 'Worker_1' is not a DNS-1123 label (use lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, e.g. 'worker-0')",
            id="task-name-not-dns1123",
        ),
        pytest.param(
            make_job().task("w", 1).policy(event="PodFailed", exitCode=3, action="RestartJob").obj(),
            "spec.policies[0]: must not specify event and exitCode simultaneously; keep one of event and "
            "exitCode: a policy reacts to events or to an exit code",
            id="event-and-exit-code",
        ),
        pytest.param(
            make_job()
            .task("w", 1, policies=[{"events": ["PodFailed"], "exitCode": 3, "action": "RestartTask"}])
            .obj(),
            "spec.tasks[0].policies[0]: must not specify event and exitCode simultaneously; keep one of "
            "event and exitCode: a policy reacts to events or to an exit code",
            id="task-events-and-exit-code",
        ),
        pytest.param(
            make_job().task("w", 1).policy(action="RestartJob").obj(),
            "spec.policies[0]: either event and exitCode should be specified; add one, e.g. 'event: "
            "PodFailed' or 'exitCode: 1'",
            id="neither-event-nor-exit-code",
        ),
        pytest.param(
            make_job().task("w", 1).policy(event="OutOfSync", action="RestartJob").obj(),
            "spec.policies[0].event: invalid policy event; 'OutOfSync' is raised internally and cannot be "
            "used in a policy (use one of *, PodFailed, PodEvicted, PodPending, Unknown, TaskCompleted, "
            "TaskFailed, JobUpdated)",
            id="internal-event",
        ),
        pytest.param(
            make_job().task("w", 1).policy(event="PodFailed", action="SyncJob").obj(),
            "spec.policies[0].action: invalid policy action; 'SyncJob' is used internally and cannot be "
            "used in a policy (use one of AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, "
            "TerminateJob, CompleteJob, ResumeJob)",
            id="internal-action",
        ),
        pytest.param(
            make_job().task("w", 1).policy(event="PodFailed").obj(),
            "spec.policies[0].action: is required with an event (use one of "
            "AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, "
            "CompleteJob, ResumeJob)",
            id="missing-action",
        ),
        pytest.param(
            make_job()
            .task("w", 1)
            .policy(event="PodFailed", action="RestartJob")
            .policy(events=["PodFailed"], action="AbortJob")
            .obj(),
            "spec.policies[1].events: duplicate policy event found; event 'PodFailed' is already handled by "
            "spec.policies[0] (keep one policy per event)",
            id="duplicate-event",
        ),
        pytest.param(
            make_job().task("w", 1).policy(exitCode=0, action="RestartJob").obj(),
            "spec.policies[0].exitCode: 0 is not a valid error code; 0 means success (use a non-zero exit "
            "code)",
            id="exit-code-zero",
        ),
        pytest.param(
            make_job()
            .task("w", 1)
            .policy(exitCode=3, action="RestartJob")
            .policy(exitCode=3, action="AbortJob")
            .obj(),
            "spec.policies[1].exitCode: duplicate exitCode 3; already handled by spec.policies[0] (keep one "
            "policy per exit code)",
            id="duplicate-exit-code",
        ),
        pytest.param(
            make_job()
            .task("w", 1)
            .policy(event="*", action="AbortJob")
            .policy(event="PodEvicted", action="RestartJob")
            .obj(),
            "spec.policies[0].event: if there's * here, no other policy should be here; '*' matches every "
            "event, so no other event policy may be listed (remove the other event policies or '*')",
            id="star-with-others",
        ),
        pytest.param(
            {**make_job().obj(), "spec": {"tasks": []}},
            "spec.tasks: No task specified in job spec; add at least one task",
            id="no-tasks",
        ),
        pytest.param(
            {**make_job().obj(), "spec": {}},
            "spec.tasks: No task specified in job spec; add at least one task",
            id="tasks-absent",
        ),
        pytest.param(
            make_job("a" * 60).task("worker", 10).obj(),
            "spec.tasks[0].name: create pod with name "
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-worker-9 validate failed; the pod "
            "name would be longer than 63 characters (shorten the job or task name)",
            id="pod-name-too-long",
        ),
        pytest.param(
            make_job("Bad_Name").task("w", 1).obj(),
            "metadata.name: create job with name Bad_Name validate failed; 'Bad_Name' is not a DNS-1123 "
            "subdomain (use lower-case letters, digits, '-' and '.', starting and ending with a letter or "
            "digit)",
            id="job-name",
        ),
        pytest.param(
            make_job().task("w", 1).set(plugins={"svc": [], "horovod": []}).obj(),
            "spec.plugins.horovod: unable to find job plugin: horovod; use one of env, svc, ssh, mpi, "
            "pytorch, tensorflow, hcclrank, ray",
            id="unknown-plugin",
        ),
        pytest.param(
            make_job().task("launcher", 1).task("worker", 2).set(plugins={"mpi": ["--port=22"]}).obj(),
            "spec.plugins.mpi: The specified mpi master task was not found; the MPI master task 'master' is "
            "not among the tasks ['launcher', 'worker'] (name a task after it or pass --master=<task>)",
            id="mpi-master-missing",
        ),
        pytest.param(
            make_job().task("w", 1).set(queue="root").obj(),
            "spec.queue: can not submit job to root queue; use a leaf queue",
            id="root-queue",
        ),
        pytest.param(
            make_job()
            .task("w", 1)
            .set(networkTopology={"highestTierAllowed": 1, "highestTierName": "rack"})
            .obj(),
            "spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in "
            "networkTopology simultaneously; sets both highestTierAllowed and highestTierName (keep one: "
            "they are two ways to say the same limit)",
            id="network-topology-both",
        ),
        pytest.param(
            make_job().task("w", 1).set(volumes=[{"mountPath": "/data"}]).obj(),
            "spec.volumes[0]: either VolumeClaim or VolumeClaimName must be specified; sets neither "
            "volumeClaim nor volumeClaimName (name an existing PVC or describe a new one)",
            id="volume-without-claim",
        ),
        pytest.param(
            make_job()
            .task("w", 1)
            .set(
                volumes=[
                    {"mountPath": "/d", "volumeClaimName": "a"},
                    {"mountPath": "/d", "volumeClaimName": "b"},
                ]
            )
            .obj(),
            "spec.volumes[1].mountPath: duplicated mountPath: /d; also used by spec.volumes[0] (mount each "
            "volume at its own path)",
            id="duplicate-mount-path",
        ),
        pytest.param(
            make_job().task("a", 1, dependsOn={"name": ["b"]}).task("b", 1, dependsOn={"name": ["a"]}).obj(),
            "spec.tasks: job has dependencies between tasks, but doesn't form a directed acyclic "
            "graph(DAG); dependsOn forms a cycle a -> b -> a (remove one of these dependencies)",
            id="dependency-cycle",
        ),
        pytest.param(
            make_job().task("a", 1, dependsOn={"name": ["ghost"]}).obj(),
            "spec.tasks[0].dependsOn.name[0]: task 'ghost' does not exist (depend on one of ['a'])",
            id="unknown-dependency",
        ),
        pytest.param(
            make_job().task("a", 4, partitionPolicy={"totalPartitions": 3, "partitionSize": 2}).obj(),
            "spec.tasks[0].partitionPolicy: 'Replicas' are not equal to TotalPartitions*PartitionSize in "
            "task: a, job: job; totalPartitions x partitionSize = 6 but replicas is 4 (make replicas equal "
            "to totalPartitions x partitionSize)",
            id="partition-product",
        ),
        pytest.param(
            make_job()
            .task("a", 1, topologyPolicy="single-numa-node", template=pod_template(cpu="1500m"))
            .obj(),
            "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: the cpu request isn't an "
            "integer in spec.task[0] container[0]; must be a whole number of CPUs with topologyPolicy "
            "'single-numa-node' (request e.g. '2', not '1500m')",
            id="numa-fractional-cpu",
        ),
        pytest.param(
            make_job().task("a", 1, template={"metadata": {"labels": {"a": "b"}}}).obj(),
            "spec.tasks[0].template.spec: is required (add the pod spec with its containers)",
            id="template-without-spec",
        ),
        pytest.param(
            make_job().task("a", 1, replica=2).obj(),
            "spec.tasks[0].replica: unknown field (remove it or fix the spelling; did you mean 'replicas'?)",
            id="misspelt-field",
        ),
        pytest.param(
            make_job().task("a", 1, maxRetry=-1).obj(),
            "spec.tasks[0].maxRetry: -1 is too small (use a value >= 0)",
            id="negative-max-retry",
        ),
        pytest.param(
            make_job().task("a", 1).policy(event="PodCrashed", action="RestartJob").obj(),
            # Only what a user may write is offered: no internal event (PodRunning, OutOfSync, ...).
            "spec.policies[0].event: invalid policy event; 'PodCrashed' is not a policy event (use one of *, "
            "PodFailed, PodEvicted, PodPending, Unknown, TaskCompleted, TaskFailed, JobUpdated)",
            id="unknown-event",
        ),
        pytest.param(
            make_job().task("a", 1).policy(event="PodFailed", action="RestartJob", timeout="5 minutes").obj(),
            "spec.policies[0].timeout: '5 minutes' is not a duration (write it like '30s', '10m' or '1h30m')",
            id="bad-timeout",
        ),
        pytest.param(
            make_job().task("a", 2**31).obj(),
            "spec.tasks[0].replicas: 2147483648 does not fit in a 32-bit integer "
            "(use a value from -2147483648 to 2147483647)",
            id="replicas-beyond-int32",
        ),
        pytest.param(
            make_job().task("a", "two").obj(),  # type: ignore[arg-type]
            "spec.tasks[0].replicas: 'two' is not an integer (write a whole number)",
            id="replicas-not-integer",
        ),
    ],
)
def test_rule(job: dict[str, Any], expected: str) -> None:
    assert expected in problems(job)


def test_every_problem_is_reported_not_just_the_first() -> None:
    job = (
        make_job()
        .task("w", 1)
        .task("w", 1)
        .min_available(5)
        .policy(event="PodFailed", exitCode=1, action="RestartJob")
        .obj()
    )
    assert [p.split(":")[0] for p in problems(job)] == [
        "spec.tasks[1].name",
        "spec.minAvailable",
        "spec.policies[0]",
    ]


def test_unnamed_tasks_get_volcanos_default_names() -> None:
    job = make_job().task(None, 1).task(None, 1).set(plugins={"mpi": ["--master=default1"]}).obj()
    assert problems(job) == []
