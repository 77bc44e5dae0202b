"""The scheduler's Prometheus metrics under Volcano's names (served by ``kube.health.MetricsServer``).

Names, types, labels and buckets follow Volcano's ``pkg/scheduler/metrics`` so existing dashboards and alerts
work unchanged. Each :class:`SchedulerMetrics` owns its registry: two schedulers in one test process (leader
and standby) do not collide, and a test reads exactly the numbers its own scheduler produced.
"""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from volcano_py import resources
from volcano_py.log import get_logger
from volcano_py.scheduler.framework.decisions import EVICTING_ACTIONS

_log = get_logger(__name__)

_NAMESPACE = "volcano"


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


_LATENCY_BUCKETS = _exponential(5, 2, 15)  # 5 ms .. ~82 s, as Volcano
_OPERATION_BUCKETS = _exponential(32, 2, 10)


class SchedulerMetrics:
    """Every metric the scheduler process reports."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.e2e_scheduling_latency = Histogram(
            "e2e_scheduling_latency_milliseconds",
            "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
            namespace=_NAMESPACE, buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.action_scheduling_latency = Histogram(
            "action_scheduling_latency_milliseconds", "Action scheduling latency in milliseconds",
            ["action"], namespace=_NAMESPACE, buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.plugin_scheduling_latency = Histogram(
            "plugin_scheduling_latency_milliseconds", "Plugin scheduling latency in milliseconds",
            ["plugin", "OnSession"], namespace=_NAMESPACE, buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.task_scheduling_latency = Histogram(
            "task_scheduling_latency_milliseconds",
            "Task scheduling latency in milliseconds (task create to task bound to a node)",
            namespace=_NAMESPACE, buckets=_LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.task_operation_latency = Histogram(
            "task_operation_latency_milliseconds", "Task operation latency in milliseconds",
            ["operation", "result"], namespace=_NAMESPACE, buckets=_OPERATION_BUCKETS, registry=r,
        )  # fmt: skip
        self.schedule_attempts = Counter(
            "schedule_attempts", "Number of attempts to schedule pods, by the result",
            ["result"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.unschedule_task_count = Gauge(
            "unschedule_task_count", "Number of tasks could not be scheduled", ["job_id"],
            namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.unschedule_job_count = Gauge(
            "unschedule_job_count", "Number of jobs could not be scheduled", namespace=_NAMESPACE, registry=r
        )
        self.preemption_victims = Gauge(
            "pod_preemption_victims",
            "Number of selected preemption victims",
            namespace=_NAMESPACE,
            registry=r,
        )
        self.preemption_attempts = Counter(
            "total_preemption_attempts", "Total preemption attempts in the cluster till now",
            namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.evictions = Counter(
            "pod_evictions",
            "Pods evicted by the scheduler (preempt, reclaim, shuffle, consolidate), by the action",
            ["action"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.bound_pods = Counter(
            "bound_pods", "Pods bound to a node by this scheduler", namespace=_NAMESPACE, registry=r
        )
        self.scheduled_events_skipped = Counter(
            "scheduled_events_skipped",
            "Pods bound with no Scheduled Event of their own or of their PodGroup: one-pod gangs bound while "
            "the Event budget (--scheduled-event-qps) was spent",
            namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.bind_failures = Counter(
            "bind_failures", "Binds the API server refused", namespace=_NAMESPACE, registry=r
        )
        self._queue_gauges: dict[str, tuple[Gauge, Gauge, Gauge]] = {}
        for kind in ("allocated", "request", "deserved", "capacity"):
            self._queue_gauges[kind] = (
                Gauge(f"queue_{kind}_milli_cpu", f"{kind.capitalize()} CPU count for one queue",
                      ["queue_name"], namespace=_NAMESPACE, registry=r),
                Gauge(f"queue_{kind}_memory_bytes", f"{kind.capitalize()} memory for one queue",
                      ["queue_name"], namespace=_NAMESPACE, registry=r),
                Gauge(f"queue_{kind}_scalar_resources", f"{kind.capitalize()} scalar resources for one queue",
                      ["queue_name", "resource"], namespace=_NAMESPACE, registry=r),
            )  # fmt: skip
        self.queue_share = Gauge(
            "queue_share", "Share for one queue", ["queue_name"], namespace=_NAMESPACE, registry=r
        )
        self.queue_weight = Gauge(
            "queue_weight", "Weight for one queue", ["queue_name"], namespace=_NAMESPACE, registry=r
        )
        self.queue_overused = Gauge(
            "queue_overused", "If one queue is overused", ["queue_name"], namespace=_NAMESPACE, registry=r
        )
        self._scalars_seen: dict[tuple[str, str], set[str]] = {}
        # Ours (Volcano has no per-HyperNode metric): GPUs per HyperNode, for the GPU dashboard.
        self.hypernode_gpus = {
            kind: Gauge(
                f"hypernode_gpu_{kind}", text, ["hypernode"], namespace=_NAMESPACE, registry=r
            )
            for kind, text in (
                ("capacity", "nvidia.com/gpu allocatable on the nodes under one HyperNode"),
                ("allocated", "nvidia.com/gpu requested by the pods bound under one HyperNode"),
                ("stranded", "Free GPUs under one HyperNode that no waiting GPU pod could use "
                             "(on partly used nodes; 0 while nothing waits)"),
            )
        }  # fmt: skip
        self._hypernodes_seen: set[str] = set()
        # Label values known in advance get their series at 0 from the start, so rate() and alerts see a
        # counter that has not moved yet instead of no series at all.
        for result in ("scheduled", "unschedulable", "error"):
            self.schedule_attempts.labels(result)
        for action in EVICTING_ACTIONS:
            self.evictions.labels(action)
        for operation in ("bind", "evict"):
            for outcome in ("success", "error"):
                self.task_operation_latency.labels(operation, outcome)

    def set_queue_share(
        self, queue: str, allocated: Mapping[str, int], deserved: Mapping[str, int] | None, weight: int
    ) -> None:
        """``queue_share`` (the largest allocated/deserved ratio over the resources deserved, as the
        proportion plugin computes it), ``queue_weight``, and ``queue_overused`` (allocated reaches deserved
        in every resource deserved)."""
        self.queue_weight.labels(queue).set(weight)
        asked = {name: amount for name, amount in (deserved or {}).items() if amount > 0}
        share = max((allocated.get(name, 0) / amount for name, amount in asked.items()), default=0.0)
        self.queue_share.labels(queue).set(share)
        overused = bool(asked) and all(allocated.get(name, 0) >= amount for name, amount in asked.items())
        self.queue_overused.labels(queue).set(1 if overused else 0)

    def set_hypernode_gpus(self, gpus: Mapping[str, tuple[float, float, float]]) -> None:
        """``{hypernode: (capacity, allocated, stranded)}``; HyperNodes gone since the last call go too."""
        for name, values in gpus.items():
            for gauge, value in zip(self.hypernode_gpus.values(), values, strict=True):
                gauge.labels(name).set(value)
        for name in self._hypernodes_seen - set(gpus):
            for gauge in self.hypernode_gpus.values():
                gauge.remove(name)
        self._hypernodes_seen = set(gpus)

    def set_queue_resources(self, kind: str, queue: str, amounts: Mapping[str, int]) -> None:
        """Set one queue's ``allocated``/``request``/``deserved``/``capacity`` gauges.

        ``amounts`` is in :mod:`volcano_py.resources` canonical units (millicores, bytes, milli-units for
        extended resources); scalar resources are reported in whole units as Volcano does, and a scalar that
        disappeared is set to 0 rather than left at its old value.
        """
        if kind not in self._queue_gauges:
            raise ValueError(f"queue metric kind must be one of {sorted(self._queue_gauges)}, got {kind!r}")
        cpu, memory, scalar = self._queue_gauges[kind]
        cpu.labels(queue).set(amounts.get(resources.CPU, 0))
        memory.labels(queue).set(amounts.get(resources.MEMORY, 0))
        seen = self._scalars_seen.setdefault((kind, queue), set())
        current = {name for name in amounts if name not in (resources.CPU, resources.MEMORY, resources.PODS)}
        for name in current:
            scalar.labels(queue, name).set(amounts[name] / 1000)
        for name in seen - current:
            scalar.labels(queue, name).set(0)
        seen |= current

    def delete_queue(self, queue: str) -> None:
        for kind, (cpu, memory, scalar) in self._queue_gauges.items():
            for gauge in (cpu, memory):
                if (queue,) in gauge._metrics:  # prometheus_client has no "remove if present"
                    gauge.remove(queue)
            for name in self._scalars_seen.pop((kind, queue), set()):
                scalar.remove(queue, name)
        for gauge in (self.queue_share, self.queue_weight, self.queue_overused):
            if (queue,) in gauge._metrics:
                gauge.remove(queue)

    def expose(self) -> bytes:
        data: bytes = generate_latest(self.registry)
        return data
