"""volcano-admission.conf: Volcano's files load; what Volcano would skip or never match is refused."""

from __future__ import annotations

import pytest

from volcano_py.api.admission_conf import AdmissionConfError, ObjectKey, load_admission_conf

# The conf of Volcano's multi-scheduler design doc (docs/design/multi-scheduler.md), all four kinds of group.
DOC_CONF = """\
resourceGroups:
- resourceGroup: management
  object:
    key: namespace
    value:
    - mng-ns-1
  schedulerName: default-scheduler
  tolerations:
  - effect: NoSchedule
    key: taint
    operator: Exists
  labels:
    volcano.sh/nodetype: management
- resourceGroup: cpu
  object:
    key: annotation
    value:
    - "volcano.sh/resource-group: cpu"
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: cpu
- resourceGroup: gpu
  schedulerName: volcano
  labels:
    volcano.sh/nodetype: gpu
- resourceGroup: fixed
  schedulerName: volcano
  object:
    key: annotation
    value:
    - "volcano.sh/resource-group-job-role: master"
  affinity: '{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":
    [{"matchExpressions":[{"key":"volcano.sh/nodetype","operator":"In","values":["fixed"]}]}]}}}'
"""


def test_the_design_docs_conf_loads_with_each_group_read() -> None:
    conf = load_admission_conf(DOC_CONF)
    management, cpu, gpu, fixed = conf.resource_groups
    assert management.object.key is ObjectKey.NAMESPACE
    assert management.object.value == ["mng-ns-1"]
    assert management.tolerations == [{"effect": "NoSchedule", "key": "taint", "operator": "Exists"}]
    assert management.annotations == {}
    assert cpu.annotations == {"volcano.sh/resource-group": "cpu"}
    assert not cpu.by_default_annotation()
    assert gpu.by_default_annotation() and gpu.annotations == {}
    assert fixed.affinity_object is not None
    assert fixed.affinity_object["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("# nothing\n", id="comments"),  # Volcano's chart ships the file all commented out
        pytest.param("resourceGroups:\n", id="null"),
    ],
)
def test_a_conf_without_groups_loads(text: str) -> None:
    assert load_admission_conf(text).resource_groups == []


def test_numbers_in_an_annotation_entry_are_taken_as_written() -> None:
    conf = load_admission_conf(
        "resourceGroups:\n- resourceGroup: a\n  object: {key: annotation, value: ['tier: 01']}\n"
    )
    assert conf.resource_groups[0].annotations == {"tier": "01"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: label, value: [x]}\n",
            "resourceGroups[0].object.key: 'label' is not allowed (use one of 'namespace', 'annotation')",
            id="unknown-object-key",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  nodeSelector: {x: y}\n",
            "resourceGroups[0].nodeSelector: unknown field (remove it or fix its spelling)",
            id="unknown-field",
        ),
        pytest.param(
            "resourceGroup:\n- resourceGroup: a\n",
            "resourceGroup: unknown field (remove it or fix its spelling)",
            id="misspelt-top-level",
        ),
        pytest.param(
            "resourceGroups:\n- schedulerName: volcano\n",
            "resourceGroups[0].resourceGroup: is required (add this field)",
            id="no-name",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: namespace}\n",
            "resourceGroups[0].object.value: is empty, so no pod would match (list the namespaces)",
            id="namespace-without-values",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: namespace, value: [Team_A]}\n",
            "resourceGroups[0].object.value[0]: not a namespace name",
            id="bad-namespace",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: annotation, value: [team-a]}\n",
            "resourceGroups[0].object.value[0]: 'team-a' is not an annotation (write 'key: value', e.g. "
            "'volcano.sh/resource-group: a')",
            id="annotation-not-key-value",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: annotation, value: ['team:']}\n",
            "resourceGroups[0].object.value[0]: 'team' has an empty value, which every pod without it would "
            "match (give one)",
            id="annotation-empty-value",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  object: {key: annotation, value: ['t: x', 't: y']}\n",
            "resourceGroups[0].object.value[1]: 't' is already given as 'x' in value[0]; only the first is "
            "used (give each annotation key once)",
            id="annotation-twice",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  tolerations: [{key: k, operator: Exist}]\n",
            "resourceGroups[0].tolerations[0].operator: 'Exist' is not allowed (use Exists or Equal)",
            id="bad-toleration-operator",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  tolerations: [{key: k, effects: NoSchedule}]\n",
            "resourceGroups[0].tolerations[0].effects: unknown toleration field",
            id="unknown-toleration-field",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  labels: {nodetype: 'a b'}\n",
            "resourceGroups[0].labels[nodetype]: 'a b' is not a valid label value",
            id="bad-label-value",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  affinity: '{nodeAffinity: 1}'\n",
            "resourceGroups[0].affinity: is not JSON",
            id="affinity-not-json",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  affinity: {nodeAffinity: {}}\n",
            "resourceGroups[0].affinity: {'nodeAffinity': {}} is not a string (quote it)",
            id="affinity-as-yaml",
        ),
        pytest.param(
            "resourceGroups:\n- resourceGroup: a\n  affinity: '{\"nodeAfinity\": {}}'\n",
            "resourceGroups[0].affinity.nodeAfinity: unknown affinity kind",
            id="affinity-unknown-kind",
        ),
        pytest.param(
            "resourceGroups: [a\n",
            "not valid YAML (line 2, column 1: expected ',' or ']', but got '<stream end>'); fix the syntax",
            id="yaml-syntax",
        ),
        pytest.param("- a\n", "expected a mapping with 'resourceGroups:', got list", id="not-a-mapping"),
    ],
)
def test_bad_confs_are_refused_naming_the_field_and_the_fix(text: str, expected: str) -> None:
    with pytest.raises(AdmissionConfError) as caught:
        load_admission_conf(text)
    assert expected in str(caught.value)
