"""The privacy–distortion function ε*(D) (Wang–Ying–Zhang): closed forms, certificates, curves.

Expected values come from the literature, never from the code: Wang–Ying–Zhang's
ε*(D) = log(n/D − 1) + log(m − 1) (uniform prior on {0..m−1}^n, Hamming distortion),
randomised response for one bit (ε*(D) = log((1 − D)/D)). Every returned mechanism's level is
recomputed with :func:`dpcap.dp_epsilon` here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.typing import NDArray

import dpcap
from dpcap.errors import ParameterError, Status
from dpcap.result import CurveResult, DistortionResult
from dpcap.tradeoffs.epsilon_distortion import privacy_distortion, privacy_distortion_curve
from dpcap.tradeoffs.mechanism_design import optimal_mechanism

FloatArray = NDArray[np.float64]

RTOL = 1e-9  # the promised slack on a verified level: dp_level ≤ ε(1 + 1e-9)


def hamming_problem(n: int, m: int) -> tuple[tuple[int, ...], FloatArray]:
    """Domain ``{0..m−1}^n`` and the Hamming distance between databases (outputs = databases)."""
    shape = (m,) * n
    db = np.array(np.unravel_index(np.arange(m**n), shape)).T
    return shape, (db[:, None, :] != db[None, :, :]).sum(axis=-1).astype(float)


def assert_verified(
    res: DistortionResult,
    eps: float,
    neighbors: str = "hamming",
    shape: tuple[int, ...] | None = None,
) -> None:
    """The level recomputed by :func:`dpcap.dp_epsilon` on the domain is at most ε(1 + 1e-9)."""
    mechanism = dpcap.Mechanism(res.mechanism, shape or (res.mechanism.shape[0],))
    level = dpcap.dp_epsilon(mechanism, neighbors=neighbors)
    assert level == pytest.approx(res.dp_level, rel=1e-12, abs=1e-13)
    assert level <= eps * (1 + RTOL)
    np.testing.assert_allclose(res.mechanism.sum(axis=1), 1.0, atol=1e-12)
    assert (res.mechanism >= 0).all()


# --- privacy_distortion ----------------------------------------------------------------------


@pytest.mark.parametrize(("n", "m"), [(2, 2), (2, 3)])
def test_wang_ying_zhang_closed_form(n: int, m: int) -> None:
    """ε*(D) = log(n/D − 1) + log(m − 1) for 0 < D ≤ n(m − 1)/m, and 0 above."""
    shape, dist = hamming_problem(n, m)
    prior = np.full(m**n, 1.0 / m**n)
    top = n * (m - 1) / m
    for D in (0.1, 0.5, 0.9 * top):
        expected = math.log(n / D - 1) + math.log(m - 1)
        res = privacy_distortion(prior, dist, D=D, shape=shape)
        assert res.lower - 1e-12 <= expected <= res.upper + 1e-12
        assert res.upper - res.lower <= 1e-9  # the default tol
        assert res.status is Status.CONVERGED
        assert res.distortion_achieved <= D
        assert_verified(res, res.value, shape=shape)
    assert privacy_distortion(prior, dist, D=top, shape=shape).value == 0.0
    assert privacy_distortion(prior, dist, D=1.5 * top, shape=shape).value == 0.0


def test_non_uniform_prior_bracket_is_certified_by_the_lp() -> None:
    """At ``lower`` no mechanism meets D; at ``upper`` the returned one does."""
    shape, dist = hamming_problem(2, 3)
    prior = np.random.default_rng(3).dirichlet(np.ones(9))
    D = 0.4
    res = privacy_distortion(prior, dist, D=D, shape=shape, tol=1e-5)
    assert optimal_mechanism(prior, dist, res.lower, shape=shape).lower > D
    assert float(prior @ (res.mechanism * dist).sum(axis=1)) <= D
    assert_verified(res, res.upper, shape=shape)
    assert res.upper - res.lower <= 1e-5


def test_curve_is_non_increasing_and_verified() -> None:
    shape, dist = hamming_problem(2, 2)
    prior = np.array([0.4, 0.3, 0.2, 0.1])
    curve = privacy_distortion_curve(prior, dist, shape=shape, n_points=6)
    assert isinstance(curve, CurveResult)
    assert len(curve) == 6
    assert (np.diff(curve.D) > 0).all()
    assert (np.diff(curve.upper) <= 0).all()
    assert curve.value[-1] == 0.0  # the last budget is d*(0)
    for k, point in enumerate(curve.points):
        assert point.distortion_achieved <= curve.D[k]
        assert_verified(point, point.value, shape=shape)


def test_curve_at_given_budgets_matches_single_points() -> None:
    prior, dist = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    curve = privacy_distortion_curve(prior, dist, D=[0.1, 0.3])
    for D, value in zip([0.1, 0.3], curve.value, strict=True):
        assert value == pytest.approx(math.log((1 - D) / D), abs=1e-6)
        assert privacy_distortion(prior, dist, D=D).value == pytest.approx(value, abs=1e-6)


def test_extreme_budgets() -> None:
    prior, dist = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    at_min = privacy_distortion(prior, dist, D=0.0)  # only the identity: ε* = ∞
    assert at_min.value == math.inf
    assert at_min.lower == math.inf
    assert at_min.status is Status.CONVERGED
    # a common argmin for every row: the constant mechanism is optimal, ε* = 0 even at d_min
    common = privacy_distortion(prior, [[0.0, 1.0], [0.0, 2.0]], D=0.0)
    assert common.value == 0.0


def test_privacy_distortion_errors() -> None:
    prior, dist = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ParameterError, match=r"D=-0.1 is below the least achievable"):
        privacy_distortion(prior, dist, D=-0.1)
    with pytest.raises(ParameterError, match=r"D must not be NaN"):
        privacy_distortion(prior, dist, D=math.nan)
    with pytest.raises(ParameterError, match=r"D must be a real number"):
        privacy_distortion(prior, dist, D="0.2")  # type: ignore[arg-type]
    with pytest.raises(
        ParameterError,
        match=r"distortion must be a 2-D matrix distortion\[x, y\] with one row per database \(2\)",
    ):
        privacy_distortion(prior, [0.0, 1.0], D=0.2)
    with pytest.raises(ParameterError, match=r"not both"):
        privacy_distortion_curve(prior, dist, D=[0.2], n_points=3)
    with pytest.raises(ParameterError, match=r"n_points must be an integer >= 1"):
        privacy_distortion_curve(prior, dist, n_points=0)


# --- one return type per function -------------------------------------------------------------


def test_curve_is_a_sequence_of_point_results() -> None:
    prior, dist = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    curve = privacy_distortion_curve(prior, dist, n_points=4)
    assert isinstance(curve, CurveResult)
    assert len(curve) == 4
    for i in range(len(curve)):
        assert isinstance(curve[i], DistortionResult)
        assert curve[i] is curve.points[i]
        assert curve[i].target == curve.D[i]
        assert curve.status[i] is curve[i].status
    assert curve.tol == 1e-9  # the default
    assert curve.iterations.shape == (4,)
    frame = curve.to_frame()
    assert len(frame) == len(curve)
    assert list(frame["D"]) == curve.D.tolist()
    assert curve.to_dict()["status"] == ["converged"] * 4


def test_curve_budgets_are_positional_or_keyword() -> None:
    prior, dist = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    positional = privacy_distortion_curve(prior, dist, [0.1, 0.3])
    keyword = privacy_distortion_curve(prior, dist, D=[0.1, 0.3])
    np.testing.assert_array_equal(positional.value, keyword.value)
    assert privacy_distortion(prior, dist, 0.3).value == pytest.approx(keyword.value[1], abs=1e-6)


def test_point_requires_D() -> None:
    prior, dist = [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ParameterError, match=r"D must be a real number, got None.*_curve"):
        privacy_distortion(prior, dist, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        privacy_distortion(prior, dist)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        privacy_distortion(prior, dist, 0.2, n_points=3)  # type: ignore[call-arg]
    with pytest.raises(ParameterError, match=r"D must be a real number .*got the string 'budgets'"):
        privacy_distortion_curve(prior, dist, D="budgets")


@pytest.mark.parametrize("spelling", ["highs", "Clarabel"])
def test_solver_names_are_case_insensitive(spelling: str) -> None:
    res = privacy_distortion([0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], 0.25, solver=spelling)
    assert res.method == f"lp-search/{spelling.upper()}"
    assert res.lower - 1e-12 <= math.log(3) <= res.upper + 1e-12
