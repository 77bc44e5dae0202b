"""The ``usage`` plugin: Volcano's load thresholds, load scores and shadow estimates over the node load the
snapshot carries, its arguments and the conf's ``metrics`` section. No metrics source here: each case hands
the session the readings the runtime would have collected."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from tests.scheduler.builders import make_node, make_pod
from volcano_py.scheduler.core import ConfError, NodeUsage, load_conf, run_session
from volcano_py.scheduler.framework.decisions import SessionResult
from volcano_py.scheduler.framework.metrics_conf import MetricsConf, parse_metrics
from volcano_py.scheduler.framework.snapshot import Snapshot
from volcano_py.scheduler.plugins.usage_estimate import Estimator, composite, node_score, weighted

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
STAMP = "2026-01-01T12:00:00Z"
METRICS = "metrics: {type: prometheus, address: 'http://prometheus:9090', interval: 30s}\n"


def conf(arguments: str = "", flags: str = "") -> str:
    """Placement by usage alone (no other score), so each case shows what usage decides."""
    args = f"    arguments: {arguments}\n" if arguments else ""
    return (
        'actions: "allocate, backfill"\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n'
        f"  - name: usage\n{flags}{args}{METRICS}"
    )


def reading(cpu: float, memory: float = 10.0, age: timedelta = timedelta(seconds=20)) -> NodeUsage:
    return NodeUsage(cpu, memory, NOW - age)


def session(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    usage: dict[str, NodeUsage],
    text: str | None = None,
) -> SessionResult:
    snapshot = Snapshot.build(nodes=nodes, pods=pods, node_usage=usage)
    return run_session(snapshot, load_conf(text or conf()), STAMP)


def binds(result: SessionResult) -> dict[str, str]:
    return {b.name: b.node for b in result.binds}


def two_nodes(cpu: str = "8") -> list[dict[str, Any]]:
    return [make_node("n0", cpu=cpu).obj(), make_node("n1", cpu=cpu).obj()]


@pytest.mark.parametrize(
    ("usage", "text", "expected"),
    [
        pytest.param({"n0": reading(95), "n1": reading(90)}, None, {}, id="both-over-cpu-threshold"),
        pytest.param({"n0": reading(95), "n1": reading(99.5)}, conf("{thresholds: {cpu: 99}}"),
                     {"p": "n0"}, id="threshold-99-keeps-only-n1-off"),
        pytest.param({"n0": reading(50, memory=85), "n1": reading(50, memory=81)}, None, {},
                     id="both-over-memory-threshold"),
        pytest.param({"n0": reading(95, age=timedelta(minutes=6)), "n1": reading(90)}, None, {"p": "n0"},
                     id="a-reading-older-than-5m-is-none"),
        pytest.param({"n1": reading(90)}, None, {"p": "n0"}, id="a-node-without-reading-passes"),
        pytest.param({"n0": reading(80), "n1": reading(81)}, None, {"p": "n0"},
                     id="at-the-threshold-is-not-over-it"),
        pytest.param({"n0": reading(95), "n1": reading(90)}, conf(flags="    enablePredicate: false\n"),
                     {"p": "n1"}, id="enablePredicate-false-scores-only"),
    ],
)  # fmt: skip
def test_predicate_keeps_pods_off_loaded_nodes(
    usage: dict[str, NodeUsage], text: str | None, expected: dict[str, str]
) -> None:
    result = session(two_nodes(), [make_pod("p").req(cpu="1", memory="1Gi").obj()], usage, text)
    assert binds(result) == expected


def test_a_pod_that_fits_nowhere_says_which_load_stopped_it() -> None:
    usage = {"n0": reading(95), "n1": reading(50, memory=90)}
    result = session(two_nodes(), [make_pod("p").req(cpu="1").obj()], usage)
    assert not result.binds
    message = next(iter(result.explanations.values())).message
    assert "1 node report CPU load above 80% (usage plugin's thresholds.cpu)" in message
    assert "1 node report memory load above 80% (usage plugin's thresholds.mem)" in message


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param({"n0": reading(60), "n1": reading(20)}, "n1", id="idler-cpu-wins"),
        pytest.param({"n0": reading(20, memory=70), "n1": reading(30, memory=10)}, "n1",
                     id="cpu-and-memory-weigh-alike"),
        pytest.param({"n0": reading(10, age=timedelta(minutes=6)), "n1": reading(70)}, "n1",
                     id="stale-scores-zero"),
    ],
)  # fmt: skip
def test_node_order_prefers_the_idler_node(usage: dict[str, NodeUsage], expected: str) -> None:
    result = session(two_nodes(), [make_pod("p").req(cpu="1").obj()], usage)
    assert binds(result) == {"p": expected}


def test_pods_placed_in_the_session_count_before_prometheus_sees_them() -> None:
    # n0 reads 30%, n1 35%: the first pod goes to n0; its shadow (0.7 x 4 CPUs of 8 = 35% more) makes n0 the
    # busier one, so the second goes to n1. Without shadows both would land on n0.
    pods = [make_pod(f"p{i}").req(cpu="4").obj() for i in range(2)]
    result = session(two_nodes(), pods, {"n0": reading(30), "n1": reading(35)})
    assert sorted(binds(result).values()) == ["n0", "n1"]


@pytest.mark.parametrize(
    ("placed", "expected"),
    [
        pytest.param(make_pod("old").req(cpu="4").node("n0"), "n1", id="bound-not-started"),
        pytest.param(make_pod("old").req(cpu="4").running("n0"), "n1", id="running-no-start-time"),
        pytest.param(make_pod("old").req(cpu="4").running("n0"), "n0", id="running-past-the-interval"),
    ],
)
def test_pods_on_a_node_its_reading_cannot_show_yet_count(placed: Any, expected: str) -> None:
    pod = placed.obj()
    if pod["status"]["phase"] == "Running" and expected == "n0":
        pod["status"]["startTime"] = "2026-01-01T11:58:00Z"  # 2 minutes: past the 30s interval
    result = session(
        two_nodes(), [pod, make_pod("p").req(cpu="1").obj()], {"n0": reading(20), "n1": reading(30)}
    )
    assert binds(result) == {"p": expected}


# --- the arithmetic ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "limit", "estimator", "risk", "expected"),
    [
        pytest.param(1000, 4000, Estimator(), 1.0, 700, id="default-ratio-of-request"),
        pytest.param(1000, 4000, Estimator(request_ratio=1, burst_ratio=1), 1.0, 4000, id="whole-limit"),
        pytest.param(1000, 4000, Estimator(request_ratio=0.5, burst_ratio=0.1), 1.0, 800, id="burst-share"),
        pytest.param(1000, 1000, Estimator(request_ratio=1), 1.2, 1000, id="risk-capped-at-limit"),
        pytest.param(1000, 0, Estimator(request_ratio=1, burst_ratio=1), 1.2, 1000, id="no-limit-is-request"),
        pytest.param(1000, 500, Estimator(request_ratio=1), 1.0, 1000, id="limit-below-request-is-request"),
    ],
)  # fmt: skip
def test_pod_estimate(
    request_: float, limit: float, estimator: Estimator, risk: float, expected: float
) -> None:
    assert estimator.pod(request_, limit, risk) == pytest.approx(expected)


def test_best_effort_and_risk() -> None:
    estimator = Estimator(risk_threshold=0.6, risk_factor=1.5)
    assert estimator.best_effort(250, 1.5) == pytest.approx(375)
    assert estimator.best_effort(-1, 1.5) == 0
    assert estimator.risk(np.array([0.59, 0.6, 0.9])).tolist() == [1.0, 1.5, 1.5]
    assert Estimator(risk_factor=0.5).risk(np.array([0.9])).tolist() == [1.0]


@pytest.mark.parametrize(
    ("percent", "shadow", "capacity", "expected"),
    [
        pytest.param(50, 0, 8000, 0.5, id="reported-only"),
        pytest.param(50, 2000, 8000, 0.75, id="plus-shadow"),
        pytest.param(80, 5000, 8000, 1.0, id="clamped-to-one"),
        pytest.param(50, 1000, 0, 0.0, id="no-capacity"),
    ],
)
def test_composite(percent: float, shadow: float, capacity: float, expected: float) -> None:
    got = composite(np.array([percent], float), np.array([shadow], float), np.array([capacity], float))
    assert got.tolist() == pytest.approx([expected])


@pytest.mark.parametrize(
    ("cpu", "memory", "weights", "expected_score", "expected_load"),
    [
        pytest.param(0.0, 0.0, (1, 1, 1), 100, 0.0, id="idle"),
        pytest.param(1.0, 1.0, (1, 1, 1), 0, 1.0, id="full"),
        pytest.param(0.3, 0.5, (1, 1, 5), 300, 0.4, id="usage-weight-5"),
        pytest.param(0.6, 0.5, (2, 8, 5), 240, 0.52, id="memory-weighted"),
        pytest.param(0.5, 0.5, (0, 0, 5), 0, 0.0, id="no-weights"),
    ],
)  # fmt: skip
def test_score_and_weighted_load(
    cpu: float, memory: float, weights: tuple[int, int, int], expected_score: float, expected_load: float
) -> None:
    c, m = np.array([cpu]), np.array([memory])
    assert node_score(c, m, *weights).tolist() == pytest.approx([expected_score])
    assert weighted(c, m, weights[0], weights[1]).tolist() == pytest.approx([expected_load])


# --- arguments and the metrics section --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        pytest.param("{usage.weight: 5, cpu.weight: 1, memory.weight: 1, thresholds: {cpu: 80, mem: 70}}",
                     None, id="volcano-doc-example"),
        pytest.param("{estimator: {request_ratio: 0.7, burst_ratio: 0, risk_threshold: 0.6, "
                     "risk_factor: 1.2, be_cpu: 250m, be_mem: 200Mi}}", None, id="volcano-estimator-example"),
        pytest.param("{estimator: {be_cpu: 100, be_mem: 64}}", None, id="bare-integers-in-volcano-units"),
        pytest.param("{thresholds: {cpu: 120}}", "'cpu' must be within 0..100", id="threshold-over-100"),
        pytest.param("{thresholds: {cpu: 80.5}}", "'cpu' must be an integer", id="threshold-not-integer"),
        pytest.param("{thresholds: {disk: 80}}", "unknown argument(s) disk", id="unknown-threshold"),
        pytest.param("{thresholds: 80}", "'thresholds' must be a mapping", id="thresholds-not-a-map"),
        pytest.param("{usage.weight: -1}", "'usage.weight' must be an integer >= 0", id="negative-weight"),
        pytest.param("{estimator: {request_ratio: 1.5}}", "'request_ratio' must be a number within 0..1",
                     id="ratio-over-one"),
        pytest.param("{estimator: {risk_factor: 0.8}}", "'risk_factor' must be a number >= 1",
                     id="risk-factor-below-one"),
        pytest.param("{estimator: {be_mem: lots}}", "'be_mem' must be a quantity such as 200Mi",
                     id="bad-quantity"),
        pytest.param("{cpu.threshold: 80}", "unknown argument(s) cpu.threshold", id="typo"),
    ],
)  # fmt: skip
def test_arguments(arguments: str, refusal: str | None) -> None:
    if refusal is None:
        assert load_conf(conf(arguments)).plugin_names()[-1] == "usage"
        return
    with pytest.raises(ConfError) as err:
        load_conf(conf(arguments))
    assert "plugin usage" in str(err.value) and refusal in str(err.value)


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        pytest.param(None, None, id="absent"),
        pytest.param({}, None, id="empty"),
        pytest.param({"type": "prometheus", "address": "http://prom:9090/", "interval": "5s"},
                     MetricsConf("prometheus", "http://prom:9090", timedelta(seconds=5)), id="prometheus"),
        pytest.param({"type": "prometheus", "address": "https://prom", "tls.insecureSkipVerify": "true"},
                     MetricsConf("prometheus", "https://prom", timedelta(seconds=30), True),
                     id="default-interval"),
        pytest.param({"type": "elasticsearch", "address": "http://es:9200"},
                     "'elasticsearch' is not supported", id="elasticsearch"),
        pytest.param({"type": "prometheus_adaptor"}, "custom metrics API", id="adaptor"),
        pytest.param({"type": "graphite", "address": "http://g"}, "not one of Volcano's metrics sources",
                     id="unknown-type"),
        pytest.param({"address": "http://prom:9090"}, "metrics.type: not set", id="no-type"),
        pytest.param({"type": "prometheus"}, "metrics.address: must be Prometheus's URL", id="no-address"),
        pytest.param({"type": "prometheus", "address": "prom:9090"}, "metrics.address", id="no-scheme"),
        pytest.param({"type": "prometheus", "address": "http://p", "interval": "soon"},
                     "metrics.interval: must be a positive duration", id="bad-interval"),
        pytest.param({"type": "prometheus", "address": "http://p", "tls": {"insecureSkipVerify": "true"}},
                     "metrics.tls: must be a string", id="nested-tls"),
        pytest.param({"type": "prometheus", "address": "http://p", "elasticsearch.index": "x"},
                     "unknown key(s) elasticsearch.index", id="elasticsearch-key"),
    ],
)  # fmt: skip
def test_metrics_section(section: Any, expected: MetricsConf | str | None) -> None:
    if isinstance(expected, str):
        with pytest.raises(ConfError, match=expected.replace("(", r"\(").replace(")", r"\)")):
            parse_metrics(section)
        return
    assert parse_metrics(section) == expected


def test_the_conf_carries_its_metrics_section() -> None:
    assert load_conf(conf()).metrics == MetricsConf("prometheus", "http://prometheus:9090")
    with pytest.raises(ConfError, match=r"metrics\.type: 'elasticsearch' is not supported"):
        load_conf(conf().replace("type: prometheus", "type: elasticsearch"))
