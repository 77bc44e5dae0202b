"""Dynamic Resource Allocation, pure: devices from ResourceSlices, claims, the choice of devices on a node.

A pod with ``spec.resourceClaims`` fits a node only if every claim it uses can be satisfied there: a claim
already allocated pins the pod to the nodes its allocation names; an unallocated one needs, for each of its
requests, devices of the request's DeviceClass that match the class's and the request's CEL selectors and
that no other claim holds (``ExactCount``: ``count`` of them; ``All``: every matching device the node sees,
none of them held), with the claim's ``matchAttribute`` constraints met. All claims of a pod are satisfied
together on one node, as kube-scheduler's allocator does; the search backtracks over devices.

Features of ``resource.k8s.io/v1`` this allocator does not implement are refused, naming the claim and the
field: prioritized lists (``firstAvailable``), ``adminAccess``, consumable capacity (``capacity.requests``)
and ``distinctAttribute``. Devices that draw on shared counters (partitionable devices, alpha) and slices
that choose nodes per device are not offered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from pydantic import ValidationError

from volcano_py.api import dra as api
from volcano_py.api.dra_cel import (
    AttributeValue,
    DeviceView,
    SelectorCompileError,
    compile_selector,
    evaluate,
    parse_semver,
)
from volcano_py.api.dra_rules import claim_problems
from volcano_py.log import get_logger
from volcano_py.resources import QuantityError, Resource, parse_quantity, to_canonical

log = get_logger(__name__)
# (driver, pool, device name): what an allocation result names.
DeviceId = tuple[str, str, str]
# The search gives up past this many steps on one node (a pathological constraint over many devices).
_MAX_STEPS = 20000


@dataclass(frozen=True, slots=True)
class DeviceEntry:
    id: DeviceId
    view: DeviceView
    # Attribute values by fully qualified name (``domain/name``), for ``matchAttribute``.
    attributes: Mapping[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class ClassSpec:
    name: str
    selectors: tuple[str, ...]
    config: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    name: str
    device_class: str
    selectors: tuple[str, ...]
    all: bool
    count: int


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: frozenset[str] | None  # None: every request of the claim
    attribute: str  # fully qualified


@dataclass(frozen=True, slots=True)
class Claim:
    """A ResourceClaim as the allocator reads it. ``refused``: why it cannot be allocated ("" if it can)."""

    namespace: str
    name: str
    uid: str
    requests: tuple[RequestSpec, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    config: tuple[Mapping[str, Any], ...] = ()
    refused: str = ""
    # The devices of its allocation (None: not allocated), and the nodes the allocation is limited to.
    allocated: tuple[DeviceId, ...] | None = None
    node_selector: Mapping[str, Any] | None = None
    reserved_for: tuple[str, ...] = ()
    owner_uid: str = ""
    deleting: bool = False

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def read_class(obj: Mapping[str, Any]) -> ClassSpec:
    dc = api.DeviceClass.model_validate(obj)
    selectors = tuple(s.cel.expression for s in dc.spec.selectors if s.cel is not None)
    config = tuple(c.to_dict() for c in dc.spec.config)
    return ClassSpec(dc.name, selectors, config)


def _attribute(value: api.DeviceAttribute) -> AttributeValue | None:
    if value.int is not None:
        return value.int
    if value.bool is not None:
        return value.bool
    if value.string is not None:
        return value.string
    if value.version is not None:
        try:
            return parse_semver(value.version)
        except ValueError:
            return None
    return None


def _device(driver: str, pool: str, device: api.Device) -> DeviceEntry:
    attrs: list[tuple[str, str, AttributeValue]] = []
    by_name: dict[str, AttributeValue] = {}
    for name, raw in sorted(device.attributes.items()):
        value = _attribute(raw)
        if value is None:
            continue
        domain, short = api.qualified(name, driver)
        attrs.append((domain, short, value))
        by_name[f"{domain}/{short}"] = value
    capacity: list[tuple[str, str, Fraction]] = []
    for name, cap in sorted(device.capacity.items()):
        try:
            amount = parse_quantity(cap.value)
        except QuantityError:
            continue
        domain, short = api.qualified(name, driver)
        capacity.append((domain, short, amount))
    return DeviceEntry((driver, pool, device.name), (driver, tuple(attrs), tuple(capacity)), by_name)


@dataclass(frozen=True, slots=True)
class SliceDevices:
    """The usable devices of one slice and where they are: one node, nodes by selector, or every node."""

    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    node_selector: Mapping[str, Any] | None
    all_nodes: bool
    devices: tuple[DeviceEntry, ...]


def read_slice(obj: Mapping[str, Any]) -> SliceDevices:
    rs = api.ResourceSlice.model_validate(obj)
    spec = rs.spec
    devices: tuple[DeviceEntry, ...] = ()
    if not spec.per_device_node_selection:
        devices = tuple(
            _device(spec.driver, spec.pool.name, d) for d in spec.devices if not d.consumes_counters
        )
    return SliceDevices(
        spec.driver,
        spec.pool.name,
        spec.pool.generation,
        spec.pool.resource_slice_count,
        spec.node_name,
        spec.node_selector,
        bool(spec.all_nodes),
        devices,
    )


def read_slice_or_none(obj: Mapping[str, Any]) -> SliceDevices | None:
    """``read_slice``, or None for a slice that does not read (the session goes on without it)."""
    try:
        return read_slice(obj)
    except ValidationError as err:
        name = (obj.get("metadata") or {}).get("name")
        log.warning("ResourceSlice unreadable; its devices are not offered", name=name, error=str(err)[:200])
        return None


def complete_pools(slices: Iterable[SliceDevices]) -> list[SliceDevices]:
    """The slices of the newest generation of each pool, for pools whose slices are all published (a pool
    being rewritten by its driver is left alone until it is whole again, as kube-scheduler does)."""
    newest: dict[tuple[str, str], list[SliceDevices]] = {}
    for s in slices:
        key = (s.driver, s.pool)
        have = newest.get(key)
        if have is None or s.generation > have[0].generation:
            newest[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    return [s for group in newest.values() if len(group) >= group[0].slice_count for s in group]


def _refusal(key: str, claim: api.ResourceClaim) -> str:
    problems = claim_problems(claim.spec.devices, "spec.devices")
    return f"ResourceClaim {key} {problems[0]}" if problems else ""


def read_claim(obj: Mapping[str, Any]) -> Claim:
    meta = obj.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    key = f"{namespace}/{name}"
    try:
        claim = api.ResourceClaim.model_validate(obj)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        # Unreadable, yet the devices its allocation names stay held.
        results = (((obj.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results")
        held = tuple(
            (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
            for r in results or ()
            if isinstance(r, Mapping)
        )
        return Claim(
            namespace,
            name,
            str(meta.get("uid") or ""),
            refused=f"ResourceClaim {key}: {where}: {first['msg']}",
            allocated=held if results is not None else None,
        )
    owner = next((o for o in claim.metadata.owner_references if o.controller), None)
    allocation = claim.status.allocation
    allocated: tuple[DeviceId, ...] | None = None
    node_selector = None
    if allocation is not None:
        allocated = tuple(
            (r.driver, r.pool, r.device) for r in allocation.devices.results if not r.admin_access
        )
        node_selector = allocation.node_selector
    requests: list[RequestSpec] = []
    refused = _refusal(key, claim)
    if not refused:
        for request in claim.spec.devices.requests:
            exact = request.exactly
            assert exact is not None  # checked by _refusal
            requests.append(
                RequestSpec(
                    request.name,
                    exact.device_class_name,
                    tuple(s.cel.expression for s in exact.selectors if s.cel is not None),
                    exact.allocation_mode is api.AllocationMode.ALL,
                    exact.count,
                )
            )
    constraints = tuple(
        Constraint(
            frozenset(c.requests) if c.requests else None,
            c.match_attribute or "",
        )
        for c in claim.spec.devices.constraints
        if c.match_attribute
    )
    return Claim(
        namespace,
        name,
        claim.metadata.uid or "",
        tuple(requests),
        constraints,
        tuple(c.to_dict() for c in claim.spec.devices.config),
        refused,
        allocated,
        node_selector,
        tuple(r.uid for r in claim.status.reserved_for),
        owner.uid if owner is not None else "",
        claim.metadata.deletion_timestamp is not None,
    )


def quota_name(device_class: str) -> str:
    """The queue resource counting devices of ``device_class`` (Volcano's ``deviceclass/<class>``)."""
    return f"{api.DEVICE_CLASS_QUOTA_PREFIX}{device_class}"


def device_counts(claim: Claim) -> dict[str, int]:
    """Devices the claim asks for, per DeviceClass: ``ExactCount`` requests only (an ``All`` request's size
    is known only once allocated), as Volcano's capacity plugin counts them."""
    out: dict[str, int] = {}
    for request in claim.requests:
        if not request.all:
            out[request.device_class] = out.get(request.device_class, 0) + request.count
    return out


def claim_devices(claim: Claim) -> Resource:
    """``device_counts`` as queue resources (``deviceclass/<class>``)."""
    return Resource({quota_name(c): to_canonical(quota_name(c), n) for c, n in device_counts(claim).items()})


def held_by_queues(
    placed: Iterable[tuple[str, Mapping[str, Any]]], claims: Mapping[str, Claim]
) -> dict[str, Resource]:
    """Per queue, the devices the claims of its placed pods (queue, pod) ask for, each claim once."""
    seen: set[tuple[str, str]] = set()
    out: dict[str, Resource] = {}
    for queue, pod in placed:
        for ref in pod_claims(pod):
            claim = claims.get(ref.claim) if ref.claim else None
            if claim is None or (queue, claim.key) in seen:
                continue
            seen.add((queue, claim.key))
            counted = claim_devices(claim)
            if not counted.is_zero():
                out[queue] = out.get(queue, Resource()) + counted
    return out


# --- a pod's claims ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of a pod's ``spec.resourceClaims``: the claim it resolves to (``namespace/name``), or why
    it does not resolve yet (``waiting``)."""

    entry: str
    claim: str = ""
    template: str = ""
    waiting: str = ""


def pod_claims(pod: Mapping[str, Any]) -> list[PodClaim]:
    """The pod's claims: a named claim as is; a template's through ``status.resourceClaimStatuses``, which
    the resourceclaim controller fills once it has made the pod's claim (until then the pod waits)."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    entries = (pod.get("spec") or {}).get("resourceClaims") or ()
    statuses = {
        s.get("name"): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    }
    out: list[PodClaim] = []
    for entry in entries:
        name = str(entry.get("name") or "")
        if entry.get("resourceClaimName"):
            out.append(PodClaim(name, f"{namespace}/{entry['resourceClaimName']}"))
            continue
        template = str(entry.get("resourceClaimTemplateName") or "")
        if name not in statuses:
            waiting = (
                f"waits for the ResourceClaim of spec.resourceClaims[{name}] (template {template}) to be "
                "created by kube-controller-manager's resourceclaim controller"
            )
            out.append(PodClaim(name, template=template, waiting=waiting))
        elif statuses[name]:
            out.append(PodClaim(name, f"{namespace}/{statuses[name]}", template))
        # A status entry without a claim name: the controller decided that no claim is needed.
    return out


def claims_class_key(pod: Mapping[str, Any], claims: Mapping[str, Claim]) -> tuple[Any, ...]:
    """What of a pod's claims decides where it fits: pods whose claims are fresh copies of one template
    place alike; a claim allocated, shared or missing is the pod's own (its name)."""
    uid = (pod.get("metadata") or {}).get("uid") or ""
    out: list[Any] = []
    for ref in pod_claims(pod):
        claim = claims.get(ref.claim) if ref.claim else None
        fresh = (
            claim is not None
            and ref.template
            and claim.allocated is None
            and not claim.reserved_for
            and claim.owner_uid == uid
        )
        out.append(("template", ref.entry, ref.template) if fresh else ("claim", ref.entry, ref.claim or uid))
    return tuple(out)


# --- choosing devices -------------------------------------------------------------------------------------


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
