"""A DRA selector's expression tree as cel-go builds it, from cel-python's parse tree.

cel-python's grammar tree is not the shape cel-go checks and costs: operators are nested rules, macros are
plain calls, and positions are rule starts. The checker and the estimator both walk this reshaped tree, and
errors are placed and printed as cel-go places and prints them, so the reshaping and the error display live
here, once.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.dra_cel_env import DYN, CelType

# Receiver-style macros: (name, argument count) -> how many of the arguments name iteration variables.
_MACROS: dict[tuple[str, int], int] = {
    ("all", 2): 1, ("exists", 2): 1, ("exists_one", 2): 1, ("map", 2): 1, ("map", 3): 1, ("filter", 2): 1,
    ("all", 3): 2, ("exists", 3): 2, ("existsOne", 3): 2,
    ("transformList", 3): 2, ("transformList", 4): 2, ("transformMap", 3): 2, ("transformMap", 4): 2,
    ("transformMapEntry", 3): 2, ("transformMapEntry", 4): 2,
}  # fmt: skip


def _macro_vars(name: str, count: int) -> int:
    return _MACROS.get((name, count), 0)


# ---------------------------------------------------------------------------------------------------------
# The expression tree: cel-python's parse tree, reshaped as cel-go's (calls, selects, comprehensions) and
# keeping each node's offset where cel-go reports it (an operator, a dot, an opening parenthesis).


@dataclass(eq=False, slots=True)
class Node:
    kind: str  # lit, ident, select, call, list, map, comp
    pos: int
    value: Any = None  # a literal's value; an ident's or call's name; a select's field
    args: list[Node] = field(default_factory=list)  # call args; list items; map keys and values in turn
    target: Node | None = None  # a select's operand; a member call's receiver
    test_only: bool = False
    macro: str = ""  # for comp: the macro's name
    iter_vars: tuple[str, ...] = ()
    type: CelType = DYN
    # cost bookkeeping
    path: tuple[str, ...] | None = None
    size: tuple[int, int] | None = None
    overloads: list[str] = field(default_factory=list)


class Syntax(Exception):
    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _skip_ws(text: str, pos: int, step: int = 1) -> int:
    while 0 <= pos < len(text) and text[pos].isspace():
        pos += step
    return pos


def _unquote(token: str) -> str | bytes:
    is_bytes = token[:1] in "bB"
    body = token[1:] if is_bytes else token
    raw = body[:1] in "rR"
    body = body[1:] if raw else body
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    if not raw:
        # Only the decoded length matters (for the cost estimate): an escape Python cannot decode stays as is.
        with contextlib.suppress(UnicodeDecodeError):
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    return body.encode() if is_bytes else body


class Builder:
    def __init__(self, text: str) -> None:
        self.text = text

    def after(self, end: int) -> int:
        return _skip_ws(self.text, end)

    def build(self, tree: Any) -> Node:
        built: Node = getattr(self, f"_{tree.data}")(tree)
        return built

    def _expr(self, t: Any) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        cond, yes, no = (self.build(c) for c in t.children)
        return Node("call", self.after(t.children[0].meta.end_pos), "_?_:_", [cond, yes, no])

    def _binary(self, t: Any, name: str) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        left, right = t.children
        return Node("call", self.after(left.meta.end_pos), name, [self.build(left), self.build(right)])

    def _conditionalor(self, t: Any) -> Node:
        return self._binary(t, "_||_")

    def _conditionaland(self, t: Any) -> Node:
        return self._binary(t, "_&&_")

    def _chain(self, t: Any, names: dict[str, str]) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        op, right = t.children
        (left,) = op.children
        return Node(
            "call", self.after(left.meta.end_pos), names[op.data], [self.build(left), self.build(right)]
        )

    def _relation(self, t: Any) -> Node:
        return self._chain(t, {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_",
                               "relation_ge": "_>=_", "relation_eq": "_==_", "relation_ne": "_!=_",
                               "relation_in": "@in"})  # fmt: skip

    def _addition(self, t: Any) -> Node:
        return self._chain(t, {"addition_add": "_+_", "addition_sub": "_-_"})

    def _multiplication(self, t: Any) -> Node:
        return self._chain(t, {"multiplication_mul": "_*_", "multiplication_div": "_/_",
                               "multiplication_mod": "_%_"})  # fmt: skip

    def _unary(self, t: Any) -> Node:
        if len(t.children) == 1:
            return self.build(t.children[0])
        op, operand = t.children
        return Node("call", t.meta.start_pos, "!_" if op.data == "unary_not" else "-_", [self.build(operand)])

    def _member(self, t: Any) -> Node:
        return self.build(t.children[0])

    _primary = _member
    _paren_expr = _member

    def _member_dot(self, t: Any) -> Node:
        operand, name = t.children
        dot = _skip_ws(self.text, name.start_pos - 1, -1)
        return Node("select", dot, str(name), target=self.build(operand))

    def _exprs(self, t: Any | None) -> list[Node]:
        return [self.build(c) for c in t.children] if t is not None else []

    def _member_dot_arg(self, t: Any) -> Node:
        operand, name, *rest = t.children
        args = self._exprs(rest[0] if rest else None)
        return self._call(str(name), self.after(name.end_pos), args, self.build(operand))

    def _member_index(self, t: Any) -> Node:
        operand, index = t.children
        return Node(
            "call", self.after(operand.meta.end_pos), "_[_]", [self.build(operand), self.build(index)]
        )

    def _member_object(self, t: Any) -> Node:
        raise Syntax(t.meta.start_pos, "message construction is not supported in a device selector")

    def _ident_arg(self, t: Any) -> Node:
        name, *rest = t.children
        return self._call(str(name), self.after(name.end_pos), self._exprs(rest[0] if rest else None), None)

    _dot_ident_arg = _ident_arg

    def _ident(self, t: Any) -> Node:
        (name,) = t.children
        return Node("ident", name.start_pos, str(name))

    _dot_ident = _ident

    def _list_lit(self, t: Any) -> Node:
        return Node("list", t.meta.start_pos, args=self._exprs(t.children[0] if t.children else None))

    def _map_lit(self, t: Any) -> Node:
        return Node("map", t.meta.start_pos, args=self._exprs(t.children[0] if t.children else None))

    def _literal(self, t: Any) -> Node:
        (token,) = t.children
        text, kind = str(token), token.type
        value: Any
        if kind == "BOOL_LIT":
            value = text == "true"
        elif kind == "NULL_LIT":
            value = None
        elif kind == "INT_LIT":
            value = int(text, 16) if "x" in text.lower() else int(text)
        elif kind == "UINT_LIT":
            value = ("uint", int(text[:-1], 16) if "x" in text.lower() else int(text[:-1]))
        elif kind == "FLOAT_LIT":
            value = float(text)
        else:
            value = _unquote(text)
        return Node("lit", token.start_pos, value)

    def _call(self, name: str, pos: int, args: list[Node], target: Node | None) -> Node:
        if target is None and name == "has":
            if len(args) != 1 or args[0].kind != "select":
                raise Syntax(pos, "invalid argument to has() macro")
            sel = args[0]
            return Node("select", pos, sel.value, target=sel.target, test_only=True)
        if target is not None and target.kind == "ident" and target.value == "cel" and name == "bind":
            if len(args) != 3 or args[0].kind != "ident":
                raise Syntax(pos, "cel.bind() variable name must be a simple identifier")
            return Node("comp", pos, args=[args[1], args[2]], macro="bind", iter_vars=(args[0].value,))
        vars_count = _macro_vars(name, len(args)) if target is not None else 0
        if target is not None and vars_count:
            names = args[:vars_count]
            for v in names:
                if v.kind != "ident":
                    raise Syntax(v.pos, "argument must be a simple name")
            return Node("comp", pos, args=[target, *args[vars_count:]], macro=name,
                        iter_vars=tuple(v.value for v in names))  # fmt: skip
        return Node("call", pos, name, args, target)


def location(text: str, pos: int) -> tuple[int, int]:
    before = text[:pos]
    line = before.count("\n") + 1
    return line, pos - (before.rfind("\n") + 1)


def display(text: str, pos: int, message: str) -> str:
    """One error as cel-go prints it: position (column counted from 1), the line, a caret under the spot."""
    line, column = location(text, pos)
    snippet = text.split("\n")[line - 1].replace("\t", " ")
    out = f"ERROR: <input>:{line}:{column + 1}: {message}"
    if len(snippet) <= 16384:
        marks = "".join("\uff0e" if ord(ch) > 127 else "." for ch in snippet[:column])
        caret = "\uff3e" if column < len(snippet) and ord(snippet[column]) > 127 else "^"
        out += f"\n | {snippet}\n | {marks}{caret}"
    return out
