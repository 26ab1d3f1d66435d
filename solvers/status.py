"""One status vocabulary for every engine, one map from each backend, and the solver names.

Every engine in ``dpcap.solvers`` reports how it stopped as an :class:`EngineStatus`; the
native codes of the backends it drives (cvxpy's status strings, ``scipy.optimize.linprog``'s
integers) are mapped here and nowhere else, in the manner of cvxpy's own backends. The query
layer turns an engine status into the user-facing ``dpcap.Status`` in one place
(``dpcap._core.certify``); an engine status is never a certificate: the query layer recomputes the
bracket from the returned objects whatever the engine said.

Every engine's raw result follows one protocol, :class:`Solution`: ``status``, ``message`` and
``iterations``, with one convention for the batched engines (one status per element).

The names of the external solvers each engine can drive live here too, in preference order;
:func:`canonical` resolves a user's spelling case-insensitively.
"""

from __future__ import annotations

import enum
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CONIC_SOLVERS",
    "INFERENCE_SOLVERS",
    "LP_SOLVERS",
    "RENYI_SOLVERS",
    "EngineStatus",
    "Solution",
    "batch_message",
    "by_element",
    "canonical",
    "cvxpy_iterations",
    "from_cvxpy",
    "from_linprog",
    "statuses",
]

ObjectArray = NDArray[np.object_]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


class EngineStatus(enum.Enum):
    """How an engine stopped.

    ``OPTIMAL``: its own stopping rule was met. ``MAX_ITER``: it spent its iteration budget.
    ``MAX_CELLS``: a refinement spent its budget of cells (the envelope mesh). ``STALLED``: its
    certified gap stopped shrinking (rounding limits what it can resolve). ``LOCAL``: a local
    method with no global certificate of its own. ``INACCURATE``: a backend returned a point it
    flags as inaccurate (or capped by a user limit). ``INFEASIBLE`` and ``FAILED``: no usable
    point.
    """

    OPTIMAL = "optimal"
    MAX_ITER = "max_iter"
    MAX_CELLS = "max_cells"
    STALLED = "stalled"
    LOCAL = "local"
    INACCURATE = "inaccurate"
    INFEASIBLE = "infeasible"
    FAILED = "failed"

    @property
    def usable(self) -> bool:
        """Whether the engine returned a point that can be certified."""
        return self not in (EngineStatus.INFEASIBLE, EngineStatus.FAILED)


#: cvxpy status strings → engine status. ``user_limit`` (an iteration or time cap) still carries
#: a solution: inaccurate. ``unbounded`` cannot happen for the bounded programs dpcap builds; it
#: is a solver failure.
_CVXPY: dict[str, EngineStatus] = {
    "optimal": EngineStatus.OPTIMAL,
    "optimal_inaccurate": EngineStatus.INACCURATE,
    "user_limit": EngineStatus.INACCURATE,
    "infeasible": EngineStatus.INFEASIBLE,
    "infeasible_inaccurate": EngineStatus.INFEASIBLE,
    "infeasible_or_unbounded": EngineStatus.INFEASIBLE,
    "unbounded": EngineStatus.FAILED,
    "unbounded_inaccurate": EngineStatus.FAILED,
    "solver_error": EngineStatus.FAILED,
}

#: ``scipy.optimize.linprog`` (HiGHS) status codes → engine status: 0 optimal, 1 iteration
#: limit, 2 infeasible, 3 unbounded, 4 numerical difficulties.
_LINPROG: dict[int, EngineStatus] = {
    0: EngineStatus.OPTIMAL,
    1: EngineStatus.INACCURATE,
    2: EngineStatus.INFEASIBLE,
    3: EngineStatus.FAILED,
    4: EngineStatus.INACCURATE,
}


@runtime_checkable
class Solution(Protocol):
    """The protocol every engine's raw result follows: how it stopped, in its words, after how much.

    Attributes
    ----------
    status : EngineStatus or (B,) object array of EngineStatus
        How the engine stopped. A single problem has one :class:`EngineStatus`. A batched engine
        (:class:`~dpcap.solvers.blahut.BatchSolution`,
        :class:`~dpcap.solvers.ratedistortion.SlopeSolution`) has one per element, in an object
        array of the batch's length ``B`` (as SciPy's vectorised solvers report one flag per
        element): ``OPTIMAL`` where the element met the stopping rule, ``MAX_ITER`` where it spent
        the budget. :func:`statuses` gives the per-element array for either kind.
    message : str
        What the engine (or the backend it drove) says about the stop; ``""`` when nothing. One
        string for the whole batch.
    iterations : int or (B,) int64 array
        The engine's own count of its steps (iterations, Newton steps, LP solves, a backend's
        reported iterations or nodes), ``>= 0``; one per element for a batch. An engine with no
        such notion, or whose backend does not report one, says 0 and documents it.

    Notes
    -----
    A status is never a certificate: the query layer recomputes every bracket and turns the
    status into the user's one in one place (``dpcap._core.certify.status_of``).
    """

    @property
    def status(self) -> EngineStatus | ObjectArray: ...

    @property
    def message(self) -> str: ...

    @property
    def iterations(self) -> int | IntArray: ...


def by_element(converged: BoolArray) -> ObjectArray:
    """The per-element statuses of a batch: ``OPTIMAL`` where ``converged``, else ``MAX_ITER``.

    For the batched engines, which stop an element only when it meets the stopping rule or when
    the iteration budget is spent.
    """
    out = np.full(len(converged), EngineStatus.MAX_ITER, dtype=object)
    out[np.asarray(converged, dtype=bool)] = EngineStatus.OPTIMAL
    return out


def batch_message(converged: BoolArray, tol: float, max_iter: int) -> str:
    """The one message of a batch: how many elements met ``tol`` and how many spent the budget."""
    total, done = len(converged), int(np.count_nonzero(converged))
    if done == total:
        return f"all {total} elements met tol={tol:g}"
    return f"{total - done} of {total} elements spent max_iter={max_iter} before tol={tol:g}"


def statuses(solution: Solution) -> ObjectArray:
    """A solution's statuses as a (B,) object array: the batch's own, or one for a single problem.

    Raises
    ------
    TypeError
        If ``status`` is neither an :class:`EngineStatus` nor an array of them.
    """
    status = solution.status
    out = np.empty(1 if isinstance(status, EngineStatus) else len(status), dtype=object)
    out[:] = [status] if isinstance(status, EngineStatus) else list(status)
    if not all(isinstance(s, EngineStatus) for s in out):
        raise TypeError(f"a solution's status must be EngineStatus values; got {status!r}")
    return out


def cvxpy_iterations(problem: object) -> int:
    """The iterations of a cvxpy problem's last solve (``solver_stats.num_iters``; 0 if none)."""
    stats = getattr(problem, "solver_stats", None)
    count = getattr(stats, "num_iters", None)
    return int(count) if count else 0


def from_cvxpy(status: object) -> EngineStatus:
    """The engine status of a cvxpy ``problem.status`` (unknown strings are failures)."""
    return _CVXPY.get(str(status), EngineStatus.FAILED)


def from_linprog(code: object) -> EngineStatus:
    """The engine status of a ``scipy.optimize.linprog`` result's ``status`` code."""
    try:
        return _LINPROG.get(int(code), EngineStatus.FAILED)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return EngineStatus.FAILED


#: Conic solvers for the capacity program (exponential cones), in preference order.
CONIC_SOLVERS: tuple[str, ...] = ("CLARABEL", "ECOS", "SCS")

#: The conic solvers that accept power cones (Rényi capacity); ECOS handles only linear,
#: second-order and exponential cones.
RENYI_SOLVERS: tuple[str, ...] = ("CLARABEL", "SCS")

#: Backends of the optimal-mechanism linear program, in preference order.
LP_SOLVERS: tuple[str, ...] = ("CLARABEL", "HIGHS", "ECOS", "SCS")

#: Conic solvers for the inference-privacy program (exponential cones).
INFERENCE_SOLVERS: tuple[str, ...] = ("CLARABEL", "ECOS", "SCS")


def canonical(name: object, allowed: tuple[str, ...]) -> str | None:
    """The canonical spelling of a solver ``name`` among ``allowed`` (case-insensitive).

    Returns None when ``name`` is not a string or names none of them; the caller raises its
    own error, naming its argument.
    """
    if not isinstance(name, str):
        return None
    upper = name.upper()
    return upper if upper in allowed else None
