from datetime import UTC, datetime

from volcano_py.kube.events import Aggregator, ObjectRef, PendingEvent

POD = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns", "uid": "u1"}}


def event(message: str = "0/8 nodes are available") -> PendingEvent:
    return PendingEvent(ObjectRef.of(POD), "Warning", "FailedScheduling", message, datetime.now(UTC))


def test_repeat_within_window_bumps_the_same_event() -> None:
    agg = Aggregator(window_seconds=600)
    assert agg.lookup(event(), now=0) is None
    agg.remember(event(), "p.1", 1, now=0)
    seen = agg.lookup(event(), now=30)
    assert seen is not None and seen.name == "p.1" and seen.count == 1


def test_different_message_or_expired_window_makes_a_new_event() -> None:
    agg = Aggregator(window_seconds=600)
    agg.remember(event(), "p.1", 4, now=0)
    assert agg.lookup(event("other reason"), now=1) is None
    assert agg.lookup(event(), now=601) is None


def test_memory_is_bounded() -> None:
    agg = Aggregator(capacity=2)
    for i in range(3):
        agg.remember(event(str(i)), f"p.{i}", 1, now=i)
    assert agg.lookup(event("0"), now=3) is None
    assert agg.lookup(event("2"), now=3) is not None


def test_object_ref_defaults_cluster_scoped_objects_to_default_namespace() -> None:
    ref = ObjectRef.of(
        {"kind": "Queue", "apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": {"name": "q"}}
    )
    assert ref.namespace == "default"
    assert ref.to_json()["kind"] == "Queue"
