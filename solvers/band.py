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
#: Blahut–Arimoto steps after a Newton step that improved neither end.
BA_AFTER_FAILURE = 3


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


def _newton_direction(ab: FloatArray, D: FloatArray) -> tuple[FloatArray, float] | None:
    """``δ, C'`` with ``Hδ + C'·1 = D`` and ``Σ δ = 0``, by banded Cholesky (None: singular)."""
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
    rhs = np.stack([D, np.ones_like(D)], axis=1)
    uv = cho_solve_banded((factor, False), rhs, check_finite=False)
    u, v = uv[:, 0], uv[:, 1]
    level = float(u.sum() / v.sum())
    return u - level * v, level


def capacity(Wb: FloatArray, tol: float, max_iter: int) -> BandSolution:
    """Maximise ``I(p, W)`` over priors on the ``m`` inputs of the band ``Wb``.

    The best lower end ``Σ_x p_x D_x`` and the best upper end ``max_x D_x`` are kept apart,
    each with its prior (both ends are valid at any prior). Stops when their gap is below
    ``tol / 4`` (the rest is left to the certificate's rounding allowance) or after
    ``max_iter`` steps. A Newton step is kept when it raises the lower end or lowers the upper
    one; after one that does neither, Blahut–Arimoto steps follow.
    """
    m, _w = Wb.shape
    neg_entropy = xlogy(Wb, Wb).sum(axis=1)
    p = np.full(m, 1.0 / m)
    goal = tol / 4.0

    def evaluate(prior: FloatArray) -> tuple[FloatArray, FloatArray, float, float]:
        q = output(Wb, prior)
        D = _divergences(Wb, neg_entropy, q)
        return q, D, float(prior @ D), float(D.max())

    q, D, lower, upper = evaluate(p)
    low = (lower, p)
    high = (upper, p)
    steps = stalled = 0
    while steps < max_iter and high[0] - low[0] > goal:
        steps += 1
        if steps <= WARM_STEPS or stalled:
            p = p * np.exp(D - upper)
            p /= p.sum()
            stalled = max(0, stalled - 1)
            q, D, lower, upper = evaluate(p)
        else:
            trial = _newton(Wb, p, q, D, evaluate, low[0], high[0])
            if trial is None:
                stalled = BA_AFTER_FAILURE
                continue
            p, q, D, lower, upper = trial
        if lower > low[0]:
            low = (lower, p)
        if upper < high[0]:
            high = (upper, p)
    return BandSolution(low[1], high[1], low[0], high[0], steps, high[0] - low[0] <= goal)


def _newton(
    Wb: FloatArray,
    p: FloatArray,
    q: FloatArray,
    D: FloatArray,
    evaluate: Callable[[FloatArray], tuple[FloatArray, FloatArray, float, float]],
    low: float,
    high: float,
) -> tuple[FloatArray, FloatArray, FloatArray, float, float] | None:
    """One active-set Newton step from ``p``, or None if it improves neither end.

    The step is taken from ``p`` restricted to its support. Inputs whose mass it would make
    negative leave the support, and it is solved again from ``p`` restricted to the smaller
    support (up to :data:`RESOLVE` times); the last step is clipped at 0, then halved twice if
    it improves neither end."""
    support = np.flatnonzero(p > SUPPORT_FLOOR * p.max())
    for attempt in range(RESOLVE + 1):
        if len(support) < len(p) and attempt:
            base_p = np.zeros_like(p)
            base_p[support] = p[support]
            base_p /= base_p.sum()
            q, D, _, _ = evaluate(base_p)
        else:
            base_p = p
        found = _newton_direction(_restricted(_hessian(Wb, q), support), D[support])
        if found is None:
            return None
        base = base_p[support]
        step = found[0]
        keep = base + step > 0
        if keep.all() or attempt == RESOLVE or not keep.any():
            break
        support = support[keep]
    t = 1.0
    for _ in range(3):
        new = np.zeros_like(p)
        new[support] = np.maximum(base + t * step, 0.0)
        total = new.sum()
        if total > 0:
            new /= total
            q2, D2, lower, upper = evaluate(new)
            if lower > low or upper < high:
                return new, q2, D2, lower, upper
        t *= 0.5
    return None


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
    g = rounding.gamma(m + w + 4)
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
