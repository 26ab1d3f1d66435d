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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import backend, divergence, rounding

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "Sibson",
    "augustin_information",
    "radius_cap",
    "sibson_information",
]

#: Unit roundoff of float64.
U = rounding.U  # the unit roundoff, from the one home of rounding constants

#: Largest change of any ``log Q_y`` in one step of :func:`augustin_information`.
MAX_LOG_STEP = 30.0

#: Below this distance to 1, Sibson's information is evaluated in its expm1/log1p form.
NEAR_ONE = 1e-2


def _log_s(logW: FloatArray, p: FloatArray, alpha: float) -> FloatArray:
    """``log Σ_x p_x W_xy^α`` (B, ny), −∞ for outputs no input of the support reaches."""
    sp = backend.space(p)
    terms = divergence.log(p)[:, :, None] + alpha * logW
    with np.errstate(invalid="ignore"):  # all terms −∞ in a column: the result is −∞
        return divergence.logsumexp(sp.mT(terms))


def sibson_information(W: FloatArray, p: FloatArray, alpha: float) -> FloatArray:
    """``I_α^S(p, W)`` for a stack (B, nx, ny) and priors (B, nx), 0 < α < ∞, α ≠ 1.

    NumPy arrays, or arrays of any array-API library (:mod:`dpcap.solvers.backend`)."""
    sp = backend.space(W)
    xp = sp.xp
    logW = divergence.log(W)
    if abs(alpha - 1.0) < NEAR_ONE:
        # Σ_x p_x W^α = q_y (1 + t_y) and Σ_y (…)^{1/α} = 1 + T with t, T = O(α − 1).
        q = sp.vecmat(p, W)
        z = xp.where(W > 0, (alpha - 1.0) * xp.where(W > 0, logW, 0.0), 0.0)
        reached = q > 0
        safe_q = xp.where(reached, q, 1.0)
        t = sp.vecmat(p, W * xp.expm1(z)) / safe_q
        ratio = xp.log1p(t) / alpha + (1.0 - alpha) / alpha * xp.log(safe_q)
        total = xp.sum(xp.where(reached, q * xp.expm1(ratio), 0.0), axis=-1)
        value: FloatArray = alpha / (alpha - 1.0) * xp.log1p(total)
    else:
        log_s = _log_s(logW, p, alpha)
        value = alpha / (alpha - 1.0) * divergence.logsumexp(log_s / alpha)
    return xp.maximum(value, 0.0)  # type: ignore[no-any-return]


class _Scaled:
    """``W^α`` with each column scaled by its largest entry: ``W_xy^α = c_y^α · B_xy``.

    ``B`` has entries in [0, 1] with a 1 in every non-zero column, so ``pB`` never underflows
    for a prior of full support, even at large α; ``log c`` carries the scale.
    """

    __slots__ = ("B", "log_B", "log_c")

    def __init__(self, B: Any, log_c: Any, log_B: Any) -> None:
        self.B = B  # arrays of NumPy or of another array-API library
        self.log_c = log_c
        self.log_B = log_B  # exact even where B underflows (large α)

    def inputs(self, idx: IntArray) -> _Scaled:
        """The constants of the inputs ``idx`` (host indices) of every element: the rows of
        ``B`` and ``log B`` (the column scale ``c`` is the whole channel's)."""
        if isinstance(self.B, np.ndarray):
            return _Scaled(self.B[:, idx], self.log_c, self.log_B[:, idx])
        at = backend.space(self.B).index(idx)
        xp = backend.space(self.B).xp
        return _Scaled(xp.take(self.B, at, axis=1), self.log_c, xp.take(self.log_B, at, axis=1))

    def __getitem__(self, idx: IntArray) -> _Scaled:
        """Elements ``idx`` (an index array of the arrays' own library)."""
        if isinstance(self.B, np.ndarray):
            return _Scaled(self.B[idx], self.log_c[idx], self.log_B[idx])
        take = backend.space(self.B).take
        return _Scaled(take(self.B, idx), take(self.log_c, idx), take(self.log_B, idx))


class Sibson:
    """Engine model for the α-capacity (Rényi radius) at a fixed order α ∈ (0, 1) ∪ (1, ∞).

    With ``s = pW^α = c^α ⊙ (pB)`` (:class:`_Scaled`), ``f = Σ_y s_y^{1/α}`` and the radius centre
    ``Q = s^{1/α}/f``, every quantity is one matrix product and a few logs of length |Y|:
    ``D_x = (1/(α−1)) log Σ_y B_xy c_y^α Q_y^{1−α}``, ``I_α^S = α/(α−1) log f``. Orders within
    1e-2 of 1 switch to the expm1/log1p forms of :func:`sibson_information` and
    :func:`dpcap.solvers.divergence.renyi`.
    Every method works on NumPy arrays or on those of any array-API library
    (:mod:`dpcap.solvers.backend`), as the engine's Shannon model does.
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
        xp = backend.space(W).xp
        c = xp.max(W, axis=1)  # (B, ny)
        positive = c > 0
        log_c = divergence.log(c)
        safe = xp.where(positive, log_c, 0.0)
        log_B = xp.where(W > 0, self.alpha * (divergence.log(W) - safe[:, None, :]), -xp.inf)
        return _Scaled(xp.exp(log_B), log_c, log_B)

    def _center(self, aux: _Scaled, p: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(t = pB, log s, log f)``, remembered for the last ``(aux, p)`` pair.

        The engine asks for the divergences, the lower bound and the Jacobian at the same
        prior in a row; the cache holds references to both arrays, so an identity match is
        safe (neither can be freed and its address reused while cached).
        """
        cached = self._cache
        if cached is not None and cached[0] is aux and cached[1] is p:
            return cached[2]
        t = backend.space(p).vecmat(p, aux.B)
        log_s = self.alpha * aux.log_c + divergence.log(t)
        center = (t, log_s, divergence.logsumexp(log_s / self.alpha))
        self._cache = (aux, p, center)
        return center

    def divergences(self, W: FloatArray, aux: _Scaled, p: FloatArray) -> FloatArray:
        """``D_α(W_x ‖ Q_p)`` with ``Q_p ∝ (pW^α)^{1/α}``."""
        sp = backend.space(W)
        xp = sp.xp
        a = self.alpha
        _, log_s, log_f = self._center(aux, p)
        log_Q = log_s / a - log_f[:, None]
        if self.near_one:
            return divergence.renyi(W, xp.exp(log_Q)[:, None, :], a)
        reached = xp.isfinite(log_Q)
        every = bool(xp.all(reached))
        # Σ_y W_xy^α Q_y^{1−α} = Σ_y B_xy exp(α log c_y + (1−α) log Q_y), shifted by its max
        if every:
            log_v = a * aux.log_c + (1.0 - a) * log_Q
        else:  # outputs no input of the support reaches (zero columns among them): −∞
            log_v = xp.where(
                reached, a * aux.log_c + (1.0 - a) * xp.where(reached, log_Q, 0.0), -xp.inf
            )
        top = xp.max(log_v, axis=-1, keepdims=True)
        total = sp.matvec(aux.B, xp.exp(log_v - top))
        log_total = divergence.log(total) + top
        lost = total == 0
        if bool(xp.any(lost)):
            # every term of the row underflowed (tiny Q at small α, or W^α itself at large α):
            # redo those rows as a full log-sum-exp, which is exact whatever the scale, unless
            # the row meets no output of Q at all (its sum is then truly 0)
            meets = sp.matvec(sp.float64(xp.isfinite(aux.log_B)), sp.float64(reached)) > 0
            exact = divergence.logsumexp(aux.log_B + log_v[:, None, :])
            log_total = xp.where(lost & meets, exact, log_total)
        D: FloatArray = log_total / (a - 1.0)
        if a > 1.0 and not every:  # mass where Q_y = 0: D_α = ∞
            escapes = sp.matvec(sp.float64(xp.isfinite(aux.log_B)), sp.float64(~reached)) > 0
            D = xp.where(escapes, xp.inf, D)
        return D

    def lower(self, W: FloatArray, aux: _Scaled, p: FloatArray, D: FloatArray) -> FloatArray:
        if self.near_one:
            return sibson_information(W, p, self.alpha)
        xp = backend.space(p).xp
        _, _, log_f = self._center(aux, p)
        value: FloatArray = xp.maximum(self.alpha / (self.alpha - 1.0) * log_f, 0.0)
        return value

    def jacobian(self, W: FloatArray, aux: _Scaled, p: FloatArray, D: FloatArray) -> FloatArray:
        """``∂D_x/∂p_z = (1/α)[Σ_y R_zy Q_y − f e^{−(α−1)(D_x − log f)} Σ_y R_xy R_zy Q_y]``.

        With ``s = pW^α``, ``f = Σ_y s_y^{1/α}``, ``Q = s^{1/α}/f`` and ``R_xy = W_xy^α / s_y =
        B_xy / (pB)_y`` (differentiate ``D_x = log T_x/(α−1) + log f``,
        ``T_x = Σ_y W_xy^α s_y^{(1−α)/α}``). At α = 1 it is Shannon's ``−Σ_y W_xy W_zy / q_y``
        plus a constant column. With ``u = Q/t`` it is ``(1/α)[Bu − w ⊙ (B diag(u/t) Bᵀ)]``:
        one product of the size of the channel and one of the Jacobian's.
        """
        sp = backend.space(W)
        xp = sp.xp
        a = self.alpha
        t, log_s, log_f = self._center(aux, p)
        # Subnormal masses (1/t = ∞) and extreme orders (overflowing weights) make the
        # Jacobian non-finite; the engine then skips that Newton step for the element
        # (see blahut._solve), so these floating-point events are expected here.
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            positive = t > 0
            inv_t = xp.where(positive, 1.0 / xp.where(positive, t, 1.0), 0.0)
            u = xp.exp(log_s / a - log_f[:, None]) * inv_t  # Q_y / t_y
            finite_D = xp.where(xp.isfinite(D), D, 0.0)
            weight = xp.exp(a * log_f[:, None] - (a - 1.0) * finite_D)  # f e^{−(α−1)(D − log f)}
            cross = xp.matmul(aux.B * (u * inv_t)[:, None, :], sp.mT(aux.B))
            J: FloatArray = (sp.matvec(aux.B, u)[:, None, :] - weight[:, :, None] * cross) / a
        return J


def radius_cap(W: FloatArray) -> float:
    """An upper bound on ``C_α`` valid for every order: ``C_∞ = log Σ_y max_x W_xy``, rounded up.

    ``α ↦ C_α`` is non-decreasing and ``C_∞`` is the closed form above (``docs/mathematics.rst``
    §4); ``Σ_y max_x W_xy ≤ min(|X|, |Y|)`` (each column's maximum is at most 1, and at most its
    column sum), so the cap is at most ``log min(|X|, |Y|)``. Both are returned rounded *up*, for
    the channel whose rows are ``W_x`` divided by their exact sums ``s_x``: the float sum of ``k``
    non-negative terms is within a relative ``k·u`` of the exact one, a logarithm within 1 ulp,
    and dividing by ``s_x ≥ 1 − σ`` (``σ`` the largest ``|s_x − 1|``, itself within ``k·u``)
    raises the sum by at most a factor ``1/(1 − σ)``; so ``log Ŝ − log(1 − σ) + ε(|log Ŝ| + 2k +
    2)`` (ε the machine epsilon) bounds ``C_∞``, and the next float above ``log min(|X|, |Y|)``
    bounds that.
    """
    eps = float(np.finfo(np.float64).eps)
    k = int(W.shape[1])
    total = float(np.sum(np.max(W, axis=0)))
    sigma = float(np.max(np.abs(W.sum(axis=1) - 1.0)))
    if not (total > 0 and sigma < 0.5):
        return math.inf
    log_total = math.log(total)
    infinity = log_total - math.log1p(-sigma) + eps * (abs(log_total) + 2 * k + 2)
    trivial = math.nextafter(math.log(min(int(W.shape[0]), k)), math.inf)
    return float(min(infinity, trivial))


def augustin_information(
    p: FloatArray, W: FloatArray, alpha: float, *, tol: float, max_iter: int, rtol: float = 0.0
) -> tuple[float, float, FloatArray, int]:
    """Augustin–Csiszár α-information ``min_Q F(Q)``, ``F(Q) = Σ_x p_x D_α(W_x ‖ Q)``.

    ``F`` is convex in ``Q`` (Rényi divergence is convex in its second argument, van Erven and
    Harremoës 2014, Thm 12; ``docs/mathematics.rst`` §4), so at any ``Q`` in the simplex the
    linearisation gives the lower bound ``F(Q) + min_y ∂_yF − Σ_y Q_y ∂_yF``. With the tilted rows
    ``A_xy = W_xy^α Q_y^{1−α}/S_x`` (``S_x = Σ_y W_xy^α Q_y^{1−α}``), ``∂_yF = −(pA)_y/Q_y`` and
    ``Σ_y Q_y ∂_yF = −Σ_x p_x``, so the certified gap is

        gap(Q) = max_y (pA)_y / Q_y − Σ_x p_x,

    zero exactly at Augustin's fixed point ``Q = pA``. Everything is computed in the variables
    ``u = log Q`` (normalised): the gap's ratios as ``exp(log (pA)_y − u_y)``, with no ``1/Q_y``
    (masses of 1e-184 gave ``1/Q² = ∞`` and a stalled gap), and the steps in ``u`` too. There
    ``G(u) = F(e^u/Σe^u)`` has the gradient ``g = Q − pA`` and the Hessian

        H = (α − 1) Σ_x p_x (diag A_x − A_x A_xᵀ) + diag Q − Q Qᵀ,

    positive semi-definite for α > 1 (``G`` is then convex: log-sum-exps of affine functions).
    Each step is a Newton step (``H d = −g``, ``Σ d = 0``, Jacobi-scaled) on the coordinates where
    ``H`` has not underflowed and Augustin's step ``d_y = log (pA)_y − u_y`` on the others; when
    the Newton step is no descent direction (α < 1, where ``G`` need not be convex), the whole
    step is Augustin's, always a descent direction (``g·d = −Σ (pA − Q)(log pA − log Q) ≤ 0``,
    and for α < 1 a majorise–minimise step). A backtracking line search accepts a step when
    ``G`` decreases by Armijo's rule, the change of ``G`` computed by expm1/log1p so that tiny
    masses keep their digits, or when the certified gap decreases.

    Returns ``(F(Q), certified gap, Q, iterations)`` at the iterate with the least gap seen, with
    ``Q`` on all of ``W``'s outputs (0 where no row of positive weight has mass); the caller
    decides what a gap means. The iteration stops once that gap is ``≤ max(tol, rtol·|F(Q)|)``.
    """
    keep = p > 0
    rows, weights = W[keep], p[keep]
    cols = np.flatnonzero(rows.max(axis=0) > 0)
    problem = _Augustin(rows[:, cols], weights, float(alpha))
    u = problem.start()
    point = problem.at(u)
    best = point
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        if best.gap <= max(tol, rtol * abs(best.F)):
            break
        moved = problem.step(point)
        if moved is None:
            break
        point = moved
        if point.gap < best.gap:
            best = point
    Q = np.zeros(W.shape[1])
    Q[cols] = np.exp(best.u)
    return best.F, best.gap, Q, iterations


class _AugustinPoint:
    """``u = log Q`` (normalised) with ``F``, ``log A``, ``log pA`` and the certified gap."""

    __slots__ = ("F", "gap", "log_A", "log_S", "log_pA", "u")

    def __init__(self, u: FloatArray, log_A: FloatArray, log_S: FloatArray, F: float) -> None:
        self.u, self.log_A, self.log_S, self.F = u, log_A, log_S, F
        self.log_pA = np.zeros(0)
        self.gap = math.inf


class _Augustin:
    """The Augustin minimisation of one prior and channel (rows of positive weight, columns
    that one of them reaches), in the variables ``u = log Q``."""

    def __init__(self, rows: FloatArray, weights: FloatArray, alpha: float) -> None:
        self.a = alpha
        self.rows = rows
        self.log_W = divergence.log(rows)
        self.support = rows > 0
        self.w = weights
        self.log_w = np.log(weights)
        self.mass = float(weights.sum())

    def start(self) -> FloatArray:
        """``log pW``, normalised."""
        log_q = divergence.logsumexp((self.log_w[:, None] + self.log_W).T)
        out: FloatArray = log_q - divergence.logsumexp(log_q)
        return out

    def at(self, u: FloatArray) -> _AugustinPoint:
        a = self.a
        T = np.where(self.support, a * self.log_W + (1.0 - a) * u, -np.inf)
        log_S = divergence.logsumexp(T)
        log_A = T - log_S[:, None]
        if abs(a - 1.0) < NEAR_ONE:
            # F = Σ p_x D_α(W_x ‖ Q): log S/(α − 1) would divide its rounding by |α − 1|; the
            # divergence's expm1/log1p form near 1 keeps full accuracy
            F = float(self.w @ divergence.renyi(self.rows, np.exp(u), a))
        else:
            F = float(self.w @ log_S) / (a - 1.0)
        point = _AugustinPoint(u, log_A, log_S, F)
        point.log_pA = divergence.logsumexp((self.log_w[:, None] + log_A).T)
        # max_y (pA)_y/Q_y − Σ p, the common ratio 1 taken out: expm1 keeps its digits
        with np.errstate(over="ignore"):  # a far-off start: the gap is ∞
            ratio = float(np.expm1(np.max(point.log_pA - u)))
        point.gap = max(ratio + (1.0 - self.mass), 0.0)
        return point

    def change(self, point: _AugustinPoint, v: FloatArray) -> tuple[float, FloatArray]:
        """``(G(u + v) − G(u), normalised u + v)``, the difference computed directly."""
        Q = np.exp(point.u)
        if np.max(np.abs(v)) <= 1.0:
            shift = float(np.log1p(Q @ np.expm1(v)))
        else:
            shift = float(divergence.logsumexp(point.u + v))
        delta = v - shift
        z = (1.0 - self.a) * delta
        A = np.exp(point.log_A)
        if np.max(np.abs(z)) <= 1.0:
            per_row = np.log1p(np.sum(A * np.expm1(z), axis=1))
        else:
            per_row = divergence.logsumexp(np.where(self.support, point.log_A + z, -np.inf))
        return float(self.w @ per_row) / (self.a - 1.0), point.u + delta

    def direction(self, point: _AugustinPoint) -> tuple[FloatArray, FloatArray]:
        """``(d, g)``: the step of the class docstring of :func:`augustin_information`."""
        Q = np.exp(point.u)
        pA = np.exp(point.log_pA)
        g = Q - pA
        fixed = point.log_pA - point.u  # Augustin's step
        A = np.exp(point.log_A)
        wA = self.w[:, None] * A
        H = (self.a - 1.0) * (np.diag(wA.sum(axis=0)) - A.T @ wA) + np.diag(Q) - np.outer(Q, Q)
        # G is invariant under u → u + c: fix d = 0 at the largest mass and solve the rest,
        # Jacobi-scaled (unit diagonal); coordinates whose Hessian underflowed take
        # Augustin's step instead
        diag = np.diag(H)
        anchor = int(np.argmax(point.u))
        live = diag > 1e-280
        live[anchor] = False
        dead = ~live
        dead[anchor] = False
        d = np.where(dead, fixed, 0.0)
        if live.any():
            scale = 1.0 / np.sqrt(diag[live])
            K = H[np.ix_(live, live)] * scale[:, None] * scale[None, :]
            rhs = -(g[live] + H[np.ix_(live, dead)] @ d[dead]) * scale
            try:
                with np.errstate(all="ignore"):
                    d[live] = np.linalg.solve(K, rhs) * scale
            except np.linalg.LinAlgError:
                d[live] = np.nan
        if not np.all(np.isfinite(d)) or float(g @ d) >= 0.0:
            d = fixed
        return d, g

    def step(self, point: _AugustinPoint) -> _AugustinPoint | None:
        """A backtracking line search along :meth:`direction`: Armijo's rule on ``G``, or,
        where the change of ``G`` is below the rounding of ``G`` itself (it cannot rank the
        steps), a decrease of the certified gap."""
        d, g = self.direction(point)
        slope = float(g @ d)
        noise = 64.0 * U * (float(self.w @ np.abs(point.log_S)) / abs(self.a - 1.0) + abs(point.F))
        # no coordinate of log Q moves by more than MAX_LOG_STEP at once (a trust region)
        t = min(1.0, MAX_LOG_STEP / max(float(np.max(np.abs(d))), 1e-300))
        floor = t * 1e-15
        while t > floor:
            change, u = self.change(point, t * d)
            trial = self.at(u)
            if np.isfinite(trial.F):
                if change <= 1e-4 * t * slope and change <= 0.0:
                    return trial
                if abs(change) <= noise and abs(t * slope) <= noise and trial.gap < point.gap:
                    return trial
            t *= 0.5
        return None
