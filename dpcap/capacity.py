"""Shannon capacity of channels, alone or in batches, with a certified bracket.

``C(W) = max_p I(p, W)``. For every prior ``p`` (``docs/mathematics.rst`` §1)::

    I(p, W) ≤ C ≤ max_x D(W_x ‖ pW),

so a result is a bracket ``lower ≤ C ≤ upper`` recomputed by the query layer
(:mod:`dpcap._certify`) from the priors an engine returns: the certificate is never taken on a
solver's word.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import _certify
from dpcap import _validation as check
from dpcap.result import (
    CapacitiesResult,
    CapacityResult,
    ChannelError,
    ParameterError,
    SolverError,
    Status,
)
from dpcap.solvers import blahut, reduce
from dpcap.solvers.status import CONIC_SOLVERS

__all__ = ["capacities", "capacity"]

METHODS = ("ba", "conic")

FloatArray = NDArray[np.float64]


def capacity(
    W: Any,
    /,
    *,
    method: str = "ba",
    solver: str | None = None,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CapacityResult:
    """Shannon capacity ``C = max_p I(X;Y)`` of a channel, certified to ``tol``.

    Parameters
    ----------
    W : array_like, Channel or Mechanism, shape (n_inputs, n_outputs)
        Rows are inputs. For a database mechanism this is its free-lunch privacy
        ``sup_{P_{X^n}} I(X^n; Y)`` (Cuff & Yu §6.2).
    method : {"ba", "conic"}
        ``"ba"`` (default): exact reductions (zero and proportional columns, duplicate rows),
        then Blahut–Arimoto in the log domain with an active-set KKT–Newton polish and a
        primal–dual interior-point fallback (:mod:`dpcap.solvers.blahut`). ``"conic"``: the
        exponential-cone program through cvxpy, an independent engine; its prior is then
        polished by the BA engine and certified like any other.
    solver : {"CLARABEL", "ECOS", "SCS"}, optional
        The cvxpy solver for ``method="conic"`` (default CLARABEL; case-insensitive).
    tol : float
        Target certified gap ``upper − lower`` in nats.
    max_iter : int, optional
        Budget of Blahut–Arimoto iterations (default 100,000).
    unit : {"nats", "bits"}

    Returns
    -------
    CapacityResult
        ``value`` is ``upper`` (the conservative end); ``prior`` attains ``lower``.

    Warns
    -----
    ConvergenceWarning
        If the bracket did not close to ``tol``; ``status`` is then ``max_iter`` (BA) or
        ``inaccurate`` (conic).

    Notes
    -----
    Certificate (Blahut 1972, Arimoto 1972; ``docs/mathematics.rst`` §1):
    ``I(p, W) ≤ C ≤ max_x D(W_x ‖ pW)``.
    KKT: ``D(W_x ‖ q*) = C`` on the support of an optimal prior and ``≤ C`` off it.

    Examples
    --------
    >>> import math
    >>> res = capacity([[0.9, 0.1], [0.1, 0.9]])
    >>> math.isclose(res.value, math.log(2) + 0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    True
    >>> res.upper - res.lower <= 1e-9, res.status.value
    (True, 'converged')
    """
    matrix = check.stochastic_matrix(W, "W")
    tolerance = check.tolerance(tol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    check.choice(method, METHODS, "method")
    if method == "ba" and solver is not None:
        raise ParameterError(
            f"solver selects a cvxpy solver for method='conic'; got solver={solver!r} with "
            "method='ba'"
        )
    reduction = reduce.reduce_channel(matrix)
    if method == "ba":
        solution = blahut.solve(reduction.matrix[None], tol=tolerance, max_iter=budget)
        tag, note, iterations = "ba", "", int(solution.iterations[0])
        status_if_open = Status.MAX_ITER
    else:
        name = CONIC_SOLVERS[0] if solver is None else check.solver(solver, CONIC_SOLVERS)
        start = time.perf_counter()
        from dpcap.solvers import conic  # cvxpy is imported there, lazily

        raw = conic.capacity_conic(reduction.matrix, solver=name, tol=tolerance)
        if not raw.status.usable:
            raise SolverError(
                f"{name} failed on the capacity program: {raw.message}",
                _certify.status_of(raw.status),
            )
        own = _certify.bracket(reduction.matrix, raw.prior)
        solution = blahut.solve(
            reduction.matrix[None], tol=tolerance, max_iter=budget, initial=raw.prior[None]
        )
        tag, iterations = f"conic/{name}", int(solution.iterations[0])
        note = (
            f"{name} reported {raw.objective:.12g} ({raw.status.value}) in "
            f"{time.perf_counter() - start:.3g} s; its own prior certifies "
            f"[{own.lower:.12g}, {own.upper:.12g}] (gap {own.upper - own.lower:.2g}), "
            "polished by the BA engine"
        )
        status_if_open = Status.INACCURATE
    lower, upper, prior = _certify.bracket(
        matrix, solution.prior[0], solution.upper_prior[0], reduction=reduction
    )
    status, message = _certify.conclude(
        upper - lower, tolerance, iterations=iterations, note=note, open_status=status_if_open
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


def _stack(Ws: Any) -> tuple[FloatArray, tuple[tuple[int, int], ...]]:
    """Validate a stack or a list of channels; pad a ragged list (exactly, see Notes)."""
    if isinstance(Ws, np.ndarray) and Ws.ndim == 3:
        stack = check.stochastic_stack(Ws, "Ws")
        B, nx, ny = stack.shape
        return stack, ((nx, ny),) * B
    if isinstance(Ws, Sequence) or (isinstance(Ws, np.ndarray) and Ws.dtype == object):
        if len(Ws) == 0:
            raise ChannelError("Ws must hold at least one channel, got an empty list")
        mats = [check.stochastic_matrix(W, f"Ws[{i}]") for i, W in enumerate(Ws)]
    else:
        raise ChannelError(
            f"Ws must be a (B, n_inputs, n_outputs) array or a list of channels, "
            f"got {check.show(Ws)}"
        )
    shapes = tuple((int(m.shape[0]), int(m.shape[1])) for m in mats)
    nx = max(s[0] for s in shapes)
    ny = max(s[1] for s in shapes)
    stack = np.zeros((len(mats), nx, ny))
    for b, m in enumerate(mats):
        stack[b, : m.shape[0], : m.shape[1]] = m
        stack[b, m.shape[0] :, : m.shape[1]] = m[0]  # duplicate rows and zero columns: exact
    return stack, shapes


def capacities(
    Ws: Any,
    /,
    *,
    tol: float = 1e-9,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CapacitiesResult:
    """Certified capacities of many channels at once.

    Parameters
    ----------
    Ws : array of shape (B, n_inputs, n_outputs), or a sequence of channels
        A list may hold channels of different sizes: they are padded exactly (extra inputs
        duplicate the first row, extra outputs are zero columns; neither changes capacity, and
        the mass of the duplicates is returned to the first input).
    tol, max_iter, unit
        As for :func:`capacity`.

    Returns
    -------
    CapacitiesResult
        The fields of :class:`CapacityResult` as arrays, one status per element; element ``i``
        is ``result[i]``. Each element leaves the vectorised working set as soon as its own
        bracket closes.

    Warns
    -----
    ConvergenceWarning
        If some element did not converge (the message counts them).

    Examples
    --------
    >>> import numpy as np
    >>> res = capacities(np.stack([np.eye(2), np.full((2, 2), 0.5)]))
    >>> np.round(res.value, 12).tolist()
    [0.693147180560, 0.0]
    """
    stack, shapes = _stack(Ws)
    tolerance = check.tolerance(tol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    solution = blahut.solve(stack, tol=tolerance, max_iter=budget)
    B, nx, ny = stack.shape
    prior = np.full((B, nx), np.nan)
    output = np.full((B, ny), np.nan)
    raw = solution.prior.copy()
    raw_upper = solution.upper_prior.copy()
    ragged = any(shape != (nx, ny) for shape in shapes)
    if ragged:
        for b, (rows, _) in enumerate(shapes):
            for p in (raw, raw_upper):  # the padded duplicates' mass goes back to row 0
                p[b, 0] += p[b, rows:].sum()
                p[b, rows:] = 0.0
    lower, upper = _certify.batch_bracket(stack, raw, raw_upper)
    q = np.einsum("bx,bxy->by", raw, stack)
    if ragged:
        for b, (rows, cols) in enumerate(shapes):
            prior[b, :rows] = raw[b, :rows]
            output[b, :cols] = q[b, :cols]
    else:
        prior, output = raw, q
    status, message = _certify.conclude_many(
        [Status.CONVERGED if gap <= tolerance else Status.MAX_ITER for gap in upper - lower],
        tolerance,
        what="channels",
        note=f"budget {budget} iterations each",
    )
    return CapacitiesResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=prior,
        output=output,
        status=status,
        iterations=solution.iterations.copy(),
        method="ba",
        unit=unit,
        message=message,
        tol=tolerance,
        shapes=shapes,
    )
