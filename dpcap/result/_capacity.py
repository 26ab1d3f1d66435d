"""Results of the capacity queries (Shannon, cost, structured, g-, batched, Rényi profile)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import Status
from dpcap.result._base import ResultBase as _Result
from dpcap.result._base import SequenceBase as _Sequence
from dpcap.result._base import fmt as _fmt

if TYPE_CHECKING:  # pandas is imported lazily, by to_frame only
    import pandas as pd


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
    :mod:`dpcap.shannon.structured`). The attaining law on databases puts mass
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
