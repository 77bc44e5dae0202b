"""Admission rules for Queue, PodGroup, HyperNode, Command, and the pod-spec parts we read."""

from __future__ import annotations

from typing import Any

import pytest
from api_builders import make_hypernode, make_job, make_podgroup, make_queue, pod_template

from volcano_py.api.podspec import check_pod_spec
from volcano_py.api.validation import object_ref, validate_object
from volcano_py.resources import Resource, pod_request


def problems(doc: Any) -> list[str]:
    return [str(p) for p in validate_object(doc)]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param(
            make_queue(guarantee={"resource": {"cpu": "4"}}, deserved={"cpu": "2"}),
            "spec.deserved.cpu: deserved[cpu]=2 must be >= guarantee[cpu]=4; raise deserved.cpu to at least "
            "'4'",
            id="queue-deserved-below-guarantee",
        ),
        pytest.param(
            make_queue(guarantee={"resource": {"memory": "1Gi"}}),
            "spec.deserved.memory: deserved[memory] must be >= guarantee[memory]=1Gi; deserved.memory is "
            "missing while guarantee.resource.memory is '1Gi' (set deserved.memory to at least '1Gi')",
            id="queue-guarantee-without-deserved",
        ),
        pytest.param(
            make_queue(deserved={"cpu": 8}, capability={"cpu": 4}),
            "spec.deserved.cpu: deserved[cpu]=8 must be <= capability[cpu]=4; lower deserved.cpu or raise "
            "capability.cpu",
            id="queue-deserved-above-capability",
        ),
        pytest.param(
            make_queue(capability={"cpu": "-1"}),
            "spec.capability.cpu: '-1' is negative (use a quantity >= 0)",
            id="queue-negative",
        ),
        pytest.param(
            make_queue(weight=-1),
            "spec.weight: -1 is too small (use a value >= 1)",
            id="queue-weight-negative",
        ),
        pytest.param(
            make_queue("q", parent="q"),
            "spec.parent: queue q cannot use itself as parent; name another queue or 'root'",
            id="queue-own-parent",
        ),
        pytest.param(
            make_queue(capability={"cpu": "lots"}),
            "spec.capability.cpu: 'lots' is not a Kubernetes quantity "
            "(use forms like '500m', '2', '1.5', '4Gi', '512Mi' or '1e3')",
            id="queue-bad-quantity",
        ),
        pytest.param(
            make_podgroup(minMember=2, networkTopology={"highestTierAllowed": 1, "highestTierName": "spine"}),
            "spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' in "
            "networkTopology simultaneously; sets both highestTierAllowed and highestTierName (keep one: "
            "they are two ways to say the same limit)",
            id="podgroup-topology-both",
        ),
        pytest.param(
            make_podgroup(minTaskMember={"worker": -1}),
            "spec.minTaskMember.worker: -1 is negative (use a count >= 0)",
            id="podgroup-negative-task-member",
        ),
        pytest.param(
            make_hypernode(members=[]),
            "spec.members: member must have at least one member; add at least one member",
            id="hypernode-no-members",
        ),
        pytest.param(
            make_hypernode(members=[{"type": "Node", "selector": {}}]),
            "spec.members[0].selector: member selector must have one of exactMatch, regexMatch, or "
            "labelMatch; set one of exactMatch, regexMatch or labelMatch",
            id="hypernode-no-selector",
        ),
        pytest.param(
            make_hypernode(
                members=[
                    {
                        "type": "Node",
                        "selector": {"exactMatch": {"name": "n1"}, "regexMatch": {"pattern": "n"}},
                    }
                ]
            ),
            "spec.members[0].selector: cannot specify more than one selector type (exactMatch, regexMatch, "
            "labelMatch); sets exactMatch and regexMatch (keep exactly one of them)",
            id="hypernode-two-selectors",
        ),
        pytest.param(
            make_hypernode(
                members=[{"type": "HyperNode", "selector": {"labelMatch": {"matchLabels": {"a": "b"}}}}]
            ),
            "spec.members[0].selector.labelMatch: only selects nodes (use type: Node, or "
            "exactMatch for a HyperNode)",
            id="hypernode-label-match-on-hypernode",
        ),
        pytest.param(
            make_hypernode(members=[{"type": "Node", "selector": {"regexMatch": {"pattern": "node-[0-9"}}}]),
            "spec.members[0].selector.regexMatch.pattern: member regexMatch pattern is invalid: "
            "error parsing regexp: missing closing ]: `[0-9`; 'node-[0-9': fix the pattern; Volcano compiles "
            "it with Go's regexp (RE2 syntax)",
            id="hypernode-bad-regex",
        ),
        pytest.param(
            make_hypernode(
                members=[
                    {
                        "type": "Node",
                        "selector": {
                            "labelMatch": {"matchExpressions": [{"key": "rack", "operator": "Equals"}]}
                        },
                    }
                ]
            ),
            "spec.members[0].selector.labelMatch.matchExpressions[0].operator: 'Equals' is not allowed "
            "(use one of In, NotIn, Exists, DoesNotExist)",
            id="hypernode-label-operator",
        ),
        pytest.param(
            make_podgroup(
                subGroupPolicy=[{"labelSelector": {"matchExpressions": [{"key": "r", "operator": "In"}]}}]
            ),
            "spec.subGroupPolicy[0].labelSelector.matchExpressions[0].values: must not be empty "
            "for operator In "
            "(add values)",
            id="podgroup-subgroup-selector",
        ),
        pytest.param(
            make_hypernode(members=[{"type": "Switch", "selector": {"exactMatch": {"name": "n"}}}]),
            "spec.members[0].type: 'Switch' is not allowed (use one of 'Node', 'HyperNode')",
            id="hypernode-bad-type",
        ),
        pytest.param(
            {
                "apiVersion": "bus.volcano.sh/v1alpha1",
                "kind": "Command",
                "metadata": {"name": "c"},
                "action": "Explode",
            },
            "action: 'Explode' is not a command action "
            "(use one of AbortJob, RestartJob, ResumeJob, TerminateJob, CompleteJob, OpenQueue, CloseQueue)",
            id="command-bad-action",
        ),
        pytest.param(
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queues", "metadata": {"name": "q"}},
            "kind: 'Queues' is not a Volcano kind in scheduling.volcano.sh "
            "(use apiVersion scheduling.volcano.sh/v1beta1 with kind one of PodGroup, Queue)",
            id="wrong-kind",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"schedulerName": "volcano"},
            },
            "spec.containers: is required (add at least one container)",
            id="pod-without-containers",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "annotations": {"volcano.sh/jdb-min-available": "100%"}},
                "spec": {"schedulerName": "volcano", "containers": [{"name": "c"}]},
            },
            'metadata.annotations[volcano.sh/jdb-min-available]: invalid value <"100%"> for '
            "volcano.sh/jdb-min-available, it must be a valid percentage which between 1% ~ 99%; use a "
            "count such as '2' or a percentage from '1%' to '99%'",
            id="pod-jdb-percentage",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": "p",
                    "annotations": {
                        "volcano.sh/jdb-min-available": "1",
                        "volcano.sh/jdb-max-unavailable": "1",
                    },
                },
                "spec": {"schedulerName": "volcano", "containers": [{"name": "c"}]},
            },
            "metadata.annotations[volcano.sh/jdb-max-unavailable]: not allow configure multiple annotations "
            "<[volcano.sh/jdb-min-available volcano.sh/jdb-max-unavailable]> at same time; cannot be set "
            "together with volcano.sh/jdb-min-available (keep one of the two)",
            id="pod-jdb-both",
        ),
        pytest.param(
            ["not", "a", "mapping"], "expected a mapping (a Kubernetes object), got list", id="not-a-mapping"
        ),
    ],
)
def test_rule(doc: Any, expected: str) -> None:
    assert expected in problems(doc)


def test_valid_queue_podgroup_hypernode_have_no_problems() -> None:
    queue = make_queue(
        weight=2, guarantee={"resource": {"cpu": 1}}, deserved={"cpu": 2}, capability={"cpu": 4}
    )
    assert problems(queue) == []
    assert problems(make_podgroup(minMember=3, minResources={"cpu": "3"})) == []
    members = [{"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "r1"}}}}]
    assert problems(make_hypernode(members=members)) == []


def test_other_kinds_are_skipped() -> None:
    assert (
        problems({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": 5}) == []
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"containers": [{"name": "a", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]},
            "spec.containers[0].resources.requests.cpu: request '2' is above the limit '1' "
            "(lower the request or raise limits.cpu)",
            id="request-above-limit",
        ),
        pytest.param(
            {"containers": [{"name": "a"}, {"name": "a"}]},
            "spec.containers[1].name: duplicated container name 'a' (give each container a unique name)",
            id="duplicate-container",
        ),
        pytest.param(
            {"containers": [{"image": "x"}]},
            "spec.containers[0].name: is required (give the container a name)",
            id="container-without-name",
        ),
        pytest.param(
            {"containers": [{"name": "a"}], "nodeSelector": {"gpu": True}},
            "spec.nodeSelector.gpu: True is not a string (quote it: 'True')",
            id="unquoted-node-selector",
        ),
        pytest.param(
            {
                "containers": [{"name": "a"}],
                "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}],
            },
            "spec.tolerations[0].operator: Exists takes no value, got value 'v' (remove value, or use "
            "operator Equal)",
            id="toleration-exists-with-value",
        ),
        pytest.param(
            {"containers": [{"name": "a"}], "tolerations": [{"key": "k", "effect": "NoRun"}]},
            "spec.tolerations[0].effect: 'NoRun' is not allowed (use one of NoSchedule, "
            "PreferNoSchedule, NoExecute)",
            id="toleration-bad-effect",
        ),
        pytest.param(
            {
                "containers": [{"name": "a"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]
                        }
                    }
                },
            },
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].values: must not be empty for operator In (add values)",
            id="node-affinity-in-without-values",
        ),
        pytest.param(
            {"containers": [{"name": "a"}], "affinity": {"nodeAfinity": {}}},
            "spec.affinity.nodeAfinity: unknown affinity kind (use one of nodeAffinity, "
            "podAffinity, podAntiAffinity)",
            id="affinity-typo",
        ),
        pytest.param(
            {"containers": [{"name": "a"}], "priorityClassName": "High"},
            "spec.priorityClassName: 'High' is not a DNS-1123 subdomain (use lower-case "
            "letters, digits, '-' and '.', "
            "starting and ending with a letter or digit)",
            id="priority-class-name",
        ),
        pytest.param(
            {"containers": [{"name": "a"}], "priorityClass": "high-pri"},
            "spec.priorityClass: unknown field (remove it or fix the spelling; did you mean "
            "'priorityClassName'?)",
            id="unknown-pod-spec-field",
        ),
    ],
)
def test_pod_spec_rule(spec: dict[str, Any], expected: str) -> None:
    assert expected in [str(p) for p in check_pod_spec(spec, "spec")]


def test_pod_request_sums_containers_and_respects_init_and_limits() -> None:
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
            {"name": "b", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": 2}}},
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "4"}}}],
        "overhead": {"memory": "100Mi"},
    }
    assert pod_request(spec) == Resource.of(cpu="4", memory="1124Mi", gpu=2)


def test_object_ref_names_kind_namespace_and_name() -> None:
    assert object_ref(make_job("j", "team").obj()) == "Job/team/j"
    assert object_ref(make_queue("q")) == "Queue/q"


def test_task_template_problems_carry_the_task_path() -> None:
    job = make_job().task("w", 1, template=pod_template(cpu="lots")).obj()
    assert problems(job) == [
        "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: 'lots' is not a "
        "Kubernetes quantity "
        "(use forms like '500m', '2', '1.5', '4Gi', '512Mi' or '1e3')"
    ]
