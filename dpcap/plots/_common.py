"""What every dpcap figure shares: the axes, the units, the style, the marks and the save step.

One home for each thing drawn the same way on several figures: the readable name and kind of a
quantity (:data:`QUERY_LABELS`, :func:`vertical`), the label of a parameter axis
(:func:`parameter_label`), one series with its certified band and its unconverged points
(:func:`series`), the points that cannot be placed on the axis (:func:`edge_marks`), their legend
keys (:func:`legend_keys`) and the colour of the next series on shared axes
(:func:`next_color`).

matplotlib is imported inside the functions only, so importing this module (and
:mod:`dpcap.plots`) does not import it. Figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``: no global figure registry, no backend chosen on the caller's
behalf, nothing to close in a loop.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcap._core import validation as check
from dpcap.errors import ParameterError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FloatArray = NDArray[np.float64]

#: Colours of the figures' elements (matplotlib colour specs), one palette for every plot.
COLORS: dict[str, str] = {
    "curve": "C0",  # the main curve (C_α, R(D), ε*(D), the privacy funnel)
    "second": "C3",  # a second boundary (the information bottleneck)
    "tangent": "C1",  # supporting lines and their labels
    "guide": "0.4",  # reference lines (data-processing limits)
    "axis": "0.6",  # marks on an axis (α = 1)
    "region": "0.85",  # an achievable region
}

#: Colours of successive series drawn on the same axes (the first is the main curve's; the
#: tangent colour ``C1`` comes last, so that a second curve is not mistaken for a tangent).
SERIES: tuple[str, ...] = ("C0", "C2", "C3", "C4", "C5", "C6", "C8", "C9", "C7", "C1")

#: What a quantity measures, which decides its unit: information (nats or bits, converted by
#: ``unit=``), a privacy loss (an ε, a bound on the natural log of a likelihood ratio: always in
#: nats) or a unitless number (a probability, δ, a total-variation distance).
INFORMATION, PRIVACY_LOSS, UNITLESS = "information", "privacy loss", "unitless"

#: Readable name of each dpcap query (the names of :func:`dpcap.sweep`) for an axis, and what
#: its values measure (:data:`INFORMATION`, :data:`PRIVACY_LOSS` or :data:`UNITLESS`).
QUERY_LABELS: dict[str, tuple[str, str]] = {
    "capacity": ("capacity", INFORMATION),
    "midp": ("MI-DP", INFORMATION),
    "renyi_midp": ("Rényi MI-DP", INFORMATION),
    "correlated_leakage": ("correlated leakage", INFORMATION),
    "kl_dp": ("KL-DP", PRIVACY_LOSS),
    "renyi_dp": ("Rényi DP", PRIVACY_LOSS),
    "max_leakage": ("maximal leakage", INFORMATION),
    "min_entropy_leakage": ("min-entropy leakage", INFORMATION),
    "renyi_capacity": (r"Rényi capacity $C_\alpha$", INFORMATION),
    "alpha_leakage": ("α-leakage", INFORMATION),
    "dp_epsilon": ("ε-DP level", PRIVACY_LOSS),
    "dp_delta": ("δ(ε)", UNITLESS),
    "tv_dp": ("TV-DP", UNITLESS),
}

#: Names of a parameter that is an ε (a privacy loss, in nats): their axis says so.
EPSILON_NAMES = frozenset({"ε", "eps", "epsilon", r"$\varepsilon$", r"$\epsilon$"})

#: Opacity of a certified bracket ``lower ≤ value ≤ upper`` drawn as a band around its curve.
BAND_ALPHA = 0.25

#: Where a figure is saved: the format follows the suffix (``.png``, ``.pdf``, ...).
SavePath: TypeAlias = "str | os.PathLike[str]"


def require(result: object, cls: type, name: str, source: str) -> None:
    """Raise :class:`ParameterError` naming ``name`` unless ``result`` is a ``cls``.

    ``source`` says which dpcap function computes one, so that the message tells the user how
    to get the argument right.
    """
    if not isinstance(result, cls):
        raise ParameterError(
            f"{name} must be a {cls.__name__} (compute it with {source}), got {check.show(result)}"
        )


def scale(own: str, unit: str | None) -> tuple[str, float]:
    """The unit to draw in (``unit``, or the result's own) and the factor from ``own`` to it."""
    target = own if unit is None else unit
    return target, check.unit_divisor(own) / check.unit_divisor(target)


def arrays(*values: ArrayLike) -> list[FloatArray]:
    """Flat ``float64`` copies of a result's array fields."""
    return [np.asarray(v, dtype=np.float64).ravel() for v in values]


def by_abscissa(x: FloatArray, *others: FloatArray) -> list[FloatArray]:
    """``x`` and ``others`` reordered so that ``x`` increases (a stable sort)."""
    order = np.argsort(x, kind="stable")
    return [x[order], *(a[order] for a in others)]


def new_axes(ax: Axes | None, size: tuple[float, float] = (6.0, 4.0)) -> Axes:
    """``ax``, or the one axes of a new ``size``-inch figure (constrained layout)."""
    if ax is not None:
        return ax
    from matplotlib.figure import Figure  # the `plot` extra: imported here only

    fig = Figure(figsize=size, layout="constrained")
    new: Axes = fig.add_subplot()
    return new


def band(ax: Axes, x: FloatArray, lower: FloatArray, upper: FloatArray, color: str) -> None:
    """Shade the certified bracket ``lower ≤ value ≤ upper`` (usually thinner than the line)."""
    ax.fill_between(x, lower, upper, color=color, alpha=BAND_ALPHA, lw=0)


def root_figure(ax: Axes) -> Figure:
    """The top-level figure of ``ax`` (the one that saves), also when ``ax`` is in a subfigure."""
    getter: Any = ax.get_figure
    try:
        root: Figure = getter(root=True)  # matplotlib >= 3.10
    except TypeError:  # before 3.10: a SubFigure's .figure is the root, a Figure's is itself
        root = getter().figure
    return root


def describe(name: str) -> tuple[str, str]:
    """The readable name and kind of ``name``: a dpcap query name (a key of
    :data:`QUERY_LABELS`), or any other text, taken as the name of an information quantity."""
    return QUERY_LABELS.get(name, (name, INFORMATION))


def parameter_label(name: str, unit: str | None = None) -> str:
    """The label of a parameter axis: ``name (unit)``; an ε is in nats unless ``unit`` says."""
    if unit is None and name in EPSILON_NAMES:
        unit = "nats"
    return f"{name} ({unit})" if unit else name


def vertical(
    units: Sequence[str], name: str, kind: str, unit: str | None
) -> tuple[FloatArray, str]:
    """The factor turning each value (in ``units[i]``) into the drawn unit, and the axis label.

    An information quantity is drawn in ``unit``, or in the values' own unit when they share
    one (nats when they are mixed); a privacy loss stays in nats and a unitless quantity has
    none: ``unit`` is checked for these but does not convert. A unit other than nats and bits
    is shown as it is when every value has it and ``unit`` is not given, else refused.
    """
    if unit is not None:
        check.unit_divisor(unit)  # a unit that is neither nats nor bits is an error everywhere
    ones = np.ones(len(units))
    if kind == PRIVACY_LOSS:
        return ones, f"{name} (nats)"
    if kind == UNITLESS:
        return ones, name
    own = [str(u) for u in units]
    known = sorted(set(own) & set(check.UNITS))
    if unit is None:
        if len(set(own)) == 1 and not known:  # a unit this plot does not know: shown, not converted
            return ones, f"{name} ({own[0]})" if own[0] else name
        unit = known[0] if len(known) == 1 else "nats"
    strangers = sorted(set(own) - set(check.UNITS))
    if strangers:
        raise ParameterError(
            f"unit={unit!r} converts between nats and bits; some values are in {strangers}"
        )
    target = check.unit_divisor(unit)
    factor = np.array([check.UNITS[u] / target for u in own], dtype=np.float64)
    return factor, f"{name} ({unit})"


def next_color(ax: Axes, gid: str) -> str:
    """The colour of the next series of kind ``gid`` on ``ax``: :data:`SERIES` in turn, so that
    repeated calls on the same axes draw distinguishable curves."""
    count = sum(1 for line in ax.get_lines() if line.get_gid() == gid)
    return SERIES[count % len(SERIES)]


def series(
    ax: Axes,
    x: FloatArray,
    value: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    open_: Any,
    *,
    color: Any,
    label: str,
    gid: str,
    shade: bool = True,
    markers: bool = True,
    lw: float = 1.5,
) -> None:
    """Draw one series (``x`` increasing): its values, its certified band and its open points.

    Points with a finite value are joined by a line, filled markers on the converged ones
    (unless ``markers`` is false) and hollow markers (gid ``"not-converged"``) on those whose
    ``open_`` is true (a status other than converged). The band ``[lower, upper]`` is shaded
    where both ends are finite, if ``shade`` and some bracket is open. Points without a finite
    value go to :func:`edge_marks`.
    """
    drawn = np.isfinite(value)
    open_ = np.asarray(open_, dtype=bool)
    edge_marks(ax, x[~drawn], value[~drawn], color)
    xs, value, lower, upper = x[drawn], value[drawn], lower[drawn], upper[drawn]
    open_ = open_[drawn]
    filled = [int(i) for i in np.flatnonzero(~open_)] if markers else []
    ax.plot(
        xs,
        value,
        color=color,
        lw=lw,
        marker="o" if markers else "None",
        ms=4,
        markevery=filled,
        label=label,
        gid=gid,
    )
    if open_.any():
        ax.plot(
            xs[open_],
            value[open_],
            ls="none",
            marker="o",
            ms=5,
            mfc="none",
            mec=color,
            label="_nolegend_",
            gid="not-converged",
        )
    closed = np.isfinite(lower) & np.isfinite(upper)
    if shade and (closed & (upper > lower)).any():
        band(ax, xs, np.where(closed, lower, np.nan), np.where(closed, upper, np.nan), color)


#: What each edge mark means, in the legend: gid → (marker, side of the axes, legend text).
_EDGES = {
    "infinite": ("^", 1.0, "infinite"),
    "no-value": ("x", 0.0, "no value: failed or too large"),
}


def edge_marks(ax: Axes, x: FloatArray, value: FloatArray, color: Any) -> None:
    """Mark the points that cannot be placed on the vertical axis, at their ``x``.

    An infinite value (an ε = ∞) is a triangle on the top edge of the axes; a NaN (a solve that
    failed or was refused as too large) a cross on the bottom edge. Both stay in place when the
    vertical limits change; :func:`legend_keys` counts them.
    """
    for gid, points in (("infinite", value == np.inf), ("no-value", ~(value == np.inf))):
        if points.any():
            marker, edge, _ = _EDGES[gid]
            ax.plot(
                x[points],
                np.full(int(points.sum()), edge),
                ls="none",
                marker=marker,
                ms=6,
                color=color,
                clip_on=False,
                transform=ax.get_xaxis_transform(),  # x in data, y in axes coordinates
                label="_nolegend_",
                gid=gid,
            )


def legend_keys(ax: Axes) -> bool:
    """Legend keys counting the marked points of every series on ``ax``; whether there are any.

    One grey key each for the points drawn hollow (not converged) and the edge marks (infinite,
    no value), with their number over all the series on the axes. Keys from an earlier call on
    the same axes are replaced, so repeated calls keep one key each, listed last.
    """
    for line in [ln for ln in ax.get_lines() if ln.get_gid() == "legend-key"]:
        line.remove()
    counts = {"not-converged": 0, "infinite": 0, "no-value": 0}
    for line in ax.get_lines():
        gid = line.get_gid()
        if gid in counts:
            counts[gid] += len(np.atleast_1d(line.get_xdata()))
    keys = {
        "not-converged": ("o", "not converged"),
        **{gid: (marker, text) for gid, (marker, _, text) in _EDGES.items()},
    }
    for gid, count in counts.items():
        if count:
            marker, text = keys[gid]
            ax.plot(
                [],
                [],
                ls="none",
                marker=marker,
                mfc="none" if marker == "o" else COLORS["guide"],
                mec=COLORS["guide"],
                label=f"{text} ({count})",
                gid="legend-key",
            )
    return any(counts.values())


def save(ax: Axes, path: SavePath | None) -> Axes:
    """Save the figure holding ``ax`` to ``path`` (format from the suffix) if given; return ax."""
    if path is not None:
        root_figure(ax).savefig(path)
    return ax
