"""JobFlow, CronJob and HyperNode discovery against the real control plane, with the operator and scheduler
running in-process (``ctl_harness``)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from ctl_harness import Env, env, task, vcjob, wait_for

from volcano_py.api import constants as c
from volcano_py.controllers.hypernode.worker import CONFIGMAP_PATH
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH, ApiError
from volcano_py.kube.kinds import CRONJOBS, EVENTS, HYPERNODES, JOBFLOWS, JOBTEMPLATES, NODES

__all__ = ["env"]
pytestmark = pytest.mark.integration
JSON = dict[str, Any]


async def make_template(env: Env, name: str, *tasks: JSON, **spec: Any) -> None:
    job = vcjob(name, *tasks, **spec)
    body = {"apiVersion": c.FLOW_API_VERSION, "kind": c.JOBTEMPLATE_KIND, "metadata": {"name": name},
            "spec": job["spec"]}  # fmt: skip
    await env.api.create(JOBTEMPLATES.collection_path(env.ns), body)


async def make_flow(env: Env, name: str, *steps: tuple[str, list[str]]) -> JSON:
    flows = [{"name": s, **({"dependsOn": {"targets": t}} if t else {})} for s, t in steps]
    body = {"apiVersion": c.FLOW_API_VERSION, "kind": c.JOBFLOW_KIND, "metadata": {"name": name},
            "spec": {"flows": flows}}  # fmt: skip
    created: JSON = await env.api.create(JOBFLOWS.collection_path(env.ns), body)
    return created


async def flow_phase(env: Env, name: str) -> str:
    flow = await env.api.get(JOBFLOWS.object_path(name, env.ns))
    return str(((flow.get("status") or {}).get("state") or {}).get("phase") or "")


async def wait_flow(env: Env, name: str, phase: str, seconds: float = 90) -> JSON:
    async def probe() -> JSON | None:
        flow = await env.api.get(JOBFLOWS.object_path(name, env.ns))
        return flow if ((flow.get("status") or {}).get("state") or {}).get("phase") == phase else None

    found: JSON = await wait_for(f"JobFlow {name} {phase}", probe, seconds)
    return found


async def jobs(env: Env) -> dict[str, JSON]:
    listed = await env.api.get(f"/apis/{c.BATCH_API_VERSION}/namespaces/{env.ns}/jobs")
    return {j["metadata"]["name"]: j for j in listed.get("items") or []}


def finished_at(job: JSON) -> str:
    return str(job["status"]["state"]["lastTransitionTime"])


async def test_diamond_flow_runs_in_dependency_order_and_succeeds(env: Env) -> None:
    for name in "abcd":
        await make_template(env, name, task("work", 1, complete_after="1s"))
    await make_flow(env, "diamond", ("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"]))
    flow = await wait_flow(env, "diamond", "Succeed", 120)
    made = await jobs(env)
    assert sorted(made) == ["diamond-a", "diamond-b", "diamond-c", "diamond-d"]
    created = {n: j["metadata"]["creationTimestamp"] for n, j in made.items()}
    # Each step's Job was created only once its targets' Jobs had completed (RFC 3339 UTC sorts as text).
    for step, targets in (("b", "a"), ("c", "a"), ("d", "bc")):
        for target in targets:
            assert created[f"diamond-{step}"] >= finished_at(made[f"diamond-{target}"]), (step, target)
    status = flow["status"]
    assert sorted(status["completedJobs"]) == sorted(made)
    assert {r["name"]: r["state"] for r in status["jobStatusList"]} == dict.fromkeys(made, "Completed")
    labels = made["diamond-d"]["metadata"]["labels"]
    assert labels[c.CREATED_BY_JOB_FLOW_KEY] == f"{env.ns}.diamond"
    assert labels[c.CREATED_BY_JOB_TEMPLATE_KEY] == f"{env.ns}.d"

    async def template_status() -> list[str]:
        template = await env.api.get(JOBTEMPLATES.object_path("d", env.ns))
        return list((template.get("status") or {}).get("jobDependsOnList") or [])

    assert await wait_for("JobTemplate d lists its Job", template_status, 20) == ["diamond-d"]


async def test_a_jobflow_applied_before_its_templates_runs_once_they_exist(env: Env) -> None:
    created = await make_flow(env, "early", ("prep", []))

    async def warned() -> bool:
        listed = await env.api.get(EVENTS.collection_path(env.ns))
        return any(e.get("reason") == "TemplateNotFound" and e["involvedObject"]["name"] == "early"
                   for e in listed.get("items") or ())  # fmt: skip

    assert await wait_for("a TemplateNotFound warning on the flow", warned, 30)
    assert await jobs(env) == {}
    # While it waits the controller writes nothing to it (as Volcano's): the object a client has just
    # created can be updated as it is, with no conflict (Volcano's admission e2e does exactly this).
    created["spec"]["flows"].append({"name": "train", "dependsOn": {"targets": ["prep"]}})
    await env.api.replace(JOBFLOWS.object_path("early", env.ns), created)
    await make_template(env, "prep", task("work", 1, complete_after="1s"))
    await make_template(env, "train", task("work", 1, complete_after="1s"))
    await wait_flow(env, "early", "Succeed", 120)
    assert sorted(await jobs(env)) == ["early-prep", "early-train"]


async def test_a_failed_step_fails_the_flow_and_its_dependants_never_start(env: Env) -> None:
    restart = [{"event": "PodFailed", "action": "RestartJob"}]
    await make_template(env, "prep", task("work", 1, fail_after="1s"), policies=restart, maxRetry=1)
    await make_template(env, "train", task("work", 1, complete_after="1s"))
    await make_flow(env, "broken", ("prep", []), ("train", ["prep"]))
    flow = await wait_flow(env, "broken", "Failed", 120)
    assert flow["status"]["failedJobs"] == ["broken-prep"]
    await asyncio.sleep(2)  # a dependant that would wrongly start gets the chance to
    assert sorted(await jobs(env)) == ["broken-prep"]
    assert await flow_phase(env, "broken") == "Failed"


async def test_a_controller_restart_mid_flow_creates_nothing_twice(env: Env) -> None:
    await make_template(env, "first", task("work", 1, complete_after="4s"))
    await make_template(env, "second", task("work", 1, complete_after="1s"))
    await make_flow(env, "resume", ("first", []), ("second", ["first"]))
    await env.wait_phase("resume-first", "Running", seconds=60)
    before = (await jobs(env))["resume-first"]["metadata"]["uid"]
    assert env.operator is not None
    await env.operator.stop()
    env.start_operator()
    await wait_flow(env, "resume", "Succeed", 120)
    made = await jobs(env)
    assert sorted(made) == ["resume-first", "resume-second"]
    assert made["resume-first"]["metadata"]["uid"] == before


async def test_cronjob_with_forbid_skips_runs_while_one_is_active(env: Env) -> None:
    job_spec = vcjob("x", task("work", 1, complete_after="8s"))["spec"]
    body = {
        "apiVersion": c.BATCH_API_VERSION,
        "kind": c.CRONJOB_KIND,
        "metadata": {"name": "tick"},
        "spec": {"schedule": "@every 3s", "concurrencyPolicy": "Forbid", "timeZone": "Asia/Shanghai",
                 "jobTemplate": {"spec": job_spec}},
    }  # fmt: skip
    await env.api.create(CRONJOBS.collection_path(env.ns), body)

    async def two_runs() -> list[JSON] | None:
        runs = sorted((await jobs(env)).values(), key=lambda j: str(j["metadata"]["creationTimestamp"]))
        return runs if len(runs) >= 2 else None

    runs = await wait_for("two runs of the CronJob", two_runs, 90)
    first, second = runs[0], runs[1]
    await env.api.patch(CRONJOBS.object_path("tick", env.ns), {"spec": {"suspend": True}})
    # Forbid: the second run started only once the first had finished, though the schedule came due sooner.
    first = (await jobs(env))[first["metadata"]["name"]]
    assert first["status"]["state"]["phase"] == "Completed"
    assert second["metadata"]["creationTimestamp"] >= finished_at(first)
    stamp = first["metadata"]["annotations"][c.CRONJOB_SCHEDULED_TIMESTAMP_KEY]
    assert stamp.endswith("+08:00")
    assert first["metadata"]["ownerReferences"][0]["kind"] == c.CRONJOB_KIND
    events = await env.api.get(EVENTS.collection_path(env.ns), fieldSelector="involvedObject.name=tick")
    assert "ForbidConcurrent" in {e["reason"] for e in events.get("items") or []}
    cron = await env.api.get(CRONJOBS.object_path("tick", env.ns))
    assert cron["status"]["lastScheduleTime"]


async def test_a_controller_restart_neither_repeats_nor_stops_a_cronjobs_runs(env: Env) -> None:
    job_spec = vcjob("x", task("work", 1, complete_after="1s"))["spec"]
    body = {"apiVersion": c.BATCH_API_VERSION, "kind": c.CRONJOB_KIND, "metadata": {"name": "beat"},
            "spec": {"schedule": "@every 4s", "jobTemplate": {"spec": job_spec}}}  # fmt: skip
    await env.api.create(CRONJOBS.collection_path(env.ns), body)

    async def runs() -> list[str]:
        made = (await jobs(env)).values()
        return sorted(j["metadata"]["annotations"][c.CRONJOB_SCHEDULED_TIMESTAMP_KEY] for j in made)

    await wait_for("a first run", runs, 30)
    assert env.operator is not None
    await env.operator.stop()
    down = datetime.now(UTC)
    before = await runs()
    await asyncio.sleep(6)  # a run time passes with no controller
    env.start_operator()

    async def resumed() -> list[str] | None:
        found = await runs()
        return found if any(datetime.fromisoformat(t) >= down for t in found) else None

    scheduled = await wait_for("a run after the restart", resumed, 30)
    await env.api.patch(CRONJOBS.object_path("beat", env.ns), {"spec": {"suspend": True}})
    assert len(scheduled) == len(set(scheduled)), f"a scheduled time ran twice: {scheduled}"
    assert scheduled[: len(before)] == before  # nothing from before the stop was made again


RACK, SPINE = "test.volcano-py.io/rack", "test.volcano-py.io/spine"
DISCOVERY_CONF = f"""
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        itest:
          - nodeLabel: {SPINE}
          - nodeLabel: {RACK}
          - nodeLabel: kubernetes.io/hostname
"""


async def _label(env: Env, node: str, **labels: str | None) -> None:
    patch = {"metadata": {"labels": {f"test.volcano-py.io/{k}": v for k, v in labels.items()}}}
    await env.api.patch(NODES.object_path(node), patch, STRATEGIC_MERGE_PATCH)


async def _discovered(env: Env) -> dict[tuple[int, str], list[str]]:
    selector = f"{c.NETWORK_TOPOLOGY_SOURCE_KEY}=label"
    items = (await env.api.get(HYPERNODES.collection_path(), labelSelector=selector)).get("items") or []
    names = {h["metadata"]["name"]: h for h in items}

    def show(name: str) -> str:
        labels = names[name]["metadata"]["labels"] if name in names else {}
        return labels.get(RACK) or labels.get(SPINE) or name

    return {
        (h["spec"]["tier"], show(h["metadata"]["name"])): [
            show(m["selector"]["exactMatch"]["name"]) for m in h["spec"]["members"]
        ]
        for h in items
    }


async def test_hypernodes_are_discovered_from_node_labels_and_follow_them(env: Env) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": c.VOLCANO_SYSTEM_NAMESPACE}}
    try:
        await env.api.create("/api/v1/namespaces", namespace)
    except ApiError as exc:
        if not exc.conflict:
            raise
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": c.CONTROLLER_CONFIGMAP},
                 "data": {c.CONTROLLER_CONFIG_KEY: DISCOVERY_CONF}}  # fmt: skip
    await env.api.create(f"/api/v1/namespaces/{c.VOLCANO_SYSTEM_NAMESPACE}/configmaps", configmap)
    try:
        await _label(env, "node-0", rack="ra", spine="sa")
        await _label(env, "node-1", rack="ra", spine="sa")
        await _label(env, "node-2", rack="rb", spine="sa")
        expected = {(1, "ra"): ["node-0", "node-1"], (1, "rb"): ["node-2"], (2, "sa"): ["ra", "rb"]}

        async def found(want: dict[tuple[int, str], list[str]]) -> bool:
            return await _discovered(env) == want

        await wait_for(f"HyperNodes {expected}", lambda: found(expected), 30)

        async def counted() -> bool:
            selector = f"{c.NETWORK_TOPOLOGY_SOURCE_KEY}=label"
            items = (await env.api.get(HYPERNODES.collection_path(), labelSelector=selector))["items"]
            return all((h.get("status") or {}).get("nodeCount") == len(h["spec"]["members"]) for h in items)

        await wait_for("status.nodeCount of each HyperNode", counted, 30)
        await _label(env, "node-1", rack="rb")
        moved = {(1, "ra"): ["node-0"], (1, "rb"): ["node-1", "node-2"], (2, "sa"): ["ra", "rb"]}
        await wait_for(f"HyperNodes {moved}", lambda: found(moved), 30)
        await _label(env, "node-0", rack=None, spine=None)
        shrunk = {(1, "rb"): ["node-1", "node-2"], (2, "sa"): ["rb"]}
        await wait_for(f"HyperNodes {shrunk}", lambda: found(shrunk), 30)
    finally:
        await env.api.delete(f"{CONFIGMAP_PATH}")
        for node in ("node-0", "node-1", "node-2"):
            await _label(env, node, rack=None, spine=None)
        selector = f"{c.NETWORK_TOPOLOGY_SOURCE_KEY}=label"
        await env.api.request("DELETE", HYPERNODES.collection_path(), query={"labelSelector": selector})
