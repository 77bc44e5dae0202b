"""The gate removal the scheduler sends: a strategic merge patch deleting only Volcano's gate."""

from __future__ import annotations

from typing import Any

from volcano_py.api import constants as k
from volcano_py.kube import patch
from volcano_py.kube.client import STRATEGIC_MERGE_PATCH


class RecordingClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, str]] = []

    async def patch(self, path: str, body: Any, content_type: str) -> dict[str, Any]:
        self.calls.append((path, body, content_type))
        return {}


async def test_only_the_queue_allocation_gate_is_deleted() -> None:
    client = RecordingClient()
    await patch.remove_scheduling_gate(client, "ns", "pod-1", k.QUEUE_ALLOCATION_GATE_KEY)  # type: ignore[arg-type]
    assert client.calls == [
        (
            "/api/v1/namespaces/ns/pods/pod-1",
            {"spec": {"schedulingGates": [{"name": k.QUEUE_ALLOCATION_GATE_KEY, "$patch": "delete"}]}},
            STRATEGIC_MERGE_PATCH,
        )
    ]
