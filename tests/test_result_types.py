"""The result types' common shape: fields, exports, JSON and pandas round trips.

* Every result class is a frozen dataclass with ``value``, ``lower``, ``upper``, ``status``,
  ``iterations``, ``method``, ``unit``, ``message`` and ``tol``, plus ``gap``, ``to_dict`` and
  ``to_frame``; curves and batches are sequences whose ``axis`` names a field.
* Every result class is published by :mod:`dpcap.result` (its ``__module__``) and by
  :mod:`dpcap`.
* Every result survives strict JSON (no NaN) and ``to_frame``.
"""

from __future__ import annotations

import dataclasses
import inspect
import math

import pytest

import dpcap
from dpcap import result


def _result_types() -> list[type]:
    return [
        obj
        for _, obj in inspect.getmembers(result, inspect.isclass)
        if dataclasses.is_dataclass(obj) and issubclass(obj, result.ResultBase)
    ]


def test_every_result_type_has_the_common_shape() -> None:
    types = _result_types()
    names = {t.__name__ for t in types}
    assert {
        "CapacityResult",
        "CapacitiesResult",
        "CurveResult",
        "DistortionResult",
        "FunnelCurve",
        "FunnelResult",
        "MIDPResult",
        "RenyiProfile",
        "CalibrationResult",
    } <= names
    for t in types:
        fields = {f.name for f in dataclasses.fields(t)}
        assert {"value", "lower", "upper", "status", "method", "unit", "message", "tol"} <= fields
        assert "iterations" in fields, t.__name__
        for attr in ("gap", "to_dict", "to_frame"):
            assert hasattr(t, attr), f"{t.__name__} has no {attr}"
        if issubclass(t, result.SequenceBase):
            assert callable(t.__len__)
            assert callable(t.__getitem__)
            if t.axis:
                assert t.axis in fields, f"{t.__name__}.axis names no field"


def test_results_are_exported_from_one_module() -> None:
    for t in _result_types():
        assert t.__module__ == "dpcap.result"
        assert getattr(dpcap, t.__name__) is t


BSC = [[0.9, 0.1], [0.1, 0.9]]
HAMMING_BIT = [[0.0, 1.0], [1.0, 0.0]]
DSBS = [[0.45, 0.05], [0.05, 0.45]]


def _producers() -> list[tuple[str, object]]:
    from dpcap.mechanisms import per_entry, randomized_response

    M = per_entry(2, randomized_response(2, 1.0))
    return [
        ("capacity", lambda: dpcap.capacity(BSC)),
        ("capacities", lambda: dpcap.capacities([BSC, [[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]])),
        ("capacity_cost", lambda: dpcap.capacity(BSC, cost=[0.0, 1.0], budget=0.3)),
        ("g_capacity", lambda: dpcap.g_capacity(BSC, kind="additive")),
        ("risk_capacity", lambda: dpcap.risk_capacity(BSC)),
        ("renyi_capacity", lambda: dpcap.renyi_capacity(BSC, 2.0)),
        ("renyi_profile", lambda: dpcap.renyi_profile(BSC, [0.0, 0.5, 1.0, math.inf])),
        ("alpha_leakage", lambda: dpcap.alpha_leakage(BSC, 2.0)),
        ("midp", lambda: dpcap.midp(M)),
        ("correlated_leakage", lambda: dpcap.correlated_leakage(M)),
        ("rate_distortion", lambda: dpcap.rate_distortion([0.5, 0.5], HAMMING_BIT, 0.1)),
        ("rate_distortion_curve", lambda: dpcap.rate_distortion_curve([0.5, 0.5], HAMMING_BIT)),
        ("optimal_mechanism", lambda: dpcap.optimal_mechanism([0.5, 0.5], HAMMING_BIT, 1.0)),
        ("privacy_distortion", lambda: dpcap.privacy_distortion([0.5, 0.5], HAMMING_BIT, 0.2)),
        (
            "privacy_distortion_curve",
            lambda: dpcap.privacy_distortion_curve([0.5, 0.5], HAMMING_BIT, n_points=3),
        ),
        ("privacy_funnel", lambda: dpcap.privacy_funnel(DSBS, 0.3)),
        ("information_bottleneck_curve", lambda: dpcap.information_bottleneck_curve(DSBS)),
        ("perfect_privacy", lambda: dpcap.perfect_privacy(DSBS)),
        ("inference_privacy", lambda: dpcap.inference_privacy(DSBS, HAMMING_BIT, 0.2)),
    ]


@pytest.mark.parametrize(
    ("name", "make"), _producers(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_result_round_trips_through_strict_json_and_pandas(name: str, make: object) -> None:
    import json

    res = make()  # type: ignore[operator]
    d = res.to_dict()
    text = json.dumps(d, allow_nan=True)
    back = json.loads(text)
    names = {s.value for s in dpcap.Status}
    statuses = back["status"] if isinstance(back["status"], list) else [back["status"]]
    assert statuses
    assert set(statuses) <= names
    assert back["value"] == pytest.approx(_plain_value(res.value), nan_ok=True)
    # strict JSON apart from the infinities the issue keeps: no NaN anywhere
    assert "NaN" not in text
    frame = res.to_frame()
    rows = len(res) if isinstance(res, result.SequenceBase) else 1
    assert len(frame) == rows
    assert {"value", "lower", "upper", "status", "gap"} <= set(frame.columns)
    if isinstance(res, result.SequenceBase):
        assert type(res[0]).__name__.endswith("Result")
        assert len(back["points"]) == rows
        if res.axis:
            assert list(frame[res.axis]) == pytest.approx(list(getattr(res, res.axis)))


def _plain_value(value: object) -> object:
    import numpy as np

    return value.tolist() if isinstance(value, np.ndarray) else value
