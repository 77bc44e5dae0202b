import pytest

from volcano_py.kube.client import ApiError
from volcano_py.kube.informer import ResourceExpired, interpret
from volcano_py.kube.store import EventType


def test_object_events_carry_their_resource_version() -> None:
    step = interpret({"type": "MODIFIED", "object": {"metadata": {"name": "a", "resourceVersion": "42"}}})
    assert step.event_type is EventType.MODIFIED
    assert step.resource_version == "42"


def test_bookmark_only_advances_the_version() -> None:
    step = interpret({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": {"resourceVersion": "99"}}})
    assert step.event_type is None and step.obj is None and step.resource_version == "99"


def test_gone_error_event_asks_for_a_relist() -> None:
    event = {
        "type": "ERROR",
        "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"},
    }
    with pytest.raises(ResourceExpired, match="too old"):
        interpret(event)


def test_other_error_events_surface_as_api_errors() -> None:
    with pytest.raises(ApiError) as info:
        interpret({"type": "ERROR", "object": {"code": 500, "reason": "InternalError", "message": "boom"}})
    assert info.value.status == 500 and "boom" in str(info.value)


def test_unknown_event_type_is_rejected_clearly() -> None:
    with pytest.raises(ApiError, match="unknown watch event type 'WEIRD'"):
        interpret({"type": "WEIRD", "object": {"metadata": {}}})
