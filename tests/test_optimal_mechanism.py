"""Least-loss ε-DP mechanisms d*(ε): theorems and closed forms, every solver, the repair.

Expected values come from the literature, never from the code: Ghosh–Roughgarden–Sundararajan
(truncated geometric noise plus the consumer's optimal remap is optimal for counts), randomised
response (optimal for Hamming loss under a uniform prior on k symbols, every pair neighbours:
``d*(ε) = (k − 1)/(k − 1 + e^ε)``), evaluated in mpmath or Fractions on the floats as stored
when the bracket must hold in floating point. Every returned mechanism's level is recomputed
with :func:`dpcap.dp_epsilon` here.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import dpcap
from dpcap.errors import ConvergenceWarning, NeighborError, ParameterError, PriorError, Status
from dpcap.mechanisms import truncated_geometric
from dpcap.result import DistortionResult
from dpcap.solvers.dplp import MechanismLP, lagrangian_bound, lift, mixing_weight
from dpcap.solvers.status import LP_SOLVERS, EngineStatus
from dpcap.tradeoffs.mechanism_design import optimal_mechanism

FloatArray = NDArray[np.float64]

mpmath.mp.dps = 50


def hamming_problem(n: int, m: int) -> tuple[tuple[int, ...], FloatArray]:
    """Domain ``{0..m−1}^n`` and the Hamming distance between databases (outputs = databases)."""
    shape = (m,) * n
    db = np.array(np.unravel_index(np.arange(m**n), shape)).T
    return shape, (db[:, None, :] != db[None, :, :]).sum(axis=-1).astype(float)


def count_losses(n: int) -> dict[str, FloatArray]:
    x = np.arange(n + 1)
    diff = x[:, None] - x[None, :]
    return {"0-1": (diff != 0).astype(float), "abs": np.abs(diff).astype(float)}


def geometric_remap_value(prior: FloatArray, loss: FloatArray, eps: float) -> float:
    """Truncated geometric noise, then for each noisy z the y of least posterior loss."""
    G = truncated_geometric(len(prior) - 1, eps).matrix
    joint = prior[:, None] * G  # P(x, z)
    return float(((joint.T @ loss).min(axis=1)).sum())


def assert_verified(
    res: DistortionResult,
    eps: float,
    neighbors: str = "hamming",
    shape: tuple[int, ...] | None = None,
) -> None:
    """The level recomputed by :func:`dpcap.dp_epsilon` on the domain is at most ε.

    The mechanism is ε-DP with its level rounded up (a few ulps), so the computed level is at
    most ε itself, not ε(1 + 1e-9) as before issue 10.
    """
    mechanism = dpcap.Mechanism(res.mechanism, shape or (res.mechanism.shape[0],))
    level = dpcap.dp_epsilon(mechanism, neighbors=neighbors)
    assert level == pytest.approx(res.dp_level, rel=1e-12, abs=1e-13)
    assert level <= eps
    np.testing.assert_allclose(res.mechanism.sum(axis=1), 1.0, atol=1e-12)
    assert (res.mechanism >= 0).all()


# --- optimal_mechanism: theorems ------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("eps", [0.5, 1.0])
@pytest.mark.parametrize("loss_name", ["0-1", "abs"])
def test_geometric_mechanism_with_remap_is_optimal_for_counts(
    n: int, eps: float, loss_name: str
) -> None:
    """Ghosh–Roughgarden–Sundararajan: uniform prior on {0..n}, line neighbours."""
    loss = count_losses(n)[loss_name]
    prior = np.full(n + 1, 1.0 / (n + 1))
    expected = geometric_remap_value(prior, loss, eps)
    res = optimal_mechanism(prior, loss, eps, neighbors="line")
    assert res.lower <= expected + 1e-12
    assert res.upper >= expected - 1e-12
    assert res.value == pytest.approx(expected, abs=1e-9)
    assert res.status is Status.CONVERGED
    assert_verified(res, eps, neighbors="line")


def test_geometric_optimality_holds_for_any_prior() -> None:
    """GRS is universal: the same holds for a non-uniform prior."""
    prior = np.random.default_rng(7).dirichlet(np.ones(6))
    loss = count_losses(5)["abs"]
    res = optimal_mechanism(prior, loss, 0.7, neighbors="line")
    assert res.value == pytest.approx(geometric_remap_value(prior, loss, 0.7), abs=1e-9)
    assert_verified(res, 0.7, neighbors="line")


def test_randomized_response_is_optimal_for_one_bit() -> None:
    res = optimal_mechanism([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 2.0)
    assert res.value == pytest.approx(1 / (1 + math.e**2), abs=1e-10)
    assert res.lower <= 1 / (1 + math.e**2) <= res.upper + 1e-15
    assert_verified(res, 2.0)


@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_every_solver_brackets_the_same_optimum(solver: str) -> None:
    loss = count_losses(5)["abs"]
    prior = np.full(6, 1 / 6)
    expected = geometric_remap_value(prior, loss, 1.0)
    res = optimal_mechanism(prior, loss, 1.0, neighbors="line", solver=solver)
    assert res.method == f"lp/{solver}"
    assert res.lower - 1e-12 <= expected <= res.upper + 1e-12
    assert res.value == pytest.approx(expected, abs=1e-8)
    assert_verified(res, 1.0, neighbors="line")


def test_raw_lp_mechanism_is_repaired_at_64_inputs() -> None:
    """HiGHS's matrix is not ε-DP at all (ε = ∞ from zeros against tiny entries)."""
    n = 64
    x = np.arange(n)
    loss = np.abs(x[:, None] - x[None, :]).astype(float)
    # line neighbours on 64 inputs: HiGHS certifies 2e-7 only (documented), hence tol
    res = optimal_mechanism(
        np.full(n, 1 / n), loss, 1.0, neighbors="line", solver="HIGHS", tol=1e-6
    )
    details = dict(res.details)
    assert details["raw_dp_level"] > 1.0 + 1e-6
    assert_verified(res, 1.0, neighbors="line")
    assert res.dp_level == pytest.approx(1.0, rel=1e-9)
    assert res.upper - details["distortion_before_repair"] < 1e-8  # the repair costs little


def test_closed_forms_at_zero_and_infinity() -> None:
    loss = count_losses(4)["abs"]
    prior = np.array([0.1, 0.2, 0.3, 0.2, 0.2])
    zero = optimal_mechanism(prior, loss, 0.0, neighbors="line")
    assert zero.value == pytest.approx(min(prior @ loss), abs=1e-15)  # best constant output
    assert 0.0 <= zero.upper - zero.lower <= 1e-14  # exact, up to the rounding allowance
    assert zero.dp_level == 0.0
    assert zero.method == "closed-form"
    inf = optimal_mechanism(prior, loss, math.inf, neighbors="line")
    assert inf.value == 0.0
    assert inf.lower == 0.0
    np.testing.assert_array_equal(inf.mechanism, np.eye(5))


@pytest.mark.parametrize("eps", [1e-18, 1e-6, 1e-3])
def test_small_eps_is_certified(eps: float) -> None:
    """Near ε = 0 the best 0-DP row is nearly optimal; the bracket still closes."""
    loss = count_losses(7)["abs"]
    prior = np.full(8, 1 / 8)
    res = optimal_mechanism(prior, loss, eps, neighbors="line")
    expected = geometric_remap_value(prior, loss, eps)
    assert res.lower - 1e-12 <= expected <= res.upper + 1e-12
    assert res.status is Status.CONVERGED
    assert res.value == pytest.approx(expected, abs=1e-9)
    assert_verified(res, eps, neighbors="line")


def test_huge_eps_falls_back_on_a_closed_form_bracket() -> None:
    """At ε = 60 the LP has coefficients e^60; the ε = ∞ optimum mixed with a 0-DP row wins."""
    loss = count_losses(7)["abs"]
    res = optimal_mechanism(np.full(8, 1 / 8), loss, 60.0, neighbors="line")
    assert res.lower == 0.0  # d*(∞) = 0 bounds every d*(ε) from below
    assert 0.0 < res.upper < 1e-20
    assert res.status is Status.CONVERGED
    assert_verified(res, 60.0, neighbors="line")


def test_components_of_the_neighbour_graph_are_separate() -> None:
    """Rows 0–1 are neighbours, rows 2–3 too; each pair gets its own constant row at ε = 0."""
    loss = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]])
    res = optimal_mechanism(np.full(4, 0.25), loss, 0.0, neighbors=[[0, 1], [2, 3]])
    assert res.value == 0.0
    # a row without neighbours is set in closed form at any ε
    lone = optimal_mechanism(np.full(3, 1 / 3), 1 - np.eye(3), 0.5, neighbors=[[0, 1]])
    np.testing.assert_array_equal(lone.mechanism[2], [0.0, 0.0, 1.0])


def test_database_domain_with_shape() -> None:
    """Two binary entries, release the database: ε-DP per entry under Hamming neighbours."""
    shape, dist = hamming_problem(2, 2)
    res = optimal_mechanism(np.full((2, 2), 0.25), dist, 1.0)
    assert res.value == pytest.approx(2 / (1 + math.e), abs=1e-9)  # per-entry RR
    assert_verified(res, 1.0, shape=shape)  # the shape is taken from the prior's


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 5),
    k=st.integers(2, 4),
    eps=st.floats(0.05, 4.0),
)
def test_random_problems_bracket_and_monotone(seed: int, n: int, k: int, eps: float) -> None:
    """lower ≤ upper, the mechanism is verified ε-DP, and d*(ε) does not increase with ε."""
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.ones(n))
    loss = rng.random((n, k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = optimal_mechanism(prior, loss, eps)
        b = optimal_mechanism(prior, loss, 1.5 * eps)
    assert a.lower <= a.upper
    assert b.lower <= b.upper
    assert b.lower <= a.upper + 1e-12  # d*(1.5ε) ≤ d*(ε)
    assert_verified(a, eps)
    assert a.upper - a.lower <= 1e-6


# --- certificates that hold in floating point (issue 10, item 11) ----------------------------


def exactly_private(W: FloatArray, eps: float, pairs: list[tuple[int, int]]) -> bool:
    """``W[x, y] ≤ e^ε W[x', y]`` for both orders of every pair, in mpmath at 50 digits.

    The floats of ``W`` are exact in mpmath and ``e^ε`` is irrational for rational ε ≠ 0, so a
    50-digit comparison decides the exact inequality.
    """
    t = mpmath.exp(mpmath.mpf(eps))
    rows = [[mpmath.mpf(float(v)) for v in row] for row in W]
    for a, b in pairs:
        for x, z in ((a, b), (b, a)):
            for y in range(W.shape[1]):
                if rows[x][y] > t * rows[z][y]:
                    return False
    return True


def rr_truth(k: int, eps: float) -> mpmath.mpf:
    """``d*(ε)`` of Hamming loss under the stored uniform prior ``fl(1/k)`` (sum exactly 1.0)."""
    assert np.full(k, 1.0 / k).sum() == 1.0  # so the validated prior is fl(1/k) itself
    mass = k * mpmath.mpf(1.0 / k)  # the exact sum of the stored prior
    return mass * (k - 1) / (k - 1 + mpmath.exp(mpmath.mpf(eps)))


@pytest.mark.parametrize("k", [2, 3, 5, 8, 16])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, math.log(3), 5.0])
def test_bracket_holds_in_floating_point_for_randomized_response(k: int, eps: float) -> None:
    """k-ary randomised response is optimal (Hamming loss, uniform prior, local DP).

    Before issue 10 the returned mechanism sat on ``e^ε`` with rounding on either side: its level
    passed ``≤ ε(1 + 1e-9)`` while above ε, and ``upper`` (its loss, not rounded up) fell below
    the exact ``d*(ε)`` by 2e-17 to 2e-13 in 17 of these 25 cases, with status converged.
    """
    res = optimal_mechanism(np.full(k, 1.0 / k), 1.0 - np.eye(k), eps)
    truth = rr_truth(k, eps)
    assert mpmath.mpf(res.lower) <= truth <= mpmath.mpf(res.upper)
    assert abs(res.value - float(truth)) <= 1e-9
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    assert exactly_private(res.mechanism, eps, pairs)
    assert res.status is Status.CONVERGED
    assert_verified(res, eps)


@pytest.mark.parametrize("eps", [0.5, math.log(3), 2.0])
def test_bracket_holds_on_a_database_domain(eps: float) -> None:
    """{0,1}², uniform prior, Hamming distortion: per-entry RR, ``d* = 2/(1 + e^ε)``."""
    shape, dist = hamming_problem(2, 2)
    res = optimal_mechanism(np.full((2, 2), 0.25), dist, eps)
    truth = 2 / (1 + mpmath.exp(mpmath.mpf(eps)))
    assert mpmath.mpf(res.lower) <= truth <= mpmath.mpf(res.upper)
    assert abs(res.value - float(truth)) <= 1e-9
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4) if bin(a ^ b).count("1") == 1]
    assert exactly_private(res.mechanism, eps, pairs)
    assert_verified(res, eps, shape=shape)


DECIMAL_PRIORS = [[0.1, 0.2, 0.3, 0.2, 0.2], [0.15, 0.25, 0.35, 0.1, 0.15]]


@pytest.mark.parametrize("prior", DECIMAL_PRIORS)
@pytest.mark.parametrize("slope", [0.3, 0.7])
def test_closed_forms_hold_in_floating_point(prior: list[float], slope: float) -> None:
    """ε = 0 and ε = ∞ in exact rational arithmetic on the stored floats.

    Before issue 10 both returned ``[v, v]`` with ``v`` the rounded sum, which missed the exact
    ``d*(0) = min_y Σ_x p_x ℓ(x, y)`` and ``d*(∞) = Σ_x p_x min_y ℓ(x, y)`` by 3e-18 to 6e-17.
    """
    p = np.array(prior)
    assert p.sum() == 1.0  # the validated prior is p itself
    x = np.arange(5)
    loss = 0.1 + slope * np.abs(x[:, None] - x[None, :])
    P = [Fraction(float(v)) for v in p]
    L = [[Fraction(float(v)) for v in row] for row in loss]
    d_zero = min(sum(P[i] * L[i][j] for i in range(5)) for j in range(5))  # one component
    d_inf = sum(P[i] * min(L[i]) for i in range(5))
    zero = optimal_mechanism(p, loss, 0.0, neighbors="line")
    inf = optimal_mechanism(p, loss, math.inf, neighbors="line")
    assert Fraction(zero.lower) <= d_zero <= Fraction(zero.upper)
    assert Fraction(inf.lower) <= d_inf <= Fraction(inf.upper)
    assert zero.upper - zero.lower <= 1e-14
    assert inf.upper - inf.lower <= 1e-14
    assert zero.status is Status.CONVERGED
    assert inf.status is Status.CONVERGED
    assert zero.dp_level == 0.0


@pytest.mark.parametrize("eps", [5e-324, 1e-17])
@pytest.mark.parametrize(
    ("shape", "relation"), [((2,), "hamming"), ((3,), "all"), ((2, 2), "hamming")]
)
def test_eps_whose_exponential_rounds_to_one(
    eps: float, shape: tuple[int, ...], relation: str
) -> None:
    """``e^ε`` rounds to 1: the best 0-DP mechanism, bracketed in closed form without an LP.

    Before, the bracket was the rounded ``d*(0)`` alone, 1e-17 below the exact one here, and for
    the local-DP problem on 2 rows the repair divided by ``e^ε − 1 = 0`` at ε = 5e-324 (a
    RuntimeWarning, an error under pytest). As ``d*(ε)`` lies in ``[d*(0) − ε·r·(d*(0) − d_min),
    d*(0)]`` (``e^{−εr} ≥ 1 − εr`` in the closed-form bound of the Notes; radius r ≤ 2), the
    bracket must meet that interval, computed exactly in Fractions.
    """
    n = math.prod(shape)
    rng = np.random.default_rng(0)
    prior = rng.dirichlet(np.ones(n))
    loss = rng.random((n, 3))
    res = optimal_mechanism(prior, loss, eps, shape=shape, neighbors=relation)
    stored = prior / prior.sum()  # the validation's normalisation (prior sums to 1 ± 1 ulp)
    P = [Fraction(float(v)) for v in stored]
    L = [[Fraction(float(v)) for v in row] for row in loss]
    d_zero = min(sum(P[i] * L[i][j] for i in range(n)) for j in range(3))  # connected graphs
    d_min = sum(P[i] * min(L[i]) for i in range(n))
    assert Fraction(res.lower) <= d_zero
    assert d_zero - Fraction(eps) * 2 * (d_zero - d_min) <= Fraction(res.upper)
    assert res.upper - res.lower <= 1e-14
    assert res.status is Status.CONVERGED
    assert res.method == "closed-form"
    assert (res.mechanism == res.mechanism[0]).all()  # one constant row: 0-DP
    assert res.dp_level == 0.0


def test_default_tolerance_is_that_of_every_query() -> None:
    """tol defaults to 1e-9 (it was 1e-6): an LP certified to 2e-7 only is not "converged"."""
    assert inspect.signature(optimal_mechanism).parameters["tol"].default == 1e-9
    res = optimal_mechanism([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 1.0)
    assert res.tol == 1e-9
    # line neighbours and |x − y| on 64 inputs, HiGHS: a documented class where 1e-9 is not met
    n = 64
    x = np.arange(n)
    loss = np.abs(x[:, None] - x[None, :]).astype(float)
    with pytest.warns(ConvergenceWarning, match=r"certified gap .* > tol 1e-09"):
        res = optimal_mechanism(np.full(n, 1 / n), loss, 1.0, neighbors="line", solver="HIGHS")
    assert res.status is Status.INACCURATE
    expected = geometric_remap_value(np.full(n, 1 / n), loss, 1.0)
    assert res.lower - 1e-12 <= expected <= res.upper + 1e-12


# --- the repair ------------------------------------------------------------------------------


def rr(eps: float) -> FloatArray:
    """Binary randomised response at level ε."""
    keep = math.exp(eps) / (1 + math.exp(eps))
    return np.array([[keep, 1 - keep], [1 - keep, keep]])


PAIR = (np.array([0]), np.array([1]))


def test_mixing_weight_restores_the_constraint_and_is_minimal() -> None:
    eps = 1.0
    W = rr(eps + 1e-3)  # violates ε = 1 slightly
    u = np.array([0.5, 0.5])
    lam = mixing_weight(W, u, *PAIR, eps)
    assert 0 < lam < 1e-2
    repaired = (1 - lam) * W + lam * u
    assert dpcap.dp_epsilon(repaired) <= eps * (1 + 1e-12)
    smaller = (1 - lam * (1 - 1e-6)) * W + lam * (1 - 1e-6) * u
    assert dpcap.dp_epsilon(smaller) > eps
    # closed form: (1 − λ)a + λ/2 = e^ε((1 − λ)b + λ/2)
    a, b, t = W[0, 0], W[1, 0], math.e
    assert lam == pytest.approx((a - t * b) / ((a - t * b) + (t - 1) / 2), rel=1e-12)


def test_mixing_weight_edge_cases() -> None:
    u = np.array([0.5, 0.5])
    assert mixing_weight(rr(0.5), u, *PAIR, 1.0) == 0.0  # already private
    assert mixing_weight(rr(0.5), u, *PAIR, 0.0) == 1.0  # only a 0-DP row is 0-DP
    assert mixing_weight(np.eye(2), np.array([1.0, 0.0]), *PAIR, 1.0) == 1.0  # u_y = 0


def test_lift_is_the_least_private_majorant() -> None:
    """A point mass in column 0 lifts to the geometric profile e^{−ε·dist}."""
    n, eps = 5, 0.8
    first, second = np.arange(n - 1), np.arange(1, n)
    W = np.zeros((n, 2))
    W[0, 0], W[:, 1] = 1.0, 0.5
    V = lift(W, first, second, eps)
    np.testing.assert_allclose(V[:, 0], np.exp(-eps * np.arange(n)), rtol=1e-14)
    np.testing.assert_array_equal(V[:, 1], 0.5)  # already feasible: unchanged
    feasible = np.exp(-0.3 * np.abs(np.arange(n)[:, None] - np.arange(3)[None, :]))
    np.testing.assert_allclose(lift(feasible, first, second, eps), feasible, rtol=1e-14)


def test_lagrangian_bound_is_valid_for_any_multipliers() -> None:
    rng = np.random.default_rng(0)
    cost = rng.random((4, 3)) / 4
    first, second = np.array([0, 1, 2]), np.array([1, 2, 3])
    opt = MechanismLP(cost, first, second, solver="HIGHS").solve(0.5).objective
    for _ in range(20):
        mu = rng.normal(size=(6, 3))  # negative entries are clipped
        assert lagrangian_bound(cost, first, second, 0.5, mu) <= opt + 1e-12
    assert lagrangian_bound(cost, first, second, 0.5, np.zeros((6, 3))) == pytest.approx(
        cost.min(axis=1).sum(), abs=1e-15
    )


# --- errors ----------------------------------------------------------------------------------


def test_errors_name_the_argument() -> None:
    prior, loss = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ParameterError, match=r"solver must be one of"):
        optimal_mechanism(prior, loss, 1.0, solver="GUROBI")
    with pytest.raises(
        ParameterError,
        match=r"loss must be a 2-D matrix loss\[x, y\] with one row per database \(2\)",
    ):
        optimal_mechanism(prior, [[0.0, 1.0]], 1.0)
    with pytest.raises(ParameterError, match=r"loss must be finite, got nan at index \(0, 1\)"):
        optimal_mechanism(prior, [[0.0, np.nan], [1.0, 0.0]], 1.0)
    with pytest.raises(PriorError, match=r"prior must have 4 entries"):
        optimal_mechanism(prior, loss, 1.0, shape=(2, 2))
    with pytest.raises(PriorError, match=r"prior must sum to 1"):
        optimal_mechanism([0.5, 0.6], loss, 1.0)
    with pytest.raises(ParameterError, match=r"eps must be >= 0"):
        optimal_mechanism(prior, loss, -1.0)
    with pytest.raises(ParameterError, match=r"eps must be a scalar"):
        optimal_mechanism(prior, loss, [1.0, 2.0])
    with pytest.raises(ParameterError, match=r"tol must be a positive finite number"):
        optimal_mechanism(prior, loss, 1.0, tol=0.0)
    with pytest.raises(NeighborError, match=r"neighbors must be one of"):
        optimal_mechanism(prior, loss, 1.0, neighbors="ring")


@pytest.mark.parametrize("solver", LP_SOLVERS)
def test_engine_is_built_once_and_resolved_across_eps(solver: str) -> None:
    loss = count_losses(4)["abs"]
    prior = np.full(5, 0.2)
    first, second = dpcap.neighbor_pairs((5,), "line")
    lp = MechanismLP(prior[:, None] * loss, first, second, solver=solver)
    for eps in (1.0, 0.5, 1.0):
        sol = lp.solve(eps)
        assert sol.status in (EngineStatus.OPTIMAL, EngineStatus.INACCURATE)
        assert sol.objective == pytest.approx(geometric_remap_value(prior, loss, eps), abs=1e-7)
        assert sol.residual < 1e-6
        assert sol.multipliers.shape == (2 * first.size, 5)


def test_engine_validates_its_arrays() -> None:
    cost = np.ones((2, 2))
    with pytest.raises(ValueError, match=r"solver must be one of"):
        MechanismLP(cost, np.array([0]), np.array([1]), solver="glpk")
    with pytest.raises(ValueError, match=r"pairs must join two different rows"):
        MechanismLP(cost, np.array([0]), np.array([0]), solver="HIGHS")
    with pytest.raises(ValueError, match=r"eps must be a finite positive number"):
        MechanismLP(cost, np.array([0]), np.array([1]), solver="HIGHS").solve(0.0)


def test_unconverged_bracket_warns() -> None:
    loss = count_losses(5)["abs"]
    with pytest.warns(ConvergenceWarning, match=r"not converged: certified gap"):
        res = optimal_mechanism(np.full(6, 1 / 6), loss, 1.0, neighbors="line", tol=1e-300)
    assert res.status is Status.INACCURATE


def test_import_does_not_load_cvxpy() -> None:
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, dpcap.tradeoffs.mechanism_design, dpcap.tradeoffs.epsilon_distortion; "
        "print('cvxpy' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


# --- the signature rule and solver names ------------------------------------------------------


def test_eps_is_positional_or_keyword() -> None:
    prior, loss = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    by_keyword = optimal_mechanism(prior, loss, eps=1.0)
    assert by_keyword.value == optimal_mechanism(prior, loss, 1.0).value
    assert by_keyword.target == 1.0
    with pytest.raises(TypeError):
        optimal_mechanism(prior=prior, loss=loss, eps=1.0)  # type: ignore[call-arg]


@pytest.mark.parametrize("spelling", ["clarabel", "highs", "Highs", "CLARABEL"])
def test_solver_names_are_case_insensitive(spelling: str) -> None:
    res = optimal_mechanism([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 1.0, solver=spelling)
    assert res.method == f"lp/{spelling.upper()}"
    assert res.value == pytest.approx(1 / (1 + math.e), abs=1e-9)
    assert MechanismLP(np.ones((2, 2)), np.array([0]), np.array([1]), solver=spelling).solver == (
        spelling.upper()
    )


def test_solver_error_lists_the_names() -> None:
    with pytest.raises(ParameterError, match=r"solver must be one of .*CLARABEL.*case-insensitive"):
        optimal_mechanism([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 1.0, solver="glpk")


@pytest.mark.parametrize("metric", [None, [[0.0, 5.0, 10.0], [5.0, 0.0, 5.0], [10.0, 5.0, 0.0]]])
def test_an_eps_whose_factor_overflows_is_refused_naming_the_limit(metric: object) -> None:
    """``e^{εd}`` past ``log(DBL_MAX) = 709.78`` cannot be a ratio row: a clear error (it was an
    OverflowError from inside the repair), naming the largest usable ε (709.78 without a
    metric; 709.78/5 when the farthest constrained pair — the adjacent ones — is at 5). Just
    below the limit the answer is still certified and ε·d-private; ε = ∞ is no constraint."""
    loss = np.abs(np.subtract.outer(np.arange(3), np.arange(3))).astype(float)
    limit = math.log(sys.float_info.max) / (1.0 if metric is None else 5.0)  # 709.78
    for eps in (limit * 1.001, 800.0, 1e300):
        with pytest.raises(ParameterError, match=re.escape(f"eps={eps!r} is too large:")):
            optimal_mechanism([1 / 3] * 3, loss, eps, metric=metric)
    res = optimal_mechanism([1 / 3] * 3, loss, limit * 0.999, metric=metric)
    assert res.lower <= res.upper < 1e-300
    if metric is None:
        assert res.dp_level <= limit * 0.999
    res = optimal_mechanism([1 / 3] * 3, loss, math.inf, metric=metric)
    assert res.upper == 0.0
