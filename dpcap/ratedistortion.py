"""Risk–distortion ``R(D)`` (Mir) and mutual-information privacy–distortion (Wang–Ying–Zhang).

For a prior ``p`` on inputs and a distortion ``d[x, y] ≥ 0`` (the cost of releasing y for x),

    R(D) = min { I(p, W) : E_{p,W} d(X, Y) ≤ D },

the least information a mechanism must leak to stay within expected distortion D: Mir's privacy
risk–distortion function (Mir 2012, eq. 4), Shannon's rate–distortion function, and Wang, Ying
and Zhang's mutual-information privacy–distortion function for a database prior. It is convex
and non-increasing on ``[D_min, D_max]`` and 0 from ``D_max`` on, with

    D_min = Σ_x p_x min_y d(x, y),     D_max = min_y Σ_x p_x d(x, y).

At slope ``dR/dD = −s`` the optimal mechanism is the exponential mechanism
``W[x, y] ∝ q_y e^{−s d(x, y)}`` (Mir, Thm 3) for its own output law ``q``; Blahut's algorithm
(:mod:`dpcap.solvers.ratedistortion`) finds it for a given s. Users give D, never s: the slope is
found by a monotone search, because the distortion ``D_s`` of the optimum is non-increasing in s.

Every answer is a bracket recomputed here from the objects the engine returns:

* **upper**: ``I(p, W)`` of a mechanism W whose own expected distortion is ``≤ D`` (feasible,
  so ``R(D) ≤ I(p, W)``); ``value`` is this conservative end (a leakage is never
  under-reported).
* **lower**: Blahut's dual line. For every slope ``s ≥ 0`` and output law ``q``, with
  ``c_x = Σ_y q_y e^{−s d0(x,y)}`` and ``d0`` the distortion less its row minima,
  ``R(D) ≥ −s (D − D_min) − Σ_x p_x log c_x − log max_y Σ_x p_x e^{−s d0(x,y)} / c_x``
  *for every D*, so the lines of all the slopes tried are evaluated at the requested D itself.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from dpcap import _validation as check
from dpcap.capacity import conclude
from dpcap.privacy import dp_epsilon
from dpcap.result import (
    ConvergenceWarning,
    CurveResult,
    DistortionResult,
    ParameterError,
    Status,
)
from dpcap.solvers import ratedistortion as engine

__all__ = ["mi_privacy_distortion", "rate_distortion"]

FloatArray = NDArray[np.float64]

METHOD = "blahut"
DEFAULT_MAX_ITER = 100_000
DEFAULT_POINTS = 25

#: A requested D this far below D_min (relative to max(1, |D_min|)) is read as D_min: the
#: rounding of ``Σ_x p_x min_y d`` computed by the caller in another order.
D_MIN_SLACK = 1e-12

#: Slopes tried first when searching for the one that meets a target D, in units of 1/Δ where
#: Δ is the largest shifted distortion: ``e^{−sΔ}`` from 0.99 to e^-1000.
GRID = np.geomspace(1e-2, 1e3, 12)

#: Searches for s give up (and fall back to mixing the bracketing mechanisms) after this many
#: engine solves, or when the bracket in s is this narrow (relative): D_s then jumps across D.
MAX_SOLVES = 100
S_RTOL = 1e-11

#: Slopes are searched in ``[1/S_MAX, S_MAX]/Δ``; beyond, ``s = 0`` (the constant mechanism) and
#: ``s = ∞`` (the mechanisms of distortion D_min) close the bracket.
S_MAX = 1e300

#: Warnings point at the caller of the public function: it calls _run, which calls _at, which
#: calls conclude, which warns.
STACKLEVEL = 5

#: Rounding allowance, in units of the machine epsilon relative to ``|D| + |D_min|``, on the
#: excess distortion ``D − D_min`` that a dual line multiplies by its slope.
ROUNDING = 8.0
EPS = float(np.finfo(np.float64).eps)

#: Solves without halving the gap of the best exponential mechanism after which a search that
#: a mixture already closes stops there.
STALL = 4


@dataclass(frozen=True)
class _Point:
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
class _Problem:
    prior: FloatArray
    distortion: FloatArray
    d_min: float
    d_max: float
    best_output: int  # argmin_y Σ_x p_x d(x, y)
    scale: float  # largest d(x, y) − min_y' d(x, y') over inputs with p_x > 0


def _distortion_matrix(value: Any, n_inputs: int, name: str = "distortion") -> FloatArray:
    """A finite, non-negative ``(n_inputs, n_outputs)`` matrix."""
    arr = np.asarray(value)
    if arr.ndim != 2:
        raise ParameterError(
            f"{name} must be a 2-D matrix d[x, y] (rows are inputs), got shape {arr.shape}"
        )
    if arr.shape[0] != n_inputs:
        raise ParameterError(
            f"{name} must have one row per input of the prior ({n_inputs}), got shape {arr.shape}"
        )
    if arr.shape[1] == 0:
        raise ParameterError(f"{name} must have at least one output column, got {arr.shape}")
    matrix = check._as_float_array(arr, name, ParameterError)
    matrix.setflags(write=False)
    return matrix


def _problem(prior: Any, distortion: Any, *, joint: bool = False) -> _Problem:
    # A joint law's database x^n is row ravel_multi_index(x^n, shape), C order.
    p = check.law(prior, "prior").ravel() if joint else check.distribution(prior, "prior")
    d = _distortion_matrix(distortion, p.shape[0])
    column_cost = p @ d
    best = int(np.argmin(column_cost))
    d0, d_min = engine.shift(p, d)
    scale = float(d0[p > 0].max())
    d_max = float(column_cost[best])
    return _Problem(p, d, d_min, max(d_max, d_min), best, scale)


def _target(D: Any, problem: _Problem) -> float:
    if isinstance(D, bool) or not isinstance(D, numbers.Real) or not math.isfinite(float(D)):
        raise ParameterError(f"D must be a finite real number, got {check.show(D)}")
    value = float(D)
    slack = D_MIN_SLACK * max(1.0, abs(problem.d_min))
    if value < problem.d_min - slack:
        raise ParameterError(
            f"D must be >= D_min = {problem.d_min:.12g}, the least expected distortion of any "
            f"mechanism (R is finite on [D_min, D_max] = [{problem.d_min:.12g}, "
            f"{problem.d_max:.12g}] and 0 beyond); got D={value!r}"
        )
    return max(value, problem.d_min)


def _solve(
    problem: _Problem,
    slopes: FloatArray,
    initial: FloatArray | None,
    tol: float,
    budget: int,
) -> list[_Point]:
    """Engine solves at ``slopes``; every certificate is recomputed from the returned objects."""
    p, d = problem.prior, problem.distortion
    raw = engine.solve(p, d, slopes, tol=tol, max_iter=budget, initial=initial)
    q = np.exp(raw.log_output)
    q /= q.sum(axis=-1, keepdims=True)
    W = raw.mechanism / raw.mechanism.sum(axis=-1, keepdims=True)
    distortion = engine.expected_distortion(p, W, d)
    information = engine.information(p, W)
    intercept = engine.dual_intercept(p, d, slopes, q)
    return [
        _Point(
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


def _constant_point(problem: _Problem) -> _Point:
    """Every input released as ``argmin_y Σ_x p_x d(x, y)``: ``I = 0`` at ``D_max``.

    It is the exponential mechanism at ``s = 0`` with ``q`` the point mass on that output, and
    its dual line is ``R ≥ 0``.
    """
    nx, ny = problem.distortion.shape
    q = np.zeros(ny)
    q[problem.best_output] = 1.0
    W = np.zeros((nx, ny))
    W[:, problem.best_output] = 1.0
    distortion = engine.expected_distortion(problem.prior, W[None], problem.distortion)
    return _Point(
        slope=0.0,
        output=q,
        mechanism=W,
        distortion=float(distortion[0]),
        information=0.0,
        intercept=0.0,
        iterations=0,
    )


def _mix(problem: _Problem, above: _Point, below: _Point, D: float) -> tuple[FloatArray, float]:
    """``θ W_above + (1−θ) W_below`` with expected distortion ``≤ D``, and θ.

    ``I(p, ·)`` is convex in W, so the mixture leaks at most the chord between the two points:
    the bound that closes the bracket where ``D_s`` jumps across D (a linear piece of R).
    """
    span = above.distortion - below.distortion
    theta = min(max((D - below.distortion) / span, 0.0), 1.0)
    for _ in range(60):
        W = theta * above.mechanism + (1.0 - theta) * below.mechanism
        achieved = float(engine.expected_distortion(problem.prior, W[None], problem.distortion)[0])
        if achieved <= D:
            return W, theta
        theta = max(theta - max(achieved - D, 1e-16 * abs(D)) / span, 0.0)
    return below.mechanism, 0.0


@dataclass(frozen=True)
class _Answer:
    mechanism: FloatArray
    upper: float
    lower: float
    slope: float
    iterations: int
    solves: int
    theta: float | None
    exhausted: bool  # some engine solve spent its whole budget


def _chord(below: _Point, points: list[_Point], D: float) -> float:
    """The chord at D between ``below`` and the nearest point beyond D (``≥`` its mixture's I)."""
    above = [pt for pt in points if pt.distortion > D]
    if not above:
        return below.information
    a = min(above, key=lambda pt: pt.distortion)
    theta = (D - below.distortion) / (a.distortion - below.distortion)
    return theta * a.information + (1.0 - theta) * below.information


def _search(problem: _Problem, D: float, tol: float, budget: int) -> _Answer:
    """The exponential mechanism whose bracket at D closes (see :func:`rate_distortion`)."""
    d_min = problem.d_min
    inner = tol / 4  # engine gap; the rest of tol is left for the distance D − D_s
    points: list[_Point] = [_constant_point(problem)]
    iterations, solves = 0, 0

    def run(s: float, initial: FloatArray | None) -> _Point:
        nonlocal iterations, solves
        slopes = np.array([s])
        (pt,) = _solve(problem, slopes, None if initial is None else initial[None], inner, budget)
        iterations += pt.iterations
        solves += 1
        points.append(pt)
        return pt

    def bracket() -> tuple[_Point | None, float, _Point]:
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
        if gap <= tol:
            return True
        stalled = len(history) > STALL and history[-1] > 0.5 * history[-1 - STALL]
        return stalled and _chord(chosen, points, D) - lower <= tol

    # A batch of slopes, then geometric steps (the factor squares each time, so that slopes
    # of any magnitude are reached in a few solves) bracket the crossing D_s = D.
    found = _solve(problem, GRID / problem.scale, None, inner, budget)
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
        pt = run(s if solves < MAX_SOLVES else math.inf, lo.output)
        if pt.distortion <= D or math.isinf(pt.slope):
            hi = pt
        else:
            lo = pt
    factor = 8.0
    while lo.slope == 0.0 and solves < MAX_SOLVES and not math.isinf(hi.slope):
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
    while not closed() and solves < MAX_SOLVES:
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
    answer = _Answer(
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
    if chosen.information - lower > tol and above:
        nearest = min(above, key=lambda pt: pt.distortion)
        W, theta = _mix(problem, nearest, chosen, D)
        upper = float(engine.information(problem.prior, W[None])[0])
        if upper < chosen.information:
            answer = _Answer(W, upper, lower, line_pt.slope, iterations, solves, theta, exhausted)
    return answer


def _point_result(
    problem: _Problem,
    *,
    mechanism: FloatArray,
    target: float,
    upper: float,
    lower: float,
    slope: float,
    iterations: int,
    tol: float,
    unit: str,
    status: Status,
    message: str,
    details: tuple[tuple[str, float], ...],
) -> DistortionResult:
    divisor = check.unit_divisor(unit)
    achieved = float(
        engine.expected_distortion(problem.prior, mechanism[None], problem.distortion)[0]
    )
    lower = max(lower, 0.0)
    upper = max(upper, lower)
    return DistortionResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        mechanism=mechanism,
        target=target,
        distortion_achieved=achieved,
        dp_level=dp_epsilon(mechanism, neighbors="all"),
        slope=slope,
        status=status,
        iterations=iterations,
        method=METHOD,
        unit=unit,
        message=message,
        tol=tol,
        details=(("d_min", problem.d_min), ("d_max", problem.d_max), *details),
    )


def _at(problem: _Problem, D: float, tol: float, budget: int, unit: str) -> DistortionResult:
    """``R(D)`` at one distortion level."""
    constant = _constant_point(problem)
    if problem.d_max <= D or constant.distortion <= D:
        pt = constant
        status, message = conclude(0.0, tol, 0, "D >= D_max: the constant mechanism, R = 0")
        return _point_result(
            problem,
            mechanism=pt.mechanism,
            target=D,
            upper=0.0,
            lower=0.0,
            slope=0.0,
            iterations=0,
            tol=tol,
            unit=unit,
            status=status,
            message=message,
            details=(("solves", 0.0),),
        )
    if problem.d_min >= D:
        (pt,) = _solve(problem, np.array([np.inf]), None, tol, budget)
        status, message = conclude(
            pt.information - pt.intercept,
            tol,
            pt.iterations,
            "D = D_min: slope s = inf (every input released at a distortion-minimising output)",
            stacklevel=STACKLEVEL,
        )
        return _point_result(
            problem,
            mechanism=pt.mechanism,
            target=D,
            upper=pt.information,
            lower=pt.intercept,
            slope=math.inf,
            iterations=pt.iterations,
            tol=tol,
            unit=unit,
            status=status,
            message=message,
            details=(("solves", 1.0),),
        )
    answer = _search(problem, D, tol, budget)
    if answer.theta is None:
        note = f"exponential mechanism at slope s = {answer.slope:.12g}"
        extra: tuple[tuple[str, float], ...] = (("solves", float(answer.solves)),)
    else:
        note = (
            f"mixture (weight {answer.theta:.6g}) of the exponential mechanisms on either side "
            f"of D; dual slope s = {answer.slope:.12g}"
        )
        extra = (("solves", float(answer.solves)), ("mixture_weight", answer.theta))
    note += f" after {answer.solves} engine solves"
    # Open with budget to spare: D_s cannot be placed closer to D in floating point (a slope so
    # large that the rounding of D − D_min, times s, exceeds tol).
    open_status = Status.MAX_ITER if answer.exhausted else Status.INACCURATE
    status, message = conclude(
        answer.upper - answer.lower, tol, answer.iterations, note, open_status, STACKLEVEL
    )
    return _point_result(
        problem,
        mechanism=answer.mechanism,
        target=D,
        upper=answer.upper,
        lower=answer.lower,
        slope=answer.slope,
        iterations=answer.iterations,
        tol=tol,
        unit=unit,
        status=status,
        message=message,
        details=extra,
    )


def _curve(problem: _Problem, n_points: int, tol: float, budget: int, unit: str) -> CurveResult:
    """``R`` sampled between ``D_min`` and ``D_max`` where the curve bends."""
    points = [_constant_point(problem)]
    if problem.d_max > problem.d_min:
        points += _solve(problem, np.array([np.inf]), None, tol, budget)
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
        points += _solve(problem, slopes, initial, tol, budget)
    points.sort(key=lambda pt: pt.distortion)

    results = []
    for pt in points:
        lower = _own_lower(pt, problem.d_min)
        gap = pt.information - max(lower, 0.0)
        status = Status.CONVERGED if gap <= tol else Status.MAX_ITER
        results.append(
            _point_result(
                problem,
                mechanism=pt.mechanism,
                target=pt.distortion,
                upper=pt.information,
                lower=lower,
                slope=pt.slope,
                iterations=pt.iterations,
                tol=tol,
                unit=unit,
                status=status,
                message=f"certified gap {gap:.3g} nats at slope s = {pt.slope:.12g}",
                details=(),
            )
        )
    open_count = sum(r.status is not Status.CONVERGED for r in results)
    message = (
        f"{len(results)} points on [D_min, D_max] = [{problem.d_min:.6g}, {problem.d_max:.6g}], "
        f"all brackets closed to tol {tol:.3g}"
        if open_count == 0
        else f"{open_count} of {len(results)} points not converged to tol {tol:.3g}"
    )
    if open_count:
        warnings.warn(message, ConvergenceWarning, stacklevel=STACKLEVEL - 1)
    return CurveResult(
        x=np.array([r.distortion_achieved for r in results]),
        value=np.array([r.value for r in results]),
        lower=np.array([r.lower for r in results]),
        upper=np.array([r.upper for r in results]),
        status=np.array([r.status for r in results], dtype=object),
        points=tuple(results),
        method=METHOD,
        unit=unit,
        message=message,
    )


def _own_lower(pt: _Point, d_min: float) -> float:
    """The lower bound at the point's own distortion.

    At ``s = ∞`` the mechanism only uses distortion-minimising outputs, so its distortion is
    ``D_min`` exactly (the recomputed value can differ in the last bit) and the line holds there.
    """
    if math.isinf(pt.slope):
        return pt.intercept
    return pt.line(pt.distortion, d_min) if pt.slope > 0 else 0.0


def _bend(left: _Point, right: _Point, d_min: float, d_span: float, r_span: float) -> float:
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


def _options(tol: Any, max_iter: Any, n_points: Any, D: Any, unit: str) -> tuple[float, int, int]:
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not float(tol) > 0:
        raise ParameterError(f"tol must be a positive number (nats), got {check.show(tol)}")
    if not math.isfinite(float(tol)):
        raise ParameterError(f"tol must be finite, got {tol!r}")
    budget = DEFAULT_MAX_ITER if max_iter is None else check.integer(max_iter, "max_iter", 1)
    if n_points is not None and D is not None:
        raise ParameterError(
            f"n_points is for the whole curve (D=None); got n_points={n_points!r} with D={D!r}"
        )
    points = DEFAULT_POINTS if n_points is None else check.integer(n_points, "n_points", 2)
    check.unit_divisor(unit)
    return float(tol), budget, points


def _run(
    prior: Any,
    distortion: Any,
    D: Any,
    n_points: Any,
    tol: Any,
    max_iter: Any,
    unit: str,
    joint: bool,
) -> DistortionResult | CurveResult:
    problem = _problem(prior, distortion, joint=joint)
    tolerance, budget, points = _options(tol, max_iter, n_points, D, unit)
    if D is None:
        return _curve(problem, points, tolerance, budget, unit)
    return _at(problem, _target(D, problem), tolerance, budget, unit)


@overload
def rate_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: None = None,
    n_points: int | None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CurveResult: ...


@overload
def rate_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: float,
    n_points: None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> DistortionResult: ...


def rate_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: float | None = None,
    n_points: int | None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> DistortionResult | CurveResult:
    r"""Mir's risk–distortion function ``R(D) = min_{W: E d ≤ D} I(p, W)``, certified.

    Parameters
    ----------
    prior : (n_inputs,) array_like
        The input law ``p`` (non-negative, summing to 1 within 1e-9).
    distortion : (n_inputs, n_outputs) array_like
        ``distortion[x, y] = d(x, y)``, the cost of releasing y for x: finite, non-negative.
    D : float, optional
        The distortion budget. ``D_min ≤ D``; for ``D ≥ D_max``, ``R(D) = 0`` (the constant
        mechanism). Without D, the whole curve is returned.
    n_points : int, optional
        Number of points of the curve (default 25, at least 2: ``D_min`` and ``D_max``); for the
        curve only. Fewer are returned only when the curve is a straight line between points.
    tol : float
        Target certified gap ``upper − lower`` (nats).
    max_iter : int, optional
        Budget of Blahut iterations per slope (default 100,000).
    unit : {"nats", "bits"}
        Unit of ``value``, ``lower``, ``upper``. ``slope`` stays in nats per unit distortion
        (it is the exponential mechanism's parameter, like ``dp_level``).

    Returns
    -------
    DistortionResult
        With D: ``value = upper = I(p, mechanism)``, the leakage of a mechanism whose expected
        distortion ``distortion_achieved`` is ``≤ D`` (the conservative end: ``R(D) ≤ upper``),
        ``lower ≤ R(D)`` from Blahut's dual line evaluated at D itself; ``mechanism`` is the
        exponential mechanism ``W[x, y] ∝ q_y e^{−s d(x, y)}`` and ``slope`` its s
        (``dR/dD = −s``); ``dp_level`` its exact ε-DP level over all pairs of inputs
        (``dp_epsilon(mechanism, neighbors="all")``). ``details`` holds ``d_min``, ``d_max``, the
        number of engine ``solves``, and ``mixture_weight`` in the rare case described in Notes.
    CurveResult
        Without D: ``x`` the distortions achieved (increasing, from ``D_min`` to ``D_max``),
        ``value``/``lower``/``upper`` the bracket of ``R`` at each, and ``points[k]`` the
        :class:`DistortionResult` of point k (``target`` = its own distortion).

    Raises
    ------
    PriorError
        If ``prior`` is not a probability vector.
    ParameterError
        If ``distortion`` has the wrong shape or a negative, NaN or infinite entry; if
        ``D < D_min`` (no mechanism is that accurate) or is not a finite number; if ``tol``,
        ``max_iter``, ``n_points`` or ``unit`` is invalid, or ``n_points`` is given with D.

    Warns
    -----
    ConvergenceWarning
        If a bracket did not close to ``tol``: status ``max_iter`` when an engine solve spent
        its budget, ``inaccurate`` when floating point cannot place ``D_s`` close enough to D
        (a slope so large that the rounding of ``D − D_min``, times s, exceeds ``tol``: e.g.
        distortions of 1e-11 next to 1). The bracket is valid either way.

    Notes
    -----
    *Optimal mechanism* (Mir 2012, Thm 3; Blahut 1972). At slope s the minimiser of
    ``I(p, W) + s E d`` is ``W[x, y] = q_y e^{−s d(x,y)} / c_x`` where ``q = pW`` is its own
    output law; it is found by Blahut's iteration ``q_y ← q_y Σ_x p_x e^{−s d(x,y)} / c_x``
    (:mod:`dpcap.solvers.ratedistortion`, with a Newton polish).

    *Certificate.* With ``d0 = d − min_y d`` (row-wise), for every ``s ≥ 0`` and every ``q``,

    .. math:: R(D) \ge -s (D - D_{min}) - \sum_x p_x \log c_x
              - \log \max_y \sum_x p_x e^{-s d_0(x,y)} / c_x,
              \qquad c_x = \sum_y q_y e^{-s d_0(x,y)},

    for every D (Blahut 1972; Csiszár 1974; Cover & Thomas §10.8): a line of slope −s below the
    convex R. It is evaluated at the requested D, not only at the point ``D_s`` the mechanism
    reaches, so ``lower ≤ R(D) ≤ upper`` holds at D itself (``D − D_min`` is widened by
    ``8ε(|D| + |D_min|)`` for its rounding, which the slope multiplies). The slope is found by
    a search (a grid of slopes, then Illinois regula falsi in ``log s``) on the monotone map
    ``s ↦ D_s`` until a feasible mechanism (``D_s ≤ D``) and the best line meet within
    ``tol``; the gap is ``(I − line at D_s) + s (D − D_s)``. Where ``D_s`` jumps across D (R
    linear around D), or moves with the engine's rounding rather than with s (near a slope at
    which an output leaves the optimal support), no single slope hits D closely enough: the
    mechanism is then the mixture of the two exponential mechanisms on either side, with
    distortion ``≤ D`` (I is convex in W, so it leaks at most their chord); ``slope`` is then
    the s of the dual line and ``details`` holds the ``mixture_weight``.

    *Privacy* (Mir 2012, Thm 4, from McSherry–Talwar): the exponential mechanism at slope s is
    ``2 s Δd``-differentially private, ``Δd = max_y max_{x, x'} |d(x,y) − d(x',y)|`` over the
    pairs of inputs considered neighbours (here all of them). ``dp_level`` is the exact level
    of the returned matrix, ``≤ 2 s Δd`` (for ``s Δd`` beyond ~700 the smallest entries
    underflow to 0 in floating point, and the level of the stored matrix is then ∞).

    References
    ----------
    D. J. Mir, "Information-theoretic foundations of differential privacy", FPS 2012: eq. (4),
    Thm 2 (convex, non-increasing), Thm 3 (exponential form), Thm 4, Fig. 1.
    R. E. Blahut, "Computation of channel capacity and rate-distortion functions", IEEE Trans.
    Inf. Theory 18(4), 1972. I. Csiszár, "On the computation of rate-distortion functions",
    IEEE Trans. Inf. Theory 20(1), 1974. T. M. Cover and J. A. Thomas, *Elements of Information
    Theory*, 2nd ed., §10.3 (binary source, Hamming distortion), §10.8.

    Examples
    --------
    A fair bit with Hamming distortion: ``R(D) = log 2 − h(D)``, the optimal mechanism is
    randomized response with ``ε = s = log((1 − D)/D)``.

    >>> import math
    >>> res = rate_distortion([0.5, 0.5], [[0, 1], [1, 0]], D=0.1)
    >>> h = -0.1 * math.log(0.1) - 0.9 * math.log(0.9)
    >>> abs(res.value - (math.log(2) - h)) < 1e-8, res.lower <= math.log(2) - h <= res.upper
    (True, True)
    >>> round(res.slope, 6), round(res.dp_level, 6), round(math.log(9), 6)
    (2.197225, 2.197225, 2.197225)
    """
    return _run(prior, distortion, D, n_points, tol, max_iter, unit, joint=False)


@overload
def mi_privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: None = None,
    n_points: int | None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CurveResult: ...


@overload
def mi_privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: float,
    n_points: None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> DistortionResult: ...


def mi_privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: float | None = None,
    n_points: int | None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> DistortionResult | CurveResult:
    """Wang–Ying–Zhang's mutual-information privacy–distortion function of a database.

    The least mutual-information privacy (MIP) leakage ``I(X; Y)`` of a mechanism on the
    database domain whose expected distortion is at most D (Ünsal & Önen §5, eqs. 53–56):

        min_{P_{Y|X}} I(X; Y)   s.t.   E d(X, Y) ≤ D,

    i.e. the rate–distortion function of the database prior: this is :func:`rate_distortion`
    with the database law as the source, and returns the same results.

    Parameters
    ----------
    prior : array_like
        The law of the database ``X = (X_1, …, X_n)``: a probability vector over the rows of
        ``distortion``, or a joint law of shape ``(m_1, …, m_n)``, whose database ``x^n`` is row
        ``numpy.ravel_multi_index(x^n, shape)`` (C order), as everywhere in dpcap.
    distortion : (n_databases, n_outputs) array_like
        ``d(x, y) ≥ 0``, e.g. the Hamming distance between the database x and a released
        database y (Wang–Ying–Zhang's choice).
    D, n_points, tol, max_iter, unit
        As for :func:`rate_distortion`.

    Returns
    -------
    DistortionResult or CurveResult
        As for :func:`rate_distortion`: ``value`` is the conservative (upper) end, the
        mechanism attains it, and ``dp_level`` is its exact ε-DP level over all pairs of
        databases (use :func:`dpcap.dp_epsilon` with ``neighbors="hamming"`` on the mechanism
        for the level under the usual neighbour relation).

    Raises
    ------
    PriorError, ParameterError
        As for :func:`rate_distortion`.

    Notes
    -----
    Wang, Ying and Zhang compare this MIP–distortion trade-off with the ε-DP one,
    ``ε*(D)`` (the least ε of a mechanism with distortion ≤ D, an LP: see
    ``dpcap.privacy_distortion``), and with identifiability; with Hamming distortion they show
    that the privacy–distortion functions satisfy ``ε*(D) ≤ ε_i*(D) ≤ ε*(D) + 2 ε_X`` where
    ``ε_X`` is the largest log-ratio of the prior on neighbouring databases (Ünsal & Önen,
    eqs. 57–58). The optimiser here is an exponential mechanism (Mir, Thm 3), hence
    ``2 s Δd``-DP.

    References
    ----------
    W. Wang, L. Ying and J. Zhang, "On the relation between identifiability, differential
    privacy and mutual-information privacy", IEEE Trans. Inf. Theory 62(9), 5018–5029, 2016.
    B. Ünsal and M. Önen, "Information-theoretic approaches to differential privacy", §5.
    D. J. Mir, "Information-theoretic foundations of differential privacy", FPS 2012.

    Examples
    --------
    Two independent fair bits, released as two bits with Hamming distance as the distortion:
    ``R(D) = 2 (log 2 − h(D/2))`` (one binary rate–distortion problem per bit).

    >>> import math
    >>> import numpy as np
    >>> bits = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> hamming = (bits[:, None, :] != bits[None, :, :]).sum(axis=-1)
    >>> res = mi_privacy_distortion(np.full((2, 2), 0.25), hamming, D=0.2)
    >>> h = -0.1 * math.log(0.1) - 0.9 * math.log(0.9)
    >>> res.lower <= 2 * (math.log(2) - h) <= res.upper
    True
    """
    return _run(prior, distortion, D, n_points, tol, max_iter, unit, joint=True)
