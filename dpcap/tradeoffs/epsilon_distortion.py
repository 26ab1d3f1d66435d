r"""The privacy–distortion function ``ε*(D)`` of Wang, Ying and Zhang, certified.

``ε*(D) = min{ε : d*(ε) ≤ D}``: the least ε for which some ε-DP mechanism on the database
domain has expected distortion at most D, the inverse of the least-loss LP ``d*(ε)``
(:func:`dpcap.optimal_mechanism`, :mod:`dpcap.tradeoffs._mechanism_lp`; ``docs/mathematics.rst``
§6).
:func:`privacy_distortion` (one budget) and :func:`privacy_distortion_curve` (many) search over
ε monotonically and keep a certified bracket: ``lower`` an ε proven infeasible
(``d*(ε) ≥ L(ε) > D``), ``upper`` the exact level of a verified mechanism with expected
distortion at most D.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ParameterError, Status
from dpcap.neighbors import Neighbors
from dpcap.result import CurveResult, DistortionResult, curve_arrays
from dpcap.solvers import itp
from dpcap.solvers.mixing import least_weight
from dpcap.tradeoffs import _mechanism_lp as lp

__all__ = ["privacy_distortion", "privacy_distortion_curve"]

FloatArray = NDArray[np.float64]


#: Default number of points of :func:`privacy_distortion_curve`.
DEFAULT_POINTS = 16


def _feasible_start(problem: lp.Problem, budget: float) -> lp.Point:
    """A closed-form mechanism of distortion ≤ D at a finite level, for ``d_min < D < d*(0)``.

    ``(1 − μ)·U + μ·T`` with ``T`` the ε = ∞ optimum (distortion ``d_min < D``) and ``U`` the
    uniform rows (full support, so the level is finite while ``μ < 1``): its distortion is
    linear in μ, and the least μ that meets D (the most uniform mass) is found by
    :func:`dpcap.solvers.mixing.least_weight` from its analytic value, the check being
    :meth:`dpcap.tradeoffs._mechanism_lp.Problem.within` (D met despite rounding).
    """
    k = problem.loss.shape[1]
    uniform = np.full_like(problem.inf_mechanism, 1.0 / k)
    d_uniform = problem.expected(uniform)

    def mixture(weight: float) -> FloatArray:
        W: FloatArray = (1.0 - weight) * uniform + weight * problem.inf_mechanism
        return W

    start = 0.0 if d_uniform <= budget else (d_uniform - budget) / (d_uniform - problem.d_min)
    W = mixture(least_weight(lambda w: problem.within(mixture(w), budget), start))
    value = problem.expected(W)
    # λ = 1 (T alone) is returned unchecked: it may miss D by a rounding (D just above d_min)
    within = problem.within(W, budget)
    level = problem.level_above(W, problem.level(W)) if within else math.inf
    return lp.Point(
        level,
        math.nan,
        value,
        W,
        level,
        0,
        "closed-form",
        "mixture of the eps = inf optimum and uniform rows",
        (),
    )


@dataclass
class _Search:
    value: float
    lower: float
    point: lp.Point
    solves: int
    note: str


def _search(problem: lp.Problem, budget: float, tol: float, rtol: float = 0.0) -> _Search:
    """ε*(D): the closed forms at the ends (with their rounding rule), else :func:`_bracket`."""
    at_min = problem.d_min - problem.d_min_slack
    if budget < at_min:
        raise ParameterError(
            f"D={budget!r} is below the least achievable expected distortion d_min="
            f"{problem.d_min!r} (releasing argmin_y d(x, y), with no privacy): no mechanism "
            "meets it"
        )
    if budget >= problem.d_zero - problem.d_zero_slack or problem.zero_at_min:
        point = lp.evaluate(problem, 0.0)
        note = (
            f"D >= d*(0) = {problem.d_zero!r}: a 0-DP mechanism (one constant row per "
            "component) meets it"
        )
        if budget < point.upper:
            note = (
                f"D={budget!r} is within the rounding allowance {problem.d_zero_slack:.3g} of "
                f"d*(0) = {point.upper!r} (a budget written as d*(0)): the 0-DP mechanism (one "
                f"constant row per component) is returned, its distortion {point.upper!r} "
                f"above D by {point.upper - budget:.3g}"
            )
        return _Search(0.0, 0.0, point, 0, note)
    if budget <= problem.d_min:
        point = lp.evaluate(problem, math.inf)
        note = (
            f"D = d_min = {problem.d_min!r} < d*(0): only mechanisms supported on each row's "
            "argmin reach it, and no finite eps allows rows of one component to differ in support"
        )
        if budget < problem.d_min:
            note += (
                f" (D={budget!r} is within the rounding allowance {problem.d_min_slack:.3g} "
                "of d_min: read as d_min)"
            )
        return _Search(math.inf, math.inf, point, 0, note)
    return _bracket(problem, budget, tol, rtol)


def _bracket(problem: lp.Problem, budget: float, tol: float, rtol: float = 0.0) -> _Search:
    """ε*(D) for ``d_min < D < d*(0)``: a bracketing search over ε on ``f(ε) = d*(ε) − D``.

    The ends keep ``f(lo) ≥ L(lo) − D > 0`` (an LP lower bound) and a verified mechanism at level
    ``hi`` with distortion ``U − D ≤ 0``; the first upper end is the closed-form mixture of
    :func:`_feasible_start`. Each step is the ITP method (:func:`_itp`) on these values: never
    more solves than bisection plus two, superlinear where ``d*`` is smooth. An ε the LP cannot
    decide (``L(ε) ≤ D < U(ε)``) lies within about ``(U − L)/|d*'|`` of ε*: it is straddled at
    that distance on either side, the distance doubled on a side while it stays undecided, and
    the search stops after 8 solves that do not halve the bracket. It stops when
    ``hi − lo ≤ max(tol, rtol·hi)``; ITP's own tolerance is that target at the first ``hi``.
    """
    lo, f_lo = 0.0, problem.d_zero - budget
    best = _feasible_start(problem, budget)
    f_hi, hi = best.upper - budget, best.level
    for point in problem.cache:  # what earlier searches learned at other ε
        if point.lower > budget and point.eps > lo:
            lo, f_lo = point.eps, point.lower - budget
        if _top(problem, point, budget) < hi:
            best, f_hi, hi = point, point.upper - budget, _top(problem, point, budget)
    if not math.isfinite(hi):  # D within rounding above d_min: no mechanism is verified
        return _Search(
            math.inf,
            lo,
            best,
            0,
            f"D={budget!r} is within rounding of d_min = {problem.d_min!r}: no mechanism with a "
            "finite level is verified to meet it",
        )
    # ITP's budget (bisection's count + 2) and truncation κ₁ = 0.5/width₀ (κ₂ = 2): measured
    # best of n₀ ∈ {1, 2, 3, 4}, κ₁·width₀ ∈ {0.05, 0.2, 0.5, 1} on 48 budgets (mean 12 solves)
    x_tol = _certify.target(tol, rtol, hi)
    steps = max(math.ceil(math.log2(max((hi - lo) / x_tol, 1.0))), 0) + 2
    kappa = 0.5 / max(hi - lo, x_tol)
    solves, stuck, reference = 0, 0, hi - lo
    zone, spread, radius, toggle = [math.nan, math.nan], 0.0, [0.0, 0.0], True
    failures: list[str] = []
    while hi - lo > _certify.target(tol, rtol, hi) and solves < check.MAX_SOLVES and stuck < 8:
        side = -1
        if lo < zone[0] and zone[1] < hi:
            eps, side = _straddle(zone, radius, lo, hi, toggle)
            toggle = not toggle
        else:
            eps = itp.step(lo, hi, f_lo, f_hi, x_tol, steps, kappa, secant_hi=best.eps)
            steps -= 1
        point = lp.evaluate(problem, eps)
        solves += 1
        if point.failure:
            failures.append(f"eps={eps:.6g}: {point.failure}")
        if point.lower > budget:
            lo, f_lo = eps, point.lower - budget
        elif problem.within(point.mechanism, budget):
            if _top(problem, point, budget) < hi:
                hi, best, f_hi = _top(problem, point, budget), point, point.upper - budget
        elif lo < eps < hi:  # L(ε) ≤ D < U(ε): the LP's accuracy cannot tell
            if lo < zone[0] and zone[1] < hi:
                zone = [min(zone[0], eps), max(zone[1], eps)]
                if side >= 0:
                    radius[side] *= 2  # still undecided at this distance: look further out
            else:
                zone, spread = [eps, eps], point.upper - point.lower
                radius = [_reach(spread, lo, eps, f_lo, f_hi, best.eps)] * 2
        if hi - lo <= reference / 2:  # stuck: solves since the bracket last halved
            reference, stuck = hi - lo, 0
        else:
            stuck += 1
    note = (
        f"{solves} LP solves; eps={lo:.12g} infeasible (distortion bound > D), mechanism at "
        f"eps level {hi:.12g} with distortion {best.upper:.12g} <= D"
    )
    if stuck >= 8:
        note += "; the LP's accuracy could not separate the bracket further"
        if spread > 0:
            note += f" (its certified gap on d* near eps* is {spread:.2g})"
    if failures:  # each failed solve gave a closed-form bracket: the ends stay certified
        note += (
            f"; {problem.solver} failed on {len(failures)} of {solves} solves ({failures[0]}), "
            "replaced by closed-form brackets"
        )
        if hi - lo > _certify.target(tol, rtol, hi):
            note += ": the bracket is the best certified one found; try another solver"
    return _Search(hi, lo, best, solves, note)


def _top(problem: lp.Problem, point: lp.Point, budget: float) -> float:
    """The upper end a point gives: its mechanism's level rounded up, if it meets D (else ∞)."""
    if not problem.within(point.mechanism, budget):
        return math.inf
    return problem.level_above(point.mechanism, point.level)


def _reach(spread: float, lo: float, eps: float, f_lo: float, f_hi: float, x_hi: float) -> float:
    """How far from an undecided ε to look: ``2·(U − L)/slope``, the slope the bracket's secant."""
    slope = (f_lo - f_hi) / (x_hi - lo) if x_hi > lo else 0.0
    reach = 2.0 * spread / slope if slope > 0 else (eps - lo) / 4
    return max(reach, 16 * math.ulp(eps))


def _straddle(
    zone: list[float], radius: list[float], lo: float, hi: float, toggle: bool
) -> tuple[float, int]:
    """The next probe around the undecided ε's: below them, then above, by each side's radius."""
    below, above = zone[0] - radius[0], zone[1] + radius[1]
    if below > lo and (toggle or above >= hi):
        return below, 0
    if above < hi:
        return above, 1
    # both ends are nearer than the radius: halve the wider part of the bracket outside the zone
    if zone[0] - lo > hi - zone[1]:
        return (lo + zone[0]) / 2, -1
    return (zone[1] + hi) / 2, -1


def _privacy_point(
    problem: lp.Problem, D: float, rule: tuple[float, float], warn: bool
) -> DistortionResult:
    tol, rtol = rule
    found = _search(problem, D, tol, rtol)
    point = found.point
    gap = 0.0 if found.value == found.lower else found.value - found.lower
    status, message = _certify.conclude(
        gap,
        tol,
        rtol=rtol,
        upper=found.value,
        note=found.note,
        open_status=Status.INACCURATE,
        warn_open=warn,
    )
    return DistortionResult(
        value=found.value,
        lower=found.lower,
        upper=found.value,
        mechanism=point.mechanism,
        target=D,
        distortion_achieved=point.upper,
        dp_level=point.level,
        slope=math.nan,
        status=status,
        iterations=found.solves,
        method=f"lp-search/{problem.solver}",
        unit="nats",
        message=message,
        tol=tol,
        details=(("lp_solves", float(found.solves)), *point.details),
    )


def _share_certificates(
    points: dict[int, DistortionResult], levels: FloatArray, rule: tuple[float, float]
) -> None:
    """Make the brackets monotone: ε* is non-increasing in D, and so are both certificates.

    A mechanism within a smaller budget is within a larger one (its upper end serves every
    larger D); an ε infeasible for a larger budget is infeasible for a smaller one.
    """
    rising = [int(i) for i in np.argsort(levels, kind="stable")]
    best: DistortionResult | None = None
    for i in rising:
        point = points[i]
        if best is not None and best.upper < point.upper:
            point = replace(
                point,
                value=best.upper,
                upper=best.upper,
                mechanism=best.mechanism,
                distortion_achieved=best.distortion_achieved,
                dp_level=best.dp_level,
                details=best.details,
                message=f"{point.message}; mechanism shared from budget D={best.target:.12g}",
            )
        if best is None or point.upper < best.upper:
            best = point
        points[i] = point
    floor = -math.inf
    for i in reversed(rising):
        point = points[i]
        if floor > point.lower:
            point = replace(point, lower=floor)
        floor = max(floor, point.lower)
        gap = 0.0 if point.upper == point.lower else point.upper - point.lower
        note = point.message.split("; ", 1)[1] if "; " in point.message else ""
        status, message = _certify.conclude(
            gap,
            rule[0],
            rtol=rule[1],
            upper=point.upper,
            note=note,
            open_status=Status.INACCURATE,
            warn_open=False,
        )
        points[i] = replace(point, status=status, message=message)


def _level_D(D: Any) -> float:
    if isinstance(D, bool) or not isinstance(D, (int, float, np.integer, np.floating)):
        hint = " (for many budgets, call privacy_distortion_curve)" if D is None else ""
        raise ParameterError(f"D must be a real number, got {check.show(D)}{hint}")
    if math.isnan(float(D)):
        raise ParameterError("D must not be NaN")
    return float(D)


def privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    D: float,
    *,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    tol: float = 1e-9,
    rtol: float = 0.0,
    solver: str | None = None,
) -> DistortionResult:
    r"""Wang–Ying–Zhang's privacy–distortion function ``ε*(D)``, with a certified bracket.

    ``ε*(D)`` is the least ε for which some ε-DP mechanism has expected distortion at most D
    (``docs/mathematics.rst`` §6). For many budgets, or the whole curve, see
    :func:`privacy_distortion_curve`.

    Parameters
    ----------
    prior : array_like, shape (n_databases,) or ``shape``
        The law of the database (rows in C order over the domain).
    distortion : array_like, shape (n_databases, n_outputs)
        ``distortion[x, y] = d(x, y)``; finite. For database-valued outputs ``n_outputs`` is
        the number of databases (e.g. the Hamming distance between databases).
    D : float
        The distortion budget, ``D ≥ d_min = Σ_x p_x min_y d(x, y)``.
    shape : sequence of int, optional
        Domain sizes of the database; default one entry whose values are the rows.
    neighbors : str, array_like or callable
        As in :func:`dpcap.neighbor_pairs`; default Hamming distance 1.
    tol : float
        Target width ``upper − lower`` of the bracket on ε* (nats); default 1e-9. The LP's
        accuracy allows about ``δ/|d*'(ε*)|``, with ``δ`` its certified gap on ``d*`` near ε*
        (loss units). Measured for ε ∈ [0.1, 4]: Clarabel 1e-13 to 2e-11
        on Hamming problems of up to 64 databases, 4e-11 to 3e-8 with line neighbours and
        ``|x − y|`` on 32–128 databases; HiGHS 5e-15 to 2e-12 on the former (simplex
        vertices) but up to 2e-7 on the latter, where its dual feasibility tolerance (1e-10,
        the least it accepts) loosens the Lagrangian bound. So 1e-9 is met where
        ``|d*'(ε*)| ≳ δ/1e-9``; where ``d*`` is flatter (just below ``d*(0)`` when ε* jumps
        there, or at large ε*, where ``|d*'| ≈ D − d_min``) the bracket stops wider, with
        status ``inaccurate``, a warning, and ``δ`` in the message.
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    solver : {"CLARABEL", "HIGHS", "ECOS", "SCS"}, optional
        The LP backend, case-insensitive (default Clarabel).

    Returns
    -------
    DistortionResult
        ``value = upper``: the ε-DP level of ``mechanism`` as :func:`dpcap.dp_epsilon` computes
        it (exact up to the rounding of a log-ratio, a few ulps), a mechanism with expected
        distortion ``distortion_achieved ≤ D``; so ``ε*(D) ≤ upper``. ``lower``: an ε at which
        the LP's certified bound shows every mechanism has distortion > D (or 0), so
        ``ε*(D) > lower``. ``target`` is D, ``iterations`` the number of LP solves, ``unit``
        ``"nats"``; ``details`` add ``lp_solves`` to those of :func:`dpcap.optimal_mechanism`
        for the returned mechanism.

    Raises
    ------
    ParameterError
        If ``D < d_min`` by more than the rounding allowance of Notes (no mechanism, private
        or not, meets it) or is not a number (None included), or another argument is invalid.

    Warns
    -----
    ConvergenceWarning
        If the bracket is wider than ``max(tol, rtol·upper)`` (status ``inaccurate``): the
        LP's accuracy could not separate the two sides, the solve budget (100) ran out, or the
        LP solver failed (as Clarabel may for ``e^ε ≳ 1e8``, a budget just above ``d_min``). A
        failed solve is not an error: it gives the closed-form bracket of
        :func:`dpcap.optimal_mechanism` at its ε, and the search returns the best certified
        bracket found (``lower`` from infeasibility certificates, ``upper`` from a verified
        mechanism, or ∞), the failure in ``message``.

    Notes
    -----
    ``d*(ε)``, the least distortion at ε (:func:`dpcap.optimal_mechanism`), is non-increasing in ε,
    from ``d*(0)`` to ``d*(∞) = d_min`` (``docs/mathematics.rst`` §6). At ε = 0 neighbours have
    equal rows, so every connected component ``K`` of the neighbour graph releases one constant
    row, and ``d*(0) = Σ_K min_y Σ_{x∈K} p_x d(x, y)``, computed in closed form and compared
    with D before any LP: ``ε*(D) = 0`` for ``D ≥ d*(0)``, with that constant-row mechanism
    (its level and distortion recomputed from the matrix). ε* may jump there, as ``d*`` is
    often flat near ε = 0 (the best 0-DP mechanism stays optimal up to some ``ε₀ > 0``, so
    ``ε*(D) → ε₀`` as ``D ↑ d*(0)``).

    *Rounding rule.* A budget written as ``d*(0)`` (e.g. 0.7 for the prior (0.4, 0.3, 0.2, 0.1)
    on ``{0,1}²`` with Hamming distortion) can land a few ulps below the value computed from the
    stored floats. So ``D ≥ d*(0) − η₀`` counts as ``D ≥ d*(0)``, with
    ``η₀ = γ_{3N+k+8}·Σ_K max_y Σ_{x∈K} |p_x d(x, y)|`` (``N`` databases, ``k`` outputs,
    ``γ_n = nu/(1 − nu)``, ``u = 2⁻⁵³``): a bound on the rounding of the computed ``d*(0)``
    plus that of the data themselves, read as decimals
    (:func:`dpcap.tradeoffs._mechanism_lp.rounding_slack`). The result is then ``[0, 0]``,
    converged, and ``distortion_achieved`` the constant-row mechanism's own distortion, which may
    exceed D by at most ``η₀`` (the message says by how much). Likewise ``D ≥ d_min − η_∞``
    (``η_∞ = γ_{3N+k+8}·Σ_x |p_x min_y d(x, y)|``) counts as ``d_min``. A budget below
    ``d*(0)`` by more than ``η₀`` but less than the LP's certified gap, where ``d*`` is flat, is
    undecidable by the LP (status ``inaccurate``, lower end 0).

    For ``D = d_min < d*(0)``, ``ε*(D) = ∞`` exactly: reaching ``d_min`` needs every row of
    positive prior supported on its own argmin, while at finite ε neighbours have the same
    support, and a common support in every component would give ``d*(0) = d_min``. In between,
    the search keeps ``lower < ε* ≤ upper``: an ε moves ``lower`` when the LP's Lagrangian bound
    exceeds D, and moves ``upper`` to the verified level of the repaired mechanism when its
    distortion is at most D. It starts from ``[0, level of (1 − λ)T + λU]`` (``T`` the ε = ∞
    optimum, ``U`` uniform rows, λ chosen for distortion D) and from what earlier calls on the
    same problem learned, and steps by the ITP method (regula falsi on the certified values,
    truncated and projected so that it never takes more than two solves beyond bisection;
    about 10 solves for 1e-9 where ``d*`` is smooth). When the LP cannot decide an ε
    (bound ≤ D < repaired distortion), ε* lies within about (repaired − bound)/``|d*'|`` of it:
    the search probes at that distance on either side, doubling it on a side that stays
    undecided, and stops after 8 solves that do not halve the bracket.

    Wang, Ying and Zhang's closed form for a uniform prior on ``{0..m−1}^n``, Hamming distortion
    and Hamming neighbours, ``ε*(D) = log(n/D − 1) + log(m − 1)`` for ``0 < D ≤ n(m − 1)/m``
    (0 above), is a test.

    References
    ----------
    .. [1] W. Wang, L. Ying and J. Zhang, "On the relation between identifiability, differential
       privacy and mutual-information privacy", *IEEE Trans. Inf. Theory* 62(9), 2016.
    .. [2] B. Ünsal and M. Önen, "Information-theoretic approaches to differential privacy", §5.

    Examples
    --------
    One bit, Hamming distortion: ``ε*(D) = log((1 − D)/D)``.

    >>> import math
    >>> res = privacy_distortion([0.5, 0.5], [[0, 1], [1, 0]], 0.25)
    >>> abs(res.value - math.log(3)) < 1e-9, res.lower < math.log(3) < res.upper + 1e-15
    (True, True)
    """
    problem = lp.build(prior, distortion, shape, neighbors, solver, "distortion")
    rule = (check.tolerance(tol), check.rtol(rtol))
    return _privacy_point(problem, _level_D(D), rule, warn=True)


def privacy_distortion_curve(
    prior: Any,
    distortion: Any,
    /,
    D: Any = None,
    *,
    n_points: int | None = None,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    tol: float = 1e-9,
    rtol: float = 0.0,
    solver: str | None = None,
) -> CurveResult:
    r"""The privacy–distortion curve ``D ↦ ε*(D)`` at many budgets, always a CurveResult.

    Parameters
    ----------
    prior, distortion, shape, neighbors, tol, rtol, solver
        As in :func:`privacy_distortion` (which returns one point as a DistortionResult).
    D : array_like, optional
        The budgets, each ``≥ d_min``. Default: ``n_points`` budgets evenly spaced over
        ``(d_min, d*(0)]``, from the least distortion with no privacy (excluded: ε* = ∞ there
        unless ``d*(0) = d_min``) to that of the best 0-DP mechanism.
    n_points : int, optional
        Number of budgets when ``D`` is not given (default 16, at least 1).

    Returns
    -------
    CurveResult
        ``D`` the budgets (in the order given, or increasing), ``value``/``lower``/``upper``
        the brackets on ε* (nats), one status per point and ``points[k]`` the full
        :class:`~dpcap.result.DistortionResult` (with its mechanism). The LP is compiled once
        and every solve serves every budget, and the certificates are shared between budgets
        (an ε infeasible for D is infeasible for smaller budgets; a mechanism within D is
        within larger ones), so both ends of the brackets are non-increasing in D.

    Raises
    ------
    ParameterError
        If both ``D`` and ``n_points`` are given, a budget is below ``d_min``, or an argument is
        invalid.

    Warns
    -----
    ConvergenceWarning
        Once, if any point's bracket is wider than its target.

    Notes
    -----
    Each budget is searched as in :func:`privacy_distortion`, from the largest down, on one
    compiled LP whose solved points every later search reuses (``docs/mathematics.rst`` §6).

    Examples
    --------
    >>> curve = privacy_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=4)
    >>> [round(float(v), 4) for v in curve.value]
    [1.9459, 1.0986, 0.5108, 0.0]
    """
    problem = lp.build(prior, distortion, shape, neighbors, solver, "distortion")
    tolerance, relative = check.tolerance(tol), check.rtol(rtol)
    if D is not None and n_points is not None:
        raise ParameterError("give the budgets D or their number n_points, not both")
    if D is None:
        count = DEFAULT_POINTS if n_points is None else check.integer(n_points, "n_points", 1)
        span = problem.d_zero - problem.d_min
        levels = problem.d_min + span * np.arange(1, count + 1) / count
        levels[-1] = problem.d_zero  # exactly: ε* jumps to 0 there (d* is often flat near 0)
    else:
        levels = np.atleast_1d(check.real_array(D, "D"))
        if levels.ndim != 1 or levels.size == 0 or np.isnan(levels).any():
            raise ParameterError(f"D must be a non-empty 1-D array of budgets, got {check.show(D)}")
    points: dict[int, DistortionResult] = {}
    rule = (tolerance, relative)
    for index in np.argsort(-levels, kind="stable"):
        points[int(index)] = _privacy_point(problem, float(levels[index]), rule, warn=False)
    _share_certificates(points, levels, rule)
    ordered = tuple(points[i] for i in range(levels.size))
    arrays = curve_arrays(ordered)
    status, message = _certify.conclude_many(
        arrays["status"], tolerance, rtol=relative, what="budgets"
    )
    return CurveResult(
        D=levels,
        value=arrays["value"],
        lower=arrays["lower"],
        upper=arrays["upper"],
        status=status,
        iterations=arrays["iterations"],
        points=ordered,
        method=f"lp-search/{problem.solver}",
        unit="nats",
        message=message,
        tol=tolerance,
    )
