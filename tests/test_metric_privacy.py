"""Metric privacy (d-privacy): the level ε, the δ(ε) curve, and the metric-constrained LP.

Theorems and closed forms checked (expected values from the papers or from definitions written
here, never from the code):

* Ghosh et al. 2012: the truncated geometric mechanism is ε·|x − x'|-private, exactly.
* Randomised response on k symbols is ε-private for the discrete metric (d = 1 off the
  diagonal), exactly; binary randomised response at δ: ``E_γ = (e^ε − γ)/(1 + e^ε)``.
* Chatzikokolakis et al. 2013: for the path metric of a neighbour graph, d-privacy at ε is
  ε-DP under that graph (hypothesis property against :func:`dpcap.dp_epsilon`).
* Scaling: the level under ``c·d`` is the level under ``d`` divided by ``c``.
* Definitions by brute force over every pair and output, and the stated floating-point bound
  against 50-digit mpmath logarithms of the stored matrix.
* The LP under a metric: on the line metric it is the LP of ``neighbors="line"``, on the
  discrete metric that of ``neighbors="all"`` (whose optimum under 0-1 loss and a uniform prior
  is randomised response's ``(k − 1)/(k − 1 + e^ε)``); on the Euclidean grid its optimum
  agrees with an independent all-pairs LP, and its mechanism is d-private over *all* pairs.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.optimize import linprog

import dpcap
from dpcap import neighbors
from dpcap.errors import ParameterError, ProblemTooLargeError
from dpcap.mechanisms import randomized_response, truncated_geometric
from dpcap.metric_privacy import grid_metric, metric_delta, metric_epsilon, metric_matrix
from dpcap.privacy import dp_delta, dp_epsilon
from dpcap.solvers.metric_pairs import essential_pairs
from dpcap.testing import channels
from dpcap.tradeoffs.mechanism_design import optimal_mechanism

FloatArray = NDArray[np.float64]


def line(n: int) -> FloatArray:
    x = np.arange(n, dtype=np.float64)
    return np.abs(np.subtract.outer(x, x))


def brute_epsilon(W: FloatArray, D: FloatArray) -> float:
    best = 0.0
    for x, xp in itertools.permutations(range(W.shape[0]), 2):
        if math.isinf(D[x, xp]):
            continue
        for y in range(W.shape[1]):
            a, b = W[x, y], W[xp, y]
            if a == 0:
                continue
            if b == 0 or (D[x, xp] == 0 and a != b):
                return math.inf
            if D[x, xp] > 0:
                best = max(best, math.log(a / b) / D[x, xp])
    return best


def brute_delta(W: FloatArray, D: FloatArray, eps: float) -> float:
    best = 0.0
    for x, xp in itertools.permutations(range(W.shape[0]), 2):
        if math.isinf(D[x, xp]):
            continue
        gamma = 1.0 if D[x, xp] == 0 else math.exp(eps * D[x, xp])
        best = max(best, sum(max(0.0, a - gamma * b) for a, b in zip(W[x], W[xp], strict=True)))
    return best


def euclidean(points: FloatArray) -> FloatArray:
    diff = points[:, None, :] - points[None, :, :]
    return np.hypot(diff[..., 0], diff[..., 1])


# --------------------------------------------------------------------------- the level ε


@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_truncated_geometric_is_exactly_eps_line_private(eps: float) -> None:
    W = truncated_geometric(6, eps)
    assert metric_epsilon(W, line(7)) == pytest.approx(eps, rel=1e-12)
    assert metric_epsilon(W, 2.5 * line(7)) == pytest.approx(eps / 2.5, rel=1e-12)
    assert dp_epsilon(W, metric=line(7)) == metric_epsilon(W, line(7))


@pytest.mark.parametrize("k", [2, 3, 6])
def test_randomized_response_under_the_discrete_metric(k: int) -> None:
    W = randomized_response(k, 1.3)
    discrete = 1.0 - np.eye(k)
    assert metric_epsilon(W, discrete) == pytest.approx(1.3, rel=1e-12)
    assert metric_epsilon(W, discrete) == pytest.approx(dp_epsilon(W, neighbors="all"), rel=1e-15)


def test_log_matrix_is_used_where_entries_underflow() -> None:
    W = truncated_geometric(20, 50.0)  # e^{-1000}: held as 0, its log kept
    assert W.log_matrix is not None
    assert metric_epsilon(W, line(21)) == pytest.approx(50.0, rel=1e-12)
    assert metric_epsilon(np.asarray(W.matrix), line(21)) == math.inf  # a plain matrix: zeros


def test_special_distances() -> None:
    W = np.array([[0.5, 0.5], [0.5, 0.5], [0.9, 0.1]])
    pseudo = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], dtype=float)
    assert metric_epsilon(W, pseudo) == pytest.approx(math.log(0.5 / 0.1))
    pseudo[0, 2] = pseudo[2, 0] = pseudo[1, 2] = pseudo[2, 1] = 0.0  # 0 between different rows
    assert metric_epsilon(W, pseudo) == math.inf
    far = np.array([[0, math.inf], [math.inf, 0]])
    assert metric_epsilon(np.eye(2), far) == 0.0  # an unconstrained pair
    assert metric_epsilon(np.eye(2), [[0, 1], [1, 0]]) == math.inf
    assert metric_epsilon([[1.0, 0.0]], [[0.0]]) == 0.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(channels(max_inputs=5, max_outputs=5, degenerate=True), st.integers(0, 2**31))
def test_epsilon_and_delta_match_the_definitions(W: FloatArray, seed: int) -> None:
    rng = np.random.default_rng(seed)
    D = euclidean(rng.uniform(0, 3, size=(W.shape[0], 2)))
    W = W / W.sum(axis=1, keepdims=True)
    expected = brute_epsilon(W, D)
    got = metric_epsilon(W, D)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-13) or got == expected
    for eps in (0.0, 0.4, 2.0):
        assert metric_delta(W, eps, D) == pytest.approx(brute_delta(W, D, eps), abs=1e-13)
    scaled = metric_epsilon(W, 3.0 * D)
    assert scaled == pytest.approx(got / 3.0, rel=1e-12) or scaled == got == math.inf


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(channels(min_inputs=3, max_inputs=6, max_outputs=4, allow_zeros=False))
def test_path_metric_of_the_line_is_line_dp(W: FloatArray) -> None:
    """Chatzikokolakis et al. 2013: ε-DP under a graph is ε·(path length)-privacy."""
    n = W.shape[0]
    ch = dpcap.Channel(W, neighbors="line")
    assert metric_epsilon(ch, line(n)) == pytest.approx(dp_epsilon(ch), rel=1e-12)


def test_computed_level_is_within_the_stated_bound() -> None:
    rng = np.random.default_rng(7)
    W = rng.dirichlet(np.ones(6), size=5)
    D = euclidean(rng.uniform(0, 2, size=(5, 2)))
    mpmath.mp.dps = 50
    exact = max(
        abs(mpmath.log(mpmath.mpf(W[x, y])) - mpmath.log(mpmath.mpf(W[xp, y])))
        / mpmath.mpf(D[x, xp])
        for x, xp in itertools.combinations(range(5), 2)
        for y in range(6)
    )
    got = metric_epsilon(W, D)
    u = 2.0**-53
    largest = float(np.max(np.abs(np.log(W))))
    bound = (16 * u * largest + u * largest) / float(D[D > 0].min()) + u * got
    assert abs(got - float(exact)) <= bound


def test_delta_closed_form_for_binary_randomized_response() -> None:
    eps_rr = 1.2
    W = randomized_response(2, eps_rr)
    D = [[0.0, 2.0], [2.0, 0.0]]
    for eps in (0.0, 0.2, 0.5):
        gamma = math.exp(2 * eps)
        expected = (math.exp(eps_rr) - gamma) / (1 + math.exp(eps_rr))
        assert metric_delta(W, eps, D) == pytest.approx(expected, rel=1e-12)
        assert dp_delta(W, eps, metric=D) == metric_delta(W, eps, D)
    assert metric_delta(W, 0.6, D) == pytest.approx(0.0, abs=1e-15)
    assert metric_delta(np.eye(2), math.inf, D) == 1.0  # an output impossible under the other


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("metric", "match"),
    [
        ([[0, 1], [1, 0], [1, 1]], r"metric must be a 2 x 2 matrix"),
        ([[0, math.nan], [1, 0]], r"metric contains NaN at index \(0, 1\)"),
        ([[0, -1], [-1, 0]], r"metric has a negative distance -1.0"),
        ([[1, 1], [1, 0]], r"metric must be 0 on the diagonal, got 1.0 at 0"),
        ([[0, 1], [2, 0]], r"metric must be symmetric, got d\[0, 1\] = 1.0"),
        ("abc", r"metric must be a real number .* got the string 'abc'"),
        ([[0, 1j], [1j, 0]], r"metric must be real, got complex"),
    ],
)
def test_invalid_metrics_are_named(metric: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        metric_epsilon(np.eye(2), metric)


def test_triangle_inequality_and_callables() -> None:
    squared = line(3) ** 2
    with pytest.raises(ParameterError, match=r"violates the triangle inequality: d\[0, 2\]"):
        metric_matrix(squared, 3)
    assert np.array_equal(metric_matrix(lambda i, j: abs(i - j), 3), line(3))
    with pytest.raises(
        ParameterError, match=r"metric\(0, 0\) must return one number, got \[1.0, 2.0\]"
    ):
        metric_matrix(lambda i, j: [1.0, 2.0], 2)
    with pytest.raises(ParameterError, match=r"either neighbors= or metric="):
        dp_epsilon(np.eye(2), neighbors="all", metric=line(2))
    with pytest.raises(ParameterError, match=r"eps must be >= 0"):
        metric_delta(np.eye(2), -1.0, line(2))


def test_quadratic_work_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(neighbors, "MAX_PAIR_WORK", 10)
    with pytest.raises(
        ProblemTooLargeError, match=r"compare 6 distinct pairs of rows over 4 .*MAX_PAIR_WORK"
    ):
        metric_epsilon(randomized_response(4, 1.0), 1 - np.eye(4))


# --------------------------------------------------------------------------- the LP


def test_essential_pairs_are_the_graph_edges() -> None:
    I, J = essential_pairs(line(5))
    assert list(zip(I.tolist(), J.tolist(), strict=True)) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    I, J = essential_pairs(grid_metric((3, 3), norm="manhattan"))
    assert len(I) == 12  # the 4-neighbour grid
    I, J = essential_pairs(1 - np.eye(4))
    assert len(I) == 6  # nothing lies between two points of the discrete metric


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("solver", ["CLARABEL", "HIGHS"])
def test_line_metric_lp_is_the_line_dp_lp(eps: float, solver: str) -> None:
    n = 6
    prior = np.full(n, 1 / n)
    loss = line(n)
    by_graph = optimal_mechanism(prior, loss, eps, neighbors="line", solver=solver)
    by_metric = optimal_mechanism(prior, loss, eps, metric=line(n), solver=solver)
    assert by_metric.lower <= by_graph.upper
    assert by_graph.lower <= by_metric.upper
    assert by_metric.upper - by_metric.lower <= 1e-9
    halved = optimal_mechanism(prior, loss, eps / 2, metric=2 * line(n), solver=solver)
    assert halved.lower <= by_graph.upper
    assert by_graph.lower <= halved.upper
    assert metric_epsilon(by_metric.mechanism, line(n)) <= eps * (1 + 1e-12)


@pytest.mark.parametrize("k", [3, 5])
def test_discrete_metric_lp_is_local_dp(k: int) -> None:
    eps = 1.0
    prior, loss = np.full(k, 1 / k), 1 - np.eye(k)
    res = optimal_mechanism(prior, loss, eps, metric=1 - np.eye(k))
    truth = (k - 1) / (k - 1 + math.exp(eps))  # randomised response is optimal
    assert res.lower - 1e-15 <= truth <= res.upper + 1e-15
    assert res.upper - res.lower <= 1e-9


def all_pairs_lp(prior: FloatArray, loss: FloatArray, D: FloatArray, eps: float) -> float:
    """``d*(ε)`` with every pair constrained, written from the definition (HiGHS)."""
    n, k = loss.shape
    rows = []
    for x, xp in itertools.permutations(range(n), 2):
        for y in range(k):
            row = np.zeros(n * k)
            row[x * k + y], row[xp * k + y] = 1.0, -math.exp(eps * D[x, xp])
            rows.append(row)
    equal = np.kron(np.eye(n), np.ones(k))
    res = linprog(
        (prior[:, None] * loss).ravel(),
        A_ub=np.array(rows),
        b_ub=np.zeros(len(rows)),
        A_eq=equal,
        b_eq=np.ones(n),
        bounds=(0, None),
        method="highs",
    )
    return float(res.fun)


@pytest.mark.parametrize("eps", [0.5, 1.5])
def test_euclidean_grid_lp_matches_the_all_pairs_lp(eps: float) -> None:
    D = grid_metric((3, 3))
    prior = np.random.default_rng(3).dirichlet(np.ones(9))
    res = optimal_mechanism(prior, D, eps, metric=D)
    truth = all_pairs_lp(prior, D, D, eps)
    assert res.lower - 1e-8 <= truth <= res.upper + 1e-8
    assert res.upper - res.lower <= 1e-8
    assert metric_epsilon(res.mechanism, D) <= eps  # every pair, not only the kept ones
    assert res.dp_level == pytest.approx(metric_epsilon(res.mechanism, D), rel=1e-12)


def test_lp_metric_arguments_are_checked() -> None:
    with pytest.raises(ParameterError, match=r"either neighbors= or metric="):
        optimal_mechanism([0.5, 0.5], 1 - np.eye(2), 1.0, neighbors="all", metric=line(2))
    pseudo = np.zeros((2, 2))
    with pytest.raises(ParameterError, match=r"got d\[0, 1\] = 0 \(a pseudo-metric\)"):
        optimal_mechanism([0.5, 0.5], 1 - np.eye(2), 1.0, metric=pseudo)
