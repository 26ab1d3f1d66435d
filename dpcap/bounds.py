"""Conversions between privacy metrics: the Cuff–Yu sandwich and its neighbours.

All quantities in nats. The numbers are those of Cuff & Yu, *Differential Privacy as a Mutual
Information Constraint* (CCS 2016), with the equation each function implements; binary entropy
``h`` is in nats. Functions accept scalars or arrays (NumPy broadcasting) and return a float for
scalar input, an array otherwise. The quantity converted is positional-only, the parameter of
the conversion (``eps_prime``, the group size ``k``) positional-or-keyword, and the cardinality
bounds ``n_outputs``/``max_entry_size`` keyword-only. The composition bounds take the levels of
the releases as one sequence (one scalar or array per release, broadcast together). The metrics
themselves are defined in ``docs/mathematics.rst`` §2 (MI-DP) and §3 (DP metrics).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import xlogy

from dpcap._core import validation as check
from dpcap.errors import ParameterError

__all__ = [
    "binary_entropy",
    "binary_entropy_inverse",
    "delta_from_midp",
    "dp_composition",
    "group_midp_bound",
    "kl_dp_bound",
    "midp_composition",
    "midp_from_delta",
    "midp_partial_composition",
    "midp_sequential_composition",
    "min_entropy_leakage_bound",
    "tradeoff",
]

FloatArray = NDArray[np.float64]
LN2 = math.log(2.0)


def _out(value: NDArray[Any]) -> Any:
    return float(value) if np.ndim(value) == 0 else value


def binary_entropy(x: Any, /) -> Any:
    """``h(x) = −x log x − (1−x) log(1−x)`` in nats, for x ∈ [0, 1]."""
    p = check.probability(x, "x")
    return _out(-xlogy(p, p) - xlogy(1.0 - p, 1.0 - p))


def binary_entropy_inverse(v: Any, /) -> Any:
    """Inverse of the increasing part of ``h`` on ``[0, 1/2]``: the x ≤ 1/2 with h(x) = v.

    ``v`` must lie in ``[0, ln 2]``. Computed by bisection to the last bit (h is increasing on
    [0, 1/2]), so ``h(h^{-1}(v)) = v`` to within a few ulps.
    """
    target = check.nonnegative(v, "v")
    if (target > LN2 * (1 + 1e-15)).any():
        raise ParameterError(f"v must be in [0, ln 2] for the binary entropy, got {check.show(v)}")
    target = np.minimum(target, LN2)
    lo, hi = np.zeros_like(target), np.full_like(target, 0.5)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        below = -xlogy(mid, mid) - xlogy(1.0 - mid, 1.0 - mid) < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return _out(np.where(target >= LN2, 0.5, 0.5 * (lo + hi)))


def kl_dp_bound(eps: Any, /) -> Any:
    """The tight KL bound of an ε-DP pair: ``D(P‖Q) ≤ ε (e^ε−1)(1−e^{−ε}) / ((e^ε−1)+(1−e^{−ε}))``.

    Cuff & Yu, Property 1, eq. (11). The right side simplifies to ``ε·tanh(ε/2)``, is ≤
    ``min(ε, ε²)`` (eq. 10) and ≈ ε²/2 for small ε; binary randomized response attains it.

    Examples
    --------
    >>> import math
    >>> math.isclose(kl_dp_bound(1.0), math.tanh(0.5))
    True
    """
    e = check.nonnegative(eps, "eps")
    return _out(e * np.tanh(e / 2))


def delta_from_midp(eps: Any, /) -> Any:
    """The (0, δ')-DP level implied by ε-MI-DP: ``δ' = 1 − 2 h^{-1}(ln 2 − ε)``.

    Cuff & Yu, Lemma 2, eq. (28): tight, and ≤ √(2ε) (eq. 27). For ε ≥ ln 2 the implication is
    vacuous, δ' = 1. Computed as the root of ``((1+δ)log(1+δ) + (1−δ)log(1−δ))/2 = ε`` (the
    same equation, without the cancellation in ``ln 2 − ε``), rounded up (conservative).

    Examples
    --------
    >>> import math
    >>> p = 0.1  # BSC(p): capacity ln 2 − h(p), total variation 1 − 2p
    >>> round(delta_from_midp(math.log(2) - binary_entropy(p)), 12)
    0.8
    """
    e = check.nonnegative(eps, "eps")
    return _out(_midp_root(np.minimum(np.asarray(e, dtype=np.float64), LN2)))


def _g_midp(d: NDArray[np.float64]) -> NDArray[np.float64]:
    """``g(δ) = ((1+δ)log(1+δ) + (1−δ)log(1−δ))/2 = δ·atanh δ + log1p(−δ²)/2`` (δ < 1).

    The second form has no cancellation of the two O(δ) terms of the first (it keeps a few
    ulps of relative accuracy down to δ ≈ 1e-150, where δ² is still normal)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = d * np.arctanh(d) + 0.5 * np.log1p(-d * d)
    return np.where(d >= 1.0, LN2, value)


def _midp_root(target: NDArray[np.float64]) -> NDArray[np.float64]:
    """The root δ of ``g(δ) = target`` (target ∈ [0, ln 2]), rounded up.

    ``g(δ) = δ²/2 + δ⁴/12 + … ≥ δ²/2``, so ``√(2ε)`` is an upper bound, within a relative
    ``ε/6`` of the root: it is used (rounded up) below ε = 1e-20. Above, the root is bisected
    over the bit patterns of the doubles in [0, 1] (64 steps find the least double with
    ``g ≥ ε``, g evaluated to a few ulps), then raised by a relative 1e-13 to cover the
    rounding error of g (a relative error r in g moves the root by at most r/2 relative,
    g being convex with g(0) = 0)."""
    lo = np.zeros(target.shape, dtype=np.int64)
    hi = np.full(target.shape, np.float64(1.0).view(np.int64), dtype=np.int64)
    for _ in range(64):
        mid = (lo + hi) // 2
        below = _g_midp(mid.view(np.float64)) < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    bisected = np.minimum(hi.view(np.float64) * (1.0 + 1e-13), 1.0)
    small = np.sqrt(2.0 * target) * (1.0 + 4e-16)
    root = np.where(target < 1e-20, small, bisected)
    return np.where(target >= LN2, 1.0, np.where(target <= 0.0, 0.0, root))


def _cardinality(n_outputs: Any, max_entry_size: Any, exponent: int = 1) -> float:
    bounds = []
    if n_outputs is not None:
        bounds.append(float(check.integer(n_outputs, "n_outputs", 1)))
    if max_entry_size is not None:
        bounds.append(float(check.integer(max_entry_size, "max_entry_size", 1)) ** exponent + 1)
    if not bounds:
        raise ParameterError(
            "a cardinality bound is needed: give n_outputs (|Y|) or max_entry_size "
            "(max_i |X_i|); without one (δ)-DP implies no MI-DP bound (Cuff & Yu, Lemma 3)"
        )
    return min(bounds)


def midp_from_delta(
    delta: Any, /, *, n_outputs: int | None = None, max_entry_size: int | None = None
) -> Any:
    """The MI-DP level implied by (δ)-DP: ``ε' = 2h(δ) + 2δ ln min{|Y|, max_i |X_i| + 1}``.

    Cuff & Yu, Lemma 3, eq. (35). At least one cardinality bound is required.

    Raises
    ------
    ParameterError
        If δ ∉ [0, 1] or neither ``n_outputs`` nor ``max_entry_size`` is given.
    """
    d = check.probability(delta, "delta")
    m = _cardinality(n_outputs, max_entry_size)
    return _out(2.0 * np.asarray(binary_entropy(d)) + 2.0 * d * math.log(m))


def tradeoff(eps: Any, delta: Any, /, eps_prime: Any) -> Any:
    """The δ' with (ε, δ)-closeness ⇒ (ε', δ')-closeness: ``δ' = 1 − (e^{ε'}+1)(1−δ)/(e^ε+1)``.

    Cuff & Yu, Property 3, eq. (13): the tightest such trade-off, for 0 ≤ ε' ≤ ε.
    """
    e = check.nonnegative(eps, "eps", allow_inf=False)
    d = check.probability(delta, "delta")
    ep = check.nonnegative(eps_prime, "eps_prime", allow_inf=False)
    if (ep > e).any():
        raise ParameterError(f"eps_prime must be <= eps, got eps_prime={check.show(eps_prime)}")
    # (e^{ε'}+1)/(e^ε+1) computed as exp(ε'−ε)(1+e^{−ε'})/(1+e^{−ε}) to avoid overflow
    ratio = np.exp(ep - e) * (1.0 + np.exp(-ep)) / (1.0 + np.exp(-e))
    return _out(1.0 - ratio * (1.0 - d))


def group_midp_bound(
    eps: Any, /, k: int, *, n_outputs: int | None = None, max_entry_size: int | None = None
) -> Any:
    """Leakage of a group of k entries under ε-MI-DP (Cuff & Yu, Corollary 5, eq. 54).

    ``sup I(X_I; Y | X_{I^c}) ≤ 2h(k√(2ε)) + 2k√(2ε) log M`` with
    ``M = min{|Y|, (max_i |X_i|)^k + 1}``. The group is (0, k√(2ε))-DP (Property 8 with the
    loose form of Lemma 2); once ``k√(2ε) ≥ 1`` that is vacuous and δ is capped at 1, where the
    bound is ``2 log M``.
    """
    e = check.nonnegative(eps, "eps", allow_inf=False)
    size = check.integer(k, "k", 1)
    m = _cardinality(n_outputs, max_entry_size, exponent=size)
    d = np.minimum(size * np.sqrt(2.0 * e), 1.0)
    return _out(2.0 * np.asarray(binary_entropy(d)) + 2.0 * d * math.log(m))


def min_entropy_leakage_bound(eps: Any, /) -> Any:
    """Maximal min-entropy leakage of an ε-DP channel with two inputs: ``log(2e^ε/(1+e^ε))``.

    Barthe & Köpf (CSF 2011, Thm 3 and Cor. 1; Ünsal & Önen §4.3, eq. 50): for an ε-DP channel
    between two neighbouring inputs (any finite output),
    ``ML = max_P (H_∞(X) − H_∞(X|Y)) ≤ log(2e^ε/(1+e^ε))``; binary randomized response attains
    it.
    """
    e = check.nonnegative(eps, "eps")
    return _out(LN2 - np.logaddexp(0.0, -e))


def _levels(levels: Any, name: str) -> list[FloatArray]:
    """The level of each release (a sequence along the first axis), validated, broadcast."""
    scalar = isinstance(levels, np.ndarray) and levels.ndim == 0
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable) or scalar:
        raise ParameterError(
            f"{name} must be a sequence with one level per release (e.g. [eps_1, eps_2]), got "
            f"{check.show(levels)}"
        )
    items = [check.nonnegative(level, f"{name}[{j}]") for j, level in enumerate(levels)]
    if not items:
        raise ParameterError(f"{name} must hold at least one level (one per release), got none")
    try:
        return list(np.broadcast_arrays(*items))
    except ValueError as exc:
        shapes = ", ".join(str(np.shape(item)) for item in items)
        raise ParameterError(
            f"the entries of {name} must broadcast together, got shapes {shapes}"
        ) from exc


def midp_composition(levels: Any, /) -> Any:
    """MI-DP of conditionally independent releases: ``Σ_j ε_j`` (Cuff & Yu, Corollary 2).

    Releases ``Y_1, …, Y_k`` produced independently given the database, each ``ε_j``-MI-DP, are
    together ``(Σ_j ε_j)``-MI-DP: by the chain rule,
    ``I(X_i; Y^k | X^{-i}) = Σ_j I(X_i; Y_j | X^{-i}, Y^{j−1}) ≤ Σ_j I(X_i; Y_j | X^{-i})``
    (eq. 43). :func:`dpcap.compose` builds such a composition.

    Parameters
    ----------
    levels : sequence of float or array_like
        The MI-DP level ``ε_j ≥ 0`` (nats) of each release, one item per release; arrays
        broadcast together (element-wise bounds).

    Examples
    --------
    Two releases of binary randomized response at ε = ln 3 on one bit: each has MI-DP
    ``ln 2 − h(1/4)``; the pair at most twice that.

    >>> import math
    >>> c1 = math.log(2) - binary_entropy(0.25)
    >>> math.isclose(midp_composition([c1, c1]), 2 * c1)
    True
    >>> midp_composition([[0.1, 0.2], 0.3])  # broadcasting: two bounds at once
    array([0.4, 0.5])
    """
    return _out(np.add.reduce(_levels(levels, "levels")))


def midp_sequential_composition(levels: Any, /) -> Any:
    """MI-DP of adaptive (sequential) releases: ``Σ_j ε_j`` (Cuff & Yu, Corollary 3).

    Here release j may depend on the earlier responses: ``ε_j`` is the MI-DP level of
    ``P_{Y_j | X^n, Y^{j−1}}``, the worst over the earlier responses ``y^{j−1}`` of the
    MI-DP of the mechanism used after them. The bound is that of :func:`midp_composition`
    (eq. 43 without its step (b)), under this weaker hypothesis.

    Parameters
    ----------
    levels : sequence of float or array_like
        ``ε_j ≥ 0`` (nats), one per release; arrays broadcast together.

    Examples
    --------
    A first release at level 0.1, then one at level 0.05 or 0.2 depending on the first answer:

    >>> round(midp_sequential_composition([0.1, max(0.05, 0.2)]), 12)
    0.3
    """
    return _out(np.add.reduce(_levels(levels, "levels")))


def midp_partial_composition(levels: Any, /) -> Any:
    """MI-DP of releases that read disjoint entries: ``max_j ε_j`` (Cuff & Yu, Corollary 4).

    If release j depends only on the entries ``X_{I_j}`` of disjoint sets ``I_1, …, I_k`` and
    the releases are conditionally independent, an entry i in ``I_f`` leaks only through
    ``Y_f``: ``I(X_i; Y^k | X^{-i}) = I(X_i; Y_f | X^{-i})`` (eq. 44). The corollary states
    it for a common level ε; the same proof gives ``max_j ε_j`` for levels ``ε_j``.

    Parameters
    ----------
    levels : sequence of float or array_like
        ``ε_j ≥ 0`` (nats), one per release; arrays broadcast together.

    Examples
    --------
    Binary randomized response applied to each of two entries (one release per entry):

    >>> import math
    >>> c1 = math.log(2) - binary_entropy(0.25)
    >>> math.isclose(midp_partial_composition([c1, c1]), c1)
    True
    """
    return _out(np.maximum.reduce(_levels(levels, "levels")))


def dp_composition(levels: Any, /) -> Any:
    """ε-DP of several releases, basic composition: ``Σ_j ε_j``.

    Releases that are each ``ε_j``-DP, produced with independent randomness (or adaptively,
    each ``ε_j``-DP given the earlier answers), are together ``(Σ_j ε_j)``-DP (Dwork & Roth,
    *The Algorithmic Foundations of Differential Privacy*, Theorem 3.14; Dwork, McSherry,
    Nissim & Smith, TCC 2006). For independent releases the sum is attained when every part
    attains its level on the same pair of neighbours and the same side: ``k`` releases of
    randomized response at level ε are exactly ``kε``-DP.

    Parameters
    ----------
    levels : sequence of float or array_like
        ``ε_j ≥ 0`` (nats, ∞ allowed), one per release; arrays broadcast together.

    Examples
    --------
    >>> dp_composition([1.0, 1.0, 0.5])
    2.5
    """
    return _out(np.add.reduce(_levels(levels, "levels")))
