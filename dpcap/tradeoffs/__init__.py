"""Trade-offs between privacy and utility: each an optimisation over mechanisms or laws.

* :mod:`~dpcap.tradeoffs.risk_distortion`: Mir's risk–distortion ``R(D)`` and the MI
  privacy–distortion function (:func:`rate_distortion`, :func:`mi_privacy_distortion`);
* :mod:`~dpcap.tradeoffs.epsilon_distortion`: Wang, Ying and Zhang's ``ε*(D)``
  (:func:`privacy_distortion`);
* :mod:`~dpcap.tradeoffs.mechanism_design`: the least-distortion ε-DP (or metric-DP)
  mechanism (:func:`optimal_mechanism`);
* :mod:`~dpcap.tradeoffs.funnel`: the privacy funnel and the information bottleneck;
* :mod:`~dpcap.tradeoffs.zero_leakage`: perfect privacy (:func:`perfect_privacy`);
* :mod:`~dpcap.tradeoffs.inference`: inference privacy under a distortion budget
  (:func:`inference_privacy`).

The private modules (``_markov``, ``_funnel_points``, ``_mechanism_lp``, ``_rd_search``) are
this wing's helpers and nobody else's.
"""

from dpcap.tradeoffs.epsilon_distortion import privacy_distortion, privacy_distortion_curve
from dpcap.tradeoffs.funnel import (
    information_bottleneck,
    information_bottleneck_curve,
    privacy_funnel,
    privacy_funnel_curve,
)
from dpcap.tradeoffs.inference import inference_privacy
from dpcap.tradeoffs.mechanism_design import optimal_mechanism
from dpcap.tradeoffs.risk_distortion import (
    mi_privacy_distortion,
    mi_privacy_distortion_curve,
    rate_distortion,
    rate_distortion_curve,
)
from dpcap.tradeoffs.zero_leakage import perfect_privacy

__all__ = [
    "inference_privacy",
    "information_bottleneck",
    "information_bottleneck_curve",
    "mi_privacy_distortion",
    "mi_privacy_distortion_curve",
    "optimal_mechanism",
    "perfect_privacy",
    "privacy_distortion",
    "privacy_distortion_curve",
    "privacy_funnel",
    "privacy_funnel_curve",
    "rate_distortion",
    "rate_distortion_curve",
]
