"""BLAS threads in the capacity engine: the engine's policy against one thread and all threads.

The engine (:mod:`dpcap.solvers.blahut`) runs a channel whose linear algebra is small
(``nx² · (nx + ny) <= SMALL_WORK``) with one BLAS thread and leaves larger ones to the BLAS
library's own setting. This benchmark times ``dpcap.capacity`` three ways on the same channels:

* **policy**: as shipped;
* **1 thread**: every BLAS call limited to one thread (``threadpoolctl.threadpool_limits(1)``);
* **all threads**: the engine's limit switched off (``SMALL_WORK = -1``), BLAS as configured;

once on an idle machine and once with one core kept busy by another process (a Python busy
loop), the situation in which threaded BLAS on small systems is slowest. Cases: the truncated
geometric mechanism (ε = 0.1; its sparse optimal prior makes the KKT–Newton polish and the
interior-point fallback do the work, on 194, 1000 and 2000 inputs) and k-ary randomised response
(k = 2000, 5000, certified by Blahut–Arimoto alone: no BLAS-heavy step). Times are the best of a
few repeats after one warm-up call (one call, no warm-up, for the large cases); numbers are
printed, not asserted (machines are shared and noisy).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import dpcap
from dpcap.solvers import blahut


def cases() -> list[tuple[str, np.ndarray, int]]:
    """``(name, matrix, repeats)``."""
    geometric = dpcap.mechanisms.truncated_geometric
    rr = dpcap.mechanisms.randomized_response
    return [
        ("trunc. geom. 194 eps=0.1", np.asarray(geometric(193, 0.1)), 5),
        ("trunc. geom. 1000 eps=0.1", np.asarray(geometric(999, 0.1)), 1),
        ("trunc. geom. 2000 eps=0.1", np.asarray(geometric(1999, 0.1)), 1),
        ("k-RR k=2000 eps=1", np.asarray(rr(2000, 1.0)), 1),
        ("k-RR k=5000 eps=1", np.asarray(rr(5000, 1.0)), 1),
    ]


@contextmanager
def busy_core(on: bool) -> Iterator[None]:
    """A process spinning on one core for the duration (nothing when ``on`` is False)."""
    if not on:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        yield
    finally:
        spinner.kill()
        spinner.wait()


@contextmanager
def mode(name: str) -> Iterator[None]:
    if name == "1 thread":
        with threadpool_limits(1, user_api="blas"):
            yield
    elif name == "all threads":
        saved = blahut.SMALL_WORK
        blahut.SMALL_WORK = -1
        try:
            yield
        finally:
            blahut.SMALL_WORK = saved
    else:
        yield


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls (after one warm-up call when ``repeat > 1``)."""
    if repeat > 1:
        fn()
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


MODES = ("policy", "1 thread", "all threads")


def main() -> dict[str, Any]:
    threads = sorted({int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"})
    print(
        f"BLAS threads in dpcap.capacity: {os.cpu_count()} cores, BLAS default threads "
        f"{threads}, SMALL_WORK = {blahut.SMALL_WORK:.3g} (nx = 1024 square); times in seconds"
    )
    header = f"{'case':26s} {'busy core':>9s}" + "".join(f" {m:>11s}" for m in MODES)
    print(header)
    print("-" * len(header))
    rows: list[dict[str, Any]] = []
    for name, W, repeat in cases():
        for busy in (False, True):
            row: dict[str, Any] = {"case": name, "busy": busy}
            with busy_core(busy):
                for m in MODES:
                    with mode(m):
                        row[m] = best_of(lambda W=W: dpcap.capacity(W), repeat)
            times = "".join(f" {row[m]:11.3f}" for m in MODES)
            print(f"{name:26s} {'yes' if busy else 'no':>9s}{times}")
            rows.append(row)
    return {"rows": rows}


if __name__ == "__main__":
    main()
