"""Results of the trade-off queries (distortion points and curves, funnel and bottleneck)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import Status
from dpcap.result._base import ResultBase as _Result
from dpcap.result._base import SequenceBase as _Sequence
from dpcap.result._base import fmt as _fmt

if TYPE_CHECKING:  # pandas is imported lazily, by to_frame only
    pass


@dataclass(frozen=True, repr=False)
class DistortionResult(_Result):
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

    def __repr__(self) -> str:
        return (
            f"DistortionResult(value={_fmt(self.value)} {self.unit}, bracket=[{_fmt(self.lower)}, "
            f"{_fmt(self.upper)}], target={_fmt(self.target)}, "
            f"distortion={_fmt(self.distortion_achieved)}, dp_level={_fmt(self.dp_level)}, "
            f"status={self.status.value}, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class CurveResult(_Sequence):
    """A sampled distortion trade-off curve: arrays over the points, plus the point results.

    ``D`` are the distortion levels of the points, ``value``, ``lower`` and ``upper`` the
    certified ordinates (R(D) or ε*(D), in ``unit``), ``status`` one :class:`Status` per point,
    ``iterations`` the engine iterations per point, and ``curve[k]`` (also ``points[k]``) the
    full :class:`DistortionResult` of point k, with its mechanism.
    """

    axis: ClassVar[str] = "D"

    D: NDArray[np.float64]
    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    status: NDArray[np.object_]
    iterations: NDArray[np.int64]
    points: tuple[DistortionResult, ...]
    method: str
    unit: str
    message: str
    tol: float

    def __getitem__(self, i: int) -> DistortionResult:
        result: DistortionResult = super().__getitem__(i)
        return result

    def __repr__(self) -> str:
        done = int(self.converged.sum())
        return (
            f"CurveResult({len(self)} points, D in [{_fmt(float(self.D.min()))}, "
            f"{_fmt(float(self.D.max()))}], {done} converged, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class FunnelResult(_Result):
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

    def __repr__(self) -> str:
        return (
            f"FunnelResult({self.problem}: value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], target={_fmt(self.target)}, "
            f"I(X;Y)={_fmt(self.utility_achieved)}, I(S;Y)={_fmt(self.leakage_achieved)}, "
            f"outputs={self.mechanism.shape[1]}, status={self.status.value}, "
            f"method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class FunnelCurve(_Sequence):
    """A sampled privacy funnel or information bottleneck curve over ``R ∈ [0, H(X)]``.

    ``R`` are the utility levels, ``value``, ``lower`` and ``upper`` the certified ordinates
    (in ``unit``), ``utility`` and ``leakage`` the ``I(X;Y)`` and ``I(S;Y)`` of each point's
    mechanism, ``status`` one :class:`Status` per point, ``iterations`` per point, and
    ``curve[k]`` (also ``points[k]``) the full :class:`FunnelResult` of point k (with its
    mechanism). ``problem`` is ``"privacy_funnel"`` or ``"information_bottleneck"``.
    """

    axis: ClassVar[str] = "R"

    R: NDArray[np.float64]
    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    utility: NDArray[np.float64]
    leakage: NDArray[np.float64]
    status: NDArray[np.object_]
    iterations: NDArray[np.int64]
    points: tuple[FunnelResult, ...]
    problem: str
    method: str
    unit: str
    message: str
    tol: float

    def __getitem__(self, i: int) -> FunnelResult:
        result: FunnelResult = super().__getitem__(i)
        return result

    def __repr__(self) -> str:
        done = int(self.converged.sum())
        largest = float(np.max(self.upper - self.lower)) if len(self) else math.nan
        return (
            f"FunnelCurve({self.problem}, {len(self)} points, R in [{float(self.R.min()):.6g}, "
            f"{float(self.R.max()):.6g}] {self.unit}, {done} converged, "
            f"largest gap {largest:.3g}, method={self.method!r})"
        )


def curve_arrays(points: tuple[Any, ...]) -> dict[str, NDArray[Any]]:
    """The shared array fields of a curve from its point results: value, lower, upper, status,
    iterations (one entry per point)."""
    status = np.empty(len(points), dtype=object)
    status[:] = [p.status for p in points]
    return {
        "value": np.array([p.value for p in points], dtype=np.float64),
        "lower": np.array([p.lower for p in points], dtype=np.float64),
        "upper": np.array([p.upper for p in points], dtype=np.float64),
        "status": status,
        "iterations": np.array([p.iterations for p in points], dtype=np.int64),
    }
