"""Errors, warnings and the status vocabulary shared by every dpcap result.

One hierarchy for the whole library (DESIGN §3):

* invalid input raises a subclass of both :class:`DpcapError` and :class:`ValueError` whose
  message names the argument and echoes the offending value;
* a solver failure raises :class:`SolverError` carrying the :class:`Status`;
* a result that did not converge is returned with its status and a :class:`ConvergenceWarning`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "CapacitiesResult",
    "CapacityResult",
    "ChannelError",
    "ConvergenceWarning",
    "CorrelatedLeakageResult",
    "DpcapError",
    "FunnelResult",
    "MIDPResult",
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


class SolverError(DpcapError, RuntimeError):
    """A numerical engine failed outright; ``status`` says how."""

    def __init__(self, message: str, status: Status = Status.FAILED) -> None:
        super().__init__(message)
        self.status = status


class ConvergenceWarning(UserWarning):
    """A result is returned whose bracket did not close to the requested tolerance."""


def _fmt(x: float) -> str:
    return f"{x:.12g}"


def _short(values: tuple[int, ...], limit: int = 12) -> str:
    if len(values) <= limit:
        return str(values)
    head = ", ".join(str(v) for v in values[:limit])
    return f"({head}, ... {len(values) - limit} more)"


@dataclass(frozen=True, repr=False)
class CapacityResult:
    """A certified capacity: ``lower ≤ C ≤ upper``, with the prior that attains ``lower``.

    Attributes
    ----------
    value : float
        The conservative end of the bracket, ``upper`` (a leakage is never under-reported).
    lower, upper : float
        The certificate: ``lower = I(prior, W) ≤ C ≤ upper = max_x D(W_x ‖ p'W)`` for a prior
        ``p'`` found by the engine. ``upper − lower ≤ tol`` when ``status`` is converged.
    prior : ndarray, shape (n_inputs,)
        An input law attaining ``lower``.
    output : ndarray, shape (n_outputs,)
        Its output law ``prior @ W``.
    status : Status
    iterations : int
    method : str
        ``"ba"`` or ``"conic/<SOLVER>"``.
    unit : str
        ``"nats"`` or ``"bits"`` (``value``, ``lower`` and ``upper`` are in this unit).
    message : str
    tol : float
        The requested gap, in nats.
    """

    value: float
    lower: float
    upper: float
    prior: NDArray[np.float64]
    output: NDArray[np.float64]
    status: Status
    iterations: int
    method: str
    unit: str
    message: str
    tol: float

    @property
    def gap(self) -> float:
        """``upper − lower`` (in ``unit``)."""
        return self.upper - self.lower

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return (
            f"CapacityResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], status={self.status.value}, "
            f"iterations={self.iterations}, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class CapacitiesResult:
    """Certified capacities of a batch: the fields of :class:`CapacityResult` as arrays.

    ``prior`` and ``output`` have shape ``(B, max n_inputs)`` and ``(B, max n_outputs)``; for a
    ragged batch the entries beyond an element's own size are NaN. ``status`` is an array of
    :class:`Status` (one per element); ``result[i]`` is element i as a :class:`CapacityResult`.
    """

    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    prior: NDArray[np.float64]
    output: NDArray[np.float64]
    status: NDArray[np.object_]
    iterations: NDArray[np.int64]
    method: str
    unit: str
    message: str
    tol: float
    shapes: tuple[tuple[int, int], ...]

    @property
    def converged(self) -> NDArray[np.bool_]:
        """Whether each element's bracket closed to ``tol``."""
        return np.array([s is Status.CONVERGED for s in self.status], dtype=bool)

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: int) -> CapacityResult:
        nx, ny = self.shapes[i]
        status = self.status[i]
        return CapacityResult(
            value=float(self.value[i]),
            lower=float(self.lower[i]),
            upper=float(self.upper[i]),
            prior=self.prior[i, :nx].copy(),
            output=self.output[i, :ny].copy(),
            status=status,
            iterations=int(self.iterations[i]),
            method=self.method,
            unit=self.unit,
            message=self.message,
            tol=self.tol,
        )

    def __repr__(self) -> str:
        done = int(self.converged.sum())
        return (
            f"CapacitiesResult({len(self)} channels, {done} converged, "
            f"values in [{_fmt(float(np.min(self.value)))}, {_fmt(float(np.max(self.value)))}] "
            f"{self.unit}, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class MIDPResult:
    """Mutual-information DP level ``max_i sup_P I(X_i; Y | X^{-i})`` (Cuff & Yu, Def. 2).

    ``value`` is ``upper``, the conservative end of the bracket. The witness is the ``entry``
    (a tuple of entries for a group), the ``context`` (values of the other entries, in order)
    and the ``prior`` on the entry's values that attains ``lower`` in that slice. ``per_entry``
    holds, for each entry (or the group), the upper end of its own bracket (personalised MI-DP,
    Cuff & Yu §6.1); ``per_entry_lower`` the lower ends.
    """

    value: float
    lower: float
    upper: float
    entry: int | tuple[int, ...]
    context: tuple[int, ...]
    prior: NDArray[np.float64]
    per_entry: NDArray[np.float64]
    per_entry_lower: NDArray[np.float64]
    status: Status
    iterations: int
    slices: int
    method: str
    unit: str
    message: str
    tol: float

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return (
            f"MIDPResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], entry={self.entry}, "
            f"context={_short(self.context)}, status={self.status.value}, "
            f"distinct slices={self.slices})"
        )


@dataclass(frozen=True, repr=False)
class CorrelatedLeakageResult:
    """``sup_{P_{X^n}} I(X_i; Y)``: leakage to an adversary without side information.

    The witness: for each value ``a`` of ``X_i``, the context ``rows[a]`` (values of the other
    entries) whose database carries the mass, and the ``prior`` on ``X_i``; together they define
    a law on ``X^n`` (``P(a, rows[a]) = prior[a]``) attaining ``lower``.
    """

    value: float
    lower: float
    upper: float
    entry: int
    rows: tuple[tuple[int, ...], ...]
    prior: NDArray[np.float64]
    status: Status
    iterations: int
    method: str
    unit: str
    message: str
    tol: float

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return (
            f"CorrelatedLeakageResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], entry={self.entry}, "
            f"status={self.status.value})"
        )


@dataclass(frozen=True, repr=False)
class DistortionResult:
    """One point of a distortion trade-off: a certified value and the mechanism attaining it.

    Used by ``rate_distortion`` (``value`` = R(D)), ``mi_privacy_distortion``,
    ``privacy_distortion`` (``value`` = ε*(D)) and ``optimal_mechanism`` (``value`` = the least
    expected loss). ``value`` is the conservative end of ``[lower, upper]`` for the problem at
    hand (documented per function). ``mechanism`` is re-verified: ``distortion_achieved`` is its
    expected distortion under the prior and ``dp_level`` its exact ε-DP level, both recomputed
    from the matrix. ``slope`` is ``s`` with ``dR/dD = −s`` where meaningful (else NaN).
    ``target`` is the requested D (or ε); ``details`` holds method-specific numbers (for
    instance the repair weight applied to an LP's mechanism).
    """

    value: float
    lower: float
    upper: float
    mechanism: NDArray[np.float64]
    target: float
    distortion_achieved: float
    dp_level: float
    slope: float
    status: Status
    iterations: int
    method: str
    unit: str
    message: str
    tol: float
    details: tuple[tuple[str, float], ...] = ()

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return (
            f"DistortionResult(value={_fmt(self.value)} {self.unit}, bracket=[{_fmt(self.lower)}, "
            f"{_fmt(self.upper)}], target={_fmt(self.target)}, "
            f"distortion={_fmt(self.distortion_achieved)}, dp_level={_fmt(self.dp_level)}, "
            f"status={self.status.value}, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class CurveResult:
    """A sampled trade-off curve: arrays over the sample points, plus the point results.

    ``x`` are the abscissae (distortion levels D, or utility levels R), ``value``, ``lower``
    and ``upper`` the certified ordinates, ``status`` one :class:`Status` per point and
    ``points[k]`` the full :class:`DistortionResult` (with its mechanism) of point k.
    """

    x: NDArray[np.float64]
    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    status: NDArray[np.object_]
    points: tuple[DistortionResult, ...]
    method: str
    unit: str
    message: str

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, k: int) -> DistortionResult:
        return self.points[k]

    def __repr__(self) -> str:
        done = sum(s is Status.CONVERGED for s in self.status)
        return (
            f"CurveResult({len(self)} points, x in [{_fmt(float(self.x.min()))}, "
            f"{_fmt(float(self.x.max()))}], {done} converged, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class FunnelResult:
    """One point of the privacy–utility region of a Markov chain ``S − X − Y``, with its mechanism.

    Used by ``privacy_funnel`` (``value`` = PF(R) = min I(S;Y) s.t. I(X;Y) ≥ R),
    ``information_bottleneck`` (``value`` = IB(R) = max I(S;Y) s.t. I(X;Y) ≤ R) and
    ``perfect_privacy`` (``value`` = g₀ = max I(X;Y) s.t. I(S;Y) = 0). ``value`` is always the
    end of ``[lower, upper]`` that ``mechanism`` achieves: ``upper`` for the funnel, ``lower``
    for the bottleneck and for g₀. ``mechanism`` is ``P_{Y|X}`` (rows are the values of X) and
    ``utility_achieved`` = I(X;Y), ``leakage_achieved`` = I(S;Y) are recomputed from it; it is
    feasible (``utility_achieved ≥ target`` for the funnel, ``≤ target`` for the bottleneck).
    ``target`` is the requested R (0 for perfect privacy). ``slope`` is the multiplier ν of the
    utility constraint in the certificate (``dPF/dR``, ``dIB/dR``; NaN where there is none).
    ``problem`` names the problem; ``details`` holds method-specific numbers.
    """

    value: float
    lower: float
    upper: float
    mechanism: NDArray[np.float64]
    target: float
    utility_achieved: float
    leakage_achieved: float
    slope: float
    status: Status
    iterations: int
    problem: str
    method: str
    unit: str
    message: str
    tol: float
    details: tuple[tuple[str, float], ...] = ()

    @property
    def gap(self) -> float:
        """``upper − lower`` (in ``unit``)."""
        return self.upper - self.lower

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return (
            f"FunnelResult({self.problem}: value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], target={_fmt(self.target)}, "
            f"I(X;Y)={_fmt(self.utility_achieved)}, I(S;Y)={_fmt(self.leakage_achieved)}, "
            f"outputs={self.mechanism.shape[1]}, status={self.status.value}, "
            f"method={self.method!r})"
        )
