from typing import Any

import pytest

from volcano_py.kube.kinds import NODES, PODGROUPS, PODS, object_key
from volcano_py.kube.store import EventType, Store


def pod(name: str, rv: str, ns: str = "ns1", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv}, "spec": dict(spec)}


def test_watch_events_add_update_delete() -> None:
    store = Store()
    added = store.apply(EventType.ADDED, pod("a", "1"))
    assert added is not None and added.type is EventType.ADDED and added.key == "ns1/a"
    modified = store.apply(EventType.MODIFIED, pod("a", "2", nodeName="n1"))
    assert modified is not None and modified.type is EventType.MODIFIED
    assert modified.old is not None and modified.old["metadata"]["resourceVersion"] == "1"
    assert store.get("ns1/a") == pod("a", "2", nodeName="n1")
    deleted = store.apply(EventType.DELETED, pod("a", "3"))
    assert deleted is not None and deleted.type is EventType.DELETED
    assert "ns1/a" not in store and len(store) == 0


def test_replayed_event_and_unknown_delete_are_not_changes() -> None:
    store = Store()
    store.apply(EventType.ADDED, pod("a", "5"))
    assert store.apply(EventType.MODIFIED, pod("a", "5")) is None
    assert store.apply(EventType.DELETED, pod("ghost", "9")) is None


def test_relist_reports_what_a_lost_watch_missed() -> None:
    store = Store()
    for name, rv in (("kept", "1"), ("changed", "1"), ("gone", "1")):
        store.apply(EventType.ADDED, pod(name, rv))
    deltas = store.replace([pod("kept", "1"), pod("changed", "7"), pod("new", "8")])
    seen = {(d.type, d.key) for d in deltas}
    assert seen == {
        (EventType.MODIFIED, "ns1/changed"),
        (EventType.ADDED, "ns1/new"),
        (EventType.DELETED, "ns1/gone"),
    }
    assert sorted(store.keys()) == ["ns1/changed", "ns1/kept", "ns1/new"]


def test_keys_and_paths() -> None:
    assert object_key({"metadata": {"name": "n1"}}) == "n1"
    assert object_key(pod("p", "1")) == "ns1/p"
    with pytest.raises(ValueError, match=r"metadata\.name"):
        object_key({"metadata": {}})
    assert PODS.collection_path() == "/api/v1/pods"
    assert PODS.object_path("p", "ns1", "binding") == "/api/v1/namespaces/ns1/pods/p/binding"
    assert NODES.object_path("n1") == "/api/v1/nodes/n1"
    assert PODGROUPS.object_path("pg", "ns", "status") == (
        "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/pg/status"
    )
    with pytest.raises(ValueError, match="namespace"):
        PODS.object_path("p")


def test_a_listing_says_which_objects_changed_since_the_one_before() -> None:
    store = Store()
    a1, b1 = pod("a", "1"), pod("b", "1")
    store.apply(EventType.ADDED, a1)
    store.apply(EventType.ADDED, b1)
    first = store.shared_values()
    assert first == [a1, b1] and first.base is None  # objects came: no journal to trust
    assert store.shared_values() is first  # nothing changed: the very same list
    a2, a3 = pod("a", "2"), pod("a", "3")
    store.apply(EventType.MODIFIED, a2)
    store.apply(EventType.MODIFIED, a3)
    second = store.shared_values()
    # Two changes of one object read as one: from what the first listing held to what is there now.
    assert second == [a3, b1] and second.base is first and second.replaced == {"ns1/a": (a1, a3)}
    b2 = pod("b", "2")
    store.apply(EventType.MODIFIED, b2)
    third = store.shared_values()
    assert third.base is second and third.replaced == {"ns1/b": (b1, b2)}
    assert second.base is None  # the listings never chain: each lets go of the one before
    store.apply(EventType.DELETED, b2)
    assert store.shared_values().base is None  # an object went: readers walk the listing
    store.apply(EventType.MODIFIED, pod("a", "4"))
    assert store.shared_values().replaced == {"ns1/a": (a3, pod("a", "4"))}
    store.replace([pod("a", "5")])
    assert store.shared_values().base is None  # a relist: readers walk the listing
