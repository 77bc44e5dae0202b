"""Hostile clients against the admission webhook's real HTTPS server (``AdmissionEndpoint`` with Kopf's engine
and our handlers, on the controller's event loop, in a thread of its own), with short timeouts: what each
client sees, that the server goes on answering, and that each refusal is logged once."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.webhooklib import WebhookThread, job, job_review
from tests import hostile
from volcano_py.controllers.runtime.context import ControllerOptions
from volcano_py.kube.serving import ServingLimits
from volcano_py.webhooks.endpoint import MAX_REVIEW_BYTES
from volcano_py.webhooks.review import MAX_DEPTH

LIMITS = ServingLimits(
    max_body_bytes=MAX_REVIEW_BYTES, header_timeout=1.0, body_timeout=1.0, handshake_timeout=1.0, linger=0.5
)
IDLE_CONNECTIONS = 1000
# Some 50 KB per silent TLS connection is uvloop's and OpenSSL's own (a bare uvloop TLS server with an empty
# protocol grows the same 49 MB for 1,000), held until the handshake timeout; asyncio's loop takes 100-300 KB.
RSS_GROWTH_BOUND = 64 * 1024 * 1024
# What Kubernetes waits for a webhook by default; ours are installed with 5 s.
API_SERVER_PATIENCE = 10.0


@pytest.fixture(scope="module")
def webhook() -> Iterator[WebhookThread]:
    # The controller's own event loop: what a flood of connections costs depends on it.
    server = WebhookThread(LIMITS, event_loop=ControllerOptions().event_loop).start_serving()
    yield server
    server.stop()


def _request(path: str, body: bytes, content_type: str = "application/json", method: str = "POST") -> bytes:
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def _post(
    webhook: WebhookThread, path: str, body: bytes, content_type: str = "application/json"
) -> tuple[int, str]:
    answer = hostile.exchange(webhook.port, _request(path, body, content_type), tls=webhook.client_tls)
    return hostile.status_of(answer), answer.partition(b"\r\n\r\n")[2].decode(errors="replace")


def _refusals(logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entry for entry in logs if entry["event"] == "request refused"]


def test_a_valid_job_review_is_admitted_and_an_invalid_job_denied_in_our_words(
    webhook: WebhookThread,
) -> None:
    status, body = _post(webhook, "/validate-job", json.dumps(job_review("uid-1")).encode())
    assert status == 200
    assert json.loads(body)["response"] == {"uid": "uid-1", "allowed": True}
    bad = job()
    bad["spec"]["minAvailable"] = 99
    status, body = _post(webhook, "/validate-job", json.dumps(job_review("uid-2", bad)).encode())
    answer = json.loads(body)["response"]
    assert (status, answer["allowed"], answer["status"]["code"]) == (200, False, 400)
    assert "spec.minAvailable" in answer["status"]["message"]


def test_a_large_job_update_under_3_mib_is_decided(webhook: WebhookThread) -> None:
    # An UPDATE carries the object twice: a Job with 700 KB of annotations makes a 1.4 MB review, which Kopf's
    # server refused (aiohttp's 1 MiB), failing the update under failurePolicy Fail.
    big = job()
    big["metadata"]["annotations"] = {"notes": "a" * 700_000}
    status, body = _post(webhook, "/validate-job", json.dumps(job_review("uid-big", big, "UPDATE")).encode())
    assert status == 200
    assert json.loads(body)["response"] == {"uid": "uid-big", "allowed": True}


def _review(**request: Any) -> bytes:
    review = job_review("uid-x")
    review["request"].update(request)
    return json.dumps({key: value for key, value in review.items() if value is not None}).encode()


def _without(*path: str) -> bytes:
    """A valid review with the field at ``path`` removed."""
    review = job_review("uid-x")
    node: Any = review
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return json.dumps(review).encode()


MALFORMED = [
    pytest.param(b"not json", "not JSON", id="not-json"),
    pytest.param(b"\xff\xfe\x00garbage", "not JSON", id="not-utf8"),
    pytest.param(b"[1, 2, 3]", "the body: must be a JSON object, found a JSON array", id="array"),
    pytest.param(b"9" * 5000, "not JSON", id="5000-digit-number"),
    pytest.param(b"[" * 100_000, f"deeper than {MAX_DEPTH}", id="100000-deep"),
    pytest.param(
        json.dumps({**job_review("uid-x"), "x": json.loads("[" * 150 + "]" * 150)}).encode(),
        f"deeper than {MAX_DEPTH}",
        id="150-deep-inside",
    ),
    pytest.param(json.dumps({**job_review("u"), "apiVersion": "admission.k8s.io/v1beta1"}).encode(),
                 "apiVersion: must be 'admission.k8s.io/v1'", id="wrong-apiVersion"),
    pytest.param(json.dumps({**job_review("u"), "kind": "Job"}).encode(), "kind: must be 'AdmissionReview'",
                 id="wrong-kind"),
    pytest.param(_without("request"), "request: must be a JSON object",
                 id="no-request"),
    pytest.param(_without("request", "uid"), "request.uid: must be a string",
                 id="no-uid"),
    pytest.param(_review(uid=""), "request.uid is empty", id="empty-uid"),
    pytest.param(_review(uid=7), "request.uid: must be a string, found a JSON number", id="uid-number"),
    pytest.param(_review(operation="PATCH"), "request.operation 'PATCH'", id="bad-operation"),
    pytest.param(_without("request", "resource", "group"),
                 "request.resource.group: must be a string", id="no-resource-group"),
    pytest.param(_without("request", "userInfo"), "request.userInfo: must be",
                 id="no-userInfo"),
    pytest.param(_review(object=None, oldObject=None), "request.oldObject are both missing",
                 id="no-object"),
    pytest.param(_review(object=[]), "request.object: must be a JSON object, found a JSON array",
                 id="object-array"),
    pytest.param(_review(object={"kind": "Job"}), "request.object.metadata: must be a JSON object",
                 id="object-without-metadata"),
    pytest.param(_review(dryRun="yes"), "request.dryRun: must be true or false", id="dryRun-string"),
    pytest.param(_review(resource={"group": "apps", "version": "v1", "resource": "deployments"}),
                 "request.resource apps/v1/deployments: /validate-job admits batch.volcano.sh/v1alpha1/jobs",
                 id="another-resource"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "message"), MALFORMED)
def test_a_malformed_review_gets_400_naming_what_is_wrong_logged_once(
    webhook: WebhookThread, body: bytes, message: str
) -> None:
    with hostile.logged() as logs:
        status, text = _post(webhook, "/validate-job", body)
    assert status == 400, text
    assert message in text
    refusals = _refusals(logs)
    assert len(refusals) == 1, logs
    assert refusals[0]["peer"] == "127.0.0.1" and message in refusals[0]["reason"]
    assert not [entry for entry in logs if entry.get("exc_info") or entry["log_level"] == "error"], logs


@pytest.mark.parametrize(
    ("path", "content_type", "status", "message"),
    [
        pytest.param("/validate-job", "text/plain", 415, "sent as application/json", id="text-plain"),
        pytest.param("/validate-job", "application/x-www-form-urlencoded", 415, "sent as application/json",
                     id="form"),
        pytest.param("/no-such-hook", "application/json", 404, "ours are /mutate-job", id="unknown-path"),
    ],
)  # fmt: skip
def test_a_wrong_path_or_content_type_is_refused_with_what_would_do(
    webhook: WebhookThread, path: str, content_type: str, status: int, message: str
) -> None:
    with hostile.logged() as logs:
        answer = _post(webhook, path, json.dumps(job_review("u")).encode(), content_type)
    assert answer[0] == status and message in answer[1]
    assert len(_refusals(logs)) == 1


def test_a_20_mb_body_is_refused_with_413_before_it_is_read(webhook: WebhookThread) -> None:
    head = _request("/validate-job", b"")
    head = head.replace(b"Content-Length: 0", b"Content-Length: %d" % (20 * 1024 * 1024))
    began = time.monotonic()
    with hostile.logged() as logs:
        _, _, answer = hostile.trickle(
            webhook.port, b"{" * 64, interval=0.01, tls=webhook.client_tls, head=head + b"{" * 65536
        )
    assert hostile.status_of(answer) == 413
    assert b"larger than this server reads (3145728 bytes)" in answer
    assert time.monotonic() - began < 3
    assert len(_refusals(logs)) == 1


def test_a_chunked_body_is_cut_off_at_3_mib_with_413(webhook: WebhookThread) -> None:
    head = (
        b"POST /validate-job HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    chunk = b"%x\r\n%s\r\n" % (1024 * 1024, b" " * 1024 * 1024)
    # The request is built before the baseline, so the growth measured is the exchange's (the whole test
    # process's RSS: the server runs in a thread of it).
    request = head + chunk * 4 + b"0\r\n\r\n"
    before = hostile.rss_bytes()
    with hostile.logged() as logs:
        answer = hostile.exchange(webhook.port, request, tls=webhook.client_tls)
    assert hostile.status_of(answer) == 413
    assert hostile.rss_bytes() - before < 20 * 1024 * 1024
    assert len(_refusals(logs)) == 1


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(webhook: WebhookThread) -> None:
    head = _request("/validate-job", b"{}")
    sent, seconds, _ = hostile.trickle(webhook.port, head, interval=0.1, tls=webhook.client_tls)
    assert sent < len(head)
    assert seconds < LIMITS.header_timeout + 2


def test_a_body_sent_a_byte_at_a_time_gets_408(webhook: WebhookThread) -> None:
    body = json.dumps(job_review("uid-slow")).encode()
    with hostile.logged() as logs:
        sent, seconds, answer = hostile.trickle(
            webhook.port,
            body,
            interval=0.1,
            tls=webhook.client_tls,
            head=_request("/validate-job", body)[: -len(body)],
        )
    assert hostile.status_of(answer) == 408
    assert b"did not arrive within 1 s" in answer
    assert sent < len(body) and seconds < LIMITS.body_timeout + 3
    assert len(_refusals(logs)) == 1


def test_a_thousand_silent_connections_neither_stop_admission_nor_hold_memory(webhook: WebhookThread) -> None:
    # One request first, so what the first admission loads (modules, Kopf's engine) is not counted as theirs.
    assert _post(webhook, "/validate-job", json.dumps(job_review("uid-warm")).encode())[0] == 200
    before = hostile.rss_bytes()
    idle = hostile.connect_idle(webhook.port, IDLE_CONNECTIONS)  # TCP only: not even a TLS handshake
    try:
        began = time.monotonic()
        status, body = _post(webhook, "/validate-job", json.dumps(job_review("uid-busy")).encode())
        assert (status, json.loads(body)["response"]["allowed"]) == (200, True)
        assert time.monotonic() - began < API_SERVER_PATIENCE
        grown = hostile.rss_bytes() - before
        assert grown < RSS_GROWTH_BOUND
        assert hostile.closed_by_server(idle, LIMITS.handshake_timeout + 5) == IDLE_CONNECTIONS
    finally:
        hostile.close_all(idle)
    status, _ = _post(webhook, "/validate-job", json.dumps(job_review("uid-after")).encode())
    assert status == 200
