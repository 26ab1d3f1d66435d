"""Rényi (α-)capacities, their profile over α, Rényi MI-DP and maximal α-leakage.

Sibson, Arimoto and Augustin–Csiszár α-mutual informations have the same supremum over priors,
the Rényi radius (``docs/mathematics.rst`` §4; Csiszár 1995; Hsu et al. §III-A):

    C_α = max_p I_α^S(p, W) = min_Q max_x D_α(W_x ‖ Q).

Any prior gives a lower bound (its Sibson information) and any output law ``Q`` an upper bound,
so every result is a certified bracket. α = 1 is Shannon's capacity, α = ∞ the maximal leakage
``log Σ_y max_x W_xy`` (closed form), α = 0 its limit ``−log min_p max_y P(x ∈ supp W_·y)``
(a linear programme, certified by its primal and dual).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism
from dpcap.errors import ParameterError, SolverError, Status
from dpcap.function_mechanism import FunctionMechanism
from dpcap.measures import mutual_information, renyi_mi
from dpcap.renyi_radius import ENGINE_ORDER, radius_below_one
from dpcap.result import CapacityResult, RenyiProfile
from dpcap.shannon import structured as structured
from dpcap.shannon import working_set
from dpcap.shannon.shannon_capacity import capacity
from dpcap.solvers import blahut, pairwise, reduce, renyi
from dpcap.solvers.status import CONIC_SOLVERS, RENYI_SOLVERS

__all__ = ["alpha_leakage", "renyi_capacity", "renyi_profile"]

FloatArray = NDArray[np.float64]
KINDS = ("sibson", "arimoto", "augustin", "naive")
METHODS = ("auto", "ba", "conic")


def _model(alpha: float) -> blahut.Model:
    return blahut.SHANNON if alpha == 1.0 else renyi.Sibson(alpha)


def _arimoto_prior(sibson_prior: FloatArray, alpha: float) -> FloatArray:
    """The Arimoto-optimal prior: ``p_A ∝ p_S^{1/α}`` (its α-tilt is the Sibson optimum)."""
    if math.isinf(alpha):
        return sibson_prior.copy()
    support = sibson_prior > 0
    logs = np.where(support, np.log(np.where(support, sibson_prior, 1.0)) / alpha, -np.inf)
    out = np.exp(logs - logs.max())
    result: FloatArray = out / out.sum()
    return result


def renyi_capacity(
    W: Any,
    /,
    alpha: float,
    *,
    kind: str = "sibson",
    tol: float = 1e-9,
    rtol: float = 0.0,
    method: str = "auto",
    solver: str | None = None,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CapacityResult:
    """Rényi capacity of order α ∈ [0, ∞]: ``C_α = max_p I_α(p, W) = min_Q max_x D_α(W_x ‖ Q)``.

    Parameters
    ----------
    W : array_like, Channel or Mechanism, shape (n_inputs, n_outputs)
        An additive mechanism (:meth:`~dpcap.Mechanism.additive`) is solved on the noise rows
        of its reachable totals, without enumerating its databases: each kind's supremum over
        databases equals its supremum over totals, and the attaining law is placed on one
        database per total
        (:mod:`dpcap.shannon.structured`).
    alpha : float in [0, ∞]
        α = 1 is Shannon capacity; α = ∞ the maximal leakage ``log Σ_y max_x W_xy``; α = 0
        ``−log min_p max_y P_X(supp W_{·y})``. Orders near 1 are evaluated stably.
    kind : {"sibson", "arimoto", "augustin", "naive"}
        Which α-mutual information the returned ``prior`` maximises. Sibson, Arimoto and
        Augustin–Csiszár share the supremum C_α (so the bracket is the same) but not the
        optimal prior: the Augustin prior equals Sibson's (both make the radius centre
        ``Q* ∝ (pW^α)^{1/α}``), the Arimoto prior is ``∝ p_S^{1/α}`` (its α-tilt is Sibson's).
        ``"naive"`` is ``sup_p D_α(P_XY ‖ P_X P_Y)``, the article's definition, which is not
        Sibson's: ``lower`` is the best value found (multi-start local search) and ``upper``
        the diameter ``max_{x,x'} D_α(W_x ‖ W_x')``; exact at α = 1 (Shannon) and α = ∞ (the
        ε-DP level over all pairs of inputs, approached as the prior concentrates on a pair).
    tol : float
        Certified gap (nats).
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    method : {"auto", "ba", "conic"}
        "auto"/"ba": for α > 1 the shared BA/Newton/interior-point engine with the Sibson
        model; for 0 < α < 1 a primal–dual interior point on the radius centre ``Q``
        (:func:`dpcap.solvers.renyi_zero.solve_centre`), which stays well conditioned as α → 0
        where the engine's ``Q_p ∝ (pW^α)^{1/α}`` does not (from α =
        :data:`~dpcap.renyi_radius.TRIAL_ORDER` up the engine is tried first, with a bounded
        trial below :data:`~dpcap.renyi_radius.ENGINE_ORDER`, and the interior point runs only
        if it did not close the bracket).
        "conic": cvxpy power cones (Clarabel or SCS), polished and certified as above.
    solver : str, optional
        cvxpy solver for ``method="conic"`` (Clarabel or SCS for α ≠ 1; case-insensitive).
    max_iter, unit
        As for :func:`dpcap.capacity`.

    Returns
    -------
    CapacityResult
        ``value = upper``; ``prior`` is the optimal prior of the requested ``kind``. For
        0 < α < ∞ the upper end never exceeds ``C_∞ = log Σ_y max_x W_xy ≤ log min(|X|, |Y|)``
        (rounded up), a bound of its own since ``C_α`` is non-decreasing in α. For an additive
        mechanism, a :class:`~dpcap.shannon.structured.StructuredCapacityResult` (the result
        of the reduced channel, its prior lifted to the databases).

    Examples
    --------
    >>> import math
    >>> W = [[1.0, 0.0], [0.5, 0.5]]          # Z-channel
    >>> res = renyi_capacity(W, 2.0)
    >>> round(float(res.prior[1]), 6)           # Sibson: P(X = 1) = 1/3
    0.333333
    >>> round(float(renyi_capacity(W, 2.0, kind="arimoto").prior[1]), 6)  # √2 − 1
    0.414214
    >>> math.isclose(renyi_capacity(W, math.inf).value, math.log(1.5))
    True
    """
    if isinstance(W, (AdditiveMechanism, FunctionMechanism)):
        reduced = structured.reduce_mechanism(W)
        inner = renyi_capacity(
            reduced.rows,
            alpha,
            kind=kind,
            tol=tol,
            rtol=rtol,
            method=method,
            solver=solver,
            max_iter=max_iter,
            unit=unit,
        )
        return structured.lift(inner, reduced)
    a = check.order(alpha)
    matrix = check.stochastic_matrix(W, "W")
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    check.choice(kind, KINDS, "kind")
    check.choice(method, METHODS, "method")
    if method == "conic" and (a == 0.0 or math.isinf(a) or kind == "naive"):
        raise ParameterError(
            f"method='conic' applies to 0 < alpha < inf (kind sibson/arimoto/augustin); "
            f"got alpha={alpha!r}, kind={kind!r}"
        )
    if solver is not None:
        solver = check.conic_solver(method, solver, CONIC_SOLVERS if a == 1.0 else RENYI_SOLVERS)
    if kind == "arimoto" and a == 0.0:
        raise ParameterError(
            "kind='arimoto' is not defined at alpha = 0: the Arimoto prior p_S^(1/α) has no "
            "limit there; use kind='sibson'"
        )
    if kind == "naive":
        return _naive(matrix, a, tolerance, budget, unit, relative)
    if a == 1.0:
        return capacity(
            matrix,
            method="ba" if method == "auto" else method,
            solver=solver,
            tol=tolerance,
            rtol=relative,
            max_iter=budget,
            unit=unit,
        )
    floor: Callable[[], float] | None = None  # the rounding floor of an engine's bracket
    closed = False  # whether the engine closed its own bracket
    if math.isinf(a):
        lower, upper, prior = _certify.radius_infinity(matrix)
        tag, iterations, note = "closed form", 0, "log Σ_y max_x W[x, y]"
    elif a == 0.0:
        lower, upper, prior = _certify.capped(matrix, _certify.radius_zero(matrix))
        tag, iterations, note = "lp", 0, "primal and dual linear programmes (HiGHS)"
    else:
        reduction = reduce.extreme_rows(reduce.reduce_channel(matrix))
        model = renyi.Sibson(a)
        initial = None
        candidates: tuple[_certify.Bracket, ...] = ()
        note = ""
        tag = "ba" if a > 1.0 else "interior point"
        if method == "conic":
            from dpcap.solvers import conic

            name = RENYI_SOLVERS[0] if solver is None else solver
            # below 1 the centre is a candidate too: keep the columns (duplicate rows go)
            rows = reduction.rows
            program = matrix[rows] if a < 1.0 else reduction.matrix
            raw = conic.renyi_capacity_conic(program, a, solver=name, tol=tolerance)
            if not raw.status.usable:
                raise SolverError(
                    f"{name} failed on the α-capacity program: {raw.message}",
                    _certify.status_of(raw),
                )
            initial = raw.prior[None]
            tag = f"conic/{name}"
            note = f"{name} reported {raw.objective:.12g} ({raw.status.value})"
            note += "; polished by the engine" if a > 1.0 else ""
            if a < 1.0:
                prior = reduction.prior_back(raw.prior)
                if raw.output is None:
                    candidates = (_certify.bracket(matrix, prior, model=model),)
                else:
                    candidates = (_certify.bracket_at_centre(matrix, prior, raw.output, a),)
        # tall channels: the engine on a working set of rows (from ENGINE_ORDER up, where the
        # engine converges; below it the interior point on the centre as before)
        tall = method != "conic" and a >= ENGINE_ORDER and working_set.tall(reduction.matrix)
        if tall:  # the engine on a working set of rows; certified on every row
            sub, sol, rounds = working_set.solve(reduction, tolerance, relative, budget, model)
            priors = (sol.prior[0], sol.upper_prior[0])
            found_tall = _certify.bracket(matrix, *priors, model=model, reduction=sub)
            candidates = (*candidates, _certify.capped(matrix, found_tall))
            note = f"working set of {sub.matrix.shape[0]} rows after {rounds} rounds"
            tall_iterations = int(sol.iterations[0])
        if a < 1.0:
            found, iterations, how = radius_below_one(
                matrix,
                a,
                tolerance,
                budget,
                rtol=relative,
                reduction=reduction,
                candidates=candidates,
                initial=initial,
                engine=False if tall else None,
            )
            if tall:
                iterations += tall_iterations
            lower, upper, prior = found
            if note and not tall:
                how = f"polished by the {how}" if how else "certified as returned"
            note = "; ".join(part for part in (note, how) if part)
        else:
            if not tall:
                sub = reduction
                sol = blahut.solve(
                    reduction.matrix[None],
                    tol=tolerance,
                    rtol=relative,
                    max_iter=budget,
                    initial=initial,
                    model=model,
                )
            priors = (sol.prior[0], sol.upper_prior[0])
            lower, upper, prior = _certify.capped(
                matrix, _certify.bracket(matrix, *priors, model=model, reduction=sub)
            )
            iterations = int(sol.iterations[0])
            floor = functools.partial(_certify.floor, matrix, *priors, model=model, reduction=sub)
            closed = bool(sol.converged[0])
    if kind == "arimoto":
        prior = _arimoto_prior(prior, a)
    status, message = _certify.conclude(
        upper - lower,
        tolerance,
        rtol=relative,
        upper=upper,
        floor=floor,
        engine_closed=closed,
        iterations=iterations,
        note=note,
    )
    return CapacityResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=prior,
        output=prior @ matrix,
        status=status,
        iterations=iterations,
        method=f"{tag} ({kind})",
        unit=unit,
        message=message,
        tol=tolerance,
    )


def _naive(
    matrix: FloatArray, a: float, tol: float, budget: int, unit: str, rtol: float
) -> CapacityResult:
    """``sup_p D_α(P_XY ‖ P_X P_Y)``: best value found (lower) and the diameter (upper)."""
    divisor = check.unit_divisor(unit)
    n = matrix.shape[0]
    I, J = np.triu_indices(n, k=1)
    I, J = I.astype(np.int64), J.astype(np.int64)
    if math.isinf(a):
        diameter, x, xp, _ = pairwise.max_log_ratio(matrix, I, J)
    else:
        diameter, x, xp = pairwise.max_divergence(matrix, I, J, a)
    if _certify.constant_rows(matrix):  # P_XY = P_X P_Y under every prior: exactly 0
        lower = upper = 0.0
        prior = np.full(n, 1.0 / n)
        note = "identical rows: Y is independent of X, D_α(P_XY ‖ P_X P_Y) = 0"
    elif a == 1.0:
        shannon = capacity(matrix, tol=tol, rtol=rtol, max_iter=budget)
        lower, upper, prior = shannon.lower, shannon.upper, shannon.prior
        note = "α = 1: Shannon capacity"
    elif math.isinf(a):
        lower = upper = diameter
        prior = np.zeros(n)
        if x >= 0:
            prior[xp] = 1.0  # the supremum is approached as mass flows to (x, x'), not attained
        note = "α = ∞: the ε-DP level over all pairs of inputs (a supremum, not attained)"
    else:
        lower, prior = _naive_search(matrix, a)
        upper = max(diameter, lower)
        note = f"best of a multi-start local search; upper is the diameter (pair {x}, {xp})"
    status, message = _certify.conclude(
        upper - lower, tol, rtol=rtol, upper=upper, note=note, open_status=Status.INACCURATE
    )
    return CapacityResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=prior,
        output=prior @ matrix,
        status=status,
        iterations=0,
        method="naive",
        unit=unit,
        message=message,
        tol=tol,
    )


def renyi_mutual_information(p: FloatArray, matrix: FloatArray, a: float) -> float:
    """``D_α(P_XY ‖ P_X P_Y)`` for one prior (the article's α-information), evaluated in the
    log domain: finite even where ``p_x q_y`` underflows (a Nelder–Mead vertex with an input of
    mass e^-700 gave ∞, then ∞ − ∞ in the simplex): :func:`dpcap.measures.renyi_mi`."""
    return renyi_mi(p, matrix, a)


def _naive_search(matrix: FloatArray, a: float) -> tuple[float, FloatArray]:
    """Multi-start local maximisation of ``D_α(P_XY ‖ P_X P_Y)`` over the simplex."""
    from scipy.optimize import minimize

    n = matrix.shape[0]
    rng = np.random.default_rng(0)
    starts = [np.zeros(n)] + [rng.normal(0, 2, n) for _ in range(7)]
    for x in range(min(n, 8)):  # near-vertices: the supremum may sit at the boundary
        z = np.full(n, -4.0)
        z[x] = 4.0
        starts.append(z)
    best_value, best_prior = -math.inf, np.full(n, 1.0 / n)

    def objective(z: FloatArray) -> float:
        p = np.exp(z - z.max())
        p /= p.sum()
        return -renyi_mutual_information(p, matrix, a)

    for z0 in starts:
        res = minimize(
            objective, z0, method="Nelder-Mead" if n <= 3 else "L-BFGS-B", options={"maxiter": 2000}
        )
        p = np.exp(res.x - res.x.max())
        p /= p.sum()
        value = renyi_mutual_information(p, matrix, a)
        if value > best_value:
            best_value, best_prior = value, p
    return best_value, best_prior


def renyi_profile(
    W: Any,
    /,
    alphas: Any,
    *,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> RenyiProfile:
    """The α-capacity profile ``α ↦ C_α`` (non-decreasing), warm-started along the grid.

    Parameters
    ----------
    W : array_like, shape (n_inputs, n_outputs)
    alphas : array_like of α ∈ [0, ∞]
        Solved in increasing order, each order above 1 from the previous optimal prior
        (orders below 1 as in :func:`renyi_capacity`). Each upper end is the least of the
        upper ends at its order and above (``C_α`` is non-decreasing), so ``value`` is
        non-decreasing in α.
    tol, rtol, max_iter, unit
        As for :func:`renyi_capacity` (the rule applies to each order).

    Returns
    -------
    RenyiProfile
        In the order of ``alphas`` as given; ``profile[k]`` is the Sibson
        :class:`~dpcap.result.CapacityResult` of order ``alpha[k]``.

    Examples
    --------
    >>> prof = renyi_profile([[0.9, 0.1], [0.1, 0.9]], [0.5, 1.0, 2.0, float("inf")])
    >>> bool(all(prof.value[:-1] <= prof.value[1:]))
    True
    >>> prof[1].status.value, len(prof)
    ('converged', 4)
    """
    matrix = check.stochastic_matrix(W, "W")
    grid = check.nonnegative(alphas, "alphas").ravel()
    if grid.size == 0:
        raise ParameterError("alphas must hold at least one order")
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    K, n = grid.size, matrix.shape[0]
    lower, upper, diameter = np.zeros(K), np.zeros(K), np.zeros(K)
    priors = np.zeros((K, n))
    iterations = np.zeros(K, dtype=np.int64)
    I, J = np.triu_indices(n, k=1)
    I, J = I.astype(np.int64), J.astype(np.int64)
    reduction = reduce.reduce_channel(matrix)
    warm: FloatArray | None = None
    order = np.argsort(grid, kind="stable")
    for k in order:
        a = float(grid[k])
        if math.isinf(a):
            lower[k], upper[k], priors[k] = _certify.radius_infinity(matrix)
        elif a == 0.0:
            lower[k], upper[k], priors[k] = _certify.capped(matrix, _certify.radius_zero(matrix))
        elif a < 1.0:
            found, iterations[k], _ = radius_below_one(
                matrix, a, tolerance, budget, rtol=relative, reduction=reduction
            )
            lower[k], upper[k], priors[k] = found
            warm = priors[k][reduction.rows][None]
        else:
            sol = blahut.solve(
                reduction.matrix[None],
                tol=tolerance,
                rtol=relative,
                max_iter=budget,
                initial=warm,
                model=_model(a),
            )
            warm = sol.prior
            lower[k], upper[k], priors[k] = _certify.capped(
                matrix,
                _certify.bracket(
                    matrix, sol.prior[0], sol.upper_prior[0], model=_model(a), reduction=reduction
                ),
            )
            iterations[k] = int(sol.iterations[0])
    # The diameters of every order in one pass over the pairs (the logarithms taken once)
    finite_orders = np.isfinite(grid)
    if len(I):
        diameter[finite_orders] = pairwise.max_divergences(matrix, I, J, grid[finite_orders])
        diameter[~finite_orders] = pairwise.max_log_ratio(matrix, I, J)[0]
    # C_α is non-decreasing in α (§4): an upper bound at a larger order bounds every smaller one
    # (α = ∞ is already in each finite order's cap, rounded up)
    finite = order[np.isfinite(grid[order])]
    upper[finite] = np.minimum.accumulate(upper[finite][::-1])[::-1]
    lower, upper = np.minimum(lower, upper), np.maximum(lower, upper)  # crossing ends: see ordered
    met = _certify.met(upper - lower, tolerance, relative, upper)
    status: list[Status] = [Status.CONVERGED if met[k] else Status.MAX_ITER for k in range(K)]
    note = f"budget {budget} iterations per order"
    status_array, message = _certify.conclude_many(
        status, tolerance, rtol=relative, what="orders", note=note
    )
    return RenyiProfile(
        alpha=grid,
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        diameter=diameter / divisor,
        prior=priors,
        output=priors @ matrix,
        status=status_array,
        iterations=iterations,
        method="ba (sibson)"
        if not np.any((grid > 0) & (grid < 1))
        else "ba + interior point (sibson)",
        unit=unit,
        message=message,
        tol=tolerance,
    )


def alpha_leakage(
    W: Any,
    /,
    alpha: float,
    *,
    prior: Any = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    unit: str = "nats",
) -> CapacityResult:
    """Maximal α-leakage ``L_α^max(X → Y)`` (Liao, Kosut, Sankar, Calmon 2019), α ∈ [1, ∞].

    For α > 1 it is the Sibson capacity of the channel restricted to the support of ``prior``
    (all inputs if ``prior`` is None): it depends on the prior only through its support. At
    α = 1 it *jumps* to the mutual information ``I(X;Y)`` at the given ``prior`` (which is then
    required): the limit α → 1⁺ is the Shannon capacity, not I(X;Y). At α = ∞ it is the maximal
    leakage ``log Σ_y max_x W_xy``.

    Parameters
    ----------
    W, alpha, prior
        The channel, ``α ∈ [1, ∞]`` and the prior whose support restricts it (needed at α = 1).
    tol, rtol, unit
        As for :func:`renyi_capacity`.

    Raises
    ------
    ParameterError
        If α < 1, or α = 1 without a prior.
    """
    a = check.order(alpha)
    if a < 1.0:
        raise ParameterError(f"alpha must be in [1, inf] for maximal α-leakage, got {alpha!r}")
    matrix = check.stochastic_matrix(W, "W")
    divisor = check.unit_divisor(unit)
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    if a == 1.0:
        if prior is None:
            raise ParameterError("alpha = 1 needs the prior: maximal 1-leakage is I(X;Y) at it")
        p = check.distribution(prior, "prior", size=matrix.shape[0])
        value = mutual_information(p, matrix)
        return CapacityResult(
            value=value / divisor,
            lower=value / divisor,
            upper=value / divisor,
            prior=p,
            output=p @ matrix,
            status=Status.CONVERGED,
            iterations=0,
            method="closed form",
            unit=unit,
            message="α = 1: I(X;Y) at the given prior",
            tol=tolerance,
        )
    rows = np.arange(matrix.shape[0])
    if prior is not None:
        p = check.distribution(prior, "prior", size=matrix.shape[0])
        rows = np.flatnonzero(p > 0)
    res = renyi_capacity(matrix[rows], a, tol=tolerance, rtol=relative, unit=unit)
    full = np.zeros(matrix.shape[0])
    full[rows] = res.prior
    return CapacityResult(
        value=res.value,
        lower=res.lower,
        upper=res.upper,
        prior=full,
        output=full @ matrix,
        status=res.status,
        iterations=res.iterations,
        method=res.method,
        unit=unit,
        message=res.message,
        tol=tolerance,
    )
