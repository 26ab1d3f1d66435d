"""Shannon and Rényi (Sibson) capacities as conic programs, solved through cvxpy.

This is dpcap's *independent* capacity engine: it shares no code with Blahut–Arimoto, so the two
check each other. :func:`capacity_conic` hands Shannon capacity to an interior-point (Clarabel,
ECOS) or first-order (SCS) solver as an exponential-cone program; :func:`renyi_capacity_conic`
hands Sibson's α-capacity to Clarabel or SCS as a power-cone program. The returned prior is a raw
candidate, and the query layer recomputes the certificate from it (``I(p) ≤ C ≤ max_x D(W_x ‖ pW)``,
and its Rényi-radius analogue; ``docs/mathematics.rst`` §1, §4): a solver's "optimal" is
never taken as proof.

cvxpy is imported inside the solving functions, never at module import (``import dpcap`` must not
import cvxpy).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import entr

from .status import CONIC_SOLVERS, EngineStatus, canonical, cvxpy_iterations, from_cvxpy
from .status import RENYI_SOLVERS as _RENYI

FloatArray = NDArray[np.float64]

__all__ = ["RENYI_SOLVERS", "SOLVERS", "ConicSolution", "capacity_conic", "renyi_capacity_conic"]

#: The conic solvers this engine drives (:mod:`.status` holds the names, in preference order).
SOLVERS: tuple[str, ...] = CONIC_SOLVERS

#: The solvers of :data:`SOLVERS` that accept power cones (:func:`renyi_capacity_conic`).
RENYI_SOLVERS: tuple[str, ...] = _RENYI

#: Below this order :func:`renyi_capacity_conic` solves the radius-centre form of the α-capacity
#: (power cones of exponent ``1 − α``) instead of the prior form (exponent ``1/α``).
CENTRE_ORDER = 0.5

#: Tightest tolerance asked of each solver: the smallest setting at which it returned "optimal" on
#: every benchmark channel (BSC, BEC, Z, near-duplicate rows, 64-ary RR, truncated geometric on
#: 100 points, Dirichlet(1) up to 256 × 256; measured with cvxpy 1.9, Clarabel 0.11, ECOS 2.0,
#: SCS 3.3). Clarabel stalls below 1e-9 on the 256 × 256 channel ("optimal_inaccurate" with a
#: *worse* prior than at 1e-9); ECOS reached 1e-12 everywhere. SCS is a first-order (ADMM) method
#: whose iteration count grows like 1/eps in the worst case; on these channels it reached 1e-12 in
#: under 1,000 iterations, but 1e-9 is kept as its practical floor so that an ill-conditioned
#: channel does not run into SCS's 100,000-iteration cap (minutes on large inputs). The same
#: floors hold for the power-cone (Rényi) program: at 1e-12 Clarabel stops "optimal_inaccurate"
#: on BSC, Z and 16 × 16 Dirichlet channels, and SCS once needed 0.6 s for a 16 × 16 channel.
_FLOOR: dict[str, float] = {"CLARABEL": 1e-9, "ECOS": 1e-12, "SCS": 1e-9}


@dataclass(frozen=True)
class ConicSolution:
    """Raw output of :func:`capacity_conic` and :func:`renyi_capacity_conic`.

    Attributes
    ----------
    prior : (n,) float64 array
        The solver's input distribution, clipped to ``>= 0`` and renormalised (interior-point
        iterates may carry tiny negative entries). Uniform when the solver returned no point.
    objective : float
        The solver's reported optimal value converted to the capacity in nats (``I(p)`` for
        Shannon, ``I_α^S(p)`` for Rényi; NaN when it returned none). Not a certificate.
    status : EngineStatus
        ``OPTIMAL``, ``INACCURATE``, ``INFEASIBLE`` or ``FAILED`` (mapped from cvxpy's status by
        :func:`.status.from_cvxpy`).
    solver : str
        The solver used (``"CLARABEL"``, ``"ECOS"`` or ``"SCS"``).
    solve_time : float
        Wall-clock seconds for problem construction, cvxpy's canonicalisation and the solve (not
        cvxpy's first import).
    message : str
        cvxpy's status string, the tolerance asked for, or the solver's error message.
    iterations : int
        The backend's iterations as cvxpy reports them (``solver_stats.num_iters``); 0 when it
        reports none or no solve ran.
    output : (k,) float64 array or None
        The radius centre ``Q`` (an output law, clipped and renormalised) where the program has
        one as a variable (:func:`renyi_capacity_conic` below :data:`CENTRE_ORDER`), else None.
    multiplier : float or None
        The solver's multiplier of the cost constraint (:func:`capacity_conic` with ``cost``),
        else None. Not a certificate: the query layer evaluates the dual bound at it.
    """

    prior: FloatArray
    objective: float
    status: EngineStatus
    solver: str
    solve_time: float
    message: str
    iterations: int
    output: FloatArray | None = None
    multiplier: float | None = None


def capacity_conic(
    W: FloatArray,
    *,
    solver: str = "CLARABEL",
    tol: float = 1e-9,
    max_iter: int | None = None,
    cost: FloatArray | None = None,
    budget: float | None = None,
) -> ConicSolution:
    r"""Shannon capacity of a channel by exponential-cone programming.

    Parameters
    ----------
    W : (n, k) float64 array
        Row-stochastic channel ``W[x, y] = P(Y=y | X=x)``, assumed valid (the query layer checks).
    solver : {"CLARABEL", "ECOS", "SCS"}
        The conic solver cvxpy hands the problem to.
    tol : float
        The solver's absolute and relative duality-gap and feasibility tolerance, positive. It is
        raised to each solver's practical floor (1e-9 for Clarabel and SCS, 1e-12 for ECOS). It
        bounds the error of the *objective*, not of the prior: see Notes.
    max_iter : int, optional
        The solver's iteration cap (Clarabel ``max_iter``, ECOS and SCS ``max_iters``); ``None``
        keeps each solver's default (200, 100 and 100,000). A capped run that returns a point is
        reported ``"inaccurate"``.
    cost : (n,) float64 array, optional
        Input costs ``c_x``: with ``budget``, the linear constraint ``Σ_x p_x c_x ≤ budget`` is
        added (the capacity–cost function, ``docs/mathematics.rst`` §12), and the solver's
        multiplier of it is returned in :attr:`ConicSolution.multiplier`.
    budget : float, optional
        The budget of the cost constraint (with ``cost``).

    Returns
    -------
    ConicSolution
        Prior, reported objective (nats), status, solver, wall time and message. Solver failures
        (``cvxpy.error.SolverError``) are reported with status ``"failed"``, not raised.

    Raises
    ------
    ValueError
        If ``solver`` is not one of :data:`SOLVERS`, ``tol`` is not a positive finite number,
        ``max_iter`` is not a positive integer, ``W`` is not a non-empty 2-D array, or only one
        of ``cost`` and ``budget`` is given.

    Notes
    -----
    With ``q = Wᵀp`` the output law and ``H(W_x) = −Σ_y W_xy log W_xy`` the row entropies,

    .. math:: C = \max_{p \in \Delta} I(p, W), \qquad
              I(p, W) = H(W^\top p) - \sum_x p_x H(W_x)
                      = \sum_y \operatorname{entr}(q_y) - h^\top p,

    with ``entr(t) = −t log t`` concave and exponential-cone representable, constraints
    ``p ≥ 0``, ``Σ_x p_x = 1``. All-zero columns are dropped first: they add ``entr(0) = 0`` and
    do not change the capacity. The stopping rule is the solver's own (primal–dual gap and
    residuals below ``tol``): the returned objective is the solver's word only, and the query layer
    certifies the prior with ``I(p) ≤ C ≤ max_x D(W_x ‖ pW)``.

    ``I`` is flat at its maximum, so an objective within ``tol`` of ``C`` only pins the prior to
    about ``√tol``, and the upper end of the bracket, ``max_x D_x(p)``, moves linearly with the
    prior. Measured at ``tol = 1e-9`` on closed-form channels and the benchmark suite: all three
    objectives are within 3e-10 of ``C``, but the bracket certified by the prior is 2e-10 to 1e-5
    wide for Clarabel, 3e-13 to 2e-8 for ECOS and 2e-15 to 1e-10 for SCS.

    References
    ----------
    .. [1] T. M. Cover and J. A. Thomas, *Elements of Information Theory*, 2nd ed., eq. (7.1) and
       §10.8 (capacity as a concave maximisation).
    .. [2] S. Boyd and L. Vandenberghe, *Convex Optimization*, Example 4.57 (channel capacity).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> sol = capacity_conic(W)
    >>> sol.status.value, round(sol.objective, 6), np.round(sol.prior, 3).tolist()
    ('optimal', 0.368064, [0.5, 0.5])
    """
    name = _check_solver(solver, SOLVERS)
    _check_options(tol, max_iter)
    W = _check_channel(W)
    if (cost is None) != (budget is None):
        raise ValueError(f"cost and budget go together; got cost={cost!r}, budget={budget!r}")

    # Heavy, and only partly typed (untyped before 1.6): imported here only, and used as Any.
    cp: Any = importlib.import_module("cvxpy")

    start = time.perf_counter()  # after the import: a one-off cost, not the solve's
    n = W.shape[0]
    W = W[:, np.any(W > 0, axis=0)]
    h_rows = entr(W).sum(axis=1)
    p = cp.Variable(n, nonneg=True)
    objective = cp.Maximize(cp.sum(cp.entr(W.T @ p)) - h_rows @ p)
    if cost is None:
        problem = cp.Problem(objective, [cp.sum(p) == 1])
        return _run(cp, problem, p, name, tol, max_iter, start, float)
    limit = np.asarray(cost, dtype=np.float64) @ p <= float(budget)  # type: ignore[arg-type]
    problem = cp.Problem(objective, [cp.sum(p) == 1, limit])
    solution = _run(cp, problem, p, name, tol, max_iter, start, float)
    dual: Any = limit.dual_value
    if not solution.status.usable or dual is None:
        return solution
    return dataclasses.replace(solution, multiplier=max(float(np.ravel(dual)[0]), 0.0))


def renyi_capacity_conic(
    W: FloatArray,
    alpha: float,
    *,
    solver: str = "CLARABEL",
    tol: float = 1e-9,
    max_iter: int | None = None,
) -> ConicSolution:
    r"""Sibson's α-capacity (the Rényi radius) of a channel by power-cone programming.

    Parameters
    ----------
    W : (n, k) float64 array
        Row-stochastic channel ``W[x, y] = P(Y=y | X=x)``, assumed valid (the query layer checks).
    alpha : float
        The Rényi order, ``0 < α < ∞``, ``α ≠ 1`` (α = 1 is Shannon: :func:`capacity_conic`;
        α = ∞ is maximal leakage, a closed form).
    solver : {"CLARABEL", "SCS"}
        The conic solver cvxpy hands the problem to; it must accept power cones, which ECOS
        does not (:data:`RENYI_SOLVERS`).
    tol : float
        The solver's absolute and relative duality-gap and feasibility tolerance, positive, raised
        to the solver's practical floor (1e-9 for both). It bounds the error of the power-sum
        objective, not of ``C_α`` or of the prior: see Notes.
    max_iter : int, optional
        The solver's iteration cap (Clarabel ``max_iter``, SCS ``max_iters``); ``None`` keeps each
        solver's default (200 and 100,000). A capped run that returns a point is reported
        ``"inaccurate"``.

    Returns
    -------
    ConicSolution
        Prior, reported objective converted to ``C_α`` (nats), status, solver, wall time and
        message. Solver failures (``cvxpy.error.SolverError``) are reported with status
        ``"failed"``, not raised.

    Raises
    ------
    ValueError
        If ``solver`` is not one of :data:`RENYI_SOLVERS` (ECOS included, with its own message),
        ``alpha`` is not a number in ``(0, 1) ∪ (1, ∞)``, ``tol`` is not a positive finite
        number, ``max_iter`` is not a positive integer, or ``W`` is not a non-empty 2-D array.

    Notes
    -----
    Sibson's α-information and the α-capacity are

    .. math:: I_\alpha^S(p, W) = \frac{\alpha}{\alpha-1}
              \log \sum_y \Bigl(\sum_x p_x W_{xy}^\alpha\Bigr)^{1/\alpha}, \qquad
              C_\alpha = \max_{p \in \Delta} I_\alpha^S(p, W)
                       = \min_Q \max_x D_\alpha(W_x \,\|\, Q).

    ``log`` is increasing and ``α/(α−1)`` is positive for α > 1 and negative for α < 1, so with
    ``c_y = max_x W_xy`` and ``B = (W / c)^α`` (elementwise, entries in ``[0, 1]``) the problem is

    .. math:: \alpha > 1:\ \max_{p \in \Delta} \sum_y c_y (B^\top p)_y^{1/\alpha}
              \ \text{(concave)}, \qquad
              \alpha < 1:\ \min_{p \in \Delta} \sum_y c_y (B^\top p)_y^{1/\alpha}
              \ \text{(convex)},

    each power ``t^{1/α}`` an exact power cone (cvxpy's ``power(·, 1/α, approx=False)``; the
    default rational SOC approximation would change the exponent). The column scaling
    ``(A^\top p)_y^{1/α} = c_y (B^\top p)_y^{1/α}`` with ``A = W^α`` is exact; without it the
    entries of ``A`` span hundreds of orders of magnitude at large α, and both solvers then
    report "optimal" or "optimal_inaccurate" points that are 0.01 to 1 nat off (measured at
    α = 10 and 50 on 64 × 64 and 256 × 256 Dirichlet(1) channels). All-zero columns are dropped
    first (they add nothing to the sum). The objective ``F`` converts to ``C_α = α/(α−1)·log F``.

    Below α = :data:`CENTRE_ORDER` the exponent ``1/α`` is large (10⁶ at α = 10⁻⁶): the terms
    ``(Bᵀp)_y^{1/α}`` of all but the largest outputs underflow or fall below the tolerance, and
    both solvers return "optimal" priors far from optimal (measured on the channel
    ``[[1, 0], [0.3, 0.7], [0, 1]]``, ``C_α = log 2``: Clarabel 0.43 and SCS 0.65 nats at
    α = 10⁻³; objective NaN at 10⁻⁶). There the program is solved in its radius-centre form

    .. math:: \max_{Q \in \Delta,\, t} t \quad \text{s.t.} \quad
              \sum_y W_{xy}^\alpha Q_y^{1-\alpha} \ge t \ \ \forall x,
              \qquad C_\alpha = -\frac{\log t^*}{1 - \alpha},

    (``Σ_y W_xy^α Q_y^{1−α} = e^{(α−1) D_α(W_x ‖ Q)}``, so this is ``min_Q max_x D_α(W_x ‖ Q)``),
    power cones of exponent ``1 − α ∈ (1/2, 1)``, well conditioned as α → 0 (at α = 0 it is the
    linear programme of :mod:`dpcap.solvers.renyi_zero`). The prior is the normalised dual
    value of the row constraints, and :attr:`ConicSolution.output` holds ``Q``.

    The stopping rule is the solver's own, on ``F``: an error ``δ`` in ``F`` is an error of about
    ``|α/(α−1)|·δ/F`` in ``C_α``, amplified as α → 1. The returned objective is the solver's word
    only; the query layer certifies the prior with
    ``I_α^S(p) ≤ C_α ≤ max_x D_α(W_x ‖ Q_p)``, ``Q_p ∝ (pW^α)^{1/α}``. As for Shannon, ``F`` is
    flat at its optimum, so the prior is pinned less tightly than the objective. Measured at
    ``tol = 1e-9`` on BSC, Z, 64-ary randomised response and Dirichlet(1) channels (16 to 256
    inputs) for α from 0.05 to 50: objectives within 1.2e-8 of ``C_α`` for both solvers, mostly
    within 1e-9 (the largest errors at α = 1.1 and on the 64 × 64 channel at α = 0.5); brackets
    certified by the prior up to 1e-4 wide for Clarabel (widest near α = 1; 3e-6 on the 64 × 64
    channel at α = 2) and up to 5e-9 for SCS. At ``tol = 1e-12`` Clarabel often stops
    "optimal_inaccurate", hence its floor.

    References
    ----------
    .. [1] R. Sibson, "Information radius", *Z. Wahrscheinlichkeitstheorie verw. Geb.* 14 (1969).
    .. [2] I. Csiszár, "Generalized cutoff rates and Rényi's information measures", *IEEE Trans.
       Inf. Theory* 41(1), 1995 (``C_α`` is the Rényi radius for all three α-informations).
    .. [3] S. Verdú, "α-mutual information", *Information Theory and Applications Workshop*, 2015.

    Examples
    --------
    Binary symmetric channel, crossover 0.1, order 2: ``C_2 = log(4·(0.81 + 0.01)/2) = log 1.64``.

    >>> import numpy as np
    >>> W = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> sol = renyi_capacity_conic(W, 2.0)
    >>> sol.status.value, round(sol.objective, 8), round(float(np.log(1.64)), 8)
    ('optimal', 0.49469624, 0.49469624)
    >>> np.round(sol.prior, 3).tolist()
    [0.5, 0.5]
    """
    if isinstance(solver, str) and solver.upper() == "ECOS":
        raise ValueError(
            f"solver={solver!r} cannot solve the Rényi capacity: it has no power cones;"
            f" use one of {', '.join(RENYI_SOLVERS)}"
        )
    name = _check_solver(solver, RENYI_SOLVERS)
    order = _check_alpha(alpha)
    _check_options(tol, max_iter)
    W = _check_channel(W)

    cp: Any = importlib.import_module("cvxpy")

    start = time.perf_counter()
    if order < CENTRE_ORDER:
        return _renyi_centre(cp, W, order, name, tol, max_iter, start)
    n = W.shape[0]
    W = W[:, np.any(W > 0, axis=0)]
    scale = W.max(axis=0)
    B = np.power(W / scale, order)  # in [0, 1]; underflow to 0 is below every other term
    p = cp.Variable(n, nonneg=True)
    power_sum = scale @ cp.power(B.T @ p, 1.0 / order, approx=False)
    sense = cp.Maximize if order > 1.0 else cp.Minimize
    problem = cp.Problem(sense(power_sum), [cp.sum(p) == 1])
    factor = order / (order - 1.0)

    def to_capacity(value: float) -> float:
        return factor * math.log(value) if value > 0 else math.nan

    return _run(cp, problem, p, name, tol, max_iter, start, to_capacity)


def _renyi_centre(
    cp: Any,
    W: FloatArray,
    order: float,
    name: str,
    tol: float,
    max_iter: int | None,
    start: float,
) -> ConicSolution:
    """The radius-centre program of :func:`renyi_capacity_conic` (``0 < α <`` CENTRE_ORDER)."""
    n, k = W.shape
    cols = np.any(W > 0, axis=0)
    V = np.power(W[:, cols], order)  # 0^α = 0: an output outside a row's support adds nothing
    Q = cp.Variable(int(cols.sum()), nonneg=True)
    t = cp.Variable()
    rows = V @ cp.power(Q, 1.0 - order, approx=False) >= t
    problem = cp.Problem(cp.Maximize(t), [rows, cp.sum(Q) == 1])

    def to_capacity(value: float) -> float:
        return -math.log(value) / (1.0 - order) if value > 0 else math.nan

    solution = _run(cp, problem, Q, name, tol, max_iter, start, to_capacity)
    if not solution.status.usable:
        return _failed(n, name, start, solution.message, solution.status, solution.iterations)
    multipliers: Any = rows.dual_value
    prior = np.clip(np.asarray(multipliers, dtype=np.float64).ravel(), 0.0, None)
    total = prior.sum()
    if multipliers is None or not np.isfinite(total) or total <= 0:
        failure = f"{name} returned no usable multipliers (sum {total!r})"
        return _failed(n, name, start, failure, iterations=solution.iterations)
    output = np.zeros(k)
    output[cols] = solution.prior  # _run returned Q, clipped and renormalised
    return ConicSolution(
        prior=prior / total,
        objective=solution.objective,
        status=solution.status,
        solver=name,
        solve_time=time.perf_counter() - start,
        message=f"{solution.message} (radius-centre form)",
        iterations=solution.iterations,
        output=output,
    )


def _check_solver(solver: object, allowed: tuple[str, ...]) -> str:
    name = canonical(solver, allowed)
    if name is None:
        raise ValueError(f"solver must be one of {', '.join(allowed)}; got solver={solver!r}")
    return name


def _check_alpha(alpha: object) -> float:
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, (int, float, np.integer, np.floating))
        or not (0.0 < float(alpha) < math.inf)
        or float(alpha) == 1.0
    ):
        raise ValueError(f"alpha must be a number in (0, 1) or (1, inf); got alpha={alpha!r}")
    return float(alpha)


def _check_options(tol: object, max_iter: object) -> None:
    if isinstance(tol, bool) or not (
        isinstance(tol, (int, float)) and math.isfinite(tol) and tol > 0
    ):
        raise ValueError(f"tol must be a positive finite number; got tol={tol!r}")
    if max_iter is not None and (
        isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1
    ):
        raise ValueError(f"max_iter must be a positive integer or None; got max_iter={max_iter!r}")


def _check_channel(W: object) -> FloatArray:
    array = np.asarray(W, dtype=np.float64)
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"W must be a non-empty 2-D array; got shape {array.shape}")
    return array


def _run(
    cp: Any,
    problem: Any,
    p: Any,
    name: str,
    tol: float,
    max_iter: int | None,
    start: float,
    convert: Callable[[float], float],
) -> ConicSolution:
    """Solve ``problem`` in ``p`` (a simplex variable), map the status, clip the prior.

    ``convert`` maps the solver's optimal value to the reported objective (nats).
    """
    n = int(p.shape[0])
    eps = max(float(tol), _FLOOR[name])
    clamped = f" (raised from {tol:g}: {name}'s floor)" if eps > tol else ""
    try:
        with warnings.catch_warnings():
            # cvxpy warns on inaccurate solutions; here the status says so, and the query layer
            # decides whether to warn (ConvergenceWarning) after recomputing the certificate.
            warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
            problem.solve(solver=name, **_options(name, eps, max_iter))
    except cp.error.SolverError as err:
        return _failed(n, name, start, f"{name} failed: {err}")
    status = from_cvxpy(problem.status)
    steps = cvxpy_iterations(problem)
    raw: Any = p.value
    value: Any = problem.value
    objective_value = math.nan if value is None else convert(float(value))
    if raw is None or not status.usable:
        return _failed(n, name, start, f"{name} returned status {problem.status!r}", status, steps)
    prior = np.clip(np.asarray(raw, dtype=np.float64), 0.0, None)
    total = prior.sum()
    if not np.isfinite(total) or total <= 0:
        failure = f"{name} returned an unusable prior (sum {total!r})"
        return _failed(n, name, start, failure, iterations=steps)
    return ConicSolution(
        prior=prior / total,
        objective=objective_value,
        status=status,
        solver=name,
        solve_time=time.perf_counter() - start,
        message=f"{name}: {problem.status} at tol={eps:g}{clamped}",
        iterations=steps,
    )


def _options(name: str, eps: float, max_iter: int | None) -> dict[str, float | int]:
    """Each solver's own names for the gap and feasibility tolerances and the iteration cap."""
    options: dict[str, float | int]
    if name == "CLARABEL":
        options = {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps}
        cap = "max_iter"
    elif name == "ECOS":
        options = {"abstol": eps, "reltol": eps, "feastol": eps}
        cap = "max_iters"
    else:
        options = {"eps_abs": eps, "eps_rel": eps}
        cap = "max_iters"
    if max_iter is not None:
        options[cap] = int(max_iter)
    return options


def _failed(
    n: int,
    name: str,
    start: float,
    message: str,
    status: EngineStatus = EngineStatus.FAILED,
    iterations: int = 0,
) -> ConicSolution:
    return ConicSolution(
        prior=np.full(n, 1.0 / n),
        objective=float("nan"),
        status=status,
        solver=name,
        solve_time=time.perf_counter() - start,
        message=message,
        iterations=iterations,
    )
