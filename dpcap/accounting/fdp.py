"""Trade-off (f-DP) curves of a mechanism or a composition, with a bracket.

For an ordered neighbour pair ``(x, x')`` the trade-off function is
``T(α) = inf {1 − E_{W_x'}[φ] : E_{W_x}[φ] ≤ α}``, the smallest type-II error of a test of
``x`` against ``x'`` at type-I error ``α`` (Dong, Roth & Su 2022, the trade-off function). The
mechanism is ``f``-DP for the lower convex envelope ``f`` of ``min_{pairs} T``, which is the convex
conjugate of the δ(ε) envelope (ibid., the primal–dual connection with (ε, δ)-DP)::

    f(α) = sup_ε (1 − δ(ε) − e^ε α)_+ ,

the supremum attained where ε is a loss value (between two of them the objective is monotone
in ``e^ε``). The lower end evaluates this at the loss values with the *upper* end of δ
(:mod:`dpcap.accounting._lattice`), so it is a certified lower bound; the upper end is the
lower convex hull of achievable ``(type I, type II)`` points — Neyman–Pearson tests on the
composed loss cells, type I rounded up and type II rounded up — so it is a certified upper
bound. ``docs/mathematics.rst`` (Mechanisms in combination) has the derivation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify
from dpcap._core import validation as check
from dpcap.accounting import _lattice
from dpcap.accounting._hull import lower_hull
from dpcap.accounting.composition import Setup
from dpcap.errors import ParameterError, Status
from dpcap.neighbors import Neighbors
from dpcap.result import TradeoffCurve

__all__ = ["tradeoff_curve"]

FloatArray = NDArray[np.float64]

#: Default target width of β at each α.
DEFAULT_TOL = 1e-6
#: Most levels ε at which the conjugate is evaluated (the loss values, thinned above this).
MAX_LEVELS = 2**16
#: Values of α per block of the conjugate's evaluation (bounded memory).
ALPHA_CHUNK = 64


def tradeoff_curve(
    parts: Any,
    alpha: Any,
    *,
    neighbors: Neighbors | None = None,
    tol: float = DEFAULT_TOL,
) -> TradeoffCurve:
    """The trade-off curve ``β(α)`` of a mechanism or a composition (f-DP), with a bracket.

    ``β(α)`` is the largest ``f(α)`` such that the mechanism (or the composition of
    ``parts``, as for :func:`dpcap.composed_delta`) is ``f``-DP: the lower convex envelope of
    the trade-off functions of its ordered neighbour pairs, the convex conjugate of its δ(ε)
    curve (Dong, Roth & Su 2022, their primal–dual connection; module docstring).

    Parameters
    ----------
    parts : mechanism, or list of mechanisms and ``(mechanism, k)`` pairs
    alpha : array_like of float in [0, 1]
        Type-I errors.
    neighbors : str, array_like or callable, keyword-only, optional
        As for :func:`dpcap.composed_delta`.
    tol : float, keyword-only
        Target width of the bracket at each α.

    Returns
    -------
    TradeoffCurve
        ``lower ≤ β ≤ upper`` at each α; ``value`` = ``lower`` (a smaller β is a stronger
        attacker); ``advantage`` an upper bound on ``max_α (1 − α − β(α))``, the total
        variation ``δ(0)``.

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> c = tradeoff_curve(randomized_response(2, math.log(3)), [0.0, 0.25, 1.0])
    >>> c.value.round(9)                      # ε-DP: β = max(0, 1 − 3α, (1 − α)/3)
    array([1.  , 0.25, 0.  ])
    >>> round(c.advantage, 9)
    0.5
    """
    grid = check.probability(alpha, "alpha")
    levels = np.atleast_1d(grid).astype(np.float64).ravel()
    if not levels.size:
        raise ParameterError("alpha must hold at least one type-I error, got an empty grid")
    tol = check.tolerance(tol, "probability")
    setup = Setup(parts, neighbors, "tradeoff_curve")
    eps = _levels(setup.composed)
    deltas = np.stack([c.delta_upper_sorted(eps) for c in setup.composed])
    envelope = np.max(deltas, axis=0)  # δ(ε) of the worst pair at each ε, from above
    with np.errstate(over="ignore"):
        grow = np.exp(eps) * (1.0 + 4.0 * certify.U)
    lower = np.zeros(levels.shape)
    at = np.zeros(levels.shape, dtype=np.int64)
    for start in range(0, len(levels), ALPHA_CHUNK):
        part = levels[start : start + ALPHA_CHUNK]
        # 1 − δ(ε) − e^ε α, moved down by its rounding, at every (α, ε); its sup over ε
        with np.errstate(invalid="ignore"):  # e^ε·α with α = 0 and e^ε = ∞ is 0
            cost = np.where(part[:, None] > 0, grow[None, :] * part[:, None], 0.0)
        raw = 1.0 - envelope[None, :] - cost
        raw -= 4.0 * certify.U * (1.0 + cost + envelope[None, :])
        best = np.argmax(raw, axis=1)
        at[start : start + ALPHA_CHUNK] = best
        lower[start : start + ALPHA_CHUNK] = np.maximum(raw[np.arange(len(part)), best], 0.0)
    witness = np.argmax(deltas[:, at], axis=0)
    zero = np.array([0.0])
    advantage = max(float(c.delta_upper(zero)[0]) for c in setup.composed)
    points = [(np.array([0.0, 1.0]), np.array([1.0, 0.0]))]
    points += [_achievable(c) for c in setup.composed]
    xs = np.concatenate([p[0] for p in points])
    ys = np.concatenate([p[1] for p in points])
    upper = _hull(xs, ys, levels)
    upper = np.maximum(upper, lower)
    gap = upper - lower
    statuses = [Status.CONVERGED if g <= tol else Status.INACCURATE for g in gap]
    note = f"{setup.method}, {setup.folds} releases"
    status, message = certify.conclude_many(statuses, tol, note=note)
    pairs = np.array([setup.pair(int(w)) for w in witness], dtype=np.int64).reshape(-1, 2)
    return TradeoffCurve(
        value=lower,
        lower=lower,
        upper=upper,
        alpha=levels,
        pair=pairs,
        advantage=min(advantage, 1.0),
        folds=setup.folds,
        status=status,
        iterations=0,
        method=setup.method,
        unit="probability",
        message=message,
        tol=tol,
    )


def _levels(composed: list[_lattice.Composed]) -> FloatArray:
    """The ε at which the conjugate's supremum can sit: the cells' loss values (shifted by
    the loss slack both ways), thinned to :data:`MAX_LEVELS`, and 0. Any set of ε gives a
    valid lower end; these make it tight."""
    v = np.unique(np.concatenate([np.concatenate([c.loss_up, c.loss_down]) for c in composed]))
    v = v[np.isfinite(v)]
    if len(v) > MAX_LEVELS:
        v = v[np.linspace(0, len(v) - 1, MAX_LEVELS).astype(np.int64)]
    shift = max(max(c.shift_up, c.shift_down) for c in composed)
    past = float(np.max(v, initial=0.0)) + 2.0 * shift + 1.0  # past every cell: only p∞ left
    out: FloatArray = np.unique(np.concatenate([v, v + shift, v - shift, [0.0, past]]))
    return out


def _achievable(composed: _lattice.Composed) -> tuple[FloatArray, FloatArray]:
    """``(type I upper, type II upper)`` of the Neyman–Pearson tests on the cells of a
    composition: reject the null on the cells of smallest loss first. The exact loss of a cell
    lies in ``[v − below, v + shift_up]`` around its representative ``v`` (a grid's cells
    rounded up: ``below`` holds the grid step); its null mass ``p`` within the bounds of
    :class:`~dpcap.accounting._lattice.Mass`, its alternative mass ``p·e^{−L}``."""
    m = composed.up
    order = np.argsort(composed.loss_up, kind="stable")
    v, p = composed.loss_up[order], m.p[order]
    n = len(p)
    g = certify.gamma(n + 4)
    p_hi = (p + m.ab) / (1.0 - m.rel)
    p_lo = np.maximum(p - m.ab, 0.0) / (1.0 + m.rel)
    with np.errstate(divide="ignore", over="ignore"):  # in logs: p·e^{−v} is at most 1
        q_hi = np.minimum(
            np.exp(np.log(p_hi) - (v - composed.below)) * (1.0 + 4.0 * certify.U), 1.0
        )
        q_lo = np.minimum(
            np.exp(np.log(p_lo) - (v + composed.shift_up)) * (1.0 - 4.0 * certify.U), 1.0
        )
    # alternative mass where the null has none (loss −∞): rejected first, at no type-I cost
    q_void = max(1.0 - float(np.sum(q_hi)) * (1.0 + g), 0.0)
    type1 = np.concatenate([[0.0], np.cumsum(p_hi) * (1.0 + g)])
    found = np.concatenate([[q_void], q_void + np.cumsum(q_lo) * (1.0 - g)])
    type2 = np.clip(1.0 - found + 4.0 * certify.U, 0.0, 1.0)
    return np.minimum(type1, 1.0), type2


def _hull(xs: FloatArray, ys: FloatArray, at: FloatArray) -> FloatArray:
    """The lower convex hull of the points, evaluated at ``at`` (moved up by rounding)."""
    keep = lower_hull(xs, ys)
    out: FloatArray = np.interp(at, xs[keep], ys[keep]) + 8.0 * certify.U
    return np.minimum(out, 1.0)
