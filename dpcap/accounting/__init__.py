"""Mechanisms in combination: privacy-loss laws, certified composition and trade-off curves.

:func:`privacy_loss` gives the exact law of the privacy loss of every ordered neighbour pair;
:func:`composed_delta`, :func:`composed_delta_curve` and :func:`composed_epsilon` give δ(ε) and
ε(δ) of mechanisms released together on one database, each a bracket that holds in floating
point, maximised over the true neighbour pairs; :func:`tradeoff_curve` the f-DP curve β(α).
"""

from dpcap.accounting.composition import composed_delta, composed_delta_curve, composed_epsilon
from dpcap.accounting.fdp import tradeoff_curve
from dpcap.accounting.losses import privacy_loss

__all__ = [
    "composed_delta",
    "composed_delta_curve",
    "composed_epsilon",
    "privacy_loss",
    "tradeoff_curve",
]
