"""The privacy-profile figure: one line per mechanism, the closed form of RR drawn, errors named."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import dpcap
from dpcap import ParameterError
from dpcap.mechanisms import randomized_response
from dpcap.plots import plot_privacy_profile

GRID = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, math.inf]


def test_lines_labels_and_values(tmp_path: Path) -> None:
    curves = {f"RR(2, {e})": dpcap.dp_delta_curve(randomized_response(2, e), GRID) for e in (1, 2)}
    ax = plot_privacy_profile(GRID, curves, path=tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0
    assert ax.get_xlabel() == "ε (nats)"
    assert ax.get_ylabel() == "δ(ε)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(curves)
    x, y = ax.get_lines()[0].get_data()
    assert list(x) == GRID[:-1]  # ε = ∞ is left out
    # binary RR at ε = 1: δ(ε') = (e − e^ε')_+ / (e + 1)
    expected = [max(math.e - math.exp(t), 0.0) / (math.e + 1) for t in GRID[:-1]]
    np.testing.assert_allclose(y, expected, atol=1e-15)


def test_log_axis_drops_zeros() -> None:
    delta = dpcap.dp_delta_curve(randomized_response(2, 1.0), GRID)
    ax = plot_privacy_profile(GRID, {"RR": delta}, logy=True)
    assert ax.get_yscale() == "log"
    assert np.isnan(ax.get_lines()[0].get_data()[1][-1])  # δ = 0 beyond ε = 1


@pytest.mark.parametrize(
    ("eps", "deltas", "match"),
    [
        ([], {"a": []}, "non-empty"),
        ([-1.0], {"a": [0.5]}, "eps"),
        ([0.0, 1.0], {}, "deltas must map"),
        ([0.0, 1.0], [[0.5, 0.1]], "deltas must map"),
        ([0.0, 1.0], {"a": [0.5]}, "1 values for 2 levels"),
        ([0.0, 1.0], {"a": [0.5, 1.5]}, r"values in \[0, 1\]"),
        ([0.0, 1.0], {"a": [0.5, math.nan]}, r"values in \[0, 1\]"),
    ],
)
def test_bad_input_is_named(eps: object, deltas: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        plot_privacy_profile(eps, deltas)  # type: ignore[arg-type]
