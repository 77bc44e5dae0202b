"""Per-GPU bookkeeping for the ``deviceshare`` plugin, as pure functions over node and pod JSON.

Kubernetes counts a node's GPUs as one number, so two pods asking for 60% of a card each fit a two-card node
by the numbers yet cannot share one card. The device plugins therefore report each card (Volcano's gpushare:
total ``volcano.sh/gpu-memory`` and ``volcano.sh/gpu-number`` in the node's capacity, split evenly; HAMi vGPU:
one entry per card in the ``volcano.sh/node-vgpu-register`` annotation), the scheduler keeps what each card
holds from the pods' own annotations (``volcano.sh/gpu-index``, ``volcano.sh/vgpu-ids-new``), and a pod
goes to a node only if some card (or set of cards) can hold it. The chosen cards are written on the pod at
bind, which is what the device plugin reads to hand the container its card.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import constants as k
from volcano_py.api.objects import annotations_of, spec_of
from volcano_py.resources import QuantityError, Resource, parse_quantity, unit_scale

# Volcano's "no percentage given" marker for a vGPU memory request; then the MiB request applies.
NO_PERCENTAGE = 101
FULL_CORES = 100
_SCORE = 100.0


class DeviceKind(enum.Enum):
    GPUSHARE = "GpuShare"
    VGPU = "hamivgpu"


@dataclass(slots=True)
class Card:
    """One GPU: its fixed facts and who holds what on it (task uid -> (memory MiB, cores %))."""

    index: int
    memory: int
    uuid: str = ""
    type: str = ""
    # vGPU: how many pods may share the card (the device plugin's split count); 0 means no limit.
    split: int = 0
    holders: dict[str, tuple[int, int]] = field(default_factory=dict)
    used_memory: int = 0
    used_cores: int = 0

    @property
    def used_num(self) -> int:
        return len(self.holders)

    @property
    def free_memory(self) -> int:
        return max(self.memory - self.used_memory, 0)

    def hold(self, uid: str, memory: int, cores: int) -> None:
        old = self.holders.get(uid, (0, 0))
        self.holders[uid] = (old[0] + memory, old[1] + cores)
        self.used_memory += memory
        self.used_cores += cores

    def release(self, uid: str) -> None:
        memory, cores = self.holders.pop(uid, (0, 0))
        self.used_memory -= memory
        self.used_cores -= cores


@dataclass(slots=True)
class NodeGpus:
    """The cards of one node, of one kind (a node reports gpushare or vGPU, not both)."""

    kind: DeviceKind
    cards: dict[int, Card]
    mode: str = "hami-core"

    @property
    def largest(self) -> int:
        return max((c.memory for c in self.cards.values()), default=0)

    def unheld(self) -> NodeGpus:
        """The same cards with nobody on them: a new snapshot charges its pods again."""
        cards = {
            i: Card(index=c.index, memory=c.memory, uuid=c.uuid, type=c.type, split=c.split)
            for i, c in self.cards.items()
        }
        return NodeGpus(self.kind, cards, self.mode)


# --- reading nodes ------------------------------------------------------------------------------------------


def _int_quantity(value: Any) -> int:
    try:
        return int(parse_quantity(str(value)))
    except QuantityError:
        return 0


def _units(resources: Resource, name: str) -> int:
    return resources.amount(name) // unit_scale(name)


def _unhealthy(annotations: Mapping[str, str]) -> set[int]:
    out: set[int] = set()
    for part in str(annotations.get(k.GPU_UNHEALTHY_IDS_KEY, "")).split(","):
        if part.strip().isdigit():
            out.add(int(part))
    return out


def gpushare_cards(capacity: Resource, annotations: Mapping[str, str]) -> NodeGpus | None:
    """Cards from the node's ``volcano.sh/gpu-memory`` (all cards, MiB) and ``volcano.sh/gpu-number``."""
    total = _units(capacity, k.GPU_MEMORY_RESOURCE)
    count = _units(capacity, k.GPU_NUMBER_RESOURCE)
    if total <= 0 or count <= 0:
        return None
    bad = _unhealthy(annotations) if k.GPU_UNHEALTHY_IDS_KEY in annotations else set()
    per_card = total // count
    cards = {i: Card(index=i, memory=per_card) for i in range(count) if i not in bad}
    return NodeGpus(DeviceKind.GPUSHARE, cards)


def vgpu_cards(allocatable: Resource, annotations: Mapping[str, str]) -> NodeGpus | None:
    """Cards from ``volcano.sh/node-vgpu-register``: ``uuid,split,memory,type,healthy,mode`` per card,
    ':'-separated; the node must also offer vgpu number, memory and cores, as Volcano requires."""
    register = annotations.get(k.VGPU_NODE_REGISTER_KEY)
    if not register:
        return None
    for name in (k.VGPU_NUMBER_RESOURCE, k.VGPU_MEMORY_RESOURCE, k.VGPU_CORES_RESOURCE):
        if allocatable.amount(name) <= 0:
            return None
    cards: dict[int, Card] = {}
    mode = "hami-core"
    for index, entry in enumerate(register.split(":")):
        items = entry.split(",")
        if len(items) < 6:
            continue
        if items[4].strip().lower() != "true":
            continue
        try:
            split, memory = int(items[1]), int(items[2])
        except ValueError:
            continue
        cards[index] = Card(index=index, memory=memory, uuid=items[0], type=items[3], split=split)
        mode = items[5] or mode
    if not cards:
        return None
    return NodeGpus(DeviceKind.VGPU, cards, mode)


def node_gpus(capacity: Resource, annotations: Mapping[str, str]) -> NodeGpus | None:
    """The node's shareable cards, from its parsed allocatable and its annotations; None when it has none."""
    if k.VGPU_NODE_REGISTER_KEY in annotations:
        return vgpu_cards(capacity, annotations)
    if k.GPU_MEMORY_RESOURCE in capacity:
        return gpushare_cards(capacity, annotations)
    return None


# --- reading pods -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VgpuAsk:
    """One container's vGPU request: ``number`` cards, each giving ``memory`` MiB (or ``percentage`` of the
    card when it is not ``NO_PERCENTAGE``) and ``cores`` percent of its compute."""

    number: int
    memory: int
    percentage: int
    cores: int

    def memory_on(self, card: Card) -> int:
        if self.percentage != NO_PERCENTAGE:
            return card.memory * self.percentage // 100
        return self.memory


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """What a pod asks of GPUs. ``memory``: MiB on one card (gpushare); ``number``: whole idle cards."""

    memory: int = 0
    number: int = 0
    vgpu: tuple[VgpuAsk, ...] = ()
    use_types: tuple[str, ...] = ()
    nouse_types: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.memory or self.number or self.vgpu)


def _limit(resources: Mapping[str, Any], name: str) -> int | None:
    # Volcano reads limits; the API server copies a limit-only extended resource into requests, and a pod
    # written with requests only (as the simulator's are) means the same.
    for part in ("limits", "requests"):
        value = (resources.get(part) or {}).get(name)
        if value is not None:
            return _int_quantity(value)
    return None


def _types(annotations: Mapping[str, str], key: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in str(annotations.get(key, "")).split(",") if t.strip())


def device_request(pod: Mapping[str, Any]) -> DeviceRequest:
    spec = spec_of(pod)
    annotations = annotations_of(pod)
    memory = number = 0
    vgpu: list[VgpuAsk] = []
    for container in spec.get("containers") or ():
        resources = container.get("resources") or {}
        memory += _limit(resources, k.GPU_MEMORY_RESOURCE) or 0
        number += _limit(resources, k.GPU_NUMBER_RESOURCE) or 0
        count = _limit(resources, k.VGPU_NUMBER_RESOURCE)
        vmem = _limit(resources, k.VGPU_MEMORY_RESOURCE)
        if count is None and vmem is None:
            continue
        percentage = _limit(resources, k.VGPU_MEMORY_PERCENTAGE_RESOURCE)
        if percentage is None:
            percentage = NO_PERCENTAGE if vmem else 100
        vgpu.append(
            VgpuAsk(
                number=count if count is not None else 1,
                memory=vmem or 0,
                percentage=percentage,
                cores=_limit(resources, k.VGPU_CORES_RESOURCE) or 0,
            )
        )
    for container in spec.get("initContainers") or ():
        resources = container.get("resources") or {}
        memory = max(memory, _limit(resources, k.GPU_MEMORY_RESOURCE) or 0)
        number = max(number, _limit(resources, k.GPU_NUMBER_RESOURCE) or 0)
    return DeviceRequest(
        memory=memory,
        number=number,
        vgpu=tuple(vgpu),
        use_types=_types(annotations, k.VGPU_USE_TYPE_KEY),
        nouse_types=_types(annotations, k.VGPU_NOUSE_TYPE_KEY),
    )


def gpu_index_of(annotations: Mapping[str, str]) -> list[int]:
    """The cards a bound gpushare pod holds, from its ``volcano.sh/gpu-index`` ("0" or "0,1")."""
    raw = str(annotations.get(k.GPU_INDEX_KEY, ""))
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    return [int(p) for p in parts] if all(p.isdigit() for p in parts) else []


def encode_vgpu(devices: Iterable[Iterable[tuple[Card, int, int]]]) -> str:
    """Volcano's pod form: per container ``uuid,NVIDIA,memory,cores:`` per card, containers joined by ';'."""
    return ";".join(
        "".join(f"{card.uuid},NVIDIA,{mem},{cores}:" for card, mem, cores in container)
        for container in devices
    )


def decode_vgpu(text: str) -> list[tuple[str, int, int]]:
    """(uuid, memory, cores) for every card of every container in a ``volcano.sh/vgpu-ids-new`` value."""
    out: list[tuple[str, int, int]] = []
    for container in text.split(";"):
        for entry in container.split(":"):
            items = entry.split(",")
            if len(items) >= 4 and items[2].isdigit() and items[3].isdigit():
                out.append((items[0], int(items[2]), int(items[3])))
    return out


# --- choosing cards -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Choice:
    """Cards chosen for one pod: per container, (card, memory, cores); ``score`` by the schedule policy."""

    cards: tuple[tuple[tuple[Card, int, int], ...], ...]
    score: float = 0.0

    @property
    def indices(self) -> list[int]:
        return sorted({card.index for container in self.cards for card, _, _ in container})


@dataclass(frozen=True, slots=True)
class NoFit:
    reason: str


def choose_gpushare(gpus: NodeGpus, request: DeviceRequest) -> Choice | NoFit:
    """Volcano's gpushare: the lowest-index card with enough free memory; for ``gpu-number``, idle cards."""
    if request.memory:
        for index in sorted(gpus.cards):
            card = gpus.cards[index]
            if card.free_memory >= request.memory:
                return Choice((((card, request.memory, 0),),))
        return NoFit(f"have no GPU with {request.memory} MiB of {k.GPU_MEMORY_RESOURCE} free")
    if request.number:
        idle = [gpus.cards[i] for i in sorted(gpus.cards) if not gpus.cards[i].holders]
        if len(idle) < request.number:
            return NoFit(f"have fewer than {request.number} idle GPUs for {k.GPU_NUMBER_RESOURCE}")
        return Choice((tuple((card, 0, 0) for card in idle[: request.number]),))
    return Choice(())


def _order(
    gpus: NodeGpus, policy: str, used_memory: Mapping[int, int], used_num: Mapping[int, int]
) -> list[int]:
    if policy == k.DEVICE_POLICY_BINPACK:
        return sorted(gpus.cards, key=lambda i: (-used_memory[i], i))
    if policy == k.DEVICE_POLICY_SPREAD:
        return sorted(gpus.cards, key=lambda i: (used_num[i], i))
    return sorted(gpus.cards, reverse=True)


def _type_ok(card: Card, request: DeviceRequest) -> bool:
    kind = card.type.lower()
    if request.use_types and not any(t.lower() in kind for t in request.use_types):
        return False
    return not any(t.lower() in kind for t in request.nouse_types)


def choose_vgpu(gpus: NodeGpus, request: DeviceRequest, policy: str) -> Choice | NoFit:
    """HAMi vGPU: per container, ``number`` distinct cards in policy order (binpack: fullest memory first;
    spread: fewest sharers first), each with room for the memory, cores and one more sharer."""
    used_memory = {i: c.used_memory for i, c in gpus.cards.items()}
    used_cores = {i: c.used_cores for i, c in gpus.cards.items()}
    used_num = {i: c.used_num for i, c in gpus.cards.items()}
    chosen: list[tuple[tuple[Card, int, int], ...]] = []
    score = 0.0
    for ask in request.vgpu:
        if ask.number > len(gpus.cards):
            return NoFit(f"have fewer than {ask.number} GPUs for {k.VGPU_NUMBER_RESOURCE}")
        picked: list[tuple[Card, int, int]] = []
        for i in _order(gpus, policy, used_memory, used_num):
            card = gpus.cards[i]
            memory = ask.memory_on(card)
            if card.split and used_num[i] >= card.split:
                continue
            if card.memory - used_memory[i] < memory or used_cores[i] + ask.cores > FULL_CORES:
                continue
            if ask.cores == FULL_CORES and used_num[i] > 0:
                continue  # a whole card's compute means the card alone
            if used_cores[i] == FULL_CORES and ask.cores == 0:
                continue
            if not _type_ok(card, request):
                continue
            was_idle = used_num[i] == 0
            used_memory[i] += memory
            used_cores[i] += ask.cores
            used_num[i] += 1
            if policy == k.DEVICE_POLICY_BINPACK:
                score += _SCORE * used_memory[i] / max(card.memory, 1)
            elif policy == k.DEVICE_POLICY_SPREAD and was_idle:
                score += _SCORE
            picked.append((card, memory, ask.cores))
            if len(picked) == ask.number:
                break
        if len(picked) < ask.number:
            return NoFit("have no GPUs with enough free vGPU memory, cores or share slots")
        chosen.append(tuple(picked))
    return Choice(tuple(chosen), score)


def choose(gpus: NodeGpus, request: DeviceRequest, policy: str) -> Choice | NoFit:
    if gpus.kind is DeviceKind.VGPU:
        if not request.vgpu:
            return Choice(())
        if gpus.mode and request.vgpu and gpus.mode not in ("hami-core", ""):
            return NoFit(f"have vGPUs in {gpus.mode} mode, which volcano-py does not place")
        return choose_vgpu(gpus, request, policy)
    if not (request.memory or request.number):
        return Choice(())
    return choose_gpushare(gpus, request)


def hold(gpus: NodeGpus, uid: str, choice: Choice) -> None:
    for container in choice.cards:
        for card, memory, cores in container:
            card.hold(uid, memory, cores)


def release(gpus: NodeGpus, uid: str) -> None:
    for card in gpus.cards.values():
        if uid in card.holders:
            card.release(uid)


def held_by(gpus: NodeGpus, pod: Mapping[str, Any], request: DeviceRequest) -> Choice | None:
    """What a bound pod holds, read from its annotations (None when it carries none for this kind)."""
    annotations = annotations_of(pod)
    if gpus.kind is DeviceKind.GPUSHARE:
        indices = [i for i in gpu_index_of(annotations) if i in gpus.cards]
        if not indices:
            return None
        memory = request.memory if request.memory else 0
        return Choice((tuple((gpus.cards[i], memory, 0) for i in indices),))
    raw = annotations.get(k.VGPU_IDS_KEY)
    if not raw:
        return None
    by_uuid = {c.uuid: c for c in gpus.cards.values()}
    held = tuple((by_uuid[u], mem, cores) for u, mem, cores in decode_vgpu(str(raw)) if u in by_uuid)
    return Choice((held,)) if held else None


def bind_annotations(gpus: NodeGpus, node: str, choice: Choice, now_ns: int) -> dict[str, str]:
    """The annotations Volcano's device plugins read, for the cards in ``choice``."""
    if gpus.kind is DeviceKind.GPUSHARE:
        return {
            k.GPU_INDEX_KEY: ",".join(str(i) for i in choice.indices),
            k.PREDICATE_TIME_KEY: str(now_ns),
        }
    ids = encode_vgpu(choice.cards)
    seconds = str(now_ns // 1_000_000_000)
    return {
        k.VGPU_IDS_KEY: ids,
        k.VGPU_DEVICES_TO_ALLOCATE_KEY: ids,
        k.VGPU_NODE_KEY: node,
        k.VGPU_TIME_KEY: seconds,
        k.VGPU_BIND_TIME_KEY: seconds,
        k.VGPU_BIND_PHASE_KEY: k.VGPU_BIND_PHASE_ALLOCATING,
    }


def _copy(gpus: NodeGpus) -> NodeGpus:
    cards = {
        i: Card(c.index, c.memory, c.uuid, c.type, c.split, dict(c.holders), c.used_memory, c.used_cores)
        for i, c in gpus.cards.items()
    }
    return NodeGpus(gpus.kind, cards, gpus.mode)


def slots(gpus: NodeGpus, request: DeviceRequest, policy: str, cap: int) -> int:
    """How many pods of ``request`` the cards can take one after another (at most ``cap``)."""
    if request.empty or cap <= 0:
        return cap
    if gpus.kind is DeviceKind.GPUSHARE and request.memory and not request.number:
        # Identical pods on first-fit cards: each card takes what fits in its free memory.
        return min(cap, sum(c.free_memory // request.memory for c in gpus.cards.values()))
    trial = _copy(gpus)
    count = 0
    while count < cap:
        choice = choose(trial, request, policy)
        if isinstance(choice, NoFit) or not choice.cards:
            break
        hold(trial, f"slot-{count}", choice)
        count += 1
    return count
