"""Figures of dpcap's results (the ``plot`` extra: ``pip install dpcap[plot]``).

Every function takes results computed beforehand by the query functions (or a table of
:func:`dpcap.sweep`; nothing is computed here), draws on ``ax`` (or on a new figure) and returns
the :class:`matplotlib.axes.Axes`; ``path=`` also saves the figure holding it, the format
following the suffix. Every figure has a title and axis labels that name the quantities and
their units: information in the result's own unit unless ``unit=`` converts it (nats or bits),
ε always in nats (it bounds the natural log of a likelihood ratio), δ and other probabilities
without a unit.

===================================  ==========================================================
Function                             Figure (and what it takes)
===================================  ==========================================================
:func:`plot_privacy_profile`         ``ε ↦ δ(ε)`` of one or several mechanisms (arrays of
                                     :func:`dpcap.dp_delta_curve`, one per label)
:func:`plot_leakage`                 a leakage against a mechanism parameter, with its
                                     certified band and unconverged points marked (results of
                                     :func:`dpcap.capacity`, :func:`dpcap.midp`, ... or numbers
                                     such as :func:`dpcap.dp_epsilon`; one series per call)
:func:`plot_privacy_distortion`      ``ε*(D)``, the least ε-DP level within a distortion
                                     budget (a CurveResult of
                                     :func:`dpcap.privacy_distortion_curve`)
:func:`plot_rate_distortion`         ``R(D)`` with tangent lines of slope ``−s`` (a CurveResult
                                     of :func:`dpcap.rate_distortion_curve`)
:func:`plot_renyi_profile`           ``α ↦ C_α`` between the radius and the diameter bounds,
                                     α = ∞ (the ε-DP level) on the edge (a RenyiProfile)
:func:`plot_privacy_region`          the region between ``PF(R)`` and ``IB(R)`` (two
                                     FunnelCurves)
:func:`plot_sweep`                   one query of a sweep table against a grid column, one
                                     line per ``hue`` value
:func:`plot_tradeoff`                ``α ↦ β(α)``, the f-DP curve with its certified band and
                                     the diagonal (a TradeoffCurve of
                                     :func:`dpcap.tradeoff_curve`)
===================================  ==========================================================

The curve plots (δ(ε), leakage, ``ε*(D)``, ``R(D)``) add a series when called again with the same
``ax`` (use ``label=`` to tell them apart): each takes the next colour. Points whose certified
bracket did not close are drawn hollow; points that cannot be placed on the axis (an infinite
value, a failed solve) are marked on an edge of the axes; the legend counts both.

matplotlib is imported inside the functions, never at module import, so ``import dpcap`` and
``import dpcap.plots`` work without it. Figures are built on :class:`matplotlib.figure.Figure`
directly, not through ``pyplot``: no global figure registry, no backend chosen on the caller's
behalf, nothing to close in a loop.
"""

from dpcap.plots.distortion import TANGENTS, plot_privacy_distortion, plot_rate_distortion
from dpcap.plots.funnel import plot_privacy_region
from dpcap.plots.leakage import plot_leakage
from dpcap.plots.privacy import plot_privacy_profile
from dpcap.plots.renyi import DEFAULT_ALPHAS, plot_renyi_profile
from dpcap.plots.sweep import plot_sweep
from dpcap.plots.tradeoff import plot_tradeoff

__all__ = [
    "DEFAULT_ALPHAS",
    "TANGENTS",
    "plot_leakage",
    "plot_privacy_distortion",
    "plot_privacy_profile",
    "plot_privacy_region",
    "plot_rate_distortion",
    "plot_renyi_profile",
    "plot_sweep",
    "plot_tradeoff",
]
