"""The lower convex hull of points in the plane: the greatest convex function below them.

Both ends of the accounting's convex objects are hulls of points that lie on one side of a
convex function: the trade-off curve's upper end (achievable Neyman–Pearson points, above the
f-DP curve) and the dominating pair's hockey-stick divergence (points above the envelope of the
pairs'). The greatest convex function below such points is still above the convex function,
and dropping points only raises it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["lower_hull"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def lower_hull(x: FloatArray, y: FloatArray) -> IntArray:
    """Indices of the vertices of the lower convex hull of ``(x, y)``, by increasing ``x``
    (of points with the same ``x``, the lowest ``y``)."""
    order = np.lexsort((y, x))
    keep: list[int] = []
    for i in order.tolist():
        if keep and x[keep[-1]] == x[i]:  # the lowest y of this x is already in
            continue
        while len(keep) >= 2:
            a, b = keep[-2], keep[-1]
            turn = (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a])
            if turn <= 0.0:
                keep.pop()
            else:
                break
        keep.append(i)
    return np.asarray(keep, dtype=np.int64)
