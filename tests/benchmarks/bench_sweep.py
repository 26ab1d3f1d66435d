"""Sweeps against the loops they replace, and the executors against one process.

Four measurements, each against its baseline in the same run (numbers printed, not asserted):

1. **Family**: truncated geometric noise, n = 2..200 × 10 values of ε (1,990 channels),
   queries ``capacity``, ``dp_epsilon`` and ``midp``: ``dpcap.sweep`` in this process against a
   Python loop of the same three dpcap calls per channel.
2. **Many small channels**: 10⁵ random 4×8 channels (rows Dirichlet(1), seeded), ``capacity``:
   channels per second of a sweep over a family that draws channel ``seed``, and of
   ``dpcap.capacities`` on the stack.
3. **Executors**: a CPU-bound sweep of about a minute in one process, against a Dask
   ``LocalCluster`` of 2 single-threaded workers and 2 local worker processes.
4. **Resume**: the sweep of 3 run again against its finished store.

Set ``DPCAP_BENCH_QUICK=1`` for smaller sizes (a smoke run of this file).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import dpcap
from dpcap.mechanisms import truncated_geometric

sys.path.insert(0, str(Path(__file__).resolve().parent))

QUICK = os.environ.get("DPCAP_BENCH_QUICK") == "1"
EPS = [float(e) for e in np.linspace(0.1, 2.0, 10)]


def dirichlet_channel(seed: int, rows: int = 4, cols: int = 8) -> np.ndarray:
    """Channel ``seed`` of the benchmark family: rows Dirichlet(1) from a seeded generator."""
    return np.random.default_rng(seed).dirichlet(np.ones(cols), size=rows)


def _loop(ns: list[int], midp: bool = True) -> float:
    """A loop of single calls over the family; without ``midp``, the engine-only time of the
    sweep's distinct solves (one capacity and one ε per channel: a channel's MI-DP is its
    capacity, one slice, which the sweep shares)."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        for n in ns:
            for eps in EPS:
                W = truncated_geometric(n, eps)
                dpcap.capacity(W)
                dpcap.dp_epsilon(W)
                if midp:
                    dpcap.midp(W)
    return time.perf_counter() - start


def family() -> None:
    ns = list(range(2, 201, 1 if not QUICK else 20))
    queries = ["capacity", "dp_epsilon", "midp"]
    grid = {"n": ns, "eps": EPS}
    with threadpool_limits(1):  # the measurement: single-threaded BLAS for both
        loop = _loop(ns)
        distinct = _loop(ns, midp=False)
        start = time.perf_counter()
        dpcap.sweep("truncated_geometric", grid, queries, progress=False)
        swept = time.perf_counter() - start
    print(
        f"  family trunc. geom. n=2..200 x 10 eps ({len(ns) * 10} channels), "
        f"capacity + dp_epsilon + midp:\n"
        f"      loop of dpcap calls {loop:8.2f} s   sweep in-process {swept:8.2f} s   "
        f"({loop / swept:.1f}x; goal >= 2.5x)\n"
        f"      distinct solves alone {distinct:6.2f} s   sweep/distinct {swept / distinct:.2f}x   "
        "(goal <= 1.15x)"
    )


def small_channels() -> None:
    B = 100_000 if not QUICK else 5_000
    stack = np.stack([dirichlet_channel(s) for s in range(B)])
    start = time.perf_counter()
    dpcap.capacities(stack)
    batch = time.perf_counter() - start
    start = time.perf_counter()
    table = dpcap.sweep(
        dirichlet_channel, {"seed": list(range(B))}, "capacity", progress=False, chunk_size=B
    )
    swept = time.perf_counter() - start
    assert (table["status"] == "converged").all()
    print(
        f"  {B} random 4x8 channels, capacity: capacities(stack) {B / batch:10,.0f} ch/s   "
        f"sweep over seeds {B / swept:10,.0f} ch/s   (goal: capacities >= 300,000 ch/s)"
    )


def _cpu_bound(**kwargs: Any) -> float:
    ns = list(range(150, 401, 2)) if not QUICK else [150, 152]
    grid = {"n": ns, "eps": [0.05, 0.1, 0.2, 0.5, 1.0]}
    queries = ["capacity", ("renyi_capacity", {"alpha": 2.0})]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        dpcap.sweep("truncated_geometric", grid, queries, progress=False, **kwargs)
    return time.perf_counter() - start


def executors() -> None:
    store = Path(tempfile.mkdtemp(prefix="dpcap-bench-")) / "store"
    try:
        serial = _cpu_bound(executor="serial", store=store)
        again = _cpu_bound(executor="serial", store=store)
        processes = _cpu_bound(executor="processes", workers=2)
        dask = _cpu_bound(executor="dask", workers=2)
    finally:
        shutil.rmtree(store.parent, ignore_errors=True)
    print(
        f"  CPU-bound sweep (trunc. geom. n=150..400 x 5 eps, capacity + C_2):\n"
        f"      serial {serial:7.1f} s   processes x2 {processes:7.1f} s "
        f"({serial / processes:.2f}x)   Dask LocalCluster x2 {dask:7.1f} s "
        f"({serial / dask:.2f}x)\n"
        f"      re-run against its finished store {again:6.2f} s "
        f"({100 * again / serial:.1f} % of the first run)"
    )


def main() -> None:
    print("sweeps (dpcap.sweep) against the loops they replace, same run:")
    family()
    small_channels()
    executors()


if __name__ == "__main__":
    main()
