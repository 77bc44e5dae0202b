"""``volcano-py validate`` on bad input as a new user writes it: each case refused with the field named (or
accepted where the API server accepts it), never a traceback; exit codes 0 / 1 / 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from api_builders import make_job, make_queue, pod_template

from volcano_py.cli.main import build_parser


def validate(
    tmp_path: Path, content: str | bytes, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """Run ``volcano-py validate`` on one file with ``content``: (exit code, stdout, stderr)."""
    path = tmp_path / "in.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    args = build_parser().parse_args(["validate", str(path)])
    code: int = args.func(args)
    out, err = capsys.readouterr()
    return code, out.replace(f"{path}: ", ""), err.replace(f"{path}: ", "")


def docs(*objects: dict[str, Any]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def with_resources(**resources: Any) -> dict[str, Any]:
    template = pod_template()
    template["spec"]["containers"][0]["resources"] = resources
    return make_job("j").task("w", 1, template=template).obj()


# --- files that are not manifests ---------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_unreadable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = validate(tmp_path, b"kind: Job\nmetadata: {name: \xff\xfe}\n", capsys)
    assert (code, out) == (2, "")
    assert "unreadable: not UTF-8 text (line 2, byte 27: invalid start byte; save it as UTF-8)" in err


@pytest.mark.parametrize(
    "content", ["", "---\n", "# only a comment\n"], ids=["empty", "separator", "comment"]
)
def test_an_empty_file_has_no_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    code, out, _ = validate(tmp_path, content, capsys)
    assert (code, out) == (1, "no objects (the file holds no YAML document; kubectl apply refuses it)\n")


# --- kinds --------------------------------------------------------------------------------------------------


def test_a_manifest_without_api_version_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = make_job("j").task("w").obj()
    del job["apiVersion"]
    code, out, _ = validate(tmp_path, docs(job), capsys)
    assert (code, out) == (
        1,
        "Job/j: apiVersion: is required, got None (add 'apiVersion: batch.volcano.sh/v1alpha1')\n",
    )


def test_kinds_outside_volcano_are_named_as_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}}
    code, out, err = validate(tmp_path, docs(deployment, make_queue("q")), capsys)
    assert (code, out) == (0, "")
    assert err.splitlines() == [
        "Deployment/ns/d: not a Volcano kind, not checked",
        "1 object(s) checked, 1 not checked, 0 problem(s)",
    ]


def test_a_volcano_kind_not_modelled_yet_is_named_as_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    colocation = {
        "apiVersion": "config.volcano.sh/v1alpha1",
        "kind": "ColocationConfiguration",
        "metadata": {"name": "n"},
    }
    code, out, err = validate(tmp_path, docs(colocation), capsys)
    assert (code, out) == (0, "")
    assert "ColocationConfiguration/n: a Volcano kind volcano-py does not model yet, not checked" in err


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [
        pytest.param(
            "batch.volcano.sh/v1alpha1",
            "Jobs",
            "kind: 'Jobs' is not a Volcano kind in batch.volcano.sh "
            "(use apiVersion batch.volcano.sh/v1alpha1 with kind one of Job, CronJob)",
            id="unknown-kind",
        ),
        pytest.param(
            "batch.volcano.sh/v1alpha1",
            "Queue",
            "apiVersion: batch.volcano.sh/v1alpha1 does not serve kind Queue "
            "(use apiVersion scheduling.volcano.sh/v1beta1)",
            id="kind-of-another-group",
        ),
        pytest.param(
            "scheduling.volcano.sh/v1alpha1",
            "Queue",
            "apiVersion: scheduling.volcano.sh/v1alpha1 does not serve kind Queue "
            "(use apiVersion scheduling.volcano.sh/v1beta1)",
            id="old-version",
        ),
    ],
)
def test_an_unknown_kind_in_a_volcano_group_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], api_version: str, kind: str, expected: str
) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}
    code, out, _ = validate(tmp_path, docs(obj), capsys)
    assert (code, out) == (1, f"{kind}/x: {expected}\n")


# --- quantities ---------------------------------------------------------------------------------------------


def test_a_quantity_given_as_a_list_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = validate(tmp_path, docs(with_resources(requests={"memory": ["4Gi", "8Gi"]})), capsys)
    assert (code, out) == (
        1,
        "Job/j: spec.tasks[0].template.spec.containers[0].resources.requests.memory: ['4Gi', '8Gi'] is not a "
        "quantity (write one value like '500m', '2' or '4Gi', not a list)\n",
    )


def test_a_queue_quantity_given_as_a_list_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = validate(tmp_path, docs(make_queue("q", capability={"cpu": [1, 2]})), capsys)
    assert (code, out) == (
        1,
        "Queue/q: spec.capability.cpu: [1, 2] is not a quantity; use forms like '500m', '2', '4Gi'\n",
    )


EMPTY_QUANTITIES = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j}
spec:
  tasks:
    - name: w
      replicas: 1
      template:
        spec:
          containers:
            - name: c
              image: busybox
              resources:
                requests:
                  cpu:
                  memory: 1Gi
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
spec:
  capability:
    cpu:
    memory: 4Gi
"""


def test_an_empty_quantity_is_dropped_as_the_api_server_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = validate(tmp_path, EMPTY_QUANTITIES, capsys)
    assert (code, out) == (0, "")


# --- lifecycle policies -------------------------------------------------------------------------------------


def test_an_unknown_task_policy_action_offers_only_what_a_user_may_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = make_job("j").task("w", 1, policies=[{"event": "PodFailed", "action": "Retry"}]).obj()
    code, out, _ = validate(tmp_path, docs(job), capsys)
    assert (code, out) == (
        1,
        "Job/j: spec.tasks[0].policies[0].action: invalid policy action; 'Retry' is not a policy action "
        "(use one of AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob, "
        "CompleteJob, ResumeJob)\n",
    )


# --- queue hierarchy across the files given -----------------------------------------------------------------

PARENT = make_queue("org", capability={"cpu": 8}, deserved={"cpu": 4}, guarantee={"resource": {"cpu": 2}})


@pytest.mark.parametrize(
    ("queues", "expected"),
    [
        pytest.param(
            [PARENT, make_queue("team", parent="org", capability={"cpu": 16})],
            "Queue/team: spec.capability.cpu: queue team capability[cpu]=16 exceeds its ancestor's "
            "capability=8; the capability of ancestor queue 'org' bounds it (lower it to at most 8)",
            id="child-capability-over-parent",
        ),
        pytest.param(
            [
                PARENT,
                make_queue("a", parent="org", deserved={"cpu": 1}, guarantee={"resource": {"cpu": 1}}),
                make_queue("b", parent="org", deserved={"cpu": 2}, guarantee={"resource": {"cpu": 2}}),
            ],
            "Queue/b: spec.guarantee.resource.cpu: parent queue org validation failed: sum of children's "
            "guarantee; children of queue 'org' would together have guarantee 3 "
            "of cpu, more than its 2 (lower the children's guarantee.resource.cpu or raise that of queue "
            "'org')",
            id="guarantees-over-parent",
        ),
        pytest.param(
            [make_queue("a", parent="b"), make_queue("b", parent="a")],
            "Queue/b: spec.parent: 'a' would make a cycle (b -> a -> b); choose a parent that is not a "
            "descendant of 'b'",
            id="cycle",
        ),
        pytest.param(
            [make_queue("team", parent="org"), PARENT],
            "Queue/team: spec.parent: parent queue 'org' comes after this queue in the files, so kubectl "
            "apply would create this one first and Volcano would refuse it (put 'org' first)",
            id="parent-after-child",
        ),
        pytest.param(
            [make_queue("l1"), *(make_queue(f"l{i}", parent=f"l{i - 1}") for i in range(2, 7))],
            "Queue/l6: spec.parent: queue l6 exceeds the maximum allowed depth of 5; it would be 6 levels "
            "below root (root -> l1 -> l2 -> l3 -> l4 -> l5 -> l6); attach it to a queue higher in the tree",
            id="too-deep",
        ),
    ],
)
def test_queue_hierarchy_is_checked_across_the_queues_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], queues: list[dict[str, Any]], expected: str
) -> None:
    code, out, _ = validate(tmp_path, docs(*queues), capsys)
    assert code == 1
    assert expected in out.splitlines()


def test_a_parent_not_given_is_a_note_not_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = validate(tmp_path, docs(make_queue("team", parent="org")), capsys)
    assert (code, out) == (0, "")
    assert (
        "Queue/team: parent queue 'org' is not among the valid queues given; its place in the hierarchy was "
        "not checked (it must exist on the cluster)"
    ) in err


# --- pod templates: what Kubernetes' pod-template validation refuses (Volcano's webhook runs it) ------------

P = "Job/j: spec.tasks[0].template"
C = f"{P}.spec.containers[0]"


def job_with(
    spec: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None, **container: Any
) -> dict[str, Any]:
    template = pod_template(**(spec or {}))
    template["spec"]["containers"][0].update(container)
    for key in [k for k, v in container.items() if v is None]:
        del template["spec"]["containers"][0][key]
    if metadata is not None:
        template["metadata"] = metadata
    return make_job("j").task("w", 1, template=template).obj()


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        pytest.param(
            job_with({"restartPolicy": "Sometimes"}),
            f"{P}.spec.restartPolicy: 'Sometimes' is not allowed (use one of Always, OnFailure, Never)",
            id="restart-policy",
        ),
        pytest.param(
            job_with(image=None),
            f"{C}.image: is required, got None (name the image, e.g. 'busybox:1.36')",
            id="no-image",
        ),
        pytest.param(
            job_with(ports=[{"containerPort": 70000}]),
            f"{C}.ports[0].containerPort: 70000 is not a valid port (use a number from 1 to 65535)",
            id="port-out-of-range",
        ),
        pytest.param(
            job_with(ports=[{"containerPort": 80, "name": "HTTP_port"}]),
            f"{C}.ports[0].name: 'HTTP_port' is not a valid port name (at most 15 lower-case letters, digits "
            "and '-', with at least one letter, e.g. 'http' or 'grpc-1'; no '--', no '-' at either end)",
            id="port-name",
        ),
        pytest.param(
            job_with(
                {"volumes": [{"name": "data", "emptyDir": {}}]},
                volumeMounts=[{"name": "dat", "mountPath": "/d"}],
            ),
            f"{C}.volumeMounts[0].name: no volume named 'dat' in the pod (use one of: data)",
            id="mount-names-no-volume",
        ),
        pytest.param(
            job_with({"volumes": [{"name": "data", "emptyDirr": {}}]}),
            f"{P}.spec.volumes[0].emptyDirr: unknown volume type (did you mean 'emptyDir'?)",
            id="volume-type-typo",
        ),
        pytest.param(
            job_with({"volumes": [{"name": "cfg", "configMap": {}}]}),
            f"{P}.spec.volumes[0].configMap.name: is required for a configMap volume",
            id="configmap-volume-without-name",
        ),
        pytest.param(
            job_with(livenessProbe={"exec": {"command": ["true"]}, "tcpSocket": {"port": 8080}}),
            f"{C}.livenessProbe: sets exec and tcpSocket (keep exactly one handler)",
            id="probe-two-handlers",
        ),
        pytest.param(
            job_with(readinessProbe={"periodSeconds": 5}),
            f"{C}.readinessProbe: has no handler (set one of exec, httpGet, tcpSocket, grpc)",
            id="probe-no-handler",
        ),
        pytest.param(
            job_with(livenessProbe={"httpGet": {"port": 8080}, "successThreshold": 3}),
            f"{C}.livenessProbe.successThreshold: 3 must be 1 for this probe (set it to 1 or drop it)",
            id="liveness-success-threshold",
        ),
        pytest.param(
            job_with(env=[{"value": "1"}]),
            f"{C}.env[0].name: is required (name the variable)",
            id="env-without-name",
        ),
        pytest.param(
            job_with(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
            f"{C}.resources.requests.cpu: request '2' is above the limit '1' (lower the request or raise "
            "limits.cpu)",
            id="request-above-limit",
        ),
        pytest.param(
            job_with(resources={"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}),
            f"{C}.resources.requests.nvidia.com/gpu: request 1 differs from the limit 2; nvidia.com/gpu "
            "cannot be overcommitted (make them equal, or give only the limit)",
            id="gpu-request-not-limit",
        ),
        pytest.param(
            job_with(resources={"limits": {"gpu": 1}}),
            f"{C}.resources.limits.gpu: 'gpu' is not a container resource (use cpu, memory, "
            "ephemeral-storage, hugepages-<size>, or an extended resource with its domain, "
            "e.g. 'nvidia.com/gpu')",
            id="resource-without-domain",
        ),
        pytest.param(
            job_with(metadata={"labels": {"-team": "a"}}),
            f"{P}.metadata.labels[-team]: '-team' is not a valid key (the name part takes letters, digits, "
            "'-', '_' and '.', starting and ending with a letter or digit, at most 63 characters, "
            "e.g. 'team' or 'example.com/team')",
            id="template-label-key",
        ),
        pytest.param(
            job_with(metadata={"annotations": {"note": 5}}),
            f"{P}.metadata.annotations[note]: 5 is not a string (quote it: '5')",
            id="template-annotation-value",
        ),
        pytest.param(
            {**make_job("j").task("w").obj(), "metadata": {"name": "j", "labels": {"team": "a b"}}},
            "Job/j: metadata.labels[team]: 'a b' is not a valid label value (use letters, digits, '-', '_' "
            "and '.', starting and ending with a letter or digit, at most 63 characters, or leave it empty)",
            id="job-label-value",
        ),
    ],
)
def test_a_pod_template_kubernetes_refuses_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], job: dict[str, Any], expected: str
) -> None:
    code, out, _ = validate(tmp_path, docs(job), capsys)
    assert (code, out) == (1, expected + "\n")


def test_a_full_pod_template_kubernetes_accepts_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = job_with(
        {
            "restartPolicy": "OnFailure",
            "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}],
        },
        metadata={"labels": {"app.kubernetes.io/name": "train"}, "annotations": {"Example.com/Note": "x y"}},
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        livenessProbe={"httpGet": {"port": "http", "path": "/healthz"}, "periodSeconds": 10},
        readinessProbe={"tcpSocket": {"port": 8080}, "successThreshold": 2},
        volumeMounts=[
            {"name": "data", "mountPath": "/data"},
            {"name": "cfg", "mountPath": "/etc/c", "subPath": "a"},
        ],
        env=[{"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        resources={
            "requests": {"cpu": None, "memory": "1Gi", "nvidia.com/gpu": 2},
            "limits": {"nvidia.com/gpu": 2},
        },
    )
    code, out, _ = validate(tmp_path, docs(job), capsys)
    assert (code, out) == (0, "")


# --- YAML that is not what it seems -------------------------------------------------------------------------


TABS = [
    pytest.param(
        "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: p\n",
        "line 4, column 1: not valid YAML: a tab indents this line (YAML indents with spaces only: replace "
        "the tab with spaces)\n",
        id="tab-indents-a-key",
    ),
    pytest.param(
        "kind: Job\nspec:\n  tasks:\n  \t- name: w\n",
        "line 4, column 3: not valid YAML: a tab indents this line (YAML indents with spaces only: replace "
        "the tab with spaces)\n",
        id="tab-after-spaces",
    ),
    pytest.param(
        "kind: Job\nspec:\n  minAvailable: 1\t2\n",
        "line 3, column 18: not valid YAML: a tab where YAML expects a space (replace the tab with spaces)\n",
        id="tab-inside-a-line",
    ),
]


@pytest.mark.parametrize(("content", "message"), TABS)
def test_a_tab_is_named_with_where_it_is_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    code, out, _ = validate(tmp_path, content, capsys)
    assert (code, out) == (1, message)


def _laughs(levels: int, fan: int) -> str:
    """A Job whose label values alias lists of aliases, ``fan`` wide and ``levels`` deep."""
    lines = ["kind: Job", "apiVersion: batch.volcano.sh/v1alpha1", "metadata: {name: j}", 'x0: &x0 ["lol"]']
    for i in range(1, levels):
        lines.append(f"x{i}: &x{i} [{', '.join([f'*x{i - 1}'] * fan)}]")
    return "\n".join(lines) + "\n"


# Kubernetes' decoder (go-yaml) stops a document whose aliases expand to more than 99% of the nodes it
# decodes (past 1000 nodes), naming the outermost anchor being expanded; go.yaml.in/yaml/v2 refuses these
# (the line is ours: go-yaml gives none).
ALIASES = [
    pytest.param(
        _laughs(9, 9),
        "line 7: not valid YAML: document contains excessive aliasing (a YAML alias bomb: ",
        id="billion-laughs",
    ),
    pytest.param(
        _laughs(5, 10), "line 7: not valid YAML: document contains excessive aliasing", id="10-thousand"
    ),
    pytest.param(
        "kind: Job\na: &a [*a]\n",
        "line 2: not valid YAML: an anchor's value contains an alias to itself",
        id="self-alias",
    ),
]


@pytest.mark.parametrize(("content", "message"), ALIASES)
def test_an_alias_bomb_is_refused_by_name_without_expanding_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    code, out, _ = validate(tmp_path, content, capsys)
    assert code == 1
    assert out.startswith(message), out


def test_aliases_go_yaml_takes_are_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # go.yaml.in/yaml/v2 decodes this one: its aliases stay under the share it allows.
    _, out, _ = validate(tmp_path, _laughs(4, 10), capsys)
    assert "not valid YAML" not in out and "alias" not in out
