"""The ResourceClaim writes around a bind: allocate and reserve before it, take back after a failed one.

A fake API keeps one claim and answers reads and status updates with resourceVersion checks, as the API
server does, so conflicts and races between pods of one shared claim can be played out."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from volcano_py.kube.claims import ClaimError, reserve_claim, unreserve_claim
from volcano_py.kube.client import ApiError

ALLOCATION = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "n1", "device": "g0"}]}}
OTHER = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "n2", "device": "g0"}]}}


class FakeApi:
    def __init__(self, status: dict[str, Any] | None = None, *, conflicts: int = 0) -> None:
        self.claim = {
            "metadata": {"name": "c", "namespace": "ns", "uid": "cu", "resourceVersion": "1"},
            "spec": {},
            "status": status or {},
        }
        self.conflicts = conflicts
        self.writes = 0

    async def get(self, path: str) -> dict[str, Any]:
        assert path == "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c"
        return copy.deepcopy(self.claim)

    async def replace(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        assert path.endswith("/resourceclaims/c/status")
        if self.conflicts:
            self.conflicts -= 1
            self.claim["metadata"]["resourceVersion"] = str(
                int(self.claim["metadata"]["resourceVersion"]) + 1
            )
        if body["metadata"]["resourceVersion"] != self.claim["metadata"]["resourceVersion"]:
            raise ApiError(409, "Conflict", "the object has been modified")
        self.writes += 1
        self.claim = copy.deepcopy(body)
        self.claim["metadata"]["resourceVersion"] = str(int(body["metadata"]["resourceVersion"]) + 1)
        return self.claim


def _reserved(api: FakeApi) -> list[str]:
    return [r["uid"] for r in api.claim["status"].get("reservedFor", [])]


async def test_an_unallocated_claim_is_allocated_and_reserved_in_one_write_after_a_conflict() -> None:
    api = FakeApi(conflicts=1)
    wrote = await reserve_claim(api, "ns", "c", "cu", ALLOCATION, "p", "pu")  # type: ignore[arg-type]
    assert wrote is True and api.writes == 1
    assert api.claim["status"]["allocation"] == ALLOCATION
    assert api.claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "pu"}]


async def test_a_claim_a_gang_mate_allocated_the_same_way_is_only_reserved() -> None:
    api = FakeApi({"allocation": ALLOCATION, "reservedFor": [{"resource": "pods", "name": "a", "uid": "au"}]})
    assert await reserve_claim(api, "ns", "c", "cu", ALLOCATION, "p", "pu") is False  # type: ignore[arg-type]
    assert _reserved(api) == ["au", "pu"]


@pytest.mark.parametrize(
    ("status", "uid", "allocation", "error"),
    [
        pytest.param(
            {"allocation": OTHER}, "cu", ALLOCATION, "allocated other devices meanwhile", id="moved"
        ),
        pytest.param({}, "cu", None, "is no longer allocated", id="deallocated"),
        pytest.param({}, "new-uid", ALLOCATION, "deleted and made again", id="replaced"),
    ],
)
async def test_a_claim_that_changed_since_the_session_is_not_written(
    status: dict[str, Any], uid: str, allocation: dict[str, Any] | None, error: str
) -> None:
    api = FakeApi(status)
    with pytest.raises(ClaimError, match=error):
        await reserve_claim(api, "ns", "c", uid, allocation, "p", "pu")  # type: ignore[arg-type]
    assert api.writes == 0


@pytest.mark.parametrize(
    ("others", "deallocate", "allocated_after"),
    [
        pytest.param([], True, False, id="last-pod-and-we-allocated-it"),
        pytest.param(["a"], True, True, id="a-gang-mate-still-holds-it"),
        pytest.param([], False, True, id="allocated-before-this-bind"),
    ],
)
async def test_taking_back_a_reservation(others: list[str], deallocate: bool, allocated_after: bool) -> None:
    reserved = [{"resource": "pods", "name": n, "uid": f"{n}u"} for n in [*others, "p"]]
    api = FakeApi({"allocation": ALLOCATION, "reservedFor": reserved})
    await unreserve_claim(api, "ns", "c", "cu", "pu", deallocate=deallocate)  # type: ignore[arg-type]
    assert _reserved(api) == [f"{n}u" for n in others]
    assert ("allocation" in api.claim["status"]) is allocated_after
