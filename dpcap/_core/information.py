"""Kernels of the α-informations shared by the measure modules (nats, validated inputs).

Mutual information, Sibson's α-information and the "naive" α-information
``D_α(P_XY ‖ P_X P_Y)`` of a prior and a channel, in the log domain, with the exact branches
α = 0, 1, ∞ and the expm1/log1p form near α = 1 (``docs/mathematics.rst`` §4 and §8), and the
exponential mean that turns per-context values into conditional ones. Inputs are assumed valid:
the public functions check them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

from dpcap._core import validation as check
from dpcap.errors import PriorError
from dpcap.solvers import divergence

__all__ = [
    "exponential_mean",
    "joint_law",
    "log_mixture",
    "naive_renyi_mi",
    "shannon_mi",
    "sibson",
    "weighted_kl",
]


def weighted_kl(
    weights: check.FloatArray,
    rows: check.FloatArray,
    mixture: Any,
    log_mixture: Any = None,
) -> float:
    """``Σ w · D(row ‖ mixture)`` over the rows, rows of weight 0 contributing 0 (not 0·∞).

    Each divergence is summed as ``Σ_y (row log(row/mixture) − row + mixture)``, of
    non-negative terms each to a few ulps (:func:`dpcap.solvers.divergence.kl_terms`): the
    same value for laws, and no cancellation when the rows are nearly the mixture (a channel
    close to constant, whose I(X;Y) of 1e-17 the plain sum of terms of both signs returned as 0
    or with one digit). It also cancels, to first order, the rounding ``δ_y`` (relative, at
    most ``γ_n`` for n rows) of the mixture itself: ``Σ_x w_x Σ_y δ_y (mixture_y − row_xy) = 0``
    for ``mixture = Σ_x w_x row_x``, and the second order leaves ``Σ_y mixture_y δ_y²/2 ≤
    γ_n²/2``. So the value is within ``(32 + k)u`` relative (k outputs) plus ``γ_n²/2``
    absolute (about 1e-32) of the information of the stored laws.

    Where a mixture entry underflowed to 0 under a positive row entry (masses near 1e-300),
    its term ``row · (log row − log mixture) − row`` is taken from ``log_mixture()``, the
    mixture's logarithm computed in the log domain: the true mixture is positive there."""
    terms = divergence.kl_terms(rows, mixture)
    lost = (rows > 0) & (np.asarray(mixture) == 0) & (weights > 0)
    if log_mixture is not None and lost.any():
        logs = np.broadcast_to(log_mixture(), terms.shape)
        with np.errstate(invalid="ignore"):
            exact = rows * (divergence.log(rows) - logs - 1.0)
        terms = np.where(lost, exact, terms)
    sums = np.where(weights > 0, np.sum(terms, axis=-1, keepdims=True), 0.0)
    return max(float(np.sum(weights * sums)), 0.0)


def log_mixture(log_weights: check.FloatArray, rows: check.FloatArray) -> Any:
    """``log Σ_x w_x rows_x`` along axis −2 from ``log w`` (shape ``(..., m, 1)``), no underflow."""
    with np.errstate(divide="ignore"):
        return logsumexp(log_weights + divergence.log(rows), axis=-2, keepdims=True)


def shannon_mi(p: check.FloatArray, matrix: check.FloatArray) -> float:
    weights = p[:, None]
    return weighted_kl(
        weights, matrix, p @ matrix, lambda: log_mixture(divergence.log(weights), matrix)
    )


def sibson(
    p: check.FloatArray,
    matrix: check.FloatArray,
    alpha: float,
    log_p: check.FloatArray | None = None,
) -> float:
    """Sibson's α-information; ``log_p`` (optional) is ``log p``, kept where p underflowed."""
    if log_p is None:
        log_p = divergence.log(p)
    support = log_p > -np.inf
    rows, weights, log_weights = matrix[support], p[support], log_p[support]
    if alpha == 1.0:
        column = log_weights[:, None]
        return weighted_kl(
            weights[:, None], rows, weights @ rows, lambda: log_mixture(column, rows)
        )
    if alpha == 0.0:
        return max(-math.log(float(np.max(weights @ (rows > 0)))), 0.0) + 0.0
    if math.isinf(alpha):
        return float(math.log(float(np.sum(np.max(rows, axis=0)))))
    column = np.any(rows > 0, axis=0)
    rows = rows[:, column]
    logs = divergence.log(rows)
    if abs(alpha - 1.0) < 1e-2:
        # Near α = 1 every quantity is 1 + O(α − 1): write Σ_x p_x W^α = q_y (1 + t_y) and
        # Σ_y (…)^{1/α} = 1 + T, and keep t and T in expm1/log1p form (no cancellation).
        q = weights @ rows
        kept = q > 0  # (a column held only by underflowed tilted masses weighs nothing)
        rows, logs, q = rows[:, kept], logs[:, kept], q[kept]
        z = np.where(rows > 0, (alpha - 1.0) * np.where(rows > 0, logs, 0.0), 0.0)
        t = (weights @ (rows * np.expm1(z))) / q
        ratio = np.log1p(t) / alpha + (1.0 - alpha) / alpha * np.log(q)
        total = float(np.sum(q * np.expm1(ratio)))
        return max(alpha / (alpha - 1.0) * math.log1p(total), 0.0)
    # log Σ_x p_x W_xy^α per output, then the 1/α power sum, all in the log domain:
    # α/(α−1) · log Σ_y exp(inner_y/α) = m/(α−1) + α/(α−1) · log Σ_y exp((inner_y − m)/α),
    # m = max inner, which for a subnormal α tends to its limit −m = I_0 without overflow.
    inner = logsumexp(alpha * logs + log_weights[:, None], axis=0)
    top = float(np.max(inner))
    with np.errstate(over="ignore"):
        spread = (inner - top) / alpha
    value = top / (alpha - 1.0) + alpha / (alpha - 1.0) * float(logsumexp(spread))
    return max(value, 0.0)


def naive_renyi_mi(p: check.FloatArray, matrix: check.FloatArray, alpha: float) -> float:
    """``D_α(P_XY ‖ P_X P_Y)`` in the log domain: the ratio of the two laws at (x, y) is
    ``W_xy / q_y`` (p_x cancels), so no product ``p_x q_y`` is formed, and it underflows
    nowhere. ``D_α = 1/(α−1) log Σ_{x,y} P_XY(x,y) (W_xy/q_y)^{α−1}``, ``D_0 = −log Σ_x p_x
    Σ_{y: W_xy > 0} q_y``, ``D_∞ = max log(W_xy/q_y)`` over the support of P_XY."""
    if alpha == 1.0:
        return shannon_mi(p, matrix)
    support = p > 0
    rows, weights = matrix[support], p[support]
    q = weights @ rows
    if alpha == 0.0:
        mass = float(weights @ ((rows > 0) @ q))
        return max(-math.log(min(mass, 1.0)), 0.0) + 0.0
    log_w = np.log(weights)[:, None]
    log_rows = divergence.log(rows)
    log_q = log_mixture(log_w, rows)  # (1, |Y|), finite wherever some W_xy > 0
    positive = rows > 0
    with np.errstate(invalid="ignore"):
        log_ratio = np.where(positive, log_rows - log_q, 0.0)
    if math.isinf(alpha):
        return max(float(np.max(log_ratio[positive])), 0.0) + 0.0
    z = (alpha - 1.0) * log_ratio
    if np.max(np.abs(z)) <= 1.0:  # near α = 1: Σ P_XY expm1(z), no cancellation
        joint = np.exp(log_w + np.where(positive, log_rows, 0.0))
        total = float(np.sum(np.where(positive, joint * np.expm1(z), 0.0)))
        value = math.log1p(total) / (alpha - 1.0)
    else:
        logs = np.where(positive, log_w + log_rows + z, -np.inf)
        value = float(logsumexp(logs)) / (alpha - 1.0)
    return max(value, 0.0) + 0.0


def joint_law(value: Any, ndim: int, layout: str) -> check.FloatArray:
    """Validate a joint law ``joint`` with ``ndim`` axes (``layout`` names them in the message):
    the one rule for numbers (:func:`dpcap._core.validation.numeric`), then
    :func:`dpcap._core.validation.law`; a :class:`~dpcap.result.PriorError` otherwise."""
    arr = check.numeric(value, "joint", PriorError)  # ragged, complex, strings: named errors
    if arr.ndim != ndim:
        raise PriorError(
            f"joint must be a {ndim}-D array {layout}, got an array of shape {arr.shape}"
        )
    return check.law(arr, "joint")


def exponential_mean(weights: check.FloatArray, values: check.FloatArray, c: float) -> float:
    """``(1/c) log Σ_z w_z e^{c v_z}`` over the ``w_z > 0``: the arithmetic mean at ``c = 0``,
    ``max v`` at ``c = +∞`` and ``min v`` at ``c = −∞`` (its limits).

    Near ``c v = 0`` the sum is ``1 + Σ w expm1(c v)`` and ``log1p`` keeps every digit; elsewhere
    a log-sum-exp is used. ``values`` are finite.
    """
    keep = weights > 0
    w, v = weights[keep], values[keep]
    if c == 0.0:
        return float(np.sum(w * v))
    if math.isinf(c):
        return float(np.max(v) if c > 0 else np.min(v))
    z = c * v
    if float(np.max(np.abs(z))) <= 1.0:
        return math.log1p(float(np.sum(w * np.expm1(z)))) / c
    return float(logsumexp(np.log(w) + z)) / c
