"""How every accessor of ``api.bodies`` reads one field of a raw body: a missing, null or wrongly shaped value
reads as the zero value of the type asked for (admission leaves naming a bad shape to validation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

EMPTY: Final[Mapping[str, Any]] = {}


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
