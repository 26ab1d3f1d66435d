"""DP metrics at scale (issue: reliability, items 3 and 7): structure instead of k³ work.

* All pairs of ``randomized_response(k, 1)``, k = 500 … 5000: δ(0.5), KL-DP, Rényi-DP (α = 2)
  and TV-DP. dpcap merges identical rows and compares one pair per *kind* of row; the peer is
  the direct evaluation over every pair of rows (dpcap's own kernels, as every version before
  this one did), timed at k = 500 and extrapolated as k³. Goal: < 1 s at k = 5000.
* ε of ``truncated_geometric(1999, 0.1)`` read as a one-entry database (Hamming = all pairs),
  in ``O(|X|·|Y|)``; the peer compares the ~2·10⁶ pairs, timed at n = 499 and extrapolated.
* ε of ``counting_query(5000, truncated_geometric(5000, 1))``: 1 exactly, from the log matrix
  (it used to be ∞: the matrix underflows).
* The refusal of an unstructured problem above the work limit (a 1200 × 1200 Dirichlet(1)
  channel under all pairs): it must come at once.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dpcap
from dpcap import Mechanism, ProblemTooLargeError
from dpcap.mechanisms import counting_query, randomized_response, truncated_geometric
from dpcap.solvers import hockey, pairwise


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def direct(W: np.ndarray, metric: str) -> float:
    """The metric over every pair of rows, with no structure (the peer)."""
    I, J = np.triu_indices(W.shape[0], k=1)
    if metric == "delta":
        return float(hockey.hockey_curve(W, I, J, np.array([0.5]))[0])
    if metric == "kl":
        return pairwise.max_divergence(W, I, J, 1.0)[0]
    if metric == "renyi2":
        return pairwise.max_divergence(W, I, J, 2.0)[0]
    return pairwise.max_tv(W, I, J)[0]


def main() -> dict[str, float]:
    out: dict[str, float] = {}
    metrics: dict[str, Callable[[Any], float]] = {
        "delta": lambda W: dpcap.dp_delta(W, 0.5),
        "kl": dpcap.kl_dp,
        "renyi2": lambda W: dpcap.renyi_dp(W, 2.0),
        "tv": dpcap.tv_dp,
    }
    print("\nDP metrics over all pairs of randomized_response(k, 1)")
    base = randomized_response(500, 1.0).matrix
    for name, metric in metrics.items():
        t_peer, ref = timed(lambda name=name: direct(base, name))
        line = f"  {name:7s} peer at k=500 {t_peer:6.2f} s (k=5000 ~{t_peer * 1000:7.0f} s)"
        for k in (500, 2000, 5000):
            W = randomized_response(k, 1.0)
            t_ours, value = timed(lambda W=W, metric=metric: metric(W))
            if k == 500:
                assert abs(value - ref) <= 1e-12 * max(ref, 1e-300), (name, value, ref)
            line += f" | k={k}: {t_ours:5.2f} s"
            out[f"{name}_{k}_s"] = t_ours
        out[f"{name}_peer_500_s"] = t_peer
        print(line)

    print("epsilon of a one-entry database (Hamming = all pairs)")
    small = truncated_geometric(499, 0.1)
    I, J = np.triu_indices(500, k=1)
    t_peer, _ = timed(lambda: pairwise.max_log_ratio(small.matrix, I, J))
    G = Mechanism.additive([np.arange(2000)], truncated_geometric(1999, 0.1))
    t_ours, eps = timed(lambda: dpcap.dp_epsilon(G))
    print(
        f"  truncated_geometric(1999, 0.1): {t_ours:5.2f} s, eps = {eps:.6g} (199.9); "
        f"peer at n=499 {t_peer:5.2f} s (n=1999 ~{t_peer * 64:5.0f} s)"
    )
    out["geometric_1999_s"] = t_ours

    print("underflow: counting_query(5000, truncated_geometric(5000, 1))")
    t_build, M = timed(lambda: counting_query(5000, truncated_geometric(5000, 1.0)))
    t_ours, eps = timed(lambda: dpcap.dp_epsilon(M))
    print(f"  build {t_build:5.2f} s, dp_epsilon {t_ours:5.2f} s, eps = {eps!r} (exactly 1)")
    out["counting_5000_s"] = t_ours

    W = np.random.default_rng(3).dirichlet(np.ones(1200), size=1200)
    start = time.perf_counter()
    try:
        dpcap.dp_delta(W, 0.5, neighbors="all")
    except ProblemTooLargeError as exc:
        message = str(exc)
    t_refuse = time.perf_counter() - start
    print(f"refusal of a 1200 x 1200 Dirichlet(1) channel: {t_refuse:5.2f} s\n  {message}")
    out["refusal_s"] = t_refuse
    assert math.isfinite(t_refuse)
    return out


if __name__ == "__main__":
    main()
