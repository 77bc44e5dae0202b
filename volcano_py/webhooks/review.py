"""An AdmissionReview as the API server sends it, checked before any handler sees it.

The webhook server hands the review to Kopf's admission engine, which indexes ``request.resource``,
``request.userInfo`` and the objects without checking them: a body of the wrong shape would surface as a
KeyError and a 500 with a traceback. ``decode_review`` takes any bytes and either returns the review, with
every field Kopf and our handlers read present and of its type, or raises ``ReviewError`` naming the field
and what it should be; never anything else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

# What our webhook configurations declare (``admissionReviewVersions: ["v1"]``), so what the API server sends.
API_VERSION: Final = "admission.k8s.io/v1"
KIND: Final = "AdmissionReview"
OPERATIONS: Final = ("CREATE", "UPDATE", "DELETE", "CONNECT")
# Deeper than any Kubernetes object we admit (a Job's pod affinity is some 20 levels down): a deeper body is
# refused before a handler recurses into it.
MAX_DEPTH: Final = 100


class ReviewError(ValueError):
    """The body is not an AdmissionReview we can decide; the message names the field and the fix."""


@dataclass(frozen=True, slots=True)
class GroupVersionResource:
    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        return "/".join(part for part in (self.group, self.version, self.resource) if part)


@dataclass(frozen=True, slots=True)
class AdmissionReview:
    uid: str
    operation: str
    resource: GroupVersionResource
    name: str
    namespace: str
    # The decoded body as it came, for Kopf's admission engine.
    raw: Mapping[str, Any]


def decode_review(body: bytes) -> AdmissionReview:
    """The AdmissionReview in ``body`` (JSON), or a ``ReviewError`` saying what is wrong with it."""
    try:
        document = json.loads(body)
    except RecursionError:
        raise ReviewError(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except ValueError as err:  # not JSON, not UTF-8, or a number past Python's digit limit
        raise ReviewError(f"the body is not JSON ({_short(err)}): send an {KIND} as JSON") from None
    _check_depth(document)
    review = _mapping(document, "the body")
    _expect(review, "apiVersion", API_VERSION)
    _expect(review, "kind", KIND)
    request = _mapping(review.get("request"), "request")
    uid = _string(request, "uid")
    if not uid:
        raise ReviewError("request.uid is empty: the answer must carry the request's uid")
    operation = _string(request, "operation")
    if operation not in OPERATIONS:
        raise ReviewError(f"request.operation {operation!r}: must be one of {', '.join(OPERATIONS)}")
    resource = _object(request, "resource")
    gvr = GroupVersionResource(
        group=_string(resource, "group", "request.resource"),
        version=_string(resource, "version", "request.resource"),
        resource=_string(resource, "resource", "request.resource"),
    )
    _object(request, "userInfo")
    objects = [key for key in ("object", "oldObject") if request.get(key) is not None]
    if not objects:
        raise ReviewError("request.object and request.oldObject are both missing: send the object admitted")
    for key in objects:
        _object(_object(request, key), "metadata", f"request.{key}")
    for key in ("name", "namespace", "subResource"):
        if request.get(key) is not None:
            _string(request, key)
    if request.get("dryRun") is not None and not isinstance(request["dryRun"], bool):
        raise ReviewError("request.dryRun: must be true or false")
    return AdmissionReview(
        uid=uid,
        operation=operation,
        resource=gvr,
        name=str(request.get("name") or ""),
        namespace=str(request.get("namespace") or ""),
        raw=review,
    )


def _check_depth(document: Any) -> None:
    # Iterative: a recursive walk is what the limit protects against.
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ReviewError(f"the body nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((child, depth + 1) for child in value.values())
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        found = "missing" if value is None else f"a JSON {_json_type(value)}"
        raise ReviewError(f"{where}: must be a JSON object, found {found}")
    return value


def _object(container: Mapping[str, Any], key: str, where: str = "request") -> dict[str, Any]:
    return _mapping(container.get(key), f"{where}.{key}")


def _string(container: Mapping[str, Any], key: str, where: str = "request") -> str:
    value = container.get(key)
    if not isinstance(value, str):
        found = "missing" if value is None else f"a JSON {_json_type(value)}"
        raise ReviewError(f"{where}.{key}: must be a string, found {found}")
    return value


def _expect(review: Mapping[str, Any], key: str, wanted: str) -> None:
    value = review.get(key)
    if value != wanted:
        found = "missing" if value is None else _short(value)
        raise ReviewError(f"{key}: must be {wanted!r}, found {found}")


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def _short(value: object, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, BaseException) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
