"""The timing rule of the benchmarks: the best wall time of a few calls after a warm-up."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls after one warm-up call, and the last value."""
    value = fn()
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value
