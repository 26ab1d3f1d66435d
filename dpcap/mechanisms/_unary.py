"""Unary encodings as channels: SUE (basic one-time RAPPOR), OUE, basic RAPPOR, any (p, q).

A value ``x ∈ {0, …, k−1}`` is one-hot encoded as ``k`` bits and each bit is reported through
its own binary randomized response: bit ``x`` is reported 1 with probability ``p``, every
other bit with probability ``q``, independently. The channel has one row per value and one
column per reported bit vector: column ``y`` is the bit vector
``(b_0, …, b_{k−1}) = numpy.unravel_index(y, (2,) * k)`` — ``b_0`` (the bit of value 0) is the
most significant bit of ``y``. Its ``2^k`` columns are counted before anything is built, and
refused above dpcap's dense limit (:class:`~dpcap.errors.ProblemTooLargeError`).

All of them are pure protocols (:mod:`dpcap.mechanisms._protocols`) with ``Supp(y)`` the set
bits, ``p* = p`` and ``q* = q``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_expit

from dpcap._core import validation as check
from dpcap.channel import Channel
from dpcap.mechanisms._protocols import from_logs, level, refuse_alphabet, refuse_values, short

__all__ = [
    "basic_rappor",
    "optimized_unary_encoding",
    "symmetric_unary_encoding",
    "unary_encoding",
]

FloatArray = NDArray[np.float64]


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -math.inf


def _log1m(p: float) -> float:
    return math.log1p(-p) if p < 1 else -math.inf


def _times(count: NDArray[np.int64], log_value: float) -> FloatArray:
    """``count · log_value`` with ``0 · (−∞) = 0`` (a bit value that never occurs)."""
    if math.isinf(log_value):
        out: FloatArray = np.where(count > 0, -math.inf, 0.0)
        return out
    return np.multiply(count, log_value, dtype=np.float64)


def _unary(k: int, logs: tuple[float, float, float, float], what: str) -> Channel:
    """The unary-encoding channel from ``(log p, log(1 − p), log q, log(1 − q))``."""
    refuse_values(k, what)
    refuse_alphabet(k, float(k), f"2**{short(k)}", what, "use a smaller k (one bit per value)")
    check.dense_size(k, 2**k, what, hint="use a smaller k (one bit per value)")
    log_p1, log_p0, log_q1, log_q0 = logs
    shifts = np.arange(k - 1, -1, -1, dtype=np.int64)
    bits = (np.arange(2**k, dtype=np.int64)[None, :] >> shifts[:, None]) & 1  # (k, 2^k)
    ones = bits.sum(axis=0)[None, :]
    others_on = ones - bits  # set bits other than bit x, per row x
    others_off = (k - 1) - others_on
    own = np.where(bits == 1, log_p1, log_p0)
    return from_logs(_times(others_on, log_q1) + _times(others_off, log_q0) + own)


def unary_encoding(k: int, p: float, q: float) -> Channel:
    r"""Unary encoding UE(p, q) of Wang, Blocki, Li and Jha (2017), §4.3.

    ``W[x, y] = Π_i P(b_i | [i = x])`` with ``P(b_i = 1 | i = x) = p`` and
    ``P(b_i = 1 | i ≠ x) = q``, the bits ``(b_0, …, b_{k−1})`` of ``y`` in C order (module
    docstring).

    Parameters
    ----------
    k : int
        Number of values (and of bits), ``k >= 2``.
    p : float
        Probability of reporting the true value's bit as 1, in ``[0, 1]``.
    q : float
        Probability of reporting any other bit as 1, in ``[0, 1]``.

    Returns
    -------
    Channel
        Shape ``(k, 2^k)``, carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``p`` or ``q`` is not a probability.
    ProblemTooLargeError
        If the ``k × 2^k`` matrix is above dpcap's dense limit (``k`` beyond about 22).

    Notes
    -----
    * ε-LDP at exactly ``ε = |log(p(1 − q) / ((1 − p) q))|`` for ``0 < p, q < 1``: two values
      change two bits, and the worst report sets one and clears the other.
    * Pure protocol with ``Supp(y)`` the set bits of ``y``, ``p* = p``, ``q* = q``:
      ``Var[f̂_v] = q(1 − q)/(n(p − q)²) + f_v(1 − p − q)/(n(p − q))`` (Wang et al. 2017,
      pure protocols; counts there, frequencies here).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency
    estimation", USENIX Security 2017, §4.3.

    Examples
    --------
    >>> unary_encoding(2, 0.75, 0.25).matrix  # columns 00, 01, 10, 11
    array([[0.1875, 0.0625, 0.5625, 0.1875],
           [0.1875, 0.5625, 0.0625, 0.1875]])
    """
    k = check.integer(k, "k", minimum=2)
    p = check.probability_scalar(p, "p")
    q = check.probability_scalar(q, "q")
    logs = (_log(p), _log1m(p), _log(q), _log1m(q))
    return _unary(k, logs, f"unary_encoding(k={short(k)})")


def symmetric_unary_encoding(k: int, eps: float) -> Channel:
    r"""Symmetric unary encoding (SUE), which is basic one-time RAPPOR.

    :func:`unary_encoding` with ``p = e^{ε/2} / (e^{ε/2} + 1)`` and ``q = 1 − p``.

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞]``.

    Returns
    -------
    Channel
        Shape ``(k, 2^k)``, carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``eps`` is not in ``[0, ∞]``.
    ProblemTooLargeError
        If the ``k × 2^k`` matrix is above dpcap's dense limit.

    Notes
    -----
    * ε-LDP at exactly ε: ``log(p(1 − q)/((1 − p)q)) = 2 log(p/(1 − p)) = ε``.
    * ``Var[f̂_v] = e^{ε/2} / (n (e^{ε/2} − 1)²)`` whatever ``f_v`` (``1 − p − q = 0``; Wang
      et al. 2017, §4.3). It is :func:`basic_rappor` with ``f = 2/(e^{ε/2} + 1)``.

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized aggregatable privacy-preserving
    ordinal response", CCS 2014. T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, §4.3.

    Examples
    --------
    >>> import numpy as np
    >>> symmetric_unary_encoding(2, 2 * np.log(3.0)).matrix * 16  # p = 3/4
    array([[3., 1., 9., 3.],
           [3., 9., 1., 3.]])
    """
    k = check.integer(k, "k", minimum=2)
    eps = level(eps)
    hi, lo = float(log_expit(eps / 2)), float(log_expit(-eps / 2))
    return _unary(k, (hi, lo, lo, hi), f"symmetric_unary_encoding(k={short(k)})")


def optimized_unary_encoding(k: int, eps: float) -> Channel:
    r"""Optimised unary encoding (OUE): :func:`unary_encoding` with ``p = 1/2``,
    ``q = 1/(e^ε + 1)``.

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞]``.

    Returns
    -------
    Channel
        Shape ``(k, 2^k)``, carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``eps`` is not in ``[0, ∞]``.
    ProblemTooLargeError
        If the ``k × 2^k`` matrix is above dpcap's dense limit.

    Notes
    -----
    * ε-LDP at exactly ε: ``p(1 − q)/((1 − p)q) = (1 − q)/q = e^ε``.
    * ``Var[f̂_v] = 4e^ε / (n (e^ε − 1)²) + f_v (1 − p − q)/(n(p − q))``; the first term is the
      smallest ``Var*`` of any unary encoding at level ε (Wang et al. 2017, §4.3).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, §4.3.

    Examples
    --------
    >>> import numpy as np
    >>> optimized_unary_encoding(2, np.log(3.0)).matrix * 8  # p = 1/2, q = 1/4
    array([[3., 1., 3., 1.],
           [3., 3., 1., 1.]])
    """
    k = check.integer(k, "k", minimum=2)
    eps = level(eps)
    half = -math.log(2.0)
    logs = (half, half, float(log_expit(-eps)), float(log_expit(eps)))
    return _unary(k, logs, f"optimized_unary_encoding(k={short(k)})")


def basic_rappor(k: int, f: float, *, p: float = 0.0, q: float = 1.0) -> Channel:
    r"""Basic RAPPOR on ``k`` values: one-hot bits, each through two binary randomized responses.

    The permanent randomized response keeps each bit w.p. ``1 − f`` and replaces it by a fair
    coin otherwise; the instantaneous randomized response (IRR) then reports 1 w.p. ``q`` if
    that bit is 1 and ``p`` if it is 0 (Erlingsson et al.'s notation — not the ``p``, ``q`` of
    :func:`unary_encoding`). The default ``p = 0``, ``q = 1`` turns the IRR off: basic
    *one-time* RAPPOR, which is :func:`symmetric_unary_encoding`. The composed bit channel
    reports a true 1 as 1 w.p. ``q₁ = (f/2)p + (1 − f/2)q`` and a true 0 as 1 w.p.
    ``p₁ = (1 − f/2)p + (f/2)q`` (their ``q*`` and ``p*``), so this is
    ``unary_encoding(k, q₁, p₁)``.

    Parameters
    ----------
    k : int
        Number of values (Bloom filter of ``k`` bits, one hash function), ``k >= 2``.
    f : float
        Probability of replacing a bit by a fair coin, in ``[0, 1]``.
    p, q : float, keyword-only
        The IRR's probabilities of reporting 1 for a 0 and for a 1, in ``[0, 1]``.

    Returns
    -------
    Channel
        Shape ``(k, 2^k)``, bit vectors as in :func:`unary_encoding`, carrying
        ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``f``, ``p`` or ``q`` is not a probability.
    ProblemTooLargeError
        If the ``k × 2^k`` matrix is above dpcap's dense limit.

    Notes
    -----
    * ε-LDP of one report at exactly ``ε₁ = |log(q₁(1 − p₁) / (p₁(1 − q₁)))|`` (Erlingsson
      et al., with ``h = 1`` hash function); without IRR, ``ε = 2 log((1 − f/2)/(f/2))``, their
      ``ε_∞`` of the permanent response.
    * ``Var[f̂_v] = p₁(1 − p₁)/(n(q₁ − p₁)²) + f_v(1 − p₁ − q₁)/(n(q₁ − p₁))`` (Wang et al.
      2017, pure protocols with ``p* = q₁``, ``q* = p₁``).

    References
    ----------
    Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR: Randomized aggregatable privacy-preserving
    ordinal response", CCS 2014. T. Wang, J. Blocki, N. Li, S. Jha,
    USENIX Security 2017.

    Examples
    --------
    >>> basic_rappor(2, 0.5).matrix * 16  # a bit survives w.p. 3/4
    array([[3., 1., 9., 3.],
           [3., 9., 1., 3.]])
    """
    k = check.integer(k, "k", minimum=2)
    f = check.probability_scalar(f, "f")
    p = check.probability_scalar(p, "p")
    q = check.probability_scalar(q, "q")
    one = 0.5 * f * p + (1.0 - 0.5 * f) * q  # P(report 1 | true bit 1)
    zero = (1.0 - 0.5 * f) * p + 0.5 * f * q  # P(report 1 | true bit 0)
    logs = (_log(one), _log1m(one), _log(zero), _log1m(zero))
    return _unary(k, logs, f"basic_rappor(k={short(k)})")
