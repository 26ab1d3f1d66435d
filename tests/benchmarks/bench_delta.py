"""δ(ε) of a whole mechanism: dpcap's binned engine against a direct NumPy broadcast.

Case (issue: foundation): worst-case δ(ε) over all ordered row pairs of a 256 × 256 channel
with Dirichlet(1) rows, at 21 values of ε. The peer is the obvious NumPy code, one broadcast
``(W[:, None, :] - e^ε W[None, :, :])_+`` summed over outputs per ε; no library offers this
curve for a whole mechanism today. Both run on the same inputs in the same process, with the
rows gathered per pair (``hockey_curve`` over the listed pairs ``i < j``, the path before
issue 26) beside the rows read in place (what ``dp_delta_curve`` does over every pair).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

import dpcap
from dpcap.channel import as_mechanism
from dpcap.solvers import hockey


def naive_curve(W: np.ndarray, eps: np.ndarray) -> np.ndarray:
    out = np.empty(len(eps))
    for k, e in enumerate(eps):
        excess = np.maximum(W[:, None, :] - math.exp(e) * W[None, :, :], 0.0).sum(axis=-1)
        np.fill_diagonal(excess, 0.0)
        out[k] = excess.max()
    return out


def best_of(fn: Callable[[], np.ndarray], repeat: int) -> tuple[float, np.ndarray]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    assert value is not None
    return min(times), value


def main(repeat: int = 5) -> dict[str, float]:
    rng = np.random.default_rng(20261123)
    W = rng.dirichlet(np.ones(256), size=256)
    eps = np.linspace(0.0, 4.0, 21)
    t_dpcap, ours = best_of(lambda: dpcap.dp_delta_curve(W, eps, neighbors="all"), repeat)
    t_naive, theirs = best_of(lambda: naive_curve(W, eps), repeat)
    M = as_mechanism(W).matrix
    I, J = (a.astype(np.int64) for a in np.triu_indices(len(M), k=1))
    t_gathered, before = best_of(lambda: hockey.hockey_curve(M, I, J, eps), repeat)
    gap = float(np.max(np.abs(ours - theirs)))
    print("delta(eps) curve, 256 x 256 Dirichlet(1), all 65,280 ordered pairs, 21 eps values")
    same = "bit for bit" if np.array_equal(ours, before) else "differ"
    print(f"  dpcap.dp_delta     {t_dpcap * 1e3:8.1f} ms   (rows read in place)")
    print(f"  pairs gathered     {t_gathered * 1e3:8.1f} ms   (the path before; {same})")
    print(f"  numpy broadcast    {t_naive * 1e3:8.1f} ms")
    print(f"  speed-up           {t_naive / t_dpcap:8.1f} x   (goal >= 20x)")
    print(f"  max |difference|   {gap:8.1e}")
    return {
        "dpcap_s": t_dpcap,
        "gathered_s": t_gathered,
        "naive_s": t_naive,
        "ratio": t_naive / t_dpcap,
        "gap": gap,
    }


if __name__ == "__main__":
    main()
