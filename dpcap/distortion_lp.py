r"""Least-loss ε-DP mechanisms and the privacy–distortion function ε*(D), certified.

For a prior ``p`` on the databases (rows) and a loss ``ℓ(x, y)``, the least expected loss of an
ε-DP mechanism is a linear program in the mechanism ``W`` (DESIGN §4 "Privacy–distortion"):

.. math:: d^*(\varepsilon) = \min_W \sum_x p_x \sum_y W_{xy}\,\ell(x, y)
          \quad\text{s.t.}\quad W \text{ row-stochastic},\quad
          W_{xy} \le e^{\varepsilon} W_{x'y}\ \ \forall (x, x') \text{ neighbours},\ \forall y.

:func:`optimal_mechanism` returns ``d*(ε)`` with a bracket certified here, never taken on the
solver's word:

* ``upper`` is the expected loss of a mechanism whose ε-DP level is recomputed exactly (the
  kernel of :func:`dpcap.dp_epsilon`) and is at most ``ε·(1 + 1e-9)``. LP solvers return
  mechanisms whose tiny entries break the ratio constraints (ε = ∞ is common), so the solver's
  matrix is *repaired* when it fails: negatives clipped and rows renormalised, then lifted to the
  least entrywise-larger matrix that meets the ratios and renormalised
  (:func:`dpcap.solvers.dplp.lift`), and, if that is not enough, mixed with a 0-DP mechanism by
  the least weight that restores every constraint (:func:`dpcap.solvers.dplp.mixing_weight`).
  A closed-form candidate competes at every ε: the ε = ∞ optimum (each row's argmin) mixed with
  a 0-DP mechanism by the least weight that makes it ε-DP. It wins at large ε, where the LP's
  coefficients ``e^ε`` defeat the solvers, and it stands in when a solver fails.
* ``lower`` is the larger of the Lagrangian bound of the solver's multipliers
  (:func:`dpcap.solvers.dplp.lagrangian_bound`), valid for *any* multipliers by weak duality,
  and ``d*(∞) = Σ_x p_x min_y ℓ(x, y)``.

:func:`privacy_distortion` and :func:`privacy_distortion_curve` invert ``d*``: Wang, Ying and
Zhang's ``ε*(D) = min{ε : d*(ε) ≤ D}``, by a monotone search over ε that keeps a certified
bracket: ``lower`` an ε proven infeasible (``d*(ε) ≥ L(ε) > D``), ``upper`` the exact level of a
verified mechanism with expected distortion at most D.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix

from dpcap import _validation as check
from dpcap.channel import (
    Neighbors,
    _domain_shape,
    check_dense_size,
    neighbor_pairs,
)
from dpcap.result import (
    ConvergenceWarning,
    CurveResult,
    DistortionResult,
    ParameterError,
    PriorError,
    ProblemTooLargeError,
    SolverError,
    Status,
)
from dpcap.solvers import dplp, pairwise

__all__ = ["optimal_mechanism", "privacy_distortion", "privacy_distortion_curve"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Relative slack allowed on a verified DP level: ``level ≤ ε·(1 + DP_RTOL)``.
DP_RTOL = 1e-9

#: Most ratio constraints (ordered pairs × outputs) handed to an LP solver.
MAX_LP_CONSTRAINTS = 2**23

#: Most LP solves in one ε*(D) search.
MAX_SOLVES = 100

#: Default number of points of :func:`privacy_distortion_curve`.
DEFAULT_POINTS = 16


# --------------------------------------------------------------------------------------------
# The problem: validated data, closed forms at ε = 0 and ε = ∞, the compiled LP


@dataclass
class _Problem:
    prior: FloatArray
    loss: FloatArray
    cost: FloatArray
    first: IntArray
    second: IntArray
    solver: str
    inf_mechanism: FloatArray  # the ε = ∞ optimum: a point mass at argmin_y ℓ(x, y)
    zero_mechanism: FloatArray  # the ε = 0 optimum: one best constant row per component
    d_min: float  # d*(∞)
    d_zero: float  # d*(0)
    zero_at_min: bool  # whether d*(0) = d*(∞) exactly (a common argmin in every component)
    components: tuple[FloatArray, FloatArray, FloatArray]  # per component: d*(0), d*(∞), radius
    lp: dplp.MechanismLP | None = None
    cache: list[_Point] = field(default_factory=list)

    def expected(self, W: FloatArray) -> float:
        return math.fsum(np.sum(self.cost * W, axis=1).tolist())

    def closed_lower(self, eps: float) -> float:
        """A closed-form lower bound on d*(ε), tight as ε → 0 (see :func:`optimal_mechanism`)."""
        zero, least, radius = self.components
        with np.errstate(over="ignore"):
            share = np.nextafter(np.exp(-eps * radius), 0.0)
        terms = share * zero + (1.0 - share) * least
        value = math.fsum(terms.tolist())
        return value - 8 * 2.0**-53 * float(np.sum(np.abs(zero) + np.abs(least)))

    def level(self, W: FloatArray) -> float:
        """The exact ε-DP level (the kernel of :func:`dpcap.dp_epsilon`)."""
        value, *_ = pairwise.max_log_ratio(W, self.first, self.second)
        return value


@dataclass(frozen=True)
class _Point:
    """``d*`` at one ε: a certified lower bound and a verified mechanism."""

    eps: float
    lower: float
    upper: float
    mechanism: FloatArray
    level: float
    iterations: int
    method: str
    note: str
    details: tuple[tuple[str, float], ...]
    failure: str = ""  # the solver's message when it failed (the bracket is then closed-form)


def _solver_name(solver: Any) -> str:
    if solver is None:
        return dplp.DEFAULT_SOLVER
    if not isinstance(solver, str) or solver.upper() not in dplp.SOLVERS:
        raise ParameterError(f"solver must be one of {dplp.SOLVERS}, got {check.show(solver)}")
    return solver.upper()


def _domain(prior: Any, shape: Any) -> tuple[FloatArray, tuple[int, ...]]:
    arr = np.asarray(prior)
    if shape is None:
        if arr.ndim == 0:
            raise PriorError(f"prior must be a probability vector, got {check.show(prior)}")
        dims = (int(arr.size),) if arr.ndim == 1 else tuple(int(s) for s in arr.shape)
    else:
        dims = _domain_shape(shape)
    rows = math.prod(dims)
    if arr.shape not in ((rows,), dims):
        raise PriorError(
            f"prior must have {rows} entries (one per database of the domain {dims}), "
            f"got shape {arr.shape}"
        )
    return check.law(arr, "prior").ravel(), dims


def _loss_matrix(value: Any, rows: int, name: str) -> FloatArray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} must be a 2-D array of real numbers, got {check.show(value)}"
        ) from exc
    if arr.ndim != 2 or arr.shape[0] != rows or arr.shape[1] == 0:
        raise ParameterError(
            f"{name} must have shape ({rows}, n_outputs): one row per database, got shape "
            f"{arr.shape}"
        )
    if not np.isfinite(arr).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ParameterError(f"{name} must be finite, got {float(arr[where])!r} at index {where}")
    return arr


def _tolerance(tol: Any, unit: str) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not 0 < tol < math.inf:
        raise ParameterError(
            f"tol must be a positive finite number ({unit}), got {check.show(tol)}"
        )
    return float(tol)


def _problem(
    prior: Any, loss: Any, shape: Any, neighbors: Neighbors, solver: Any, name: str
) -> _Problem:
    name_solver = _solver_name(solver)
    p, dims = _domain(prior, shape)
    rows = p.size
    loss_arr = _loss_matrix(loss, rows, name)
    k = loss_arr.shape[1]
    check_dense_size(rows, k, "the mechanism")
    first, second = neighbor_pairs(dims, neighbors)
    if 2 * first.size * k > MAX_LP_CONSTRAINTS:
        raise ProblemTooLargeError(
            f"the LP would have {2 * first.size * k} ratio constraints ({first.size} neighbour "
            f"pairs, both orders, x {k} outputs), above dpcap's limit of {MAX_LP_CONSTRAINTS}"
        )
    cost = p[:, None] * loss_arr
    # ε = ∞: each row alone; ε = 0: neighbours share their row, so one row per component.
    best = np.argmin(loss_arr, axis=1)
    inf_mech = np.zeros((rows, k))
    inf_mech[np.arange(rows), best] = 1.0
    from scipy.sparse.csgraph import connected_components  # slow to import: only when needed

    graph = coo_matrix((np.ones(first.size), (first, second)), shape=(rows, rows))
    _, labels = connected_components(graph, directed=False)
    order = np.argsort(labels, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(labels[order]) != 0])
    per_component = np.add.reduceat(cost[order], starts, axis=0)
    column = np.argmin(per_component, axis=1)
    zero_mech = np.zeros((rows, k))
    zero_mech[order, np.repeat(column, np.diff(np.r_[starts, rows]))] = 1.0
    # d*(0) = d*(∞) iff each component's rows of positive prior share an argmin (DESIGN §4).
    argmins = (loss_arr == loss_arr.min(axis=1, keepdims=True)) | (p == 0)[:, None]
    common = np.logical_and.reduceat(argmins[order], starts, axis=0).any(axis=1).all()
    # Per component: d*(0), d*(∞) and the eccentricity of its first row (for closed_lower).
    zero_c = per_component.min(axis=1)
    least_c = np.add.reduceat(cost[order].min(axis=1), starts)
    radius = _eccentricities(first, second, labels.astype(np.int64), order[starts])
    problem = _Problem(
        prior=p,
        loss=loss_arr,
        cost=cost,
        first=first,
        second=second,
        solver=name_solver,
        inf_mechanism=inf_mech,
        zero_mechanism=zero_mech,
        d_min=0.0,
        d_zero=0.0,
        zero_at_min=bool(common),
        components=(zero_c, least_c, radius),
    )
    problem.d_min = problem.expected(inf_mech)
    problem.d_zero = problem.expected(zero_mech)
    return problem


def _eccentricities(
    first: IntArray, second: IntArray, labels: IntArray, roots: IntArray
) -> FloatArray:
    """For each component (in label order), the largest path length from its root row."""
    rows = labels.size
    dist = np.full(rows, np.inf)
    dist[roots] = 0.0
    tails = np.concatenate([first, second])
    heads = np.concatenate([second, first])
    for _ in range(rows):  # breadth-first from every root at once, one layer per sweep
        reach = dist[tails] + 1.0
        closer = reach < dist[heads]
        if not closer.any():
            break
        np.minimum.at(dist, heads[closer], reach[closer])
    radius = np.zeros(int(labels.max()) + 1 if rows else 0)
    np.maximum.at(radius, labels, dist)
    return radius[labels[roots]]


# --------------------------------------------------------------------------------------------
# One ε: solve, certify, verify, repair


def _evaluate(problem: _Problem, eps: float) -> _Point:
    """``d*(ε)``: closed forms at 0 and ∞, else the LP with its bound and repaired mechanism."""
    for point in problem.cache:
        if point.eps == eps:
            return point
    if eps == 0.0 or math.isinf(eps):
        W = problem.zero_mechanism if eps == 0.0 else problem.inf_mechanism
        value = problem.expected(W)
        which = "a best constant row per connected component" if eps == 0.0 else "argmin rows"
        level = problem.level(W)
        details: tuple[tuple[str, float], ...] = (
            ("raw_dp_level", level),
            ("distortion_before_repair", value),
            ("lift_mass", 0.0),
            ("repair_weight", 0.0),
        )
        note = f"closed form at eps={eps:g} ({which})"
        point = _Point(eps, value, value, W.copy(), level, 0, "closed-form", note, details)
        problem.cache.append(point)
        return point
    # Valid at every ε whatever the solver does: d*(ε) ≥ d*(∞) = d_min, and the ε = ∞ optimum
    # mixed with a 0-DP mechanism by the least weight that makes it ε-DP.
    limit = eps * (1.0 + DP_RTOL)
    fallback, weight, fallback_level = _mix(problem, problem.inf_mechanism, eps, limit)
    fallback_value = problem.expected(fallback)
    if problem.d_zero <= fallback_value:  # small ε: the best 0-DP mechanism is ε-DP too
        fallback, weight, fallback_value = problem.zero_mechanism.copy(), 1.0, problem.d_zero
        fallback_level = problem.level(fallback)
    floor = max(problem.d_min, problem.closed_lower(eps))
    if problem.lp is None:
        problem.lp = dplp.MechanismLP(
            problem.cost, problem.first, problem.second, solver=problem.solver
        )
    solution = problem.lp.solve(eps)
    if not solution.status.usable:
        details = (
            ("raw_dp_level", math.nan),
            ("distortion_before_repair", math.nan),
            ("lift_mass", 0.0),
            ("repair_weight", weight),
        )
        note = (
            f"{problem.solver} failed on the mechanism LP at eps={eps:g} ({solution.message}); "
            "closed-form bracket"
        )
        point = _Point(
            eps,
            min(floor, fallback_value),
            fallback_value,
            fallback,
            fallback_level,
            solution.iterations,
            "closed-form",
            note,
            details,
            failure=solution.message,
        )
        problem.cache.append(point)
        return point
    bound = dplp.lagrangian_bound(
        problem.cost, problem.first, problem.second, eps, solution.multipliers
    )
    W, level, details = _repair(problem, solution.mechanism, eps)
    upper = problem.expected(W)
    note = (
        f"{solution.message} in {solution.solve_time:.3g} s (reported {solution.objective:.12g},"
        f" primal residual {solution.residual:.2g}); raw mechanism at eps level "
        f"{dict(details)['raw_dp_level']:.6g}"
    )
    if fallback_value < upper:  # ε large (LP ill-conditioned) or tiny: a closed form is better
        W, level, upper = fallback, fallback_level, fallback_value
        details = (*details[:3], ("repair_weight", weight))
        note += "; a closed-form mechanism did better"
    lower = max(bound, floor)
    point = _Point(
        eps,
        min(lower, upper),
        upper,
        W,
        level,
        solution.iterations,
        f"lp/{problem.solver}",
        note,
        details,
    )
    problem.cache.append(point)
    return point


def _repair(
    problem: _Problem, raw: FloatArray, eps: float
) -> tuple[FloatArray, float, tuple[tuple[str, float], ...]]:
    """A verified ε-DP mechanism from a solver's matrix, and what it took.

    1. Clip negatives to 0 and renormalise rows (a row with no positive mass becomes uniform).
    2. If the level exceeds ``ε(1 + DP_RTOL)``: lift to the least entrywise-larger matrix that
       meets the ratios at ``ε − η`` and renormalise; ``η ≥ 0`` absorbs the renormalisation
       (rows gain different masses), found by at most six tries.
    3. If still above: mix with ``U = 1uᵀ`` by the least weight λ (closed form), ``u`` the
       prior-weighted or the plain average row, whichever costs less loss.
    """
    k = raw.shape[1]
    W = np.where(np.isfinite(raw) & (raw > 0), raw, 0.0)
    sums = W.sum(axis=1)
    empty = ~(sums > 0)
    W[empty] = 1.0 / k
    sums[empty] = 1.0
    W /= sums[:, None]
    before = problem.expected(W)
    raw_level = level = problem.level(W)
    added, weight = 0.0, 0.0
    limit = eps * (1.0 + DP_RTOL)
    if level > limit:
        W, added = _lift_normalised(problem, W, eps)
        level = problem.level(W)
    if level > limit:
        W, weight, level = _mix(problem, W, eps, limit)
    details = (
        ("raw_dp_level", raw_level),
        ("distortion_before_repair", before),
        ("lift_mass", added),
        ("repair_weight", weight),
    )
    return W, level, details


def _lift_normalised(problem: _Problem, W: FloatArray, eps: float) -> tuple[FloatArray, float]:
    eta, best, added = 0.0, W, 0.0
    for _ in range(6):
        target = eps - eta
        if target <= 0:
            break
        V = dplp.lift(W, problem.first, problem.second, target)
        sums = V.sum(axis=1)
        V /= sums[:, None]
        best, added = V, float(sums.max() - 1.0)
        excess = problem.level(V) - target
        if excess <= eta:
            break
        eta = max(2.0 * eta, 2.0 * excess)
    return best, added


def _mix(
    problem: _Problem, W: FloatArray, eps: float, limit: float
) -> tuple[FloatArray, float, float]:
    options = []
    for u in (problem.prior @ W, W.mean(axis=0)):
        weight = dplp.mixing_weight(W, u, problem.first, problem.second, eps)
        options.append((problem.expected((1 - weight) * W + weight * u), weight, u))
    _, weight, u = min(options, key=lambda o: o[0])
    for attempt in range(64):  # rounding can leave the binding ratio an ulp above; nudge λ up
        mixed = (1.0 - weight) * W + weight * u
        level = problem.level(mixed)
        if level <= limit or weight >= 1.0:
            return mixed, weight, level
        weight = min(1.0, weight + max(weight, 1e-16) * 1e-9 * 2.0 ** (attempt + 1))
    constant = np.broadcast_to(u, W.shape).copy()
    return constant, 1.0, problem.level(constant)


# --------------------------------------------------------------------------------------------
# Status and messages


def _conclude(gap: float, tol: float, unit: str, note: str, warn: bool) -> tuple[Status, str]:
    if gap <= tol:
        status, head = Status.CONVERGED, f"certified gap {gap:.3g} {unit} <= tol {tol:.3g}"
    else:
        status = Status.INACCURATE
        head = f"not converged: certified gap {gap:.3g} {unit} > tol {tol:.3g}"
    message = f"{head}; {note}" if note else head
    if warn and status is not Status.CONVERGED:
        warnings.warn(message, ConvergenceWarning, stacklevel=3)
    return status, message


# --------------------------------------------------------------------------------------------
# Public: d*(ε)


def optimal_mechanism(
    prior: Any,
    loss: Any,
    eps: float,
    /,
    *,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    solver: str | None = None,
    tol: float = 1e-6,
) -> DistortionResult:
    r"""The ε-DP mechanism of least expected loss, with a certified bracket on that loss.

    Parameters
    ----------
    prior : array_like, shape (n_databases,) or ``shape``
        The law of the database: rows of the mechanism, in C order over the domain.
    loss : array_like, shape (n_databases, n_outputs)
        ``loss[x, y] = ℓ(x, y)``, the cost of releasing ``y`` when the database is ``x``; finite.
        The outputs are whatever the columns stand for (databases, counts, labels).
    eps : float
        ε in ``[0, ∞]`` (nats). ε = 0 and ε = ∞ are solved in closed form.
    shape : sequence of int, optional
        Domain sizes ``(m_1, …, m_n)`` of the database; default: one entry whose values are the
        rows (then ``"hamming"`` makes every pair of rows neighbours: local DP).
    neighbors : str, array_like or callable
        The neighbour relation, as in :func:`dpcap.neighbor_pairs` (``"hamming"``, ``"line"``
        for counts, ``"all"``, explicit pairs or a predicate).
    solver : {"CLARABEL", "HIGHS", "ECOS", "SCS"}, optional
        The LP backend (:mod:`dpcap.solvers.dplp`); default Clarabel, the fastest accurate one
        measured.
    tol : float
        Target certified gap ``upper − lower``, absolute, in the loss's units.

    Returns
    -------
    DistortionResult
        ``value = upper``: the expected loss of ``mechanism``, an ε-DP mechanism whose level
        ``dp_level ≤ ε·(1 + 1e-9)`` is recomputed exactly. ``lower`` is a rigorous lower bound
        on the least expected loss of any ε-DP mechanism (see Notes). ``target`` is ε,
        ``distortion_achieved`` equals ``value``, ``slope`` is NaN, ``unit`` is ``"loss"``.
        ``details`` holds ``raw_dp_level`` (the solver's matrix, clipped and renormalised),
        ``distortion_before_repair``, ``lift_mass`` (largest mass added to a row by the lift)
        and ``repair_weight`` (λ of the 0-DP mixture; 0 when not needed).

    Raises
    ------
    PriorError, ParameterError, NeighborError, MechanismError
        For invalid input (the message names the argument).
    ProblemTooLargeError
        If the mechanism or the LP is above dpcap's size limits.
    SolverError
        If the LP solver fails and the closed-form bracket (see Notes) is wider than ``tol``.

    Warns
    -----
    ConvergenceWarning
        If ``upper − lower > tol`` (status ``inaccurate``).

    Notes
    -----
    The LP is ``min Σ c W`` over row-stochastic ``W`` with ``c = p_x ℓ(x, y)`` and
    ``W[x, y] ≤ e^ε W[x', y]`` for ordered neighbours. ``lower`` is the Lagrangian bound
    ``L(μ) = Σ_x min_y (c + Aᵀμ)_{xy}`` of the solver's multipliers μ ≥ 0 of the ratio rows:
    weak duality with the simplex constraints kept gives ``L(μ) ≤ Σ c W`` for every feasible W,
    whatever μ, so no dual feasibility is assumed; the floating-point error of its evaluation is
    subtracted (:func:`dpcap.solvers.dplp.lagrangian_bound`); ``d*(∞) = Σ_x p_x min_y ℓ``
    bounds it from below too. ``upper`` is attained by the returned mechanism: the solver's,
    repaired if it is not ε-DP (module docstring), or the ε = ∞ optimum mixed with a 0-DP
    mechanism by the least weight that makes it ε-DP, whichever loses less (the mixture wins at
    large ε, where ``e^ε`` makes the LP ill-conditioned: from about ε = 20 on 32 inputs). At
    ε = 0, neighbours have equal rows, so each connected component of the neighbour graph
    releases its best constant output; at ε = ∞ each row releases its ``argmin_y ℓ``: both
    exact, ``lower = upper``.

    For counting queries (line neighbours on ``{0..n}``) and a loss non-decreasing in
    ``|x − y|``, the optimum is the truncated geometric mechanism followed by the consumer's
    optimal remap (Ghosh, Roughgarden and Sundararajan) — a test of this function.

    References
    ----------
    .. [1] A. Ghosh, T. Roughgarden and M. Sundararajan, "Universally utility-maximizing privacy
       mechanisms", *SIAM J. Comput.* 41(6), 2012.
    .. [2] W. Wang, L. Ying and J. Zhang, "On the relation between identifiability, differential
       privacy and mutual-information privacy", *IEEE Trans. Inf. Theory* 62(9), 2016 (the LP
       in W; Ünsal & Önen §5).

    Examples
    --------
    Randomised response is optimal for one bit under 0-1 loss: ``d* = 1/(1 + e^ε)``.

    >>> import math
    >>> res = optimal_mechanism([0.5, 0.5], [[0, 1], [1, 0]], 1.0)
    >>> abs(res.value - 1 / (1 + math.e)) < 1e-9, res.dp_level <= 1.0 + 1e-9
    (True, True)
    """
    problem = _problem(prior, loss, shape, neighbors, solver, "loss")
    level = check.nonnegative(eps, "eps")
    if level.ndim != 0:
        raise ParameterError(f"eps must be a scalar, got {check.show(eps)}")
    epsilon = float(level)
    tolerance = _tolerance(tol, "loss units")
    point = _evaluate(problem, epsilon)
    if point.failure and point.upper - point.lower > tolerance:
        raise SolverError(point.note, Status.FAILED)
    status, message = _conclude(
        point.upper - point.lower, tolerance, "loss units", point.note, warn=True
    )
    return DistortionResult(
        value=point.upper,
        lower=point.lower,
        upper=point.upper,
        mechanism=point.mechanism,
        target=epsilon,
        distortion_achieved=point.upper,
        dp_level=point.level,
        slope=math.nan,
        status=status,
        iterations=point.iterations,
        method=point.method,
        unit="loss",
        message=message,
        tol=tolerance,
        details=point.details,
    )


# --------------------------------------------------------------------------------------------
# Public: ε*(D)


def _feasible_start(problem: _Problem, budget: float) -> _Point:
    """A closed-form mechanism of distortion ≤ D at a finite level, for ``d_min < D < d*(0)``.

    ``(1 − λ)·T + λ·U`` with ``T`` the ε = ∞ optimum and ``U`` the uniform rows (full
    support, so the level is finite): its distortion is linear in λ.
    """
    k = problem.loss.shape[1]
    uniform = np.full_like(problem.inf_mechanism, 1.0 / k)
    d_uniform = problem.expected(uniform)
    weight = 1.0 if d_uniform <= budget else (budget - problem.d_min) / (d_uniform - problem.d_min)
    for _ in range(64):
        W = (1.0 - weight) * problem.inf_mechanism + weight * uniform
        value = problem.expected(W)
        if value <= budget:
            break
        weight *= 1.0 - 1e-12 * 2.0**_
    level = problem.level(W)
    return _Point(
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
    point: _Point
    solves: int
    note: str


def _search(problem: _Problem, budget: float, tol: float) -> _Search:
    """ε*(D) by a bracketing search over ε (bisection alternating with clipped secant steps)."""
    if budget < problem.d_min:
        raise ParameterError(
            f"D={budget!r} is below the least achievable expected distortion d_min="
            f"{problem.d_min!r} (releasing argmin_y d(x, y), with no privacy): no mechanism "
            "meets it"
        )
    if budget >= problem.d_zero or (problem.zero_at_min and budget >= problem.d_min):
        point = _evaluate(problem, 0.0)
        return _Search(
            0.0,
            0.0,
            point,
            0,
            f"D >= d*(0) = {problem.d_zero:.12g}: a 0-DP "
            "mechanism (one constant row per component) meets it",
        )
    if budget == problem.d_min:
        point = _evaluate(problem, math.inf)
        return _Search(
            math.inf,
            math.inf,
            point,
            0,
            (
                f"D = d_min = {problem.d_min:.12g} < d*(0): only mechanisms supported on each "
                "row's argmin reach it, and no finite eps allows rows of one component to "
                "differ in support"
            ),
        )
    lo, g_lo = 0.0, problem.d_zero - budget
    best = _feasible_start(problem, budget)
    for point in problem.cache:  # what earlier searches learned at other ε
        if point.lower > budget and point.eps > lo:
            lo, g_lo = point.eps, point.lower - budget
        if point.upper <= budget and point.level < best.level:
            best = point
    hi, g_hi = best.level, best.upper - budget
    solves, step, ambiguous, toggle, stuck = 0, 0, math.nan, True, 0
    failures: list[str] = []
    while hi - lo > tol and solves < MAX_SOLVES and stuck < 8:
        width = hi - lo
        if lo < ambiguous < hi:  # halve either side of the undecided ε in turn
            eps = (ambiguous + hi) / 2 if toggle else (lo + ambiguous) / 2
            toggle = not toggle
        elif step % 2 == 1 and g_lo > g_hi:
            eps = lo + width * g_lo / (g_lo - g_hi)
            eps = min(max(eps, lo + width / 16), hi - width / 16)
        else:
            eps = lo + width / 2
        step += 1
        point = _evaluate(problem, eps)
        solves += 1
        if point.failure:
            failures.append(f"eps={eps:.6g}: {point.failure}")
        progress = False
        if point.lower > budget:
            lo, g_lo, progress = eps, point.lower - budget, True
        elif point.upper <= budget:
            if point.level < hi:
                hi, g_hi, best, progress = point.level, point.upper - budget, point, True
        else:  # L(ε) ≤ D < U(ε): the LP's accuracy cannot tell; probe either side
            ambiguous = eps
        stuck = 0 if progress else stuck + 1
    note = (
        f"{solves} LP solves; eps={lo:.9g} infeasible (distortion bound > D), mechanism at "
        f"eps level {hi:.9g} with distortion {best.upper:.12g} <= D"
    )
    if stuck >= 8:
        note += "; the LP's accuracy could not separate the bracket further"
    if failures and hi - lo > tol:
        raise SolverError(
            f"{problem.solver} failed during the eps*(D) search ({len(failures)} of {solves} "
            f"solves; {failures[0]}); bracket left at [{lo:.9g}, {hi:.9g}]",
            Status.FAILED,
        )
    if failures:
        note += f"; {len(failures)} solves failed and were replaced by closed-form brackets"
    return _Search(hi, lo, best, solves, note)


def _privacy_point(problem: _Problem, D: float, tol: float, warn: bool) -> DistortionResult:
    found = _search(problem, D, tol)
    point = found.point
    gap = 0.0 if found.value == found.lower else found.value - found.lower
    status, message = _conclude(gap, tol, "nats", found.note, warn=warn)
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
    points: dict[int, DistortionResult], levels: FloatArray, tol: float
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
        status, message = _conclude(gap, tol, "nats", note, warn=False)
        points[i] = replace(point, status=status, message=message)


def _level_D(D: Any) -> float:
    if isinstance(D, bool) or not isinstance(D, (int, float, np.integer, np.floating)):
        raise ParameterError(f"D must be a real number, got {check.show(D)}")
    if math.isnan(float(D)):
        raise ParameterError("D must not be NaN")
    return float(D)


@overload
def privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: None = None,
    n_points: int | None = None,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    tol: float = 1e-6,
    solver: str | None = None,
) -> CurveResult: ...


@overload
def privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: float,
    n_points: None = None,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    tol: float = 1e-6,
    solver: str | None = None,
) -> DistortionResult: ...


def privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: float | None = None,
    n_points: int | None = None,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    tol: float = 1e-6,
    solver: str | None = None,
) -> DistortionResult | CurveResult:
    r"""Wang–Ying–Zhang's privacy–distortion function ``ε*(D)``, with a certified bracket.

    ``ε*(D)`` is the least ε for which some ε-DP mechanism has expected distortion at most D.
    With ``D`` a number it returns that point (a :class:`~dpcap.result.DistortionResult`);
    without ``D`` the curve over ``n_points`` budgets (a :class:`~dpcap.result.CurveResult`,
    the same as :func:`privacy_distortion_curve`), like :func:`dpcap.rate_distortion`.

    Parameters
    ----------
    prior : array_like, shape (n_databases,) or ``shape``
        The law of the database (rows in C order over the domain).
    distortion : array_like, shape (n_databases, n_outputs)
        ``distortion[x, y] = d(x, y)``; finite. For database-valued outputs ``n_outputs`` is
        the number of databases (e.g. the Hamming distance between databases).
    D : float, optional
        The distortion budget, ``D ≥ d_min = Σ_x p_x min_y d(x, y)``; without it, the curve.
    n_points : int, optional
        Number of budgets on the curve (only without ``D``).
    shape : sequence of int, optional
        Domain sizes of the database; default one entry whose values are the rows.
    neighbors : str, array_like or callable
        As in :func:`dpcap.neighbor_pairs`; default Hamming distance 1.
    tol : float
        Target width ``upper − lower`` of the bracket on ε* (nats).
    solver : {"CLARABEL", "HIGHS", "ECOS", "SCS"}, optional
        The LP backend (default Clarabel).

    Returns
    -------
    DistortionResult
        ``value = upper``: the ε-DP level of ``mechanism`` as :func:`dpcap.dp_epsilon` computes
        it (exact up to the rounding of a log-ratio, a few ulps), a mechanism with expected
        distortion ``distortion_achieved ≤ D``; so ``ε*(D) ≤ upper``. ``lower``: an ε at which
        the LP's certified bound shows every mechanism has distortion > D (or 0), so
        ``ε*(D) > lower``. ``target`` is D, ``iterations`` the number of LP solves, ``unit``
        ``"nats"``; ``details`` add ``lp_solves`` to those of :func:`optimal_mechanism` for the
        returned mechanism.

    Raises
    ------
    ParameterError
        If ``D < d_min`` (no mechanism, private or not, meets it), or another argument is
        invalid.
    SolverError
        If the LP solver fails outright.

    Warns
    -----
    ConvergenceWarning
        If the bracket is wider than ``tol`` (status ``inaccurate``): the LP's accuracy could not
        separate the two sides, or the solve budget (100) ran out.

    Notes
    -----
    ``d*(ε)``, the least distortion at ε (:func:`optimal_mechanism`), is non-increasing in ε,
    from ``d*(0)`` (every component of the neighbour graph releases one constant row) to
    ``d*(∞) = d_min``. So ``ε*(D) = 0`` for ``D ≥ d*(0)``; ε* may jump there, as ``d*`` is
    often flat near ε = 0 (the best 0-DP mechanism stays optimal up to some ``ε₀ > 0``, so
    ``ε*(D) → ε₀`` as ``D ↑ d*(0)``), and a budget a rounding error below ``d*(0)`` is then
    undecidable by the LP (status ``inaccurate``). For ``D = d_min < d*(0)``,
    ``ε*(D) = ∞`` exactly: reaching ``d_min`` needs every row of positive prior supported on
    its own argmin, while at finite ε neighbours have the same support, and a common support in
    every component would give ``d*(0) = d_min``. In between, the search keeps
    ``lower < ε* ≤ upper``: an ε moves ``lower`` when the LP's Lagrangian bound exceeds D, and
    moves ``upper`` to the verified level of the repaired mechanism when its distortion is at
    most D. It starts from ``[0, level of (1 − λ)T + λU]`` (``T`` the ε = ∞ optimum, ``U``
    uniform rows, λ chosen for distortion D) and from what earlier calls on the same problem
    learned, alternating bisection with secant steps clipped inside the bracket. When the LP
    cannot decide an ε (bound ≤ D < repaired distortion) it bisects either side of it in turn,
    and stops after 8 solves in a row that do not narrow the bracket.

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
    >>> res = privacy_distortion([0.5, 0.5], [[0, 1], [1, 0]], D=0.25)
    >>> abs(res.value - math.log(3)) < 1e-6, res.lower < math.log(3) < res.upper + 1e-15
    (True, True)
    """
    if D is None:
        return privacy_distortion_curve(
            prior,
            distortion,
            n_points=n_points,
            shape=shape,
            neighbors=neighbors,
            tol=tol,
            solver=solver,
        )
    if n_points is not None:
        raise ParameterError("n_points applies to the curve (D=None), not to a single budget D")
    problem = _problem(prior, distortion, shape, neighbors, solver, "distortion")
    tolerance = _tolerance(tol, "nats")
    return _privacy_point(problem, _level_D(D), tolerance, warn=True)


def privacy_distortion_curve(
    prior: Any,
    distortion: Any,
    /,
    *,
    D: Any = None,
    n_points: int | None = None,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    tol: float = 1e-6,
    solver: str | None = None,
) -> CurveResult:
    r"""The privacy–distortion curve ``D ↦ ε*(D)`` at many budgets, always a CurveResult.

    Parameters
    ----------
    prior, distortion, shape, neighbors, tol, solver
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
        ``x`` the budgets (in the order given, or increasing), ``value``/``lower``/``upper``
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
        Once, if any point's bracket is wider than ``tol``.

    Examples
    --------
    >>> curve = privacy_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=4)
    >>> [round(float(v), 4) for v in curve.value]
    [1.9459, 1.0986, 0.5108, 0.0]
    """
    problem = _problem(prior, distortion, shape, neighbors, solver, "distortion")
    tolerance = _tolerance(tol, "nats")
    if D is not None and n_points is not None:
        raise ParameterError("give the budgets D or their number n_points, not both")
    if D is None:
        count = DEFAULT_POINTS if n_points is None else check.integer(n_points, "n_points", 1)
        span = problem.d_zero - problem.d_min
        levels = problem.d_min + span * np.arange(1, count + 1) / count
        levels[-1] = problem.d_zero  # exactly: ε* jumps to 0 there (d* is often flat near 0)
    else:
        levels = np.atleast_1d(np.asarray(D, dtype=np.float64))
        if levels.ndim != 1 or levels.size == 0 or np.isnan(levels).any():
            raise ParameterError(f"D must be a non-empty 1-D array of budgets, got {check.show(D)}")
    points: dict[int, DistortionResult] = {}
    for index in np.argsort(-levels, kind="stable"):
        points[int(index)] = _privacy_point(problem, float(levels[index]), tolerance, warn=False)
    _share_certificates(points, levels, tolerance)
    ordered = tuple(points[i] for i in range(levels.size))
    status = np.empty(levels.size, dtype=object)
    status[:] = [p.status for p in ordered]
    open_points = [i for i, p in enumerate(ordered) if p.status is not Status.CONVERGED]
    message = (
        f"{levels.size} budgets, {levels.size - len(open_points)} converged to tol {tolerance:g}"
    )
    if open_points:
        message += f"; open at indices {open_points}"
        warnings.warn(message, ConvergenceWarning, stacklevel=2)
    return CurveResult(
        x=levels,
        value=np.array([p.value for p in ordered]),
        lower=np.array([p.lower for p in ordered]),
        upper=np.array([p.upper for p in ordered]),
        status=status,
        points=ordered,
        method=f"lp-search/{problem.solver}",
        unit="nats",
        message=message,
    )
