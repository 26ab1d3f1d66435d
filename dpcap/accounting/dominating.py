"""A dominating pair of a mechanism: one pair of distributions whose hockey-stick divergence
is at least every neighbour pair's, at every level (``docs/mathematics.rst`` §13).

Adaptive composition (each release chosen after seeing the earlier outputs, and the worst pair
allowed to change from one release to the next) is bounded by composing *dominating pairs*
(Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy via characteristic
function", their dominating pairs). For a finite mechanism one is built from the upper envelope
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
from dpcap.accounting._hull import lower_hull
from dpcap.accounting.losses import Law, evaluation_error, hockey

__all__ = ["dominating_law"]

FloatArray = NDArray[np.float64]


#: Losses above this are treated as infinite (conservative: ``e^ℓ`` must stay finite).
LOSS_CAP = 700.0


def _capped(law: Law) -> Law:
    """``law`` with every loss above :data:`LOSS_CAP` moved to ``+∞`` (its mass only raises
    ``E_γ``: ``(1 − γe^{−ℓ})_+ ≤ 1``)."""
    over = law.loss > LOSS_CAP
    if not over.any():
        return law
    extra = float(np.sum(law.mass[over])) * (1.0 + certify.gamma(int(over.sum()) + 2))
    return law._replace(
        loss=law.loss[~over], mass=law.mass[~over], infinite=min(law.infinite + extra, 1.0)
    )


def _crossings(laws: list[Law], eps: FloatArray, values: FloatArray) -> FloatArray:
    """Levels where the two laws on top at the ends of an interval between breakpoints cross
    (there the envelope bends without a breakpoint of its own); each law is affine in ``γ``
    on the interval, ``A − Bγ``."""
    tops = np.argmax(np.stack([hockey(law, eps) for law in laws]), axis=0)
    found = []
    for k in np.flatnonzero(tops[1:] != tops[:-1]).tolist():
        lo, hi = eps[k], eps[k + 1]
        lines = []
        for law in (laws[tops[k]], laws[tops[k + 1]]):
            above = law.loss >= hi
            A = float(np.sum(law.mass[above])) + law.infinite
            B = float(np.sum(law.mass[above] * np.exp(-law.loss[above])))
            lines.append((A, B))
        (A1, B1), (A2, B2) = lines
        if B1 != B2:
            g = (A1 - A2) / (B1 - B2)
            if g > 0 and lo < np.log(g) < hi:
                found.append(float(np.log(g)))
    return np.asarray(found, dtype=np.float64)


def dominating_law(laws: list[Law]) -> Law:
    """The loss law (under ``P*``) of a dominating pair of ``laws`` (module docstring)."""
    if len(laws) == 1:
        return laws[0]
    laws = [_capped(law) for law in laws]
    losses = np.unique(np.concatenate([law.loss for law in laws]))
    rounding = max(law.rounding for law in laws)
    top = float(losses[-1]) if len(losses) else 0.0
    # past every exact finite loss only the infinite masses are left: a last point there
    infinite = max(law.infinite for law in laws) * (1.0 + certify.gamma(8)) + 2.0**-1074
    infinite = min(infinite, 1.0) if any(law.infinite > 0 for law in laws) else 0.0
    far = top + 4.0 * rounding + 8.0 * certify.U * (1.0 + abs(top))
    eps = np.concatenate([[-np.inf], losses])  # γ = 0, then every breakpoint e^ℓ
    values = np.max(np.stack([hockey(law, eps) for law in laws]), axis=0)
    cross = _crossings(laws, eps[1:], values[1:]) if len(losses) > 1 else np.zeros(0)
    eps = np.unique(np.concatenate([eps, cross]))
    error = max(evaluation_error(law) for law in laws)
    values = np.max(np.stack([hockey(law, eps) for law in laws]), axis=0) + error
    gamma = np.exp(eps)
    keep_points = np.concatenate([[True], gamma[1:] > 0.0])  # an underflowed γ is dropped
    gamma = np.append(gamma[keep_points], np.exp(far))
    values = np.append(values[keep_points], infinite)
    eps = np.append(eps[keep_points], far)
    # lower convex hull of (γ, value): the greatest convex function below the points, all of
    # which lie above the convex envelope (a subset of points only loosens it)
    keep = lower_hull(gamma, values)
    g, v = gamma[keep], values[keep]
    slopes = np.diff(v) / np.diff(g)
    slopes = np.minimum(np.maximum.accumulate(slopes), 0.0)  # convex, non-increasing
    after = np.append(slopes[1:], 0.0)  # the slope after each vertex past γ = 0 (flat at the end)
    jump = np.maximum(after - slopes, 0.0)
    at = keep[1:]
    loss = eps[at]
    mass = g[1:] * jump * (1.0 + 16.0 * certify.U)
    on = (mass > 0) & np.isfinite(mass)
    return Law(
        loss[on].astype(np.float64),
        mass[on].astype(np.float64),
        infinite,
        rounding,
        max(law.outputs for law in laws) + len(laws),
    )
