"""Sub-group membership (api/subgroups.py): Volcano's getSubJobMatchValues, one rule for every reader."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.scheduling import SubGroupPolicySpec
from volcano_py.api.subgroups import SubGroupKey, parse_policies, sub_group_of

IDX = "leaderworkerset.sigs.k8s.io/group-index"
ROLE = "role"


def _policies(*raw: dict[str, Any]) -> tuple[SubGroupPolicySpec, ...]:
    return parse_policies(list(raw), "PodGroup default/pg")


WORKERS = {"name": "workers", "matchLabelKeys": [IDX]}
BY_ROLE = {"name": "w", "labelSelector": {"matchLabels": {ROLE: "w"}}, "matchLabelKeys": [IDX]}
NO_KEYS = {"name": "all", "labelSelector": {"matchLabels": {ROLE: "w"}}}
TWO_KEYS = {"name": "pairs", "matchLabelKeys": [IDX, "rank"]}
EXPR = {
    "name": "e",
    "labelSelector": {"matchExpressions": [{"key": ROLE, "operator": "NotIn", "values": ["leader"]}]},
    "matchLabelKeys": [IDX],
}


@pytest.mark.parametrize(
    ("policies", "labels", "want"),
    [
        pytest.param([WORKERS], {IDX: "3"}, SubGroupKey(0, ("3",)), id="keys-present"),
        pytest.param([WORKERS], {}, None, id="missing-key-default-sub-group"),
        pytest.param([WORKERS], {IDX: ""}, None, id="empty-value-default-sub-group"),
        pytest.param([NO_KEYS], {ROLE: "w", IDX: "1"}, None, id="policy-without-match-label-keys-holds-none"),
        pytest.param([NO_KEYS, WORKERS], {ROLE: "w", IDX: "1"}, SubGroupKey(1, ("1",)), id="falls-to-next"),
        pytest.param(
            [BY_ROLE, WORKERS], {ROLE: "w", IDX: "2"}, SubGroupKey(0, ("2",)), id="first-policy-wins"
        ),
        pytest.param([BY_ROLE, WORKERS], {ROLE: "ps", IDX: "2"}, SubGroupKey(1, ("2",)), id="selector-skips"),
        pytest.param([BY_ROLE], {ROLE: "ps", IDX: "2"}, None, id="selected-by-none"),
        pytest.param([TWO_KEYS], {IDX: "1", "rank": "0"}, SubGroupKey(0, ("1", "0")), id="every-key"),
        pytest.param([TWO_KEYS], {IDX: "1"}, None, id="one-key-missing"),
        pytest.param([EXPR], {ROLE: "leader", IDX: "1"}, None, id="not-in-excludes"),
        pytest.param([EXPR], {IDX: "1"}, SubGroupKey(0, ("1",)), id="not-in-absent-key-selects"),
    ],
)
def test_membership(policies: list[dict[str, Any]], labels: dict[str, str], want: SubGroupKey | None) -> None:
    assert sub_group_of(_policies(*policies), labels) == want


def test_partitions_order_by_number_and_read_as_policy_name_and_values() -> None:
    keys = [SubGroupKey(0, (v,)) for v in ("10", "2", "1")]
    assert [k.values[0] for k in sorted(keys, key=SubGroupKey.order)] == ["1", "2", "10"]
    assert SubGroupKey(0, ("2",)).label(_policies(WORKERS)) == "workers[group-index=2]"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            [{"name": "w", "subGroupSize": 0}], "spec.subGroupPolicy[0]: subGroupSize", id="size-below-one"
        ),
        pytest.param(
            [WORKERS, {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}],
            "spec.subGroupPolicy[1].labelSelector.matchExpressions[0].operator 'Near'",
            id="bad-operator",
        ),
        pytest.param({"name": "w"}, "spec.subGroupPolicy must be a list", id="not-a-list"),
    ],
)
def test_bad_policies_are_refused_naming_the_field(raw: Any, message: str) -> None:
    with pytest.raises(ValueError, match="PodGroup default/pg") as err:
        parse_policies(raw, "PodGroup default/pg")
    assert message in str(err.value)
