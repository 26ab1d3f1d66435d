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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = ["Reduction", "reduce_channel"]


@dataclass(frozen=True)
class Reduction:
    """A reduced channel and the maps back to the original one."""

    matrix: FloatArray  # the reduced channel
    rows: IntArray  # original index of each kept row (first member of its group)
    n_inputs: int  # inputs of the original channel

    def prior_back(self, prior: FloatArray) -> FloatArray:
        """A prior on the original inputs with the same output law."""
        out = np.zeros(self.n_inputs)
        out[self.rows] = prior
        return out


def reduce_channel(W: FloatArray) -> Reduction:
    """Apply the exact reductions to ``W`` (rows are inputs)."""
    cols = W.sum(axis=0)
    W1 = W[:, cols > 0]
    normalised = W1 / W1.sum(axis=0)
    _, first, inverse = np.unique(normalised.T, axis=0, return_index=True, return_inverse=True)
    if len(first) < W1.shape[1]:
        merged = np.zeros((W1.shape[0], len(first)))
        np.add.at(merged.T, inverse.ravel(), W1.T)
        W1 = merged
    _, keep = np.unique(W1, axis=0, return_index=True)
    keep = np.sort(keep).astype(np.int64)
    return Reduction(matrix=W1[keep], rows=keep, n_inputs=W.shape[0])
