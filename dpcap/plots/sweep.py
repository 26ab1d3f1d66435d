"""Figure of a sweep table: one query's value against a grid parameter, one line per hue value.

The table is the tidy one :func:`dpcap.sweep` and :func:`dpcap.load_sweep` return: one row per
(grid point, query, query parameter value) with the columns ``point``, the grid parameters,
``query``, the query parameters, ``value``, ``lower``, ``upper``, ``status``, ``iterations``,
``method``, ``unit``, ``message`` and ``seconds``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.plots._common import (
    COLORS,
    QUERY_LABELS,
    SavePath,
    describe,
    legend_keys,
    new_axes,
    parameter_label,
    require,
    save,
    series,
    vertical,
)
from dpcap.study.catalogue import RESULT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = ["QUERY_LABELS", "RESULT_COLUMNS", "plot_sweep"]


#: Above this many lines the colours come from a sequential colormap rather than the cycle.
_CYCLE = 10


def plot_sweep(
    table: pd.DataFrame,
    x: str,
    query: str,
    *,
    hue: str | None = None,
    where: Mapping[str, Any] | None = None,
    ax: Axes | None = None,
    path: SavePath | None = None,
    band: bool = True,
    unit: str | None = None,
    logx: bool = False,
    logy: bool = False,
) -> Axes:
    """Plot one query of a sweep table against a grid column, one line per value of ``hue``.

    Parameters
    ----------
    table : pandas.DataFrame
        A sweep table (:func:`dpcap.sweep`, :func:`dpcap.load_sweep`).
    x : str
        The column on the horizontal axis (a grid parameter or a query parameter).
    query : str
        The query drawn: rows with ``table["query"] == query``.
    hue : str, optional
        A column with one line per value (in sorted order), the legend titled with its name.
    where : mapping of str to value, optional
        Columns to fix, e.g. ``{"alpha": 2.0}``: only rows with these values are drawn (floats
        match to a relative 1e-12, so values computed by a linspace match their printed form).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix.
    band : bool, default True
        Shade the certified bracket ``[lower, upper]`` around each line where both ends are
        finite and the bracket is not closed (DP metrics in closed form have none).
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis for information-valued queries (capacity, MI-DP, leakages,
        KL/Rényi DP). Default: the rows' own unit. An ε (``dp_epsilon``) is a bound on a natural
        log of a likelihood ratio and stays in nats; ``dp_delta`` and ``tv_dp`` have no unit:
        for these ``unit`` is checked but does not convert.
    logx, logy : bool, default False
        Logarithmic horizontal / vertical axis.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax`` when given).

    Raises
    ------
    ParameterError
        If ``table`` is not a sweep table, ``x``, ``hue`` or a key of ``where`` is not one of its
        parameter columns, ``query`` or a ``where`` value has no rows, ``unit`` is not "nats" or
        "bits", or some ``x`` value still has several rows on one line (the message names the
        columns to fix with ``where`` or to use as ``hue``).
    ImportError
        If matplotlib (the ``plot`` extra) or pandas is not installed.

    Notes
    -----
    Rows whose status is not ``"converged"`` are drawn with hollow markers and counted in the
    legend. Rows that cannot be placed on the vertical axis are marked at their ``x`` on an
    edge of the axes and counted in the legend: an infinite value (an ε = ∞) by a triangle on
    the top edge, a row without a value (NaN: ``failed``, ``too_large``) by a cross on the
    bottom edge. A column named ``eps`` (or ``ε``, ``epsilon``) is labelled in nats. Calling
    again with the same ``ax`` adds lines (the legend keys count the marks of all of them).

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({
    ...     "point": [0, 1], "n": [2, 4], "query": "capacity", "value": [0.3, 0.5],
    ...     "lower": [0.29, 0.49], "upper": [0.3, 0.5], "status": "converged",
    ...     "iterations": 10, "method": "ba", "unit": "nats", "message": "", "seconds": 0.0})
    >>> ax = plot_sweep(table, "n", "capacity")
    >>> ax.get_xlabel(), ax.get_ylabel(), ax.get_title()
    ('n', 'capacity (nats)', 'capacity against n')
    """
    import pandas as pd

    rows = _select(table, x, query, hue, where)
    name, kind = describe(query)
    factor, ylabel = vertical([str(u) for u in rows["unit"]], name, kind, unit)
    ax = new_axes(ax)
    groups = [(None, rows)] if hue is None else list(rows.groupby(hue, dropna=False, sort=True))
    for (level, part), color in zip(groups, _palette(len(groups)), strict=True):
        label = "_nolegend_" if hue is None else _show(level)
        _line(ax, part.sort_values(x, kind="stable"), x, factor, color, label, band)
    if legend_keys(ax) or hue is not None:
        ax.legend(title=hue, loc="best", frameon=False)
    ax.set_xlabel(parameter_label(x))
    if pd.api.types.is_integer_dtype(rows[x]) and not logx:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # n = 2, 4, ...: no tick at 2.5
    ax.set_ylabel(ylabel)
    ax.set_title(_title(name, x, where))
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    return save(ax, path)


def _line(
    ax: Axes, part: pd.DataFrame, x: str, factor: Any, color: Any, label: str, shade: bool
) -> None:
    """Draw one line (rows sorted by ``x``) through the shared :func:`series`."""
    scale = factor[part.index.to_numpy()]
    value, lower, upper = (part[c].to_numpy(dtype=np.float64) * scale for c in RESULT_COLUMNS[:3])
    series(
        ax,
        part[x].to_numpy(),
        value,
        lower,
        upper,
        part["status"].to_numpy() != "converged",
        color=color,
        label=label,
        gid="sweep-line",
        shade=shade,
    )


def _select(
    obj: Any, x: str, query: str, hue: str | None, where: Mapping[str, Any] | None
) -> pd.DataFrame:
    """The rows drawn (index reset), after checking the columns and that each line is a curve."""
    import pandas as pd

    require(obj, pd.DataFrame, "table", "dpcap.sweep or dpcap.load_sweep")
    table: pd.DataFrame = obj
    lacking = [c for c in ("query", *RESULT_COLUMNS[:4]) if c not in table.columns]
    if lacking:
        raise ParameterError(f"table must be a sweep table; it has no column {', '.join(lacking)}")
    parameters = [c for c in table.columns if c not in ("query", *RESULT_COLUMNS)]
    _column(x, "x", parameters)
    if hue is not None:
        _column(hue, "hue", parameters)
        if hue == x:
            raise ParameterError(f"hue must differ from x, got hue = x = {hue!r}")
    queries = sorted(str(q) for q in table["query"].unique())
    if query not in queries:
        raise ParameterError(f"query must be one of the table's queries {queries}, got {query!r}")
    rows = table[table["query"] == query]
    fixed = dict(where or {})
    for key, wanted in fixed.items():
        _column(key, "a key of where", [c for c in table.columns if c not in (x, hue, "query")])
        kept = rows[_matches(rows[key], wanted)]
        if kept.empty:
            seen = _levels(rows[key])
            raise ParameterError(
                f"where[{key!r}] = {check.show(wanted)} matches no row of query {query!r};"
                f" its values there: {seen}"
            )
        rows = kept
    keys = [x] if hue is None else [hue, x]
    if rows.groupby(keys, dropna=False).size().max() > 1:
        raise ParameterError(_ambiguity(rows, keys, query, parameters, fixed))
    return rows.reset_index(drop=True)


def _column(name: Any, what: str, allowed: list[str]) -> None:
    if not isinstance(name, str) or name not in allowed:
        raise ParameterError(
            f"{what} must be a column of the table in {allowed}, got {check.show(name)}"
        )


def _matches(column: pd.Series[Any], wanted: Any) -> Any:
    """Rows of ``column`` equal to ``wanted``: NaN matches NaN, floats match to 1e-12 relative."""
    import pandas as pd

    if isinstance(wanted, float) and math.isnan(wanted):
        return column.isna()
    numeric = isinstance(wanted, (int, float, np.number)) and not isinstance(wanted, bool)
    if numeric and pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        values = column.to_numpy(dtype=np.float64)
        return pd.Series(
            np.isclose(values, float(wanted), rtol=1e-12, atol=0.0), index=column.index
        ) | (column == wanted)
    return column == wanted


def _levels(column: pd.Series[Any], limit: int = 10) -> str:
    """The distinct values of ``column``, sorted where they sort, for an error message."""
    levels = list(column.drop_duplicates())
    with contextlib.suppress(TypeError):  # mixed types: kept in order of appearance
        levels = sorted(levels)
    shown = ", ".join(_show(v) for v in levels[:limit])
    return f"[{shown}{', ...' if len(levels) > limit else ''}]"


def _ambiguity(
    rows: pd.DataFrame, keys: list[str], query: str, parameters: list[str], fixed: dict[str, Any]
) -> str:
    """Why a line has several rows at one ``x``: the columns that vary within a line point."""
    grouped = rows.groupby(keys, dropna=False)
    varying = [
        c
        for c in parameters
        if c not in keys
        and c != "point"
        and c not in fixed
        and grouped[c].nunique(dropna=False).max() > 1
    ]
    where = " and ".join(repr(k) for k in keys)
    if not varying:
        return f"query {query!r} has duplicate rows (same parameters) at some value of {where}"
    first = varying[0]
    example = _show(rows[first].dropna().iloc[0])
    return (
        f"query {query!r} has several rows at some value of {where}: they differ in"
        f" {', '.join(repr(c) for c in varying)}; fix {'them' if len(varying) > 1 else 'it'} with"
        f" where= (e.g. where={{{first!r}: {example}}}; values {_levels(rows[first])})"
        f" or pass {first!r} as hue"
    )


def _title(name: str, x: str, where: Mapping[str, Any] | None) -> str:
    title = f"{name} against {x}"
    if where:
        title += " at " + ", ".join(f"{k} = {_show(v)}" for k, v in where.items())
    return title


def _palette(count: int) -> list[Any]:
    """``count`` line colours: the property cycle, or viridis beyond :data:`_CYCLE` lines."""
    if count == 1:
        return [COLORS["curve"]]
    if count <= _CYCLE:
        return [f"C{i}" for i in range(count)]
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [cmap(t) for t in np.linspace(0.0, 0.9, count)]


def _show(value: Any) -> str:
    """A level as a legend or title shows it: floats in ``%g``, other values by ``str``."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    return str(value)
