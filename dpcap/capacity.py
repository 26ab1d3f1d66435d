"""Shannon capacity of channels, alone or in batches, with a certified bracket.

``C(W) = max_p I(p, W)``. For every prior ``p`` (DESIGN §4)::

    I(p, W) ≤ C ≤ max_x D(W_x ‖ pW),

so a result is a bracket ``lower ≤ C ≤ upper`` computed here, by the query layer, from the
priors an engine returns: the certificate is never taken on a solver's word.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import _validation as check
from dpcap.result import (
    CapacitiesResult,
    CapacityResult,
    ChannelError,
    ConvergenceWarning,
    ParameterError,
    SolverError,
    Status,
)
from dpcap.solvers import blahut, reduce

__all__ = ["capacities", "capacity"]

METHODS = ("ba", "conic")
CONIC_SOLVERS = ("CLARABEL", "ECOS", "SCS")
DEFAULT_MAX_ITER = 100_000

FloatArray = NDArray[np.float64]


def _tolerance(tol: Any) -> float:
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol > 0:
        raise ParameterError(f"tol must be a positive number (nats), got {check.show(tol)}")
    if not math.isfinite(float(tol)):
        raise ParameterError(f"tol must be finite, got {tol!r}")
    return float(tol)


def _max_iter(max_iter: Any) -> int:
    return DEFAULT_MAX_ITER if max_iter is None else check.integer(max_iter, "max_iter", 1)


def certify(W: FloatArray, prior: FloatArray) -> tuple[float, float, FloatArray]:
    """``(I(prior, W), max_x D(W_x ‖ prior·W), prior·W)`` for one channel."""
    D, lower, upper = blahut.bracket(W[None], prior[None])
    del D
    return float(lower[0]), float(upper[0]), prior @ W


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
        The cvxpy solver for ``method="conic"`` (default CLARABEL).
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
    Certificate (Blahut 1972, Arimoto 1972; DESIGN §4): ``I(p, W) ≤ C ≤ max_x D(W_x ‖ pW)``.
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
    tolerance = _tolerance(tol)
    budget = _max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    if method not in METHODS:
        raise ParameterError(f"method must be one of {METHODS}, got {check.show(method)}")
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
        name = CONIC_SOLVERS[0] if solver is None else solver
        if name not in CONIC_SOLVERS:
            raise ParameterError(f"solver must be one of {CONIC_SOLVERS}, got {check.show(solver)}")
        start = time.perf_counter()
        from dpcap.solvers import conic  # cvxpy is imported there, lazily

        raw = conic.capacity_conic(reduction.matrix, solver=name, tol=tolerance)
        if raw.status in ("failed", "infeasible"):
            raise SolverError(f"{name} failed on the capacity program: {raw.message}")
        raw_lower, raw_upper, _ = certify(reduction.matrix, raw.prior)
        solution = blahut.solve(
            reduction.matrix[None], tol=tolerance, max_iter=budget, initial=raw.prior[None]
        )
        tag, iterations = f"conic/{name}", int(solution.iterations[0])
        note = (
            f"{name} reported {raw.objective:.12g} ({raw.status}) in "
            f"{time.perf_counter() - start:.3g} s; its own prior certifies "
            f"[{raw_lower:.12g}, {raw_upper:.12g}] (gap {raw_upper - raw_lower:.2g}), "
            "polished by the BA engine"
        )
        status_if_open = Status.INACCURATE
    prior = reduction.prior_back(solution.prior[0])
    lower, _, output = certify(matrix, prior)
    _, upper, _ = certify(matrix, reduction.prior_back(solution.upper_prior[0]))
    upper = max(upper, lower)
    status, message = conclude(upper - lower, tolerance, iterations, note, status_if_open)
    return CapacityResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=prior,
        output=output,
        status=status,
        iterations=iterations,
        method=tag,
        unit=unit,
        message=message,
        tol=tolerance,
    )


def conclude(
    gap: float,
    tol: float,
    iterations: int,
    note: str = "",
    open_status: Status = Status.MAX_ITER,
    stacklevel: int = 3,
) -> tuple[Status, str]:
    """Status and message of a certified bracket; warns when it did not close.

    Shared by every query that returns a bracket: ``converged`` iff ``gap <= tol``; otherwise
    ``open_status`` and a :class:`~dpcap.result.ConvergenceWarning` that says by how much,
    attributed ``stacklevel`` frames up (3: the caller of the public function that called this).
    """
    if gap <= tol:
        status = Status.CONVERGED
        head = f"certified gap {gap:.3g} nats <= tol {tol:.3g}"
    else:
        status = open_status
        head = (
            f"not converged: certified gap {gap:.3g} nats > tol {tol:.3g} "
            f"after {iterations} iterations"
        )
    message = f"{head}; {note}" if note else head
    if status is not Status.CONVERGED:
        warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel)
    return status, message


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
    tolerance = _tolerance(tol)
    budget = _max_iter(max_iter)
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
    _, lower, _ = blahut.bracket(stack, raw)
    *_, upper = blahut.bracket(stack, raw_upper)
    upper = np.maximum(upper, lower)
    q = np.einsum("bx,bxy->by", raw, stack)
    if ragged:
        for b, (rows, cols) in enumerate(shapes):
            prior[b, :rows] = raw[b, :rows]
            output[b, :cols] = q[b, :cols]
    else:
        prior, output = raw, q
    converged = upper - lower <= tolerance
    status = np.array([Status.CONVERGED if c else Status.MAX_ITER for c in converged], dtype=object)
    open_count = int((~converged).sum())
    message = (
        f"all {B} brackets closed to tol {tolerance:.3g}"
        if open_count == 0
        else f"{open_count} of {B} channels not converged after {budget} iterations"
    )
    if open_count:
        warnings.warn(message, ConvergenceWarning, stacklevel=2)
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
