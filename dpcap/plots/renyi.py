"""Figure of the α-capacity profile ``α ↦ C_α`` (``docs/mathematics.rst`` §4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dpcap.plots._common import (
    COLORS,
    FloatArray,
    SavePath,
    arrays,
    by_abscissa,
    new_axes,
    require,
    save,
    scale,
)
from dpcap.result import ParameterError, RenyiProfile

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CLIP", "DEFAULT_ALPHAS", "plot_renyi_profile"]

#: A grid of orders that reads well on the figure's log axis: 50 orders log-spaced over three
#: decades around α = 1 (Shannon), for ``dpcap.renyi_profile(W, DEFAULT_ALPHAS)``.
DEFAULT_ALPHAS: FloatArray = np.geomspace(0.05, 50.0, 50)

#: The band above the radius is clipped at this multiple of the largest radius when some
#: diameter is infinite or larger still (see ``_ceiling``).
CLIP = 10.0


def plot_renyi_profile(
    profile: RenyiProfile,
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    unit: str | None = None,
) -> Axes:
    r"""Plot the α-capacity profile ``α ↦ C_α`` with the diameter as an upper band.

    Parameters
    ----------
    profile : RenyiProfile
        A profile computed by :func:`dpcap.renyi_profile`: its fields ``alpha``, ``value``
        (``C_α``), ``diameter`` and ``unit`` are drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix (``.png``,
        ``.pdf``, or any other format matplotlib writes).
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis. Default: the profile's own unit; a profile in the other unit
        is converted.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax`` when given).

    Raises
    ------
    ParameterError
        If ``profile`` is not a RenyiProfile, ``unit`` is not "nats" or "bits", or the profile's
        arrays do not have one entry per order.
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    The curve is the Rényi radius ``C_α = min_Q max_x D_α(W_x ‖ Q) = max_p I_α^S(p, W)``
    (``docs/mathematics.rst`` §4). The band above it reaches the diameter
    ``max_{x,x'} D_α(W_x ‖ W_{x'})``: the capacity ``sup_p D_α(P_XY ‖ P_X P_Y)`` of the
    Rényi-capacity article lies between the two (as in its binary-symmetric-channel example,
    where the radius is ``log 2 − H_α(p)``), and equals the ε-DP level at α = ∞. The α axis is
    logarithmic, so orders that are not positive and finite (α = 0, α = ∞) are left out of the
    figure. Where the diameter is infinite (an input puts mass where another puts none, at
    α ≥ 1), or more than :data:`CLIP` times the largest radius, the band runs to the top of the
    axes, 10% above the largest radius or diameter drawn (at most 11 times the largest radius).

    Examples
    --------
    >>> import dpcap
    >>> profile = dpcap.renyi_profile([[0.9, 0.1], [0.1, 0.9]], [0.5, 2.0, 8.0])
    >>> ax = plot_renyi_profile(profile)
    >>> ax.get_xscale(), ax.get_ylabel()
    ('log', 'capacity (nats)')
    """
    require(profile, RenyiProfile, "profile", "dpcap.renyi_profile")
    target, factor = scale(profile.unit, unit)
    orders, value, diameter = arrays(profile.alpha, profile.value, profile.diameter)
    if not (value.shape == diameter.shape == orders.shape):
        raise ParameterError(
            "a profile needs one value and one diameter per order; got shapes"
            f" alpha {orders.shape}, value {value.shape}, diameter {diameter.shape}"
        )
    shown = (orders > 0) & np.isfinite(orders)
    orders, value, diameter = by_abscissa(orders[shown], value[shown], diameter[shown])
    value, diameter = value * factor, diameter * factor

    ax = new_axes(ax)
    color = COLORS["curve"]
    ax.plot(orders, value, color=color, lw=2, label=r"radius $C_\alpha$ (Sibson)")
    ceiling = _ceiling(value, diameter)
    ax.fill_between(
        orders,
        value,
        np.minimum(diameter, ceiling),
        color=color,
        alpha=0.2,
        lw=0,
        label=r"radius $\leq C_\alpha \leq$ diameter",
    )
    ax.plot(
        orders,
        np.where(np.isfinite(diameter), diameter, np.nan),
        color=color,
        lw=1,
        ls="--",
        label=r"diameter $\max_{x,x'} D_\alpha(W_x \| W_{x'})$",
    )
    ax.set_xscale("log")
    ax.set_ylim(0.0, ceiling)
    ax.axvline(1.0, color=COLORS["axis"], lw=0.8, ls=":")
    ax.set_xlabel(r"order $\alpha$")
    ax.set_ylabel(f"capacity ({target})")
    ax.set_title(r"Rényi capacity profile $\alpha \mapsto C_\alpha$")
    ax.legend(loc="best", frameon=False)
    return save(ax, path)


def _ceiling(value: FloatArray, diameter: FloatArray) -> float:
    """Top of the axes: 10% above everything drawn, at most 11 times the largest radius.

    Diameters can be infinite, or finite and huge next to the radius (near α = 1 when one row
    puts mass where another puts none): the band is then clipped at the top of the axes rather
    than flattening the radius curve against the bottom. With an infinite diameter the axes reach
    at least twice the largest radius, so the band shows.
    """
    radius = value[np.isfinite(value)]
    radius_top = float(radius.max()) if radius.size else 0.0
    finite = diameter[np.isfinite(diameter)]
    top = max(radius_top, float(finite.max()) if finite.size else 0.0)
    if radius_top > 0:
        if finite.size < diameter.size:
            top = max(top, 2.0 * radius_top)  # room to show the band above the curve
        top = min(top, CLIP * radius_top)
    return 1.1 * top if top > 0 else 1.0
