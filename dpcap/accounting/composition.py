"""Certified δ(ε) and ε(δ) of mechanisms released together on one database.

Non-adaptive composition: the releases ``Y_1, …, Y_m`` of the parts (a part used ``k`` times
is ``k`` independent releases) are independent given the database, so for every ordered
neighbour pair ``(x, x')`` the composed privacy loss is the sum of the parts' independent
losses and the composed hockey-stick divergence is ``δ_{x,x'}(ε) = E[(1 − e^{ε − Σ_j L_j})_+]``
(Dong, Roth & Su 2022, for the trade-off form; Zhu, Dong & Wang 2022, §2, for the loss form).
The composition is (ε, δ)-DP iff ``δ ≥ max_{(x,x')} δ_{x,x'}(ε)``: the maximum is over the
*same* pair in every part, the true neighbour relation of the database, not over a worst pair
chosen per part. ``docs/mathematics.rst`` (Mechanisms in combination) has the derivation and
the proofs of the rounding bounds of :mod:`dpcap.accounting._lattice`.

Every result is a bracket that holds in floating point for the stored matrices: exact up to
rounding where the losses sit on lattices (randomized response, geometric and Laplace noise,
and any mix of them), and otherwise a discretisation that rounds each loss up for the upper
end and down for the lower end. ``adaptive=True`` bounds adaptive composition instead
(a release chosen after the earlier outputs, the worst pair free to change between releases)
by composing one dominating pair per part (:mod:`dpcap.accounting.dominating`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import certify
from dpcap._core import validation as check
from dpcap.accounting import _lattice
from dpcap.accounting.dominating import dominating_law
from dpcap.accounting.losses import Law, ordered_pairs, pair_laws
from dpcap.channel import Mechanism, as_mechanism
from dpcap.errors import MechanismError, NeighborError, ParameterError, Status
from dpcap.neighbors import Neighbors
from dpcap.result import CompositionCurve, CompositionResult

__all__ = ["composed_delta", "composed_delta_curve", "composed_epsilon"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Default absolute target of a bracket's width (δ: a probability; ε: nats).
DEFAULT_TOL = 1e-12
#: Default relative target: ``upper − lower ≤ max(tol, rtol·upper)``.
DEFAULT_RTOL = 1e-6
#: Default target width of an ε(δ) bracket (nats).
EPS_TOL = 1e-10
#: Most bisection steps of ε(δ).
MAX_BISECTIONS = 200


class Setup:
    """The parts, their counts, and the distinct pair laws to compose."""

    def __init__(
        self, parts: Any, neighbors: Neighbors | None, what: str, adaptive: bool = False
    ) -> None:
        self.mechs, self.counts = _parts(parts)
        self.folds = sum(self.counts)
        shape = self.mechs[0].shape
        for j, m in enumerate(self.mechs[1:], start=1):
            if m.shape != shape:
                raise MechanismError(
                    f"parts must act on the same database: part 0 has inputs of shape {shape}, "
                    f"part {j} of shape {m.shape}"
                )
        if neighbors is None:
            first = self.mechs[0].neighbors
            for j, m in enumerate(self.mechs[1:], start=1):
                if not relations.same(m.neighbors, first):
                    raise NeighborError(
                        f"parts carry different neighbour relations (part 0: "
                        f"{relations.describe(first)!r}, part {j}: "
                        f"{relations.describe(m.neighbors)!r}); pass neighbors= to choose one"
                    )
        self.X, self.Xp = ordered_pairs(self.mechs[0], neighbors)
        if not len(self.X):
            raise NeighborError(f"{what}: the neighbour relation has no pair of inputs")
        self.combos, self.label = pair_laws(self.mechs, self.X, self.Xp, what)
        self.adaptive = check.flag(adaptive, "adaptive")
        #: the compositions of the pairs themselves: every end when not adaptive, and the
        #: lower ends when adaptive (a fixed pair is one adaptive strategy)
        self.fixed = [_lattice.compose(c, self.counts, what) for c in self.combos]
        if self.adaptive:  # one dominating pair per part (module docstring): the upper ends
            parts = range(len(self.mechs))
            dominating = [dominating_law(_distinct([c[j] for c in self.combos])) for j in parts]
            self.composed = [_lattice.compose(dominating, self.counts, what)]
        else:
            self.composed = self.fixed
        self.method = "lattice" if all(c.lattice for c in self.composed) else "grid"

    def pair(self, combo: int) -> tuple[int, int]:
        if self.adaptive:
            return (-1, -1)  # a dominating pair, not a pair of inputs
        i = int(np.flatnonzero(self.label == combo)[0])
        return int(self.X[i]), int(self.Xp[i])


def _distinct(laws: list[Law]) -> list[Law]:
    """Each law once (laws are shared between combinations)."""
    seen: dict[int, Law] = {}
    for law in laws:
        seen.setdefault(id(law), law)
    return list(seen.values())


def _parts(parts: Any) -> tuple[list[Mechanism], list[int]]:
    """``[(mechanism, k), …]`` from a mechanism, a ``(mechanism, k)`` pair, or a list of
    mechanisms and pairs."""
    if isinstance(parts, (list, tuple)) and not parts:
        raise ParameterError("parts must name at least one mechanism, got an empty list")
    if _is_pair(parts):
        items = [parts]
    elif isinstance(parts, (list, tuple)) and not _is_matrix(parts):
        items = list(parts)
    else:
        items = [parts]
    mechs: list[Mechanism] = []
    counts: list[int] = []
    for i, item in enumerate(items):
        if _is_pair(item):
            m, k = item
            counts.append(check.integer(k, f"parts[{i}] count"))
        else:
            m = item
            counts.append(1)
        mechs.append(as_mechanism(m, f"parts[{i}]"))
    if not mechs:
        raise ParameterError("parts must name at least one mechanism, got none")
    return mechs, counts


def _is_pair(value: Any) -> bool:
    """``(mechanism, k)``: a 2-tuple whose second item is an integer count."""
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[1], (int, np.integer))
        and not _is_matrix(value)
    )


def _is_matrix(value: Any) -> bool:
    """A nested list of numbers (one channel matrix), not a list of parts."""
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):
        return False
    return arr.ndim == 2 and arr.dtype.kind in "biuf"


def _status(
    gap: float, upper: float, tol: float, rtol: float, unit: str, note: str
) -> tuple[Status, str]:
    return certify.conclude(gap, tol, rtol=rtol, upper=upper, unit=unit, note=note)


def _curve(setup: Setup, eps: FloatArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """Upper and lower ends at each ε, and the combination attaining the upper end."""
    ups = np.stack([c.delta_upper(eps) for c in setup.composed])
    lows = np.stack([c.delta_lower(eps) for c in setup.fixed])
    best = np.argmax(ups, axis=0)
    upper = ups[best, np.arange(len(eps))]
    lower = np.max(lows, axis=0)
    return np.minimum(upper, 1.0), np.minimum(lower, upper), best


def composed_delta(
    parts: Any,
    eps: float,
    *,
    neighbors: Neighbors | None = None,
    tol: float = DEFAULT_TOL,
    rtol: float = DEFAULT_RTOL,
    adaptive: bool = False,
) -> CompositionResult:
    """The smallest δ for which the composition of ``parts`` is (ε, δ)-DP, with a bracket.

    ``δ(ε) = max_{ordered neighbours (x, x')} E[(1 − e^{ε − Σ_j L_j})_+]``, ``L_j`` the
    independent privacy losses of the releases at the pair (:func:`dpcap.privacy_loss`);
    non-adaptive composition on one database (module docstring).

    Parameters
    ----------
    parts : mechanism, or list of mechanisms and ``(mechanism, k)`` pairs
        The releases: a mechanism alone is released once, ``(M, k)`` ``k`` times. Every part
        acts on the same database (same input shape).
    eps : float in [0, ∞)
        In nats.
    neighbors : str, array_like or callable, keyword-only, optional
        The database's neighbour relation (:mod:`dpcap.neighbors`); default: the one the parts
        carry (they must agree).
    tol, rtol : float, keyword-only
        The bracket converges when ``upper − lower ≤ max(tol, rtol·upper)``. Losses on lattices
        give a bracket of rounding width; a grid's width is its discretisation.
    adaptive : bool, keyword-only
        ``False`` (default): the parts are these mechanisms, released together; δ is the max
        over the database's neighbour pairs of the composed pair. ``True``: any releases
        chosen adaptively (each after the earlier outputs) whose privacy profiles are the
        parts', the worst pair free to change between releases: each part is replaced by a
        dominating pair built from the upper envelope of its pairs' hockey-stick divergences
        (:mod:`dpcap.accounting.dominating`; Zhu, Dong & Wang 2022, dominating pairs), and
        ``pair`` is ``(-1, -1)``. Never below the non-adaptive value.

    Returns
    -------
    CompositionResult
        ``value`` = ``upper``; ``pair`` the ordered pair attaining it; ``method``
        ``"lattice"`` or ``"grid"``.

    Raises
    ------
    ParameterError
        For an ε that is negative, NaN or not one number, a count that is not a positive
        integer, or an invalid ``tol``/``rtol``.
    MechanismError, NeighborError
        If the parts act on different domains or carry different relations.
    ProblemTooLargeError
        If the composed law would exceed the cell or work limits of
        :mod:`dpcap.accounting._lattice`, or the pairs × outputs limit.

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> r = composed_delta([(randomized_response(2, 1.0), 10)], 5.0)
    >>> round(r.value, 10), r.method, r.status.value
    (0.3635911827, 'lattice', 'converged')
    """
    level = _one(eps, "eps")
    tol, rtol = check.tolerance(tol, "probability"), check.rtol(rtol)
    setup = Setup(parts, neighbors, "composed_delta", adaptive)
    upper, lower, best = _curve(setup, np.array([level]))
    hi, lo = float(upper[0]), float(lower[0])
    status, message = _status(
        hi - lo, hi, tol, rtol, "(probability)", f"{setup.method}, {setup.folds} releases"
    )
    return CompositionResult(
        value=hi,
        lower=lo,
        upper=hi,
        quantity="delta",
        eps=level,
        delta=hi,
        pair=setup.pair(int(best[0])),
        folds=setup.folds,
        status=status,
        iterations=0,
        method=setup.method,
        unit="probability",
        message=message,
        tol=tol,
    )


def composed_delta_curve(
    parts: Any,
    eps: Any,
    *,
    neighbors: Neighbors | None = None,
    tol: float = DEFAULT_TOL,
    rtol: float = DEFAULT_RTOL,
    adaptive: bool = False,
) -> CompositionCurve:
    """:func:`composed_delta` over a grid of ε, the parts composed once.

    Parameters
    ----------
    parts, neighbors, tol, rtol
        As for :func:`composed_delta`.
    eps : array_like of float in [0, ∞)
        The grid (nats; one number is a grid of one).

    Returns
    -------
    CompositionCurve
        Arrays over the grid, one status per point; ``curve[i]`` is the point result.

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> c = composed_delta_curve([(randomized_response(4, 1.0), 100)], [10.0, 20.0])
    >>> c.value.round(8), bool(np.all(c.lower <= c.upper))
    (array([0.99324811, 0.88191841]), True)
    """
    levels = check.nonnegative(eps, "eps", allow_inf=False)
    if levels.ndim > 1:
        raise ParameterError(f"eps must be a number or a 1-D grid, got shape {levels.shape}")
    grid = np.atleast_1d(levels)
    if not grid.size:
        raise ParameterError("eps must hold at least one level, got an empty grid")
    tol, rtol = check.tolerance(tol, "probability"), check.rtol(rtol)
    setup = Setup(parts, neighbors, "composed_delta_curve", adaptive)
    upper, lower, best = _curve(setup, grid)
    met = certify.met(upper - lower, tol, rtol, upper)
    statuses = [Status.CONVERGED if ok else Status.MAX_ITER for ok in met]
    note = f"{setup.method}, {setup.folds} releases"
    status, message = certify.conclude_many(statuses, tol, rtol=rtol, note=note)
    pairs = np.array([setup.pair(int(b)) for b in best], dtype=np.int64).reshape(-1, 2)
    return CompositionCurve(
        value=upper,
        lower=lower,
        upper=upper,
        eps=grid,
        pair=pairs,
        folds=setup.folds,
        status=status,
        iterations=0,
        method=setup.method,
        unit="probability",
        message=message,
        tol=tol,
    )


def composed_epsilon(
    parts: Any,
    delta: float,
    *,
    neighbors: Neighbors | None = None,
    tol: float = EPS_TOL,
    rtol: float = 0.0,
    adaptive: bool = False,
) -> CompositionResult:
    """The smallest ε for which the composition of ``parts`` is (ε, δ)-DP, with a bracket.

    ``ε(δ) = inf {ε ≥ 0 : δ(ε) ≤ δ}`` for the curve of :func:`composed_delta`, which is
    continuous and non-increasing: bisection on the certified ends gives an ``upper`` at which
    the upper end of δ is at most ``δ`` (so the composition is (upper, δ)-DP) and a ``lower``
    at which the lower end of δ exceeds ``δ`` (so it is not (lower, δ)-DP). ``∞`` where the
    mass of infinite loss exceeds δ.

    Parameters
    ----------
    parts, neighbors
        As for :func:`composed_delta`.
    delta : float in [0, 1]
    tol, rtol : float, keyword-only
        Target width of the ε bracket, in nats: ``upper − lower ≤ max(tol, rtol·upper)``.

    Returns
    -------
    CompositionResult
        ``value`` = ``upper`` (nats); ``pair`` the ordered pair whose ε is largest.

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> import math
    >>> r = composed_epsilon([(randomized_response(4, math.log(3)), 100)], 1e-6)
    >>> round(r.value, 6), r.gap < 1e-9
    (72.392688, True)
    """
    target = check.probability_scalar(delta, "delta")
    tol, rtol = check.tolerance(tol), check.rtol(rtol)
    setup = Setup(parts, neighbors, "composed_epsilon", adaptive)
    ups, lows, steps = [], [], 0
    half, rhalf = 0.5 * tol, 0.5 * rtol  # each end to half the target: their gap meets it
    for c in setup.composed:
        up, n_up = _bisect(c.delta_upper, target, c.infinite_upper, c.top, half, rhalf)
        ups.append(up[1])
        steps += n_up
    for c in setup.fixed:
        low, n_low = _bisect(c.delta_lower, target, c.infinite_lower, c.top, half, rhalf)
        lows.append(low[0])
        steps += n_low
    best = int(np.argmax(ups))
    hi, lo = float(max(ups)), float(max(lows))
    gap = 0.0 if hi == lo else hi - lo
    status, message = _status(gap, hi, tol, rtol, "nats", f"{setup.method}, {setup.folds} releases")
    return CompositionResult(
        value=hi,
        lower=lo,
        upper=hi,
        quantity="epsilon",
        eps=hi,
        delta=target,
        pair=setup.pair(best),
        folds=setup.folds,
        status=status,
        iterations=steps,
        method=setup.method,
        unit="nats",
        message=message,
        tol=tol,
    )


def _one(value: Any, name: str) -> float:
    arr = check.nonnegative(value, name, allow_inf=False)
    if arr.ndim != 0:
        raise ParameterError(
            f"{name} must be a single number, got an array of shape {arr.shape}; "
            "use composed_delta_curve for a grid"
        )
    return float(arr)


def _done(a: float, b: float, tol: float, rtol: float) -> bool:
    return b - a <= max(tol, rtol * abs(b)) or np.nextafter(a, math.inf) >= b


def _bisect(
    f: Any, target: float, infinite: float, top: float, tol: float, rtol: float
) -> tuple[tuple[float, float], int]:
    """``(a, b)`` with ``f(a) > target ≥ f(b)`` (``a = b = 0`` if ``f(0) ≤ target``, both
    ``∞`` if the infinite mass exceeds it), to the target width; and the steps taken. ``f``
    is non-increasing in ε."""
    if infinite > target:
        return (math.inf, math.inf), 0
    if f(np.array([0.0]))[0] <= target:
        return (0.0, 0.0), 0
    a, b = 0.0, max(top, 0.0) + 1.0
    while f(np.array([b]))[0] > target:  # beyond every finite loss only p∞ is left
        a, b = b, 2.0 * b
    steps = 0
    while steps < MAX_BISECTIONS and not _done(a, b, tol, rtol):
        mid = 0.5 * (a + b)
        if f(np.array([mid]))[0] <= target:
            b = mid
        else:
            a = mid
        steps += 1
    return (a, b), steps
