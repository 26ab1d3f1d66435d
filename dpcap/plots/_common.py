"""What every dpcap figure shares: the axes, the unit, the style and the save step.

matplotlib is imported inside :func:`new_axes` only, so importing this module (and
:mod:`dpcap.plots`) does not import it. Figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``: no global figure registry, no backend chosen on the caller's
behalf, nothing to close in a loop.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcap import _validation as check
from dpcap.result import ParameterError

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


def save(ax: Axes, path: SavePath | None) -> Axes:
    """Save the figure holding ``ax`` to ``path`` (format from the suffix) if given; return ax."""
    if path is not None:
        root_figure(ax).savefig(path)
    return ax
