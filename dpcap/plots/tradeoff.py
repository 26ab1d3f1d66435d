"""Figure of trade-off (f-DP) curves ``α ↦ β(α)`` (``docs/mathematics.rst`` §13)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dpcap.plots._common import SavePath, band, new_axes, next_color, require, save
from dpcap.result import TradeoffCurve

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_tradeoff"]


def plot_tradeoff(
    curve: TradeoffCurve,
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    label: str | None = None,
) -> Axes:
    r"""Plot a trade-off curve ``β(α)`` with its certified band, and the diagonal ``β = 1 − α``.

    Parameters
    ----------
    curve : TradeoffCurve
        From :func:`dpcap.tradeoff_curve`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure.
    path : str or path-like, optional
        Where to save the figure (format from the suffix).
    label : str, optional
        The legend entry; by default the releases and the attacker's advantage.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ParameterError
        If ``curve`` is not a :class:`~dpcap.result.TradeoffCurve`.

    Notes
    -----
    ``β(α)`` is the smallest type-II error of a test of a database against a neighbour at
    type-I error ``α`` (Dong, Roth & Su 2022): the lower the curve, the stronger the attacker.
    The diagonal ``β = 1 − α`` is perfect privacy; the largest vertical gap below it is the
    attacker's advantage, the total variation ``δ(0)``. The band is ``[lower, upper]``; the
    line is ``value`` (the lower, conservative end). Called again with the same ``ax``, the
    new curve takes the next colour.

    Examples
    --------
    >>> import math, dpcap
    >>> from dpcap.mechanisms import randomized_response
    >>> t = dpcap.tradeoff_curve(randomized_response(2, math.log(3)), [0.0, 0.25, 0.5, 1.0])
    >>> ax = plot_tradeoff(t)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('type-I error α', 'type-II error β(α)')
    """
    require(curve, TradeoffCurve, "curve", "dpcap.tradeoff_curve")
    ax = new_axes(ax)
    order = np.argsort(curve.alpha, kind="stable")
    x = curve.alpha[order]
    color = next_color(ax, "tradeoff")
    if label is None:
        label = f"{curve.folds} release(s), advantage ≤ {curve.advantage:.3g}"
    band(ax, x, curve.lower[order], curve.upper[order], color)
    ax.plot(x, curve.value[order], color=color, lw=2, label=label, gid="tradeoff")
    if not any(line.get_gid() == "tradeoff-diagonal" for line in ax.get_lines()):
        ax.plot([0, 1], [1, 0], "k:", lw=1, label="β = 1 − α (no leakage)", gid="tradeoff-diagonal")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.0)
    ax.set_aspect("equal")
    ax.set_xlabel("type-I error α")
    ax.set_ylabel("type-II error β(α)")
    ax.set_title("trade-off curve (f-DP): the best test of neighbours")
    ax.legend(loc="best", frameon=False, fontsize=8)
    return save(ax, path)
