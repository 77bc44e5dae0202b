"""Admission against the real API server: our Kopf webhook server runs in-process, kubectl sees its answers.

The webhook configurations carry an objectSelector on a per-run label, so only this module's objects go
through them and other tests sharing the session cluster never depend on this server.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from admission_harness import AdmissionServer, free_port, serving_admission

from volcano_py.devcluster import DevCluster

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
LABEL = {"volcano-py.test/admission": RUN}


@pytest.fixture(scope="module")
def admission(cluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdmissionServer]:
    with serving_admission(cluster, tmp_path_factory.mktemp("webhook-certs"), LABEL) as server:
        _ensure_open_queue(cluster, "default", labelled=False)
        yield server


# --- helpers ------------------------------------------------------------------------------------------------


def _labelled(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("metadata", {}).setdefault("labels", {}).update(LABEL)
    return obj


def _create(cluster: DevCluster, obj: dict[str, Any]) -> tuple[int, str]:
    done = cluster.kubectl("create", "-f", "-", input=json.dumps(_labelled(obj)), check=False)
    return done.returncode, done.stderr.strip()


def _get(cluster: DevCluster, *args: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)
    return body


def _ensure_open_queue(cluster: DevCluster, name: str, *, labelled: bool = True, **spec: Any) -> None:
    exists = cluster.kubectl("get", "queue", name, check=False).returncode == 0
    if not exists:
        queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
        queue["spec"] = spec
        body = json.dumps(_labelled(queue) if labelled else queue)
        cluster.kubectl("create", "-f", "-", input=body)
    state = _get(cluster, "queue", name).get("status", {}).get("state")
    if state != "Open":
        _set_queue_state(cluster, name, "Open")


def _set_queue_state(cluster: DevCluster, name: str, state: str) -> None:
    patch = json.dumps({"status": {"state": state}})
    cluster.kubectl("patch", "queue", name, "--subresource=status", "--type=merge", "-p", patch)


def _job(
    name: str, namespace: str, *, tasks: list[dict[str, Any]] | None = None, **spec: Any
) -> dict[str, Any]:
    task = {
        "name": "worker",
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"tasks": tasks if tasks is not None else [task], **spec},
    }


def _denied(hook: str, message: str) -> str:
    return f'admission webhook "{hook}" denied the request: {message}'


# --- Job: defaults ------------------------------------------------------------------------------------------


def test_job_gets_volcano_defaults(cluster: DevCluster, namespace: str, admission: AdmissionServer) -> None:
    unnamed = {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
    code, err = _create(cluster, _job("defaults", namespace, tasks=[unnamed], plugins={"pytorch": []}))
    assert code == 0, err
    spec = _get(cluster, "vcjob", "defaults", "-n", namespace)["spec"]
    assert spec["queue"] == "default"
    assert spec["schedulerName"] == "volcano"
    assert spec["maxRetry"] == 3
    assert spec["minAvailable"] == 2
    assert spec["tasks"][0]["name"] == "default0"
    assert spec["tasks"][0]["minAvailable"] == 2
    assert spec["plugins"] == {"pytorch": [], "svc": []}


def test_svc_argument_volcano_does_not_read_is_admitted_with_a_warning(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    # Volcano's e2e "Should not override existing plugins": svc [--enable-networking] admitted and kept.
    plugins = {"tensorflow": [], "svc": ["--enable-networking"]}
    code, err = _create(cluster, _job("networking", namespace, plugins=plugins))
    assert code == 0, err
    assert (
        "Warning: spec.plugins.svc[0]: plugin svc has no argument '--enable-networking', so it has no effect"
        in err
    )
    assert _get(cluster, "vcjob", "networking", "-n", namespace)["spec"]["plugins"] == plugins


# --- Job: rejections ----------------------------------------------------------------------------------------

WORKER = {
    "name": "w",
    "replicas": 1,
    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"tasks": [WORKER, WORKER]},
            "spec.tasks[1].name: duplicated task name w; also used by spec.tasks[0] (give each task a "
            "unique name)",
            id="duplicate-task-names",
        ),
        pytest.param(
            {"tasks": [WORKER], "minAvailable": 3},
            "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks; 3 is "
            "greater than the sum of task replicas 1 (lower minAvailable to at most 1 or add replicas)",
            id="min-available-above-replicas",
        ),
        pytest.param(
            {"tasks": [WORKER], "policies": [{"event": "PodFailed", "exitCode": 3, "action": "RestartJob"}]},
            "spec.policies[0]: must not specify event and exitCode simultaneously; keep one of event and "
            "exitCode: a policy reacts to events or to an exit code",
            id="bad-policy",
        ),
        pytest.param(
            {"tasks": [WORKER], "policies": [{"event": "PodEvicted", "action": "InvalidAction"}]},
            "spec.policies[0].action: invalid policy action; 'InvalidAction' is not a policy action (use one "
            "of AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, CompleteJob, "
            "ResumeJob)",
            id="unknown-policy-action-reaches-the-webhook",
        ),
        pytest.param(
            {"tasks": [WORKER], "plugins": {"horovod": []}},
            "spec.plugins.horovod: unable to find job plugin: horovod; use one of env, svc, ssh, mpi, "
            "pytorch, tensorflow, hcclrank, ray",
            id="unknown-plugin",
        ),
        pytest.param(
            {"tasks": [WORKER], "plugins": {"tensorflow": ["--port=http"]}},
            "spec.plugins.tensorflow[0]: --port takes an integer, not 'http'",
            id="bad-plugin-argument",
        ),
        pytest.param(
            {"tasks": [WORKER], "queue": f"missing-{RUN}"},
            f'spec.queue: unable to find job queue: queue.scheduling.volcano.sh "missing-{RUN}" not found; '
            "create it first, or use an existing queue: ",
            id="missing-queue",
        ),
    ],
)
def test_bad_job_is_refused_with_field_and_fix(
    cluster: DevCluster, namespace: str, admission: AdmissionServer, spec: dict[str, Any], message: str
) -> None:
    code, err = _create(cluster, _job("bad", namespace, **spec))
    assert code != 0
    assert _denied("validatejob.volcano.sh", message) in err
    assert cluster.kubectl("get", "vcjob", "bad", "-n", namespace, check=False).returncode != 0


def test_job_in_a_closed_queue_is_refused(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    name = f"closed-{RUN}"
    _ensure_open_queue(cluster, name)
    _set_queue_state(cluster, name, "Closed")
    code, err = _create(cluster, _job("late", namespace, queue=name))
    assert code != 0
    assert (
        _denied(
            "validatejob.volcano.sh",
            f"spec.queue: can only submit job to queue with state `Open`, queue `{name}` status is `Closed`; "
            f"queue '{name}' is Closed; jobs can only be submitted to an Open queue "
            f"(open it with 'vcctl queue operate -n {name} -a open', or use another queue)",
        )
        in err
    )


# --- Job: updates -------------------------------------------------------------------------------------------


def test_updates_may_scale_but_not_add_tasks_or_move_queues(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    other = f"other-{RUN}"
    _ensure_open_queue(cluster, other)
    code, err = _create(cluster, _job("scaled", namespace))
    assert code == 0, err

    scale = json.dumps([{"op": "replace", "path": "/spec/tasks/0/replicas", "value": 3}])
    done = cluster.kubectl(
        "patch", "vcjob", "scaled", "-n", namespace, "--type=json", "-p", scale, check=False
    )
    assert done.returncode == 0, done.stderr
    assert _get(cluster, "vcjob", "scaled", "-n", namespace)["spec"]["tasks"][0]["replicas"] == 3

    extra = {
        "name": "eval",
        "replicas": 1,
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    }
    add = json.dumps([{"op": "add", "path": "/spec/tasks/-", "value": extra}])
    done = cluster.kubectl("patch", "vcjob", "scaled", "-n", namespace, "--type=json", "-p", add, check=False)
    assert done.returncode != 0
    assert (
        _denied(
            "validatejob.volcano.sh",
            "spec.tasks: job updates may not add or remove tasks; had 1, now 2; "
            "delete the Job and create it again with the new spec",
        )
        in done.stderr
    )

    move = json.dumps({"spec": {"queue": other}})
    done = cluster.kubectl(
        "patch", "vcjob", "scaled", "-n", namespace, "--type=merge", "-p", move, check=False
    )
    assert done.returncode != 0
    assert (
        _denied(
            "validatejob.volcano.sh",
            "spec.queue: job updates may not change fields other than `minAvailable`, `tasks[*].replicas "
            "under spec` and `PriorityClassName`; "
            f"the queue cannot change from 'default' to '{other}' on an existing job; "
            "delete the Job and create it in the new queue",
        )
        in done.stderr
    )


# --- Queue and PodGroup -------------------------------------------------------------------------------------


def test_queue_gets_defaults_and_bad_shares_are_refused(
    cluster: DevCluster, admission: AdmissionServer
) -> None:
    name = f"shares-{RUN}"
    code, err = _create(
        cluster, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}}
    )
    assert code == 0, err
    spec = _get(cluster, "queue", name)["spec"]
    assert (spec["weight"], spec["reclaimable"]) == (1, True)

    bad = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": f"greedy-{RUN}"},
        "spec": {"capability": {"cpu": "2"}, "deserved": {"cpu": "4"}},
    }
    code, err = _create(cluster, bad)
    assert code != 0
    assert (
        _denied(
            "validatequeue.volcano.sh",
            "spec.deserved.cpu: deserved[cpu]=4 must be <= capability[cpu]=2; lower deserved.cpu or raise "
            "capability.cpu",
        )
        in err
    )


def test_parent_queue_cannot_be_deleted_while_it_has_children(
    cluster: DevCluster, admission: AdmissionServer
) -> None:
    parent, child = f"org-{RUN}", f"team-{RUN}"
    _ensure_open_queue(cluster, parent)
    _ensure_open_queue(cluster, child, parent=parent)
    done = cluster.kubectl("delete", "queue", parent, check=False)
    assert done.returncode != 0
    assert (
        _denied(
            "validatequeue.volcano.sh",
            f"metadata.name: queue {parent} can not be deleted because it has 1 child queues: {child}; "
            "delete them or move them to another parent first",
        )
        in done.stderr
    )
    cluster.kubectl("delete", "queue", child)
    cluster.kubectl("delete", "queue", parent)


def test_podgroup_in_a_closed_queue_is_refused(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    name = f"pgclosed-{RUN}"
    _ensure_open_queue(cluster, name)
    _set_queue_state(cluster, name, "Closed")
    pg = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": namespace},
        "spec": {"minMember": 1, "queue": name},
    }
    code, err = _create(cluster, pg)
    assert code != 0
    assert (
        _denied(
            "validatepodgroup.volcano.sh",
            f"spec.queue: can only submit PodGroup to queue with state `Open`, queue `{name}` status is "
            f"`Closed`; queue '{name}' is Closed; podgroups can only be submitted to an Open queue "
            f"(open it with 'vcctl queue operate -n {name} -a open', or use another queue)",
        )
        in err
    )


def test_podgroup_in_the_default_queue_takes_its_namespace_queue(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    name = f"nsq-{RUN}"
    _ensure_open_queue(cluster, name)
    cluster.kubectl("annotate", "namespace", namespace, f"scheduling.volcano.sh/queue-name={name}")

    def podgroup(pg_name: str, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": pg_name, "namespace": namespace},
            "spec": {"minMember": 1, **spec},
        }

    own = f"own-{RUN}"
    _ensure_open_queue(cluster, own)
    for pg in (podgroup("unnamed"), podgroup("in-default", queue="default"), podgroup("own", queue=own)):
        code, err = _create(cluster, pg)
        assert code == 0, err
    queues = {
        pg: _get(cluster, "podgroup", pg, "-n", namespace)["spec"]["queue"]
        for pg in ("unnamed", "in-default", "own")
    }
    assert queues == {"unnamed": name, "in-default": name, "own": own}


# Volcano's test/e2e/admission/pod_validation_test.go, for pods with schedulerName volcano.
@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        pytest.param({"volcano.sh/jdb-min-available": "-1"}, "must be a positive integer", id="negative"),
        pytest.param({"volcano.sh/jdb-min-available": "0"}, "must be a positive integer", id="zero"),
        pytest.param({"volcano.sh/jdb-max-unavailable": "0%"}, "percentage which between 1% ~ 99%", id="0%"),
        pytest.param(
            {"volcano.sh/jdb-min-available": "100%"}, "percentage which between 1% ~ 99%", id="100%"
        ),
        pytest.param({"volcano.sh/jdb-min-available": "invalid"}, "invalid syntax", id="string"),
        pytest.param(
            {"volcano.sh/jdb-min-available": "2", "volcano.sh/jdb-max-unavailable": "50%"},
            "not allow configure multiple annotations",
            id="conflicting",
        ),
    ],
)
def test_pod_with_a_bad_disruption_budget_is_refused(
    cluster: DevCluster, namespace: str, admission: AdmissionServer, annotations: dict[str, str], message: str
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "budget", "namespace": namespace, "annotations": annotations},
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]},
    }
    code, err = _create(cluster, pod)
    assert code != 0
    assert 'admission webhook "validatepod.volcano.sh" denied the request: metadata.annotations[' in err
    assert message in err
    # The same annotations on another scheduler's pod never reach the webhook.
    other = {**pod, "metadata": {**pod["metadata"], "name": "other"}, "spec": {**pod["spec"]}}
    other["spec"]["schedulerName"] = "default-scheduler"
    code, err = _create(cluster, other)
    assert code == 0, err
    cluster.kubectl("delete", "pod", "other", "-n", namespace, "--wait=false")


def test_pod_with_a_valid_disruption_budget_is_admitted(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "budget-ok",
            "namespace": namespace,
            "annotations": {"volcano.sh/jdb-max-unavailable": "50%"},
        },
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]},
    }
    code, err = _create(cluster, pod)
    assert code == 0, err
    cluster.kubectl("delete", "pod", "budget-ok", "-n", namespace, "--wait=false")


def test_hypernode_members_are_checked_on_create_and_update(
    cluster: DevCluster, admission: AdmissionServer
) -> None:
    name = f"rack-{RUN}"

    def hypernode(members: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": "topology.volcano.sh/v1alpha1",
            "kind": "HyperNode",
            "metadata": {"name": name},
            "spec": {"tier": 1, "members": members},
        }

    code, err = _create(
        cluster, hypernode([{"type": "Node", "selector": {"regexMatch": {"pattern": "a(b"}}}])
    )
    assert code != 0
    assert (
        _denied(
            "validatehypernodes.volcano.sh",
            "spec.members[0].selector.regexMatch.pattern: member regexMatch pattern is invalid: ",
        )
        in err
    )
    code, err = _create(cluster, hypernode([{"type": "Node", "selector": {"exactMatch": {"name": ""}}}]))
    assert code != 0
    assert "spec.members[0].selector.exactMatch.name" in err and "should be at least 1 chars long" in err

    code, err = _create(
        cluster, hypernode([{"type": "Node", "selector": {"exactMatch": {"name": "node-1"}}}])
    )
    assert code == 0, err
    try:
        done = cluster.kubectl(
            "patch", "hypernode", name, "--type=merge", "-p", '{"spec": {"members": []}}', check=False
        )
        assert done.returncode != 0
        assert "members" in done.stderr
    finally:
        cluster.kubectl("delete", "hypernode", name, "--ignore-not-found")


# --- an outage stops only Volcano kinds, and quickly --------------------------------------------------------


def test_operator_outage_blocks_only_volcano_kinds_and_fails_fast(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    import time

    from volcano_py.webhooks.configurations import webhook_configurations

    dead = {"volcano-py.test/dead-webhook": RUN}
    mutating, validating = webhook_configurations(
        name=f"volcano-py-dead-{RUN}",
        ca_bundle=b"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
        url=f"https://127.0.0.1:{free_port()}",
        timeout_seconds=2,
        object_selector={"matchLabels": dead},
    )
    for config in (mutating, validating):
        cluster.kubectl("create", "-f", "-", input=json.dumps(config))
    try:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "unrelated", "namespace": namespace, "labels": dead},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        done = cluster.kubectl("create", "-f", "-", input=json.dumps(pod), check=False)
        assert done.returncode == 0, done.stderr

        job = _job("blocked", namespace)
        job["metadata"]["labels"] = dead
        started = time.monotonic()
        done = cluster.kubectl("create", "-f", "-", input=json.dumps(job), check=False)
        elapsed = time.monotonic() - started
        assert done.returncode != 0
        assert 'failed calling webhook "mutatejob.volcano.sh"' in done.stderr
        assert elapsed < 15, f"a dead webhook held kubectl for {elapsed:.1f}s"
    finally:
        for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
            cluster.kubectl("delete", kind, f"volcano-py-dead-{RUN}", check=False)


# --- JobFlow, JobTemplate, CronJob ----------------------------------------------------------------------


def test_flows_and_cronjobs_are_refused_with_the_field_named(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    tasks = [
        {"name": "w", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}
    ]
    template = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                "metadata": {"name": "prep", "namespace": namespace}, "spec": {"tasks": tasks}}  # fmt: skip
    assert _create(cluster, template)[0] == 0
    # Volcano admits a template whose Job spec the Job rules refuse: they apply when a Job is made from it.
    loose = {**template, "metadata": {"name": "loose", "namespace": namespace},
             "spec": {"tasks": tasks, "minAvailable": 9}}  # fmt: skip
    assert _create(cluster, loose) == (0, "")

    def flow(name: str, *steps: dict[str, Any]) -> dict[str, Any]:
        meta = {"name": name, "namespace": namespace}
        return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": meta,
                "spec": {"flows": list(steps)}}  # fmt: skip

    # What Volcano admits: templates that do not exist yet, a name listed twice, no steps at all.
    assert _create(
        cluster, flow("early", {"name": "prep"}, {"name": "train", "dependsOn": {"targets": ["prep"]}})
    ) == (0, "")
    assert _create(cluster, flow("twice", {"name": "prep"}, {"name": "prep"}))[0] == 0
    assert _create(cluster, flow("empty"))[0] == 0
    code, err = _create(cluster, flow("cycle", {"name": "prep", "dependsOn": {"targets": ["prep"]}}))
    assert code != 0
    # Volcano's words first, as its e2e matches them.
    assert (
        _denied("validatejobflow.volcano.sh", "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG")
        in err
    )
    code, err = _create(cluster, flow("undefined", {"name": "b", "dependsOn": {"targets": ["a"]}}))
    assert code != 0
    assert "jobflow Flow is not DAG: vertex is not defined: a; 'a' is not a step of this flow" in err
    assert _create(cluster, flow("fine", {"name": "prep"}))[0] == 0
    cron = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "bad", "namespace": namespace},
        "spec": {
            "schedule": "every day",
            "timeZone": "Mars/Olympus",
            "jobTemplate": {"spec": {"tasks": tasks}},
        },
    }
    code, err = _create(cluster, cron)
    assert code != 0
    assert (
        _denied(
            "validatecronjob.volcano.sh", "spec.timeZone: invalid timeZone; unknown time zone 'Mars/Olympus'"
        )
        in err
    )
    assert "spec.schedule: schedule is not a valid cron expression; 'every day' has 2 fields" in err


# --- bad input through kubectl apply (issue: refuse what Volcano and the API server refuse) ----------------


def _apply(cluster: DevCluster, obj: dict[str, Any]) -> tuple[int, str]:
    done = cluster.kubectl("apply", "-f", "-", input=json.dumps(_labelled(obj)), check=False)
    return done.returncode, done.stderr.strip()


def _template(**container: Any) -> dict[str, Any]:
    spec = container.pop("spec", {})
    metadata = container.pop("metadata", None)
    body = {"name": "c", "image": "busybox", **container}
    template: dict[str, Any] = {
        "spec": {"containers": [{k: v for k, v in body.items() if v is not None}], **spec}
    }
    if metadata is not None:
        template["metadata"] = metadata
    return template


C0 = "spec.tasks[0].template.spec.containers[0]"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param(
            _template(spec={"restartPolicy": "Sometimes"}),
            "spec.tasks[0].template.spec.restartPolicy: 'Sometimes' is not allowed "
            "(use one of Always, OnFailure, Never)",
            id="restart-policy",
        ),
        pytest.param(
            _template(image=None),
            f"{C0}.image: is required, got None (name the image, e.g. 'busybox:1.36')",
            id="no-image",
        ),
        pytest.param(
            _template(ports=[{"containerPort": 70000}]),
            f"{C0}.ports[0].containerPort: 70000 is not a valid port (use a number from 1 to 65535)",
            id="port-out-of-range",
        ),
        pytest.param(
            _template(volumeMounts=[{"name": "data", "mountPath": "/data"}]),
            f"{C0}.volumeMounts[0].name: no volume named 'data' in the pod "
            "(use one of: none yet; add it to the pod's volumes)",
            id="mount-without-volume",
        ),
        pytest.param(
            _template(metadata={"labels": {"bad key": "x"}}),
            "spec.tasks[0].template.metadata.labels[bad key]: 'bad key' is not a valid key",
            id="template-label-key",
        ),
        pytest.param(
            _template(resources={"requests": {"memory": ["4Gi", "8Gi"]}}),
            f"{C0}.resources.requests.memory: ['4Gi', '8Gi'] is not a quantity (write one value like '500m', "
            "'2' or '4Gi', not a list)",
            id="quantity-as-list",
        ),
    ],
)
def test_a_pod_template_kubernetes_refuses_is_refused_at_apply(
    cluster: DevCluster, namespace: str, admission: AdmissionServer, template: dict[str, Any], message: str
) -> None:
    task = {"name": "w", "replicas": 1, "template": template}
    code, err = _apply(cluster, _job("tmpl", namespace, tasks=[task]))
    assert code != 0
    assert _denied("validatejob.volcano.sh", message) in err


def test_an_empty_quantity_and_a_full_template_are_accepted_at_apply(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    template = _template(
        spec={"restartPolicy": "OnFailure", "volumes": [{"name": "data", "emptyDir": {}}]},
        ports=[{"containerPort": 8080, "name": "http"}],
        livenessProbe={"httpGet": {"port": "http", "path": "/healthz"}},
        volumeMounts=[{"name": "data", "mountPath": "/data"}],
        resources={"requests": {"cpu": None, "memory": "1Gi"}},
    )
    code, err = _apply(
        cluster, _job("fine", namespace, tasks=[{"name": "w", "replicas": 1, "template": template}])
    )
    assert code == 0, err


def test_a_job_label_the_api_server_refuses_is_refused_at_apply(
    cluster: DevCluster, namespace: str, admission: AdmissionServer
) -> None:
    job = _job("labels", namespace)
    job["metadata"]["labels"] = {"bad key!": "x"}
    code, err = _apply(cluster, job)
    assert code != 0
    assert 'metadata.labels: Invalid value: "bad key!"' in err


def _queue(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_queue_hierarchy_is_refused_at_apply(cluster: DevCluster, admission: AdmissionServer) -> None:
    org, a, b = f"h-org-{RUN}", f"h-a-{RUN}", f"h-b-{RUN}"
    created = [org, a]
    try:
        code, err = _apply(
            cluster,
            _queue(org, capability={"cpu": "8"}, deserved={"cpu": "4"}, guarantee={"resource": {"cpu": "2"}}),
        )
        assert code == 0, err
        code, err = _apply(
            cluster, _queue(a, parent=org, deserved={"cpu": "2"}, guarantee={"resource": {"cpu": "2"}})
        )
        assert code == 0, err

        code, err = _apply(cluster, _queue(b, parent=org, capability={"cpu": "16"}))
        assert code != 0
        assert (
            _denied(
                "validatequeue.volcano.sh",
                f"spec.capability.cpu: queue {b} capability[cpu]=16 exceeds its ancestor's capability=8; "
                f"the capability of ancestor queue '{org}' bounds it (lower it to at most 8)",
            )
            in err
        )

        code, err = _apply(
            cluster, _queue(b, parent=org, deserved={"cpu": "1"}, guarantee={"resource": {"cpu": "1"}})
        )
        assert code != 0
        assert (
            _denied(
                "validatequeue.volcano.sh",
                f"spec.guarantee.resource.cpu: parent queue {org} validation failed: sum of children's "
                f"guarantee; children of queue '{org}' would together have guarantee 3 "
                f"of cpu, more than its 2 (lower the children's guarantee.resource.cpu or raise that of "
                f"queue '{org}')",
            )
            in err
        )

        code, err = _apply(cluster, _queue(b, parent=f"nowhere-{RUN}"))
        assert code != 0
        assert (
            _denied(
                "validatequeue.volcano.sh",
                f"spec.parent: parent queue nowhere-{RUN} not found: "
                f"queue.scheduling.volcano.sh \"nowhere-{RUN}\" not found; create it first, or use 'root'",
            )
            in err
        )

        # A cycle can only be made by moving an existing queue under its own descendant.
        code, err = _apply(
            cluster,
            _queue(
                org,
                parent=a,
                capability={"cpu": "8"},
                deserved={"cpu": "4"},
                guarantee={"resource": {"cpu": "2"}},
            ),
        )
        assert code != 0
        assert (
            _denied(
                "validatequeue.volcano.sh",
                f"spec.parent: '{a}' would make a cycle ({org} -> {a} -> {org}); choose a parent that is "
                f"not a descendant of '{org}'",
            )
            in err
        )
    finally:
        for name in reversed(created):
            cluster.kubectl("delete", "queue", name, "--ignore-not-found", check=False)
