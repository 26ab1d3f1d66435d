"""``dpcap.plots.plot_sweep``: one query of a sweep table against a grid column, drawn off-screen.

What is checked, on tables built here in the layout of :func:`dpcap.sweep` (``point``, the grid
parameters, ``query``, the query parameters, ``value``, ``lower``, ``upper``, ``status``,
``iterations``, ``method``, ``unit``, ``message``, ``seconds``):

* one line per value of ``hue``, in sorted order, the legend titled with the column, each line
  through its rows' values sorted by ``x``; the certified bracket shaded only where it is open;
* the vertical label names the query and its unit: information converts between nats and bits
  (a value in bits is the value in nats divided by log 2), an ε stays in nats, δ and the total
  variation have no unit;
* ``where`` fixes other columns; a line with several rows at one ``x`` is refused, naming the
  column that differs; rows without a value (NaN) or with an infinite one are marked on the
  bottom or top edge at their ``x`` and counted, rows that did not converge are drawn hollow
  and counted;
* bad arguments are refused naming the argument; the figure is saved when given a path.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dpcap.errors import ParameterError
from dpcap.plots import plot_sweep

LN2 = math.log(2.0)
ROOT = Path(__file__).resolve().parents[1]

NS = (2, 4, 8)
EPS = (0.5, 1.0, 2.0)


def row(point: int, n: int, eps: float, query: str, value: float, **extra: Any) -> dict[str, Any]:
    """A row of a sweep table (closed bracket, converged, nats) with ``extra`` overriding."""
    out: dict[str, Any] = {
        "point": point,
        "n": n,
        "eps": eps,
        "query": query,
        "alpha": math.nan,
        "value": value,
        "lower": value,
        "upper": value,
        "status": "converged",
        "iterations": 0,
        "method": "closed form",
        "unit": "nats",
        "message": "",
        "seconds": 0.0,
    }
    out.update(extra)
    return out


def leak(n: int, eps: float) -> float:
    """A made-up leakage, increasing in n and ε (the plot computes nothing)."""
    return math.log1p(n * eps) / 2


def sweep_table(shuffle: bool = True) -> pd.DataFrame:
    """Grid n × ε with capacity (open bracket), dp_epsilon (= ε), renyi_dp at α = 2 and 8."""
    rows = []
    for point, (n, eps) in enumerate((n, e) for n in NS for e in EPS):
        v = leak(n, eps)
        rows.append(row(point, n, eps, "capacity", v, lower=v - 0.01, method="ba", iterations=9))
        rows.append(row(point, n, eps, "dp_epsilon", eps))
        for alpha in (2.0, 8.0):
            rows.append(row(point, n, eps, "renyi_dp", eps * (1 - 1 / alpha), alpha=alpha))
    rows.append(row(9, 2, 0.5, "dp_delta", 0.1, unit=""))
    rows.append(row(9, 2, 0.5, "tv_dp", 0.2, unit=""))
    table = pd.DataFrame(rows)
    if shuffle:  # the plot sorts: the table's order must not matter
        table = table.sample(frac=1.0, random_state=np.random.default_rng(0))
    return table


def lines(ax: Axes, gid: str = "sweep-line") -> list[Line2D]:
    return [line for line in ax.get_lines() if line.get_gid() == gid]


def xy(line: Line2D) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)


def test_importing_the_module_imports_neither_matplotlib_nor_pandas() -> None:
    code = (
        "import sys, dpcap.plots.sweep; print(sorted({'matplotlib', 'pandas'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_one_line_per_hue_value_sorted_through_the_values(tmp_path: Path) -> None:
    path = tmp_path / "capacity.png"
    ax = plot_sweep(sweep_table(), "n", "capacity", hue="eps", path=path)
    drawn = lines(ax)
    assert len(drawn) == len(EPS)
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "eps"
    assert [t.get_text() for t in legend.get_texts()] == ["0.5", "1", "2"]
    for line, eps in zip(drawn, EPS, strict=True):
        x, y = xy(line)
        np.testing.assert_array_equal(x, NS)
        np.testing.assert_allclose(y, [leak(n, eps) for n in NS], rtol=1e-15)
    assert ax.get_xlabel() == "n"
    assert all(float(t).is_integer() for t in ax.get_xticks())  # n is an integer column
    assert ax.get_ylabel() == "capacity (nats)"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bits_divide_nats_by_log_two() -> None:
    ax = plot_sweep(sweep_table(), "eps", "capacity", hue="n", unit="bits")
    assert ax.get_ylabel() == "capacity (bits)"
    assert ax.get_xlabel() == "eps (nats)"  # an ε column: a privacy loss, in nats
    assert ax.get_title() == "capacity against eps"
    for line, n in zip(lines(ax), NS, strict=True):
        _, y = xy(line)
        np.testing.assert_allclose(y, [leak(n, e) / LN2 for e in EPS], rtol=1e-15)


def test_rows_already_in_bits_are_drawn_as_they_are_or_converted() -> None:
    table = sweep_table()
    cap = table["query"] == "capacity"
    table.loc[cap, ["value", "lower", "upper"]] /= LN2
    table.loc[cap, "unit"] = "bits"
    ax = plot_sweep(table, "eps", "capacity", hue="n")
    assert ax.get_ylabel() == "capacity (bits)"
    _, y = xy(lines(ax)[0])
    np.testing.assert_allclose(y, [leak(2, e) / LN2 for e in EPS], rtol=1e-15)
    ax = plot_sweep(table, "eps", "capacity", hue="n", unit="nats")
    _, y = xy(lines(ax)[0])
    np.testing.assert_allclose(y, [leak(2, e) for e in EPS], rtol=1e-14)


def test_privacy_metrics_keep_their_own_units() -> None:
    table = sweep_table()
    ax = plot_sweep(table, "n", "dp_epsilon", hue="eps", unit="bits")
    assert ax.get_ylabel() == "ε-DP level (nats)"  # a bound on a natural log: never in bits
    for line, eps in zip(lines(ax), EPS, strict=True):
        np.testing.assert_array_equal(xy(line)[1], [eps] * len(NS))
    assert plot_sweep(table, "n", "dp_delta").get_ylabel() == "δ(ε)"
    assert plot_sweep(table, "n", "tv_dp", unit="nats").get_ylabel() == "TV-DP"


def test_band_only_where_the_bracket_is_open() -> None:
    table = sweep_table()
    ax = plot_sweep(table, "n", "capacity", hue="eps")
    assert len(ax.collections) == len(EPS)
    band = ax.collections[0].get_paths()[0].vertices
    # the band of ε = 0.5 spans [value − 0.01, value] at each n
    assert band[:, 1].min() == pytest.approx(leak(2, 0.5) - 0.01)
    assert band[:, 1].max() == pytest.approx(leak(8, 0.5))
    assert not plot_sweep(table, "n", "capacity", hue="eps", band=False).collections
    assert not plot_sweep(table, "n", "dp_epsilon", hue="eps").collections  # closed form

    table.loc[table["query"] == "capacity", "upper"] = math.inf
    ax = plot_sweep(table, "n", "capacity", hue="eps")
    assert not ax.collections  # no finite upper end anywhere: nothing to shade


def test_where_fixes_a_column_and_ambiguity_names_it() -> None:
    table = sweep_table()
    with pytest.raises(ParameterError, match="'alpha'") as info:
        plot_sweep(table, "n", "renyi_dp", hue="eps")
    assert "where=" in str(info.value)
    ax = plot_sweep(table, "n", "renyi_dp", hue="eps", where={"alpha": 8.0})
    for line, eps in zip(lines(ax), EPS, strict=True):
        np.testing.assert_allclose(xy(line)[1], [eps * 7 / 8] * len(NS), rtol=1e-15)
    assert "alpha = 8" in ax.get_title()

    with pytest.raises(ParameterError, match="'eps'"):  # two ε per n without a hue
        plot_sweep(table, "n", "capacity")
    ax = plot_sweep(table, "n", "capacity", where={"eps": 1.0})
    assert len(lines(ax)) == 1
    assert ax.get_legend() is None
    np.testing.assert_allclose(xy(lines(ax)[0])[1], [leak(n, 1.0) for n in NS], rtol=1e-15)
    ax = plot_sweep(table, "alpha", "renyi_dp", hue="n", where={"eps": 2.0})
    np.testing.assert_array_equal(xy(lines(ax)[0])[0], [2.0, 8.0])


def test_where_matches_floats_computed_another_way() -> None:
    table = sweep_table()
    table.loc[table["eps"] == 0.5, "eps"] = 0.1 + 0.4  # 0.5 by a sum, as a linspace gives
    ax = plot_sweep(table, "n", "capacity", where={"eps": 0.5})
    assert len(xy(lines(ax)[0])[0]) == len(NS)
    with pytest.raises(ParameterError, match=r"where\['eps'\] = 0\.7.*0\.5, 1, 2"):
        plot_sweep(table, "n", "capacity", where={"eps": 0.7})
    with pytest.raises(ParameterError, match="a key of where"):
        plot_sweep(table, "n", "capacity", where={"sigma": 1.0})


def test_rows_without_value_are_marked_on_the_edges_and_counted() -> None:
    """A failed row (NaN) is a cross on the bottom edge at its ``x``, an ε = ∞ a triangle on
    the top edge; neither is on its line, and the legend counts each kind."""
    table = sweep_table()
    failed = (table["query"] == "capacity") & (table["n"] == 4) & (table["eps"] == 1.0)
    table.loc[failed, ["value", "lower", "upper"]] = math.nan
    table.loc[failed, "status"] = "failed"
    infinite = (table["query"] == "capacity") & (table["n"] == 8) & (table["eps"] == 2.0)
    table.loc[infinite, ["value", "upper"]] = math.inf
    ax = plot_sweep(table, "n", "capacity", hue="eps")
    x = [xy(line)[0].tolist() for line in lines(ax)]
    assert x == [[2, 4, 8], [2, 8], [2, 4]]
    (cross,) = lines(ax, "no-value")
    (triangle,) = lines(ax, "infinite")
    assert (cross.get_marker(), triangle.get_marker()) == ("x", "^")
    np.testing.assert_array_equal(np.ravel(xy(cross)), [4.0, 0.0])
    np.testing.assert_array_equal(np.ravel(xy(triangle)), [8.0, 1.0])  # axes coordinates
    assert cross.get_transform() == ax.get_xaxis_transform()
    assert cross.get_color() == lines(ax)[1].get_color()  # the colour of the ε = 1 line
    assert triangle.get_color() == lines(ax)[2].get_color()
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "no value: failed or too large (1)" in texts
    assert "infinite (1)" in texts
    assert not lines(ax, "not-converged")  # marked rows are not drawn hollow as well


def test_rows_not_converged_are_hollow_and_counted() -> None:
    table = sweep_table()
    late = (table["query"] == "capacity") & (table["n"] == 4) & (table["eps"] != 1.0)
    table.loc[late, "status"] = "max_iter"
    ax = plot_sweep(table, "n", "capacity", hue="eps")
    hollow = lines(ax, "not-converged")
    assert len(hollow) == 2
    for line in hollow:
        assert line.get_markerfacecolor() == "none"
        np.testing.assert_array_equal(xy(line)[0], [4])
    first = lines(ax)[0]
    assert list(first.get_markevery()) == [0, 2]  # filled markers at n = 2 and 8 only
    assert "not converged (2)" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_draws_on_given_axes_with_log_scales() -> None:
    ax = Figure().add_subplot()
    out = plot_sweep(sweep_table(), "n", "capacity", hue="eps", ax=ax, logx=True, logy=True)
    assert out is ax
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"table": [[1.0]]}, "table"),
        ({"table": pd.DataFrame({"n": [1]})}, "query"),
        ({"x": "value"}, "x must"),
        ({"x": "m"}, "x must"),
        ({"hue": "m"}, "hue must"),
        ({"hue": "n"}, "hue must differ"),
        ({"query": "midp"}, "query must"),
        ({"unit": "bytes"}, "unit"),
    ],
)
def test_bad_arguments_are_refused_naming_them(kwargs: dict[str, Any], named: str) -> None:
    call: dict[str, Any] = {
        "table": sweep_table(),
        "x": "n",
        "query": "capacity",
        "where": {"eps": 1.0},
    }
    call.update(kwargs)
    table, x, query = call.pop("table"), call.pop("x"), call.pop("query")
    with pytest.raises(ParameterError, match=named):
        plot_sweep(table, x, query, **call)
