"""``dpcap.plots``: every figure of a result, drawn off-screen (Agg backend).

What is checked, each written out here rather than read from the code:

* each function takes a result, returns the Axes it drew on (``ax`` when given), saves the
  figure holding it when given ``path`` (by suffix) and refuses anything else, naming the
  argument; ``import dpcap.plots`` does not import matplotlib;
* the α-capacity profile of the binary symmetric channel is ``log 2 − H_α(s)`` with the diameter
  ``D_α(W_0 ‖ W_1)`` above it (the Rényi-capacity article's example), the band runs from one to
  the other, clipped when the diameter is infinite or huge; α = ∞ is marked on the right edge
  (``C_∞ = log 2(1 − s)`` and the ε-DP level ``log((1 − s)/s)``); orders that did not converge
  are hollow, with their bracket shaded;
* ``R(D) = h(p) − h(D)`` for a Bernoulli(p) source with Hamming distortion, and every tangent
  line of slope ``−s`` lies below the convex curve (it is the dual bound);
* ``ε*(D) = log((1 − D)/D)`` for a uniform bit with Hamming loss (randomized response), a curve
  that carries no slope: no tangents, ε in nats whatever ``unit`` asks, and a plot that
  refuses the other kind of curve (and the R(D) plot refuses ε*(D));
* several distortion curves share axes, each with its label and colour;
* the privacy funnel lies below the information bottleneck, and the shaded region runs between
  them.

Small results built here (the fields of ``RenyiProfile`` and ``CurveResult``) drive the checks
that do not need the query layer; the others compute their curves through ``dpcap``.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from numpy.typing import NDArray

matplotlib.use("Agg")

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import dpcap
from dpcap.errors import ParameterError, Status
from dpcap.plots import (
    DEFAULT_ALPHAS,
    TANGENTS,
    plot_privacy_distortion,
    plot_privacy_region,
    plot_rate_distortion,
    plot_renyi_profile,
)
from dpcap.result import CurveResult, DistortionResult, RenyiProfile

FloatArray = NDArray[np.float64]

ROOT = Path(__file__).resolve().parents[1]
LN2 = math.log(2.0)


def bsc_radius(s: float, alpha: FloatArray) -> FloatArray:
    """``log 2 − H_α(s)``, ``H_α(s) = −log(s^α + (1−s)^α)/(α−1)``: the BSC's α-capacity (nats)."""
    return np.log(2) + np.log(s**alpha + (1 - s) ** alpha) / (alpha - 1)


def bsc_diameter(s: float, alpha: FloatArray) -> FloatArray:
    """``D_α(W_0 ‖ W_1) = log(s^α (1−s)^{1−α} + (1−s)^α s^{1−α})/(α−1)`` (the article's bound)."""
    return np.log(s**alpha * (1 - s) ** (1 - alpha) + (1 - s) ** alpha * s ** (1 - alpha)) / (
        alpha - 1
    )


def h2(p: FloatArray) -> FloatArray:
    """Binary entropy in nats."""
    out: FloatArray = -(p * np.log(p) + (1 - p) * np.log(1 - p))
    return out


def hamming(m: int) -> FloatArray:
    d: FloatArray = 1.0 - np.eye(m)
    return d


def dsbs(p: float) -> FloatArray:
    joint: FloatArray = 0.5 * np.array([[1 - p, p], [p, 1 - p]])
    return joint


def random_joint(shape: tuple[int, int], seed: int) -> FloatArray:
    joint: FloatArray = np.random.default_rng(seed).dirichlet(np.ones(shape[0] * shape[1]))
    return joint.reshape(shape)


def statuses(n: int) -> NDArray[np.object_]:
    out = np.empty(n, dtype=object)
    out[:] = [Status.CONVERGED] * n
    return out


def make_profile(
    alpha: FloatArray, value: FloatArray, diameter: FloatArray, unit: str = "nats"
) -> RenyiProfile:
    """A RenyiProfile with the given orders, radii and diameters (its bracket closed)."""
    n = len(alpha)
    return RenyiProfile(
        alpha=alpha,
        value=value,
        lower=value,
        upper=value,
        diameter=diameter,
        prior=np.full((n, 2), 0.5),
        output=np.full((n, 2), 0.5),
        status=statuses(n),
        iterations=np.zeros(n, dtype=np.int64),
        method="ba",
        unit=unit,
        message="",
        tol=1e-9,
    )


def bsc_profile(s: float = 0.1, unit: str = "nats") -> RenyiProfile:
    alpha = np.array([0.25, 0.5, 2.0, 4.0, 10.0])
    value, diameter = bsc_radius(s, alpha), bsc_diameter(s, alpha)
    if unit == "bits":
        value, diameter = value / LN2, diameter / LN2
    return make_profile(alpha, value, diameter, unit)


def make_curve(
    D: FloatArray,
    value: FloatArray,
    method: str,
    unit: str = "nats",
    slopes: FloatArray | None = None,
) -> CurveResult:
    """A CurveResult through the given points (each point's bracket closed, no slope unless
    ``slopes`` gives one per point)."""
    slope = np.full(len(D), math.nan) if slopes is None else slopes
    points = tuple(
        DistortionResult(
            value=float(v),
            lower=float(v),
            upper=float(v),
            mechanism=np.eye(2),
            target=float(d),
            distortion_achieved=float(d),
            dp_level=math.inf,
            slope=float(s),
            status=Status.CONVERGED,
            iterations=0,
            method=method,
            unit=unit,
            message="",
            tol=1e-9,
        )
        for d, v, s in zip(D, value, slope, strict=True)
    )
    return CurveResult(
        D=D,
        value=value,
        lower=value,
        upper=value,
        status=statuses(len(D)),
        iterations=np.zeros(len(D), dtype=np.int64),
        points=points,
        method=method,
        unit=unit,
        message="",
        tol=1e-9,
    )


def diameter_line(ax: Axes) -> Line2D:
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "renyi-diameter"]
    return line


def band_vertices(ax: Axes, k: int = 0) -> FloatArray:
    paths = ax.collections[k].get_paths()
    vertices: FloatArray = np.concatenate([path.vertices for path in paths])
    return vertices


# ------------------------------------------------------------------------ the package itself


def test_importing_plots_does_not_import_matplotlib() -> None:
    code = (
        "import sys, dpcap, dpcap.plots, dpcap.plots.renyi, dpcap.plots.distortion, "
        "dpcap.plots.funnel, dpcap.plots.leakage, dpcap.plots.privacy; "
        "print(sorted({'matplotlib', 'cvxpy', 'pandas'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("plot", "name"),
    [
        (plot_renyi_profile, "profile must be a RenyiProfile"),
        (plot_rate_distortion, "curve must be a CurveResult"),
        (plot_privacy_distortion, "curve must be a CurveResult"),
    ],
)
def test_arguments_that_are_not_results_are_refused(plot: object, name: str) -> None:
    """Nothing is computed inside: a channel, a pair of arrays or a number is refused."""
    assert callable(plot)
    for bad in (42, np.eye(2), ([0.5, 0.5], hamming(2))):
        with pytest.raises(ParameterError, match=rf"{name} \(compute it with dpcap\..*got"):
            plot(bad)


# ------------------------------------------------------------------------ Rényi profile


def test_profile_figure_has_one_log_axes_with_the_curve() -> None:
    profile = bsc_profile()
    ax = plot_renyi_profile(profile)
    assert isinstance(ax, Axes)
    assert len(ax.figure.axes) == 1
    assert ax.get_xscale() == "log"
    curve = ax.lines[0]
    np.testing.assert_array_equal(curve.get_xdata(), profile.alpha)
    np.testing.assert_array_equal(curve.get_ydata(), profile.value)
    legend = ax.get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == [
        r"radius $C_\alpha$ (Sibson)",
        r"${\rm sup}_p\, D_\alpha(P_{XY} \| P_X P_Y)$ lies here",
        r"diameter ${\rm max}_{x,x'}\, D_\alpha(W_x \| W_{x'})$",
    ]
    assert ax.get_ylabel() == "Rényi capacity (nats)"
    assert ax.get_xlabel() == r"order $\alpha$"


def test_band_runs_from_the_radius_to_the_diameter() -> None:
    profile = bsc_profile()
    ax = plot_renyi_profile(profile)
    assert len(ax.collections) == 1  # closed brackets: no certified band around the radius
    vertices = band_vertices(ax)
    assert vertices[:, 1].min() == pytest.approx(profile.value.min())
    assert vertices[:, 1].max() == pytest.approx(profile.diameter.max())
    np.testing.assert_allclose(diameter_line(ax).get_ydata(), profile.diameter)
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


def test_draws_on_given_axes_and_returns_them(tmp_path: Path) -> None:
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_renyi_profile(bsc_profile(), ax=ax) is ax
    assert ax.figure is fig
    root = Figure()
    sub = root.subfigures(1, 2)[1]
    sub_ax = sub.add_subplot()
    path = tmp_path / "sub.png"
    assert plot_renyi_profile(bsc_profile(), ax=sub_ax, path=path) is sub_ax
    assert sub_ax in root.axes  # the root figure, which holds the subfigure's axes, was saved
    assert path.read_bytes().startswith(b"\x89PNG")


def test_unit_conversion_and_label() -> None:
    nats, bits = bsc_profile(unit="nats"), bsc_profile(unit="bits")
    ax = plot_renyi_profile(bits)
    assert ax.get_ylabel() == "Rényi capacity (bits)"
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), bits.value)
    ax = plot_renyi_profile(bits, unit="nats")
    assert ax.get_ylabel() == "Rényi capacity (nats)"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), nats.value, rtol=1e-15)


def test_infinite_diameter_fills_to_the_top_and_unplottable_orders_are_left_out() -> None:
    profile = make_profile(
        alpha=np.array([0.0, 0.5, 2.0, math.inf]),
        value=np.array([0.1, 0.2, 0.4, 0.5]),
        diameter=np.array([0.2, 0.6, math.inf, math.inf]),
    )
    ax = plot_renyi_profile(profile)
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [0.5, 2.0])
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [0.2, 0.4])
    top = ax.get_ylim()[1]
    assert math.isfinite(top)
    assert top > 0.6
    assert band_vertices(ax)[:, 1].max() == pytest.approx(top)


def test_bad_profile_arguments_are_rejected() -> None:
    with pytest.raises(ParameterError, match=r"unit must be one of \['bits', 'nats'\], got"):
        plot_renyi_profile(bsc_profile(), unit="bans")
    with pytest.raises(ParameterError, match=r"profile must be a RenyiProfile.*got array"):
        plot_renyi_profile(np.array([[0.9, 0.1], [0.1, 0.9]]))  # type: ignore[arg-type]
    ragged = make_profile(alpha=np.array([2.0, 3.0]), value=np.ones(2), diameter=np.ones(3))
    with pytest.raises(ParameterError, match=r"one value, bracket and diameter per order"):
        plot_renyi_profile(ragged)


def test_profile_computed_by_dpcap_is_the_bsc_curve() -> None:
    """``dpcap.renyi_profile`` of the BSC: the radius is ``log 2 − H_α(s)``."""
    alphas = np.array([0.5, 2.0, 10.0])
    profile = dpcap.renyi_profile(np.array([[0.9, 0.1], [0.1, 0.9]]), alphas)
    ax = plot_renyi_profile(profile)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), bsc_radius(0.1, alphas), atol=1e-8)
    np.testing.assert_allclose(diameter_line(ax).get_ydata(), bsc_diameter(0.1, alphas), atol=1e-8)
    assert DEFAULT_ALPHAS.shape == (50,)
    assert DEFAULT_ALPHAS[0] == pytest.approx(0.05)
    assert DEFAULT_ALPHAS[-1] == pytest.approx(50.0)


def test_order_infinity_is_marked_on_the_right_edge() -> None:
    """BSC(0.1) at α = ∞: radius ``C_∞ = log(2(1 − s)) = log 1.8`` (maximal leakage) and
    diameter ``log((1 − s)/s) = log 9``, the ε-DP level; both marked on the right edge."""
    profile = dpcap.renyi_profile(np.array([[0.9, 0.1], [0.1, 0.9]]), [0.5, 2.0, math.inf])
    ax = plot_renyi_profile(profile)
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [0.5, 2.0])  # ∞ is not on the log axis
    radius, diameter = [ln for ln in ax.get_lines() if ln.get_gid() == "renyi-infinite-order"]
    assert radius.get_transform() == ax.get_yaxis_transform()  # x in axes coordinates
    np.testing.assert_array_equal(radius.get_xdata(), [1.0])
    np.testing.assert_allclose(radius.get_ydata(), [math.log(1.8)], atol=1e-9)
    np.testing.assert_allclose(diameter.get_ydata(), [math.log(9.0)], atol=1e-12)
    assert ax.get_ylim()[1] >= math.log(9.0)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert r"$\alpha = \infty$: diameter = $\varepsilon$-DP level" in labels


def test_orders_not_converged_are_hollow_with_their_bracket() -> None:
    profile = bsc_profile()
    status = profile.status.copy()
    status[[1, 3]] = Status.MAX_ITER
    lower = profile.value.copy()
    lower[[1, 3]] -= 0.01
    ax = plot_renyi_profile(dataclasses.replace(profile, status=status, lower=lower))
    (hollow,) = [ln for ln in ax.get_lines() if ln.get_gid() == "not-converged"]
    np.testing.assert_array_equal(hollow.get_xdata(), profile.alpha[[1, 3]])
    np.testing.assert_array_equal(hollow.get_ydata(), profile.value[[1, 3]])
    assert "not converged (2)" in [t.get_text() for t in ax.get_legend().get_texts()]
    (bracket,) = [c for c in ax.collections if c.get_gid() != "renyi-band"]
    ys = np.concatenate([p.vertices for p in bracket.get_paths()])[:, 1]
    assert ys.min() == pytest.approx(lower.min())


def test_huge_diameter_is_clipped_so_the_radius_stays_visible() -> None:
    profile = make_profile(
        alpha=np.array([0.5, 0.9, 2.0]),
        value=np.array([0.1, 0.15, 0.2]),
        diameter=np.array([0.3, 50.0, 60.0]),
    )
    ax = plot_renyi_profile(profile)
    top = ax.get_ylim()[1]
    assert top == pytest.approx(1.1 * 10 * 0.2)  # 10 × the largest radius, plus a 10% margin
    assert band_vertices(ax)[:, 1].max() == pytest.approx(top)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), profile.value)


# ------------------------------------------------------------------------ R(D) and ε*(D)


def test_plot_writes_a_png(tmp_path: Path) -> None:
    curve = dpcap.rate_distortion_curve([0.3, 0.7], hamming(2), n_points=12)
    path = tmp_path / "rd.png"
    ax = plot_rate_distortion(curve, path=path)
    assert isinstance(ax, Axes)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(ax.figure.axes) == 1
    assert len(ax.lines) == 1 + TANGENTS  # the curve and its tangents
    assert ax.get_ylabel() == "rate $R(D)$ (nats)"
    assert ax.get_xlabel() == "expected distortion $D$"
    assert "R(D)" in ax.get_title()

    plain = dpcap.rate_distortion_curve([0.5, 0.5], hamming(2))
    ax2 = plot_rate_distortion(plain, tangents=False)
    assert len(ax2.lines) == 1
    other = Figure()
    ax3 = other.add_subplot()
    assert plot_rate_distortion(curve, ax=ax3) is ax3
    assert ax3.figure is other
    with pytest.raises(ParameterError, match="curve must be a CurveResult"):
        plot_rate_distortion(42)  # type: ignore[arg-type]


def test_rate_distortion_is_the_binary_curve_and_tangents_support_it() -> None:
    """Bernoulli(0.3), Hamming: ``R(D) = h(0.3) − h(D)`` on ``[0, 0.3]``, convex, so each
    tangent ``R(D_k) − s (D − D_k)`` lies below every point of the curve."""
    curve = dpcap.rate_distortion_curve([0.3, 0.7], hamming(2), n_points=12)
    ax = plot_rate_distortion(curve)
    D, R = (np.asarray(a, dtype=np.float64) for a in ax.lines[0].get_data())
    assert np.all(np.diff(D) >= 0)
    inside = (D > 1e-9) & (D < 0.3 - 1e-9)
    np.testing.assert_allclose(R[inside], h2(np.array(0.3)) - h2(D[inside]), atol=1e-6)
    for line in ax.lines[1:]:
        (d0, d1), (r0, r1) = line.get_data()
        slope = (r1 - r0) / (d1 - d0)
        assert slope < 0
        below = r0 + slope * (D - d0)
        assert np.all(below <= R + 1e-6)


def test_rate_distortion_in_bits_scales_curve_and_tangents() -> None:
    """A curve in nats drawn in bits: values divided by log 2, and so are the tangents' slopes
    (``s`` is in nats per unit distortion); the labels keep ``s``."""
    D = np.array([0.02, 0.1, 0.2, 0.3, 0.4])
    nats = np.log(2) - h2(D)
    curve = make_curve(D, nats, "blahut", slopes=np.log((1 - D) / D))  # s = −R'(D)
    in_nats = plot_rate_distortion(curve)
    in_bits = plot_rate_distortion(curve, unit="bits")
    assert in_bits.get_ylabel() == "rate $R(D)$ (bits)"
    np.testing.assert_allclose(in_bits.lines[0].get_ydata(), nats / LN2, rtol=1e-15)
    assert len(in_nats.lines) == len(in_bits.lines) == 1 + TANGENTS
    for a, b in zip(in_nats.lines[1:], in_bits.lines[1:], strict=True):
        (x0, x1), (y0, y1) = a.get_data()
        (u0, u1), (v0, v1) = b.get_data()
        assert (y1 - y0) / (x1 - x0) == pytest.approx((v1 - v0) / (u1 - u0) * LN2)
    assert [t.get_text() for t in in_nats.texts] == [t.get_text() for t in in_bits.texts]


def test_rate_distortion_refuses_a_privacy_distortion_curve() -> None:
    curve = dpcap.privacy_distortion_curve([0.5, 0.5], hamming(2), n_points=4)
    assert curve.method.startswith("lp-search")
    with pytest.raises(ParameterError, match=r"curve must be a rate–distortion curve.*"
                       r"plot_privacy_distortion"):  # fmt: skip
        plot_rate_distortion(curve)


def test_privacy_distortion_is_randomized_response(tmp_path: Path) -> None:
    """Uniform bit, Hamming loss: ``ε*(D) = log((1 − D)/D)`` on ``(0, 1/2]``."""
    curve = dpcap.privacy_distortion_curve([0.5, 0.5], hamming(2), n_points=4)
    path = tmp_path / "eps.png"
    ax = plot_privacy_distortion(curve, path=path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(ax.lines) == 1  # no tangents: ε*(D) points carry no slope
    D, eps = (np.asarray(a, dtype=np.float64) for a in ax.lines[0].get_data())
    np.testing.assert_allclose(D, [0.125, 0.25, 0.375, 0.5])
    np.testing.assert_allclose(eps, np.log((1 - D) / D), atol=1e-6)
    assert ax.get_ylabel() == r"least $\varepsilon$-DP level $\varepsilon^*(D)$ (nats)"
    assert ax.get_xlabel() == "distortion budget $D$"
    assert "R(D)" not in ax.get_title()
    assert r"\varepsilon^*(D)" in ax.get_title()


def test_privacy_distortion_marks_infinite_levels_and_refuses_rate_curves() -> None:
    """ε*(0) = ∞ (no ε-DP mechanism reaches D = 0) is a triangle on the top edge; ε is drawn
    in nats even when asked for bits (it bounds a natural log), and a curve in bits is
    converted back to nats (ε in bits × log 2)."""
    D = np.array([0.0, 0.25, 0.5])
    curve = make_curve(D, np.array([math.inf, math.log(3.0), 0.0]), "lp-search/HIGHS")
    ax = plot_privacy_distortion(curve, unit="bits")
    assert ax.get_ylabel() == r"least $\varepsilon$-DP level $\varepsilon^*(D)$ (nats)"
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [0.25, 0.5])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [math.log(3.0), 0.0])
    assert math.isfinite(ax.get_ylim()[1])
    (marker,) = [line for line in ax.lines if line.get_gid() == "infinite"]
    assert marker.get_marker() == "^"
    assert marker.get_transform() == ax.get_xaxis_transform()  # y in axes coordinates
    np.testing.assert_array_equal(marker.get_xdata(), [0.0])
    np.testing.assert_array_equal(marker.get_ydata(), [1.0])  # the top edge
    assert "infinite (1)" in [t.get_text() for t in ax.get_legend().get_texts()]

    in_bits = make_curve(D[1:], np.array([math.log(3.0) / LN2, 0.0]), "lp-search/HIGHS", "bits")
    ax = plot_privacy_distortion(in_bits)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [math.log(3.0), 0.0], rtol=1e-15)
    with pytest.raises(ParameterError, match=r"unit must be one of \['bits', 'nats'\], got 'bans'"):
        plot_privacy_distortion(curve, unit="bans")

    rate = dpcap.rate_distortion_curve([0.3, 0.7], hamming(2), n_points=5)
    with pytest.raises(ParameterError, match=r"curve must be a privacy–distortion curve.*"
                       r"plot_rate_distortion"):  # fmt: skip
        plot_privacy_distortion(rate)
    mi = dpcap.mi_privacy_distortion_curve([0.3, 0.7], hamming(2), n_points=3)
    with pytest.raises(ParameterError, match=r"curve must be a privacy–distortion curve"):
        plot_privacy_distortion(mi)


def test_several_distortion_curves_share_axes_with_labels() -> None:
    """Each call adds a curve in the next colour with its own label; the limits hold both.
    Uniform bit: ``ε*(D) = log((1 − D)/D)``; the tangents' legend entry appears once."""
    uniform = dpcap.privacy_distortion_curve([0.5, 0.5], hamming(2), n_points=4)
    skewed = dpcap.privacy_distortion_curve([0.8, 0.2], hamming(2), n_points=4)
    ax = plot_privacy_distortion(uniform, label="uniform")
    assert plot_privacy_distortion(skewed, ax=ax, label="(0.8, 0.2)") is ax
    first, second = [line for line in ax.lines if line.get_gid() == "privacy-distortion"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["uniform", "(0.8, 0.2)"]
    assert first.get_color() != second.get_color()
    D, eps = (np.asarray(a, dtype=np.float64) for a in first.get_data())
    np.testing.assert_allclose(eps, np.log((1 - D) / D), atol=1e-6)
    top = max(np.max(first.get_ydata()), np.max(second.get_ydata()))
    assert ax.get_ylim()[1] >= top
    assert ax.get_xlim()[1] >= 0.5  # the uniform curve's last budget

    rate = dpcap.rate_distortion_curve([0.3, 0.7], hamming(2), n_points=8)
    fair = dpcap.rate_distortion_curve([0.5, 0.5], hamming(2), n_points=8)
    ax = plot_rate_distortion(rate, label="Bernoulli(0.3)")
    plot_rate_distortion(fair, ax=ax, label="Bernoulli(0.5)")
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts.count("Bernoulli(0.3)") == texts.count("Bernoulli(0.5)") == 1
    assert sum(text.startswith("tangent") for text in texts) == 1
    assert ax.get_ylim()[1] >= math.log(2)  # R(0) = h(1/2) = log 2 for the fair bit
    assert ax.get_xlim()[1] >= 0.5


# ------------------------------------------------------------------------ PF / IB region


def test_plot_privacy_region(tmp_path: Path) -> None:
    joint = random_joint((2, 3), 2)
    pf = dpcap.privacy_funnel_curve(joint, n_points=5, tol=1e-6)
    ib = dpcap.information_bottleneck_curve(joint, n_points=5, tol=1e-6)
    path = tmp_path / "region.png"
    ax = plot_privacy_region(pf, ib, path=path)
    assert isinstance(ax, Axes)
    assert path.stat().st_size > 0
    assert len(ax.figure.axes) == 1
    assert "I(X;Y)" in ax.get_xlabel()
    assert "I(S;Y)" in ax.get_ylabel()
    fig2 = Figure()
    ax2 = fig2.add_subplot()
    pf3 = dpcap.privacy_funnel_curve(dsbs(0.1), n_points=3)
    ib3 = dpcap.information_bottleneck_curve(dsbs(0.1), n_points=3)
    assert plot_privacy_region(pf3, ib3, ax=ax2, mechanisms=False) is ax2
    assert ax2.figure is fig2
    with pytest.raises(ParameterError, match="ib_curve must be a information bottleneck curve"):
        plot_privacy_region(pf, pf)
    with pytest.raises(ParameterError, match="pf_curve must be a privacy funnel curve"):
        plot_privacy_region(ib, pf)
    with pytest.raises(ParameterError, match="pf_curve must be a FunnelCurve"):
        plot_privacy_region(joint, ib)  # type: ignore[arg-type]


def test_region_lies_between_funnel_and_bottleneck_in_any_unit() -> None:
    """DSBS(0.1): ``PF(R) = R·I(S;X)/H(X)`` is the lower boundary; the region's polygon runs
    along PF then back along IB; a bottleneck curve in nats is drawn in the funnel's bits."""
    pf = dpcap.privacy_funnel_curve(dsbs(0.1), n_points=5, unit="bits", tol=1e-6)
    ib = dpcap.information_bottleneck_curve(dsbs(0.1), n_points=4)
    ax = plot_privacy_region(pf, ib, mechanisms=False)
    assert ax.get_xlabel() == "utility $I(X;Y)$ (bits)"
    assert ax.get_ylabel() == "leakage $I(S;Y)$ (bits)"
    pf_line, ib_line = ax.lines[:2]
    np.testing.assert_allclose(pf_line.get_xdata(), np.linspace(0.0, 1.0, 5), atol=1e-12)
    i_sx = 1.0 - float(h2(np.array(0.1))) / LN2  # I(S;X) in bits, H(X) = 1 bit
    np.testing.assert_allclose(pf_line.get_ydata(), i_sx * np.linspace(0, 1, 5), atol=1e-5)
    np.testing.assert_allclose(ib_line.get_xdata(), np.asarray(ib.R) / LN2)
    np.testing.assert_allclose(ib_line.get_ydata(), np.asarray(ib.value) / LN2)
    assert np.all(np.interp(pf_line.get_xdata(), ib_line.get_xdata(), ib_line.get_ydata())
                  >= pf_line.get_ydata() - 1e-6)  # fmt: skip
    (region,) = [p for p in ax.patches if p.get_label() == "achievable"]
    xy = region.get_xy()
    assert xy[:, 1].min() == pytest.approx(0.0, abs=1e-9)
    assert xy[:, 1].max() == pytest.approx(i_sx, abs=1e-5)
