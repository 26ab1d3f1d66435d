"""Figure of privacy profiles ``ε ↦ δ(ε)`` (``docs/mathematics.rst`` §3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.plots._common import SavePath, by_abscissa, new_axes, next_color, save

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_privacy_profile"]


def plot_privacy_profile(
    eps: Any,
    deltas: Mapping[str, Any],
    /,
    *,
    ax: Axes | None = None,
    path: SavePath | None = None,
    logy: bool = False,
) -> Axes:
    r"""Plot the privacy profiles ``ε ↦ δ(ε)`` of one or several mechanisms.

    Parameters
    ----------
    eps : array_like
        The levels ε ≥ 0 (nats) at which every profile was computed, e.g. the grid given to
        :func:`dpcap.dp_delta_curve`; ∞ is left out of the figure.
    deltas : mapping of str to array_like
        One profile per mechanism, labelled by its key: ``{"RR(2, 1)":
        dpcap.dp_delta_curve(W, eps), ...}``, each with one δ per ε, in [0, 1].
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; by default a new 6 × 4 inch figure with one axes.
    path : str or path-like, optional
        Where to save the figure holding the axes (format from the suffix).
    logy : bool, default False
        Logarithmic δ axis (zeros are left out of it).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ParameterError
        If ``eps`` is not a non-empty list of levels in [0, ∞], ``deltas`` is empty or not a
        mapping, or a profile has a different length, values outside [0, 1] or NaN.

    Notes
    -----
    ``δ(ε) = max_{x ~ x'} Σ_y (W[x, y] − e^ε W[x', y])_+`` is the smallest δ for which the
    mechanism is (ε, δ)-DP: non-increasing and convex in ``e^ε``, ``δ(0)`` the total-variation
    level, and 0 from the pure-DP level on (Cuff & Yu §3.2; Hsu et al. §IV). ε is in nats;
    δ is a probability (no unit). Called again with the same ``ax``, the new profiles take the
    next colours.

    Examples
    --------
    >>> import dpcap
    >>> from dpcap.mechanisms import randomized_response
    >>> grid = [0.0, 0.5, 1.0, 1.5]
    >>> delta = dpcap.dp_delta_curve(randomized_response(2, 1.0), grid)
    >>> ax = plot_privacy_profile(grid, {"RR": delta})
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('ε (nats)', 'δ(ε)')
    """
    levels = check.nonnegative(eps, "eps")
    if levels.ndim != 1 or levels.size == 0:
        raise ParameterError(f"eps must be a non-empty list of levels, got {check.show(eps)}")
    if not isinstance(deltas, Mapping) or not deltas:
        raise ParameterError(
            f"deltas must map labels to profiles (one δ per ε), got {check.show(deltas)}"
        )
    profiles = []
    for label, values in deltas.items():
        delta = check.real_array(values, f"deltas[{label!r}]").ravel()
        if delta.shape != levels.shape:
            raise ParameterError(
                f"deltas[{label!r}] has {delta.size} values for {levels.size} levels of eps"
            )
        if np.isnan(delta).any() or (delta < 0).any() or (delta > 1).any():
            raise ParameterError(f"deltas[{label!r}] must hold values in [0, 1], got {delta}")
        profiles.append((str(label), delta))
    ax = new_axes(ax)
    shown = np.isfinite(levels)
    for label, delta in profiles:
        x, y = by_abscissa(levels[shown], delta[shown])
        if logy:
            y = np.where(y > 0, y, np.nan)
        color = next_color(ax, "privacy-profile")
        ax.plot(x, y, color=color, lw=2, marker="o", ms=3, label=label, gid="privacy-profile")
    if logy:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0.0)
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("δ(ε)")
    ax.set_title(r"privacy profile: the smallest $\delta$ for $(\varepsilon, \delta)$-DP")
    ax.legend(loc="best", frameon=False)
    return save(ax, path)
