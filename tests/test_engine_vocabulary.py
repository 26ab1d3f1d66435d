"""The shared engine pieces: the status maps of every backend and the one mixing rounding rule.

The mixing rule (``docs/mathematics.rst`` §8): from the analytic weight λ₀ the k-th retry adds
``2^k·u·max(λ₀, u)``; the weight returned is the first feasible one, or 1.
"""

from __future__ import annotations

import math

import pytest

from dpcap._core import certify as _certify
from dpcap.errors import ConvergenceWarning, Status
from dpcap.solvers import mixing
from dpcap.solvers.status import (
    EngineStatus,
    canonical,
    from_cvxpy,
    from_linprog,
)

U = 2.0**-52


def test_analytic_weight_is_kept_when_feasible() -> None:
    calls: list[float] = []

    def feasible(w: float) -> bool:
        calls.append(w)
        return w >= 0.25

    assert mixing.least_weight(feasible, 0.25) == 0.25
    assert calls == [0.25]


def test_retries_follow_the_doubling_rule() -> None:
    start = 0.25
    target = start + 5 * U * start  # the check accepts only from here (a rounding excess)
    seen: list[float] = []

    def feasible(w: float) -> bool:
        seen.append(w)
        return w >= target

    w = mixing.least_weight(feasible, start)
    # retries: start, +1, +3, +7 units of u·λ₀ → the first ≥ 5 units is 7 units
    assert seen[:4] == [start, start + U * start, start + 3 * U * start, start + 7 * U * start]
    assert w == start + 7 * U * start
    assert w - target <= target - start  # the overshoot is at most the rounding excess


def test_infeasible_until_the_fallback_alone() -> None:
    count = 0

    def never(w: float) -> bool:
        nonlocal count
        count += 1
        return False

    assert mixing.least_weight(never, 0.0) == 1.0
    assert count <= 120  # from λ₀ = 0 about a hundred retries reach 1


@pytest.mark.parametrize(("start", "expected"), [(-0.5, 0.0), (2.0, 1.0), (math.nan, 1.0)])
def test_start_is_clipped(start: float, expected: float) -> None:
    assert mixing.least_weight(lambda w: True, start) == expected


@pytest.mark.parametrize(
    ("raw", "engine"),
    [
        ("optimal", EngineStatus.OPTIMAL),
        ("optimal_inaccurate", EngineStatus.INACCURATE),
        ("user_limit", EngineStatus.INACCURATE),
        ("infeasible", EngineStatus.INFEASIBLE),
        ("unbounded", EngineStatus.FAILED),
        ("something new", EngineStatus.FAILED),
    ],
)
def test_cvxpy_statuses(raw: str, engine: EngineStatus) -> None:
    assert from_cvxpy(raw) is engine


@pytest.mark.parametrize(
    ("code", "engine"),
    [
        (0, EngineStatus.OPTIMAL),
        (1, EngineStatus.INACCURATE),
        (2, EngineStatus.INFEASIBLE),
        (3, EngineStatus.FAILED),
        (4, EngineStatus.INACCURATE),
        (9, EngineStatus.FAILED),
        ("x", EngineStatus.FAILED),
    ],
)
def test_linprog_statuses(code: object, engine: EngineStatus) -> None:
    assert from_linprog(code) is engine


def test_every_engine_status_has_a_user_status() -> None:
    for engine in EngineStatus:
        status = _certify.status_of(engine)
        assert isinstance(status, Status)
        assert status is not Status.CONVERGED  # only a closed bracket converges
    assert _certify.status_of(EngineStatus.MAX_CELLS) is Status.MAX_ITER
    assert _certify.status_of(EngineStatus.FAILED) is Status.FAILED


def test_solver_names_are_case_insensitive() -> None:
    assert canonical("clarabel", ("CLARABEL", "SCS")) == "CLARABEL"
    assert canonical("Scs", ("CLARABEL", "SCS")) == "SCS"
    assert canonical("ecos", ("CLARABEL", "SCS")) is None
    assert canonical(3, ("CLARABEL",)) is None


def test_conclude_warns_from_the_callers_frame() -> None:
    with pytest.warns(ConvergenceWarning, match="not converged") as record:
        status, message = _certify.conclude(1e-3, 1e-9, iterations=7)
    assert status is Status.MAX_ITER
    assert "not converged: certified gap 0.001 nats > tol 1e-09 after 7 iterations" in message
    assert record[0].filename == __file__
