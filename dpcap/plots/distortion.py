r"""Figures of distortion trade-offs: ``R(D)`` with its tangents and ``ε*(D)``.

``docs/mathematics.rst`` §5 (rate/risk–distortion) and §6 (privacy–distortion). Which curve a
figure shows is decided by the function called, never guessed from the curve: each function
labels its axes for its own curve and refuses a curve of the other kind when the curve's
``method`` tells them apart.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.plots._common import (
    COLORS,
    FloatArray,
    SavePath,
    arrays,
    band,
    by_abscissa,
    edge_marks,
    legend_keys,
    new_axes,
    next_color,
    require,
    save,
    scale,
)
from dpcap.result import CurveResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["TANGENTS", "plot_privacy_distortion", "plot_rate_distortion"]

#: Number of tangent lines drawn (at interior points spread evenly along the curve).
TANGENTS = 4

#: ``method`` prefixes of the curves of each kind: Blahut's algorithm computes ``R(D)``
#: (``rate_distortion_curve``, ``mi_privacy_distortion_curve``); the LP search computes
#: ``ε*(D)`` (``privacy_distortion_curve``).
RATE_METHODS = ("blahut",)
PRIVACY_METHODS = ("lp-search",)

#: The gids of the curves each function draws (repeated calls count them to pick a colour).
RATE_GID, PRIVACY_GID = "rate-distortion", "privacy-distortion"

RATE_SOURCE = "dpcap.rate_distortion_curve or dpcap.mi_privacy_distortion_curve"
PRIVACY_SOURCE = "dpcap.privacy_distortion_curve"


def plot_rate_distortion(
    curve: CurveResult,
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    tangents: bool = True,
    unit: str | None = None,
    label: str | None = None,
) -> Axes:
    r"""Plot the rate (risk)–distortion curve ``R(D)`` with tangent lines of slope ``−s``.

    Parameters
    ----------
    curve : CurveResult
        An ``R(D)`` curve computed by :func:`dpcap.rate_distortion_curve` (or
        :func:`dpcap.mi_privacy_distortion_curve`): ``D``, ``value``, ``lower``, ``upper``
        and each point's ``slope`` are drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix.
    tangents : bool
        Whether to draw, at :data:`TANGENTS` interior points (spread over the first 85% of the
        range of D), the line of slope ``−s`` through
        the point: the dual line ``R(D') ≥ R(D) − s (D' − D)`` that supports the convex curve
        there, whose slope is the parameter of the exponential mechanism attaining the point.
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis. Default: the curve's own unit; a curve in the other unit is
        converted.
    label : str, optional
        Legend entry of the curve. Default: ``"$R(D)$"``. Call again with the same ``ax`` and
        another ``label`` to add curves (each in the next colour).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax`` when given).

    Raises
    ------
    ParameterError
        If ``curve`` is not a CurveResult, is a privacy–distortion curve ``ε*(D)`` (plot it
        with :func:`plot_privacy_distortion`), or ``unit`` is not "nats" or "bits".
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    Mir's Figure 1 draws the lines of slope ``−ε`` against the convex curve
    (``docs/mathematics.rst`` §5): the one tangent at a point is the optimal trade-off for that
    ε, and the point's mechanism is the exponential mechanism ``W(y|x) ∝ q(y) e^{−s d(x, y)}``
    with Mir's parameter ``ε = s`` (Thm 3) — not its DP level, which is at most ``2 s Δd``
    (Thm 4; the ``dp_level`` of each point). The
    shaded band is the certified bracket ``lower ≤ R ≤ upper`` (usually thinner than the line).
    The slopes are in nats per unit distortion; in bits the tangents are drawn with slope
    ``−s / log 2`` (the labels keep ``s`` in nats per unit distortion). The distortion is
    in the unit of the distortion matrix. Drawn again on the same axes, a curve takes the next
    colour and the limits grow to hold every curve.

    Examples
    --------
    >>> import dpcap
    >>> curve = dpcap.rate_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=8)
    >>> plot_rate_distortion(curve).get_ylabel()
    'rate $R(D)$ (nats)'
    """
    require(curve, CurveResult, "curve", RATE_SOURCE)
    if curve.method.startswith(PRIVACY_METHODS):
        raise ParameterError(
            f"curve must be a rate–distortion curve R(D) (from {RATE_SOURCE}), got a "
            f"privacy–distortion curve ε*(D) (method {curve.method!r}): plot it with "
            "plot_privacy_distortion"
        )
    target, factor = scale(curve.unit, unit)
    slopes = np.array([p.slope for p in curve.points], dtype=np.float64)
    D, value, lower, upper, slopes = by_abscissa(
        *arrays(curve.D, curve.value, curve.lower, curve.upper), slopes
    )
    value, lower, upper = value * factor, lower * factor, upper * factor

    ax = new_axes(ax)
    first = not _holds(ax, RATE_GID)
    color = next_color(ax, RATE_GID)
    ax.plot(
        D,
        value,
        color=color,
        lw=2,
        marker=".",
        ms=4,
        label="$R(D)$" if label is None else str(label),
        gid=RATE_GID,
    )
    band(ax, D, lower, upper, color)
    top = float(value.max()) if value.size and value.max() > 0 else 1.0
    span = float(D[-1] - D[0]) if D.size > 1 else 1.0
    if tangents:
        _tangents(ax, D, value, slopes / check.unit_divisor(target), slopes, top, span, first)
    _limits(ax, first, D[0] - 0.02 * span, D[-1] + 0.02 * span, 1.08 * top)
    ax.set_xlabel("expected distortion $D$")
    ax.set_ylabel(f"rate $R(D)$ ({target})")
    ax.set_title("rate–distortion $R(D)$: least mutual information within distortion $D$")
    ax.legend(loc="upper right", frameon=False)
    return save(ax, path)


def plot_privacy_distortion(
    curve: CurveResult,
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    unit: str | None = None,
    label: str | None = None,
) -> Axes:
    r"""Plot the privacy–distortion function ``ε*(D)``: the least ε-DP level within budget D.

    Parameters
    ----------
    curve : CurveResult
        An ``ε*(D)`` curve computed by :func:`dpcap.privacy_distortion_curve`: ``D`` (the
        budgets), ``value``, ``lower`` and ``upper`` are drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix.
    unit : {"nats", "bits"}, optional
        Checked, but ε is always drawn in nats: it bounds the natural log of a likelihood
        ratio (so ``unit="bits"``, e.g. from a command line that converts its information
        quantities, leaves ε in nats). A curve stored in bits is converted to nats.
    label : str, optional
        Legend entry of the curve. Default: ``"$\varepsilon^*(D)$"``. Call again with the same
        ``ax`` and another ``label`` to add curves (each in the next colour).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax`` when given).

    Raises
    ------
    ParameterError
        If ``curve`` is not a CurveResult, is a rate–distortion curve ``R(D)`` (plot it with
        :func:`plot_rate_distortion`), or ``unit`` is not "nats" or "bits".
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    ``ε*(D) = min{ε : d*(ε) ≤ D}`` (Wang, Ying and Zhang; ``docs/mathematics.rst`` §6) is
    non-increasing in the budget D. The line joins the conservative ends ``value = upper`` (the
    exact level of a verified mechanism within D) and the shaded band is the certified bracket
    ``lower ≤ ε* ≤ upper``. A budget where ``ε* = ∞`` (no ε-DP mechanism reaches D, e.g.
    ``D = d_min`` when ``d*(ε) > d_min`` for every finite ε) has no point on the line; it is
    marked by a triangle on the top edge of the axes. No tangent lines are drawn: the points
    of an ``ε*(D)`` curve carry no slope. Drawn again on the same axes, a curve takes the next
    colour and the limits grow to hold every curve.

    Examples
    --------
    >>> import dpcap
    >>> curve = dpcap.privacy_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=4)
    >>> plot_privacy_distortion(curve).get_ylabel()
    'least $\\varepsilon$-DP level $\\varepsilon^*(D)$ (nats)'
    """
    require(curve, CurveResult, "curve", PRIVACY_SOURCE)
    if curve.method.startswith(RATE_METHODS):
        raise ParameterError(
            f"curve must be a privacy–distortion curve ε*(D) (from {PRIVACY_SOURCE}), got a "
            f"rate–distortion curve R(D) (method {curve.method!r}): plot it with "
            "plot_rate_distortion"
        )
    check.unit_divisor(unit if unit is not None else "nats")  # checked; ε stays in nats
    _, factor = scale(curve.unit, "nats")
    D, value, lower, upper = by_abscissa(*arrays(curve.D, curve.value, curve.lower, curve.upper))
    value, lower, upper = value * factor, lower * factor, upper * factor
    finite = np.isfinite(value)
    shown = np.concatenate([value[finite], lower[np.isfinite(lower)]])
    top = 1.08 * float(shown.max()) if shown.size and shown.max() > 0 else 1.0
    span = float(D[-1] - D[0]) if D.size > 1 else 1.0

    ax = new_axes(ax)
    first = not _holds(ax, PRIVACY_GID)
    color = next_color(ax, PRIVACY_GID)
    ax.plot(
        D[finite],
        value[finite],
        color=color,
        lw=2,
        marker=".",
        ms=4,
        label=r"$\varepsilon^*(D)$" if label is None else str(label),
        gid=PRIVACY_GID,
    )
    band(ax, D, np.minimum(lower, top), np.minimum(upper, top), color)
    edge_marks(ax, D[~finite], value[~finite], color)
    legend_keys(ax)
    _limits(ax, first, D[0] - 0.02 * span, D[-1] + 0.02 * span, top)
    ax.set_xlabel("distortion budget $D$")
    ax.set_ylabel(r"least $\varepsilon$-DP level $\varepsilon^*(D)$ (nats)")
    ax.set_title(r"privacy–distortion $\varepsilon^*(D)$: least $\varepsilon$ within budget $D$")
    ax.legend(loc="upper right", frameon=False)
    return save(ax, path)


def _holds(ax: Axes, gid: str) -> bool:
    """Whether ``ax`` already holds a curve of kind ``gid`` (drawn by an earlier call)."""
    return any(line.get_gid() == gid for line in ax.get_lines())


def _limits(ax: Axes, first: bool, left: float, right: float, top: float) -> None:
    """Set the limits to ``[left, right] × [0, top]``, or widen them to hold this curve too."""
    if not first:
        (x0, x1), (_, y1) = ax.get_xlim(), ax.get_ylim()
        left, right, top = min(left, x0), max(right, x1), max(top, y1)
    ax.set_xlim(left, right)
    ax.set_ylim(0.0, top)


def _tangents(
    ax: Axes,
    D: FloatArray,
    value: FloatArray,
    drawn: FloatArray,
    slopes: FloatArray,
    top: float,
    span: float,
    legend: bool,
) -> None:
    """Draw the lines of slope ``−s`` at up to :data:`TANGENTS` interior points of ``R(D)``.

    ``slopes`` are the points' ``s`` in nats per unit distortion (the labels), ``drawn`` the
    same slopes in the unit of the vertical axis; ``legend``: whether the first line has a
    legend entry (once per axes). Each label sits above and to the right of its point, on the
    side of the convex curve away from the tangent; the points are taken in the first 85% of
    the range of D, so that the labels stay inside the axes.
    """
    room = D[0] + 0.85 * span  # a label right of its point stays inside the axes
    interior = [
        k for k in range(len(D)) if 0.0 < slopes[k] < math.inf and value[k] > 0 and D[k] <= room
    ]
    if not interior:
        return
    picks = np.unique(np.linspace(0, len(interior) - 1, min(TANGENTS, len(interior))).round())
    for n, j in enumerate(picks.astype(int)):
        k = interior[j]
        s = drawn[k]
        half = 0.3 * min(span, top / s)
        grid = np.array([D[k] - half, D[k] + half])
        ax.plot(
            grid,
            value[k] - s * (grid - D[k]),
            color=COLORS["tangent"],
            lw=1,
            ls="--",
            label=r"tangent of slope $-s$ (exponential mechanism $\propto e^{-s\,d}$)"
            if n == 0 and legend
            else "_nolegend_",
            gid="tangent",
        )
        ax.annotate(
            f"s = {slopes[k]:.3g}",
            (D[k], value[k]),
            textcoords="offset points",
            xytext=(6, 6),
            ha="left",
            fontsize=8,
            color=COLORS["tangent"],
        )
