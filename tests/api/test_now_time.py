"""``now_time``: this moment as a metav1.Time is written, whichever second it is asked in."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from volcano_py.api import common


def test_now_time_is_this_second_written_as_a_metav1_time(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_796_000_000.2]
    monkeypatch.setattr(common.time, "time", lambda: clock[0])
    first = common.now_time()
    assert first == datetime.fromtimestamp(1_796_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    clock[0] += 0.5
    assert common.now_time() == first  # the same second
    clock[0] += 0.6
    assert common.now_time() == datetime.fromtimestamp(1_796_000_001, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
