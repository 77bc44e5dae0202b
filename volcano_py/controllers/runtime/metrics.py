"""The controller's Prometheus metrics under Volcano's names, served on ``/metrics`` (port 8081) by
``kube.health.MetricsServer``."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from volcano_py.log import get_logger
from volcano_py.webhooks.configurations import WEBHOOKS

_log = get_logger(__name__)

_NAMESPACE = "volcano"


def _exponential_range(low: float, high: float, count: int) -> list[float]:
    factor = (high / low) ** (1 / (count - 1))
    return [low * factor**i for i in range(count)]


class ControllerMetrics:
    """One registry per operator instance, so two operators in one test process do not collide."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.job_completed = Counter(
            "job_completed_phase_count", "Number of job completed phase",
            ["job_name", "queue_name"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.job_failed = Counter(
            "job_failed_phase_count", "Number of job failed phase",
            ["job_name", "queue_name"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.job_to_pod_latency = Histogram(
            "controller_job_to_pod_creation_latency_milliseconds",
            "Latency from VCJob creation to pod created in milliseconds",
            namespace=_NAMESPACE, buckets=_exponential_range(50, 60000, 30), registry=r,
        )  # fmt: skip
        self.queue_podgroups = {
            field: Gauge(
                f"queue_pod_group_{field}_count",
                f"The number of {field.capitalize()} PodGroup in this queue",
                ["queue_name"],
                namespace=_NAMESPACE,
                registry=r,
            )
            for field in ("inqueue", "pending", "running", "unknown", "completed")
        }
        self.pods_created = Counter(
            "controller_pods_created", "Pods created by the Job controller", namespace=_NAMESPACE, registry=r
        )
        self.jobflow_succeeded = Counter(
            "jobflow_succeed_phase_count", "Number of jobflow succeed phase",
            ["jobflow_namespace"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.jobflow_failed = Counter(
            "jobflow_failed_phase_count", "Number of jobflow failed phase",
            ["jobflow_namespace"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        self.queue_depth = Gauge(
            "controller_work_queue_depth", "Requests waiting in the Job controller's work queue",
            namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        # Ours: what admission answered, per webhook. "error" is a handler that failed (the API server then
        # applies the webhook's failurePolicy); the API server's own metrics see calls that never arrive.
        self.admission_requests = Counter(
            "admission_requests", "Admission requests served, by webhook and outcome (allowed/denied/error)",
            ["webhook", "result"], namespace=_NAMESPACE, registry=r,
        )  # fmt: skip
        for webhook in WEBHOOKS:
            for result in ("allowed", "denied", "error"):
                self.admission_requests.labels(webhook.id, result)

    def record_admission(self, webhook: str, result: str) -> None:
        self.admission_requests.labels(webhook, result).inc()

    def set_queue_counts(self, queue: str, counts: dict[str, int]) -> None:
        for field, gauge in self.queue_podgroups.items():
            gauge.labels(queue).set(counts.get(field, 0))

    def expose(self) -> bytes:
        data: bytes = generate_latest(self.registry)
        return data
