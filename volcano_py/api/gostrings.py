"""Go's ``strings.TrimSpace`` and ``strings.Fields``, for the text Volcano splits with them (the scheduler
conf's ``actions``, a CronJob's schedule).

Python's ``str.split()`` and ``str.strip()`` take a different set of spaces: they also treat the ASCII
separators U+001C to U+001F as whitespace, which Go's ``unicode.IsSpace`` does not, so ``"a\\x1fb"`` is one
field in Go and two in Python.
"""

from __future__ import annotations

from typing import Final

# unicode.IsSpace: the Latin-1 spaces Go lists, then the Unicode White_Space property above U+00FF.
GO_SPACE: Final = frozenset(
    "\t\n\v\f\r \x85\xa0"
    "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_GO_SPACE_TEXT: Final = "".join(sorted(GO_SPACE))


def go_trim_space(text: str) -> str:
    """``strings.TrimSpace``."""
    return text.strip(_GO_SPACE_TEXT)


def go_fields(text: str) -> list[str]:
    """``strings.Fields``: the runs of characters between Go's spaces (none for blank text)."""
    fields: list[str] = []
    current: list[str] = []
    for char in text:
        if char in GO_SPACE:
            if current:
                fields.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        fields.append("".join(current))
    return fields
