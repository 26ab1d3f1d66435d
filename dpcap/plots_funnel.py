"""Figure of the privacy–utility region of ``S − X − Y`` (the ``plot`` extra).

matplotlib is imported inside the function, never at module import, so ``import dpcap`` works
without it. As in :mod:`dpcap.plots`, figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap import _validation as check
from dpcap.funnel import FunnelCurve, information_bottleneck_curve, privacy_funnel_curve
from dpcap.result import ParameterError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_privacy_region"]


def plot_privacy_region(
    joint_or_curves: Any,
    /,
    *,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    n_points: int | None = None,
    unit: str = "nats",
    mechanisms: bool = True,
) -> Figure:
    r"""Plot the achievable region ``{(I(X;Y), I(S;Y))}`` between the privacy funnel and the IB.

    Parameters
    ----------
    joint_or_curves : array_like or (FunnelCurve, FunnelCurve)
        A joint law ``joint[s, x] = P(S=s, X=x)`` (both curves are then computed with
        :func:`dpcap.funnel.privacy_funnel_curve` and
        :func:`dpcap.funnel.information_bottleneck_curve`, ``n_points`` each), or the two
        curves, in either order, in the same unit.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4.5 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure; the format follows the suffix.
    n_points : int, optional
        Points per curve when computing from a joint law (default 25).
    unit : {"nats", "bits"}
        Unit of the curves computed from a joint law.
    mechanisms : bool
        Whether to mark each returned mechanism at its own ``(I(X;Y), I(S;Y))``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (``ax``'s figure when ``ax`` is given).

    Raises
    ------
    ParameterError
        If ``joint_or_curves`` is a pair that is not one funnel and one bottleneck curve in one
        unit.
    PriorError
        If a joint law is invalid.
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    The privacy funnel ``PF(R) = min {I(S;Y) : I(X;Y) ≥ R}`` is the lower boundary of the
    region and the information bottleneck ``IB(R) = max {I(S;Y) : I(X;Y) ≤ R}`` the upper one
    (Hsu et al., survey, §III-B1): every mechanism lands between them, and the region is convex.
    Both meet at ``(0, 0)`` and at ``(H(X), I(S;X))``. The shaded bands around each boundary are
    the certified brackets (usually thinner than the lines). The dashed diagonal is the
    data-processing limit ``I(S;Y) ≤ I(X;Y)`` and the dotted line ``I(S;Y) = I(S;X)``.

    Examples
    --------
    >>> fig = plot_privacy_region([[0.45, 0.05], [0.05, 0.45]], n_points=5)
    >>> len(fig.axes)
    1
    """
    from matplotlib.figure import Figure  # the `plot` extra: imported here only

    pf, ib = _curves(joint_or_curves, n_points, unit)
    if ax is None:
        fig = Figure(figsize=(6.0, 4.5), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = _root_figure(ax)

    ax.fill_between(
        pf.x, pf.value, np.maximum(ib.value, pf.value), color="0.85", lw=0, label="achievable"
    )
    for curve, color, label in ((pf, "C0", "privacy funnel PF(R)"), (ib, "C3", "bottleneck IB(R)")):
        ax.plot(curve.x, curve.value, color=color, lw=2, label=label)
        ax.fill_between(curve.x, curve.lower, curve.upper, color=color, alpha=0.3, lw=0)
        if mechanisms:
            ax.plot(curve.utility, curve.leakage, ls="none", marker=".", ms=4, color=color)
    top_x = float(pf.x[-1]) if pf.x.size else 1.0
    i_sx = float(pf.value[-1]) if pf.value.size else 0.0
    ax.plot([0.0, top_x], [0.0, top_x], color="0.4", lw=1, ls="--", label="I(S;Y) = I(X;Y)")
    ax.axhline(i_sx, color="0.4", lw=1, ls=":", label="I(S;X)")
    ax.set_xlim(0.0, 1.02 * top_x if top_x > 0 else 1.0)
    ax.set_ylim(0.0, 1.1 * i_sx if i_sx > 0 else 1.0)
    ax.set_xlabel(f"utility $I(X;Y)$ ({pf.unit})")
    ax.set_ylabel(f"leakage $I(S;Y)$ ({pf.unit})")
    ax.set_title("privacy–utility region (Hsu et al. §III-B)")
    ax.legend(loc="best", frameon=False, fontsize=8)
    if path is not None:
        fig.savefig(path)
    return fig


def _curves(obj: Any, n_points: int | None, unit: str) -> tuple[FunnelCurve, FunnelCurve]:
    if (
        isinstance(obj, (tuple, list))
        and len(obj) == 2
        and all(isinstance(c, FunnelCurve) for c in obj)
    ):
        pair: Sequence[FunnelCurve] = obj
        by_problem = {c.problem: c for c in pair}
        if set(by_problem) != {"privacy_funnel", "information_bottleneck"}:
            raise ParameterError(
                "joint_or_curves must hold one privacy funnel and one information bottleneck "
                f"curve, got {[c.problem for c in pair]}"
            )
        pf, ib = by_problem["privacy_funnel"], by_problem["information_bottleneck"]
        if pf.unit != ib.unit:
            raise ParameterError(
                f"the two curves must be in the same unit, got {pf.unit!r} and {ib.unit!r}"
            )
        return pf, ib
    if isinstance(obj, FunnelCurve) or (
        isinstance(obj, (tuple, list)) and any(isinstance(c, FunnelCurve) for c in obj)
    ):
        raise ParameterError(
            "joint_or_curves must be a joint law or a (privacy funnel, information bottleneck) "
            f"pair of curves, got {check.show(obj)}"
        )
    check.unit_divisor(unit)
    pf = privacy_funnel_curve(obj, n_points=n_points, unit=unit)
    ib = information_bottleneck_curve(obj, n_points=n_points, unit=unit)
    return pf, ib


def _root_figure(ax: Axes) -> Figure:
    """The top-level figure of ``ax`` (the one that saves), also when ``ax`` is in a subfigure."""
    getter: Any = ax.get_figure
    try:
        root: Figure = getter(root=True)  # matplotlib >= 3.10
    except TypeError:  # before 3.10: a SubFigure's .figure is the root, a Figure's is itself
        root = getter().figure
    return root
