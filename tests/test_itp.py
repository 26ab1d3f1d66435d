"""The shared ITP step (dpcap.solvers.itp): inside the bracket, the regula falsi point on a
line, bisection's worst case on any function."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcap.solvers import itp


def test_a_line_is_solved_in_one_step() -> None:
    # f(x) = x − 0.3 on [0, 1]: the secant is f itself, the truncation κ·width² is tiny
    x = itp.step(0.0, 1.0, -0.3, 0.7, 1e-12, 60, 1e-12)
    assert x == pytest.approx(0.3, abs=1e-11)


def test_either_orientation_gives_the_same_point() -> None:
    # a decreasing f (positive at lo) and an increasing one (negative at lo), same root
    assert itp.step(0.0, 2.0, 0.5, -1.5, 1e-9, 40, 0.01) == pytest.approx(
        itp.step(0.0, 2.0, -0.5, 1.5, 1e-9, 40, 0.01), abs=1e-15
    )


def test_no_slope_means_bisection() -> None:
    assert itp.step(1.0, 3.0, -math.inf, 1.0, 1e-9, 40, 0.1) == 2.0
    assert itp.step(1.0, 3.0, 0.2, 1.0, 1e-9, 40, 0.1) == 2.0  # no sign change


@settings(max_examples=200, deadline=None)
@given(
    root=st.floats(0.001, 0.999),
    power=st.floats(0.2, 5.0),  # f(x) must not underflow to 0 beside the root
    tol=st.sampled_from([1e-3, 1e-6, 1e-9]),
)
def test_bisections_worst_case_holds(root: float, power: float, tol: float) -> None:
    # a monotone f with a root anywhere, however badly curved: the bracket is below tol after
    # ⌈log2(width0/tol)⌉ + n0 steps (n0 = 2), the ITP guarantee
    def f(x: float) -> float:
        return math.copysign(abs(x - root) ** power, x - root)

    lo, hi = 0.0, 1.0
    steps = math.ceil(math.log2(1.0 / tol)) + 2
    slack = 4 * math.ulp(1.0)  # the subtraction hi − lo rounds
    for left in range(steps, 0, -1):
        if hi - lo <= tol + slack:
            break
        x = itp.step(lo, hi, f(lo), f(hi), tol, left, 0.1)
        assert lo < x < hi
        lo, hi = (x, hi) if f(x) <= 0 else (lo, x)
    assert hi - lo <= tol + slack
    assert lo <= root <= hi
