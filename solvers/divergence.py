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
    """Rényi divergence of order α ∈ [0, ∞] (nats).

    ``D_α(p‖q) = 1/(α−1) · log Σ_y p_y^α q_y^{1−α}`` for α ∉ {0, 1, ∞};
    ``D_0 = −log Σ_{y: p_y>0} q_y``; ``D_1`` = KL; ``D_∞ = log max_{y: p_y>0} p_y/q_y``.

    Near α = 1 the sum is ``1 + T`` with ``T = Σ_{p_y>0} p_y·expm1((α−1)·log(p_y/q_y))``, and
    ``log1p(T)/(α−1)`` keeps full relative accuracy as α → 1; elsewhere a log-sum-exp is used.
    """
    p, q = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    support = p > 0
    if alpha == 1.0:
        return kl(p, q)
    log_ratio = np.where(support, log(p) - log(np.where(support, q, 1.0)), 0.0)
    if alpha == 0.0:
        mass = np.sum(np.where(support, q, 0.0), axis=-1)
        return -log(mass)
    if math.isinf(alpha):
        worst: FloatArray = np.max(np.where(support, log_ratio, -np.inf), axis=-1)
        return worst
    escapes = np.any(support & (q == 0), axis=-1)  # p_y > 0 = q_y somewhere
    finite = np.where(support & (q > 0), log_ratio, 0.0)
    z = (alpha - 1.0) * finite
    # The expm1/log1p form is exact only when the sum is near 1: no order far from 1, and (for
    # α < 1) little of p off the support of q — otherwise log1p(−1 + small) cancels.
    off = np.sum(np.where(support & (q == 0), p, 0.0), axis=-1)
    # log 0 = -inf is the intended value when the supports are disjoint (α < 1): D_α = ∞.
    with np.errstate(divide="ignore"):
        if np.max(np.abs(z), initial=0.0) <= 1.0 and np.max(off, initial=0.0) <= 0.5:
            terms = np.where(support & (q > 0), p * np.expm1(z), np.where(support, -p, 0.0))
            value = np.log1p(np.sum(terms, axis=-1)) / (alpha - 1.0)
        else:
            logs = np.where(support & (q > 0), log(p) + z, -np.inf)
            value = logsumexp(logs) / (alpha - 1.0)
    if alpha > 1.0:
        value = np.where(escapes, np.inf, value)
    else:  # α < 1: D_α = ∞ exactly when the supports do not meet
        value = np.where(np.any(support & (q > 0), axis=-1), value, np.inf)
    result: FloatArray = np.asarray(value, dtype=np.float64) + 0.0  # 0/(α − 1) < 0 is −0.0
    return result


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
