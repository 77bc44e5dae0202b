"""JobFlow, JobTemplate and CronJob admission decisions: each object on its own, as Volcano admits it."""

from __future__ import annotations

from typing import Any

from volcano_py.webhooks.flow import validate_flow_object

TASKS = [{"name": "w", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}]


def _flow(*names: str) -> dict[str, Any]:
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
            "spec": {"flows": [{"name": n} for n in names]}}  # fmt: skip


def test_a_flow_is_admitted_before_its_templates_exist_as_volcano_admits_it() -> None:
    assert validate_flow_object(_flow("prep", "train")) == []


def test_cronjobs_and_templates_get_their_own_rules() -> None:
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * *", "jobTemplate": {"spec": {"tasks": TASKS}}}}  # fmt: skip
    assert [p.path for p in validate_flow_object(cron)] == ["spec.schedule"]
    template = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t"},
                "spec": {"tasks": TASKS, "minAvailable": 9}}  # fmt: skip
    assert [p.path for p in validate_flow_object(template)] == ["spec.minAvailable"]
