"""Queue and PodGroup admission: defaults, hierarchy rules, undeletable queues, and open-queue submission."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from admission_builders import podgroup, queue, snapshot

from volcano_py.webhooks.patch import PatchOp, apply_patch
from volcano_py.webhooks.podgroup import validate_podgroup_create
from volcano_py.webhooks.queue import mutate_queue, validate_queue_delete, validate_queue_write

QUEUES = snapshot(
    queue(
        "org",
        capability={"cpu": "8", "memory": "16Gi"},
        deserved={"cpu": "6"},
        guarantee={"resource": {"cpu": "2"}},
    ),
    queue(
        "team-a",
        parent="org",
        capability={"cpu": "6"},
        deserved={"cpu": "4"},
        guarantee={"resource": {"cpu": "1"}},
    ),
    queue("closed", state="Closed"),
    queue("busy"),
)
QUEUES["busy"]["status"]["allocated"] = {"pods": "3", "cpu": "2"}


def _write(body: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [str(problem) for problem in validate_queue_write(body, QUEUES, old)]


# --- mutate ------------------------------------------------------------------------------------------------


def test_new_queue_gets_reclaimable_and_weight() -> None:
    body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}}
    assert apply_patch(copy.deepcopy(body), mutate_queue(body))["spec"] == {"reclaimable": True, "weight": 1}


def test_set_queue_fields_are_kept() -> None:
    assert mutate_queue(queue("q", weight=5, reclaimable=False)) == []


def test_hierarchy_annotations_are_rooted() -> None:
    body = queue("q", annotations={"volcano.sh/hierarchy": "a/b", "volcano.sh/hierarchy-weights": "2/3"})
    assert mutate_queue(body) == [
        PatchOp("add", "/metadata/annotations/volcano.sh~1hierarchy", "root/a/b"),
        PatchOp("add", "/metadata/annotations/volcano.sh~1hierarchy-weights", "1/2/3"),
    ]


# --- create / update ---------------------------------------------------------------------------------------


def test_a_child_that_fits_is_admitted() -> None:
    assert _write(queue("team-b", parent="org", capability={"cpu": "4"}, deserved={"cpu": "2"})) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            queue("x", deserved={"cpu": "1"}, guarantee={"resource": {"cpu": "2"}}),
            "spec.deserved.cpu: deserved[cpu]=1 must be >= guarantee[cpu]=2; raise deserved.cpu to at least "
            "'2'",
            id="deserved-below-guarantee",
        ),
        pytest.param(
            queue("x", deserved={"cpu": "4"}, capability={"cpu": "2"}),
            "spec.deserved.cpu: deserved[cpu]=4 must be <= capability[cpu]=2; lower deserved.cpu or raise "
            "capability.cpu",
            id="deserved-above-capability",
        ),
        pytest.param(
            queue("x", weight=-1),
            "spec.weight: -1 is too small (use a value >= 1)",
            id="weight-negative",
        ),
        pytest.param(
            queue("team-b", parent="ghost"),
            'spec.parent: parent queue ghost not found: queue.scheduling.volcano.sh "ghost" not found; '
            "create it first, or use 'root'",
            id="missing-parent",
        ),
        pytest.param(
            queue("team-b", parent="busy"),
            "spec.parent: queue busy cannot be the parent queue of queue team-b because it has allocated "
            "Pods: 3; a parent queue holds no jobs (pick another parent or drain that queue first)",
            id="parent-with-pods",
        ),
        pytest.param(
            queue("team-b", parent="org", capability={"cpu": "16"}),
            "spec.capability.cpu: queue team-b capability[cpu]=16 exceeds its ancestor's capability=8; the "
            "capability of ancestor queue 'org' bounds it (lower it to at most 8)",
            id="capability-above-ancestor",
        ),
        pytest.param(
            queue("team-b", parent="org", deserved={"cpu": "3"}),
            "spec.deserved.cpu: parent queue org validation failed: sum of children's deserved; children of "
            "queue 'org' would together have deserved 7 of cpu, more than its 6 (lower the children's "
            "deserved.cpu or raise that of queue 'org')",
            id="siblings-deserved-above-parent",
        ),
        pytest.param(
            queue("team-b", parent="org", deserved={"cpu": "2"}, guarantee={"resource": {"cpu": "2"}}),
            "spec.guarantee.resource.cpu: parent queue org validation failed: sum of children's guarantee; "
            "children of queue 'org' would together have guarantee 3 of cpu, more than its 2 (lower the "
            "children's guarantee.resource.cpu or raise that of queue 'org')",
            id="siblings-guarantee-above-parent",
        ),
        pytest.param(
            queue("x", parent="x"),
            "spec.parent: queue x cannot use itself as parent; name another queue or 'root'",
            id="own-parent",
        ),
    ],
)
def test_queue_write_is_rejected_with_the_field_and_fix(body: dict[str, Any], expected: str) -> None:
    assert _write(body) == [expected]


def test_reparenting_into_a_descendant_is_a_cycle() -> None:
    old = QUEUES["org"]
    new = copy.deepcopy(old)
    new["spec"]["parent"] = "team-a"
    assert _write(new, old) == [
        "spec.parent: 'team-a' would make a cycle (org -> team-a -> org); choose a parent that is not a "
        "descendant of 'org'"
    ]


def test_shrinking_a_parent_below_its_child_is_rejected() -> None:
    old = QUEUES["org"]
    new = copy.deepcopy(old)
    new["spec"]["capability"] = {"cpu": "5"}
    new["spec"]["deserved"] = {"cpu": "5"}
    assert _write(new, old) == [
        "spec.capability.cpu: queue org capability[cpu]=5 is smaller than its descendants' max capability=6; "
        "child queue 'team-a' has more (raise it to at least 6)"
    ]


def test_root_queue_quotas_cannot_change() -> None:
    old = queue("root", capability={"cpu": "100"})
    new = copy.deepcopy(old)
    new["spec"]["capability"] = {"cpu": "50"}
    new["spec"]["deserved"] = {"cpu": "50"}
    assert _write(new, old) == [
        "spec.capability: root queue's resource attributes (capability, deserved, guarantee) cannot be "
        "modified; capability, deserved changed (root stands for the whole cluster; set quotas on its "
        "children)"
    ]
    weighted = copy.deepcopy(old)
    weighted["spec"]["weight"] = 3
    assert _write(weighted, old) == []


def test_update_that_does_not_touch_the_hierarchy_skips_its_checks() -> None:
    old = QUEUES["team-a"]
    new = copy.deepcopy(old)
    new["spec"]["weight"] = 4
    assert _write(new, old) == []


def test_annotation_hierarchy_must_end_at_a_leaf() -> None:
    queues = {
        **QUEUES,
        "y": queue(
            "y", annotations={"volcano.sh/hierarchy": "root/a/b", "volcano.sh/hierarchy-weights": "1/2/3"}
        ),
    }
    body = queue("x", annotations={"volcano.sh/hierarchy": "root/a", "volcano.sh/hierarchy-weights": "1/2"})
    assert [str(p) for p in validate_queue_write(body, queues)] == [
        "metadata.annotations[volcano.sh/hierarchy]: root/a is not allowed to be in the sub path of root/a/b "
        "of queue y; a queue must be a leaf of the hierarchy (extend the path, e.g. 'root/a/x')"
    ]


# --- delete ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param(
            "default",
            "metadata.name: `default` queue can not be deleted; jobs that name no queue go there (close it "
            "instead: 'vcctl queue operate -n default -a close')",
            id="default",
        ),
        pytest.param(
            "root",
            "metadata.name: `root` queue can not be deleted; it is the top of the queue hierarchy",
            id="root",
        ),
        pytest.param(
            "org",
            "metadata.name: queue org can not be deleted because it has 1 child queues: team-a; delete them "
            "or move them to another parent first",
            id="has-children",
        ),
    ],
)
def test_undeletable_queues(name: str, expected: str) -> None:
    assert [str(p) for p in validate_queue_delete(name, QUEUES)] == [expected]


def test_a_leaf_queue_can_be_deleted() -> None:
    assert validate_queue_delete("team-a", QUEUES) == []


# --- podgroup ----------------------------------------------------------------------------------------------


def test_podgroup_in_a_parent_queue_is_refused_in_our_words_alone() -> None:
    # Volcano's PodGroup webhook has no leaf rule, so none of its (job) words are borrowed here.
    assert [str(p) for p in validate_podgroup_create(podgroup(queue="org"), QUEUES)] == [
        "spec.queue: queue 'org' has child queues (team-a); podgroups go to leaf queues (submit to 'team-a' "
        "or another queue without children)"
    ]


def test_podgroup_in_an_open_leaf_queue_is_admitted() -> None:
    assert validate_podgroup_create(podgroup(queue="team-a"), QUEUES) == []


def test_podgroup_without_queue_goes_to_default() -> None:
    assert validate_podgroup_create(podgroup(queue=None), QUEUES) == []


def test_podgroup_in_a_queue_the_controller_has_not_opened_yet_is_admitted() -> None:
    fresh = {**QUEUES, "fresh": queue("fresh", state=None)}
    assert validate_podgroup_create(podgroup(queue="fresh"), fresh) == []


@pytest.mark.parametrize(
    ("queue_name", "expected"),
    [
        pytest.param(
            "closed",
            "spec.queue: can only submit PodGroup to queue with state `Open`, queue `closed` status is "
            "`Closed`; queue 'closed' is Closed; podgroups can only be submitted to an Open queue (open it "
            "with 'vcctl queue operate -n closed -a open', or use another queue)",
            id="closed",
        ),
        pytest.param(
            "nope",
            'spec.queue: unable to find queue: queue.scheduling.volcano.sh "nope" not found; create it '
            "first, or use an existing queue: 'busy', 'closed', 'default', 'org', 'root'",
            id="missing",
        ),
    ],
)
def test_podgroup_queue_must_exist_and_be_open(queue_name: str, expected: str) -> None:
    assert [str(p) for p in validate_podgroup_create(podgroup(queue=queue_name), QUEUES)] == [expected]


def test_podgroup_with_negative_min_member_names_the_field() -> None:
    assert [str(p) for p in validate_podgroup_create(podgroup(min_member=-1), QUEUES)] == [
        "spec.minMember: -1 is too small (use a value >= 0)"
    ]
