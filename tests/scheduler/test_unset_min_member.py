"""A PodGroup created without ``minMember`` (Volcano's stress suite creates ten such, with empty
``minResources``): the CRD gives no default, Go reads it as 0, and the group is Running after one session,
never held Inqueue waiting for a pod it does not need. Every reader of ``minMember`` agrees on the 0."""

from __future__ import annotations

from tests.scheduler.evict_harness import Cluster
from volcano_py.api.scheduling import PodGroupPhase, min_member_of
from volcano_py.scheduler.framework.job import JobInfo

CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def stress_podgroup(name: str) -> dict[str, object]:
    return {
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T10:00:00Z"},
        "spec": {"minResources": {}, "queue": "default"},
        "status": {"phase": "Pending"},
    }


def test_a_podgroup_without_min_member_runs() -> None:
    c = Cluster().nodes_named("n", 2).queue("default")
    c.podgroups += [stress_podgroup(f"pod-group-{i}") for i in range(3)]
    outcome = c.run(CONF)
    phases = {u.name: u.phase for u in outcome.result.podgroup_updates}
    assert phases == dict.fromkeys(("pod-group-0", "pod-group-1", "pod-group-2"), PodGroupPhase.RUNNING)
    for update in outcome.result.podgroup_updates:
        assert not [c for c in update.conditions if c.type == "Unschedulable"], update


def test_every_reader_takes_an_unset_min_member_as_zero() -> None:
    group = stress_podgroup("g")
    assert min_member_of(group) == 0
    assert JobInfo.from_podgroup(group).min_available == 0
