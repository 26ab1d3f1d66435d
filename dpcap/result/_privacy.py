"""Results of the MI-DP queries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import Status
from dpcap.result._base import ResultBase as _Result
from dpcap.result._base import fmt as _fmt
from dpcap.result._base import short as _short

if TYPE_CHECKING:  # pandas is imported lazily, by to_frame only
    pass


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
