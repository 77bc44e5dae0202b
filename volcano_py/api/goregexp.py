"""Regular expressions as Volcano compiles them: Go's ``regexp.Compile``, RE2 syntax with Go's Perl flags.

Where Volcano compiles a pattern a user wrote (a HyperNode member's ``regexMatch.pattern``, in its admission
webhook, its HyperNode controller and its scheduler), ours must take the same patterns and match the same
names. Python's ``re`` does neither: it takes lookaround, backreferences, possessive quantifiers and ``\\Z``
that Go refuses, its ``$`` also matches before a final newline, and its ``\\d``, ``\\w``, ``\\s`` and ``\\b``
are Unicode where Go's are ASCII. So patterns go through RE2 itself (``google-re2``), whose default options
are Go's ``syntax.Perl`` flags, and refusals carry Go's error text (``error parsing regexp: <what>:
`<where>```), which is what Volcano prints after its own words.

Where RE2's C++ parser and Go's differ, Go wins: Go refuses ``\\C`` and capturing groups nested 1000 deep,
which RE2 takes. Only for enormous patterns do the two still part: Go's cap is on its own program size
(about 3.3 million instructions), RE2's on memory (64 MiB here, enough for ``a{1000}`` written 3000 times);
RE2 spells a Unicode class out as UTF-8 byte ranges, so ``\\pL{1000}`` written five times is too large
for it though Go compiles it. Such a pattern is refused here rather than given gigabytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

import re2

# Go's regexp/syntax limits: a counted repetition up to 1000, and a parse tree at most 1000 deep.
GO_MAX_REPEAT: Final = 1000
GO_MAX_DEPTH: Final = 1000
# RE2's default 8 MiB budget refuses patterns Go compiles (``a{1000}`` written a few hundred times).
_RE2_MAX_MEM: Final = 64 << 20

# RE2's C++ error texts and the Go ``syntax.ErrorCode`` each stands for (same meaning, Go's wording).
_GO_WORDING: Final = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing closing ]": "missing closing ]",
    "missing )": "missing closing )",
    "missing closing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "trailing backslash at end of expression": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "missing argument to repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "duplicate capture group name": "duplicate capture group name",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
}

# Escapes other engines know and Go does not, with what they are (the ones not named here are plain
# "escape `\\x`").
_ESCAPES: Final = {
    "Z": "end-of-text anchor `\\Z` (Go writes it `\\z`)",
    "C": "single-byte escape `\\C`",
    "G": "match-start anchor `\\G`",
    "K": "match-reset escape `\\K`",
    "R": "line-break escape `\\R`",
    "X": "grapheme escape `\\X`",
    "h": "horizontal-space escape `\\h`",
    "H": "non-horizontal-space escape `\\H`",
    "N": "named-character escape `\\N`",
    "e": "escape character `\\e` (write `\\x1B`)",
    "c": "control-character escape `\\c` (write `\\x01` and so on)",
    "g": "backreference `\\g`",
    "k": "named backreference `\\k`",
}

# What follows ``(?`` in the groups Go does not have.
_GROUPS: Final = (
    ("(?<=", "lookbehind `(?<=`"),
    ("(?<!", "negative lookbehind `(?<!`"),
    ("(?=", "lookahead `(?=`"),
    ("(?!", "negative lookahead `(?!`"),
    ("(?>", "atomic group `(?>`"),
    ("(?#", "comment group `(?#`"),
    ("(?P=", "named backreference `(?P=`"),
    ("(?P>", "recursion `(?P>`"),
    ("(?|", "branch reset `(?|`"),
    ("(?(", "conditional `(?(`"),
    ("(?R", "recursion `(?R`"),
)
_FLAGS = re.compile(r"\(\?-?([A-Za-z]*)")


class GoRegexpError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses.

    ``go_error`` is Go's own text (``error parsing regexp: ...``); ``construct`` names what is not supported,
    in words a user searches for, when the refusal is about a construct Go lacks (empty otherwise)."""

    def __init__(self, pattern: str, go_error: str, construct: str) -> None:
        super().__init__(go_error)
        self.pattern = pattern
        self.go_error = go_error
        self.construct = construct

    @property
    def advice(self) -> str:
        """What is wrong and how to fix it, after Go's text."""
        if self.construct:
            return f"{self.construct} is not supported by Go's RE2 syntax (rewrite the pattern without it)"
        return "fix the pattern; Volcano compiles it with Go's regexp (RE2 syntax)"


@dataclass(frozen=True, slots=True)
class GoRegexp:
    """A compiled pattern; ``match_string`` is Go's ``MatchString``: found anywhere in the text."""

    pattern: str
    _compiled: Any

    def match_string(self, text: str) -> bool:
        return self._compiled.search(text) is not None


def _options() -> Any:
    options = re2.Options()
    # Refusals are reported to the caller; RE2 would also log each one to stderr.
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    return options


_OPTIONS: Final = _options()


def compile_go(pattern: str) -> GoRegexp:
    """``pattern`` compiled as Go's ``regexp.Compile`` would; GoRegexpError (Go's text, the construct) if Go
    refuses it."""
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        raise _refusal(pattern, _text(err)) from None
    except UnicodeEncodeError:
        # A lone surrogate: Go sees the bytes as invalid UTF-8.
        raise GoRegexpError(pattern, _go_text("invalid UTF-8", pattern), "") from None
    go_only = _go_only_refusal(pattern)
    if go_only is not None:
        raise go_only
    return GoRegexp(pattern, compiled)


def _text(err: Exception) -> str:
    arg = err.args[0] if err.args else ""
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def _go_text(code: str, arg: str) -> str:
    return f"error parsing regexp: {code}: `{arg}`"


def _refusal(pattern: str, cpp: str) -> GoRegexpError:
    code, _, arg = cpp.partition(": ")
    if cpp.startswith("pattern too large"):
        code, arg = cpp, pattern
    go_code = _GO_WORDING.get(code, code)
    if go_code == "invalid or unsupported Perl syntax" and arg.startswith("(?<"):
        # Go reads ``(?<`` as the start of a named group, so it names the group, up to its ``>``.
        go_code = "invalid named capture"
        start = pattern.find(arg)
        rest = pattern[start:] if start >= 0 else arg
        close = rest.find(">")
        arg = rest if close < 0 else rest[: close + 1]
    # Go's text may cut a construct short (``(?P`` of ``(?P=name)``), so it is named from the pattern, at
    # the first place Go's text is found that names one (``(?P<n>a)(?P=n)``: the second ``(?P``).
    starts = [i for i in range(len(pattern)) if pattern.startswith(arg, i)] if arg else []
    named = (_construct(go_code, arg, pattern[i:]) for i in starts)
    construct = next((name for name in named if name), "") or _construct(go_code, arg, arg)
    return GoRegexpError(pattern, _go_text(go_code, arg), construct)


def _construct(go_code: str, arg: str, at: str) -> str:
    if go_code == "invalid escape sequence" and len(arg) >= 2 and arg[0] == "\\":
        letter = arg[1]
        if letter.isdigit() and letter != "0":
            return f"backreference `{arg}`"
        return _ESCAPES.get(letter, f"escape `{arg}`")
    if go_code in ("invalid or unsupported Perl syntax", "invalid named capture"):
        for prefix, name in _GROUPS:
            if at.startswith(prefix):
                return name
        if at.startswith(("(?P<", "(?<")):
            return ""
        flags = _FLAGS.match(at)
        unknown = [flag for flag in flags[1] if flag not in "imsU"] if flags else []
        if unknown:
            return f"flag `{unknown[0]}` (Go's flags are i, m, s and U)"
        return ""
    if go_code == "invalid nested repetition operator":
        if arg.endswith("+"):
            return f"possessive quantifier `{arg}`"
        return f"a repetition of a repetition `{arg}` (put the inner one in a group)"
    if go_code == "invalid repeat count":
        counts = [int(n) for n in re.findall(r"[0-9]+", arg)]
        if any(n > GO_MAX_REPEAT for n in counts):
            return f"repeat count `{arg}` above {GO_MAX_REPEAT}"
        if len(counts) == 2 and counts[0] > counts[1]:
            return ""
        return f"nested repeat counts past {GO_MAX_REPEAT} copies in all `{arg}`"
    return ""


def _go_only_refusal(pattern: str) -> GoRegexpError | None:
    """What Go refuses in a pattern RE2 has taken: ``\\C`` and capturing groups nested too deep."""
    groups: list[bool] = []  # open groups, True for a capture
    depth = deepest = 0
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            following = pattern[i + 1]
            if following == "Q":
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
                continue
            if following == "C" and not in_class:
                return GoRegexpError(pattern, _go_text("invalid escape sequence", "\\C"), _ESCAPES["C"])
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            # A ``]`` first in a class (after an optional ``^``) is a member, not the end.
            i += 1
            if pattern.startswith("^", i):
                i += 1
            if pattern.startswith("]", i):
                i += 1
            continue
        elif char == "(":
            # Non-capturing and flag groups leave no node in Go's parse tree; captures do.
            capture = not pattern.startswith("(?", i) or pattern.startswith(("(?P<", "(?<"), i)
            groups.append(capture)
            depth += capture
            deepest = max(deepest, depth)
        elif char == ")" and groups:
            depth -= groups.pop()
        i += 1
    if deepest >= GO_MAX_DEPTH:
        return GoRegexpError(pattern, _go_text("expression nests too deeply", pattern), "")
    return None
