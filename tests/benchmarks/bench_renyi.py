"""Rényi (Sibson) α-capacity: dpcap against cvxpy's power-cone formulation with Clarabel.

Channel: 64 × 64 with Dirichlet(1) rows (seeded). Orders α ∈ {0.5, 2, 10}.

dpcap runs ``dpcap.renyi_capacity(W, alpha, tol=1e-9)`` (certified gap ``upper − lower ≤ 1e-9``
nats). The peer is :func:`dpcap.solvers.conic.renyi_capacity_conic` with Clarabel at tolerance
1e-9, timed whole: problem construction, canonicalisation and solve. The peer's certified gap is
computed here from its prior, the same way as dpcap's: ``lower = I_α^S(p)``, ``upper = max_x
D_α(W_x ‖ Q_p)`` with ``Q_p ∝ (pW^α)^{1/α}`` (:func:`dpcap.solvers.blahut.bracket` with the
:class:`~dpcap.solvers.renyi.Sibson` model). For reference, the engine the query layer drives
(:func:`dpcap.solvers.blahut.solve` with the Sibson model) is timed on the same input.
Goal: dpcap ≥ 10× faster than the peer with gap ≤ 1e-9.

Then the α-profile: ``dpcap.renyi_profile`` over 50 log-spaced orders from 0.05 to 50 plus α = 1
on the same channel (goal < 0.5 s), beside a loop of peer solves over the same orders.

Times are the best of ``repeat`` calls after one warm-up call, in one process, on the same inputs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from _timing import best_of

import dpcap
from dpcap.solvers import blahut, renyi
from dpcap.solvers.conic import renyi_capacity_conic

TOL = 1e-9
SEED = 20261124
ORDERS = (0.5, 2.0, 10.0)
PROFILE_ORDERS = np.union1d(np.geomspace(0.05, 50.0, 50), [1.0])


def channel(n: int = 64, m: int | None = None) -> np.ndarray:
    """``n × m`` Dirichlet(1) rows (``m = n`` by default), seeded."""
    return np.random.default_rng(SEED).dirichlet(np.ones(n if m is None else m), size=n)


def sibson_bracket(W: np.ndarray, prior: np.ndarray, alpha: float) -> tuple[float, float]:
    """``(I_α^S(p), max_x D_α(W_x ‖ Q_p))``: the bracket any prior certifies (nats)."""
    _, lower, upper = blahut.bracket(W[None], prior[None], model=renyi.Sibson(alpha))
    return float(lower[0]), float(upper[0])


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.2f}"


def single_orders(W: np.ndarray, repeat: int) -> list[dict[str, Any]]:
    capacity = getattr(dpcap, "renyi_capacity", None)
    n, m = W.shape
    print(
        f"Sibson alpha-capacity, {n}x{m} Dirichlet(1) channel, tol = {TOL:g} nats;"
        f" times: best of {repeat}, construction included"
    )
    if capacity is None:
        print("  dpcap.renyi_capacity not available yet: timing the engine and the peer only")
    header = (
        f"{'alpha':>6s} | {'dpcap ms':>9s} {'gap':>7s} | {'engine ms':>9s} {'gap':>7s}"
        f" | {'Clarabel ms':>11s} {'gap':>7s} | {'peer/dpcap':>10s}"
    )
    print(header)
    print("-" * len(header))
    rows: list[dict[str, Any]] = []
    for alpha in ORDERS:
        row: dict[str, Any] = {"alpha": alpha}
        line = f"{alpha:6g} | "
        if capacity is None:
            line += f"{'n/a':>9s} {'n/a':>7s}"
        else:
            seconds, result = best_of(lambda a=alpha: capacity(W, a, tol=TOL), repeat)
            gap = float(result.upper - result.lower)
            row.update(dpcap_s=seconds, dpcap_gap=gap, dpcap_value=float(result.value))
            row["dpcap_status"] = str(getattr(result.status, "value", result.status))
            line += f"{_ms(seconds)} {gap:7.0e}"

        model = renyi.Sibson(alpha)
        seconds, sol = best_of(lambda m=model: blahut.solve(W[None], tol=TOL, model=m), repeat)
        engine_gap = float(sol.upper[0] - sol.lower[0])
        row.update(engine_s=seconds, engine_gap=engine_gap, engine_value=float(sol.lower[0]))
        line += f" | {_ms(seconds)} {engine_gap:7.0e}"

        seconds, peer = best_of(
            lambda a=alpha: renyi_capacity_conic(W, a, solver="CLARABEL", tol=TOL), repeat
        )
        lower, upper = sibson_bracket(W, peer.prior, alpha)
        row.update(peer_s=seconds, peer_gap=upper - lower, peer_status=peer.status.value)
        row["peer_objective_error"] = peer.objective - float(sol.lower[0])
        flag = "" if peer.status.value == "optimal" else "*"
        line += f" | {_ms(seconds)}{flag:1s} {upper - lower:7.0e}"
        if "dpcap_s" in row:
            row["ratio"] = row["peer_s"] / row["dpcap_s"]
            line += f" | {row['ratio']:9.1f}x"
        else:
            line += f" | {'n/a':>10s}"
        print(line)
        rows.append(row)
    print(
        "  gap = upper - lower certified by the returned prior (peer: I_a(p) and"
        " max_x D_a(W_x||Q_p)); * = solver status not 'optimal'"
    )
    verdict = "dpcap.renyi_capacity not available"
    if all("ratio" in row for row in rows):
        met = all(row["ratio"] >= 10 and row["dpcap_gap"] <= TOL for row in rows)
        worst = min(row["ratio"] for row in rows)
        verdict = f"{'met' if met else 'not met'} (lowest ratio {worst:.1f}x)"
    print(f"  goal >= 10x with gap <= {TOL:g}: {verdict}")
    return rows


def profile(W: np.ndarray, repeat: int) -> dict[str, Any]:
    orders = PROFILE_ORDERS
    k = len(orders)
    print(
        f"\nalpha-profile: {k} orders (np.geomspace(0.05, 50, 50) and 1), same channel,"
        f" tol = {TOL:g}"
    )
    out: dict[str, Any] = {"orders": k}
    renyi_profile = getattr(dpcap, "renyi_profile", None)
    if renyi_profile is None:
        print("  dpcap.renyi_profile not available yet")
    else:
        seconds, result = best_of(lambda: renyi_profile(W, orders, tol=TOL), repeat)
        gaps = np.asarray(result.upper) - np.asarray(result.lower)
        statuses = np.asarray([getattr(s, "value", s) for s in np.ravel(result.status)])
        names, counts = np.unique(statuses.astype(str), return_counts=True)
        tally = dict(zip(names.tolist(), counts.tolist(), strict=True))
        out.update(dpcap_s=seconds, dpcap_max_gap=float(gaps.max()))
        print(
            f"  dpcap.renyi_profile  {seconds:8.3f} s   max gap {gaps.max():.1e}  status {tally}"
            "   (goal < 0.5 s)"
        )
    # The peer has no profile: one conic solve per order (α = 1 is Shannon's exponential cone).
    start = time.perf_counter()
    for alpha in orders:
        if alpha == 1.0:
            continue
        renyi_capacity_conic(W, float(alpha), solver="CLARABEL", tol=TOL)
    peer = time.perf_counter() - start
    out["peer_s"] = peer
    print(f"  cvxpy+Clarabel loop  {peer:8.3f} s   ({k - 1} orders, alpha = 1 left out)")
    if "dpcap_s" in out:
        out["ratio"] = peer / out["dpcap_s"]
        print(f"  peer/dpcap           {out['ratio']:8.1f} x")
    return out


def separate_calls(W: np.ndarray, repeat: int) -> dict[str, Any]:
    """``renyi_profile`` against a loop of ``renyi_capacity`` over the same orders (goal >= 2x:
    the orders solved as one batch)."""
    orders = PROFILE_ORDERS
    one, _ = best_of(lambda: dpcap.renyi_profile(W, orders, tol=TOL), repeat)
    loop, _ = best_of(lambda: [dpcap.renyi_capacity(W, float(a), tol=TOL) for a in orders], repeat)
    print(
        f"  renyi_profile {one:8.3f} s   loop of renyi_capacity {loop:8.3f} s   "
        f"loop/profile {loop / one:5.2f} x   (goal >= 2x)"
    )
    return {"profile_s": one, "loop_s": loop, "ratio": loop / one}


def main(repeat: int = 3) -> dict[str, Any]:
    W = channel()
    print()
    rows = single_orders(W, repeat)
    out = {"single": rows, "profile": profile(W, repeat)}
    out["separate"] = separate_calls(W, repeat)
    for n, m in ((256, 256), (1024, 256)):  # the larger channels of the goal (>= 10x)
        print()
        out[f"single_{n}x{m}"] = single_orders(channel(n, m), 1)
    return out


if __name__ == "__main__":
    main()
