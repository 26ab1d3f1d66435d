"""Sibson's α-information and the Rényi radius: the α-capacity model for the capacity engine.

For an order ``0 < α < ∞``, ``α ≠ 1`` (Hsu et al., survey §III-A; the Rényi-capacity article),

    I_α^S(p, W) = α/(α−1) · log Σ_y (Σ_x p_x W_xy^α)^{1/α},

and the α-capacity is the Rényi radius ``C_α = max_p I_α^S(p, W) = min_Q max_x D_α(W_x ‖ Q)``.
For a prior ``p`` the minimising ``Q`` of Sibson's formula is ``Q_p ∝ (pW^α)^{1/α}``, so

    I_α^S(p, W) ≤ C_α ≤ max_x D_α(W_x ‖ Q_p)

is a certificate exactly like Shannon's (which is the case α = 1), with ``D_x(p) =
D_α(W_x ‖ Q_p)`` equal to ``C_α`` on the support of an optimal prior and below it elsewhere
(KKT). :class:`Sibson` hands these quantities, and the Jacobian ``∂D_x/∂p_z``, to the shared
engine :func:`dpcap.solvers.blahut.solve`. Everything is computed in the log domain; orders near
1 use expm1/log1p forms without cancellation.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from . import divergence

FloatArray = NDArray[np.float64]

__all__ = ["Sibson", "sibson_information"]

#: Below this distance to 1, Sibson's information is evaluated in its expm1/log1p form.
NEAR_ONE = 1e-2


def _log_s(logW: FloatArray, p: FloatArray, alpha: float) -> FloatArray:
    """``log Σ_x p_x W_xy^α`` (B, ny), −∞ for outputs no input of the support reaches."""
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
    terms = log_p[:, :, None] + alpha * logW
    with np.errstate(invalid="ignore"):  # all terms −∞ in a column: the result is −∞
        out: FloatArray = logsumexp(terms, axis=1)
    return out


def sibson_information(W: FloatArray, p: FloatArray, alpha: float) -> FloatArray:
    """``I_α^S(p, W)`` for a stack (B, nx, ny) and priors (B, nx), 0 < α < ∞, α ≠ 1."""
    logW = divergence.log(W)
    if abs(alpha - 1.0) < NEAR_ONE:
        # Σ_x p_x W^α = q_y (1 + t_y) and Σ_y (…)^{1/α} = 1 + T with t, T = O(α − 1).
        q = np.einsum("bx,bxy->by", p, W)
        z = np.where(W > 0, (alpha - 1.0) * np.where(W > 0, logW, 0.0), 0.0)
        reached = q > 0
        safe_q = np.where(reached, q, 1.0)
        t = np.einsum("bx,bxy->by", p, W * np.expm1(z)) / safe_q
        ratio = np.log1p(t) / alpha + (1.0 - alpha) / alpha * np.log(safe_q)
        total = np.sum(np.where(reached, q * np.expm1(ratio), 0.0), axis=-1)
        value: FloatArray = alpha / (alpha - 1.0) * np.log1p(total)
    else:
        log_s = _log_s(logW, p, alpha)
        value = alpha / (alpha - 1.0) * logsumexp(log_s / alpha, axis=-1)
    return np.maximum(value, 0.0)


class Sibson:
    """Engine model for the α-capacity (Rényi radius) at a fixed order α ∈ (0, 1) ∪ (1, ∞)."""

    def __init__(self, alpha: float) -> None:
        if not (0.0 < alpha < np.inf) or alpha == 1.0:
            raise ValueError(f"alpha must be in (0, 1) or (1, inf) for this model, got {alpha!r}")
        self.alpha = float(alpha)

    def prepare(self, W: FloatArray) -> FloatArray:
        """Per-element constants: ``log W`` (−∞ at zeros)."""
        return divergence.log(W)

    def _center(self, logW: FloatArray, p: FloatArray) -> tuple[FloatArray, FloatArray]:
        log_s = _log_s(logW, p, self.alpha)
        log_f = logsumexp(log_s / self.alpha, axis=-1)
        return log_s, log_f

    def divergences(self, W: FloatArray, aux: FloatArray, p: FloatArray) -> FloatArray:
        """``D_α(W_x ‖ Q_p)`` with ``Q_p ∝ (pW^α)^{1/α}``."""
        log_s, log_f = self._center(aux, p)
        Q = np.exp(log_s / self.alpha - log_f[:, None])
        return divergence.renyi(W, Q[:, None, :], self.alpha)

    def lower(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        return sibson_information(W, p, self.alpha)

    def jacobian(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        """``∂D_x/∂p_z = (1/α)[Σ_y R_zy Q_y − f e^{−(α−1)(D_x − log f)} Σ_y R_xy R_zy Q_y]``.

        With ``s = pW^α``, ``f = Σ_y s_y^{1/α}``, ``Q = s^{1/α}/f`` and ``R_xy = W_xy^α / s_y``
        (differentiate ``D_x = log T_x/(α−1) + log f``, ``T_x = Σ_y W_xy^α s_y^{(1−α)/α}``). At
        α = 1 it is Shannon's ``−Σ_y W_xy W_zy / q_y`` plus a constant column.
        """
        a = self.alpha
        log_s, log_f = self._center(aux, p)
        reached = np.isfinite(log_s)
        log_R = np.where(
            reached[:, None, :], a * aux - np.where(reached, log_s, 0.0)[:, None, :], -np.inf
        )
        R = np.exp(log_R)
        Q = np.exp(log_s / a - log_f[:, None])
        finite_D = np.where(np.isfinite(D), D, 0.0)
        weight = np.exp(a * log_f[:, None] - (a - 1.0) * finite_D)  # f e^{−(α−1)(D_x − log f)}
        cross = np.matmul(R * Q[:, None, :], R.transpose(0, 2, 1))
        J: FloatArray = (
            np.sum(R * Q[:, None, :], axis=-1)[:, None, :] - weight[:, :, None] * cross
        ) / a
        return J
