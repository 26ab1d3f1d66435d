"""Differential-privacy metrics of a mechanism under its neighbour relation.

Each metric is a worst case over *ordered* pairs of neighbouring databases ``(x, x')`` of a
divergence between the output laws ``W_x`` and ``W_x'`` (Cuff & Yu §2; Hsu et al. §IV;
``docs/mathematics.rst`` §3):

============  ==============================================================
``dp_epsilon``  ``max log W[x,y]/W[x',y]`` (pure ε-DP; ``math.inf`` if a zero
                meets a positive probability)
``dp_delta``    ``δ(ε) = max E_{e^ε}(W_x ‖ W_x')``, the hockey-stick divergence:
                the mechanism is (ε, δ)-DP iff ``δ ≥ δ(ε)``
``kl_dp``       ``max D(W_x ‖ W_x')`` (KL-DP, Cuff & Yu Def. 7)
``renyi_dp``    ``max D_α(W_x ‖ W_x')`` (Rényi DP, Mironov 2017)
``tv_dp``       ``max TV(W_x, W_x')`` (= ``δ(0)``, the (δ)-DP level)
============  ==============================================================

Units: ε, Rényi DP and KL-DP are DP levels, bounds on log-likelihood ratios of neighbours'
outputs, always in nats (no ``unit=``; ``docs/concepts.rst``, Units); δ and TV are
probabilities; ``max_leakage`` is an information quantity (``C_∞``) and takes ``unit=``.

Which pairs are neighbours: the relation passed as ``neighbors=`` if one is given, otherwise
the one the mechanism carries (:attr:`~dpcap.Channel.neighbors`: ``"line"`` for
``truncated_geometric``, ``"all"`` for ``randomized_response``, ``"hamming"`` for a database
mechanism…). A plain array carries nothing: it is a one-entry database under ``"hamming"``, so
all of its rows are neighbours. ``max_leakage`` needs no relation.

Underflow (``docs/mathematics.rst`` §8): where a mechanism carries a
:attr:`~dpcap.Channel.log_matrix` (its constructor computed the log-probabilities of entries
below the smallest normal double in closed form), every likelihood ratio is taken from it, so
``dp_epsilon(truncated_geometric(1000, 1.0))`` is 1, not ∞; masses still come from the matrix.

Work (``docs/mathematics.rst`` §3): identical rows are merged and only distinct pairs of rows
are compared. Under all pairs (``"all"``, or ``"hamming"`` on one entry) ε is
``max_y (max_x log W[x,y] − min_x log W[x,y])``, in ``O(|X|·|Y|)``, two-output mechanisms
compare their two extreme rows (every metric here is jointly quasi-convex in the pair), and a
matrix whose rows are a common value with a few exceptions (randomised response) is compared
through one pair per *kind* of row: two rows whose exceptions fall in different columns give
the same value for every pair of their kinds. What stays is at most
:data:`~dpcap.neighbors.MAX_PAIR_WORK` ``pairs × outputs``; above it a metric raises
:class:`~dpcap.ProblemTooLargeError` at once instead of running for minutes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap import metric_privacy
from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism, Mechanism, as_mechanism
from dpcap.errors import ParameterError
from dpcap.function_mechanism import FunctionMechanism
from dpcap.neighbors import Neighbors, neighbor_pairs
from dpcap.solvers import pairwise, reduce

__all__ = [
    "dp_delta",
    "dp_delta_curve",
    "dp_epsilon",
    "kl_dp",
    "max_leakage",
    "renyi_dp",
    "tv_dp",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Below this much work the pairs are compared as they come, without looking for structure.
PLAIN_WORK = 2**22

#: Pairs per block when all pairs of rows are compared (bounded index arrays).
_BLOCK_PAIRS = 2**20


class _Pairs(NamedTuple):
    """A block of the work: rows, their log matrix (or None) and unordered pairs ``I < J``."""

    W: FloatArray
    L: FloatArray | None
    I: IntArray
    J: IntArray


def _setup(M: Any, neighbors: Neighbors | None, what: str) -> Iterable[_Pairs]:
    """The rows to compare and the neighbouring pairs among them, in blocks.

    The relation is ``neighbors`` if given, else the one ``M`` carries. A structured
    :class:`~dpcap.channel.AdditiveMechanism` under Hamming neighbours compares noise rows of
    totals that one entry can move between (from the reachable partial sums; all its distinct
    rows for one entry); all pairs go through :func:`_every_pair`; anything else compares the
    listed pairs of rows of the dense matrix, identical rows and pairs merged.
    """
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    rows = _distinct_rows(mech, relation)
    if rows is not None:
        return _every_pair(*rows, what)
    if isinstance(mech, FunctionMechanism):  # the value pairs that neighbours produce
        I, J = mech.with_neighbors(relation).neighbor_rows()
        return _listed_pairs(mech.noise, mech.log_noise, I, J, what)
    if isinstance(mech, AdditiveMechanism) and isinstance(relation, str) and relation == "hamming":
        I, J = mech.neighbor_rows()
        return _listed_pairs(mech.noise, mech.log_noise, I, J, what)
    I, J = neighbor_pairs(mech.shape, relation)
    return _listed_pairs(mech.matrix, mech.log_matrix, I, J, what)


def _distinct_rows(mech: Mechanism, relation: Any) -> tuple[FloatArray, FloatArray | None] | None:
    """The rows (and log rows) to compare pairwise when every two of them are neighbours: a
    one-entry additive mechanism's distinct noise rows, a function mechanism's rows at the
    values its query takes, a dense matrix under an all-pairs relation; else None."""
    if isinstance(mech, AdditiveMechanism) and _one_entry_hamming(mech, relation):
        index = np.unique(mech.scores[0]) - int(mech.scores[0].min())
    elif isinstance(mech, FunctionMechanism) and _all_pairs(relation, mech.shape):
        index = mech.reachable()
    elif _all_pairs(relation, mech.shape):
        return mech.matrix, mech.log_matrix
    else:
        return None
    logs = None if mech.log_noise is None else mech.log_noise[index]
    return mech.noise[index], logs


def _one_entry_hamming(mech: AdditiveMechanism, relation: Any) -> bool:
    """Hamming neighbours of a one-entry database: every pair of its distinct values."""
    return isinstance(relation, str) and relation == "hamming" and mech.n_entries == 1


def _listed_pairs(W: FloatArray, L: FloatArray | None, I: Any, J: Any, what: str) -> list[_Pairs]:
    """The pairs ``(I, J)`` of rows of ``W``, identical rows and pairs merged above PLAIN_WORK."""
    width = W.shape[1]
    if len(I) * width > PLAIN_WORK:
        reps, kind = reduce.distinct_rows(W, L)
        if len(reps) < W.shape[0]:  # pairs of classes of identical rows
            I, J = kind[I], kind[J]
            keep = I != J  # two identical rows: every divergence is 0
            codes = np.unique(np.minimum(I, J)[keep] * len(reps) + np.maximum(I, J)[keep])
            I, J = codes // len(reps), codes % len(reps)
            W, L = W[reps], None if L is None else L[reps]
        if len(I) * width > relations.MAX_PAIR_WORK:
            raise relations.refuse_pairs(what, len(I), width)
    return [_Pairs(W, L, np.asarray(I, dtype=np.int64), np.asarray(J, dtype=np.int64))]


def _every_pair(W: FloatArray, L: FloatArray | None, what: str) -> Iterable[_Pairs]:
    """Every pair of rows of ``W``, with the structure of all pairs used (module docstring)."""
    n, width = W.shape
    if n * (n - 1) // 2 * width > PLAIN_WORK:
        reps, _ = reduce.distinct_rows(W, L)
        if len(reps) < n:
            W, L = W[reps], None if L is None else L[reps]
        n = len(reps)
        if width <= 2 and n > 2:  # rows on a segment: the two ends are the extreme points
            key = W[:, 0] if L is None else L[:, 0] - L[:, 1]
            ends = np.array([np.argmin(key), np.argmax(key)])
            W, L, n = W[ends], None if L is None else L[ends], 2
    pairs = n * (n - 1) // 2
    if pairs * width <= PLAIN_WORK:
        I, J = np.triu_indices(n, k=1)
        return [_Pairs(W, L, I.astype(np.int64), J.astype(np.int64))]
    found = _background_pairs(W, L)
    if found is not None:
        return found
    if pairs * width > relations.MAX_PAIR_WORK:
        raise relations.refuse_pairs(what, pairs, width)
    return list(_triangle(W, L, n))


def _triangle(W: FloatArray, L: FloatArray | None, n: int) -> Iterator[_Pairs]:
    """All pairs ``i < j < n`` in blocks of about ``_BLOCK_PAIRS`` (bounded index arrays)."""
    for I, J in _upper(n, 1):
        yield _Pairs(W, L, I, J)


def _upper(n: int, offset: int) -> Iterator[tuple[IntArray, IntArray]]:
    """The pairs ``i ≤ j − offset`` of ``range(n)`` in blocks of about ``_BLOCK_PAIRS``."""
    start = 0
    while start < n - offset:
        stop = start + 1
        while stop < n - offset and (stop - start + 1) * (n - start) <= _BLOCK_PAIRS:
            stop += 1
        firsts = np.arange(start, stop, dtype=np.int64)
        counts = n - offset - firsts
        I = np.repeat(firsts, counts)
        J = np.arange(len(I), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        yield I, J + I + offset
        start = stop


def dp_epsilon(M: Any, /, *, neighbors: Neighbors | None = None, metric: Any = None) -> float:
    """The pure-DP level ``ε = max_{(x,x') neighbours, y} log W[x,y] / W[x',y]`` (nats).

    ``0/0`` is ignored (an outcome impossible under both databases); ``p/0`` with ``p > 0``
    gives ``math.inf``. A mechanism with no neighbouring pairs has ε = 0. The logarithms come
    from ``M.log_matrix`` where ``M`` has one (entries that underflowed; module docstring).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    metric : array_like (n, n) or callable, keyword-only, optional
        A distance on the inputs instead: the d-privacy level, :func:`~dpcap.metric_epsilon`.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response, truncated_geometric
    >>> round(dp_epsilon(randomized_response(4, 1.5)), 12)
    1.5
    >>> round(dp_epsilon(truncated_geometric(3, 1.0)), 12)  # carries "line"
    1.0
    >>> round(dp_epsilon(truncated_geometric(3, 1.0), neighbors="all"), 12)
    3.0
    """
    if metric is not None:
        return metric_privacy.metric_epsilon(M, metric, neighbors=neighbors)
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    rows = _distinct_rows(mech, relation)
    if rows is not None:
        return _epsilon_all_pairs(*rows)
    blocks = _setup(mech, neighbors, "dp_epsilon")
    return max((pairwise.max_log_ratio(b.W, b.I, b.J, b.L)[0] for b in blocks), default=0.0)


def _all_pairs(relation: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``relation`` relates every pair of rows (all pairs, or Hamming on one entry)."""
    if not isinstance(relation, str):
        return False
    return relation == "all" or (relation == "hamming" and len(shape) == 1)


def _epsilon_all_pairs(W: FloatArray, L: FloatArray | None = None) -> float:
    """ε over all pairs of rows in ``O(|X|·|Y|)``: ``max_y log max_x W[x, y] − log min_x W[x, y]``.

    The largest ratio in a column is its largest entry over its smallest; a column of zeros is
    ignored (0/0) and a column with a zero and a positive entry gives ∞. ``fl(log)`` and the
    floating-point difference are monotone, so this is bit for bit the maximum of the pairwise
    differences ``log W[x, y] − log W[x', y]``. With a log matrix ``L`` the same on ``L``.
    """
    if W.shape[0] < 2:
        return 0.0
    if L is not None:
        top_log, bottom_log = L.max(axis=0), L.min(axis=0)
        used = top_log > -np.inf
        if not used.any():
            return 0.0
        return max(float(np.max(top_log[used] - bottom_log[used])), 0.0)
    top, bottom = W.max(axis=0), W.min(axis=0)
    used = top > 0
    if not used.any():
        return 0.0
    if (bottom[used] == 0).any():
        return math.inf
    return max(float(np.max(np.log(top[used]) - np.log(bottom[used]))), 0.0)


def dp_delta(
    M: Any, /, eps: float, *, neighbors: Neighbors | None = None, metric: Any = None
) -> float:
    """The smallest δ for which ``M`` is (ε, δ)-DP at one ε (:func:`dp_delta_curve`: a grid).

    ``δ(ε) = max_{ordered neighbours (x, x')} Σ_y (W[x,y] − e^ε W[x',y])_+`` — the worst
    hockey-stick divergence ``E_{e^ε}`` (Cuff & Yu §3.2; Hsu et al., survey, §IV;
    ``docs/mathematics.rst`` §3). Non-increasing and convex in ``e^ε``; ``δ(0)`` is the
    total-variation level and ``δ(∞)`` the largest probability of an outcome impossible under a
    neighbour.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    eps : float in [0, ∞]
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    metric : array_like (n, n) or callable, keyword-only, optional
        A distance on the inputs instead: the level ``e^{ε d}``, :func:`~dpcap.metric_delta`.

    Returns
    -------
    float
        δ(ε), a probability (ε is in nats). Exactly 0.0 where ``ε ≥ ε̂ − ρ``: ``ε̂`` the pure-DP
        level of the pairs, ``ρ = 32u(1 + max|log W|)`` the rounding of a log-likelihood ratio;
        there the stored matrix's δ lies in ``[0, 2ρ]``, ``[0, 0]`` for ``ε ≥ ε̂ + ρ``
        (:func:`dpcap.solvers.pairwise.hockey_curve`), not a one-ulp residue.

    Raises
    ------
    ParameterError
        If ε is negative, NaN or not a single number (a grid goes to :func:`dp_delta_curve`).
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> W = randomized_response(2, 1.0)
    >>> dp_delta(W, 0.0) == tv_dp(W)
    True
    >>> round(dp_delta(W, 0.5), 6)
    0.287649
    """
    level = check.nonnegative(eps, "eps")
    if level.ndim != 0:
        raise ParameterError(
            f"eps must be a single number for dp_delta, got an array of shape {level.shape}; "
            "use dp_delta_curve for a grid of ε"
        )
    if metric is not None:
        return metric_privacy.metric_delta(M, float(level), metric, neighbors=neighbors)
    return float(_curve(M, neighbors, level.reshape(1), "dp_delta")[0])


def dp_delta_curve(
    M: Any, /, eps: Any, *, neighbors: Neighbors | None = None
) -> NDArray[np.float64]:
    """The δ(ε) curve of ``M`` over a grid of ε, in one pass over the neighbour pairs.

    The same quantity as :func:`dp_delta` at every ε of ``eps`` (exactly 0.0 from the pure-DP
    level on, with the certificate stated there): each pair's likelihood ratios are binned
    against the thresholds ``e^{±ε}`` and the curve follows from per-bin sums.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    eps : array_like of float in [0, ∞]
        The grid (a single number is a grid of one).
    neighbors : str, array_like or callable, keyword-only, optional
        As for :func:`dp_delta`.

    Returns
    -------
    numpy.ndarray
        δ at each ε, of the shape of ``numpy.atleast_1d(eps)``.

    Raises
    ------
    ParameterError
        If an ε is negative or NaN.
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> dp_delta_curve(randomized_response(2, 1.0), [0.5, 1.0]).round(6)
    array([0.287649, 0.      ])
    """
    levels = np.atleast_1d(check.nonnegative(eps, "eps"))
    curve: FloatArray = _curve(M, neighbors, levels.ravel(), "dp_delta_curve")
    return curve.reshape(levels.shape)


def _curve(M: Any, neighbors: Neighbors | None, levels: FloatArray, what: str) -> FloatArray:
    out = np.zeros(levels.shape)
    for b in _setup(M, neighbors, what):
        np.maximum(out, pairwise.hockey_curve(b.W, b.I, b.J, levels, b.L), out=out)
    return out


def kl_dp(M: Any, /, *, neighbors: Neighbors | None = None) -> float:
    """KL-DP level ``max_{ordered neighbours} D(W_x ‖ W_x')`` (Cuff & Yu, Def. 7), in nats.

    ε-DP implies KL-DP ≤ ε·tanh(ε/2), attained by binary randomized response (Property 1): a DP
    level, in nats like ε (module docstring). Rényi DP at α = 1 (:func:`renyi_dp`).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> math.isclose(kl_dp(randomized_response(2, 1.0)), math.tanh(0.5))
    True
    """
    return renyi_dp(M, 1.0, neighbors=neighbors)


def renyi_dp(M: Any, /, alpha: float, *, neighbors: Neighbors | None = None) -> float:
    """Rényi-DP level of order α: ``max_{ordered neighbours} D_α(W_x ‖ W_x')``, in nats.

    A mechanism is (α, ε)-RDP iff ``ε ≥`` this level (Mironov 2017); at α = ∞ it is
    :func:`dp_epsilon`. A DP level, in nats like ε (module docstring).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    alpha : float
        The order α ∈ [0, ∞]; α = 1 is KL-DP and α = ∞ is pure ε-DP.
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> W = randomized_response(2, 1.0)
    >>> renyi_dp(W, math.inf) == dp_epsilon(W)   # nats, both
    True
    """
    a = check.order(alpha)
    if math.isinf(a):
        return dp_epsilon(M, neighbors=neighbors)
    what = "kl_dp" if a == 1.0 else "renyi_dp"
    blocks = _setup(M, neighbors, what)
    return max((pairwise.max_divergence(b.W, b.I, b.J, a, b.L)[0] for b in blocks), default=0.0)


def tv_dp(M: Any, /, *, neighbors: Neighbors | None = None) -> float:
    """Total-variation level ``max_{neighbours} TV(W_x, W_x')``: the (δ)-DP level, ``δ(0)``.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).
    """
    blocks = _setup(M, neighbors, "tv_dp")
    return max((pairwise.max_tv(b.W, b.I, b.J)[0] for b in blocks), default=0.0)


def max_leakage(W: Any, /, *, unit: str = "nats") -> float:
    """Maximal leakage ``L(X→Y) = log Σ_y max_x W[x, y]`` (Issa, Wagner, Kamath 2020).

    It equals the Sibson capacity of order ∞ and the min-entropy leakage at the uniform prior,
    its maximum over priors (Hsu et al., survey, §III-A; Ünsal & Önen §4.2–4.3).

    A maximum over rows does not see repeated rows: for an additive mechanism
    (:meth:`~dpcap.Mechanism.additive`) it is evaluated on the noise rows of the reachable
    totals, which are its distinct rows, without enumerating databases.

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> k, eps = 3, 1.0
    >>> math.isclose(max_leakage(randomized_response(k, eps)),
    ...              math.log(k * math.exp(eps) / (math.exp(eps) + k - 1)))
    True
    """
    structured = isinstance(W, (AdditiveMechanism, FunctionMechanism))
    rows = W.reachable_rows() if structured else W
    matrix = check.stochastic_matrix(rows, "W")
    return math.log(float(np.sum(np.max(matrix, axis=0)))) / check.unit_divisor(unit)


def _background_pairs(W: FloatArray, L: FloatArray | None) -> Iterable[_Pairs] | None:
    """All pairs of distinct rows whose entries are mostly one common value per row.

    Row x equals a background value ``b_x`` (the most frequent of its entries in five
    pseudo-random columns) outside a set ``S_x`` of columns. For two rows with
    disjoint ``S_x``, ``S_x'`` the pair of laws is, up to merging outputs, ``(dev_x, b_x·1,
    c·b_x)`` against ``(b_x'·1, dev_x', c·b_x')`` with ``c = |Y| − |S_x| − |S_x'|``: it depends
    only on the *kinds* (background and sorted deviations) of the two rows, and merging outputs
    whose pairs of probabilities are equal changes no metric here (each is a sum over outputs
    of a function of the pair, or a maximum of one). So each pair of kinds that has a disjoint
    pair is compared once, through those merged laws, and the pairs that share a deviating
    column as they are. ``None`` when this is not less work than all pairs, or too much.
    """
    n, m = W.shape
    arrays = [W] if L is None else [W, L]
    step = max(1, 2**20 // m)
    # candidates for the background of each row: its entries in 5 pseudo-random columns
    picks = np.random.default_rng(20261123).integers(0, m, size=(n, 5))
    col = np.empty(n, dtype=np.int64)
    found: list[tuple[IntArray, IntArray]] = []
    for start in range(0, n, step):
        rows = np.arange(start, min(start + step, n))
        same = np.ones((5, len(rows), m), dtype=bool)
        for A in arrays:
            same &= A[rows][None, :, :] == A[rows[:, None], picks[rows]].T[:, :, None]
        best = np.argmax(same.sum(axis=2), axis=0)  # the candidate met most often
        col[rows] = picks[rows, best]
        r, c = np.nonzero(~same[best, np.arange(len(rows))])
        found.append((r + start, c))
        if sum(len(f[0]) for f in found) > n * m // 8:
            return None
    base = [A[np.arange(n), col] for A in arrays]
    r = np.concatenate([f[0] for f in found]).astype(np.int64)
    c = np.concatenate([f[1] for f in found]).astype(np.int64)
    count = np.bincount(r, minlength=n)
    width = int(count.max(initial=0))
    if 4 * width > m:
        return None
    per_col = np.bincount(c, minlength=m)
    if int(np.sum(per_col * (per_col - 1) // 2)) * m > relations.MAX_PAIR_WORK:
        return None
    overlap = _overlapping_pairs(r, c, n, per_col)
    # the kind of a row: its background, its number of deviations and their sorted values
    values = [A[r, c] for A in arrays]
    order = np.lexsort((*values[::-1], r))
    rank = np.arange(len(r)) - (np.cumsum(count) - count)[r]
    padded = []
    for v in values:
        table = np.zeros((n, width))
        table[r, rank] = v[order]
        padded.append(table)
    signature = np.concatenate([np.stack([*base, count.astype(np.float64)], axis=1), *padded], 1)
    reps, kind = reduce.distinct_rows(signature)
    T = len(reps)
    span = 2 * width + 1
    if (T * (T + 1) // 2) * span + len(overlap) * m >= min(
        relations.MAX_PAIR_WORK + 1, n * (n - 1) // 2 * m
    ):
        return None
    kinds = _Kinds(
        size=np.bincount(kind, minlength=T),
        deviations=count[reps],
        base=[b[reps] for b in base],
        dev=[t[reps] for t in padded],
        width=m,
    )
    pair_kinds = np.minimum(kind[overlap // n], kind[overlap % n]) * T + np.maximum(
        kind[overlap // n], kind[overlap % n]
    )
    codes, shared = np.unique(pair_kinds, return_counts=True)
    first = [_Pairs(W, L, overlap // n, overlap % n)] if len(overlap) else []
    return itertools.chain(first, _kind_pairs(kinds, codes, shared, L is not None))


def _overlapping_pairs(r: IntArray, c: IntArray, n: int, per_col: IntArray) -> IntArray:
    """Codes ``i·n + j`` (i < j) of the pairs of rows that deviate in a common column."""
    members = r[np.argsort(c, kind="stable")]
    firsts = np.cumsum(per_col) - per_col
    codes = [np.zeros(0, dtype=np.int64)]
    for g in np.unique(per_col[per_col >= 2]):
        group = members[firsts[per_col == g][:, None] + np.arange(g)[None, :]]
        a, b = np.triu_indices(int(g), k=1)
        lo, hi = np.minimum(group[:, a], group[:, b]), np.maximum(group[:, a], group[:, b])
        codes.append((lo * n + hi).ravel())
    found: IntArray = np.unique(np.concatenate(codes))
    return found


class _Kinds(NamedTuple):
    """The kinds of rows: how many rows, deviations, background values, sorted deviations."""

    size: IntArray
    deviations: IntArray
    base: list[FloatArray]
    dev: list[FloatArray]
    width: int


def _kind_pairs(kinds: _Kinds, codes: IntArray, shared: IntArray, logs: bool) -> Iterator[_Pairs]:
    """One merged pair of laws per pair of kinds ``A ≤ B`` that has a disjoint pair of rows."""
    T = len(kinds.size)
    span = kinds.dev[0].shape[1]
    slot = np.arange(span)
    for A, B in _upper(T, 0):
        size_a, size_b = kinds.size[A], kinds.size[B]
        total = np.where(A == B, size_a * (size_a - 1) // 2, size_a * size_b)
        met = np.zeros(len(A), dtype=np.int64)
        if len(codes):  # pairs of these kinds that share a deviating column
            at = np.minimum(np.searchsorted(codes, A * T + B), len(codes) - 1)
            met = np.where(codes[at] == A * T + B, shared[at], 0)
        keep = total > met
        A, B = A[keep], B[keep]
        if not len(A):
            continue
        rest = kinds.width - kinds.deviations[A] - kinds.deviations[B]
        own_a = slot[None, :] < kinds.deviations[A][:, None]
        own_b = slot[None, :] < kinds.deviations[B][:, None]
        sides = []
        for k, (dev, base) in enumerate(zip(kinds.dev, kinds.base, strict=True)):
            empty = 0.0 if k == 0 else -np.inf
            x = np.concatenate(
                [
                    np.where(own_a, dev[A], empty),
                    np.where(own_b, base[A][:, None], empty),
                    _merged(rest, base[A], k)[:, None],
                ],
                axis=1,
            )
            y = np.concatenate(
                [
                    np.where(own_a, base[B][:, None], empty),
                    np.where(own_b, dev[B], empty),
                    _merged(rest, base[B], k)[:, None],
                ],
                axis=1,
            )
            sides.append(np.concatenate([x, y]))
        P = len(A)
        I = np.arange(P, dtype=np.int64)
        yield _Pairs(sides[0], sides[1] if logs else None, I, I + P)


def _merged(rest: IntArray, base: FloatArray, k: int) -> FloatArray:
    """``rest`` outputs of probability ``base`` merged into one: ``rest·base`` or its log."""
    if k == 0:
        out: FloatArray = rest * base
        return out
    with np.errstate(divide="ignore"):
        return np.where(rest > 0, np.log(np.maximum(rest, 1)) + base, -np.inf)
