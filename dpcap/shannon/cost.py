"""Shannon capacity under an input cost (the capacity–cost function), with a certified bracket.

For costs ``c_x ≥ 0``, a budget ``P`` and a peak ``A`` (``docs/mathematics.rst`` §12)::

    C(P) = max {I(p, W) : Σ_x p_x c_x ≤ P,  p_x = 0 where c_x > A}.

The peak removes the inputs that cost more than ``A``; the budget is handled by Lagrange
duality. For every multiplier ``s ≥ 0`` and output law ``Q`` (Blahut 1972, §II)::

    C(P) ≤ s·P + max_x [D(W_x ‖ Q) − s c_x],

and every prior that meets the budget gives ``I(p, W) ≤ C(P)``. The multiplier is found by a
certified scalar search (ITP on ``P − Σ_x p_x(s) c_x``, the subgradient of the convex dual
``s ↦ sP + C_s``); priors that miss the budget are mixed with a feasible one by the least
weight that meets it exactly. Every bound is recomputed here, with its rounding bounded, from
the priors the engines return.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism
from dpcap.errors import ConvergenceWarning, ParameterError, SolverError, Status
from dpcap.function_mechanism import FunctionMechanism
from dpcap.result import CapacityResult, CostCapacityResult
from dpcap.shannon._plain import METHODS, plain_capacity
from dpcap.solvers import blahut_cost, itp, reduce
from dpcap.solvers.mixing import least_weight
from dpcap.solvers.status import CONIC_SOLVERS

__all__ = ["capacity_cost"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


#: Mechanisms that :func:`dpcap.capacity` solves in structured form: given here as matrices.
STRUCTURED = (AdditiveMechanism, FunctionMechanism)


#: ITP's extra steps beyond bisection's count, and its truncation κ₁ (times the first width).
ITP_SLACK, ITP_KAPPA = 2, 0.1

#: Largest multiplier searched: the a-priori bound ``log min(|X|, |Y|)/(P − c_min)`` is capped
#: here (a budget within 1e-250 nats of the least cost is the least cost, for the search).
S_CEILING = 1e250


def capacity_cost(
    W: Any,
    /,
    *,
    cost: Any,
    budget: Any = None,
    peak: Any = None,
    method: str = "ba",
    solver: str | None = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CostCapacityResult:
    """Capacity ``C(P) = max {I(p, W) : Σ_x p_x c_x ≤ P}`` under an input cost, certified.

    :func:`dpcap.capacity` with ``cost=`` calls this function.

    Parameters
    ----------
    W : array_like, Channel or Mechanism, shape (n_inputs, n_outputs)
        Rows are inputs.
    cost : array_like, shape (n_inputs,)
        The cost ``c_x ≥ 0`` of each input (finite).
    budget : float, optional
        ``P``: the largest expected cost ``Σ_x p_x c_x`` allowed (``inf``: none).
    peak : float, optional
        ``A``: the largest cost of an input that may be used at all; inputs with ``c_x > A``
        get no mass. At least one of ``budget`` and ``peak`` must be given.
    method : {"ba", "conic"}
        ``"ba"``: Blahut–Arimoto on the Lagrangian (:mod:`dpcap.solvers.blahut_cost`) at each
        multiplier of the search. ``"conic"``: the exponential-cone program with the cost
        constraint through cvxpy; its prior and multiplier start the same search and are
        certified like any other.
    solver : {"CLARABEL", "ECOS", "SCS"}, optional
        The cvxpy solver for ``method="conic"``.
    tol : float
        Target certified gap ``upper − lower`` in nats.
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    max_iter : int, optional
        Budget of Blahut–Arimoto iterations per engine solve (default 100,000).
    unit : {"nats", "bits"}

    Returns
    -------
    CostCapacityResult
        ``value = upper``; ``prior`` (on all inputs) meets the budget exactly and attains
        ``lower``; ``multiplier`` is the ``s`` of the dual certificate.

    Raises
    ------
    ParameterError
        For costs that are negative, NaN, infinite or of the wrong length (naming ``cost``), a
        budget below the least cost or a peak below every cost (no prior is feasible), or a
        missing ``cost``, ``budget``/``peak``.

    Warns
    -----
    ConvergenceWarning
        If the bracket did not close to ``max(tol, rtol·|upper|)``.

    Notes
    -----
    ``C(P) = min_{s ≥ 0} [sP + C_s]`` with ``C_s = max_p [I(p, W) − s Σ_x p_x c_x]``, and
    ``Σ_x p_x (D_x(p) − s c_x) ≤ C_s ≤ max_x (D_x(p) − s c_x)`` for every prior (the Shannon
    bracket shifted by the costs). Edge cases are exact: a budget at least the cost of the
    engine's unconstrained optimal prior returns :func:`dpcap.capacity`'s bracket (``s = 0``);
    a budget equal to the least cost is the capacity of the cheapest inputs' sub-channel
    (``s = ∞``). Stopping rule: the certified gap ``≤ max(tol, rtol·|upper|)`` at the best
    upper end so far (each engine solve and the multiplier's search aim at a quarter of that
    target), or :data:`MAX_SOLVES` multipliers.

    References
    ----------
    .. [1] R. E. Blahut, "Computation of channel capacity and rate-distortion functions",
       *IEEE Trans. Inf. Theory* 18(4), 1972, §II (capacity with an input constraint).
    .. [2] I. Csiszár, J. Körner, *Information Theory: Coding Theorems for Discrete Memoryless
       Systems*, 2nd ed., 2011 (the capacity–cost function).

    Examples
    --------
    A noiseless bit where sending 1 costs 1: ``C(P) = h(P)`` for ``P ≤ 1/2``.

    >>> import math
    >>> import dpcap
    >>> res = dpcap.capacity([[1.0, 0.0], [0.0, 1.0]], cost=[0.0, 1.0], budget=0.25)
    >>> h = -0.25 * math.log(0.25) - 0.75 * math.log(0.75)
    >>> res.lower <= h <= res.upper, res.status.value
    (True, 'converged')
    >>> res.expected_cost <= 0.25, abs(res.multiplier - math.log(3)) < 1e-4  # h'(P) = log 3
    (True, True)
    """
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    iterations_budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    check.choice(method, METHODS, "method")
    name = check.conic_solver(method, solver, CONIC_SOLVERS)
    matrix = check.stochastic_matrix(W, "W")
    costs, P, A = _options(cost, budget, peak, matrix.shape[0])
    keep = np.flatnonzero(costs <= A)
    if keep.size == 0:
        raise ParameterError(
            f"peak={A!r} is below the least cost {float(costs.min())!r} "
            f"(cost[{int(np.argmin(costs))}]): no input may be used"
        )
    sub, sub_costs = matrix[keep], costs[keep]
    least = float(sub_costs.min())
    if least > P:
        where = "among the inputs within peak" if math.inf > A else "of an input"
        raise ParameterError(
            f"budget={P!r} is below the least cost {least!r} {where} "
            f"(cost[{int(keep[np.argmin(sub_costs)])}]): no prior meets it"
        )
    run = _Run(tolerance, iterations_budget, method, name, relative)
    if least == P:
        answer = run.cheapest(sub, sub_costs)
    else:
        whole = keep.size == matrix.shape[0] and not isinstance(W, STRUCTURED)
        answer = run.lagrangian(sub, sub_costs, P, W if whole else sub)
    prior = np.zeros(matrix.shape[0])
    prior[keep] = answer.prior
    status, message = _certify.conclude(
        answer.upper - answer.lower,
        tolerance,
        rtol=relative,
        upper=answer.upper,
        iterations=answer.iterations,
        note=answer.note,
        open_status=answer.open_status,
    )
    return CostCapacityResult(
        value=answer.upper / divisor,
        lower=answer.lower / divisor,
        upper=answer.upper / divisor,
        prior=prior,
        output=prior @ matrix,
        status=status,
        iterations=answer.iterations,
        method=answer.method,
        unit=unit,
        message=message,
        tol=tolerance,
        cost=costs,
        budget=P,
        peak=A,
        expected_cost=float(blahut_cost.exact_mean(prior, costs)),
        multiplier=answer.slope / divisor,
    )


def _options(cost: Any, budget: Any, peak: Any, n: int) -> tuple[FloatArray, float, float]:
    """Validated ``(cost, budget, peak)``; a missing budget or peak is ``inf``."""
    if cost is None:
        raise ParameterError(
            f"budget= and peak= limit the cost of the inputs and need cost=; got cost=None "
            f"with budget={budget!r}, peak={peak!r}"
        )
    if budget is None and peak is None:
        raise ParameterError(
            "cost= needs budget= (the largest expected cost) or peak= (the largest cost of an "
            "input used), got neither"
        )
    costs = check.nonnegative(cost, "cost", allow_inf=False)
    if costs.ndim != 1 or costs.shape[0] != n:
        raise ParameterError(
            f"cost must be a 1-D array with one entry per input ({n}), got shape {costs.shape}"
        )
    costs.setflags(write=False)
    P = math.inf if budget is None else check.nonnegative_scalar(budget, "budget")
    A = math.inf if peak is None else check.nonnegative_scalar(peak, "peak")
    return costs, P, A


@dataclass
class _Answer:
    """A bracket of ``C(P)`` in nats, its feasible prior (on the allowed inputs) and multiplier."""

    lower: float
    upper: float
    prior: FloatArray
    slope: float
    iterations: int
    method: str
    note: str
    open_status: Status = Status.MAX_ITER


@dataclass
class _Run:
    """One query's options, and the plain capacities it asks :func:`dpcap.capacity` for."""

    tol: float
    max_iter: int
    method: str
    solver: str | None
    rtol: float = 0.0
    spent: int = 0
    solves: int = 0
    exhausted: bool = False
    brackets: list[tuple[float, float]] = field(default_factory=list)  # (upper, slope)

    def plain(self, W: FloatArray) -> CapacityResult:
        """:func:`dpcap.capacity` of ``W`` in nats; its warning is left to the final bracket."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = plain_capacity(
                W,
                method=self.method,
                solver=self.solver,
                tol=self.tol,
                rtol=self.rtol,
                max_iter=self.max_iter,
            )
        self.spent += res.iterations
        return res

    def tag(self) -> str:
        return "ba" if self.solver is None else f"conic/{self.solver}"

    def target(self) -> float:
        """The gap the bracket must meet, ``max(tol, rtol·|upper|)`` at the best upper end so
        far (``tol`` before any)."""
        upper = min((u for u, _ in self.brackets), default=math.inf)
        return _certify.target(self.tol, self.rtol, upper)

    def cheapest(self, W: FloatArray, costs: FloatArray) -> _Answer:
        """``P = c_min``: only the cheapest inputs can carry mass, the capacity of their
        sub-channel (``s = ∞``); 0 when there is one."""
        rows = np.flatnonzero(costs == costs.min())
        res = self.plain(W[rows])
        prior = np.zeros(W.shape[0])
        prior[rows] = res.prior
        note = f"budget = least cost: the capacity of the {rows.size} cheapest inputs"
        return _Answer(res.lower, res.upper, prior, math.inf, self.spent, self.tag(), note)

    def lagrangian(self, W: FloatArray, costs: FloatArray, P: float, source: Any) -> _Answer:
        """``c_min < P``: the plain capacity if its prior meets the budget, else the search.

        ``source`` is the channel as the user gave it when every input is allowed (validated
        again by :func:`dpcap.capacity`, it is ``W`` bit for bit: the brackets are then equal).
        """
        res = self.plain(source)
        top = float(costs.max())
        if top <= P or blahut_cost.within_budget(res.prior, costs, P):
            note = "the budget does not bind (s = 0): the unconstrained capacity"
            return _Answer(res.lower, res.upper, res.prior, 0.0, self.spent, self.tag(), note)
        moved = _cheapest_duplicates(W, costs, res.prior)
        if blahut_cost.within_budget(moved, costs, P):
            lower, upper, _ = _certify.bracket(W, moved)
            note = "the budget does not bind (s = 0): an optimal prior on cheaper equal rows"
            upper = min(upper, res.upper)
            return _Answer(lower, upper, moved, 0.0, self.spent, self.tag(), note)
        self.brackets.append((res.upper, 0.0))
        return _Search(self, W, costs, P).run(res.prior)


def _cheapest_duplicates(W: FloatArray, costs: FloatArray, prior: FloatArray) -> FloatArray:
    """``prior`` with the mass of each group of equal rows on its cheapest member.

    The output law, hence ``I(p, W)``, depends on the masses of equal rows only through their
    sum; the expected cost does not increase.
    """
    _, kind = reduce.distinct_rows(W)
    mass = np.bincount(kind, weights=prior)
    order = np.argsort(costs, kind="stable")
    _, first = np.unique(kind[order], return_index=True)
    moved = np.zeros_like(prior)
    moved[order[first]] = mass
    return moved


class _Search:
    """The search over the multiplier ``s`` (``docs/mathematics.rst`` §12).

    The engine solves ``C_s`` on a cost-aware reduction of the channel (zero and proportional
    columns merged, each group of equal rows represented by its cheapest member); every
    certificate is evaluated on the channel itself: the dual bound at each ``s`` with the
    centre the engine found, and ``I(p, W)`` at priors that meet the budget exactly.
    """

    def __init__(self, run: _Run, W: FloatArray, costs: FloatArray, P: float) -> None:
        self.opts, self.W, self.costs, self.P = run, W, costs, P
        self.note = ""
        self.lo = self.hi = self.f_lo = self.f_hi = 0.0
        self.far: FloatArray | None = None  # the prior at lo, over budget
        self.near: FloatArray | None = None  # the prior at hi, within it
        self.warm: dict[str, FloatArray | None] = {"lo": None, "hi": None}
        self.least = float(costs.min())
        order = np.argsort(costs, kind="stable")
        reduction = reduce.reduce_channel(W[order])
        self.rows: IntArray = order[reduction.rows]
        self.engine = reduction.matrix
        self.engine_cost = costs[self.rows] - self.least
        self.room = P - self.least
        self.cheapest = np.zeros(W.shape[0])
        self.cheapest[int(np.argmin(costs))] = 1.0
        self.lower, self.prior = 0.0, self.cheapest  # I = 0 at a point mass, which is feasible

    def back(self, p: FloatArray) -> FloatArray:
        out = np.zeros(self.W.shape[0])
        out[self.rows] = p
        return out

    def spend(self, p: FloatArray) -> float:
        """The expected cost above ``c_min`` of ``p/Σp`` (floats: guidance, not a check)."""
        return float((p @ self.costs) / p.sum()) - self.least

    def feasible(self, p: FloatArray) -> bool:
        return blahut_cost.within_budget(p, self.costs, self.P)

    def offer(self, p: FloatArray) -> None:
        """Keep ``p`` (feasible) if its certified information beats the best so far."""
        lower = _certify.bracket(self.W, p).lower
        if lower > self.lower:
            self.lower, self.prior = lower, p

    def mix(self, far: FloatArray, near: FloatArray) -> FloatArray:
        """``(1 − λ) far + λ near`` with the least ``λ`` that meets the budget exactly.

        ``near`` meets it and ``far`` does not; the analytic weight is raised by the rounding
        rule of :func:`dpcap.solvers.mixing.least_weight` (``docs/mathematics.rst`` §8).
        """
        e_far, e_near = self.spend(far), self.spend(near)
        start = (e_far - self.room) / (e_far - e_near) if e_far > e_near else 1.0

        def mixture(weight: float) -> FloatArray:
            out: FloatArray = (1.0 - weight) * far + weight * near
            return out

        return mixture(least_weight(lambda w: self.feasible(mixture(w)), start))

    def solve(self, s: float, initial: FloatArray | None) -> tuple[FloatArray, FloatArray]:
        """Engine solve at ``s``; records its dual bound. ``(prior on W, engine prior)``."""
        run = self.opts
        sol = blahut_cost.solve(
            self.engine,
            self.engine_cost,
            s,
            tol=run.target() / 4,
            max_iter=run.max_iter,
            initial=initial,
        )
        spent = int(sol.iterations[0])
        run.spent += spent
        run.solves += 1
        run.exhausted |= spent >= run.max_iter
        centre = self.back(sol.upper_prior[0]) @ self.W
        centre = np.where(centre > 0, centre, np.nextafter(0.0, 1.0))
        run.brackets.append((blahut_cost.dual_bound(self.W, self.costs, self.P, s, centre), s))
        return self.back(sol.prior[0]), sol.prior[0]

    def gap(self) -> float:
        return min(u for u, _ in self.opts.brackets) - self.lower

    def run_seeds(self) -> list[tuple[float, FloatArray]]:
        """``method="conic"``: the cone program's multiplier and prior, as a first point."""
        run = self.opts
        if run.solver is None:
            return []
        from dpcap.solvers import conic  # cvxpy is imported there, lazily

        start = time.perf_counter()
        raw = conic.capacity_conic(
            self.engine, solver=run.solver, tol=run.tol, cost=self.engine_cost, budget=self.room
        )
        if not raw.status.usable or raw.multiplier is None:
            raise SolverError(
                f"{run.solver} failed on the capacity-cost program: {raw.message}",
                _certify.status_of(raw),
            )
        p = self.back(raw.prior)
        self.offer(p if self.feasible(p) else self.mix(p, self.cheapest))
        self.note = (
            f"; {run.solver} reported {raw.objective:.12g} ({raw.status.value}) at multiplier "
            f"{raw.multiplier:.6g} in {time.perf_counter() - start:.3g} s, certified and "
            "polished by the BA engine"
        )
        return [(raw.multiplier, raw.prior)]

    def visit(self, s: float, initial: FloatArray | None) -> bool:
        """Solve at ``s`` and move the end of ``[lo, hi]`` it falls on; whether it met P."""
        p, engine_prior = self.solve(s, initial)
        met = self.feasible(p)
        if met:
            self.hi, self.f_hi, self.near = s, max(self.room - self.spend(p), 0.0), p
            self.warm["hi"] = engine_prior
            self.offer(p)
        else:
            self.lo, self.f_lo, self.far = s, min(self.room - self.spend(p), -0.0), p
            self.warm["lo"] = engine_prior
        if self.far is not None:
            self.offer(self.mix(self.far, self.cheapest if self.near is None else self.near))
        return met

    def going(self) -> bool:
        opts = self.opts
        return self.gap() > opts.target() and opts.solves < check.MAX_SOLVES

    def run(self, plain_prior: FloatArray) -> _Answer:
        """Bracket the multiplier, then ITP in ``log s`` on ``f(s) = P − Σ_x p_x(s) c_x``.

        ``f < 0`` at ``lo`` (its prior is over budget; ``lo = 0`` holds the plain capacity's
        prior) and ``f ≥ 0`` at ``hi``, first the a-priori bound ``log min(|X|, |Y|)/(P −
        c_min)``. Geometric steps (the factor squares each time, so that multipliers of any
        magnitude are reached in a few solves) from ``1/max c'`` find a finite bracket
        ``0 < lo < hi``; a feasible prior at ``s`` leaves a gap of at most ``s(P − c_min)`` plus
        the engine's, so the downward steps stop there.
        """
        opts = self.opts
        nx, ny = self.W.shape
        self.lo, self.f_lo = 0.0, self.room - self.spend(plain_prior)
        self.hi = max(min(math.log(min(nx, ny)) / self.room, S_CEILING), 1e-300)
        self.f_hi = math.nan
        self.far = self.near = None
        self.warm = {"lo": None, "hi": None}
        span = max(float(self.engine_cost.max()), 1e-300)
        for s, initial in self.run_seeds():
            if self.lo < s < self.hi and self.going():
                self.visit(s, initial)
        factor, s = 8.0, min(1.0 / span, self.hi / 2)
        while self.near is None and self.going() and s < self.hi:
            s = max(s, self.lo * factor)
            if s >= self.hi:
                break
            self.visit(s, self.warm["lo"])
            factor = min(factor * factor, 1e100)
        factor = 8.0
        while self.lo == 0.0 and self.going() and self.hi * self.room > opts.target() / 4:
            self.visit(self.hi / factor, self.warm["hi"])
            factor = min(factor * factor, 1e100)
        if self.lo > 0.0:
            self.search(opts.target() / (4.0 * span))
        upper, slope = min(opts.brackets)
        solves = f"{opts.solves} engine solves, multiplier bracket [{self.lo:.6g}, {self.hi:.6g}]"
        note = f"{solves}; dual bound at s = {slope:.6g}{self.note}"
        bound = _certify.ordered(self.lower, upper, self.prior)
        status = (
            Status.MAX_ITER
            if opts.exhausted or opts.solves >= check.MAX_SOLVES
            else Status.INACCURATE
        )
        if opts.solver is not None:
            status = Status.INACCURATE
        return _Answer(
            bound.lower, bound.upper, bound.prior, slope, opts.spent, opts.tag(), note, status
        )

    def search(self, s_tol: float) -> None:
        """ITP in ``x = log s`` on ``0 < lo < hi``, until the gap closes or ``hi − lo ≤ s_tol``
        (a bracket adds at most ``(hi − lo) max c'`` to the gap)."""
        a, b = math.log(self.lo), math.log(self.hi)
        x_tol = max(s_tol / self.hi, 4.0 * _certify.U * max(abs(a), abs(b), 1.0))
        steps = max(math.ceil(math.log2(max((b - a) / x_tol, 1.0))), 0) + ITP_SLACK
        kappa = ITP_KAPPA / max(b - a, x_tol)
        while self.going() and self.hi - self.lo > s_tol:
            a, b = math.log(self.lo), math.log(self.hi)
            if not a < b:
                break
            x = itp.step(a, b, self.f_lo, self.f_hi, x_tol, steps, kappa)
            steps -= 1
            s = math.exp(x)
            if not self.lo < s < self.hi:
                break
            self.visit(s, self.warm["lo"] if x - a < b - x else self.warm["hi"])
