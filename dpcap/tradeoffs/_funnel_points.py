r"""One certified point of the privacy funnel or the information bottleneck, and a curve's logic.

The query side of the envelope engine (:mod:`dpcap.solvers.envelope_lp`), for
:mod:`dpcap.tradeoffs.funnel`: :func:`solve_point` runs the engine at one utility level R, builds
the mechanism from its posteriors, makes it feasible (:func:`repair`, by the mixing rule of
:mod:`dpcap.solvers.mixing`), recomputes its informations and certifies the other end of the
bracket from the engine's dual, in nats; :func:`monotone` then uses what every point of a curve
proves about the others. The maths is in ``docs/mathematics.rst`` §7.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import ParameterError
from dpcap.solvers import envelope_lp, mixing
from dpcap.solvers.status import EngineStatus
from dpcap.tradeoffs._markov import Problem, constant, informations, mechanism

__all__ = ["GRID_MAX", "Kind", "Raw", "monotone", "repair", "solve_point"]

FloatArray = NDArray[np.float64]
Kind = Literal["pf", "ib"]

#: ``method="auto"`` uses the certified mesh LP up to this many values of X (with positive
#: probability), the local multi-start method beyond.
GRID_MAX = 4


#: Least weight of the fallback in :func:`repair` (see there).
THETA_FLOOR = 1e-100


def _meets(utility: float, R: float, kind: Kind) -> bool:
    return utility >= R if kind == "pf" else utility <= R


def repair(problem: Problem, W: FloatArray, R: float, kind: Kind) -> tuple[FloatArray, float]:
    """Make ``W`` feasible by time sharing; return it and the weight θ of the fallback.

    Funnel: ``[(1−θ) W, θ I]`` (full disclosure on separate outputs) has
    ``I(X;Y) = (1−θ) I_W + θ H(X)``; bottleneck: ``[(1−θ) W, θ 1]`` (a constant output) has
    ``I(X;Y) = (1−θ) I_W``. θ is the least weight that meets R: the analytic one, raised by
    the rounding rule of :func:`dpcap.solvers.mixing.least_weight` until ``I(X;Y)``,
    recomputed on the mixture, meets R. At θ = 1 the fallback alone is returned.
    """
    ixy, _ = informations(problem, W)
    if _meets(ixy, R, kind):
        return W, 0.0
    fallback = np.eye(problem.px.shape[0]) if kind == "pf" else constant(problem)

    def mix(theta: float) -> FloatArray:
        return np.concatenate([(1.0 - theta) * W, theta * fallback], axis=1)

    def feasible(theta: float) -> bool:
        return _meets(informations(problem, mix(theta))[0], R, kind)

    # ixy < R ≤ H(X) (funnel) or ixy > R ≥ 0 (bottleneck): neither division is by zero
    start = (R - ixy) / (problem.hx - ixy) if kind == "pf" else 1.0 - R / ixy
    theta = mixing.least_weight(feasible, start)
    # A weight below THETA_FLOOR (R near the smallest double) makes the products θ·P_X(x)·P_Y(y)
    # underflow, and I(X;Y) computed as ∞. Raising θ keeps the mixture feasible (its I(X;Y) is
    # monotone in θ) and moves the achieved I(S;Y) by at most θ·I(S;X): nothing at any tol.
    theta = max(theta, THETA_FLOOR)
    return (fallback, 1.0) if theta >= 1.0 else (mix(theta), theta)


@dataclass(frozen=True)
class Raw:
    """A point before unit conversion: achieved values, bracket, and the dual line."""

    R: float
    mechanism: FloatArray
    utility: float
    leakage: float
    lower: float
    upper: float
    slope: float
    line: tuple[float, float]  # (a, ν): the certified bound a + ν R' holds at every R'
    iterations: int
    method: str
    engine: EngineStatus
    note: str
    details: tuple[tuple[str, float], ...]


def _ordered(lower: float, upper: float, kind: Kind) -> tuple[float, float]:
    """Resolve a crossing by rounding on the certified side, never on the achieved one."""
    return (min(lower, upper), upper) if kind == "pf" else (lower, max(upper, lower))


def _trivial_bounds(problem: Problem, R: float, kind: Kind) -> tuple[float, float]:
    """``(lower, upper)`` that hold without any solve (see :mod:`dpcap.tradeoffs.funnel`)."""
    if kind == "pf":
        return max(0.0, R - (problem.hx - problem.isx)), problem.isx
    return 0.0, min(R, problem.isx)


def solve_point(
    problem: Problem,
    R: float,
    kind: Kind,
    *,
    method: str,
    tol: float,
    max_iter: int,
    rng: np.random.Generator,
    start: FloatArray | None,
) -> tuple[Raw, FloatArray | None]:
    """Solve at one R (nats); also return the support posteriors (a start for the next R)."""
    trivial_lower, trivial_upper = _trivial_bounds(problem, R, kind)
    # Endpoints and degenerate laws: a closed-form mechanism closes the bracket.
    candidates = []
    if R <= 0.0:
        candidates.append(constant(problem))
    if problem.hx <= R or problem.p.shape[0] < 2:  # one value of X: H(X) = 0, all is R = 0
        candidates.append(np.eye(problem.px.shape[0]))
    for W in candidates:
        W, _ = repair(problem, W, R, kind)
        utility, leakage = informations(problem, W)
        lower, upper = _ordered(
            trivial_lower if kind == "pf" else leakage,
            leakage if kind == "pf" else trivial_upper,
            kind,
        )
        if upper - lower <= tol:
            line = (-math.inf, 0.0) if kind == "pf" else (math.inf, 0.0)
            note = "closed form at an endpoint of [0, H(X)]"
            raw = Raw(R, W, utility, leakage, lower, upper, math.nan, line, 0, "exact",
                       EngineStatus.OPTIMAL, note, ())  # fmt: skip
            return raw, None
    if problem.p.shape[0] < 2:  # H(X) = 0: only R = 0 exists (handled above)
        raise ParameterError(f"R must be 0 when H(X) = 0, got R={R!r}")
    s = 1.0 if kind == "pf" else -1.0
    budget = s * (problem.hx - R)
    if method == "grid":
        sol, mesh = envelope_lp.solve(
            problem.T, problem.p, R, kind, tol=tol, max_iter=max_iter, start=start
        )
        anchors = np.concatenate([sol.posteriors, problem.p[None, :]])
        bound = envelope_lp.violation_bound(mesh, sol.mu, sol.nu, kind, anchors)
        dual = float(sol.mu @ problem.p) + sol.nu * budget + bound  # ≥ the LP over all q
        nu = sol.nu
        # the same dual bounds the problem at every R': a line in R'
        if kind == "pf":
            line = (problem.hs - float(sol.mu @ problem.p) - bound - nu * problem.hx, nu)
            certified = problem.hs - dual
        else:
            line = (problem.hs + float(sol.mu @ problem.p) + bound - nu * problem.hx, nu)
            certified = problem.hs + dual
        note = (
            f"envelope LP over a simplicial mesh of the posteriors: {sol.iterations} LP solves, "
            f"{sol.cells} cells; certified by the LP dual and a cell-wise bound on the dual gap "
            f"function over the whole simplex (sup φ ≤ {bound:.3g})"
        )
        if sol.status is not EngineStatus.OPTIMAL:
            note += f"; the engine stopped: {sol.status.value}"
        details: tuple[tuple[str, float], ...] = (
            ("cells", float(sol.cells)),
            ("sup_phi_bound", bound),
            ("dual_intercept", line[0]),
            ("dual_slope", nu),
        )
        slope = nu
    else:
        sol = envelope_lp.local_solve(
            problem.T, problem.p, R, kind, tol=tol, max_iter=max_iter, rng=rng
        )
        certified = -math.inf if kind == "pf" else math.inf
        line = (-math.inf, 0.0) if kind == "pf" else (math.inf, 0.0)
        slope = math.nan
        bound_text = "max(0, R − H(X|S))" if kind == "pf" else "min(R, I(S;X))"
        note = (
            f"local method (|X| = {problem.p.shape[0]} > {GRID_MAX}): multi-start column "
            f"generation, {sol.iterations} LP solves, no certificate; the "
            f"{'lower' if kind == 'pf' else 'upper'} end is the trivial bound {bound_text}"
        )
        details = ()
    W = mechanism(problem, sol.posteriors, sol.weights)
    W, theta = repair(problem, W, R, kind)
    if theta > 0:
        note += f"; mixed with {'full disclosure' if kind == 'pf' else 'a constant release'} "
        note += f"by θ = {theta:.3g} to meet R"
    utility, leakage = informations(problem, W)
    if kind == "pf":
        lower, upper = max(trivial_lower, certified), leakage
    else:
        lower, upper = leakage, min(trivial_upper, certified)
    lower, upper = _ordered(lower, upper, kind)
    raw = Raw(R, W, utility, leakage, lower, upper, slope, line, sol.iterations,
               method, sol.status, note, details)  # fmt: skip
    return raw, sol.posteriors


def monotone(raws: list[Raw], kind: Kind) -> list[Raw]:
    """Use what every point proves about the others (both curves are non-decreasing in R).

    * A funnel mechanism with ``I(X;Y) ≥ R_{k+1}`` is feasible at ``R_k``: a later point's
      mechanism replaces an earlier one that leaks more. A bottleneck mechanism with
      ``I(X;Y) ≤ R_k`` is feasible at ``R_{k+1}``: an earlier one replaces a later one that
      leaks less.
    * Certified ends propagate: ``PF(R_k) ≥ PF(R_j)`` for ``j < k`` and ``IB(R_k) ≤ IB(R_j)``
      for ``j > k``, and every dual line ``a + ν R`` (valid at every R) is evaluated at every
      point.
    """
    out = list(raws)
    if kind == "pf":
        for k in range(len(out) - 2, -1, -1):
            nxt = out[k + 1]
            if nxt.leakage < out[k].leakage:
                out[k] = _adopt(out[k], nxt, kind)
        best = -math.inf
        for k, raw in enumerate(out):
            lines = max(a + nu * raw.R for a, nu in (r.line for r in raws))
            best = max(best, raw.lower, lines)
            out[k] = dataclasses.replace(raw, lower=min(best, raw.upper))
    else:
        for k in range(1, len(out)):
            prev = out[k - 1]
            if prev.leakage > out[k].leakage:
                out[k] = _adopt(out[k], prev, kind)
        best = math.inf
        for k in range(len(out) - 1, -1, -1):
            raw = out[k]
            lines = min(a + nu * raw.R for a, nu in (r.line for r in raws))
            best = min(best, raw.upper, lines)
            out[k] = dataclasses.replace(raw, upper=max(best, raw.lower))
    return out


def _adopt(raw: Raw, other: Raw, kind: Kind) -> Raw:
    value = other.leakage
    lower, upper = _ordered(*((raw.lower, value) if kind == "pf" else (value, raw.upper)), kind)
    return dataclasses.replace(
        raw,
        mechanism=other.mechanism,
        utility=other.utility,
        leakage=value,
        lower=lower,
        upper=upper,
        note=raw.note + f"; mechanism of the point at R = {other.R:.6g} nats (feasible here too)",
    )
