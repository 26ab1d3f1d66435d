"""Regression tests for fuzz findings F13–F16 and F18 (mechanism constructors, LP and funnel
parsing, the ε*(D) search). Expected values are closed forms (mpmath) or scipy's HiGHS."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.optimize import linprog

import dpcap
from dpcap import mechanisms as mech
from dpcap.errors import Status

mpmath.mp.dps = 40

SUBNORMAL_EPS = [5e-324, 1e-310, 2e-308, 1e-300]


# --------------------------------------------------------------------------- F13


@pytest.mark.parametrize("eps", SUBNORMAL_EPS)
@pytest.mark.parametrize("make", [mech.truncated_geometric, mech.discrete_laplace, mech.staircase])
def test_a_subnormal_eps_gives_a_nearly_uniform_clamped_channel(make, eps: float) -> None:
    """ε → 0: every row tends to ``[1/2, 0, …, 0, 1/2]`` (all mass clamped to the ends), with
    no warning and no 'math domain error'; the level is at most ε."""
    n = 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ch = make(n, eps)
        W = ch.matrix
        assert np.isfinite(W).all()
        assert (W >= 0).all()
        np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-15)
        np.testing.assert_allclose(W[:, [0, n]], 0.5, rtol=0, atol=1e-15)
        assert dpcap.dp_epsilon(ch, neighbors="line") <= eps * (1 + 1e-9)


@pytest.mark.parametrize("eps", SUBNORMAL_EPS)
def test_truncated_geometric_keeps_its_logs_at_a_subnormal_eps(eps: float) -> None:
    """``log W[x, y] = log tanh(ε/2) − ε|x − y|`` inside (mpmath at 40 digits): finite even
    where ``tanh(ε/2)`` underflows to 0 in double precision."""
    n = 3
    ch = mech.truncated_geometric(n, eps)
    logs = ch.log_matrix if ch.log_matrix is not None else np.log(ch.matrix)
    e = mpmath.mpf(eps)
    for x in range(n + 1):
        for y in range(1, n):
            want = mpmath.log(mpmath.tanh(e / 2)) - e * abs(x - y)
            assert logs[x, y] == pytest.approx(float(want), rel=1e-14)


# --------------------------------------------------------------------------- F15, F16


@pytest.mark.parametrize("tiny", [5e-324, 1e-310, 2e-308])
def test_exponential_with_a_subnormal_span(tiny: float) -> None:
    """Δu = tiny: ``W[x, 1] ∝ exp(−ε(1 − u)/(2Δu))`` underflows and the other two outputs
    share the mass: rows ``[1/2, 0, 1/2]``, no NaN and no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ch = mech.exponential([[1.0, 0.0, 1.0], [1.0, tiny, 1.0]], 1.0)
    np.testing.assert_allclose(ch.matrix, [[0.5, 0.0, 0.5]] * 2, rtol=0, atol=1e-300)
    assert dpcap.dp_epsilon(ch, neighbors="all") <= 1.0


def test_exponential_with_a_subnormal_explicit_sensitivity() -> None:
    """An explicit Δu below the normal range: the same softmax, no NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        W = mech.exponential([[0.0, 0.0], [0.0, 1e-320]], 2.0, sensitivity=1e-320).matrix
    # row 0 uniform; row 1: e^{ε/2}/(1 + e^{ε/2}) on output 1
    np.testing.assert_allclose(W[0], [0.5, 0.5], rtol=1e-15)
    np.testing.assert_allclose(W[1, 1], float(1 / (1 + mpmath.exp(-1))), rtol=1e-12)


@pytest.mark.parametrize("imaginary", [0.0, 1.0, -3.5])
def test_exponential_refuses_a_complex_utility(imaginary: float) -> None:
    utility = np.array([[0.0, 1.0], [1.0, 0.0]]) + 1j * imaginary
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(dpcap.ParameterError, match=r"\butility\b.*complex"):
            mech.exponential(utility, 1.0)


def test_exponential_refuses_a_ragged_utility() -> None:
    with pytest.raises(dpcap.ParameterError, match=r"\butility\b"):
        mech.exponential([[0.0, 1.0], [1.0]], 1.0)


# --------------------------------------------------------------------------- F14

RAGGED = [[0.5], [0.25, 0.25]]
HAM = [[0.0, 1.0], [1.0, 0.0]]

RAGGED_CALLS = {
    "prior": [
        lambda v: dpcap.privacy_distortion(v, HAM, 0.2),
        lambda v: dpcap.privacy_distortion_curve(v, HAM, n_points=2),
        lambda v: dpcap.optimal_mechanism(v, HAM, 1.0),
    ],
    "joint": [
        lambda v: dpcap.inference_privacy(v, HAM, 0.2),
        lambda v: dpcap.privacy_funnel(v, 0.3),
        lambda v: dpcap.information_bottleneck(v, 0.3),
        lambda v: dpcap.privacy_funnel_curve(v, n_points=2),
        lambda v: dpcap.information_bottleneck_curve(v, n_points=2),
        lambda v: dpcap.perfect_privacy(v),
    ],
}


@pytest.mark.parametrize(
    ("name", "call"), [(name, call) for name, calls in RAGGED_CALLS.items() for call in calls]
)
@pytest.mark.parametrize("value", [RAGGED, [[0.5, 0.5j]], "prior.npy", [[0.25, "a"], [0.5, 0.25]]])
def test_malformed_laws_name_the_argument(name: str, call, value) -> None:
    with pytest.raises(dpcap.PriorError, match=rf"(?<![A-Za-z_]){name}(?![A-Za-z_])"):
        call(value)


# --------------------------------------------------------------------------- F18


def highs_least_loss(prior, loss, eps: float, pairs) -> float:
    """``d*(ε)`` from its definition, by scipy's HiGHS (an independent reference)."""
    prior, loss = np.asarray(prior, float), np.asarray(loss, float)
    n, m = loss.shape
    rows = []
    for x, xp in pairs:
        for y in range(m):
            r = np.zeros(n * m)
            r[x * m + y], r[xp * m + y] = 1.0, -math.exp(eps)
            rows.append(r)
    res = linprog(
        (prior[:, None] * loss).ravel(),
        A_ub=np.array(rows),
        b_ub=np.zeros(len(rows)),
        A_eq=np.kron(np.eye(n), np.ones(m)),
        b_eq=np.ones(n),
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    assert res.status == 0
    return float(res.fun)


def test_privacy_distortion_just_above_the_least_distortion_returns_a_bracket() -> None:
    """Two neighbouring databases, outputs {0, 1, 2}, ``ℓ = [[0, 1, 2⁻⁹], [1, 3, 0]]``, a uniform
    prior. Output 1 is never used; with ``g = e^ε`` the optimum is ``W_0 = (a, 0, 1 − a)``,
    ``W_1 = (a/g, 0, 1 − a/g)`` at the largest ``a = g/(g + 1)`` once ``g > 2⁹``:
    ``d*(ε) = min(2⁻¹⁰, (1 + 2⁻⁹)/(2(g + 1)))``, so ``ε*(D) = log((1 + 2⁻⁹)/(2D) − 1)``.
    At ``D = 10⁻⁶·2⁻¹⁰``, ``ε* = log(513·10⁶ − 1) ≈ 20.056``, where the LP (``e^ε ≈ 5e8``) may
    fail: the search returns its certified bracket instead of raising."""
    prior, loss = [0.5, 0.5], [[0.0, 1.0, 2.0**-9], [1.0, 3.0, 0.0]]
    D = 1e-6 * 2.0**-10
    truth = float(mpmath.log((1 + mpmath.mpf(2) ** -9) / (2 * mpmath.mpf(D)) - 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = dpcap.privacy_distortion(prior, loss, D, shape=(2,), neighbors="hamming")
    assert res.lower <= truth * (1 + 1e-12)
    assert truth <= res.upper * (1 + 1e-12)
    assert res.distortion_achieved <= D
    assert (res.upper - res.lower <= res.tol) == (res.status is Status.CONVERGED)
    if res.status is not Status.CONVERGED:
        assert res.status is Status.INACCURATE
        assert any(issubclass(w.category, dpcap.ConvergenceWarning) for w in caught)


def test_privacy_distortion_near_d_min_on_a_product_domain() -> None:
    """The second fuzz example of F18: ``ε*`` bracketed, checked against HiGHS's ``d*``."""
    prior = np.array([0.33289987, 0.33289987, 0.33289987, 0.00130039])
    loss = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    pairs = [(0, 1), (0, 2), (1, 3), (2, 3)]
    pairs += [(b, a) for a, b in pairs]
    law = prior / prior.sum()
    d_min = float(law @ loss.min(axis=1))
    d_zero = highs_least_loss(law, loss, 0.0, pairs)
    D = d_min + 1e-9 * (d_zero - d_min)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        res = dpcap.privacy_distortion(prior, loss, D, shape=(2, 2), neighbors="hamming")
    assert 0.0 <= res.lower <= res.upper
    assert res.distortion_achieved <= D + 1e-9 * (1 + D)
    if 0 < res.lower <= 20:
        assert highs_least_loss(law, loss, res.lower, pairs) >= D - 1e-6
    if math.isfinite(res.upper) and res.upper <= 20:
        assert highs_least_loss(law, loss, res.upper, pairs) <= D + 1e-6


def ratio(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def test_privacy_distortion_upper_end_is_certified_in_exact_arithmetic() -> None:
    """ε* ≈ 13.8, where HiGHS's own d*(ε) (e^ε ≈ 1e6) is off by more than 1e-6 (it reports
    d*(upper) = 1.4e-6 > D = 9.1e-8, and d*(14) > d*(13.82), impossible): the returned mechanism,
    read as exact rationals, has distortion ≤ D and level ≤ upper, which certifies
    ``ε*(D) ≤ upper`` without any LP."""
    prior = np.array([4.0, 4.0, 2.0, 1.0]) / 11.0
    loss = np.array([[0.0, 1.0, 3.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    pairs = [(0, 1), (0, 2), (1, 3), (2, 3)]
    pairs += [(b, a) for a, b in pairs]
    D = 1e-6 * highs_least_loss(prior, loss, 0.0, pairs)  # d_min = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        res = dpcap.privacy_distortion(prior, loss, D, shape=(2, 2), neighbors="hamming")
    assert 0.0 <= res.lower <= res.upper < math.inf
    W = [[Fraction(float(v)) for v in row] for row in res.mechanism]
    totals = [sum(row) for row in W]
    P = [Fraction(float(v)) for v in prior]
    distortion = sum(
        P[x] * sum(W[x][y] * Fraction(float(loss[x, y])) for y in range(3)) / totals[x]
        for x in range(4)
    )
    assert distortion <= Fraction(D)
    level = max(
        mpmath.log(ratio(W[x][y] * totals[xp] / (W[xp][y] * totals[x])))
        for x, xp in pairs
        for y in range(3)
        if W[x][y] > 0
    )
    assert level <= res.upper


def mp_staircase_cost(delta: int, eps: float, r: int) -> mpmath.mpf:
    """``E|Z| = 2a(ΔAb/(1 − b)² + B/(1 − b))`` of the staircase noise, at 60 digits."""
    with mpmath.workdps(60):
        b = mpmath.exp(-mpmath.mpf(eps))
        c = 1 - b
        A = r + b * (delta - r)
        B = mpmath.mpf(r * (r - 1)) / 2 + b * (mpmath.mpf(delta * (delta - 1) - r * (r - 1)) / 2)
        D = 2 * r + 2 * b * (delta - r) - c
        return 2 * (c / D) * (delta * A * b / c**2 + B / c)


@pytest.mark.parametrize(
    ("delta", "eps"),
    [(4, 1e-6), (8, 1e-6), (100, 1e-6), (1000, 1e-6), (1000, 1.5e-5), (100, 1.0), (64, 5.0)],
)
def test_staircase_default_width_is_the_exact_minimiser(delta: int, eps: float) -> None:
    """Small ε: the ℓ1 costs of the widths differ by ~ε/Δ² relatively; the default r must still
    be the true minimiser (mpmath), which the Δ/ε term common to every r used to drown."""
    from dpcap.mechanisms._noise import _staircase_best_width

    costs = [mp_staircase_cost(delta, eps, r) for r in range(1, delta + 1)]
    assert _staircase_best_width(delta, eps) == 1 + min(range(delta), key=costs.__getitem__)


def test_staircase_width_at_a_subnormal_eps_is_the_eps_zero_one() -> None:
    """ε → 0: ``k(r) → (r² − r + Δ(Δ − r + 1/2))/(2Δ)``, least at ``r = ⌈Δ/2⌉`` (the width
    documented for ε = 0), up to the tie ``r(r − 1) − Δr`` at ``r = Δ/2, Δ/2 + 1`` for even Δ."""
    from dpcap.mechanisms._noise import _staircase_best_width

    for delta in (3, 7, 9):
        assert _staircase_best_width(delta, 5e-324) == (delta + 1) // 2
