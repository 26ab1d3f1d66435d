"""Fuzz group ``funnel``: :func:`dpcap.privacy_funnel`, :func:`dpcap.information_bottleneck`,
their curves, and :func:`dpcap.perfect_privacy`.

References (``docs/mathematics.rst`` §7): the returned mechanism re-verified in mpmath (its
``I(X;Y)`` and ``I(S;Y)`` along the chain ``S − X − Y``, and its feasibility), the bounds
``max(0, R − H(X|S)) ≤ PF(R) ≤ I(S;X)`` and ``IB(R) ≤ min(R, I(S;X))``, the closed forms
``PF = IB = R`` when S = X and ``0`` when S and X are independent, perfect privacy's
``g₀ ≤ H(X|S)``, ``g₀ = 0`` for an injective ``P_{S|X}`` and ``g₀ > 0`` when ``|S| < |X|``, and
the monotonicity of the curves. Alphabets are small (2–3) so that 10⁴ examples fit.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
from _harness import fuzz
from _reference import mp_entropy
from hypothesis import assume, example, given
from hypothesis import strategies as st

import dpcap
from dpcap.testing import joint_laws

#: Allowance for the recomputed informations of a mechanism (float64 vs mpmath).
SLACK = 1e-9

small_joints = joint_laws(max_rows=2, max_cols=2) | joint_laws(
    min_rows=2, max_rows=3, min_cols=2, max_cols=2
)


def quietly(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        return call(*args, **kwargs)


def law(joint: np.ndarray) -> list[list[object]]:
    total = mpmath.fsum(mpmath.mpf(float(v)) for v in joint.ravel())
    return [[mpmath.mpf(float(v)) / total for v in row] for row in joint]


def mp_information(J: list[list[object]]) -> object:
    """I(A;B) of a joint law J[a][b] in mpmath."""
    pa = [mpmath.fsum(r) for r in J]
    pb = [mpmath.fsum(J[a][b] for a in range(len(J))) for b in range(len(J[0]))]
    return mpmath.fsum(
        v * mpmath.log(v / (pa[a] * pb[b]))
        for a, r in enumerate(J)
        for b, v in enumerate(r)
        if v > 0
    )


def chain(joint: np.ndarray, W: np.ndarray) -> tuple[float, float]:
    """``(I(X;Y), I(S;Y))`` of the mechanism W = P_{Y|X} in mpmath."""
    J = law(joint)
    px = [mpmath.fsum(J[s][x] for s in range(len(J))) for x in range(len(J[0]))]
    rows = [[mpmath.mpf(float(v)) for v in row] for row in W]
    xy = [[px[x] * rows[x][y] for y in range(W.shape[1])] for x in range(len(px))]
    sy = [
        [mpmath.fsum(J[s][x] * rows[x][y] for x in range(len(px))) for y in range(W.shape[1])]
        for s in range(len(J))
    ]
    return float(mp_information(xy)), float(mp_information(sy))


def entropies(joint: np.ndarray) -> tuple[float, float, float]:
    """``(H(X), H(X|S), I(S;X))``."""
    px = joint.sum(axis=0)
    hx = float(mp_entropy(px / px.sum()))
    isx = float(mp_information(law(joint)))
    return hx, hx - isx, isx


def check_point(res: dpcap.FunnelResult, joint: np.ndarray, R: float, problem: str) -> None:
    W = res.mechanism
    px = joint.sum(axis=0)
    assert W.shape[0] == joint.shape[1]
    assert (W >= 0).all()
    assert np.abs(W[px > 0].sum(axis=1) - 1).max() <= 1e-9
    ixy, isy = chain(joint, W)
    assert abs(res.utility_achieved - ixy) <= SLACK * (1 + ixy), (res, ixy)
    assert abs(res.leakage_achieved - isy) <= SLACK * (1 + isy), (res, isy)
    assert res.lower <= res.upper + SLACK
    _hx, h_x_given_s, isx = entropies(joint)
    if problem == "pf":
        assert res.value == res.upper
        assert abs(res.upper - isy) <= SLACK * (1 + isy)
        assert ixy >= R - SLACK * (1 + R)  # feasible: I(X;Y) ≥ R
        assert res.upper >= max(0.0, R - h_x_given_s) - SLACK
        assert res.lower <= isx + SLACK
    else:
        assert res.value == res.lower
        assert abs(res.lower - isy) <= SLACK * (1 + isy)
        assert ixy <= R + SLACK * (1 + R)  # feasible: I(X;Y) ≤ R
        assert res.lower <= min(R, isx) + SLACK
        assert res.upper >= -SLACK


@fuzz(examples=50, quick=2)
@given(joint=small_joints, R=st.floats(5e-324, 1e-300))
@example(joint=np.array([[4.0, 4.0], [4.0, 1.0]]) / 13, R=5e-324)
def test_privacy_funnel_at_a_subnormal_level(joint: np.ndarray, R: float) -> None:
    """Fuzz finding F17: R = 5e-324 gave I(X;Y) = I(S;Y) = ∞."""
    h_x = entropies(joint)[0]
    assume(h_x >= R)  # R ∈ [0, H(X)]; a larger R is refused (ParameterError)
    check_point(quietly(dpcap.privacy_funnel, joint, R), joint, R, "pf")


@fuzz(examples=3000, quick=6)
@given(joint=small_joints, t=st.just(0.0) | st.floats(1e-300, 1.0))
def test_privacy_funnel_point(joint: np.ndarray, t: float) -> None:
    hx, _, _ = entropies(joint)
    R = t * hx
    check_point(quietly(dpcap.privacy_funnel, joint, R), joint, R, "pf")


@fuzz(examples=2000, quick=4)
@given(joint=joint_laws(max_rows=2, max_cols=2), t=st.floats(0.0, 1.0))
def test_information_bottleneck_point(joint: np.ndarray, t: float) -> None:
    hx, _, _ = entropies(joint)
    R = t * hx
    check_point(quietly(dpcap.information_bottleneck, joint, R), joint, R, "ib")


@fuzz(examples=1200, quick=4)
@given(
    p=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=3),
    q=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=2),
    t=st.floats(0.0, 1.0),
    same=st.booleans(),
)
def test_closed_forms(p: list[float], q: list[float], t: float, same: bool) -> None:
    """S = X: PF(R) = IB(R) = R. S independent of X: PF(R) = IB(R) = 0."""
    px = np.array(p) / sum(p)
    joint = np.diag(px) if same else np.outer(np.array(q) / sum(q), px)
    hx = float(mp_entropy(px))
    R = t * hx
    want = R if same else 0.0
    for call in (dpcap.privacy_funnel, dpcap.information_bottleneck):
        res = quietly(call, joint, R)
        assert res.lower <= want + 1e-7, (call.__name__, res, want)
        assert res.upper >= want - 1e-7, (call.__name__, res, want)


@fuzz(examples=400, quick=2)
@given(joint=joint_laws(max_rows=2, max_cols=2), n_points=st.integers(2, 4))
def test_curves_are_non_decreasing(joint: np.ndarray, n_points: int) -> None:
    for call in (dpcap.privacy_funnel_curve, dpcap.information_bottleneck_curve):
        curve = quietly(call, joint, n_points=n_points)
        R = curve.R
        assert (np.diff(R) >= 0).all()
        for i in range(len(R) - 1):  # non-decreasing: the value at R_i ≤ the value at R_{i+1}
            assert curve.lower[i] <= curve.upper[i + 1] + SLACK, (call.__name__, curve)
        problem = "pf" if curve.problem == "privacy_funnel" else "ib"
        for k, point in enumerate(curve):
            check_point(point, joint, float(R[k]), problem)


@fuzz(examples=200, quick=3)
@given(joint=joint_laws(min_rows=1, max_rows=3, min_cols=2, max_cols=3, degenerate=True))
def test_perfect_privacy_with_tiny_masses(joint: np.ndarray) -> None:
    """Fuzz finding F12: a value of X of mass near 1e-300 gave 0/0 (RuntimeWarning) in the
    mechanism."""
    px = joint.sum(axis=0)
    assume(((px > 0) & (px < 1e-100)).any())
    check_perfect_privacy(joint)


@fuzz(examples=3500, quick=6)
@given(joint=joint_laws(min_rows=1, max_rows=3, min_cols=1, max_cols=3))
def test_perfect_privacy(joint: np.ndarray) -> None:
    check_perfect_privacy(joint)


def check_perfect_privacy(joint: np.ndarray) -> None:
    res = quietly(dpcap.perfect_privacy, joint)
    _hx, h_x_given_s, _isx = entropies(joint)
    assert -SLACK <= res.lower <= res.upper + SLACK
    assert res.lower <= h_x_given_s + SLACK  # g₀ ≤ H(X|S)
    ixy, isy = chain(joint, res.mechanism)
    assert isy <= 1e-9, (res, isy)  # perfectly private: I(S;Y) = 0
    assert abs(res.value - ixy) <= SLACK * (1 + ixy)
    assert res.value == res.lower
    px = joint.sum(axis=0)
    support = px > 0
    T = joint[:, support] / px[support]
    rank = np.linalg.matrix_rank(T, tol=1e-9)
    if rank == support.sum():  # P_{S|X} injective on the support: g₀ = 0
        assert res.upper <= 1e-7
    else:  # a null direction of T: g₀ > 0 (Calmon et al. 2015)
        assume(np.linalg.svd(T, compute_uv=False)[-1] < 1e-12 or T.shape[0] < T.shape[1])
        assert res.upper > 0


@fuzz(examples=300, quick=2)
@given(joint=joint_laws(max_rows=2, max_cols=2), R=st.floats(0.0, 1.0), data=st.data())
def test_units_and_seed(joint: np.ndarray, R: float, data: st.DataObject) -> None:
    hx, _, _ = entropies(joint)
    R = min(R, hx)
    nats = quietly(dpcap.privacy_funnel, joint, R)
    bits = quietly(dpcap.privacy_funnel, joint, R / math.log(2), unit="bits")
    assert abs(bits.value * math.log(2) - nats.value) <= 1e-9
    seed = data.draw(st.integers(0, 2**31 - 1))
    other = quietly(dpcap.privacy_funnel, joint, R, seed=seed)
    assert other.lower <= nats.upper + 1e-7
    assert nats.lower <= other.upper + 1e-7
