"""Blahut's algorithm for the rate–distortion function, batched over slopes and certified.

Problem (Shannon; Mir's risk–distortion, ``docs/mathematics.rst`` §5): for a source law ``p``
on inputs and a distortion ``d[x, y] ≥ 0``,

    R(D) = min { I(p, W) : Σ_x p_x Σ_y W_xy d(x, y) ≤ D }.

Everything works on a stack of slopes ``s`` (shape ``(B,)``, ``0 ≤ s ≤ ∞``) for one ``(p, d)``.
Distortions are shifted by their row minima, ``d0(x, y) = d(x, y) − min_y' d(x, y') ≥ 0``, which
changes ``E d`` by the constant ``D_min = Σ_x p_x min_y d(x, y)`` and nothing else; every row of
``d0`` has a zero, so the kernels ``e^{−s d0}`` stay in ``[0, 1]`` with a 1 in every row and
``s = ∞`` is a real slope (``e^{−∞·d0} = 1[d0 = 0]``: the mechanisms of distortion ``D_min``).

One iteration at slope ``s`` from an output law ``q`` (all in the log domain):

    c_x = Σ_y q_y e^{−s d0(x,y)},   W_xy = q_y e^{−s d0(x,y)} / c_x,
    g_y = Σ_x p_x e^{−s d0(x,y)} / c_x,   q ← q·g  (= pW, the output law of W).

**Certificate** (Blahut 1972; Csiszár 1974). For every ``s ≥ 0`` and every ``q``,

    R(D) ≥ b(s, q) − s (D − D_min)   for every D,   b = −Σ_x p_x log c_x − log max_y g_y.

Proof: with ``λ_x = 1/(c_x max_y g_y)`` we have ``Σ_x p_x λ_x e^{−s d0(x,y)} ≤ 1`` for every y; for
any ``W'`` with output law ``q'`` and ``E d0 ≤ D − D_min``, Jensen's inequality gives
``I(p, W') + s E d0 − Σ_x p_x log λ_x = Σ p_x W'_xy log(W'_xy / (q'_y λ_x e^{−s d0})) ≥
−log Σ_y q'_y Σ_x p_x λ_x e^{−s d0(x,y)} ≥ 0``. (At ``s = ∞`` the bound is ``b`` at ``D = D_min``
and vacuous elsewhere.) The mechanism ``W`` built from the same ``q`` is feasible at its own
distortion ``D_s = E_{p,W} d``, so

    b − s (D_s − D_min)  ≤  R(D_s)  ≤  I(p, W),

and the gap is ``I(p, W) + s (D_s − D_min) − b = log max_y g_y − Σ_y q'_y log g_y ≥ 0`` with
``q' = q·g``: zero exactly at a fixed point with ``g ≤ 1`` (Blahut's optimality condition). An
element leaves the working set once its gap is ``≤ max(tol, rtol·I(p, W))``, ``I(p, W)`` that of
its best iterate (re-evaluated between blocks; ``tol`` alone while ``rtol`` is 0).

The fixed point minimises the convex ``F(q) = −Σ_x p_x log (Eq)_x`` over the simplex
(``E = e^{−s d0}``), whose KKT conditions are ``g_y = 1`` on the support of q and ``g_y ≤ 1``
off it; Newton steps on that system (:func:`_newton`, :func:`_interior_point`) polish what the
Blahut iteration (an EM step for F) converges to slowly. Their iterates are certified the same
way: the bound holds for every q, whoever produced it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import rel_entr

from .status import EngineStatus, batch_message, by_element

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]
ObjectArray = NDArray[np.object_]

__all__ = [
    "SlopeSolution",
    "dual_intercept",
    "expected_distortion",
    "exponential_mechanism",
    "information",
    "shift",
    "solve",
]

#: Floor of an iterate's log output mass relative to its largest entry (the capacity engine's
#: rule): every ``c_x`` stays positive and finite, and a mass of ``e^-700`` is irrelevant to the
#: bounds, which hold for any ``q``.
LOG_MASS_FLOOR = -700.0

#: Newton steps without halving the certified gap after which the polish gives up.
STALL = 4

#: Smallest positive double: an output mass that underflowed to 0 although some row with
#: ``p_x > 0`` gives it a (subnormal) probability; its terms in ``I(p, W)`` are below 1e-300.
TINY = float(np.nextafter(0.0, 1.0))


@dataclass(frozen=True)
class SlopeSolution:
    """Raw output of :func:`solve`: arrays over the batch of slopes.

    A batched :class:`~dpcap.solvers.status.Solution`: ``status`` has one
    :class:`~dpcap.solvers.status.EngineStatus` per slope (``OPTIMAL`` where
    ``information − lower ≤ max(tol, rtol·information)``, ``MAX_ITER`` where the budget ran out
    first), ``message`` one
    summary of the batch and ``iterations`` the Blahut iterations and Newton steps per slope.
    """

    slope: FloatArray  # (B,): s, possibly inf
    log_output: FloatArray  # (B, ny): log q, the output law the mechanism is built from
    mechanism: FloatArray  # (B, nx, ny): W ∝ q_y e^{-s d(x, y)}
    distortion: FloatArray  # (B,): E_{p,W} d (original, unshifted d)
    information: FloatArray  # (B,): I(p, W), an upper bound on R(distortion)
    intercept: FloatArray  # (B,): b(s, q); R(D) >= b - s (D - d_min) for every D
    lower: FloatArray  # (B,): b - s (distortion - d_min), a lower bound on R(distortion)
    status: ObjectArray  # (B,): EngineStatus per slope
    message: str
    iterations: IntArray  # (B,)
    d_min: float  # Σ_x p_x min_y d(x, y)

    @property
    def converged(self) -> BoolArray:
        """``(B,)``: where ``status`` is ``OPTIMAL`` (the gap met the engine's target)."""
        return np.asarray(self.status == EngineStatus.OPTIMAL, dtype=np.bool_)


def shift(p: FloatArray, d: FloatArray) -> tuple[FloatArray, float]:
    """``(d0, D_min)``: distortions less their row minima, and ``D_min = Σ_x p_x min_y d``."""
    row_min = d.min(axis=1)
    d0: FloatArray = d - row_min[:, None]
    return d0, float(p @ row_min)


def log_kernel(d0: FloatArray, s: FloatArray) -> FloatArray:
    """``−s·d0`` per slope, shape ``(B, nx, ny)``; at ``s = ∞``: 0 where ``d0 = 0``, else −∞."""
    finite = np.isfinite(s)
    s_fin = np.where(finite, s, 0.0)
    K: FloatArray = -s_fin[:, None, None] * d0[None]
    if not finite.all():
        hard = np.where(d0 == 0.0, 0.0, -np.inf)
        K[~finite] = hard
    return K


def _lse(a: FloatArray, axis: int) -> FloatArray:
    """``log Σ exp`` along ``axis``; −∞ for a slice that is all −∞ (no NaN from ``−∞ − (−∞)``)."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out: FloatArray = np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis=axis)
    return out


def exponential_mechanism(
    log_q: FloatArray, K: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(W, log W, log c)`` with ``W_xy = q_y e^{−s d0(x,y)} / c_x`` (one per slope).

    ``q`` may have zeros (``log q = −∞``); at ``s = ∞`` a row whose distortion-minimising
    outputs all have mass 0 has ``c_x = 0`` and a NaN row.
    """
    A = log_q[:, None, :] + K
    log_c = _lse(A, axis=2)
    with np.errstate(invalid="ignore"):  # a row with c_x = 0 (s = ∞ only) is NaN: callers check
        log_W: FloatArray = A - log_c[:, :, None]
    W: FloatArray = np.exp(log_W)
    return W, log_W, log_c


def _log_g(log_p: FloatArray, K: FloatArray, log_c: FloatArray) -> FloatArray:
    """``log g_y = log Σ_x p_x e^{−s d0(x,y)} / c_x`` (inputs with ``p_x = 0`` drop out)."""
    return _lse(log_p[None, :, None] + K - log_c[:, :, None], axis=1)


def _intercept(p: FloatArray, log_c: FloatArray, log_g: FloatArray) -> FloatArray:
    """``b = −Σ_x p_x log c_x − max_y log g_y`` (``c_x`` is finite and positive: floored q)."""
    value: FloatArray = -(log_c @ p) - np.max(log_g, axis=-1)
    return value


def dual_intercept(p: FloatArray, d: FloatArray, s: FloatArray, q: FloatArray) -> FloatArray:
    """``b(s, q)`` for output laws ``q`` (B, ny): ``R(D) ≥ b − s (D − D_min)`` for every D.

    Recomputes the dual bound of the module docstring from scratch (for the query layer, which
    does not take a certificate on the engine's word). ``q`` may have zeros; the bound is then
    still valid, and ``−∞`` if some input with ``p_x > 0`` has ``c_x = 0``.
    """
    d0, _ = shift(p, d)
    K = log_kernel(d0, s)
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
        log_p = np.log(p)
    log_c = _lse(log_q[:, None, :] + K, axis=2)
    positive = p > 0
    bad = np.isneginf(log_c[:, positive]).any(axis=-1)
    log_c = np.where(np.isneginf(log_c), 0.0, log_c)  # only where p_x = 0, or `bad` anyway
    value = _intercept(p, log_c, _log_g(log_p, K, log_c))
    out: FloatArray = np.where(bad, -np.inf, value)
    return out


def information(p: FloatArray, W: FloatArray) -> FloatArray:
    """``I(p, W) = Σ_x p_x D(W_x ‖ pW)`` for a stack ``W`` (B, nx, ny) (rows with p_x = 0 drop)."""
    rows = p > 0
    Wp = W[:, rows, :]
    q = np.einsum("x,bxy->by", p[rows], Wp)
    q = np.where(q > 0, q, TINY)  # q_y >= p_x W_xy > 0 whenever W_xy > 0: underflow only
    value: FloatArray = np.einsum("x,bx->b", p[rows], rel_entr(Wp, q[:, None, :]).sum(axis=-1))
    return np.maximum(value, 0.0)


def expected_distortion(p: FloatArray, W: FloatArray, d: FloatArray) -> FloatArray:
    """``E d(X, Y) = Σ_x p_x Σ_y W_xy d(x, y)`` for a stack ``W`` (B, nx, ny)."""
    value: FloatArray = np.einsum("x,bxy,xy->b", p, W, d)
    return value


def solve(
    p: FloatArray,
    d: FloatArray,
    s: FloatArray,
    *,
    tol: float = 1e-9,
    max_iter: int = 100_000,
    newton: bool = True,
    initial: FloatArray | None = None,
    rtol: float = 0.0,
) -> SlopeSolution:
    """Certified rate–distortion points for a batch of slopes.

    Rounds alternate a block of Blahut iterations (doubling in length) with an active-set
    Newton polish (:func:`_newton`) and a primal–dual interior-point fallback
    (:func:`_interior_point`), as the capacity engine does. Every iterate of any kind is
    certified, each element keeps the iterate with the smallest gap, and it leaves the working
    set once that gap is ``≤ max(tol, rtol·I(p, W))`` (the information of its best iterate,
    re-evaluated between rounds). Plain Blahut is slow where the optimal output law is sparse
    (smooth distortions such as ``(x − y)²``: tens of thousands of iterations measured); the
    Newton steps close those in tens.

    Parameters
    ----------
    p : (nx,) array
        Source law (non-negative, sums to 1).
    d : (nx, ny) array
        Finite, non-negative distortions.
    s : (B,) array
        Slopes ``0 ≤ s ≤ ∞`` (``dR/dD = −s`` at the optimum).
    tol : float
        Target gap ``I(p, W) − lower`` at the achieved distortion (nats).
    max_iter : int
        Budget of Blahut iterations per slope (Newton steps are counted on top).
    newton : bool
        Whether to polish with Newton steps between Blahut blocks.
    initial : (B, ny) array, optional
        Starting output laws (default uniform), e.g. the solution at a nearby slope.
    rtol : float
        Relative target: a slope is done once its gap is ``≤ max(tol, rtol·I(p, W))`` (0:
        ``tol`` alone).

    Returns
    -------
    SlopeSolution
        For every slope, the iterate with the smallest certified gap.
    """
    s = np.asarray(s, dtype=np.float64)
    B = s.shape[0]
    ny = d.shape[1]
    d0, d_min = shift(p, d)
    K_all = log_kernel(d0, s)
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
        start = np.full((B, ny), 1.0 / ny) if initial is None else np.asarray(initial, float)
        log_q = _floor(np.log(start))
    best = _Best(log_q, tol, rtol)
    iterations = np.zeros(B, dtype=np.int64)
    active = np.arange(B)
    block, spent = 8, 0
    while active.size and spent <= max_iter:
        steps = min(block, max_iter - spent)
        log_q[active], taken = _blahut_block(
            log_p, K_all[active], log_q[active], steps, best, active
        )
        iterations[active] += taken
        spent += steps
        active = best.still_open(p, K_all, active)
        if newton and active.size:
            iterations[active] += _newton(p, log_p, K_all[active], log_q[active], best, active)
            active = best.still_open(p, K_all, active)
        if newton and active.size:
            iterations[active] += _interior_point(
                p, log_p, K_all[active], log_q[active], best, active
            )
            active = best.still_open(p, K_all, active)
        if spent >= max_iter:
            break
        block *= 2

    # Masses at the floor are dead outputs: they become exact zeros, so that the mechanism's
    # column is 0 in every row (instead of e^-700 in some rows and an underflowed 0 in others,
    # which would make its ε-DP level infinite). An element where this would leave a row empty
    # (s = ∞ only) keeps its floored law.
    floored = best.log_q
    log_q = np.where(floored <= LOG_MASS_FLOOR + 1.0, -np.inf, floored)
    _, _, log_c = exponential_mechanism(log_q, K_all)
    rows_ok: BoolArray = np.all(np.isfinite(log_c), axis=-1)
    log_q = np.where(rows_ok[:, None], log_q, floored)
    W, _, log_c = exponential_mechanism(log_q, K_all)
    intercept = _intercept(p, log_c, _log_g(log_p, K_all, log_c))
    distortion = expected_distortion(p, W, d)
    info = information(p, W)
    excess = np.maximum(distortion - d_min, 0.0)
    lower = intercept - np.where(np.isinf(s), 0.0, s) * excess  # s = ∞: excess is 0
    goal = np.maximum(tol, rtol * np.where(np.isfinite(info), np.abs(info), 0.0))
    return SlopeSolution(
        slope=s.copy(),
        log_output=log_q,
        mechanism=W,
        distortion=distortion,
        information=info,
        intercept=intercept,
        lower=lower,
        status=by_element(info - lower <= goal),
        message=batch_message(info - lower <= goal, tol, max_iter),
        iterations=iterations,
        d_min=d_min,
    )


def _floor(log_q: FloatArray) -> FloatArray:
    """Normalised log masses, floored at :data:`LOG_MASS_FLOOR` below the largest."""
    out: FloatArray = log_q - log_q.max(axis=-1, keepdims=True)
    np.maximum(out, LOG_MASS_FLOOR, out=out)
    out -= _lse(out, axis=-1)[:, None]
    return out


class _Best:
    """Per element: the iterate with the smallest certified gap so far, and the gap it must
    meet (``goal``: ``max(tol, rtol·I(p, W))`` at the best iterate when last evaluated)."""

    def __init__(self, log_q: FloatArray, tol: float = 0.0, rtol: float = 0.0) -> None:
        self.log_q = log_q.copy()
        self.gap = np.full(log_q.shape[0], np.inf)
        self.tol, self.rtol = tol, rtol
        self.goal = np.full(log_q.shape[0], tol)

    def open(self, idx: IntArray) -> BoolArray:
        """Elements of ``idx`` whose best gap exceeds their goal."""
        out: BoolArray = self.gap[idx] > self.goal[idx]
        return out

    def still_open(self, p: FloatArray, K: FloatArray, idx: IntArray) -> IntArray:
        """The elements of ``idx`` still open, their goals first re-evaluated at their best
        iterates (only with a relative target: one evaluation of ``I(p, W)``)."""
        if self.rtol > 0.0 and idx.size:
            W, _, _ = exponential_mechanism(self.log_q[idx], K[idx])
            info = information(p, W)
            scale = np.where(np.isfinite(info), np.abs(info), 0.0)
            self.goal[idx] = np.maximum(self.tol, self.rtol * scale)
        out: IntArray = idx[self.open(idx)]
        return out

    def update(self, idx: IntArray, log_q: FloatArray, gap: FloatArray) -> None:
        better = gap < self.gap[idx]
        self.gap[idx[better]] = gap[better]
        self.log_q[idx[better]] = log_q[better]


def _step(log_p: FloatArray, K: FloatArray, log_q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(gap, log q·g)``: the certified gap of the mechanism built from ``q``, and Blahut's step.

    ``Σ_y q_y g_y = Σ_x p_x = 1`` for every ``q``, so ``q' = q·g`` is the output law of ``W``
    and the gap is ``log max_y g_y − Σ_y q'_y log g_y`` (module docstring).
    """
    _, _, log_c = exponential_mechanism(log_q, K)
    log_g = _log_g(log_p, K, log_c)
    new = log_q + log_g
    new -= _lse(new, axis=-1)[:, None]
    q_new = np.exp(new)
    finite_g = np.where(np.isfinite(log_g), log_g, 0.0)
    gap: FloatArray = np.max(log_g, axis=-1) - np.sum(q_new * finite_g, axis=-1)
    return np.maximum(gap, 0.0), new


def _blahut_block(
    log_p: FloatArray,
    K: FloatArray,
    log_q: FloatArray,
    steps: int,
    best: _Best,
    idx: IntArray,
) -> tuple[FloatArray, IntArray]:
    """Up to ``steps`` Blahut iterations, recording the best; ``(log q, steps taken)``.

    An element stops as soon as the gap of its current iterate closes.
    """
    log_q = log_q.copy()
    taken = np.zeros(len(idx), dtype=np.int64)
    live = np.arange(len(idx))
    for _ in range(steps):
        gap, new = _step(log_p, K[live], log_q[live])
        best.update(idx[live], log_q[live], gap)
        open_ = gap > best.goal[idx[live]]
        live, new = live[open_], new[open_]
        if not live.size:
            return log_q, taken
        log_q[live] = _floor(new)
        taken[live] += 1
    gap, _ = _step(log_p, K[live], log_q[live])
    best.update(idx[live], log_q[live], gap)
    return log_q, taken


def _newton(
    p: FloatArray,
    log_p: FloatArray,
    K: FloatArray,
    log_q: FloatArray,
    best: _Best,
    idx: IntArray,
    max_steps: int = 60,
) -> IntArray:
    """Active-set Newton on Blahut's fixed point ``g_y(q) = 1`` on the support; returns steps.

    ``q`` minimises the convex ``F(q) = −Σ_x p_x log (Eq)_x`` (``E = e^{−s d0}``) over the
    simplex; its KKT conditions are ``g_y = 1`` where ``q_y > 0`` and ``g_y ≤ 1`` elsewhere,
    with ``∂g_y/∂q_z = −H_yz``, ``H = Eᵀ diag(p/c²) E``. On a guessed support S each step solves
    ``H_SS Δ = g_S − 1`` (least squares when H is singular, e.g. equal columns of d). Outputs
    whose new mass is negative and whose ``g_y < 1`` leave S (if none has ``g_y < 1``, the most
    negative leaves); outputs with ``g_y > 1`` join it. An element stops when its certified gap
    closes, or has not halved in four steps without a change of support (Blahut goes on).
    """
    n, ny = log_q.shape
    steps = np.zeros(n, dtype=np.int64)
    E = np.exp(K)
    q = np.exp(log_q)
    support = q > 1e-9 * q.max(axis=-1, keepdims=True)
    q = np.where(support, q, 0.0)
    q /= q.sum(axis=-1, keepdims=True)
    eye = np.eye(ny, dtype=bool)
    live = np.arange(n)
    last_gap = best.gap[idx].copy()
    stalled = np.zeros(n, dtype=np.int64)
    for _ in range(max_steps):
        El, Sl, ql = E[live], support[live], q[live]
        c, g, H = _gradient(p, El, ql)
        ok = _usable(c, g, H, p)
        A = np.where(Sl[:, :, None] & Sl[:, None, :] & ok[:, None, None], H, eye)
        g = np.where(ok[:, None], g, 1.0)
        delta = _solve(A, np.where(Sl, g - 1.0, 0.0))
        finite = np.all(np.isfinite(delta), axis=-1)
        ok &= finite
        delta = np.where(finite[:, None], delta, 0.0)
        # Fraction to the boundary: the longest step α ≤ 1 that keeps the support's masses
        # non-negative; the outputs that block it leave S.
        shrink = Sl & (delta < 0)
        ratio = np.where(shrink, ql / np.where(shrink, -delta, 1.0), np.inf)
        alpha = np.minimum(1.0, ratio.min(axis=-1))
        q_new = ql + alpha[:, None] * delta
        leaving = Sl & ((ratio <= alpha[:, None] * (1.0 + 1e-12)) | ((ql + delta <= 0) & (g < 1)))
        S_prev = Sl
        Sl = (Sl & ~leaving) | (g > 1.0 + 0.5 * best.goal[idx[live]][:, None])
        changed = (Sl != S_prev).any(axis=-1)
        q_new = np.where(Sl & (q_new > 0), q_new, 0.0)
        total = q_new.sum(axis=-1, keepdims=True)
        good = ok & np.isfinite(total[:, 0]) & (total[:, 0] > 0)
        q_new = np.where(good[:, None], q_new / np.where(good[:, None], total, 1.0), ql)
        with np.errstate(divide="ignore"):
            lq = _floor(np.log(q_new))
        gap, _ = _step(log_p, K[live], lq)
        best.update(idx[live], lq, gap)
        support[live], q[live] = Sl, q_new
        steps[live] += 1
        progress = gap < 0.5 * last_gap[live]
        stalled[live] = np.where(progress | changed, 0, stalled[live] + 1)
        last_gap[live] = np.where(progress, gap, last_gap[live])
        keep = best.open(idx[live]) & (stalled[live] < STALL) & good
        live = live[keep]
        if not live.size:
            break
    return steps


def _interior_point(
    p: FloatArray,
    log_p: FloatArray,
    K: FloatArray,
    log_q: FloatArray,
    best: _Best,
    idx: IntArray,
    max_steps: int = 100,
) -> IntArray:
    """Primal–dual interior-point Newton for Blahut's fixed point; returns the steps per element.

    ``q`` minimises ``Φ(q) = −Σ_x p_x log (Eq)_x + Σ_y q_y`` over ``q ≥ 0`` (at the minimum
    ``Σ q = 1``: multiply the KKT conditions by q and sum). KKT: ``1 − g_y(q) = λ_y ≥ 0``,
    ``q_y λ_y = 0``. The complementarity is relaxed to ``q_y λ_y = μ`` and μ driven to 0; each
    step solves ``(H + diag(λ/q)) Δq = −r_1 − r_2/q`` with ``r_1 = 1 − g − λ``,
    ``r_2 = qλ − μ``, ``H = Eᵀ diag(p/c²) E``, and stays inside the positive orthant (fraction
    to the boundary 0.995). The matrix is positive definite whatever the support, so this
    closes the elements that the active-set polish leaves open, e.g. smooth kernels
    ``e^{−s (x−y)²}`` whose H is numerically singular and whose optimal support is sparse.
    """
    n, ny = log_q.shape
    steps = np.zeros(n, dtype=np.int64)
    E = np.exp(K)
    q = 0.999 * np.exp(log_q) + 0.001 / ny
    live = np.arange(n)
    gap0 = np.where(np.isfinite(best.gap[idx]), best.gap[idx], 1.0)
    _, g, _ = _gradient(p, E, q)
    lam = np.maximum(1.0 - g, 0.0) + np.maximum(gap0, 1e-6)[:, None]
    for _ in range(max_steps):
        El, ql, ll = E[live], q[live], lam[live]
        c, g, H = _gradient(p, El, ql)
        ok = _usable(c, g, H, p)
        mu = 0.1 * np.sum(ql * ll, axis=-1) / ny
        r1 = 1.0 - np.where(ok[:, None], g, 1.0) - ll
        r2 = ql * ll - mu[:, None]
        M = np.where(ok[:, None, None], H, 0.0) + np.einsum("by,yz->byz", ll / ql, np.eye(ny))
        dq = _solve(M, -r1 - r2 / ql)
        finite = np.all(np.isfinite(dq), axis=-1)
        ok &= finite
        dq = np.where(finite[:, None], dq, 0.0)
        dl = (-r2 - ll * dq) / ql
        alpha = np.minimum(1.0, 0.995 * np.minimum(_to_boundary(ql, dq), _to_boundary(ll, dl)))
        q_new = ql + alpha[:, None] * dq
        l_new = ll + alpha[:, None] * dl
        good = (
            ok
            & np.all(np.isfinite(q_new) & (q_new > 0), axis=-1)
            & np.all(np.isfinite(l_new) & (l_new > 0), axis=-1)
        )
        q[live] = np.where(good[:, None], q_new, ql)
        lam[live] = np.where(good[:, None], l_new, ll)
        lq = _floor(np.log(q[live]))
        gap, _ = _step(log_p, K[live], lq)
        best.update(idx[live], lq, gap)
        steps[live] += 1
        live = live[best.open(idx[live]) & good]
        if not live.size:
            break
    return steps


def _gradient(
    p: FloatArray, E: FloatArray, q: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(c, g, H)``: ``c = Eq``, ``g = Eᵀ(p/c)`` and ``H = Eᵀ diag(p/c²) E`` (``c > 0``)."""
    c = np.einsum("bxy,by->bx", E, q)
    with np.errstate(over="ignore", invalid="ignore"):  # c_x ~ 0: the element is unusable
        r = np.where(p > 0, p / np.where(c > 0, c, 1.0), 0.0)
        g = np.einsum("bxy,bx->by", E, r)
        weighted = E * (r / np.where(c > 0, c, 1.0))[:, :, None]
        H: FloatArray = np.matmul(E.transpose(0, 2, 1), weighted)
    return c, g, H


def _usable(c: FloatArray, g: FloatArray, H: FloatArray, p: FloatArray) -> BoolArray:
    """Elements whose Newton system is finite (every ``c_x > 0`` where ``p_x > 0``)."""
    ok: BoolArray = (
        np.all((c > 0) | (p[None, :] == 0), axis=-1)
        & np.all(np.isfinite(g), axis=-1)
        & np.all(np.isfinite(H), axis=(1, 2))
    )
    return ok


def _to_boundary(v: FloatArray, dv: FloatArray) -> FloatArray:
    """Largest step ``t`` with ``v + t·dv ≥ 0`` (∞ where no entry decreases)."""
    shrink = dv < 0
    ratio = np.where(shrink, v / np.where(shrink, -dv, 1.0), np.inf)
    out: FloatArray = ratio.min(axis=-1)
    return out


def _solve(A: FloatArray, b: FloatArray) -> FloatArray:
    """Batched ``A x = b``; singular systems fall back to the least-squares solution."""
    try:
        x = np.linalg.solve(A, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        x = np.einsum("bij,bj->bi", np.linalg.pinv(A), b)
    return np.asarray(x, dtype=np.float64)
