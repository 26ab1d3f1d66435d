"""Regression tests for fuzz findings F1, F3, F4, F6, F9, F10, F12 and F17 (issue 10).

Every expected value is a closed form or an independent mpmath evaluation; the library's own
output is never the reference. Run with RuntimeWarning as an error (the suite's setting): no
floating-point warning may reach the user.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest

import dpcap
from dpcap import bounds

mp = mpmath.mp


def _strict(call, *args, **kwargs):
    """Call with every RuntimeWarning an error (independent of the pytest configuration)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        return call(*args, **kwargs)


def _mp_law(p):
    P = [mpmath.mpf(float(v)) for v in p]
    total = mpmath.fsum(P)
    return [v / total for v in P]


def _mp_rows(W):
    rows = []
    for r in W:
        R = [mpmath.mpf(float(v)) for v in r]
        total = mpmath.fsum(R)
        rows.append([v / total for v in R])
    return rows


def _mp_output(P, rows):
    return [mpmath.fsum(P[x] * rows[x][y] for x in range(len(P))) for y in range(len(rows[0]))]


def _mp_mutual_information(P, rows):
    q = _mp_output(P, rows)
    return mpmath.fsum(
        P[x] * rows[x][y] * mpmath.log(rows[x][y] / q[y])
        for x in range(len(P))
        for y in range(len(q))
        if P[x] > 0 and rows[x][y] > 0
    )


def _mp_naive(P, rows, alpha):
    """``D_α(P_XY ‖ P_X P_Y)`` from its definition."""
    q = _mp_output(P, rows)
    pairs = [
        (P[x] * rows[x][y], P[x] * q[y])
        for x in range(len(P))
        for y in range(len(q))
        if P[x] > 0 and rows[x][y] > 0
    ]
    if alpha == math.inf:
        return max(mpmath.log(j / k) for j, k in pairs)
    a = mpmath.mpf(alpha)
    return mpmath.log(mpmath.fsum(j**a * k ** (1 - a) for j, k in pairs)) / (a - 1)


# --- F1: masses near 1e-300 in the capacity engine ------------------------------------------

F1_CHANNEL = np.array(
    [
        [1.25e-300, 0.0, 0.5, 0.5],
        [0.2, 1.2e-300, 0.4, 0.4],
        [0.5, 0.0, 0.5, 1.5e-300],
        [2 / 3, 0.0, 1.66666667e-300, 1 / 3],
    ]
)


def _mp_blahut_arimoto(W, iterations=3000):
    """Plain Blahut–Arimoto in mpmath: the bracket ``[I(p), max_x D(W_x‖pW)]`` of its last
    prior contains C (``docs/mathematics.rst`` §1)."""
    rows = _mp_rows(W)
    n = len(rows)
    P = [mpmath.mpf(1) / n] * n
    for _ in range(iterations):
        q = _mp_output(P, rows)
        D = [
            mpmath.fsum(r[y] * mpmath.log(r[y] / q[y]) for y in range(len(q)) if r[y] > 0)
            for r in rows
        ]
        P = [P[x] * mpmath.exp(D[x]) for x in range(n)]
        total = mpmath.fsum(P)
        P = [v / total for v in P]
    q = _mp_output(P, rows)
    D = [
        mpmath.fsum(r[y] * mpmath.log(r[y] / q[y]) for y in range(len(q)) if r[y] > 0) for r in rows
    ]
    return mpmath.fsum(P[x] * D[x] for x in range(n)), max(D)


def test_capacity_with_masses_near_1e_300_has_no_warning_and_few_steps():
    res = _strict(dpcap.capacity, F1_CHANNEL, max_iter=2000)
    with mpmath.workdps(30):
        lo, hi = _mp_blahut_arimoto(F1_CHANNEL, iterations=400)
    assert res.lower <= float(hi) + 1e-12
    assert res.upper >= float(lo) - 1e-12
    assert res.upper - res.lower <= 1e-9
    # the Newton polish works on this channel (it was lost to 0·∞ = NaN, 265 iterations)
    assert res.iterations <= 60


# --- F3: Arimoto's information at large orders ----------------------------------------------


def _mp_arimoto(P, rows, alpha):
    """``α/(α−1) [log Σ_y ‖P_{X,Y=y}‖_α − log ‖p‖_α]`` (Arimoto's definition)."""
    a = mpmath.mpf(alpha)
    column_norms = mpmath.fsum(
        mpmath.fsum((P[x] * rows[x][y]) ** a for x in range(len(P))) ** (1 / a)
        for y in range(len(rows[0]))
    )
    prior_norm = mpmath.fsum(v**a for v in P) ** (1 / a)
    return a / (a - 1) * (mpmath.log(column_norms) - mpmath.log(prior_norm))


@pytest.mark.parametrize("alpha", [500.0, 1e4, 88024045.462427])
def test_arimoto_mi_at_large_orders(alpha):
    p = np.array([0.0, 0.27381653, 0.27649553, 0.16631255, 0.28337539])
    W = np.array(
        [[0.0, 1.0], [0.73514276, 0.26485724], [0.78675331, 0.21324669], [1.0, 0.0],
         [0.73514276, 0.26485724]]
    )  # fmt: skip
    p = p / p.sum()
    with mpmath.workdps(60):
        want = _mp_arimoto(_mp_law(p), _mp_rows(W), alpha)
    got = _strict(dpcap.arimoto_mi, p, W, alpha)
    assert got == pytest.approx(float(want), rel=1e-8, abs=1e-12)


# --- F6: informations whose products p_x q_y underflow --------------------------------------

F6_PRIOR = np.array([1e-300, 1.0])
F6_CHANNEL = np.array([[0.5, 1e-300, 0.5], [0.5, 0.0, 0.5]])


def test_mutual_information_with_underflowing_products():
    with mpmath.workdps(40):
        want = _mp_mutual_information(_mp_law(F6_PRIOR), _mp_rows(F6_CHANNEL))
    assert _strict(dpcap.mutual_information, F6_PRIOR, F6_CHANNEL) == pytest.approx(
        float(want), abs=1e-300
    )
    # a one-entry database: I(X_0; Y | X^{-0}) = I(X;Y)
    got = _strict(dpcap.conditional_mutual_information, F6_PRIOR, F6_CHANNEL, 0)
    assert got == pytest.approx(float(want), abs=1e-300)


@pytest.mark.parametrize("alpha", [0.5, 2.0, 7.0, math.inf])
def test_renyi_mi_with_underflowing_products(alpha):
    with mpmath.workdps(40):
        want = _mp_naive(_mp_law(F6_PRIOR), _mp_rows(F6_CHANNEL), alpha)
    got = _strict(dpcap.renyi_mi, F6_PRIOR, F6_CHANNEL, alpha)
    assert got == pytest.approx(float(want), rel=1e-10, abs=1e-14)
    if alpha == math.inf:  # log(W_01 / q_1) = log(1e-300 / 1e-600)
        assert got == pytest.approx(300 * math.log(10), rel=1e-12)


def test_sibson_at_one_with_underflowing_products():
    with mpmath.workdps(40):
        want = _mp_mutual_information(_mp_law(F6_PRIOR), _mp_rows(F6_CHANNEL))
    for f in (dpcap.sibson_mi, dpcap.arimoto_mi):
        assert _strict(f, F6_PRIOR, F6_CHANNEL, 1.0) == pytest.approx(float(want), abs=1e-300)


# --- F9: subnormal orders -------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [5e-324, 1e-310, 1e-300, 1e-200])
def test_tiny_orders_give_the_order_zero_limit(alpha):
    # p uniform, W = [[1, 0], [0, 1], [½, ½]]: I_0^S = −log max_y P(W_xy > 0) = log 3/2,
    # I_0^A = log |supp p| − log max_y #{x: W_xy > 0} = log 3/2, and
    # D_0(P_XY ‖ P_X P_Y) = −log Σ_{W_xy > 0} p_x q_y = −log 2/3 (q = (½, ½)); all three are
    # continuous at α = 0, with a finite derivative.
    p = np.full(3, 1 / 3)
    W = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    for f in (dpcap.sibson_mi, dpcap.arimoto_mi, dpcap.renyi_mi):
        assert _strict(f, p, W, alpha) == pytest.approx(math.log(1.5), rel=1e-12), f.__name__
    q = np.array([0.5, 0.5])
    assert _strict(dpcap.renyi_divergence, np.array([1.0, 0.0]), q, alpha) == pytest.approx(
        math.log(2.0), rel=1e-12
    )


# --- F4: δ' of ε-MI-DP (Cuff & Yu, Lemma 2) -------------------------------------------------


def _mp_g(d):
    """``g(δ) = ((1+δ)log(1+δ) + (1−δ)log(1−δ))/2 = Σ_{k≥1} δ^{2k}/(2k(2k−1))``: the series
    keeps every digit however small δ is (mpmath's exponent range is unbounded)."""
    d = mpmath.mpf(d)
    if d >= 1:
        return mpmath.log(2)
    if d < mpmath.mpf("0.1"):
        return mpmath.nsum(lambda k: d ** (2 * k) / (2 * k * (2 * k - 1)), [1, mpmath.inf])
    return ((1 + d) * mpmath.log1p(d) + (1 - d) * mpmath.log1p(-d)) / 2


def _mp_root(eps):
    e = mpmath.mpf(eps)
    lo, hi = mpmath.mpf(0), mpmath.sqrt(2 * e)  # g(δ) ≥ δ²/2: the root is below √(2ε)
    for _ in range(120):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _mp_g(mid) < e else (lo, mid)
    return hi


@pytest.mark.parametrize(
    "eps",
    [5e-324, 1e-310, 1e-300, 1e-100, 1e-40, 1e-21, 1e-20, 1e-16, 1e-12, 1e-6, 0.01, 0.3, 0.69],
)
def test_delta_from_midp_is_conservative_and_accurate(eps):
    d = _strict(bounds.delta_from_midp, eps)
    with mpmath.workdps(40):
        assert _mp_g(d) >= eps  # rounded up: (0, d)-DP holds
        root = _mp_root(eps)
        assert abs(mpmath.mpf(d) - root) <= 1e-9 * root


def test_delta_from_midp_endpoints_and_arrays():
    assert bounds.delta_from_midp(0.0) == 0.0
    assert bounds.delta_from_midp(math.log(2)) == 1.0
    assert bounds.delta_from_midp(5.0) == 1.0
    got = bounds.delta_from_midp(np.array([1e-300, 0.01]))
    assert got.shape == (2,)
    assert got[0] == bounds.delta_from_midp(1e-300)
    assert got[1] == bounds.delta_from_midp(0.01)


# --- F10: kind="naive" with a zero entry ----------------------------------------------------


def test_naive_renyi_capacity_with_zero_entries():
    W = np.array([[0.89865428, 0.0, 0.10134572], [0.0, 1.0, 0.0]])
    alpha = 2.4535290512000607
    res = _strict(dpcap.renyi_capacity, W, alpha, kind="naive")
    with mpmath.workdps(30):
        at_uniform = _mp_naive(_mp_law([0.5, 0.5]), _mp_rows(W), alpha)
    assert res.lower >= float(at_uniform) - 1e-12  # the search is at least as good as p = ½
    assert res.lower <= res.upper
    assert math.isfinite(res.lower)


# --- F12 and F17: the funnel problems at underflowing masses and levels ---------------------


def _mp_chain(joint, W):
    """``(I(X;Y), I(S;Y))`` of ``W = P_{Y|X}`` in mpmath."""
    J = [[mpmath.mpf(float(v)) for v in row] for row in joint]
    total = mpmath.fsum(v for row in J for v in row)
    J = [[v / total for v in row] for row in J]
    px = [mpmath.fsum(J[s][x] for s in range(len(J))) for x in range(len(J[0]))]
    rows = [[mpmath.mpf(float(v)) for v in row] for row in W]
    xy = [[px[x] * rows[x][y] for y in range(W.shape[1])] for x in range(len(px))]
    sy = [
        [mpmath.fsum(J[s][x] * rows[x][y] for x in range(len(px))) for y in range(W.shape[1])]
        for s in range(len(J))
    ]

    def info(T):
        pa = [mpmath.fsum(r) for r in T]
        pb = [mpmath.fsum(T[a][b] for a in range(len(T))) for b in range(len(T[0]))]
        return mpmath.fsum(
            v * mpmath.log(v / (pa[a] * pb[b]))
            for a, r in enumerate(T)
            for b, v in enumerate(r)
            if v > 0
        )

    return info(xy), info(sy)


@pytest.mark.parametrize(
    "joint",
    [
        np.array([[0.0, 1e-250, 1.0]]),
        np.array([[0.25, 1e-300, 0.25], [0.25, 0.0, 0.25]]),
        np.array([[0.25, 0.25, 1e-300, 0.0], [0.0, 0.25, 0.0, 0.25]]),
    ],
)
def test_perfect_privacy_with_tiny_masses(joint):
    joint = joint / joint.sum()
    res = _strict(dpcap.perfect_privacy, joint)
    W = res.mechanism
    assert np.isfinite(W).all()
    assert (W >= 0).all()
    px = joint.sum(axis=0)
    assert np.abs(W[px > 0].sum(axis=1) - 1).max() <= 1e-9
    with mpmath.workdps(40):
        ixy, isy = _mp_chain(joint, W)
    assert float(isy) <= 1e-9  # perfectly private
    assert res.value == pytest.approx(float(ixy), abs=1e-9)


@pytest.mark.parametrize("R", [5e-324, 1e-320, 1e-300])
def test_privacy_funnel_at_a_subnormal_level(R):
    joint = np.array([[4.0, 4.0], [4.0, 1.0]]) / 13
    res = _strict(dpcap.privacy_funnel, joint, R)
    with mpmath.workdps(40):
        ixy, isy = _mp_chain(joint, res.mechanism)
    assert math.isfinite(res.utility_achieved)
    assert math.isfinite(res.leakage_achieved)
    assert res.utility_achieved == pytest.approx(float(ixy), abs=1e-12)
    assert res.leakage_achieved == pytest.approx(float(isy), abs=1e-12)
    assert float(ixy) >= R  # feasible
    assert res.upper <= 1e-9  # PF(R) ≤ (slope) · R: nothing at these levels


def test_funnel_with_one_value_of_x_at_a_subnormal_level():
    # H(X) = 0 up to rounding: every mechanism releases nothing, PF(R) = IB(R) = 0
    joint = np.array([[0.0, 0.999001], [0.0, 0.000999]])
    for call in (dpcap.privacy_funnel, dpcap.information_bottleneck):
        res = _strict(call, joint, 5e-324)
        assert res.lower == res.upper == 0.0
