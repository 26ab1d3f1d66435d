"""Brackets that hold in floating point (``docs/mathematics.rst`` §8).

Every reference here is computed in mpmath at 60 digits from the float64 matrix as stored, with
each row divided by its exact sum: the channel whose capacity dpcap certifies. The closed forms
are those of symmetric channels (uniform optimal prior): ``C = log k − H(row)`` and
``C_α = D_α(row ‖ uniform)``.
"""

from __future__ import annotations

import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap._core import certify as _certify
from dpcap.mechanisms import randomized_response
from dpcap.solvers import blahut, renyi, rounding

mp.mp.dps = 60
#: The property tests draw entries down to 1e-300: they work at 420 digits, so that 1 + 1e-300
#: is resolved, and allow a slack below the smallest double (the two-input search converges
#: in t to about 1e-25, so its maximum is exact to about 1e-50).
DIGITS = 420
SLACK = mp.mpf(10) ** -330
SEARCH_SLACK = mp.mpf(10) ** -45

EPSILONS = (1e-8, 1e-3, 0.1, 1.0, 5.0, 50.0)


def _row(W: np.ndarray) -> list[mp.mpf]:
    """The first row of ``W`` as exact rationals of its doubles, divided by its exact sum."""
    row = [mp.mpf(float(v)) for v in W[0]]
    total = mp.fsum(row)
    return [v / total for v in row]


def _rr_capacity(W: np.ndarray, alpha: float = 1.0) -> mp.mpf:
    """Capacity (α = 1) or α-capacity of a symmetric channel: ``D_α(row ‖ uniform)``."""
    row = _row(W)
    k = mp.mpf(len(row))
    if alpha == 1.0:
        return mp.log(k) + mp.fsum(v * mp.log(v) for v in row if v > 0)
    a = mp.mpf(alpha)
    return mp.log(mp.fsum(v**a for v in row if v > 0)) / (a - 1) + mp.log(k)


def _inside(lower: float, truth: mp.mpf, upper: float) -> bool:
    return mp.mpf(lower) <= truth <= mp.mpf(upper)


@pytest.mark.parametrize("k", [2, 5, 500])
@pytest.mark.parametrize("eps", EPSILONS)
def test_randomized_response_capacity_holds_the_truth(k: int, eps: float) -> None:
    W = np.asarray(randomized_response(k, eps).matrix)
    truth = _rr_capacity(W)
    res = dpcap.capacity(W)
    assert _inside(res.lower, truth, res.upper), (res.lower, mp.nstr(truth, 20), res.upper)
    assert res.status is dpcap.Status.CONVERGED
    # narrow, not just valid: the relative width is a rounding level (1e-5 at 1e-20 nats)
    assert res.upper - res.lower <= 1e-5 * float(truth) + 1e-300


@pytest.mark.parametrize("k", [2, 5, 500])
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("alpha", [0.5, 2.0, 1.001])
def test_randomized_response_renyi_capacity_holds_the_truth(
    k: int, eps: float, alpha: float
) -> None:
    W = np.asarray(randomized_response(k, eps).matrix)
    truth = _rr_capacity(W, alpha)
    res = dpcap.renyi_capacity(W, alpha)
    assert _inside(res.lower, truth, res.upper), (res.lower, mp.nstr(truth, 20), res.upper)


@pytest.mark.parametrize("eps", EPSILONS)
def test_randomized_response_5000_bracket_at_the_optimal_prior(eps: float) -> None:
    """k = 5000: the certificate evaluation alone (the uniform prior is optimal by symmetry)."""
    W = np.asarray(randomized_response(5000, eps).matrix)
    lower, upper = _certify.batch_bracket(W[None], np.full((1, 5000), 1 / 5000))
    assert _inside(lower[0], _rr_capacity(W), upper[0])


def test_high_privacy_values_of_the_issue() -> None:
    """RR(5, 1e-8): C ≈ 8.0e-18, C_2 ≈ 1.6e-17, MI-DP = C (float64 had 1.78e-16, 0 and 0)."""
    W = np.asarray(randomized_response(5, 1e-8).matrix)
    for res, truth in (
        (dpcap.capacity(W), _rr_capacity(W)),
        (dpcap.renyi_capacity(W, 2.0), _rr_capacity(W, 2.0)),
        (dpcap.midp(W), _rr_capacity(W)),
    ):
        assert _inside(res.lower, truth, res.upper)
        assert abs(res.value - float(truth)) <= 1e-9 * float(truth)
    assert 7.9e-18 < float(_rr_capacity(W)) < 8.1e-18  # the issue's value, for the record


# --- each end is a valid bound at *any* prior (property) -----------------------------------


def _exact(W: np.ndarray, p: np.ndarray) -> tuple[list[list[mp.mpf]], list[mp.mpf]]:
    rows = []
    for w in W:
        row = [mp.mpf(float(v)) for v in w]
        total = mp.fsum(row)
        rows.append([v / total for v in row])
    prior = [mp.mpf(float(v)) for v in p]
    mass = mp.fsum(prior)
    return rows, [v / mass for v in prior]


def _information(V: list[list[mp.mpf]], P: list[mp.mpf], alpha: float) -> mp.mpf:
    """Shannon's ``I(P, V)`` or Sibson's ``I_α^S(P, V)``, exactly (60 digits)."""
    nx, ny = len(V), len(V[0])
    if alpha == 1.0:
        Q = [mp.fsum(P[x] * V[x][y] for x in range(nx)) for y in range(ny)]
        return mp.fsum(
            P[x] * V[x][y] * mp.log(V[x][y] / Q[y])
            for x in range(nx)
            for y in range(ny)
            if P[x] > 0 and V[x][y] > 0
        )
    a = mp.mpf(alpha)
    s = [mp.fsum(P[x] * V[x][y] ** a for x in range(nx) if P[x] > 0) for y in range(ny)]
    return a / (a - 1) * mp.log(mp.fsum(v ** (1 / a) for v in s))


def _capacity_two_inputs(V: list[list[mp.mpf]], alpha: float) -> mp.mpf:
    """``max_t I((1 − t, t), V)`` by golden-section search (the information is unimodal in t)."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    ratio = (mp.sqrt(5) - 1) / 2
    for _ in range(120):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if _information(V, [1 - a, a], alpha) < _information(V, [1 - b, b], alpha):
            lo = a
        else:
            hi = b
    return max(_information(V, [1 - t, t], alpha) for t in (lo, hi, mp.mpf(0), mp.mpf(1)))


def _divergence(row: list[mp.mpf], Q: list[mp.mpf], alpha: float) -> mp.mpf:
    """``D_α(row ‖ Q)`` exactly; ∞ where the row escapes Q (α ≥ 1) or misses it (α < 1)."""
    pairs = [(w, q) for w, q in zip(row, Q, strict=True) if w > 0]
    if alpha >= 1.0 and any(q == 0 for _, q in pairs):
        return mp.inf
    if alpha == 1.0:
        return mp.fsum(w * mp.log(w / q) for w, q in pairs)
    a = mp.mpf(alpha)
    total = mp.fsum(w**a * q ** (1 - a) for w, q in pairs if q > 0)
    return mp.log(total) / (a - 1) if total > 0 else mp.inf


_entry = st.one_of(
    st.floats(0.0, 1.0),
    st.sampled_from([0.0, 5e-324, 1e-310, 1e-300, 1e-200, 1e-17, 0.5]),
)


@st.composite
def _channels(draw: st.DrawFn, two_inputs: bool = False) -> tuple[np.ndarray, np.ndarray]:
    nx = 2 if two_inputs else draw(st.integers(1, 4))
    ny = draw(st.integers(1, 4))
    W = np.array([[draw(_entry) for _ in range(ny)] for _ in range(nx)])
    W[:, 0] += W.sum(axis=1) == 0  # no empty row
    near = draw(st.booleans())
    if near:  # nearly uniform rows: the cancellation regime
        W = 1.0 + 1e-9 * W
    W = W / W.sum(axis=1, keepdims=True)
    p = np.array([draw(_entry) for _ in range(nx)])
    p[0] += p.sum() == 0
    return W, p / p.sum()


ORDERS = [1.0, 1e-6, 0.01, 0.3, 0.999, 1.001, 2.0, 7.0]


@settings(max_examples=120, deadline=None)
@given(_channels(), _channels(), st.sampled_from(ORDERS))
def test_divergences_hold_the_exact_value(
    case: tuple[np.ndarray, np.ndarray], centre: tuple[np.ndarray, np.ndarray], alpha: float
) -> None:
    """``D_α(W_x/s_x ‖ Q/S)`` lies in the returned bounds, for any float rows and law Q."""
    W, _ = case
    Q = centre[1][: W.shape[1]]
    if Q.size < W.shape[1]:
        Q = np.concatenate([Q, np.zeros(W.shape[1] - Q.size)])
    if Q.sum() == 0:
        Q[0] = 1.0
    Q = Q / Q.sum()  # as the kernel does first: the centre is this float law
    lo, hi = rounding.divergence_bounds(W[None], Q[None], alpha)
    with mp.workdps(DIGITS):
        V, Qx = _exact(W, Q)
        for x, row in enumerate(V):
            exact = _divergence(row, Qx, alpha)
            inside = mp.mpf(lo[0, x]) - SLACK <= exact <= mp.mpf(hi[0, x]) + SLACK
            assert inside, (x, lo[0, x], exact, hi[0, x])


@settings(max_examples=90, deadline=None)
@given(_channels(), st.sampled_from(ORDERS))
def test_lower_end_is_below_the_information_of_its_prior(
    case: tuple[np.ndarray, np.ndarray], alpha: float
) -> None:
    W, p = case
    lower, upper = rounding.bracket(W[None], p[None], alpha=alpha)
    with mp.workdps(DIGITS):
        V, P = _exact(W, p)
        info = _information(V, P, alpha)
        assert mp.mpf(lower[0]) - SLACK <= info <= mp.mpf(upper[0]) + SLACK


@settings(max_examples=15, deadline=None)
@given(_channels(two_inputs=True), st.sampled_from(ORDERS))
def test_upper_end_is_above_the_capacity(case: tuple[np.ndarray, np.ndarray], alpha: float) -> None:
    """At any prior the upper end bounds the capacity (two inputs: an exact 1-D search)."""
    W, p = case
    _, upper = rounding.bracket(W[None], p[None], alpha=alpha)
    with mp.workdps(DIGITS):
        V, _ = _exact(W, p)
        assert mp.mpf(upper[0]) + SEARCH_SLACK >= _capacity_two_inputs(V, alpha)


def test_engine_models_map_to_orders() -> None:
    """The certificate layer evaluates both engine models with the rigorous kernel."""
    W = np.asarray(randomized_response(3, 0.5).matrix)
    p = np.full((1, 3), 1 / 3)
    shannon = _certify.batch_bracket(W[None], p, model=blahut.SHANNON)
    sibson = _certify.batch_bracket(W[None], p, model=renyi.Sibson(2.0))
    assert _inside(shannon[0][0], _rr_capacity(W), shannon[1][0])
    assert _inside(sibson[0][0], _rr_capacity(W, 2.0), sibson[1][0])


def test_subnormal_entries_keep_a_valid_bracket() -> None:
    """Far tails below the smallest normal double go through the log-domain path."""
    W = np.array([[1.0 - 1e-310, 1e-310], [0.5, 0.5], [1e-320, 1.0 - 1e-320]])
    W = W / W.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpcap.capacity(W)
    V, P = _exact(W, np.asarray(res.prior))
    assert mp.mpf(res.lower) <= _information(V, P, 1.0)
    assert mp.mpf(res.upper) >= _information(V, P, 1.0)


def test_renyi_midp_at_infinity_is_rounded_outward() -> None:
    """C_∞ of each slice is a bracket around ``log Σ_y max_x W_xy`` (was a bare float)."""
    for k, eps in ((3, 0.3), (5, 1e-8), (7, 1e-3)):
        W = np.asarray(randomized_response(k, eps).matrix)
        with mp.workdps(60):
            V, _ = _exact(W, np.full(k, 1.0 / k))
            truth = mp.log(mp.fsum(max(V[x][y] for x in range(k)) for y in range(k)))
        res = dpcap.renyi_midp(W, float("inf"))
        assert _inside(res.lower, truth, res.upper), (res.lower, truth, res.upper)


def test_subnormal_ratio_at_small_order() -> None:
    """A ratio W/Q below the smallest normal double loses digits; at α = 0.01 the old kernel's
    lower end came out 5e-12 above the exact divergence (the row is now done in logs)."""
    W = np.array([[5e-324, 0.5, 0.5]])
    Q = np.array([0.45, 0.275, 0.275])
    lo, hi = rounding.divergence_bounds(W[None], Q[None], 0.01)
    with mp.workdps(DIGITS):
        V, Qx = _exact(W, Q / Q.sum())
        exact = _divergence(V[0], Qx, 0.01)
    assert mp.mpf(lo[0, 0]) <= exact <= mp.mpf(hi[0, 0])
