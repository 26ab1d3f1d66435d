r"""Privacy against statistical inference with log-loss: the conic program and its bounds.

Calmon & Fawaz (2012): ``min I(S;Y)`` over mechanisms ``P_{Y|X}`` subject to an expected
distortion budget ``E d(X,Y) ≤ Δ``, a convex problem. :func:`inference_conic` hands it to cvxpy
(exponential cones); :func:`linearised_bound` is its Lagrangian lower bound for given laws on S
(computed here in numpy, never read from a solver), and :func:`inference_dual_conic` optimises
those laws. See ``docs/mathematics.rst`` §7.

cvxpy is imported inside :func:`inference_conic` and :func:`inference_dual_conic` only; solver
names are :data:`~dpcap.solvers.status.INFERENCE_SOLVERS`, canonical (upper-case) spelling.
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .status import INFERENCE_SOLVERS, EngineStatus, cvxpy_iterations, from_cvxpy

FloatArray = NDArray[np.float64]

__all__ = [
    "InferenceSolution",
    "inference_conic",
    "inference_dual_conic",
    "linearised_bound",
    "posteriors_of",
]


@dataclass(frozen=True)
class InferenceSolution:
    """Raw output of :func:`inference_conic`.

    ``mechanism`` is the solver's ``P_{Y|X}`` clipped at 0 and renormalised (uniform rows if
    the solver returned no point); ``slope`` the dual of the distortion constraint (NaN if none);
    ``objective`` the solver's value (not a certificate); ``status`` the cvxpy status mapped
    by :func:`~dpcap.solvers.status.from_cvxpy` (``FAILED`` when no point came back);
    ``message`` cvxpy's status and the tolerance, or the solver's error; ``iterations`` the
    backend's count as cvxpy reports it (``solver_stats.num_iters``; 0 when none).
    """

    mechanism: FloatArray
    slope: float
    objective: float
    status: EngineStatus
    solver: str
    solve_time: float
    message: str
    iterations: int


def inference_conic(
    joint: FloatArray,
    distortion: FloatArray,
    Delta: float,
    *,
    solver: str = INFERENCE_SOLVERS[0],
    tol: float = 1e-9,
) -> InferenceSolution:
    r"""``min I(S;Y)`` over ``P_{Y|X}`` s.t. ``E d(X,Y) ≤ Δ``, as an exponential-cone program.

    ``I(S;Y) = Σ_{s,y} rel_entr(P_{SY}(s,y), P_S(s) P_Y(y))`` with ``P_{SY} = joint @ W`` and
    ``P_Y = P_X @ W`` both affine in ``W``: jointly convex (the relative entropy is), so the
    problem is convex (Calmon & Fawaz 2012, §IV). ``joint`` is ``(m, n)`` with positive
    marginals, ``distortion`` ``(n, k)``.
    """
    cp: Any = importlib.import_module("cvxpy")  # lazily: ``import dpcap`` must not import it

    start = time.perf_counter()
    n = joint.shape[1]
    k = distortion.shape[1]
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    W = cp.Variable((n, k), nonneg=True)
    joint_sy = joint @ W
    output = px @ W
    product = ps[:, None] @ cp.reshape(output, (1, k), order="C")
    objective = cp.Minimize(cp.sum(cp.rel_entr(joint_sy, product)))
    budget = cp.sum(cp.multiply(px[:, None] * distortion, W)) <= Delta
    problem = cp.Problem(objective, [cp.sum(W, axis=1) == 1, budget])
    options = _solver_options(solver, tol)
    try:
        problem.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        uniform = np.full((n, k), 1.0 / k)
        elapsed = time.perf_counter() - start
        return InferenceSolution(
            uniform, math.nan, math.nan, EngineStatus.FAILED, solver, elapsed, str(exc), 0
        )
    status = from_cvxpy(problem.status)
    value = W.value
    if value is None:
        mechanism = np.full((n, k), 1.0 / k)
        status = status if not status.usable else EngineStatus.FAILED
    else:
        mechanism = np.maximum(np.asarray(value, dtype=np.float64), 0.0)
        sums = mechanism.sum(axis=1, keepdims=True)
        mechanism = np.where(sums > 0, mechanism / np.where(sums > 0, sums, 1.0), 1.0 / k)
    dual = budget.dual_value
    slope = math.nan if dual is None else max(float(np.asarray(dual)), 0.0)
    objective_value = math.nan if problem.value is None else float(problem.value)
    return InferenceSolution(
        mechanism,
        slope,
        objective_value,
        status,
        solver,
        time.perf_counter() - start,
        f"cvxpy status {problem.status!r} at tolerance {tol:g}",
        cvxpy_iterations(problem),
    )


def posteriors_of(joint: FloatArray, mechanism: FloatArray) -> FloatArray:
    """``P_{S|Y=y}`` as the columns of an ``(m, k)`` array; ``P_S`` for an output never used."""
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    py = px @ mechanism
    used = py > 0
    result: FloatArray = np.where(
        used[None, :], (joint @ mechanism) / np.where(used, py, 1.0)[None, :], ps[:, None]
    )
    return result


def linearised_bound(
    joint: FloatArray,
    distortion: FloatArray,
    Delta: float,
    posteriors: FloatArray,
    slope: float,
) -> tuple[float, float]:
    r"""A lower bound on ``min {I(S;Y) : E d(X,Y) ≤ Δ}`` from any laws on S, and its multiplier.

    Parameters
    ----------
    joint : (m, n) float64 array
        ``P(S=s, X=x)`` with positive marginals.
    distortion : (n, k) float64 array
    Delta : float
    posteriors : (m, k) float64 array
        One law ``π_y`` on S per output (columns), e.g. :func:`posteriors_of` a mechanism, or
        the solution of :func:`inference_dual_conic`.
    slope : float
        A first guess for the multiplier s (NaN for none).

    Returns
    -------
    (float, float)
        ``max L`` over the s tried, and the s attaining it.

    Notes
    -----
    ``I(S;Y) = Σ_y F(W[:, y])`` with ``F(c) = Σ_s a_s log(a_s / (P_S(s) b))``, ``a = joint c``,
    ``b = P_X·c``. For every law ``π`` on S, ``g_π[x] = Σ_s joint[s,x] log(π_s / P_S(s))``
    satisfies ``F(c) − g_π·c = b D(a/b ‖ π) ≥ 0`` for all ``c ≥ 0``: a linear minorant, exact
    when ``π`` is the posterior ``P_{S|Y=y}`` of ``c``. With ``G[:, y] = g_{π_y}`` (``π_y``
    mixed with ``P_S`` by a weight ``η`` so that no ``log 0`` occurs; every η is tried from a
    short list), ``I(S;Y) ≥ Σ_{x,y} G[x,y] W[x,y]`` for *every* mechanism W, and by weak
    Lagrangian duality on the distortion constraint, for every ``s ≥ 0``,

        min_W I(S;Y) ≥ L(s) = Σ_x min_y (G[x,y] + s P_X(x) d[x,y]) − s Δ.

    ``L`` is concave and piecewise linear in ``s``; it is maximised by bisection on the sign of
    its slope ``Σ_x P_X(x) d[x, y*(x)] − Δ`` (``y*`` the minimiser). By Sion's minimax theorem
    ``max_{π, s} L = min I(S;Y)``: the bound is tight at the optimal posteriors.
    """
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    cost = px[:, None] * distortion
    best, best_s = -math.inf, 0.0
    for eta in (0.0, 1e-12, 1e-9, 1e-6, 1e-3):
        pi = (1.0 - eta) * posteriors + eta * ps[:, None]  # (m, k)
        # G[x, y] = Σ_s joint[s, x] log(π_y(s)/P_S(s)), with 0 · (−∞) = 0
        with np.errstate(divide="ignore", invalid="ignore"):
            logratio = np.log(pi) - np.log(ps)[:, None]
            terms = joint[:, :, None] * logratio[:, None, :]
        G = np.where(joint[:, :, None] > 0, terms, 0.0).sum(axis=0)
        value, s_at = _maximise_dual(G, cost, Delta, slope)
        if value > best:
            best, best_s = value, s_at
    return best, best_s


def inference_dual_conic(
    joint: FloatArray,
    distortion: FloatArray,
    Delta: float,
    *,
    solver: str = INFERENCE_SOLVERS[0],
    tol: float = 1e-9,
) -> tuple[FloatArray, float, EngineStatus]:
    r"""The Lagrangian dual of :func:`inference_conic`: laws ``π_y`` on S and a multiplier s.

    ``maximise Σ_x t_x − s Δ`` over ``π_y ∈ Δ_S``, ``s ≥ 0`` and ``t`` subject to
    ``t_x ≤ Σ_s P(s,x) log(π_y(s) / P_S(s)) + s P_X(x) d[x, y]`` for all x, y: the bound of
    :func:`linearised_bound` optimised over ``π`` (an exponential-cone program). Returns
    ``(π as an (m, k) array, s, status)``; the query layer evaluates the bound itself. On
    failure ``π`` is NaN and the status ``FAILED``.
    """
    cp: Any = importlib.import_module("cvxpy")  # lazily: ``import dpcap`` must not import it

    m, n = joint.shape
    k = distortion.shape[1]
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    pi = cp.Variable((m, k), nonneg=True)
    s = cp.Variable(nonneg=True)
    t = cp.Variable(n)
    offset = -(joint.T @ np.log(ps))  # (n,)
    gain = joint.T @ cp.log(pi) + offset[:, None] + s * (px[:, None] * distortion)
    problem = cp.Problem(
        cp.Maximize(cp.sum(t) - s * Delta),
        [cp.sum(pi, axis=0) == 1, t[:, None] <= gain],
    )
    options = _solver_options(solver, tol)
    try:
        problem.solve(solver=solver, **options)
    except cp.error.SolverError:
        return np.full((m, k), math.nan), math.nan, EngineStatus.FAILED
    status = from_cvxpy(problem.status)
    if pi.value is None or s.value is None:
        return np.full((m, k), math.nan), math.nan, EngineStatus.FAILED
    laws = np.maximum(np.asarray(pi.value, dtype=np.float64), 0.0)
    laws /= laws.sum(axis=0, keepdims=True)
    return laws, max(float(s.value), 0.0), status


def _solver_options(solver: str, tol: float) -> dict[str, float]:
    if solver == "CLARABEL":
        return {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol}
    if solver == "ECOS":
        return {"abstol": tol, "reltol": tol, "feastol": tol}
    if solver == "SCS":
        return {"eps_abs": tol, "eps_rel": tol}
    return {}


def _dual_value(G: FloatArray, cost: FloatArray, Delta: float, s: float) -> tuple[float, float]:
    """``(L(s), slope of L at s)`` with ties broken towards the smaller cost."""
    total = G + s * cost
    low = np.min(total, axis=1, keepdims=True)
    at_min = total <= low
    used_cost = np.min(np.where(at_min, cost, np.inf), axis=1)
    return float(np.sum(low) - s * Delta), float(np.sum(used_cost) - Delta)


def _maximise_dual(
    G: FloatArray, cost: FloatArray, Delta: float, hint: float
) -> tuple[float, float]:
    """``max_{s ≥ 0} L(s)`` by doubling then bisection on the sign of ``L'``; returns (L, s)."""
    if not np.all(np.isfinite(G)):
        return -math.inf, 0.0
    best, slope0 = _dual_value(G, cost, Delta, 0.0)
    best_s = 0.0
    if slope0 <= 0:  # L is concave: non-increasing from s = 0
        return best, 0.0
    lo, hi = 0.0, max(hint if math.isfinite(hint) and hint > 0 else 1.0, 1e-12)
    for _ in range(200):  # find s with L'(s) <= 0 (the greedy distortion within Δ)
        value, slope = _dual_value(G, cost, Delta, hi)
        if value > best:
            best, best_s = value, hi
        if slope <= 0:
            break
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        value, slope = _dual_value(G, cost, Delta, mid)
        if value > best:
            best, best_s = value, mid
        if slope > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return best, best_s
