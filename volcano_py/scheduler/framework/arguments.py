"""Typed access to a plugin's or action's ``arguments`` from the conf, failing with the entry named."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from volcano_py.api.common import parse_duration

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class ConfError(ValueError):
    """A scheduler conf that cannot be used; the message names the entry and how to fix it."""


class Arguments:
    """A plugin's ``arguments`` map. Volcano writes values as strings or YAML scalars; both are accepted."""

    def __init__(self, owner: str, values: Mapping[str, Any]) -> None:
        self.owner = owner
        self.values = dict(values)

    def _fail(self, key: str, want: str) -> ConfError:
        return ConfError(f"{self.owner}: argument {key!r} must be {want}, got {self.values[key]!r}")

    def check_known(self, keys: Iterable[str] = (), prefixes: Iterable[str] = ()) -> None:
        """Reject argument names the owner does not read, so a typo is not silently ignored."""
        known = set(keys)
        starts = tuple(prefixes)
        unknown = sorted(k for k in self.values if k not in known and not (starts and k.startswith(starts)))
        if unknown:
            accepted = ", ".join(sorted(known) + [p + "*" for p in starts]) or "none"
            raise ConfError(f"{self.owner}: unknown argument(s) {', '.join(unknown)}; accepted: {accepted}")

    def get_int(self, key: str, default: int, *, minimum: int | None = None) -> int:
        if key not in self.values:
            return default
        raw = self.values[key]
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = int(str(raw).strip())
        except ValueError:
            raise self._fail(key, "an integer") from None
        if minimum is not None and value < minimum:
            raise self._fail(key, f"an integer >= {minimum}")
        return value

    def get_float(self, key: str, default: float, *, minimum: float | None = None) -> float:
        if key not in self.values:
            return default
        raw = self.values[key]
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = float(str(raw).strip())
        except ValueError:
            raise self._fail(key, "a number") from None
        if minimum is not None and value < minimum:
            raise self._fail(key, f"a number >= {minimum}")
        return value

    def get_bool(self, key: str, default: bool) -> bool:
        if key not in self.values:
            return default
        raw = self.values[key]
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise self._fail(key, "true or false")

    def get_str(self, key: str, default: str) -> str:
        if key not in self.values:
            return default
        raw = self.values[key]
        if not isinstance(raw, str | int | float) or isinstance(raw, bool):
            raise self._fail(key, "a string")
        return str(raw)

    def get_duration(self, key: str, default: timedelta | None) -> timedelta | None:
        """A Go duration string (``"1h2m3s"``, ``"90s"``); must be positive."""
        if key not in self.values:
            return default
        try:
            value = parse_duration(self.get_str(key, ""))
        except ValueError:
            raise self._fail(key, "a positive duration such as '30s', '10m' or '1h30m'") from None
        if value <= timedelta(0):
            raise self._fail(key, "a positive duration such as '30s', '10m' or '1h30m'")
        return value

    def get_list(self, key: str, default: Iterable[str] = ()) -> list[str]:
        """A comma-separated list, as in ``binpack.resources: nvidia.com/gpu, example.com/foo``."""
        if key not in self.values:
            return list(default)
        raw = self.values[key]
        if isinstance(raw, list):
            return [str(item).strip() for item in raw if str(item).strip()]
        return [item.strip() for item in self.get_str(key, "").split(",") if item.strip()]
