"""``dpcap.plots``: the α-capacity profile figure, drawn off-screen (Agg backend).

A small stand-in profile (the fields of ``dpcap.RenyiProfile``) drives the checks, so they do not
depend on the query layer; one test also draws a channel through ``dpcap.renyi_profile`` when it
exists, against the binary-symmetric-channel radius ``log 2 − H_α(s)`` of the Rényi-capacity
article.
"""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from numpy.typing import NDArray

matplotlib.use("Agg")

from matplotlib.figure import Figure

import dpcap
from dpcap.plots import DEFAULT_ALPHAS, plot_renyi_profile
from dpcap.result import ParameterError

FloatArray = NDArray[np.float64]

ROOT = Path(__file__).resolve().parents[1]


def bsc_radius(s: float, alpha: FloatArray) -> FloatArray:
    """``log 2 − H_α(s)``, ``H_α(s) = −log(s^α + (1−s)^α)/(α−1)``: the BSC's α-capacity (nats)."""
    return np.log(2) + np.log(s**alpha + (1 - s) ** alpha) / (alpha - 1)


def bsc_diameter(s: float, alpha: FloatArray) -> FloatArray:
    """``D_α(W_0 ‖ W_1) = log(s^α (1−s)^{1−α} + (1−s)^α s^{1−α})/(α−1)`` (the article's bound)."""
    return np.log(s**alpha * (1 - s) ** (1 - alpha) + (1 - s) ** alpha * s ** (1 - alpha)) / (
        alpha - 1
    )


@dataclass(frozen=True)
class StubProfile:
    """The fields of ``dpcap.RenyiProfile`` that a plot reads (and the others, for realism)."""

    alphas: FloatArray
    value: FloatArray
    diameter: FloatArray
    unit: str = "nats"
    lower: FloatArray = field(default_factory=lambda: np.zeros(0))
    upper: FloatArray = field(default_factory=lambda: np.zeros(0))
    prior: FloatArray = field(default_factory=lambda: np.zeros((0, 2)))
    status: FloatArray = field(default_factory=lambda: np.zeros(0))


def bsc_profile(s: float = 0.1, unit: str = "nats") -> StubProfile:
    alphas = np.array([0.25, 0.5, 2.0, 4.0, 10.0])
    value, diameter = bsc_radius(s, alphas), bsc_diameter(s, alphas)
    if unit == "bits":
        value, diameter = value / math.log(2), diameter / math.log(2)
    return StubProfile(alphas=alphas, value=value, diameter=diameter, unit=unit)


def test_profile_figure_has_one_log_axes_with_the_curve() -> None:
    profile = bsc_profile()
    fig = plot_renyi_profile(profile)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    curve = ax.lines[0]
    np.testing.assert_array_equal(curve.get_xdata(), profile.alphas)
    np.testing.assert_array_equal(curve.get_ydata(), profile.value)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert r"radius $\leq C_\alpha \leq$ diameter" in labels
    assert ax.get_ylabel() == "capacity (nats)"


def test_band_runs_from_the_radius_to_the_diameter() -> None:
    profile = bsc_profile()
    ax = plot_renyi_profile(profile).axes[0]
    (band,) = ax.collections
    vertices = np.concatenate([path.vertices for path in band.get_paths()])
    assert vertices[:, 1].min() == pytest.approx(profile.value.min())
    assert vertices[:, 1].max() == pytest.approx(profile.diameter.max())
    np.testing.assert_allclose(ax.lines[1].get_ydata(), profile.diameter)
    assert np.all(profile.diameter >= profile.value)  # the article's sandwich, on the stub


@pytest.mark.parametrize("suffix", [".png", ".pdf"])
def test_figure_is_saved_by_suffix(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"profile{suffix}"
    plot_renyi_profile(bsc_profile(), path=path)
    magic = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF"}[suffix]
    assert path.read_bytes().startswith(magic)


def test_no_file_without_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    plot_renyi_profile(bsc_profile())
    assert list(tmp_path.iterdir()) == []


def test_draws_on_given_axes_and_returns_its_figure() -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_renyi_profile(bsc_profile(), ax=ax) is fig
    sub = Figure().subfigures(1, 2)[1]
    sub_ax = sub.add_subplot()
    root = plot_renyi_profile(bsc_profile(), ax=sub_ax)
    assert isinstance(root, Figure)
    assert sub_ax in root.axes


def test_unit_conversion_and_label() -> None:
    nats, bits = bsc_profile(unit="nats"), bsc_profile(unit="bits")
    ax = plot_renyi_profile(bits).axes[0]
    assert ax.get_ylabel() == "capacity (bits)"
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), bits.value)
    ax = plot_renyi_profile(bits, unit="nats").axes[0]
    assert ax.get_ylabel() == "capacity (nats)"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), nats.value, rtol=1e-15)


def test_infinite_diameter_fills_to_the_top_and_unplottable_orders_are_left_out() -> None:
    profile = StubProfile(
        alphas=np.array([0.0, 0.5, 2.0, math.inf]),
        value=np.array([0.1, 0.2, 0.4, 0.5]),
        diameter=np.array([0.2, 0.6, math.inf, math.inf]),
    )
    ax = plot_renyi_profile(profile).axes[0]
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [0.5, 2.0])
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [0.2, 0.4])
    top = ax.get_ylim()[1]
    assert math.isfinite(top)
    assert top > 0.6
    vertices = np.concatenate([path.vertices for path in ax.collections[0].get_paths()])
    assert vertices[:, 1].max() == pytest.approx(top)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ParameterError, match=r"unit must be one of \['bits', 'nats'\], got"):
        plot_renyi_profile(bsc_profile(), unit="bans")
    with pytest.raises(ParameterError, match=r"alphas is for a channel only.*got alphas="):
        plot_renyi_profile(bsc_profile(), np.array([2.0]))
    ragged = StubProfile(alphas=np.array([2.0, 3.0]), value=np.ones(2), diameter=np.ones(3))
    with pytest.raises(ParameterError, match=r"one value and one diameter per order"):
        plot_renyi_profile(ragged)


def test_channel_is_profiled_through_dpcap() -> None:
    """A channel goes through ``dpcap.renyi_profile``: the BSC curve is ``log 2 − H_α(s)``."""
    if getattr(dpcap, "renyi_profile", None) is None:
        with pytest.raises(NotImplementedError, match=r"dpcap.renyi_profile is not available"):
            plot_renyi_profile(np.array([[0.9, 0.1], [0.1, 0.9]]))
        return
    alphas = np.array([0.5, 2.0, 10.0])
    ax = plot_renyi_profile(np.array([[0.9, 0.1], [0.1, 0.9]]), alphas).axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), bsc_radius(0.1, alphas), atol=1e-8)
    np.testing.assert_allclose(ax.lines[1].get_ydata(), bsc_diameter(0.1, alphas), atol=1e-8)
    assert DEFAULT_ALPHAS.shape == (50,)


def test_importing_plots_does_not_import_matplotlib() -> None:
    code = "import sys, dpcap.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_huge_diameter_is_clipped_so_the_radius_stays_visible() -> None:
    profile = StubProfile(
        alphas=np.array([0.5, 0.9, 2.0]),
        value=np.array([0.1, 0.15, 0.2]),
        diameter=np.array([0.3, 50.0, 60.0]),
    )
    ax = plot_renyi_profile(profile).axes[0]
    top = ax.get_ylim()[1]
    assert top == pytest.approx(1.1 * 10 * 0.2)  # 10 × the largest radius, plus a 10% margin
    vertices = np.concatenate([path.vertices for path in ax.collections[0].get_paths()])
    assert vertices[:, 1].max() == pytest.approx(top)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), profile.value)
