"""What a person sees in the logs: JSON in a pod or a pipe, readable lines at a terminal, no library noise;
and the ``up --demo`` table redrawn in place at a terminal."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from volcano_py import log
from volcano_py.cli.demo import LiveTable


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)


@pytest.mark.parametrize(
    ("fmt", "tty", "environ", "expected"),
    [
        pytest.param(None, False, {}, True, id="pipe-json"),
        pytest.param(None, True, {}, False, id="terminal-console"),
        pytest.param(None, True, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, True, id="pod-with-tty-json"),
        pytest.param("console", False, {}, False, id="asked-console"),
        pytest.param(None, True, {log.FORMAT_ENV: "json"}, True, id="env-json"),
    ],
)
def test_format_follows_terminal_pod_and_choice(
    fmt: str | None, tty: bool, environ: dict[str, str], expected: bool
) -> None:
    assert log.use_json(fmt, tty=tty, environ=environ) is expected


def test_unknown_format_names_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown log format 'xml'; use auto, json, console"):
        log.use_json("xml", tty=True, environ={})


def test_json_lines_carry_ours_and_the_libraries_records(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log.configure("info", json=True)
    structlog.get_logger("volcano_py.test").info("bound pods", count=3)
    logging.getLogger("kopf.objects").warning("handler retried")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(r["event"], r["level"], r["logger"]) for r in lines] == [
        ("bound pods", "info", "volcano_py.test"),
        ("handler retried", "warning", "kopf.objects"),
    ]
    assert lines[0]["count"] == 3 and lines[0]["timestamp"].endswith("Z")


def test_console_lines_are_plain_text(restore_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    log.configure("info", json=False)
    structlog.get_logger("volcano_py.test").info("became leader", lease="volcano-system/vc-scheduler")
    [line] = capsys.readouterr().err.splitlines()
    assert "became leader" in line and "lease=volcano-system/vc-scheduler" in line
    assert not line.startswith("{")


def test_access_log_and_kopf_signal_warning_are_dropped(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log.configure("info", json=True)
    logging.getLogger("aiohttp.access").info('127.0.0.1 "POST /validate-job HTTP/1.1" 200')
    logging.getLogger("kopf._core.reactor.running").warning(
        "OS signals are ignored: running not in the main thread."
    )
    logging.getLogger("kopf._core.reactor.running").warning("another kopf warning")
    events = [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()]
    assert events == ["another kopf warning"]


def test_kopf_reporting_each_admission_denial_as_an_error_is_dropped(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # Our handler logs the denial once ("admission denied", kind, name, problems); Kopf's ERROR line repeats
    # it as a failure. A handler that raised is still Kopf's to report.
    log.configure("info", json=True)
    kopf_objects = logging.getLogger("kopf.objects")
    kopf_objects.error("Webhook 'validate-job' failed permanently: spec.minAvailable: job 'minAvailable' ...")
    kopf_objects.error("Webhook 'validate-job' failed with an exception. Will stop.")
    kopf_objects.error("Handler 'job-changed' failed permanently: bad spec")
    events = [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()]
    assert events == [
        "Webhook 'validate-job' failed with an exception. Will stop.",
        "Handler 'job-changed' failed permanently: bad spec",
    ]


def test_debug_level_shows_the_access_log_again(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log.configure("debug", json=True)
    logging.getLogger("aiohttp.access").info("POST /mutate-job 200")
    assert [json.loads(line)["event"] for line in capsys.readouterr().err.splitlines()] == [
        "POST /mutate-job 200"
    ]


def test_bad_level_names_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown log level 'loud'; use debug, info, warning or error"):
        log.configure("loud")


def test_live_table_redraws_in_place_at_a_terminal() -> None:
    out = io.StringIO()
    live = LiveTable(out, tty=True)
    live.draw("JOB   PHASE\na     Pending\n")
    live.draw("JOB   PHASE\na     Running\n")
    # Up over the blank line and the two table lines, clear, draw again.
    assert out.getvalue() == "\nJOB   PHASE\na     Pending\n\x1b[3F\x1b[J\nJOB   PHASE\na     Running\n"


def test_live_table_starts_afresh_below_a_log_line(
    restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log.configure("info", json=True)
    out = io.StringIO()
    live = LiveTable(out, tty=True)
    live.draw("T1\n")
    structlog.get_logger("volcano_py.test").warning("something happened")
    live.draw("T2\n")
    assert out.getvalue() == "\nT1\n\nT2\n"
    assert "something happened" in capsys.readouterr().err


def test_live_table_in_a_pipe_prints_only_changes() -> None:
    out = io.StringIO()
    live = LiveTable(out, tty=False)
    for text in ("T1\n", "T1\n", "T2\n", "T2\n"):
        live.draw(text)
    assert out.getvalue() == "\nT1\n\nT2\n"
