"""Figures of dpcap's results (the ``plot`` extra: ``pip install dpcap[plot]``).

matplotlib is imported inside each function, never at module import, so ``import dpcap`` (and
``import dpcap.plots``) works without it. Figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``: no global figure registry, no backend chosen on the caller's
behalf, nothing to close in a loop.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpcap import _validation as check
from dpcap.result import ParameterError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["DEFAULT_ALPHAS", "plot_renyi_profile"]

FloatArray = NDArray[np.float64]

#: Orders plotted when :func:`plot_renyi_profile` is given a channel and no ``alphas``: 50 orders
#: log-spaced over three decades around α = 1 (Shannon).
DEFAULT_ALPHAS: FloatArray = np.geomspace(0.05, 50.0, 50)


#: The band above the radius is clipped at this multiple of the largest radius when some
#: diameter is infinite or larger still (see ``_ceiling``).
CLIP = 10.0


class RenyiProfileLike(Protocol):
    """What :func:`plot_renyi_profile` reads from a profile (``dpcap.RenyiProfile`` has it)."""

    @property
    def alphas(self) -> ArrayLike: ...

    @property
    def value(self) -> ArrayLike: ...

    @property
    def diameter(self) -> ArrayLike: ...

    @property
    def unit(self) -> str: ...


def plot_renyi_profile(
    W_or_profile: ArrayLike | RenyiProfileLike,
    alphas: ArrayLike | None = None,
    /,
    *,
    ax: Axes | None = None,
    path: str | os.PathLike[str] | None = None,
    unit: str | None = None,
) -> Figure:
    r"""Plot the α-capacity profile ``α ↦ C_α`` with the diameter as an upper band.

    Parameters
    ----------
    W_or_profile : (nx, ny) array_like or RenyiProfile
        A channel ``W[x, y] = P(Y=y | X=x)``, whose profile is computed with
        ``dpcap.renyi_profile(W, alphas, unit=unit)``, or a computed profile: any object with
        array fields ``alphas``, ``value`` (``C_α``), ``diameter`` and a ``unit`` string.
    alphas : (K,) array_like, optional
        Orders to evaluate, for a channel only (default :data:`DEFAULT_ALPHAS`, 50 orders from
        0.05 to 50). A profile already carries its orders.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure; the format follows the suffix (``.png``, ``.pdf``, or any other
        format matplotlib writes).
    unit : {"nats", "bits"}, optional
        Unit of the vertical axis. Default: the profile's own unit, or nats for a channel. A
        profile in the other unit is converted.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (``ax.figure`` when ``ax`` is given).

    Raises
    ------
    ParameterError
        If ``unit`` is not "nats" or "bits", ``alphas`` is given together with a profile, or the
        profile's arrays do not have one entry per order.
    ImportError
        If matplotlib is not installed (the ``plot`` extra).

    Notes
    -----
    The curve is the Rényi radius ``C_α = min_Q max_x D_α(W_x ‖ Q) = max_p I_α^S(p, W)``. The
    band above it reaches the diameter ``max_{x,x'} D_α(W_x ‖ W_{x'})``: the capacity
    ``sup_p D_α(P_XY ‖ P_X P_Y)`` of the Rényi-capacity article lies between the two (as in its
    binary-symmetric-channel example, where the radius is ``log 2 − H_α(p)``), and equals the
    ε-DP level at α = ∞. The α axis is logarithmic, so orders that are not positive and finite
    (α = 0, α = ∞) are left out of the figure. Where the diameter is infinite (an input puts mass
    where another puts none, at α ≥ 1), or more than ten times the largest radius, the band runs
    to the top of the axes, 10% above the largest radius or diameter drawn (at most 11 times the
    largest radius).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> profile = SimpleNamespace(alphas=np.array([0.5, 2.0]), value=np.array([0.1, 0.2]),
    ...                           diameter=np.array([0.3, 0.8]), unit="nats")
    >>> fig = plot_renyi_profile(profile)
    >>> len(fig.axes), fig.axes[0].get_xscale()
    (1, 'log')
    """
    from matplotlib.figure import Figure  # the `plot` extra: imported here only

    profile: Any
    if _is_profile(W_or_profile):
        if alphas is not None:
            raise ParameterError(
                "alphas is for a channel only: a profile carries its own orders;"
                f" got alphas={check.show(alphas)}"
            )
        profile = W_or_profile
    else:
        compute: Any = getattr(importlib.import_module("dpcap"), "renyi_profile", None)
        if compute is None:
            raise NotImplementedError(
                "dpcap.renyi_profile is not available in this version: pass a computed profile"
            )
        grid = DEFAULT_ALPHAS if alphas is None else alphas
        profile = compute(W_or_profile, grid, unit="nats" if unit is None else unit)

    own_unit = str(profile.unit)
    target = own_unit if unit is None else unit
    scale = check.unit_divisor(own_unit) / check.unit_divisor(target)
    orders = np.asarray(profile.alphas, dtype=np.float64).ravel()
    value = np.asarray(profile.value, dtype=np.float64).ravel() * scale
    diameter = np.asarray(profile.diameter, dtype=np.float64).ravel() * scale
    if not (value.shape == diameter.shape == orders.shape):
        raise ParameterError(
            "a profile needs one value and one diameter per order; got shapes"
            f" alphas {orders.shape}, value {value.shape}, diameter {diameter.shape}"
        )
    shown = (orders > 0) & np.isfinite(orders)
    order_idx = np.argsort(orders[shown], kind="stable")
    orders, value, diameter = (a[shown][order_idx] for a in (orders, value, diameter))

    if ax is None:
        fig = Figure(figsize=(6.0, 4.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = _root_figure(ax)

    (curve,) = ax.plot(orders, value, color="C0", lw=2, label=r"radius $C_\alpha$ (Sibson)")
    finite = np.isfinite(diameter)
    ceiling = _ceiling(value, diameter)
    band_top = np.minimum(diameter, ceiling)
    ax.fill_between(
        orders,
        value,
        band_top,
        color=curve.get_color(),
        alpha=0.2,
        lw=0,
        label=r"radius $\leq C_\alpha \leq$ diameter",
    )
    ax.plot(
        orders,
        np.where(finite, diameter, np.nan),
        color=curve.get_color(),
        lw=1,
        ls="--",
        label=r"diameter $\max_{x,x'} D_\alpha(W_x \| W_{x'})$",
    )
    ax.set_xscale("log")
    ax.set_ylim(0.0, ceiling)
    ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
    ax.set_xlabel(r"order $\alpha$")
    ax.set_ylabel(f"capacity ({target})")
    ax.legend(loc="upper left", frameon=False)
    if path is not None:
        fig.savefig(path)
    return fig


def _is_profile(obj: object) -> bool:
    return all(hasattr(obj, name) for name in ("alphas", "value", "diameter", "unit"))


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


def _root_figure(ax: Axes) -> Figure:
    """The top-level figure of ``ax`` (the one that saves), also when ``ax`` is in a subfigure."""
    getter: Any = ax.get_figure
    try:
        root: Figure = getter(root=True)  # matplotlib >= 3.10
    except TypeError:  # before 3.10: a SubFigure's .figure is the root, a Figure's is itself
        root = getter().figure
    return root
