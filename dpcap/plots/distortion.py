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

from dpcap import _validation as check
from dpcap.plots._common import (
    COLORS,
    FloatArray,
    SavePath,
    arrays,
    band,
    by_abscissa,
    new_axes,
    require,
    save,
    scale,
)
from dpcap.result import CurveResult, ParameterError

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
        Whether to draw, at :data:`TANGENTS` interior points, the line of slope ``−s`` through
        the point: the dual line ``R(D') ≥ R(D) − s (D' − D)`` that supports the convex curve
        there, whose slope is the parameter of the exponential mechanism attaining the point.
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis. Default: the curve's own unit; a curve in the other unit is
        converted.

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
    ε, and the point's mechanism is the exponential mechanism with parameter ``ε = s``. The
    shaded band is the certified bracket ``lower ≤ R ≤ upper`` (usually thinner than the line).
    The slopes are in nats per unit distortion; in bits the tangents are drawn with slope
    ``−s / log 2`` (the labels keep ``s`` in nats, the ε of the mechanism).

    Examples
    --------
    >>> import dpcap
    >>> curve = dpcap.rate_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=8)
    >>> plot_rate_distortion(curve).get_ylabel()
    '$R(D)$ (nats)'
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
    ax.plot(D, value, color=COLORS["curve"], lw=2, marker=".", ms=4, label="$R(D)$")
    band(ax, D, lower, upper, COLORS["curve"])
    top = float(value.max()) if value.size and value.max() > 0 else 1.0
    span = float(D[-1] - D[0]) if D.size > 1 else 1.0
    if tangents:
        _tangents(ax, D, value, slopes / check.unit_divisor(target), slopes, top, span)
    ax.set_xlim(D[0] - 0.02 * span, D[-1] + 0.02 * span)
    ax.set_ylim(0.0, 1.08 * top)
    ax.set_xlabel("expected distortion $D$")
    ax.set_ylabel(f"$R(D)$ ({target})")
    ax.set_title("rate–distortion $R(D)$")
    ax.legend(loc="upper right", frameon=False)
    return save(ax, path)


def plot_privacy_distortion(
    curve: CurveResult,
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    unit: str | None = None,
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
        Unit of ε on the vertical axis. Default: the curve's own unit (nats, the usual ε); a
        curve in the other unit is converted.

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
    marked by a triangle at the top of the axes. No tangent lines are drawn: the points of an
    ``ε*(D)`` curve carry no slope.

    Examples
    --------
    >>> import dpcap
    >>> curve = dpcap.privacy_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=4)
    >>> plot_privacy_distortion(curve).get_ylabel()
    '$\\varepsilon^*(D)$ (nats)'
    """
    require(curve, CurveResult, "curve", PRIVACY_SOURCE)
    if curve.method.startswith(RATE_METHODS):
        raise ParameterError(
            f"curve must be a privacy–distortion curve ε*(D) (from {PRIVACY_SOURCE}), got a "
            f"rate–distortion curve R(D) (method {curve.method!r}): plot it with "
            "plot_rate_distortion"
        )
    target, factor = scale(curve.unit, unit)
    D, value, lower, upper = by_abscissa(*arrays(curve.D, curve.value, curve.lower, curve.upper))
    value, lower, upper = value * factor, lower * factor, upper * factor
    finite = np.isfinite(value)
    shown = np.concatenate([value[finite], lower[np.isfinite(lower)]])
    top = 1.08 * float(shown.max()) if shown.size and shown.max() > 0 else 1.0
    span = float(D[-1] - D[0]) if D.size > 1 else 1.0

    ax = new_axes(ax)
    color = COLORS["curve"]
    ax.plot(
        D[finite], value[finite], color=color, lw=2, marker=".", ms=4, label=r"$\varepsilon^*(D)$"
    )
    band(ax, D, np.minimum(lower, top), np.minimum(upper, top), color)
    if not finite.all():
        ax.plot(
            D[~finite],
            np.full(int((~finite).sum()), top),
            ls="none",
            marker="^",
            color=color,
            clip_on=False,
            label=r"$\varepsilon^* = \infty$",
        )
    ax.set_xlim(D[0] - 0.02 * span, D[-1] + 0.02 * span)
    ax.set_ylim(0.0, top)
    ax.set_xlabel("distortion budget $D$")
    ax.set_ylabel(rf"$\varepsilon^*(D)$ ({target})")
    ax.set_title(r"privacy–distortion $\varepsilon^*(D)$")
    ax.legend(loc="upper right", frameon=False)
    return save(ax, path)


def _tangents(
    ax: Axes,
    D: FloatArray,
    value: FloatArray,
    drawn: FloatArray,
    slopes: FloatArray,
    top: float,
    span: float,
) -> None:
    """Draw the lines of slope ``−s`` at up to :data:`TANGENTS` interior points of ``R(D)``.

    ``slopes`` are the points' ``s`` in nats per unit distortion (the labels), ``drawn`` the
    same slopes in the unit of the vertical axis.
    """
    interior = [k for k in range(len(D)) if 0.0 < slopes[k] < math.inf and value[k] > 0]
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
            label="tangent, slope $-s$" if n == 0 else None,
        )
        right = D[k] > D[0] + 0.75 * span  # near the right edge: label on the left
        ax.annotate(
            f"s = {slopes[k]:.3g}",
            (D[k], value[k]),
            textcoords="offset points",
            xytext=(-6, 6) if right else (6, 6),
            ha="right" if right else "left",
            fontsize=8,
            color=COLORS["tangent"],
        )
