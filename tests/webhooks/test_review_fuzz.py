"""Any bytes at all given to the AdmissionReview decoder: a review with every field we read, or
``ReviewError``, never another exception; and over HTTPS the webhook answers 200 or a 400 with a message,
never a 500."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.webhooklib import WebhookThread, job_review
from tests import hostile
from volcano_py.webhooks.review import (
    OPERATIONS,
    AdmissionReview,
    GroupVersionResource,
    ReviewError,
    decode_review,
)

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OVER_HTTPS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*prefix, index)
            yield from _paths(child, (*prefix, index))


VALID = job_review("uid-fuzz")
JOBS = GroupVersionResource("batch.volcano.sh", "v1alpha1", "jobs")
PATHS = sorted(_paths(VALID), key=repr)


@st.composite
def mutated_reviews(draw: st.DrawFn) -> bytes:
    """A valid Job review with one field, anywhere in it, replaced by any JSON value or removed."""
    review = copy.deepcopy(VALID)
    path = draw(st.sampled_from(PATHS))
    parent: Any = review
    for key in path[:-1]:
        parent = parent[key]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return json.dumps(review).encode()


bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda value: json.dumps(value).encode()),
    mutated_reviews(),
    st.integers(min_value=1, max_value=3000).map(lambda depth: b"[" * depth + b"]" * depth),
)


def _decodes_or_refuses(body: bytes) -> AdmissionReview | ReviewError:
    try:
        return decode_review(body)
    except ReviewError as err:
        return err


@FUZZ
@given(bodies)
def test_any_body_decodes_or_raises_our_one_error(body: bytes) -> None:
    outcome = _decodes_or_refuses(body)
    if isinstance(outcome, ReviewError):
        assert str(outcome)
        return
    request = outcome.raw["request"]
    assert outcome.uid == request["uid"] != ""
    assert outcome.operation in OPERATIONS
    assert isinstance(request["userInfo"], dict)
    assert any(isinstance(request.get(key), dict) for key in ("object", "oldObject"))


def test_the_valid_review_decodes_into_its_fields() -> None:
    review = decode_review(json.dumps(VALID).encode())
    assert (review.uid, review.operation, review.resource) == ("uid-fuzz", "CREATE", JOBS)
    assert (review.name, review.namespace) == ("bench", "default")


@pytest.fixture(scope="module")
def webhook() -> Iterator[WebhookThread]:
    server = WebhookThread().start_serving()
    yield server
    server.stop()


@OVER_HTTPS
@given(body=bodies)
def test_the_webhook_answers_any_body_with_200_or_a_400_that_says_why(
    webhook: WebhookThread, body: bytes
) -> None:
    head = (
        "POST /validate-job HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    answer = hostile.exchange(webhook.port, head.encode() + body, tls=webhook.client_tls)
    status, text = hostile.status_of(answer), answer.partition(b"\r\n\r\n")[2]
    outcome = _decodes_or_refuses(body)
    # Decoded, it still must be a Job's to reach the handlers of /validate-job.
    expected = 200 if isinstance(outcome, AdmissionReview) and outcome.resource == JOBS else 400
    assert status == expected, text
    assert text.strip()
