"""The conic capacity engine against closed-form capacities, for every solver it drives.

Expected values come from the textbook formulas, never from the code; the certificate is
recomputed here from the returned prior with SciPy (``I(p) ≤ C ≤ max_x D(W_x ‖ pW)``), so a test
fails if the solver's prior is worse than its reported objective suggests.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.special import rel_entr, xlogy

from dpcap.solvers.conic import (
    RENYI_SOLVERS,
    SOLVERS,
    ConicSolution,
    capacity_conic,
    renyi_capacity_conic,
)

FloatArray = NDArray[np.float64]

pytest.importorskip("cvxpy")

#: Tolerances per solver: (objective vs C, prior vs the optimal prior, certified gap of the prior).
#: Measured at tol=1e-9 on these cases: every objective is within 3e-10 of C. Clarabel's prior is
#: only pinned to ~√tol (errors up to 1.1e-5, certified gaps up to 1.4e-5) because I is flat at its
#: maximum; ECOS's prior errors and gaps are below 2e-9, SCS's below 2e-11. The SCS bounds are
#: looser than measured: a first-order method's accuracy varies more across versions.
TOLERANCES = {
    "CLARABEL": (1e-7, 1e-4, 1e-4),
    "ECOS": (1e-7, 1e-6, 1e-6),
    "SCS": (1e-6, 1e-5, 1e-5),
}


def h2(s: float) -> float:
    """Binary entropy in nats."""
    return float(-xlogy(s, s) - xlogy(1 - s, 1 - s))


def bsc(s: float) -> tuple[FloatArray, float, FloatArray]:
    W = np.array([[1 - s, s], [s, 1 - s]])
    return W, math.log(2) - h2(s), np.array([0.5, 0.5])


def bec(e: float) -> tuple[FloatArray, float, FloatArray]:
    W = np.array([[1 - e, e, 0.0], [0.0, e, 1 - e]])
    return W, (1 - e) * math.log(2), np.array([0.5, 0.5])


def z_channel(s: float) -> tuple[FloatArray, float, FloatArray]:
    """``P(Y=0 | X=1) = s``, ``P(Y=0 | X=0) = 1``.

    ``C = log(1 + z)`` with ``z = (1−s) s^{s/(1−s)}``, attained at ``P(X=1) = s^{s/(1−s)}/(1+z)``
    (set ``d/dπ [h((1−s)π) − π h(s)] = 0``). At ``s = 1/2``: ``C = log(5/4)``, ``P(X=1) = 2/5``.
    """
    W = np.array([[1.0, 0.0], [s, 1 - s]])
    z = (1 - s) * s ** (s / (1 - s))
    one = s ** (s / (1 - s)) / (1 + z)
    return W, math.log1p(z), np.array([1 - one, one])


def k_ary_symmetric(k: int, d: float) -> tuple[FloatArray, float, FloatArray]:
    """Diagonal ``d``, off-diagonal ``(1−d)/(k−1)``: ``C = log k − H(row)`` at the uniform prior."""
    off = (1 - d) / (k - 1)
    W = np.full((k, k), off)
    np.fill_diagonal(W, d)
    return W, math.log(k) + d * math.log(d) + (1 - d) * math.log(off), np.full(k, 1 / k)


def bsc_with_zero_column(s: float) -> tuple[FloatArray, float, FloatArray]:
    """An all-zero output column changes nothing."""
    W, C, prior = bsc(s)
    return np.insert(W, 1, 0.0, axis=1), C, prior


CASES = {
    "bsc-0.1": bsc(0.1),
    "bsc-0.01": bsc(0.01),
    "bec-0.3": bec(0.3),
    "z-0.5": z_channel(0.5),
    "z-0.2": z_channel(0.2),
    "5-ary-0.7": k_ary_symmetric(5, 0.7),
    "bsc-zero-column": bsc_with_zero_column(0.2),
}


def bracket(W: FloatArray, p: FloatArray) -> tuple[float, float]:
    """``(I(p), max_x D(W_x ‖ pW))``, which contain the capacity for every prior p."""
    D = rel_entr(W, p @ W).sum(axis=1)
    return float(p @ D), float(D.max())


def test_z_channel_closed_form_at_one_half() -> None:
    _, capacity, prior = z_channel(0.5)
    assert capacity == pytest.approx(math.log(5 / 4), abs=1e-15)
    np.testing.assert_allclose(prior, [3 / 5, 2 / 5], atol=1e-15)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", list(CASES))
def test_closed_form_capacities(case: str, solver: str) -> None:
    W, C, optimal = CASES[case]
    objective_tol, prior_tol, gap_tol = TOLERANCES[solver]
    sol = capacity_conic(W, solver=solver, tol=1e-9)
    assert isinstance(sol, ConicSolution)
    assert sol.status.value == "optimal", sol.message
    assert sol.solver == solver
    assert sol.solve_time > 0
    assert sol.objective == pytest.approx(C, abs=objective_tol)
    assert sol.prior.shape == (W.shape[0],)
    assert np.all(sol.prior >= 0)
    assert sol.prior.sum() == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(sol.prior, optimal, atol=prior_tol)
    lower, upper = bracket(W, sol.prior)
    assert lower <= C + 1e-12 <= upper + 2e-12  # a theorem, for any prior
    assert lower == pytest.approx(C, abs=objective_tol)
    assert upper - lower <= gap_tol


@pytest.mark.parametrize("solver", ["GUROBI", "clarabel ", "", None])
def test_unknown_solver_is_rejected(solver: object) -> None:
    with pytest.raises(ValueError, match=r"solver must be one of CLARABEL, ECOS, SCS; got solver="):
        capacity_conic(np.eye(2), solver=solver)  # type: ignore[arg-type]


def test_solver_name_is_case_insensitive() -> None:
    assert capacity_conic(np.eye(2), solver="ecos").solver == "ECOS"


@pytest.mark.parametrize("tol", [0.0, -1e-9, math.nan, math.inf])
def test_bad_tolerance_is_rejected(tol: float) -> None:
    with pytest.raises(ValueError, match=r"tol must be a positive finite number; got tol="):
        capacity_conic(np.eye(2), tol=tol)


def test_solver_error_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    cp: Any = importlib.import_module("cvxpy")

    def broken(*args: object, **kwargs: object) -> None:
        raise cp.error.SolverError("numerical trouble")

    monkeypatch.setattr(cp.Problem, "solve", broken)
    sol = capacity_conic(np.eye(3), solver="ECOS")
    assert sol.status.value == "failed"
    assert "numerical trouble" in sol.message
    assert math.isnan(sol.objective)
    np.testing.assert_allclose(sol.prior, np.full(3, 1 / 3))


@pytest.mark.parametrize("solver", SOLVERS)
def test_iteration_cap_is_inaccurate_or_failed(solver: str) -> None:
    """A capped run is never "optimal"; when it carries a point, the prior is a distribution."""
    sol = capacity_conic(z_channel(0.5)[0], solver=solver, tol=1e-9, max_iter=2)
    assert sol.status.value in ("inaccurate", "failed"), sol.message
    assert np.all(sol.prior >= 0)
    assert sol.prior.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("max_iter", [0, -3, 2.5, True])
def test_bad_iteration_cap_is_rejected(max_iter: object) -> None:
    with pytest.raises(ValueError, match=r"max_iter must be a positive integer or None; got"):
        capacity_conic(np.eye(2), max_iter=max_iter)  # type: ignore[arg-type]


# --- Sibson's α-capacity (Rényi radius) by power-cone programming ---------------------------------

#: Per solver: (objective vs C_α, certified gap of the prior). Measured at tol=1e-9 on these cases
#: and the Z channel: objectives within 3e-10 of C_α for both solvers; Clarabel's prior certifies
#: gaps up to 8e-6 (BSC, α=2: the power sum is flat at its optimum), SCS's below 1e-10. The SCS
#: bound is looser than measured, as above.
RENYI_TOLERANCES = {"CLARABEL": (1e-6, 1e-4), "SCS": (1e-6, 1e-6)}
ORDERS = [0.5, 2.0, 10.0]


def sibson_uniform(W: FloatArray, alpha: float) -> float:
    """``α/(α−1) · log Σ_y (Σ_x W_xy^α / k)^{1/α}``: C_α of a symmetric channel (uniform prior)."""
    k = W.shape[0]
    return alpha / (alpha - 1) * math.log(np.sum((np.sum(W**alpha, axis=0) / k) ** (1 / alpha)))


def randomized_response(k: int, eps: float) -> FloatArray:
    """k-ary randomised response: ``e^ε/(e^ε+k−1)`` on the diagonal, ``1/(e^ε+k−1)`` elsewhere."""
    W = np.full((k, k), 1 / (math.exp(eps) + k - 1))
    np.fill_diagonal(W, math.exp(eps) / (math.exp(eps) + k - 1))
    return W


def renyi_bracket(W: FloatArray, p: FloatArray, alpha: float) -> tuple[float, float]:
    """``(I_α^S(p), max_x D_α(W_x ‖ Q_p))`` with ``Q_p ∝ (pW^α)^{1/α}``: they contain C_α.

    Written out here with plain NumPy (not dpcap's kernels). Columns no input reaches are dropped;
    the test channels' priors reach every other column, so ``Q_p > 0`` there.
    """
    W = W[:, W.sum(axis=0) > 0]
    f = (p @ W**alpha) ** (1 / alpha)
    lower = alpha / (alpha - 1) * math.log(f.sum())
    Q = f / f.sum()
    D = np.log(np.sum(W**alpha * Q ** (1 - alpha), axis=1)) / (alpha - 1)
    return lower, float(D.max())


RENYI_CASES = {
    "bsc-0.1": np.array([[0.9, 0.1], [0.1, 0.9]]),
    "bsc-0.3-zero-column": np.array([[0.7, 0.0, 0.3], [0.3, 0.0, 0.7]]),
    "3-rr-1": randomized_response(3, 1.0),
    "8-rr-0.5": randomized_response(8, 0.5),
}


def test_renyi_closed_form_reference_values() -> None:
    """The reference formula against hand-computed values: BSC(0.1) at α=2 is log 1.64."""
    assert sibson_uniform(RENYI_CASES["bsc-0.1"], 2.0) == pytest.approx(math.log(1.64), abs=1e-15)
    # BSC(0.1) at α=1/2: −log((√0.9 + √0.1)²/2) (the Bhattacharyya form).
    expected = -math.log((math.sqrt(0.9) + math.sqrt(0.1)) ** 2 / 2)
    assert sibson_uniform(RENYI_CASES["bsc-0.1"], 0.5) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("solver", RENYI_SOLVERS)
@pytest.mark.parametrize("alpha", ORDERS)
@pytest.mark.parametrize("case", list(RENYI_CASES))
def test_renyi_closed_form_capacities(case: str, alpha: float, solver: str) -> None:
    W = RENYI_CASES[case]
    C = sibson_uniform(W, alpha)
    objective_tol, gap_tol = RENYI_TOLERANCES[solver]
    sol = renyi_capacity_conic(W, alpha, solver=solver, tol=1e-9)
    assert isinstance(sol, ConicSolution)
    assert sol.status.value == "optimal", sol.message
    assert sol.solver == solver
    assert sol.objective == pytest.approx(C, abs=objective_tol)
    assert sol.prior.shape == (W.shape[0],)
    assert np.all(sol.prior >= 0)
    assert sol.prior.sum() == pytest.approx(1.0, abs=1e-14)
    lower, upper = renyi_bracket(W, sol.prior, alpha)
    assert lower <= C + 1e-12 <= upper + 2e-12  # a theorem, for any prior
    assert lower == pytest.approx(C, abs=objective_tol)
    assert upper - lower <= gap_tol


def test_z_channel_sibson_closed_form_at_order_two() -> None:
    """Z channel, α=2: the power sum is ``√(1 − 3π/4) + √π/2`` at ``P(X=1) = π``; its maximum is
    at π = 1/3 (set the derivative ``−3/(8√(1−3π/4)) + 1/(4√π)`` to 0), value ``2/√3``, so
    ``C_2 = 2 log(2/√3) = log(4/3)``."""
    pi = 1 / 3
    assert math.sqrt(1 - 3 * pi / 4) + math.sqrt(pi) / 2 == pytest.approx(2 / math.sqrt(3))
    assert -3 / (8 * math.sqrt(1 - 3 * pi / 4)) + 1 / (4 * math.sqrt(pi)) == pytest.approx(0.0)


@pytest.mark.parametrize("solver", RENYI_SOLVERS)
def test_z_channel_sibson_optimal_prior(solver: str) -> None:
    W = np.array([[1.0, 0.0], [0.5, 0.5]])
    sol = renyi_capacity_conic(W, 2.0, solver=solver, tol=1e-9)
    assert sol.status.value == "optimal", sol.message
    assert sol.objective == pytest.approx(math.log(4 / 3), abs=1e-6)
    np.testing.assert_allclose(sol.prior, [2 / 3, 1 / 3], atol=1e-4)
    lower, upper = renyi_bracket(W, sol.prior, 2.0)
    assert lower <= math.log(4 / 3) + 1e-12 <= upper + 2e-12
    assert upper - lower <= RENYI_TOLERANCES[solver][1]


@pytest.mark.parametrize("solver", RENYI_SOLVERS)
def test_renyi_capacity_is_non_decreasing_in_alpha(solver: str) -> None:
    """``α ↦ C_α`` is non-decreasing (a theorem), on an asymmetric channel."""
    W = np.array([[0.8, 0.15, 0.05], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4]])
    values = [renyi_capacity_conic(W, a, solver=solver).objective for a in (0.2, 0.5, 2, 5, 20)]
    assert np.all(np.diff(values) >= -1e-8), values
    # and brackets the Shannon capacity between the orders either side of 1
    shannon = capacity_conic(W, solver="CLARABEL").objective
    assert values[1] - 1e-8 <= shannon <= values[2] + 1e-8


@pytest.mark.parametrize("solver", ["ECOS", "ecos"])
def test_renyi_rejects_ecos_for_lack_of_power_cones(solver: str) -> None:
    with pytest.raises(ValueError, match=r"solver='(ECOS|ecos)' cannot solve the Rényi capacity"):
        renyi_capacity_conic(np.eye(2), 2.0, solver=solver)


@pytest.mark.parametrize("solver", ["GUROBI", "clarabel ", "", None])
def test_renyi_unknown_solver_is_rejected(solver: object) -> None:
    with pytest.raises(ValueError, match=r"solver must be one of CLARABEL, SCS; got solver="):
        renyi_capacity_conic(np.eye(2), 2.0, solver=solver)  # type: ignore[arg-type]


@pytest.mark.parametrize("alpha", [0.0, -1.0, 1.0, 1, math.inf, math.nan, True, "2"])
def test_renyi_bad_order_is_rejected(alpha: object) -> None:
    with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\) or \(1, inf\); got"):
        renyi_capacity_conic(np.eye(2), alpha)  # type: ignore[arg-type]


@pytest.mark.parametrize("tol", [0.0, -1e-9, math.nan, math.inf])
def test_renyi_bad_tolerance_is_rejected(tol: float) -> None:
    with pytest.raises(ValueError, match=r"tol must be a positive finite number; got tol="):
        renyi_capacity_conic(np.eye(2), 2.0, tol=tol)


def test_renyi_bad_channel_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"W must be a non-empty 2-D array; got shape \(2,\)"):
        renyi_capacity_conic(np.ones(2) / 2, 2.0)


def test_renyi_tolerance_floor_is_reported() -> None:
    sol = renyi_capacity_conic(np.eye(2), 2.0, tol=1e-13)
    assert "raised from 1e-13: CLARABEL's floor" in sol.message
    assert sol.objective == pytest.approx(math.log(2), abs=1e-6)


def test_renyi_solver_error_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    cp: Any = importlib.import_module("cvxpy")

    def broken(*args: object, **kwargs: object) -> None:
        raise cp.error.SolverError("numerical trouble")

    monkeypatch.setattr(cp.Problem, "solve", broken)
    sol = renyi_capacity_conic(np.eye(3), 0.5, solver="SCS")
    assert sol.status.value == "failed"
    assert "numerical trouble" in sol.message
    assert math.isnan(sol.objective)
    np.testing.assert_allclose(sol.prior, np.full(3, 1 / 3))


@pytest.mark.parametrize("solver", RENYI_SOLVERS)
def test_renyi_iteration_cap_is_inaccurate_or_failed(solver: str) -> None:
    sol = renyi_capacity_conic(np.array([[1.0, 0.0], [0.5, 0.5]]), 2.0, solver=solver, max_iter=2)
    assert sol.status.value in ("inaccurate", "failed"), sol.message
    assert np.all(sol.prior >= 0)
    assert sol.prior.sum() == pytest.approx(1.0, abs=1e-14)
