"""Calibration benchmarks (issue 13, inverse queries): ``calibrate`` against hand-written bisection.

The peer is what users write today: a bisection of single calls on the parameter, deciding each
midpoint with the certified upper end of the measure (``upper ≤ target``: feasible), both ends
of ``bounds`` checked first, until the parameter's bracket is as narrow as ``calibrate``'s
(``upper − lower ≤ tol·θ_F``, tol = 1e-6 relative): the same certified precision, in the same
run (best of three, after a warm-up call). Two bisections are timed: in θ (what a user writes)
and in log θ (a careful user). The closed-form threshold (brentq on the closed form) is printed
beside each bracket where there is one.

* the issue's question: which ε of truncated geometric noise on a count of 100 people keeps
  MI-DP ≤ 0.01 nats (``ln 2 − h(1/(1+e^ε))``, Cuff and Yu eq. 98), ε ∈ [1e-4, 10];
* capacity of randomized response on 2 values ≤ 0.1 nats (the same closed form), ε ∈ [1e-3, 20];
* Sibson capacity of order 2 of randomized response on 8 values ≤ 0.5 nats, ε ∈ [1e-2, 20];
* δ(ε = 1) of discrete Gaussian noise on {0..50} ≤ 1e-6, σ ∈ [0.1, 100] (decreasing in σ).
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

from scipy.optimize import brentq

import dpcap
from dpcap.mechanisms import (
    counting_query,
    discrete_gaussian,
    randomized_response,
    truncated_geometric,
)
from dpcap.study.calibration import calibrate

TOL = 1e-6
REPEAT = 3  # best of three runs


def h(p: float) -> float:
    return -p * math.log(p) - (1 - p) * math.log1p(-p)


def bsc(eps: float) -> float:
    return math.log(2) - h(1 / (1 + math.exp(eps)))


def bisection(
    measure: Callable[[float], Any], target: float, lo: float, hi: float, log: bool, up: bool
) -> tuple[float, float, int]:
    """Hand-written certified bisection: ``(feasible, infeasible, calls)``."""

    def upper(theta: float) -> float:
        r = measure(theta)
        return float(getattr(r, "upper", r))

    calls = 2
    feasible, infeasible = (lo, hi) if up else (hi, lo)
    assert upper(feasible) <= target < upper(infeasible)
    while abs(infeasible - feasible) > TOL * abs(feasible):
        mid = math.sqrt(feasible * infeasible) if log else (feasible + infeasible) / 2
        calls += 1
        if upper(mid) <= target:
            feasible = mid
        else:
            infeasible = mid
    return feasible, infeasible, calls


CASES: list[
    tuple[str, Callable[[float], Any], str, dict[str, Any], float, tuple[float, float], bool, float]
] = [
    (
        "midp of counting_query(100, truncated_geometric(100, eps)) <= 0.01 nats",
        lambda eps: counting_query(100, truncated_geometric(100, eps)),
        "midp",
        {},
        0.01,
        (1e-4, 10.0),
        True,
        float(brentq(lambda e: bsc(e) - 0.01, 1e-4, 10, xtol=1e-15)),
    ),
    (
        "capacity of randomized_response(2, eps) <= 0.1 nats",
        lambda eps: randomized_response(2, eps),
        "capacity",
        {},
        0.1,
        (1e-3, 20.0),
        True,
        float(brentq(lambda e: bsc(e) - 0.1, 1e-3, 20, xtol=1e-15)),
    ),
    (
        "renyi_capacity(alpha=2) of randomized_response(8, eps) <= 0.5 nats",
        lambda eps: randomized_response(8, eps),
        "renyi_capacity",
        {"alpha": 2.0},
        0.5,
        (1e-2, 20.0),
        True,
        math.nan,
    ),
    (
        "dp_delta(eps=1) of discrete_gaussian(50, sigma) <= 1e-6",
        lambda sigma: discrete_gaussian(50, sigma),
        "dp_delta",
        {"eps": 1.0},
        1e-6,
        (0.1, 100.0),
        False,
        math.nan,
    ),
]


def _single(fn: Callable[..., Any], family: Callable[[float], Any], kwargs: Any, x: float) -> Any:
    return fn(family(x), **kwargs)


def main() -> None:
    print(f"\nCalibration: calibrate (ITP) vs hand-written certified bisection, tol = {TOL:g}")
    totals = {"calibrate": 0, "bisection": 0, "log-bisection": 0}
    for label, family, measure, kwargs, target, bounds, up, closed in CASES:
        fn = getattr(dpcap, measure)
        print(f"  {label}")
        fn(family(bounds[0]), **kwargs)  # warm-up: imports and caches paid before timing
        t = math.inf
        for _ in range(REPEAT):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                r = calibrate(
                    family,
                    "eps" if up else "sigma",
                    measure,
                    target,
                    bounds=bounds,
                    measure_kwargs=kwargs,
                    tol=TOL,
                )
            t = min(t, time.perf_counter() - start)
        totals["calibrate"] += r.evaluations
        shown = f"[{r.lower:.10g}, {r.upper:.10g}]"
        print(f"    calibrate      {t:8.3f} s  {r.evaluations:3d} calls  {shown}  {r.status.value}")
        for name, log in (("bisection", False), ("log-bisection", True)):
            single = functools.partial(_single, fn, family, kwargs)
            t_b = math.inf
            for _ in range(REPEAT):
                start = time.perf_counter()
                f, i, calls = bisection(single, target, *bounds, log, up)
                t_b = min(t_b, time.perf_counter() - start)
            totals[name] += calls
            overlap = min(f, i) <= r.upper and r.lower <= max(f, i)
            print(
                f"    {name:<14} {t_b:8.3f} s  {calls:3d} calls  [{min(f, i):.10g}, "
                f"{max(f, i):.10g}]  overlaps calibrate: {overlap}  ({t_b / t:.1f}x)"
            )
        if math.isfinite(closed):
            inside = r.lower <= closed <= r.upper
            print(f"    closed form    {closed:.10g}  inside calibrate's bracket: {inside}")
    print(
        f"  measure calls in all: calibrate {totals['calibrate']}, bisection "
        f"{totals['bisection']}, log-bisection {totals['log-bisection']}"
    )


if __name__ == "__main__":
    main()
