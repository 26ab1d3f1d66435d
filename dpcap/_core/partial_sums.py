"""Support code of :mod:`dpcap.channel`: the reachable totals of additive mechanisms.

The dynamic programme over integer score vectors that builds additive mechanisms (their reachable
totals, the rows of a slice, the rows of a database).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["PartialSums", "database_rows", "first_databases", "neighbor_totals", "slice_rows"]

FloatArray = NDArray[np.float64]


class PartialSums:
    """Reachable totals of a list of integer score vectors, with a witness for each total.

    A forward dynamic programme over the entries: ``reach[t]`` says whether the total
    ``lowest + t`` is reachable, and ``choice[j][t]`` which value of entry j first reached it,
    so a database attaining any total is recovered by walking back (``witness``).
    """

    def __init__(self, scores: list[NDArray[np.int64]]) -> None:
        self.scores = scores
        self.lowest = int(sum(int(s.min()) for s in scores))
        reach = np.ones(1, dtype=bool)
        self.choices: list[NDArray[np.int64]] = []
        for s in scores:
            shift = s - s.min()
            nxt = np.zeros(len(reach) + int(shift.max()), dtype=bool)
            choice = np.full(len(nxt), -1, dtype=np.int64)
            for a, d in enumerate(shift):
                fresh = reach & ~nxt[d : d + len(reach)]
                choice[d : d + len(reach)][fresh] = a
                nxt[d : d + len(reach)] |= reach
            self.choices.append(choice)
            reach = nxt
        self.reach = reach

    def reachable(self) -> NDArray[np.int64]:
        """Every reachable total (absolute values, increasing)."""
        totals: NDArray[np.int64] = np.flatnonzero(self.reach).astype(np.int64) + self.lowest
        return totals

    def witness(self, total: int) -> tuple[int, ...]:
        """Values of the entries (in order) whose scores add up to ``total``."""
        t = total - self.lowest
        values = []
        for s, choice in zip(reversed(self.scores), reversed(self.choices), strict=True):
            a = int(choice[t])
            values.append(a)
            t -= int(s[a] - s.min())
        return tuple(reversed(values))

    def witnesses(self, totals: NDArray[np.int64]) -> NDArray[np.int64]:
        """:meth:`witness` of many reachable totals at once: row k holds the values of the
        entries (in order) for ``totals[k]``, shape ``(len(totals), n_entries)``."""
        t = np.asarray(totals, dtype=np.int64) - self.lowest
        values = np.empty((t.size, len(self.scores)), dtype=np.int64)
        for j in range(len(self.scores) - 1, -1, -1):
            s = self.scores[j]
            a = self.choices[j][t]
            values[:, j] = a
            t = t - (s[a] - s.min())
        return values


def first_databases(
    scores: list[NDArray[np.int64]],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Every reachable total (increasing) and its lexicographically first database.

    Row k of the second array, shape ``(len(totals), n)``, is the database ``x`` with
    ``Σ_i s_i(x_i) = totals[k]`` that comes first in C order (the smallest row
    ``numpy.ravel_multi_index(x, shape)``). The programme runs over the entries in reverse, so
    that :meth:`PartialSums.witness` walks them forward and gives each entry in turn the
    smallest value with which the entries after it still reach the total.
    """
    backward = PartialSums(scores[::-1])
    totals = backward.reachable()
    first: NDArray[np.int64] = np.ascontiguousarray(backward.witnesses(totals)[:, ::-1])
    return totals, first


def neighbor_totals(
    scores: list[NDArray[np.int64]], entries: list[int], lowest: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Noise rows ``(t, t')``, ``t < t'``, of totals met by databases that differ in one entry.

    ``entries`` holds one entry of each class of entries with equal score vectors (the others
    give the same pairs); ``lowest`` is the smallest total (row 0 of the noise).
    """
    pairs = []
    for i in entries:
        totals = PartialSums([s for k, s in enumerate(scores) if k != i]).reachable()
        own = np.unique(scores[i])
        a, b = np.triu_indices(len(own), k=1)
        if not len(a):
            continue
        lo = (totals[:, None] + own[a][None, :]).ravel() - lowest
        hi = (totals[:, None] + own[b][None, :]).ravel() - lowest
        pairs.append(np.stack([lo, hi], axis=1))
    if not pairs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    unique = np.unique(np.concatenate(pairs), axis=0)
    return unique[:, 0].copy(), unique[:, 1].copy()


def slice_rows(
    scores: list[NDArray[np.int64]], group: tuple[int, ...], lowest: int
) -> tuple[PartialSums, NDArray[np.int64], NDArray[np.int64]]:
    """The slices of the entries ``group``: one per reachable total of the other entries.

    Returns the partial sums of the other entries (for witnesses), their reachable totals, and
    the noise rows ``index[k, v]`` of total ``k`` with the group's values ``v`` (in C order).
    """
    rest = [k for k in range(len(scores)) if k not in group]
    sums = PartialSums([scores[k] for k in rest])
    own = np.zeros(1, dtype=np.int64)
    for k in group:  # totals of the group's values, in C order
        own = (own[:, None] + scores[k][None, :]).ravel()
    totals = sums.reachable()
    index: NDArray[np.int64] = totals[:, None] + own[None, :] - lowest
    return sums, totals, index


def database_rows(scores: list[NDArray[np.int64]], lowest: int) -> NDArray[np.int64]:
    """The noise row (total − lowest) of every database of the product domain, in C order."""
    shape = tuple(len(s) for s in scores)
    totals = np.zeros(shape, dtype=np.int64)
    for i, s in enumerate(scores):
        view = [1] * len(shape)
        view[i] = -1
        totals = totals + s.reshape(view)
    rows: NDArray[np.int64] = totals.ravel() - lowest
    return rows
