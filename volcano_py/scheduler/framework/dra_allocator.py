"""DRA's allocator: the devices on one node for a pod's claims, and the allocation written back for them.

A pod with ``spec.resourceClaims`` fits a node only if every unallocated claim it uses can be satisfied
there: for each of its requests, devices of the request's DeviceClass that match the class's and the
request's CEL selectors and that no other claim holds (``ExactCount``: ``count`` of them; ``All``: every
matching device the node sees, none of them held), with the claim's ``matchAttribute`` constraints met. All
claims of a pod are satisfied together on one node, as kube-scheduler's allocator does; the search
backtracks over devices. A failure is worded once per cause, the same on every node it holds for, so the
session can count nodes by reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api import dra as api
from volcano_py.api.dra_cel import AttributeValue, SelectorCompileError, compile_selector, evaluate

from .dra_records import Claim, ClassSpec, Constraint, DeviceEntry, DeviceId, RequestSpec

# The search gives up past this many steps on one node (a pathological constraint over many devices).
_MAX_STEPS = 20000


@dataclass(frozen=True, slots=True)
class Chosen:
    """Devices chosen for the pod's unallocated claims: per claim key, (request, device) in request order."""

    results: Mapping[str, tuple[tuple[str, DeviceId], ...]]

    def devices(self) -> set[DeviceId]:
        return {device for results in self.results.values() for _, device in results}


@dataclass(frozen=True, slots=True)
class NoFit:
    """Why the claims do not fit a node; worded to follow "N nodes", the same on every node it holds for."""

    reason: str


@dataclass(slots=True)
class _Slot:
    claim: Claim
    request: RequestSpec
    candidates: list[DeviceEntry]
    constraints: list[int] = field(default_factory=list)  # indexes into the search's constraint values


# Selector outcomes by (the selectors, the device): True, False, or the error text. A session keeps one, so
# each device is judged once per distinct request however many nodes and pods ask.
MatchMemo = dict[tuple[tuple[str, ...], DeviceId], bool | str]


def _judge(selectors: tuple[str, ...], device: DeviceEntry) -> bool | str:
    for expression in selectors:
        outcome = evaluate(expression, device.view)
        if outcome.error:
            return outcome.error
        if not outcome.matches:
            return False
    return True


def _matching(
    request: RequestSpec,
    claim: Claim,
    classes: Mapping[str, ClassSpec],
    devices: Sequence[DeviceEntry],
    memo: MatchMemo | None,
) -> list[DeviceEntry] | NoFit:
    klass = classes.get(request.device_class)
    if klass is None:
        return NoFit(
            f"cannot be checked: DeviceClass {request.device_class} of ResourceClaim {claim.key} "
            f"(request {request.name}) does not exist"
        )
    return _select(klass.selectors + request.selectors, claim, request, devices, memo)


def _select(
    selectors: tuple[str, ...],
    claim: Claim,
    request: RequestSpec,
    devices: Sequence[DeviceEntry],
    memo: MatchMemo | None,
) -> list[DeviceEntry] | NoFit:
    for expression in selectors:
        try:
            compile_selector(expression)
        except SelectorCompileError as err:
            return NoFit(f"cannot be checked for ResourceClaim {claim.key} (request {request.name}): {err}")
    out: list[DeviceEntry] = []
    for device in devices:
        if memo is None:
            verdict = _judge(selectors, device)
        else:
            key = (selectors, device.id)
            known = memo.get(key)
            verdict = memo[key] = _judge(selectors, device) if known is None else known
        if verdict is True:
            out.append(device)
        elif verdict is not False:
            return NoFit(f"cannot be checked for ResourceClaim {claim.key}: {verdict}")
    return out


def _short(
    request: RequestSpec,
    claim: Claim,
    classes: Mapping[str, ClassSpec],
    devices: Sequence[DeviceEntry],
    held: set[DeviceId],
    memo: MatchMemo | None,
) -> NoFit:
    """Why too few devices match: the request's own selectors, when the class alone would have had enough."""
    what = f"{request.device_class} devices for ResourceClaim {claim.key} (request {request.name})"
    klass = classes.get(request.device_class)
    if request.selectors and klass is not None:
        of_class = _select(klass.selectors, claim, request, devices, memo)
        free = [] if isinstance(of_class, NoFit) else [d for d in of_class if d.id not in held]
        if len(free) >= request.count:
            chosen = " && ".join(request.selectors)
            return NoFit(f"have fewer than {request.count} free {what} that match {chosen}")
    return NoFit(f"have fewer than {request.count} free {what}")


def choose_devices(
    claims: Sequence[Claim],
    devices: Sequence[DeviceEntry],
    held: Iterable[DeviceId] | set[DeviceId],
    classes: Mapping[str, ClassSpec],
    memo: MatchMemo | None = None,
) -> Chosen | NoFit:
    """Devices from ``devices`` (those a node sees) for every request of ``claims`` (unallocated, not
    refused), none of them in ``held``; or why not. ``memo``: selector outcomes kept between calls."""
    held = held if isinstance(held, set) else set(held)
    slots: list[_Slot] = []
    constraint_of: list[tuple[Claim, Constraint]] = []
    for claim in claims:
        first = len(constraint_of)
        constraint_of.extend((claim, c) for c in claim.constraints)
        for request in claim.requests:
            matching = _matching(request, claim, classes, devices, memo)
            if isinstance(matching, NoFit):
                return matching
            what = f"{request.device_class} devices for ResourceClaim {claim.key} (request {request.name})"
            if request.all:
                if not matching:
                    return NoFit(f"have no {what}")
                busy = [d for d in matching if d.id in held]
                if busy:
                    return NoFit(f"have {what} held by another claim (allocationMode All takes them all)")
                free = matching
            else:
                free = [d for d in matching if d.id not in held]
                if len(free) < request.count:
                    return _short(request, claim, classes, devices, held, memo)
            applies = [
                first + i
                for i, c in enumerate(claim.constraints)
                if c.requests is None or request.name in c.requests
            ]
            slots.append(_Slot(claim, request, free, applies))
    chosen = _search(slots, len(constraint_of), [c.attribute for _, c in constraint_of])
    if chosen is None:
        claim, constraint = constraint_of[0] if constraint_of else (claims[0], None)
        if constraint is not None:
            return NoFit(
                f"have no devices for ResourceClaim {claim.key} that share attribute {constraint.attribute}"
            )
        names = ", ".join(c.key for c in claims)
        return NoFit(f"have too few free devices for ResourceClaims {names} together")
    results: dict[str, list[tuple[str, DeviceId]]] = {}
    for slot, picked in zip(slots, chosen, strict=True):
        results.setdefault(slot.claim.key, []).extend((slot.request.name, d.id) for d in picked)
    return Chosen({key: tuple(items) for key, items in results.items()})


def _search(slots: list[_Slot], n_constraints: int, attributes: list[str]) -> list[list[DeviceEntry]] | None:
    """Depth first over the requests, device by device, in slice order; a constraint's value is fixed by
    the first device chosen under it."""
    values: list[AttributeValue | None] = [None] * n_constraints
    used: set[DeviceId] = set()
    picked: list[list[DeviceEntry]] = [[] for _ in slots]
    steps = 0

    def need(i: int) -> int:
        slot = slots[i]
        return len(slot.candidates) if slot.request.all else slot.request.count

    def place(i: int, start: int) -> bool:
        nonlocal steps
        if i == len(slots):
            return True
        slot = slots[i]
        if len(picked[i]) == need(i):
            return place(i + 1, 0)
        for j in range(start, len(slot.candidates)):
            steps += 1
            if steps > _MAX_STEPS:
                return False
            device = slot.candidates[j]
            if device.id in used:
                continue
            fixed: list[int] = []
            ok = True
            for c in slot.constraints:
                value = device.attributes.get(attributes[c])
                if value is None:
                    ok = False
                    break
                if values[c] is None:
                    values[c] = value
                    fixed.append(c)
                elif values[c] != value:
                    ok = False
                    break
            if ok:
                used.add(device.id)
                picked[i].append(device)
                if place(i, j + 1):
                    return True
                picked[i].pop()
                used.discard(device.id)
            for c in fixed:
                values[c] = None
            if slot.request.all:
                return False  # every device must go in; one that cannot fails the request
        return False

    return picked if place(0, 0) else None


def allocation_body(
    claim: Claim, results: Sequence[tuple[str, DeviceId]], node: str | None, classes: Mapping[str, ClassSpec]
) -> dict[str, Any]:
    """The claim's ``status.allocation`` for ``results``: the devices, the configuration from the classes
    and the claim (as kube-scheduler copies them), and the node when a device is local to one."""
    config: list[dict[str, Any]] = []
    by_class: dict[str, list[str]] = {}
    for request in claim.requests:
        by_class.setdefault(request.device_class, []).append(request.name)
    for class_name, requests in by_class.items():
        klass = classes.get(class_name)
        for entry in klass.config if klass is not None else ():
            config.append({"source": "FromClass", "requests": list(requests), **entry})
    for entry in claim.config:
        config.append({"source": "FromClaim", **entry})
    body: dict[str, Any] = {
        "devices": {
            "results": [
                {"request": request, "driver": driver, "pool": pool, "device": device}
                for request, (driver, pool, device) in results
            ]
        }
    }
    if config:
        body["devices"]["config"] = config
    if node:
        body["nodeSelector"] = {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": api.NODE_NAME_FIELD, "operator": "In", "values": [node]}]}
            ]
        }
    return body
