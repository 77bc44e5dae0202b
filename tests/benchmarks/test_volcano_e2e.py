"""The e2e harness's reading of its suite entries: which binary, which label filter, which skips."""

from __future__ import annotations

import re

from benchmarks.volcano_e2e import (
    NEEDS_CONTAINER,
    SHARDING_CONFIGS,
    SUITES,
    binary_of,
    sharding_mode_of,
    skip_regex,
)


def test_per_mode_suites_run_their_binary_with_the_mode_as_label_filter() -> None:
    for binary in ("schedulersharding", "agentscheduler"):
        for mode in ("hard", "soft", "none"):
            assert f"{binary}-{mode}" in SUITES
            assert binary_of(f"{binary}-{mode}") == binary
            assert sharding_mode_of(f"{binary}-{mode}") == mode
    assert binary_of("gangevict") == "gangevict" and sharding_mode_of("gangevict") is None
    assert {"agentscheduler", "schedulersharding", "shardingcontroller"} <= SHARDING_CONFIGS.keys()


def test_the_agent_schedulers_deployment_spec_is_skipped_in_every_mode() -> None:
    spec = "Agent Scheduler E2E Test Agent Scheduler Deployment agent-scheduler deployment should be ready"
    for mode in ("hard", "soft", "none"):
        assert spec in NEEDS_CONTAINER[f"agentscheduler-{mode}"]
        pattern = re.compile(skip_regex(f"agentscheduler-{mode}"))
        assert pattern.search(f"Agent Scheduler E2E Test Suite {spec}")
        assert not pattern.search("Agent Scheduler E2E Test Pod Scheduling should schedule multiple pods")
