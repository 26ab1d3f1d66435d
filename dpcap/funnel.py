r"""Privacy funnel, information bottleneck, perfect privacy, inference privacy (Hsu et al. §III-B).

A joint law ``joint[s, x] = P(S=s, X=x)`` of a private attribute S and the data X is given; a
mechanism ``P_{Y|X}`` releases Y, so ``S − X − Y`` is a Markov chain. The two information
trade-offs (Hsu et al., survey, §III-B1, eq. 12; Makhdoumi et al. 2014) are

    PF(R) = min { I(S;Y) : I(X;Y) ≥ R },        IB(R) = max { I(S;Y) : I(X;Y) ≤ R },

for ``R ∈ [0, H(X)]``; together they bound the achievable region
``{(I(X;Y), I(S;Y))}`` from below and above (Hsu et al. 2018). PF is convex and IB concave in
R, both non-decreasing, with ``PF(0) = IB(0) = 0`` and ``PF(H(X)) = IB(H(X)) = I(S;X)``.

Neither problem is convex in ``P_{Y|X}``. With ``q_y = P_{X|Y=y}`` and ``T = P_{S|X}``,

    I(X;Y) = H(X) − Σ_y P(y) H(q_y),        I(S;Y) = H(S) − Σ_y P(y) H(T q_y),

and any weights λ on posteriors with ``Σ_j λ_j q_j = P_X`` *is* a mechanism,
``P(Y=j | X=x) = λ_j q_j(x) / P_X(x)``: over a finite set of posteriors each problem is a linear
program in λ (:mod:`dpcap.solvers.envelope`). Every value reported here is recomputed from the
returned mechanism, never taken from an LP objective, and the mechanism is feasible (it is mixed
with full disclosure, or with a constant release, by the least weight that restores
``I(X;Y) ≥ R`` or ``≤ R`` when rounding leaves it a hair outside).

Brackets (``lower ≤ true value ≤ upper``):

* the achieved end: ``upper`` of PF and ``lower`` of IB are ``I(S;Y)`` of the mechanism;
* the certified end, for ``|X| ≤ 4`` (method ``"grid"``): the LP dual ``(μ, ν)`` bounds the LP
  over *all* posteriors once ``sup_q φ(q)``, ``φ(q) = σ H(Tq) − μ·q − νσ H(q)``, is bounded over
  the whole simplex, which :func:`dpcap.solvers.envelope.violation_bound` does cell by cell on a
  simplicial mesh (tangent planes of the concave part, chords of the convex part); the mesh is
  bisected until the bracket closes to ``tol``;
* for larger X (method ``"local"``) only the trivial ends: ``PF(R) ≥ max(0, R − H(X|S))``
  (``I(X;Y) = I(S;Y) + I(X;Y|S)`` and ``I(X;Y|S) ≤ H(X|S)``) and
  ``IB(R) ≤ min(R, I(S;X))`` (data processing).

References
----------
.. [1] H. Hsu, N. Martinez, M. Bertran, G. Sapiro, F. P. Calmon, "A survey on statistical,
   information and estimation-theoretic views on privacy", §III-B.
.. [2] A. Makhdoumi, S. Salamatian, N. Fawaz, M. Médard, "From the information bottleneck to
   the privacy funnel", ITW 2014.
.. [3] F. P. Calmon, N. Fawaz, "Privacy against statistical inference", Allerton 2012.
.. [4] F. P. Calmon, A. Makhdoumi, M. Médard, "Fundamental limits of perfect privacy",
   ISIT 2015; B. Rassouli, D. Gündüz, "On perfect privacy", IEEE JSAIT 2021 (the LP over the
   extreme points).
.. [5] H. S. Witsenhausen, A. D. Wyner, "A conditional entropy bound for a pair of discrete
   random variables", IEEE Trans. IT 1975 (the envelope over posteriors); A. D. Wyner, J. Ziv,
   "A theorem on the entropy of certain binary sequences" (Mrs. Gerber's lemma), 1973.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.special import rel_entr, xlogy

from dpcap import _validation as check
from dpcap.capacity import conclude
from dpcap.privacy import dp_epsilon
from dpcap.result import (
    ConvergenceWarning,
    DistortionResult,
    FunnelResult,
    ParameterError,
    PriorError,
    ProblemTooLargeError,
    SolverError,
    Status,
)
from dpcap.solvers import envelope

__all__ = [
    "FunnelCurve",
    "inference_privacy",
    "information_bottleneck",
    "information_bottleneck_curve",
    "perfect_privacy",
    "privacy_funnel",
    "privacy_funnel_curve",
]

FloatArray = NDArray[np.float64]
Kind = Literal["pf", "ib"]

METHODS = ("auto", "grid", "local")
INFERENCE_SOLVERS = ("CLARABEL", "ECOS", "SCS")

#: ``method="auto"`` uses the certified mesh LP up to this many values of X (with positive
#: probability), the local multi-start method beyond.
GRID_MAX = 4
DEFAULT_TOL = 1e-7
DEFAULT_MAX_ITER = 1_000
DEFAULT_POINTS = 25

#: A requested R this far above H(X) (relative) is read as H(X): its rounding by the caller.
R_SLACK = 1e-9

#: perfect_privacy enumerates C(|X|, rank) bases; beyond this many it refuses.
MAX_BASES = 200_000

#: Warnings point at the caller of the public function (public → _point → _finish → conclude).
STACKLEVEL = 5

_NAMES = {"pf": "privacy_funnel", "ib": "information_bottleneck"}


@dataclass(frozen=True, repr=False)
class FunnelCurve:
    """A sampled privacy funnel or information bottleneck curve over ``R ∈ [0, H(X)]``.

    ``x`` are the utility levels R, ``value``, ``lower`` and ``upper`` the certified ordinates
    (in ``unit``), ``utility`` and ``leakage`` the ``I(X;Y)`` and ``I(S;Y)`` of each point's
    mechanism, ``status`` one :class:`~dpcap.result.Status` per point, and ``points[k]`` the
    full :class:`~dpcap.result.FunnelResult` of point k (with its mechanism). ``problem`` is
    ``"privacy_funnel"`` or ``"information_bottleneck"``.
    """

    x: FloatArray
    value: FloatArray
    lower: FloatArray
    upper: FloatArray
    utility: FloatArray
    leakage: FloatArray
    status: NDArray[np.object_]
    points: tuple[FunnelResult, ...]
    problem: str
    method: str
    unit: str
    message: str

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, k: int) -> FunnelResult:
        return self.points[k]

    def __repr__(self) -> str:
        done = sum(s is Status.CONVERGED for s in self.status)
        return (
            f"FunnelCurve({self.problem}, {len(self)} points, R in [{float(self.x.min()):.6g}, "
            f"{float(self.x.max()):.6g}] {self.unit}, {done} converged, "
            f"largest gap {float(np.max(self.upper - self.lower)):.3g}, method={self.method!r})"
        )


# --------------------------------------------------------------------------------------------
# The problem and the information of a mechanism


@dataclass(frozen=True)
class _Problem:
    joint: FloatArray  # (|S|, |X|), as given (validated)
    px: FloatArray  # P_X
    ps: FloatArray  # P_S
    xs: NDArray[np.int64]  # support of P_X
    T: FloatArray  # P_{S|X} on the supports of P_S and P_X
    p: FloatArray  # P_X on its support
    hx: float  # H(X) = I(X;X)
    hs: float  # H(S)
    isx: float  # I(S;X)


def _joint(value: Any) -> _Problem:
    arr = np.asarray(value)
    if arr.ndim != 2:
        raise PriorError(
            f"joint must be a 2-D matrix joint[s, x] = P(S=s, X=x), got an array of shape "
            f"{arr.shape}"
        )
    joint = check.law(arr, "joint")
    px, ps = joint.sum(axis=0), joint.sum(axis=1)
    xs = np.flatnonzero(px > 0)
    ss = np.flatnonzero(ps > 0)
    p = px[xs]
    T = joint[np.ix_(ss, xs)] / p[None, :]
    T = T / T.sum(axis=0, keepdims=True)
    problem = _Problem(joint, px, ps, xs, T, p, 0.0, 0.0, 0.0)
    hx, isx = _informations(problem, np.eye(joint.shape[1]))
    hs = float(-np.sum(xlogy(ps, ps)))
    return dataclasses.replace(problem, hx=hx, hs=hs, isx=isx)


def _informations(problem: _Problem, W: FloatArray) -> tuple[float, float]:
    """``(I(X;Y), I(S;Y))`` of the mechanism ``W = P_{Y|X}``, from the joint laws (nats)."""
    py = problem.px @ W
    joint_xy = problem.px[:, None] * W
    joint_sy = problem.joint @ W
    ixy = float(np.sum(rel_entr(joint_xy, np.outer(problem.px, py))))
    isy = float(np.sum(rel_entr(joint_sy, np.outer(problem.ps, py))))
    return max(ixy, 0.0), max(isy, 0.0)


def _mechanism(problem: _Problem, posteriors: FloatArray, weights: FloatArray) -> FloatArray:
    """``P(Y=j | X=x) = λ_j q_j(x) / P_X(x)`` (rows renormalised), posteriors merged if equal.

    Values of X with probability 0 get the output law as their row (any row would do).
    """
    keys = np.round(posteriors, 13)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    k = int(inverse.max()) + 1
    merged_w = np.bincount(inverse, weights=weights, minlength=k)
    merged_q = np.zeros((k, posteriors.shape[1]))
    np.add.at(merged_q, inverse, weights[:, None] * posteriors)
    merged_q /= merged_w[:, None]
    body = merged_w[None, :] * merged_q.T / problem.p[:, None]  # (n, k)
    body /= body.sum(axis=1, keepdims=True)
    W = np.empty((problem.px.shape[0], k))
    W[problem.xs] = body
    output = problem.p @ body
    off = np.setdiff1d(np.arange(problem.px.shape[0]), problem.xs)
    W[off] = output
    return W


def _constant(problem: _Problem) -> FloatArray:
    return np.ones((problem.px.shape[0], 1))


def _repair(problem: _Problem, W: FloatArray, R: float, kind: Kind) -> tuple[FloatArray, float]:
    """Make ``W`` feasible by time sharing; return it and the weight θ of the fallback.

    Funnel: ``[(1−θ) W, θ I]`` (full disclosure on separate outputs) has
    ``I(X;Y) = (1−θ) I_W + θ H(X)``; bottleneck: ``[(1−θ) W, θ 1]`` (a constant output) has
    ``I(X;Y) = (1−θ) I_W``. θ is the least weight that meets R, nudged up against rounding.
    """
    n = problem.px.shape[0]

    def ok(utility: float) -> bool:
        return utility >= R if kind == "pf" else utility <= R

    ixy, _ = _informations(problem, W)
    if ok(ixy):
        return W, 0.0
    theta = (R - ixy) / max(problem.hx - ixy, 1e-300) if kind == "pf" else 1.0 - R / ixy
    for _ in range(8):
        theta = min(max(theta, 0.0), 1.0)
        fallback = np.eye(n) if kind == "pf" else _constant(problem)
        mixed = np.concatenate([(1.0 - theta) * W, theta * fallback], axis=1)
        if ok(_informations(problem, mixed)[0]):
            return mixed, theta
        theta = theta * (1.0 + 1e-9) + 1e-15
    fallback = np.eye(n) if kind == "pf" else _constant(problem)
    return fallback, 1.0


# --------------------------------------------------------------------------------------------
# One point


@dataclass(frozen=True)
class _Raw:
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
    engine: str
    note: str
    details: tuple[tuple[str, float], ...]


def _ordered(lower: float, upper: float, kind: Kind) -> tuple[float, float]:
    """Resolve a crossing by rounding on the certified side, never on the achieved one."""
    return (min(lower, upper), upper) if kind == "pf" else (lower, max(upper, lower))


def _trivial_bounds(problem: _Problem, R: float, kind: Kind) -> tuple[float, float]:
    """``(lower, upper)`` that hold without any solve (see the module docstring)."""
    if kind == "pf":
        return max(0.0, R - (problem.hx - problem.isx)), problem.isx
    return 0.0, min(R, problem.isx)


def _method(problem: _Problem, method: Any) -> str:
    if method not in METHODS:
        raise ParameterError(f"method must be one of {METHODS}, got {check.show(method)}")
    if method == "auto":
        return "grid" if problem.p.shape[0] <= GRID_MAX else "local"
    if method == "grid" and problem.p.shape[0] > GRID_MAX:
        raise ParameterError(
            f"method='grid' meshes the simplex of X and is limited to {GRID_MAX} values of X "
            f"with positive probability; this joint law has {problem.p.shape[0]} "
            "(use method='local')"
        )
    return str(method)


def _point(
    problem: _Problem,
    R: float,
    kind: Kind,
    *,
    method: str,
    tol: float,
    max_iter: int,
    rng: np.random.Generator,
    start: FloatArray | None,
) -> tuple[_Raw, FloatArray | None]:
    """Solve at one R (nats); also return the support posteriors (a start for the next R)."""
    trivial_lower, trivial_upper = _trivial_bounds(problem, R, kind)
    # Endpoints and degenerate laws: a closed-form mechanism closes the bracket.
    candidates = []
    if R <= 0.0:
        candidates.append(_constant(problem))
    if problem.hx <= R:
        candidates.append(np.eye(problem.px.shape[0]))
    for W in candidates:
        W, _ = _repair(problem, W, R, kind)
        utility, leakage = _informations(problem, W)
        lower, upper = _ordered(
            trivial_lower if kind == "pf" else leakage,
            leakage if kind == "pf" else trivial_upper,
            kind,
        )
        if upper - lower <= tol:
            line = (-math.inf, 0.0) if kind == "pf" else (math.inf, 0.0)
            raw = _Raw(R, W, utility, leakage, lower, upper, math.nan, line, 0, "exact",
                       "optimal", "closed form at an endpoint of [0, H(X)]", ())  # fmt: skip
            return raw, None
    if problem.p.shape[0] < 2:  # H(X) = 0: only R = 0 exists (handled above)
        raise ParameterError(f"R must be 0 when H(X) = 0, got R={R!r}")
    s = 1.0 if kind == "pf" else -1.0
    budget = s * (problem.hx - R)
    if method == "grid":
        sol, mesh = envelope.solve(
            problem.T, problem.p, R, kind, tol=tol, max_iter=max_iter, start=start
        )
        anchors = np.concatenate([sol.posteriors, problem.p[None, :]])
        bound = envelope.violation_bound(mesh, sol.mu, sol.nu, kind, anchors)
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
        if sol.status != "optimal":
            note += f"; the engine stopped: {sol.status}"
        details: tuple[tuple[str, float], ...] = (
            ("cells", float(sol.cells)),
            ("sup_phi_bound", bound),
            ("dual_intercept", line[0]),
            ("dual_slope", nu),
        )
        slope = nu
    else:
        sol = envelope.local_solve(
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
    W = _mechanism(problem, sol.posteriors, sol.weights)
    W, theta = _repair(problem, W, R, kind)
    if theta > 0:
        note += f"; mixed with {'full disclosure' if kind == 'pf' else 'a constant release'} "
        note += f"by θ = {theta:.3g} to meet R"
    utility, leakage = _informations(problem, W)
    if kind == "pf":
        lower, upper = max(trivial_lower, certified), leakage
    else:
        lower, upper = leakage, min(trivial_upper, certified)
    lower, upper = _ordered(lower, upper, kind)
    raw = _Raw(R, W, utility, leakage, lower, upper, slope, line, sol.iterations,
               method, sol.status, note, details)  # fmt: skip
    return raw, sol.posteriors


def _finish(
    problem: _Problem, raw: _Raw, kind: Kind, tol: float, unit: str, *, warn: bool
) -> FunnelResult:
    open_status = {"max_iter": Status.MAX_ITER}.get(raw.engine, Status.INACCURATE)
    with warnings.catch_warnings():
        if not warn:
            warnings.simplefilter("ignore", ConvergenceWarning)
        status, message = conclude(
            raw.upper - raw.lower, tol, raw.iterations, raw.note, open_status, STACKLEVEL
        )
    divisor = check.unit_divisor(unit)
    value = raw.upper if kind == "pf" else raw.lower
    return FunnelResult(
        value=value / divisor,
        lower=raw.lower / divisor,
        upper=raw.upper / divisor,
        mechanism=raw.mechanism,
        target=raw.R / divisor,
        utility_achieved=raw.utility / divisor,
        leakage_achieved=raw.leakage / divisor,
        slope=raw.slope,
        status=status,
        iterations=raw.iterations,
        problem=_NAMES[kind],
        method=raw.method,
        unit=unit,
        message=message,
        tol=tol,
        details=raw.details,
    )


# --------------------------------------------------------------------------------------------
# Options


def _tolerance(tol: Any) -> float:
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not float(tol) > 0:
        raise ParameterError(f"tol must be a positive number (nats), got {check.show(tol)}")
    if not math.isfinite(float(tol)):
        raise ParameterError(f"tol must be finite, got {tol!r}")
    return float(tol)


def _budget(Delta: Any) -> float:
    if isinstance(Delta, bool) or not isinstance(Delta, numbers.Real):
        raise ParameterError(f"Delta must be a real number >= 0, got {check.show(Delta)}")
    value = float(Delta)
    if math.isnan(value) or value < 0:
        raise ParameterError(f"Delta must be >= 0, got {Delta!r}")
    if not math.isfinite(value):
        raise ParameterError(f"Delta must be finite, got {Delta!r}")
    return value


def _level(R: Any, problem: _Problem, divisor: float, unit: str) -> float:
    """R in nats, validated against ``[0, H(X)]`` (R itself is in ``unit``)."""
    if isinstance(R, bool) or not isinstance(R, numbers.Real) or not math.isfinite(float(R)):
        raise ParameterError(f"R must be a finite real number, got {check.show(R)}")
    value = float(R) * divisor
    top = problem.hx
    if value < 0 or value > top * (1.0 + R_SLACK) + 1e-15:
        raise ParameterError(
            f"R must be in [0, H(X)] = [0, {top / divisor:.12g}] {unit}, got R={R!r}"
        )
    return min(value, top)


def _common(
    joint: Any, method: Any, tol: Any, max_iter: Any, unit: Any, seed: Any
) -> tuple[_Problem, str, float, int, float, np.random.Generator]:
    problem = _joint(joint)
    divisor = check.unit_divisor(unit)
    tolerance = _tolerance(tol)
    budget = DEFAULT_MAX_ITER if max_iter is None else check.integer(max_iter, "max_iter", 1)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ParameterError(f"seed must be an integer, got {check.show(seed)}")
    return (
        problem,
        _method(problem, method),
        tolerance,
        budget,
        divisor,
        np.random.default_rng(int(seed)),
    )


def _single(
    joint: Any, R: Any, kind: Kind, method: Any, tol: Any, max_iter: Any, unit: str, seed: Any
) -> FunnelResult:
    problem, how, tolerance, budget, divisor, rng = _common(
        joint, method, tol, max_iter, unit, seed
    )
    level = _level(R, problem, divisor, unit)
    raw, _ = _point(
        problem, level, kind, method=how, tol=tolerance, max_iter=budget, rng=rng, start=None
    )
    return _finish(problem, raw, kind, tolerance, unit, warn=True)


def _curve(
    joint: Any,
    n_points: Any,
    kind: Kind,
    method: Any,
    tol: Any,
    max_iter: Any,
    unit: str,
    seed: Any,
) -> FunnelCurve:
    problem, how, tolerance, budget, divisor, rng = _common(
        joint, method, tol, max_iter, unit, seed
    )
    count = DEFAULT_POINTS if n_points is None else check.integer(n_points, "n_points", 2)
    levels = np.linspace(0.0, problem.hx, count)
    raws: list[_Raw] = []
    start: FloatArray | None = None
    for R in levels:
        raw, support = _point(
            problem, float(R), kind, method=how, tol=tolerance, max_iter=budget, rng=rng,
            start=start,
        )  # fmt: skip
        start = support if support is not None else start
        raws.append(raw)
    raws = _monotone(raws, kind)
    points = tuple(_finish(problem, raw, kind, tolerance, unit, warn=False) for raw in raws)
    status = np.array([pt.status for pt in points], dtype=object)
    open_count = sum(st is not Status.CONVERGED for st in status)
    gaps = np.array([pt.gap for pt in points])
    message = (
        f"{count} points on R in [0, H(X)], largest certified gap {float(gaps.max()):.3g} "
        f"{unit} (tol {tolerance:.3g} nats); {open_count} not converged"
    )
    if open_count:
        warnings.warn(
            f"{_NAMES[kind]}_curve: {open_count} of {count} points did not reach tol "
            f"{tolerance:.3g} (largest gap {float(gaps.max()):.3g} {unit}); see each point's "
            "message",
            ConvergenceWarning,
            stacklevel=3,
        )
    return FunnelCurve(
        x=levels / divisor,
        value=np.array([pt.value for pt in points]),
        lower=np.array([pt.lower for pt in points]),
        upper=np.array([pt.upper for pt in points]),
        utility=np.array([pt.utility_achieved for pt in points]),
        leakage=np.array([pt.leakage_achieved for pt in points]),
        status=status,
        points=points,
        problem=_NAMES[kind],
        method=how,
        unit=unit,
        message=message,
    )


def _monotone(raws: list[_Raw], kind: Kind) -> list[_Raw]:
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


def _adopt(raw: _Raw, other: _Raw, kind: Kind) -> _Raw:
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


# --------------------------------------------------------------------------------------------
# Public API


def privacy_funnel(
    joint: Any,
    /,
    *,
    R: float,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    max_iter: int | None = None,
    unit: str = "nats",
    seed: int = 0,
) -> FunnelResult:
    r"""The privacy funnel ``PF(R) = min I(S;Y)`` over mechanisms with ``I(X;Y) ≥ R``.

    Parameters
    ----------
    joint : array_like, shape (n_private, n_data)
        ``joint[s, x] = P(S=s, X=x)``: S is the private attribute, X the data the mechanism
        ``P_{Y|X}`` sees (Markov chain ``S − X − Y``).
    R : float
        The utility to preserve, in ``unit``, in ``[0, H(X)]``.
    method : {"auto", "grid", "local"}
        ``"grid"``: the certified envelope LP over a refined simplicial mesh of the posteriors
        (default for at most 4 values of X with positive probability); ``"local"``: column
        generation with multi-start local search (default beyond; no certificate).
    tol : float
        Target certified gap ``upper − lower`` in nats.
    max_iter : int, optional
        LP solves at most (default 1,000).
    unit : {"nats", "bits"}
        Unit of ``R`` and of every reported information.
    seed : int
        Seed of the random starts of the local method.

    Returns
    -------
    FunnelResult
        ``value = upper`` = ``I(S;Y)`` of ``mechanism`` (``P_{Y|X}``, rows are the values of
        X), whose ``utility_achieved = I(X;Y) ≥ R``; ``lower ≤ PF(R)``. ``slope`` is the
        multiplier ν (``PF(R') ≥ PF(R) + ν (R' − R)`` up to the gap, PF being convex).

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law (negative entries, NaN, total ≠ 1).
    ParameterError
        If ``R`` is outside ``[0, H(X)]`` or an option is invalid.

    Warns
    -----
    ConvergenceWarning
        If the bracket did not close to ``tol`` (always for the local method, whose lower end
        is only ``max(0, R − H(X|S))``).

    See Also
    --------
    privacy_funnel_curve : the whole curve over ``R ∈ [0, H(X)]``.
    information_bottleneck : the upper boundary of the region.

    Notes
    -----
    Hsu et al., survey, §III-B1, eq. (12). With posteriors ``q_j = P_{X|Y=j}``, weights
    ``λ_j = P(Y=j)`` and ``T = P_{S|X}``, ``PF(R) = H(S) − max Σ_j λ_j H(T q_j)`` subject to
    ``Σ_j λ_j q_j = P_X`` and ``Σ_j λ_j H(q_j) ≤ H(X) − R``: an LP over any finite set of
    candidate posteriors, whose optimum is a mechanism with at most ``|X| + 1`` outputs. The
    LP dual ``(μ, ν)`` gives ``PF(R) ≥ H(S) − μ·P_X − ν (H(X) − R) − sup_q φ(q)`` with
    ``φ(q) = H(Tq) − μ·q − ν H(q)``; the supremum over the whole simplex is bounded cell by
    cell, on a simplicial mesh, by ``max_i [φ(v_i) + (1−ν)_+ D(T v_i ‖ T c)]`` (the tangent
    plane of the concave part ``(1−ν) H(Tq)`` at a point ``c``, the chord of the convex part
    ``ν (H(Tq) − H(q))``; proof in :func:`dpcap.solvers.envelope.violation_bound`). The mesh
    is bisected where that bound exceeds ``tol/2`` and the LP re-solved over its vertices until
    ``upper − lower ≤ tol``. Trivial bounds also apply: ``PF(R) ≥ R − H(X|S)``.

    Examples
    --------
    A doubly symmetric binary source: the funnel is linear, attained by erasing X.

    >>> import math
    >>> import numpy as np
    >>> p = 0.1
    >>> joint = 0.5 * np.array([[1 - p, p], [p, 1 - p]])
    >>> res = privacy_funnel(joint, R=0.3)
    >>> i_sx = math.log(2) + p * math.log(p) + (1 - p) * math.log(1 - p)
    >>> abs(res.value - 0.3 * i_sx / math.log(2)) < 1e-7, res.utility_achieved >= 0.3
    (True, True)
    """
    return _single(joint, R, "pf", method, tol, max_iter, unit, seed)


def privacy_funnel_curve(
    joint: Any,
    /,
    *,
    n_points: int | None = None,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    max_iter: int | None = None,
    unit: str = "nats",
    seed: int = 0,
) -> FunnelCurve:
    """The privacy funnel on ``n_points`` equally spaced utilities ``R ∈ [0, H(X)]``.

    Parameters
    ----------
    joint : array_like, shape (n_private, n_data)
        ``joint[s, x] = P(S=s, X=x)``.
    n_points : int, optional
        Number of points, at least 2 (default 25), endpoints included.
    method, tol, max_iter, unit, seed
        As for :func:`privacy_funnel` (``tol`` and ``max_iter`` per point).

    Returns
    -------
    FunnelCurve
        ``x`` = the levels R; per point a :class:`~dpcap.result.FunnelResult` with its
        mechanism. Values are non-decreasing in R (a mechanism that meets a larger R is used at
        a smaller one when it leaks less) and every point's dual line
        ``PF(R') ≥ a + ν R'`` raises the lower ends of all the others.

    Warns
    -----
    ConvergenceWarning
        Once, if some point did not reach ``tol``.

    Examples
    --------
    >>> curve = privacy_funnel_curve([[0.45, 0.05], [0.05, 0.45]], n_points=5)
    >>> bool(np.all(np.diff(curve.value) >= 0)), len(curve)
    (True, 5)
    """
    return _curve(joint, n_points, "pf", method, tol, max_iter, unit, seed)


def information_bottleneck(
    joint: Any,
    /,
    *,
    R: float,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    max_iter: int | None = None,
    unit: str = "nats",
    seed: int = 0,
) -> FunnelResult:
    r"""The information bottleneck ``IB(R) = max I(S;Y)`` over mechanisms with ``I(X;Y) ≤ R``.

    Here S is the *relevant* variable (Tishby et al.): IB is the upper boundary of the region
    ``{(I(X;Y), I(S;Y))}`` whose lower boundary is the privacy funnel (Hsu et al., survey,
    §III-B1; Makhdoumi et al. 2014).

    Parameters
    ----------
    joint : array_like, shape (n_relevant, n_data)
        ``joint[s, x] = P(S=s, X=x)``.
    R : float
        The largest utility (compression rate) allowed, in ``unit``, in ``[0, H(X)]``.
    method, tol, max_iter, unit, seed
        As for :func:`privacy_funnel`.

    Returns
    -------
    FunnelResult
        ``value = lower`` = ``I(S;Y)`` of ``mechanism``, whose ``utility_achieved ≤ R``;
        ``upper ≥ IB(R)``.

    Raises
    ------
    PriorError, ParameterError
        As for :func:`privacy_funnel`.

    Warns
    -----
    ConvergenceWarning
        If the bracket did not close to ``tol`` (always for the local method, whose upper end
        is only ``min(R, I(S;X))``).

    See Also
    --------
    information_bottleneck_curve

    Notes
    -----
    ``IB(R) = H(S) − min Σ_j λ_j H(T q_j)`` subject to ``Σ_j λ_j q_j = P_X`` and
    ``Σ_j λ_j H(q_j) ≥ H(X) − R`` (Witsenhausen & Wyner's conditional entropy bound). The
    certificate is the funnel's with ``σ = −1``: ``φ(q) = −H(Tq) − μ·q + ν H(q)``, bounded per
    cell by ``max_i [φ(v_i) + ν D(v_i ‖ c) − min(ν, 1) D(T v_i ‖ T c)]``. For the doubly
    symmetric binary source with crossover p, Mrs. Gerber's lemma gives
    ``IB(R) = log 2 − h(p ⋆ h⁻¹(log 2 − R))`` (``a ⋆ b = a(1−b) + b(1−a)``), attained by a
    binary symmetric channel.

    Examples
    --------
    >>> import math
    >>> from dpcap.bounds import binary_entropy as h, binary_entropy_inverse as h_inv
    >>> p, R = 0.1, 0.3
    >>> res = information_bottleneck(0.5 * np.array([[1 - p, p], [p, 1 - p]]), R=R)
    >>> a = h_inv(math.log(2) - R)
    >>> exact = math.log(2) - h(p * (1 - a) + a * (1 - p))
    >>> res.lower - 1e-12 <= exact <= res.upper + 1e-12, res.gap <= 1e-7
    (True, True)
    """
    return _single(joint, R, "ib", method, tol, max_iter, unit, seed)


def information_bottleneck_curve(
    joint: Any,
    /,
    *,
    n_points: int | None = None,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    max_iter: int | None = None,
    unit: str = "nats",
    seed: int = 0,
) -> FunnelCurve:
    """The information bottleneck on ``n_points`` equally spaced ``R ∈ [0, H(X)]``.

    Parameters and returns as for :func:`privacy_funnel_curve` (values non-decreasing in R:
    a mechanism with ``I(X;Y) ≤ R`` is used at a larger R when it leaks more; dual lines
    ``IB(R') ≤ a + ν R'`` lower the upper ends).

    Examples
    --------
    >>> curve = information_bottleneck_curve([[0.45, 0.05], [0.05, 0.45]], n_points=5)
    >>> bool(np.all(np.diff(curve.value) >= 0)), curve.problem
    (True, 'information_bottleneck')
    """
    return _curve(joint, n_points, "ib", method, tol, max_iter, unit, seed)


def perfect_privacy(joint: Any, /, *, tol: float = 1e-9, unit: str = "nats") -> FunnelResult:
    r"""The largest utility under perfect privacy: ``g₀ = max I(X;Y)`` s.t. ``I(S;Y) = 0``.

    Perfect privacy with positive utility (``g₀ > 0``) is possible iff ``T = P_{S|X}``
    (restricted to the values of X with positive probability) has a non-trivial null space,
    i.e. ``rank T < |X|`` — always when ``|S| < |X|`` (Calmon, Makhdoumi & Médard 2015).

    Parameters
    ----------
    joint : array_like, shape (n_private, n_data)
        ``joint[s, x] = P(S=s, X=x)``.
    tol : float
        Target gap of the bracket on ``g₀`` (nats).
    unit : {"nats", "bits"}

    Returns
    -------
    FunnelResult
        ``value = lower = g₀`` achieved by ``mechanism`` (``utility_achieved``), whose
        ``leakage_achieved = I(S;Y)`` is 0 up to rounding (≈ 1e-16); ``upper`` is the LP dual
        bound. ``details`` holds ``("rank", rank T)``, ``("nullity", |X| − rank T)`` and
        ``("vertices", number of extreme points)``; ``target`` is 0 and ``problem`` is
        ``"perfect_privacy"``.

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law.
    ProblemTooLargeError
        If the vertex enumeration would try more than 200,000 bases.

    Notes
    -----
    ``I(S;Y) = 0`` iff every posterior ``q = P_{X|Y=y}`` satisfies ``Tq = P_S``: the feasible
    posteriors form the polytope ``Q = {q ≥ 0 : Tq = P_S}`` (``Σ q = 1`` follows), which
    contains ``P_X``. If ``Td = 0`` for some ``d ≠ 0`` then ``P_X ± εd ∈ Q`` and the two-output
    mechanism with these posteriors has ``I(X;Y) > 0``; if T is injective, ``Q = {P_X}`` and
    ``I(X;Y) = 0``. Since ``H`` is concave, splitting each posterior into the vertices of
    ``Q`` only lowers ``Σ λ H(q)``, so ``g₀ = H(X) − min Σ_j λ_j H(v_j)`` over weights on the
    vertices ``v_j`` with ``Σ λ_j v_j = P_X`` (an LP; Rassouli & Gündüz). Its dual ``μ``
    (``μ·v_j ≤ H(v_j)``, shifted until it holds exactly) gives ``H(q) ≥ μ·q`` on all of ``Q``
    and so ``g₀ ≤ H(X) − μ·P_X``; also ``g₀ ≤ H(X|S)``. Vertices are enumerated as basic
    feasible solutions in floating point (rank decided by ``numpy.linalg.matrix_rank``).

    Examples
    --------
    >>> res = perfect_privacy([[0.25, 0.25, 0.0], [0.0, 0.25, 0.25]])
    >>> round(res.value, 6), res.leakage_achieved < 1e-12
    (0.693147, True)
    >>> perfect_privacy([[0.4, 0.1], [0.1, 0.4]]).value
    0.0
    """
    problem = _joint(joint)
    tolerance = _tolerance(tol)
    divisor = check.unit_divisor(unit)
    n = problem.p.shape[0]
    rank = int(np.linalg.matrix_rank(problem.T)) if n > 1 else 1
    nullity = n - rank
    details: tuple[tuple[str, float], ...] = (("rank", float(rank)), ("nullity", float(nullity)))
    if nullity == 0:
        W = _constant(problem)
        utility, leakage = _informations(problem, W)
        lower = upper = 0.0
        iterations, vertices = 0, 1
        note = (
            f"P_(S|X) is injective on the {n} values of X with positive probability (rank {rank}):"
            " only I(X;Y) = 0 is perfectly private"
        )
    else:
        if math.comb(n, rank) > MAX_BASES:
            raise ProblemTooLargeError(
                f"perfect_privacy enumerates the C({n}, {rank}) = {math.comb(n, rank)} bases of "
                f"P_(S|X); more than {MAX_BASES} is too many"
            )
        V = envelope.perfect_privacy_vertices(problem.T, problem.p, rank=rank)
        sol = envelope.perfect_privacy_lp(V, problem.p)
        if sol.status != "optimal":
            raise SolverError("HiGHS failed on the perfect-privacy LP", Status.FAILED)
        W = _mechanism(problem, sol.posteriors, sol.weights)
        utility, leakage = _informations(problem, W)
        h = envelope.entropy_rows(V)
        shift = max(float(np.max(V @ sol.mu - h)), 0.0)
        dual = float(sol.mu @ problem.p) - shift  # ≤ min Σ λ H(q) over all of Q
        lower = utility
        upper = max(min(problem.hx - dual, problem.hx - problem.isx), lower)
        iterations, vertices = 1, V.shape[0]
        note = (
            f"LP over the {vertices} extreme points of {{q : P_(S|X) q = P_S}} (null space of "
            f"dimension {nullity})"
        )
    status, message = conclude(upper - lower, tolerance, iterations, note, Status.INACCURATE, 3)
    return FunnelResult(
        value=lower / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        mechanism=W,
        target=0.0,
        utility_achieved=utility / divisor,
        leakage_achieved=leakage / divisor,
        slope=math.nan,
        status=status,
        iterations=iterations,
        problem="perfect_privacy",
        method="vertex-lp",
        unit=unit,
        message=message,
        tol=tolerance,
        details=(*details, ("vertices", float(vertices))),
    )


# --------------------------------------------------------------------------------------------
# Privacy against statistical inference (Calmon & Fawaz)


def _distortion(value: Any, n_inputs: int) -> FloatArray:
    arr = np.asarray(value)
    if arr.ndim != 2 or arr.shape[0] != n_inputs or arr.shape[1] == 0:
        raise ParameterError(
            f"distortion must be a matrix d[x, y] with one row per value of X ({n_inputs}) and "
            f"at least one column, got shape {arr.shape}"
        )
    return check._as_float_array(arr, "distortion", ParameterError)


def inference_privacy(
    joint: Any,
    distortion: Any,
    Delta: float,
    /,
    *,
    solver: str = "CLARABEL",
    tol: float = DEFAULT_TOL,
    unit: str = "nats",
) -> DistortionResult:
    r"""Privacy against statistical inference with log-loss: ``min I(S;Y)`` s.t. ``E d(X,Y) ≤ Δ``.

    Calmon & Fawaz's threat model (Hsu et al., survey, §III-B2, eq. 14): an adversary who knows
    ``P_{S,X}`` and the mechanism revises its belief about S after seeing Y; with the log-loss
    cost its average gain is ``Δc = I(S;Y)``, which the designer minimises subject to an
    expected distortion budget. The problem is convex in ``P_{Y|X}``.

    Parameters
    ----------
    joint : array_like, shape (n_private, n_data)
        ``joint[s, x] = P(S=s, X=x)``.
    distortion : array_like, shape (n_data, n_outputs)
        ``d[x, y] ≥ 0``, the cost of releasing y for x (defines the output alphabet).
    Delta : float
        The distortion budget Δ, ``≥ D_min = Σ_x P_X(x) min_y d(x, y)``.
    solver : {"CLARABEL", "ECOS", "SCS"}
        The cvxpy solver of the exponential-cone program.
    tol : float
        Target certified gap ``upper − lower`` (nats).
    unit : {"nats", "bits"}

    Returns
    -------
    DistortionResult
        ``value = upper = I(S;Y)`` of ``mechanism`` (recomputed), whose own
        ``distortion_achieved ≤ Δ``; ``lower`` is a Lagrangian bound (Notes); ``slope`` the
        multiplier s of the distortion constraint attaining it (``dI/dΔ ≈ −s``); ``dp_level``
        the mechanism's ε-DP level over all pairs of inputs. ``details`` holds ``d_min``,
        ``d_max``, ``max_gain`` (``Δc* = H(S) − min_y H(S | Y=y)``, the adversary's largest
        gain for this mechanism) and the solver's own objective.

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law.
    ParameterError
        If ``Delta`` is negative, not finite or below ``D_min``, or ``distortion`` is invalid.
    SolverError
        If the conic solver fails.

    Warns
    -----
    ConvergenceWarning
        If ``upper − lower > tol``.

    Notes
    -----
    ``I(S;Y) = Σ_y F(W[:, y])`` with ``F`` convex and positively homogeneous; for every law π
    on S the vector ``g_π[x] = Σ_s P(s,x) log(π_s / P_S(s))`` satisfies ``F(c) ≥ g_π·c``. With
    ``π_y`` the posterior of output y under the returned mechanism this gives
    ``I(S;Y) ≥ Σ G[x,y] W[x,y]`` for *every* mechanism W, and, by weak duality on the budget,
    ``min I(S;Y) ≥ max_{s ≥ 0} Σ_x min_y (G[x,y] + s P_X(x) d[x,y]) − s Δ``: ``lower`` is this
    bound (:func:`dpcap.solvers.envelope.linearised_bound`), computed here from the mechanism,
    not read from the solver; it closes when the mechanism is optimal.

    Examples
    --------
    Releasing X = S itself under Hamming distortion: rate–distortion of S, ``log 2 − h(Δ)``.

    >>> import math
    >>> res = inference_privacy([[0.5, 0.0], [0.0, 0.5]], [[0, 1], [1, 0]], 0.1)
    >>> exact = math.log(2) + 0.1 * math.log(0.1) + 0.9 * math.log(0.9)
    >>> res.lower - 1e-9 <= exact <= res.upper + 1e-9, res.distortion_achieved <= 0.1
    (True, True)
    """
    problem = _joint(joint)
    d = _distortion(distortion, problem.px.shape[0])
    if solver not in INFERENCE_SOLVERS:
        raise ParameterError(f"solver must be one of {INFERENCE_SOLVERS}, got {check.show(solver)}")
    tolerance = _tolerance(tol)
    divisor = check.unit_divisor(unit)
    budget = _budget(Delta)
    px = problem.px
    column_cost = px @ d
    d_min = float(px @ d.min(axis=1))
    d_max = float(column_cost.min())
    if budget < d_min - 1e-12 * max(1.0, d_min):
        raise ParameterError(
            f"Delta must be >= D_min = {d_min:.12g}, the least expected distortion of any "
            f"mechanism; got Delta={Delta!r}"
        )
    budget = max(budget, d_min)
    nearest = np.zeros_like(d)
    nearest[np.arange(d.shape[0]), np.argmin(d, axis=1)] = 1.0
    iterations, hint = 0, math.nan
    if budget >= d_max:
        W = np.zeros_like(d)
        W[:, int(np.argmin(column_cost))] = 1.0
        note, tag, objective = (
            "the constant release of the cheapest output meets Delta",
            "exact",
            0.0,
        )
    else:
        ss = np.flatnonzero(problem.ps > 0)
        reduced = problem.joint[np.ix_(ss, problem.xs)]
        raw = envelope.inference_conic(
            reduced, d[problem.xs], budget, solver=solver, tol=min(1e-9, tolerance)
        )
        if raw.status in ("failed", "infeasible"):
            raise SolverError(f"{solver} failed on the inference-privacy program: {raw.message}")
        W = nearest.copy()
        W[problem.xs] = raw.mechanism
        spent = float(px @ np.sum(d * W, axis=1))
        if spent > budget:  # mix with the nearest-output mechanism (distortion D_min)
            theta = (spent - budget) / max(spent - d_min, 1e-300)
            for _ in range(8):
                theta = min(theta, 1.0)
                mixed = (1.0 - theta) * W + theta * nearest
                if float(px @ np.sum(d * mixed, axis=1)) <= budget:
                    break
                theta = theta * (1.0 + 1e-9) + 1e-15
            W = mixed
        tag, objective, iterations, hint = f"conic/{solver}", raw.objective, 1, raw.slope
        note = f"{solver}: {raw.message}, {raw.solve_time:.3g} s"
    _, leakage = _informations(problem, W)
    ss = np.flatnonzero(problem.ps > 0)
    reduced = problem.joint[np.ix_(ss, problem.xs)]
    d_red = d[problem.xs]
    bound, s_at = envelope.linearised_bound(
        reduced, d_red, budget, envelope.posteriors_of(reduced, W[problem.xs]), hint
    )
    if leakage - bound > tolerance and tag != "exact":
        laws, s_dual, _ = envelope.inference_dual_conic(
            reduced, d_red, budget, solver=solver, tol=min(1e-9, tolerance)
        )
        if np.all(np.isfinite(laws)):
            other, s_other = envelope.linearised_bound(reduced, d_red, budget, laws, s_dual)
            if other > bound:
                bound, s_at = other, s_other
                note += "; lower bound from the solved Lagrangian dual"
    lower = min(max(bound, 0.0), leakage)
    status, message = conclude(leakage - lower, tolerance, iterations, note, Status.INACCURATE, 3)
    py = px @ W
    used = py > 0
    posterior = (problem.joint @ W)[:, used] / py[used]
    post_entropy = -np.sum(xlogy(posterior, posterior), axis=0)
    max_gain = max(problem.hs - float(np.min(post_entropy)), 0.0)
    return DistortionResult(
        value=leakage / divisor,
        lower=lower / divisor,
        upper=leakage / divisor,
        mechanism=W,
        target=float(Delta),
        distortion_achieved=float(px @ np.sum(d * W, axis=1)),
        dp_level=dp_epsilon(W, neighbors="all"),
        slope=s_at,
        status=status,
        iterations=iterations,
        method=tag,
        unit=unit,
        message=message,
        tol=tolerance,
        details=(
            ("d_min", d_min),
            ("d_max", d_max),
            ("max_gain", max_gain / divisor),
            ("solver_objective", objective),
        ),
    )
