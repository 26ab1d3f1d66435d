"""Errors, warnings and the status vocabulary shared by every dpcap result.

One hierarchy for the whole library (``docs/mathematics.rst`` §8):

* invalid input raises a subclass of both :class:`DpcapError` and :class:`ValueError` whose
  message names the argument and echoes the offending value;
* a solver failure raises :class:`SolverError` carrying the :class:`Status`;
* a result that did not converge is returned with its status and a :class:`ConvergenceWarning`.

Everything here is re-exported by :mod:`dpcap.result` and :mod:`dpcap`.
"""

from __future__ import annotations

import enum

__all__ = [
    "ChannelError",
    "ConvergenceWarning",
    "DpcapError",
    "MechanismError",
    "NeighborError",
    "ParameterError",
    "PriorError",
    "ProblemTooLargeError",
    "SolverError",
    "Status",
]


class DpcapError(Exception):
    """Base class of every error raised by dpcap."""


class ChannelError(DpcapError, ValueError):
    """A channel matrix is not a valid stochastic matrix (shape, sign, NaN, row sums)."""


class MechanismError(DpcapError, ValueError):
    """A database mechanism is inconsistent with its domain (``shape``, entry, context)."""


class PriorError(DpcapError, ValueError):
    """A probability vector or law (prior, joint) is not a distribution of the right shape."""


class ParameterError(DpcapError, ValueError):
    """A scalar or array parameter (ε, δ, α, γ, k, a unit, …) is out of its range."""


class NeighborError(DpcapError, ValueError):
    """A neighbour relation is unknown or malformed."""


class ProblemTooLargeError(DpcapError, ValueError):
    """A problem would need more memory or work than dpcap allows for a dense computation."""


class Status(enum.Enum):
    """Outcome of a numerical solve, one vocabulary for every engine."""

    CONVERGED = "converged"
    MAX_ITER = "max_iter"
    INACCURATE = "inaccurate"
    INFEASIBLE = "infeasible"
    FAILED = "failed"

    @property
    def ok(self) -> bool:
        """Whether the bracket met the requested tolerance."""
        return self is Status.CONVERGED

    def __str__(self) -> str:
        return self.value


class SolverError(DpcapError, RuntimeError):
    """A numerical engine failed outright; ``status`` says how."""

    def __init__(self, message: str, status: Status = Status.FAILED) -> None:
        super().__init__(message)
        self.status = status


class ConvergenceWarning(UserWarning):
    """A result is returned whose bracket did not close to the requested tolerance."""
