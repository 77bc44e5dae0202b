"""What each scheduler process takes on its command line (``volcano-py scheduler``, ``volcano-py
agent-scheduler``), as values for running it in-process too.

Both are checked when they are made, so a bad flag is a start-up error that names the flag; the checks the
two processes share are written once (``_check_serving``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final

from volcano_py.api import constants as c
from volcano_py.api.features import DEFAULT_FEATURE_GATES, FeatureGates
from volcano_py.api.shard import ShardingMode
from volcano_py.kube.leader import LeaseTiming
from volcano_py.scheduler.agent.conf import load_agent_conf
from volcano_py.scheduler.core import NO_SHARDING, Sharding
from volcano_py.scheduler.framework.conf import SchedulerConf
from volcano_py.scheduler.framework.pacing import BURST_QUIET_SECONDS, Pacing
from volcano_py.scheduler.runtime.process import default_identity
from volcano_py.scheduler.runtime.scheduled import SCHEDULED_EVENT_BURST, SCHEDULED_EVENT_QPS, EventBudget

# Active pods one agent session takes at most: a burst is decided in a few sessions, not one per pod.
BATCH_LIMIT: Final = 64


def _check_serving(*, metrics_port: int, bind_concurrency: int) -> None:
    if not 0 <= metrics_port <= 65535:
        raise ValueError(f"--metrics-port must be within 0..65535 (0 picks a free port), got {metrics_port}")
    if bind_concurrency < 1:
        raise ValueError(f"--bind-concurrency must be at least 1, got {bind_concurrency}")


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """Everything ``volcano-py scheduler`` takes on its command line, for running it in-process too."""

    kubeconfig: str | None = None
    scheduler_conf: str | None = None
    scheduler_names: tuple[str, ...] = (c.SCHEDULER_NAME,)
    schedule_period: float = 1.0
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 8080
    leader_elect: bool = True
    lease_namespace: str = "volcano-system"
    lease_name: str = "vc-scheduler"
    identity: str = field(default_factory=default_identity)
    lease_timing: LeaseTiming = field(default_factory=LeaseTiming)
    bind_concurrency: int = 64
    burst_quiet: float = BURST_QUIET_SECONDS
    scheduled_event_qps: float = SCHEDULED_EVENT_QPS
    scheduled_event_burst: int = SCHEDULED_EVENT_BURST
    # Volcano's --feature-gates (SchedulingGatesQueueAdmission: ungate pods their queue admits).
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES
    # Where the cluster's mirror is saved for the next start to resume from (None: every start lists).
    mirror_dir: str | None = None
    # --scheduler-sharding-mode and --scheduler-sharding-name (``runtime/shard_status.py``).
    sharding: Sharding = NO_SHARDING
    # The schedulers whose pods this one counts in their Queues (``runtime/queue_charges.py``): the agent
    # scheduler's, so the two keep a Queue's capability between them.
    partner_names: tuple[str, ...] = (c.AGENT_SCHEDULER_NAME,)

    def __post_init__(self) -> None:
        Pacing(self.schedule_period, self.burst_quiet)  # checks both
        EventBudget(self.scheduled_event_qps, self.scheduled_event_burst, time.monotonic)  # checks both
        if not self.scheduler_names or not all(self.scheduler_names):
            raise ValueError("--scheduler-name must be a non-empty name such as 'volcano'")
        _check_serving(metrics_port=self.metrics_port, bind_concurrency=self.bind_concurrency)


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """Everything ``volcano-py agent-scheduler`` takes on its command line (Volcano's flags where they
    apply), for running it in-process too."""

    kubeconfig: str | None = None
    scheduler_conf: str | None = None
    scheduler_name: str = c.AGENT_SCHEDULER_NAME
    worker_count: int = 1
    batch_limit: int = BATCH_LIMIT
    percentage_of_nodes: int | None = None
    min_percentage_of_nodes: int | None = None
    min_nodes: int | None = None
    metrics_host: str = "0.0.0.0"
    metrics_port: int = 8080
    leader_elect: bool = True
    lease_namespace: str = c.VOLCANO_SYSTEM_NAMESPACE
    lease_name: str = ""  # "": the scheduler's name, as Volcano names the agent scheduler's lock
    identity: str = field(default_factory=default_identity)
    lease_timing: LeaseTiming = field(default_factory=LeaseTiming)
    bind_concurrency: int = 64
    feature_gates: FeatureGates = DEFAULT_FEATURE_GATES
    sharding: Sharding = field(default_factory=lambda: Sharding(ShardingMode.NONE, c.AGENT_SCHEDULER_NAME))
    # The schedulers whose pods count in the Queues beside this one's (``runtime/queue_charges.py``).
    partner_names: tuple[str, ...] = (c.SCHEDULER_NAME,)

    def __post_init__(self) -> None:
        if not self.scheduler_name:
            raise ValueError("--scheduler-name must be a non-empty name such as 'agent-scheduler'")
        if self.worker_count < 1:
            raise ValueError(
                "scheduler-worker-count must be greater than 0; "
                f"--scheduler-worker-count is {self.worker_count}"
            )
        if self.batch_limit < 1:
            raise ValueError(f"--batch-limit must be at least 1, got {self.batch_limit}")
        _check_serving(metrics_port=self.metrics_port, bind_concurrency=self.bind_concurrency)

    def load_conf(self, text: str | None) -> SchedulerConf:
        """The agent conf in ``text`` (None: the default one) with this command line's node-search flags."""
        return load_agent_conf(
            text,
            percentage_of_nodes=self.percentage_of_nodes,
            min_percentage_of_nodes=self.min_percentage_of_nodes,
            min_nodes=self.min_nodes,
        )
