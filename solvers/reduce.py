"""Exact pre-solve reductions for capacity problems (``docs/mathematics.rst`` §1).

Capacity is invariant under three transformations of a channel, and each one makes the solve
cheaper or better conditioned:

* **zero columns** (outputs no input can produce) are dropped;
* **proportional columns** ``W[:, y] = c·W[:, y']`` are merged into one (the likelihood ratio
  of ``y`` and ``y'`` is the same for every pair of inputs, so nothing is lost): the merged
  column is their sum;
* **duplicate rows** are kept once: inputs with the same output law are interchangeable.

Only *bitwise* equality (after normalising columns by their sums) is merged: a reduction that is
not exact is never applied. :class:`Reduction` maps a prior on the reduced channel back to the
original inputs (all the mass of a group of duplicates goes to its first member).

Memory: equal rows (columns) are found by an integer fingerprint of their bits, computed tile
by tile, and every candidate match is then compared exactly, so the reductions need
``O(n_inputs + n_outputs)`` memory beyond tiles of about :data:`BLOCK_ELEMENTS` entries, and a
channel that nothing reduces is returned as it is, without a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from . import backend

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = ["Reduction", "distinct_rows", "extreme_rows", "reduce_channel", "row_fingerprints"]

#: Entries per block of the fingerprint passes (defined once, in :mod:`~dpcap.solvers.backend`).
BLOCK_ELEMENTS = backend.BLOCK_ELEMENTS

_SEED = 0x5EED_D9CA


@dataclass(frozen=True)
class Reduction:
    """A reduced channel and the maps back to the original one."""

    matrix: FloatArray  # the reduced channel (the input itself when nothing reduces)
    rows: IntArray  # original index of each kept row (first member of its group)
    n_inputs: int  # inputs of the original channel

    def prior_back(self, prior: FloatArray) -> FloatArray:
        """A prior on the original inputs with the same output law."""
        out = np.zeros(self.n_inputs)
        out[self.rows] = prior
        return out


def _weights(start: int, stop: int) -> NDArray[np.uint64]:
    """Odd 64-bit weights of positions ``start..stop-1`` (splitmix64 of the position).

    The fingerprint of a vector ``v`` is ``Σ_i bits(v_i) · w_i mod 2^64``: additive over blocks
    of positions, so it is computed a block at a time, and a fixed function of ``v``.
    """
    z = np.arange(start, stop, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    z += np.uint64(_SEED)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z | np.uint64(1)


def _first_of_groups(
    fingerprints: NDArray[np.uint64], same: Callable[[int, int], bool]
) -> tuple[IntArray, IntArray]:
    """Group equal items: ``(first, group)``, ``first`` ascending, ``group[i]`` an index into it.

    Items with equal fingerprints are compared with ``same`` (exact), so a fingerprint collision
    can only cost a comparison, never merge two different items.
    """
    n = fingerprints.shape[0]
    order = np.argsort(fingerprints, kind="stable")  # equal keys keep their original order
    ranked = fingerprints[order]
    tie = ranked[1:] == ranked[:-1]  # tie[i]: items order[i] and order[i + 1] collide
    starts = np.flatnonzero(tie & ~np.concatenate([[False], tie[:-1]]))
    ends = np.flatnonzero(tie & ~np.concatenate([tie[1:], [False]])) + 2
    owner = np.arange(n, dtype=np.int64)  # owner[i]: the first item equal to item i
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        firsts: list[int] = []
        for i in order[s:e].tolist():
            match = next((f for f in firsts if same(f, i)), None)
            if match is None:
                firsts.append(i)
            else:
                owner[i] = match
    first = np.flatnonzero(owner == np.arange(n)).astype(np.int64)
    index = np.empty(n, dtype=np.int64)
    index[first] = np.arange(first.size)
    return first, index[owner]


def _tiles(shape: tuple[int, int]) -> list[tuple[slice, slice]]:
    """Tiles of about :data:`BLOCK_ELEMENTS` entries covering a matrix, row blocks first."""
    n, m = shape
    cols = max(1, min(m, BLOCK_ELEMENTS))
    rows = max(1, BLOCK_ELEMENTS // cols)
    return [
        (slice(i, i + rows), slice(j, j + cols))
        for i in range(0, n, rows)
        for j in range(0, m, cols)
    ]


def row_fingerprints(W: FloatArray) -> NDArray[np.uint64]:
    """Fingerprints of the rows of ``W`` (see :func:`_weights`), one tile at a time.

    Equal rows get equal fingerprints (``−0.0`` counts as ``0.0``); a caller that merges rows
    by fingerprint must compare them exactly, since unequal rows may collide.
    """
    out = np.zeros(W.shape[0], dtype=np.uint64)
    for r, c in _tiles(W.shape):
        tile = W[r, c] + 0.0  # a fresh block, in which −0.0 has become +0.0 (the same number)
        out[r] += tile.view(np.uint64) @ _weights(c.start, c.start + tile.shape[1])  # mod 2^64
    return out


def _column_fingerprints(W: FloatArray, sums: FloatArray) -> NDArray[np.uint64]:
    """Fingerprints of the columns of ``W / sums``, one tile at a time."""
    out = np.zeros(W.shape[1], dtype=np.uint64)
    for r, c in _tiles(W.shape):
        tile = W[r, c] / sums[c]
        tile += 0.0
        weights = _weights(r.start, r.start + tile.shape[0])
        out[c] += np.sum(tile.view(np.uint64) * weights[:, None], axis=0)  # mod 2^64
    return out


def distinct_rows(*arrays: FloatArray | None) -> tuple[IntArray, IntArray]:
    """Representatives of the distinct rows of the arrays taken together, and every row's class.

    ``(reps, kind)``: row ``x`` equals row ``reps[kind[x]]`` in every array (``None`` arrays are
    skipped). Rows are grouped by their combined :func:`row_fingerprints` in ``O(|X|·|Y|)`` and
    each is compared exactly with its group's first row, a block at a time: a row that differs
    (a fingerprint collision) becomes its own class, so no two different rows are ever merged.
    """
    given = [A for A in arrays if A is not None]
    total = np.zeros(given[0].shape[0], dtype=np.uint64)
    for A in given:
        total *= np.uint64(0x9E3779B97F4A7C15)
        total += row_fingerprints(A)
    _, first, kind = np.unique(total, return_index=True, return_inverse=True)
    reps, kind = first.astype(np.int64), kind.astype(np.int64).ravel()
    step = max(1, BLOCK_ELEMENTS // max(1, given[0].shape[1]))
    odd: list[int] = []
    for start in range(0, given[0].shape[0], step):
        stop = min(start + step, given[0].shape[0])
        same = np.ones(stop - start, dtype=bool)
        for A in given:
            same &= (A[start:stop] == A[reps[kind[start:stop]]]).all(axis=1)
        odd.extend(int(i) + start for i in np.flatnonzero(~same))
    if odd:
        kind[odd] = len(reps) + np.arange(len(odd))
        reps = np.concatenate([reps, np.asarray(odd, dtype=np.int64)])
    return reps, kind


def reduce_channel(W: FloatArray) -> Reduction:
    """Apply the exact reductions to ``W`` (rows are inputs); ``W`` is never modified."""
    cols = W.sum(axis=0)
    W1 = W if (cols > 0).all() else W[:, cols > 0]
    sums = cols[cols > 0]

    def same_column(a: int, b: int) -> bool:
        return bool(np.array_equal(W1[:, a] / sums[a], W1[:, b] / sums[b]))

    first, group = _first_of_groups(_column_fingerprints(W1, sums), same_column)
    if first.size < W1.shape[1]:
        merged = np.ascontiguousarray(W1[:, first])
        for j in np.flatnonzero(first[group] != np.arange(W1.shape[1])):
            merged[:, group[j]] += W1[:, j]  # in column order, as the sum is defined
        W1 = merged

    def same_row(a: int, b: int) -> bool:
        return bool(np.array_equal(W1[a], W1[b]))

    keep, _ = _first_of_groups(row_fingerprints(W1), same_row)
    matrix = W1 if keep.size == W1.shape[0] else W1[keep]
    return Reduction(matrix=matrix, rows=keep, n_inputs=W.shape[0])


def extreme_rows(reduction: Reduction) -> Reduction:
    """Keep the rows that can carry a capacity: for two outputs, the two extreme rows.

    Shannon and Rényi capacities are the radius ``min_Q max_x D_α(W_x ‖ Q)`` of the rows, and
    ``D_α(· ‖ Q)`` is quasi-convex, so the maximum over the rows' convex hull is attained at its
    extreme points: the other rows carry no mass in some optimal prior and can be dropped
    exactly (not for a capacity under an input cost, where every row's cost matters). With two
    outputs a row is a point ``W[x, 0]`` of ``[0, 1]`` and the hull's extreme points are the
    smallest and the largest: a 100,000 × 2 channel is a 2 × 2 problem. The certificate is still
    taken over every row of the original channel.
    """
    M = reduction.matrix
    if M.shape[1] != 2 or M.shape[0] <= 2:
        return reduction
    keep = np.unique(np.array([np.argmin(M[:, 0]), np.argmax(M[:, 0])], dtype=np.int64))
    return Reduction(matrix=M[keep], rows=reduction.rows[keep], n_inputs=reduction.n_inputs)
