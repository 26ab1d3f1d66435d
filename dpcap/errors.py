"""Errors, warnings and the status vocabulary shared by every dpcap result.

One hierarchy for the whole library (``docs/mathematics.rst`` §8):

* invalid input raises a subclass of both :class:`DpcapError` and :class:`ValueError` whose
  message names the argument and echoes the offending value;
* a solver failure raises :class:`SolverError` carrying the :class:`Status`;
* a result that did not converge is returned with its status and a :class:`ConvergenceWarning`.

This module is the one place any part of dpcap imports an error from; :mod:`dpcap` re-exports
every name.
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
    "StoreWarning",
    "SweepInterrupted",
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


class StoreWarning(UserWarning):
    """A sweep store was opened or read with a note: a dead writer's lock taken over, a broken
    lock, a killed sweep's temporary files removed, a point stored twice read once."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`dpcap.sweep`: ``done`` of ``total`` grid points are in ``store``.

    A :class:`KeyboardInterrupt`, so code that stops on Ctrl-C still stops; calling
    :func:`dpcap.sweep` again with the same arguments resumes from the store.
    """

    def __init__(self, done: int, total: int, store: str | None) -> None:
        where = f"; they are in {store!r}: run the same sweep again to resume" if store else ""
        super().__init__(f"sweep interrupted: {done} of {total} grid points done{where}")
        self.done, self.total, self.store = done, total, store

    def __reduce__(self) -> tuple[type[SweepInterrupted], tuple[int, int, str | None]]:
        return type(self), (self.done, self.total, self.store)
