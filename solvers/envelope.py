r"""Envelope LPs over posteriors: privacy funnel, information bottleneck, perfect privacy.

For a Markov chain ``S − X − Y`` with ``T = P_{S|X}`` (an ``m × n`` column-stochastic matrix,
``T[s, x] = P(S=s | X=x)``) and ``p = P_X``, a mechanism ``P_{Y|X}`` is the same thing as a
finite family of *posteriors* ``q_j = P_{X|Y=j}`` with weights ``λ_j = P(Y=j)`` such that
``Σ_j λ_j q_j = p`` (``P(Y=j | X=x) = λ_j q_j(x) / p(x)``), and

    I(X;Y) = H(p) − Σ_j λ_j H(q_j),        I(S;Y) = H(Tp) − Σ_j λ_j H(T q_j).

Over a finite set of candidate posteriors both trade-offs are linear programs in λ. With
``σ = +1`` (privacy funnel) or ``σ = −1`` (information bottleneck), this engine solves

    maximise  Σ_j λ_j σ H(T q_j)   subject to   Σ_j λ_j q_j = p,   Σ_j λ_j σ H(q_j) ≤ b,   λ ≥ 0,

with ``b = σ (H(p) − R)``: ``PF(R) = H(S) − max`` and ``IB(R) = H(S) + max``. Its LP dual
``(μ, ν ≥ 0)`` is a certificate for *every* posterior of the simplex, not only the candidates:
with the dual gap function ``φ(q) = σ H(Tq) − μ·q − ν σ H(q)``, any mechanism satisfies
``Σ_j λ_j σ H(T q_j) ≤ μ·p + ν b + sup_q φ(q)`` (see :func:`violation_bound` for the bound on the
supremum over the whole simplex). The candidates are the vertices of a simplicial mesh of the
simplex that is bisected where that bound is loose (:class:`Mesh`, :func:`solve`), so the LP value
and the certificate converge to each other. For larger alphabets :func:`local_solve` generates
candidates by multi-start local ascent of ``φ`` instead (no certificate).

Perfect privacy (``I(S;Y) = 0``) is the same LP over the vertices of the polytope
``{q ∈ Δ : T q = T p}`` (:func:`perfect_privacy_vertices`, :func:`perfect_privacy_lp`).
:func:`inference_conic` is the convex program of privacy against statistical inference with
log-loss (Calmon & Fawaz 2012), handed to cvxpy; :func:`linearised_bound` is its Lagrangian
bound for given laws on S, and :func:`inference_dual_conic` optimises those laws.

Everything here takes validated ``float64`` arrays and returns raw arrays; the query layer
(``dpcap.funnel``) builds mechanisms, recomputes every information value from them and
recomputes the certificates. cvxpy is imported inside :func:`inference_conic` and
:func:`inference_dual_conic` only.
"""

from __future__ import annotations

import importlib
import itertools
import math
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog
from scipy.special import rel_entr, xlogy

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Kind = Literal["pf", "ib"]

__all__ = [
    "EnvelopeSolution",
    "InferenceSolution",
    "Mesh",
    "PerfectPrivacySolution",
    "entropy_rows",
    "inference_conic",
    "inference_dual_conic",
    "linearised_bound",
    "local_solve",
    "perfect_privacy_lp",
    "perfect_privacy_vertices",
    "posteriors_of",
    "solve",
    "violation_bound",
]

EPS = float(np.finfo(np.float64).eps)

#: Initial lattice resolution (a power of two, so that every midpoint of the bisection is an
#: exact binary fraction) by alphabet size: 33 points on the segment, 153 on the triangle,
#: 165 on the tetrahedron.
BASE_RESOLUTION: dict[int, int] = {2: 32, 3: 16, 4: 8}

#: The mesh stops growing at this many cells (the point is then returned as inaccurate).
MAX_CELLS = 150_000

#: Bisection passes between two LP solves while the new vertices do not beat the current LP.
INNER_PASSES = 6

#: :func:`solve` gives up ("stalled") when its certified gap has not halved in this many LP solves.
STALL = 40

#: Column generation: the LP's working set is the vertices with ``φ ≥ −COLUMN_MARGIN`` under the
#: last dual (nats), at most ``MAX_COLUMNS`` of them (those with the largest ``φ``).
COLUMN_MARGIN = 1e-2
MAX_COLUMNS = 2_000

#: HiGHS tolerances: the LP has ``n + 1`` rows, so the simplex method's basic solutions are
#: accurate far below the default 1e-7.
_HIGHS: Any = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def entropy_rows(Q: FloatArray) -> FloatArray:
    """``H(q)`` for each row ``q`` of ``Q`` (nats, ``0 log 0 = 0``)."""
    result: FloatArray = -np.sum(xlogy(Q, Q), axis=-1)
    return result


def _sign(kind: Kind) -> float:
    return 1.0 if kind == "pf" else -1.0


# --------------------------------------------------------------------------------------------
# The mesh: a cover of the simplex by simplices whose vertices are the LP's candidates


class Mesh:
    """A cover of the probability simplex ``Δ_{n−1}`` by ``(n−1)``-simplices (*cells*).

    A working object of :func:`solve`, refined in place. ``points`` holds the vertices (one
    posterior per row, coordinates exact binary fractions); ``cells[c]`` the ``n`` vertex indices
    of cell ``c``. For the channel ``T`` the mesh was built for it caches ``H(v)`` and
    ``H(Tv)`` per vertex and, per cell and vertex, ``kx = D(v ‖ c)`` and ``kt = D(Tv ‖ Tc)``
    with ``c`` the cell's centroid: the terms of the bound of :func:`violation_bound`.

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


# --------------------------------------------------------------------------------------------
# The certificate


def _slack(mu: FloatArray, nu: float, n: int, m: int) -> float:
    """Allowance for the rounding of ``φ`` at a vertex and of the divergence terms."""
    scale = 1.0 + float(np.max(np.abs(mu))) + (1.0 + nu) * (math.log(n) + math.log(max(m, 2)))
    return 64.0 * EPS * n * scale


def _coefficients(nu: float, kind: Kind) -> tuple[float, float]:
    """``(a, b)`` with ``K = a D(v‖c) + b D(Tv‖Tc)``: the Bregman gap of ``φ``'s concave part."""
    if kind == "pf":
        return 0.0, max(1.0 - nu, 0.0)
    return nu, -min(nu, 1.0)


def _gap(kx: FloatArray, kt: FloatArray, nu: float, kind: Kind) -> FloatArray:
    a, b = _coefficients(nu, kind)
    if a == 0.0 and b == 0.0:
        return np.zeros_like(kx)
    if a == 0.0:
        return b * kt
    # ν D(v‖c) − min(ν,1) D(Tv‖Tc) ≥ 0 (data processing); ∞ when supp v ⊄ supp c
    out: FloatArray = np.where(np.isinf(kx), np.inf, a * kx + b * np.where(np.isinf(kx), 0.0, kt))
    return out


def vertex_violation(mesh: Mesh, mu: FloatArray, nu: float, kind: Kind) -> FloatArray:
    """``φ(v) = σ H(Tv) − μ·v − ν σ H(v)`` at every vertex of the mesh."""
    s = _sign(kind)
    result: FloatArray = s * mesh.ht - mesh.points @ mu - nu * s * mesh.h
    return result


def _anchor_gaps(mesh: Mesh, anchors: FloatArray, nu: float, kind: Kind) -> FloatArray:
    """``K(v, a_j)`` for every vertex v and anchor ``a_j``: shape (vertices, anchors)."""
    P = mesh.points[:, None, :]
    A = anchors[None, :, :]
    kt = np.sum(rel_entr(P @ mesh.T.T, A @ mesh.T.T), axis=-1)
    kx = np.sum(rel_entr(P, A), axis=-1) if kind == "ib" else np.zeros_like(kt)
    return _gap(kx, kt, nu, kind)


def cell_bounds(
    mesh: Mesh, phi: FloatArray, nu: float, kind: Kind, anchors: FloatArray | None = None
) -> FloatArray:
    r"""Per cell ``C``, a bound ``sup_{q ∈ C} φ(q) ≤ min_c max_i [φ(v_i) + K(v_i, c)]``.

    The tangent point ``c`` is the cell's centroid or one of the ``anchors`` (e.g. the LP's
    support posteriors and ``p``), whichever gives the smaller bound (see
    :func:`violation_bound` for ``K``).
    """
    at_vertices = phi[mesh.cells]
    best: FloatArray = np.max(at_vertices + _gap(mesh.kx, mesh.kt, nu, kind), axis=1)
    if anchors is not None and anchors.shape[0]:
        K = _anchor_gaps(mesh, anchors, nu, kind)[mesh.cells]  # (C, n, anchors)
        best = np.minimum(best, np.min(np.max(at_vertices[:, :, None] + K, axis=1), axis=1))
    return best


def violation_bound(
    mesh: Mesh, mu: FloatArray, nu: float, kind: Kind, anchors: FloatArray | None = None
) -> float:
    r"""An upper bound on ``sup_{q ∈ Δ} φ(q)``, ``φ(q) = σ H(Tq) − μ·q − ν σ H(q)``, ``ν ≥ 0``.

    Parameters
    ----------
    mesh : Mesh
        A cover of the simplex built for ``T``.
    mu : (n,) float64 array
    nu : float
        Any dual point (``ν ≥ 0``); the bound is valid whatever its quality.
    kind : {"pf", "ib"}
        ``σ = +1`` or ``−1``.
    anchors : (k, n) float64 array, optional
        Extra tangent points to try in every cell.

    Notes
    -----
    Let ``C`` be a cell with vertices ``v_i``, ``c`` a tangent point (the centroid, or an anchor)
    and ``q = Σ_i β_i v_i ∈ C``. For a concave ``G`` the tangent plane at ``c`` lies above ``G``,
    and its gap at ``v`` is the Bregman divergence: ``D(v ‖ c)`` for ``G = H`` and
    ``D(Tv ‖ Tc)`` for ``G = H∘T`` (``∞`` when ``v`` charges a letter ``c`` does not); for a
    convex ``G`` the chord lies above ``G`` on ``C``: ``G(q) ≤ Σ β_i G(v_i)``. Split ``φ`` into a
    concave part, bounded by its tangent at ``c``, and a convex part, bounded by its chord: the
    result is affine in β, so ``sup_C φ ≤ max_i [φ(v_i) + K(v_i, c)]`` with ``K`` the Bregman gap
    of the concave part. The split uses ``H(Tq) − H(q)``, which is *convex* in ``q``
    (``H(Tq) = H(q) + Σ_x q_x H(T_x) − H_{X|S}(q)``, and the conditional entropy ``H(X|S)`` of
    the law ``q_x T[s, x]`` is concave in ``q``):

    * funnel (σ = +1), ``ν ≤ 1``: ``φ = (1−ν) H(Tq) + ν [H(Tq) − H(q)] − μ·q``, so
      ``K = (1−ν) D(Tv ‖ Tc)``; ``ν ≥ 1``: ``φ = [H(Tq) − H(q)] − (ν−1) H(q) − μ·q`` is convex
      and ``K = 0``;
    * bottleneck (σ = −1), ``ν ≤ 1``: ``φ = ν [H(q) − H(Tq)] − (1−ν) H(Tq) − μ·q``, so
      ``K = ν (D(v‖c) − D(Tv‖Tc))``; ``ν ≥ 1``: ``φ = (ν−1) H(q) + [H(q) − H(Tq)] − μ·q``,
      so ``K = ν D(v ‖ c) − D(Tv ‖ Tc)``.

    ``K`` is ``O(diam²)`` inside the simplex and ``O(diam)`` at worst on its faces. The classical
    alternative, the entropy's modulus of continuity (Fannes–Audenaert:
    ``|H(q) − H(q')| ≤ δ log(n−1) + h(δ)`` for total variation ``δ ≤ 1 − 1/n``), gives
    ``sup φ ≤ max_v φ(v) + ω_S(δ) + δ (max μ − min μ) + ν ω_X(δ)`` on a mesh of TV-diameter δ,
    which is ``O(δ log(1/δ))``: far looser. A rounding allowance (:func:`_slack`) is added.
    """
    phi = vertex_violation(mesh, mu, nu, kind)
    bound = float(np.max(cell_bounds(mesh, phi, nu, kind, anchors)))
    return bound + _slack(mu, nu, mesh.points.shape[1], mesh.T.shape[0])


# --------------------------------------------------------------------------------------------
# The LP


@dataclass(frozen=True)
class _LP:
    weights: FloatArray
    mu: FloatArray
    nu: float
    objective: float


def _envelope_lp(
    Q: FloatArray, f: FloatArray, g: FloatArray, p: FloatArray, budget: float
) -> _LP | None:
    """``max f·λ`` s.t. ``Qᵀλ = p``, ``g·λ ≤ budget``, ``λ ≥ 0``; ``None`` if HiGHS fails."""
    res = linprog(
        -f,
        A_ub=g[None, :],
        b_ub=np.array([budget]),
        A_eq=Q.T,
        b_eq=p,
        bounds=(0.0, None),
        method="highs",
        options=_HIGHS,
    )
    if res.status != 0 or res.x is None or res.fun is None:
        return None
    mu = -np.asarray(res.eqlin.marginals, dtype=np.float64)
    nu = max(-float(res.ineqlin.marginals[0]), 0.0)
    return _LP(np.maximum(np.asarray(res.x, dtype=np.float64), 0.0), mu, nu, -float(res.fun))


@dataclass(frozen=True)
class EnvelopeSolution:
    """Raw output of :func:`solve` and :func:`local_solve`.

    Attributes
    ----------
    posteriors : (k, n) float64 array
        The posteriors ``q_j`` with positive weight (rows).
    weights : (k,) float64 array
        Their LP weights ``λ_j`` (``Σ_j λ_j q_j ≈ p``).
    mu : (n,) float64 array
    nu : float
        The LP dual: a candidate certificate, to be checked with :func:`violation_bound`.
    objective : float
        The LP's value ``Σ λ_j σ H(T q_j)`` (not a certificate).
    bound : float
        :func:`violation_bound` at ``(mu, nu)`` on the final mesh (NaN for :func:`local_solve`).
    iterations : int
        LP solves.
    status : str
        ``"optimal"`` (the certified gap reached ``tol``), ``"max_iter"``, ``"max_cells"``,
        ``"stalled"`` (the gap did not halve in :data:`STALL` solves), ``"local"`` (no
        certificate) or ``"failed"`` (the LP failed; the other fields then hold the last good
        solve, or the trivial mechanism).
    cells : int
        Cells of the final mesh (0 for the local method).
    """

    posteriors: FloatArray
    weights: FloatArray
    mu: FloatArray
    nu: float
    objective: float
    bound: float
    iterations: int
    status: str
    cells: int


def _columns(mesh: Mesh, extra: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    Q = np.concatenate([mesh.points, extra])
    h = np.concatenate([mesh.h, entropy_rows(extra)])
    ht = np.concatenate([mesh.ht, entropy_rows(extra @ mesh.T.T)])
    return Q, h, ht


def solve(
    T: FloatArray,
    p: FloatArray,
    R: float,
    kind: Kind,
    *,
    tol: float,
    max_iter: int,
    mesh: Mesh | None = None,
    start: FloatArray | None = None,
    max_cells: int = MAX_CELLS,
) -> tuple[EnvelopeSolution, Mesh]:
    r"""Privacy funnel (``kind="pf"``) or information bottleneck (``"ib"``) at utility ``R``.

    Parameters
    ----------
    T : (m, n) float64 array
        ``P_{S|X}`` restricted to ``p > 0`` and ``P_S > 0`` (columns sum to 1, no zero row).
    p : (n,) float64 array
        ``P_X``, positive.
    R : float
        The utility level in nats, ``0 < R < H(p)``.
    tol : float
        Target for ``μ·p + ν b + sup φ − LP value``, the certified gap of the LP's value.
    max_iter : int
        LP solves at most.
    mesh : Mesh, optional
        A mesh built for ``T`` to start from (it is refined in place and returned); by default a
        fresh lattice mesh.
    start : (k, n) float64 array, optional
        Extra candidate posteriors for the first LP (e.g. the support found at a nearby ``R``).
    max_cells : int

    Returns
    -------
    (EnvelopeSolution, Mesh)

    Notes
    -----
    Each iteration solves the LP over a working set of candidates (column generation: every
    vertex whose ``φ`` under the last dual is within :data:`COLUMN_MARGIN` of the best, at most
    :data:`MAX_COLUMNS` of them, plus the last support, ``p`` itself, which keeps the bottleneck
    feasible near ``R = 0``, and the corners ``e_x``, which keep the funnel feasible near
    ``R = H(p)``), bounds ``sup φ`` cell by cell over the *whole* mesh (:func:`violation_bound`)
    and bisects the cells whose bound exceeds ``tol/2``; cells are bisected again with the same
    dual while the new vertices do not violate it by more than ``tol/4`` (the LP would not
    move), up to :data:`INNER_PASSES` times.
    """
    mesh = Mesh(T) if mesh is None else mesh
    s = _sign(kind)
    n = p.shape[0]
    budget = s * (float(entropy_rows(p)) - R)
    fixed = np.concatenate([np.eye(n), p[None, :]] + ([] if start is None else [start]))
    fixed_h, fixed_ht = entropy_rows(fixed), entropy_rows(fixed @ T.T)
    chosen = np.arange(min(mesh.base, mesh.points.shape[0]))
    support = np.zeros((0, n))
    last: _LP | None = None
    last_Q = fixed
    status, iterations, bound = "max_iter", 0, math.inf
    gaps: list[float] = []
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        Q = np.concatenate([fixed, support, mesh.points[chosen]])
        h = np.concatenate([fixed_h, entropy_rows(support), mesh.h[chosen]])
        ht = np.concatenate([fixed_ht, entropy_rows(support @ T.T), mesh.ht[chosen]])
        lp = _envelope_lp(Q, s * ht, s * h, p, budget)
        if lp is None:
            status = "failed"
            break
        last, last_Q = lp, Q
        support = Q[lp.weights > 0]
        anchors = np.concatenate([support, p[None, :]])
        bound = violation_bound(mesh, lp.mu, lp.nu, kind, anchors)
        certified = float(lp.mu @ p) + lp.nu * budget + bound
        gaps.append(certified - lp.objective)
        if gaps[-1] <= tol:
            status = "optimal"
            break
        if mesh.n_cells >= max_cells:
            status = "max_cells"
            break
        if len(gaps) > STALL and min(gaps[-STALL:]) > 0.5 * gaps[-STALL - 1]:
            status = "stalled"  # e.g. a tol below what rounding lets the bound resolve
            break
        for _ in range(INNER_PASSES):
            phi = vertex_violation(mesh, lp.mu, lp.nu, kind)
            loose = cell_bounds(mesh, phi, lp.nu, kind, anchors) > 0.5 * tol
            before = mesh.points.shape[0]
            if not loose.any() or mesh.n_cells + int(loose.sum()) > max_cells:
                break
            mesh.bisect(loose, _coefficients(lp.nu, kind))
            gain = vertex_violation(mesh, lp.mu, lp.nu, kind)[before:]
            if gain.size and float(np.max(gain)) > 0.25 * tol:
                break
        phi = vertex_violation(mesh, lp.mu, lp.nu, kind)
        chosen = np.flatnonzero(phi >= -COLUMN_MARGIN)
        if chosen.size > MAX_COLUMNS:
            chosen = chosen[np.argpartition(-phi[chosen], MAX_COLUMNS)[:MAX_COLUMNS]]
    if last is None:
        return _trivial(p, n, kind, iterations), mesh
    keep = last.weights > 0
    return (
        EnvelopeSolution(
            posteriors=last_Q[keep],
            weights=last.weights[keep],
            mu=last.mu,
            nu=last.nu,
            objective=last.objective,
            bound=bound,
            iterations=iterations,
            status=status,
            cells=mesh.n_cells,
        ),
        mesh,
    )


def _trivial(p: FloatArray, n: int, kind: Kind, iterations: int) -> EnvelopeSolution:
    """The mechanism that needs no LP: full disclosure for the funnel, nothing for the IB."""
    Q = np.eye(n) if kind == "pf" else p[None, :]
    w = p.copy() if kind == "pf" else np.ones(1)
    return EnvelopeSolution(Q, w, np.zeros(n), 0.0, math.nan, math.nan, iterations, "failed", 0)


# --------------------------------------------------------------------------------------------
# Larger alphabets: column generation with multi-start local pricing (no certificate)


def _ascend(
    Q: FloatArray, T: FloatArray, mu: FloatArray, nu: float, kind: Kind, steps: int
) -> tuple[FloatArray, FloatArray]:
    """Batched mirror ascent of ``φ`` on the simplex from the rows of ``Q`` (interior points).

    One step is ``log q ← log q + η ∇φ(q)``, renormalised, accepted only if ``φ`` does not
    decrease (then ``η`` grows by 1.5, else it halves), per start.
    """
    s = _sign(kind)

    def value(X: FloatArray) -> FloatArray:
        out: FloatArray = s * entropy_rows(X @ T.T) - X @ mu - nu * s * entropy_rows(X)
        return out

    logq = np.log(Q)
    q = Q.copy()
    phi = value(q)
    eta = np.ones(Q.shape[0])
    for _ in range(steps):
        tq = q @ T.T
        grad = -s * (np.log(tq) + 1.0) @ T - mu + nu * s * (logq + 1.0)
        cand = logq + eta[:, None] * grad
        cand -= np.max(cand, axis=1, keepdims=True)
        cand = np.maximum(cand, -700.0)  # keep every coordinate positive (e^-700 > 0)
        trial = np.exp(cand)
        trial /= trial.sum(axis=1, keepdims=True)
        new = value(trial)
        better = new >= phi
        q = np.where(better[:, None], trial, q)
        logq = np.where(better[:, None], np.log(trial), logq)
        phi = np.where(better, new, phi)
        eta = np.where(better, eta * 1.5, eta * 0.5)
    return q, phi


def local_solve(
    T: FloatArray,
    p: FloatArray,
    R: float,
    kind: Kind,
    *,
    tol: float,
    max_iter: int,
    rng: np.random.Generator,
    starts: int = 64,
    steps: int = 150,
) -> EnvelopeSolution:
    """The envelope LP over posteriors generated by multi-start local ascent of ``φ``.

    Column generation: solve the LP over the current posteriors (the vertices ``e_x``, ``p`` and
    seeded Dirichlet samples at first), then run :func:`_ascend` on ``φ`` for the LP's dual from
    the support and ``starts`` fresh random points, add every local maximum with ``φ > tol/10``,
    and repeat until none is found (or ``max_iter``). Every added column can only improve the
    LP; without a global maximisation of ``φ`` there is no certificate (``bound`` is NaN).
    """
    n = p.shape[0]
    s = _sign(kind)
    budget = s * (float(entropy_rows(p)) - R)
    Q = np.concatenate(
        [
            np.eye(n),
            p[None, :],
            rng.dirichlet(np.ones(n), size=4 * n),
            rng.dirichlet(np.full(n, 0.3), size=4 * n),
        ]
    )
    last: _LP | None = None
    status, iterations = "local", 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        lp = _envelope_lp(Q, s * entropy_rows(Q @ T.T), s * entropy_rows(Q), p, budget)
        if lp is None:
            status = "failed"
            break
        last = lp
        support = Q[lp.weights > 0]
        fresh = rng.dirichlet(np.ones(n), size=starts)
        X0 = 0.99 * np.concatenate([support, fresh]) + 0.01 / n
        q, phi = _ascend(X0, T, lp.mu, lp.nu, kind, steps)
        new = q[phi > 0.1 * tol]
        if new.shape[0] == 0:
            break
        Q = np.concatenate([Q, new])
    if last is None:
        return _trivial(p, n, kind, iterations)
    keep = last.weights > 0
    return EnvelopeSolution(
        Q[keep], last.weights[keep], last.mu, last.nu, last.objective, math.nan, iterations,
        status, 0,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# Perfect privacy


def perfect_privacy_vertices(T: FloatArray, p: FloatArray, *, rank: int) -> FloatArray:
    """The vertices of ``{q ≥ 0 : T q = T p}`` (rows), by enumeration of bases.

    A vertex of ``{q ≥ 0 : Tq = b}`` is a basic feasible solution: ``rank`` linearly independent
    columns ``B`` of ``T`` with ``T_B q_B = b``, ``q_B ≥ 0`` and ``q = 0`` off ``B``. All
    ``C(n, rank)`` choices are tried; solutions with a residual above ``1e-10`` or an entry
    below ``−1e-12`` are rejected, the rest clipped at 0, renormalised and deduplicated.
    """
    n = T.shape[1]
    b = T @ p
    found: list[FloatArray] = []
    for B in itertools.combinations(range(n), rank):
        cols = T[:, list(B)]
        if np.linalg.matrix_rank(cols) < rank:
            continue
        qB, *_ = np.linalg.lstsq(cols, b, rcond=None)
        if np.max(np.abs(cols @ qB - b)) > 1e-10 or np.min(qB) < -1e-12:
            continue
        q = np.zeros(n)
        q[list(B)] = np.maximum(qB, 0.0)
        found.append(q / q.sum())
    if not found:
        return p[None, :].copy()
    V = np.array(found)
    _, first = np.unique(np.round(V, 12), axis=0, return_index=True)
    result: FloatArray = V[np.sort(first)]
    return result


@dataclass(frozen=True)
class PerfectPrivacySolution:
    """Raw output of :func:`perfect_privacy_lp`: support posteriors, weights and the LP dual."""

    posteriors: FloatArray
    weights: FloatArray
    mu: FloatArray
    vertices: FloatArray
    status: str


def perfect_privacy_lp(V: FloatArray, p: FloatArray) -> PerfectPrivacySolution:
    """``min Σ_j λ_j H(v_j)`` s.t. ``Σ_j λ_j v_j = p``, ``λ ≥ 0`` over the vertices ``V``.

    The dual ``μ`` (``μ·v_j ≤ H(v_j)`` on the vertices, up to the LP's tolerance) is returned
    for the query layer's certificate.
    """
    res = linprog(
        entropy_rows(V),
        A_eq=V.T,
        b_eq=p,
        bounds=(0.0, None),
        method="highs",
        options=_HIGHS,
    )
    if res.status != 0 or res.x is None:
        n = p.shape[0]
        return PerfectPrivacySolution(p[None, :].copy(), np.ones(1), np.zeros(n), V, "failed")
    w = np.maximum(np.asarray(res.x, dtype=np.float64), 0.0)
    keep = w > 0
    mu = np.asarray(res.eqlin.marginals, dtype=np.float64)
    return PerfectPrivacySolution(V[keep], w[keep], mu, V, "optimal")


# --------------------------------------------------------------------------------------------
# Privacy against statistical inference (log-loss): a convex program


@dataclass(frozen=True)
class InferenceSolution:
    """Raw output of :func:`inference_conic`.

    ``mechanism`` is the solver's ``P_{Y|X}`` clipped at 0 and renormalised (uniform rows if
    the solver returned no point); ``slope`` the dual of the distortion constraint (NaN if none);
    ``objective`` the solver's value (not a certificate); ``status`` ``"optimal"``,
    ``"inaccurate"``, ``"infeasible"`` or ``"failed"``.
    """

    mechanism: FloatArray
    slope: float
    objective: float
    status: str
    solver: str
    solve_time: float
    message: str


_CVXPY_STATUS = {
    "optimal": "optimal",
    "optimal_inaccurate": "inaccurate",
    "user_limit": "inaccurate",
    "infeasible": "infeasible",
    "infeasible_inaccurate": "infeasible",
}


def inference_conic(
    joint: FloatArray,
    distortion: FloatArray,
    Delta: float,
    *,
    solver: str = "CLARABEL",
    tol: float = 1e-9,
) -> InferenceSolution:
    r"""``min I(S;Y)`` over ``P_{Y|X}`` s.t. ``E d(X,Y) ≤ Δ``, as an exponential-cone program.

    ``I(S;Y) = Σ_{s,y} rel_entr(P_{SY}(s,y), P_S(s) P_Y(y))`` with ``P_{SY} = joint @ W`` and
    ``P_Y = P_X @ W`` both affine in ``W``: jointly convex (the relative entropy is), so the
    problem is convex (Calmon & Fawaz 2012, §IV). ``joint`` is ``(m, n)`` with positive
    marginals, ``distortion`` ``(n, k)``.
    """
    cp: Any = importlib.import_module("cvxpy")  # lazily: ``import dpcap`` must not import it

    start = time.perf_counter()
    n = joint.shape[1]
    k = distortion.shape[1]
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    W = cp.Variable((n, k), nonneg=True)
    joint_sy = joint @ W
    output = px @ W
    product = ps[:, None] @ cp.reshape(output, (1, k), order="C")
    objective = cp.Minimize(cp.sum(cp.rel_entr(joint_sy, product)))
    budget = cp.sum(cp.multiply(px[:, None] * distortion, W)) <= Delta
    problem = cp.Problem(objective, [cp.sum(W, axis=1) == 1, budget])
    options = _solver_options(solver, tol)
    try:
        problem.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        uniform = np.full((n, k), 1.0 / k)
        return InferenceSolution(
            uniform, math.nan, math.nan, "failed", solver, time.perf_counter() - start, str(exc)
        )
    status = _CVXPY_STATUS.get(str(problem.status), "failed")
    value = W.value
    if value is None:
        mechanism = np.full((n, k), 1.0 / k)
        status = "failed" if status in ("optimal", "inaccurate") else status
    else:
        mechanism = np.maximum(np.asarray(value, dtype=np.float64), 0.0)
        sums = mechanism.sum(axis=1, keepdims=True)
        mechanism = np.where(sums > 0, mechanism / np.where(sums > 0, sums, 1.0), 1.0 / k)
    dual = budget.dual_value
    slope = math.nan if dual is None else max(float(np.asarray(dual)), 0.0)
    objective_value = math.nan if problem.value is None else float(problem.value)
    return InferenceSolution(
        mechanism,
        slope,
        objective_value,
        status,
        solver,
        time.perf_counter() - start,
        f"cvxpy status {problem.status!r} at tolerance {tol:g}",
    )


def posteriors_of(joint: FloatArray, mechanism: FloatArray) -> FloatArray:
    """``P_{S|Y=y}`` as the columns of an ``(m, k)`` array; ``P_S`` for an output never used."""
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    py = px @ mechanism
    used = py > 0
    result: FloatArray = np.where(
        used[None, :], (joint @ mechanism) / np.where(used, py, 1.0)[None, :], ps[:, None]
    )
    return result


def linearised_bound(
    joint: FloatArray,
    distortion: FloatArray,
    Delta: float,
    posteriors: FloatArray,
    slope: float,
) -> tuple[float, float]:
    r"""A lower bound on ``min {I(S;Y) : E d(X,Y) ≤ Δ}`` from any laws on S, and its multiplier.

    Parameters
    ----------
    joint : (m, n) float64 array
        ``P(S=s, X=x)`` with positive marginals.
    distortion : (n, k) float64 array
    Delta : float
    posteriors : (m, k) float64 array
        One law ``π_y`` on S per output (columns), e.g. :func:`posteriors_of` a mechanism, or
        the solution of :func:`inference_dual_conic`.
    slope : float
        A first guess for the multiplier s (NaN for none).

    Returns
    -------
    (float, float)
        ``max L`` over the s tried, and the s attaining it.

    Notes
    -----
    ``I(S;Y) = Σ_y F(W[:, y])`` with ``F(c) = Σ_s a_s log(a_s / (P_S(s) b))``, ``a = joint c``,
    ``b = P_X·c``. For every law ``π`` on S, ``g_π[x] = Σ_s joint[s,x] log(π_s / P_S(s))``
    satisfies ``F(c) − g_π·c = b D(a/b ‖ π) ≥ 0`` for all ``c ≥ 0``: a linear minorant, exact
    when ``π`` is the posterior ``P_{S|Y=y}`` of ``c``. With ``G[:, y] = g_{π_y}`` (``π_y``
    mixed with ``P_S`` by a weight ``η`` so that no ``log 0`` occurs; every η is tried from a
    short list), ``I(S;Y) ≥ Σ_{x,y} G[x,y] W[x,y]`` for *every* mechanism W, and by weak
    Lagrangian duality on the distortion constraint, for every ``s ≥ 0``,

        min_W I(S;Y) ≥ L(s) = Σ_x min_y (G[x,y] + s P_X(x) d[x,y]) − s Δ.

    ``L`` is concave and piecewise linear in ``s``; it is maximised by bisection on the sign of
    its slope ``Σ_x P_X(x) d[x, y*(x)] − Δ`` (``y*`` the minimiser). By Sion's minimax theorem
    ``max_{π, s} L = min I(S;Y)``: the bound is tight at the optimal posteriors.
    """
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    cost = px[:, None] * distortion
    best, best_s = -math.inf, 0.0
    for eta in (0.0, 1e-12, 1e-9, 1e-6, 1e-3):
        pi = (1.0 - eta) * posteriors + eta * ps[:, None]  # (m, k)
        # G[x, y] = Σ_s joint[s, x] log(π_y(s)/P_S(s)), with 0 · (−∞) = 0
        with np.errstate(divide="ignore", invalid="ignore"):
            logratio = np.log(pi) - np.log(ps)[:, None]
            terms = joint[:, :, None] * logratio[:, None, :]
        G = np.where(joint[:, :, None] > 0, terms, 0.0).sum(axis=0)
        value, s_at = _maximise_dual(G, cost, Delta, slope)
        if value > best:
            best, best_s = value, s_at
    return best, best_s


def inference_dual_conic(
    joint: FloatArray,
    distortion: FloatArray,
    Delta: float,
    *,
    solver: str = "CLARABEL",
    tol: float = 1e-9,
) -> tuple[FloatArray, float, str]:
    r"""The Lagrangian dual of :func:`inference_conic`: laws ``π_y`` on S and a multiplier s.

    ``maximise Σ_x t_x − s Δ`` over ``π_y ∈ Δ_S``, ``s ≥ 0`` and ``t`` subject to
    ``t_x ≤ Σ_s P(s,x) log(π_y(s) / P_S(s)) + s P_X(x) d[x, y]`` for all x, y: the bound of
    :func:`linearised_bound` optimised over ``π`` (an exponential-cone program). Returns
    ``(π as an (m, k) array, s, status)``; the query layer evaluates the bound itself. On
    failure ``π`` is NaN and the status ``"failed"``.
    """
    cp: Any = importlib.import_module("cvxpy")  # lazily: ``import dpcap`` must not import it

    m, n = joint.shape
    k = distortion.shape[1]
    px = joint.sum(axis=0)
    ps = joint.sum(axis=1)
    pi = cp.Variable((m, k), nonneg=True)
    s = cp.Variable(nonneg=True)
    t = cp.Variable(n)
    offset = -(joint.T @ np.log(ps))  # (n,)
    gain = joint.T @ cp.log(pi) + offset[:, None] + s * (px[:, None] * distortion)
    problem = cp.Problem(
        cp.Maximize(cp.sum(t) - s * Delta),
        [cp.sum(pi, axis=0) == 1, t[:, None] <= gain],
    )
    options = _solver_options(solver, tol)
    try:
        problem.solve(solver=solver, **options)
    except cp.error.SolverError:
        return np.full((m, k), math.nan), math.nan, "failed"
    status = _CVXPY_STATUS.get(str(problem.status), "failed")
    if pi.value is None or s.value is None:
        return np.full((m, k), math.nan), math.nan, "failed"
    laws = np.maximum(np.asarray(pi.value, dtype=np.float64), 0.0)
    laws /= laws.sum(axis=0, keepdims=True)
    return laws, max(float(s.value), 0.0), status


def _solver_options(solver: str, tol: float) -> dict[str, float]:
    if solver == "CLARABEL":
        return {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol}
    if solver == "ECOS":
        return {"abstol": tol, "reltol": tol, "feastol": tol}
    if solver == "SCS":
        return {"eps_abs": tol, "eps_rel": tol}
    return {}


def _dual_value(G: FloatArray, cost: FloatArray, Delta: float, s: float) -> tuple[float, float]:
    """``(L(s), slope of L at s)`` with ties broken towards the smaller cost."""
    total = G + s * cost
    low = np.min(total, axis=1, keepdims=True)
    at_min = total <= low
    used_cost = np.min(np.where(at_min, cost, np.inf), axis=1)
    return float(np.sum(low) - s * Delta), float(np.sum(used_cost) - Delta)


def _maximise_dual(
    G: FloatArray, cost: FloatArray, Delta: float, hint: float
) -> tuple[float, float]:
    """``max_{s ≥ 0} L(s)`` by doubling then bisection on the sign of ``L'``; returns (L, s)."""
    if not np.all(np.isfinite(G)):
        return -math.inf, 0.0
    best, slope0 = _dual_value(G, cost, Delta, 0.0)
    best_s = 0.0
    if slope0 <= 0:  # L is concave: non-increasing from s = 0
        return best, 0.0
    lo, hi = 0.0, max(hint if math.isfinite(hint) and hint > 0 else 1.0, 1e-12)
    for _ in range(200):  # find s with L'(s) <= 0 (the greedy distortion within Δ)
        value, slope = _dual_value(G, cost, Delta, hi)
        if value > best:
            best, best_s = value, hi
        if slope <= 0:
            break
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        value, slope = _dual_value(G, cost, Delta, mid)
        if value > best:
            best, best_s = value, mid
        if slope > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return best, best_s
