"""Shannon capacity of a banded channel: every row's mass within a window of ``w`` outputs.

A channel of ``m`` inputs whose row ``x`` puts its mass on the outputs ``x, …, x + w − 1`` (of
``m + w − 1`` padded outputs) is given by its band ``Wb (m, w)``, ``Wb[x, j] = W[x, x + j]``:
``O(m·w)`` memory where the dense matrix needs ``m²``. Additive noise on a line of values
(:class:`dpcap.line_noise.LineNoise`) is of this form once the noise is cut where its tail mass
falls below 2⁻¹⁰⁰; what the cut leaves out is bounded in the certificate (:func:`certified`).

Every step is a sum over the ``w`` diagonals, never a dense ``m × m`` array:

* output law ``q = pW``: ``q[x + j] += p_x Wb[x, j]``;
* divergences ``D_x = Σ_j Wb[x, j] log(Wb[x, j] / q[x + j])`` (a sliding window of ``log q``);
* Newton on the KKT system ``D_x(p) = C`` on the support, ``Σ p = 1`` (``docs/mathematics.rst``
  §1): the Jacobian ``−H``, ``H[x, z] = Σ_y W_xy W_zy / q_y``, is banded with ``w − 1``
  super-diagonals, symmetric and positive semi-definite, so each step is one banded Cholesky
  factorisation (``O(m w²)``) and two banded solves, restricted to the support (a subset of a
  band is a band of the same width in its own indices).

Blahut–Arimoto steps start the iteration and take over where a Newton step does not help; the
best prior seen is kept. The bracket the engine returns is re-evaluated with rounding bounds by
:func:`certified`, which never takes the iteration's word.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_solve_banded, cholesky_banded
from scipy.special import xlogy

from . import rounding

__all__ = ["BandSolution", "capacity", "certified"]

FloatArray = NDArray[np.float64]

#: Blahut–Arimoto steps before the first Newton step.
WARM_STEPS = 30
#: Floor of ``q_y`` in the Jacobian (outputs that no input of the support reaches).
Q_FLOOR = 1e-300
#: Masses below this fraction of the largest leave the Newton support.
SUPPORT_FLOOR = 1e-13
#: Newton steps solved again on a smaller support when masses would turn negative.
RESOLVE = 6
#: Blahut–Arimoto steps after a polish that stalled.
BA_AFTER_FAILURE = 10
#: Newton steps without halving the best gap after which a polish stops.
STALL = 4
#: Most interior-point steps.
INTERIOR_STEPS = 100


class BandSolution(NamedTuple):
    """The priors the iteration reached: ``prior`` attains the best lower end and
    ``upper_prior`` centres the best upper end (both uncertified), with the iterations and
    whether the iteration's own gap met the target (``converged``)."""

    prior: FloatArray
    upper_prior: FloatArray
    lower: float
    upper: float
    iterations: int
    converged: bool


def output(Wb: FloatArray, p: FloatArray) -> FloatArray:
    """``q = pW`` on the ``m + w − 1`` padded outputs."""
    m, w = Wb.shape
    q = np.zeros(m + w - 1)
    for j in range(w):
        q[j : j + m] += p * Wb[:, j]
    return q


def _windows(v: FloatArray, w: int, m: int) -> FloatArray:
    """``v[x + j]`` as an ``(m, w)`` view (no copy)."""
    out: FloatArray = sliding_window_view(v, w)[:m]
    return out


def _divergences(Wb: FloatArray, neg_entropy: FloatArray, q: FloatArray) -> FloatArray:
    m, w = Wb.shape
    log_q = np.log(np.maximum(q, rounding.SMALLEST))
    out: FloatArray = neg_entropy - np.einsum("ij,ij->i", Wb, _windows(log_q, w, m))
    return out


def _hessian(Wb: FloatArray, q: FloatArray) -> FloatArray:
    """``H = W diag(1/q) Wᵀ`` in LAPACK's upper band storage: ``ab[w − 1 − d, x + d] =
    H[x, x + d]``."""
    m, w = Wb.shape
    A = Wb / np.maximum(_windows(q, w, m), Q_FLOOR)
    ab = np.zeros((w, m))
    for d in range(min(w, m)):
        ab[w - 1 - d, d:] = np.einsum("ij,ij->i", A[: m - d, d:], Wb[d:, : w - d])
    return ab


def _restricted(ab: FloatArray, idx: NDArray[np.int64]) -> FloatArray:
    """The band of ``H[idx][:, idx]`` (``idx`` increasing) from the band of ``H``."""
    w = ab.shape[0]
    s = len(idx)
    out = np.zeros((w, s))
    for e in range(min(w, s)):
        gap = idx[e:] - idx[: s - e]
        ok = gap <= w - 1
        out[w - 1 - e, e:] = np.where(ok, ab[np.clip(w - 1 - gap, 0, w - 1), idx[e:]], 0.0)
    return out


def _band_matvec(ab: FloatArray, v: FloatArray) -> FloatArray:
    """``H v`` for the symmetric ``H`` of the upper band storage ``ab``."""
    w, m = ab.shape
    out: FloatArray = ab[w - 1] * v
    for d in range(1, min(w, m)):
        diagonal = ab[w - 1 - d, d:]
        out[:-d] += diagonal * v[d:]
        out[d:] += diagonal * v[:-d]
    return out


def _newton_direction(
    ab: FloatArray, D: FloatArray, pushed: FloatArray, removed: float
) -> tuple[FloatArray, float] | None:
    """``δ, C'`` with ``Hδ + C'·1 = D + pushed`` and ``Σ δ = removed``, by banded Cholesky
    (None: not positive definite even with a ridge). ``pushed = H_SZ p_Z`` and ``removed =
    Σ p_Z`` account for the inputs ``Z`` leaving the support (``δ_z = −p_z``)."""
    w = ab.shape[0]
    scale = float(np.max(ab[w - 1])) if ab.shape[1] else 0.0
    if not scale > 0.0:
        return None
    ab = ab.copy()
    ab[w - 1] += 1e-13 * scale  # a ridge: H is only semi-definite on a redundant support
    try:
        factor = cholesky_banded(ab, lower=False, check_finite=False)
    except LinAlgError:
        return None
    rhs = np.stack([D + pushed, np.ones_like(D)], axis=1)
    uv = cho_solve_banded((factor, False), rhs, check_finite=False)
    u, v = uv[:, 0], uv[:, 1]
    level = float((u.sum() - removed) / v.sum())
    return u - level * v, level


def capacity(Wb: FloatArray, tol: float, max_iter: int) -> BandSolution:
    """Maximise ``I(p, W)`` over priors on the ``m`` inputs of the band ``Wb``.

    The best lower end ``Σ_x p_x D_x`` and the best upper end ``max_x D_x`` are kept apart,
    each with its prior (both ends are valid at any prior). Stops when their gap is below
    ``tol / 4`` (the rest is left to the certificate's rounding allowance) or after
    ``max_iter`` steps. After :data:`WARM_STEPS` Blahut–Arimoto steps, active-set Newton steps
    (:func:`_polish`) run until their gap stops halving, then (once) the primal–dual interior
    point (:func:`_interior`, robust whatever the support); Blahut–Arimoto then takes over for
    :data:`BA_AFTER_FAILURE` steps before the next polish.
    """
    m = Wb.shape[0]
    neg_entropy = xlogy(Wb, Wb).sum(axis=1)
    goal = tol / 4.0

    def evaluate(prior: FloatArray) -> tuple[FloatArray, float, float]:
        D = _divergences(Wb, neg_entropy, output(Wb, prior))
        return D, float(prior @ D), float(D.max())

    p = np.full(m, 1.0 / m)
    D, lower, upper = evaluate(p)
    best = _Best(p, lower, upper)
    steps, warm, interior_done = 0, WARM_STEPS, False
    while steps < max_iter and best.gap > goal:
        if warm:
            p = p * np.exp(D - upper)
            p /= p.sum()
            D, lower, upper = evaluate(p)
            best.update(p, lower, upper)
            steps, warm = steps + 1, warm - 1
            continue
        used, (p, D, lower, upper) = _polish(Wb, p, D, evaluate, best, goal, max_iter - steps)
        steps += used
        if best.gap > goal and steps < max_iter and not interior_done:
            used, (p, D, lower, upper) = _interior(Wb, p, evaluate, best, goal, max_iter - steps)
            steps, interior_done = steps + used, True
            if best.gap > goal and steps < max_iter:  # near the optimum: the support is known
                p = best.low_p
                D, lower, upper = evaluate(p)
                used, (p, D, lower, upper) = _polish(
                    Wb, p, D, evaluate, best, goal, max_iter - steps, floor=1e-6
                )
                steps += used
        warm = BA_AFTER_FAILURE
    return BandSolution(best.low_p, best.high_p, best.low, best.high, steps, best.gap <= goal)


class _Best:
    """The best lower end and the best upper end seen, each with its prior."""

    def __init__(self, p: FloatArray, lower: float, upper: float) -> None:
        self.low, self.low_p, self.high, self.high_p = lower, p, upper, p

    @property
    def gap(self) -> float:
        return self.high - self.low

    def update(self, p: FloatArray, lower: float, upper: float) -> None:
        if lower > self.low:
            self.low, self.low_p = lower, p
        if upper < self.high:
            self.high, self.high_p = upper, p


def _polish(
    Wb: FloatArray,
    p: FloatArray,
    D: FloatArray,
    evaluate: Callable[[FloatArray], tuple[FloatArray, float, float]],
    best: _Best,
    goal: float,
    budget: int,
    floor: float = 1e-9,
) -> tuple[int, tuple[FloatArray, FloatArray, float, float]]:
    """Active-set Newton steps from ``p`` (the rule of :func:`dpcap.solvers.kkt_newton.newton`).

    The support starts as the inputs with mass above ``floor`` times the largest. A step that
    would make masses negative loses those inputs that the current level ``C`` does not reach
    (``D_x < C``) and is solved again from the same point (up to :data:`RESOLVE` times), or,
    if there are none, the support input with the smallest ``D_x``; inputs with ``D_x`` above
    ``C + goal`` join. A step that widens the iterate's own gap ``max D − Σ pD`` is halved up to
    twice. Stops when the best gap has not halved in :data:`STALL` steps; returns the steps
    taken and the last iterate ``(p, D, lower, upper)``.
    """
    support = p > floor * p.max()
    p = np.where(support, p, 0.0)
    p /= p.sum()
    D, lower, upper = evaluate(p)
    best.update(p, lower, upper)
    last, stalled, steps = best.gap, 0, 0
    while steps < budget and best.gap > goal and stalled < STALL:
        steps += 1
        level = lower
        idx = np.flatnonzero(support)
        ab = _hessian(Wb, output(Wb, p))
        for attempt in range(RESOLVE + 1):
            off = p.copy()
            off[idx] = 0.0  # masses of inputs leaving the support: δ_z = −p_z
            pushed = _band_matvec(ab, off)[idx] if off.any() else np.zeros(len(idx))
            found = _newton_direction(_restricted(ab, idx), D[idx], pushed, float(off.sum()))
            if found is None:
                return steps, (p, D, lower, upper)
            delta, level = found
            leaving = (p[idx] + delta < 0) & (D[idx] < level)
            if not leaving.any() or attempt == RESOLVE:
                break
            idx = idx[~leaving]
        negative = p[idx] + delta < 0
        if negative.any():
            leaving = negative & (D[idx] < level)
            if not leaving.any():  # none that C leaves out: the weakest input goes
                leaving = np.arange(len(idx)) == np.argmin(D[idx])
            idx, delta = idx[~leaving], delta[~leaving]
        trial = np.zeros_like(p)
        trial[idx] = np.maximum(p[idx] + delta, 0.0)
        gap_here = upper - lower
        for _ in range(3):  # halve a step that widens the iterate's own gap
            total = trial.sum()
            if total > 0:
                trial_p = trial / total
                D_t, lower_t, upper_t = evaluate(trial_p)
                best.update(trial_p, lower_t, upper_t)
                if upper_t - lower_t <= gap_here:
                    break
            trial = 0.5 * (trial + np.where(np.isin(np.arange(len(p)), idx), p, 0.0))
        if total <= 0:
            return steps, (p, D, lower, upper)
        p, D, lower, upper = trial_p, D_t, lower_t, upper_t
        support = np.zeros(len(p), dtype=bool)
        support[idx] = True
        support |= lower + goal < D  # inputs the current level does not cover join
        if best.gap < 0.5 * last:
            last, stalled = best.gap, 0
        else:
            stalled += 1
    return steps, (p, D, lower, upper)


def _interior(
    Wb: FloatArray,
    p: FloatArray,
    evaluate: Callable[[FloatArray], tuple[FloatArray, float, float]],
    best: _Best,
    goal: float,
    budget: int,
) -> tuple[int, tuple[FloatArray, FloatArray, float, float]]:
    """Primal–dual interior-point steps (:func:`dpcap.solvers.kkt_newton.interior_point`) on the
    band: ``D_x + λ_x = C``, ``p_x λ_x = μ → 0``, ``Σ p = 1``; each step solves
    ``(H + diag(λ/p)) Δp + ΔC·1 = r_1 − r_2/p``, ``Σ Δp = 0`` (banded, positive definite) and
    keeps ``p, λ > 0`` (fraction to the boundary 0.995). Returns the steps and the last iterate.
    """
    m, w = Wb.shape
    p = 0.999 * p + 0.001 / m
    D, lower, upper = evaluate(p)
    C = upper
    lam = np.maximum(C - D, 0.0) + max(C - lower, 1e-6)
    steps = 0
    zero = np.zeros(m)
    while steps < min(budget, INTERIOR_STEPS) and best.gap > goal:
        steps += 1
        mu = 0.1 * float(p @ lam) / m
        r1 = D + lam - C
        r2 = p * lam - mu
        ab = _hessian(Wb, output(Wb, p))
        ab[w - 1] += lam / p
        found = _newton_direction(ab, r1 - r2 / p, zero, 0.0)
        if found is None or not np.all(np.isfinite(found[0])):
            break
        dp, dC = found
        dl = (-r2 - lam * dp) / p
        with np.errstate(divide="ignore"):
            limit_p = np.min(np.where(dp < 0, -p / np.where(dp < 0, dp, -1.0), np.inf))
            limit_l = np.min(np.where(dl < 0, -lam / np.where(dl < 0, dl, -1.0), np.inf))
        t = min(0.995 * min(limit_p, limit_l), 1.0)
        p = np.maximum(p + t * dp, 0.0)
        p /= p.sum()
        lam = lam + t * dl
        C = C + t * dC
        D, lower, upper = evaluate(p)
        best.update(p, lower, upper)
    return steps, (p, D, lower, upper)


def certified(Wb: FloatArray, p: FloatArray, rho: float, outputs: int) -> tuple[float, float]:
    """Rigorous ``(lower, upper)`` of the capacity at the prior ``p``.

    The channel is the one whose row ``x`` is the band ``Wb[x]`` plus at most ``rho`` of mass
    outside it, normalised (each row divided by its exact sum). Write ``V`` for the band rows
    divided by their sums and ``Q = q/Σq`` for the centre, ``S_x = Σ_{j} Q[x + j]`` its mass in
    the window of row ``x``. Then ``D(V_x ‖ Q) = D(V_x ‖ Q_win/S_x) − log S_x`` with
    ``−log S_x ≥ 0``, so with ``[lo_x, hi_x]`` the rounding bounds of the window divergence
    (:func:`dpcap.solvers.rounding.divergence_bounds`):

    ``Σ_x p_x lo_x − D(pV ‖ Q) ≤ I(p, V) ≤ C(V) ≤ max_x (hi_x − log S_x)``,

    ``D(pV ‖ Q) ≤ κ²`` bounded as in :mod:`dpcap.solvers.rounding`. Each row of the channel is
    within total variation ``rho`` of ``V_x``; by the continuity of conditional entropy
    (Alicki–Fannes–Winter), ``|I(p, W) − I(p, V)| ≤ 2(ρ log|Y| + (1 + ρ) h(ρ/(1 + ρ)))`` for
    every ``p``, and the bracket is widened by twice that.
    """
    m, w = Wb.shape
    q = output(Wb, p)
    Q = q / q.sum()
    windows = np.ascontiguousarray(_windows(Q, w, m))
    lo, hi = rounding.divergence_bounds(Wb[:, None, :], windows, 1.0)
    lo, hi = lo[:, 0], hi[:, 0]
    g = rounding.gamma(m + 2 * w + 4)  # the window's sum and the normalisation of Q
    S = windows.sum(axis=1)
    with np.errstate(divide="ignore"):
        short_hi = -np.log(np.minimum(S * (1.0 - g), 1.0)) * (1.0 + 4.0 * rounding.U)
        short_lo = np.maximum(-np.log(np.minimum(S * (1.0 + g), 1.0)), 0.0) * (
            1.0 - 4.0 * rounding.U
        )
    upper = float(np.max(hi + short_hi)) * (1.0 + 4.0 * rounding.U)
    weights = np.maximum(p, 0.0) / p.sum()
    kappa = 1.1 * (2.0 * rounding.gamma(w + 2) + 3.0 * rounding.gamma(m + w + 2) + 4.0 * rounding.U)
    D_lo = np.maximum(lo, 0.0) + short_lo
    lower = float(weights @ D_lo) * (1.0 - rounding.gamma(m + 2)) - kappa * kappa
    h = 0.0 if rho <= 0.0 else -rho * math.log(rho) + (1.0 + rho) * math.log1p(rho)
    slack = 4.0 * (rho * math.log(max(outputs, 2)) + h) + rounding.SMALLEST
    trivial = math.log(min(m, outputs)) * (1.0 + 4.0 * rounding.U)
    return max(0.0, lower - slack), min(upper + slack, trivial + slack)
