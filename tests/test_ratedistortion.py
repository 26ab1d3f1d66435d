"""Risk–distortion R(D) (Mir) and MI privacy–distortion (Wang–Ying–Zhang): closed forms, brackets.

Every expected value is a textbook formula written out here, never the code's output:

* a Bernoulli(p) source with Hamming distortion: ``R(D) = h(p) − h(D)`` for
  ``0 ≤ D ≤ min(p, 1−p)``, 0 beyond (Cover & Thomas, Thm 10.3.1; h in nats);
* a uniform m-ary source with Hamming distortion: ``R(D) = log m − h(D) − D log(m−1)`` for
  ``0 ≤ D ≤ (m−1)/m``, slope ``s = log((m−1)(1−D)/D)``, and the optimal channel is m-ary
  randomized response with ``ε = s`` (``e^s`` on the diagonal, 1 off it, normalised);
* Mir's Theorems 3–4: the optimum is an exponential mechanism ``W ∝ q_y e^{−s d}`` and is
  ``2 s Δd``-DP.

The contract (``docs/mathematics.rst`` §5): ``lower ≤ R(D) ≤ upper`` at the requested D,
``upper − lower ≤ tol`` when converged, ``value = upper`` is the leakage of the returned
mechanism, whose own distortion is ``≤ D``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import xlogy

import dpcap
from dpcap.errors import ParameterError, PriorError, Status
from dpcap.result import CurveResult, DistortionResult
from dpcap.solvers import ratedistortion as engine
from dpcap.testing import distributions
from dpcap.tradeoffs.risk_distortion import (
    mi_privacy_distortion,
    mi_privacy_distortion_curve,
    rate_distortion,
    rate_distortion_curve,
)

FloatArray = NDArray[np.float64]

#: Rounding slack when a closed form is compared with a bracket end (both are ~1 nat).
SLACK = 1e-12
TOL = 1e-9
LN2 = math.log(2.0)


def h2(x: float) -> float:
    """Binary entropy in nats."""
    return float(-xlogy(x, x) - xlogy(1 - x, 1 - x))


def hamming(m: int) -> FloatArray:
    d: FloatArray = 1.0 - np.eye(m)
    return d


def r_binary(p: float, D: float) -> float:
    """``R(D) = h(p) − h(D)``: Bernoulli(p) source, Hamming distortion (0 past min(p, 1−p))."""
    return h2(p) - h2(D) if min(p, 1 - p) > D else 0.0


def r_uniform(m: int, D: float) -> float:
    """``R(D) = log m − h(D) − D log(m−1)`` for a uniform m-ary source, Hamming distortion."""
    return math.log(m) - h2(D) - D * math.log(m - 1) if (m - 1) / m > D else 0.0


def randomized_response(m: int, eps: float) -> FloatArray:
    W: FloatArray = np.ones((m, m)) + (math.exp(eps) - 1.0) * np.eye(m)
    return W / W.sum(axis=1, keepdims=True)


def assert_certified(res: DistortionResult, closed: float, D: float, tol: float = TOL) -> None:
    """The bracket at D contains the closed form, is closed, and the mechanism is feasible."""
    assert res.status is Status.CONVERGED, res.message
    assert res.lower - SLACK <= closed <= res.upper + SLACK
    assert res.upper - res.lower <= tol
    assert res.value == res.upper
    assert res.distortion_achieved <= D + 1e-15
    W = res.mechanism
    assert np.all(W >= 0)
    assert np.allclose(W.sum(axis=1), 1.0, atol=1e-12)


# ---------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("p", [0.5, 0.3, 0.11])
def test_bernoulli_source_hamming(p: float) -> None:
    prior, d = np.array([p, 1 - p]), hamming(2)
    top = min(p, 1 - p)
    for D in (1e-6, 0.01, 0.3 * top, 0.7 * top, 0.999 * top):
        res = rate_distortion(prior, d, D=D)
        assert_certified(res, r_binary(p, D), D)
        assert res.target == D
        assert res.method == "blahut"


@pytest.mark.parametrize("p", [0.5, 0.3])
def test_bernoulli_mechanism_is_exponential(p: float) -> None:
    """Mir, Thm 3: ``W ∝ q_y e^{−s d}``: ``log(W00 W11 / (W01 W10)) = 2s``, ``s = log((1−D)/D)``."""
    D = 0.2 * min(p, 1 - p)
    res = rate_distortion([p, 1 - p], hamming(2), D=D)
    W = res.mechanism
    assert res.slope == pytest.approx(math.log((1 - D) / D), rel=1e-7)
    assert math.log(W[0, 0] * W[1, 1] / (W[0, 1] * W[1, 0])) == pytest.approx(
        2 * res.slope, rel=1e-9
    )


@pytest.mark.parametrize("m", [3, 5, 8])
def test_uniform_source_hamming_is_randomized_response(m: int) -> None:
    for D in (0.05, 0.3 * (m - 1) / m, 0.8 * (m - 1) / m):
        res = rate_distortion(np.full(m, 1.0 / m), hamming(m), D=D)
        assert_certified(res, r_uniform(m, D), D)
        s = math.log((m - 1) * (1 - D) / D)
        assert res.slope == pytest.approx(s, rel=1e-7)
        np.testing.assert_allclose(res.mechanism, randomized_response(m, s), atol=1e-8)
        assert res.dp_level == pytest.approx(s, rel=1e-7)


def test_bits_are_nats_over_log_2() -> None:
    D = 0.1
    nats = rate_distortion([0.5, 0.5], hamming(2), D=D)
    bits = rate_distortion([0.5, 0.5], hamming(2), D=D, unit="bits")
    assert bits.unit == "bits"
    assert bits.value == pytest.approx(nats.value / LN2, rel=1e-12)
    assert bits.lower - SLACK <= (LN2 - h2(D)) / LN2 <= bits.upper + SLACK
    assert bits.slope == nats.slope  # the mechanism's parameter: nats per unit distortion


# ---------------------------------------------------------------------------- endpoints


def test_endpoints_of_a_uniform_source() -> None:
    m = 4
    prior, d = np.full(m, 1 / m), hamming(m)
    at_min = rate_distortion(prior, d, D=0.0)  # D_min = 0: release the input itself
    assert_certified(at_min, math.log(m), 0.0)
    assert at_min.slope == math.inf
    np.testing.assert_allclose(at_min.mechanism, np.eye(m), atol=1e-12)
    assert at_min.dp_level == math.inf
    d_max = (m - 1) / m  # every column costs (m−1)/m
    for D in (d_max, 1.0, 7.5):  # R = 0 at and beyond D_max: a constant mechanism
        res = rate_distortion(prior, d, D=D)
        assert_certified(res, 0.0, D)
        assert res.value == 0.0
        assert res.slope == 0.0
        assert res.dp_level == 0.0
        assert np.all(np.ptp(res.mechanism, axis=0) == 0)  # every row is the same


def test_endpoints_general_distortion() -> None:
    """``D_min = Σ p min_y d``, ``D_max = min_y Σ_x p d``; ``R(D_min) = H(argmin map)``."""
    prior = np.array([0.2, 0.3, 0.5])
    d = np.array([[0.0, 2.0, 3.0], [1.0, 2.0, 1.5], [2.0, 0.5, 1.0]])
    d_min = 0.2 * 0.0 + 0.3 * 1.0 + 0.5 * 0.5
    d_max = min(0.2 * 0.0 + 0.3 * 1.0 + 0.5 * 2.0, 0.2 * 2 + 0.3 * 2 + 0.5 * 0.5, 0.6 + 0.45 + 0.5)
    # Unique minimisers: inputs 0, 1 -> output 0, input 2 -> output 1: R(D_min) = h(0.5).
    res = rate_distortion(prior, d, D=d_min)
    assert_certified(res, h2(0.5), d_min)
    assert dict(res.details)["d_min"] == pytest.approx(d_min, abs=1e-15)
    assert dict(res.details)["d_max"] == pytest.approx(d_max, abs=1e-15)
    zero = rate_distortion(prior, d, D=d_max)
    assert zero.value == 0.0
    assert zero.distortion_achieved == pytest.approx(d_max, abs=1e-15)
    assert np.all(zero.mechanism[:, 1] == 1.0)  # argmin_y Σ_x p_x d(x, y) = output 1


# ---------------------------------------------------------------------------- the curve


def test_curve_of_a_bernoulli_source() -> None:
    p = 0.3
    curve = rate_distortion_curve([p, 1 - p], hamming(2))
    assert isinstance(curve, CurveResult)
    assert len(curve) == 25
    assert curve.D[0] == 0.0
    assert curve.D[-1] == pytest.approx(p, abs=1e-15)
    assert np.all(np.diff(curve.D) > 0)
    assert all(s is Status.CONVERGED for s in curve.status)
    for D, lo, up, pt in zip(curve.D, curve.lower, curve.upper, curve.points, strict=True):
        assert lo - SLACK <= r_binary(p, D) <= up + SLACK
        assert up - lo <= TOL
        assert pt.distortion_achieved == D
        assert pt.target == D
    # R is non-increasing and convex (Mir, Thm 2): chord slopes increase.
    assert np.all(np.diff(curve.value) <= SLACK)
    chords = np.diff(curve.value) / np.diff(curve.D)
    assert np.all(np.diff(chords) >= -1e-6)
    # Slopes decrease from ∞ at D_min to 0 at D_max.
    slopes = np.array([pt.slope for pt in curve.points])
    assert slopes[0] == math.inf
    assert slopes[-1] == 0.0
    assert np.all(np.diff(slopes) < 0)


def test_curve_points_and_refinement() -> None:
    """Points go where the curve bends: steep near D_min, so most lie in the first half."""
    m = 4
    curve = rate_distortion_curve(np.full(m, 1 / m), hamming(m), n_points=9)
    assert len(curve) == 9
    for D, lo, up in zip(curve.D, curve.lower, curve.upper, strict=True):
        assert lo - SLACK <= r_uniform(m, D) <= up + SLACK
    assert np.sum(curve.D < 0.375) >= 5


def test_mi_privacy_distortion_two_bits() -> None:
    """Two independent fair bits, Hamming distance between databases: ``2 (log 2 − h(D/2))``."""
    bits = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    d = (bits[:, None, :] != bits[None, :, :]).sum(axis=-1).astype(float)
    joint = np.full((2, 2), 0.25)
    for D in (0.05, 0.4, 0.9):
        res = mi_privacy_distortion(joint, d, D=D)
        assert_certified(res, 2 * (LN2 - h2(D / 2)), D)
        flat = rate_distortion(joint.ravel(), d, D=D)
        assert res.value == pytest.approx(flat.value, abs=2 * TOL)
    curve = mi_privacy_distortion_curve(joint, d, n_points=5)
    assert curve.D[-1] == pytest.approx(1.0)
    assert curve.value[0] == pytest.approx(2 * LN2, abs=TOL)


# ---------------------------------------------------------------------------- theorems


@st.composite
def problems(
    draw: st.DrawFn, values: st.SearchStrategy[float]
) -> tuple[FloatArray, FloatArray, float]:
    nx = draw(st.integers(1, 5))
    ny = draw(st.integers(1, 5))
    prior = draw(distributions(nx))
    d = np.array(draw(st.lists(values, min_size=nx * ny, max_size=nx * ny))).reshape(nx, ny)
    t = draw(st.floats(0.0, 1.2))
    return prior, d, t


#: Distortions on a grid of quarters: well-scaled problems, where every bracket must close.
QUARTERS = st.integers(0, 12).map(lambda k: k / 4)


def _contract(problem: tuple[FloatArray, FloatArray, float]) -> DistortionResult:
    """Checks that hold for every problem, converged or not; returns the result."""
    prior, d, t = problem
    d_min = float(prior @ d.min(axis=1))
    d_max = float((prior @ d).min())
    D = d_min + t * (d_max - d_min)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        res = rate_distortion(prior, d, D=D)
    assert 0.0 <= res.lower <= res.upper
    assert (res.status is Status.CONVERGED) == (res.upper - res.lower <= TOL)
    assert res.distortion_achieved <= D + 1e-12
    assert res.upper == pytest.approx(dpcap.mutual_information(prior, res.mechanism), abs=1e-12)
    delta = float(np.max(np.ptp(d, axis=0)))
    # The bound holds for the exact mechanism; past s·Δd ≈ 700 its small entries underflow to 0.
    if "mixture_weight" not in dict(res.details) and res.slope * delta < 300:
        assert res.dp_level <= 2 * res.slope * delta * (1 + 1e-9) + 1e-12
    return res


@settings(max_examples=40, deadline=None)
@given(problems(QUARTERS))
def test_contract_on_well_scaled_problems(problem: tuple[FloatArray, FloatArray, float]) -> None:
    """Certified and closed bracket at D, feasible mechanism, Mir's ``ε ≤ 2 s Δd`` (Thm 4)."""
    assert _contract(problem).status is Status.CONVERGED


@settings(max_examples=40, deadline=None)
@given(problems(st.floats(0.0, 3.0)))
def test_contract_on_any_problem(problem: tuple[FloatArray, FloatArray, float]) -> None:
    """Any scales (e.g. 1e-11 next to 1): the bracket may stay open, but it is never wrong.

    Where D − D_min is a few ulps and the slope ~1e11, floating point cannot place D_s close
    enough to D; the result then says so (status ``inaccurate``, a ConvergenceWarning).
    """
    _contract(problem)


def test_ill_conditioned_target_is_reported_not_hidden() -> None:
    prior = np.full(3, 1 / 3)
    d = np.array([[0.0, 0.0, 1e-11], [0.0, 1.0, 0.0], [2.0, 1.0, 1.0]])
    D = 1 / 3 + 0.5 * 1e-11 / 3  # D_min = 1/3, D_max = 1/3 + 1e-11/3: slope ~ 1e11
    with pytest.warns(dpcap.ConvergenceWarning, match="not converged"):
        res = rate_distortion(prior, d, D=D)
    assert res.status is Status.INACCURATE
    assert res.lower <= res.upper
    assert res.upper == pytest.approx(dpcap.mutual_information(prior, res.mechanism), abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    st.integers(2, 6),
    st.floats(0.0, 20.0),
    st.lists(st.floats(1e-3, 1.0), min_size=6, max_size=6),
)
def test_every_dual_line_lies_below_r(m: int, s: float, weights: list[float]) -> None:
    """Blahut's dual bound, for *any* output law q and slope s, never exceeds the closed form."""
    q = np.array(weights[:m]) / np.sum(weights[:m])
    b = float(engine.dual_intercept(np.full(m, 1 / m), hamming(m), np.array([s]), q[None])[0])
    for D in np.linspace(0.0, (m - 1) / m, 11):
        assert b - s * D <= r_uniform(m, float(D)) + SLACK


def test_agrees_with_an_independent_conic_solve() -> None:
    """The exponential-cone program ``min I(p, W) s.t. E d ≤ D`` lands inside the bracket."""
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(7)
    prior = rng.dirichlet(np.ones(4))
    d = rng.random((4, 3)) * 2
    d_min, d_max = float(prior @ d.min(axis=1)), float((prior @ d).min())
    D = 0.5 * (d_min + d_max)
    res = rate_distortion(prior, d, D=D)
    W = cp.Variable((4, 3), nonneg=True)
    joint = cp.multiply(prior[:, None], W)
    q = cp.sum(joint, axis=0)
    info = cp.sum(cp.rel_entr(joint, prior[:, None] @ cp.reshape(q, (1, 3), order="C")))
    problem = cp.Problem(
        cp.Minimize(info), [cp.sum(W, axis=1) == 1, cp.sum(cp.multiply(joint, d)) <= D]
    )
    problem.solve(solver=cp.CLARABEL)
    assert res.lower - 1e-6 <= problem.value <= res.upper + 1e-6


def test_engine_closes_every_slope() -> None:
    """At slope s the uniform m-ary source reaches ``D_s = (m−1)/(m−1+e^s)`` (s = ∞: D = 0)."""
    m = 5
    s = np.array([0.0, 0.3, 1.0, 4.0, 40.0, np.inf])
    sol = engine.solve(np.full(m, 1 / m), hamming(m), s, tol=1e-12)
    assert sol.converged.all()
    expected = (m - 1) / (m - 1 + np.exp(s[1:]))
    np.testing.assert_allclose(sol.distortion[1:], expected, rtol=1e-9, atol=1e-15)
    for D, lo, up in zip(sol.distortion, sol.lower, sol.information, strict=True):
        assert lo - SLACK <= r_uniform(m, float(D)) <= up + SLACK


def test_linear_piece_is_closed_by_a_mixture() -> None:
    """A fair bit, outputs {0, 1, erase} with ``d = [[0, 2, ½], [2, 0, ½]]``.

    ``E = e^{−s d}`` has columns ``(1, e^{−2s})``, ``(e^{−2s}, 1)`` and ``e^{−s/2}(1, 1)``; when
    ``2 e^{−s/2} = 1 + e^{−2s}`` the erasure column is the mean of the other two, Blahut's
    objective is flat along a segment of output laws, and R is linear there with that slope:
    ``u = e^{−s/2}`` solves ``u³ + u² + u = 1``. No single slope reaches a D inside the piece;
    the bracket is closed by mixing the mechanisms at its two ends.
    """
    roots = np.roots([1.0, 1.0, 1.0, -1.0])
    u = float(roots[np.isreal(roots)].real[0])
    s_star = -2.0 * math.log(u)
    prior, d = [0.5, 0.5], np.array([[0.0, 2.0, 0.5], [2.0, 0.0, 0.5]])
    results = [rate_distortion(prior, d, D=D) for D in (0.2, 0.25, 0.3)]
    for res, D in zip(results, (0.2, 0.25, 0.3), strict=True):
        assert res.status is Status.CONVERGED
        assert res.upper - res.lower <= TOL
        assert res.distortion_achieved <= D + 1e-15
        assert res.slope == pytest.approx(s_star, rel=1e-6)
        assert res.dp_level <= 2 * s_star * 2.0
    chords = np.diff([r.value for r in results]) / 0.05
    np.testing.assert_allclose(chords, -s_star, rtol=1e-6)


def test_zero_prior_inputs_and_duplicate_outputs() -> None:
    prior = np.array([0.5, 0.0, 0.5])
    d = np.array([[0.0, 0.0, 1.0], [5.0, 5.0, 0.0], [1.0, 1.0, 0.0]])  # outputs 0, 1 coincide
    res = rate_distortion(prior, d, D=0.1)
    assert_certified(res, r_binary(0.5, 0.1), 0.1)


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("prior", "distortion", "kwargs", "error", "match"),
    [
        ([0.5, 0.5], [[0, -1], [1, 0]], {}, ParameterError, "distortion has a negative entry"),
        ([0.5, 0.5], [[0, 1, 2]], {}, ParameterError, r"one row per input of the prior \(2\)"),
        ([0.5, 0.5], [0, 1], {}, ParameterError, "distortion must be a 2-D matrix"),
        (
            [0.5, 0.5],
            [[0, np.nan], [1, 0]],
            {},
            ParameterError,
            r"distortion must be finite, got nan at index \(0, 1\)",
        ),
        (
            [0.5, 0.5],
            [[0, np.inf], [1, 0]],
            {},
            ParameterError,
            r"distortion must be finite, got inf at index \(0, 1\)",
        ),
        ([0.5, 0.6], [[0, 1], [1, 0]], {}, PriorError, "prior must sum to 1"),
        ([0.5, 0.5], [[1, 2], [2, 1]], {"D": 0.5}, ParameterError, r"D must be >= D_min = 1\b"),
        ([0.5, 0.5], [[0, 1], [1, 0]], {"D": math.nan}, ParameterError, "D must be a finite"),
        ([0.5, 0.5], [[0, 1], [1, 0]], {"D": "0.1"}, ParameterError, "D must be a finite"),
        (
            [0.5, 0.5],
            [[0, 1], [1, 0]],
            {"D": None},
            ParameterError,
            r"D must be a finite real number, got None \(for the whole curve, call "
            r"rate_distortion_curve\)",
        ),
        ([0.5, 0.5], [[0, 1], [1, 0]], {"tol": 0.0}, ParameterError, "tol must be a positive"),
        ([0.5, 0.5], [[0, 1], [1, 0]], {"unit": "bans"}, ParameterError, "unit must be one of"),
    ],
)
def test_invalid_input(
    prior: object, distortion: object, kwargs: dict[str, object], error: type, match: str
) -> None:
    kwargs = {"D": 0.1, **kwargs}
    with pytest.raises(error, match=match):
        rate_distortion(prior, distortion, **kwargs)  # type: ignore[arg-type]


def test_invalid_curve_input() -> None:
    """The curve's own option, and the point's parameter refused by the curve (and back)."""
    with pytest.raises(ParameterError, match=r"n_points must be an integer >= 2, got 1"):
        rate_distortion_curve([0.5, 0.5], hamming(2), n_points=1)
    with pytest.raises(TypeError, match="n_points"):
        rate_distortion([0.5, 0.5], hamming(2), 0.1, n_points=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="D"):
        rate_distortion_curve([0.5, 0.5], hamming(2), D=0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        rate_distortion([0.5, 0.5], hamming(2))  # type: ignore[call-arg]
    with pytest.raises(ParameterError, match=r"tol must be a positive"):
        rate_distortion_curve([0.5, 0.5], hamming(2), tol=-1.0)


def test_d_out_of_range_names_the_range() -> None:
    with pytest.raises(ParameterError, match=r"\[D_min, D_max\] = \[0, 0\.5\].*got D=-0\.1"):
        rate_distortion([0.5, 0.5], hamming(2), D=-0.1)


def test_mi_privacy_distortion_checks_the_joint_law() -> None:
    with pytest.raises(ParameterError, match=r"one row per input of the prior \(4\)"):
        mi_privacy_distortion(np.full((2, 2), 0.25), hamming(2), D=0.1)
    with pytest.raises(
        ParameterError, match=r"got None \(for the whole curve, call mi_privacy_distortion_curve\)"
    ):
        mi_privacy_distortion(np.full((2, 2), 0.25), 1 - np.eye(4), None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- one return type


@pytest.mark.parametrize("function", [rate_distortion_curve, mi_privacy_distortion_curve])
def test_curves_are_sequences_of_point_results(function: object) -> None:
    curve = function([0.3, 0.7], hamming(2), n_points=6)  # type: ignore[operator]
    assert isinstance(curve, CurveResult)
    assert len(curve) == 6
    for i in range(len(curve)):
        point = curve[i]
        assert isinstance(point, DistortionResult)
        assert point is curve.points[i]
        assert point.distortion_achieved == curve.D[i]
        assert point.value == curve.value[i]
        assert curve.status[i] is point.status
        assert curve.iterations[i] == point.iterations
    assert curve.tol == TOL
    assert curve.method == "blahut"
    assert "all 6 points certified" in curve.message
    frame = curve.to_frame()
    assert len(frame) == len(curve)
    assert list(frame["D"]) == curve.D.tolist()
    assert list(frame["status"]) == ["converged"] * 6


def test_D_is_positional_or_keyword() -> None:
    by_position = rate_distortion([0.5, 0.5], hamming(2), 0.1)
    by_keyword = rate_distortion([0.5, 0.5], hamming(2), D=0.1)
    assert by_position.value == by_keyword.value
    assert isinstance(by_position, DistortionResult)
    joint = mi_privacy_distortion(np.full(2, 0.5), hamming(2), 0.1)
    assert joint.value == pytest.approx(by_position.value, abs=2 * TOL)


def test_curve_in_bits_and_its_warning_is_single() -> None:
    nats = rate_distortion_curve([0.5, 0.5], hamming(2), n_points=4)
    bits = rate_distortion_curve([0.5, 0.5], hamming(2), n_points=4, unit="bits")
    assert bits.unit == "bits"
    np.testing.assert_allclose(bits.value, nats.value / LN2, rtol=1e-12)
    with pytest.warns(dpcap.ConvergenceWarning, match=r"1 of 3 points not converged") as record:
        open_curve = rate_distortion_curve([0.3, 0.7], hamming(2), n_points=3, tol=1e-300)
    assert len(record) == 1
    assert record[0].filename == __file__  # attributed to the caller of the public function
    assert open_curve.converged.tolist() == [True, False, True]  # the endpoints are exact
    assert open_curve[1].status is Status.MAX_ITER
    assert "not converged" in open_curve[1].message


# ---------------------------------------------------------------------------- imports
# (the figure of R(D) and its tangents is tested with the other plots, tests/test_plots.py)


def test_import_does_not_load_matplotlib() -> None:
    import subprocess
    import sys

    code = (
        "import sys, dpcap.tradeoffs.risk_distortion, dpcap.plots; "
        "print('matplotlib' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
