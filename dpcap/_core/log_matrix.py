"""The log matrix a channel carries where its entries underflow (``docs/mathematics.rst`` §8).

Its validation against the matrix (:func:`log_probabilities`) and the log matrix of a product of
channels (:func:`log_product`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.errors import ChannelError
from dpcap.solvers import divergence, rounding

__all__ = ["LOG_ATOL", "MAX_LOG_PRODUCT_TERMS", "TINY", "log_probabilities", "log_product"]

FloatArray = NDArray[np.float64]

#: The smallest positive normal double (about 2.2e-308). A probability below it is held as 0 or
#: as a subnormal, and its value is lost to underflow (``docs/mathematics.rst`` §8).
TINY = rounding.SMALLEST_NORMAL

#: Largest ``|log_matrix − log W|`` allowed where ``W`` is a normal double (1e-8 relative on W).
LOG_ATOL = 1e-8

#: Most terms ``log W[x, y] + log V[y, z]`` summed to recompute the underflowed entries of a
#: product of channels; beyond it the product carries no log matrix.
MAX_LOG_PRODUCT_TERMS = 2**26

_CHUNK = 2**20  # elements per chunk of the log-matrix passes (bounded temporaries)


def log_probabilities(value: Any, W: FloatArray, name: str = "log_matrix") -> FloatArray | None:
    """Validate a log matrix against the row-stochastic ``W``; ``None`` if it adds nothing.

    It must have the shape of ``W``, no NaN, no entry above :data:`LOG_ATOL` (a probability
    above 1), and agree with ``W``: within :data:`LOG_ATOL` of ``log W`` where ``W`` is a normal
    double, at most ``log TINY + LOG_ATOL`` where ``W`` is 0 or subnormal (the matrix lost that
    value), and ``−∞`` only where ``W`` is 0. It is kept (a read-only copy) only if some entry
    below :data:`TINY` has a finite log: otherwise ``log W`` says the same.

    Raises
    ------
    ChannelError
        Naming the first entry that breaks a rule, with both values.
    """
    if value is None:
        return None
    L = np.array(check.numeric(value, name, ChannelError), dtype=np.float64)
    if L.shape != W.shape:
        raise ChannelError(f"{name} must have the shape of W {W.shape}, got {L.shape}")
    ceiling = math.log(TINY) + LOG_ATOL
    informative = False
    step = max(1, _CHUNK // max(1, W.shape[1]))
    for start in range(0, W.shape[0], step):
        w, lw = W[start : start + step], L[start : start + step]
        normal = w >= TINY
        with np.errstate(divide="ignore", invalid="ignore"):
            bad = np.isnan(lw) | (lw > LOG_ATOL) | ((w > 0) & np.isneginf(lw))
            bad |= normal & ~(np.abs(lw - np.log(w)) <= LOG_ATOL)
        bad |= ~normal & (lw > ceiling)
        if bad.any():
            r, c = (int(v) for v in np.argwhere(bad)[0])
            raise ChannelError(
                f"{name} disagrees with W at index {(start + r, c)}: W = {float(w[r, c])!r}, "
                f"{name} = {float(lw[r, c])!r}; it must be log W within {LOG_ATOL:g} where W "
                f"is a normal double, at most log({TINY!r}) where W is below it, and -inf only "
                "where W is 0"
            )
        informative = informative or bool((~normal & np.isfinite(lw)).any())
    if not informative:
        return None
    L.setflags(write=False)
    return L


def log_product(
    W: FloatArray, V: FloatArray, log_w: FloatArray | None, log_v: FloatArray | None
) -> tuple[FloatArray, FloatArray | None]:
    """``P = W @ V`` and its log matrix where ``P`` lost terms to underflow (else ``None``).

    An entry of ``P`` below ``|Y| · TINY · 2^53`` may have lost terms (entries of the factors,
    or their products, below :data:`TINY`) of relative size above ``2^-53``. Such entries, where
    some term is positive in exact arithmetic, are recomputed as
    ``log Σ_y exp(log W[x, y] + log V[y, z])`` from the log matrices (``log W`` for a factor
    without one), and ``P`` gets their exponentials. Above :data:`MAX_LOG_PRODUCT_TERMS` terms
    the log matrix is dropped: ``P`` is then read as it is (its zeros as zeros).
    """
    product = W @ V
    n_mid = W.shape[1]
    small = n_mid * TINY * 2.0**53
    thin = product < small
    if not thin.any():
        return product, None
    if log_w is None and log_v is None:
        low_w = float(W[W > 0].min(initial=1.0))
        low_v = float(V[V > 0].min(initial=1.0))
        if low_w * low_v >= small:  # no positive term of the product is that small
            return product, None
    lw = divergence.log(W) if log_w is None else log_w
    lv = divergence.log(V) if log_v is None else log_v
    support = (np.isfinite(lw).astype(np.float64) @ np.isfinite(lv).astype(np.float64)) > 0
    rows, cols = np.nonzero(thin & support)
    if len(rows) == 0 or len(rows) * n_mid > MAX_LOG_PRODUCT_TERMS:
        return product, None
    L = divergence.log(product)
    lv_t = np.ascontiguousarray(lv.T)
    step = max(1, _CHUNK // max(1, n_mid))
    for start in range(0, len(rows), step):
        r, c = rows[start : start + step], cols[start : start + step]
        terms = lw[r] + lv_t[c]
        top = terms.max(axis=1)  # finite: (r, c) is in the support
        terms -= top[:, None]
        np.exp(terms, out=terms)
        L[r, c] = top + np.log(terms.sum(axis=1))
    product[rows, cols] = np.exp(L[rows, cols])
    return product, L
