"""Metadata reads as a Go client sees them: a missing or null field is the zero value, never an error."""

from volcano_py.api import objects as o

POD = {
    "metadata": {
        "name": "p",
        "namespace": "ns",
        "uid": "u1",
        "labels": {"a": "1"},
        "annotations": None,
        "ownerReferences": [{"kind": "Job", "name": "j", "controller": True}],
        "generation": 3,
        "deletionTimestamp": "2026-12-07T00:00:00Z",
    }
}


def test_reads_fields_that_are_there() -> None:
    assert (o.name_of(POD), o.namespace_of(POD), o.uid_of(POD)) == ("p", "ns", "u1")
    assert o.label_of(POD, "a") == "1"
    assert o.owner_named(POD, "Job") == "j"
    assert o.controller_of(POD) == {"kind": "Job", "name": "j", "controller": True}
    assert o.generation_of(POD) == 3
    assert o.is_deleting(POD)


def test_null_or_missing_fields_read_as_zero_values() -> None:
    bare: dict[str, object] = {"metadata": None}
    assert o.name_of(bare) == "" and o.labels_of(bare) == {}
    assert o.annotations_of(POD) == {} and o.annotation_of(POD, "x", "d") == "d"
    assert o.owner_named(bare, "Job") == "" and o.controller_of(bare) is None
    assert not o.is_deleting(bare)
    assert o.spec_of({}) == {} and o.status_of({"status": None}) == {}
