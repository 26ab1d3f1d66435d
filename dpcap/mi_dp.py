"""Mutual-information differential privacy (Cuff & Yu) and leakage under correlated data.

MI-DP (Cuff & Yu, Def. 2) is ``sup_{i, P_{X^n}} I(X_i; Y | X^{-i})``. The conditional mutual
information averages slice informations over ``x^{-i}``, and a point mass on the worst context
times that slice's optimal prior attains the maximum (``docs/mathematics.rst`` §2), so

    MI-DP = max_i max_{x^{-i}} C(W_{i, x^{-i}}),   W_{i,x^{-i}}[a, y] = W[(a, x^{-i}), y],

a batch of capacity problems: identical slices are solved once, slices whose cheap upper bound
cannot reach the best cheap lower bound are pruned, and the rest go through the batched BA
engine together. Every slice value is a certified bracket recomputed here.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.channel import as_mechanism
from dpcap.errors import ProblemTooLargeError
from dpcap.renyi_radius import ENGINE_ORDER, radius_below_one
from dpcap.result import CorrelatedLeakageResult, MIDPResult
from dpcap.solvers import blahut, reduce, renyi

__all__ = ["correlated_leakage", "midp", "renyi_midp"]

FloatArray = NDArray[np.float64]

#: Most candidate channels ``correlated_leakage`` will enumerate.
MAX_COMBINATIONS = 2**16


class _Brackets:
    """Certified (α-)capacities of a stack of slices, solving each distinct slice once.

    ``alpha = 1`` is Shannon capacity; other orders use the Sibson model of the same engine,
    α = ∞ the closed form ``log Σ_y max_x W_xy`` and α = 0 the linear programme. Each slice
    stops on the rule ``upper − lower ≤ max(tol, rtol·|upper|)`` at its own upper end; the
    maximum's bracket then meets it too (its gap is at most that of the slice with the largest
    upper end, and the target grows with ``|upper|``).
    """

    def __init__(
        self, stack: FloatArray, tol: float, max_iter: int, alpha: float = 1.0, rtol: float = 0.0
    ) -> None:
        if stack.shape[0] == 1:  # one slice (a plain matrix): nothing to deduplicate
            first, inverse = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        else:
            first, inverse = reduce.distinct_rows(stack.reshape(stack.shape[0], -1))
        distinct = stack[first]
        uniform = np.full(distinct.shape[:2], 1.0 / distinct.shape[1])
        self.first, self.inverse = first, inverse
        self.distinct = distinct
        self.model: blahut.Model | None = None  # the engine's model, where it ran
        if math.isinf(alpha) or alpha == 0.0:
            self._exact(distinct, alpha)
            return
        model: blahut.Model = blahut.SHANNON if alpha == 1.0 else renyi.Sibson(alpha)
        cheap_lower, cheap_upper = _certify.batch_bracket(distinct, uniform, model=model)
        if alpha != 1.0:  # C_α ≤ C_∞ (docs/mathematics.rst §4), rounded up
            cheap_upper = np.minimum(cheap_upper, [renyi.radius_cap(W) for W in distinct])
            cheap_lower = np.minimum(cheap_lower, cheap_upper)
        # A slice whose upper bound at the uniform prior is below the best lower bound of any
        # slice cannot hold the maximum, and one whose cheap bracket is already closed needs
        # nothing more: both keep their cheap bracket; the engine solves the rest.
        cheap_open = ~_certify.met(cheap_upper - cheap_lower, tol, rtol, cheap_upper)
        solve = (cheap_upper >= cheap_lower.max() - tol) & cheap_open
        lower, upper = cheap_lower.copy(), cheap_upper.copy()
        prior, centre = uniform.copy(), uniform.copy()
        iterations = np.zeros(len(distinct), dtype=np.int64)
        closed = np.zeros(len(distinct), dtype=bool)  # the engine closed its own bracket
        batch = solve & (alpha >= ENGINE_ORDER)
        if batch.any():
            sol = blahut.solve(distinct[batch], tol=tol, rtol=rtol, max_iter=max_iter, model=model)
            lower[batch], upper[batch] = _certify.batch_bracket(
                distinct[batch], sol.prior, sol.upper_prior, model=model
            )
            if alpha != 1.0:
                upper[batch] = np.minimum(upper[batch], cheap_upper[batch])
                lower[batch] = np.minimum(lower[batch], upper[batch])
            prior[batch], centre[batch] = sol.prior, sol.upper_prior
            iterations[batch] = sol.iterations
            closed[batch] = sol.converged
        if alpha < 1.0:
            # 0 < α < 1: the interior point on the radius centre, one slice at a time, for the
            # slices the engine did not close or (below ENGINE_ORDER, where the engine fails to
            # converge) did not try; see dpcap.renyi_radius.radius_below_one
            for j in np.flatnonzero(solve & ~_certify.met(upper - lower, tol, rtol, upper)):
                found, steps, _ = radius_below_one(
                    distinct[j],
                    alpha,
                    tol,
                    max_iter,
                    rtol=rtol,
                    candidates=(_certify.Bracket(lower[j], upper[j], prior[j]),),
                    engine=False,
                )
                lower[j], upper[j], prior[j] = found
                centre[j] = found.prior  # the floor below is then one of its prior alone
                iterations[j] += steps
                closed[j] = False
        self.lower, self.upper, self.prior = lower, upper, prior
        self.centre, self.closed = centre, closed
        self.model = model
        self.iterations = int(iterations.sum())
        self.solved = len(distinct)
        self.engine = int(solve.sum())

    def _exact(self, distinct: FloatArray, alpha: float) -> None:
        """α = ∞ (closed form) or α = 0 (one linear programme per distinct slice)."""
        if math.isinf(alpha):
            results = [_certify.radius_infinity(W) for W in distinct]
        else:
            results = [_certify.capped(W, _certify.radius_zero(W)) for W in distinct]
        self.lower = np.array([r.lower for r in results])
        self.upper = np.array([r.upper for r in results])
        self.prior = np.array([r.prior for r in results])
        self.centre, self.closed = self.prior, np.zeros(len(distinct), dtype=bool)
        self.iterations = 0
        self.solved = self.engine = len(distinct)

    def top(self) -> int:
        """The distinct slice with the largest upper end (the one the rule is met on)."""
        return int(np.argmax(self.upper))

    def floor(self) -> float:
        """The rounding floor of the bracket of :meth:`top` (NaN where no engine ran)."""
        k = self.top()
        if self.model is None:
            return math.nan
        return _certify.floor(self.distinct[k], self.prior[k], self.centre[k], model=self.model)

    def engine_closed(self) -> bool:
        """Whether the engine closed its own bracket of :meth:`top` (in its arithmetic)."""
        return bool(self.closed[self.top()])

    def best(self) -> tuple[float, float, int, FloatArray]:
        """(max lower, max upper, index in the original stack of the best slice, its prior)."""
        k = int(np.argmax(self.lower))
        return float(self.lower[k]), float(self.upper.max()), int(self.first[k]), self.prior[k]


def renyi_midp(
    M: Any,
    /,
    alpha: float,
    *,
    group: Any = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> MIDPResult:
    """Rényi MI-DP of order α: ``max_i max_{x^{-i}} C_α(W_{i, x^{-i}})`` (Cuff & Yu §7).

    The maximum of the slices' Rényi radii, with the same witness as :func:`midp` (which is
    the case α = 1). By Cuff & Yu's Lemma 4, an ε-DP mechanism has Rényi MI-DP ≤ ε at every
    order; at α = ∞ the value is the largest maximal leakage of a slice.

    Parameters
    ----------
    M : Mechanism, AdditiveMechanism, Channel or array_like
        As for :func:`midp`.
    alpha : float in [0, ∞]
        The order.
    group, tol, rtol, max_iter, unit
        As for :func:`midp`.

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import per_entry, randomized_response
    >>> M = per_entry(3, randomized_response(2, 1.0))
    >>> res = renyi_midp(M, math.inf)   # each slice is binary RR: log(2e/(1+e))
    >>> math.isclose(res.value, math.log(2 * math.e / (1 + math.e)))
    True
    """
    return _midp(M, check.order(alpha), group, (tol, rtol), max_iter, unit)


def midp(
    M: Any,
    /,
    *,
    group: Any = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> MIDPResult:
    """Mutual-information DP level of a mechanism, with its witness.

    ``sup_{i, P_{X^n}} I(X_i; Y | X^{-i}) = max_i max_{x^{-i}} C(W_{i, x^{-i}})``
    (Cuff & Yu, Def. 2; ``docs/mathematics.rst`` §2).

    Parameters
    ----------
    M : Mechanism, AdditiveMechanism, Channel or array_like
        A plain matrix is a one-entry database (its MI-DP is its capacity). A structured
        :class:`~dpcap.channel.AdditiveMechanism` is solved from its reachable partial sums,
        one slice per reachable total, never enumerating databases.
    group : int or sequence of int, optional
        Entries ``I``: the group leakage ``sup I(X_I; Y | X_{I^c})`` (slices over ``X_I``).
    tol : float
        Certified gap of each slice (nats).
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    max_iter : int, optional
        BA budget per slice.
    unit : {"nats", "bits"}

    Returns
    -------
    MIDPResult
        ``value`` = ``upper``; the witness ``entry``, ``context`` and ``prior`` attain
        ``lower``; ``per_entry`` is the personalised MI-DP of each entry (Cuff & Yu §6.1).

    Notes
    -----
    Free-lunch privacy ``sup I(X^n; Y)`` (Cuff & Yu §6.2) is :func:`dpcap.capacity` of the
    mechanism. ε-DP implies MI-DP ≤ ε·tanh(ε/2) (Property 1 and Lemma 1); ε-MI-DP implies
    (0, δ')-DP with ``δ' = 1 − 2h^{-1}(ln 2 − ε)`` (Lemma 2): see :mod:`dpcap.bounds`.

    Examples
    --------
    >>> from dpcap.mechanisms import one_time_pad
    >>> res = midp(one_time_pad(4))  # Cuff & Yu, Example 4: the pad is the other entry
    >>> round(res.value, 9), res.entry
    (1.386294361, 0)
    """
    return _midp(M, 1.0, group, (tol, rtol), max_iter, unit)


def _midp(
    M: Any, alpha: float, group: Any, rule: tuple[Any, Any], max_iter: Any, unit: str
) -> MIDPResult:
    mech = as_mechanism(M)
    tolerance, relative = check.tolerance(rule[0]), check.rtol(rule[1])
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    if group is None:
        classes = mech.entry_classes()
        groups: list[tuple[int, ...]] = [(members[0],) for members in classes]
    else:
        classes = [[0]]
        groups = [mech.group(group)]
    per_lower: list[float] = []
    per_upper: list[float] = []
    witnesses = []
    iterations = solved = engine = 0
    widest: _Brackets | None = None  # the group with the largest upper end
    for g in groups:
        slices = mech.slices(g, merged=alpha >= 1.0)  # a count with line noise: pair classes
        brackets = _Brackets(slices.stack, tolerance, budget, alpha, relative)
        lower, upper, k, prior = brackets.best()
        upper += _merged_allowance(slices.merged, alpha)
        if widest is None or upper > max(per_upper):
            widest = brackets
        per_lower.append(lower)
        per_upper.append(upper)
        witnesses.append((g, slices.context(k), prior))
        iterations += brackets.iterations
        solved += brackets.solved
        engine += brackets.engine
    if group is None:  # broadcast each class's values to its members
        lower_all = np.zeros(mech.n_entries)
        upper_all = np.zeros(mech.n_entries)
        for members, lo, up in zip(classes, per_lower, per_upper, strict=True):
            lower_all[members], upper_all[members] = lo, up
    else:
        lower_all, upper_all = np.array(per_lower), np.array(per_upper)
    best = int(np.argmax(per_lower))
    lower, upper = float(max(per_lower)), float(max(per_upper))
    entries, context, prior = witnesses[best]
    assert widest is not None  # at least one group
    status, message = _certify.conclude(
        upper - lower,
        tolerance,
        rtol=relative,
        upper=upper,
        floor=widest.floor,
        engine_closed=widest.engine_closed(),
        iterations=iterations,
        note=f"{solved} distinct slices bracketed, {engine} of them by the iterative engine",
    )
    return MIDPResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        entry=entries[0] if group is None else entries,
        context=context,
        prior=prior,
        per_entry=upper_all / divisor,
        per_entry_lower=lower_all / divisor,
        status=status,
        iterations=iterations,
        slices=solved,
        method=_method_name(alpha),
        unit=unit,
        message=message,
        tol=tolerance,
    )


def _merged_allowance(mass: float, alpha: float) -> float:
    """What merging outputs that hold at most ``mass`` of each row can hide of a two-row
    capacity of order α ≥ 1 (the slices of a count with line noise, :mod:`dpcap.line_noise`).

    Merging is post-processing: the merged slice's capacity is a lower end. Write ``R_x`` for
    row x's mass in a merged group ``G``. Shannon (α = 1): the outputs of ``G`` add
    ``Σ_{y∈G} q_y D(p_{·|y} ‖ p) ≤ Σ_x p_x R_x log(1/p_x) ≤ (max_x R_x) log 2`` to ``I(p)`` and
    the merged output a non-negative term, so ``C ≤ C_merged + mass·log 2``. Sibson (α > 1):
    ``I_α = (α/(α−1)) log S`` with ``S = Σ_y ‖W_{·y}‖_{α,p} ≥ 1``; ``G`` adds at most
    ``Σ_{y∈G} max_x W_xy ≤ 2·mass`` to ``S``, so ``C_α ≤ C_α,merged + (α/(α−1))·2·mass/(1 −
    2·mass)`` (the limit ``2·mass/(1 − 2·mass)`` at α = ∞). 1% is added for rounding.
    """
    if mass == 0.0:
        return 0.0
    if alpha == 1.0:
        return mass * math.log(2.0) * 1.01
    factor = 1.0 if math.isinf(alpha) else alpha / (alpha - 1.0)
    return factor * 2.0 * mass / (1.0 - 2.0 * mass) * 1.01


def _method_name(alpha: float) -> str:
    """How the slices of order α were solved (α = 0 and ∞ are exact, 0 < α < ENGINE_ORDER by
    the interior point on the radius centre, the other orders by the BA/Newton engine, below 1
    with the interior point for the slices it leaves open)."""
    if alpha == 1.0:
        return "ba"
    if alpha == 0.0:
        return "lp (Rényi order 0)"
    if math.isinf(alpha):
        return "closed form (Rényi order inf)"
    how = "interior point" if alpha < ENGINE_ORDER else "ba"
    return f"{how} (Rényi order {alpha:g})"


def correlated_leakage(
    M: Any,
    /,
    *,
    entry: int | None = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CorrelatedLeakageResult:
    """``sup_{P_{X^n}} I(X_i; Y)``: what Y reveals about one entry when entries are correlated.

    The weak adversary of Cuff & Yu §4.1 and Example 3: no side information, but an arbitrary
    joint law. Given ``X_i = a``, the output law is a mixture of the rows
    ``{W[(a, x^{-i})] : x^{-i}}``; capacity is convex in the channel, so the supremum is attained
    at vertex rows: it is the maximum, over choices ``x^{-i} = g(a)`` of one context per value,
    of the capacity of the channel with rows ``W[(a, g(a))]`` (``docs/mathematics.rst`` §2).

    Parameters
    ----------
    M : Mechanism or array_like
    entry : int, optional
        The entry ``i``; by default the maximum over all entries.
    tol, rtol, max_iter, unit
        As for :func:`dpcap.capacity`.

    Returns
    -------
    CorrelatedLeakageResult
        With the witness: ``rows[a]`` (the context chosen for value ``a``) and ``prior``.

    Raises
    ------
    ProblemTooLargeError
        If more than 65,536 choices of contexts would be compared.

    Notes
    -----
    For independent entries MI-DP bounds it (Cuff & Yu, Corollary 1); for correlated entries it
    can exceed MI-DP by far (Example 3: all entries equal, ``I(X_i; Y) ≈ log 2``).

    An additive mechanism (:meth:`~dpcap.Mechanism.additive`) is evaluated without enumerating
    databases: with ``T_i = Σ_{j≠i} s_j(X_j)``, given ``X_i = a`` the output law is a mixture
    of the noise rows of the totals ``s_i(a) + t``, ``t`` reachable by the other entries, and
    every law of ``T_i`` given ``X_i`` is the image of a law of the other entries given ``X_i``
    (one context per reachable ``t``): the candidate rows are its slices, one per reachable
    total of the other entries. Entries with equal score vectors have equal slices, hence equal
    values, and are solved once (the first of them is reported; ``iterations`` counts each
    class once).
    """
    mech = as_mechanism(M)
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    budget = check.max_iter(max_iter)
    divisor = check.unit_divisor(unit)
    if entry is None:  # entries known to have equal slices are solved once (the first)
        entries = [members[0] for members in mech.entry_classes()]
    else:
        entries = [mech._entry(entry)]
    best: tuple[float, float, int, tuple[tuple[int, ...], ...], FloatArray] | None = None
    iterations, upper_all = 0, 0.0
    widest: _Brackets | None = None  # the candidates with the largest upper end
    for i in entries:
        slices = mech.slices((i,))
        stack = slices.stack  # (contexts, m_i, ny)
        m = stack.shape[1]
        # distinct candidate rows per value a, with one context for each
        choices = []
        for a in range(m):
            _, first = np.unique(stack[:, a, :], axis=0, return_index=True)
            choices.append(np.sort(first))
        count = math.prod(len(c) for c in choices)
        if count > MAX_COMBINATIONS:
            raise ProblemTooLargeError(
                f"correlated_leakage would compare {count} choices of contexts for entry {i} "
                f"(limit {MAX_COMBINATIONS}); restrict the domain or pass entry="
            )
        combos = np.array(list(itertools.product(*choices)), dtype=np.int64)  # (count, m)
        channels = stack[combos, np.arange(m)[None, :], :]
        brackets = _Brackets(channels, tolerance, budget, rtol=relative)
        lower, upper, k, prior = brackets.best()
        iterations += brackets.iterations
        if widest is None or upper > upper_all:
            widest = brackets
        upper_all = max(upper_all, upper)
        if best is None or lower > best[0]:
            rows = tuple(slices.context(int(c)) for c in combos[k])
            best = (lower, upper, i, rows, prior)
    assert best is not None
    assert widest is not None
    lower, _, i, rows, prior = best
    status, message = _certify.conclude(
        upper_all - lower,
        tolerance,
        rtol=relative,
        upper=upper_all,
        floor=widest.floor,
        engine_closed=widest.engine_closed(),
        iterations=iterations,
    )
    return CorrelatedLeakageResult(
        value=upper_all / divisor,
        lower=lower / divisor,
        upper=upper_all / divisor,
        entry=i,
        rows=rows,
        prior=prior,
        status=status,
        iterations=iterations,
        method="ba",
        unit=unit,
        message=message,
        tol=tolerance,
    )
