"""One set of Job defaults: a Job admitted through the mutating webhook runs as the Job stored without it.

Random Jobs, each resolved twice: once after the webhook's patch (``mutate_job``), once as stored without it
(the webhook was down or is not installed). The controller must read the same Job both ways: the same task
names, replicas, minAvailable and maxRetry, the same plugins, the same refusals.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from volcano_py.api.job_view import JobSpecError, ResolvedJob, resolve_job
from volcano_py.webhooks.job import mutate_job
from volcano_py.webhooks.patch import apply_patch

JSON = dict[str, Any]
MISSING = object()


def _maybe(draw: st.DrawFn, body: JSON, key: str, values: st.SearchStrategy[Any]) -> None:
    value = draw(st.one_of(st.just(MISSING), values))
    if value is not MISSING:
        body[key] = value


@st.composite
def tasks(draw: st.DrawFn, index: int) -> JSON:
    pod_spec: JSON = {"containers": [{"name": "c", "image": "busybox"}]}
    if draw(st.booleans()):
        pod_spec["hostNetwork"] = True
        _maybe(draw, pod_spec, "dnsPolicy", st.sampled_from(["", "Default", "ClusterFirst"]))
    task: JSON = {"template": {"spec": pod_spec}}
    _maybe(draw, task, "name", st.sampled_from(["", f"t{index}", "worker" if index else "master"]))
    _maybe(draw, task, "replicas", st.integers(0, 4))
    _maybe(draw, task, "minAvailable", st.integers(0, 4))
    _maybe(draw, task, "maxRetry", st.integers(0, 5))
    if draw(st.integers(0, 5)) == 0:
        size = draw(st.integers(1, 2))
        total = draw(st.integers(1, 2))
        task["replicas"] = size * total
        task["partitionPolicy"] = {
            "totalPartitions": total,
            "partitionSize": size,
            "minPartitions": draw(st.integers(0, total)),
        }
    return task


@st.composite
def jobs(draw: st.DrawFn) -> JSON:
    count = draw(st.integers(1, 3))
    spec: JSON = {"tasks": [draw(tasks(i)) for i in range(count)]}
    _maybe(draw, spec, "minAvailable", st.integers(0, 6))
    _maybe(draw, spec, "maxRetry", st.integers(0, 5))
    _maybe(draw, spec, "queue", st.sampled_from(["", "default"]))
    _maybe(draw, spec, "schedulerName", st.sampled_from(["", "volcano"]))
    _maybe(
        draw,
        spec,
        "plugins",
        st.dictionaries(st.sampled_from(["env", "svc", "ssh", "tensorflow", "mpi", "pytorch"]), st.just([])),
    )
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns", "uid": "u-1"},
        "spec": spec,
    }


def _as_run(resolved: ResolvedJob) -> JSON:
    """What the controller reads of a resolved Job."""
    return {
        "queue": resolved.queue,
        "scheduler": resolved.scheduler_name,
        "min_available": resolved.min_available,
        "max_retry": resolved.max_retry,
        "plugins": resolved.plugins,
        "tasks": [
            (
                t.name,
                t.replicas,
                t.min_available,
                t.max_retry,
                (t.template.get("spec") or {}).get("dnsPolicy"),
            )
            for t in resolved.tasks
        ],
    }


def _resolved(body: JSON) -> JSON | str:
    try:
        return _as_run(resolve_job(body))
    except JobSpecError as err:
        return f"refused: {err}"


def _admitted(body: JSON) -> JSON:
    return apply_patch(copy.deepcopy(body), mutate_job(body))


@settings(max_examples=300, deadline=None)
@given(jobs())
@example(
    # A task with no name and no replicas, on a Job with no minAvailable: the first case found on the two sets
    # of defaults this module replaced (``default`` against ``default0``, one replica against none).
    {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns", "uid": "u-1"},
        "spec": {"tasks": [{"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}]},
    }
)
def test_a_job_admitted_through_the_webhook_resolves_as_the_same_job_stored_without_it(body: JSON) -> None:
    assert _resolved(_admitted(body)) == _resolved(body)


@settings(max_examples=100, deadline=None)
@given(jobs())
def test_the_webhook_defaults_are_settled_after_one_pass(body: JSON) -> None:
    """Admitting an admitted Job again changes nothing (a replayed review, an update through the webhook)."""
    assert mutate_job(_admitted(body)) == []
