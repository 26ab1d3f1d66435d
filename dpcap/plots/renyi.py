"""Figure of the α-capacity profile ``α ↦ C_α`` with its radius and diameter bounds
(``docs/mathematics.rst`` §4)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import ParameterError, Status
from dpcap.plots._common import (
    COLORS,
    FloatArray,
    SavePath,
    arrays,
    by_abscissa,
    legend_keys,
    new_axes,
    require,
    save,
    scale,
    series,
)
from dpcap.result import RenyiProfile

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
    label: str | None = None,
) -> Axes:
    r"""Plot the α-capacity profile ``α ↦ C_α`` between its radius and diameter bounds.

    Parameters
    ----------
    profile : RenyiProfile
        A profile computed by :func:`dpcap.renyi_profile`: its fields ``alpha``, ``value``
        (``C_α``), ``lower``, ``upper``, ``diameter``, ``status`` and ``unit`` are drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes; the format follows the suffix (``.png``,
        ``.pdf``, or any other format matplotlib writes).
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis. Default: the profile's own unit; a profile in the other unit
        is converted.
    label : str, optional
        Legend entry of the radius curve. Default: ``"radius $C_\alpha$ (Sibson)"``.

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
    The solid curve is the Rényi radius ``C_α = min_Q max_x D_α(W_x ‖ Q) = max_p I_α^S(p, W)``
    (``docs/mathematics.rst`` §4), the lower bound; the dashed curve the diameter
    ``max_{x,x'} D_α(W_x ‖ W_{x'})``, the upper bound. The shaded band between them is where the
    capacity of the naive α-information, ``sup_p D_α(P_XY ‖ P_X P_Y)``, lies: the sandwich
    ``radius ≤ sup_p D_α(P_XY ‖ P_X P_Y) ≤ diameter`` of the Rényi-capacity article (in its
    binary-symmetric-channel example the radius is ``log 2 − H_α(p)``). At α = ∞ the upper
    bound is attained: the diameter there is the ε-DP level. The α axis is logarithmic: the
    order α = ∞, when the profile holds it, is drawn as two markers on the right edge of the
    axes (its radius and its diameter, the ε-DP level), and α = 0 is left out. Orders whose
    certified bracket ``lower ≤ C_α ≤ upper`` did not close are drawn hollow and counted in the
    legend, with the bracket shaded (usually thinner than the line). Where the diameter is
    infinite (an input puts mass where another puts none, at α ≥ 1), or more than :data:`CLIP`
    times the largest radius, the band runs to the top of the axes, 10% above the largest
    radius or diameter drawn (at most 11 times the largest radius).

    Examples
    --------
    >>> import dpcap
    >>> profile = dpcap.renyi_profile([[0.9, 0.1], [0.1, 0.9]], [0.5, 2.0, 8.0])
    >>> ax = plot_renyi_profile(profile)
    >>> ax.get_xscale(), ax.get_xlabel(), ax.get_ylabel()
    ('log', 'order $\\alpha$', 'Rényi capacity (nats)')
    """
    require(profile, RenyiProfile, "profile", "dpcap.renyi_profile")
    target, factor = scale(profile.unit, unit)
    orders, value, lower, upper, diameter = arrays(
        profile.alpha, profile.value, profile.lower, profile.upper, profile.diameter
    )
    status = np.asarray(profile.status, dtype=object).ravel()
    if not (value.shape == diameter.shape == orders.shape == lower.shape == upper.shape):
        raise ParameterError(
            "a profile needs one value, bracket and diameter per order; got shapes"
            f" alpha {orders.shape}, value {value.shape}, lower {lower.shape},"
            f" upper {upper.shape}, diameter {diameter.shape}"
        )
    if status.shape != orders.shape:
        raise ParameterError(
            f"a profile needs one status per order; got {status.size} for {orders.size} orders"
        )
    opened = np.array([s is not Status.CONVERGED for s in status], dtype=np.float64)
    value, lower, upper = value * factor, lower * factor, upper * factor
    diameter = diameter * factor
    infinite = orders == np.inf
    shown = (orders > 0) & np.isfinite(orders)
    orders, value, lower, upper, diameter, opened = by_abscissa(
        orders[shown], value[shown], lower[shown], upper[shown], diameter[shown], opened[shown]
    )

    ax = new_axes(ax)
    color = COLORS["curve"]
    ceiling = _ceiling(
        np.concatenate([value, profile_values(profile.value, factor, infinite)]),
        np.concatenate([diameter, profile_values(profile.diameter, factor, infinite)]),
    )
    series(
        ax,
        orders,
        value,
        lower,
        upper,
        opened > 0,
        color=color,
        label=r"radius $C_\alpha$ (Sibson)" if label is None else str(label),
        gid="renyi-radius",
        markers=False,
        lw=2,
    )
    ax.fill_between(
        orders,
        value,
        np.minimum(diameter, ceiling),
        color=color,
        alpha=0.2,
        lw=0,
        label=r"${\rm sup}_p\, D_\alpha(P_{XY} \| P_X P_Y)$ lies here",
        gid="renyi-band",
    )
    ax.plot(
        orders,
        np.where(np.isfinite(diameter), diameter, np.nan),
        color=color,
        lw=1,
        ls="--",
        label=r"diameter ${\rm max}_{x,x'}\, D_\alpha(W_x \| W_{x'})$",
        gid="renyi-diameter",
    )
    _infinite_order(
        ax,
        profile_values(profile.value, factor, infinite),
        profile_values(profile.diameter, factor, infinite),
        ceiling,
    )
    ax.set_xscale("log")
    ax.set_ylim(0.0, ceiling)
    ax.axvline(1.0, color=COLORS["axis"], lw=0.8, ls=":")
    legend_keys(ax)
    ax.set_xlabel(r"order $\alpha$")
    ax.set_ylabel(f"Rényi capacity ({target})")
    ax.set_title(r"Rényi capacity profile $\alpha \mapsto C_\alpha$ between radius and diameter")
    # many entries over a shaded band: a light frame keeps them readable wherever they land
    ax.legend(loc="best", fontsize="small", framealpha=0.85, edgecolor="none")
    return save(ax, path)


def profile_values(field: FloatArray, factor: float, where: NDArray[np.bool_]) -> FloatArray:
    """The entries of a profile's ``field`` at the orders ``where``, in the drawn unit."""
    (flat,) = arrays(field)
    out: FloatArray = flat[where] * factor
    return out


def _infinite_order(ax: Axes, radius: FloatArray, diameter: FloatArray, ceiling: float) -> None:
    """Mark the order α = ∞ on the right edge: its radius and its diameter (the ε-DP level)."""
    for values, fill, text in (
        (radius, COLORS["curve"], r"$\alpha = \infty$: radius"),
        (diameter, "none", r"$\alpha = \infty$: diameter = $\varepsilon$-DP level"),
    ):
        drawn = values[np.isfinite(values) & (values <= ceiling)]
        if drawn.size:
            ax.plot(
                np.ones(drawn.size),
                drawn,
                ls="none",
                marker="<",
                ms=7,
                mfc=fill,
                mec=COLORS["curve"],
                clip_on=False,
                transform=ax.get_yaxis_transform(),  # x in axes coordinates, y in data
                label=text,
                gid="renyi-infinite-order",
            )


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
