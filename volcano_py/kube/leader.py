"""Lease-based leader election (coordination.k8s.io/v1), so one scheduler binds and one controller
reconciles while standbys wait; ``run_while_leading`` is the loop both processes run their terms in.

The rules are client-go's: a lease is free when its holder is empty or when it has not changed for
``leaseDurationSeconds`` *as measured by our own monotonic clock since we last saw it change* (so clock skew
between machines cannot steal a live lease); writes carry the resourceVersion read, so two candidates racing
for a free lease cannot both win; a leader that cannot renew within the renew deadline steps down; a clean
shutdown releases the lease so a standby takes over at once instead of waiting for it to expire.

Fencing: a leader whose process was frozen (SIGSTOP, a VM pause, a long GC) for longer than the lease wakes
up still believing it leads, with writes decided before the freeze queued to go out, while a standby has
taken the lease meanwhile. So each write batch first asks ``LeaderElector.may_write()``: true only while the
last successful renewal *began* less than the renew deadline ago by our monotonic clock (which runs on while
the process is stopped). A standby counts the lease's expiry from the moment it saw that renewal, which is
later, so a write that passes the fence is sent before anyone else may lead. One that fails it is dropped, and
the leader steps down at once instead of at its next renewal round. What no client-side fence closes: a
process frozen between the check and the request going out; only a token the API server checks would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.kinds import LEASES
from volcano_py.kube.waiting import event_within
from volcano_py.log import get_logger

_log = get_logger(__name__)


def format_micro_time(moment: datetime) -> str:
    """Kubernetes MicroTime: RFC 3339 with microseconds, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class LeaseTiming:
    """client-go's three durations (Volcano's --leader-elect-lease-duration, -renew-deadline, -retry-period).

    Ours default to 10s / 8s / 2s (Volcano's: 15s / 10s / 2s): a standby takes over a third sooner.
    """

    lease_duration: int = 10
    renew_deadline: float = 8.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if not 0 < self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError(
                "leader election needs 0 < --leader-elect-retry-period < --leader-elect-renew-deadline < "
                f"--leader-elect-lease-duration; got {self.retry_period:g}s / {self.renew_deadline:g}s / "
                f"{self.lease_duration}s"
            )


@dataclass(frozen=True, slots=True)
class WriteStamp:
    """When a write went through the fence, by the wall clock: ``checked`` just before the fence was asked,
    ``sent`` once it had answered (the request goes out next). A process frozen between the two shows as a
    ``sent`` long after ``checked``: the one window a client-side fence cannot close."""

    checked: float
    sent: float

    def fields(self) -> dict[str, float]:
        return {"checked": round(self.checked, 6), "sent": round(self.sent, 6)}


def through_fence(may_write: Callable[[str], bool], what: str) -> WriteStamp | None:
    """Ask the fence about one write; its stamp if it may go out, None if it must be dropped."""
    checked = time.time()
    if not may_write(what):
        return None
    return WriteStamp(checked, time.time())


class Fenced(Exception):
    """A write was dropped: this process no longer holds the lease it would write under."""


def fence_holds(*, is_leader: bool, renewed_at: float | None, renew_deadline: float, now: float) -> bool:
    """May a leader write now? Only while its last successful renewal began within the renew deadline.

    ``renewed_at`` is our monotonic clock when that renewal's request was about to go out: the lease changed
    on the server no earlier, so no standby can count it expired before ``renewed_at + lease_duration``, and
    the deadline leaves the rest of the lease for the write itself to land.
    """
    return is_leader and renewed_at is not None and now - renewed_at < renew_deadline


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    holder: str
    duration_seconds: int
    acquire_time: str
    renew_time: str
    transitions: int

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration_seconds,
            "acquireTime": self.acquire_time or None,
            "renewTime": self.renew_time or None,
            "leaseTransitions": self.transitions,
        }


@dataclass(slots=True)
class ElectionState:
    """The pure decision: may ``identity`` take or keep the lease now, and what should it write?"""

    identity: str
    lease_duration: int
    observed: LeaseRecord | None = None
    observed_at: float = 0.0

    def observe(self, record: LeaseRecord, now: float) -> None:
        if record != self.observed:
            self.observed = record
            self.observed_at = now

    def can_take(self, now: float) -> bool:
        record = self.observed
        if record is None or record.holder in ("", self.identity):
            return True
        # A holder's own duration governs its lease; fall back to ours when it wrote none.
        duration = record.duration_seconds or self.lease_duration
        return self.observed_at + duration <= now

    def claim(self, wall: datetime) -> LeaseRecord:
        stamp = format_micro_time(wall)
        record = self.observed
        if record is not None and record.holder == self.identity:
            return replace(record, renew_time=stamp, duration_seconds=self.lease_duration)
        transitions = (
            record.transitions + 1
            if record is not None and record.holder
            else (record.transitions if record is not None else 0)
        )
        return LeaseRecord(self.identity, self.lease_duration, stamp, stamp, transitions)


class LeaderElector:
    """Acquire, renew and release one Lease for ``identity``."""

    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        timing: LeaseTiming | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        timing = timing or LeaseTiming()
        self.client = client
        self.namespace = namespace
        self.name = name
        self.timing = timing
        self.state = ElectionState(identity, timing.lease_duration)
        self.renew_deadline = timing.renew_deadline
        self.retry_period = timing.retry_period
        self.clock = clock
        self.wall_clock = wall_clock
        self.is_leader = False
        self.renewed_at: float | None = None  # when the last successful renewal began (see fence_holds)
        self.fenced_writes = 0  # writes dropped because the fence failed
        self._fenced = asyncio.Event()  # set when a write found the fence failed: step down now
        self._resource_version = ""

    @property
    def identity(self) -> str:
        return self.state.identity

    def _lease_body(self, record: LeaseRecord) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if self._resource_version:
            meta["resourceVersion"] = self._resource_version
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": meta,
            "spec": record.to_spec(),
        }

    def may_write(self, what: str = "write") -> bool:
        """The fence: True while this process may write as the leader (see ``fence_holds``).

        A failure drops the caller's write, counts it, and makes ``hold`` step down at once; it is logged
        once per term.
        """
        if fence_holds(
            is_leader=self.is_leader,
            renewed_at=self.renewed_at,
            renew_deadline=self.renew_deadline,
            now=self.clock(),
        ):
            return True
        self.fenced_writes += 1
        if self.is_leader:
            since = self.clock() - (self.renewed_at or 0.0)
            _log.warning(
                "fenced: lease not renewed within the renew deadline; dropping writes and stepping down",
                lease=f"{self.namespace}/{self.name}",
                identity=self.identity,
                renewed_s_ago=round(since, 2),
                renew_deadline=self.renew_deadline,
                dropped=what,
            )
            self.is_leader = False
            self._fenced.set()
        return False

    async def try_acquire_or_renew(self) -> bool:
        """One round: read the lease, write ourselves into it if the rules allow; True if we hold it now."""
        began = self.clock()
        path = LEASES.object_path(self.name, self.namespace)
        try:
            lease = await self.client.get(path)
        except ApiError as exc:
            if not exc.not_found:
                raise
            self._resource_version = ""
            record = self.state.claim(self.wall_clock())
            try:
                created = await self.client.create(
                    LEASES.collection_path(self.namespace), self._lease_body(record)
                )
            except ApiError as create_exc:
                if create_exc.conflict:
                    return False
                raise
            self._took(created, began)
            return True
        self._resource_version = str(lease.get("metadata", {}).get("resourceVersion", ""))
        self.state.observe(LeaseRecord.from_lease(lease), self.clock())
        if not self.state.can_take(self.clock()):
            return False
        record = self.state.claim(self.wall_clock())
        try:
            written = await self.client.replace(path, self._lease_body(record))
        except ApiError as exc:
            if exc.conflict:
                return False
            raise
        self._took(written, began)
        return True

    def _took(self, lease: dict[str, Any], began: float) -> None:
        self._resource_version = str(lease.get("metadata", {}).get("resourceVersion", ""))
        self.state.observe(LeaseRecord.from_lease(lease), self.clock())
        self.renewed_at = began
        if not self.is_leader:
            spec = lease.get("spec") or {}
            _log.info(
                "became leader",
                lease=f"{self.namespace}/{self.name}",
                identity=self.identity,
                acquire_time=spec.get("acquireTime"),
            )
        self.is_leader = True

    async def _attempt(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except (ApiError, *NETWORK_ERRORS) as exc:
            _log.warning("leader election round failed", lease=self.name, error=str(exc))
            return False

    async def acquire(self) -> None:
        """Return once we hold the lease (retrying every retry period)."""
        self._fenced.clear()  # a new term
        while not await self._attempt():
            holder = self.state.observed.holder if self.state.observed else ""
            _log.debug("lease held by another candidate", lease=self.name, holder=holder)
            await asyncio.sleep(self.retry_period)

    def _taken(self) -> bool:
        observed = self.state.observed
        return observed is not None and observed.holder not in ("", self.identity)

    async def hold(self) -> None:
        """Renew every retry period; return when a renewal could not succeed within the renew deadline."""
        last_renewed = self.clock()
        while True:
            if await event_within(self._fenced, self.retry_period):
                break  # a write found the fence failed: the term is over, whatever a renewal would say
            if await self._attempt():
                last_renewed = self.clock()
            elif not self.is_leader or self.clock() - last_renewed >= self.renew_deadline or self._taken():
                break
        self.is_leader = False
        _log.warning("lost leadership", lease=f"{self.namespace}/{self.name}", identity=self.identity)

    async def release(self) -> None:
        """Give the lease up so a standby need not wait for it to expire."""
        if not self.is_leader:
            return
        self.is_leader = False
        record = self.state.claim(self.wall_clock())
        released = replace(record, holder="", duration_seconds=1)
        try:
            await self.client.replace(
                LEASES.object_path(self.name, self.namespace), self._lease_body(released)
            )
            _log.info("released leadership", lease=f"{self.namespace}/{self.name}")
        except (ApiError, *NETWORK_ERRORS) as exc:
            _log.warning("could not release the lease; standbys wait for it to expire", error=str(exc))


async def run_unless_stopped(work: Awaitable[None], stop: asyncio.Event) -> bool:
    """Run ``work`` unless ``stop`` is set first (then cancel it); True if it finished."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    for pending in (task, stopper):
        if pending not in done:
            pending.cancel()
    await asyncio.gather(task, stopper, return_exceptions=True)
    if task in done:
        task.result()
        return True
    return False


async def run_while_leading(
    elector: LeaderElector,
    stop: asyncio.Event,
    term: Callable[[asyncio.Event], Awaitable[None]],
    *,
    before_release: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Until ``stop``: win the lease, run ``term(term_stop)`` while holding it, then give it up.

    ``term_stop`` is set when ``stop`` is or when a renewal fails (another candidate may lead now), and
    ``term`` must return soon after. Losing the lease means standing by for it again; on ``stop`` the lease
    is released (after ``before_release``, e.g. letting in-flight binds finish) so a standby takes over at
    once instead of waiting for it to expire. Both the scheduler and the controller run their terms here.
    """
    while not stop.is_set():
        if not await run_unless_stopped(elector.acquire(), stop):
            return
        term_stop = asyncio.Event()

        async def watch(term_stop: asyncio.Event = term_stop) -> None:
            hold = asyncio.ensure_future(elector.hold())
            outer = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait([hold, outer], return_when=asyncio.FIRST_COMPLETED)
            finally:
                hold.cancel()
                outer.cancel()
                await asyncio.gather(hold, outer, return_exceptions=True)
                term_stop.set()

        watcher = asyncio.ensure_future(watch())
        try:
            await term(term_stop)
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
        if stop.is_set() and before_release is not None:
            await before_release()
        await elector.release()  # nothing to give up once the lease is lost
        if not stop.is_set():
            _log.warning("lost the lease; standing by", lease=f"{elector.namespace}/{elector.name}")
