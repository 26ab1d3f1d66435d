"""One status vocabulary for every engine, one map from each backend, and the solver names.

Every engine in ``dpcap.solvers`` reports how it stopped as an :class:`EngineStatus`; the
native codes of the backends it drives (cvxpy's status strings, ``scipy.optimize.linprog``'s
integers) are mapped here and nowhere else, in the manner of cvxpy's own backends. The query
layer turns an engine status into the user-facing ``dpcap.Status`` in one place
(``dpcap._core.certify``); an engine status is never a certificate: the query layer recomputes the
bracket from the returned objects whatever the engine said.

The names of the external solvers each engine can drive live here too, in preference order;
:func:`canonical` resolves a user's spelling case-insensitively.
"""

from __future__ import annotations

import enum

__all__ = [
    "CONIC_SOLVERS",
    "INFERENCE_SOLVERS",
    "LP_SOLVERS",
    "RENYI_SOLVERS",
    "EngineStatus",
    "canonical",
    "from_cvxpy",
    "from_linprog",
]


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
