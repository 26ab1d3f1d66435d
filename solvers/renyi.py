"""Sibson's α-information and the Rényi radius: the α-capacity model for the capacity engine.

For an order ``0 < α < ∞``, ``α ≠ 1`` (Hsu et al., survey §III-A; ``docs/mathematics.rst`` §4),

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

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from . import divergence

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = ["Sibson", "augustin_information", "sibson_information"]

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


def _logsumexp(x: FloatArray) -> FloatArray:
    """``log Σ exp`` over the last axis (plain numpy: scipy's version costs ~70 µs a call)."""
    top = np.max(x, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out: FloatArray = np.log(np.sum(np.exp(x - top), axis=-1)) + top[..., 0]
    return out


class _Scaled:
    """``W^α`` with each column scaled by its largest entry: ``W_xy^α = c_y^α · B_xy``.

    ``B`` has entries in [0, 1] with a 1 in every non-zero column, so ``pB`` never underflows
    for a prior of full support, even at large α; ``log c`` carries the scale.
    """

    __slots__ = ("B", "log_B", "log_c")

    def __init__(self, B: FloatArray, log_c: FloatArray, log_B: FloatArray) -> None:
        self.B = B
        self.log_c = log_c
        self.log_B = log_B  # exact even where B underflows (large α)

    def __getitem__(self, idx: IntArray) -> _Scaled:
        return _Scaled(self.B[idx], self.log_c[idx], self.log_B[idx])


class Sibson:
    """Engine model for the α-capacity (Rényi radius) at a fixed order α ∈ (0, 1) ∪ (1, ∞).

    With ``s = pW^α = c^α ⊙ (pB)`` (:class:`_Scaled`), ``f = Σ_y s_y^{1/α}`` and the radius centre
    ``Q = s^{1/α}/f``, every quantity is one matrix product and a few logs of length |Y|:
    ``D_x = (1/(α−1)) log Σ_y B_xy c_y^α Q_y^{1−α}``, ``I_α^S = α/(α−1) log f``. Orders within
    1e-2 of 1 switch to the expm1/log1p forms of :func:`sibson_information` and
    :func:`dpcap.solvers.divergence.renyi`.
    """

    def __init__(self, alpha: float) -> None:
        if not (0.0 < alpha < np.inf) or alpha == 1.0:
            raise ValueError(f"alpha must be in (0, 1) or (1, inf) for this model, got {alpha!r}")
        self.alpha = float(alpha)
        self.near_one = abs(self.alpha - 1.0) < NEAR_ONE
        self._cache: tuple[_Scaled, FloatArray, tuple[FloatArray, FloatArray, FloatArray]] | None
        self._cache = None

    def prepare(self, W: FloatArray) -> _Scaled:
        """Per-element constants: the column-scaled ``W^α``."""
        c = W.max(axis=1)  # (B, ny)
        positive = c > 0
        safe = np.where(positive, c, 1.0)
        log_B = np.where(
            W > 0, self.alpha * (divergence.log(W) - np.log(safe)[:, None, :]), -np.inf
        )
        log_c = np.where(positive, np.log(safe), -np.inf)
        return _Scaled(np.exp(log_B), log_c, log_B)

    def _center(self, aux: _Scaled, p: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(t = pB, log s, log f)``, remembered for the last ``(aux, p)`` pair.

        The engine asks for the divergences, the lower bound and the Jacobian at the same
        prior in a row; the cache holds references to both arrays, so an identity match is
        safe (neither can be freed and its address reused while cached).
        """
        cached = self._cache
        if cached is not None and cached[0] is aux and cached[1] is p:
            return cached[2]
        t = np.einsum("bx,bxy->by", p, aux.B)
        with np.errstate(divide="ignore"):
            log_s = self.alpha * aux.log_c + np.log(t)
        center = (t, log_s, _logsumexp(log_s / self.alpha))
        self._cache = (aux, p, center)
        return center

    def divergences(self, W: FloatArray, aux: _Scaled, p: FloatArray) -> FloatArray:
        """``D_α(W_x ‖ Q_p)`` with ``Q_p ∝ (pW^α)^{1/α}``."""
        a = self.alpha
        _, log_s, log_f = self._center(aux, p)
        log_Q = log_s / a - log_f[:, None]
        if self.near_one:
            return divergence.renyi(W, np.exp(log_Q)[:, None, :], a)
        reached = np.isfinite(log_Q)
        # Σ_y W_xy^α Q_y^{1−α} = Σ_y B_xy exp(α log c_y + (1−α) log Q_y), shifted by its max
        log_v = np.where(
            reached, a * aux.log_c + (1.0 - a) * np.where(reached, log_Q, 0.0), -np.inf
        )
        top = np.max(log_v, axis=-1, keepdims=True)
        v = np.exp(log_v - top)
        total = np.einsum("bxy,by->bx", aux.B, v)
        with np.errstate(divide="ignore"):
            log_total = np.log(total) + top
        meets = np.einsum("bxy,by->bx", np.isfinite(aux.log_B), reached) > 0
        lost = (total == 0) & meets
        if lost.any():
            # every term of the row underflowed (tiny Q at small α, or W^α itself at large α):
            # redo those rows as a full log-sum-exp, which is exact whatever the scale
            log_total = np.where(lost, _logsumexp(aux.log_B + log_v[:, None, :]), log_total)
        D: FloatArray = log_total / (a - 1.0)
        if a > 1.0 and not reached.all():  # mass where Q_y = 0: D_α = ∞
            escapes = np.einsum("bxy,by->bx", np.isfinite(aux.log_B), ~reached) > 0
            D = np.where(escapes, np.inf, D)
        return D

    def lower(self, W: FloatArray, aux: _Scaled, p: FloatArray, D: FloatArray) -> FloatArray:
        if self.near_one:
            return sibson_information(W, p, self.alpha)
        _, _, log_f = self._center(aux, p)
        value: FloatArray = np.maximum(self.alpha / (self.alpha - 1.0) * log_f, 0.0)
        return value

    def jacobian(self, W: FloatArray, aux: _Scaled, p: FloatArray, D: FloatArray) -> FloatArray:
        """``∂D_x/∂p_z = (1/α)[Σ_y R_zy Q_y − f e^{−(α−1)(D_x − log f)} Σ_y R_xy R_zy Q_y]``.

        With ``s = pW^α``, ``f = Σ_y s_y^{1/α}``, ``Q = s^{1/α}/f`` and ``R_xy = W_xy^α / s_y =
        B_xy / (pB)_y`` (differentiate ``D_x = log T_x/(α−1) + log f``,
        ``T_x = Σ_y W_xy^α s_y^{(1−α)/α}``). At α = 1 it is Shannon's ``−Σ_y W_xy W_zy / q_y``
        plus a constant column.
        """
        a = self.alpha
        t, log_s, log_f = self._center(aux, p)
        # Subnormal masses (1/t = ∞) and extreme orders (overflowing weights) make the
        # Jacobian non-finite; the engine then skips that Newton step for the element
        # (see blahut._solve), so these floating-point events are expected here.
        with np.errstate(over="ignore", invalid="ignore"):
            inv_t = np.where(t > 0, 1.0 / np.where(t > 0, t, 1.0), 0.0)
            R = aux.B * inv_t[:, None, :]
            Q = np.exp(log_s / a - log_f[:, None])
            finite_D = np.where(np.isfinite(D), D, 0.0)
            weight = np.exp(a * log_f[:, None] - (a - 1.0) * finite_D)  # f e^{−(α−1)(D − log f)}
            RQ = R * Q[:, None, :]
            cross = np.matmul(RQ, R.transpose(0, 2, 1))
            J: FloatArray = (np.sum(RQ, axis=-1)[:, None, :] - weight[:, :, None] * cross) / a
        return J


def augustin_information(
    p: FloatArray, W: FloatArray, alpha: float, *, tol: float, max_iter: int
) -> tuple[float, float, FloatArray, int]:
    """Augustin–Csiszár α-information ``min_Q F(Q)``, ``F(Q) = Σ_x p_x D_α(W_x ‖ Q)``.

    ``F`` is convex in ``Q`` (Rényi divergence is convex in its second argument, van Erven and
    Harremoës 2014, Thm 12), so at any ``Q`` in the simplex the linearisation gives the lower
    bound ``F(Q) + min_y ∂_yF − Σ_y Q_y ∂_yF = F(Q) + 1 + min_y ∂_yF`` (``Σ_y Q_y ∂_yF = −1``).
    ``Q`` is improved by Newton steps on the simplex with an Armijo backtracking line search
    that keeps ``Q > 0`` (Augustin's plain fixed point ``Q ← Σ_x p_x W_x^{(α)}`` oscillates and
    diverges for α ≳ 2). With ``A_xy = W_xy^α Q_y^{1−α}/S_x`` (the tilted rows):

        ∂_yF = −Σ_x p_x A_xy / Q_y,
        ∂²_{yz}F = α δ_yz Σ_x p_x A_xy / Q_y² + (1−α) Σ_x p_x (A_xy/Q_y)(A_xz/Q_z).

    Returns ``(F(Q), certified gap, Q, iterations)``; the caller decides what a gap means.
    """
    keep = p > 0
    rows, weights = W[keep], p[keep]
    cols = rows.sum(axis=0) > 0
    rows = rows[:, cols]
    logW = divergence.log(rows)
    a = float(alpha)

    def evaluate(Q: FloatArray) -> tuple[float, FloatArray, FloatArray]:
        T = np.where(rows > 0, a * logW + (1.0 - a) * np.log(Q), -np.inf)
        log_S = _logsumexp(T)
        A = np.exp(T - log_S[:, None])
        return float(weights @ log_S) / (a - 1.0), A, log_S

    Q = weights @ rows
    Q = Q / Q.sum()
    F, A, _ = evaluate(Q)
    gap, it = math.inf, 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        ratio = A / Q  # A_xy / Q_y
        grad = -(weights @ ratio)
        gap = max(-(1.0 + float(grad.min())), 0.0)
        if gap <= tol:
            break
        H = a * np.diag(weights @ (ratio / Q)) + (1.0 - a) * (ratio.T * weights) @ ratio
        n = len(Q)
        K = np.zeros((n + 1, n + 1))
        K[:n, :n], K[:n, n], K[n, :n] = H, 1.0, 1.0
        try:
            step = np.linalg.solve(K, np.r_[-grad, 0.0])[:n]
        except np.linalg.LinAlgError:
            step = np.full(n, np.nan)
        if not np.all(np.isfinite(step)) or grad @ step >= 0:
            step = (weights @ A) - Q  # the fixed-point direction, damped by the line search
        t = 1.0
        negative = step < 0
        if negative.any():
            t = min(1.0, 0.99 * float(np.min(-Q[negative] / step[negative])))
        slope = float(grad @ step)
        if abs(slope) <= 1e-13 * (1.0 + abs(F)):
            # the predicted decrease is below F's rounding: F can no longer rank the steps, so
            # take the (interior) Newton step and let the certified gap judge it
            trial = np.maximum(Q + t * step, 0.0)
            Q = trial / trial.sum()
            F, A, _ = evaluate(Q)
            continue
        while t > 1e-16:
            trial = Q + t * step
            trial = np.maximum(trial, 0.0)
            trial = trial / trial.sum()
            F_trial, A_trial, _ = evaluate(trial)
            if np.isfinite(F_trial) and F_trial <= F + 1e-4 * t * slope + 1e-15 * abs(F):
                Q, F, A = trial, F_trial, A_trial
                break
            t *= 0.5
        else:
            break  # no decrease possible at working precision: report the certified gap
    return F, gap, Q, it
