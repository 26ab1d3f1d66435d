"""``dpcap.plots.plot_leakage``: a leakage against a mechanism parameter, drawn off-screen.

What is checked, each expected value written out here rather than read from the code:

* the line goes through each result's ``value`` in increasing parameter order and the band is
  exactly each result's certified bracket ``[lower, upper]``; on the Z-channel
  ``W = [[1, 0], [q, 1 − q]]`` the bracket holds the closed form
  ``C(q) = log(1 + (1 − q) q^{q/(1−q)})`` (Golomb, "The limiting behavior of the Z-channel");
* plain numbers (DP metrics) claim no bracket: no band; binary randomized response has
  ε-DP level exactly its parameter ε;
* results that did not converge are drawn hollow at their parameter value and counted in the
  legend; a NaN is a cross on the bottom edge, an ∞ a triangle on the top edge;
* units: information in bits is the value in nats divided by log 2, either way, for results
  (their own ``unit``) and numbers (``value_unit``); an ε stays in nats; δ has no unit;
* several series on one axes, each with its label and the next colour; a second quantity in
  the same unit relabels the axis "leakage", one in another unit is refused;
* bad arguments are refused with a message naming the argument and the value.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

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
from dpcap.mechanisms import randomized_response
from dpcap.plots import plot_leakage
from dpcap.result import CapacityResult

FloatArray = NDArray[np.float64]
LN2 = math.log(2.0)
QS = np.array([0.1, 0.3, 0.5, 0.8])


def z_channel(q: float) -> FloatArray:
    """Input 0 is received intact; input 1 turns into 0 with probability q."""
    W: FloatArray = np.array([[1.0, 0.0], [q, 1.0 - q]])
    return W


def z_capacity(q: float) -> float:
    """``log(1 + (1 − q) q^{q/(1−q)})`` nats: the Z-channel's capacity in closed form."""
    return math.log(1.0 + (1.0 - q) * q ** (q / (1.0 - q)))


def z_results(tol: float = 1e-3, unit: str = "nats") -> list[CapacityResult]:
    """Capacities of the Z-channels at ``QS``, solved loosely so that the brackets stay open."""
    return [dpcap.capacity(z_channel(q), tol=tol, unit=unit) for q in QS]


def stalled(result: CapacityResult, **changes: Any) -> CapacityResult:
    """``result`` as if its solve had stopped at the iteration cap (fields in ``changes``)."""
    fields: dict[str, Any] = {"status": Status.MAX_ITER}
    fields.update(changes)
    return dataclasses.replace(result, **fields)


def lines(ax: Axes, gid: str = "leakage-line") -> list[Line2D]:
    return [line for line in ax.get_lines() if line.get_gid() == gid]


def xy(line: Line2D) -> tuple[FloatArray, FloatArray]:
    return (
        np.asarray(line.get_xdata(), dtype=np.float64),
        np.asarray(line.get_ydata(), dtype=np.float64),
    )


def band_at(ax: Axes, k: int = 0) -> dict[float, tuple[float, float]]:
    """The shaded band's ``(lowest, highest)`` vertex at each abscissa."""
    vertices = np.concatenate([path.vertices for path in ax.collections[k].get_paths()])
    out: dict[float, tuple[float, float]] = {}
    for x in np.unique(vertices[:, 0]):
        ys = vertices[vertices[:, 0] == x, 1]
        out[float(x)] = (float(ys.min()), float(ys.max()))
    return out


def legend_texts(ax: Axes) -> list[str]:
    legend = ax.get_legend()
    return [] if legend is None else [t.get_text() for t in legend.get_texts()]


# ------------------------------------------------------------------------ values and bracket


def test_band_drawn_is_the_certified_bracket(tmp_path: Path) -> None:
    results = z_results()
    for q, r in zip(QS, results, strict=True):  # the certificate holds the closed form
        assert r.lower - 1e-12 <= z_capacity(q) <= r.upper + 1e-12
    assert any(r.upper > r.lower for r in results)  # some bracket is open: a band to draw
    path = tmp_path / "z.png"
    ax = plot_leakage(QS, results, parameter="q", quantity="capacity", path=path)
    assert isinstance(ax, Axes)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (line,) = lines(ax)
    x, y = xy(line)
    np.testing.assert_array_equal(x, QS)
    np.testing.assert_array_equal(y, [r.value for r in results])
    np.testing.assert_allclose(y, [z_capacity(q) for q in QS], atol=1e-3)  # within tol
    assert len(ax.collections) == 1
    band = band_at(ax)
    assert sorted(band) == list(QS)
    for q, r in zip(QS, results, strict=True):
        assert band[float(q)] == pytest.approx((r.lower, r.upper), abs=1e-15)
    assert not plot_leakage(QS, results, band=False).collections


def test_parameter_order_does_not_matter() -> None:
    results = z_results()
    order = [2, 0, 3, 1]
    ax = plot_leakage(QS[order], [results[i] for i in order], parameter="q")
    x, y = xy(lines(ax)[0])
    np.testing.assert_array_equal(x, QS)
    np.testing.assert_array_equal(y, [r.value for r in results])


def test_a_batch_result_is_a_sequence_of_results() -> None:
    batch = dpcap.capacities([z_channel(q) for q in QS], tol=1e-3)
    ax = plot_leakage(QS, batch, parameter="q", quantity="capacity")
    _, y = xy(lines(ax)[0])
    np.testing.assert_allclose(y, [z_capacity(q) for q in QS], atol=1e-3)
    assert band_at(ax)[float(QS[0])] == pytest.approx((batch.lower[0], batch.upper[0]))


def test_numbers_claim_no_bracket() -> None:
    """Binary randomized response with parameter ε is exactly ε-DP: the line is y = ε."""
    eps = [0.25, 0.5, 1.0, 2.0]
    levels = [dpcap.dp_epsilon(randomized_response(2, e)) for e in eps]
    ax = plot_leakage(eps, levels, quantity="dp_epsilon")
    x, y = xy(lines(ax)[0])
    np.testing.assert_allclose(y, x, rtol=1e-12)
    assert not ax.collections
    assert not lines(ax, "not-converged")
    assert ax.get_legend() is None  # one unlabelled series: nothing to tell apart
    assert ax.get_ylim()[0] <= 0.0  # a leakage axis starts at 0


# ------------------------------------------------------------------------ marks


def test_results_not_converged_are_hollow_and_counted() -> None:
    results = z_results()
    results[1] = stalled(results[1], lower=results[1].value - 0.05)
    results[3] = stalled(results[3])
    ax = plot_leakage(QS, results, parameter="q", quantity="capacity")
    (line,) = lines(ax)
    assert list(line.get_markevery()) == [0, 2]  # filled markers on the converged only
    (hollow,) = lines(ax, "not-converged")
    assert hollow.get_markerfacecolor() == "none"
    x, y = xy(hollow)
    np.testing.assert_array_equal(x, QS[[1, 3]])
    np.testing.assert_array_equal(y, [results[1].value, results[3].value])
    assert "not converged (2)" in legend_texts(ax)
    assert band_at(ax)[float(QS[1])] == pytest.approx((results[1].value - 0.05, results[1].value))


def test_nan_and_infinite_values_are_marked_on_the_edges() -> None:
    """A failed solve (NaN) is a cross on the bottom edge, ε = ∞ a triangle on the top edge;
    neither is on the line, both are counted in the legend."""
    results = z_results()
    nan = math.nan
    results[2] = stalled(results[2], status=Status.FAILED, value=nan, lower=nan, upper=nan)
    ax = plot_leakage(QS, results, parameter="q")
    x, _ = xy(lines(ax)[0])
    np.testing.assert_array_equal(x, QS[[0, 1, 3]])
    (cross,) = lines(ax, "no-value")
    np.testing.assert_array_equal(np.ravel(xy(cross)), [QS[2], 0.0])  # axes coordinates
    assert cross.get_transform() == ax.get_xaxis_transform()
    assert not lines(ax, "not-converged")  # marked once, on the edge
    assert "no value: failed or too large (1)" in legend_texts(ax)

    ax = plot_leakage([0.5, 1.0, 2.0], [0.5, 1.0, math.inf], quantity="dp_epsilon")
    (triangle,) = lines(ax, "infinite")
    assert triangle.get_marker() == "^"
    np.testing.assert_array_equal(np.ravel(xy(triangle)), [2.0, 1.0])
    assert "infinite (1)" in legend_texts(ax)


# ------------------------------------------------------------------------ units


def test_information_converts_between_nats_and_bits() -> None:
    nats, bits = z_results(), z_results(unit="bits")
    ax = plot_leakage(QS, nats, quantity="capacity", unit="bits")
    assert ax.get_ylabel() == "capacity (bits)"
    np.testing.assert_allclose(xy(lines(ax)[0])[1], [r.value / LN2 for r in nats], rtol=1e-15)
    band = band_at(ax)
    for q, r in zip(QS, nats, strict=True):
        assert band[float(q)] == pytest.approx((r.lower / LN2, r.upper / LN2), rel=1e-14)

    ax = plot_leakage(QS, bits, quantity="capacity")  # drawn in its own unit
    assert ax.get_ylabel() == "capacity (bits)"
    ax = plot_leakage(QS, bits, quantity="capacity", unit="nats")
    assert ax.get_ylabel() == "capacity (nats)"
    np.testing.assert_allclose(xy(lines(ax)[0])[1], [z_capacity(q) for q in QS], atol=1e-3)

    # numbers: in nats unless value_unit says otherwise
    ml = [dpcap.max_leakage(randomized_response(2, e), unit="bits") for e in (0.5, 1.0)]
    ax = plot_leakage([0.5, 1.0], ml, quantity="max_leakage", value_unit="bits", unit="nats")
    assert ax.get_ylabel() == "maximal leakage (nats)"
    # maximal leakage of binary RR(ε) is log(2e^ε/(1 + e^ε)) nats
    np.testing.assert_allclose(
        xy(lines(ax)[0])[1],
        [math.log(2 * math.exp(e) / (1 + math.exp(e))) for e in (0.5, 1.0)],
        rtol=1e-12,
    )
    # KL-DP is a privacy loss: in nats whatever unit= says (Cuff & Yu, Property 1: ε·tanh(ε/2))
    kl = [dpcap.kl_dp(randomized_response(2, e)) for e in (0.5, 1.0)]
    ax = plot_leakage([0.5, 1.0], kl, quantity="kl_dp", unit="bits")
    assert ax.get_ylabel() == "KL-DP (nats)"
    np.testing.assert_allclose(
        xy(lines(ax)[0])[1], [e * math.tanh(e / 2) for e in (0.5, 1.0)], rtol=1e-12
    )


def test_epsilon_stays_in_nats_and_delta_has_no_unit() -> None:
    eps = [0.5, 1.0]
    ax = plot_leakage(eps, eps, quantity="dp_epsilon", unit="bits")
    assert ax.get_ylabel() == "ε-DP level (nats)"
    assert ax.get_xlabel() == "ε (nats)"
    np.testing.assert_array_equal(xy(lines(ax)[0])[1], eps)
    deltas = [dpcap.dp_delta(randomized_response(2, 1.0), e) for e in eps]
    ax = plot_leakage(eps, deltas, parameter="ε'", quantity="dp_delta", parameter_unit="nats")
    assert ax.get_ylabel() == "δ(ε)"
    assert ax.get_xlabel() == "ε' (nats)"
    # δ(ε') of binary RR(1) is (e − e^ε')_+ / (e + 1)
    expected = [max(math.e - math.exp(e), 0.0) / (math.e + 1) for e in eps]
    np.testing.assert_allclose(xy(lines(ax)[0])[1], expected, atol=1e-15)
    ax = plot_leakage([1.0, 2.0], [0.1, 0.2], parameter="n")
    assert ax.get_xlabel() == "n"  # a parameter that is not an ε has no unit unless given


# ------------------------------------------------------------------------ several series


def test_repeated_calls_add_labelled_series() -> None:
    eps = np.array([0.5, 1.0, 2.0])
    fig = Figure()
    ax = fig.add_subplot()
    two = [dpcap.capacity(randomized_response(2, e)) for e in eps]
    three = [dpcap.capacity(randomized_response(3, e)) for e in eps]
    assert plot_leakage(eps, two, quantity="capacity", label="RR(2)", ax=ax) is ax
    assert plot_leakage(eps, three, quantity="capacity", label="RR(3)", ax=ax) is ax
    assert ax.get_ylabel() == "capacity (nats)"
    assert ax.get_title() == "capacity against ε"
    first, second = lines(ax)
    assert first.get_color() != second.get_color()
    assert legend_texts(ax) == ["RR(2)", "RR(3)"]
    # binary RR(ε) is a BSC with crossover 1/(1 + e^ε): C = log 2 − h(p)
    p = 1 / (1 + np.exp(eps))
    np.testing.assert_allclose(
        xy(first)[1], LN2 + p * np.log(p) + (1 - p) * np.log(1 - p), atol=1e-8
    )
    assert ax.get_ylim()[1] >= max(xy(second)[1])  # the axis grew to hold both

    levels = [dpcap.max_leakage(randomized_response(3, e)) for e in eps]
    plot_leakage(eps, levels, quantity="max_leakage", label="maximal leakage", ax=ax)
    assert ax.get_ylabel() == "leakage (nats)"  # two quantities, one unit
    assert ax.get_title() == "leakages against ε"
    assert len({line.get_color() for line in lines(ax)}) == 3

    with pytest.raises(ParameterError, match=r"ax already holds leakages in nats.*unit='nats'"):
        plot_leakage(eps, two, quantity="capacity", unit="bits", ax=ax)
    deltas = [0.1, 0.05, 0.0]
    with pytest.raises(ParameterError, match=r"ax already holds leakages in nats.*no unit"):
        plot_leakage(eps, deltas, quantity="dp_delta", ax=ax)


def test_legend_keys_count_marks_over_every_series() -> None:
    results = z_results()
    ax = plot_leakage(QS, [stalled(results[0]), *results[1:]], parameter="q", label="a")
    plot_leakage(QS, [*results[:3], stalled(results[3])], parameter="q", label="b", ax=ax)
    texts = legend_texts(ax)
    assert texts == ["a", "b", "not converged (2)"]  # one key, listed last, counting both


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("values", "results", "kwargs", "match"),
    [
        ("abc", [0.1], {}, r"parameter_values must be .*got the string 'abc'"),
        ([], [], {}, r"parameter_values must be a non-empty list"),
        ([[0.1, 0.2]], [0.1, 0.2], {}, r"parameter_values must be a non-empty list"),
        ([0.1, math.nan], [0.1, 0.2], {}, r"parameter_values must be finite.*nan"),
        ([0.1, math.inf], [0.1, 0.2], {}, r"parameter_values must be finite.*inf"),
        ([0.1, 0.2], [0.1], {}, r"results has 1 entries for 2 parameter_values"),
        ([0.1], 42, {}, r"results must be a sequence of results .*got 42"),
        ([0.1], "0.5", {}, r"results must be a sequence of results .*got '0.5'"),
        ([0.1, 0.2], [0.1, "x"], {}, r"results\[1\] must be a result .*got 'x'"),
        ([0.1, 0.2], [0.1, None], {}, r"results\[1\] must be a result .*got None"),
        ([0.1, 0.2], [True, 0.2], {}, r"results\[0\] must be a result .*got True"),
        ([0.1], [0.1], {"unit": "bans"}, r"unit must be one of \['bits', 'nats'\], got 'bans'"),
        ([0.1], [0.1], {"value_unit": "bytes"}, r"unit must be one of .*got 'bytes'"),
        ([0.1], [0.1], {"quantity": ""}, r"quantity must be a non-empty string, got ''"),
        ([0.1], [0.1], {"parameter": 3}, r"parameter must be a non-empty string, got 3"),
    ],
)
def test_bad_arguments_are_refused_naming_them(
    values: Any, results: Any, kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ParameterError, match=match):
        plot_leakage(values, results, **kwargs)


def test_mixed_and_batched_entries_are_refused_naming_the_index() -> None:
    result = z_results()[0]
    with pytest.raises(ParameterError, match=r"all results or all numbers.*results\[1\]"):
        plot_leakage([0.1, 0.2], [result, 0.5])
    batch = dpcap.capacities([z_channel(0.1), z_channel(0.3)])
    with pytest.raises(ParameterError, match=r"results\[0\] must be the result of one solve"):
        plot_leakage([0.1], [batch])
    profile = dpcap.renyi_profile(z_channel(0.1), [2.0])  # a sequence: one result per order
    ax = plot_leakage([2.0], profile, parameter="α", quantity="renyi_capacity")
    assert ax.get_ylabel() == r"Rényi capacity $C_\alpha$ (nats)"
