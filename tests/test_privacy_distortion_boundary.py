"""ε*(D) at the ends of its range and at the default tolerance (issue 10, item 11).

Expected values are derived here, never taken from dpcap: ``d*(0)`` in exact rational
arithmetic over the constant outputs, ``d*(ε)`` by an independent LP written with
:func:`scipy.optimize.linprog` on brute-force Hamming neighbours, and the closed form
``d*(ε) = 2/(1 + e^ε)`` for the uniform prior on ``{0,1}²`` (so ``ε*(1/2) = ln 3``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.optimize import linprog

import dpcap
from dpcap.errors import ConvergenceWarning, Status
from dpcap.tradeoffs.epsilon_distortion import privacy_distortion, privacy_distortion_curve

FloatArray = NDArray[np.float64]

DATABASES = list(itertools.product((0, 1), repeat=2))  # C order: 00, 01, 10, 11
HAMMING = np.array(
    [[sum(a != b for a, b in zip(x, y, strict=True)) for y in DATABASES] for x in DATABASES]
)
SKEWED = ("0.4", "0.3", "0.2", "0.1")  # the prior of the issue, as written


def reference_d_star(prior: FloatArray, loss: FloatArray, eps: float) -> float:
    """``d*(ε)`` by an LP built here: W row-stochastic, ``W[x] ≤ e^ε W[x']`` for Hamming pairs."""
    n, k = loss.shape
    pairs = [
        (i, j)
        for i, j in itertools.permutations(range(n), 2)
        if sum(a != b for a, b in zip(DATABASES[i], DATABASES[j], strict=True)) == 1
    ]
    rows = []
    for i, j in pairs:
        for y in range(k):
            row = np.zeros(n * k)
            row[i * k + y], row[j * k + y] = 1.0, -math.exp(eps)
            rows.append(row)
    equal = np.kron(np.eye(n), np.ones(k))
    res = linprog(
        (prior[:, None] * loss).ravel(),
        A_ub=np.array(rows),
        b_ub=np.zeros(len(rows)),
        A_eq=equal,
        b_eq=np.ones(n),
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return float(res.fun)


# --- D = d*(0): the boundary, and the rounding rule -------------------------------------------


def test_d_star_zero_is_seven_tenths_exactly() -> None:
    """At ε = 0 neighbours share their row and {0,1}² is connected, so every row is one ``u`` and
    the distortion ``Σ_y u_y Σ_x p_x d(x, y)`` is linear in ``u``: least at a constant output.
    Output 00 costs 0.3·1 + 0.2·1 + 0.1·2 = 7/10, the least of the four."""
    costs = [sum(Fraction(p) * int(HAMMING[x, y]) for x, p in enumerate(SKEWED)) for y in range(4)]
    assert costs == [Fraction(7, 10), Fraction(9, 10), Fraction(11, 10), Fraction(13, 10)]
    prior = np.array([float(p) for p in SKEWED])
    assert reference_d_star(prior, HAMMING.astype(float), 0.0) == pytest.approx(0.7, abs=1e-12)


@pytest.mark.parametrize("steps_below", [0, 1, 4])
def test_budget_written_as_d_star_zero_gives_zero(steps_below: int) -> None:
    """D = 0.7 = d*(0) (and a few ulps below: the floats of the data put the computed d*(0)
    2.2e-16 above 0.7): ε* = 0, a certified [0, 0], converged, no warning, the constant-row
    mechanism "always release 00". Before the fix: a warning and [0, 0.499], inaccurate."""
    D = 0.7
    for _ in range(steps_below):
        D = float(np.nextafter(D, 0.0))
    prior = [float(p) for p in SKEWED]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = privacy_distortion(prior, HAMMING, D, shape=(2, 2))
    assert (res.value, res.lower, res.upper) == (0.0, 0.0, 0.0)
    assert res.status is Status.CONVERGED
    np.testing.assert_array_equal(res.mechanism, np.tile([1.0, 0.0, 0.0, 0.0], (4, 1)))
    assert dpcap.dp_epsilon(dpcap.Mechanism(res.mechanism, (2, 2))) == 0.0
    assert res.dp_level == 0.0
    # the mechanism's own distortion, reported as computed (not clipped to D)
    assert res.distortion_achieved == pytest.approx(0.7, abs=1e-15)
    assert res.distortion_achieved - D <= 1e-14
    if res.distortion_achieved > D:
        assert "rounding allowance" in res.message


def test_budgets_above_d_star_zero_give_zero() -> None:
    prior = [float(p) for p in SKEWED]
    for D in (0.7000000000000002, 0.71, 2.0):
        res = privacy_distortion(prior, HAMMING, D, shape=(2, 2))
        assert (res.lower, res.upper) == (0.0, 0.0)
        assert res.distortion_achieved <= D


def test_budget_below_d_star_zero_jumps_and_is_certified_by_an_independent_lp() -> None:
    """``d*`` is flat near ε = 0 for this prior, so ε* jumps as D falls below d*(0): the bracket
    returned for D = 0.7 − 1e-6 is positive, and the reference LP confirms both ends."""
    prior = np.array([float(p) for p in SKEWED])
    D = 0.7 - 1e-6
    res = privacy_distortion(prior, HAMMING, D, shape=(2, 2))
    assert res.status is Status.CONVERGED
    assert res.upper - res.lower <= 1e-9
    assert reference_d_star(prior, HAMMING.astype(float), 0.3) == pytest.approx(0.7, abs=1e-12)
    assert reference_d_star(prior, HAMMING.astype(float), res.lower) > D - 1e-12
    assert reference_d_star(prior, HAMMING.astype(float), res.upper) <= D + 1e-12
    assert res.lower > 0.3


def test_curve_ends_at_d_star_zero_with_zero() -> None:
    prior = [float(p) for p in SKEWED]
    curve = privacy_distortion_curve(prior, HAMMING, shape=(2, 2), n_points=3)
    assert curve.D[-1] == pytest.approx(0.7, abs=1e-15)
    assert curve.value[-1] == 0.0
    assert curve.lower[-1] == 0.0
    assert all(s is Status.CONVERGED for s in curve.status)


def test_budget_written_as_d_min_gives_infinity() -> None:
    """Prior (0.2, 0.7, 0.1), loss 0.3 on the diagonal and 1 elsewhere: d_min = 0.3 exactly, but
    the floats put it at 0.30000000000000004. D = 0.3 is d_min (ε* = ∞, the identity), not a
    budget below it (before the fix: ParameterError). d*(0) = 0.7·0.3 + 0.3·1 = 0.51 > d_min."""
    loss = np.full((3, 3), 1.0)
    np.fill_diagonal(loss, 0.3)
    res = privacy_distortion([0.2, 0.7, 0.1], loss, 0.3)
    assert res.value == math.inf
    assert res.lower == math.inf
    assert res.status is Status.CONVERGED
    np.testing.assert_array_equal(res.mechanism, np.eye(3))
    assert res.distortion_achieved == pytest.approx(0.3, abs=1e-15)
    with pytest.raises(dpcap.ParameterError, match="below the least achievable"):
        privacy_distortion([0.2, 0.7, 0.1], loss, 0.3 - 1e-12)


# --- the default tolerance -------------------------------------------------------------------


def test_closed_form_for_the_uniform_prior_is_confirmed_by_an_independent_lp() -> None:
    """Uniform prior on {0,1}², Hamming distortion and neighbours: d*(ε) = 2/(1 + e^ε)
    (Wang–Ying–Zhang, n/(1 + e^ε/(m − 1)) with n = m = 2), decreasing, so ε*(1/2) = ln 3."""
    prior = np.full(4, 0.25)
    for eps in (0.2, 0.5, 1.0, math.log(3), 2.0, 3.0):
        expected = 2 / (1 + math.exp(eps))
        assert reference_d_star(prior, HAMMING.astype(float), eps) == pytest.approx(
            expected, abs=1e-10
        )
    assert 2 / (1 + math.exp(math.log(3))) == pytest.approx(0.5, abs=1e-15)


def test_default_tolerance_reaches_ln3() -> None:
    """The default tol is 1e-9: ε*(0.5) = ln 3 within 1e-9 (before: tol 1e-6, 1.0986127)."""
    res = privacy_distortion(np.full(4, 0.25), HAMMING, 0.5, shape=(2, 2))
    assert res.tol == 1e-9
    assert res.status is Status.CONVERGED
    assert res.lower <= math.log(3) <= res.upper
    assert res.upper - res.lower <= 1e-9
    assert abs(res.value - math.log(3)) <= 1e-9
    assert res.distortion_achieved <= 0.5
    level = dpcap.dp_epsilon(dpcap.Mechanism(res.mechanism, (2, 2)))
    assert level <= res.value * (1 + 1e-12)


def test_upper_end_is_above_the_exact_level() -> None:
    """One bit, D = 1/4: randomised response at ε = ln 3 is optimal and exactly representable
    (rows 3/4, 1/4), but its computed level log(3/4) − log(1/4) rounds 1.3e-16 *below* ln 3.
    The upper end is the level rounded up by a bound on that rounding, so it holds the exact
    ln 3 (mpmath, 40 digits)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    res = privacy_distortion([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 0.25, tol=1e-9)
    assert mpmath.mpf(res.lower) <= mpmath.log(3) <= mpmath.mpf(res.upper)
    assert res.upper - res.lower <= 1e-9


def test_curve_default_tolerance() -> None:
    curve = privacy_distortion_curve([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], D=[0.1, 0.25])
    assert curve.tol == 1e-9
    for D, lower, upper in zip(curve.D, curve.lower, curve.upper, strict=True):
        truth = math.log((1 - D) / D)  # randomised response (docs/mathematics.rst §6)
        assert lower <= truth <= upper
        assert upper - lower <= 1e-9


@pytest.mark.parametrize("D", [0.1, 0.5, 1.0])
def test_search_takes_few_solves_where_d_star_is_smooth(D: float) -> None:
    """ITP: bisection from a bracket of width ~3 to 1e-9 would take 32 solves; regula falsi
    with truncation takes about 10 where ``d*`` is smooth (the search before: 20 to 36)."""
    res = privacy_distortion(np.full(4, 0.25), HAMMING, D, shape=(2, 2), tol=1e-9)
    assert res.status is Status.CONVERGED
    truth = math.log(2 / D - 1)
    assert res.lower <= truth <= res.upper
    assert res.iterations <= 20


@pytest.mark.parametrize("D", [1e-3, 1e-5])
def test_where_the_lp_limits_the_bracket_it_still_holds_the_truth(D: float) -> None:
    """At large ε* ``|d*'| ≈ D`` and the LP's certified gap on d* (≈ 1e-13) bounds the bracket
    to about 1e-13/D: the truth log((1 − D)/D) is inside, and an open bracket warns."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = privacy_distortion([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], D)
    truth = math.log((1 - D) / D)
    assert res.lower <= truth <= res.upper
    assert res.upper - res.lower <= 1e-6
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert warned == (res.status is not Status.CONVERGED)
