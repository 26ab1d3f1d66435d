r"""Privacy funnel and information bottleneck of a Markov chain ``S − X − Y`` (Hsu et al. §III-B).

A joint law ``joint[s, x] = P(S=s, X=x)`` of a private attribute S and the data X is given; a
mechanism ``P_{Y|X}`` releases Y. The two information trade-offs (Hsu et al., survey, §III-B1,
eq. 12; Makhdoumi et al. 2014) are

    PF(R) = min { I(S;Y) : I(X;Y) ≥ R },        IB(R) = max { I(S;Y) : I(X;Y) ≤ R },

for ``R ∈ [0, H(X)]``; together they bound the achievable region ``{(I(X;Y), I(S;Y))}`` from
below and above. PF is convex and IB concave in R, both non-decreasing, with
``PF(0) = IB(0) = 0`` and ``PF(H(X)) = IB(H(X)) = I(S;X)`` (``docs/mathematics.rst`` §7).

Neither problem is convex in ``P_{Y|X}``, but any weights λ on posteriors ``q_j = P_{X|Y=j}``
with ``Σ_j λ_j q_j = P_X`` *is* a mechanism, and over a finite set of posteriors each problem
is a linear program in λ (:mod:`dpcap.solvers.envelope_lp`). Every value reported here is
recomputed from the returned mechanism, never taken from an LP objective, and the mechanism is
feasible: it is mixed with full disclosure (funnel) or a constant release (bottleneck) by the
least weight that restores ``I(X;Y) ≥ R`` or ``≤ R``, by the rounding rule of
:mod:`dpcap.solvers.mixing` (``docs/mathematics.rst`` §8).

Brackets (``lower ≤ true value ≤ upper``):

* the achieved end: ``upper`` of PF and ``lower`` of IB are ``I(S;Y)`` of the mechanism;
* the certified end, for ``|X| ≤ 4`` (method ``"grid"``): the LP dual ``(μ, ν)`` bounds the LP
  over *all* posteriors once ``sup_q φ(q)``, ``φ(q) = σ H(Tq) − μ·q − νσ H(q)``, is bounded over
  the whole simplex (:func:`dpcap.solvers.envelope_lp.violation_bound`, cell by cell on a
  simplicial mesh); the mesh is bisected until the bracket closes to ``tol``;
* for larger X (method ``"local"``) only the trivial ends: ``PF(R) ≥ max(0, R − H(X|S))``
  (``I(X;Y) = I(S;Y) + I(X;Y|S)`` and ``I(X;Y|S) ≤ H(X|S)``) and
  ``IB(R) ≤ min(R, I(S;X))`` (data processing).

Perfect privacy is :mod:`dpcap.tradeoffs.zero_leakage`, privacy against statistical inference
:mod:`dpcap.tradeoffs.inference`.

References
----------
.. [1] H. Hsu, N. Martinez, M. Bertran, G. Sapiro, F. P. Calmon, "A survey on statistical,
   information and estimation-theoretic views on privacy", §III-B.
.. [2] A. Makhdoumi, S. Salamatian, N. Fawaz, M. Médard, "From the information bottleneck to
   the privacy funnel", ITW 2014.
.. [3] H. S. Witsenhausen, A. D. Wyner, "A conditional entropy bound for a pair of discrete
   random variables", IEEE Trans. IT 1975 (the envelope over posteriors); A. D. Wyner, J. Ziv,
   "A theorem on the entropy of certain binary sequences" (Mrs. Gerber's lemma), 1973.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.result import FunnelCurve, FunnelResult, curve_arrays
from dpcap.tradeoffs._funnel_points import GRID_MAX, Kind, Raw, monotone, solve_point
from dpcap.tradeoffs._markov import Problem, joint_problem

__all__ = [
    "information_bottleneck",
    "information_bottleneck_curve",
    "privacy_funnel",
    "privacy_funnel_curve",
]

FloatArray = NDArray[np.float64]

#: The stopping rule ``(tol, rtol)`` (:func:`dpcap._core.certify.conclude`).
Rule = tuple[float, float]

METHODS = ("auto", "grid", "local")

DEFAULT_TOL = 1e-7
DEFAULT_MAX_ITER = 1_000
DEFAULT_POINTS = 25

#: A requested R this far above H(X) (relative) is read as H(X): its rounding by the caller.
R_SLACK = 1e-9

_NAMES = {"pf": "privacy_funnel", "ib": "information_bottleneck"}


def _method(problem: Problem, method: Any) -> str:
    check.choice(method, METHODS, "method")
    if method == "auto":
        return "grid" if problem.p.shape[0] <= GRID_MAX else "local"
    if method == "grid" and problem.p.shape[0] > GRID_MAX:
        raise ParameterError(
            f"method='grid' meshes the simplex of X and is limited to {GRID_MAX} values of X "
            f"with positive probability; this joint law has {problem.p.shape[0]} "
            "(use method='local')"
        )
    return str(method)


def _exact_zeros(problem: Problem, raw: Raw, kind: Kind) -> Raw:
    """``raw`` with the informations that are exactly 0 set to 0.0, and its bracket with them.

    Two cases are zero by the mathematics, not by the floating-point evaluation (which leaves
    residues of 1e-16, from laws whose float sums are not exactly 1):

    * the release is independent of X (every row of the mechanism on the support of P_X is the
      same vector, e.g. the constant release at R = 0): ``I(X;Y) = 0`` and, by data processing
      along ``S − X − Y``, ``I(S;Y) = 0``;
    * S is independent of X (every column of ``T = P_{S|X}`` is the same): ``I(S;Y) ≤ I(S;X)
      = 0`` for every mechanism, so ``PF(R) = IB(R) = 0`` at every R.

    The achieved end (PF's upper, IB's lower) is then 0.0. PF's lower end is 0.0 too when the
    mechanism still meets ``I(X;Y) ≥ R`` (``PF(R) ∈ [0, 0]``); IB's upper end is 0.0 when S is
    independent of X (``IB(R) ≤ I(S;X) = 0``) and at most R otherwise (``IB(R) ≤ R``, which a
    residue of the achieved end had lifted it above at R = 0).
    """
    rows = raw.mechanism[problem.xs]
    independent_release = bool(np.all(rows == rows[:1]))
    independent_private = bool(np.all(problem.T[:, :1] == problem.T))
    if not (independent_release or independent_private):
        return raw
    utility = 0.0 if independent_release else raw.utility
    lower, upper = raw.lower, raw.upper
    if kind == "pf":
        upper = 0.0
        if utility >= raw.R:  # the mechanism is feasible: PF(R) = 0
            lower = 0.0
        else:  # a constant release read as meeting a tiny R: keep the evaluated values
            return raw
    else:
        lower = 0.0
        upper = 0.0 if independent_private else min(upper, raw.R)  # IB(R) ≤ R as well
    return dataclasses.replace(raw, utility=utility, leakage=0.0, lower=lower, upper=upper)


def _finish(
    problem: Problem, raw: Raw, kind: Kind, rule: Rule, unit: str, *, warn_open: bool
) -> FunnelResult:
    """The point's result: its exact zeros (:func:`_exact_zeros`), and its bracket concluded
    by :func:`dpcap._core.certify.conclude` (in nats) on the rule ``(tol, rtol)``."""
    tol, rtol = rule
    raw = _exact_zeros(problem, raw, kind)
    status, message = _certify.conclude(
        raw.upper - raw.lower,
        tol,
        rtol=rtol,
        upper=raw.upper,
        iterations=raw.iterations,
        note=raw.note,
        open_status=_certify.status_of(raw.engine),
        warn_open=warn_open,
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


def _level(R: Any, problem: Problem, divisor: float, unit: str) -> float:
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
    joint: Any, method: Any, rule: tuple[Any, Any], max_iter: Any, unit: Any, seed: Any
) -> tuple[Problem, str, Rule, int, float, np.random.Generator]:
    problem = joint_problem(joint)
    divisor = check.unit_divisor(unit)
    checked = (check.tolerance(rule[0]), check.rtol(rule[1]))
    budget = check.max_iter(max_iter, default=DEFAULT_MAX_ITER)
    rng = np.random.default_rng(check.integer(seed, "seed", 0))
    return problem, _method(problem, method), checked, budget, divisor, rng


def _single(
    joint: Any,
    R: Any,
    kind: Kind,
    method: Any,
    rule: tuple[Any, Any],
    max_iter: Any,
    unit: str,
    seed: Any,
) -> FunnelResult:
    problem, how, checked, budget, divisor, rng = _common(joint, method, rule, max_iter, unit, seed)
    level = _level(R, problem, divisor, unit)
    raw, _ = solve_point(
        problem, level, kind, method=how, tol=checked[0], max_iter=budget, rng=rng, start=None
    )
    return _finish(problem, raw, kind, checked, unit, warn_open=True)


def _curve(
    joint: Any,
    n_points: Any,
    kind: Kind,
    method: Any,
    rule: tuple[Any, Any],
    max_iter: Any,
    unit: str,
    seed: Any,
) -> FunnelCurve:
    problem, how, checked, budget, divisor, rng = _common(joint, method, rule, max_iter, unit, seed)
    tolerance = checked[0]
    count = DEFAULT_POINTS if n_points is None else check.integer(n_points, "n_points", 2)
    levels = np.linspace(0.0, problem.hx, count)
    raws: list[Raw] = []
    start: FloatArray | None = None
    for R in levels:
        raw, support = solve_point(
            problem, float(R), kind, method=how, tol=tolerance, max_iter=budget, rng=rng,
            start=start,
        )  # fmt: skip
        start = support if support is not None else start
        raws.append(raw)
    raws = monotone(raws, kind)
    points = tuple(_finish(problem, raw, kind, checked, unit, warn_open=False) for raw in raws)
    largest = max(point.upper - point.lower for point in points) * divisor
    status, message = _certify.conclude_many(
        [point.status for point in points],
        tolerance,
        rtol=checked[1],
        note=f"{_NAMES[kind]}_curve on R in [0, H(X)], largest certified gap {largest:.3g} "
        "nats; see each point's message",
    )
    arrays = curve_arrays(points)
    arrays["status"] = status
    return FunnelCurve(
        R=levels / divisor,
        utility=np.array([point.utility_achieved for point in points]),
        leakage=np.array([point.leakage_achieved for point in points]),
        points=points,
        problem=_NAMES[kind],
        method=how,
        unit=unit,
        message=message,
        tol=tolerance,
        **arrays,
    )


# --------------------------------------------------------------------------------------------
# Public API


def privacy_funnel(
    joint: Any,
    /,
    R: float,
    *,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    rtol: float = 0.0,
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
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
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
        If the bracket did not close to ``max(tol, rtol·|upper|)`` (always for the local
        method, whose lower end is only ``max(0, R − H(X|S))``).

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
    ``ν (H(Tq) − H(q))``; proof in :func:`dpcap.solvers.envelope_lp.violation_bound`). The mesh
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
    return _single(joint, R, "pf", method, (tol, rtol), max_iter, unit, seed)


def privacy_funnel_curve(
    joint: Any,
    /,
    *,
    n_points: int | None = None,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    rtol: float = 0.0,
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
    method, tol, rtol, max_iter, unit, seed
        As for :func:`privacy_funnel` (``tol``, ``rtol`` and ``max_iter`` per point).

    Returns
    -------
    FunnelCurve
        ``R`` = the levels; ``curve[k]`` (also ``points[k]``) is the
        :class:`~dpcap.result.FunnelResult` of point k, with its mechanism. Values are
        non-decreasing in R (a mechanism that meets a larger R is used at a smaller one when
        it leaks less) and every point's dual line ``PF(R') ≥ a + ν R'`` raises the lower ends
        of all the others. ``curve.to_frame()`` has one row per point.

    Warns
    -----
    ConvergenceWarning
        Once, if some point did not reach its target.

    Examples
    --------
    >>> import numpy as np
    >>> curve = privacy_funnel_curve([[0.45, 0.05], [0.05, 0.45]], n_points=5)
    >>> bool(np.all(np.diff(curve.value) >= 0)), len(curve), curve[4].target == float(curve.R[4])
    (True, 5, True)
    """
    return _curve(joint, n_points, "pf", method, (tol, rtol), max_iter, unit, seed)


def information_bottleneck(
    joint: Any,
    /,
    R: float,
    *,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    rtol: float = 0.0,
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
    method, tol, rtol, max_iter, unit, seed
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
        If the bracket did not close to ``max(tol, rtol·|upper|)`` (always for the local
        method, whose upper end is only ``min(R, I(S;X))``).

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
    return _single(joint, R, "ib", method, (tol, rtol), max_iter, unit, seed)


def information_bottleneck_curve(
    joint: Any,
    /,
    *,
    n_points: int | None = None,
    method: str = "auto",
    tol: float = DEFAULT_TOL,
    rtol: float = 0.0,
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
    return _curve(joint, n_points, "ib", method, (tol, rtol), max_iter, unit, seed)
