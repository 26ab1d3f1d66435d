"""The engine's reductions over a last axis (``backend.Space.max/min/sum/any/all``).

Short axes are reduced column by column in NumPy: the results must be NumPy's own (exactly for
max, min, any and all; for sums within the summation bound ``γ_n Σ|x|``, any order being valid),
with NaN and infinities propagated as NumPy propagates them, and NumPy's dtypes (a sum of
booleans counts them).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpcap.solvers import backend
from dpcap.solvers.rounding import gamma

NP = backend.NUMPY

values = st.floats(allow_nan=True, allow_infinity=True, width=64)
tables = st.integers(1, 12).flatmap(
    lambda n: arrays(np.float64, st.tuples(st.integers(1, 30), st.just(n)), elements=values)
)


@settings(max_examples=200, deadline=None)
@given(tables)
def test_max_min_any_all_are_numpys(x: np.ndarray) -> None:
    np.testing.assert_array_equal(NP.max(x), np.max(x, axis=-1))
    np.testing.assert_array_equal(NP.min(x), np.min(x, axis=-1))
    np.testing.assert_array_equal(NP.max(x, keepdims=True), np.max(x, axis=-1, keepdims=True))
    np.testing.assert_array_equal(NP.any(x > 0), np.any(x > 0, axis=-1))
    np.testing.assert_array_equal(NP.all(x > 0), np.all(x > 0, axis=-1))


moderate = st.integers(1, 12).flatmap(
    lambda n: arrays(
        np.float64,
        st.tuples(st.integers(1, 30), st.just(n)),
        elements=st.floats(-1e300, 1e300, allow_nan=False, width=64),
    )
)


@settings(max_examples=200, deadline=None)
@given(moderate)
def test_sums_are_within_the_summation_bound(x: np.ndarray) -> None:
    ours, theirs = NP.sum(x), np.sum(x, axis=-1)
    bound = 2 * gamma(x.shape[-1]) * np.sum(np.abs(x), axis=-1)
    assert np.all(np.abs(ours - theirs) <= bound)


def test_sums_propagate_nan_and_infinities() -> None:
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [np.inf, -np.inf, 1.0], [-np.inf, 0, 0]])
    with np.errstate(invalid="ignore"):  # NumPy's reduction warns for ∞ − ∞; ours is quiet
        np.testing.assert_array_equal(NP.sum(x), np.sum(x, axis=-1))


def test_dtypes_follow_numpy() -> None:
    """Sums of booleans count (a column-wise bool sum would be a logical or); any/all of
    numbers are booleans."""
    x = np.array([[True, True, False], [False, False, False]])
    np.testing.assert_array_equal(NP.sum(x), [2, 0])
    y = np.array([[0.0, 2.0], [0.0, 0.0]])
    assert NP.any(y).dtype == np.bool_
    np.testing.assert_array_equal(NP.any(y), [True, False])
    np.testing.assert_array_equal(NP.all(y), [False, False])


def test_long_axes_and_other_libraries_use_the_library_reduction() -> None:
    x = np.arange(40.0).reshape(2, 20)
    np.testing.assert_array_equal(NP.sum(x), np.sum(x, axis=-1))
    strict = __import__("pytest").importorskip("array_api_strict")
    space = backend.space(strict.asarray(x))
    assert float(space.max(strict.asarray(x))[1]) == 39.0
    assert float(space.sum(strict.asarray(x[:, :4]))[0]) == 6.0
