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

__all__ = ["hockey_stick", "kl", "log", "logsumexp", "renyi", "tv"]


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


def kl(p: FloatArray, q: FloatArray) -> FloatArray:
    """``D(p‖q) = Σ_y p_y log(p_y/q_y)`` (nats)."""
    result: FloatArray = np.sum(rel_entr(p, q), axis=-1)
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
    log_ratio = xp.where(support, log(p) - log(xp.where(support, q, 1.0)), 0.0)
    if alpha == 0.0:
        mass = xp.sum(xp.where(support, q, 0.0), axis=-1)
        return -log(mass)
    if math.isinf(alpha):
        worst: FloatArray = xp.max(xp.where(support, log_ratio, -xp.inf), axis=-1)
        return worst
    c = alpha - 1.0
    meet = support & (q > 0)
    off = xp.sum(xp.where(support & ~meet, p, 0.0), axis=-1)  # mass of p where q_y = 0
    z = c * xp.where(meet, log_ratio, 0.0)
    # log 0 = -inf is the intended value when the supports are disjoint (α < 1): D_α = ∞; the
    # expm1 form of a far row may overflow, and that row takes the log-sum-exp below.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
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
