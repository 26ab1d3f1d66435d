"""Capacity under an input cost: closed forms, the dual certificate, edge cases and theorems.

The contract under test (docs/mathematics.rst §12): ``lower ≤ C(P) ≤ upper`` with
``C(P) = max {I(p, W) : Σ_x p_x c_x ≤ P}``, ``upper − lower ≤ tol`` when converged, the
returned prior meets the budget in exact arithmetic and attains ``lower``, and

* closed forms (each derived in its test): a noiseless bit, a BSC and a Z-channel with a cost
  on one input, equal costs, the cheapest inputs' sub-channel at ``P = c_min``, a peak;
* weak duality: ``s P + max_x [D(W_x ‖ Q) − s c_x] ≥ C(P)`` at the returned multiplier, for
  the returned output law, evaluated here from the definition;
* ``P ↦ C(P)`` is non-decreasing and concave (a hypothesis property);
* Blahut–Arimoto and the exponential-cone engine agree within their brackets;
* a budget that does not bind returns :func:`dpcap.capacity`'s bracket bit for bit;
* bad input raises errors that name the argument.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import rel_entr, xlogy

import dpcap
from dpcap import ConvergenceWarning, ParameterError, Status
from dpcap.result import CostCapacityResult
from dpcap.testing import channels

FloatArray = NDArray[np.float64]

TOL = 1e-9
SLACK = 1e-12
LN2 = math.log(2.0)
NOISELESS = np.eye(2)


def h2(t: float) -> float:
    """Binary entropy in nats."""
    return float(-xlogy(t, t) - xlogy(1 - t, 1 - t))


def contains(res: CostCapacityResult, value: float, slack: float = SLACK) -> bool:
    return res.lower - slack <= value <= res.upper + slack


def exactly_within(prior: FloatArray, cost: FloatArray, budget: float) -> bool:
    """``Σ p_x c_x ≤ P Σ p_x`` in rational arithmetic on the float values."""
    if budget == math.inf:
        return True
    spent = sum(Fraction(float(p)) * Fraction(float(c)) for p, c in zip(prior, cost, strict=True))
    mass = sum(Fraction(float(p)) for p in prior)
    return spent <= Fraction(budget) * mass


def information(W: FloatArray, p: FloatArray) -> float:
    on = p > 0
    q = p @ W
    return float(p[on] @ rel_entr(W[on], q).sum(axis=1))


def check_contract(res: CostCapacityResult, W: FloatArray, cost: FloatArray) -> None:
    assert res.lower <= res.upper
    if res.status is Status.CONVERGED:
        assert res.upper - res.lower <= res.tol
    assert exactly_within(res.prior, np.asarray(cost, dtype=float), res.budget)
    assert res.expected_cost <= res.budget
    assert information(np.asarray(W, dtype=float), res.prior) == pytest.approx(res.lower, abs=1e-12)


@pytest.mark.parametrize("P", [0.01, 0.1, 0.25, 0.4, 0.499])
def test_noiseless_bit_with_a_cost_on_one_input(P: float) -> None:
    """``W = I₂``, ``c = (0, 1)``: ``I(p) = H(X) = h(p_1)`` with ``p_1 ≤ P``; ``h`` increases on
    ``[0, 1/2]``, so ``C(P) = h(P)`` for ``P ≤ 1/2``, attained at ``p_1 = P``, and the slope
    ``C'(P) = log((1 − P)/P)`` is the multiplier. The dual ``φ(s) = sP + C_s`` is flat at its
    minimum (``φ'' = −1/C''(P) = P(1 − P)``), so a gap of 1e-9 pins s only to about
    ``√(2·1e-9/φ'')`` ≈ 1e-4."""
    res = dpcap.capacity(NOISELESS, cost=[0.0, 1.0], budget=P)
    assert isinstance(res, CostCapacityResult)
    assert res.status is Status.CONVERGED
    assert contains(res, h2(P))
    assert res.prior[1] == pytest.approx(P, abs=1e-4)
    assert res.multiplier == pytest.approx(math.log((1 - P) / P), abs=1e-3)
    check_contract(res, NOISELESS, np.array([0.0, 1.0]))


@pytest.mark.parametrize("P", [0.5, 0.7, 1.0, math.inf])
def test_noiseless_bit_above_half_is_log_two(P: float) -> None:
    """For ``P ≥ 1/2`` the uniform prior (cost 1/2) is feasible: ``C(P) = log 2``, ``s = 0``."""
    res = dpcap.capacity(NOISELESS, cost=[0.0, 1.0], budget=P)
    assert contains(res, LN2)
    assert res.multiplier == 0.0
    check_contract(res, NOISELESS, np.array([0.0, 1.0]))


@pytest.mark.parametrize(("delta", "P"), [(0.1, 0.05), (0.1, 0.3), (0.25, 0.2), (0.01, 0.45)])
def test_bsc_with_a_cost_on_one_input(delta: float, P: float) -> None:
    """BSC(δ), ``c = (0, 1)``: ``I(p) = h(p_1 ⋆ δ) − h(δ)`` with ``a ⋆ δ = a(1 − δ) + (1 − a)δ``
    increasing in ``p_1`` on ``[0, 1/2]``: ``C(P) = h(P ⋆ δ) − h(δ)`` below the unconstrained
    optimum ``p_1 = 1/2``."""
    W = np.array([[1 - delta, delta], [delta, 1 - delta]])
    res = dpcap.capacity(W, cost=[0.0, 1.0], budget=P)
    star = P * (1 - delta) + (1 - P) * delta
    assert res.status is Status.CONVERGED
    assert contains(res, h2(star) - h2(delta))
    check_contract(res, W, np.array([0.0, 1.0]))


def z_capacity_at(eps: float, p1: float) -> float:
    """Z-channel ``[[1, 0], [ε, 1 − ε]]``: ``q_1 = p_1(1 − ε)``, ``H(Y|X) = p_1 h(ε)``."""
    return h2(p1 * (1 - eps)) - p1 * h2(eps)


def z_optimum(eps: float) -> float:
    """``dI/dp_1 = (1 − ε) log((1 − q_1)/q_1) − h(ε) = 0``: ``q_1 = 1/(1 + e^{h(ε)/(1 − ε)})``."""
    return 1.0 / ((1 - eps) * (1 + math.exp(h2(eps) / (1 - eps))))


@pytest.mark.parametrize(("eps", "P"), [(0.2, 0.1), (0.2, 0.3), (0.5, 0.2), (0.5, 0.9)])
def test_z_channel_with_a_cost_on_the_noisy_input(eps: float, P: float) -> None:
    """``I(p_1)`` is concave with its maximum at :func:`z_optimum`: ``C(P) = I(min(P, p*))``."""
    W = np.array([[1.0, 0.0], [eps, 1 - eps]])
    res = dpcap.capacity(W, cost=[0.0, 1.0], budget=P)
    assert contains(res, z_capacity_at(eps, min(P, z_optimum(eps))))
    check_contract(res, W, np.array([0.0, 1.0]))


def test_z_channel_with_a_cost_on_the_clean_input() -> None:
    """``c = (1, 0)``: ``p_0 ≤ P``, i.e. ``p_1 ≥ 1 − P``; with ``1 − P`` above the optimum
    ``p*`` (≈ 0.4 at ε = 0.2), ``C(P) = I(1 − P)``."""
    eps, P = 0.2, 0.3
    W = np.array([[1.0, 0.0], [eps, 1 - eps]])
    res = dpcap.capacity(W, cost=[1.0, 0.0], budget=P)
    assert z_optimum(eps) < 1 - P
    assert contains(res, z_capacity_at(eps, 1 - P))
    check_contract(res, W, np.array([1.0, 0.0]))


def test_equal_costs_give_the_capacity() -> None:
    """``c_x = c`` for every x: every prior costs exactly c, so ``C(P) = C`` for ``P ≥ c`` (also
    at ``P = c``, the least cost, where every input is among the cheapest)."""
    W = np.array([[0.9, 0.1], [0.1, 0.9]])
    C = LN2 - h2(0.1)
    for P in (0.5, 0.7):
        res = dpcap.capacity(W, cost=[0.5, 0.5], budget=P)
        assert contains(res, C)
    with pytest.raises(ParameterError, match=r"budget=0\.4 is below the least cost 0\.5"):
        dpcap.capacity(W, cost=[0.5, 0.5], budget=0.4)


def test_zero_costs_give_the_capacity() -> None:
    W = np.array([[0.9, 0.1], [0.1, 0.9]])
    res = dpcap.capacity(W, cost=[0.0, 0.0], budget=0.0)
    assert contains(res, LN2 - h2(0.1))


def test_budget_at_the_least_cost_is_the_cheapest_sub_channel() -> None:
    """``P = c_min``: every input of positive mass must cost ``c_min``. Ternary noiseless
    channel, ``c = (1, 1, 2)``, ``P = 1``: the capacity of two noiseless inputs, ``log 2``; with
    one cheapest input, 0."""
    W = np.eye(3)
    res = dpcap.capacity(W, cost=[1.0, 1.0, 2.0], budget=1.0)
    assert contains(res, LN2)
    assert res.prior[2] == 0.0
    assert res.multiplier == math.inf
    one = dpcap.capacity(W, cost=[1.0, 2.0, 2.0], budget=1.0)
    assert one.lower == 0.0 == one.upper
    assert one.prior.tolist() == [1.0, 0.0, 0.0]


def test_peak_removes_expensive_inputs() -> None:
    """Peak ``A``: inputs with ``c_x > A`` are unused. Ternary noiseless, ``c = (0, 1, 2)``,
    ``A = 1``: two noiseless inputs, ``log 2``; with a budget ``P = 1/4`` too, ``h(1/4)``."""
    W = np.eye(3)
    cost = np.array([0.0, 1.0, 2.0])
    res = dpcap.capacity(W, cost=cost, peak=1.0)
    assert contains(res, LN2)
    assert res.prior[2] == 0.0
    assert res.budget == math.inf
    assert res.peak == 1.0
    both = dpcap.capacity(W, cost=cost, peak=1.0, budget=0.25)
    assert contains(both, h2(0.25))
    assert both.prior[2] == 0.0
    check_contract(both, W, cost)
    with pytest.raises(ParameterError, match=r"peak=0\.5 is below the least cost 1\.0"):
        dpcap.capacity(W, cost=[1.0, 2.0, 3.0], peak=0.5)
    with pytest.raises(ParameterError, match=r"budget=0\.5 is below the least cost 1\.0 among"):
        dpcap.capacity(W, cost=[1.0, 2.0, 3.0], peak=2.0, budget=0.5)


def test_a_budget_that_does_not_bind_returns_capacity_bit_for_bit() -> None:
    W = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.2, 0.6]])
    plain = dpcap.capacity(W)
    for P in (2.0, math.inf):
        res = dpcap.capacity(W, cost=[0.0, 1.0, 2.0], budget=P)
        assert (res.lower, res.upper, res.value) == (plain.lower, plain.upper, plain.value)
        assert np.array_equal(res.prior, plain.prior)
        assert res.multiplier == 0.0


def test_cheaper_equal_rows_carry_the_mass() -> None:
    """Rows 0 and 1 are equal, row 0 costs 1 and row 1 nothing: the budget 1/4 does not bind
    (move the mass of row 0 to row 1): ``C(P) = log 2``, nothing on row 0."""
    W = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    res = dpcap.capacity(W, cost=[1.0, 0.0, 0.0], budget=0.25)
    assert contains(res, LN2)
    assert res.prior[0] == 0.0


def test_bits_divide_by_log_two() -> None:
    nats = dpcap.capacity(NOISELESS, cost=[0.0, 1.0], budget=0.25)
    bits = dpcap.capacity(NOISELESS, cost=[0.0, 1.0], budget=0.25, unit="bits")
    assert bits.unit == "bits"
    assert bits.value == pytest.approx(nats.value / LN2, rel=1e-12)
    assert bits.multiplier == pytest.approx(nats.multiplier / LN2, rel=1e-12)


def dual(W: FloatArray, cost: FloatArray, P: float, s: float, Q: FloatArray) -> float:
    """``s P + max_x [D(W_x ‖ Q) − s c_x]``, from the definition."""
    D = rel_entr(W, Q).sum(axis=1)
    return float(s * P + np.max(D - s * cost))


def test_dual_bound_at_the_multiplier_covers_the_prior() -> None:
    """Weak duality: for every ``s ≥ 0`` and output law Q, ``sP + max_x [D(W_x‖Q) − s c_x] ≥
    C(P) ≥ I(p, W)`` for a feasible p: at the returned multiplier, at 0 and at twice it, with
    the returned output law and with the uniform law."""
    rng = np.random.default_rng(7)
    W = rng.dirichlet(np.ones(5), size=6)
    cost = rng.uniform(0.0, 2.0, size=6)
    P = float(cost.min() + 0.3 * (cost.mean() - cost.min()))
    res = dpcap.capacity(W, cost=cost, budget=P)
    assert res.status is Status.CONVERGED
    for s in (res.multiplier, 0.0, 2 * res.multiplier):
        for Q in (res.output, np.full(5, 0.2)):
            assert dual(W, cost, P, s, Q) >= res.lower - SLACK
    check_contract(res, W, cost)


@pytest.mark.parametrize(("cost", "P"), [([0.0, 1.0, 2e12], 0.1), ([0.0, 1e-12, 2.0], 1e-13)])
def test_a_very_expensive_input_does_not_widen_the_dual_bound(cost: list[float], P: float) -> None:
    """Noiseless ternary channel, one input ``2·10^13`` times dearer per unit than the budget:
    the optimal prior is ``p_x ∝ e^{−s c_x}`` (``I = H(p)``), so the dear input carries mass
    ``e^{−4.4·10^12}`` and ``C(P) = h(0.1)`` to every digit (``p_1 = P/c_1 = 0.1``). The
    rounding allowance of the dual bound is per input: ``s·c_x ≈ 4.4·10^12`` of the dear input
    must not enter the bound of the maximum (it would add ``8u·4.4·10^12 ≈ 0.004`` nats)."""
    W = np.eye(3)
    res = dpcap.capacity(W, cost=cost, budget=P)
    assert res.status is Status.CONVERGED
    assert contains(res, h2(0.1))
    check_contract(res, W, np.asarray(cost))


def test_engines_agree_within_their_brackets() -> None:
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(11)
    for _ in range(3):
        W = rng.dirichlet(np.ones(4), size=5)
        cost = rng.uniform(0.0, 1.0, size=5)
        P = float(cost.min() + 0.4 * (cost.max() - cost.min()))
        ba = dpcap.capacity(W, cost=cost, budget=P)
        conic = dpcap.capacity(W, cost=cost, budget=P, method="conic")
        assert conic.method == "conic/CLARABEL"
        assert ba.lower <= conic.upper + SLACK
        assert conic.lower <= ba.upper + SLACK
        check_contract(conic, W, cost)


def test_an_open_bracket_warns_and_still_holds() -> None:
    delta, P = 0.1, 0.3
    W = np.array([[1 - delta, delta], [delta, 1 - delta]])
    with pytest.warns(ConvergenceWarning, match="not converged"):
        res = dpcap.capacity(W, cost=[0.0, 1.0], budget=P, tol=1e-300, max_iter=2)
    assert res.status in (Status.MAX_ITER, Status.INACCURATE)
    assert contains(res, h2(P * (1 - delta) + (1 - P) * delta) - h2(delta))


@st.composite
def problems(draw: st.DrawFn) -> tuple[FloatArray, FloatArray, float, float]:
    """A channel, costs on a grid of eighths in [0, 2], and two budgets between the least and
    the largest cost."""
    W = draw(channels(max_inputs=4, max_outputs=4))
    n = W.shape[0]
    cost = np.array(draw(st.lists(st.integers(0, 16), min_size=n, max_size=n))) / 8.0
    lo, hi = float(cost.min()), float(cost.max())
    a = draw(st.floats(0.0, 1.0))
    b = draw(st.floats(0.0, 1.0))
    P1, P2 = sorted((lo + a * (hi - lo), lo + b * (hi - lo)))
    return W, cost, P1, P2


@settings(max_examples=20, deadline=None)
@given(problems())
def test_capacity_cost_is_monotone_and_concave(
    problem: tuple[FloatArray, FloatArray, float, float],
) -> None:
    """``C(P)`` is non-decreasing (a larger budget allows more priors) and concave (the mixture
    of two feasible priors meets the mixed budget, and I is concave in p), and ``C(P) ≤ C``."""
    W, cost, P1, P2 = problem
    one = dpcap.capacity(W, cost=cost, budget=P1)
    two = dpcap.capacity(W, cost=cost, budget=P2)
    mid = dpcap.capacity(W, cost=cost, budget=(P1 + P2) / 2)
    plain = dpcap.capacity(W)
    assert two.upper >= one.lower - SLACK
    assert mid.upper >= (one.lower + two.lower) / 2 - SLACK
    for res in (one, two, mid):
        assert res.lower <= plain.upper + SLACK
        check_contract(res, W, cost)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cost": [0.0, float("nan")], "budget": 1.0}, "cost must not be NaN"),
        ({"cost": [0.0, -1.0], "budget": 1.0}, "cost must be >= 0"),
        ({"cost": [0.0, math.inf], "budget": 1.0}, "cost must be finite"),
        ({"cost": [0.0, 1.0, 2.0], "budget": 1.0}, r"cost must be a 1-D array .* \(2\)"),
        ({"cost": "cheap", "budget": 1.0}, "cost must be a real number"),
        ({"cost": [0.0, 1.0], "budget": -1.0}, "budget must be >= 0"),
        ({"cost": [0.0, 1.0], "budget": float("nan")}, "budget must not be NaN"),
        ({"cost": [0.0, 1.0], "budget": [1.0, 2.0]}, "budget must be a scalar"),
        ({"cost": [0.0, 1.0], "peak": -2.0}, "peak must be >= 0"),
        ({"budget": 1.0}, "need cost="),
        ({"peak": 1.0}, "need cost="),
        ({"cost": [0.0, 1.0]}, "cost= needs budget="),
        ({"cost": [0.5, 1.0], "budget": 0.25}, r"budget=0\.25 is below the least cost 0\.5"),
        ({"cost": [0.0, 1.0], "budget": 0.5, "solver": "ECOS"}, "method='conic'"),
    ],
)
def test_bad_input_names_the_argument(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        dpcap.capacity(NOISELESS, **kwargs)  # type: ignore[arg-type]
