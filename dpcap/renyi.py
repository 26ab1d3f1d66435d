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

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import _certify
from dpcap import _validation as check
from dpcap.capacity import capacity
from dpcap.measures import mutual_information
from dpcap.result import CapacityResult, ParameterError, RenyiProfile, SolverError, Status
from dpcap.solvers import blahut, divergence, pairwise, reduce, renyi
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
    method: str = "auto",
    solver: str | None = None,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CapacityResult:
    """Rényi capacity of order α ∈ [0, ∞]: ``C_α = max_p I_α(p, W) = min_Q max_x D_α(W_x ‖ Q)``.

    Parameters
    ----------
    W : array_like or Channel, shape (n_inputs, n_outputs)
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
    method : {"auto", "ba", "conic"}
        "auto"/"ba": the shared BA/Newton/interior-point engine with the Sibson model;
        "conic": cvxpy power cones (Clarabel or SCS), polished and certified by the engine.
    solver : str, optional
        cvxpy solver for ``method="conic"`` (Clarabel or SCS for α ≠ 1; case-insensitive).
    max_iter, unit
        As for :func:`dpcap.capacity`.

    Returns
    -------
    CapacityResult
        ``value = upper``; ``prior`` is the optimal prior of the requested ``kind``.

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
    a = check.order(alpha)
    matrix = check.stochastic_matrix(W, "W")
    tolerance = check.tolerance(tol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    check.choice(kind, KINDS, "kind")
    check.choice(method, METHODS, "method")
    if solver is not None and method != "conic":
        raise ParameterError(
            f"solver selects a cvxpy solver for method='conic' only; got solver={solver!r} "
            f"with method={method!r}"
        )
    if method == "conic" and (a == 0.0 or math.isinf(a) or kind == "naive"):
        raise ParameterError(
            f"method='conic' applies to 0 < alpha < inf (kind sibson/arimoto/augustin); "
            f"got alpha={alpha!r}, kind={kind!r}"
        )
    if method == "conic" and solver is not None:
        solver = check.solver(solver, CONIC_SOLVERS if a == 1.0 else RENYI_SOLVERS)
    if kind == "arimoto" and a == 0.0:
        raise ParameterError(
            "kind='arimoto' is not defined at alpha = 0: the Arimoto prior p_S^(1/α) has no "
            "limit there; use kind='sibson'"
        )
    if kind == "naive":
        return _naive(matrix, a, tolerance, budget, unit)
    if a == 1.0:
        shannon = capacity(
            matrix,
            method="ba" if method == "auto" else method,
            solver=solver,
            tol=tolerance,
            max_iter=budget,
            unit=unit,
        )
        return shannon
    if math.isinf(a):
        value = math.log(float(np.sum(np.max(matrix, axis=0))))
        lower = upper = value
        prior = np.full(matrix.shape[0], 1.0 / matrix.shape[0])
        tag, iterations, note = "closed form", 0, "log Σ_y max_x W[x, y]"
    elif a == 0.0:
        lower, upper, prior = _certify.radius_zero(matrix)
        tag, iterations, note = "lp", 0, "primal and dual linear programmes (HiGHS)"
    else:
        reduction = reduce.reduce_channel(matrix)
        model = renyi.Sibson(a)
        initial = None
        note = ""
        tag = "ba"
        if method == "conic":
            from dpcap.solvers import conic

            name = RENYI_SOLVERS[0] if solver is None else solver
            raw = conic.renyi_capacity_conic(reduction.matrix, a, solver=name, tol=tolerance)
            if not raw.status.usable:
                raise SolverError(
                    f"{name} failed on the α-capacity program: {raw.message}",
                    _certify.status_of(raw.status),
                )
            initial = raw.prior[None]
            tag = f"conic/{name}"
            note = (
                f"{name} reported {raw.objective:.12g} ({raw.status.value}); polished by the engine"
            )
        sol = blahut.solve(
            reduction.matrix[None], tol=tolerance, max_iter=budget, initial=initial, model=model
        )
        lower, upper, prior = _certify.bracket(
            matrix, sol.prior[0], sol.upper_prior[0], model=model, reduction=reduction
        )
        iterations = int(sol.iterations[0])
    if kind == "arimoto":
        prior = _arimoto_prior(prior, a)
    status, message = _certify.conclude(upper - lower, tolerance, iterations=iterations, note=note)
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


def _naive(matrix: FloatArray, a: float, tol: float, budget: int, unit: str) -> CapacityResult:
    """``sup_p D_α(P_XY ‖ P_X P_Y)``: best value found (lower) and the diameter (upper)."""
    divisor = check.unit_divisor(unit)
    n = matrix.shape[0]
    I, J = np.triu_indices(n, k=1)
    I, J = I.astype(np.int64), J.astype(np.int64)
    if math.isinf(a):
        diameter, x, xp, _ = pairwise.max_log_ratio(matrix, I, J)
    else:
        diameter, x, xp = pairwise.max_divergence(matrix, I, J, a)
    if a == 1.0:
        shannon = capacity(matrix, tol=tol, max_iter=budget)
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
        upper - lower, tol, note=note, open_status=Status.INACCURATE
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
    """``D_α(P_XY ‖ P_X P_Y)`` for one prior (the article's α-information)."""
    q = p @ matrix
    joint = (p[:, None] * matrix).ravel()
    product = (p[:, None] * q[None, :]).ravel()
    return float(divergence.renyi(joint, product, a))


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
    W: Any, /, alphas: Any, *, tol: float = 1e-9, max_iter: int | None = None, unit: str = "nats"
) -> RenyiProfile:
    """The α-capacity profile ``α ↦ C_α`` (non-decreasing), warm-started along the grid.

    Parameters
    ----------
    W : array_like, shape (n_inputs, n_outputs)
    alphas : array_like of α ∈ [0, ∞]
        Solved in increasing order, each from the previous optimal prior.
    tol, max_iter, unit
        As for :func:`renyi_capacity`.

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
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    K, n = grid.size, matrix.shape[0]
    lower, upper, diameter = np.zeros(K), np.zeros(K), np.zeros(K)
    priors = np.zeros((K, n))
    iterations = np.zeros(K, dtype=np.int64)
    status: list[Status] = [Status.CONVERGED] * K
    I, J = np.triu_indices(n, k=1)
    I, J = I.astype(np.int64), J.astype(np.int64)
    reduction = reduce.reduce_channel(matrix)
    warm: FloatArray | None = None
    for k in np.argsort(grid, kind="stable"):
        a = float(grid[k])
        if math.isinf(a):
            lower[k] = upper[k] = math.log(float(np.sum(np.max(matrix, axis=0))))
            priors[k] = np.full(n, 1.0 / n)
        elif a == 0.0:
            lower[k], upper[k], priors[k] = _certify.radius_zero(matrix)
        else:
            sol = blahut.solve(
                reduction.matrix[None],
                tol=tolerance,
                max_iter=budget,
                initial=warm,
                model=_model(a),
            )
            warm = sol.prior
            lower[k], upper[k], priors[k] = _certify.bracket(
                matrix, sol.prior[0], sol.upper_prior[0], model=_model(a), reduction=reduction
            )
            iterations[k] = int(sol.iterations[0])
        status[k] = Status.CONVERGED if upper[k] - lower[k] <= tolerance else Status.MAX_ITER
        if math.isinf(a):
            diameter[k] = pairwise.max_log_ratio(matrix, I, J)[0] if len(I) else 0.0
        else:
            diameter[k] = pairwise.max_divergence(matrix, I, J, a)[0] if len(I) else 0.0
    status_array, message = _certify.conclude_many(
        status, tolerance, what="orders", note=f"budget {budget} iterations per order"
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
        method="ba (sibson)",
        unit=unit,
        message=message,
        tol=tolerance,
    )


def alpha_leakage(
    W: Any, /, alpha: float, *, prior: Any = None, tol: float = 1e-9, unit: str = "nats"
) -> CapacityResult:
    """Maximal α-leakage ``L_α^max(X → Y)`` (Liao, Kosut, Sankar, Calmon 2019), α ∈ [1, ∞].

    For α > 1 it is the Sibson capacity of the channel restricted to the support of ``prior``
    (all inputs if ``prior`` is None): it depends on the prior only through its support. At
    α = 1 it *jumps* to the mutual information ``I(X;Y)`` at the given ``prior`` (which is then
    required): the limit α → 1⁺ is the Shannon capacity, not I(X;Y). At α = ∞ it is the maximal
    leakage ``log Σ_y max_x W_xy``.

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
    res = renyi_capacity(matrix[rows], a, tol=tolerance, unit=unit)
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
