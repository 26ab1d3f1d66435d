"""The base classes of dpcap's result types: ``gap``, ``float()``, ``to_dict`` and ``to_frame``
for points, and sequence behaviour (``len``, ``r[i]``, iteration, one row per point) for curves
and batches. The result types themselves are in :mod:`dpcap.result`; a module that defines a
new one (calibration, composition) inherits from these.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import fields
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import Status
from dpcap.result import display

if TYPE_CHECKING:  # pandas is imported lazily, by to_frame only
    import pandas as pd

__all__ = ["ResultBase", "SequenceBase", "fmt", "plain", "short"]


def fmt(x: float) -> str:
    return f"{x:.12g}"


def short(values: tuple[int, ...], limit: int = 12) -> str:
    if len(values) <= limit:
        return str(values)
    head = ", ".join(str(v) for v in values[:limit])
    return f"({head}, ... {len(values) - limit} more)"


def plain(value: Any) -> Any:
    """A JSON-safe copy: statuses as their string, arrays and tuples as lists, numbers as
    Python ``int``/``float`` (∞ stays ``inf``, NaN becomes None), nested results as dicts,
    details as a dict."""
    if isinstance(value, Status):
        return value.value
    if isinstance(value, ResultBase):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


class ResultBase:
    """What every result has: ``float(r)``, ``gap``, ``to_dict()`` and ``to_frame()``.

    A point result is a frozen dataclass with float ``value``/``lower``/``upper``; the methods
    here read its fields generically, so a new result type gets them by inheriting.
    """

    value: Any
    lower: Any
    upper: Any

    #: Fields that are method-specific numbers stored as ``((name, value), ...)``.
    _details: ClassVar[tuple[str, ...]] = ("details",)

    @property
    def gap(self) -> Any:
        """``upper − lower`` (in ``unit``; an array for curves and batches); 0 where both ends
        are the same infinity (ε*(D) = ∞ proven)."""
        with np.errstate(invalid="ignore"):
            width = np.subtract(self.upper, self.lower)
        width = np.where(np.asarray(self.upper) == np.asarray(self.lower), 0.0, width)
        return float(width) if width.ndim == 0 else width

    def __float__(self) -> float:
        return float(self.value)

    def _repr_html_(self) -> str:
        """A small theme-neutral table for notebooks (:mod:`dpcap.result.display`): the value
        with only the digits both ends of the bracket agree on, unit, bracket, status and the
        attaining object. ``repr()`` is unchanged."""
        return display.point_html(self)

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe (see :func:`plain`), plus ``gap``."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name in self._details:
                out[f.name] = {str(k): plain(v) for k, v in value}
            else:
                out[f.name] = plain(value)
        out["gap"] = plain(self.gap)
        return out

    def to_frame(self) -> pd.DataFrame:
        """A one-row pandas DataFrame of the scalar fields (arrays as lists in their cell)."""
        import pandas as pd

        return pd.DataFrame([self.to_dict()])


class SequenceBase(ResultBase):
    """A curve or a batch: array fields over its points, ``len``, ``r[i]`` and one row per point.

    ``axis`` names the field that indexes the points by their meaning (``D``, ``R``, ``alpha``),
    or is empty for a batch.
    """

    axis: ClassVar[str] = ""
    status: NDArray[np.object_]

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: int) -> Any:
        n = len(self)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"{type(self).__name__} indices must be integers, got {i!r}")
        if not -n <= int(i) < n:
            raise IndexError(f"index {i} out of range for {n} points")
        return self._point(int(i) % n)

    def __iter__(self) -> Iterator[Any]:
        return (self._point(i) for i in range(len(self)))

    def _point(self, i: int) -> Any:
        """Point ``i``: the stored point result (curves keep ``points``); batches and profiles
        without stored points build it from their arrays instead."""
        return self.points[i]  # type: ignore[attr-defined]

    def _repr_html_(self) -> str:
        """One row per point (elided in the middle beyond 12): axis, agreed value, bracket,
        status (:mod:`dpcap.result.display`)."""
        return display.sequence_html(self)

    @property
    def converged(self) -> NDArray[np.bool_]:
        """Whether each point's bracket closed to ``tol``."""
        return np.array([s is Status.CONVERGED for s in self.status], dtype=bool)

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe; the point results under ``points`` as dicts."""
        out = super().to_dict()
        out["points"] = [p.to_dict() for p in self]
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per point: the per-point arrays as columns, the shared fields repeated."""
        import pandas as pd

        n = len(self)
        columns: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name == "points":
                continue
            if isinstance(value, np.ndarray) and value.ndim == 1 and len(value) == n:
                columns[f.name] = [plain(v) for v in value]
            elif isinstance(value, np.ndarray) and value.ndim == 2 and len(value) == n:
                columns[f.name] = [row.tolist() for row in value]
            elif isinstance(value, (str, float, int)):
                columns[f.name] = [value] * n
        columns["gap"] = [float(g) for g in np.asarray(self.gap, dtype=np.float64)]
        return pd.DataFrame(columns)
