"""Building blocks shared by every Volcano kind: the base model, names, quantities, durations, times.

Wire compatibility drives the choices here. Objects keep the exact values the user wrote (a quantity stays
``"500m"``, a timeout stays ``"10m"``) so that ``Kind.model_validate(obj).to_dict() == obj``; fields we do not
model are kept, not dropped, so a newer Volcano field survives a read-modify-write by our controllers; and
only fields that were set or changed are written back, so the API server's own defaults stay in charge.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    Strict,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel

from volcano_py.resources import QuantityError, parse_quantity

# Keys in ``json_schema_extra`` read by the CRD generator (``volcano_py.api.crd``).
CRD_DEFAULT = "x-volcano-py-crd-default"

DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


class VolcanoModel(BaseModel):
    """Base of every API model: camelCase on the wire, snake_case in Python, unknown fields preserved."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        validate_assignment=False,
        use_enum_values=False,
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form: camelCase keys, never ``None``, and only fields that were set or changed.

        "Changed" matters: ``status.state.phase = ...`` on a default ``state`` does not mark ``state`` as set,
        yet must be written.
        """
        return self.model_dump(mode="json", by_alias=True, exclude=_untouched(self), exclude_none=True)

    @classmethod
    def from_dict(cls, obj: Any) -> Self:
        return cls.model_validate(obj)


# Per model class, each field's default value; built once, only ever compared against, never handed out.
_DEFAULTS: dict[type[BaseModel], dict[str, Any]] = {}


def _defaults(cls: type[BaseModel]) -> dict[str, Any]:
    cached = _DEFAULTS.get(cls)
    if cached is None:
        cached = {name: f.get_default(call_default_factory=True) for name, f in cls.model_fields.items()}
        _DEFAULTS[cls] = cached
    return cached


def _untouched(model: BaseModel) -> dict[Any, Any]:
    """pydantic ``exclude`` tree of fields that were never set and still hold their default."""
    out: dict[Any, Any] = {}
    fields_set = model.model_fields_set
    for name, default in _defaults(type(model)).items():
        value = getattr(model, name)
        if name not in fields_set and value == default:
            out[name] = True
        elif (nested := _untouched_in(value)) is not None:
            out[name] = nested
    return out


def _untouched_in(value: Any) -> dict[Any, Any] | None:
    if isinstance(value, BaseModel):
        return _untouched(value) or None
    items: list[tuple[Any, Any]] = []
    if isinstance(value, list):
        items = list(enumerate(value))
    elif isinstance(value, dict):
        items = list(value.items())
    nested = {key: sub for key, item in items if isinstance(item, BaseModel) and (sub := _untouched(item))}
    return nested or None


def crd_default(value: Any, **constraints: Any) -> Any:
    """A field default that the CRD also declares, so the API server fills it in as Volcano's does."""
    return Field(default=value, json_schema_extra={CRD_DEFAULT: True}, **constraints)


# --- names ----------------------------------------------------------------------------------------------


def dns1123_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label, or None when it is one."""
    if len(value) > 63:
        return f"{value!r} is longer than 63 characters (shorten it)"
    if not DNS1123_LABEL_RE.match(value):
        return (
            f"{value!r} is not a DNS-1123 label (use lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, e.g. 'worker-0')"
        )
    return None


def dns1123_subdomain_problem(value: str) -> str | None:
    if len(value) > 253:
        return f"{value!r} is longer than 253 characters (shorten it)"
    if not DNS1123_SUBDOMAIN_RE.match(value):
        return (
            f"{value!r} is not a DNS-1123 subdomain (use lower-case letters, digits, '-' and '.', "
            "starting and ending with a letter or digit)"
        )
    return None


def _check_subdomain(value: str) -> str:
    problem = dns1123_subdomain_problem(value)
    if problem and value:
        raise ValueError(problem)
    return value


# A queue or priority class reference: a DNS-1123 subdomain, or empty (meaning "use the default").
SubdomainName = Annotated[
    str,
    AfterValidator(_check_subdomain),
    WithJsonSchema({"type": "string", "maxLength": 253, "pattern": DNS1123_SUBDOMAIN_RE.pattern}),
]


# --- quantities -----------------------------------------------------------------------------------------


def _check_quantity(value: Any) -> Any:
    # bool is an int in Python but never a quantity; a float would be rejected by the API server's
    # int-or-string schema, so say so here rather than at apply time.
    if isinstance(value, bool) or not isinstance(value, int | str):
        if isinstance(value, float):
            raise ValueError(f"{value!r} is a floating-point number (quote it as a string: '{value!r}')")
        raise ValueError(f"{value!r} is not a quantity; use forms like '500m', '2', '4Gi'")
    try:
        parse_quantity(value)
    except QuantityError as err:
        raise ValueError(str(err)) from None
    return value


# A Kubernetes quantity as written by the user: ``4``, ``"500m"``, ``"4Gi"``.
Quantity = Annotated[
    int | str,
    BeforeValidator(_check_quantity),
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    ),
]


def _drop_nulls(value: Any) -> Any:
    # ``cpu:`` left empty is a null, which the API server drops from a resource list; so do we.
    if isinstance(value, dict):
        return {key: item for key, item in value.items() if item is not None}
    return value


ResourceList = Annotated[dict[str, Quantity], BeforeValidator(_drop_nulls)]


# --- durations and times --------------------------------------------------------------------------------

_DURATION_PART_RE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_duration(text: str) -> timedelta:
    """A Go ``time.Duration`` string (``"90s"``, ``"1h30m"``, ``"0"``) as a timedelta."""
    body = text.strip()
    sign = -1.0 if body.startswith("-") else 1.0
    body = body.lstrip("+-")
    if body == "0":
        return timedelta(0)
    seconds = 0.0
    pos = 0
    for match in _DURATION_PART_RE.finditer(body):
        if match.start() != pos:
            break
        seconds += float(match[1]) * _DURATION_UNIT_SECONDS[match[2]]
        pos = match.end()
    if not body or pos != len(body):
        raise ValueError(f"{text!r} is not a duration (write it like '30s', '10m' or '1h30m')")
    return timedelta(seconds=sign * seconds)


def human_duration(seconds: float) -> str:
    """``95s``, ``4m10s``, ``3h``, ``2d5h`` — the kubectl AGE format (ages, and the
    forecast's "in 4m10s")."""
    if seconds < -1:
        return "<invalid>"
    secs = max(0, int(seconds))
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        rest = secs % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    return f"{days // 365}y{days % 365}d" if days < 365 * 8 else f"{days // 365}y"


def _check_duration(value: Any) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a duration (write it as a string like '30s', '10m' or '1h30m')")
    parse_duration(value)
    return value


# A metav1.Duration kept as written; read it with ``parse_duration``.
Duration = Annotated[str, BeforeValidator(_check_duration), WithJsonSchema({"type": "string"})]


def _parse_time(value: Any) -> Any:
    if isinstance(value, str):
        text = value.replace("Z", "+00:00") if value.endswith("Z") else value
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"{value!r} is not an RFC 3339 time (write it like '2024-05-01T12:00:00Z')"
            ) from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return value


def parse_time(text: str) -> datetime:
    """An RFC 3339 time as metav1.Time is written (UTC when it names no zone); ValueError otherwise."""
    parsed: datetime = _parse_time(text)
    return parsed


def format_time(value: datetime) -> str:
    """RFC 3339 in UTC with second precision, as metav1.Time is written."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_time() -> str:
    """This moment as a metav1.Time is written (second precision: formatted once per second, as a backlog's
    50,000 PodGroup statuses each ask for it)."""
    global _now_said
    second = int(time.time())
    said = _now_said
    if said[0] != second:
        said = _now_said = (second, format_time(datetime.fromtimestamp(second, UTC)))
    return said[1]


# The second last asked for by ``now_time``, formatted.
_now_said: tuple[int, str] = (0, "")


# A metav1.Time.
Time = Annotated[
    datetime,
    BeforeValidator(_parse_time),
    PlainSerializer(format_time, return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]

# Go's int32 and int64 fields: the format lets the API server refuse out-of-range numbers, as Volcano's does.
# Strict: YAML's `true` or "3" would be refused by the API server, so they are refused here too.
Int32 = Annotated[int, Strict(), Field(json_schema_extra={"format": "int32"})]
Int64 = Annotated[int, Strict(), Field(json_schema_extra={"format": "int64"})]

# A free-form object the API server keeps as-is (pod templates, PVC specs).
FreeForm = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
