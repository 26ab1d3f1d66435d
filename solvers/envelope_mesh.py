r"""The posterior mesh of the envelope LPs: a refinable simplicial cover of the simplex.

The privacy funnel and the information bottleneck are linear programs over *posteriors*
``q = P_{X|Y=y}`` (:mod:`dpcap.solvers.envelope_lp`); their candidates, and the cells on which
the dual gap function is bounded, come from a cover of the probability simplex by simplices:
:class:`Mesh`, started from a Freudenthal–Kuhn lattice and refined by longest-edge bisection.
The maths is in ``docs/mathematics.rst`` §7.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray
from scipy.special import rel_entr, xlogy

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = ["BASE_RESOLUTION", "Mesh", "entropy_rows"]

#: Initial lattice resolution (a power of two, so that every midpoint of the bisection is an
#: exact binary fraction) by alphabet size: 33 points on the segment, 153 on the triangle,
#: 165 on the tetrahedron.
BASE_RESOLUTION: dict[int, int] = {2: 32, 3: 16, 4: 8}


def entropy_rows(Q: FloatArray) -> FloatArray:
    """``H(q)`` for each row ``q`` of ``Q`` (nats, ``0 log 0 = 0``)."""
    result: FloatArray = -np.sum(xlogy(Q, Q), axis=-1)
    return result


class Mesh:
    """A cover of the probability simplex ``Δ_{n−1}`` by ``(n−1)``-simplices (*cells*).

    A working object of :func:`dpcap.solvers.envelope_lp.solve`, refined in place. ``points``
    holds the vertices (one posterior per row, coordinates exact binary fractions); ``cells[c]``
    the ``n`` vertex indices of cell ``c``. For the channel ``T`` the mesh was built for it
    caches ``H(v)`` and ``H(Tv)`` per vertex and, per cell and vertex, ``kx = D(v ‖ c)`` and
    ``kt = D(Tv ‖ Tc)`` with ``c`` the cell's centroid: the terms of the bound of
    :func:`dpcap.solvers.envelope_lp.violation_bound`.

    The initial cover is the Freudenthal–Kuhn triangulation of the lattice ``{k / N : k ∈ ℕⁿ,
    Σ k = N}`` (in the partial-sum coordinates ``y_i = k_1 + … + k_i`` the simplex is
    ``0 ≤ y_1 ≤ … ≤ y_{n−1} ≤ N``, a union of Kuhn simplices of the unit cubes); refinement
    bisects a cell at the midpoint of its longest edge (the two halves cover it). Hanging
    vertices are harmless: each cell's bound uses only its own vertices.
    """

    def __init__(self, T: FloatArray, resolution: int | None = None) -> None:
        n = T.shape[1]
        if n < 2:
            raise ValueError(f"a mesh needs an alphabet of at least 2 letters, got {n}")
        N = BASE_RESOLUTION.get(n, 4) if resolution is None else resolution
        points, cells = _lattice(n, N)
        self.T = T
        self.points: FloatArray = points
        self.cells: IntArray = cells
        self._index = {row.tobytes(): i for i, row in enumerate(points)}
        self.base = points.shape[0]  # the lattice's vertices come first
        self.h: FloatArray = entropy_rows(points)
        self.ht: FloatArray = entropy_rows(points @ T.T)
        self.kx, self.kt = self._terms(cells)

    @property
    def n_cells(self) -> int:
        """The number of cells."""
        return int(self.cells.shape[0])

    def _terms(self, cells: IntArray) -> tuple[FloatArray, FloatArray]:
        V = self.points[cells]  # (C, n, n): vertex i of cell c is V[c, i]
        c = V.mean(axis=1, keepdims=True)
        kx: FloatArray = np.sum(rel_entr(V, c), axis=-1)
        kt: FloatArray = np.sum(rel_entr(V @ self.T.T, c @ self.T.T), axis=-1)
        return kx, kt

    def bisect(self, which: NDArray[np.bool_], weights: tuple[float, float] = (1.0, 0.0)) -> int:
        """Bisect the cells selected by the mask ``which``; return the number of new vertices.

        Each cell is cut at the midpoint of its longest edge in the quadratic form
        ``a Σ_x Δ_x²/c_x + b Σ_s (TΔ)_s²/(Tc)_s`` at its centroid ``c`` (``weights = (a, b)``,
        the second-order terms of the cell's gap ``K``), plus a little of the Euclidean length
        to break ties. Cells near a face are thus cut across it first, where ``K`` grows.
        """
        sel = np.flatnonzero(which)
        if sel.size == 0:
            return 0
        n = self.points.shape[1]
        parents = self.cells[sel]
        V = self.points[parents]
        I, J = np.triu_indices(n, 1)
        centre = V.mean(axis=1, keepdims=True)
        edges = V[:, I, :] - V[:, J, :]
        wx, wt = weights
        lengths = 1e-9 * np.sum(edges**2, axis=-1)
        if wx != 0.0:
            lengths += wx * np.sum(edges**2 / centre, axis=-1)
        if wt != 0.0:
            lengths += wt * np.sum((edges @ self.T.T) ** 2 / (centre @ self.T.T), axis=-1)
        edge = np.argmax(lengths, axis=1)
        a, b = I[edge], J[edge]
        rows = np.arange(sel.size)
        mid = 0.5 * (V[rows, a] + V[rows, b])
        fresh: list[FloatArray] = []
        index = np.empty(sel.size, dtype=np.int64)
        start = self.points.shape[0]
        for k, row in enumerate(mid):
            key = row.tobytes()
            found = self._index.get(key)
            if found is None:
                found = start + len(fresh)
                self._index[key] = found
                fresh.append(row)
            index[k] = found
        if fresh:
            new = np.array(fresh)
            self.points = np.concatenate([self.points, new])
            self.h = np.concatenate([self.h, entropy_rows(new)])
            self.ht = np.concatenate([self.ht, entropy_rows(new @ self.T.T)])
        first, second = parents.copy(), parents.copy()
        first[rows, a] = index
        second[rows, b] = index
        children = np.concatenate([first, second])
        kx, kt = self._terms(children)
        keep = np.ones(self.cells.shape[0], dtype=bool)
        keep[sel] = False
        self.cells = np.concatenate([self.cells[keep], children])
        self.kx = np.concatenate([self.kx[keep], kx])
        self.kt = np.concatenate([self.kt[keep], kt])
        return len(fresh)


def _lattice(n: int, N: int) -> tuple[FloatArray, IntArray]:
    """Vertices and Kuhn cells of the lattice ``{k/N : Σ k = N}`` on ``Δ_{n−1}``."""
    d = n - 1
    grids = np.stack(np.meshgrid(*([np.arange(N + 1)] * d), indexing="ij"), axis=-1)
    ys = grids.reshape(-1, d)
    ok = np.all(np.diff(ys, axis=1) >= 0, axis=1) if d > 1 else np.ones(len(ys), dtype=bool)
    ys = ys[ok]
    lookup = np.full((N + 1,) * d, -1, dtype=np.int64)
    lookup[tuple(ys.T)] = np.arange(len(ys))
    cubes = np.stack(np.meshgrid(*([np.arange(N)] * d), indexing="ij"), axis=-1).reshape(-1, d)
    found: list[IntArray] = []
    for perm in itertools.permutations(range(d)):
        steps = np.zeros((d + 1, d), dtype=np.int64)
        for i, axis in enumerate(perm):
            steps[i + 1 :, axis] += 1
        verts = cubes[:, None, :] + steps[None, :, :]  # (cubes, d+1, d)
        inside = np.all(verts >= 0, axis=(1, 2)) & np.all(verts <= N, axis=(1, 2))
        if d > 1:
            inside &= np.all(np.diff(verts, axis=2) >= 0, axis=(1, 2))
        verts = verts[inside]
        found.append(lookup[tuple(np.moveaxis(verts, -1, 0))])
    cells = np.concatenate(found)
    k = np.diff(np.concatenate([np.zeros((len(ys), 1)), ys, np.full((len(ys), 1), N)], axis=1))
    points: FloatArray = k / N
    return points, cells.astype(np.int64)
