"""Capacity under an input cost: ``dpcap.capacity(W, cost=c, budget=P)`` against cvxpy.

Cases: a BSC(0.1) with cost 1 on one input (P = 0.3); Dirichlet(1) channels 16×16, 64×64 and
256×256 (seeded) with costs uniform on [0, 1] and the budget a third of the way from the least
cost to the mean cost (the budget binds); the truncated geometric mechanism on {0..99} at
ε = 0.1 with cost ``|x − 50|/50`` (the distance from the middle) and P = 0.2.

dpcap runs ``dpcap.capacity(W, cost=c, budget=P, tol=1e-9)`` (certified gap ``upper − lower ≤
1e-9`` nats: the dual bound at its multiplier against ``I(p, W)`` at a prior that meets the
budget exactly). The peer is a hand-written cvxpy program on the same inputs: maximise
``Σ_y entr((Wᵀp)_y) − Σ_x p_x H(W_x)`` subject to ``Σ p = 1``, ``c·p ≤ P``, with Clarabel at
tolerance 1e-9, timed whole (construction, canonicalisation and solve). Its gap is computed here
from its prior and its multiplier ``s`` of the cost constraint, the same bound dpcap certifies:
``sP + max_x [D(W_x ‖ pW) − s c_x] − I(p)`` (its prior may exceed the budget by the solver's
feasibility tolerance). Times are the best of a few repeats after one warm-up call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _timing import best_of
from scipy.special import entr, rel_entr

import dpcap

TOL = 1e-9
SEED = 20261124


def cases() -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    rng = np.random.default_rng(SEED)
    out = [
        ("BSC(0.1) c=(0,1) P=0.3", np.array([[0.9, 0.1], [0.1, 0.9]]), np.array([0.0, 1.0]), 0.3)
    ]
    for n in (16, 64, 256):
        W = rng.dirichlet(np.ones(n), size=n)
        c = rng.uniform(0.0, 1.0, size=n)
        P = float(c.min() + (c.mean() - c.min()) / 3)
        out.append((f"Dirichlet {n}x{n}", W, c, P))
    geometric = np.asarray(dpcap.mechanisms.truncated_geometric(99, 0.1))
    c = np.abs(np.arange(100) - 50) / 50.0
    out.append(("trunc. geom. 100 eps=0.1", geometric, c, 0.2))
    return out


def peer(W: np.ndarray, c: np.ndarray, P: float) -> tuple[np.ndarray, float, str]:
    """The hand-written exponential-cone program: ``(prior, multiplier, status)``."""
    import cvxpy as cp

    p = cp.Variable(W.shape[0], nonneg=True)
    limit = c @ p <= P
    objective = cp.Maximize(cp.sum(cp.entr(W.T @ p)) - entr(W).sum(axis=1) @ p)
    problem = cp.Problem(objective, [cp.sum(p) == 1, limit])
    problem.solve(solver="CLARABEL", tol_gap_abs=TOL, tol_gap_rel=TOL, tol_feas=TOL)
    prior = np.clip(np.asarray(p.value, dtype=float), 0.0, None)
    return prior / prior.sum(), float(limit.dual_value), str(problem.status)


def peer_gap(W: np.ndarray, c: np.ndarray, P: float, prior: np.ndarray, s: float) -> float:
    D = rel_entr(W, prior @ W).sum(axis=1)
    return float(s * P + np.max(D - s * c) - prior @ D)


def main(repeat: int = 3) -> list[dict[str, Any]]:
    print(f"Capacity under an input cost, tol = {TOL:g} nats; times: best of {repeat}")
    header = (
        f"{'case':26s} {'dpcap ms':>9s} {'gap':>7s} {'solves':>6s} | {'cvxpy ms':>9s} "
        f"{'gap':>7s} | peer/dpcap"
    )
    print(header)
    print("-" * len(header))
    rows: list[dict[str, Any]] = []
    for name, W, c, P in cases():
        ours_s, ours = best_of(lambda W=W, c=c, P=P: dpcap.capacity(W, cost=c, budget=P), repeat)
        theirs_s, (prior, s, status) = best_of(lambda W=W, c=c, P=P: peer(W, c, P), repeat)
        gap = peer_gap(W, c, P, prior, s)
        flag = "" if status == "optimal" else "*"
        solves = ours.message.split(" engine solves")[0].split("; ")[-1]
        solves = solves if solves.isdigit() else "0"
        ratio = theirs_s / ours_s
        print(
            f"{name:26s} {ours_s * 1e3:9.2f} {ours.gap:7.0e} {solves:>6s} | "
            f"{theirs_s * 1e3:9.2f}{flag:1s}{gap:7.0e} | {ratio:8.1f}x"
        )
        rows.append(
            {"case": name, "dpcap_s": ours_s, "dpcap_gap": ours.gap, "peer_s": theirs_s,
             "peer_gap": gap, "peer_status": status, "ratio": ratio}
        )  # fmt: skip
    print("  (* = cvxpy status not 'optimal'; solves = engine solves over the multiplier)")
    return rows


if __name__ == "__main__":
    main()
