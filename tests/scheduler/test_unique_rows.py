"""unique_rows groups node-table rows exactly as np.unique(axis=0) does, collisions of its hash included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from volcano_py.scheduler.framework import nodetable
from volcano_py.scheduler.framework.nodetable import unique_rows

_tables = st.tuples(st.integers(1, 60), st.integers(1, 8)).flatmap(
    lambda shape: hnp.arrays(np.int64, shape, elements=st.integers(-3, 3))
)


@settings(max_examples=200, deadline=None)
@given(_tables)
def test_same_classes_and_order_as_numpy(keys: np.ndarray) -> None:
    expected, expected_inverse = np.unique(keys, axis=0, return_inverse=True)
    unique, inverse = unique_rows(keys)
    assert np.array_equal(unique, expected)
    assert np.array_equal(inverse, expected_inverse.ravel())


def test_a_hash_collision_falls_back_to_exact_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = np.array([[1, 2], [3, 4], [1, 2], [5, 6]], dtype=np.int64)
    # Every row hashes alike: the check must notice and group by the rows themselves.
    monkeypatch.setattr(nodetable, "_hash_weights", lambda width: np.zeros(width, dtype=np.int64))
    unique, inverse = unique_rows(keys)
    assert unique.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert inverse.tolist() == [0, 1, 0, 2]
