"""Plugin arguments in Go's ``flag`` syntax, as Volcano's Job plugins take them (``--port=23456``).

A flag the plugin does not know, or an argument that is no flag, ends the parse in Go: Volcano admits the
Job and its plugin reads the arguments before that one, never it or those after (Volcano's own e2e suite
submits ``svc: [--enable-networking]`` and expects it admitted). We do the same, and say so at admission with
a warning naming the argument and the flags the plugin takes (``ignored_arguments``), so a typo in
``--prot=1234`` shows at ``kubectl apply`` instead of as a hung rendezvous hours later. A known flag with a
value it cannot take (``--port=http``) is refused: there is no reading of it to honour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volcano_py.jobplugins.types import JobPluginError

FlagValue = str | int | bool

# strconv.ParseBool's spellings.
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True, slots=True)
class Flag:
    name: str
    default: FlagValue
    # Flags Volcano no longer reads but manifests still carry; accepted so old Jobs keep working.
    deprecated: bool = False


@dataclass(frozen=True, slots=True)
class FlagValues:
    """Parsed arguments with typed access; ``given`` holds the names the user set explicitly."""

    values: dict[str, FlagValue]
    given: frozenset[str]
    # Where Go's parse stopped (an unknown flag or an argument that is no flag), and why; None if all read.
    stopped_at: int | None = None
    stop_reason: str = ""

    def get_str(self, name: str) -> str:
        value = self.values[name]
        assert isinstance(value, str)
        return value

    def get_int(self, name: str) -> int:
        value = self.values[name]
        assert isinstance(value, int) and not isinstance(value, bool)
        return value

    def get_bool(self, name: str) -> bool:
        value = self.values[name]
        assert isinstance(value, bool)
        return value


def parse_flags(plugin: str, flags: Sequence[Flag], args: Sequence[str]) -> FlagValues:
    """Parse ``args`` against ``flags``; raise ``JobPluginError`` naming ``spec.plugins.<plugin>[i]``."""
    known = {flag.name: flag for flag in flags}
    values: dict[str, FlagValue] = {flag.name: flag.default for flag in flags}
    given: set[str] = set()
    stopped_at: int | None = None
    stop_reason = ""
    i = 0
    while i < len(args):
        field = f"spec.plugins.{plugin}[{i}]"
        arg = args[i]
        if not isinstance(arg, str):
            raise JobPluginError(field, f"plugin arguments must be strings, got {arg!r}")
        if arg == "--":
            if i + 1 < len(args):
                raise JobPluginError(
                    f"spec.plugins.{plugin}[{i + 1}]", f"unexpected argument {args[i + 1]!r} after '--'"
                )
            break
        if len(arg) < 2 or not arg.startswith("-") or arg.startswith("---"):
            stopped_at, stop_reason = i, f"{arg!r} is not a flag"
            break
        name, has_value, raw = arg.lstrip("-").partition("=")
        flag = known.get(name)
        if flag is None:
            stopped_at, stop_reason = i, f"plugin {plugin} has no argument '--{name}'"
            break
        if isinstance(flag.default, bool):
            if not has_value:
                values[name] = True
            elif raw in _TRUE or raw in _FALSE:
                values[name] = raw in _TRUE
            else:
                raise JobPluginError(field, f"--{name} takes true or false, not {raw!r}")
        else:
            if not has_value:
                if i + 1 >= len(args):
                    raise JobPluginError(field, f"--{name} needs a value: write '--{name}=<value>'")
                i += 1
                raw = args[i]
            values[name] = _convert(field, name, flag.default, raw)
        given.add(name)
        i += 1
    return FlagValues(values, frozenset(given), stopped_at, stop_reason)


def ignored_arguments(plugin: str, flags: Sequence[Flag], args: Sequence[str]) -> list[str]:
    """The warning for arguments Volcano's plugin would not read (none when every argument is read)."""
    values = parse_flags(plugin, flags, args)
    if values.stopped_at is None:
        return []
    accepted = ", ".join(f"--{flag.name}" for flag in flags if not flag.deprecated) or "none"
    unread = ", ".join(repr(arg) for arg in args[values.stopped_at :])
    return [
        f"spec.plugins.{plugin}[{values.stopped_at}]: {values.stop_reason}, so it has no effect: as in "
        f"Volcano, the plugin stops reading its arguments there and ignores {unread} "
        f"(arguments it takes: {accepted})"
    ]


def _convert(field: str, name: str, default: FlagValue, raw: str) -> FlagValue:
    if isinstance(default, int):
        try:
            # Base 0 as Go's flag.IntVar: 0x1F and 0o17 are accepted too.
            return int(raw, 0)
        except ValueError:
            raise JobPluginError(field, f"--{name} takes an integer, not {raw!r}") from None
    return raw


def port_flag(plugin: str, values: FlagValues, name: str) -> int:
    """A flag that must be a TCP port, checked where the user wrote it."""
    port = values.get_int(name)
    if not 0 < port <= 65535:
        raise JobPluginError(f"spec.plugins.{plugin}", f"--{name}={port} is not a port; use 1-65535")
    return port
