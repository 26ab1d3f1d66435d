r"""Metric constraints of the least-loss mechanism LP: which pairs, and their factors ``e^{ε d}``.

Under a metric ``d`` on the inputs the privacy constraints are ``W[x, y] ≤ e^{ε d(x, x')} W[x', y]``
for every pair. Most are implied by others: if ``d(x, z) + d(z, x') ≤ d(x, x')`` for some third
input ``z``, chaining the constraints through ``z`` gives the one of ``(x, x')``.
:func:`essential_pairs` keeps only the pairs with no such ``z`` — the edges of the graph whose
path metric is ``d`` (adjacent values for ``|x − x'|``, the 4-neighbour grid for the Manhattan
distance, pairs with no lattice point between them for the Euclidean one). The reduction is
exact: by induction on the distance, every dropped constraint is implied by constraints of pairs
strictly closer (distances off the diagonal are positive), which are kept or implied in turn.
The betweenness test ``d(x, z) + d(z, x') ≤ d(x, x')`` is decided exactly on the stored floats
(the rounding error of the sum is recovered by TwoSum), so no needed pair is dropped.

The factors are rounded outward (:func:`factor_up`, :func:`factor_down`): ``ε·d`` is rounded to
the next float in the safe direction before ``exp``, and ``exp`` (faithful) one ulp further.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "MAX_REDUCED_POINTS",
    "essential_pairs",
    "factor_down",
    "factor_up",
]

#: Most inputs for which :func:`essential_pairs` looks for intermediate points (``n³`` work);
#: above it every pair at finite distance is kept (exact, only larger).
MAX_REDUCED_POINTS = 1024


def essential_pairs(D: FloatArray) -> tuple[IntArray, IntArray]:
    """The pairs ``i < j`` at finite distance with no ``k`` such that ``D[i,k] + D[k,j] ≤ D[i,j]``.

    Parameters
    ----------
    D : (n, n) float64 array
        Symmetric, zero on the diagonal, positive off it, finite or ``+∞`` (no constraint).

    Returns
    -------
    (first, second) : int64 arrays
        The kept pairs, ``first < second``, sorted.
    """
    n = D.shape[0]
    keep = np.isfinite(D) & np.triu(np.ones((n, n), dtype=bool), k=1)
    if n <= MAX_REDUCED_POINTS:
        rows = np.arange(n)
        with np.errstate(invalid="ignore"):  # ∞ − ∞ in TwoSum: such sums never decide
            for k in range(n):
                left, right = D[:, k, None], D[None, k, :]
                total = left + right
                back = total - left
                error = (left - (total - back)) + (right - back)  # left + right = total + error
                between = (total < D) | ((total == D) & (error <= 0.0))
                between[k, :] = False
                between[:, k] = False
                between[rows, rows] = False
                keep &= ~between
    first, second = np.nonzero(keep)
    return first.astype(np.int64), second.astype(np.int64)


def factor_up(eps: float, scale: FloatArray) -> FloatArray:
    """Floats ``t ≥ e^{ε·d}`` for each ``d`` in ``scale`` (``ε·d`` and ``exp`` rounded up)."""
    exponent = np.nextafter(eps * scale, np.inf)
    out: FloatArray = np.nextafter(np.exp(exponent), np.inf)
    return out


def factor_down(eps: float, scale: FloatArray) -> FloatArray:
    """Floats ``1 ≤ t ≤ e^{ε·d}`` (rounded down; exactly 1 where ``ε·d = 0``)."""
    product = eps * scale
    exponent = np.where(product > 0, np.nextafter(product, 0.0), 0.0)
    out: FloatArray = np.maximum(
        np.where(exponent > 0, np.nextafter(np.exp(exponent), 0.0), 1.0), 1.0
    )
    return out
