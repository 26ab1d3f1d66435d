"""Divergence kernels on probability vectors, batched over leading axes (last axis = outcomes).

Inputs are assumed valid (non-negative, summing to 1 along the last axis); the query layer checks
them. Conventions (``docs/mathematics.rst`` §8): ``0 log 0 = 0``; a positive probability
against a zero gives ∞;
orders α = 0, 1 and ∞ have exact branches, and orders near 1 are evaluated without cancellation.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import rel_entr

from . import backend

FloatArray = NDArray[np.float64]

__all__ = ["hockey_stick", "kl", "kl_terms", "log", "log_ratio", "logsumexp", "renyi", "tv"]


def log(x: FloatArray) -> FloatArray:
    """``log x`` with ``log 0 = -inf`` and no floating-point warning.

    NumPy arrays, or arrays of any array-API library (for the engine's models)."""
    if backend.is_foreign_array(x):
        xp = backend.space(x).xp
        positive = x > 0
        return xp.where(positive, xp.log(xp.where(positive, x, 1.0)), -xp.inf)  # type: ignore[no-any-return]
    out = np.full(np.shape(x), -np.inf)
    np.log(x, out=out, where=x > 0)
    return out


def logsumexp(x: FloatArray) -> FloatArray:
    """``log Σ_y e^{x_y}`` along the last axis (``−∞`` for a row of ``−∞``), shifted by the row
    maximum; the kernels' inner loops call it on small arrays, where ``scipy.special.logsumexp``
    costs more in argument handling than in arithmetic. Any array-API library's arrays too."""
    xp = backend.space(x).xp if backend.is_foreign_array(x) else np
    top = xp.max(x, axis=-1, keepdims=True)
    shift = xp.where(xp.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out: FloatArray = xp.log(xp.sum(xp.exp(x - shift), axis=-1)) + shift[..., 0]
    return out


#: Taylor coefficients of ``g(s)/s²``, ``g(s) = (1 + s) atanh(s) − s = Σ_{n≥2} c_{n−2} s^n``:
#: ``1/(n + 1)`` at even ``n``, ``1/(n + 2)`` at odd ``n`` (from ``atanh s = Σ s^{2k+1}/(2k+1)``).
#: Enough of them that the tail at ``|s| ≤ 1/2`` is below ``2⁻⁵⁸`` of the value.
_G_SERIES = tuple(1.0 / (n + 1) if n % 2 == 0 else 1.0 / (n + 2) for n in range(60))

#: Largest ``|s| = |p − q|/(p + q)`` evaluated by the series (ratios ``p/q`` in ``[1/3, 3]``).
_SERIES_LIMIT = 0.5


def kl_terms(p: FloatArray, q: FloatArray) -> FloatArray:
    """``p log(p/q) − p + q ≥ 0`` element by element: the terms of ``D(p‖q)`` as a sum of
    non-negative numbers, each to a few ulps (``docs/mathematics.rst`` §8).

    With ``s = (p − q)/(p + q)`` (so ``p = m(1 + s)``, ``q = m(1 − s)``, ``m = (p + q)/2``) a
    term is ``2m·g(s) = (p − q)·s·g(s)/s²`` with ``g(s) = (1 + s) atanh(s) − s ≈ s²``: for
    ``|s| ≤ 1/2`` it is taken from the Taylor series of ``g(s)/s²`` (:data:`_G_SERIES`, positive
    at every ``|s| ≤ 1/2``; ``p − q`` is exact there, Sterbenz), so nearly equal laws keep every
    digit; beyond (a ratio outside ``[1/3, 3]``) the closed form ``p log(p/q) − (p − q)``, whose
    two parts cancel by at most a factor 5. ``p = 0`` gives ``q``; ``q = 0 < p`` gives ∞.

    Each term is within ``32u`` relative of its value (``u = 2⁻⁵³``: ``s`` to 2 roundings,
    Horner's to about 4, each step's rounding damped by ``|s|ⁿ ≤ 2⁻ⁿ``; the closed form's
    ``rel_entr`` to 4, amplified at most 5 times; observed ≤ 5u against mpmath at 100 digits),
    down to terms in the subnormal range, whose absolute error is a few ``2⁻¹⁰⁷⁴``.
    """
    p, q = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    out = np.where(p > 0, np.inf, q)  # p = 0: the term is q; q = 0 < p: ∞
    both = (p > 0) & (q > 0)
    a, b = p[both], q[both]
    d = a - b
    s = d / (a + b)
    value = np.empty(a.shape)
    near = np.abs(s) <= _SERIES_LIMIT
    t = s[near]
    poly = np.full(t.shape, _G_SERIES[-1])
    for c in reversed(_G_SERIES[:-1]):
        poly *= t
        poly += c
    value[near] = d[near] * t * poly
    far = ~near
    value[far] = rel_entr(a[far], b[far]) - d[far]
    out[both] = np.maximum(value, 0.0)
    result: FloatArray = out
    return result


def kl(p: FloatArray, q: FloatArray) -> FloatArray:
    """``D(p‖q) = Σ_y p_y log(p_y/q_y)`` (nats), over the last axis, as a sum of non-negative
    terms.

    ``Σ_y (p_y log(p_y/q_y) − p_y + q_y)`` (:func:`kl_terms`): the same number when ``Σp = Σq``,
    without the cancellation of the plain sum, whose terms have both signs (nearly equal laws
    of divergence 1e-24 came out as 1e-16 or with 5 correct digits). For float vectors whose
    sums ``P``, ``Q`` differ by rounding it is ``P·D(p/P ‖ q/Q)`` up to ``(P − Q)²/(2P)``, so
    within ``|P − 1| + (P − Q)²`` of the divergence of the laws the vectors stand for; with exact
    sums 1 the relative error is below ``(32 + n)u``, ``n`` outcomes (``γ_n`` of the sum).
    """
    result: FloatArray = np.sum(kl_terms(p, q), axis=-1)
    return result


def log_ratio(p: FloatArray, q: FloatArray) -> FloatArray:
    """``log(p/q)`` element by element for ``p, q > 0``, to a few ulps of the *value*.

    ``log1p((p − q)/q)`` where ``p/q ∈ [1/2, 2]`` (``p − q`` exact, Sterbenz), ``log(p/q)`` where
    the quotient is a normal double, ``log p − log q`` beyond (where ``|log(p/q)| > 708``). The
    plain ``log p − log q`` carries an absolute error of ``u(|log p| + |log q|)``: at masses near
    1e-300 that is 1e-13, and a ratio ``1 + 2⁻⁵²`` came out as ``log 1 = 0``.
    """
    p, q = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ratio = p / q
        out = np.log(np.where(p > 0, p, 1.0)) - np.log(np.where(q > 0, q, 1.0))
        normal = np.isfinite(ratio) & (ratio >= np.finfo(np.float64).tiny)
        out = np.where(normal, np.log(np.where(normal, ratio, 1.0)), out)
        close = (ratio >= 0.5) & (ratio <= 2.0)
        out = np.where(close, np.log1p((p - q) / np.where(close, q, 1.0)), out)
    result: FloatArray = out
    return result


def renyi(p: FloatArray, q: FloatArray, alpha: float) -> FloatArray:
    """Rényi divergence of order α ∈ [0, ∞] (nats), over the last axis.

    ``D_α(p‖q) = 1/(α−1) · log Σ_y p_y^α q_y^{1−α}`` for α ∉ {0, 1, ∞};
    ``D_0 = −log Σ_{y: p_y>0} q_y``; ``D_1`` = KL; ``D_∞ = log max_{y: p_y>0} p_y/q_y``.

    Near α = 1 the sum is ``1 + T`` with ``T = Σ_{p_y>0} p_y·expm1((α−1)·log(p_y/q_y))``, and
    ``log1p(T)/(α−1)`` keeps full relative accuracy as α → 1; a row whose sum is far from 1
    (some ``|(α−1) log(p_y/q_y)| > 1``, or more than half of p off the support of q, where
    ``log1p(−1 + small)`` would cancel) takes a log-sum-exp instead. The choice is made row by
    row. NumPy arrays, or (α ≠ 1) arrays of any array-API library (the engine's Sibson model).
    """
    if backend.is_foreign_array(p):
        xp = backend.space(p).xp
        p, q = xp.broadcast_arrays(p, q)
    else:
        xp = np
        p, q = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    support = p > 0
    if alpha == 1.0:
        return kl(p, q)
    if alpha == 0.0:
        mass = xp.sum(xp.where(support, q, 0.0), axis=-1)
        return -log(mass)
    if xp is np:  # the ratio itself where it is a normal double: log p − log q loses digits
        meets = support & (q > 0)
        ratios = log_ratio(np.where(meets, p, 1.0), np.where(meets, q, 1.0))
        ell = np.where(meets, ratios, np.where(support, np.inf, 0.0))
    else:
        ell = xp.where(support, log(p) - log(xp.where(support, q, 1.0)), 0.0)
    if math.isinf(alpha):
        worst: FloatArray = xp.max(xp.where(support, ell, -xp.inf), axis=-1)
        return worst
    c = alpha - 1.0
    meet = support & (q > 0)
    off = xp.sum(xp.where(support & ~meet, p, 0.0), axis=-1)  # mass of p where q_y = 0
    # log 0 = -inf is the intended value when the supports are disjoint (α < 1): D_α = ∞; the
    # expm1 form of a far row may overflow, and that row takes the log-sum-exp below; at a huge
    # α, (α − 1)·log(p/q) overflows to ±∞, its limit.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        z = c * xp.where(meet, ell, 0.0)
        near = xp.all(xp.abs(z) <= 1.0, axis=-1) & (off <= 0.5)
        terms = xp.where(meet, p * xp.expm1(z), xp.where(support, -p, 0.0))
        value = xp.log1p(xp.maximum(xp.sum(terms, axis=-1), -1.0)) / c
        if not bool(xp.all(near)):
            far = logsumexp(xp.where(meet, log(p) + z, -xp.inf)) / c
            value = xp.where(near, value, far)
    if alpha > 1.0:
        value = xp.where(off > 0, xp.inf, value)  # p_y > 0 = q_y somewhere
    else:  # α < 1: D_α = ∞ exactly when the supports do not meet
        value = xp.where(xp.any(meet, axis=-1), value, xp.inf)
    if xp is np:
        result: FloatArray = np.asarray(value, dtype=np.float64) + 0.0  # 0/(α − 1) is −0.0
        return result
    return value + 0.0  # type: ignore[no-any-return]


def hockey_stick(p: FloatArray, q: FloatArray, gamma: FloatArray) -> FloatArray:
    """``E_γ(p‖q) = Σ_y (p_y − γ q_y)_+``; ``E_∞ = Σ_{y: q_y=0} p_y`` (its limit)."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    inf = np.isinf(g)
    safe = np.where(inf, 0.0, g)
    excess = np.sum(np.maximum(p - safe * q, 0.0), axis=-1)
    escaped = np.sum(np.where(q == 0, p, 0.0), axis=-1)
    result: FloatArray = np.where(inf[..., 0], escaped, excess)
    return result


def tv(p: FloatArray, q: FloatArray) -> FloatArray:
    """Total variation ``½ Σ_y |p_y − q_y|``."""
    result: FloatArray = 0.5 * np.sum(np.abs(p - q), axis=-1)
    return result
