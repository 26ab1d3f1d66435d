"""The pairs of rows a DP metric compares, and the structure that spares most of them.

Private to :mod:`dpcap.privacy` (its module docstring says what is compared and when work is
refused): :func:`setup` turns a mechanism and a neighbour relation into blocks of pairs of
rows; :func:`worst` takes the largest divergence over a block, through the screen by matrix
products (:mod:`dpcap.solvers.gram`) where the block asks for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap.channel import AdditiveMechanism, Mechanism, as_mechanism
from dpcap.function_mechanism import FunctionMechanism
from dpcap.line_noise import LineNoise
from dpcap.neighbors import Neighbors, neighbor_pairs
from dpcap.solvers import divergence, gram, pairwise, reduce

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Below this much work the pairs are compared as they come, without looking for structure.
PLAIN_WORK = 2**22

#: Pairs per block when all pairs of rows are compared (bounded index arrays).
_BLOCK_PAIRS = 2**20


#: Most pairs the screen may leave to the pair kernel (bounded memory); past it, or past
#: MAX_PAIR_WORK pair-outputs, the pairs are compared as they come (or refused).
MAX_CANDIDATES = 2**22


class Pairs(NamedTuple):
    """A block of the work: rows, their log matrix (or None) and unordered pairs ``I < J``;
    ``screen``: "all" (every pair of rows, ``I``, ``J`` empty) or "listed" (the pairs ``I, J``)
    for a screen by matrix products before the pair kernel (:func:`worst`)."""

    W: FloatArray
    L: FloatArray | None
    I: IntArray
    J: IntArray
    screen: str = ""


def setup(
    M: Any, neighbors: Neighbors | None, what: str, order: float | str | None = None
) -> Iterable[Pairs]:
    """The rows to compare and the neighbouring pairs among them, in blocks.

    The relation is ``neighbors`` if given, else the one ``M`` carries. A structured
    :class:`~dpcap.channel.AdditiveMechanism` under Hamming neighbours compares noise rows of
    totals that one entry can move between (from the reachable partial sums; all its distinct
    rows for one entry); all pairs go through :func:`_every_pair`; anything else compares the
    listed pairs of rows of the dense matrix, identical rows and pairs merged. Many pairs of a
    divergence of ``order`` (α, or "tv") that matrix products can screen
    (:func:`dpcap.solvers.gram.supports`) form a screened block instead of a refusal.
    """
    line = line_pairs(M, neighbors) if order in MERGED_ORDERS else None
    if line is not None:  # the classes of consecutive pairs, outputs far from both merged
        classes = line.pair_classes()
        first = np.arange(0, classes.W.shape[0], 2, dtype=np.int64)
        return [Pairs(classes.W, classes.L, first, first + 1)]
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    rows = distinct_rows(mech, relation)
    if rows is not None:
        return _every_pair(*rows, what, order)
    if isinstance(mech, FunctionMechanism):  # the value pairs that neighbours produce
        I, J = mech.with_neighbors(relation).neighbor_rows()
        return _listed_pairs(mech.noise, mech.log_noise, I, J, what, order)
    if isinstance(mech, AdditiveMechanism) and isinstance(relation, str) and relation == "hamming":
        I, J = mech.neighbor_rows()
        return _listed_pairs(mech.noise, mech.log_noise, I, J, what, order)
    I, J = neighbor_pairs(mech.shape, relation)
    return _listed_pairs(mech.matrix, mech.log_matrix, I, J, what, order)


def line_pairs(M: Any, neighbors: Neighbors | None) -> LineNoise | None:
    """The line noise whose consecutive rows are exactly the neighbouring pairs to compare: a
    :class:`~dpcap.line_noise.LineNoise` under ``"line"``, or a count of binary entries with
    such noise under ``"hamming"`` (its neighbours meet totals ``t`` and ``t + 1``); else None.

    For δ(ε), TV and KL (:data:`MERGED_ORDERS`) the pairs are then compared through
    :meth:`~dpcap.line_noise.LineNoise.pair_classes`: merged outputs (post-processing) can only
    lower them, and they hold at most ``m = 2·tail[B + 1] ≤ 2⁻⁹⁹`` of a row's mass, so the value
    is below the pairs' own by at most ``m`` for δ and TV and ``m·(ε + 1)`` for KL (``Σ_G P
    log(P/Q) ≤ P_G ε`` and ``P_G log(P_G/Q_G) ≥ P_G − Q_G``), ε the line's level. Rényi
    divergences of other orders are not merged: far outputs weigh ``e^{(α−1)·log ratio}``,
    which a noise whose log ratio grows with the distance (Gaussian) makes large."""
    if isinstance(M, LineNoise):
        relation = M.neighbors if neighbors is None else neighbors
        wanted = "line"
        line: LineNoise | None = M
    elif isinstance(M, AdditiveMechanism) and M.line_noise is not None:
        relation = M.neighbors if neighbors is None else neighbors
        wanted, line = "hamming", M.line_noise
    else:
        return None
    return line if isinstance(relation, str) and relation == wanted else None


def distinct_rows(mech: Mechanism, relation: Any) -> tuple[FloatArray, FloatArray | None] | None:
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


def _listed_pairs(
    W: FloatArray, L: FloatArray | None, I: Any, J: Any, what: str, order: Any = None
) -> list[Pairs]:
    """The pairs ``(I, J)`` of rows of ``W``, identical rows and pairs merged above PLAIN_WORK;
    screened by products (``order``) when they are many and cover 1/64 of all pairs or more."""
    width = W.shape[1]
    if len(I) * width > PLAIN_WORK:
        reps, kind = reduce.distinct_rows(W, L)
        if len(reps) < W.shape[0]:  # pairs of classes of identical rows
            I, J = kind[I], kind[J]
            keep = I != J  # two identical rows: every divergence is 0
            codes = np.unique(np.minimum(I, J)[keep] * len(reps) + np.maximum(I, J)[keep])
            I, J = codes // len(reps), codes % len(reps)
            W, L = W[reps], None if L is None else L[reps]
        dense = W.shape[0] ** 2 <= 64 * len(I)
        if dense and _screens(W, L, order):
            return [Pairs(W, L, *_indices(I, J), screen="listed")]
        if len(I) * width > relations.MAX_PAIR_WORK:
            raise relations.refuse_pairs(what, len(I), width)
    return [Pairs(W, L, *_indices(I, J))]


def _indices(I: Any, J: Any) -> tuple[IntArray, IntArray]:
    return np.asarray(I, dtype=np.int64), np.asarray(J, dtype=np.int64)


def _screens(W: FloatArray, L: FloatArray | None, order: Any) -> bool:
    """Whether the products screen ``order`` on ``W``, within
    :data:`~dpcap.neighbors.MAX_PRODUCT_WORK`."""
    n, width = W.shape
    fits = order is not None and n * n * width <= relations.MAX_PRODUCT_WORK
    return fits and gram.supports(W, order, L)


def _every_pair(
    W: FloatArray, L: FloatArray | None, what: str, order: Any = None
) -> Iterable[Pairs]:
    """Every pair of rows of ``W``, with the structure of all pairs used (module docstring)."""
    n, width = W.shape
    if n * (n - 1) // 2 * width > PLAIN_WORK:
        reps, _ = reduce.distinct_rows(W, L)
        if len(reps) < n:
            W, L = W[reps], None if L is None else L[reps]
        n = len(reps)
        if width <= 2 and n > 2:  # rows on a segment: the two ends are the extreme points
            logs = divergence.log(W) if L is None else L  # the ratio orders the segment:
            key = logs[:, 0] - logs[:, 1]  # W[:, 0] alone ties at 1 − 1e-300 = 1
            ends = np.array([np.argmin(key), np.argmax(key)])
            W, L, n = W[ends], None if L is None else L[ends], 2
    pairs = n * (n - 1) // 2
    if order == DELTA and pairs * width <= PLAIN_WORK:
        return [Pairs(W, L, _NONE, _NONE, screen="all")]
    if pairs * width <= PLAIN_WORK:
        I, J = np.triu_indices(n, k=1)
        return [Pairs(W, L, I.astype(np.int64), J.astype(np.int64))]
    found = _background_pairs(W, L)
    if found is not None:
        return found
    if _screens(W, L, order):
        return [Pairs(W, L, _NONE, _NONE, screen="all")]
    if pairs * width > relations.MAX_PAIR_WORK:
        raise relations.refuse_pairs(what, pairs, width)
    if order == DELTA:
        return [Pairs(W, L, _NONE, _NONE, screen="all")]
    return list(_triangle(W, L, n))


_NONE = np.zeros(0, dtype=np.int64)

#: The ``order`` of δ(ε) in :func:`setup`: every pair of rows goes to the δ kernel as one block.
DELTA = "delta"

#: The orders (δ, TV, KL) whose consecutive pairs of a line noise are compared with their far
#: outputs merged (see :func:`line_pairs`).
MERGED_ORDERS: tuple[Any, ...] = (DELTA, gram.TV, 1.0)


def worst(b: Pairs, order: float | str, what: str) -> float:
    """The largest divergence of ``order`` (α, or "tv") over a block, by the pair kernel.

    A screened block first goes through the matrix products (:func:`dpcap.solvers.gram.
    candidates`), which leave the few pairs that can attain the maximum: the kernel's value over
    them is its value over all pairs, bit for bit. Where too many pairs tie or nearly agree
    (randomised response, nearly equal rows), every pair goes to the kernel as before, or is
    refused above :data:`~dpcap.neighbors.MAX_PAIR_WORK`.
    """
    width = b.W.shape[1]
    I, J = b.I, b.J
    if b.screen:
        cap = min(MAX_CANDIDATES, relations.MAX_PAIR_WORK // width)
        pairs = None if b.screen == "all" else (b.I, b.J)
        found = gram.candidates(b.W, order, pairs, b.L, cap=cap)
        if found.left <= cap:
            I, J = found.I, found.J
        elif b.screen == "all":
            n = b.W.shape[0]
            if n * (n - 1) // 2 * width > relations.MAX_PAIR_WORK:
                raise _refuse_screen(what, n * (n - 1) // 2, width, found.left)
            return max(worst(p, order, what) for p in _triangle(b.W, b.L, n))
        elif len(I) * width > relations.MAX_PAIR_WORK:
            raise _refuse_screen(what, len(I), width, found.left)
    if order == gram.TV:
        return pairwise.max_tv(b.W, I, J)[0]
    return pairwise.max_divergence(b.W, I, J, float(order), b.L)[0]


def _refuse_screen(what: str, pairs: int, width: int, left: int) -> Exception:
    advice = (
        f"the matrix products left {left} pairs that may attain it (rows that tie or nearly "
        "agree); pass fewer neighbour pairs (neighbors=) or a structured mechanism"
    )
    return relations.refuse_pairs(what, pairs, width, advice)


def _triangle(W: FloatArray, L: FloatArray | None, n: int) -> Iterator[Pairs]:
    """All pairs ``i < j < n`` in blocks of about ``_BLOCK_PAIRS`` (bounded index arrays)."""
    for I, J in _upper(n, 1):
        yield Pairs(W, L, I, J)


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


def _all_pairs(relation: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``relation`` relates every pair of rows (all pairs, or Hamming on one entry)."""
    if not isinstance(relation, str):
        return False
    return relation == "all" or (relation == "hamming" and len(shape) == 1)


def _background_pairs(W: FloatArray, L: FloatArray | None) -> Iterable[Pairs] | None:
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
    # a first block of n/8 + 1 rows already shows a matrix that is not mostly one value per row
    bounds = [0, *range(min(step, n // 8 + 1), n, step), n]
    for start, stop in itertools.pairwise(bounds):
        rows = np.arange(start, stop)
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
    first = [Pairs(W, L, overlap // n, overlap % n)] if len(overlap) else []
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


def _kind_pairs(kinds: _Kinds, codes: IntArray, shared: IntArray, logs: bool) -> Iterator[Pairs]:
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
        yield Pairs(sides[0], sides[1] if logs else None, I, I + P)


def _merged(rest: IntArray, base: FloatArray, k: int) -> FloatArray:
    """``rest`` outputs of probability ``base`` merged into one: ``rest·base`` or its log."""
    if k == 0:
        out: FloatArray = rest * base
        return out
    with np.errstate(divide="ignore"):
        return np.where(rest > 0, np.log(np.maximum(rest, 1)) + base, -np.inf)
