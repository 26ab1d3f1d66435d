"""Figure of a leakage against a mechanism parameter, from results computed by the caller."""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.errors import ParameterError, Status
from dpcap.plots._common import (
    FloatArray,
    SavePath,
    describe,
    legend_keys,
    new_axes,
    next_color,
    parameter_label,
    save,
    series,
    vertical,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_leakage"]

#: The gid of the lines this plot draws (repeated calls count them to pick the next colour).
GID = "leakage-line"

#: The fields a result needs to be drawn with its certificate.
FIELDS = ("value", "lower", "upper", "status", "unit")


def plot_leakage(
    parameter_values: Any,
    results: Any,
    /,
    *,
    parameter: str = "ε",
    quantity: str = "leakage",
    label: str | None = None,
    unit: str | None = None,
    value_unit: str = "nats",
    parameter_unit: str | None = None,
    ax: Axes | None = None,
    path: SavePath | None = None,
    band: bool = True,
    color: Any = None,
    logx: bool = False,
    logy: bool = False,
) -> Axes:
    r"""Plot a leakage against a mechanism parameter, one result (or number) per value.

    Parameters
    ----------
    parameter_values : array_like, shape (n,)
        The values of the mechanism's parameter (finite reals), e.g. the ε of each randomized
        response whose leakage was computed.
    results : sequence of results, or of real numbers, length n
        What was computed at each parameter value, in the same order. Either results with a
        certified bracket (:class:`~dpcap.CapacityResult` from :func:`dpcap.capacity`,
        :func:`dpcap.renyi_capacity` or :func:`dpcap.alpha_leakage`; :class:`~dpcap.MIDPResult`
        from :func:`dpcap.midp` or :func:`dpcap.renyi_midp`; any result with ``value``,
        ``lower``, ``upper``, ``status`` and ``unit``; a :class:`~dpcap.CapacitiesResult`
        of a batch), or plain numbers, which claim no bracket (DP metrics in closed form:
        :func:`dpcap.dp_epsilon`, :func:`dpcap.max_leakage`, :func:`dpcap.kl_dp`, ...).
    parameter : str, default "ε"
        Name of the parameter on the horizontal axis.
    quantity : str, default "leakage"
        What the values are: a dpcap query name (``"capacity"``, ``"midp"``, ``"renyi_midp"``,
        ``"max_leakage"``, ``"kl_dp"``, ``"renyi_dp"``, ``"dp_epsilon"``, ``"dp_delta"``,
        ``"tv_dp"``, ...), which names the axis and decides the unit, or any other text, taken
        as the name of an information quantity (in nats or bits).
    label : str, optional
        Legend entry of this series. Call again with the same ``ax`` and another ``label`` to
        add series (each in the next colour).
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis for an information quantity. Default: the results' own unit
        (nats when they differ). An ε (``"dp_epsilon"``) is a bound on the natural log of a
        likelihood ratio and stays in nats; δ and the total variation have no unit: for these
        ``unit`` is checked but does not convert.
    value_unit : {"nats", "bits"}, default "nats"
        Unit of plain numbers in ``results`` (results carry their own ``unit``).
    parameter_unit : str, optional
        Unit shown after the parameter's name. Default: nats for an ε (``"ε"``, ``"eps"``,
        ``"epsilon"``), none otherwise.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix.
    band : bool, default True
        Shade the certified bracket ``[lower, upper]`` where both ends are finite and some
        bracket is open (numbers have none).
    color : matplotlib colour, optional
        Colour of the series; by default the next one on ``ax``.
    logx, logy : bool, default False
        Logarithmic horizontal / vertical axis.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax`` when given).

    Raises
    ------
    ParameterError
        If ``parameter_values`` is not a list of finite reals, ``results`` is not a sequence of
        as many results or numbers (an element that is neither, or a mix of both, is named by
        its index), ``unit`` or ``value_unit`` is not "nats" or "bits", or ``ax`` already holds
        leakages in another unit.
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    The line joins the values (for a certified result, ``value``, the conservative end of its
    bracket) in increasing parameter order and the shaded band is the bracket
    ``lower ≤ leakage ≤ upper``. Results whose status is not converged are drawn with hollow
    markers; an infinite value (an ε = ∞) is a triangle on the top edge of the axes, a value
    that is NaN (a failed solve) a cross on the bottom edge; the legend counts each kind over
    every series on the axes. Series of different quantities may share axes if they share a
    unit: the vertical axis is then labelled "leakage".

    Examples
    --------
    >>> import dpcap
    >>> from dpcap.mechanisms import randomized_response
    >>> eps = [0.5, 1.0, 2.0]
    >>> results = [dpcap.capacity(randomized_response(2, e)) for e in eps]
    >>> ax = plot_leakage(eps, results, quantity="capacity", label="RR(2)")
    >>> ax.get_xlabel(), ax.get_ylabel(), ax.get_title()
    ('ε (nats)', 'capacity (nats)', 'capacity against ε')
    """
    x = _parameter_values(parameter_values)
    value, lower, upper, open_, units = _results(results, len(x), value_unit)
    for name, text in (("parameter", parameter), ("quantity", quantity)):
        if not isinstance(text, str) or not text:
            raise ParameterError(f"{name} must be a non-empty string, got {check.show(text)}")
    name, kind = describe(quantity)
    factor, ylabel = vertical(units, name, kind, unit)
    ax = new_axes(ax)
    ylabel, title = _shared_axis(ax, ylabel, name, parameter)
    order = np.argsort(x, kind="stable")
    series(
        ax,
        x[order],
        value[order] * factor[order],
        lower[order] * factor[order],
        upper[order] * factor[order],
        open_[order],
        color=next_color(ax, GID) if color is None else color,
        label="_nolegend_" if label is None else str(label),
        gid=GID,
        shade=band,
    )
    labelled = [ln for ln in ax.get_lines() if ln.get_gid() == GID and _shown(ln.get_label())]
    if legend_keys(ax) or labelled:
        ax.legend(loc="best", frameon=False)
    ax.set_xlabel(parameter_label(parameter, parameter_unit))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    else:  # leakages are >= 0: the axis starts at 0, and grows with every series added
        ax.autoscale(enable=True, axis="y")
        ax.set_ylim(bottom=min(ax.get_ylim()[0], 0.0))
    return save(ax, path)


def _shown(label: Any) -> bool:
    return isinstance(label, str) and not label.startswith("_")


def _unit_of(label: str) -> str:
    """The unit at the end of an axis label built by :func:`vertical` (``""`` for none)."""
    found = re.search(r" \(([^()]*)\)$", label)
    return found.group(1) if found else ""


def _shared_axis(ax: Axes, ylabel: str, name: str, parameter: str) -> tuple[str, str]:
    """The vertical label and the title, given the leakages ``ax`` already holds."""
    title = f"{name} against {parameter}"
    if not any(line.get_gid() == GID for line in ax.get_lines()):
        return ylabel, title
    held = ax.get_ylabel()
    if held == ylabel:
        return ylabel, title
    old, new = _unit_of(held), _unit_of(ylabel)
    if old != new:
        raise ParameterError(
            f"ax already holds leakages in {old or 'no unit'}, and {name} would be drawn in "
            f"{new or 'no unit'}: pass unit={old!r} or draw it on other axes"
            if old in check.UNITS and new in check.UNITS
            else f"ax already holds leakages in {old or 'no unit'}, and {name} is in "
            f"{new or 'no unit'}: draw it on other axes"
        )
    return (f"leakage ({new})" if new else "leakage"), f"leakages against {parameter}"


def _parameter_values(values: Any) -> FloatArray:
    x = check.real_array(values, "parameter_values")
    if x.ndim != 1 or x.size == 0:
        raise ParameterError(
            f"parameter_values must be a non-empty list of numbers, got {check.show(values)}"
        )
    if not np.isfinite(x).all():
        raise ParameterError(
            "parameter_values must be finite (each point needs a place on the axis), got "
            f"{check.show(values)}"
        )
    return x


def _is_number(item: Any) -> bool:
    """A real number (a Python or NumPy scalar, or a 0-d real array), not a bool."""
    if isinstance(item, (bool, np.bool_)):
        return False
    if isinstance(item, np.ndarray):
        return item.ndim == 0 and item.dtype.kind in "iuf"
    return isinstance(item, numbers.Real)


def _results(
    results: Any, n: int, value_unit: str
) -> tuple[FloatArray, FloatArray, FloatArray, NDArray[np.bool_], list[str]]:
    """``value``, ``lower``, ``upper``, whether each bracket is open, and each one's unit."""
    check.unit_divisor(value_unit)
    if isinstance(results, (str, bytes)) or not isinstance(results, Iterable):
        raise ParameterError(
            "results must be a sequence of results (with value, lower, upper, status and unit) "
            f"or of numbers, got {check.show(results)}"
        )
    items = list(results)
    if len(items) != n:
        raise ParameterError(
            f"results has {len(items)} entries for {n} parameter_values: one result per value"
        )
    rows = [_row(item, i, value_unit) for i, item in enumerate(items)]
    numbers_ = [_is_number(item) for item in items]
    if any(numbers_) and not all(numbers_):
        first, other = numbers_.index(True), numbers_.index(False)
        raise ParameterError(
            f"results must be all results or all numbers, got a mix: results[{first}] is the "
            f"number {check.show(items[first])}, results[{other}] {check.show(items[other])}"
        )
    value, lower, upper = (np.array([r[k] for r in rows], dtype=np.float64) for k in range(3))
    open_ = np.array([r[3] for r in rows], dtype=bool)
    return value, lower, upper, open_, [r[4] for r in rows]


def _row(item: Any, i: int, value_unit: str) -> tuple[float, float, float, bool, str]:
    """One entry of ``results``: its value, bracket, whether it is open, and its unit."""
    if _is_number(item):
        v = float(item)
        return v, v, v, False, value_unit  # a number claims no bracket: closed, not shaded
    if not all(hasattr(item, f) for f in FIELDS):
        raise ParameterError(
            f"results[{i}] must be a result (with value, lower, upper, status and unit) or a "
            f"real number, got {check.show(item)}"
        )
    try:
        v, lo, up = (float(getattr(item, f)) for f in FIELDS[:3])
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"results[{i}] must be the result of one solve (a number per field), got a "
            f"{type(item).__name__} with value {check.show(item.value)}"
        ) from exc
    status = item.status
    converged = status is Status.CONVERGED or str(status) == Status.CONVERGED.value
    return v, lo, up, not converged, str(item.unit)
