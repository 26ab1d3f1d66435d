"""The Shannon capacity of one channel, without an input cost: the engine run and its certificate.

:func:`dpcap.capacity` dispatches here, and so does the capacity–cost search
(:mod:`dpcap.shannon.cost`) for its unconstrained solves; this module imports neither.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism
from dpcap.errors import ProblemTooLargeError, SolverError, Status
from dpcap.function_mechanism import FunctionMechanism
from dpcap.line_noise import LineNoise
from dpcap.result import CapacityResult
from dpcap.shannon import structured as structured
from dpcap.shannon._band import BAND_ABOVE, MAX_BAND_WORK, band_capacity, band_work
from dpcap.solvers import blahut, reduce
from dpcap.solvers.status import CONIC_SOLVERS

__all__ = ["METHODS", "plain_capacity"]

METHODS = ("ba", "conic")


def plain_capacity(
    W: Any,
    /,
    *,
    method: str = "ba",
    solver: str | None = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CapacityResult:
    """:func:`dpcap.capacity` of ``W`` without a cost: the arguments and result are its own."""
    if isinstance(W, LineNoise) and W.n_inputs > BAND_ABOVE and method == "ba":
        # the band engine; where its bracket stays open and the matrix fits, the dense one
        fits = W.n_inputs * W.n_outputs <= check.MAX_DENSE_ELEMENTS
        work = band_work(W)
        if work > MAX_BAND_WORK and not fits:
            raise ProblemTooLargeError(
                f"the capacity of this noise channel on {{0..{W.n_inputs - 1}}}: a Newton step "
                f"on its band of {2 * W.band() + 1} outputs is {work:.3g} multiply-adds, above "
                f"dpcap's limit of {MAX_BAND_WORK} (a wider noise needs a shorter line)"
            )
        if work <= MAX_BAND_WORK:
            args = (check.tolerance(tol), check.rtol(rtol), check.max_iter(max_iter), unit)
            result = band_capacity(W, *args, warn=not fits)
            if result.status is Status.CONVERGED or not fits:
                return result
    if isinstance(W, (AdditiveMechanism, FunctionMechanism)):
        if isinstance(W, AdditiveMechanism) and W.line_noise is not None:
            reduced = structured.count_reduced(W)
        else:
            reduced = structured.reduce_mechanism(W)
        inner = plain_capacity(
            reduced.rows,
            method=method,
            solver=solver,
            tol=tol,
            rtol=rtol,
            max_iter=max_iter,
            unit=unit,
        )
        return structured.lift(inner, reduced)
    matrix = check.stochastic_matrix(W, "W")
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    check.choice(method, METHODS, "method")
    name = check.conic_solver(method, solver, CONIC_SOLVERS)
    reduction = reduce.extreme_rows(reduce.reduce_channel(matrix))
    if method == "ba" and _tall(reduction.matrix):
        reduction, solution, rounds = _working_set(matrix, reduction, tolerance, relative, budget)
        note = f"working set of {reduction.matrix.shape[0]} rows after {rounds} rounds"
        tag, iterations = "ba", int(solution.iterations[0])
        status_if_open = Status.MAX_ITER
    elif method == "ba":
        solution = blahut.solve(
            reduction.matrix[None], tol=tolerance, rtol=relative, max_iter=budget
        )
        tag, note, iterations = "ba", "", int(solution.iterations[0])
        status_if_open = Status.MAX_ITER
    else:
        start = time.perf_counter()
        from dpcap.solvers import conic  # cvxpy is imported there, lazily

        assert name is not None  # method == "conic"
        raw = conic.capacity_conic(reduction.matrix, solver=name, tol=tolerance)
        if not raw.status.usable:
            raise SolverError(
                f"{name} failed on the capacity program: {raw.message}",
                _certify.status_of(raw),
            )
        own = _certify.bracket(reduction.matrix, raw.prior)
        solution = blahut.solve(
            reduction.matrix[None],
            tol=tolerance,
            rtol=relative,
            max_iter=budget,
            initial=raw.prior[None],
        )
        tag, iterations = f"conic/{name}", int(solution.iterations[0])
        note = (
            f"{name} reported {raw.objective:.12g} ({raw.status.value}) in "
            f"{time.perf_counter() - start:.3g} s; its own prior certifies "
            f"[{own.lower:.12g}, {own.upper:.12g}] (gap {own.upper - own.lower:.2g}), "
            "polished by the BA engine"
        )
        status_if_open = Status.INACCURATE
    priors = (solution.prior[0], solution.upper_prior[0])
    lower, upper, prior = _certify.bracket(matrix, *priors, reduction=reduction)
    status, message = _certify.conclude(
        upper - lower,
        tolerance,
        rtol=relative,
        upper=upper,
        floor=lambda: _certify.floor(matrix, *priors, reduction=reduction),
        engine_closed=bool(solution.converged[0]),
        iterations=iterations,
        note=note,
        open_status=status_if_open,
    )
    return CapacityResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=prior,
        output=prior @ matrix,
        status=status,
        iterations=iterations,
        method=tag,
        unit=unit,
        message=message,
        tol=tolerance,
    )


#: A channel with more distinct inputs than this, and more than TALL_RATIO times its outputs,
#: is solved on a working set of rows (:func:`_working_set`): an optimal prior has at most
#: |Y| inputs, so the engine's systems stay near |Y| × |Y| (1024 × 256: 0.82 s -> 0.21 s).
TALL_INPUTS = 512
TALL_RATIO = 2
#: Most rounds of the working set.
MAX_ROUNDS = 50


def _tall(M: Any) -> bool:
    return bool(M.shape[0] > TALL_INPUTS and M.shape[0] > TALL_RATIO * M.shape[1])


def _divergences(M: Any, aux: Any, prior: Any) -> Any:
    """``D(W_x ‖ pW)`` of every row, by the engine's own model (a screen, not a certificate)."""
    return blahut.SHANNON.divergences(M[None], aux, prior[None])[0]


def _on_all_rows(prior: Any, rows: Any, n: int) -> Any:
    """A working set's prior on all ``n`` rows (zero off the set)."""
    out = np.zeros(n)
    out[rows] = prior
    return out


def _working_set(
    matrix: Any, reduction: reduce.Reduction, tol: float, rtol: float, budget: int
) -> tuple[reduce.Reduction, blahut.BatchSolution, int]:
    """The capacity of a tall channel on a working set of its rows (column generation).

    An optimal prior has at most ``|Y|`` inputs in its support (Carathéodory), so the engine
    runs on a few rows: those that a uniform prior's output law is farthest from, and each
    column's largest entry. After each solve every row's ``D(W_x ‖ q)`` is computed at the
    solution's output law (``O(|X|·|Y|)``, no ``|X| × |X|`` system); the rows above the working
    set's upper bound join it, until none does. The certificate is then taken over every row
    of the channel by the caller (the radius bound ``max_x D(W_x ‖ q)`` over all of them), so
    a working set that missed a row could only leave the bracket open, never wrong.
    """
    M = reduction.matrix
    nx, ny = M.shape
    aux = blahut.SHANNON.prepare(M[None])
    first = np.argsort(-_divergences(M, aux, np.full(nx, 1.0 / nx)))[: 2 * ny]
    rows = np.unique(np.concatenate([first, np.argmax(M, axis=0)])).astype(np.int64)
    rounds = 0
    while True:
        rounds += 1
        sub = reduce.Reduction(
            matrix=M[rows], rows=reduction.rows[rows], n_inputs=reduction.n_inputs
        )
        solution = blahut.solve(sub.matrix[None], tol=tol, rtol=rtol, max_iter=budget)
        top = float(solution.upper[0])
        D = _divergences(M, aux, _on_all_rows(solution.upper_prior[0], rows, nx))
        outside = np.setdiff1d(np.flatnonzero(top + 0.5 * tol < D), rows)
        if not outside.size or rounds >= MAX_ROUNDS:
            return sub, solution, rounds
        worst = outside[np.argsort(-D[outside])][: max(ny, 1)]
        rows = np.union1d(rows, worst).astype(np.int64)
