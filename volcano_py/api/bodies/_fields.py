"""How every accessor of ``api.bodies`` reads one field of a raw body: a missing, null or wrongly shaped value
reads as the zero value of the type asked for (admission leaves naming a bad shape to validation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.objects import EMPTY

__all__ = ["EMPTY", "int_at", "list_at", "mapping_at", "str_at", "written_mapping"]


def mapping_at(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, Mapping) else EMPTY


def list_at(obj: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else ()


def int_at(obj: Mapping[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def str_at(obj: Mapping[str, Any], key: str) -> str:
    return str(obj.get(key) or "")


def written_mapping(obj: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """``obj[key]`` as written: None when absent or null, ``ValueError`` when it is no mapping (what admission
    must tell apart before the schema has been checked)."""
    value = obj.get(key)
    if value is None or isinstance(value, Mapping):
        return value
    raise ValueError(f"{key} must be an object, got {type(value).__name__}")
