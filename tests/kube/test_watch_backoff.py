import random

import pytest

from volcano_py.kube.backoff import Backoff


def test_delays_grow_to_the_cap_and_reset_starts_over() -> None:
    backoff = Backoff(initial=0.5, factor=2, maximum=4, jitter=0, rng=random.Random(1))
    assert [backoff.next_delay() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    backoff.reset()
    assert backoff.next_delay() == 0.5


def test_jitter_stays_within_its_band() -> None:
    backoff = Backoff(initial=1, factor=1, maximum=1, jitter=0.5, rng=random.Random(7))
    delays = [backoff.next_delay() for _ in range(200)]
    assert all(0.5 <= d <= 1.0 for d in delays)
    assert len(set(delays)) > 100  # actually spread, not a constant


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        pytest.param({"initial": 0}, "initial", id="zero-initial"),
        pytest.param({"factor": 0.5}, "factor", id="shrinking-factor"),
        pytest.param({"initial": 5, "maximum": 1}, "maximum", id="max-below-initial"),
        pytest.param({"jitter": 2}, "jitter", id="jitter-above-one"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Backoff(**kwargs)  # type: ignore[arg-type]
