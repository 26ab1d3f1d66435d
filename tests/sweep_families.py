"""Families for the sweep tests, importable by name from worker processes and subprocesses.

Not a test module (no ``test_`` prefix): tests import it, and ``spawn`` workers unpickle its
functions by reference.
"""

from __future__ import annotations

import os
import time
from typing import Any

from dpcap.mechanisms import counting_query, randomized_response, truncated_geometric

#: When set, every instance built appends its parameters to this file (one line each).
LOG = "DPCAP_SWEEP_LOG"


def logged_rr(k: int, eps: float) -> Any:
    """Randomized response, logging each construction and taking a little time (for kills)."""
    path = os.environ.get(LOG)
    if path:
        with open(path, "a") as handle:
            handle.write(f"{k},{eps!r}\n")
    time.sleep(float(os.environ.get("DPCAP_SWEEP_SLEEP", "0")))
    return randomized_response(k, eps)


def count(n: int, eps: float) -> Any:
    """A count of n binary entries with truncated geometric noise (a structured mechanism)."""
    return counting_query(n, truncated_geometric(n, eps))


def crash_at(k: int, eps: float) -> Any:
    """Kills the worker process outright for k == 3 (a worker that dies, not an exception)."""
    if k == 3:
        os._exit(17)
    return randomized_response(k, eps)


def ragged_or_rr(kind: str) -> Any:
    """A valid channel for kind "ok", a ragged list (not a channel) otherwise."""
    return randomized_response(2, 1.0) if kind == "ok" else [[0.5, 0.5], [1.0]]


def exits(k: int) -> Any:
    """Calls sys.exit for k == 3 (a family that gives up by exiting)."""
    if k == 3:
        raise SystemExit(3)
    return randomized_response(k, 1.0)
