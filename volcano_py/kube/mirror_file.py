"""Informer mirrors kept on disk, so a restarted process resumes its watches instead of listing everything.

A scheduler's first list of a large cluster is most of its restart: at 5,000 nodes and 50,000 pods the pods
alone are a hundred pages, decoded object by object. The file written here holds, for each mirrored kind, the
objects as the informer keeps them and the resourceVersion they are current at; a process started on it
loads them and watches from that version, and the API server sends only what changed since (an informer whose
version has aged out of the server's window gets ``410 Gone`` and lists as before, see ``informer``).

The file says which cluster it was read from (the uid of an object every such cluster has, chosen by the
caller): a file from another cluster or another format is ignored, never half-read. It is written whole to a
temporary name and renamed over the last one, so a process killed mid-write leaves the previous file.

It holds JSON, as the API sent it, in records of ``CHUNK`` objects, each framed by its length; the file is
read whole and decoded from memory with orjson. At 50,000 pods that is half a second of CPU (marshal took
0.8 s, and ``marshal.load`` on a file object, which asks the file for every few bytes, 20 s of wall time).
JSON also cannot carry anything but data, whoever wrote the file.

Writing happens in a worker thread, in chunks: encoding 50,000 pods at once would hold the GIL for a good
part of a second, during which no watch event or bind answer is read.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import os
import struct
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from volcano_py.kube.store import Obj
from volcano_py.log import get_logger

_log = get_logger(__name__)

# Bumped whenever what is written changes shape; a file of another format is ignored.
FORMAT: Final = 3
# Objects per record: small enough that encoding one holds the GIL for milliseconds.
CHUNK: Final = 500
# A temporary file untouched this long was left by a process killed while writing it.
ABANDONED_SECONDS: Final = 600.0
# Numbers this process's writes, each its own (``next`` on a count is atomic under the GIL).
_WRITES: Final = itertools.count()


@dataclass(frozen=True, slots=True)
class SavedKind:
    """One informer's mirror as saved: which objects it selects, the version they are current at, them."""

    selection: tuple[str, ...]  # the informer's path and selectors: a mirror of other objects is not resumed
    resource_version: str
    items: Sequence[Obj]


@dataclass(frozen=True, slots=True)
class SavedHeader:
    """What a file's header says without its objects: when it was written (epoch seconds), and each kind's
    resourceVersion."""

    saved_at: float
    versions: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class MirrorFile:
    """Where one process's mirror lives, and which cluster it must come from."""

    path: Path

    @classmethod
    def for_process(cls, directory: str | os.PathLike[str], component: str, *identity: str) -> MirrorFile:
        """A file per component and ``identity`` (the API server, what it selects), so processes for other
        clusters or roles do not overwrite each other's."""
        digest = hashlib.sha256("|".join(identity).encode()).hexdigest()[:16]
        return cls(Path(directory) / f"{component}-{digest}.mirror")

    def write(self, cluster: str, kinds: Mapping[str, SavedKind]) -> int:
        """Write the mirrors of ``kinds`` as read from ``cluster``; returns the bytes written."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._remove_abandoned()
        # Named for this write alone: two writes must never share (and truncate) one file.
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{next(_WRITES)}.tmp")
        header = {
            "format": FORMAT,
            "cluster": cluster,
            "saved_at": time.time(),
            "kinds": {
                name: [list(saved.selection), saved.resource_version, len(saved.items)]
                for name, saved in kinds.items()
            },
        }
        try:
            with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
                out.write(frame(orjson.dumps(header)))
                for saved in kinds.values():
                    items = saved.items
                    for start in range(0, len(items), CHUNK):
                        out.write(frame(orjson.dumps(list(items[start : start + CHUNK]))))
                size = out.tell()
            os.replace(temporary, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
        return size

    def _remove_abandoned(self) -> None:
        """Temporaries of processes killed mid-write; one younger than ``ABANDONED_SECONDS`` may be another
        live process's write."""
        for temporary in self.path.parent.glob(f".{self.path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                if time.time() - temporary.stat().st_mtime > ABANDONED_SECONDS:
                    temporary.unlink()

    def header(self, cluster: str) -> SavedHeader | None:
        """When the file was saved and each kind's resourceVersion, from its header alone; None as ``read``
        would give None for the header (no file, another cluster or format, unreadable)."""
        try:
            with open(self.path, "rb") as saved:
                (length,) = _LENGTH.unpack(saved.read(_LENGTH.size))
                header = orjson.loads(saved.read(length))
            if not _matches(header, cluster):
                return None
            versions = {str(name): str(version) for name, (_, version, _) in header["kinds"].items()}
            return SavedHeader(float(header["saved_at"]), versions)
        except (OSError, ValueError, TypeError, KeyError, struct.error):  # no file among them
            return None

    def read(self, cluster: str) -> dict[str, SavedKind] | None:
        """The saved mirrors, or None when there is no file, or it is of another cluster or format, or it
        cannot be read whole (it is then left for the next write to replace)."""
        try:
            data = self.path.read_bytes()
            with _collector_paused():
                records = _Records(data)
                header = records.next()
                if not _matches(header, cluster):
                    _log.info("mirror file of another cluster or build; listing", path=str(self.path))
                    return None
                kinds = {
                    str(name): SavedKind(tuple(selection), str(version), _items(records, int(count)))
                    for name, (selection, version, count) in header["kinds"].items()
                }
                if not records.done:
                    raise ValueError("the mirror holds more records than its header names")
                return kinds
        except FileNotFoundError:
            return None
        except (OSError, EOFError, ValueError, TypeError, KeyError, struct.error) as exc:
            _log.warning("mirror file unreadable; listing instead", path=str(self.path), error=repr(exc))
            return None


def _matches(header: Any, cluster: str) -> bool:
    return (
        isinstance(header, dict)
        and header.get("format") == FORMAT
        and header.get("cluster") == cluster
        and isinstance(header.get("kinds"), dict)
    )


def frame(record: bytes) -> bytes:
    """One record as the file holds it: its length, then itself."""
    return _LENGTH.pack(len(record)) + record


_LENGTH = struct.Struct("<Q")


class _Records:
    """The framed records of a file read whole, decoded one at a time from memory."""

    def __init__(self, data: bytes) -> None:
        self.view = memoryview(data)
        self.at = 0

    @property
    def done(self) -> bool:
        return self.at == len(self.view)

    def next(self) -> Any:
        (length,) = _LENGTH.unpack_from(self.view, self.at)
        start = self.at + _LENGTH.size
        if start + length > len(self.view):
            raise EOFError("the mirror ends inside a record")
        self.at = start + length
        return orjson.loads(self.view[start : self.at])


def _items(records: _Records, count: int) -> list[Obj]:
    items: list[Obj] = []
    while len(items) < count:
        chunk = records.next()
        if not isinstance(chunk, list) or not chunk:
            raise ValueError(f"a chunk of the mirror is not a list of objects ({type(chunk).__name__})")
        items.extend(chunk)
    if len(items) != count:
        raise ValueError(f"the mirror holds {len(items)} objects where its header says {count}")
    return items


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading builds millions of acyclic containers at once: collections during it would only scan them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
