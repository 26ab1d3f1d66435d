"""KL-DP, Rényi DP and TV over all pairs of rows: the screen by matrix products against the
pairwise path it replaced (issue 26, item 4).

Case: a 1000 × 1000 channel with Dirichlet(1) rows under all pairs (499,500 pairs, 5·10⁸
pair-outputs, just under ``dpcap.neighbors.MAX_PAIR_WORK``). dpcap's public functions
(:func:`dpcap.kl_dp`, :func:`dpcap.renyi_dp` at α = 2 and 1/2, :func:`dpcap.tv_dp`) screen every
pair by one matrix product (SciPy's L1 distances for TV) and hand the few pairs that can attain
the maximum to the pair kernel; the baseline is that kernel over every pair
(``dpcap.solvers.pairwise``, the path of every earlier version), on the same validated matrix
in the same process. The values must agree bit for bit. Goal: < 0.5 s each.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _timing import best_of

import dpcap
from dpcap.channel import as_mechanism
from dpcap.solvers import pairwise


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main(n: int = 1000, repeat: int = 3) -> dict[str, float]:
    W = np.random.default_rng(26).dirichlet(np.ones(n), size=n)
    M = as_mechanism(W).matrix  # the rows the metrics see
    I, J = (a.astype(np.int64) for a in np.triu_indices(n, k=1))
    cases: dict[str, tuple[Callable[[], float], Callable[[], float]]] = {
        "kl_dp": (lambda: dpcap.kl_dp(W), lambda: pairwise.max_divergence(M, I, J, 1.0)[0]),
        "renyi_dp 2": (
            lambda: dpcap.renyi_dp(W, 2.0),
            lambda: pairwise.max_divergence(M, I, J, 2.0)[0],
        ),
        "renyi_dp 0.5": (
            lambda: dpcap.renyi_dp(W, 0.5),
            lambda: pairwise.max_divergence(M, I, J, 0.5)[0],
        ),
        "tv_dp": (lambda: dpcap.tv_dp(W), lambda: pairwise.max_tv(M, I, J)[0]),
    }
    print(f"\nKL / Renyi / TV DP over all {len(I):,} pairs of a {n} x {n} Dirichlet(1) channel")
    print("  metric          screen (ms)   pairwise (s)   speed-up   equal   (goal < 500 ms)")
    out: dict[str, float] = {}
    for name, (ours, theirs) in cases.items():
        t_ours, value = best_of(ours, repeat)
        t_theirs, reference = timed(theirs)
        same = "bit" if value == reference else f"{abs(value - reference):.1e}"
        print(
            f"  {name:14s} {t_ours * 1e3:10.1f} {t_theirs:14.2f} {t_theirs / t_ours:9.1f}x   {same}"
        )
        out[f"{name}_s"] = t_ours
        out[f"{name}_pairwise_s"] = t_theirs
    return out


if __name__ == "__main__":
    main()
