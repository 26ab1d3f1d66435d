"""The slope search of the rate–distortion queries: certified points, the search for D, the curve.

Shared by :mod:`dpcap.tradeoffs.risk_distortion` (``rate_distortion``, ``mi_privacy_distortion`` and
their curves). Everything here works on one validated :class:`Problem`: the engine
(:mod:`dpcap.solvers.ratedistortion`) solves at given slopes, and every certificate is
recomputed here from the objects it returns (``docs/mathematics.rst`` §5):

* a mechanism W whose own expected distortion is ``≤ D`` gives ``R(D) ≤ I(p, W)``;
* Blahut's dual line of any slope ``s`` and output law ``q``,
  ``R(D) ≥ b(s, q) − s (D − D_min)``, holds *for every D*, so the lines of all the slopes
  tried are evaluated at the requested D itself.

Users give D, never s: the slope is found by a monotone search (:func:`search`), because the
distortion ``D_s`` of the optimum is non-increasing in s; where ``D_s`` jumps across D, the two
exponential mechanisms on either side are mixed by the least weight that meets D
(:func:`mix`, through :func:`dpcap.solvers.mixing.least_weight`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.solvers import ratedistortion as engine
from dpcap.solvers.mixing import least_weight

__all__ = [
    "Answer",
    "Point",
    "Problem",
    "build",
    "constant_point",
    "mix",
    "own_lower",
    "sample",
    "search",
    "solve",
]

FloatArray = NDArray[np.float64]

#: Slopes tried first when searching for the one that meets a target D, in units of 1/Δ where
#: Δ is the largest shifted distortion: ``e^{−sΔ}`` from 0.99 to e^-1000.
GRID = np.geomspace(1e-2, 1e3, 12)

#: Searches for s give up (and fall back to mixing the bracketing mechanisms) after
#: ``MAX_SOLVES`` engine solves (:data:`~dpcap._core.validation.MAX_SOLVES`), or when the
#: bracket in s is this narrow (relative): D_s then jumps across D.
S_RTOL = 1e-11

#: Slopes are searched in ``[1/S_MAX, S_MAX]/Δ``; beyond, ``s = 0`` (the constant mechanism) and
#: ``s = ∞`` (the mechanisms of distortion D_min) close the bracket.
S_MAX = 1e300

#: Rounding allowance, in units of the machine epsilon relative to ``|D| + |D_min|``, on the
#: excess distortion ``D − D_min`` that a dual line multiplies by its slope.
ROUNDING = 8.0
EPS = float(np.finfo(np.float64).eps)

#: Solves without halving the gap of the best exponential mechanism after which a search that
#: a mixture already closes stops there.
STALL = 4


@dataclass(frozen=True)
class Point:
    """A certified point: an exponential mechanism at slope s and its dual line."""

    slope: float
    output: FloatArray  # q, the law the mechanism is built from
    mechanism: FloatArray
    distortion: float  # E_{p,W} d, recomputed
    information: float  # I(p, W), recomputed: R(distortion) <= information
    intercept: float  # R(D) >= intercept - slope (D - d_min) for every D
    iterations: int

    def line(self, D: float, d_min: float) -> float:
        """The dual lower bound on ``R(D)`` from this point's slope and output law.

        ``D − D_min`` carries the rounding of both numbers, which the slope multiplies: it is
        widened by :data:`ROUNDING` ``· ε · (|D| + |D_min|)`` so that the line stays below R
        even at very large slopes (at ``s ≈ 1e11`` the bare difference of two numbers near 1/3
        already moves the line by 1e-5 nats).
        """
        if math.isinf(self.slope):
            return self.intercept if d_min >= D else -math.inf
        excess = max(D - d_min, 0.0) + ROUNDING * EPS * (abs(D) + abs(d_min))
        return self.intercept - self.slope * excess


@dataclass(frozen=True)
class Problem:
    """A validated source law and distortion, with the curve's endpoints."""

    prior: FloatArray
    distortion: FloatArray
    d_min: float
    d_max: float
    best_output: int  # argmin_y Σ_x p_x d(x, y)
    scale: float  # largest d(x, y) − min_y' d(x, y') over inputs with p_x > 0

    def expected(self, W: FloatArray) -> float:
        """The expected distortion ``Σ_x p_x Σ_y W_xy d(x, y)`` of one mechanism."""
        return float(engine.expected_distortion(self.prior, W[None], self.distortion)[0])


def build(prior: Any, distortion: Any, *, joint: bool = False) -> Problem:
    """Validate ``(prior, distortion)``; a joint law's database ``x^n`` is row
    ``ravel_multi_index(x^n, shape)`` (C order)."""
    p = check.law(prior, "prior").ravel() if joint else check.distribution(prior, "prior")
    d = check.cost_matrix(distortion, p.shape[0], "distortion", rows_of="input of the prior")
    column_cost = p @ d
    best = int(np.argmin(column_cost))
    d0, d_min = engine.shift(p, d)
    scale = float(d0[p > 0].max())
    d_max = float(column_cost[best])
    return Problem(p, d, d_min, max(d_max, d_min), best, scale)


def solve(
    problem: Problem,
    slopes: FloatArray,
    initial: FloatArray | None,
    tol: float,
    budget: int,
    rtol: float = 0.0,
) -> list[Point]:
    """Engine solves at ``slopes`` (each to ``max(tol, rtol·I)``); every certificate is
    recomputed from the returned objects."""
    p, d = problem.prior, problem.distortion
    raw = engine.solve(p, d, slopes, tol=tol, rtol=rtol, max_iter=budget, initial=initial)
    q = np.exp(raw.log_output)
    q /= q.sum(axis=-1, keepdims=True)
    W = raw.mechanism / raw.mechanism.sum(axis=-1, keepdims=True)
    distortion = engine.expected_distortion(p, W, d)
    information = engine.information(p, W)
    intercept = engine.dual_intercept(p, d, slopes, q)
    return [
        Point(
            slope=float(slopes[k]),
            output=q[k],
            mechanism=W[k],
            distortion=float(distortion[k]),
            information=float(information[k]),
            intercept=float(intercept[k]),
            iterations=int(raw.iterations[k]),
        )
        for k in range(len(slopes))
    ]


def constant_point(problem: Problem) -> Point:
    """Every input released as ``argmin_y Σ_x p_x d(x, y)``: ``I = 0`` at ``D_max``.

    It is the exponential mechanism at ``s = 0`` with ``q`` the point mass on that output, and
    its dual line is ``R ≥ 0``.
    """
    nx, ny = problem.distortion.shape
    q = np.zeros(ny)
    q[problem.best_output] = 1.0
    W = np.zeros((nx, ny))
    W[:, problem.best_output] = 1.0
    return Point(
        slope=0.0,
        output=q,
        mechanism=W,
        distortion=problem.expected(W),
        information=0.0,
        intercept=0.0,
        iterations=0,
    )


def mix(problem: Problem, above: Point, below: Point, D: float) -> tuple[FloatArray, float]:
    """``(1 − λ) W_above + λ W_below`` with expected distortion ``≤ D``, and ``θ = 1 − λ``.

    ``below`` is feasible (distortion ``≤ D``) and ``above`` is not, so the least weight λ of
    ``below`` that meets D is ``(D_above − D)/(D_above − D_below)``; the distortion is
    re-evaluated on the mixture and λ raised by the rounding rule of
    :func:`dpcap.solvers.mixing.least_weight` (``docs/mathematics.rst`` §8). ``I(p, ·)`` is
    convex in W, so the mixture leaks at most the chord between the two points: the bound that
    closes the bracket where ``D_s`` jumps across D (a linear piece of R). ``θ`` is the weight
    of ``above``, reported as ``mixture_weight``.
    """

    def mixture(weight: float) -> FloatArray:
        W: FloatArray = (1.0 - weight) * above.mechanism + weight * below.mechanism
        return W

    start = (above.distortion - D) / (above.distortion - below.distortion)
    weight = least_weight(lambda w: problem.expected(mixture(w)) <= D, start)
    return mixture(weight), 1.0 - weight


@dataclass(frozen=True)
class Answer:
    """The outcome of :func:`search`: a feasible mechanism and its bracket at D."""

    mechanism: FloatArray
    upper: float
    lower: float
    slope: float
    iterations: int
    solves: int
    theta: float | None
    exhausted: bool  # some engine solve spent its whole budget


def _chord(below: Point, points: list[Point], D: float) -> float:
    """The chord at D between ``below`` and the nearest point beyond D (``≥`` its mixture's I)."""
    above = [pt for pt in points if pt.distortion > D]
    if not above:
        return below.information
    a = min(above, key=lambda pt: pt.distortion)
    theta = (D - below.distortion) / (a.distortion - below.distortion)
    return theta * a.information + (1.0 - theta) * below.information


def search(problem: Problem, D: float, tol: float, budget: int, rtol: float = 0.0) -> Answer:
    """The exponential mechanism whose bracket at D closes to ``max(tol, rtol·upper)`` (see
    ``rate_distortion``)."""
    d_min = problem.d_min
    inner = tol / 4  # engine gap; the rest of tol is left for the distance D − D_s
    points: list[Point] = [constant_point(problem)]
    iterations, solves = 0, 0

    def run(s: float, initial: FloatArray | None) -> Point:
        nonlocal iterations, solves
        slopes = np.array([s])
        start = None if initial is None else initial[None]
        (pt,) = solve(problem, slopes, start, inner, budget, rtol / 4)
        iterations += pt.iterations
        solves += 1
        points.append(pt)
        return pt

    def bracket() -> tuple[Point | None, float, Point]:
        """(least-leaking feasible point, best lower bound at D, the line's point)."""
        feasible = [pt for pt in points if pt.distortion <= D]
        chosen = min(feasible, key=lambda pt: pt.information) if feasible else None
        lower, line_pt = max(((pt.line(D, d_min), pt) for pt in points), key=lambda t: t[0])
        return chosen, lower, line_pt

    history: list[float] = []  # the pure gap after each solve of the search

    def closed() -> bool:
        """Whether to stop: the pure bracket closed, or the mixture's closed and the pure one
        has stopped shrinking (D_s then moves with the engine's rounding, not with s)."""
        chosen, lower, _ = bracket()
        if chosen is None:
            return False
        gap = chosen.information - lower
        history.append(gap)
        goal = _certify.target(tol, rtol, chosen.information)
        if gap <= goal:
            return True
        stalled = len(history) > STALL and history[-1] > 0.5 * history[-1 - STALL]
        chord = _chord(chosen, points, D)
        return stalled and chord - lower <= _certify.target(tol, rtol, chord)

    # A batch of slopes, then geometric steps (the factor squares each time, so that slopes
    # of any magnitude are reached in a few solves) bracket the crossing D_s = D.
    found = solve(problem, GRID / problem.scale, None, inner, budget, rtol / 4)
    iterations += sum(pt.iterations for pt in found)
    solves += len(found)
    points.extend(found)
    lo = max((pt for pt in points if pt.distortion > D), key=lambda pt: pt.slope)
    feasible = [pt for pt in points if pt.distortion <= D]
    hi = min(feasible, key=lambda pt: pt.slope) if feasible else None
    factor, ceiling = 8.0, S_MAX / problem.scale
    while hi is None:
        s = min(lo.slope * factor, ceiling) if lo.slope < ceiling else math.inf
        factor = min(factor * factor, S_MAX)
        pt = run(s if solves < check.MAX_SOLVES else math.inf, lo.output)
        if pt.distortion <= D or math.isinf(pt.slope):
            hi = pt
        else:
            lo = pt
    factor = 8.0
    while lo.slope == 0.0 and solves < check.MAX_SOLVES and not math.isinf(hi.slope):
        if hi.slope * problem.scale <= 1.0 / S_MAX:
            break
        s = max(hi.slope / factor, 1.0 / (S_MAX * problem.scale))
        factor = min(factor * factor, S_MAX)
        pt = run(s, hi.output)
        if pt.distortion > D:
            lo = pt
        else:
            hi = pt

    fa, fb = lo.distortion - D, hi.distortion - D
    moved = ""
    widths: list[float] = []
    while not closed() and solves < check.MAX_SOLVES:
        if lo.slope == 0.0 or math.isinf(hi.slope):  # no finite bracket: s is out of range
            break
        # Illinois (regula falsi) on f(log s) = D_s − D, bisecting while the bracket is wide
        # or shrinks slowly (at least halved every two steps).
        a, b = math.log(lo.slope), math.log(hi.slope)
        if b - a <= S_RTOL:
            break
        x = b - fb * (b - a) / (fb - fa)
        widths.append(b - a)
        slow = len(widths) > 2 and widths[-1] > 0.5 * widths[-3]
        if not (a < x < b) or b - a > 2.0 or slow:
            x = 0.5 * (a + b)
        pt = run(math.exp(x), lo.output if x - a < b - x else hi.output)
        f = pt.distortion - D
        if f > 0:
            if moved == "lo":
                fb *= 0.5
            lo, fa, moved = pt, f, "lo"
        else:
            if moved == "hi":
                fa *= 0.5
            hi, fb, moved = pt, f, "hi"

    chosen, lower, line_pt = bracket()
    if chosen is None:  # pragma: no cover - the grid or s = ∞ always gives a feasible point
        chosen = run(math.inf, None)
    exhausted = any(pt.iterations >= budget for pt in points)
    answer = Answer(
        mechanism=chosen.mechanism,
        upper=chosen.information,
        lower=lower,
        slope=chosen.slope,
        iterations=iterations,
        solves=solves,
        theta=None,
        exhausted=exhausted,
    )
    above = [pt for pt in points if pt.distortion > D]
    if chosen.information - lower > _certify.target(tol, rtol, chosen.information) and above:
        nearest = min(above, key=lambda pt: pt.distortion)
        W, theta = mix(problem, nearest, chosen, D)
        upper = float(engine.information(problem.prior, W[None])[0])
        if upper < chosen.information:
            answer = Answer(W, upper, lower, line_pt.slope, iterations, solves, theta, exhausted)
    return answer


def own_lower(pt: Point, d_min: float) -> float:
    """The lower bound at the point's own distortion.

    At ``s = ∞`` the mechanism only uses distortion-minimising outputs, so its distortion is
    ``D_min`` exactly (the recomputed value can differ in the last bit) and the line holds there.
    """
    if math.isinf(pt.slope):
        return pt.intercept
    return pt.line(pt.distortion, d_min) if pt.slope > 0 else 0.0


def _bend(left: Point, right: Point, d_min: float, d_span: float, r_span: float) -> float:
    """Area between the chord of two points and their dual lines, in normalised units.

    R lies above both dual lines and below the chord of the two (feasible) points, so this
    triangle holds the curve between them: its area says how much a new point can still move
    the picture.
    """
    a = (left.distortion, left.information)
    b = (right.distortion, right.information)
    if math.isinf(left.slope):
        t = (a[0], right.line(a[0], d_min))
    elif left.slope == right.slope:
        t = (0.5 * (a[0] + b[0]), right.line(0.5 * (a[0] + b[0]), d_min))
    else:
        u = (left.intercept - right.intercept) / (left.slope - right.slope)
        x = min(max(d_min + u, a[0]), b[0])
        t = (x, max(left.line(x, d_min), right.line(x, d_min)))
    ab = ((b[0] - a[0]) / d_span, (b[1] - a[1]) / r_span)
    at = ((t[0] - a[0]) / d_span, (t[1] - a[1]) / r_span)
    return 0.5 * abs(ab[0] * at[1] - ab[1] * at[0])


def sample(
    problem: Problem, n_points: int, tol: float, budget: int, rtol: float = 0.0
) -> list[Point]:
    """Up to ``n_points`` certified points between ``D_min`` and ``D_max``, placed where R bends.

    Starts from the two endpoints (``s = 0`` and ``s = ∞``) and repeatedly solves at the chord
    slopes of the segments whose triangle (chord above, dual lines below) is largest; fewer
    points are returned only when every segment is straight. Sorted by distortion.
    """
    points = [constant_point(problem)]
    if problem.d_max > problem.d_min:
        points += solve(problem, np.array([np.inf]), None, tol, budget, rtol)
    d_span = max(problem.d_max - problem.d_min, 1e-300)
    done: set[tuple[float, float]] = set()
    while len(points) < n_points:
        points.sort(key=lambda pt: pt.distortion)
        r_span = max(max(pt.information for pt in points), 1e-300)
        segments = []
        for left, right in itertools.pairwise(points):
            key = (left.slope, right.slope)
            chord = (left.information - right.information) / max(
                right.distortion - left.distortion, 1e-300
            )
            if key in done or not (right.slope < chord < left.slope):
                continue
            area = _bend(left, right, problem.d_min, d_span, r_span)
            if area > 1e-15:
                segments.append((area, chord, left, right))
        if not segments:
            break
        segments.sort(key=lambda item: -item[0])
        chosen = segments[: n_points - len(points)]
        slopes = np.array([chord for _, chord, _, _ in chosen])
        initial = np.stack([0.5 * (left.output + right.output) for _, _, left, right in chosen])
        for _, _, left, right in chosen:
            done.add((left.slope, right.slope))
        points += solve(problem, slopes, initial, tol, budget, rtol)
    points.sort(key=lambda pt: pt.distortion)
    return points
