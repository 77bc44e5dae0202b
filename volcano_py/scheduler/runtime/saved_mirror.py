"""The cache's mirror saved on disk, so that a restarted scheduler resumes its watches instead of listing the
cluster again (at 50,000 pods a list costs the API server, and the scheduler, far more than a read).

Given a ``MirrorFile``, the cache saves its informers' mirrors once synced, then every
``MIRROR_SAVE_SECONDS`` while anything changes (and when the process stops), and a process started on that
file resumes the watches from it. The file must come from this cluster: it names the uid of the ``root``
Queue, which every cluster with this scheduler has, and is read only when the API server shows the same uid.
A save waits while ``save_waits`` says so (the binder's backlog: encoding 100,000 objects takes a second of
CPU the binds need), ``SAVE_WAIT_LIMIT`` at most.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Final, Protocol

from volcano_py.api import constants as c
from volcano_py.api.objects import uid_of
from volcano_py.kube.client import NETWORK_ERRORS, ApiError, KubeClient
from volcano_py.kube.informer import Informer
from volcano_py.kube.kinds import QUEUES
from volcano_py.kube.mirror_file import MirrorFile, SavedKind
from volcano_py.kube.store import Obj
from volcano_py.log import get_logger

_log = get_logger(__name__)

# How long the probe of a saved mirror waits for the API server's first word: a watch from a version still
# held answers at once with what changed since, or with nothing at all if nothing did.
PROBE_SECONDS: Final = 0.5
PROBED_KINDS: Final = ("pods", "podgroups")
# A mirror saved this recently is read without the probe: kube-apiserver keeps each kind's watch events for
# 75 s and more (its watch cache grows to hold that much), so the probe would mostly wait out a quiet
# cluster's silence. Should the history be shorter (a very busy cluster), the watch's 410 still voids it.
RECENT_MIRROR_SECONDS: Final = 60.0
# How often a changing mirror is saved: a restart resumes from at most this long ago, well within the
# API server's watch window (its watch cache keeps at least the last 75 s of changes).
MIRROR_SAVE_SECONDS = 30.0
# How long a periodic save may wait for ``save_waits`` to clear.
SAVE_WAIT_LIMIT: Final = 120.0


class Mirrored(Protocol):
    """The cache, as its saved mirror reads it."""

    @property
    def client(self) -> KubeClient: ...
    @property
    def informers(self) -> Mapping[str, Informer]: ...
    @property
    def generation(self) -> int: ...
    @property
    def synced(self) -> bool: ...
    @property
    def save_waits(self) -> Callable[[], bool]: ...
    async def wait_synced(self) -> None: ...
    def queue(self, name: str) -> Obj | None: ...


class SavedMirror:
    """The mirror file of one cache: read once at start (``resume``), written while the mirrors change."""

    def __init__(self, file: MirrorFile, cache: Mirrored) -> None:
        self.file = file
        self.cache = cache
        self._saving = asyncio.Lock()
        self._failed = False  # said once: a directory we cannot write is not news every 30 s

    async def resume(self) -> bool:
        """Load the informers from the file, if it is this cluster's and still watchable; whether any was."""
        began = time.monotonic()
        cluster = await self._cluster_uid()
        if cluster is None:
            return False
        asked = time.monotonic()
        if not await self._watchable(cluster):
            return False
        probed = time.monotonic()
        saved = await asyncio.to_thread(self.file.read, cluster)
        if not saved:
            return False
        read = time.monotonic()
        resumed = {
            name: len(saved[name].items)
            for name, informer in self.cache.informers.items()
            if name in saved and informer.resume(saved[name])
        }
        # Each step's wall time: a restart's seconds to the first bind are mostly these and the core's read.
        _log.info(
            "resuming from the saved mirror",
            path=str(self.file.path),
            objects=resumed,
            cluster_seconds=round(asked - began, 2),
            probe_seconds=round(probed - asked, 2),
            read_seconds=round(read - probed, 2),
            resume_seconds=round(time.monotonic() - read, 2),
        )
        return bool(resumed)

    async def _cluster_uid(self) -> str | None:
        """This cluster's mark in a mirror file: the uid of its root Queue (None: no root Queue yet). Listed
        by name: the scheduler's role may list Queues but not get one."""
        try:
            found = await self.cache.client.get(
                QUEUES.collection_path(), fieldSelector=f"metadata.name={c.ROOT_QUEUE}"
            )
        except (ApiError, *NETWORK_ERRORS) as exc:
            # Not found: no Queue CRD yet, so no mirror of this cluster either; nothing to warn about.
            if not (isinstance(exc, ApiError) and exc.not_found):
                _log.warning("cannot tell which cluster this is; listing it", error=str(exc))
            return None
        return next((uid for root in found.get("items") or () if (uid := uid_of(root))), None)

    async def _watchable(self, cluster: str) -> bool:
        """Whether the saved pods and PodGroups (nearly all of a mirror's objects) can still be watched from
        their versions. A mirror older than the API server's watch history is void: reading it (seconds at
        50,000 pods, holding the GIL) would only delay the list that replaces it. Its header alone names the
        versions; a watch request per kind tells, unless the file is recent enough that the server surely
        still holds them."""
        header = await asyncio.to_thread(self.file.header, cluster)
        if header is None or time.time() - header.saved_at < RECENT_MIRROR_SECONDS:
            return True
        probes = [
            self.cache.informers[kind].watchable_from(version, PROBE_SECONDS)
            for kind in PROBED_KINDS
            if (version := header.versions.get(kind))
        ]
        if all(await asyncio.gather(*probes)):
            return True
        _log.info("saved mirror older than the API server's watch history; listing", path=str(self.file.path))
        return False

    def _saved_kinds(self) -> tuple[str, dict[str, SavedKind]] | None:
        root = self.cache.queue(c.ROOT_QUEUE)
        if root is None or not self.cache.synced:
            return None
        informers = self.cache.informers.items()
        return uid_of(root), {name: saved for name, informer in informers if (saved := informer.saved())}

    async def save(self) -> bool:
        """Write the mirrors as they stand now (in a worker thread); whether it was written. A failure is
        logged, never raised."""
        if (state := self._saved_kinds()) is None:
            return False
        began = time.monotonic()
        try:
            # One write at a time: the save on stop must not race the periodic one still in its thread.
            async with self._saving:
                size = await asyncio.to_thread(self.file.write, *state)
        except (OSError, TypeError) as exc:  # TypeError: an object JSON cannot hold (none expected)
            if not self._failed:
                _log.warning(
                    "cannot save the mirror; restarts will list the cluster (see --mirror-dir)",
                    path=str(self.file.path),
                    error=str(exc),
                )
            self._failed = True
            return False
        self._failed = False
        _log.debug("mirror saved", bytes=size, seconds=round(time.monotonic() - began, 2))
        return True

    async def keep(self) -> None:
        """Save once synced (a fresh list is what a restart would have to do again), then while it changes."""
        await self.cache.wait_synced()
        saved_at = -1
        while True:
            if self.cache.generation != saved_at:
                await self._until_save_may_start()
                generation = self.cache.generation
                if await self.save():
                    saved_at = generation
                elif self.cache.queue(c.ROOT_QUEUE) is None:
                    # A new cluster's root Queue, which marks the file, is being created: soon, not in 30 s.
                    await asyncio.sleep(1.0)
                    continue
            await asyncio.sleep(MIRROR_SAVE_SECONDS)

    async def _until_save_may_start(self) -> None:
        """While ``save_waits`` says so, ``SAVE_WAIT_LIMIT`` at most (it is polled: nothing signals it)."""
        deadline = time.monotonic() + SAVE_WAIT_LIMIT
        while time.monotonic() < deadline:
            if not self.cache.save_waits():
                return
            await asyncio.sleep(1.0)
