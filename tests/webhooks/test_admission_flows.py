"""JobFlow, JobTemplate and CronJob admission decisions: each object on its own, as Volcano admits it."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.validation import validate_object
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
                "spec": {"tasks": "many"}}  # fmt: skip
    assert [p.path for p in validate_flow_object(template)] == ["spec.tasks"]


def test_the_job_rules_wait_for_the_job_as_in_volcano_but_validate_still_reports_them() -> None:
    # Volcano has no JobTemplate webhook and its CronJob webhook does not look at the Job spec: a Job spec
    # breaking the Job rules is admitted, and refused when a Job is made from it.
    spec = {"tasks": TASKS, "minAvailable": 9}
    template = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate", "metadata": {"name": "t"},
                "spec": spec}  # fmt: skip
    cron = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": spec}}}  # fmt: skip
    assert validate_flow_object(template) == validate_flow_object(cron) == []
    assert [p.path for p in validate_object(template)] == ["spec.minAvailable"]
    assert [p.path for p in validate_object(cron)] == ["spec.jobTemplate.spec.minAvailable"]


def _steps(*steps: tuple[str, list[str]]) -> dict[str, Any]:
    flows = [{"name": n, **({"dependsOn": {"targets": t}} if t else {})} for n, t in steps]
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "metadata": {"name": "f"},
            "spec": {"flows": flows, "jobRetainPolicy": "retain"}}  # fmt: skip


# Volcano's own admission e2e specs for JobFlow (test/e2e/admission/jobflow_validation_test.go), one per row:
# the flow, and the substrings its refusal must contain (none: it is admitted).
@pytest.mark.parametrize(
    ("body", "refusal"),
    [
        pytest.param(_steps(("a", []), ("b", ["a"]), ("c", ["a", "b"]), ("d", ["b"]), ("e", ["c", "d"])), [],
                     id="valid-dag"),
        pytest.param(_steps(("a", []), ("a", []), ("b", ["a"])), [], id="duplicate-names"),
        pytest.param(_steps(("b", ["a"]), ("c", ["a", "b"])),
                     ["jobflow Flow is not DAG", "vertex is not defined"], id="missing-flow-definition"),
        pytest.param(_steps(("a", []), ("b", ["a"]), ("c", ["a"]), ("c", ["b"])), [],
                     id="same-target-and-duplicate"),
        pytest.param(_steps(("start", []), ("middle", ["start"]), ("end", ["middle"])), [], id="linear"),
        pytest.param(_steps(("root1", []), ("root2", []), ("level1-a", ["root1"]), ("level1-b", ["root2"]),
                            ("level2", ["level1-a", "level1-b"]), ("final", ["level2"])), [],
                     id="complex-dag"),
        pytest.param(_steps(), [], id="empty-flows"),
        pytest.param(_steps(("single-flow", [])), [], id="single-flow"),
        pytest.param(_steps(("self-dependent", ["self-dependent"])), ["jobflow Flow is not DAG"],
                     id="self-dependency"),
    ],
)  # fmt: skip
def test_volcanos_jobflow_admission_specs(body: dict[str, Any], refusal: list[str]) -> None:
    said = "; ".join(str(p) for p in validate_flow_object(body))
    if not refusal:
        assert said == ""
    for text in refusal:
        assert text in said
