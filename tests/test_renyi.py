"""Rényi capacities: closed forms, the certified bracket, α ↦ C_α, orderings and the theorems.

``C_α = max_p I_α^S(p, W) = min_Q max_x D_α(W_x ‖ Q)`` (Sibson; the same supremum for Arimoto
and Augustin–Csiszár; docs/mathematics.rst §4, the Rényi-capacity article, Hsu et al. §III-A).
The contract under test: ``lower ≤ C_α ≤ upper`` for every result and ``upper − lower ≤ tol``
when converged.
Every expected value is a closed form derived here (checked in mpmath where it is not obvious)
or a quantity computed independently in this file, never the code's own output.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence

import mpmath as mp  # type: ignore[import-untyped]
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import xlogy

import dpcap
from dpcap import (
    CapacityResult,
    ConvergenceWarning,
    ParameterError,
    RenyiProfile,
    SolverError,
    Status,
)
from dpcap.mechanisms import binary_symmetric, erasure, per_entry, randomized_response
from dpcap.solvers import conic
from dpcap.testing import positive_channels

FloatArray = NDArray[np.float64]
MpRows = Sequence[Sequence[mp.mpf]]
Vector = Sequence[float] | FloatArray
Matrix = Sequence[Sequence[float]] | FloatArray

#: Rounding slack when a closed form is compared with a bracket end (both are ~1 nat).
SLACK = 1e-12
TOL = 1e-9
INF = math.inf
LN2 = math.log(2.0)
ORDERS = (0.3, 0.5, 2.0, 5.0, 20.0)

needs_conic = pytest.mark.skipif(
    not hasattr(conic, "renyi_capacity_conic"),
    reason="dpcap.solvers.conic.renyi_capacity_conic (the power-cone engine) is not there yet",
)


# --------------------------------------------------------------------------------------------
# Independent references
# --------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _mp_precision() -> Iterator[None]:
    """40 digits for every mpmath reference, without touching other modules' precision."""
    with mp.workdps(40):
        yield


def dirichlet(seed: int, rows: int, cols: int, concentration: float = 1.0) -> FloatArray:
    W: FloatArray = np.random.default_rng(seed).dirichlet(np.full(cols, concentration), rows)
    return W


def mp_bsc(p: float) -> list[list[mp.mpf]]:
    q = mp.mpf(p)
    return [[1 - q, q], [q, 1 - q]]


def mp_rr(k: int, eps: float) -> list[list[mp.mpf]]:
    """k-ary randomised response: ``e^ε/(e^ε + k − 1)`` on the diagonal, ``1/(e^ε + k − 1)`` off."""
    e = mp.exp(mp.mpf(eps))
    return [[e / (e + k - 1) if x == y else 1 / (e + k - 1) for y in range(k)] for x in range(k)]


def symmetric_capacity(rows: MpRows, alpha: float) -> mp.mpf:
    """C_α of a symmetric channel, whose optimal prior is uniform (Sibson at the uniform prior).

    ``C_α = α/(α−1) · log Σ_y (Σ_x W_xy^α / k)^{1/α}``.
    """
    a = mp.mpf(alpha)
    k = len(rows)
    total = mp.fsum(
        mp.fsum(rows[x][y] ** a for x in range(k)) ** (1 / a) / k ** (1 / a)
        for y in range(len(rows[0]))
    )
    return a / (a - 1) * mp.log(total)


def mp_renyi_divergence(P: Vector, Q: Vector, alpha: float) -> mp.mpf:
    """``D_α(P ‖ Q) = 1/(α−1) log Σ_y P_y^α Q_y^{1−α}`` for positive Q on the support of P."""
    a = mp.mpf(alpha)
    terms = [mp.mpf(p) ** a * mp.mpf(q) ** (1 - a) for p, q in zip(P, Q, strict=True) if p > 0]
    return mp.log(mp.fsum(terms)) / (a - 1)


def mp_diameter(W: FloatArray, alpha: float) -> mp.mpf:
    """``max_{x ≠ x'} D_α(W_x ‖ W_x')`` for a channel with positive entries."""
    n = W.shape[0]
    return max(
        mp_renyi_divergence(W[x], W[xp], alpha) for x in range(n) for xp in range(n) if x != xp
    )


def shannon_mi(p: FloatArray, W: FloatArray) -> float:
    q = p @ W
    return float(np.sum(xlogy(p[:, None] * W, W)) - np.sum(xlogy(q, q)))


def augustin_objective(p: FloatArray, W: FloatArray, Q: FloatArray, alpha: float) -> float:
    """``Σ_x p_x D_α(W_x ‖ Q)`` (the Augustin–Csiszár objective, minimised over Q)."""
    return float(sum(p[x] * mp_renyi_divergence(W[x], Q, alpha) for x in range(len(p)) if p[x]))


def mp_augustin_two_outputs(p: Vector, W: Matrix, alpha: float) -> float:
    """``min_Q Σ_x p_x D_α(W_x ‖ Q)`` for a channel with two outputs, directly in mpmath.

    With ``Q = (s, 1 − s)`` and ``S_x(s) = W_x0^α s^{1−α} + W_x1^α (1−s)^{1−α}`` the objective is
    ``F(s) = Σ_x p_x log S_x / (α−1)``, convex in s, with ``F'(s) = −Σ_x p_x (W_x0^α s^{−α} −
    W_x1^α (1−s)^{−α}) / S_x``; F' → −∞ at 0⁺ and +∞ at 1⁻ when both outputs are reached, so the
    minimiser is the root of F' in (0, 1).
    """
    a = mp.mpf(alpha)
    rows = [(mp.mpf(r[0]), mp.mpf(r[1])) for r in W]
    weights = [mp.mpf(v) for v in p]

    def S(x: int, s: mp.mpf) -> mp.mpf:
        w0, w1 = rows[x]
        return w0**a * s ** (1 - a) + w1**a * (1 - s) ** (1 - a)

    def dF(s: mp.mpf) -> mp.mpf:
        return -mp.fsum(
            weights[x] * (rows[x][0] ** a * s ** (-a) - rows[x][1] ** a * (1 - s) ** (-a)) / S(x, s)
            for x in range(len(rows))
        )

    s = mp.findroot(dF, (mp.mpf("1e-12"), 1 - mp.mpf("1e-12")), solver="anderson")
    return float(mp.fsum(weights[x] * mp.log(S(x, s)) for x in range(len(rows))) / (a - 1))


def assert_certified(res: CapacityResult, closed: float, tol: float = TOL) -> None:
    """The bracket contains the closed form and is closed to ``tol``."""
    assert res.status is Status.CONVERGED, res.message
    assert res.lower - SLACK <= closed <= res.upper + SLACK, (res.lower, closed, res.upper)
    assert res.upper - res.lower <= tol
    assert res.value == res.upper


def quietly(fn: Callable[[], CapacityResult]) -> CapacityResult:
    """Run ``fn`` with the (expected) ConvergenceWarning of the naive kind captured and checked."""
    with pytest.warns(ConvergenceWarning, match="not converged"):
        return fn()


# --------------------------------------------------------------------------------------------
# Symmetric channels: closed forms at the uniform prior
# --------------------------------------------------------------------------------------------

#: The channel as the library builds it, and its exact rows (built lazily, at 40 digits).
SYMMETRIC: dict[str, tuple[FloatArray, Callable[[], list[list[mp.mpf]]]]] = {
    "bsc-0.1": (binary_symmetric(0.1).matrix, lambda: mp_bsc(0.1)),
    "bsc-0.3": (binary_symmetric(0.3).matrix, lambda: mp_bsc(0.3)),
    "rr-3-1.0": (randomized_response(3, 1.0).matrix, lambda: mp_rr(3, 1.0)),
    "rr-5-0.5": (randomized_response(5, 0.5).matrix, lambda: mp_rr(5, 0.5)),
}


def test_symmetric_closed_form_reference_values() -> None:
    # BSC(0.1), α = 2: log(2 · ((0.81 + 0.01)/2)^{1/2})·2 = log(4 · 0.41) = log 1.64.
    assert float(symmetric_capacity(mp_bsc(0.1), 2.0)) == pytest.approx(math.log(1.64), abs=1e-15)
    # k-RR at α → ∞ tends to the maximal leakage log(k e^ε / (e^ε + k − 1)).
    expected = math.log(3 * math.e / (math.e + 2))
    assert float(symmetric_capacity(mp_rr(3, 1.0), 1e6)) == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("alpha", ORDERS)
@pytest.mark.parametrize("case", sorted(SYMMETRIC))
def test_symmetric_channels_closed_form(case: str, alpha: float) -> None:
    W, rows = SYMMETRIC[case]
    res = dpcap.renyi_capacity(W, alpha, tol=TOL)
    assert_certified(res, float(symmetric_capacity(rows(), alpha)))
    k = W.shape[0]
    np.testing.assert_allclose(res.prior, np.full(k, 1.0 / k), atol=1e-6)
    assert res.unit == "nats"
    assert res.tol == TOL


@pytest.mark.parametrize("kind", ["arimoto", "augustin"])
def test_symmetric_channel_every_kind_has_the_same_bracket_and_a_uniform_prior(kind: str) -> None:
    W, rows = SYMMETRIC["rr-3-1.0"]
    res = dpcap.renyi_capacity(W, 2.0, kind=kind)
    assert_certified(res, float(symmetric_capacity(rows(), 2.0)))
    np.testing.assert_allclose(res.prior, np.full(3, 1.0 / 3), atol=1e-6)


def test_bits_are_nats_over_log_two() -> None:
    W, rows = SYMMETRIC["bsc-0.1"]
    res = dpcap.renyi_capacity(W, 2.0, unit="bits")
    closed = float(symmetric_capacity(rows(), 2.0)) / LN2
    assert res.unit == "bits"
    assert res.lower - SLACK <= closed <= res.upper + SLACK
    assert res.upper - res.lower <= TOL / LN2


# --------------------------------------------------------------------------------------------
# α = ∞, α = 1 and continuity at α = 1
# --------------------------------------------------------------------------------------------

INFINITY_CASES = {
    "bsc-0.1": binary_symmetric(0.1).matrix,
    "rr-4-2.0": randomized_response(4, 2.0).matrix,
    "z": np.array([[1.0, 0.0], [0.5, 0.5]]),
    "dirichlet-zeros": np.array([[0.2, 0.0, 0.8], [0.0, 0.6, 0.4], [0.5, 0.5, 0.0]]),
    "dirichlet-4x5": dirichlet(11, 4, 5),
}


@pytest.mark.parametrize("case", sorted(INFINITY_CASES))
def test_order_infinity_is_maximal_leakage(case: str) -> None:
    W = INFINITY_CASES[case]
    expected = float(mp.log(mp.fsum(mp.mpf(float(v)) for v in W.max(axis=0))))
    res = dpcap.renyi_capacity(W, INF)
    assert res.status is Status.CONVERGED
    # the closed form, rounded outward (docs/mathematics.rst §8)
    exact = mp.log(mp.fsum(mp.mpf(float(v)) for v in W.max(axis=0)))
    assert mp.mpf(res.lower) <= exact <= mp.mpf(res.upper)
    assert res.upper - res.lower <= 1e-14
    assert res.value == pytest.approx(expected, abs=1e-14)  # the upper end, rounded up
    assert res.value == pytest.approx(dpcap.max_leakage(W), abs=1e-14)


def test_order_infinity_of_rr_closed_form() -> None:
    k, eps = 4, 2.0
    res = dpcap.renyi_capacity(randomized_response(k, eps), INF)
    truth = math.log(k * math.exp(eps) / (math.exp(eps) + k - 1))
    assert res.lower <= truth + 1e-15
    assert res.value == pytest.approx(truth, abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1])
def test_order_one_is_shannon_capacity(seed: int) -> None:
    W = dirichlet(seed, 4, 5)
    res = dpcap.renyi_capacity(W, 1.0)
    shannon = dpcap.capacity(W)
    assert res.status is Status.CONVERGED
    assert res.lower == pytest.approx(shannon.lower, abs=1e-15)
    assert res.upper == pytest.approx(shannon.upper, abs=1e-15)
    assert shannon_mi(res.prior, W) == pytest.approx(res.lower, abs=1e-12)


def test_order_one_of_bsc_is_log_two_minus_binary_entropy() -> None:
    p = 0.1
    closed = LN2 + p * math.log(p) + (1 - p) * math.log(1 - p)
    assert_certified(dpcap.renyi_capacity(binary_symmetric(p), 1.0), closed)


CONTINUITY_CASES = {
    "bsc-0.1": binary_symmetric(0.1).matrix,
    "dirichlet-0": dirichlet(0, 4, 5),
    "dirichlet-1": dirichlet(1, 3, 3),
    "z": np.array([[1.0, 0.0], [0.5, 0.5]]),
}


@pytest.mark.parametrize("case", sorted(CONTINUITY_CASES))
def test_orders_next_to_one_are_continuous_with_shannon(case: str) -> None:
    W = CONTINUITY_CASES[case]
    shannon = dpcap.capacity(W, tol=TOL)
    above = dpcap.renyi_capacity(W, 1.0 + 1e-9, tol=TOL)
    below = dpcap.renyi_capacity(W, 1.0 - 1e-9, tol=TOL)
    for res in (above, below):
        assert res.status is Status.CONVERGED, res.message
        assert res.upper - res.lower <= TOL
        assert abs(res.value - shannon.value) <= 1e-8
    # C_α is non-decreasing: C_{1+} ≥ C_1 ≥ C_{1−}, so the brackets must allow it.
    assert above.upper >= shannon.lower - TOL
    assert below.lower <= shannon.upper + TOL


# --------------------------------------------------------------------------------------------
# α = 0: C_0 = −log min_p max_y P(X ∈ supp W_·y)
# --------------------------------------------------------------------------------------------


def block_pairs(blocks: int, seed: int) -> FloatArray:
    """``2·blocks`` inputs; rows 2b and 2b+1 both live on outputs {2b, 2b+1} (fully there).

    Each column is reached by exactly the two rows of its block, so ``max_y P(supp y) =
    max_b P(block b) ≥ 1/blocks`` with equality at the uniform prior; the uniform Q covers every
    row with ``Q(supp W_x) = 1/blocks``. Hence ``C_0 = log(blocks)`` (both bounds).
    """
    rng = np.random.default_rng(seed)
    W = np.zeros((2 * blocks, 2 * blocks))
    for b in range(blocks):
        W[2 * b : 2 * b + 2, 2 * b : 2 * b + 2] = rng.dirichlet(np.ones(2), size=2)
    return W


def cycle(k: int) -> FloatArray:
    """Row x lives on outputs {x, x+1 mod k} (the pentagon for k = 5).

    Column y is reached by rows y−1 and y, and ``Σ_y (p_{y−1} + p_y) = 2``, so ``max_y ≥ 2/k``,
    with equality at the uniform prior; the uniform Q gives every row ``Q(supp W_x) = 2/k``.
    Hence ``C_0 = log(k/2)`` — strictly between log of the largest set of disjoint rows (log 2
    for k = 5) and log k.
    """
    W = np.zeros((k, k))
    for x in range(k):
        W[x, x] = 0.3
        W[x, (x + 1) % k] = 0.7
    return W


def missing_shift(k: int, shift: int) -> FloatArray:
    """Full support except ``W[x, x + shift mod k] = 0``: column y misses exactly one row.

    ``max_y P(supp y) = 1 − min_x p_x ≥ 1 − 1/k``, equality at the uniform prior; the uniform Q
    covers each row with ``(k − 1)/k``. Hence ``C_0 = log(k/(k − 1))``.
    """
    W = np.full((k, k), 1.0)
    W[np.arange(k), (np.arange(k) + shift) % k] = 0.0
    out: FloatArray = W / W.sum(axis=1, keepdims=True)
    return out


ZERO_ORDER_CASES = {
    "full-support": (dirichlet(3, 4, 3), 0.0),
    "identity-4": (np.eye(4), math.log(4)),
    "erasure-3-0.4": (erasure(3, 0.4).matrix, 0.0),
    "erasure-5-0.9": (erasure(5, 0.9).matrix, 0.0),
    "block-pairs-3": (block_pairs(3, 0), math.log(3)),
    "cycle-5": (cycle(5), math.log(2.5)),
    "missing-shift-4": (missing_shift(4, 2), math.log(4 / 3)),
}


@pytest.mark.parametrize("case", sorted(ZERO_ORDER_CASES))
def test_order_zero_closed_forms(case: str) -> None:
    W, closed = ZERO_ORDER_CASES[case]
    res = dpcap.renyi_capacity(W, 0.0)
    assert_certified(res, closed)
    # the prior attains the lower end: −log max_y P(supp column y), computed here
    covered = res.prior @ (W > 0)
    assert -math.log(float(covered.max())) == pytest.approx(res.lower, abs=1e-12)
    assert dpcap.sibson_mi(res.prior, W, 0.0) == pytest.approx(res.lower, abs=1e-12)


def test_order_zero_is_below_small_positive_orders() -> None:
    W = cycle(5)
    zero = dpcap.renyi_capacity(W, 0.0)
    small = dpcap.renyi_capacity(W, 0.05)
    assert zero.lower <= small.upper + TOL


# --------------------------------------------------------------------------------------------
# Z-channel at α = 2: Sibson/Augustin prior 1/3, Arimoto √2 − 1, C_2 = log(4/3)
# --------------------------------------------------------------------------------------------

Z = np.array([[1.0, 0.0], [0.5, 0.5]])
P_SIBSON = np.array([2.0 / 3.0, 1.0 / 3.0])
P_ARIMOTO = np.array([2.0 - math.sqrt(2.0), math.sqrt(2.0) - 1.0])
C2_Z = math.log(4.0 / 3.0)


def test_z_channel_order_two_closed_form_is_certified_in_mpmath() -> None:
    """``log(4/3)`` is both a lower bound (a prior) and an upper bound (an output law).

    Prior ``(1 − t, t)``: ``I_2^S = 2 log(√(1 − 3t/4) + √t/2)``, maximised where ``2√(1 − 3t/4) =
    3√t``, i.e. ``t = 1/3``, giving ``2 log(2/√3) = log(4/3)``. Output law ``Q = (3/4, 1/4)``:
    ``D_2(W_0 ‖ Q) = log(4/3)`` and ``D_2(W_1 ‖ Q) = log(1/3 + 1) = log(4/3)``, so the radius is
    at most log(4/3). Arimoto: ``p_A ∝ p_S^{1/2}`` gives ``t = 1/(√2 + 1) = √2 − 1``.
    """
    t = mp.mpf(1) / 3
    sibson = 2 * mp.log(mp.sqrt(1 - 3 * t / 4) + mp.sqrt(t) / 2)
    radius = max(mp_renyi_divergence(row, [0.75, 0.25], 2.0) for row in Z)
    exact = mp.log(mp.mpf(4) / 3)
    assert abs(sibson - exact) < mp.mpf("1e-35")
    assert abs(radius - exact) < mp.mpf("1e-35")
    # Arimoto's definition H_α(X) − H_α^A(X|Y) at p_A, α = 2, written out
    a = mp.mpf(2)
    pa = [2 - mp.sqrt(2), mp.sqrt(2) - 1]
    joint = [[pa[x] * mp.mpf(float(Z[x, y])) for y in range(2)] for x in range(2)]
    h_alpha = mp.log(mp.fsum(v**a for v in pa)) / (1 - a)
    h_cond = (
        a
        / (1 - a)
        * mp.log(mp.fsum(mp.fsum(joint[x][y] ** a for x in range(2)) ** (1 / a) for y in range(2)))
    )
    assert abs(h_alpha - h_cond - exact) < mp.mpf("1e-35")
    assert float(exact) == pytest.approx(C2_Z, abs=1e-16)


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("sibson", 1.0 / 3.0), ("augustin", 1.0 / 3.0), ("arimoto", math.sqrt(2) - 1)],
)
def test_z_channel_optimal_priors(kind: str, expected: float) -> None:
    res = dpcap.renyi_capacity(Z, 2.0, kind=kind)
    assert_certified(res, C2_Z)
    assert res.prior.sum() == pytest.approx(1.0, abs=1e-12)
    assert res.prior[1] == pytest.approx(expected, abs=1e-6)


def test_z_channel_fixed_prior_values_equal_the_capacity() -> None:
    assert dpcap.sibson_mi(P_SIBSON, Z, 2.0) == pytest.approx(C2_Z, abs=1e-9)
    assert dpcap.arimoto_mi(P_ARIMOTO, Z, 2.0) == pytest.approx(C2_Z, abs=1e-9)
    assert dpcap.augustin_mi(P_SIBSON, Z, 2.0) == pytest.approx(C2_Z, abs=1e-9)
    # and Augustin's value is its own definition, minimised directly in mpmath
    assert mp_augustin_two_outputs(P_SIBSON, Z, 2.0) == pytest.approx(C2_Z, abs=1e-12)


# --------------------------------------------------------------------------------------------
# α ↦ C_α: the profile
# --------------------------------------------------------------------------------------------

PROFILE_ALPHAS = [20.0, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5, 2.0, 5.0, INF]


def profile_channel(seed: int) -> FloatArray:
    if seed == 2:  # structural zeros: C_0 > 0
        W = dirichlet(seed, 4, 4)
        W[np.arange(4), (np.arange(4) + 2) % 4] = 0.0
        out: FloatArray = W / W.sum(axis=1, keepdims=True)
        return out
    return dirichlet(seed, 4, 5, concentration=0.5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_profile_is_non_decreasing_and_certified(seed: int) -> None:
    W = profile_channel(seed)
    prof = dpcap.renyi_profile(W, PROFILE_ALPHAS, tol=TOL)
    assert isinstance(prof, RenyiProfile)
    assert len(prof) == len(PROFILE_ALPHAS)
    np.testing.assert_array_equal(prof.alpha, PROFILE_ALPHAS)  # the order given
    assert prof.prior.shape == (len(PROFILE_ALPHAS), W.shape[0])
    assert all(s is Status.CONVERGED for s in prof.status)
    assert np.all(prof.upper - prof.lower <= TOL)
    np.testing.assert_array_equal(prof.value, prof.upper)
    order = np.argsort(prof.alpha)
    values = prof.value[order]
    assert np.all(np.diff(values) >= -TOL), values
    # the ends: C_∞ is the maximal leakage, C_1 Shannon
    # the upper end of C_∞, rounded up by its allowance (docs/mathematics.rst §8)
    assert prof.value[PROFILE_ALPHAS.index(INF)] == pytest.approx(dpcap.max_leakage(W), abs=1e-14)
    assert prof.value[PROFILE_ALPHAS.index(1.0)] == pytest.approx(dpcap.capacity(W).value, abs=TOL)


@pytest.mark.parametrize("seed", [0, 2])
def test_profile_equals_individual_calls(seed: int) -> None:
    W = profile_channel(seed)
    prof = dpcap.renyi_profile(W, PROFILE_ALPHAS, tol=TOL)
    for k, alpha in enumerate(PROFILE_ALPHAS):
        single = dpcap.renyi_capacity(W, alpha, tol=TOL)
        assert abs(prof.value[k] - single.value) <= TOL, alpha
        assert prof.lower[k] <= single.upper + SLACK
        assert single.lower <= prof.upper[k] + SLACK


def test_profile_is_a_sequence_of_capacity_results() -> None:
    """profile[k] is the point result of order alpha[k]; to_frame has one row per order."""
    W = binary_symmetric(0.1)
    alphas = [0.5, 1.0, 2.0, INF]
    prof = dpcap.renyi_profile(W, alphas, tol=TOL)
    assert len(prof) == 4
    for k, point in enumerate(prof):
        assert isinstance(point, CapacityResult)
        assert point.value == prof.value[k]
        assert point.lower == prof.lower[k]
        assert point.status is prof.status[k]
        np.testing.assert_array_equal(point.prior, prof.prior[k])
    # the BSC's C_α = log 2 − H_α(0.1) at every order (symmetric channel, uniform prior)
    for k, a in enumerate(alphas):
        renyi_entropy = (
            -math.log(0.9) if math.isinf(a)
            else -math.log(0.9 * 0.9 + 0.1 * 0.1) if a == 2.0
            else 2 * math.log(math.sqrt(0.9) + math.sqrt(0.1)) if a == 0.5
            else -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))
        )  # fmt: skip
        closed = math.log(2) - renyi_entropy
        assert prof[k].lower - SLACK <= closed <= prof[k].upper + SLACK, a
    assert prof[-1].value == prof.value[3]
    frame = prof.to_frame()
    assert list(frame["alpha"]) == alphas
    assert list(frame["status"]) == ["converged"] * 4
    assert np.allclose(frame["gap"], prof.upper - prof.lower)
    d = prof.to_dict()
    assert d["alpha"][-1] == INF
    assert len(d["points"]) == 4


def test_profile_diameter_band() -> None:
    W = dirichlet(4, 3, 4)
    alphas = [0.5, 2.0, 3.0]
    prof = dpcap.renyi_profile(W, alphas)
    for k, alpha in enumerate(alphas):
        assert prof.diameter[k] == pytest.approx(float(mp_diameter(W, alpha)), abs=1e-12)
        assert prof.upper[k] <= prof.diameter[k] + SLACK
    inf_prof = dpcap.renyi_profile(W, [INF])
    assert inf_prof.diameter[0] == pytest.approx(dpcap.dp_epsilon(W, neighbors="all"), abs=1e-12)


def test_profile_in_bits() -> None:
    W = dirichlet(5, 3, 3)
    nats = dpcap.renyi_profile(W, [0.5, 2.0])
    bits = dpcap.renyi_profile(W, [0.5, 2.0], unit="bits")
    np.testing.assert_allclose(bits.value, nats.value / LN2, rtol=0, atol=TOL)
    assert bits.unit == "bits"


# --------------------------------------------------------------------------------------------
# Cuff & Yu, Lemma 4 (and the article): ε-DP ⇒ C_α ≤ ε for every α
# --------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    W=positive_channels(max_inputs=4, max_outputs=4),
    alpha=st.sampled_from([0.0, 0.5, 1.0, 2.0, 10.0, INF]),
)
def test_epsilon_dp_bounds_every_renyi_capacity(W: FloatArray, alpha: float) -> None:
    eps = dpcap.dp_epsilon(W, neighbors="all")
    res = dpcap.renyi_capacity(W, alpha)
    assert res.status is Status.CONVERGED, res.message
    assert res.lower <= eps + SLACK
    assert res.upper <= eps + TOL
    # and C_α ≤ C_∞ = log Σ_y max_x W_xy, which is ≤ ε
    assert res.lower <= math.log(float(W.max(axis=0).sum())) + SLACK


# --------------------------------------------------------------------------------------------
# The article's naive α-information sup_p D_α(P_XY ‖ P_X P_Y)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_naive_lies_between_radius_and_diameter(seed: int, alpha: float) -> None:
    W = dirichlet(seed, 3, 4)
    sibson = dpcap.renyi_capacity(W, alpha)
    naive = quietly(lambda: dpcap.renyi_capacity(W, alpha, kind="naive"))
    assert naive.status is Status.INACCURATE
    assert naive.value == naive.upper
    assert sibson.lower <= naive.lower + TOL  # sup_p D_α(P_XY ‖ P_X P_Y) ≥ C_α (Sibson's identity)
    assert naive.lower <= naive.upper
    assert naive.upper == pytest.approx(float(mp_diameter(W, alpha)), abs=1e-12)
    # the lower end is attained by the returned prior
    assert dpcap.renyi_mi(naive.prior, W, alpha) == pytest.approx(naive.lower, abs=1e-12)


def test_naive_at_order_one_is_shannon() -> None:
    W = dirichlet(0, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        naive = dpcap.renyi_capacity(W, 1.0, kind="naive")
    shannon = dpcap.capacity(W)
    assert naive.status is Status.CONVERGED
    assert abs(naive.value - shannon.value) <= TOL
    assert naive.upper - naive.lower <= TOL


def test_naive_at_order_infinity_is_the_all_pairs_dp_level() -> None:
    W = dirichlet(1, 3, 4)
    eps = dpcap.dp_epsilon(W, neighbors="all")
    expected = max(
        math.log(W[x, y] / W[xp, y]) for x in range(3) for xp in range(3) for y in range(4)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        naive = dpcap.renyi_capacity(W, INF, kind="naive")
    assert naive.status is Status.CONVERGED
    assert naive.lower == naive.upper
    assert naive.value == pytest.approx(eps, abs=1e-12)
    assert naive.value == pytest.approx(expected, abs=1e-12)


def test_naive_exceeds_sibson_for_bsc_at_order_three() -> None:
    """BSC(0.1), α = 3: the article's sup exceeds the Rényi radius (the issue statement).

    ``f(t) = ½ log Σ_{x,y} p_x W_xy³ q_y^{−2}`` with ``p = (1 − t, t)`` is symmetric in t ↔ 1 − t,
    0 at both ends and has a local *minimum* at t = ½ (where it equals C_3); its maximum is at
    ``t ≈ 0.1359``, found here by the root of f' in mpmath.
    """
    rows = mp_bsc(0.1)

    def f(t: mp.mpf) -> mp.mpf:
        p = [1 - t, t]
        q = [p[0] * rows[0][y] + p[1] * rows[1][y] for y in range(2)]
        return (
            mp.log(mp.fsum(p[x] * rows[x][y] ** 3 / q[y] ** 2 for x in range(2) for y in range(2)))
            / 2
        )

    t_star = mp.findroot(
        lambda t: mp.diff(f, t), (mp.mpf("0.01"), mp.mpf("0.4")), solver="anderson"
    )
    sup = float(f(t_star))
    c3 = float(symmetric_capacity(rows, 3.0))
    assert float(f(mp.mpf("0.5"))) == pytest.approx(c3, abs=1e-15)  # equal at the uniform prior
    assert sup > c3 + 0.05

    naive = quietly(lambda: dpcap.renyi_capacity(binary_symmetric(0.1), 3.0, kind="naive"))
    sibson = dpcap.renyi_capacity(binary_symmetric(0.1), 3.0)
    assert_certified(sibson, c3)
    assert naive.lower > sibson.upper + 0.05
    assert naive.lower <= sup + SLACK
    assert naive.lower == pytest.approx(sup, abs=1e-7)
    assert min(naive.prior) == pytest.approx(float(t_star), abs=1e-3)


# --------------------------------------------------------------------------------------------
# Fixed-prior α-informations: orderings and Augustin's definition
# --------------------------------------------------------------------------------------------


def random_pairs(count: int, seed: int) -> list[tuple[FloatArray, FloatArray]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        nx, ny = int(rng.integers(2, 5)), int(rng.integers(2, 5))
        out.append((rng.dirichlet(np.ones(nx)), rng.dirichlet(np.ones(ny), size=nx)))
    return out


@pytest.mark.parametrize("alpha", [0.3, 0.7, 1.3, 1.5])
def test_sibson_against_augustin_by_jensen(alpha: float) -> None:
    """``I^S = min_Q 1/(α−1) log Σ_x p_x e^{(α−1)D_α(W_x‖Q)}`` vs ``I^C = min_Q Σ_x p_x D_α``.

    For α > 1 the log-mean-exp is ≥ the mean (Jensen), so ``I^S ≥ I^C``; for α < 1 (negative
    factor) the inequality reverses.
    """
    for p, W in random_pairs(15, seed=int(alpha * 10)):
        sibson = dpcap.sibson_mi(p, W, alpha)
        augustin = dpcap.augustin_mi(p, W, alpha)
        if alpha > 1:
            assert sibson >= augustin - SLACK
        else:
            assert sibson <= augustin + SLACK


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.7, 1.5, 2.0, 5.0, INF])
def test_renyi_mi_is_never_below_sibson(alpha: float) -> None:
    """Sibson's identity ``I_α^S(p, W) = min_Q D_α(P_XY ‖ P_X × Q)``; ``Q = P_Y`` is one choice."""
    for p, W in random_pairs(15, seed=7):
        assert dpcap.renyi_mi(p, W, alpha) >= dpcap.sibson_mi(p, W, alpha) - SLACK


def test_all_alpha_informations_are_mutual_information_at_order_one() -> None:
    for p, W in random_pairs(10, seed=3):
        mi = shannon_mi(p, W)
        assert dpcap.mutual_information(p, W) == pytest.approx(mi, abs=1e-12)
        for fn in (dpcap.sibson_mi, dpcap.arimoto_mi, dpcap.augustin_mi, dpcap.renyi_mi):
            assert fn(p, W, 1.0) == pytest.approx(mi, abs=1e-12), fn.__name__


@pytest.mark.parametrize("alpha", [0.3, 0.7, 1.5])
def test_augustin_is_the_minimum_of_its_objective(alpha: float) -> None:
    rng = np.random.default_rng(42)
    for p, W in random_pairs(8, seed=11):
        value = dpcap.augustin_mi(p, W, alpha)
        assert value <= augustin_objective(p, W, p @ W, alpha) + SLACK
        for _ in range(4):
            Q = rng.dirichlet(np.ones(W.shape[1]))
            assert value <= augustin_objective(p, W, Q, alpha) + SLACK


AUGUSTIN_TWO_OUTPUTS = [
    ([0.3, 0.3, 0.4], [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]], 0.5),
    ([0.3, 0.3, 0.4], [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]], 1.5),
    ([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]], 0.3),
    ([0.93, 0.07], [[0.61, 0.39], [0.64, 0.36]], 1.9),
]


@pytest.mark.parametrize(("p", "W", "alpha"), AUGUSTIN_TWO_OUTPUTS)
def test_augustin_against_direct_minimisation_in_mpmath(
    p: list[float], W: list[list[float]], alpha: float
) -> None:
    assert dpcap.augustin_mi(p, W, alpha) == pytest.approx(
        mp_augustin_two_outputs(p, W, alpha), abs=1e-10
    )


@pytest.mark.parametrize(
    ("p", "W", "alpha"),
    [
        ([0.93, 0.07], [[0.61, 0.39], [0.64, 0.36]], 2.1),  # once returned 0.0; true 2.5842e-4
        ([0.93, 0.07], [[0.61, 0.39], [0.64, 0.36]], 2.0),  # SolverError (gap 7.7e-9)
        ([0.09, 0.91], [[0.05, 0.95], [0.72, 0.28]], 3.0),  # SolverError (gap 8.6)
    ],
)
def test_augustin_at_larger_orders_against_mpmath(
    p: list[float], W: list[list[float]], alpha: float
) -> None:
    expected = mp_augustin_two_outputs(p, W, alpha)
    # RuntimeWarnings are recorded, not raised, so that a wrong value is what fails first
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        value = dpcap.augustin_mi(p, W, alpha)
    assert value == pytest.approx(expected, abs=1e-10)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


# --------------------------------------------------------------------------------------------
# Engines agree: power-cone programme vs the BA/Newton engine
# --------------------------------------------------------------------------------------------


@needs_conic
@pytest.mark.parametrize("alpha", [0.5, 2.0])
@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_conic_and_ba_brackets_overlap(seed: int, solver: str, alpha: float) -> None:
    W = dirichlet(seed, 4, 5)
    ba = dpcap.renyi_capacity(W, alpha, method="ba")
    cone = dpcap.renyi_capacity(W, alpha, method="conic", solver=solver)
    assert ba.status is Status.CONVERGED
    assert cone.status is Status.CONVERGED
    assert cone.upper - cone.lower <= TOL
    assert max(ba.lower, cone.lower) <= min(ba.upper, cone.upper) + SLACK
    assert cone.method.startswith(f"conic/{solver}")


@needs_conic
def test_conic_on_symmetric_closed_form() -> None:
    W, rows = SYMMETRIC["rr-3-1.0"]
    assert_certified(
        dpcap.renyi_capacity(W, 2.0, method="conic"), float(symmetric_capacity(rows(), 2.0))
    )


# --------------------------------------------------------------------------------------------
# Rényi MI-DP (Cuff & Yu §7)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.5, 2.0, 5.0])
def test_renyi_midp_of_per_entry_rr_is_the_binary_rr_capacity(alpha: float) -> None:
    eps = 1.0
    res = dpcap.renyi_midp(per_entry(3, randomized_response(2, eps)), alpha)
    closed = float(symmetric_capacity(mp_rr(2, eps), alpha))
    assert res.status is Status.CONVERGED, res.message
    assert res.lower - SLACK <= closed <= res.upper + SLACK
    assert res.upper - res.lower <= TOL
    np.testing.assert_allclose(res.per_entry, closed, atol=TOL)


def test_renyi_midp_at_order_infinity_is_binary_rr_leakage() -> None:
    eps = 0.7
    res = dpcap.renyi_midp(per_entry(3, randomized_response(2, eps)), INF)
    truth = math.log(2 * math.exp(eps) / (1 + math.exp(eps)))
    assert res.lower - 1e-15 <= truth <= res.upper + 1e-15  # ends rounded outward (§8)
    assert res.value == pytest.approx(truth, abs=1e-14)


@pytest.mark.parametrize("seed", [0, 1])
def test_renyi_midp_at_order_one_is_midp(seed: int) -> None:
    M = dpcap.Mechanism(dirichlet(seed, 8, 3), (2, 2, 2))
    renyi = dpcap.renyi_midp(M, 1.0)
    plain = dpcap.midp(M)
    assert renyi.lower == pytest.approx(plain.lower, abs=1e-12)
    assert renyi.upper == pytest.approx(plain.upper, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_renyi_midp_is_at_most_epsilon_lemma_4(seed: int) -> None:
    M = dpcap.Mechanism(dirichlet(seed, 8, 3), (2, 2, 2))
    eps = dpcap.dp_epsilon(M)
    previous = -math.inf
    for alpha in (0.5, 1.0, 2.0, 10.0, INF):
        res = dpcap.renyi_midp(M, alpha)
        assert res.status is Status.CONVERGED, res.message
        assert res.lower <= eps + SLACK
        assert res.upper <= eps + TOL
        assert res.upper >= previous - TOL  # non-decreasing in α
        previous = res.upper


# --------------------------------------------------------------------------------------------
# Maximal α-leakage
# --------------------------------------------------------------------------------------------


def test_alpha_leakage_at_one_is_mutual_information_at_the_prior() -> None:
    W = dirichlet(0, 3, 4)
    prior = np.array([0.2, 0.5, 0.3])
    res = dpcap.alpha_leakage(W, 1.0, prior=prior)
    assert res.value == pytest.approx(shannon_mi(prior, W), abs=1e-12)
    assert res.value == pytest.approx(dpcap.mutual_information(prior, W), abs=1e-15)
    assert res.lower == res.upper == res.value
    assert res.status is Status.CONVERGED


@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0])
def test_alpha_leakage_above_one_is_the_sibson_capacity(alpha: float) -> None:
    W = dirichlet(1, 3, 4)
    leak = dpcap.alpha_leakage(W, alpha)
    cap = dpcap.renyi_capacity(W, alpha)
    assert abs(leak.value - cap.value) <= TOL
    assert leak.upper - leak.lower <= TOL
    # a prior with full support changes nothing
    with_prior = dpcap.alpha_leakage(W, alpha, prior=[0.1, 0.1, 0.8])
    assert abs(with_prior.value - cap.value) <= TOL


def test_alpha_leakage_at_infinity_is_maximal_leakage() -> None:
    W = dirichlet(2, 4, 3)
    assert dpcap.alpha_leakage(W, INF).value == pytest.approx(dpcap.max_leakage(W), abs=1e-14)


@pytest.mark.parametrize("alpha", [1.5, 3.0, INF])
def test_alpha_leakage_is_restricted_to_the_support_of_the_prior(alpha: float) -> None:
    W = np.eye(3)  # C_α(identity with k rows) = log k for every α
    assert dpcap.alpha_leakage(W, alpha).value == pytest.approx(math.log(3), abs=TOL)
    res = dpcap.alpha_leakage(W, alpha, prior=[0.5, 0.5, 0.0])
    assert res.value == pytest.approx(math.log(2), abs=TOL)
    assert res.prior.shape == (3,)
    assert res.prior[2] == 0.0
    # on a noisy channel: the restriction is the capacity of the kept rows
    V = randomized_response(4, 1.5).matrix
    restricted = dpcap.alpha_leakage(V, alpha, prior=[0.0, 0.3, 0.0, 0.7])
    assert abs(restricted.value - dpcap.renyi_capacity(V[[1, 3]], alpha).value) <= TOL
    assert restricted.prior[0] == restricted.prior[2] == 0.0


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.999])
def test_alpha_leakage_below_one_is_rejected(alpha: float) -> None:
    with pytest.raises(ParameterError, match=r"alpha must be in \[1, inf\] for maximal α-leakage"):
        dpcap.alpha_leakage(np.eye(2), alpha, prior=[0.5, 0.5])


def test_alpha_leakage_at_one_needs_a_prior() -> None:
    with pytest.raises(ParameterError, match="alpha = 1 needs the prior"):
        dpcap.alpha_leakage(np.eye(2), 1.0)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [-1.0, -1e-300, math.nan, -INF])
def test_bad_order_is_rejected(alpha: float) -> None:
    with pytest.raises(ParameterError, match=r"alpha must be in \[0, inf\]"):
        dpcap.renyi_capacity(np.eye(2), alpha)


@pytest.mark.parametrize("alpha", ["2", None, True])
def test_non_numeric_order_is_rejected(alpha: object) -> None:
    with pytest.raises(ParameterError, match=r"alpha must be a real number in \[0, inf\]"):
        dpcap.renyi_capacity(np.eye(2), alpha)  # type: ignore[arg-type]


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ParameterError, match=r"kind must be one of .*'bogus'"):
        dpcap.renyi_capacity(np.eye(2), 2.0, kind="bogus")


def test_unknown_method_is_rejected() -> None:
    with pytest.raises(ParameterError, match=r"method must be one of .*'bogus'"):
        dpcap.renyi_capacity(np.eye(2), 2.0, method="bogus")


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("method", ["ba", "auto"])
def test_solver_without_conic_is_rejected(method: str, alpha: float) -> None:
    with pytest.raises(ParameterError, match="solver selects a cvxpy solver for method='conic'"):
        dpcap.renyi_capacity(binary_symmetric(0.1), alpha, method=method, solver="SCS")


@pytest.mark.parametrize(("alpha", "kind"), [(0.0, "sibson"), (INF, "sibson"), (2.0, "naive")])
def test_solver_without_conic_is_rejected_at_every_order(alpha: float, kind: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(
            ParameterError, match="solver selects a cvxpy solver for method='conic'"
        ):
            dpcap.renyi_capacity(binary_symmetric(0.1), alpha, method="ba", solver="SCS", kind=kind)


@needs_conic
@pytest.mark.parametrize("solver", ["bogus", "ECOS"])
def test_bad_conic_solver_is_a_parameter_error(solver: str) -> None:
    with pytest.raises(ParameterError, match="solver"):
        dpcap.renyi_capacity(binary_symmetric(0.1), 2.0, method="conic", solver=solver)


@pytest.mark.parametrize(
    ("alphas", "message"),
    [
        ([], "alphas must hold at least one order"),
        ([0.5, -1.0], "alphas must be >= 0"),
        ([0.5, math.nan], "alphas must not be NaN"),
    ],
)
def test_profile_bad_orders_are_rejected(alphas: list[float], message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        dpcap.renyi_profile(np.eye(2), alphas)


def test_augustin_rejects_the_end_orders() -> None:
    for alpha in (0.0, INF):
        with pytest.raises(ParameterError, match=r"alpha must be in \(0, inf\) for augustin_mi"):
            dpcap.augustin_mi([0.5, 0.5], np.eye(2), alpha)


def test_augustin_reports_a_solver_error_when_the_budget_is_too_small() -> None:
    with pytest.raises(SolverError, match="augustin_mi did not certify a gap"):
        dpcap.augustin_mi([0.3, 0.7], [[0.9, 0.1], [0.2, 0.8]], 0.5, max_iter=1)


# --------------------------------------------------------------------------------------------
# Arimoto at α = 0
# --------------------------------------------------------------------------------------------


def test_arimoto_kind_at_order_zero_is_refused_clearly() -> None:
    # the Arimoto prior p_S^(1/α) has no limit at α = 0: a clear error, not a NaN prior
    W = binary_symmetric(0.1).matrix
    with pytest.raises(ParameterError, match="kind='arimoto' is not defined at alpha = 0"):
        dpcap.renyi_capacity(W, 0.0, kind="arimoto")
