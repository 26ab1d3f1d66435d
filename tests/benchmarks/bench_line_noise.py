"""Counts with line noise kept by its structure (issue 26, item 2).

``counting_query(n, truncated_geometric(n, 1))`` for n up to 10⁵: build, ε, MI-DP, δ(ε) at 3
levels, and the capacity (the banded engine above 2048 values), each timed once. The earlier
path (the dense noise matrix through the general kernels, ``Mechanism.additive`` on
``W.matrix``) is timed on the same inputs where it fits (n = 2000); goals: MI-DP and ε of
n = 10⁵ in < 10 s each, the capacity of n = 20000 in < 10 s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import dpcap
from dpcap import Mechanism
from dpcap.mechanisms import counting_query, truncated_geometric


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _row(what: str, n: int, seconds: float, note: str = "") -> None:
    print(f"  {what:<28} n = {n:<7} {seconds:8.3f} s  {note}")


def _one(n: int, closed: float) -> None:
    t, M = timed(lambda: counting_query(n, truncated_geometric(n, 1.0)))
    _row("build", n, t)
    t, eps = timed(lambda: dpcap.dp_epsilon(M))
    _row("dp_epsilon", n, t, f"eps = {eps:.12g}")
    t, res = timed(lambda: dpcap.midp(M))
    _row("midp", n, t, f"[{res.lower:.12g}, {res.upper:.12g}] closed {closed:.12g}")
    t, _ = timed(lambda: dpcap.dp_delta_curve(M, [0.0, 0.5, 1.0]))
    _row("dp_delta_curve (3 levels)", n, t)
    t, cap = timed(lambda: dpcap.capacity(M))
    _row("capacity", n, t, f"gap {cap.upper - cap.lower:.2g}, {cap.status.value}")
    if n == 2000:  # the earlier path, where the dense matrix fits
        dense = Mechanism.additive([[0, 1]] * n, M.noise)
        td, _ = timed(lambda: dpcap.midp(dense))
        _row("midp (dense path)", n, td)
        td, _ = timed(lambda: dpcap.capacity(dense))
        _row("capacity (dense path)", n, td)


def main() -> None:
    print("counts with line noise (structure vs the dense matrix)")
    q = 1 / (1 + math.e)
    closed = math.log(2) + q * math.log(q) + (1 - q) * math.log(1 - q)
    for n in (2000, 20000, 100000):
        _one(n, closed)


if __name__ == "__main__":
    main()
