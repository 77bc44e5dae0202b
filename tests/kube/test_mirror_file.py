"""The mirror file: what is written is read back whole, and only by a process of this cluster."""

from __future__ import annotations

import os
import stat
import struct
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from volcano_py.kube import mirror_file
from volcano_py.kube.mirror_file import CHUNK, MirrorFile, SavedKind


def _pods(count: int) -> list[dict[str, Any]]:
    return [
        {"metadata": {"name": f"p{i}", "namespace": "ns", "resourceVersion": str(i)}, "spec": {"x": "n"}}
        for i in range(count)
    ]


def _kinds(pods: int = 3) -> dict[str, SavedKind]:
    return {
        "pods": SavedKind(("/api/v1/pods", "", ""), "120", _pods(pods)),
        "queues": SavedKind(("/apis/scheduling.volcano.sh/v1beta1/queues", "", ""), "119", []),
    }


def test_what_is_written_is_read_back_whole_across_chunks(tmp_path: Path) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    kinds = _kinds(pods=2 * CHUNK + 7)
    size = mirror.write("uid-a", kinds)
    assert size == mirror.path.stat().st_size > 0
    assert mirror.read("uid-a") == {
        name: SavedKind(saved.selection, saved.resource_version, list(saved.items))
        for name, saved in kinds.items()
    }


def test_the_file_is_private_to_its_user(tmp_path: Path) -> None:
    mirror = MirrorFile(tmp_path / "state" / "scheduler.mirror")
    mirror.write("uid-a", _kinds())
    assert stat.S_IMODE(mirror.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(mirror.path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("header_change", "cluster"),
    [
        pytest.param({}, "uid-of-another-cluster", id="another-cluster"),
        pytest.param({"format": mirror_file.FORMAT + 1}, "uid-a", id="another-format"),
    ],
)
def test_a_file_not_of_this_cluster_or_format_is_not_read(
    tmp_path: Path, header_change: dict[str, Any], cluster: str
) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    mirror.write("uid-a", _kinds())
    whole = mirror.path.read_bytes()
    (length,) = struct.unpack_from("<Q", whole)
    header = orjson.loads(whole[8 : 8 + length])
    mirror.path.write_bytes(mirror_file.frame(orjson.dumps(header | header_change)) + whole[8 + length :])
    assert mirror.read(cluster) is None
    assert mirror.header(cluster) is None
    mirror.path.write_bytes(mirror_file.frame(orjson.dumps(header)) + whole[8 + length :])
    assert mirror.read("uid-a") is not None  # rewritten as it was, it reads


def test_the_saved_versions_come_from_the_header_alone(tmp_path: Path) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    assert mirror.header("uid-a") is None  # no file yet
    before = time.time()
    mirror.write("uid-a", _kinds(pods=2 * CHUNK))
    header = mirror.header("uid-a")
    assert header is not None and before <= header.saved_at <= time.time()
    assert header.versions == {"pods": "120", "queues": "119"}
    # The objects after the header are not read: a file cut short after it still names them.
    whole = mirror.path.read_bytes()
    (length,) = struct.unpack_from("<Q", whole)
    mirror.path.write_bytes(whole[: 8 + length + 3])
    assert mirror.header("uid-a") == header
    assert mirror.read("uid-a") is None
    mirror.path.write_bytes(b"\x07")
    assert mirror.header("uid-a") is None


def test_a_cut_short_or_garbled_file_is_not_half_read(tmp_path: Path) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    mirror.write("uid-a", _kinds(pods=CHUNK + 1))
    whole = mirror.path.read_bytes()
    mirror.path.write_bytes(whole[: len(whole) - 40])
    assert mirror.read("uid-a") is None
    mirror.path.write_bytes(b"not a mirror")
    assert mirror.read("uid-a") is None
    assert MirrorFile(tmp_path / "never-written.mirror").read("uid-a") is None


def test_a_failed_write_leaves_the_last_file_and_no_temporary(tmp_path: Path) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    mirror.write("uid-a", _kinds())
    unwritable = {"pods": SavedKind(("/api/v1/pods", "", ""), "121", [{"metadata": {"bad": object()}}])}
    with pytest.raises(TypeError):  # orjson's JSONEncodeError
        mirror.write("uid-a", unwritable)
    saved = mirror.read("uid-a")
    assert saved is not None and saved["pods"].resource_version == "120"
    assert os.listdir(tmp_path) == ["scheduler.mirror"]


def test_processes_for_other_servers_or_names_get_other_files(tmp_path: Path) -> None:
    one = MirrorFile.for_process(tmp_path, "scheduler", "https://127.0.0.1:6443", "volcano")
    assert one == MirrorFile.for_process(tmp_path, "scheduler", "https://127.0.0.1:6443", "volcano")
    assert one.path.name.startswith("scheduler-") and one.path.parent == tmp_path
    assert one != MirrorFile.for_process(tmp_path, "scheduler", "https://127.0.0.1:7443", "volcano")
    assert one != MirrorFile.for_process(tmp_path, "scheduler", "https://127.0.0.1:6443", "other")


def test_a_temporary_left_by_a_killed_writer_is_removed_once_abandoned(tmp_path: Path) -> None:
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    abandoned = tmp_path / ".scheduler.mirror.4242.tmp"
    recent = tmp_path / ".scheduler.mirror.4343.tmp"
    for leftover in (abandoned, recent):
        leftover.write_bytes(b"half a mirror")
    old = time.time() - mirror_file.ABANDONED_SECONDS - 60
    os.utime(abandoned, (old, old))
    mirror.write("uid-a", _kinds())
    assert sorted(os.listdir(tmp_path)) == [recent.name, "scheduler.mirror"]


def test_two_writes_at_once_each_leave_a_whole_file(tmp_path: Path) -> None:
    # The save on stop can start while the periodic one is still writing in its thread: sharing one
    # temporary, one truncated the other's file and the second rename found nothing to move.
    mirror = MirrorFile(tmp_path / "scheduler.mirror")
    start = threading.Barrier(2)
    sizes: list[int] = []

    def write(count: int) -> None:
        start.wait()
        sizes.append(mirror.write("uid-a", _kinds(pods=count)))

    writers = [threading.Thread(target=write, args=(count,)) for count in (100 * CHUNK, 100 * CHUNK + 1)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    assert len(sizes) == 2, "a write failed"
    read = mirror.read("uid-a")
    assert read is not None and len(read["pods"].items) in (100 * CHUNK, 100 * CHUNK + 1)
    assert [p.name for p in tmp_path.iterdir()] == ["scheduler.mirror"]
