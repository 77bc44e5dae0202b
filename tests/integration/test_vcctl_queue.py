"""``vcctl queue create/get/list/operate/delete`` on the real control plane: what it prints, what it wrote.

``operate open/close`` only creates a Command; a controller watching the ``default`` namespace (where
Volcano's vcctl puts queue Commands) turns it into the queue's state, so that test runs one in-process.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ctl_harness import Operator, wait_for

from volcano_py.cli.vcctl import main as vcctl

pytestmark = pytest.mark.integration


def _queue(cluster: Any, name: str) -> dict[str, Any] | None:
    done = cluster.kubectl("get", "queue.scheduling.volcano.sh", name, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _row(out: str, name: str) -> list[str]:
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0] == name]
    assert len(rows) == 1, f"expected one row for {name} in:\n{out}"
    return rows[0]


@pytest.fixture
def queue_name(cluster: Any) -> Iterator[str]:
    name = f"q-{uuid.uuid4().hex[:8]}"
    yield name
    for command in _commands_for(cluster, name):  # left unconsumed when no controller watched them
        cluster.kubectl("delete", "commands.bus.volcano.sh", "-n", "default", command["metadata"]["name"],
                        "--ignore-not-found")  # fmt: skip
    cluster.kubectl("delete", "queue.scheduling.volcano.sh", name, "--ignore-not-found", "--wait=false")


def test_create_get_list_update_delete(
    cluster: Any, queue_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    assert vcctl(["queue", "create", "-n", queue_name, "-w", "3", *kc]) == 0
    assert capsys.readouterr().out == f"create queue {queue_name} successfully\n"
    created = _queue(cluster, queue_name)
    assert created is not None and created["spec"]["weight"] == 3

    assert vcctl(["queue", "get", "-n", queue_name, *kc]) == 0
    out = capsys.readouterr().out
    header = ["Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed"]
    assert out.splitlines()[0].split() == header
    assert _row(out, queue_name)[:2] == [queue_name, "3"]

    assert vcctl(["queue", "list", *kc]) == 0
    out = capsys.readouterr().out
    assert _row(out, queue_name)[:2] == [queue_name, "3"]
    assert _row(out, "default")[0] == "default"

    assert vcctl(["queue", "operate", "-n", queue_name, "-a", "update", "-w", "5", *kc]) == 0
    assert capsys.readouterr().out == f"update queue {queue_name} successfully\n"
    updated = _queue(cluster, queue_name)
    assert updated is not None and updated["spec"]["weight"] == 5

    assert vcctl(["queue", "delete", "-n", queue_name, *kc]) == 0
    assert capsys.readouterr().out == f"delete queue {queue_name} successfully\n"
    cluster.wait_for(f"queue {queue_name} to be gone", lambda: _queue(cluster, queue_name) is None, 30)

    assert vcctl(["queue", "get", "-n", queue_name, *kc]) == 1
    assert capsys.readouterr().err == f"Error: queue {queue_name} not found\n"


def test_create_a_child_queue(cluster: Any, queue_name: str, capsys: pytest.CaptureFixture[str]) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    child = f"{queue_name}-child"
    try:
        assert vcctl(["queue", "create", "-n", queue_name, *kc]) == 0
        assert vcctl(["queue", "create", "-n", child, "-p", queue_name, "-w", "2", *kc]) == 0
        created = _queue(cluster, child)
        assert created is not None and created["spec"]["parent"] == queue_name
        capsys.readouterr()
        assert vcctl(["queue", "get", "-n", child, *kc]) == 0
        assert _row(capsys.readouterr().out, child)[:4] == [child, "2", "Open", queue_name]
    finally:
        cluster.kubectl("delete", "queue.scheduling.volcano.sh", child, "--ignore-not-found", "--wait=false")


def test_operate_refuses_bad_input_before_writing(
    cluster: Any, queue_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    assert vcctl(["queue", "create", "-n", queue_name, *kc]) == 0
    capsys.readouterr()
    assert vcctl(["queue", "operate", "-n", queue_name, "-a", "pause", *kc]) == 1
    assert "valid actions are open, close and update" in capsys.readouterr().err
    assert vcctl(["queue", "operate", "-n", queue_name, "-a", "update", *kc]) == 1
    assert "--weight" in capsys.readouterr().err
    unchanged = _queue(cluster, queue_name)
    assert unchanged is not None and unchanged["spec"]["weight"] == 1
    assert vcctl(["queue", "create", "-n", queue_name, *kc]) == 1
    assert "already exists" in capsys.readouterr().err


def _commands_for(cluster: Any, queue: str) -> list[dict[str, Any]]:
    listed = json.loads(
        cluster.kubectl("get", "commands.bus.volcano.sh", "-n", "default", "-o", "json").stdout
    )
    return [c for c in listed["items"] if (c.get("target") or {}).get("name") == queue]


def test_close_and_open_write_commands_owned_by_the_queue(
    cluster: Any, queue_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    assert vcctl(["queue", "create", "-n", queue_name, *kc]) == 0
    queue = _queue(cluster, queue_name)
    assert queue is not None
    assert vcctl(["queue", "operate", "-n", queue_name, "-a", "close", *kc]) == 0
    assert vcctl(["queue", "operate", "-n", queue_name, "-a", "open", *kc]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [f"close queue {queue_name} successfully", f"open queue {queue_name} successfully"]
    commands = _commands_for(cluster, queue_name)
    assert sorted(c["action"] for c in commands) == ["CloseQueue", "OpenQueue"]
    for command in commands:
        owner = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": queue_name,
                 "uid": queue["metadata"]["uid"]}  # fmt: skip
        assert owner.items() <= command["target"].items()
        assert [owner.items() <= ref.items() for ref in command["metadata"]["ownerReferences"]] == [True]


async def test_close_then_open_changes_the_queue_state_through_the_controller(
    cluster: Any, queue_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kc = ["-k", str(cluster.kubeconfig)]
    operator = Operator(str(cluster.kubeconfig), "default")
    try:
        assert await asyncio.to_thread(vcctl, ["queue", "create", "-n", queue_name, *kc]) == 0

        async def state(wanted: str) -> bool:
            queue = await asyncio.to_thread(_queue, cluster, queue_name)
            return queue is not None and (queue.get("status") or {}).get("state") == wanted

        await wait_for(f"queue {queue_name} to be Open", lambda: state("Open"), 30)
        assert await asyncio.to_thread(vcctl, ["queue", "operate", "-n", queue_name, "-a", "close", *kc]) == 0
        await wait_for(f"queue {queue_name} to be Closed", lambda: state("Closed"), 30)
        assert await asyncio.to_thread(vcctl, ["queue", "get", "-n", queue_name, *kc]) == 0
        assert _row(capsys.readouterr().out, queue_name)[2] == "Closed"
        assert await asyncio.to_thread(vcctl, ["queue", "operate", "-n", queue_name, "-a", "open", *kc]) == 0
        await wait_for(f"queue {queue_name} to be Open again", lambda: state("Open"), 30)
        # The controller consumed both Commands: each runs once.
        assert await asyncio.to_thread(_commands_for, cluster, queue_name) == []
    finally:
        await operator.stop()
