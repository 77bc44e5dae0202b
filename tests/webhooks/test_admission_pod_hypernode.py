"""Pod (disruption-budget annotations), PodGroup mutation (the namespace's queue) and HyperNode admission."""

from __future__ import annotations

from typing import Any

import pytest
from admission_builders import podgroup

from volcano_py.webhooks.hypernode import validate_hypernode_write
from volcano_py.webhooks.patch import PatchOp
from volcano_py.webhooks.pod import validate_pod_create
from volcano_py.webhooks.podgroup import mutate_podgroup

MIN = "volcano.sh/jdb-min-available"
MAX = "volcano.sh/jdb-max-unavailable"
FIX = "use a count such as '2' or a percentage from '1%' to '99%'"


def pod(annotations: dict[str, str], scheduler: str = "volcano") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "team-a", "annotations": annotations},
        "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "busybox"}]},
    }


@pytest.mark.parametrize(
    "annotations",
    [
        pytest.param({MIN: "2"}, id="count"),
        pytest.param({MAX: "50%"}, id="percentage"),
        pytest.param({MIN: "99%"}, id="largest-percentage"),
        pytest.param({}, id="none"),
    ],
)
def test_valid_budgets_are_admitted(annotations: dict[str, str]) -> None:
    assert validate_pod_create(pod(annotations)) == []


# Volcano's e2e (test/e2e/admission/pod_validation_test.go) matches the start of each of these.
@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param(
            {MIN: "-1"},
            f'metadata.annotations[{MIN}]: invalid value <"-1"> for {MIN}, it must be a positive integer; '
            f"{FIX}",
            id="negative",
        ),
        pytest.param(
            {MIN: "0"},
            f'metadata.annotations[{MIN}]: invalid value <"0"> for {MIN}, it must be a positive integer; '
            f"{FIX}",
            id="zero",
        ),
        pytest.param(
            {MAX: "0%"},
            f'metadata.annotations[{MAX}]: invalid value <"0%"> for {MAX}, it must be a valid percentage '
            f"which between 1% ~ 99%; {FIX}",
            id="zero-percent",
        ),
        pytest.param(
            {MIN: "100%"},
            f'metadata.annotations[{MIN}]: invalid value <"100%"> for {MIN}, it must be a valid percentage '
            f"which between 1% ~ 99%; {FIX}",
            id="hundred-percent",
        ),
        pytest.param(
            {MIN: "invalid"},
            f'metadata.annotations[{MIN}]: invalid value strconv.Atoi: parsing "invalid": invalid syntax for '
            f"{MIN}; {FIX}",
            id="string",
        ),
        pytest.param(
            {MIN: "2", MAX: "50%"},
            f"metadata.annotations[{MAX}]: not allow configure multiple annotations <[{MIN} {MAX}]> at same "
            f"time; cannot be set together with {MIN} (keep one of the two)",
            id="conflicting",
        ),
        pytest.param(
            {MIN: "abc", MAX: "50%"},
            f'metadata.annotations[{MIN}]: invalid value strconv.Atoi: parsing "abc": invalid syntax for '
            f"{MIN}; {FIX}",
            id="a-bad-value-before-the-conflict",
        ),
    ],
)
def test_bad_budgets_are_refused_in_volcanos_words(annotations: dict[str, str], expected: str) -> None:
    assert [str(p) for p in validate_pod_create(pod(annotations))] == [expected]


def test_pods_of_other_schedulers_pass_whatever_they_carry() -> None:
    assert validate_pod_create(pod({MIN: "0", MAX: "0%"}, scheduler="default-scheduler")) == []
    assert validate_pod_create(pod({MIN: "0"}, scheduler="gang"), scheduler_names=("volcano", "gang")) != []


@pytest.mark.parametrize(
    ("queue", "namespace", "expected"),
    [
        pytest.param(
            "default",
            {"scheduling.volcano.sh/queue-name": "team-q"},
            [PatchOp("add", "/spec/queue", "team-q")],
            id="default-takes-the-namespace-queue",
        ),
        pytest.param(
            None,
            {"scheduling.volcano.sh/queue-name": "team-q"},
            [PatchOp("add", "/spec/queue", "team-q")],
            id="no-queue-is-default",
        ),
        pytest.param("research", {"scheduling.volcano.sh/queue-name": "team-q"}, [], id="own-queue-kept"),
        pytest.param("default", {"other": "x"}, [], id="namespace-without-annotation"),
        pytest.param("default", None, [], id="namespace-unreadable"),
    ],
)
def test_podgroup_takes_its_namespace_queue(
    queue: str | None, namespace: dict[str, str] | None, expected: list[PatchOp]
) -> None:
    assert mutate_podgroup(podgroup(queue=queue), namespace) == expected


def hypernode(members: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "rack-1"},
        "spec": {"tier": 1, "members": members},
    }


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        pytest.param(
            [{"type": "Node", "selector": {"exactMatch": {"name": "node-1"}}}], [], id="exact-match-admitted"
        ),
        pytest.param(
            [{"type": "Node", "selector": {"regexMatch": {"pattern": "^node-[0-9]+$"}}}],
            [],
            id="regex-admitted",
        ),
        pytest.param(
            [],
            ["spec.members: member must have at least one member; add at least one member"],
            id="no-members",
        ),
        pytest.param(
            [{"type": "Node", "selector": {"regexMatch": {"pattern": "a(b"}}}],
            [
                "spec.members[0].selector.regexMatch.pattern: member regexMatch pattern is invalid: "
                "error parsing regexp: missing closing ): `a(b`; 'a(b': fix the pattern; Volcano compiles it "
                "with Go's regexp (RE2 syntax)"
            ],
            id="invalid-regex",
        ),
    ],
)
def test_hypernode_members(members: list[dict[str, Any]], expected: list[str]) -> None:
    assert [str(p) for p in validate_hypernode_write(hypernode(members))] == expected
