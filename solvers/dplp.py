r"""ε-DP mechanisms of least expected loss, as one linear program re-solved across ε.

For a cost ``c[x, y] = p_x·ℓ(x, y)`` (prior times loss) and the neighbour pairs of the inputs,

.. math:: \min_W \sum_{x,y} c_{xy} W_{xy} \quad\text{s.t.}\quad \sum_y W_{xy} = 1,\quad
          W \ge 0,\quad W_{xy} \le e^{\varepsilon} W_{x'y}
          \ \ \text{for every ordered neighbour pair } (x, x') \text{ and output } y.

This module builds the problem once (the sparse pattern of the ratio constraints, or a cvxpy
problem in which ``t = e^ε`` is a :class:`cvxpy.Parameter`) and re-solves it for any
``0 < ε < ∞`` (:class:`MechanismLP`). It returns the solver's raw mechanism, its multipliers and
an :class:`~dpcap.solvers.status.EngineStatus`; the query layer (``dpcap.tradeoffs._mechanism_lp``)
certifies both with the array routines here:

* :func:`lagrangian_bound` — a rigorous lower bound on the optimum from *any* multipliers
  ``μ ≥ 0`` of the ratio constraints (weak duality with the simplex constraints kept);
* :func:`lift` — the smallest entrywise increase of a matrix that satisfies every ratio
  constraint (a max-plus closure over the neighbour graph);
* :func:`mixing_weight` — the least weight ``λ`` with which mixing a 0-DP mechanism (every row
  equal to ``u``) restores every ratio constraint, in closed form.

Two structural facts are used throughout. For ``t > 1`` the ratio constraints of one pair,
``w_x ≤ t w_x'`` and ``w_x' ≤ t w_x``, imply ``w_x, w_x' ≥ 0``: so from ε = 0.01 up
(:data:`BOUND_FREE_EPS`) the conic backends drop the bounds ``W ≥ 0`` on every row that has a
neighbour (a third fewer cone rows, and measured more accurate); below, the bounded model is
compiled instead, once. A row with no neighbour is unconstrained by privacy: its optimum is a
point mass at ``argmin_y c[x, y]``, set here in closed form.

Backends (:data:`SOLVERS`, that is :data:`dpcap.solvers.status.LP_SOLVERS`, in preference
order) and why the default is Clarabel — measured on ``E|x − y|`` over ``{0..127}`` with line
neighbours and a uniform prior (cvxpy 1.9.3, Clarabel 0.11.1, ECOS 2.0, SciPy 1.17's HiGHS),
through :func:`dpcap.optimal_mechanism` with this
module's settings: wall time of the whole call, and the certified gap (repaired mechanism's loss
minus :func:`lagrangian_bound`):

=========  ===============  ================  ================  ===========================
backend    ε = 0.3          ε = 1             ε = 3             settings
=========  ===============  ================  ================  ===========================
CLARABEL   0.49 s, 3e-8     0.29 s, 7e-10     0.20 s, 2e-11     tol 1e-11, no ``W ≥ 0`` rows
HIGHS      3.9 s, 3e-7      0.79 s, 2e-8      0.21 s, 3e-11     feasibility tol 1e-10
ECOS       0.61 s, 1e-6     0.58 s, 5e-9      0.14 s, 3e-10     tol 1e-10, no ``W ≥ 0`` rows
=========  ===============  ================  ================  ===========================

At ε = 1 the repaired Clarabel mechanism is 1.7e-10 above the optimum, HiGHS's 6e-11 and
ECOS's 1.9e-9. HiGHS's dual simplex needs thousands of iterations (33 s at ε = 0.3 on 256
inputs) and its multipliers certify only ``n × 1e-10``; with HiGHS's default tolerances (1e-7)
its raw mechanism is 9e-7 *below* the optimum (infeasible) and still 7e-8 above it once
repaired. ECOS at its default tolerance (1e-8) takes 0.17 s at ε = 1 but ends 3e-8 above the
optimum once repaired (2e-6 at ε = 0.3). SCS (first-order) needs 10 s and more for 1e-9 on 128
inputs: it is offered, never chosen.
"""

from __future__ import annotations

import importlib
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .metric_pairs import factor_down, factor_up
from .pairwise import chunks
from .status import LP_SOLVERS, EngineStatus, canonical, cvxpy_iterations, from_cvxpy, from_linprog

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "BOUND_FREE_EPS",
    "DEFAULT_SOLVER",
    "SOLVERS",
    "LPSolution",
    "MechanismLP",
    "lagrangian_bound",
    "lift",
    "mixing_weight",
    "ordered_pairs",
]

#: The backends :class:`MechanismLP` drives, in preference order (names: :mod:`.status`).
SOLVERS: tuple[str, ...] = LP_SOLVERS
#: The backend used when none is named: the fastest accurate one on the benchmark.
DEFAULT_SOLVER: str = LP_SOLVERS[0]

#: Each conic backend's options. Clarabel at 1e-11 usually stops "almost solved" (its reduced
#: tolerances) after 20–50 iterations, with primal residuals of 1e-11 that :func:`lift` repairs
#: for 1e-10 to 1e-9 of loss; at 1e-10 it stops earlier with 4e-9. ECOS at 1e-10 takes 3× its
#: default time for 3e-9 and stops "optimal_inaccurate"; SCS is capped at 1e-9.
_CONIC_OPTIONS: dict[str, dict[str, float | int]] = {
    "CLARABEL": {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11},
    "ECOS": {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 100_000},
}

#: Smallest ε at which the conic backends leave out the bounds ``W ≥ 0`` (implied by the ratio
#: rows for ``t > 1``): measured 20–25% faster and as accurate from ε = 0.01 up, but with
#: ``t = 1 + 1e-6`` Clarabel stops "optimal_inaccurate" 4e-3 (8 inputs) to 2e-2 (64 inputs)
#: below the optimum with entries down to −1e-3, where the bounded model is exact to 1e-10.
BOUND_FREE_EPS = 1e-2

#: HiGHS's primal and dual feasibility tolerances: its smallest accepted value.
_HIGHS_OPTIONS: dict[str, float | bool] = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
    "disp": False,
}


#: The unit roundoff of float64.
_U = 2.0**-53


@dataclass(frozen=True)
class LPSolution:
    """Raw output of :meth:`MechanismLP.solve`: the solver's word, to be certified.

    Attributes
    ----------
    mechanism : (n, k) float64 array
        The solver's ``W``, as returned: entries may be slightly negative, rows may miss 1 by
        the solver's feasibility tolerance, and ratio constraints may fail on tiny entries.
        Finite; rows with no neighbour are exact point masses.
    multipliers : (2m, k) float64 array
        The solver's multipliers of ``W[a] − t·W[b] ≤ 0`` for the ordered pairs
        ``(a, b) = ordered_pairs(first, second)``; zeros where the solver gave none. Meant for
        :func:`lagrangian_bound`, which accepts any values (negative ones are clipped).
    objective : float
        The solver's reported optimum (NaN if none).
    residual : float
        The raw mechanism's largest primal violation: of a row sum (``|Σ_y W_xy − 1|``), of a
        bound (``−W_xy``) or of a ratio (``W[a, y] − e^ε W[b, y]``); NaN if there is no matrix.
    status : EngineStatus
        ``OPTIMAL``, ``INACCURATE``, ``INFEASIBLE`` or ``FAILED``.
    solver : str
    iterations : int
        The backend's own count (HiGHS's ``nit``, cvxpy's ``num_iters``); 0 if none ran.
    solve_time : float
        Wall-clock seconds of the solve (cvxpy's compilation included on the first solve).
    message : str
    """

    mechanism: FloatArray
    multipliers: FloatArray
    objective: float
    residual: float
    status: EngineStatus
    solver: str
    iterations: int
    solve_time: float
    message: str


def ordered_pairs(first: IntArray, second: IntArray) -> tuple[IntArray, IntArray]:
    """Both orders of the unordered pairs: ``a = (first, second)``, ``b = (second, first)``."""
    a = np.concatenate([first, second]).astype(np.int64)
    b = np.concatenate([second, first]).astype(np.int64)
    return a, b


class MechanismLP:
    """The least-loss ε-DP mechanism LP, built once and re-solved for any ``0 < ε < ∞``.

    Parameters
    ----------
    cost : (n, k) float64 array
        ``c[x, y] = p_x ℓ(x, y)``, finite.
    first, second : (m,) int arrays
        The unordered neighbour pairs of rows (``first[i] != second[i]``); both orders are
        constrained.
    solver : {"CLARABEL", "HIGHS", "ECOS", "SCS"}
        The backend (:data:`SOLVERS`, case-insensitive). The conic ones go through cvxpy with
        ``t = e^ε`` a parameter, so the problem is compiled on the first solve only; HiGHS is called
        through ``scipy.optimize.linprog`` with the sparse pattern built here once.
    scale : (m,) float64 array, optional
        Positive finite distances of the pairs: the factor of pair ``e`` is ``e^{ε·scale[e]}``
        (metric privacy, :mod:`.metric_pairs`); default 1 for every pair.

    Raises
    ------
    ValueError
        If ``solver`` is unknown, ``cost`` is not a finite 2-D array or a pair is out of range
        or joins a row to itself.

    Examples
    --------
    Two inputs, both outputs cost 1 when wrong: at ε the best mechanism is randomised response
    with ``P(correct) = e^ε/(1 + e^ε)``.

    >>> import math
    >>> import numpy as np
    >>> lp = MechanismLP(0.5 * (1 - np.eye(2)), np.array([0]), np.array([1]), solver="HIGHS")
    >>> sol = lp.solve(1.0)
    >>> sol.status.value, round(sol.objective, 12) == round(1 / (1 + math.e), 12)
    ('optimal', True)
    """

    def __init__(
        self,
        cost: FloatArray,
        first: IntArray,
        second: IntArray,
        *,
        solver: str,
        scale: FloatArray | None = None,
    ) -> None:
        name = canonical(solver, SOLVERS)
        if name is None:
            raise ValueError(f"solver must be one of {', '.join(SOLVERS)}; got solver={solver!r}")
        cost = np.asarray(cost, dtype=np.float64)
        if cost.ndim != 2 or cost.size == 0 or not np.isfinite(cost).all():
            raise ValueError(f"cost must be a finite non-empty 2-D array; got shape {cost.shape}")
        first = np.asarray(first, dtype=np.int64)
        second = np.asarray(second, dtype=np.int64)
        n = cost.shape[0]
        if first.shape != second.shape or first.ndim != 1:
            raise ValueError("first and second must be 1-D arrays of the same length")
        if first.size and (
            min(first.min(), second.min()) < 0
            or max(first.max(), second.max()) >= n
            or (first == second).any()
        ):
            raise ValueError(f"pairs must join two different rows among {n}")
        self.solver = name
        self.cost = cost
        self.first, self.second = first, second
        self._a, self._b = ordered_pairs(first, second)
        self.scale = None if scale is None else np.concatenate([scale, scale]).astype(np.float64)
        if self.scale is not None:  # the distinct distances, and each ordered pair's
            self._levels, self._group = np.unique(self.scale, return_inverse=True)
        linked = np.zeros(n, dtype=bool)
        linked[first] = linked[second] = True
        #: Rows constrained by privacy (in some pair) and the others, set in closed form.
        self.rows = np.flatnonzero(linked)
        local = np.full(n, -1, dtype=np.int64)
        local[self.rows] = np.arange(self.rows.size)
        self._local_a, self._local_b = local[self._a], local[self._b]
        self._backends: dict[bool, _Highs | _Conic] = {}
        self._free = np.flatnonzero(~linked)
        self._free_best = np.argmin(cost[self._free], axis=1) if self._free.size else None

    def solve(self, eps: float) -> LPSolution:
        """Solve at ``0 < ε < ∞`` (ε = 0 and ε = ∞ have closed forms in the query layer).

        Raises
        ------
        ValueError
            If ``eps`` is not a finite positive number.
        """
        if not (isinstance(eps, (int, float)) and 0.0 < float(eps) < math.inf):
            raise ValueError(f"eps must be a finite positive number; got eps={eps!r}")
        n, k = self.cost.shape
        W = np.zeros((n, k))
        mu = np.zeros((self._a.size, k))
        if self._free.size:
            assert self._free_best is not None
            W[self._free, self._free_best] = 1.0
        objective = (
            float(np.sum(self.cost[self._free, self._free_best])) if self._free.size else 0.0
        )
        if self.rows.size == 0:
            return LPSolution(
                W, mu, objective, 0.0, EngineStatus.OPTIMAL, self.solver, 0, 0.0, "no neighbours"
            )
        bounded = self.solver == "HIGHS" or float(eps) < BOUND_FREE_EPS
        backend = self._backends.get(bounded)
        if backend is None:
            sub = self.cost[self.rows]
            if self.solver == "HIGHS":
                backend = _Highs(sub, self._local_a, self._local_b)
            else:
                group = None if self.scale is None else self._group
                backend = _Conic(sub, self._local_a, self._local_b, self.solver, bounded, group)
            self._backends[bounded] = backend
        t: Any = math.exp(float(eps)) if self.scale is None else np.exp(float(eps) * self._levels)
        if np.min(t) <= 1.0:  # ε·d below 1.1e-16: the ratio rows would not imply W ≥ 0
            failure = f"e^eps rounds to 1 at eps={eps!r}"
            return LPSolution(
                W, mu, math.nan, math.nan, EngineStatus.FAILED, self.solver, 0, 0.0, failure
            )
        start = time.perf_counter()
        part = backend.solve(
            t[self._group] if self.scale is not None and self.solver == "HIGHS" else t
        )
        elapsed = time.perf_counter() - start
        if part.mechanism is None:
            W[self.rows] = 1.0 / k
            status = EngineStatus.FAILED if part.status is EngineStatus.OPTIMAL else part.status
            return LPSolution(
                W,
                mu,
                math.nan,
                math.nan,
                status,
                self.solver,
                part.iterations,
                elapsed,
                part.message,
            )
        W[self.rows] = part.mechanism
        if part.multipliers is not None:
            mu[:] = part.multipliers
        return LPSolution(
            W,
            mu,
            objective + part.objective,
            self._residual(W, float(eps)),
            part.status,
            self.solver,
            part.iterations,
            elapsed,
            part.message,
        )

    def _residual(self, W: FloatArray, eps: float) -> float:
        scale = np.ones(self._a.size) if self.scale is None else self.scale
        t = np.exp(eps * scale)[:, None]
        worst = max(float(np.max(np.abs(W.sum(axis=1) - 1.0))), float(np.max(-W)), 0.0)
        for s in chunks(self._a.size, W.shape[1]):
            worst = max(worst, float(np.max(W[self._a[s]] - t[s] * W[self._b[s]], initial=0.0)))
        return worst


@dataclass(frozen=True)
class _Part:
    """A backend's answer: an :class:`LPSolution`'s fields before the free rows are added."""

    mechanism: FloatArray | None
    multipliers: FloatArray | None
    objective: float
    status: EngineStatus
    iterations: int
    message: str


class _Highs:
    """HiGHS through ``scipy.optimize.linprog``; each ratio row has two entries, ``1`` and ``−t``.

    The CSR matrix is built once with its ``−t`` entries at the odd positions of ``data``; a new
    ε rewrites those in place.
    """

    def __init__(self, cost: FloatArray, a: IntArray, b: IntArray) -> None:
        n, k = cost.shape
        m = a.size
        cols = np.arange(k)
        pos = (a[:, None] * k + cols).ravel()
        neg = (b[:, None] * k + cols).ravel()
        indices = np.empty(2 * m * k, dtype=np.int64)
        indices[0::2], indices[1::2] = pos, neg
        data = np.ones(2 * m * k)
        self._A = sp.csr_matrix(
            (data, indices, np.arange(0, 2 * m * k + 1, 2)), shape=(m * k, n * k)
        )
        self._Aeq = sp.csr_matrix(
            (np.ones(n * k), np.arange(n * k), np.arange(0, n * k + 1, k)), shape=(n, n * k)
        )
        self._c = cost.ravel()
        self._shape = (n, k)
        self._m = m

    def solve(self, t: Any) -> _Part:
        n, k = self._shape
        self._A.data[1::2] = -np.repeat(np.broadcast_to(t, (self._m,)), k)
        # Imported here (scipy.optimize is slow to import); SciPy's stubs type A_ub as dense and
        # options as a TypedDict, both fine at runtime.
        solve: Any = importlib.import_module("scipy.optimize").linprog
        res = solve(
            self._c,
            A_ub=self._A,
            b_ub=np.zeros(self._m * k),
            A_eq=self._Aeq,
            b_eq=np.ones(n),
            bounds=(0, None),
            method="highs",
            options=_HIGHS_OPTIONS,
        )
        status = from_linprog(res.status)
        iterations = int(getattr(res, "nit", 0) or 0)
        message = f"HiGHS: {res.message}"
        if res.x is None or not status.usable:
            return _Part(None, None, math.nan, status, iterations, message)
        marginals = getattr(getattr(res, "ineqlin", None), "marginals", None)
        mu = None if marginals is None else -np.asarray(marginals, dtype=np.float64)
        return _Part(
            np.asarray(res.x, dtype=np.float64).reshape(n, k),
            None if mu is None else mu.reshape(self._m, k),
            float(res.fun),
            status,
            iterations,
            message,
        )


class _Conic:
    """A cvxpy problem with ``t = e^ε`` a parameter: compiled once, re-solved for any ε.

    With ``bounded=False`` ``W ≥ 0`` is not stated: every row here has a neighbour, and
    ``t > 1`` implies it. Near ``t = 1`` that implication is too weak for an interior-point
    method (the bounds are then stated; see :data:`BOUND_FREE_EPS`).
    """

    def __init__(
        self, cost: FloatArray, a: IntArray, b: IntArray, name: str, bounded: bool, group: Any
    ) -> None:
        # Heavy and only partly typed: imported here only, and used as Any.
        cp: Any = importlib.import_module("cvxpy")
        n, k = cost.shape
        self._cp = cp
        self._name = name
        self._W = cp.Variable((n, k), nonneg=bounded)
        if group is None:
            self._t = cp.Parameter(pos=True, value=math.e)
            scaled = self._t * self._W[b, :]
        else:  # metric privacy: one parameter per distinct distance (a few: fast to compile)
            self._t = cp.Parameter((int(group.max()) + 1, 1), pos=True)
            pick = sp.csr_matrix((np.ones(a.size), (np.arange(a.size), group)))
            scaled = cp.multiply((pick @ self._t) @ np.ones((1, k)), self._W[b, :])
        self._ratio = self._W[a, :] <= scaled
        rows = cp.sum(self._W, axis=1) == 1
        objective = cp.Minimize(cp.sum(cp.multiply(cost, self._W)))
        self._problem = cp.Problem(objective, [self._ratio, rows])

    def solve(self, t: Any) -> _Part:
        cp = self._cp
        self._t.value = np.reshape(t, (-1, 1)) if self._t.shape else t
        try:
            with warnings.catch_warnings():
                # The status says so; the query layer certifies and decides whether to warn.
                warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
                self._problem.solve(solver=self._name, **_CONIC_OPTIONS[self._name])
        except cp.error.SolverError as err:
            return _Part(
                None, None, math.nan, EngineStatus.FAILED, 0, f"{self._name} failed: {err}"
            )
        raw_status = str(self._problem.status)
        status = from_cvxpy(raw_status)
        iterations = cvxpy_iterations(self._problem)
        message = f"{self._name}: {raw_status}"
        value: Any = self._W.value
        if value is None or not status.usable:
            return _Part(None, None, math.nan, status, iterations, message)
        dual: Any = self._ratio.dual_value
        mu = None if dual is None else np.asarray(dual, dtype=np.float64)
        objective: Any = self._problem.value
        return _Part(
            np.asarray(value, dtype=np.float64),
            None if mu is None or not np.isfinite(mu).all() else mu,
            float(objective) if objective is not None else math.nan,
            status,
            iterations,
            message,
        )


def _upper_exp(eps: float) -> float:
    """A float ``t ≥ e^ε``: ``exp`` is faithful (within one ulp), so step one ulp up."""
    return float(np.nextafter(math.exp(eps), math.inf))


def _lower_exp(eps: float) -> float:
    """A float ``t ≤ e^ε`` (one ulp below ``exp``; 1 at ε = 0)."""
    return 1.0 if eps == 0.0 else float(np.nextafter(math.exp(eps), 0.0))


def lagrangian_bound(
    cost: FloatArray,
    first: IntArray,
    second: IntArray,
    eps: float,
    multipliers: FloatArray,
    scale: FloatArray | None = None,
) -> float:
    r"""A rigorous lower bound on the LP optimum at ε from any multipliers of the ratio rows.

    Parameters
    ----------
    cost : (n, k) float64 array
    first, second : (m,) int arrays, the unordered pairs
    eps : float
        ``0 ≤ ε < ∞``.
    multipliers : (2m, k) float64 array
        Any numbers, aligned with :func:`ordered_pairs`; negative and non-finite entries are
        replaced by 0.
    scale : (m,) float64 array, optional
        The pairs' distances: factors ``e^{ε·scale}`` (:func:`.metric_pairs.factor_up`).

    Returns
    -------
    float
        ``L(μ) − (rounding margin)``, below the optimum of the LP at ε.

    Notes
    -----
    For ``μ ≥ 0`` and every feasible ``W`` (so ``W[a] − t W[b] ≤ 0`` for every ``t ≥ e^ε``),

    .. math:: \sum c W \;\ge\; \sum c W + \sum_{e,y} \mu_{ey}(W_{a_e y} - t W_{b_e y})
              = \sum_{x,y} R_{xy} W_{xy} \;\ge\; \sum_x \min_y R_{xy} =: L(\mu),

    with ``R = c + Aᵀμ`` the reduced costs, because each row of ``W`` is a probability vector.
    This is weak duality with the simplex constraints kept (the row duals ``ν`` cancel), so no
    dual feasibility is assumed and no tolerance is involved: a solver's slightly infeasible
    duals give a slightly lower, still valid, bound. ``t`` is ``e^ε`` rounded *up*, which keeps
    the inequality above for the exact ``e^ε``. Each ``R[x, y]`` sums ``d + 2`` rounded terms
    (``d`` the row's number of pair appearances), so its error is below
    ``(d + 2)·2u·S[x, y]`` with ``S`` the same sum in absolute values and ``u = 2⁻⁵³``; the outer
    sum is exact (``math.fsum``) up to its final rounding. Both are subtracted.

    References
    ----------
    .. [1] D. Bertsimas and J. N. Tsitsiklis, *Introduction to Linear Optimization*, §4.2 and
       §11.4 (Lagrangian relaxation: for any μ ≥ 0 its value bounds the primal optimum).
    """
    a, b = ordered_pairs(first, second)
    mu = np.asarray(multipliers, dtype=np.float64)
    mu = np.where(np.isfinite(mu) & (mu > 0), mu, 0.0)
    t = (
        _upper_exp(eps)
        if scale is None
        else factor_up(eps, np.concatenate([scale, scale]))[:, None]
    )
    R = np.array(cost, dtype=np.float64)
    S = np.abs(R)
    np.add.at(R, a, mu)
    np.add.at(R, b, -t * mu)
    np.add.at(S, a, mu)
    np.add.at(S, b, t * mu)
    degree = np.bincount(np.concatenate([a, b]), minlength=R.shape[0])
    value = math.fsum(R.min(axis=1).tolist())
    margin = float(np.sum((degree + 2) * 2 * _U * S.max(axis=1))) + 2 * _U * abs(value)
    return value - margin


def lift(
    W: FloatArray, first: IntArray, second: IntArray, eps: float, scale: FloatArray | None = None
) -> FloatArray:
    r"""The least ``V ≥ W`` (entrywise) with ``V[x, y] ≤ e^ε V[x', y]`` for every neighbour pair.

    Parameters
    ----------
    W : (n, k) float64 array
        Non-negative and finite.
    first, second : (m,) int arrays, the unordered pairs
    eps : float
        ``ε ≥ 0``.
    scale : (m,) float64 array, optional
        The pairs' distances (edge lengths ``ε·scale``); default 1.

    Returns
    -------
    (n, k) float64 array
        ``V[x', y] = max_x W[x, y]·e^{−ε·dist(x, x')}``, ``dist`` the path length in the
        neighbour graph (the max runs over the connected component of ``x'``).

    Notes
    -----
    ``V ≥ W`` satisfies every constraint: along an edge, ``log V`` changes by at most ε (it is a
    max of functions that do). It is the least such matrix: any feasible ``V' ≥ W`` has
    ``V'[x'] ≥ V'[x] e^{−ε dist} ≥ W[x] e^{−ε dist}``. Computed in the log domain by synchronous
    Bellman–Ford relaxation (at most the graph's diameter of sweeps, each a ``reduceat`` over
    the pairs sorted by their target). Applied to a solver's mechanism whose zeros or tiny
    entries break the ratios, it raises only what must be raised: the added mass is about the
    violations' size (the lifted rows then need renormalising; see the query layer).
    """
    n = W.shape[0]
    targets = np.concatenate([second, first])
    sources = np.concatenate([first, second])
    if targets.size == 0:
        return np.array(W, dtype=np.float64)
    order = np.argsort(targets, kind="stable")
    targets, sources = targets[order], sources[order]
    step = eps if scale is None else (eps * np.concatenate([scale, scale])[order])[:, None]
    uniq, starts = np.unique(targets, return_index=True)
    L = np.full(W.shape, -np.inf)
    np.log(W, out=L, where=W > 0)
    for _ in range(n):
        pushed = np.maximum.reduceat(L[sources] - step, starts, axis=0)
        current = L[uniq]
        if not (pushed > current).any():
            break
        L[uniq] = np.maximum(current, pushed)
    V: FloatArray = np.exp(L)
    return V


def mixing_weight(
    W: FloatArray,
    u: FloatArray,
    first: IntArray,
    second: IntArray,
    eps: float,
    scale: FloatArray | None = None,
) -> float:
    r"""The least ``λ ∈ [0, 1]`` such that ``(1 − λ)W + λ·1uᵀ`` satisfies every ratio constraint.

    Parameters
    ----------
    W : (n, k) float64 array
        Row-stochastic.
    u : (k,) float64 array
        A probability vector: the common row of the 0-DP mechanism ``U = 1uᵀ``.
    first, second : (m,) int arrays, the unordered pairs
    eps : float
        ``ε ≥ 0``.

    Returns
    -------
    float
        ``max over violated constraints of v / (v + (t − 1) u_y)`` with ``v = W[x,y] − t W[x',y]``,
        or 0 when nothing is violated; 1 when a violated output has ``u_y = 0`` or ``ε = 0``.

    Notes
    -----
    Mixing is linear, so for one constraint with ``a = W[x, y]``, ``b = W[x', y]``:

    .. math:: (1-\lambda)a + \lambda u_y \le t\bigl((1-\lambda)b + \lambda u_y\bigr)
              \iff (1-\lambda)\,v \le \lambda (t - 1) u_y
              \iff \lambda \ge \frac{v}{v + (t-1)u_y},

    and constraints with ``v ≤ 0`` hold for every ``λ``. ``t`` is ``e^ε`` rounded *down* so that
    the returned weight is enough for the exact ``e^ε``. The result is minimal: at any smaller
    weight the constraint attaining the max is violated.
    """
    a, b = ordered_pairs(first, second)
    t = np.full((a.size, 1), _lower_exp(eps))
    if scale is not None:  # metric privacy: e^{ε·d} per pair
        t = factor_down(eps, np.concatenate([scale, scale]))[:, None]
    u = np.asarray(u, dtype=np.float64)
    best = 0.0
    for s in chunks(a.size, W.shape[1]):
        v = W[a[s]] - t[s] * W[b[s]]
        hit = v > 0
        if not hit.any():
            continue
        v_hit = v[hit]
        gap = np.broadcast_to((t[s] - 1.0) * u, v.shape)[hit]
        denominator = v_hit + gap
        best = max(best, float(np.max(v_hit / denominator)))
    return min(best, 1.0)
