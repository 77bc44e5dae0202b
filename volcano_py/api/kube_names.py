"""Kubernetes' syntax for the names a batch user writes besides object names: label and annotation keys and
values, and port names -- the rules of apimachinery's ``IsQualifiedName``, ``IsValidLabelValue`` and
``IsValidPortName``, with messages that show a valid example.

The API server applies them to every object's metadata, and (through Volcano's webhook, which runs Kubernetes'
pod-template validation) to the pod template of each task, which our CRD keeps as a free-form object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.common import dns1123_subdomain_problem
from volcano_py.api.problems import Problem

_NAME_RE: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_PORT_NAME_RE: Final = re.compile(r"^[-a-z0-9]+$")
# The API server's cap on all annotations of one object together (keys plus values, in bytes).
ANNOTATIONS_SIZE_LIMIT: Final = 256 * 1024
_NAME_RULE: Final = (
    "letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most 63 characters"
)


def qualified_name_problem(value: str) -> str | None:
    """Why ``value`` is not a qualified name (``[prefix/]name``: a label or annotation key), or None."""
    parts = value.split("/")
    if len(parts) > 2:
        return f"{value!r} has more than one '/' (use an optional DNS-subdomain prefix, one '/', then a name)"
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            return (
                f"{value!r} has an empty prefix before '/' (write e.g. 'example.com/{name}' or drop the '/')"
            )
        if msg := dns1123_subdomain_problem(prefix):
            return f"the prefix of {value!r}: {msg}"
    if not name:
        return f"{value!r} has an empty name (write e.g. 'app' or 'example.com/app')"
    if len(name) > 63:
        return f"the name part of {value!r} is longer than 63 characters (shorten it)"
    if not _NAME_RE.match(name):
        return (
            f"{value!r} is not a valid key (the name part takes {_NAME_RULE}, "
            "e.g. 'team' or 'example.com/team')"
        )
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63:
        return f"{value!r} is longer than 63 characters (shorten it)"
    if value and not _NAME_RE.match(value):
        return f"{value!r} is not a valid label value (use {_NAME_RULE}, or leave it empty)"
    return None


def port_name_problem(value: str) -> str | None:
    """Why ``value`` is not an IANA service name (what a port may be named), or None."""
    rule = "at most 15 lower-case letters, digits and '-', with at least one letter, e.g. 'http' or 'grpc-1'"
    if (
        len(value) > 15
        or not _PORT_NAME_RE.match(value)
        or not re.search(r"[a-z]", value)
        or "--" in value
        or value.startswith("-")
        or value.endswith("-")
    ):
        return f"{value!r} is not a valid port name ({rule}; no '--', no '-' at either end)"
    return None


def name_problems(
    name: Any, generate_name: Any = None, path: str = "metadata.name", *, max_length: int = 253
) -> list[Problem]:
    """The API server's rule for an object's name: required unless ``generateName`` is given, and a DNS-1123
    subdomain (``max_length``: a kind's tighter limit, if any)."""
    if not name:
        return [] if generate_name else [Problem(path, "is required (name the object)")]
    if not isinstance(name, str):
        return [Problem(path, f"{name!r} is not a string (quote it)")]
    if len(name) > max_length:
        return [Problem(path, f"{name!r} is longer than {max_length} characters (shorten it)")]
    msg = dns1123_subdomain_problem(name)
    return [Problem(path, msg)] if msg else []


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def label_problems(labels: Any, path: str) -> list[Problem]:
    """Labels as the API server checks them: a mapping of qualified-name keys to short string values."""
    if labels is None:
        return []
    if not isinstance(labels, Mapping):
        return [Problem(path, f"expected a mapping of label: value, got {_kind(labels)}")]
    problems: list[Problem] = []
    for key, value in labels.items():
        here = f"{path}[{key}]"
        if not isinstance(key, str):
            problems.append(Problem(here, f"the key {key!r} is not a string (quote it)"))
            continue
        if msg := qualified_name_problem(key):
            problems.append(Problem(here, msg))
        if not isinstance(value, str):
            problems.append(Problem(here, f"{value!r} is not a string (quote it: '{value}')"))
        elif msg := label_value_problem(value):
            problems.append(Problem(here, msg))
    return problems


def annotation_problems(annotations: Any, path: str) -> list[Problem]:
    """Annotations: qualified-name keys (compared in lower case, as the API server does), string values, and
    at most 256 KiB together."""
    if annotations is None:
        return []
    if not isinstance(annotations, Mapping):
        return [Problem(path, f"expected a mapping of annotation: value, got {_kind(annotations)}")]
    problems: list[Problem] = []
    size = 0
    for key, value in annotations.items():
        here = f"{path}[{key}]"
        if not isinstance(key, str):
            problems.append(Problem(here, f"the key {key!r} is not a string (quote it)"))
            continue
        if msg := qualified_name_problem(key.lower()):
            problems.append(Problem(here, msg))
        if not isinstance(value, str):
            problems.append(Problem(here, f"{value!r} is not a string (quote it: '{value}')"))
            continue
        size += len(key.encode()) + len(value.encode())
    if size > ANNOTATIONS_SIZE_LIMIT:
        problems.append(
            Problem(
                path, f"{size} bytes in all, more than the {ANNOTATIONS_SIZE_LIMIT} allowed (shorten them)"
            )
        )
    return problems


def metadata_problems(metadata: Any, path: str) -> list[Problem]:
    """The labels and annotations of one object's (or pod template's) metadata."""
    if metadata is None:
        return []
    if not isinstance(metadata, Mapping):
        return [Problem(path, f"expected a mapping, got {_kind(metadata)} (write 'labels: ...')")]
    return label_problems(metadata.get("labels"), f"{path}.labels") + annotation_problems(
        metadata.get("annotations"), f"{path}.annotations"
    )
