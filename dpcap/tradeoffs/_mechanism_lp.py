r"""The least-loss ε-DP mechanism LP at one ε: the problem, the bracket, verification and repair.

Shared by :mod:`dpcap.tradeoffs.mechanism_design` (``d*(ε)``) and
:mod:`dpcap.tradeoffs.epsilon_distortion` (``ε*(D)``, which inverts ``d*``). For a prior ``p`` on
the databases (rows) and a loss ``ℓ(x, y)``, the least expected loss of an ε-DP mechanism is a
linear program in the mechanism ``W`` (``docs/mathematics.rst`` §6):

.. math:: d^*(\varepsilon) = \min_W \sum_x p_x \sum_y W_{xy}\,\ell(x, y)
          \quad\text{s.t.}\quad W \text{ row-stochastic},\quad
          W_{xy} \le e^{\varepsilon} W_{x'y}\ \ \forall (x, x') \text{ neighbours},\ \forall y.

:func:`evaluate` returns ``d*(ε)`` with a bracket certified here, never taken on the solver's
word:

* ``upper`` is the expected loss of a mechanism whose ε-DP level is recomputed exactly (the
  kernel of :func:`dpcap.dp_epsilon`) and is at most ``ε·(1 + DP_RTOL)``. LP solvers return
  mechanisms whose tiny entries break the ratio constraints (ε = ∞ is common), so the solver's
  matrix is *repaired* when it fails: negatives clipped and rows renormalised, then lifted to the
  least entrywise-larger matrix that meets the ratios and renormalised
  (:func:`dpcap.solvers.dplp.lift`), and, if that is not enough, mixed with a 0-DP mechanism by
  the least weight that restores every constraint (:func:`dpcap.solvers.dplp.mixing_weight`,
  then the rounding rule of :func:`dpcap.solvers.mixing.least_weight`, ``docs/mathematics.rst``
  §8). A closed-form candidate competes at every ε: the ε = ∞ optimum (each row's argmin)
  mixed with a 0-DP mechanism by the least weight that makes it ε-DP. It wins at large ε,
  where the LP's coefficients ``e^ε`` defeat the solvers, and it stands in when a solver fails.
* ``lower`` is the larger of the Lagrangian bound of the solver's multipliers
  (:func:`dpcap.solvers.dplp.lagrangian_bound`), valid for *any* multipliers by weak duality,
  a closed-form bound tight as ε → 0, and ``d*(∞) = Σ_x p_x min_y ℓ(x, y)``.

:func:`private_within` and :func:`lower_end` then make both ends hold in floating point
(:func:`dpcap.optimal_mechanism`): the mechanism's level rounded up is at most ε, the closed
forms are rounded down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import coo_matrix

from dpcap._core import validation as check
from dpcap._core.certify import U, gamma
from dpcap.errors import ParameterError, PriorError, ProblemTooLargeError
from dpcap.metric_privacy import metric_matrix
from dpcap.neighbors import Neighbors, neighbor_pairs
from dpcap.solvers import dplp, metric_pairs, pairwise
from dpcap.solvers.mixing import least_weight
from dpcap.solvers.status import LP_SOLVERS

__all__ = [
    "DP_RTOL",
    "MAX_LP_CONSTRAINTS",
    "Point",
    "Problem",
    "build",
    "evaluate",
    "lower_end",
    "private_within",
    "rounding_slack",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Relative slack allowed on a verified DP level: ``level ≤ ε·(1 + DP_RTOL)``.
DP_RTOL = 1e-9

#: The unit roundoff of float64.

#: Most ratio constraints (ordered pairs × outputs) handed to an LP solver.
MAX_LP_CONSTRAINTS = 2**23

# --------------------------------------------------------------------------------------------
# The problem: validated data, closed forms at ε = 0 and ε = ∞, the compiled LP


@dataclass
class Problem:
    """The validated data of one LP, its closed forms at ε = 0 and ε = ∞, the compiled LP and
    the points solved so far (every search on the same problem reuses them)."""

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
    d_min_slack: float  # the rounding allowance of a budget at d*(∞) (see rounding_slack)
    d_zero_slack: float  # the rounding allowance of a budget at d*(0) (see rounding_slack)
    zero_at_min: bool  # whether d*(0) = d*(∞) exactly (a common argmin in every component)
    components: tuple[FloatArray, FloatArray, FloatArray]  # per component: d*(0), d*(∞), radius
    scale: FloatArray | None = None  # the pairs' distances under a metric (factors e^{ε d})
    lp: dplp.MechanismLP | None = None
    cache: list[Point] = field(default_factory=list)

    def expected(self, W: FloatArray) -> float:
        return math.fsum(np.sum(self.cost * W, axis=1).tolist())

    def expected_error(self, W: FloatArray) -> float:
        """A bound on ``|expected(W) − Σ p_x ℓ(x, y) W_xy|`` (exact, for the stored data).

        The products ``p_x ℓ`` and ``c·W`` round once each, a row's sum of ``k`` terms by at most
        ``γ_{k−1}`` of its absolute sum, and the exact sum of the rows once: ``γ_{k+2}``; one
        more unit covers the bound's own rounding.
        """
        return gamma(W.shape[1] + 3) * math.fsum(np.sum(np.abs(self.cost) * W, axis=1).tolist())

    def within(self, W: FloatArray, budget: float) -> bool:
        """Whether ``W``'s exact expected loss is at most ``budget``, despite rounding."""
        return self.expected(W) + self.expected_error(W) <= budget

    def level_above(self, W: FloatArray, level: float) -> float:
        """A float at least the exact ε-DP level of ``W``, from its computed ``level``.

        ``level`` is a largest ``|log W[x, y] − log W[x', y]|``; NumPy's float64 ``log`` is
        within 4 ulps (``8u·|log w|``), and the difference rounds once, so every computed
        log-ratio is within ``16u·max|log W| + u·level`` of the exact one, ``max`` over the
        positive entries (ε-DP is 0/0-blind, and a zero against a positive entry is ∞ exactly).
        """
        if not math.isfinite(level):
            return level  # a support mismatch: ∞ exactly
        positive = W[W > 0]
        largest = float(np.max(np.abs(np.log(positive)))) if positive.size else 0.0
        if self.scale is not None:  # a log-ratio over a distance d ≥ least: one more rounding
            return level + 16 * U * largest / self.least_scale + 3 * U * level
        return level + 16 * U * largest + 2 * U * level

    @property
    def least_scale(self) -> float:
        """The least distance of a constrained pair (1 without a metric)."""
        return 1.0 if self.scale is None or not self.scale.size else float(self.scale.min())

    @property
    def largest_scale(self) -> float:
        """The largest finite distance of a constrained pair (1 without a metric)."""
        if self.scale is None or not np.isfinite(self.scale).any():
            return 1.0
        return float(np.max(self.scale[np.isfinite(self.scale)]))

    def closed_lower(self, eps: float) -> float:
        """A closed-form lower bound on d*(ε), tight as ε → 0.

        Per component of the neighbour graph, ``share·d*(0) + (1 − share)·d*(∞)`` with
        ``share = e^{−ε·radius}`` rounded down, less a rounding margin.
        """
        zero, least, radius = self.components
        with np.errstate(over="ignore"):
            share = np.nextafter(np.exp(-eps * radius), 0.0)
        terms = share * zero + (1.0 - share) * least
        value = math.fsum(terms.tolist())
        return value - 8 * 2.0**-53 * float(np.sum(np.abs(zero) + np.abs(least)))

    def level(self, W: FloatArray) -> float:
        """The ε-DP level (the kernel of :func:`dpcap.dp_epsilon`), or under a metric the
        d-privacy level over the constrained pairs (:func:`dpcap.metric_epsilon`)."""
        if self.scale is not None:
            return pairwise.max_scaled_log_ratio(W, self.first, self.second, self.scale)
        value, *_ = pairwise.max_log_ratio(W, self.first, self.second)
        return value


@dataclass(frozen=True)
class Point:
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


def _domain(prior: Any, shape: Any) -> tuple[FloatArray, tuple[int, ...]]:
    """The prior as a vector over the rows, and the domain sizes (default: one entry)."""
    arr = check.numeric(prior, "prior", PriorError)  # ragged, complex, strings: named errors
    if shape is None:
        if arr.ndim == 0:
            raise PriorError(f"prior must be a probability vector, got {check.show(prior)}")
        dims = (int(arr.size),) if arr.ndim == 1 else tuple(int(s) for s in arr.shape)
    else:
        dims = check.domain_shape(shape)
    rows = math.prod(dims)
    if arr.shape not in ((rows,), dims):
        raise PriorError(
            f"prior must have {rows} entries (one per database of the domain {dims}), "
            f"got shape {arr.shape}"
        )
    return check.law(arr, "prior").ravel(), dims


def build(
    prior: Any,
    loss: Any,
    shape: Any,
    neighbors: Neighbors,
    solver: Any,
    name: str,
    metric: Any = None,
) -> Problem:
    """Validate the arguments of a query and set up its LP (compiled on the first solve).

    ``name`` is the loss argument's name in messages (``loss`` or ``distortion``); ``solver``
    is one of :data:`dpcap.solvers.status.LP_SOLVERS`, case-insensitive (default the first).
    With a ``metric`` (a distance on the rows, positive off the diagonal) the constraints are
    ``W[x] ≤ e^{ε d(x,x')} W[x']`` on the pairs :func:`dpcap.solvers.metric_pairs.essential_pairs`
    keeps, and ``neighbors`` is not used.
    """
    name_solver = LP_SOLVERS[0] if solver is None else check.solver(solver, LP_SOLVERS)
    p, dims = _domain(prior, shape)
    rows = p.size
    loss_arr = check.cost_matrix(loss, rows, name, rows_of="database", nonnegative=False)
    k = loss_arr.shape[1]
    check.dense_size(rows, k, "the mechanism")
    scale = None
    if metric is None:
        first, second = neighbor_pairs(dims, neighbors)
    else:
        D = metric_matrix(metric, rows)
        if ((D == 0) & ~np.eye(rows, dtype=bool)).any():
            i, j = (int(v) for v in np.argwhere((D == 0) & ~np.eye(rows, dtype=bool))[0])
            raise ParameterError(
                f"metric must be positive between different inputs for optimal_mechanism, got "
                f"d[{i}, {j}] = 0 (a pseudo-metric): merge the inputs at distance 0 (they must "
                "share their row), adding their priors"
            )
        first, second = metric_pairs.essential_pairs(D)
        scale = D[first, second]
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
    # d*(0) = d*(∞) iff each component's rows of positive prior share an argmin
    # (``docs/mathematics.rst`` §6).
    argmins = (loss_arr == loss_arr.min(axis=1, keepdims=True)) | (p == 0)[:, None]
    common = np.logical_and.reduceat(argmins[order], starts, axis=0).any(axis=1).all()
    # Per component: d*(0), d*(∞) and the eccentricity of its first row (for closed_lower).
    zero_c = per_component.min(axis=1)
    least_c = np.add.reduceat(cost[order].min(axis=1), starts)
    radius = _eccentricities(first, second, labels.astype(np.int64), order[starts], scale)
    magnitude = np.add.reduceat(np.abs(cost[order]), starts, axis=0).max(axis=1)
    problem = Problem(
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
        d_min_slack=rounding_slack(rows, k, float(np.sum(np.abs(cost[np.arange(rows), best])))),
        d_zero_slack=rounding_slack(rows, k, float(np.sum(magnitude))),
        zero_at_min=bool(common),
        components=(zero_c, least_c, radius),
        scale=scale,
    )
    problem.d_min = problem.expected(inf_mech)
    problem.d_zero = problem.expected(zero_mech)
    return problem


def rounding_slack(rows: int, outputs: int, magnitude: float) -> float:
    r"""``γ_{3N+k+8}·A``: how far below ``d*(0)`` or ``d*(∞)`` a budget still counts as reaching it.

    ``N`` is the number of databases, ``k`` of outputs, and ``A`` bounds the sum in absolute values:
    ``Σ_K max_y Σ_{x∈K} |p_x ℓ(x, y)|`` over the components ``K`` for ``d*(0)``,
    ``Σ_x |p_x min_y ℓ(x, y)|`` for ``d*(∞)``. It bounds (``docs/mathematics.rst`` §6, §8) the
    rounding of the computed value (the products ``p_x ℓ`` and the exact sum: ``2u``; for
    ``d*(0)`` the column of least sum chosen from sums rounded in any order: ``2γ_N``) plus the
    distance between the data as stored and as written in decimals (each entry of the prior and
    the loss rounded once, the prior normalised by its rounded sum: ``γ_{N+3}``; D rounded once:
    ``u``), and the ``γ_{k+3}`` of :meth:`Problem.expected_error` by which a mechanism must
    beat a budget. A budget written as ``d*(0)`` therefore never lands more than this below the
    computed value. Not finite (an overflowing loss): 0, no allowance.
    """
    slack = gamma(3 * rows + outputs + 8) * magnitude
    return slack if math.isfinite(slack) else 0.0


def _eccentricities(
    first: IntArray, second: IntArray, labels: IntArray, roots: IntArray, scale: Any = None
) -> FloatArray:
    """For each component (in label order), the largest path length from its root row (edges of
    length ``scale``, default 1; sums rounded up: ``closed_lower`` needs a radius not below it)."""
    rows = labels.size
    dist = np.full(rows, np.inf)
    dist[roots] = 0.0
    tails = np.concatenate([first, second])
    heads = np.concatenate([second, first])
    length = 1.0 if scale is None else np.concatenate([scale, scale])
    for _ in range(rows):  # Bellman–Ford from every root at once, one sweep per path length
        reach = np.nextafter(dist[tails] + length, np.inf) if scale is not None else dist[tails] + 1
        closer = reach < dist[heads]
        if not closer.any():
            break
        np.minimum.at(dist, heads[closer], reach[closer])
    radius = np.zeros(int(labels.max()) + 1 if rows else 0)
    np.maximum.at(radius, labels, dist)
    return radius[labels[roots]]


# --------------------------------------------------------------------------------------------
# One ε: solve, certify, verify, repair


def evaluate(problem: Problem, eps: float) -> Point:
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
        point = Point(eps, value, value, W.copy(), level, 0, "closed-form", note, details)
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
            problem.cost, problem.first, problem.second, solver=problem.solver, scale=problem.scale
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
        point = Point(
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
        problem.cost, problem.first, problem.second, eps, solution.multipliers, problem.scale
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
    point = Point(
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
    problem: Problem, raw: FloatArray, eps: float
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


def _lift_normalised(problem: Problem, W: FloatArray, eps: float) -> tuple[FloatArray, float]:
    eta, best, added = 0.0, W, 0.0
    for _ in range(6):
        target = eps - eta
        if target <= 0:
            break
        V = dplp.lift(W, problem.first, problem.second, target, problem.scale)
        sums = V.sum(axis=1)
        V /= sums[:, None]
        best, added = V, float(sums.max() - 1.0)
        excess = problem.level(V) - target
        if excess <= eta:
            break
        eta = max(2.0 * eta, 2.0 * excess)
    return best, added


def _mix(
    problem: Problem, W: FloatArray, eps: float, limit: float
) -> tuple[FloatArray, float, float]:
    """``(1 − λ)W + λ·1uᵀ`` at the least λ whose exact level is ``≤ limit``, λ and the level.

    ``u`` is the prior-weighted or the plain average row, whichever loses less at its analytic
    weight (:func:`dpcap.solvers.dplp.mixing_weight`); the level is then re-evaluated on the
    mixture and λ raised by the rounding rule of :func:`dpcap.solvers.mixing.least_weight`
    (λ = 1, a constant mechanism, is 0-DP).
    """
    options = []
    for u in (problem.prior @ W, W.mean(axis=0)):
        weight = dplp.mixing_weight(W, u, problem.first, problem.second, eps, problem.scale)
        options.append((problem.expected((1 - weight) * W + weight * u), weight, u))
    _, start, u = min(options, key=lambda o: o[0])

    def mixture(weight: float) -> FloatArray:
        mixed: FloatArray = (1.0 - weight) * W + weight * u
        return mixed

    weight = least_weight(lambda w: problem.level(mixture(w)) <= limit, start)
    mixed = mixture(weight)
    return mixed, weight, problem.level(mixed)


# --------------------------------------------------------------------------------------------
# Certificates that hold in floating point (``docs/mathematics.rst`` §8)


def private_within(problem: Problem, W: FloatArray, eps: float) -> tuple[FloatArray, float]:
    """``W``, or a repair of it, whose *exact* ε-DP level is at most ``eps``, and its level.

    The test is :meth:`Problem.level_above` ``≤ ε``: the computed level rounded up by a bound
    on its rounding, the rule by which :mod:`dpcap.tradeoffs.epsilon_distortion` reads a level (its
    upper end). :func:`evaluate` accepts ``level ≤ ε(1 + DP_RTOL)``; a matrix between the two is
    lifted (:func:`_lift_normalised`), then mixed with a 0-DP row (:func:`_mix`), at the target
    ``ε − s·m`` for ``s = 2, 8, 64`` (``m`` the rounding allowance of ``W``'s level), until the
    test holds; the lift costs about the violations' mass, far less than mixing. The best 0-DP
    mechanism (entries 0 and 1, level 0 exactly) is the last resort. The level returned is the
    computed one (:meth:`Problem.level`, as :func:`dpcap.dp_epsilon` gives it).
    """
    level = problem.level(W)
    top = problem.level_above(W, level)
    if top <= eps:
        return W, level
    margin = max(top - level, 2 * U * eps)
    for shrink in (2.0, 8.0, 64.0):
        target = eps - shrink * margin
        if not (target > 0.0 and math.exp(target * problem.least_scale) > 1.0):  # needs e^ε > 1
            break
        V, _ = _lift_normalised(problem, W, target)
        if problem.level(V) > target:
            V, _, _ = _mix(problem, V, target, target)
        candidate = problem.level(V)
        if problem.level_above(V, candidate) <= eps:
            return V, candidate
    Z = problem.zero_mechanism.copy()
    return Z, problem.level(Z)


def lower_end(problem: Problem, point: Point) -> float:
    """A lower bound on the exact ``d*(ε)`` of the stored data, from a point of :func:`evaluate`.

    The Lagrangian bound is rigorous as computed (:func:`dpcap.solvers.dplp.lagrangian_bound`
    subtracts its rounding); the closed forms are moved down by the rounding allowances of
    :func:`rounding_slack`: ``d*(∞) = d_min`` by :meth:`Problem.expected_error` of the argmin
    rows, ``d*(0)`` by ``d_zero_slack`` (which covers the rounded per-component sums from which
    the best column was chosen), and :meth:`Problem.closed_lower` by both allowances, as it is
    made of the same per-component sums. :func:`evaluate` took ``max(bound, d_min,
    closed_lower)``: a value above the last two is the bound, kept as it is.
    """
    if point.eps == 0.0:
        return point.upper - problem.d_zero_slack
    least = problem.d_min - problem.expected_error(problem.inf_mechanism)
    if math.isinf(point.eps):
        return least
    closed = problem.closed_lower(point.eps)
    if point.lower > max(problem.d_min, closed):
        return point.lower
    closed -= problem.d_zero_slack + problem.d_min_slack
    return min(point.lower, max(least, closed))
