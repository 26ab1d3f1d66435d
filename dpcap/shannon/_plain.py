"""The Shannon capacity of one channel, without an input cost: the engine run and its certificate.

:func:`dpcap.capacity` dispatches here, and so does the capacity–cost search
(:mod:`dpcap.shannon.cost`) for its unconstrained solves; this module imports neither.
"""

from __future__ import annotations

import time
from typing import Any

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism
from dpcap.errors import SolverError, Status
from dpcap.function_mechanism import FunctionMechanism
from dpcap.line_noise import LineNoise
from dpcap.result import CapacityResult
from dpcap.shannon import structured as structured
from dpcap.shannon import working_set
from dpcap.shannon._band import band_capacity
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
    if isinstance(W, LineNoise) and method == "ba":
        banded = band_capacity(W, tol, rtol, max_iter, unit)
        if banded is not None:
            return banded
    if isinstance(W, (AdditiveMechanism, FunctionMechanism)):
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
    if method == "ba" and working_set.tall(reduction.matrix):
        reduction, solution, rounds = working_set.solve(reduction, tolerance, relative, budget)
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
