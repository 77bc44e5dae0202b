"""JSON Patch operations (RFC 6902 ``add`` and ``replace``), the language of a mutating admission response."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class PatchOp:
    op: Literal["add", "replace"]
    path: str
    value: Any

    def to_dict(self) -> JSON:
        return {"op": self.op, "path": self.path, "value": self.value}


def pointer(*parts: str | int) -> str:
    """A JSON pointer: ``pointer("metadata", "annotations", "a/b")`` -> ``/metadata/annotations/a~1b``."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply_patch(body: JSON, ops: Iterable[PatchOp]) -> JSON:
    """Apply ``ops`` to ``body`` in place and return it; an ``add``'s parent must exist (RFC 6902)."""
    for op in ops:
        tokens = [_unescape(token) for token in op.path.split("/")[1:]]
        parent: Any = body
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        value = copy.deepcopy(op.value)
        if isinstance(parent, list):
            if op.op == "add":
                parent.insert(len(parent) if last == "-" else int(last), value)
            else:
                parent[int(last)] = value
        else:
            if op.op == "replace" and last not in parent:
                raise KeyError(f"cannot replace {op.path}: it does not exist")
            parent[last] = value
    return body
