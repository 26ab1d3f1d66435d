"""The result of a calibration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcap.errors import Status
from dpcap.result._base import ResultBase, fmt, plain

if TYPE_CHECKING:  # pandas is imported lazily, by to_frame only
    pass


@dataclass(frozen=True, repr=False)
class CalibrationResult(ResultBase):
    """A parameter that meets a target, bracketed by one proven to miss it.

    Attributes
    ----------
    value : float
        The returned parameter ``θ_F``: its measure's certified upper end is ``≤ target``. The
        largest such value found for an increasing measure, the smallest for a decreasing one;
        NaN when no parameter in ``bounds`` is proven feasible (status ``infeasible``).
    lower, upper : float
        The parameter's bracket ``sorted(θ_F, θ_I)``; both ``θ_F`` when every parameter in
        ``bounds`` meets the target (``outcome == "bound"``).
    feasible, infeasible : float
        ``θ_F`` (= ``value``) and ``θ_I``: a parameter whose measure is proven above the target
        (``lower > target``), NaN when there is none. When a measure's bracket straddles the
        target at ``θ_I`` even after a tighter re-evaluation, ``θ_I`` is only *not proven
        feasible* and the status is ``inaccurate``.
    mechanism, measure_result : object or None
        The mechanism at ``value`` (in ``to_dict``: the family, database and arguments that
        rebuild it) and its measure (a result, or a closed-form float); None without a value.
    measure, param, family, database : str
        The query's name, the parameter's name, the family's ``module:name`` and how its output
        became a database mechanism (``""``: measured as built).
    target : float
    direction : str
        ``"increasing"``, ``"decreasing"`` or ``"unknown"`` (both ends meet the target and their
        measures are equal within their brackets).
    outcome : str
        ``"threshold"`` (a feasible and an infeasible parameter bracket the threshold),
        ``"bound"`` (every evaluated parameter is feasible: the end of ``bounds`` is returned) or
        ``"none"`` (no parameter in ``bounds`` is feasible).
    fixed : tuple of (str, object)
        The family's other arguments.
    trace : tuple of (float, float, float)
        ``(θ, lower, upper)`` of the measure at every parameter evaluated, in order.
    status : Status
        ``converged`` (bracket within ``tol``, or ``outcome`` ``"bound"``), ``infeasible``,
        ``max_iter`` (``max_evals`` ran out), ``inaccurate`` (θ_I not proven infeasible, or the
        parameter's floating-point resolution reached) or ``failed`` (the measure is not
        monotone: the message shows where).
    iterations, evaluations : int
        Search steps inside ``bounds``; calls of the measure (the two ends, the steps and any
        re-evaluation at a tighter ``tol``).
    method : str
        ``"itp"`` or ``"itp-log"`` (ITP in ``log θ``).
    unit : str
        The unit of ``target`` and of the measure (``""``: a probability, δ or TV).
    message : str
    tol, atol : float
        The requested parameter bracket: ``upper − lower ≤ max(tol·|value|, atol)``.
    """

    value: float
    lower: float
    upper: float
    feasible: float
    infeasible: float
    mechanism: Any
    measure_result: Any
    measure: str
    param: str
    family: str
    database: str
    target: float
    direction: str
    outcome: str
    fixed: tuple[tuple[str, Any], ...]
    trace: tuple[tuple[float, float, float], ...]
    status: Status
    iterations: int
    evaluations: int
    method: str
    unit: str
    message: str
    tol: float
    atol: float

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe; the mechanism as the arguments that rebuild it."""
        out = super().to_dict()
        out["fixed"] = {k: plain(v) for k, v in self.fixed}
        arguments = out["fixed"] | {self.param: self.value}
        rebuild = {"family": self.family, "database": self.database, "arguments": arguments}
        out["mechanism"] = None if self.mechanism is None else rebuild
        return out

    def __repr__(self) -> str:
        return (
            f"CalibrationResult({self.param}={fmt(self.value)}, "
            f"bracket=[{fmt(self.lower)}, {fmt(self.upper)}], "
            f"{self.measure} <= {fmt(self.target)} {self.unit}".rstrip()
            + f", status={self.status.value}, evaluations={self.evaluations})"
        )
