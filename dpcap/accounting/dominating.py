"""A dominating pair of a mechanism: one pair of distributions whose hockey-stick divergence
is at least every neighbour pair's, at every level (``docs/mathematics.rst`` §13).

Adaptive composition (each release chosen after seeing the earlier outputs, and the worst pair
allowed to change from one release to the next) is bounded by composing *dominating pairs*
(Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy via characteristic
function", Def. 7 and Thm 10). For a finite mechanism one is built from the upper envelope
``E*(γ) = max_{(x,x')} E_γ(W_x ‖ W_x')`` over ``γ = e^ε ≥ 0``: ``E*`` is convex, piecewise
linear, ``E*(0) = 1`` and constant past the largest likelihood ratio, and any such function is
the hockey-stick divergence of the pair with atoms at its breakpoints ``b_i``::

    E*(γ) = E*(∞) + Σ_i Δ_i (b_i − γ)_+ ,    P*(b_i) = b_i Δ_i,  Q*(b_i) = Δ_i,

``Δ_i`` the slope increase at ``b_i``, ``P*(+∞) = E*(∞)`` (loss ``+∞``). In floating point the
envelope is evaluated at the breakpoints of the pairs' own curves, moved up by each
evaluation's rounding bound, and replaced by the lower convex hull of those points: the
greatest convex function below points that all lie above the convex ``E*``, hence ``≥ E*``
everywhere (no crossing points are needed). The masses are rounded up as well, so the pair
dominates the stored mechanism's pairs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify
from dpcap.accounting.losses import Law, evaluation_error, hockey

__all__ = ["dominating_law"]

FloatArray = NDArray[np.float64]


def dominating_law(laws: list[Law]) -> Law:
    """The loss law (under ``P*``) of a dominating pair of ``laws`` (module docstring)."""
    if len(laws) == 1:
        return laws[0]
    losses = np.unique(np.concatenate([law.loss for law in laws]))
    eps = np.concatenate([[-np.inf], losses])  # γ = 0, then every breakpoint e^ℓ
    values = np.max(np.stack([hockey(law, eps) + evaluation_error(law) for law in laws]), axis=0)
    gamma = np.exp(eps)
    last = float(values[-1])  # past every breakpoint: the largest mass at +∞ (moved up)
    # lower convex hull of (γ, value); slopes between its vertices
    keep: list[int] = []
    for i in range(len(gamma)):
        while len(keep) >= 2:
            a, b = keep[-2], keep[-1]
            cross = (gamma[b] - gamma[a]) * (values[i] - values[a]) - (values[b] - values[a]) * (
                gamma[i] - gamma[a]
            )
            if cross <= 0.0:
                keep.pop()
            else:
                break
        keep.append(i)
    g, v = gamma[keep], values[keep]
    slopes = np.diff(v) / np.diff(g)
    slopes = np.minimum(np.maximum.accumulate(slopes), 0.0)  # convex, non-increasing
    after = np.append(slopes[1:], 0.0)  # the slope after each vertex past γ = 0 (flat at the end)
    jump = np.maximum(after - slopes, 0.0)
    at = np.asarray(keep[1:], dtype=np.int64)
    loss = eps[at]
    mass = g[1:] * jump * (1.0 + 16.0 * certify.U)
    on = mass > 0
    rounding = max(law.rounding for law in laws)
    infinite = min(max(last, 0.0), 1.0)
    return Law(
        loss[on].astype(np.float64),
        mass[on].astype(np.float64),
        infinite,
        rounding,
        max(law.outputs for law in laws) + len(laws),
    )
