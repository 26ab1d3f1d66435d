"""Reachable totals of integer score vectors: the dynamic programme of additive mechanisms."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["PartialSums"]


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
