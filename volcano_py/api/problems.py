"""What a validation rule reports: a field path and a message saying what is wrong and how to fix it.

The same ``Problem`` list feeds ``volcano-py validate`` (one line each) and the admission webhook (joined
into the denial reason), so both speak with one voice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def join_path(*parts: str | int) -> str:
    """``join_path("spec", "tasks", 0, "name")`` -> ``"spec.tasks[0].name"``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out += f".{part}" if out else part
    return out


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _expected_enum(ctx: dict[str, Any]) -> str:
    return str(ctx.get("expected", "")).replace(" or ", ", ")


def _message(error: Any) -> str:
    """pydantic's error as our kind of sentence: what is wrong, then (how to fix it)."""
    kind: str = error["type"]
    ctx: dict[str, Any] = error.get("ctx") or {}
    value = error.get("input")
    if kind == "missing":
        return "is required (add this field)"
    if kind == "extra_forbidden":
        return "unknown field (remove it or fix its spelling)"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "enum":
        return f"{_describe(value)} is not allowed (use one of {_expected_enum(ctx)})"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"{_describe(value)} is not an integer (write a whole number)"
    if kind in ("bool_type", "bool_parsing"):
        return f"{_describe(value)} is not a boolean (write true or false)"
    if kind in ("string_type",):
        return f"{_describe(value)} is not a string (quote it)"
    if kind in ("list_type",):
        return f"expected a list, got {_describe(value)} (write a YAML sequence: '- item')"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {_describe(value)} (write 'key: value' pairs)"
    if kind == "greater_than_equal":
        return f"{_describe(value)} is too small (use a value >= {ctx.get('ge')})"
    if kind == "less_than_equal":
        return f"{_describe(value)} is too large (use a value <= {ctx.get('le')})"
    if kind == "string_too_long":
        return f"{_describe(value)} is too long (use at most {ctx.get('max_length')} characters)"
    if kind == "too_short":
        return f"must not be empty (add at least {ctx.get('min_length')} item)"
    if kind == "string_too_short":
        return f"must not be empty (use at least {ctx.get('min_length')} character(s))"
    if kind == "string_pattern_mismatch":
        return f"{_describe(value)} does not match the pattern {ctx.get('pattern')} (change the value)"
    return f"{error['msg']} (fix the value {_describe(value)})"


def _is_union_tag(part: str) -> bool:
    return part in ("int", "str") or part.startswith(("function-", "union["))


def from_validation_error(err: ValidationError, prefix: str = "") -> list[Problem]:
    problems: list[Problem] = []
    for error in err.errors():
        # pydantic adds the union member it tried ("int", "str") to the location; the user never wrote it.
        loc = [p for p in error["loc"] if not (isinstance(p, str) and _is_union_tag(p))]
        problems.append(Problem(join_path(prefix, *loc), _message(error)))
    return _dedupe(problems)


def _dedupe(problems: Iterable[Problem]) -> list[Problem]:
    seen: set[Problem] = set()
    out: list[Problem] = []
    for problem in problems:
        if problem not in seen:
            seen.add(problem)
            out.append(problem)
    return out
