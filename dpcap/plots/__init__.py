"""Figures of dpcap's results (the ``plot`` extra: ``pip install dpcap[plot]``).

Every function takes result objects (computed beforehand by the query functions, or a table of
:func:`dpcap.sweep`; nothing is computed here), draws on ``ax`` (or on a new figure) and returns
the :class:`matplotlib.axes.Axes`; ``path=`` also saves the figure holding it, the format
following the suffix. The vertical unit is the result's own unless ``unit=`` converts it.

===================================  ==========================================================
:func:`plot_renyi_profile`           ``α ↦ C_α`` with the diameter band (a RenyiProfile)
:func:`plot_rate_distortion`         ``R(D)`` with tangent lines of slope ``−s`` (a CurveResult)
:func:`plot_privacy_distortion`      ``ε*(D)`` (a CurveResult of ``privacy_distortion_curve``)
:func:`plot_privacy_region`          the region between ``PF(R)`` and ``IB(R)`` (two FunnelCurves)
:func:`plot_sweep`                   one query of a sweep table against a grid column, by ``hue``
:func:`plot_privacy_profile`         ``ε ↦ δ(ε)`` of several mechanisms (``dp_delta_curve``)
===================================  ==========================================================

matplotlib is imported inside the functions, never at module import, so ``import dpcap`` and
``import dpcap.plots`` work without it. Figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``: no global figure registry, no backend chosen on the caller's
behalf, nothing to close in a loop.
"""

from dpcap.plots.distortion import TANGENTS, plot_privacy_distortion, plot_rate_distortion
from dpcap.plots.funnel import plot_privacy_region
from dpcap.plots.privacy import plot_privacy_profile
from dpcap.plots.renyi import DEFAULT_ALPHAS, plot_renyi_profile
from dpcap.plots.sweep import plot_sweep

__all__ = [
    "DEFAULT_ALPHAS",
    "TANGENTS",
    "plot_privacy_distortion",
    "plot_privacy_profile",
    "plot_privacy_region",
    "plot_rate_distortion",
    "plot_renyi_profile",
    "plot_sweep",
]
