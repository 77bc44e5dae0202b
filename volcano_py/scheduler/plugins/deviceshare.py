"""deviceshare: pods that ask for part of a GPU go to a node where one card (or the cards) can hold them, and
the chosen cards are written on the pod at bind (Volcano's ``deviceshare`` plugin).

Arguments (Volcano's): ``deviceshare.GPUSharingEnable`` (``volcano.sh/gpu-memory``),
``deviceshare.GPUNumberEnable`` (``volcano.sh/gpu-number``), ``deviceshare.VGPUEnable`` (HAMi vGPU),
``deviceshare.SchedulePolicy`` (``binpack`` or ``spread``, for vGPU cards), ``deviceshare.ScheduleWeight``
(multiplies the vGPU card score in node order; 0, the default, leaves node order alone). The card arithmetic
is in ``framework.devices``; this module wires it to the session's extension points.
"""

from __future__ import annotations

from collections.abc import Hashable
from datetime import datetime

import numpy as np

from volcano_py.api import constants as k
from volcano_py.log import get_logger
from volcano_py.resources import unit_scale

from ..framework.arguments import Arguments, ConfError
from ..framework.classes import TaskClass
from ..framework.devices import (
    Choice,
    DeviceKind,
    DeviceRequest,
    NoFit,
    bind_annotations,
    choose,
    device_request,
    held_by,
    hold,
    release,
    slots,
)
from ..framework.extension import BoolArray, FloatArray, IntArray, NodeVerdict
from ..framework.session import Session
from ..framework.task import TaskInfo

log = get_logger(__name__)

_REFUSED = {
    "deviceshare.NodeLockEnable": "volcano-py writes the chosen cards in the Binding itself, so the device "
    "plugin never sees a half-assigned pod and needs no node lock",
    "deviceshare.AscendMindClusterVNPUEnable": "Ascend vNPU sharing is not implemented in volcano-py",
    "deviceshare.AscendHAMiVNPUEnable": "Ascend vNPU sharing is not implemented in volcano-py",
}
_KNOWN = {
    "deviceshare.GPUSharingEnable",
    "deviceshare.GPUNumberEnable",
    "deviceshare.VGPUEnable",
    "deviceshare.SchedulePolicy",
    "deviceshare.ScheduleWeight",
    # The MIG geometry ConfigMap; MIG-mode nodes are refused per node, so the name is accepted and unused.
    "deviceshare.KnownGeometriesCMName",
    "deviceshare.KnownGeometriesCMNamespace",
    *_REFUSED,
}


def _now_ns(now: str) -> int:
    try:
        return int(datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp() * 1_000_000_000)
    except ValueError:
        return 0


class DeviceSharePlugin:
    name = "deviceshare"

    def __init__(self, arguments: Arguments) -> None:
        arguments.check_known(_KNOWN)
        for flag, why in _REFUSED.items():
            if arguments.get_bool(flag, False):
                raise ConfError(f"plugin deviceshare: {flag} is not supported ({why}); remove it")
        self.gpu_sharing = arguments.get_bool("deviceshare.GPUSharingEnable", False)
        self.gpu_number = arguments.get_bool("deviceshare.GPUNumberEnable", False)
        self.vgpu = arguments.get_bool("deviceshare.VGPUEnable", False)
        if self.vgpu and (self.gpu_sharing or self.gpu_number):
            raise ConfError(
                "plugin deviceshare: deviceshare.VGPUEnable cannot be combined with GPUSharingEnable or "
                "GPUNumberEnable (a node runs one GPU device plugin); enable one of them"
            )
        self.policy = arguments.get_str("deviceshare.SchedulePolicy", "")
        if self.policy not in ("", k.DEVICE_POLICY_BINPACK, k.DEVICE_POLICY_SPREAD):
            raise ConfError(
                "plugin deviceshare: deviceshare.SchedulePolicy must be binpack or spread, "
                f"got {self.policy!r}"
            )
        self.weight = arguments.get_int("deviceshare.ScheduleWeight", 0, minimum=0)
        arguments.get_str("deviceshare.KnownGeometriesCMName", "")
        arguments.get_str("deviceshare.KnownGeometriesCMNamespace", "")
        self.ssn: Session | None = None
        self.requests: dict[Hashable, DeviceRequest] = {}
        self.where: dict[str, int] = {}
        self.largest = 0
        self.now_ns = 0
        self.share_rows: BoolArray = np.zeros(0, dtype=np.bool_)
        self.vgpu_rows: BoolArray = np.zeros(0, dtype=np.bool_)
        self.max_free: IntArray = np.zeros(0, dtype=np.int64)
        self.idle: IntArray = np.zeros(0, dtype=np.int64)

    # --- session ------------------------------------------------------------------------------------------

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.requests = {}
        self.where = {}
        self.now_ns = _now_ns(ssn.now)
        self.largest = max((n.gpus.largest for n in ssn.nodes if n.gpus is not None), default=0)
        kinds = [n.gpus.kind if n.gpus is not None else None for n in ssn.nodes]
        self.share_rows = np.array([kd is DeviceKind.GPUSHARE for kd in kinds], dtype=np.bool_)
        self.vgpu_rows = np.array([kd is DeviceKind.VGPU for kd in kinds], dtype=np.bool_)
        self.max_free = np.zeros(len(ssn.nodes), dtype=np.int64)
        self.idle = np.zeros(len(ssn.nodes), dtype=np.int64)
        for row in np.flatnonzero(self.share_rows).tolist():
            gpus = ssn.nodes[row].gpus
            if gpus is not None and ssn.nodes[row].tasks:
                self._refresh(row)
            elif gpus is not None:  # nothing on the node: every card idle and empty
                self.max_free[row] = gpus.largest
                self.idle[row] = len(gpus.cards)
        for job in ssn.jobs.values():
            for task in job.pending_tasks:
                klass = ssn.task_class(task)
                if klass.key not in self.requests:
                    self.requests[klass.key] = self._enabled(device_request(task.pod))

    def on_session_close(self, ssn: Session) -> None:
        self.ssn, self.requests, self.where = None, {}, {}

    def _enabled(self, request: DeviceRequest) -> DeviceRequest:
        """The part of a request this configuration places; the rest is ordinary resource fit."""
        return DeviceRequest(
            memory=request.memory if self.gpu_sharing else 0,
            number=request.number if self.gpu_number else 0,
            vgpu=request.vgpu if self.vgpu else (),
            use_types=request.use_types,
            nouse_types=request.nouse_types,
        )

    def request_of(self, klass: TaskClass) -> DeviceRequest:
        request = self.requests.get(klass.key)
        if request is None:
            # A class first seen after open (a preemptor's what-if): its totals are the gpushare request.
            request = self._enabled(
                DeviceRequest(
                    memory=klass.request.amount(k.GPU_MEMORY_RESOURCE) // unit_scale(k.GPU_MEMORY_RESOURCE),
                    number=klass.request.amount(k.GPU_NUMBER_RESOURCE) // unit_scale(k.GPU_NUMBER_RESOURCE),
                )
            )
            self.requests[klass.key] = request
        return request

    # --- extension points ---------------------------------------------------------------------------------

    def predicate_dynamic(self, klass: TaskClass) -> bool:
        return not self.request_of(klass).empty

    def predicate_dynamic_besides_devices(self, klass: TaskClass) -> bool:
        return False

    def _refresh(self, row: int) -> None:
        gpus = self.ssn.nodes[row].gpus if self.ssn is not None else None
        if gpus is not None:
            self.max_free[row] = max((c.free_memory for c in gpus.cards.values()), default=0)
            self.idle[row] = sum(1 for c in gpus.cards.values() if not c.holders)

    def predicate(self, ssn: Session, klass: TaskClass) -> NodeVerdict:
        request = self.request_of(klass)
        if request.empty:
            return NodeVerdict(np.ones(len(ssn.nodes), dtype=np.bool_))
        kind = DeviceKind.VGPU if request.vgpu else DeviceKind.GPUSHARE
        has = self.vgpu_rows if request.vgpu else self.share_rows
        fails: list[tuple[str, BoolArray]] = [(f"report no {kind.value} GPUs", ~has)]
        if request.memory > self.largest:
            reason = (
                f"have no GPU with {request.memory} MiB of {k.GPU_MEMORY_RESOURCE} "
                f"(the largest GPU in the cluster has {self.largest} MiB)"
            )
            fails.append((reason, has))
        elif kind is DeviceKind.GPUSHARE:
            # Lowest-index first fit: some card with the memory free, or enough idle cards (kept per node).
            if request.memory:
                reason = f"have no GPU with {request.memory} MiB of {k.GPU_MEMORY_RESOURCE} free"
                fails.append((reason, has & (self.max_free < request.memory)))
            elif request.number:
                reason = f"have fewer than {request.number} idle GPUs for {k.GPU_NUMBER_RESOURCE}"
                fails.append((reason, has & (self.idle < request.number)))
        else:
            failing: dict[str, list[int]] = {}
            for row in np.flatnonzero(has).tolist():
                gpus = ssn.nodes[row].gpus
                choice = choose(gpus, request, self.policy) if gpus is not None else NoFit("")
                if isinstance(choice, NoFit):
                    failing.setdefault(choice.reason, []).append(row)
            for reason, rows in failing.items():
                mask = np.zeros(len(ssn.nodes), dtype=np.bool_)
                mask[rows] = True
                fails.append((reason, mask))
        failures = [(reason, mask) for reason, mask in fails if mask.any()]
        ok = np.ones(len(ssn.nodes), dtype=np.bool_)
        for _, mask in failures:
            ok &= ~mask
        return NodeVerdict(ok, failures)

    def device_slots(self, ssn: Session, klass: TaskClass, cap: int) -> IntArray | None:
        request = self.request_of(klass)
        if request.empty:
            return None
        kind = DeviceKind.VGPU if request.vgpu else DeviceKind.GPUSHARE
        out: IntArray = np.zeros(len(ssn.nodes), dtype=np.int64)
        if request.memory > self.largest:
            return out
        for row, node in enumerate(ssn.nodes):
            if node.gpus is not None and node.gpus.kind is kind:
                out[row] = slots(node.gpus, request, self.policy, cap)
        return out

    def node_order(self, ssn: Session, klass: TaskClass, rows: IntArray, extra: IntArray) -> FloatArray:
        scores: FloatArray = np.zeros(len(rows), dtype=np.float64)
        request = self.request_of(klass)
        if not self.weight or not request.vgpu:
            return scores
        for i, row in enumerate(rows.tolist()):
            gpus = ssn.nodes[row].gpus
            if gpus is None:
                continue
            choice = choose(gpus, request, self.policy)
            if isinstance(choice, Choice):
                scores[i] = choice.score * self.weight
        return scores

    def on_allocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        if ssn is None or not task.node_name:
            return
        row = ssn.node_of(task)
        gpus = ssn.nodes[row].gpus
        if gpus is None:
            return
        request = self.request_of(ssn.task_class(task))
        if request.empty:
            return
        held = held_by(gpus, task.pod, request)
        if held is not None:  # a running pod whose eviction was undone: it keeps its cards
            hold(gpus, task.uid, held)
            self.where[task.uid] = row
            self._refresh(row)
            return
        choice = choose(gpus, request, self.policy)
        if isinstance(choice, NoFit):
            log.warning(
                "no GPU card fits an allocated pod", pod=task.key, node=task.node_name, why=choice.reason
            )
            return
        hold(gpus, task.uid, choice)
        self.where[task.uid] = row
        self._refresh(row)
        task.bind_annotations = bind_annotations(gpus, task.node_name, choice, self.now_ns)

    def on_deallocate(self, task: TaskInfo) -> None:
        ssn = self.ssn
        if ssn is None:
            return
        row = self.where.pop(task.uid, None)
        if row is None and task.node_name:
            row = ssn.node_of(task)
        if row is None:
            return
        gpus = ssn.nodes[row].gpus
        if gpus is not None:
            release(gpus, task.uid)
            self._refresh(row)
        task.bind_annotations = {}
