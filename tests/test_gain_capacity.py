"""g-capacities and risk capacities over all priors (dpcap.gain_capacity).

Every expected value is a closed form, a theorem or an independent brute force written here:

* the multiplicative Bayes capacity ``Σ_y max_x W[x, y]`` (attained by the uniform prior) is
  ``exp(max_leakage(W))``; for k-ary randomized response it is ``k e^ε / (e^ε + k − 1)``;
  libqif's test suite: 2 (id_2), 10 (id_10), 1 (noint_10), 1.5 (c1);
* the multiplicative Bayes-risk capacity ``1 / (1 − max_{x,x'} TV(W_x, W_x'))``
  (``docs/mathematics.rst`` §9, proved there); libqif's test suite: ∞ (id_2, id_10),
  1 (noint_10), 2 (c1); the two-point uniform prior on the farthest rows attains it, and no
  prior of a fine grid exceeds it;
* the additive Bayes capacity of a channel with two secrets is ``TV(W_0, W_1) / 2``: on
  ``a ≥ 1/2`` the leakage ``V_1[π▷W] − a`` is convex in ``a``, so its maximum is at
  ``a = 1/2`` (value ``(1 + TV)/2 − 1/2``) or ``a = 1`` (value 0), and symmetrically below;
* brute force: the maximum of a convex function over a polytope is at a vertex, and both
  capacities are such maxima (§9): every vertex is enumerated, and the certified bracket must
  contain the largest vertex value; a grid over the simplex gives lower bounds;
* theorems (hypothesis): every prior's leakage is at most the capacity's upper end; the
  miracle theorem (the g-capacity of ``g ≥ 0`` is at most the Bayes capacity); the exact
  reductions (zero-gain secrets, dominated guesses) and the shift/scale rules change nothing.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import qif
from dpcap.errors import (
    ChannelError,
    ConvergenceWarning,
    ParameterError,
    ProblemTooLargeError,
    Status,
)
from dpcap.gain_capacity import MAX_BINARIES, g_capacity, risk_capacity
from dpcap.mechanisms import randomized_response
from dpcap.result import GainCapacityResult
from dpcap.testing import channels, distributions

C1 = np.array([[0.8, 0.2], [0.3, 0.7]])


def _ratio(p: np.ndarray, W: np.ndarray, G: np.ndarray) -> float:
    return float(np.sum(np.max(G @ (p[:, None] * W), axis=0)) / np.max(G @ p))


def _difference(p: np.ndarray, W: np.ndarray, G: np.ndarray) -> float:
    return float(np.sum(np.max(G @ (p[:, None] * W), axis=0)) - np.max(G @ p))


def vertex_capacity(W: np.ndarray, G: np.ndarray, kind: str) -> float:
    """The capacity as the largest value over the vertices of the polytope of §9.

    Multiplicative: ``{ρ ≥ 0 : G ρ ≤ 1}`` (secrets with a zero gain column dropped: they never
    raise the ratio). Additive: ``{(π, v) : π ∈ Δ, v ≥ G_w·π, v ≤ max G + 1}``. A vertex is
    ``d`` linearly independent active constraints (``d`` the dimension); each candidate
    solution is kept if it satisfies every constraint within 1e-12.
    """
    n = W.shape[0]
    best = 0.0 if kind == "additive" else 1.0
    if kind == "multiplicative":
        live = np.flatnonzero(G.max(axis=0) > 0)
        W, G = W[live], G[:, live]
        n = len(live)
        A = np.vstack([-np.eye(n), G])
        b = np.concatenate([np.zeros(n), np.ones(G.shape[0])])
        for rows in itertools.combinations(range(len(A)), n):
            S = A[list(rows)]
            if abs(np.linalg.det(S)) < 1e-12:
                continue
            rho = np.linalg.solve(S, b[list(rows)])
            if np.all(A @ rho <= b + 1e-12) and np.max(G @ rho) > 1e-12:
                best = max(best, _ratio(np.maximum(rho, 0.0), W, G))
        return best
    k = G.shape[0]
    A = np.vstack(
        [
            np.hstack([-np.eye(n), np.zeros((n, 1))]),
            np.hstack([G, -np.ones((k, 1))]),
            np.hstack([np.zeros((1, n)), np.ones((1, 1))]),
        ]
    )
    b = np.concatenate([np.zeros(n + k), [G.max() + 1.0]])
    eq = np.concatenate([np.ones(n), [0.0]])
    for rows in itertools.combinations(range(len(A)), n):
        S = np.vstack([A[list(rows)], eq])
        if abs(np.linalg.det(S)) < 1e-12:
            continue
        point = np.linalg.solve(S, np.concatenate([b[list(rows)], [1.0]]))
        if np.all(A @ point <= b + 1e-12):
            p = np.maximum(point[:n], 0.0)
            best = max(best, _difference(p / p.sum(), W, G))
    return best


def grid_priors(n: int, steps: int) -> np.ndarray:
    """Every prior whose entries are multiples of ``1/steps``."""
    out = [
        np.array(c, dtype=np.float64) / steps
        for c in itertools.product(range(steps + 1), repeat=n)
        if sum(c) == steps
    ]
    return np.array(out)


# --------------------------------------------------------------------------- closed forms


def test_bayes_capacity_libqif_and_randomized_response() -> None:
    """libqif's test suite: 2 (id_2), 10 (id_10), 1 (noint_10), 1.5 (c1); k-ary RR."""
    for W, value in ((np.eye(2), 2.0), (np.eye(10), 10.0), (np.ones((10, 1)), 1.0), (C1, 1.5)):
        res = g_capacity(W)
        assert res.lower <= value <= res.upper
        assert res.upper - res.lower <= 1e-13 * value
        assert res.method == "closed form"
        assert res.status is Status.CONVERGED
        assert res.prior == pytest.approx(np.full(W.shape[0], 1.0 / W.shape[0]))
    for k, eps in ((2, 0.5), (3, 1.0), (7, 2.0)):
        res = g_capacity(randomized_response(k, eps))
        closed = k * math.exp(eps) / (math.exp(eps) + k - 1)
        assert res.lower <= closed * (1 + 1e-14)
        assert closed <= res.upper * (1 + 1e-14)
    same = g_capacity(C1, np.eye(2))  # an explicit identity gain takes the closed form too
    assert same.method == "closed form"


@settings(max_examples=40, deadline=None)
@given(channels(max_inputs=6, max_outputs=6, degenerate=True))
def test_bayes_capacity_is_exp_max_leakage(W: np.ndarray) -> None:
    res = g_capacity(W)
    ml = math.exp(dpcap.max_leakage(W))
    assert res.lower <= ml * (1 + 1e-13)
    assert ml <= res.upper * (1 + 1e-13)
    assert qif.bayes_leakage(res.prior, W) == pytest.approx(res.value, rel=1e-12)


def test_bayes_risk_capacity_libqif() -> None:
    """libqif's test suite: ∞ (id_2, id_10), 1 (noint_10), 2 (c1)."""
    for W in (np.eye(2), np.eye(10)):
        res = risk_capacity(W)
        assert res.value == res.lower == math.inf
        assert res.status is Status.CONVERGED
    res = risk_capacity(np.ones((10, 1)))
    assert res.lower <= 1.0 <= res.upper
    assert res.gap < 1e-14
    res = risk_capacity(C1)
    assert res.lower <= 2.0 <= res.upper
    assert res.gap < 1e-13
    assert res.prior.tolist() == [0.5, 0.5]
    assert res.guesses.tolist() == [0, 1]


@settings(max_examples=30, deadline=None)
@given(channels(min_inputs=2, max_inputs=3, max_outputs=4))
@example(W=np.array([[0.0, 0.0, 1.0, 0.0], [0.43330173, 0.1743687, 0.0, 0.39232957]]))
def test_bayes_risk_capacity_is_one_over_one_minus_tv(W: np.ndarray) -> None:
    res = risk_capacity(W)
    n = W.shape[0]
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    # TV = 1 exactly when two rows have disjoint supports (a float sum of |a − b|/2 may then
    # round to 1 − 2⁻⁵³, whose 1/(1 − TV) is 9e15, not ∞): decided from the supports
    disjoint = any(not np.any((W[a] > 0) & (W[b] > 0)) for a, b in pairs)
    tv = max(dpcap.tv_distance(W[a], W[b]) for a, b in pairs)
    closed = math.inf if disjoint or tv >= 1.0 else 1.0 / (1.0 - tv)
    if not math.isfinite(closed):
        assert res.lower == math.inf
    else:
        assert res.lower <= closed * (1 + 1e-12)
        assert closed <= res.upper * (1 + 1e-12)
        # the returned prior attains it, and no prior of a grid exceeds it
        assert qif.risk_leakage(res.prior, W) == pytest.approx(closed, rel=1e-9)
        for p in grid_priors(n, 12):
            if qif.bayes_risk(p) > 0:
                assert qif.risk_leakage(p, W) <= res.upper * (1 + 1e-12)


def test_additive_bayes_capacity_of_two_secrets_is_half_the_tv() -> None:
    rng = np.random.default_rng(3)
    for m in (2, 3, 5):
        W = rng.dirichlet(np.ones(m), size=2)
        res = g_capacity(W, kind="additive")
        half_tv = dpcap.tv_distance(W[0], W[1]) / 2
        assert res.lower - 1e-12 <= half_tv <= res.upper + 1e-12
        assert res.status is Status.CONVERGED
        assert res.gap <= 1e-4


# --------------------------------------------------------------------------- brute force


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["multiplicative", "additive"])
def test_bracket_contains_the_vertex_maximum(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    n, m, k = 3, int(rng.integers(2, 5)), int(rng.integers(2, 4))
    W = rng.dirichlet(np.full(m, 0.6), size=n)
    G = rng.uniform(0.0, 1.0, size=(k, n))
    if kind == "additive":
        G = G - 0.5  # negative gains are fine for the additive capacity
    res = g_capacity(W, G, kind=kind)
    truth = vertex_capacity(W, G, kind)
    assert res.lower - 1e-12 <= truth <= res.upper + 1e-12
    assert res.status is Status.CONVERGED
    assert res.upper - res.lower <= res.tol * max(res.upper, G.max() - G.min())
    # the lower end is the leakage of the returned prior
    measured = qif.g_leakage(res.prior, W, G, kind=kind)
    assert res.lower <= measured * (1 + 1e-12) + 1e-15
    assert measured <= truth + 1e-12
    # a grid over the simplex never beats the upper end
    for p in grid_priors(n, 10):
        if kind == "additive" or np.max(G @ p) > 0:
            assert qif.g_leakage(p, W, G, kind=kind) <= res.upper + 1e-12


def test_the_identity_gain_additive_capacity_against_vertices() -> None:
    rng = np.random.default_rng(11)
    for _ in range(4):
        W = rng.dirichlet(np.full(4, 0.5), size=4)
        res = g_capacity(W, kind="additive")
        truth = vertex_capacity(W, np.eye(4), "additive")
        assert res.lower - 1e-12 <= truth <= res.upper + 1e-12
        same = risk_capacity(W, kind="additive")  # U = 1 − V for the 0-1 loss
        assert same.lower - 1e-12 <= truth <= same.upper + 1e-12
        assert same.measure == "loss"
        assert same.unit == "loss"


# --------------------------------------------------------------------------- theorems


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_every_prior_leaks_at_most_the_capacity(data: st.DataObject) -> None:
    W = data.draw(channels(max_inputs=3, max_outputs=3))
    n = W.shape[0]
    k = data.draw(st.integers(1, 3))
    G = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=k * n, max_size=k * n)))
    G = G.reshape(k, n)
    if not (G > 0).any():
        G[0, 0] = 1.0
    p = data.draw(distributions(n, allow_zeros=False))
    mult = g_capacity(W, G)
    bayes = g_capacity(W)
    assert mult.upper <= bayes.upper * (1 + 1e-12)  # the miracle theorem
    if qif.g_vulnerability(p, G) > 0:
        assert qif.g_leakage(p, W, G) <= mult.upper * (1 + 1e-12)
    add = g_capacity(W, G, kind="additive")
    assert qif.g_leakage(p, W, G, kind="additive") <= add.upper + 1e-12


def test_reductions_shift_and_scale() -> None:
    rng = np.random.default_rng(5)
    W = rng.dirichlet(np.ones(3), size=3)
    G = rng.uniform(0.1, 1.0, size=(2, 3))
    base = g_capacity(W, G)
    # a fourth secret with a zero gain column, and a dominated guess: nothing changes
    W4 = np.vstack([W, rng.dirichlet(np.ones(3))])
    G4 = np.vstack([np.hstack([G, np.zeros((2, 1))]), [[0.05, 0.05, 0.05, 0.0]]])
    more = g_capacity(W4, G4)
    assert abs(more.upper - base.upper) <= 2 * base.tol * base.upper
    assert more.prior[3] == 0.0
    assert more.guesses.max() <= 1
    scaled = g_capacity(W, 7.0 * G)
    assert abs(scaled.upper - base.upper) <= 2 * base.tol * base.upper
    add = g_capacity(W, G, kind="additive")
    shifted = g_capacity(W, 2.0 * G + np.array([1.0, -3.0, 0.5]), kind="additive")
    assert abs(shifted.upper - 2.0 * add.upper) <= 4 * add.tol * np.ptp(G)


def test_constant_gain_and_point_channel_leak_nothing() -> None:
    res = g_capacity(C1, [[1.0, 2.0], [1.0, 2.0]], kind="additive")
    assert res.value == 0.0
    assert res.status is Status.CONVERGED
    res = g_capacity(np.ones((3, 1)), np.eye(3), kind="additive")
    assert res.lower == 0.0
    assert res.upper <= 1e-15


# --------------------------------------------------------------------------- limits and input


def test_time_limit_returns_an_open_bracket_with_a_warning() -> None:
    rng = np.random.default_rng(1)
    W = rng.dirichlet(np.full(14, 0.5), size=14)
    G = rng.uniform(0, 1, size=(14, 14))
    with pytest.warns(ConvergenceWarning, match=r"not converged: certified gap"):
        res = g_capacity(W, G, kind="additive", time_limit=0.05)
    assert res.status is Status.MAX_ITER
    assert 0.0 <= res.lower <= res.upper
    p = rng.dirichlet(np.ones(14))
    assert qif.g_leakage(p, W, G, kind="additive") <= res.upper + 1e-12


def test_too_many_binaries_is_refused_before_solving() -> None:
    rng = np.random.default_rng(2)
    m = 200
    W = rng.dirichlet(np.ones(m), size=2)
    t = np.linspace(0.0, 1.0, 60)
    G = np.column_stack([t, 1.0 - t])  # no guess dominates another
    assert m * len(t) > MAX_BINARIES
    with pytest.raises(ProblemTooLargeError, match=r"would have 12000 binary variables"):
        g_capacity(W, G, kind="additive")


def test_capacity_input_rules() -> None:
    with pytest.raises(ParameterError, match=r"gain has a negative entry -0.5 at index \(0, 1\)"):
        g_capacity(C1, [[1.0, -0.5]])
    with pytest.raises(ParameterError, match=r"gain has no positive entry"):
        g_capacity(C1, [[0.0, 0.0]])
    with pytest.raises(ParameterError, match=r"computed for the 0-1 loss only"):
        risk_capacity(C1, [[0.0, 2.0], [1.0, 0.0]])
    assert risk_capacity(C1, 1.0 - np.eye(2)).value == pytest.approx(2.0)
    with pytest.raises(ChannelError, match=r"W has a single row"):
        risk_capacity([[0.5, 0.5]])
    with pytest.raises(ParameterError, match=r"tol must be a positive finite number"):
        g_capacity(C1, kind="additive", tol=0.0)
    with pytest.raises(ParameterError, match=r"time_limit must be > 0"):
        g_capacity(C1, kind="additive", time_limit=0.0)
    with pytest.raises(ParameterError, match=r"kind must be one of"):
        g_capacity(C1, kind="max")
    with pytest.raises(ParameterError, match=r"gain must be finite, got nan"):
        g_capacity(C1, [[1.0, float("nan")]], kind="additive")
    with pytest.raises(ChannelError, match=r"W is not row-stochastic"):
        risk_capacity([[0.5, 0.4], [0.5, 0.5]])


def test_result_round_trips_through_json_and_pandas() -> None:
    """The line for tests/test_architecture.py's producers, checked here."""
    for res in (g_capacity(C1), g_capacity(C1, kind="additive"), risk_capacity(np.eye(2))):
        assert isinstance(res, GainCapacityResult)
        d = res.to_dict()
        back = json.loads(json.dumps(d, allow_nan=True))
        assert back["status"] == res.status.value
        assert back["value"] == pytest.approx(res.value)
        assert back["guesses"] == res.guesses.tolist()
        assert back["kind"] == res.kind
        frame = res.to_frame()
        assert len(frame) == 1
        assert {"value", "lower", "upper", "status", "gap", "prior", "guesses"} <= set(frame)
        assert float(res) == res.value
        assert "GainCapacityResult(" in repr(res)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g_capacity(C1, kind="additive")  # a converged result does not warn


def test_column_scaling_and_masses_near_underflow() -> None:
    """``sup_π`` of the ratio is invariant under a positive scaling of G's columns (it reweights
    the prior, §9), down to a column of 5e-324; and the 0-1 risk of nearly disjoint rows is
    ``1 / Σ_y min(W_0y, W_1y)`` without cancellation (here ``1 / 8e-300``).

    Reweighting by 5e-324 against 0.3 puts a mass near 1.6e-323 on one secret: a subnormal
    with two significant bits, so no double prior attains the optimum to ``tol``; the bracket
    still holds, its ``lower`` is attained by the prior returned, and it says it is open."""
    W = np.array([[1 / 3] * 3] * 3 + [[0.4, 0.4, 0.2]])
    G = np.array([[0.0, 0.5, 1.0, 0.0], [0.2, 0.0, 0.0, 1.0]])
    base = g_capacity(W, G)
    for scale, closes in (([1.0, 1.0, 5e-324, 0.3], False), ([1e-300, 7.0, 1.0, 1e-200], True)):
        Gs = G * np.array(scale)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = g_capacity(W, Gs)
        assert abs(res.upper - base.upper) <= 2 * base.tol * base.upper
        assert res.lower <= base.lower * (1 + 1e-12)
        assert res.lower <= qif.g_leakage(res.prior, W, Gs) * (1 + 1e-12)
        assert (res.status is Status.CONVERGED) is closes
    near = np.array([[1.0, 3e-300, 3e-300], [2.5e-300, 1.0, 2.5e-300]])
    res = risk_capacity(near)
    assert res.lower <= 1 / 8e-300 * (1 + 1e-12)
    assert res.upper * (1 + 1e-12) >= 1 / 8e-300
    assert qif.risk_leakage([0.5, 0.5], near) == pytest.approx(1 / 8e-300, rel=1e-12)
    assert qif.posterior_bayes_risk([0.5, 0.5], near) == pytest.approx(4e-300, rel=1e-12)


def test_lower_is_attained_by_the_prior_returned() -> None:
    """``lower`` is a bound at ``prior`` itself, not at the solver's scaled point. With
    ``G = diag(1e-300, 1e300)`` the optimum ``(1.7``, from the Bayes capacity of the reweighted
    channel) needs a prior with a mass near ``1e-600``, which no double holds: the prior that can
    be returned only reaches 1, so the bracket must stay open (and warn) instead of claiming 1.7;
    with ``diag(1, 3)`` the returned prior attains the capacity ``(0.9·1 + 0.8·3)/(... )``-free
    closed form 1.7 (``Σ_y max_x W_xy g_x`` at ``π ∝ 1/g``), and its leakage is ``≥ lower``."""
    W = np.array([[0.9, 0.1], [0.2, 0.8]])
    with pytest.warns(ConvergenceWarning):
        res = g_capacity(W, np.diag([1e-300, 1e300]))
    assert res.lower <= qif.g_leakage(res.prior, W, np.diag([1e-300, 1e300])) * (1 + 1e-12)
    assert res.lower < 1.7 <= res.upper * (1 + 1e-12)
    res = g_capacity(W, np.diag([1.0, 3.0]))
    assert res.lower <= 1.7 <= res.upper
    assert qif.g_leakage(res.prior, W, np.diag([1.0, 3.0])) >= res.lower
