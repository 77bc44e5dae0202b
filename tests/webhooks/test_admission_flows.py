"""JobFlow, JobTemplate and CronJob admission decisions: the cluster's JobTemplates decide a flow's steps."""

from __future__ import annotations

from typing import Any

from volcano_py.webhooks.flow import validate_flow_object

TASKS = [{"name": "w", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}]


def _flow(*names: str) -> dict[str, Any]:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
            "spec": {"flows": [{"name": n} for n in names]}}  # fmt: skip


def test_a_flow_naming_templates_the_namespace_lacks_is_refused_per_step() -> None:
    problems = [str(p) for p in validate_flow_object(_flow("prep", "train"), {"prep"})]
    assert problems == [
        "spec.flows[1].name: no JobTemplate 'train' in namespace default "
        "(create the JobTemplate first, or fix the name)"
    ]
    assert validate_flow_object(_flow("prep", "train"), {"prep", "train"}) == []


def test_templates_are_not_looked_up_when_no_source_is_given() -> None:
    assert validate_flow_object(_flow("anything")) == []


def test_cronjobs_and_templates_get_their_own_rules() -> None:
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * *", "jobTemplate": {"spec": {"tasks": TASKS}}}}  # fmt: skip
    assert [p.path for p in validate_flow_object(cron, {"x"})] == ["spec.schedule"]
    template = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t"},
                "spec": {"tasks": TASKS, "minAvailable": 9}}  # fmt: skip
    assert [p.path for p in validate_flow_object(template)] == ["spec.minAvailable"]
