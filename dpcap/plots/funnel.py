"""Figure of the privacy–utility region of ``S − X − Y`` (``docs/mathematics.rst`` §7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dpcap.errors import ParameterError
from dpcap.plots._common import (
    COLORS,
    SavePath,
    arrays,
    band,
    by_abscissa,
    new_axes,
    require,
    save,
    scale,
)
from dpcap.result import FunnelCurve

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_privacy_region"]


def plot_privacy_region(
    pf_curve: FunnelCurve,
    ib_curve: FunnelCurve,
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    mechanisms: bool = True,
    unit: str | None = None,
) -> Axes:
    r"""Plot the achievable region ``{(I(X;Y), I(S;Y))}`` between the privacy funnel and the IB.

    Parameters
    ----------
    pf_curve : FunnelCurve
        The privacy funnel ``PF(R)``, computed by :func:`dpcap.privacy_funnel_curve`.
    ib_curve : FunnelCurve
        The information bottleneck ``IB(R)`` of the same joint law, computed by
        :func:`dpcap.information_bottleneck_curve` (on any grid of R, in any unit).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4.5 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix.
    mechanisms : bool
        Whether to mark each returned mechanism at its own ``(I(X;Y), I(S;Y))``.
    unit : {"nats", "bits"}, optional
        Unit of both axes. Default: the funnel curve's unit; a curve in the other unit is
        converted.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax`` when given).

    Raises
    ------
    ParameterError
        If an argument is not a FunnelCurve of its problem (``pf_curve`` a privacy funnel,
        ``ib_curve`` an information bottleneck), or ``unit`` is not "nats" or "bits".
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    The privacy funnel ``PF(R) = min {I(S;Y) : I(X;Y) ≥ R}`` is the lower boundary of the
    region and the information bottleneck ``IB(R) = max {I(S;Y) : I(X;Y) ≤ R}`` the upper one
    (Hsu et al., survey, §III-B1; ``docs/mathematics.rst`` §7): every mechanism lands between
    them, and the region is convex. Both meet at ``(0, 0)`` and at ``(H(X), I(S;X))``. The shaded
    bands around each boundary are the certified brackets (usually thinner than the lines). The
    dashed diagonal is the data-processing limit ``I(S;Y) ≤ I(X;Y)`` and the dotted line
    ``I(S;Y) = I(S;X)``.

    Examples
    --------
    >>> import dpcap
    >>> joint = [[0.45, 0.05], [0.05, 0.45]]
    >>> pf = dpcap.privacy_funnel_curve(joint, n_points=5)
    >>> ib = dpcap.information_bottleneck_curve(joint, n_points=5)
    >>> plot_privacy_region(pf, ib).get_xlabel()
    'utility $I(X;Y)$ (nats)'
    """
    for curve, name, problem, source in (
        (pf_curve, "pf_curve", "privacy_funnel", "dpcap.privacy_funnel_curve"),
        (ib_curve, "ib_curve", "information_bottleneck", "dpcap.information_bottleneck_curve"),
    ):
        require(curve, FunnelCurve, name, source)
        if curve.problem != problem:
            raise ParameterError(
                f"{name} must be a {problem.replace('_', ' ')} curve (compute it with "
                f"{source}), got a curve of problem {curve.problem!r}"
            )
    target, _ = scale(pf_curve.unit, unit)
    ax = new_axes(ax, (6.0, 4.5))
    drawn = []
    for curve, color, label in (
        (pf_curve, COLORS["curve"], "privacy funnel PF(R)"),
        (ib_curve, COLORS["second"], "bottleneck IB(R)"),
    ):
        _, factor = scale(curve.unit, target)
        fields = (curve.R, curve.value, curve.lower, curve.upper, curve.utility, curve.leakage)
        R, value, lower, upper, utility, leakage = (
            a * factor for a in by_abscissa(*arrays(*fields))
        )
        drawn.append((R, value))
        ax.plot(R, value, color=color, lw=2, label=label)
        band(ax, R, lower, upper, color)
        if mechanisms:
            ax.plot(utility, leakage, ls="none", marker=".", ms=4, color=color)
    (pf_R, pf_value), (ib_R, ib_value) = drawn
    ax.fill(  # the region: along the funnel, back along the bottleneck
        np.concatenate([pf_R, ib_R[::-1]]),
        np.concatenate([pf_value, ib_value[::-1]]),
        color=COLORS["region"],
        lw=0,
        zorder=0,
        label="achievable",
    )
    top_x = float(pf_R[-1]) if pf_R.size else 1.0
    i_sx = float(pf_value[-1]) if pf_value.size else 0.0
    guide = COLORS["guide"]
    ax.plot([0.0, top_x], [0.0, top_x], color=guide, lw=1, ls="--", label="I(S;Y) = I(X;Y)")
    ax.axhline(i_sx, color=guide, lw=1, ls=":", label="I(S;X)")
    ax.set_xlim(0.0, 1.02 * top_x if top_x > 0 else 1.0)
    ax.set_ylim(0.0, 1.1 * i_sx if i_sx > 0 else 1.0)
    ax.set_xlabel(f"utility $I(X;Y)$ ({target})")
    ax.set_ylabel(f"leakage $I(S;Y)$ ({target})")
    ax.set_title("privacy–utility region (Hsu et al. §III-B)")
    ax.legend(loc="best", frameon=False, fontsize=8)
    return save(ax, path)
