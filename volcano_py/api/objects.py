"""Typed reads of any Kubernetes object's metadata: the one place outside ``kube/`` that knows its wire shape.

Objects arrive as the JSON the API server sends (informer stores, Kopf bodies, admission reviews). Every kind
shares ``metadata``; the reads of a kind's ``spec`` and ``status`` live beside that kind's model in ``api/``.
A missing or null field reads as the type's zero value, as Go's client does, so callers never guard for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

Obj = Mapping[str, Any]

# Read for a missing or null part: one shared empty mapping, never written (api/bodies reads through it too).
EMPTY: Final[Mapping[str, Any]] = {}


def metadata_of(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or EMPTY


def name_of(obj: Obj) -> str:
    return str(metadata_of(obj).get("name") or "")


def namespace_of(obj: Obj) -> str:
    return str(metadata_of(obj).get("namespace") or "")


def uid_of(obj: Obj) -> str:
    return str(metadata_of(obj).get("uid") or "")


def labels_of(obj: Obj) -> Mapping[str, str]:
    return metadata_of(obj).get("labels") or EMPTY


def annotations_of(obj: Obj) -> Mapping[str, str]:
    return metadata_of(obj).get("annotations") or EMPTY


def label_of(obj: Obj, key: str, default: str = "") -> str:
    return str(labels_of(obj).get(key, default))


def annotation_of(obj: Obj, key: str, default: str = "") -> str:
    return str(annotations_of(obj).get(key, default))


def owner_references_of(obj: Obj) -> Sequence[Mapping[str, Any]]:
    return metadata_of(obj).get("ownerReferences") or ()


def controller_of(obj: Obj) -> Mapping[str, Any] | None:
    """The owner reference marked ``controller: true``, if any."""
    for ref in owner_references_of(obj):
        if ref.get("controller"):
            return ref
    return None


def owner_named(obj: Obj, kind: str) -> str:
    """The name of the first owner of ``kind``, or ``""``."""
    for ref in owner_references_of(obj):
        if ref.get("kind") == kind and ref.get("name"):
            return str(ref["name"])
    return ""


def resource_version_of(obj: Obj) -> str:
    return str(metadata_of(obj).get("resourceVersion") or "")


def generation_of(obj: Obj) -> int:
    return int(metadata_of(obj).get("generation") or 0)


def creation_timestamp_of(obj: Obj) -> str:
    return str(metadata_of(obj).get("creationTimestamp") or "")


def is_deleting(obj: Obj) -> bool:
    return bool(metadata_of(obj).get("deletionTimestamp"))


def spec_of(obj: Obj) -> Mapping[str, Any]:
    """A core object's ``spec`` (for our kinds, read through the kind's own accessors in ``api/``)."""
    return obj.get("spec") or EMPTY


def status_of(obj: Obj) -> Mapping[str, Any]:
    """A core object's ``status`` (for our kinds, read through the kind's own accessors in ``api/``)."""
    return obj.get("status") or EMPTY


def with_resource_version(obj: Obj, resource_version: str) -> dict[str, Any]:
    """A copy of ``obj`` whose metadata carries ``resource_version``: the body of a replace (PUT) of the
    object read at that version."""
    return {**obj, "metadata": {**metadata_of(obj), "resourceVersion": resource_version}}


def is_named_object(obj: object) -> bool:
    """Whether ``obj`` has the shape of a named Kubernetes object (a mapping whose ``metadata`` is a mapping
    with a ``name``): what a file's document must be before anything reads it as one."""
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return isinstance(meta, Mapping) and bool(meta.get("name"))


def without_managed_fields(obj: Obj) -> dict[str, Any]:
    """A copy of ``obj`` without ``metadata.managedFields`` (the server-side apply ledger, often the largest
    part of an object): what a mirror keeps and what a person is shown."""
    return {**obj, "metadata": {k: v for k, v in metadata_of(obj).items() if k != "managedFields"}}
