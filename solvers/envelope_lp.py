r"""Envelope LPs over posteriors: privacy funnel and information bottleneck, with their certificate.

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
simplex (:class:`~dpcap.solvers.envelope_mesh.Mesh`) that is bisected where that bound is
loose (:func:`solve`), so the LP value and the certificate converge to each other. For larger
alphabets :func:`local_solve` generates candidates by multi-start local ascent of ``φ`` instead
(no certificate). The maths is in ``docs/mathematics.rst`` §7.

Everything here takes validated ``float64`` arrays and returns raw arrays and an
:class:`~dpcap.solvers.status.EngineStatus`; the query layer (``dpcap.tradeoffs.funnel``) builds
mechanisms, recomputes every information value from them and recomputes the certificates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog
from scipy.special import rel_entr

from .envelope_mesh import Mesh, entropy_rows
from .status import EngineStatus, from_linprog

FloatArray = NDArray[np.float64]
Kind = Literal["pf", "ib"]

__all__ = [
    "HIGHS_OPTIONS",
    "EnvelopeSolution",
    "cell_bounds",
    "local_solve",
    "solve",
    "vertex_violation",
    "violation_bound",
]

EPS = float(np.finfo(np.float64).eps)

#: The mesh stops growing at this many cells (``EngineStatus.MAX_CELLS``).
MAX_CELLS = 150_000

#: Bisection passes between two LP solves while the new vertices do not beat the current LP.
INNER_PASSES = 6

#: :func:`solve` gives up (``EngineStatus.STALLED``) when its certified gap has not halved in
#: this many LP solves.
STALL = 40

#: Column generation: the LP's working set is the vertices with ``φ ≥ −COLUMN_MARGIN`` under the
#: last dual (nats), at most ``MAX_COLUMNS`` of them (those with the largest ``φ``).
COLUMN_MARGIN = 1e-2
MAX_COLUMNS = 2_000

#: HiGHS tolerances: the LP has ``n + 1`` rows, so the simplex method's basic solutions are
#: accurate far below the default 1e-7.
HIGHS_OPTIONS: Any = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _sign(kind: Kind) -> float:
    return 1.0 if kind == "pf" else -1.0


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
        options=HIGHS_OPTIONS,
    )
    if from_linprog(res.status) is not EngineStatus.OPTIMAL or res.x is None or res.fun is None:
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
    status : EngineStatus
        ``OPTIMAL`` (the certified gap reached ``tol``), ``MAX_ITER``, ``MAX_CELLS``,
        ``STALLED`` (the gap did not halve in :data:`STALL` solves), ``LOCAL`` (no
        certificate) or ``FAILED`` (the LP failed; the other fields then hold the last good
        solve, or the trivial mechanism).
    cells : int
        Cells of the final mesh (0 for the local method).
    message : str
        Why the engine stopped, in words.
    """

    posteriors: FloatArray
    weights: FloatArray
    mu: FloatArray
    nu: float
    objective: float
    bound: float
    iterations: int
    status: EngineStatus
    cells: int
    message: str


#: Why each engine status stopped the envelope methods, for their ``message``.
_WHY: dict[EngineStatus, str] = {
    EngineStatus.OPTIMAL: "the certified gap reached tol",
    EngineStatus.MAX_ITER: "the budget of LP solves ran out",
    EngineStatus.MAX_CELLS: "the mesh reached max_cells",
    EngineStatus.STALLED: "the certified gap stopped halving (rounding)",
    EngineStatus.LOCAL: "no column left to add (local search: no certificate)",
    EngineStatus.FAILED: "HiGHS failed on the envelope LP; the last good solve is returned",
    EngineStatus.INACCURATE: "no envelope LP succeeded: the trivial mechanism is returned",
}


def _message(status: EngineStatus, iterations: int) -> str:
    return f"{_WHY[status]} after {iterations} LP solves"


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
    status, iterations, bound = EngineStatus.MAX_ITER, 0, math.inf
    gaps: list[float] = []
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        Q = np.concatenate([fixed, support, mesh.points[chosen]])
        h = np.concatenate([fixed_h, entropy_rows(support), mesh.h[chosen]])
        ht = np.concatenate([fixed_ht, entropy_rows(support @ T.T), mesh.ht[chosen]])
        lp = _envelope_lp(Q, s * ht, s * h, p, budget)
        if lp is None:
            status = EngineStatus.FAILED
            break
        last, last_Q = lp, Q
        support = Q[lp.weights > 0]
        anchors = np.concatenate([support, p[None, :]])
        bound = violation_bound(mesh, lp.mu, lp.nu, kind, anchors)
        certified = float(lp.mu @ p) + lp.nu * budget + bound
        gaps.append(certified - lp.objective)
        if gaps[-1] <= tol:
            status = EngineStatus.OPTIMAL
            break
        if mesh.n_cells >= max_cells:
            status = EngineStatus.MAX_CELLS
            break
        if len(gaps) > STALL and min(gaps[-STALL:]) > 0.5 * gaps[-STALL - 1]:
            status = EngineStatus.STALLED  # e.g. a tol below what rounding lets the bound resolve
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
            message=_message(status, iterations),
        ),
        mesh,
    )


def _trivial(p: FloatArray, n: int, kind: Kind, iterations: int) -> EnvelopeSolution:
    """The mechanism that needs no LP: full disclosure for the funnel, nothing for the IB.

    Used when the LP failed: a feasible point still exists (the query certifies its bracket),
    so the engine reports ``INACCURATE`` (an open bracket), not ``FAILED`` (no usable point).
    """
    Q = np.eye(n) if kind == "pf" else p[None, :]
    w = p.copy() if kind == "pf" else np.ones(1)
    why = _message(EngineStatus.INACCURATE, iterations)
    return EnvelopeSolution(
        Q, w, np.zeros(n), 0.0, math.nan, math.nan, iterations, EngineStatus.INACCURATE, 0, why
    )


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
    The status is ``LOCAL`` when no column is left to add, ``MAX_ITER`` when the budget ran
    out first (the support is then the last LP's, over the columns it was solved on).
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
    last_Q = Q
    status, iterations = EngineStatus.LOCAL, 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        lp = _envelope_lp(Q, s * entropy_rows(Q @ T.T), s * entropy_rows(Q), p, budget)
        if lp is None:
            status = EngineStatus.FAILED
            break
        last, last_Q = lp, Q
        support = Q[lp.weights > 0]
        fresh = rng.dirichlet(np.ones(n), size=starts)
        X0 = 0.99 * np.concatenate([support, fresh]) + 0.01 / n
        q, phi = _ascend(X0, T, lp.mu, lp.nu, kind, steps)
        new = q[phi > 0.1 * tol]
        if new.shape[0] == 0:
            break
        Q = np.concatenate([Q, new])
    else:  # the budget ran out while the local search still found columns
        status = EngineStatus.MAX_ITER
    if last is None:
        return _trivial(p, n, kind, iterations)
    keep = last.weights > 0
    return EnvelopeSolution(
        last_Q[keep], last.weights[keep], last.mu, last.nu, last.objective, math.nan, iterations,
        status, 0, _message(status, iterations),
    )  # fmt: skip
