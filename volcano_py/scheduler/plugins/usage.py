"""usage: keep pods off nodes the metrics source reports loaded, and prefer idle ones (Volcano's ``usage``).

A node's load is what the conf's ``metrics`` source reported (the runtime asks Prometheus every
``metrics.interval`` and the snapshot carries the answer): CPU and memory in percent, each averaged over 10
minutes. A node with no reading, or one older than 5 minutes, passes and scores 0, as in Volcano.

* predicate: a node whose CPU load is over ``thresholds.cpu`` (default 80), or memory over ``thresholds.mem``
  (80), takes no pod; the pod waits with "N nodes report CPU load above 80% ...".
* node order: the idler node scores higher (``usage_estimate``), counting pods placed on it since its load
  was measured: those this session places, bound ones not yet running, and running ones started less than
  ``metrics.interval`` ago (Volcano's shadow estimate, ``estimator.*``).

Arguments, Volcano's names and defaults: ``usage.weight`` (5), ``cpu.weight`` (1), ``memory.weight`` (1),
``thresholds: {cpu: 80, mem: 80}`` (whole percents), ``estimator: {request_ratio: 0.7, burst_ratio: 0,
risk_threshold: 0.6, risk_factor: 1.2, be_cpu: 250m, be_mem: 200Mi}`` (an integer ``be_cpu`` is millicores,
an integer ``be_mem`` MiB). Volcano quietly keeps the default for a value out of range; here the conf is
refused, naming it. Differences: a node's capacity is its allocatable here; when several pods of one class are
scored at once (gang placement), those assumed placed before are estimated from their request alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Final

import numpy as np

from volcano_py.api.bodies.pod import pod_start_time
from volcano_py.api.objects import spec_of
from volcano_py.resources import CPU, MEMORY, QuantityError, amount_of, pod_limits

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.extension import BoolArray, FloatArray, IntArray, NodeVerdict
from ..framework.metrics_conf import DEFAULT_INTERVAL
from ..framework.session import Session
from ..framework.status import TaskStatus
from ..framework.task import TaskInfo, timestamp
from .usage_estimate import Estimator, composite, node_score, weighted

# Volcano's MetricsActiveTime: an older reading is no reading.
METRICS_ACTIVE: Final = timedelta(minutes=5)
_MIB: Final = 1024 * 1024
# Statuses of a pod on a node whose load cannot show in the metrics yet, whatever its age.
_NOT_STARTED: Final = frozenset({TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND})


def _section(arguments: Arguments, key: str) -> Arguments:
    value = arguments.values.get(key) or {}
    if not isinstance(value, Mapping):
        raise ConfError(f"{arguments.owner}: argument {key!r} must be a mapping, got {value!r}")
    return Arguments(f"{arguments.owner}: {key}", value)


def _bounded(arguments: Arguments, key: str, default: float, low: float, high: float | None) -> float:
    value = arguments.get_float(key, default)
    if value < low or (high is not None and value > high):
        span = f"within {low:g}..{high:g}" if high is not None else f">= {low:g}"
        raise ConfError(f"{arguments.owner}: argument {key!r} must be a number {span}, got {value!r}")
    return value


def _best_effort(arguments: Arguments, key: str, resource: str, default: float, per_unit: int) -> float:
    """``be_cpu`` / ``be_mem``: a quantity, or a bare integer in Volcano's unit (millicores / MiB)."""
    raw = arguments.values.get(key)
    if raw is None:
        return default
    if isinstance(raw, int) and not isinstance(raw, bool):
        if raw < 0:
            raise ConfError(f"{arguments.owner}: argument {key!r} must be >= 0, got {raw!r}")
        return float(raw * per_unit)
    try:
        amount = amount_of(resource, raw) if isinstance(raw, str) else -1
    except QuantityError:
        amount = -1
    if amount < 0:
        raise ConfError(
            f"{arguments.owner}: argument {key!r} must be a quantity such as "
            f"{'250m' if resource == CPU else '200Mi'}, got {raw!r}"
        )
    return float(amount)


class UsagePlugin:
    name = "usage"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known({"usage.weight", "cpu.weight", "memory.weight", "thresholds", "estimator"})
        self.usage_weight = arguments.get_int("usage.weight", 5, minimum=0)
        self.cpu_weight = arguments.get_int("cpu.weight", 1, minimum=0)
        self.memory_weight = arguments.get_int("memory.weight", 1, minimum=0)
        thresholds = _section(arguments, "thresholds")
        thresholds.check_known({"cpu", "mem"})
        self.cpu_threshold = float(thresholds.get_int("cpu", 80, minimum=0))
        self.memory_threshold = float(thresholds.get_int("mem", 80, minimum=0))
        for key, value in (("cpu", self.cpu_threshold), ("mem", self.memory_threshold)):
            if value > 100:
                raise ConfError(f"{thresholds.owner}: argument {key!r} must be within 0..100, got {value:g}")
        estimator = _section(arguments, "estimator")
        estimator.check_known(
            {"request_ratio", "burst_ratio", "risk_threshold", "risk_factor", "be_cpu", "be_mem"}
        )
        self.estimator = Estimator(
            request_ratio=_bounded(estimator, "request_ratio", 0.7, 0.0, 1.0),
            burst_ratio=_bounded(estimator, "burst_ratio", 0.0, 0.0, 1.0),
            risk_threshold=_bounded(estimator, "risk_threshold", 0.6, 0.0, 1.0),
            risk_factor=_bounded(estimator, "risk_factor", 1.2, 1.0, None),
            be_cpu=_best_effort(estimator, "be_cpu", CPU, 250.0, 1),
            be_memory=_best_effort(estimator, "be_mem", MEMORY, 200.0 * _MIB, _MIB),
        )
        self._reset(0)

    def _reset(self, n: int) -> None:
        self.rows: Mapping[str, int] = {}
        self.fresh: BoolArray = np.zeros(n, dtype=np.bool_)
        self.cpu_load: FloatArray = np.zeros(n, dtype=np.float64)
        self.memory_load: FloatArray = np.zeros(n, dtype=np.float64)
        self.cpu_capacity: FloatArray = np.zeros(n, dtype=np.float64)
        self.memory_capacity: FloatArray = np.zeros(n, dtype=np.float64)
        self.cpu_shadow: FloatArray = np.zeros(n, dtype=np.float64)
        self.memory_shadow: FloatArray = np.zeros(n, dtype=np.float64)
        # Per task: the node row and the estimates added for it, taken back exactly on deallocation.
        self.shadows: dict[str, tuple[int, float, float]] = {}
        # Estimates of tasks evicted this session, restored if the eviction is undone.
        self.evicted: dict[str, tuple[int, float, float]] = {}
        self.verdict = NodeVerdict(np.ones(n, dtype=np.bool_))

    # --- session ------------------------------------------------------------------------------------------

    def on_session_open(self, ssn: Session) -> None:
        table = ssn.table
        self._reset(len(table))
        self.rows = table.node_index
        now = timestamp(ssn.now)
        for name, row in table.node_index.items():
            reading = ssn.snapshot.node_usage.get(name)
            if reading is None:
                continue
            age = now - reading.collected_at.timestamp()
            self.fresh[row] = age <= METRICS_ACTIVE.total_seconds()
            self.cpu_load[row] = reading.cpu
            self.memory_load[row] = reading.memory
        for resource, capacity in ((CPU, self.cpu_capacity), (MEMORY, self.memory_capacity)):
            column = table.index.get(resource)
            if column is not None:
                capacity[:] = table.allocatable[:, column]
        delay = ssn.conf.metrics.interval if ssn.conf.metrics is not None else DEFAULT_INTERVAL
        for node in ssn.nodes:
            for task in node.tasks.values():
                if _unmeasured(task, now, delay.total_seconds()):
                    self._add(task, self.rows[node.name])
        over_cpu = self.fresh & (self.cpu_load > self.cpu_threshold)
        over_memory = self.fresh & ~over_cpu & (self.memory_load > self.memory_threshold)
        failures: list[tuple[str, BoolArray]] = []
        if over_cpu.any():
            failures.append(
                (f"report CPU load above {self.cpu_threshold:g}% (usage plugin's thresholds.cpu)", over_cpu)
            )
        if over_memory.any():
            failures.append(
                (
                    f"report memory load above {self.memory_threshold:g}% (usage plugin's thresholds.mem)",
                    over_memory,
                )
            )
        self.verdict = NodeVerdict(~(over_cpu | over_memory), failures)

    def on_session_close(self, ssn: Session) -> None:
        self._reset(0)

    # --- shadow estimates ---------------------------------------------------------------------------------

    def _risk(self, rows: IntArray) -> FloatArray:
        cpu = composite(self.cpu_load[rows], self.cpu_shadow[rows], self.cpu_capacity[rows])
        memory = composite(self.memory_load[rows], self.memory_shadow[rows], self.memory_capacity[rows])
        return self.estimator.risk(weighted(cpu, memory, self.cpu_weight, self.memory_weight))

    def _estimate(self, task: TaskInfo, risk: float) -> tuple[float, float]:
        if task.best_effort:
            return (
                self.estimator.best_effort(self.estimator.be_cpu, risk),
                self.estimator.best_effort(self.estimator.be_memory, risk),
            )
        try:
            limits = pod_limits(spec_of(task.pod))
        except QuantityError:
            limits = task.resreq  # an unreadable limit: the request bounds the estimate
        return (
            self.estimator.pod(task.resreq.amount(CPU), limits.amount(CPU), risk),
            self.estimator.pod(task.resreq.amount(MEMORY), limits.amount(MEMORY), risk),
        )

    def _add(self, task: TaskInfo, row: int) -> None:
        self._take_back(task.uid)
        cpu, memory = self._estimate(task, float(self._risk(np.array([row]))[0]))
        self._put(task.uid, (row, cpu, memory))

    def _put(self, uid: str, shadow: tuple[int, float, float]) -> None:
        row, cpu, memory = shadow
        self.cpu_shadow[row] += cpu
        self.memory_shadow[row] += memory
        self.shadows[uid] = shadow

    def _take_back(self, uid: str) -> tuple[int, float, float] | None:
        shadow = self.shadows.pop(uid, None)
        if shadow is not None:
            row, cpu, memory = shadow
            self.cpu_shadow[row] = max(self.cpu_shadow[row] - cpu, 0.0)
            self.memory_shadow[row] = max(self.memory_shadow[row] - memory, 0.0)
        return shadow

    def on_allocate(self, task: TaskInfo) -> None:
        restored = self.evicted.pop(task.uid, None)
        if restored is not None:  # an eviction undone: the pod's estimate as it was
            self._put(task.uid, restored)
        elif task.status in (TaskStatus.ALLOCATED, TaskStatus.PIPELINED) and task.node_name in self.rows:
            self._add(task, self.rows[task.node_name])

    def on_deallocate(self, task: TaskInfo) -> None:
        shadow = self._take_back(task.uid)
        if shadow is not None and task.status is TaskStatus.RELEASING:
            self.evicted[task.uid] = shadow

    # --- extension points -----------------------------------------------------------------------------------

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return False

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        return self.verdict

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        fresh = self.fresh[rows]
        if not self.usage_weight or not fresh.any():
            return np.zeros(len(rows), dtype=np.float64)
        cpu_shadow = self.cpu_shadow[rows]
        memory_shadow = self.memory_shadow[rows]
        if extra.any():
            risk = self._risk(rows)
            cpu_shadow = cpu_shadow + extra * self._class_estimate(klass, CPU, risk)
            memory_shadow = memory_shadow + extra * self._class_estimate(klass, MEMORY, risk)
        cpu = composite(self.cpu_load[rows], cpu_shadow, self.cpu_capacity[rows])
        memory = composite(self.memory_load[rows], memory_shadow, self.memory_capacity[rows])
        scores = node_score(cpu, memory, self.cpu_weight, self.memory_weight, self.usage_weight)
        result: FloatArray = np.where(fresh, scores, 0.0)
        return result

    def _class_estimate(self, klass: TaskClass, resource: str, risk: FloatArray) -> FloatArray:
        """Per row, the estimate of one more pod of ``klass`` at that row's risk (from its request)."""
        if klass.request.is_zero():
            configured = self.estimator.be_cpu if resource == CPU else self.estimator.be_memory
            return np.asarray(configured * risk, dtype=np.float64)
        request = float(klass.request.amount(resource))
        plain = self.estimator.pod(request, 0.0, 1.0)
        risky = self.estimator.pod(request, 0.0, max(self.estimator.risk_factor, 1.0))
        return np.where(risk > 1.0, risky, plain)


def _unmeasured(task: TaskInfo, now: float, delay: float) -> bool:
    """A pod on a node whose load the last reading cannot show yet (Volcano's shadow warm-up)."""
    if not task.node_name:
        return False
    if task.status in _NOT_STARTED:
        return True
    if task.status is not TaskStatus.RUNNING:
        return False
    started = pod_start_time(task.pod)
    if not started:
        return True
    return now - timestamp(str(started)) < delay
