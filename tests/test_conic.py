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

from dpcap.solvers.conic import SOLVERS, ConicSolution, capacity_conic

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
    assert sol.status == "optimal", sol.message
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
    assert sol.status == "failed"
    assert "numerical trouble" in sol.message
    assert math.isnan(sol.objective)
    np.testing.assert_allclose(sol.prior, np.full(3, 1 / 3))


@pytest.mark.parametrize("solver", SOLVERS)
def test_iteration_cap_is_inaccurate_or_failed(solver: str) -> None:
    """A capped run is never "optimal"; when it carries a point, the prior is a distribution."""
    sol = capacity_conic(z_channel(0.5)[0], solver=solver, tol=1e-9, max_iter=2)
    assert sol.status in ("inaccurate", "failed"), sol.message
    assert np.all(sol.prior >= 0)
    assert sol.prior.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("max_iter", [0, -3, 2.5, True])
def test_bad_iteration_cap_is_rejected(max_iter: object) -> None:
    with pytest.raises(ValueError, match=r"max_iter must be a positive integer or None; got"):
        capacity_conic(np.eye(2), max_iter=max_iter)  # type: ignore[arg-type]
