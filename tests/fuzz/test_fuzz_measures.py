"""Fuzz group ``measures``: information measures of distributions and channels, and
:mod:`dpcap.bounds`.

Each quantity is compared with its definition evaluated in mpmath at 40 digits (entropy,
divergences, α-informations from their formulas, not dpcap's rewritings); Augustin's
information with a bracket from its convexity in Q; the bounds with their closed forms and the
inequalities they state.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from _harness import fuzz
from _reference import (
    as_law,
    close,
    mp_binary_entropy,
    mp_entropy,
    mp_kl,
    mp_law,
    mp_mixture,
    mp_mutual_information,
    mp_renyi,
    mp_rows,
    mp_sibson,
    normalise,
)
from hypothesis import assume, example, given
from hypothesis import strategies as st

import dpcap
from dpcap import bounds
from dpcap.testing import channels, distributions, epsilons, mechanisms, orders

LOG2 = mpmath.log(2)


@st.composite
def pairs_of_laws(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 6))
    return (
        draw(distributions(n, degenerate=True)),
        draw(distributions(n, degenerate=True)),
    )


@st.composite
def prior_and_channel(draw: st.DrawFn, **kwargs: object) -> tuple[np.ndarray, np.ndarray]:
    W = draw(channels(max_inputs=4, max_outputs=4, degenerate=True, **kwargs))
    return draw(distributions(W.shape[0], degenerate=True)), W


@fuzz(examples=3000, quick=6)
@given(pq=pairs_of_laws(), alpha=orders(), gamma=st.lists(epsilons(), min_size=1, max_size=4))
def test_divergences(pq: tuple[np.ndarray, np.ndarray], alpha: float, gamma: list[float]) -> None:
    p, q = pq
    P, Q = as_law(p), as_law(q)
    assert close(dpcap.entropy(p), mp_entropy(P), rel=1e-12, abs_=1e-15)
    assert close(dpcap.entropy(p, unit="bits"), mp_entropy(P) / LOG2, rel=1e-12, abs_=1e-15)
    assert close(dpcap.kl_divergence(p, q), mp_kl(mp_law(P), mp_law(Q)), abs_=1e-14)
    want = mp_renyi(mp_law(P), mp_law(Q), alpha)
    assert close(dpcap.renyi_divergence(p, q, alpha), want, rel=1e-8, abs_=1e-13), alpha
    tv = mpmath.fsum(abs(a - b) for a, b in zip(mp_law(P), mp_law(Q), strict=False)) / 2
    assert close(dpcap.tv_distance(p, q), tv, rel=1e-12, abs_=1e-15)
    g = np.array(gamma)  # the argument is γ itself here (any γ ≥ 0, ∞ included)
    got = np.atleast_1d(dpcap.hockey_stick(p, q, g))
    for gi, value in zip(g, got, strict=True):
        Pm, Qm = mp_law(P), mp_law(Q)
        if math.isinf(gi):
            want = mpmath.fsum(a for a, b in zip(Pm, Qm, strict=False) if b == 0)
        else:
            want = mpmath.fsum(max(a - mpmath.mpf(gi) * b, 0) for a, b in zip(Pm, Qm, strict=False))
        assert close(float(value), want, rel=1e-9, abs_=1e-15), (gi, value, float(want))


def mp_arimoto(p: np.ndarray, W: np.ndarray, alpha: float) -> object:
    """``H_α(X) − H_α^A(X|Y)`` from its definition (0 < α < ∞, α ≠ 1)."""
    P, rows = mp_law(p), mp_rows(W)
    a = mpmath.mpf(alpha)
    h = mpmath.log(mpmath.fsum(x**a for x in P if x > 0)) / (1 - a)
    inner = [
        mpmath.fsum((P[x] * rows[x][y]) ** a for x in range(len(P)) if P[x] > 0)
        for y in range(W.shape[1])
    ]
    cond = a / (1 - a) * mpmath.log(mpmath.fsum(v ** (1 / a) for v in inner if v > 0))
    return h - cond


def mp_min_entropy_leakage(p: np.ndarray, W: np.ndarray) -> object:
    P, rows = mp_law(p), mp_rows(W)
    post = mpmath.fsum(max(P[x] * rows[x][y] for x in range(len(P))) for y in range(W.shape[1]))
    return mpmath.log(post) - mpmath.log(max(P))


def mp_naive(P: np.ndarray, Wn: np.ndarray, alpha: float) -> object:
    """``D_α(P_XY ‖ P_X P_Y)`` from the definition."""
    Pm, rows = mp_law(P), mp_rows(Wn)
    q = mp_mixture(Pm, Wn)
    ny = Wn.shape[1]
    joint = [Pm[x] * rows[x][y] for x in range(len(P)) for y in range(ny)]
    product = [Pm[x] * q[y] for x in range(len(P)) for y in range(ny)]
    return mp_renyi(joint, product, alpha)


def underflows(P: np.ndarray, Wn: np.ndarray) -> bool:
    """Whether a positive ``p_x W_xy`` or ``p_x q_y`` is below the normal range."""
    q = P @ Wn
    small = np.concatenate([(P[:, None] * Wn).ravel(), (P[:, None] * q[None, :]).ravel()])
    factors = np.concatenate([(P[:, None] * (Wn > 0)).ravel(), P.repeat(len(q))])
    return bool(((small < 1e-290) & (factors > 0)).any() or ((Wn > 0) & (Wn < 1e-290)).any())


@fuzz(examples=3000, quick=6)
@given(case=prior_and_channel(), alpha=orders())
def test_alpha_informations(case: tuple[np.ndarray, np.ndarray], alpha: float) -> None:
    p, W = case
    P, Wn = as_law(p), normalise(W)
    assume(not underflows(P, Wn))  # see test_informations_with_underflowing_products
    assume(alpha == 0.0 or alpha >= 1e-300)  # see test_subnormal_orders
    info = mp_mutual_information(P, Wn)
    assert close(dpcap.mutual_information(p, W), info, rel=1e-10, abs_=1e-14)
    support = P > 0
    rows = Wn[support]
    if alpha == 1.0:
        sibson = arimoto = info
    elif alpha == 0.0:
        hits = rows > 0
        Ps = mp_law(P[support])
        sibson = -mpmath.log(
            max(
                mpmath.fsum(Ps[x] for x in range(len(Ps)) if hits[x, y])
                for y in range(hits.shape[1])
            )
        )
        arimoto = mpmath.log(int(support.sum())) - mpmath.log(int(hits.sum(axis=0).max()))
    elif math.isinf(alpha):
        exact = mp_rows(rows)
        sibson = mpmath.log(mpmath.fsum(max(r[y] for r in exact) for y in range(rows.shape[1])))
        arimoto = mp_min_entropy_leakage(P, Wn)
    else:
        sibson = mp_sibson(P, Wn, alpha)
        arimoto = mp_arimoto(P, Wn, alpha)
    # near α = 1 the formulas lose (α−1)-relative accuracy in float64; allow it
    rel = 1e-8 if abs(alpha - 1.0) > 1e-4 or alpha == 1.0 else 1e-5
    assert close(dpcap.sibson_mi(p, W, alpha), sibson, rel=rel, abs_=1e-12), alpha
    if not 500 < alpha < math.inf:  # see test_arimoto_at_large_orders
        assert close(dpcap.arimoto_mi(p, W, alpha), arimoto, rel=rel, abs_=1e-12), alpha
    naive = mp_naive(P, Wn, alpha)
    assert close(dpcap.renyi_mi(p, W, alpha), naive, rel=rel, abs_=1e-12), alpha
    # the naive α-information is never below Sibson's (Sibson's identity)
    assert float(naive) >= float(sibson) - 1e-9 * (1 + abs(float(sibson)))
    assert close(
        dpcap.min_entropy_leakage(p, W), mp_min_entropy_leakage(P, Wn), rel=1e-12, abs_=1e-14
    )


@fuzz(examples=300, quick=3)
@given(case=prior_and_channel(), alpha=st.floats(500.0, 1e8))
def test_arimoto_at_large_orders(case: tuple[np.ndarray, np.ndarray], alpha: float) -> None:
    """Fuzz finding F3: the tilted prior p^α underflowed for large α (arimoto_mi returned 0 for
    1.4e-7)."""
    p, W = case
    want = mp_arimoto(as_law(p), normalise(W), alpha)
    assert close(dpcap.arimoto_mi(p, W, alpha), want, rel=1e-8, abs_=1e-12)


@fuzz(examples=300, quick=3)
@given(case=prior_and_channel(), alpha=orders())
@example(case=(np.array([1e-300, 1.0]), np.array([[0.5, 1e-300, 0.5], [0.5, 0.0, 0.5]])), alpha=1.0)
def test_informations_with_underflowing_products(
    case: tuple[np.ndarray, np.ndarray], alpha: float
) -> None:
    """Fuzz finding F6: mutual_information and renyi_mi gave ∞ when p_x q_y underflowed."""
    p, W = case
    P, Wn = as_law(p), normalise(W)
    assume(underflows(P, Wn))
    assert close(dpcap.mutual_information(p, W), mp_mutual_information(P, Wn), abs_=1e-14)
    assert close(dpcap.renyi_mi(p, W, alpha), mp_naive(P, Wn, alpha), rel=1e-8, abs_=1e-12)


@fuzz(examples=100, quick=2)
@given(case=prior_and_channel(), alpha=st.floats(5e-324, 1e-300))
@example(case=(np.full(3, 1 / 3), np.array([[0.5, 0.5], [0.5, 0.5], [1.0, 0.0]])), alpha=5e-324)
def test_subnormal_orders(case: tuple[np.ndarray, np.ndarray], alpha: float) -> None:
    """Fuzz finding F9: a subnormal order α overflowed 1/α (RuntimeWarning)."""
    p, W = case
    for f in (dpcap.sibson_mi, dpcap.arimoto_mi, dpcap.renyi_mi):
        assert 0.0 <= f(p, W, alpha) < math.inf


def augustin_bracket(p: np.ndarray, W: np.ndarray, alpha: float) -> tuple[float, float]:
    """``[F(Q) − gap, F(Q)]`` with ``F(Q) = Σ_x p_x D_α(W_x‖Q)``, convex in Q (van Erven and
    Harremoës, Thm 12): the Frank–Wolfe gap at any Q of full support bounds the minimum.

    Q comes from Augustin's fixed point ``Q ← Σ_x p_x W_x^α Q^{1−α} / Z_x`` (damped)."""
    support = p > 0
    rows, weights = W[support], p[support] / p[support].sum()
    keep = rows.sum(axis=0) > 0
    rows = rows[:, keep]
    Q = weights @ rows
    with np.errstate(all="ignore"):  # only the iterate; the bracket is computed exactly
        for _ in range(300):
            logs = alpha * np.log(rows) + (1 - alpha) * np.log(Q)
            tilted = np.exp(logs - logs.max(axis=1, keepdims=True))
            step = weights @ (tilted / tilted.sum(axis=1, keepdims=True))
            if not np.all(np.isfinite(step)) or step.sum() <= 0:
                break
            Q = 0.5 * Q + 0.5 * step / step.sum()
    a = mpmath.mpf(alpha)
    Qm = mp_law(Q)
    P = mp_law(weights)
    R = mp_rows(rows)
    value = mpmath.mpf(0)
    grad = [mpmath.mpf(0)] * len(Qm)
    for x, row in enumerate(R):
        z = mpmath.fsum(w**a * q ** (1 - a) for w, q in zip(row, Qm, strict=False) if w > 0)
        value += P[x] * mpmath.log(z) / (a - 1)
        for y, (w, q) in enumerate(zip(row, Qm, strict=False)):
            if w > 0:  # ∂/∂Q_y of D_α(W_x‖Q) = (1−α)/(α−1) · W^α Q^{−α} / z = −W^α Q^{−α} / z
                grad[y] -= P[x] * w**a * q ** (-a) / z
    gap = mpmath.fsum(q * g for q, g in zip(Qm, grad, strict=False)) - min(grad)
    return float(value - gap) - 1e-25, float(value) + 1e-25


@st.composite
def ordinary_prior_and_channel(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    W = draw(channels(max_inputs=4, max_outputs=4, allow_zeros=False))
    return draw(distributions(W.shape[0])), W


@fuzz(examples=1500, quick=4)
@given(
    case=ordinary_prior_and_channel(), alpha=orders(min_value=0.05, max_value=20.0, extreme=False)
)
def test_augustin_information(case: tuple[np.ndarray, np.ndarray], alpha: float) -> None:
    check_augustin(*case, alpha)


@fuzz(examples=300, quick=3)
@given(case=prior_and_channel(allow_zeros=False), alpha=orders(min_value=0.05, max_value=20.0))
def test_augustin_information_degenerate(case: tuple[np.ndarray, np.ndarray], alpha: float) -> None:
    """Item 9: masses near 1e-300 must neither overflow nor fail to certify."""
    check_augustin(*case, alpha)


def check_augustin(p: np.ndarray, W: np.ndarray, alpha: float) -> None:
    assume(abs(alpha - 1.0) > 1e-3)
    P, Wn = as_law(p), normalise(W)
    lo, hi = augustin_bracket(P, Wn, alpha)
    got = dpcap.augustin_mi(p, W, alpha, tol=1e-9)
    assert lo - 1e-9 <= got <= hi + 1e-9, (got, lo, hi)
    # ordering against Sibson (Jensen): Augustin ≤ Sibson for α > 1, ≥ for α < 1
    sibson = float(mp_sibson(P, Wn, alpha))
    if alpha > 1:
        assert got <= sibson + 1e-8 * (1 + sibson)
    else:
        assert got >= sibson - 1e-8 * (1 + sibson)


def cmi_case(case, data: st.DataObject) -> tuple[float, object, bool]:
    """dpcap's ``I(X_i; Y | X^{-i})``, the definition in mpmath, and whether a product
    ``P(x^n) W[x^n, y]`` underflows."""
    W, shape = case
    M = dpcap.Mechanism(W, shape)
    Wn = normalise(W)
    law = data.draw(distributions(Wn.shape[0], degenerate=True)).reshape(shape)
    entry = data.draw(st.integers(0, len(shape) - 1))
    L = mp_law(law.ravel())
    rows = mp_rows(Wn)
    dbs = list(np.ndindex(*shape))
    total = mpmath.mpf(0)
    for k, db in enumerate(dbs):
        if L[k] == 0:
            continue
        same = [
            j
            for j, other in enumerate(dbs)
            if all(other[t] == db[t] for t in range(len(shape)) if t != entry)
        ]
        mass = mpmath.fsum(L[j] for j in same)
        mix = [mpmath.fsum(L[j] * rows[j][y] for j in same) / mass for y in range(Wn.shape[1])]
        total += L[k] * mp_kl(rows[k], mix)
    positive = (law.ravel()[:, None] > 0) & (Wn > 0)
    products = law.ravel()[:, None] * Wn  # may underflow to 0
    tiny = (positive & (products < 1e-290)).any() or ((Wn > 0) & (Wn < 1e-290)).any()
    return dpcap.conditional_mutual_information(law, M, entry), total, bool(tiny)


@fuzz(examples=1200, quick=4)
@given(case=mechanisms(max_rows=8, degenerate=True), data=st.data())
def test_conditional_mutual_information(case, data: st.DataObject) -> None:
    got, want, tiny = cmi_case(case, data)
    assume(not tiny)  # see test_conditional_mutual_information_with_tiny_masses
    assert close(got, want, rel=1e-10, abs_=1e-14)


@fuzz(examples=200, quick=3)
@given(case=mechanisms(max_rows=8, degenerate=True), data=st.data())
def test_conditional_mutual_information_with_tiny_masses(case, data: st.DataObject) -> None:
    """Fuzz finding F6: conditional_mutual_information was ∞ when P(x^n) W[x^n, y] underflowed."""
    got, want, tiny = cmi_case(case, data)
    assume(tiny)
    assert close(got, want, rel=1e-10, abs_=1e-14)


@fuzz(examples=2000, quick=6)
@given(
    x=st.floats(0.0, 1.0),
    eps=epsilons(max_value=700.0),
    delta=st.floats(0.0, 1.0),
    k=st.integers(1, 6),
    sizes=st.tuples(st.integers(1, 50), st.integers(1, 20)),
    data=st.data(),
)
def test_bounds(x: float, eps: float, delta: float, k: int, sizes: tuple[int, int], data) -> None:
    LN2 = math.log(2.0)
    assert close(bounds.binary_entropy(x), mp_binary_entropy(x), rel=1e-12, abs_=1e-16)
    v = data.draw(st.floats(0.0, LN2))
    inv = bounds.binary_entropy_inverse(v)
    assert 0.0 <= inv <= 0.5
    assert close(float(mp_binary_entropy(inv)), v, rel=1e-9, abs_=1e-15)
    assert close(
        bounds.kl_dp_bound(eps),
        eps * mpmath.tanh(mpmath.mpf(eps) / 2) if math.isfinite(eps) else math.inf,
        rel=1e-12,
        abs_=0.0,
    )
    assert close(
        bounds.min_entropy_leakage_bound(eps),
        mpmath.log(2 / (1 + mpmath.exp(-mpmath.mpf(eps)))) if math.isfinite(eps) else LN2,
        rel=1e-12,
        abs_=1e-16,
    )
    d = bounds.delta_from_midp(eps)
    assert 0.0 <= d <= 1.0
    if 1e-12 < eps < LN2:  # smaller ε: test_delta_from_midp_of_tiny_levels
        # the root of g(δ) = ((1+δ)log(1+δ) + (1−δ)log(1−δ))/2 = ε, and δ ≤ √(2ε)
        assert close(d, delta_root(eps), rel=1e-9, abs_=0.0)
        assert d <= math.sqrt(2 * eps) * (1 + 1e-9)
    n_out, m = sizes
    want = 2 * mp_binary_entropy(delta) + 2 * delta * mpmath.log(min(n_out, m + 1))
    got = bounds.midp_from_delta(delta, n_outputs=n_out, max_entry_size=m)
    assert close(got, want, rel=1e-12, abs_=1e-15)
    if math.isfinite(eps) and eps < 50:
        e2 = data.draw(st.floats(0.0, eps))
        want = 1 - (mpmath.exp(e2) + 1) * (1 - mpmath.mpf(delta)) / (mpmath.exp(eps) + 1)
        assert close(bounds.tradeoff(eps, delta, e2), want, rel=1e-9, abs_=1e-15)
        t = min(k * mpmath.sqrt(2 * mpmath.mpf(eps)), 1)
        M = min(n_out, m**k + 1)
        want = 2 * mp_binary_entropy(t) + 2 * t * mpmath.log(M)
        got = bounds.group_midp_bound(eps, k, n_outputs=n_out, max_entry_size=m)
        assert close(got, want, rel=1e-9, abs_=1e-15)
    # vectorised: an array in, the same numbers out
    arr = np.array([x, 0.5 * x])
    np.testing.assert_array_equal(
        bounds.binary_entropy(arr), [bounds.binary_entropy(x), bounds.binary_entropy(0.5 * x)]
    )


def g_midp(t: object) -> object:
    """``g(δ) = ln 2 − h((1−δ)/2) = Σ_{k≥1} δ^{2k} / (2k(2k−1))``, the capacity of a BSC at
    total variation δ (exact: the series for small δ, where the closed form cancels)."""
    t = mpmath.mpf(t)
    if t < mpmath.mpf("1e-3"):
        return mpmath.fsum(t ** (2 * k) / (2 * k * (2 * k - 1)) for k in range(1, 12))
    return ((1 + t) * mpmath.log1p(t) + ((1 - t) * mpmath.log1p(-t) if t < 1 else 0)) / 2


def delta_root(eps: float) -> float:
    """The δ' of Cuff & Yu's Lemma 2: the root of g(δ) = ε, by bisection in mpmath on
    ``[0, min(1, √(2ε))]`` (g(δ) ≥ δ²/2)."""
    lo, hi = mpmath.mpf(0), min(mpmath.mpf(1), mpmath.sqrt(2 * mpmath.mpf(eps)))
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if g_midp(mid) < eps else (lo, mid)
    return float(hi)


@fuzz(examples=200, quick=3)
@given(eps=st.one_of(st.floats(5e-324, 1e-12), epsilons(max_value=0.69)))
def test_delta_from_midp_is_conservative(eps: float) -> None:
    # fuzz finding F4 (δ' was rounded down, and lost √(2ε) for ε < 1e-12): documented
    # "rounded up (conservative)": g(δ') ≥ ε, and accurate
    d = bounds.delta_from_midp(eps)
    assert g_midp(d) >= eps
    assert close(d, delta_root(eps), rel=1e-9, abs_=0.0)
