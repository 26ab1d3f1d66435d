"""MI-DP benchmarks (issue: capacity engine): structured and dense mechanisms.

* ``counting_query(1000, truncated_geometric(1000, 1.0))``: 2^1000 databases, solved from the
  reachable partial sums. Closed form: ``ln 2 − h(1/(1+e))``, independent of n. Goal < 1 s.
* A dense random mechanism on {0,1}^12 with 16 outputs (Dirichlet(1) rows): 12 × 2048 slices.
  Goal < 1 s.

The peer is the obvious approach, one cvxpy (ECOS) capacity solve per slice, timed on a sample
of slices and extrapolated to all of them (same inputs, same run).
"""

from __future__ import annotations

import math
import time

import numpy as np

import dpcap
from dpcap.mechanisms import counting_query, truncated_geometric
from dpcap.solvers import conic


def h(p: float) -> float:
    return -p * math.log(p) - (1 - p) * math.log(1 - p)


def peer_per_slice(stack: np.ndarray, sample: int = 40) -> float:
    """Seconds per slice for cvxpy+ECOS, measured on ``sample`` slices."""
    rng = np.random.default_rng(0)
    picks = rng.choice(len(stack), size=min(sample, len(stack)), replace=False)
    start = time.perf_counter()
    for k in picks:
        conic.capacity_conic(stack[k], solver="ECOS", tol=1e-9)
    return (time.perf_counter() - start) / len(picks)


def main() -> None:
    print("\nMI-DP, tol = 1e-9 nats")
    M = counting_query(1000, truncated_geometric(1000, 1.0))
    start = time.perf_counter()
    res = dpcap.midp(M)
    t = time.perf_counter() - start
    closed = math.log(2) - h(1 / (1 + math.e))
    slices = M.slices((0,)).stack
    peer = peer_per_slice(slices) * len(slices)
    print("  counting_query(1000, truncated_geometric(1000, 1.0)): 2^1000 databases")
    print(f"    dpcap.midp          {t:8.3f} s   value {res.value:.12f}  closed form {closed:.12f}")
    print(
        f"    |value - closed|    {abs(res.value - closed):8.1e}   gap {res.upper - res.lower:.1e}"
    )
    print(f"    cvxpy+ECOS/slice    {peer:8.3f} s   ({len(slices)} slices, extrapolated)")
    print(f"    peer/dpcap          {peer / t:8.1f} x   (goal: dpcap < 1 s)")

    rng = np.random.default_rng(12)
    W = rng.dirichlet(np.ones(16), size=2**12)
    D = dpcap.Mechanism(W, (2,) * 12)
    start = time.perf_counter()
    res = dpcap.midp(D)
    t = time.perf_counter() - start
    stack = D.slices((0,)).stack
    total = 12 * len(stack)
    peer = peer_per_slice(stack) * total
    print("  dense random mechanism on {0,1}^12, 16 outputs (Dirichlet(1) rows)")
    gap = res.upper - res.lower
    print(f"    dpcap.midp          {t:8.3f} s   value {res.value:.12f}  gap {gap:.1e}")
    print(f"    cvxpy+ECOS/slice    {peer:8.3f} s   ({total} slices, extrapolated)")
    print(f"    peer/dpcap          {peer / t:8.1f} x   (goal: dpcap < 1 s)")


if __name__ == "__main__":
    main()
