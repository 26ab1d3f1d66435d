"""Fuzz group ``renyi``: :func:`dpcap.renyi_capacity` (every kind), :func:`dpcap.renyi_profile`
and :func:`dpcap.alpha_leakage`.

References (``docs/mathematics.rst`` §4): Sibson's information of dpcap's own prior evaluated
in mpmath (a lower bound on C_α whoever produced the prior, so ``lower`` can be checked to
rounding), an independent maximisation of Sibson's information certified by the concavity or
convexity of ``f(p) = Σ_y (Σ_x p_x W_xy^α)^{1/α}`` (golden section for two inputs, an
exponentiated gradient otherwise), the closed forms at α = ∞ and 1, the α = 0 linear programme
solved by scipy, and the monotonicity of α ↦ C_α.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
from _harness import fuzz
from _reference import (
    LN2,
    MP_SLACK,
    capacity_reference,
    close,
    max_leakage_reference,
    mp_law,
    mp_mutual_information,
    mp_renyi,
    mp_rows,
    mp_sibson,
    normalise,
    sibson_capacity_reference,
)
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.optimize import linprog

import dpcap
from dpcap.testing import channels, distributions, orders

#: Rounding allowance of a float64 end (see the capacity group).
FLOAT_SLACK = 1e-12


def no_deep_tiny(W: np.ndarray) -> bool:
    """Masses near 1e-300 meet the capacity engine's known gap (F1, test_fuzz_capacity)."""
    return not ((W > 0) & (W < 1e-150)).any()


two_inputs = channels(min_inputs=2, max_inputs=2, max_outputs=4, degenerate=True).filter(
    no_deep_tiny
)
three_inputs = channels(min_inputs=3, max_inputs=3, max_outputs=3, degenerate=True).filter(
    no_deep_tiny
)
#: Orders away from the exact branches; α ∈ (0.05, 20) and the neighbourhood of 1.
ordinary_orders = orders(min_value=0.05, max_value=20.0).filter(lambda a: a != 1.0)


def quietly(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        return call(*args, **kwargs)


def check_sibson(res: dpcap.CapacityResult, W: np.ndarray, alpha: float) -> None:
    """``lower`` is Sibson's information of the returned prior (so ≤ C_α), ``upper ≥ C_α``."""
    Wn = normalise(W)
    nx = Wn.shape[0]
    used = int((Wn.sum(axis=0) > 0).sum())
    assert 0.0 <= res.lower <= res.upper, res
    assert res.lower <= math.log(min(nx, used)) + FLOAT_SLACK  # C_α ≤ log min(|X|, |Y|)
    if res.status is dpcap.Status.CONVERGED:
        assert res.upper - res.lower <= res.tol
    assert res.prior.shape == (nx,)
    assert abs(res.prior.sum() - 1) <= 1e-12
    own = float(mp_sibson(res.prior, Wn, alpha))
    assert res.lower <= own + FLOAT_SLACK * (1 + own), (res.lower, own)
    lo, hi = sibson_capacity_reference(W, alpha)
    assert res.lower <= hi + FLOAT_SLACK * (1 + hi), (res, lo, hi)
    assert res.upper >= lo - FLOAT_SLACK * (1 + lo), (res, lo, hi)


@fuzz(examples=2500, quick=6)
@given(W=two_inputs, alpha=ordinary_orders)
def test_two_input_bracket_contains_the_reference(W: np.ndarray, alpha: float) -> None:
    check_sibson(quietly(dpcap.renyi_capacity, W, alpha), W, alpha)


@fuzz(examples=600, quick=3)
@given(W=three_inputs, alpha=ordinary_orders)
def test_three_input_bracket_contains_the_reference(W: np.ndarray, alpha: float) -> None:
    check_sibson(quietly(dpcap.renyi_capacity, W, alpha), W, alpha)


@fuzz(examples=700, quick=3)
@given(W=st.one_of(two_inputs, three_inputs), alpha=st.floats(1e-6, 0.05))
def test_small_orders(W: np.ndarray, alpha: float) -> None:
    """Item 5: certified and never above log min(|X|, |Y|) for α ∈ [1e-6, 0.05]."""
    res = quietly(dpcap.renyi_capacity, W, alpha)
    check_sibson(res, W, alpha)
    assert res.status is dpcap.Status.CONVERGED, res


def brackets(res: dpcap.CapacityResult, exact: object, width: float = 1e-12) -> None:
    """A closed form: ``lower ≤ exact ≤ upper`` (to mpmath's rounding) and a narrow bracket
    (it may be widened by a bound on its own rounding)."""
    want = float(exact)
    allowance = 1e-15 * abs(want) + MP_SLACK  # the reference's own rounding (40 digits)
    assert res.lower <= want + allowance, (res, want)
    assert res.upper >= want - allowance, (res, want)
    assert res.upper - res.lower <= width * (1 + abs(want)), (res, want)


def zero_order_reference(W: np.ndarray) -> float:
    """``C_0 = −log min_p max_y p({x : W_xy > 0})``, by scipy's LP (t, p) ↦ t."""
    support = (normalise(W) > 0).astype(float)
    nx, ny = support.shape
    cost = np.r_[1.0, np.zeros(nx)]
    A_ub = np.hstack([-np.ones((ny, 1)), support.T])  # Σ_x p_x 1[W_xy > 0] − t ≤ 0
    A_eq = np.r_[0.0, np.ones(nx)][None, :]
    res = linprog(cost, A_ub=A_ub, b_ub=np.zeros(ny), A_eq=A_eq, b_eq=[1.0], method="highs")
    assert res.status == 0
    return -math.log(res.fun)


@fuzz(examples=3200, quick=4)
@given(W=channels(max_inputs=4, max_outputs=4, degenerate=True).filter(no_deep_tiny))
def test_exact_orders(W: np.ndarray) -> None:
    """α = ∞ is the maximal leakage, α = 1 Shannon's capacity, α = 0 a linear programme."""
    top = quietly(dpcap.renyi_capacity, W, math.inf)
    want = max_leakage_reference(W)
    brackets(top, want)
    one = quietly(dpcap.renyi_capacity, W, 1.0)
    lo, hi = capacity_reference(W)
    assert one.lower <= hi + FLOAT_SLACK
    assert one.upper >= lo - FLOAT_SLACK
    zero = quietly(dpcap.renyi_capacity, W, 0.0)
    want0 = zero_order_reference(W)
    assert zero.lower <= want0 + 1e-9, (zero, want0)
    assert zero.upper >= want0 - 1e-9, (zero, want0)
    # α ↦ C_α is non-decreasing: C_0 ≤ C_1 ≤ C_∞
    assert zero.lower <= one.upper + FLOAT_SLACK
    assert one.lower <= top.upper + FLOAT_SLACK


@fuzz(examples=700, quick=3)
@given(W=st.one_of(two_inputs, three_inputs), alpha=ordinary_orders)
def test_kinds_share_the_bracket(W: np.ndarray, alpha: float) -> None:
    """Sibson, Arimoto and Augustin have the same supremum; the Arimoto prior is ∝ p_S^{1/α}
    and its Arimoto information is C_α."""
    sibson = quietly(dpcap.renyi_capacity, W, alpha)
    Wn = normalise(W)
    for kind in ("arimoto", "augustin"):
        other = quietly(dpcap.renyi_capacity, W, alpha, kind=kind)
        assert close(other.lower, sibson.lower, rel=1e-12, abs_=1e-15), kind
        assert close(other.upper, sibson.upper, rel=1e-12, abs_=1e-15), kind
    arimoto = quietly(dpcap.renyi_capacity, W, alpha, kind="arimoto")
    P = mp_law(arimoto.prior)
    a = mpmath.mpf(alpha)
    rows = mp_rows(Wn)
    h = mpmath.log(mpmath.fsum(x**a for x in P if x > 0)) / (1 - a)
    inner = [
        mpmath.fsum((P[x] * rows[x][y]) ** a for x in range(len(P)) if P[x] > 0)
        for y in range(Wn.shape[1])
    ]
    cond = a / (1 - a) * mpmath.log(mpmath.fsum(v ** (1 / a) for v in inner if v > 0))
    info = float(h - cond)
    assert info <= sibson.upper + 1e-9 * (1 + info)
    assert info >= sibson.lower - 1e-7 * (1 + info) or sibson.status is not dpcap.Status.CONVERGED


@fuzz(examples=350, quick=3)
@given(
    W=channels(max_inputs=3, max_outputs=3, degenerate=True).filter(no_deep_tiny), data=st.data()
)
def test_profile_is_monotone_and_matches_points(W: np.ndarray, data: st.DataObject) -> None:
    alphas = data.draw(st.lists(orders(min_value=0.05), min_size=1, max_size=5))
    prof = quietly(dpcap.renyi_profile, W, alphas)
    assert len(prof) == len(alphas)
    np.testing.assert_array_equal(prof.alpha, np.asarray(alphas, dtype=float))
    order = np.argsort(prof.alpha, kind="stable")
    lower, upper = prof.lower[order], prof.upper[order]
    # C_α non-decreasing: a lower end never exceeds a later upper end
    assert (np.maximum.accumulate(lower) <= upper + FLOAT_SLACK * (1 + upper)).all(), prof
    Wn = normalise(W)
    for k, a in enumerate(alphas):
        point = quietly(dpcap.renyi_capacity, W, a)
        allowance = FLOAT_SLACK * (1 + point.upper)
        assert prof.lower[k] <= point.upper + allowance
        assert point.lower <= prof.upper[k] + allowance
        if 0 < a < math.inf and a != 1.0:
            own = float(mp_sibson(prof.prior[k], Wn, a))
            assert prof.lower[k] <= own + FLOAT_SLACK * (1 + own)
        # the diameter bounds the naive information: at least the radius
        assert prof.diameter[k] >= prof.lower[k] - FLOAT_SLACK


@fuzz(examples=1800, quick=3)
@given(
    W=channels(max_inputs=4, max_outputs=3, degenerate=True).filter(no_deep_tiny), data=st.data()
)
def test_alpha_leakage(W: np.ndarray, data: st.DataObject) -> None:
    prior = data.draw(distributions(W.shape[0]))  # tiny masses: F6 (test_fuzz_measures)
    alpha = data.draw(orders(min_value=1.0, max_value=20.0))
    res = quietly(dpcap.alpha_leakage, W, alpha, prior=prior)
    Wn = normalise(W)
    if alpha == 1.0:
        want = mp_mutual_information(prior, Wn)
        assert close(res.value, want, rel=1e-10, abs_=1e-14)
        return
    rows = Wn[np.asarray(prior) > 0]
    if math.isinf(alpha):
        brackets(res, max_leakage_reference(rows))
    else:
        lo, hi = sibson_capacity_reference(rows, alpha)
        assert res.lower <= hi + FLOAT_SLACK * (1 + hi)
        assert res.upper >= lo - FLOAT_SLACK
    assert (res.prior[np.asarray(prior) == 0] == 0).all()


@fuzz(examples=700, quick=3)
@given(W=st.one_of(two_inputs, three_inputs), alpha=ordinary_orders, data=st.data())
def test_invariances(W: np.ndarray, alpha: float, data: st.DataObject) -> None:
    base = quietly(dpcap.renyi_capacity, W, alpha)
    rows = list(data.draw(st.permutations(range(W.shape[0]))))
    cols = list(data.draw(st.permutations(range(W.shape[1]))))
    for V in (W[rows][:, cols], np.vstack([W, W[0]]), np.hstack([W, np.zeros((len(W), 1))])):
        other = quietly(dpcap.renyi_capacity, V, alpha)
        allowance = FLOAT_SLACK * (1 + base.upper)
        assert other.lower <= base.upper + allowance
        assert base.lower <= other.upper + allowance
    bits = quietly(dpcap.renyi_capacity, W, alpha, unit="bits")
    assert close(bits.upper, base.upper / LN2, rel=1e-15, abs_=0.0)
    assert close(bits.lower, base.lower / LN2, rel=1e-15, abs_=0.0)


@fuzz(examples=15, quick=1)
@given(
    W=channels(max_inputs=3, max_outputs=3, allow_zeros=False),
    alpha=orders(min_value=0.3, max_value=5.0),
)
def test_naive_kind(W: np.ndarray, alpha: float) -> None:
    """``sup_p D_α(P_XY‖P_X P_Y)``: lower is attained by the returned prior, upper is the
    diameter ``max_{x,x'} D_α(W_x‖W_x')`` and C_α ≤ the supremum."""
    res = quietly(dpcap.renyi_capacity, W, alpha, kind="naive")
    Wn = normalise(W)
    rows = mp_rows(Wn)
    diameter = max(
        mp_renyi(rows[i], rows[j], alpha)
        for i in range(len(rows))
        for j in range(len(rows))
        if i != j
    )
    if alpha == 1.0:  # exact there: Shannon's capacity
        lo, hi = capacity_reference(W)
        assert res.lower <= hi + FLOAT_SLACK
        assert res.upper >= lo - FLOAT_SLACK
        return
    assert close(res.upper, max(diameter, res.lower), rel=1e-9, abs_=1e-12)
    if math.isfinite(alpha):
        P = mp_law(res.prior)
        q = [mpmath.fsum(P[x] * rows[x][y] for x in range(len(P))) for y in range(Wn.shape[1])]
        joint = [P[x] * rows[x][y] for x in range(len(P)) for y in range(Wn.shape[1])]
        product = [P[x] * q[y] for x in range(len(P)) for y in range(Wn.shape[1])]
        assert close(res.lower, mp_renyi(joint, product, alpha), rel=1e-8, abs_=1e-12)
        lo, _ = sibson_capacity_reference(W, alpha)
        assert res.upper >= lo - FLOAT_SLACK


@fuzz(examples=20, quick=1)
@given(W=channels(min_inputs=2, max_inputs=2, max_outputs=3), alpha=st.floats(1.5, 5.0))
def test_naive_kind_with_zeros(W: np.ndarray, alpha: float) -> None:
    """Fuzz finding F10: kind='naive' with a zero entry raised a RuntimeWarning in Nelder–Mead."""
    assume((W == 0).any())
    res = quietly(dpcap.renyi_capacity, W, alpha, kind="naive")
    assert res.lower <= res.upper


@fuzz(examples=150, quick=1)
@given(W=channels(max_inputs=3, max_outputs=3), alpha=ordinary_orders)
def test_conic_method(W: np.ndarray, alpha: float) -> None:
    assume(abs(alpha - 1.0) > 1e-3)
    try:
        res = quietly(dpcap.renyi_capacity, W, alpha, method="conic")
    except dpcap.SolverError:
        return  # the conic solver failed outright: a documented outcome, no number returned
    check_sibson(res, W, alpha)
