"""Property: any wire-form object of our kinds reads and writes back unchanged, and its CRD keeps
every field."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.batch import Job
from volcano_py.api.crd import crd_for, openapi_schema
from volcano_py.api.scheduling import PodGroup, Queue

names = st.from_regex(r"[a-z]([-a-z0-9]{0,10}[a-z0-9])?", fullmatch=True)
counts = st.integers(min_value=0, max_value=1000)
quantities = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from(["500m", "1.5", "4Gi", "512Mi", "1e3", "2k", "100"]),
)
resource_lists = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods"]), quantities, max_size=4
)
events = st.sampled_from(["PodFailed", "PodEvicted", "Unknown", "TaskCompleted", "*"])
actions = st.sampled_from(["RestartJob", "AbortJob", "RestartTask", "CompleteJob", "TerminateJob"])
policies = st.one_of(
    st.fixed_dictionaries(
        {"event": events, "action": actions}, optional={"timeout": st.sampled_from(["30s", "5m"])}
    ),
    st.fixed_dictionaries({"events": st.lists(events, min_size=1, max_size=3), "action": actions}),
    st.fixed_dictionaries({"exitCode": st.integers(min_value=1, max_value=255), "action": actions}),
)
templates = st.fixed_dictionaries(
    {"spec": st.fixed_dictionaries({"containers": st.just([{"name": "c", "image": "busybox"}])})},
    optional={"metadata": st.fixed_dictionaries({"labels": st.dictionaries(names, names, max_size=2)})},
)
tasks = st.fixed_dictionaries(
    {"name": names, "replicas": counts, "template": templates},
    optional={
        "minAvailable": counts,
        "maxRetry": counts,
        "policies": st.lists(policies, max_size=2),
        "topologyPolicy": st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"]),
        "dependsOn": st.fixed_dictionaries({"name": st.lists(names, max_size=2)}),
    },
)
jobs = st.fixed_dictionaries(
    {
        "apiVersion": st.just("batch.volcano.sh/v1alpha1"),
        "kind": st.just("Job"),
        "metadata": st.fixed_dictionaries({"name": names}),
        "spec": st.fixed_dictionaries(
            {"tasks": st.lists(tasks, min_size=1, max_size=3)},
            optional={
                "minAvailable": counts,
                "queue": names,
                "maxRetry": counts,
                "schedulerName": st.just("volcano"),
                "policies": st.lists(policies, max_size=2),
                "plugins": st.dictionaries(
                    st.sampled_from(["svc", "env", "ssh"]), st.lists(names, max_size=2)
                ),
                "ttlSecondsAfterFinished": counts,
                "networkTopology": st.fixed_dictionaries(
                    {"mode": st.sampled_from(["hard", "soft"])}, optional={"highestTierAllowed": counts}
                ),
            },
        ),
    }
)
podgroups = st.fixed_dictionaries(
    {
        "apiVersion": st.just("scheduling.volcano.sh/v1beta1"),
        "kind": st.just("PodGroup"),
        "metadata": st.fixed_dictionaries({"name": names, "namespace": names}),
        "spec": st.fixed_dictionaries(
            {"minMember": counts},
            optional={
                "queue": names,
                "minResources": resource_lists,
                "minTaskMember": st.dictionaries(names, counts),
            },
        ),
    },
    optional={
        "status": st.fixed_dictionaries(
            {"phase": st.sampled_from(["Pending", "Inqueue", "Running", "Unknown", "Completed"])},
            optional={"running": counts, "succeeded": counts, "failed": counts},
        )
    },
)
queues = st.fixed_dictionaries(
    {
        "apiVersion": st.just("scheduling.volcano.sh/v1beta1"),
        "kind": st.just("Queue"),
        "metadata": st.fixed_dictionaries({"name": names}),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "weight": st.integers(min_value=1, max_value=65535),
                "capability": resource_lists,
                "deserved": resource_lists,
                "guarantee": st.fixed_dictionaries({"resource": resource_lists}),
                "reclaimable": st.booleans(),
                "parent": names,
                "priority": counts,
                "dequeueStrategy": st.sampled_from(["fifo", "traverse"]),
            },
        ),
    }
)


def _kept(value: Any, schema: dict[str, Any]) -> bool:
    """Whether the server would keep every field of ``value`` under ``schema`` (no pruning)."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return True
    if isinstance(value, dict):
        props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        return all(
            _kept(v, props[k]) if k in props else isinstance(extra, dict) and _kept(v, extra)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return all(_kept(v, schema.get("items") or {}) for v in value)
    return True


@settings(max_examples=60, deadline=None)
@given(st.one_of(jobs, podgroups, queues))
def test_wire_objects_round_trip_and_survive_the_schema(doc: dict[str, Any]) -> None:
    model = {"Job": Job, "PodGroup": PodGroup, "Queue": Queue}[doc["kind"]]
    assert model.model_validate(doc).to_dict() == doc
    info = crd_for(doc["apiVersion"], doc["kind"])
    assert info is not None
    body = {k: v for k, v in doc.items() if k != "metadata"}
    assert _kept(body, openapi_schema(info))
