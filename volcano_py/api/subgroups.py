"""Which sub-group of a PodGroup (``spec.subGroupPolicy``) a pod belongs to: one rule for every reader.

A pod belongs to the first policy whose ``labelSelector`` (when set) selects it and for which it carries a
non-empty value for every ``matchLabelKeys`` key; the sub-group is that policy and those values. A policy
without ``matchLabelKeys`` therefore holds no pod. Pods of no policy form the job's default sub-group. The
scheduler (gang readiness, every placement path) reads membership only from here, and so ``job why``
(the words it shows come from the scheduler's PodGroup condition) and the simulator (which runs the
scheduler's sessions) agree with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from volcano_py.api.meta import LABEL_SELECTOR_OPERATORS, LabelSelector
from volcano_py.api.scheduling import SubGroupPolicySpec


@dataclass(frozen=True, slots=True, order=True)
class SubGroupKey:
    """A sub-group: the index of its policy in ``spec.subGroupPolicy`` and its ``matchLabelKeys`` values."""

    policy: int
    values: tuple[str, ...]

    def label(self, policies: Sequence[SubGroupPolicySpec]) -> str:
        """How a person names it: ``workers[group-index=3]``."""
        policy = policies[self.policy]
        name = policy.name or f"subGroupPolicy[{self.policy}]"
        pairs = ",".join(
            f"{k.rsplit('/', 1)[-1]}={v}" for k, v in zip(policy.match_label_keys, self.values, strict=False)
        )
        return f"{name}[{pairs}]"

    def order(self) -> tuple[int, tuple[tuple[int, str], ...]]:
        """Policy order, then partition number ("2" before "10")."""
        return self.policy, tuple((int(v), "") if v.isdigit() else (1 << 62, v) for v in self.values)


def parse_policies(raw: Any, where: str) -> tuple[SubGroupPolicySpec, ...]:
    """``spec.subGroupPolicy`` as read from a PodGroup; ValueError naming the entry when one is malformed."""
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise ValueError(f"{where}: spec.subGroupPolicy must be a list, got {type(raw).__name__}")
    out = []
    for i, entry in enumerate(raw):
        try:
            policy = SubGroupPolicySpec.model_validate(entry)
        except ValidationError as err:
            detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise ValueError(f"{where}: spec.subGroupPolicy[{i}]: {detail}") from None
        for r, req in enumerate((policy.label_selector or LabelSelector()).match_expressions):
            if req.operator not in LABEL_SELECTOR_OPERATORS:
                raise ValueError(
                    f"{where}: spec.subGroupPolicy[{i}].labelSelector.matchExpressions[{r}].operator "
                    f"{req.operator!r} is not allowed (use one of {', '.join(LABEL_SELECTOR_OPERATORS)})"
                )
        out.append(policy)
    return tuple(out)


def sub_group_size(policy: SubGroupPolicySpec) -> int:
    """Pods a sub-group of ``policy`` places all or nothing (``subGroupSize``, default 1)."""
    return policy.sub_group_size if policy.sub_group_size is not None else 1


def min_sub_groups(policy: SubGroupPolicySpec) -> int:
    """Ready sub-groups of ``policy`` the job needs before it is ready (``minSubGroups``, default 0)."""
    return policy.min_sub_groups or 0


def sub_group_of(policies: Sequence[SubGroupPolicySpec], labels: Mapping[str, str]) -> SubGroupKey | None:
    """The sub-group of a pod with ``labels``; None for the job's default sub-group."""
    for i, policy in enumerate(policies):
        if not policy.match_label_keys:
            continue
        if policy.label_selector is not None and not policy.label_selector.matches(labels):
            continue
        values = tuple(labels.get(key, "") for key in policy.match_label_keys)
        if all(values):
            return SubGroupKey(i, values)
    return None
