"""Hypothesis strategies for random channels and distributions, for dpcap's tests and yours.

Requires the ``test`` extra (hypothesis); ``import dpcap`` does not import this module.

>>> from hypothesis import given
>>> from dpcap.testing import channels
>>> @given(channels(max_inputs=3))
... def test_rows_sum_to_one(W):
...     assert abs(W.sum(axis=1) - 1).max() < 1e-12
>>> test_rows_sum_to_one()
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

__all__ = ["channels", "distributions", "positive_channels"]


def _normalise(weights: list[float], zeros: list[bool] | None = None) -> NDArray[np.float64]:
    w = np.asarray(weights, dtype=np.float64)
    if zeros is not None:
        keep = ~np.asarray(zeros)
        if keep.any():
            w = np.where(keep, w, 0.0)
    out: NDArray[np.float64] = w / w.sum()
    return out


@st.composite
def distributions(
    draw: Any, size: int, *, allow_zeros: bool = True, min_mass: float = 1e-3
) -> NDArray[np.float64]:
    """A probability vector of length ``size``; with ``allow_zeros`` some entries may be 0."""
    weights = draw(st.lists(st.floats(min_mass, 1.0), min_size=size, max_size=size))
    zeros = draw(st.lists(st.booleans(), min_size=size, max_size=size)) if allow_zeros else None
    return _normalise(weights, zeros)


@st.composite
def channels(
    draw: Any,
    *,
    min_inputs: int = 2,
    max_inputs: int = 5,
    min_outputs: int = 2,
    max_outputs: int = 5,
    allow_zeros: bool = True,
) -> NDArray[np.float64]:
    """A row-stochastic matrix ``W[x, y]`` with random sizes in the given ranges."""
    nx = draw(st.integers(min_inputs, max_inputs))
    ny = draw(st.integers(min_outputs, max_outputs))
    rows = [draw(distributions(ny, allow_zeros=allow_zeros)) for _ in range(nx)]
    return np.vstack(rows)


def positive_channels(**kwargs: Any) -> Any:
    """Channels with every entry positive (finite ε-DP level)."""
    return channels(allow_zeros=False, **kwargs)
