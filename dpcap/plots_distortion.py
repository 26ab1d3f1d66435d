"""Figures of distortion trade-offs (the ``plot`` extra: ``pip install dpcap[plot]``).

matplotlib is imported inside the function, never at module import, so ``import dpcap`` works
without it. As in :mod:`dpcap.plots`, figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap import _validation as check
from dpcap.result import CurveResult, ParameterError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_rate_distortion"]

#: Number of tangent lines drawn (at interior points spread evenly along the curve).
TANGENTS = 4


def plot_rate_distortion(
    curve_or_args: CurveResult | Sequence[Any],
    /,
    *,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    tangents: bool = True,
) -> Figure:
    r"""Plot the risk–distortion curve ``R(D)`` with tangent lines of slope ``−s`` (Mir, Fig. 1).

    Parameters
    ----------
    curve_or_args : CurveResult or (prior, distortion)
        A curve computed by :func:`dpcap.rate_distortion` (or
        :func:`dpcap.mi_privacy_distortion`) without ``D``, or the pair ``(prior, distortion)``
        to compute it with the defaults.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure; the format follows the suffix.
    tangents : bool
        Whether to draw, at a few interior points, the line of slope ``−s`` through the point:
        the dual line ``R(D') ≥ R(D) − s (D' − D)`` that supports the convex curve there, whose
        slope is the parameter of the exponential mechanism attaining the point.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (``ax``'s figure when ``ax`` is given).

    Raises
    ------
    ParameterError
        If ``curve_or_args`` is neither a curve nor a ``(prior, distortion)`` pair.
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    Mir's Figure 1 draws the lines of slope ``−ε`` against the convex curve: the one tangent
    at a point is the optimal trade-off for that ε, and the point's mechanism is the exponential
    mechanism with parameter ``ε = s``. The shaded band is the certified bracket
    ``lower ≤ R ≤ upper`` (usually thinner than the line). The curve's slopes are in nats per
    unit distortion; for a curve in bits the tangents are drawn with slope ``−s / log 2``.

    Examples
    --------
    >>> fig = plot_rate_distortion(([0.5, 0.5], [[0, 1], [1, 0]]))
    >>> len(fig.axes)
    1
    """
    from matplotlib.figure import Figure  # the `plot` extra: imported here only

    curve = _curve(curve_or_args)
    x = np.asarray(curve.x, dtype=np.float64)
    value = np.asarray(curve.value, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    x, value = x[order], value[order]
    lower = np.asarray(curve.lower, dtype=np.float64)[order]
    upper = np.asarray(curve.upper, dtype=np.float64)[order]
    slopes = np.array([curve.points[k].slope for k in order], dtype=np.float64)
    divisor = check.unit_divisor(curve.unit)

    if ax is None:
        fig = Figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = _root_figure(ax)

    (line,) = ax.plot(x, value, color="C0", lw=2, marker=".", ms=4, label="R(D)")
    ax.fill_between(x, lower, upper, color=line.get_color(), alpha=0.25, lw=0)
    top = float(value.max()) if value.size and value.max() > 0 else 1.0
    span = float(x[-1] - x[0]) if x.size > 1 else 1.0
    if tangents:
        interior = [k for k in range(len(x)) if 0.0 < slopes[k] < math.inf and value[k] > 0]
        if interior:
            picks = np.unique(np.linspace(0, len(interior) - 1, min(TANGENTS, len(interior))))
            for n, j in enumerate(picks.round().astype(int)):
                k = interior[j]
                s = slopes[k] / divisor
                half = 0.3 * min(span, top / s) if s > 0 else 0.3 * span
                grid = np.array([x[k] - half, x[k] + half])
                ax.plot(
                    grid,
                    value[k] - s * (grid - x[k]),
                    color="C1",
                    lw=1,
                    ls="--",
                    label="tangent, slope $-s$" if n == 0 else None,
                )
                ax.annotate(
                    f"s = {slopes[k]:.3g}",
                    (x[k], value[k]),
                    textcoords="offset points",
                    xytext=(6, 6),
                    fontsize=8,
                    color="C1",
                )
    ax.set_xlim(x[0] - 0.02 * span, x[-1] + 0.02 * span)
    ax.set_ylim(0.0, 1.08 * top)
    ax.set_xlabel("expected distortion $D$")
    ax.set_ylabel(f"$R(D)$ ({curve.unit})")
    ax.set_title("risk–distortion (Mir, Fig. 1)")
    ax.legend(loc="upper right", frameon=False)
    if path is not None:
        fig.savefig(path)
    return fig


def _curve(obj: Any) -> CurveResult:
    if isinstance(obj, CurveResult):
        return obj
    if isinstance(obj, (tuple, list)) and len(obj) == 2:
        from dpcap.ratedistortion import rate_distortion

        prior, distortion = obj
        return rate_distortion(prior, distortion)
    raise ParameterError(
        "curve_or_args must be a CurveResult (from rate_distortion without D) or a "
        f"(prior, distortion) pair, got {check.show(obj)}"
    )


def _root_figure(ax: Axes) -> Figure:
    """The top-level figure of ``ax`` (the one that saves), also when ``ax`` is in a subfigure."""
    getter: Any = ax.get_figure
    try:
        root: Figure = getter(root=True)  # matplotlib >= 3.10
    except TypeError:  # before 3.10: a SubFigure's .figure is the root, a Figure's is itself
        root = getter().figure
    return root
