"""The least feasible mixing weight, with one documented rounding rule.

Several queries repair a candidate mechanism ``A`` that misses a constraint by mixing it with a
fallback ``B`` that meets it: ``M(λ) = (1 − λ)·A + λ·B`` (or the time-sharing concatenation
``[(1 − λ)A, λB]``). The constraint is linear or convex along the segment, so the least weight
``λ*`` has a closed form that the caller computes (the *analytic* weight). In floating point the
mixture at the analytic weight can miss the constraint by a rounding error; :func:`least_weight`
then raises λ by the rule below until the constraint, re-evaluated on the mixture itself, holds.

Rounding rule
-------------
Starting from the analytic weight ``λ₀`` (clipped to [0, 1]), the k-th retry adds
``2^k · u · max(λ₀, u)`` (k = 0, 1, 2, …; ``u`` the float64 machine epsilon) until the
mixture is feasible or λ reaches 1. So the returned weight exceeds the least weight that the
floating-point check accepts by less than a factor of two of the rounding excess, and the
search ends after at most ~110 retries: λ = 1 is the fallback alone, which the caller
guarantees to be feasible (it is returned as 1 without a check when reached).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EPS", "least_weight"]

#: float64 machine epsilon (the spacing of floats at 1).
EPS = 2.0**-52


def least_weight(feasible: Callable[[float], bool], start: float) -> float:
    """The least weight ``λ ≥ start`` in [0, 1] with ``feasible(λ)``, by the rounding rule above.

    Parameters
    ----------
    feasible : callable float -> bool
        Re-evaluates the constraint on the mixture at a weight (never on the formula that gave
        ``start``). Must hold at 1.
    start : float
        The analytic least weight (NaN is read as 1).

    Returns
    -------
    float
        A weight at which ``feasible`` held, or 1.0.
    """
    weight = min(max(start, 0.0), 1.0) if start == start else 1.0
    scale = max(weight, EPS) * EPS
    step = 0
    while weight < 1.0:
        if feasible(weight):
            return weight
        weight = min(1.0, weight + scale * 2.0**step)
        step += 1
    return 1.0
