r"""Mixed-integer linear programmes for the g-capacity of a channel over all priors.

For a gain matrix ``G[w, x] ≥ 0`` and a channel ``C[x, y]`` the posterior g-vulnerability
``V_g[π▷C] = Σ_y max_w a_{yw}·π`` with ``a_{yw,x} = G_{wx} C_{xy}`` is a sum of maxima of linear
functions, convex in π: its maximum over a polytope is a disjunction, one guess per output. Each
output's disjunction is written in Balas's extended (convex-hull) form: a binary ``z_{yw}``
(``Σ_w z_{yw} = 1``) and a copy ``r^{yw}`` of the prior that lies in ``z_{yw}`` times the
feasible polytope, with ``Σ_w r^{yw}`` the prior for every y, so that the objective
``Σ_{y,w} a_{yw}·r^{yw}`` is linear (``docs/mathematics.rst`` §9). Its relaxation is far tighter
than a big-M one (the multiplicative capacity of a random 10 × 10 channel with 10 guesses: one
node against about 50 000).

* multiplicative: ``max_π V_g[π▷C] / V_g(π)`` is homogeneous of degree 0, so it equals the
  maximum of ``V_g[ρ▷C]`` over ``P = {ρ ≥ 0 : G ρ ≤ 1}`` (Charnes–Cooper). The columns of G
  are scaled to a largest entry of 1 (``ρ_x = π_x max_w G_{wx}``), so ``ρ ∈ [0, 1]^n``;
* additive: ``max_π V_g[π▷C] − V_g(π)`` over the simplex, with ``v ≥ G_w·π`` for every guess.
  The caller shifts every column to a least entry of 0 and scales G to a largest entry of 1
  (the additive leakage is invariant under the first and scales with the second).

Both are solved by HiGHS through ``scipy.optimize.milp``. The returned ``bound`` is HiGHS's dual
bound of the maximum, ``allowance`` the widening dpcap adds for the solver's tolerances (the
dual feasibility tolerance 1e-7 times a bound on ``‖x‖_1`` over the feasible set, and the
integrality tolerance 1e-6 times the objective's sensitivity to the binaries); the prior is
HiGHS's incumbent, which the query layer re-evaluates itself. Arrays in, arrays out: nothing
here imports the rest of dpcap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from .status import EngineStatus

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "FEASIBILITY_TOL",
    "INTEGRALITY_TOL",
    "GainMilpSolution",
    "additive",
    "multiplicative",
    "nonzeros",
]

#: HiGHS's default primal and dual feasibility tolerance.
FEASIBILITY_TOL = 1e-7
#: HiGHS's default integrality (mip feasibility) tolerance.
INTEGRALITY_TOL = 1e-6

#: ``scipy.optimize.milp`` status codes → engine status: 0 optimal, 1 iteration or time limit,
#: 2 infeasible, 3 unbounded, 4 other. The programmes here are feasible and bounded by
#: construction, so 2 and 3 are failures.
_MILP: dict[int, EngineStatus] = {
    0: EngineStatus.OPTIMAL,
    1: EngineStatus.MAX_ITER,
    2: EngineStatus.FAILED,
    3: EngineStatus.FAILED,
    4: EngineStatus.FAILED,
}


@dataclass(frozen=True)
class GainMilpSolution:
    """Raw output of one solve: HiGHS's incumbent point (or None), its dual bound of the maximum
    (``inf`` when it reported none) and dpcap's tolerance allowance, both in the units of the
    programme the caller passed (the scaled gain for :func:`additive`); ``status`` mapped from
    ``scipy.optimize.milp``'s, ``message`` HiGHS's, and ``iterations`` the branch-and-bound
    nodes HiGHS explored (``mip_node_count``: the MILP's own count of steps; SciPy reports no
    simplex iterations)."""

    prior: FloatArray | None
    bound: float
    allowance: float
    status: EngineStatus
    iterations: int
    message: str


def nonzeros(kind: str, n: int, m: int, k: int) -> int:
    """The constraint matrix's nonzeros of the programme for ``n`` secrets, ``m`` outputs and
    ``k`` guesses, counted before it is built (``kind`` "multiplicative" or "additive"): the
    copies ``r^{yw}`` (``m k n``) and their splits (``m n``), the guess rows (``m k``), and the
    polytope rows, ``k`` per (output, guess) on ``n + 1`` columns for the multiplicative form,
    one per (output, guess) plus ``k`` vulnerability rows for the additive one."""
    copies = m * k * n + m * n + m * k
    if kind == "multiplicative":
        return copies + m * k * k * (n + 1)
    return copies + m * k * (n + 1) + k * (n + 1)


def _disjunction(n: int, m: int, k: int, offset: int) -> tuple[sparse.csr_matrix, IntArray]:
    """The rows ``Σ_w r^{yw} − x = 0`` (one per output y and secret x) and the column of each
    copy ``r^{yw}_x`` (``offset + (y k + w) n + x``), for a programme whose first ``n``
    variables are ``x``."""
    width = offset + m * k * n + m * k
    y, w, x = np.meshgrid(np.arange(m), np.arange(k), np.arange(n), indexing="ij")
    col = offset + (y * k + w) * n + x
    row = y * n + x
    r = np.concatenate([row.ravel(), np.arange(m * n)])
    c = np.concatenate([col.ravel(), np.tile(np.arange(n), m)])
    data = np.concatenate([np.ones(m * k * n), -np.ones(m * n)])
    split = sparse.coo_matrix((data, (r, c)), shape=(m * n, width)).tocsr()
    return split, col.reshape(m * k, n)


def _one_guess(m: int, k: int, width: int) -> sparse.csr_matrix:
    """The rows ``Σ_w z_{yw} = 1``: one guess per output (``z`` in the last ``m k`` columns)."""
    z = width - m * k + np.arange(m * k)
    return sparse.coo_matrix(
        (np.ones(m * k), (np.repeat(np.arange(m), k), z)), shape=(m, width)
    ).tocsr()


def _solve(
    cost: FloatArray,
    constraints: list[LinearConstraint],
    integrality: IntArray,
    *,
    size: float,
    jump: float,
    time_limit: float,
    rel_gap: float,
    n: int,
) -> GainMilpSolution:
    """Solve with every variable in ``[0, 1]``; ``size`` bounds ``‖x‖_1`` over the feasible set
    and ``jump`` the objective's change per unit of integrality violation, for the allowance."""
    width = cost.shape[0]
    res = milp(
        cost,
        integrality=integrality,
        bounds=Bounds(np.zeros(width), np.ones(width)),
        constraints=constraints,
        options={"disp": False, "mip_rel_gap": rel_gap, "time_limit": float(time_limit)},
    )
    status = _MILP.get(int(res.status), EngineStatus.FAILED)
    dual = getattr(res, "mip_dual_bound", None)
    bound = np.inf if dual is None or not np.isfinite(dual) else -float(dual)
    # an LP bound from duals whose reduced costs are off by at most FEASIBILITY_TOL is low by
    # at most FEASIBILITY_TOL ‖x‖_1 (every variable is non-negative); a leaf accepted with
    # integrality violations up to INTEGRALITY_TOL moves the objective by at most that × jump
    allowance = FEASIBILITY_TOL * size + INTEGRALITY_TOL * jump
    prior = None
    if res.x is not None:
        x = np.maximum(np.asarray(res.x[:n], dtype=np.float64), 0.0)
        if x.sum() > 0:
            prior = x / x.sum()
    nodes = int(getattr(res, "mip_node_count", 0) or 0)
    return GainMilpSolution(prior, bound, allowance, status, nodes, str(res.message))


def multiplicative(
    C: FloatArray, G: FloatArray, *, time_limit: float, rel_gap: float
) -> GainMilpSolution:
    """``max_π V_g[π▷C] / V_g(π)`` for ``G ≥ 0`` whose every column has a positive entry.

    Variables ``(ρ, r, z)``, all in ``[0, 1]``: ``ρ = Σ_w r^{yw}`` for every output y,
    ``G' r^{yw} ≤ z_{yw}`` (so ``r^{yw} ∈ z_{yw} P`` with ``P = {ρ ≥ 0 : G'ρ ≤ 1}``),
    ``Σ_w z_{yw} = 1``; maximise ``Σ_{y,w} a_{yw}·r^{yw}``. ``G' = G / max_w G_{w·}`` column-wise.
    The point returned is ``ρ`` normalised, *in these scaled coordinates*: the prior is
    ``π_x ∝ ρ_x / max_w G_{wx}`` (left to the caller, who keeps ρ for its own evaluation:
    forming π loses the digits of a gain column near the underflow threshold).
    """
    n, m = C.shape
    k = G.shape[0]
    Gs = G / G.max(axis=0)
    width = n + m * k * n + m * k
    split, cols = _disjunction(n, m, k, n)
    # G' r^{yw} − z_{yw} ≤ 0: k rows per (y, w)
    block = np.arange(m * k)
    r = np.concatenate([np.repeat(np.arange(m * k * k), n), np.arange(m * k * k)])
    c = np.concatenate([np.repeat(cols, k, axis=0).ravel(), np.repeat(n + m * k * n + block, k)])
    data = np.concatenate([np.tile(Gs.ravel(), m * k), -np.ones(m * k * k)])
    inside = sparse.coo_matrix((data, (r, c)), shape=(m * k * k, width)).tocsr()
    constraints = [
        LinearConstraint(split, np.zeros(m * n), np.zeros(m * n)),
        LinearConstraint(inside, -np.inf, np.zeros(m * k * k)),
        LinearConstraint(_one_guess(m, k, width), np.ones(m), np.ones(m)),
    ]
    cost = np.zeros(width)
    cost[cols] = -(Gs[None, :, :] * C.T[:, None, :]).reshape(m * k, n)
    integrality = np.concatenate([np.zeros(n + m * k * n, np.int64), np.ones(m * k, np.int64)])
    size = n * (1 + m) + m  # Σρ ≤ n, Σ r = m Σρ, Σ z = m
    return _solve(
        cost,
        constraints,
        integrality,
        size=size,
        jump=float(k * np.sum(C.max(axis=0))),  # Σ_{y,w} (max_x C_xy) per unit of z_yw
        time_limit=time_limit,
        rel_gap=rel_gap,
        n=n,
    )


def additive(
    C: FloatArray, G: FloatArray, *, time_limit: float, rel_gap: float
) -> GainMilpSolution:
    """``max_π V_g[π▷C] − V_g(π)`` over the simplex, for ``0 ≤ G ≤ 1``.

    Variables ``(π, v, r, z)``, all in ``[0, 1]``: ``π = Σ_w r^{yw}`` for every output y,
    ``Σ_x r^{yw}_x = z_{yw}`` (so ``r^{yw} ∈ z_{yw} Δ``), ``Σ_w z_{yw} = 1``,
    ``G_w·π − v ≤ 0``; maximise ``Σ_{y,w} a_{yw}·r^{yw} − v``.
    """
    n, m = C.shape
    k = G.shape[0]
    width = n + 1 + m * k * n + m * k
    split, cols = _disjunction(n, m, k, n + 1)
    mass = sparse.coo_matrix(
        (
            np.concatenate([np.ones(m * k * n), -np.ones(m * k)]),
            (
                np.concatenate([np.repeat(np.arange(m * k), n), np.arange(m * k)]),
                np.concatenate([cols.ravel(), n + 1 + m * k * n + np.arange(m * k)]),
            ),
        ),
        shape=(m * k, width),
    ).tocsr()
    vul = sparse.hstack(
        [
            sparse.csr_matrix(G),
            sparse.csr_matrix(-np.ones((k, 1))),
            sparse.csr_matrix((k, width - n - 1)),
        ]
    ).tocsr()
    constraints = [
        LinearConstraint(split, np.zeros(m * n), np.zeros(m * n)),
        LinearConstraint(mass, np.zeros(m * k), np.zeros(m * k)),
        LinearConstraint(_one_guess(m, k, width), np.ones(m), np.ones(m)),
        LinearConstraint(vul, -np.inf, np.zeros(k)),
    ]
    cost = np.zeros(width)
    cost[n] = 1.0
    cost[cols] = -(G[None, :, :] * C.T[:, None, :]).reshape(m * k, n)
    integrality = np.concatenate([np.zeros(n + 1 + m * k * n, np.int64), np.ones(m * k, np.int64)])
    return _solve(
        cost,
        constraints,
        integrality,
        size=2.0 + 2 * m,  # Σπ = 1, v ≤ 1, Σ r = m, Σ z = m
        jump=float(k * np.sum(C.max(axis=0))),  # Σ_{y,w} (max_x C_xy) per unit of z_yw
        time_limit=time_limit,
        rel_gap=rel_gap,
        n=n,
    )
