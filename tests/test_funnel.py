"""Privacy funnel, information bottleneck, perfect privacy, inference privacy (Hsu et al. §III-B).

Every expected value is a theorem written out here, never the code's output:

* the doubly symmetric binary source ``P(S,X) = ½ [[1−p, p], [p, 1−p]]``: with
  ``F(v) = h(p ⋆ h⁻¹(v))`` (``a ⋆ b = a(1−b) + b(1−a)``, h in nats) convex on ``[0, log 2]``
  (Mrs. Gerber's lemma, Wyner & Ziv 1973),

  - ``IB(R) = log 2 − F(log 2 − R)``: ``H(S|Y) ≥ F(H(X|Y))`` by the lemma's conditional form
    and F is increasing, and a BSC(h⁻¹(log 2 − R)) from X attains it;
  - ``PF(R) = R · I(S;X) / H(X)``: F lies below its chord, ``F(v) ≤ h(p) + v (1 − h(p)/log 2)``,
    i.e. ``h(p ⋆ q) ≤ h(p) + ν h(q)`` for every posterior q — the LP's dual certificate with
    ``ν = I(S;X)/H(X)`` — and erasing X with probability ``1 − R/log 2`` attains it;

* perfect privacy (Calmon et al. 2015): ``g₀ > 0`` iff ``P_{S|X}`` has a non-trivial null space
  (always if ``|S| < |X|``, never for an invertible one); for ``S = X mod 2`` with X uniform on
  4 values, ``g₀ = log 2 = H(X|S)`` (releasing ``X div 2``, independent of the parity);
* properties: ``0 = PF(0) = IB(0)``, ``PF(H(X)) = IB(H(X)) = I(S;X)``, ``PF ≤ IB``, both
  non-decreasing, ``PF(R) ≥ R − H(X|S)``, ``IB(R) ≤ min(R, I(S;X))``, data processing
  ``I(S;Y) ≤ I(X;Y)``; every certified bracket contains the leakage of *any* mechanism at its
  own utility (a random mechanism is a witness);
* inference privacy with S = X binary uniform and Hamming distortion is the rate–distortion
  function ``log 2 − h(Δ)``.

Information values of the returned mechanisms are recomputed here with numpy.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import rel_entr, xlogy

import dpcap
from dpcap.bounds import binary_entropy, binary_entropy_inverse
from dpcap.errors import ConvergenceWarning, ParameterError, PriorError, Status
from dpcap.result import DistortionResult, FunnelCurve, FunnelResult
from dpcap.solvers import envelope_lp, envelope_mesh
from dpcap.solvers.status import EngineStatus
from dpcap.testing import distributions
from dpcap.tradeoffs._funnel_points import repair
from dpcap.tradeoffs._markov import joint_problem
from dpcap.tradeoffs.funnel import (
    information_bottleneck,
    information_bottleneck_curve,
    privacy_funnel,
    privacy_funnel_curve,
)
from dpcap.tradeoffs.inference import inference_privacy
from dpcap.tradeoffs.zero_leakage import perfect_privacy

FloatArray = NDArray[np.float64]

LN2 = math.log(2.0)
SLACK = 1e-12  # rounding allowance when a closed form is compared with a bracket end
TOL = 1e-7
ROOT = Path(__file__).resolve().parents[1]


def h(x: float) -> float:
    return float(binary_entropy(x))


def star(a: float, b: float) -> float:
    return a * (1 - b) + b * (1 - a)


def dsbs(p: float) -> FloatArray:
    joint: FloatArray = 0.5 * np.array([[1 - p, p], [p, 1 - p]])
    return joint


def ib_dsbs(p: float, R: float) -> float:
    return LN2 - h(star(p, float(binary_entropy_inverse(max(LN2 - R, 0.0)))))


def pf_dsbs(p: float, R: float) -> float:
    return R * (LN2 - h(p)) / LN2


def informations(joint: FloatArray, W: FloatArray) -> tuple[float, float]:
    """``(I(X;Y), I(S;Y))`` for ``joint[s, x]`` and ``W = P_{Y|X}``, from scratch."""
    px, ps = joint.sum(axis=0), joint.sum(axis=1)
    py = px @ W
    ixy = float(np.sum(rel_entr(px[:, None] * W, np.outer(px, py))))
    isy = float(np.sum(rel_entr(joint @ W, np.outer(ps, py))))
    return max(ixy, 0.0), max(isy, 0.0)


def entropy(p: FloatArray) -> float:
    return float(-np.sum(xlogy(p, p)))


def joint_info(joint: FloatArray) -> tuple[float, float, float]:
    """``(H(X), H(S), I(S;X))``."""
    px, ps = joint.sum(axis=0), joint.sum(axis=1)
    return entropy(px), entropy(ps), entropy(px) + entropy(ps) - entropy(joint.ravel())


def random_joint(shape: tuple[int, int], seed: int) -> FloatArray:
    joint: FloatArray = np.random.default_rng(seed).dirichlet(np.ones(shape[0] * shape[1]))
    return joint.reshape(shape)


@st.composite
def joints(draw: st.DrawFn, max_s: int = 3, max_x: int = 3) -> FloatArray:
    m = draw(st.integers(1, max_s))
    n = draw(st.integers(2, max_x))
    law = draw(distributions(m * n, allow_zeros=True, min_mass=1e-2))
    joint: FloatArray = law.reshape(m, n)
    return joint


def check_point(joint: FloatArray, res: FunnelResult, kind: str) -> None:
    """The contract of one point: its values are its mechanism's, which is feasible."""
    W = res.mechanism
    assert W.shape[0] == joint.shape[1]
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    ixy, isy = informations(joint, W)
    assert res.utility_achieved == pytest.approx(ixy, abs=1e-12)
    assert res.leakage_achieved == pytest.approx(isy, abs=1e-12)
    assert res.value == pytest.approx(isy, abs=1e-12)
    assert isy <= ixy + SLACK  # data processing
    assert res.lower <= res.value <= res.upper
    if kind == "pf":
        assert res.value == res.upper
        assert ixy >= res.target - SLACK
    else:
        assert res.value == res.lower
        assert ixy <= res.target + SLACK


# --------------------------------------------------------------------------------------------
# Closed forms on the doubly symmetric binary source


@pytest.mark.parametrize("p", [0.05, 0.1, 0.3])
@pytest.mark.parametrize("R", [0.0, 0.05, 0.3, 0.6, LN2])
def test_ib_dsbs_mrs_gerber(p: float, R: float) -> None:
    joint = dsbs(p)
    res = information_bottleneck(joint, R=R)
    exact = ib_dsbs(p, R)
    assert res.lower - SLACK <= exact <= res.upper + SLACK
    assert res.gap <= TOL
    assert res.status is Status.CONVERGED
    check_point(joint, res, "ib")


@pytest.mark.parametrize("p", [0.05, 0.1, 0.3])
@pytest.mark.parametrize("R", [0.0, 0.05, 0.3, 0.6, LN2])
def test_pf_dsbs_linear(p: float, R: float) -> None:
    joint = dsbs(p)
    res = privacy_funnel(joint, R=R)
    exact = pf_dsbs(p, R)
    assert res.lower - SLACK <= exact <= res.upper + SLACK
    assert res.gap <= TOL
    check_point(joint, res, "pf")


def test_pf_dsbs_erasure_mechanism_attains_the_line() -> None:
    """Erasing X with probability e: I(X;Y) = (1−e) log 2, I(S;Y) = (1−e) I(S;X)."""
    p, e = 0.1, 0.4
    joint = dsbs(p)
    W = np.array([[1 - e, 0.0, e], [0.0, 1 - e, e]])
    ixy, isy = informations(joint, W)
    assert ixy == pytest.approx((1 - e) * LN2, abs=1e-15)
    assert isy == pytest.approx(pf_dsbs(p, ixy), abs=1e-15)
    res = privacy_funnel(joint, R=ixy)
    assert res.lower - SLACK <= isy <= res.upper + SLACK


def test_ib_dsbs_bsc_attains() -> None:
    p, a = 0.1, 0.2
    joint = dsbs(p)
    W = np.array([[1 - a, a], [a, 1 - a]])
    ixy, isy = informations(joint, W)
    assert ixy == pytest.approx(LN2 - h(a), abs=1e-15)
    assert isy == pytest.approx(LN2 - h(star(p, a)), abs=1e-15)
    res = information_bottleneck(joint, R=ixy)
    assert res.lower - SLACK <= isy <= res.upper + SLACK


def test_curves_dsbs_in_bits() -> None:
    p = 0.1
    pf = privacy_funnel_curve(dsbs(p), n_points=6, unit="bits")
    ib = information_bottleneck_curve(dsbs(p), n_points=6, unit="bits")
    np.testing.assert_allclose(pf.R, np.linspace(0.0, 1.0, 6), atol=1e-15)
    for k, R_bits in enumerate(pf.R):
        R = R_bits * LN2
        assert pf.lower[k] * LN2 - SLACK <= pf_dsbs(p, R) <= pf.upper[k] * LN2 + SLACK
        assert ib.lower[k] * LN2 - SLACK <= ib_dsbs(p, R) <= ib.upper[k] * LN2 + SLACK
    assert pf.unit == ib.unit == "bits"
    assert pf.points[2].target == pytest.approx(0.4)


# --------------------------------------------------------------------------------------------
# Curves: endpoints, order, monotonicity, mechanisms


@pytest.fixture(scope="module")
def curves_3x3() -> tuple[FloatArray, FunnelCurve, FunnelCurve]:
    joint = random_joint((3, 3), 7)
    pf = privacy_funnel_curve(joint, n_points=9, tol=1e-6)
    ib = information_bottleneck_curve(joint, n_points=9, tol=1e-6)
    return joint, pf, ib


def test_curve_endpoints(curves_3x3: tuple[FloatArray, FunnelCurve, FunnelCurve]) -> None:
    joint, pf, ib = curves_3x3
    hx, _, isx = joint_info(joint)
    assert pf.R[0] == 0.0
    assert pf.R[-1] == pytest.approx(hx, abs=1e-14)
    for curve in (pf, ib):
        assert curve.lower[0] == curve.upper[0] == 0.0
        assert curve.lower[-1] == pytest.approx(isx, abs=1e-12)
        assert curve.upper[-1] == pytest.approx(isx, abs=1e-12)


def test_pf_below_ib_and_monotone(curves_3x3: tuple[FloatArray, FunnelCurve, FunnelCurve]) -> None:
    joint, pf, ib = curves_3x3
    hx, _, isx = joint_info(joint)
    assert np.all(pf.lower <= ib.upper + SLACK)
    assert np.all(pf.value <= ib.value + 1e-6)
    for curve in (pf, ib):
        assert np.all(np.diff(curve.value) >= 0)
        assert np.all(np.diff(curve.lower) >= -SLACK)
        assert np.all(np.diff(curve.upper) >= -SLACK)
        assert np.all(curve.status == Status.CONVERGED)
        assert np.all(curve.upper - curve.lower <= 1e-6)
    # trivial bounds: PF(R) ≥ R − H(X|S), IB(R) ≤ min(R, I(S;X))
    assert np.all(pf.upper >= pf.R - (hx - isx) - SLACK)
    assert np.all(ib.lower <= np.minimum(ib.R, isx) + SLACK)
    # PF is convex and IB concave in R (second differences, up to the certified gaps)
    assert np.all(np.diff(pf.lower, 2) >= -4e-6)
    assert np.all(np.diff(ib.upper, 2) <= 4e-6)


def test_every_point_is_its_mechanism(
    curves_3x3: tuple[FloatArray, FunnelCurve, FunnelCurve],
) -> None:
    joint, pf, ib = curves_3x3
    for curve, kind in ((pf, "pf"), (ib, "ib")):
        assert len(curve) == 9
        for k, point in enumerate(curve.points):
            assert curve[k] is point
            check_point(joint, point, kind)
            assert point.target == curve.R[k]
            assert curve.utility[k] == point.utility_achieved
            assert curve.leakage[k] == point.leakage_achieved
            assert point.mechanism.shape[1] <= joint.shape[1] + 1 + joint.shape[1]


@settings(max_examples=15, deadline=None)
@given(joints(), st.integers(0, 2**32 - 1))
def test_brackets_contain_any_mechanism(joint: FloatArray, seed: int) -> None:
    """A random mechanism at utility u certifies PF(u) ≤ its leakage ≤ IB(u)."""
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.full(3, 0.5), size=joint.shape[1])
    u, leak = informations(joint, W)
    pf = privacy_funnel(joint, R=u, tol=1e-6)
    ib = information_bottleneck(joint, R=u, tol=1e-6)
    assert pf.lower <= leak + SLACK
    assert ib.upper >= leak - SLACK
    assert pf.lower <= ib.upper + SLACK
    check_point(joint, pf, "pf")
    check_point(joint, ib, "ib")


def test_zero_rows_and_columns() -> None:
    """A value of X (or S) of probability 0 changes nothing; its row is still a law."""
    base = dsbs(0.1)
    joint = np.zeros((3, 3))
    joint[:2, [0, 2]] = base
    res = privacy_funnel(joint, R=0.3)
    assert res.lower - SLACK <= pf_dsbs(0.1, 0.3) <= res.upper + SLACK
    check_point(joint, res, "pf")
    ib = information_bottleneck(joint, R=0.3)
    assert ib.lower - SLACK <= ib_dsbs(0.1, 0.3) <= ib.upper + SLACK
    check_point(joint, ib, "ib")


def test_identity_and_independence() -> None:
    """S = X: PF(R) = IB(R) = R. S independent of X: PF = IB = 0."""
    same = np.diag([0.2, 0.3, 0.5])
    for fn in (privacy_funnel, information_bottleneck):
        res = fn(same, R=0.5)
        assert res.lower - SLACK <= 0.5 <= res.upper + SLACK
        assert res.gap <= TOL
    independent = np.outer([0.3, 0.7], [0.2, 0.3, 0.5])
    for fn in (privacy_funnel, information_bottleneck):
        res = fn(independent, R=0.5)
        assert res.upper <= SLACK
        assert res.lower >= -SLACK


def test_local_method_agrees_with_grid() -> None:
    joint = random_joint((3, 4), 11)
    hx, _, _ = joint_info(joint)
    R = 0.55 * hx
    for fn in (privacy_funnel, information_bottleneck):
        grid = fn(joint, R=R, tol=1e-6)
        with pytest.warns(ConvergenceWarning, match="trivial bound"):
            local = fn(joint, R=R, method="local")
        if fn is privacy_funnel:  # the achieved end cannot beat the certified one
            assert local.value >= grid.lower - SLACK
        else:
            assert local.value <= grid.upper + SLACK
        assert abs(local.value - grid.value) <= 1e-5
        assert local.method == "local"
        assert local.status is Status.INACCURATE
        check_point(joint, local, "pf" if fn is privacy_funnel else "ib")


def test_large_alphabet_uses_local_method() -> None:
    joint = random_joint((2, 6), 3)
    hx, _, isx = joint_info(joint)
    with pytest.warns(ConvergenceWarning, match="local method"):
        res = privacy_funnel(joint, R=0.9 * hx)
    assert res.method == "local"
    assert res.lower == pytest.approx(max(0.0, 0.9 * hx - (hx - isx)), abs=1e-12)
    check_point(joint, res, "pf")
    with pytest.warns(ConvergenceWarning, match="points not converged"):
        curve = information_bottleneck_curve(joint, n_points=3)
    assert curve.method == "local"
    np.testing.assert_allclose(curve.upper[1], min(curve.R[1], isx), atol=1e-12)


def test_dual_line_is_a_global_bound() -> None:
    """The certificate at one R bounds PF at every R': check it against the closed form."""
    p = 0.2
    res = privacy_funnel(dsbs(p), R=0.4)
    details = dict(res.details)
    a, nu = details["dual_intercept"], details["dual_slope"]
    assert nu == res.slope
    for R in np.linspace(0.0, LN2, 11):
        assert a + nu * R <= pf_dsbs(p, float(R)) + SLACK


# --------------------------------------------------------------------------------------------
# The engine's certificate


@settings(max_examples=25, deadline=None)
@given(
    joints(max_s=3, max_x=4),
    st.floats(0.0, 2.0),
    st.sampled_from(["pf", "ib"]),
    st.integers(0, 2**32 - 1),
)
def test_violation_bound_is_an_upper_bound(
    joint: FloatArray, nu: float, kind: str, seed: int
) -> None:
    """For any dual (μ, ν), φ(q) ≤ bound at random posteriors q (faces included)."""
    px, ps = joint.sum(axis=0), joint.sum(axis=1)
    xs, ss = px > 0, ps > 0
    if xs.sum() < 2:
        return
    T = joint[np.ix_(ss, xs)] / px[xs]
    n = T.shape[1]
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    mesh = envelope_mesh.Mesh(T, resolution=4)
    anchors = rng.dirichlet(np.ones(n), size=2)
    bound = envelope_lp.violation_bound(mesh, mu, nu, kind, anchors)  # type: ignore[arg-type]
    Q = np.concatenate(
        [
            rng.dirichlet(np.ones(n), size=400),
            rng.dirichlet(np.full(n, 0.1), size=400),
            np.eye(n),
        ]
    )
    sign = 1.0 if kind == "pf" else -1.0
    hq = -np.sum(xlogy(Q, Q), axis=1)
    tq = Q @ T.T
    htq = -np.sum(xlogy(tq, tq), axis=1)
    phi = sign * htq - Q @ mu - nu * sign * hq
    assert float(phi.max()) <= bound + 1e-12


def test_mesh_covers_the_simplex() -> None:
    """Lattice cells have the simplex's volume; bisection keeps every vertex on it."""
    T = np.array([[0.7, 0.2, 0.4], [0.3, 0.8, 0.6]])
    mesh = envelope_mesh.Mesh(T, resolution=4)
    V = mesh.points[mesh.cells]
    edges = V[:, 1:, :2] - V[:, :1, :2]
    volume = np.abs(np.linalg.det(edges)).sum() / 2
    assert volume == pytest.approx(0.5, abs=1e-12)  # the triangle {q1, q2 ≥ 0, q1 + q2 ≤ 1}
    mesh.bisect(np.ones(mesh.n_cells, dtype=bool))
    V = mesh.points[mesh.cells]
    edges = V[:, 1:, :2] - V[:, :1, :2]
    assert np.abs(np.linalg.det(edges)).sum() / 2 == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_array_equal(mesh.points.sum(axis=1), 1.0)


# --------------------------------------------------------------------------------------------
# Perfect privacy


def test_perfect_privacy_parity() -> None:
    """S = X mod 2, X uniform on 4 values: g₀ = log 2 = H(X|S)."""
    joint = np.array([[0.25, 0.0, 0.25, 0.0], [0.0, 0.25, 0.0, 0.25]])
    res = perfect_privacy(joint)
    assert res.lower - SLACK <= LN2 <= res.upper + SLACK
    assert res.value == pytest.approx(LN2, abs=1e-12)
    assert res.problem == "perfect_privacy"
    ixy, isy = informations(joint, res.mechanism)
    assert ixy == pytest.approx(res.value, abs=1e-12)
    assert isy <= 1e-12
    assert dict(res.details)["nullity"] == 2
    # consistency with the funnel: PF(R) = 0 up to g₀, PF(R) > 0 beyond
    assert privacy_funnel(joint, R=0.9 * LN2).upper <= 1e-9
    assert privacy_funnel(joint, R=1.1 * LN2).lower > 0


def test_perfect_privacy_two_vertices() -> None:
    """T = [[1, ½, 0], [0, ½, 1]], P_X = (¼, ½, ¼): vertices (½, 0, ½), (0, 1, 0), g₀ = log 2."""
    res = perfect_privacy([[0.25, 0.25, 0.0], [0.0, 0.25, 0.25]])
    assert res.lower - SLACK <= LN2 <= res.upper + SLACK
    assert dict(res.details)["vertices"] == 2


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 3), st.integers(1, 2), st.integers(0, 2**32 - 1))
def test_perfect_privacy_exists_when_s_smaller(n_s: int, extra: int, seed: int) -> None:
    joint = random_joint((n_s, n_s + extra), seed)
    res = perfect_privacy(joint)
    assert res.value > 1e-6
    ixy, isy = informations(joint, res.mechanism)
    assert isy <= 1e-12
    assert ixy == pytest.approx(res.value, abs=1e-12)
    assert res.lower <= res.upper
    assert res.status is Status.CONVERGED
    _, _, isx = joint_info(joint)
    hx = entropy(joint.sum(axis=0))
    assert res.upper <= hx - isx + SLACK  # g₀ ≤ H(X|S)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_no_perfect_privacy_for_invertible_channel(n: int, seed: int) -> None:
    joint = random_joint((n, n), seed)  # P_{S|X} invertible with probability 1
    res = perfect_privacy(joint)
    assert res.value == res.upper == 0.0
    assert "injective" in res.message


def test_perfect_privacy_bits() -> None:
    joint = np.array([[0.25, 0.0, 0.25, 0.0], [0.0, 0.25, 0.0, 0.25]])
    assert perfect_privacy(joint, unit="bits").value == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------------------------
# Inference privacy (Calmon & Fawaz)


@pytest.mark.parametrize("Delta", [0.05, 0.2, 0.45])
def test_inference_privacy_rate_distortion(Delta: float) -> None:
    joint = np.array([[0.5, 0.0], [0.0, 0.5]])  # S = X, uniform
    res = inference_privacy(joint, 1.0 - np.eye(2), Delta)
    exact = LN2 - h(Delta)
    assert isinstance(res, DistortionResult)
    assert res.lower - 1e-9 <= exact <= res.upper + 1e-9
    assert res.upper - res.lower <= TOL
    assert res.distortion_achieved <= Delta
    _, isy = informations(joint, res.mechanism)
    assert res.value == pytest.approx(isy, abs=1e-12)
    assert res.slope == pytest.approx(math.log((1 - Delta) / Delta), rel=1e-3)


def test_inference_privacy_general() -> None:
    joint = random_joint((2, 3), 5)
    d = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    res = inference_privacy(joint, d, 0.3)
    px = joint.sum(axis=0)
    _, isy = informations(joint, res.mechanism)
    assert res.value == pytest.approx(isy, abs=1e-12)
    assert float(px @ np.sum(d * res.mechanism, axis=1)) <= 0.3
    assert res.upper - res.lower <= TOL
    # the funnel at the mechanism's own utility cannot leak more
    ixy, _ = informations(joint, res.mechanism)
    assert privacy_funnel(joint, R=ixy, tol=1e-6).lower <= isy + SLACK


def test_inference_privacy_budget_beyond_d_max() -> None:
    joint = random_joint((2, 2), 1)
    res = inference_privacy(joint, 1.0 - np.eye(2), 0.9)
    assert 0.0 <= res.lower <= res.value <= 1e-15  # 0 up to the rounding of the sums
    assert res.method == "exact"
    assert res.dp_level == 0.0


# --------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    ("joint", "error", "match"),
    [
        ([[0.5, 0.4], [0.05, 0.0]], PriorError, "joint must sum to 1"),
        ([[0.6, 0.5], [-0.1, 0.0]], PriorError, "joint has a negative entry"),
        ([0.5, 0.5], PriorError, "joint must be a 2-D matrix"),
        ([[0.5, np.nan], [0.25, 0.25]], PriorError, "joint contains NaN"),
    ],
)
def test_invalid_joint(joint: object, error: type[Exception], match: str) -> None:
    for fn in (privacy_funnel, information_bottleneck):
        with pytest.raises(error, match=match):
            fn(joint, R=0.1)
    with pytest.raises(error, match=match):
        privacy_funnel_curve(joint)
    with pytest.raises(error, match=match):
        perfect_privacy(joint)
    with pytest.raises(error, match=match):
        inference_privacy(joint, [[0, 1], [1, 0]], 0.1)


@pytest.mark.parametrize("R", [-0.1, 0.8, math.inf, math.nan, "0.3", True])
def test_invalid_R(R: object) -> None:
    match = r"R must be in \[0, H\(X\)\]|R must be a finite real number"
    for fn in (privacy_funnel, information_bottleneck):
        with pytest.raises(ParameterError, match=match):
            fn(dsbs(0.1), R=R)  # type: ignore[arg-type]


def test_R_at_entropy_in_bits() -> None:
    res = privacy_funnel(dsbs(0.1), R=1.0, unit="bits")
    assert res.value == pytest.approx((LN2 - h(0.1)) / LN2, abs=1e-12)
    with pytest.raises(ParameterError, match=r"R must be in \[0, H\(X\)\] = \[0, 1\] bits"):
        privacy_funnel(dsbs(0.1), R=1.01, unit="bits")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "exhaustive"}, "method must be one of"),
        ({"tol": 0.0}, "tol must be a positive finite number"),
        ({"tol": math.inf}, "tol must be a positive finite number"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"unit": "hartleys"}, "unit must be one of"),
        ({"seed": 1.5}, "seed must be an integer"),
    ],
)
def test_invalid_options(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        privacy_funnel(dsbs(0.1), R=0.1, **kwargs)  # type: ignore[arg-type]


def test_invalid_curve_options() -> None:
    with pytest.raises(ParameterError, match="n_points must be an integer >= 2"):
        privacy_funnel_curve(dsbs(0.1), n_points=1)
    with pytest.raises(ParameterError, match=r"method='grid' .* limited to 4 values of X"):
        information_bottleneck_curve(random_joint((2, 5), 0), method="grid")


@pytest.mark.parametrize(
    ("Delta", "match"),
    [
        (-0.1, "Delta must be >= 0"),
        (math.nan, "Delta must be >= 0"),
        (math.inf, "Delta must be finite"),
        ("0.1", "Delta must be a real number"),
    ],
)
def test_invalid_delta(Delta: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        inference_privacy(dsbs(0.1), [[0, 1], [1, 0]], Delta)  # type: ignore[arg-type]


def test_inference_privacy_other_errors() -> None:
    d = [[1.0, 2.0], [1.0, 2.0]]  # D_min = 1
    with pytest.raises(ParameterError, match="Delta must be >= D_min = 1"):
        inference_privacy(dsbs(0.1), d, 0.5)
    with pytest.raises(ParameterError, match="distortion must be a 2-D matrix"):
        inference_privacy(dsbs(0.1), [[0, 1, 2]], 0.5)
    with pytest.raises(ParameterError, match="distortion has a negative entry"):
        inference_privacy(dsbs(0.1), [[0, -1], [1, 0]], 0.5)
    with pytest.raises(ParameterError, match="solver must be one of"):
        inference_privacy(dsbs(0.1), [[0, 1], [1, 0]], 0.1, solver="MOSEK")


# --------------------------------------------------------------------------------------------
# Results and imports


def test_result_objects() -> None:
    res = privacy_funnel(dsbs(0.1), R=0.3)
    assert float(res) == res.value
    assert "privacy_funnel" in repr(res)
    assert "converged" in repr(res)
    curve = information_bottleneck_curve(dsbs(0.1), n_points=3)
    assert "information_bottleneck" in repr(curve)
    assert "3 points" in repr(curve)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        privacy_funnel_curve(dsbs(0.1), n_points=3)


def test_curve_is_a_sequence_of_point_results(
    curves_3x3: tuple[FloatArray, FunnelCurve, FunnelCurve],
) -> None:
    """``curve[i]`` is a FunnelResult; one frame row per point; the dict is JSON."""
    _, pf, ib = curves_3x3
    for curve in (pf, ib):
        assert isinstance(curve, FunnelCurve)
        assert curve.tol == 1e-6
        assert curve.iterations.shape == (len(curve),)
        for i in range(len(curve)):
            point = curve[i]
            assert isinstance(point, FunnelResult)
            assert point.status is curve.status[i]
            assert point.iterations == curve.iterations[i]
            assert (point.value, point.lower, point.upper) == (
                curve.value[i],
                curve.lower[i],
                curve.upper[i],
            )
        assert curve[-1] is curve.points[-1]
        assert list(curve) == list(curve.points)
        assert bool(np.all(curve.converged))
        frame = curve.to_frame()
        assert len(frame) == len(curve)
        np.testing.assert_array_equal(frame["R"], curve.R)
        np.testing.assert_array_equal(frame["leakage"], curve.leakage)
        assert set(frame["problem"]) == {curve.problem}
        data = json.loads(json.dumps(curve.to_dict()))
        assert data["problem"] == curve.problem
        assert len(data["points"]) == len(curve)
        assert data["status"] == ["converged"] * len(curve)
    point = json.loads(json.dumps(pf[3].to_dict()))
    assert point["problem"] == "privacy_funnel"
    assert len(pf[3].to_frame()) == 1


def test_curve_message_and_warning_once() -> None:
    """An open curve warns once (not once per point) and says how many points are open."""
    joint = random_joint((2, 6), 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curve = information_bottleneck_curve(joint, n_points=3)
    assert len([w for w in caught if issubclass(w.category, ConvergenceWarning)]) == 1
    assert "of 3 points not converged" in curve.message
    assert caught[0].filename == __file__  # attributed to the caller, not to dpcap
    done = privacy_funnel_curve(dsbs(0.1), n_points=3)
    assert "all 3 points certified" in done.message


def test_signatures() -> None:
    """Data positional-only, the parameter positional-or-keyword, options keyword-only."""
    joint = dsbs(0.1)
    assert privacy_funnel(joint, 0.3).value == privacy_funnel(joint, R=0.3).value
    assert information_bottleneck(joint, 0.3).value == information_bottleneck(joint, R=0.3).value
    d = [[0.0, 1.0], [1.0, 0.0]]
    assert inference_privacy(joint, d, Delta=0.2).value == pytest.approx(
        inference_privacy(joint, d, 0.2).value, abs=1e-12
    )
    with pytest.raises(TypeError):
        privacy_funnel(joint=joint, R=0.3)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        privacy_funnel(joint, 0.3, "grid")  # type: ignore[misc]
    with pytest.raises(TypeError):
        privacy_funnel_curve(joint, 5)  # type: ignore[misc]
    with pytest.raises(TypeError):
        inference_privacy(joint, d, 0.2, "ECOS")  # type: ignore[misc]
    assert dpcap.FunnelCurve is FunnelCurve
    assert dpcap.perfect_privacy is perfect_privacy
    assert dpcap.inference_privacy is inference_privacy


@pytest.mark.parametrize("solver", ["clarabel", "Clarabel", "CLARABEL", "ecos", "scs"])
def test_inference_solver_names_case_insensitive(solver: str) -> None:
    joint = np.array([[0.5, 0.0], [0.0, 0.5]])
    res = inference_privacy(joint, 1.0 - np.eye(2), 0.2, solver=solver, tol=1e-5)
    exact = LN2 - h(0.2)
    assert res.lower - 1e-6 <= exact <= res.upper + 1e-6
    assert res.method == f"conic/{solver.upper()}"
    with pytest.raises(ParameterError, match=r"solver must be one of .*case-insensitive"):
        inference_privacy(joint, 1.0 - np.eye(2), 0.2, solver="clarabel2")


def test_engine_statuses_are_engine_status() -> None:
    """The envelope engine reports EngineStatus; the query maps it with the one map."""
    problem = joint_problem(random_joint((2, 3), 4))
    R = 0.5 * problem.hx
    sol, _ = envelope_lp.solve(problem.T, problem.p, R, "pf", tol=1e-6, max_iter=1_000)
    assert sol.status is EngineStatus.OPTIMAL
    sol, _ = envelope_lp.solve(problem.T, problem.p, R, "ib", tol=1e-14, max_iter=2)
    assert sol.status is EngineStatus.MAX_ITER
    sol, mesh = envelope_lp.solve(
        problem.T, problem.p, R, "pf", tol=1e-14, max_iter=1_000, max_cells=10
    )
    assert sol.status is EngineStatus.MAX_CELLS
    assert mesh.n_cells >= 10
    rng = np.random.default_rng(0)
    local = envelope_lp.local_solve(
        problem.T, problem.p, R, "ib", tol=1e-6, max_iter=1_000, rng=rng
    )
    assert local.status is EngineStatus.LOCAL
    # out of budget while columns are still found: the support is the last LP's own
    short = envelope_lp.local_solve(problem.T, problem.p, R, "ib", tol=1e-9, max_iter=1, rng=rng)
    assert short.status is EngineStatus.MAX_ITER
    assert short.posteriors.shape[0] == short.weights.shape[0]
    np.testing.assert_allclose(short.weights @ short.posteriors, problem.p, atol=1e-9)
    with pytest.warns(ConvergenceWarning, match="not converged.*after 1 iterations"):
        res = privacy_funnel(problem.joint, R, tol=1e-14, max_iter=1)
    assert res.status is Status.MAX_ITER
    assert "the engine stopped: max_iter" in res.message


@pytest.mark.parametrize("kind", ["pf", "ib"])
@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.7, 0.95])
def test_repair_least_mixing_weight(kind: str, fraction: float) -> None:
    """θ is the least weight meeting R, by the rounding rule (no more than a few ulps above
    the analytic weight), and the mixture's I(X;Y), recomputed, meets R."""
    joint = random_joint((2, 3), 8)
    problem = joint_problem(joint)
    R = fraction * problem.hx
    if kind == "pf":  # from nothing: I_W = 0, θ* = R / H(X)
        W, analytic = np.ones((3, 1)), R / problem.hx
    else:  # from full disclosure: I_W = H(X), θ* = 1 − R / H(X)
        W, analytic = np.eye(3), 1.0 - R / problem.hx
    mixed, theta = repair(problem, W, R, kind)  # type: ignore[arg-type]
    ixy, _ = informations(joint, mixed)
    assert (ixy >= R) if kind == "pf" else (ixy <= R)
    assert analytic <= theta <= analytic + 1e-12
    np.testing.assert_allclose(mixed.sum(axis=1), 1.0, atol=1e-15)
    unchanged, zero = repair(problem, W, 0.0 if kind == "pf" else problem.hx, kind)  # type: ignore[arg-type]
    assert zero == 0.0
    assert unchanged is W


def test_modules_import_no_heavy_dependencies() -> None:
    code = (
        "import sys, dpcap.tradeoffs.funnel, dpcap.tradeoffs.zero_leakage, "
        "dpcap.tradeoffs.inference, "
        "dpcap.solvers.envelope_lp, dpcap.solvers.vertices, dpcap.solvers.inference; "
        "heavy = {'cvxpy', 'matplotlib'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_failed_lp_falls_back_to_a_certified_trivial_point(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When every envelope LP fails, the trivial mechanism (full disclosure) is still a usable,
    feasible point: the result is an open bracket (inaccurate), not 'failed' (no usable point)."""
    from dpcap.solvers import envelope_lp

    monkeypatch.setattr(envelope_lp, "_envelope_lp", lambda *args, **kwargs: None)
    joint = [[0.45, 0.05], [0.05, 0.45]]
    with pytest.warns(dpcap.ConvergenceWarning):
        res = dpcap.privacy_funnel(joint, 0.5)
    assert res.status is dpcap.Status.INACCURATE
    assert res.utility_achieved >= 0.5  # full disclosure meets any R ≤ H(X)
    isx = math.log(2) - (-0.9 * math.log(0.9) - 0.1 * math.log(0.1))  # I(S;X) of the DSBS(0.1)
    assert res.leakage_achieved == pytest.approx(isx, abs=1e-12)
    assert res.lower <= res.upper
