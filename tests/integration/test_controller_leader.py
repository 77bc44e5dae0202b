"""Two operator replicas: one holds the Lease and works, the other takes over when it stops."""

from __future__ import annotations

import pytest
from ctl_harness import Env, Operator, env, task, vcjob, wait_for

pytestmark = pytest.mark.integration
__all__ = ["env"]


async def test_one_replica_leads_and_a_standby_takes_over(env: Env) -> None:
    assert env.operator is not None
    await env.operator.stop()  # the fixture's replica runs without election; replace it by two that elect
    env.operator = None
    lease = {"leader_elect": True, "lease_namespace": env.ns, "lease_name": "vc-controller-manager"}
    first = Operator(env.kubeconfig, env.ns, identity="replica-a", **lease)
    second = Operator(env.kubeconfig, env.ns, identity="replica-b", **lease)
    try:
        await env.create_job(vcjob("one", task("worker", 2)))
        await env.wait_phase("one", "Running")

        async def holder() -> str:
            body = await env.api.get(
                f"/apis/coordination.k8s.io/v1/namespaces/{env.ns}/leases/vc-controller-manager"
            )
            return str(body["spec"].get("holderIdentity") or "")

        leader = await wait_for("a lease holder", holder, 30)
        assert leader in ("replica-a", "replica-b")
        leading, standing_by = (first, second) if leader == "replica-a" else (second, first)
        await leading.stop()

        async def taken_over() -> bool:
            return await holder() == standing_by.options.identity

        await wait_for("the standby to take the lease", taken_over, 30)
        await env.create_job(vcjob("two", task("worker", 2)))
        await env.wait_phase("two", "Running")
    finally:
        for replica in (first, second):
            if not replica.task.done():
                await replica.stop()
