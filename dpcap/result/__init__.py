"""The results of every query: one frozen dataclass per problem family, same field names.

Points have float ``value``/``lower``/``upper`` (``lower ≤ true ≤ upper``; ``value`` the
conservative end), the attaining object, ``status``, ``iterations``, ``method``, ``unit``,
``message`` and ``tol``. Curves and batches hold the same fields as arrays (one status per
point), name their x-axis by its meaning (``D``, ``R``, ``alpha``), and are sequences whose
elements are the point results. Every result has ``gap``, ``to_dict()`` (JSON-safe: statuses
as strings, arrays as lists, ∞ kept as ``inf``) and ``to_frame()`` (pandas, imported lazily).

The classes are defined in this package's private modules, one per family of queries, and
published here: each one's ``__module__`` is ``dpcap.result``, so reprs, pickles and the
documentation never show a private path. The errors, :class:`~dpcap.errors.Status` and
:class:`~dpcap.errors.ConvergenceWarning` live in :mod:`dpcap.errors`.
"""

# The names the classes' field annotations use: typing.get_type_hints resolves a class's
# (string) annotations in the namespace of its __module__, which is this one.
from typing import Any, ClassVar  # noqa: F401

import numpy as np  # noqa: F401
from numpy.typing import NDArray  # noqa: F401

from dpcap.errors import Status  # noqa: F401
from dpcap.result._accounting import (
    CompositionCurve,
    CompositionResult,
    PairLoss,
    PrivacyLoss,
    TradeoffCurve,
)
from dpcap.result._base import ResultBase as ResultBase
from dpcap.result._base import SequenceBase as SequenceBase
from dpcap.result._calibration import CalibrationResult
from dpcap.result._capacity import (
    CapacitiesResult,
    CapacityResult,
    CostCapacityResult,
    GainCapacityResult,
    RenyiProfile,
    StructuredCapacityResult,
)
from dpcap.result._privacy import CorrelatedLeakageResult, MIDPResult
from dpcap.result._tradeoffs import (
    CurveResult,
    DistortionResult,
    FunnelCurve,
    FunnelResult,
)
from dpcap.result._tradeoffs import curve_arrays as curve_arrays

__all__ = [
    "CalibrationResult",
    "CapacitiesResult",
    "CapacityResult",
    "CompositionCurve",
    "CompositionResult",
    "CorrelatedLeakageResult",
    "CostCapacityResult",
    "CurveResult",
    "DistortionResult",
    "FunnelCurve",
    "FunnelResult",
    "GainCapacityResult",
    "MIDPResult",
    "PairLoss",
    "PrivacyLoss",
    "RenyiProfile",
    "StructuredCapacityResult",
    "TradeoffCurve",
]

for _cls in (
    ResultBase,
    SequenceBase,
    CalibrationResult,
    CapacitiesResult,
    CapacityResult,
    CompositionCurve,
    CompositionResult,
    CorrelatedLeakageResult,
    CostCapacityResult,
    CurveResult,
    DistortionResult,
    FunnelCurve,
    FunnelResult,
    GainCapacityResult,
    MIDPResult,
    PairLoss,
    PrivacyLoss,
    RenyiProfile,
    StructuredCapacityResult,
    TradeoffCurve,
):
    _cls.__module__ = __name__
del _cls
