"""The results of every query: one frozen dataclass per problem family, same field names.

Points have float ``value``/``lower``/``upper`` (``lower ≤ true ≤ upper``; ``value`` the
conservative end), the attaining object, ``status``, ``iterations``, ``method``, ``unit``,
``message`` and ``tol``. Curves and batches hold the same fields as arrays (one status per
point), name their x-axis by its meaning (``D``, ``R``, ``alpha``), and are sequences whose
elements are the point results. Every result has ``gap``, ``to_dict()`` (JSON-safe: statuses
as strings, arrays as lists, ∞ kept as ``inf``) and ``to_frame()`` (pandas, imported lazily).

The errors, :class:`Status` and :class:`ConvergenceWarning` live in :mod:`dpcap.errors` and are
re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from dpcap._result_base import ResultBase as _Result
from dpcap._result_base import SequenceBase as _Sequence
from dpcap._result_base import fmt as _fmt
from dpcap._result_base import short as _short
from dpcap.errors import (
    ChannelError,
    ConvergenceWarning,
    DpcapError,
    MechanismError,
    NeighborError,
    ParameterError,
    PriorError,
    ProblemTooLargeError,
    SolverError,
    Status,
)

if TYPE_CHECKING:  # pandas is imported lazily, by to_frame only
    import pandas as pd

__all__ = [
    "CapacitiesResult",
    "CapacityResult",
    "ChannelError",
    "ConvergenceWarning",
    "CorrelatedLeakageResult",
    "CostCapacityResult",
    "CurveResult",
    "DistortionResult",
    "DpcapError",
    "FunnelCurve",
    "FunnelResult",
    "GainCapacityResult",
    "MIDPResult",
    "MechanismError",
    "NeighborError",
    "ParameterError",
    "PriorError",
    "ProblemTooLargeError",
    "RenyiProfile",
    "SolverError",
    "Status",
    "StructuredCapacityResult",
]


@dataclass(frozen=True, repr=False)
class CapacityResult(_Result):
    """A certified capacity: ``lower ≤ C ≤ upper``, with the prior that attains ``lower``.

    Attributes
    ----------
    value : float
        The conservative end of the bracket, ``upper`` (a leakage is never under-reported).
    lower, upper : float
        The certificate: ``lower = I(prior, W) ≤ C ≤ upper = max_x D(W_x ‖ p'W)`` for a prior
        ``p'`` found by the engine. ``upper − lower ≤ tol`` when ``status`` is converged.
    prior : ndarray, shape (n_inputs,)
        An input law attaining ``lower`` (for an additive mechanism of more than 2^20
        databases, empty: :class:`StructuredCapacityResult` holds the law in sparse form).
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

    def __repr__(self) -> str:
        return (
            f"CapacityResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], status={self.status.value}, "
            f"iterations={self.iterations}, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class StructuredCapacityResult(CapacityResult):
    """A :class:`CapacityResult` of an additive mechanism, solved on its totals.

    The bracket, ``status``, ``iterations``, ``method`` and ``output`` are those of the reduced
    channel (the noise rows of the reachable totals), which has the same capacity (see
    :mod:`dpcap.structured_capacity`). The attaining law on databases puts mass
    ``total_prior[k]`` on the database ``databases[k]``, the lexicographically first one whose
    total is ``totals[k]``.

    Attributes
    ----------
    prior : ndarray, shape (n_inputs,) or (0,)
        That law as a dense vector over the databases in C order when the mechanism's dense
        matrix is within dpcap's memory limit (``n_inputs × n_outputs ≤ 2^27``, when
        ``prior @ M.matrix`` can be formed); otherwise empty (shape ``(0,)``): a law on, say,
        ``2^40`` databases has no dense form, and ``totals``, ``total_prior`` and
        ``databases`` hold it.
    totals : ndarray of int64, shape (k,)
        The reachable totals ``Σ_i s_i(x_i)``, increasing.
    total_prior : ndarray, shape (k,)
        The attaining law of the total (the reduced channel's optimal prior).
    databases : ndarray of int64, shape (k, n_entries)
        ``databases[j]`` is the lexicographically first database with total ``totals[j]``.
    """

    totals: NDArray[np.int64]
    total_prior: NDArray[np.float64]
    databases: NDArray[np.int64]

    def __repr__(self) -> str:
        return (
            f"StructuredCapacityResult(value={self.value:.12g} {self.unit}, "
            f"bracket=[{self.lower:.12g}, {self.upper:.12g}], status={self.status.value}, "
            f"iterations={self.iterations}, method={self.method!r}, "
            f"totals={len(self.totals)})"
        )


@dataclass(frozen=True, repr=False)
class CostCapacityResult(CapacityResult):
    """A certified capacity under an input cost: ``lower ≤ C(P) ≤ upper``.

    ``C(P) = max {I(p, W) : Σ_x p_x c_x ≤ P, p_x = 0 where c_x > peak}`` (the capacity–cost
    function; ``docs/mathematics.rst`` §12). ``lower = I(prior, W)`` at a prior that meets the
    budget exactly; ``upper = s·P + max_x [D(W_x ‖ Q) − s c_x]`` for the multiplier ``s`` and
    an output law ``Q`` found by the search (the dual certificate).

    Attributes
    ----------
    prior : ndarray, shape (n_inputs,)
        A prior on all inputs (0 on those above ``peak``) with ``Σ_x p_x c_x ≤ budget`` in
        exact arithmetic, attaining ``lower``.
    cost : ndarray, shape (n_inputs,)
        The costs ``c_x`` as given.
    budget : float
        ``P``; ``inf`` when only a peak was given.
    peak : float
        The largest cost an input may have to be used; ``inf`` when none was given.
    expected_cost : float
        ``Σ_x p_x c_x`` of ``prior``, the exact value rounded to the nearest float (so never
        above ``budget``).
    multiplier : float
        The Lagrange multiplier ``s ≥ 0`` of the dual certificate (``upper`` at ``s``), in
        ``unit`` per unit of cost: 0 when the budget does not bind, ``inf`` when it only
        allows the cheapest inputs.
    """

    cost: NDArray[np.float64]
    budget: float
    peak: float
    expected_cost: float
    multiplier: float

    def __repr__(self) -> str:
        return (
            f"CostCapacityResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], status={self.status.value}, "
            f"budget={self.budget:.6g}, expected_cost={self.expected_cost:.6g}, "
            f"multiplier={self.multiplier:.6g}, method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class GainCapacityResult(_Result):
    """A certified g-capacity or risk capacity over priors: ``lower ≤ capacity ≤ upper``.

    The largest leakage of a channel over every prior, for one gain (or loss) matrix
    (``docs/mathematics.rst`` §9): ``kind="multiplicative"`` is ``max_π V_g[π▷W] / V_g(π)``
    (``max_π U_ℓ(π) / U_ℓ[π▷W]`` for a loss), ``kind="additive"`` the largest difference.

    Attributes
    ----------
    value : float
        The conservative end of the bracket, ``upper`` (∞ for an unbounded risk ratio).
    lower, upper : float
        ``lower`` is the leakage of ``prior`` re-evaluated by dpcap, moved down by its rounding
        bound; ``upper`` the smallest of the valid upper bounds found (a closed form, the
        miracle theorems, or the branch-and-bound bound, widened by the solver's tolerances).
    prior : ndarray, shape (n_secrets,)
        A prior attaining ``lower``.
    guesses : ndarray of int64, shape (n_outputs,)
        An optimal guess (row of the gain or loss matrix; for the identity gain and the 0-1
        loss, the guessed secret) for each output at ``prior``.
    kind : str
        ``"multiplicative"`` or ``"additive"``.
    measure : str
        ``"gain"`` (a g-capacity) or ``"loss"`` (a risk capacity).
    status : Status
    iterations : int
        Branch-and-bound nodes (0 for a closed form).
    method : str
        ``"closed form"``, ``"bounds"`` (the cheap bounds met) or ``"milp/HiGHS"``.
    unit : str
        ``"ratio"`` (multiplicative) or the measure's own units, ``"gain"`` or ``"loss"``.
    message : str
    tol : float
        The requested gap, relative to ``upper`` (multiplicative) or to the range of the gain
        or loss (additive).
    """

    value: float
    lower: float
    upper: float
    prior: NDArray[np.float64]
    guesses: NDArray[np.int64]
    kind: str
    measure: str
    status: Status
    iterations: int
    method: str
    unit: str
    message: str
    tol: float

    def __repr__(self) -> str:
        return (
            f"GainCapacityResult({self.kind} {self.measure}: value={_fmt(self.value)} "
            f"{self.unit}, bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], "
            f"status={self.status.value}, iterations={self.iterations}, "
            f"method={self.method!r})"
        )


@dataclass(frozen=True, repr=False)
class CapacitiesResult(_Sequence):
    """Certified capacities of a batch: the fields of :class:`CapacityResult` as arrays.

    ``prior`` and ``output`` have shape ``(B, max n_inputs)`` and ``(B, max n_outputs)``; for a
    ragged batch the entries beyond an element's own size are NaN. ``status`` is an array of
    :class:`Status` (one per element); ``result[i]`` is element i as a :class:`CapacityResult`.
    ``messages`` holds each element's own message where the batch was concluded element by
    element (a list of channels, as :func:`dpcap.capacity` concludes each); ``message`` is the
    batch's.
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
    messages: tuple[str, ...] = ()

    def _point(self, i: int) -> CapacityResult:
        nx, ny = self.shapes[i]
        return CapacityResult(
            value=float(self.value[i]),
            lower=float(self.lower[i]),
            upper=float(self.upper[i]),
            prior=self.prior[i, :nx].copy(),
            output=self.output[i, :ny].copy(),
            status=self.status[i],
            iterations=int(self.iterations[i]),
            method=self.method,
            unit=self.unit,
            message=self.messages[i] if self.messages else self.message,
            tol=self.tol,
        )

    def __getitem__(self, i: int) -> CapacityResult:
        result: CapacityResult = super().__getitem__(i)
        return result

    def to_frame(self) -> pd.DataFrame:
        """One row per channel, with its ``n_inputs`` and ``n_outputs``."""
        frame = super().to_frame()
        frame["n_inputs"] = [s[0] for s in self.shapes]
        frame["n_outputs"] = [s[1] for s in self.shapes]
        frame["prior"] = [self[i].prior.tolist() for i in range(len(self))]
        frame["output"] = [self[i].output.tolist() for i in range(len(self))]
        return frame

    def __repr__(self) -> str:
        done = int(self.converged.sum())
        return (
            f"CapacitiesResult({len(self)} channels, {done} converged, "
            f"values in [{_fmt(float(np.min(self.value)))}, {_fmt(float(np.max(self.value)))}] "
            f"{self.unit}, method={self.method!r})"
        )


def _order_method(alpha: float, engine: str) -> str:
    """How a profile solved order α: closed form at ∞, linear programmes at 0, else the engine."""
    if math.isinf(alpha):
        return "closed form (order inf)"
    if alpha == 0.0:
        return "lp (order 0)"
    return f"{engine} (order {alpha:g})"


@dataclass(frozen=True, repr=False)
class RenyiProfile(_Sequence):
    """``α ↦ C_α`` over a grid, with the certified brackets and the diameter band.

    ``value``, ``lower``, ``upper`` and ``diameter`` (``max_{x,x'} D_α(W_x ‖ W_x')``, an upper
    bound on the naive α-information) are arrays over ``alpha``; ``prior`` has one row per α;
    ``status`` one :class:`Status` per α; ``profile[k]`` is the :class:`CapacityResult` of
    order ``alpha[k]``.
    """

    axis: ClassVar[str] = "alpha"

    alpha: NDArray[np.float64]
    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    diameter: NDArray[np.float64]
    prior: NDArray[np.float64]
    output: NDArray[np.float64]
    status: NDArray[np.object_]
    iterations: NDArray[np.int64]
    method: str
    unit: str
    message: str
    tol: float

    def _point(self, i: int) -> CapacityResult:
        return CapacityResult(
            value=float(self.value[i]),
            lower=float(self.lower[i]),
            upper=float(self.upper[i]),
            prior=self.prior[i].copy(),
            output=self.output[i].copy(),
            status=self.status[i],
            iterations=int(self.iterations[i]),
            method=_order_method(float(self.alpha[i]), self.method),
            unit=self.unit,
            message=self.message,
            tol=self.tol,
        )

    def __getitem__(self, i: int) -> CapacityResult:
        result: CapacityResult = super().__getitem__(i)
        return result

    def __repr__(self) -> str:
        done = int(self.converged.sum())
        return (
            f"RenyiProfile({len(self)} orders in [{self.alpha.min():.3g}, "
            f"{self.alpha.max():.3g}], {done} converged, unit={self.unit!r})"
        )


@dataclass(frozen=True, repr=False)
class MIDPResult(_Result):
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

    def __repr__(self) -> str:
        return (
            f"MIDPResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], entry={self.entry}, "
            f"context={_short(self.context)}, status={self.status.value}, "
            f"distinct slices={self.slices})"
        )


@dataclass(frozen=True, repr=False)
class CorrelatedLeakageResult(_Result):
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

    def __repr__(self) -> str:
        return (
            f"CorrelatedLeakageResult(value={_fmt(self.value)} {self.unit}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], entry={self.entry}, "
            f"status={self.status.value})"
        )


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
