r"""Gain and loss matrices: validation and the vulnerability evaluators shared by the QIF queries.

A gain matrix ``G[w, x]`` has one row per guess (action) ``w`` and one column per secret ``x``
(``docs/mathematics.rst`` §9); a loss matrix ``L[w, x]`` has the same layout. ``None`` stands for
the identity gain (Bayes vulnerability) or the 0-1 loss (Bayes risk). Validation follows
:mod:`dpcap._core.validation`: every message names the argument and echoes the value.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.errors import ParameterError

__all__ = [
    "as_gain",
    "check_work",
    "gains_per_output",
    "identity",
    "posterior_vulnerability",
    "strategy",
    "vulnerability",
    "zero_one_loss",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def identity(n: int) -> FloatArray:
    """The identity gain ``g(w, x) = 1[w = x]`` on ``n`` secrets (Bayes vulnerability)."""
    return np.eye(n)


def zero_one_loss(n: int) -> FloatArray:
    """The 0-1 loss ``ℓ(w, x) = 1[w ≠ x]`` on ``n`` secrets (Bayes risk)."""
    return 1.0 - np.eye(n)


def as_gain(value: Any, n: int, name: str = "gain", *, nonnegative: bool = False) -> FloatArray:
    """Validate a gain (or loss) matrix ``(n_guesses, n_secrets)`` with ``n_secrets = n``.

    Refused with a :class:`~dpcap.result.ParameterError` naming ``name``: the input kinds
    :func:`dpcap._core.validation.numeric` refuses (strings, bools, complex, ragged lists), arrays
    that are not 2-D or have another number of columns or no row, NaN and infinite entries,
    and, with ``nonnegative``, negative entries. ``None`` is for the caller to map to the
    identity gain or the 0-1 loss. The result is a fresh, read-only ``float64`` array.
    """
    arr = check.real_array(value, name)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != n:
        raise ParameterError(
            f"{name} must be a 2-D matrix {name}[w, x] with one row per guess and one column "
            f"per secret ({n}), got shape {arr.shape}"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ParameterError(f"{name} must be finite, got {float(arr[where])!r} at index {where}")
    if nonnegative and (arr < 0).any():
        where = tuple(int(i) for i in np.argwhere(arr < 0)[0])
        raise ParameterError(f"{name} has a negative entry {float(arr[where])!r} at index {where}")
    arr.setflags(write=False)
    return arr


def check_work(n_guesses: int, n_secrets: int, n_outputs: int, what: str) -> None:
    """Refuse an evaluation whose ``n_guesses × n_outputs`` table (built from ``n_secrets``
    terms each) is above dpcap's dense limit, before building it."""
    check.dense_size(
        n_guesses * n_secrets,
        n_outputs,
        what,
        hint="use a gain with fewer guesses, or merge outputs of the channel",
    )


def bayes_posterior(p: FloatArray, W: FloatArray) -> float:
    """``V_1[π▷W] = Σ_y max_x π_x W[x, y]``, the identity gain without forming it."""
    return float(np.sum(np.max(p[:, None] * W, axis=0)))


def vulnerability(p: FloatArray, G: FloatArray) -> float:
    """``V_g(π) = max_w Σ_x π_x G[w, x]``."""
    return float(np.max(G @ p))


def gains_per_output(p: FloatArray, W: FloatArray, G: FloatArray) -> FloatArray:
    """``A[w, y] = Σ_x π_x W[x, y] G[w, x]``: the expected gain of guess w jointly with y."""
    out: FloatArray = G @ (p[:, None] * W)
    return out


def posterior_vulnerability(p: FloatArray, W: FloatArray, G: FloatArray) -> float:
    """``V_g[π▷W] = Σ_y max_w Σ_x π_x W[x, y] G[w, x]``."""
    return float(np.sum(np.max(gains_per_output(p, W, G), axis=0)))


def strategy(p: FloatArray, W: FloatArray, G: FloatArray) -> IntArray:
    """An optimal guess per output (the first maximiser; 0 for an output of probability 0)."""
    out: IntArray = np.argmax(gains_per_output(p, W, G), axis=0).astype(np.int64)
    return out
