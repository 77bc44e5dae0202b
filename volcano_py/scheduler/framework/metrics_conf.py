"""The conf's ``metrics`` section: where the runtime reads node load from, as Volcano's conf says it.

Volcano reads the section as flat strings (``metrics: {type: prometheus, address: http://prometheus:9090,
interval: 30s, tls.insecureSkipVerify: "true"}``) and its cache queries the source every ``interval`` (30s
when unset); the ``usage`` plugin reads the node load that lands in the snapshot, and ``interval`` as the
delay before a started pod shows in it. Volcano knows three sources; volcano-py reads Prometheus, and refuses
the other two by name rather than collecting nothing. Where Volcano quietly falls back (an unparsable
interval, no type while other keys are set) the conf is refused here, naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Final
from urllib.parse import urlsplit

from volcano_py.api.common import parse_duration

from .arguments import ConfError

PROMETHEUS: Final = "prometheus"
# Volcano's monitoring systems (``pkg/scheduler/metrics/source``), and why the others are not read here.
_NOT_READ: Final = {
    "prometheus_adaptor": "the custom metrics API (prometheus-adapter) is not read by volcano-py",
    "elasticsearch": "Elasticsearch is not read by volcano-py",
}
# Volcano's default query interval (its cache's ``defaultMetricsInternal``).
DEFAULT_INTERVAL: Final = timedelta(seconds=30)
_TLS_KEY: Final = "tls.insecureSkipVerify"
_KEYS: Final = ("type", "address", "interval", _TLS_KEY)
_EXAMPLE: Final = "{type: prometheus, address: http://prometheus.monitoring:9090, interval: 30s}"


@dataclass(frozen=True, slots=True)
class MetricsConf:
    """A metrics source volcano-py reads (Prometheus's HTTP API at ``address``)."""

    type: str
    address: str
    interval: timedelta = DEFAULT_INTERVAL
    insecure_skip_verify: bool = False


def _text(key: str, value: object) -> str:
    if isinstance(value, bool) and key == _TLS_KEY:
        return "true" if value else "false"
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value).strip()
    raise ConfError(
        f"metrics.{key}: must be a string, got {value!r} (Volcano reads the metrics section as flat strings: "
        f'write nested keys with a dot, as tls.insecureSkipVerify: "true")'
    )


def parse_metrics(raw: object) -> MetricsConf | None:
    """The conf's ``metrics`` section, or None when it is absent or empty (no node load is collected)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfError(f"metrics: must be a mapping such as {_EXAMPLE}, got {raw!r}")
    if not raw:
        return None
    values = {str(key): _text(str(key), value) for key, value in raw.items()}
    kind = values.get("type", "")
    if not kind:
        raise ConfError(
            f"metrics.type: not set, so no node load would be collected (Volcano ignores the section "
            f"then); set type: prometheus, or remove the metrics section ({', '.join(sorted(values))} set)"
        )
    if kind in _NOT_READ:
        raise ConfError(
            f"metrics.type: {kind!r} is not supported: {_NOT_READ[kind]}; use type: prometheus with the "
            f"address of a Prometheus that scrapes node-exporter (node_cpu_seconds_total, node_memory_*)"
        )
    if kind != PROMETHEUS:
        known = ", ".join([PROMETHEUS, *_NOT_READ])
        raise ConfError(f"metrics.type: {kind!r} is not one of Volcano's metrics sources ({known})")
    unknown = sorted(key for key in values if key not in _KEYS)
    if unknown:
        raise ConfError(
            f"metrics: unknown key(s) {', '.join(unknown)} for type prometheus; accepted: {', '.join(_KEYS)}"
        )
    address = values.get("address", "")
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfError(
            f"metrics.address: must be Prometheus's URL such as http://prometheus.monitoring:9090, "
            f"got {address!r}"
        )
    interval = DEFAULT_INTERVAL
    if "interval" in values:
        try:
            interval = parse_duration(values["interval"])
        except ValueError:
            interval = timedelta(0)
        if interval <= timedelta(0):
            written = values["interval"]
            raise ConfError(f"metrics.interval: must be a positive duration such as '30s', got {written!r}")
    skip = values.get(_TLS_KEY, "false").lower()
    if skip not in ("true", "false"):
        raise ConfError(f'metrics.{_TLS_KEY}: must be "true" or "false", got {values[_TLS_KEY]!r}')
    return MetricsConf(PROMETHEUS, address.rstrip("/"), interval, skip == "true")
