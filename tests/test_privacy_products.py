"""KL, Rényi and TV DP over many pairs by matrix products, and δ(ε) over all pairs in place.

The theorems checked (``dpcap.solvers.gram``'s docstring states the bounds):

* **the bound holds**: the interval ``[lo, hi]`` of every ordered pair holds the value the pair
  kernel computes for it (``divergence.renyi``, ``divergence.kl``, ``divergence.tv``,
  ``pairwise.renyi_logs``), on random, nearly identical, zero-containing, tiny and
  underflowing rows, at orders 0, 1/2, 1, 1.01, 2 and 10 and for TV;
* **the bound is not vacuous**: on rows that differ, the intervals are a few ulps of the value
  wide, so the screen leaves one pair or a few;
* **bit for bit**: the kernel's maximum over the pairs the screen leaves equals its maximum
  over every pair (all pairs, and listed pairs), and ``kl_dp``/``renyi_dp``/``tv_dp`` through
  the screen equal the pairwise path of old;
* **δ(ε) in place**: :func:`dpcap.solvers.hockey.all_pairs_curve` equals
  :func:`~dpcap.solvers.hockey.hockey_curve` over the listed pairs ``i < j``, bit for bit, with
  zeros, ties, log matrices, short chunks and every split between rows read in place and rows
  gathered; and both equal a direct broadcast.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap.channel import as_mechanism
from dpcap.mechanisms import randomized_response
from dpcap.privacy import _pairs as pairs_module
from dpcap.solvers import divergence, gram, hockey, pairwise
from dpcap.testing import channels

ORDERS: list[Any] = [1.0, 2.0, 0.5, 0.0, 1.01, 10.0, gram.TV]


def triu(n: int) -> tuple[np.ndarray, np.ndarray]:
    I, J = np.triu_indices(n, k=1)
    return I.astype(np.int64), J.astype(np.int64)


def kernel(W: np.ndarray, order: Any, x: int, y: int, logW: np.ndarray | None = None) -> float:
    """The pair kernel's value of the ordered pair ``(x, y)``."""
    if order == gram.TV:
        return float(divergence.tv(W[x], W[y]))
    if logW is not None:
        return float(pairwise.renyi_logs(W[x][None], logW[x][None], logW[y][None], order)[0])
    return float(divergence.renyi(W[x][None], W[y][None], order)[0])


def worst(W: np.ndarray, order: Any, I: Any, J: Any, logW: np.ndarray | None = None) -> float:
    if order == gram.TV:
        return pairwise.max_tv(W, I, J)[0]
    return pairwise.max_divergence(W, I, J, float(order), logW)[0]


def assert_bound_and_screen(W: np.ndarray, order: Any, logW: np.ndarray | None = None) -> None:
    if not gram.supports(W, order, logW):
        return
    n = W.shape[0]
    lo, hi = gram.intervals(W, order, logW)
    for x in range(n):
        for y in range(n):
            if x != y:
                value = kernel(W, order, x, y, logW)
                assert lo[x, y] <= value <= hi[x, y], (order, x, y, lo[x, y], value, hi[x, y])
    I, J = triu(n)
    every = worst(W, order, I, J, logW)
    left = gram.candidates(W, order, None, logW, cap=n * n)
    assert worst(W, order, left.I, left.J, logW) == every  # bit for bit
    listed = gram.candidates(W, order, (J, I), logW, cap=n * n)  # either order of a pair
    assert worst(W, order, listed.I, listed.J, logW) == every


# --------------------------------------------------------------------------- the bound holds


@given(channels(max_inputs=7, max_outputs=9, degenerate=True), st.sampled_from(ORDERS))
@settings(max_examples=150, deadline=None)
def test_the_intervals_hold_the_kernel(W: np.ndarray, order: Any) -> None:
    assert_bound_and_screen(as_mechanism(W).matrix, order)


@given(channels(max_inputs=6, max_outputs=8, underflow=True), st.sampled_from(ORDERS))
@settings(max_examples=100, deadline=None)
def test_the_intervals_hold_with_subnormal_entries(W: np.ndarray, order: Any) -> None:
    assert_bound_and_screen(W, order)


@given(st.integers(2, 8), st.integers(2, 40), st.sampled_from([1e-15, 1e-12, 1e-9, 1e-6]))
@settings(max_examples=60, deadline=None)
def test_nearly_identical_rows(n: int, k: int, scale: float) -> None:
    """Rows equal to 1e-15…1e-6: the product form cancels; the screen keeps the pairs and the
    cancellation-free kernel decides."""
    rng = np.random.default_rng(n * 1000 + k)
    W = np.tile(rng.dirichlet(np.ones(k)), (n, 1)) * (1.0 + scale * rng.standard_normal((n, k)))
    W = as_mechanism(np.abs(W) / np.abs(W).sum(axis=1, keepdims=True)).matrix
    for order in ORDERS:
        assert_bound_and_screen(W, order)


@pytest.mark.parametrize("seed", range(4))
def test_zeros_escapes_and_disjoint_supports(seed: int) -> None:
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.full(12, 0.4), size=10)
    W[::2, :4] = 0.0  # escapes at α ≥ 1
    W[1, 4:] = 0.0  # a row whose support misses the others' (α < 1: disjoint from some)
    W[1, :4] = [0.1, 0.2, 0.3, 0.4]
    W[3] = 0.0
    W[3, 11] = 1.0
    W = as_mechanism(W / W.sum(axis=1, keepdims=True)).matrix
    for order in ORDERS:
        assert_bound_and_screen(W, order)
    assert dpcap.kl_dp(W) == math.inf
    assert dpcap.renyi_dp(W, 0.5) == math.inf


def test_log_matrix_kl() -> None:
    """Randomized response at ε = 800: the logs are the log matrix, the masses underflow."""
    M = randomized_response(6, 800.0)
    assert M.log_matrix is not None
    assert gram.supports(M.matrix, 1.0, M.log_matrix)
    assert not gram.supports(M.matrix, 2.0, M.log_matrix)  # Rényi with logs: the pair pass
    assert_bound_and_screen(M.matrix, 1.0, M.log_matrix)


# --------------------------------------------------------------------------- the bound is tight


@pytest.mark.parametrize("order", ORDERS)
def test_the_screen_leaves_few_pairs_on_rows_that_differ(order: Any) -> None:
    W = np.random.default_rng(5).dirichlet(np.ones(60), size=80)
    lo, hi = gram.intervals(W, order)
    off = ~np.eye(80, dtype=bool)
    width = (hi - lo)[off]
    assert np.all(np.isfinite(width))
    if order != 0.0:  # D_0 of full supports is a tie at ~0 for every pair
        mid = np.abs(hi + lo)[off] / 2
        assert np.all(width <= 1e-9 * np.maximum(mid, 1e-3)), np.max(width / mid)
        assert gram.candidates(W, order, cap=10**6).left <= 3


def test_the_cap_and_a_second_pass() -> None:
    """Ties everywhere: past the cap no pair is returned, only a count above it."""
    W = randomized_response(40, 1.0).matrix
    found = gram.candidates(W, 1.0, cap=10)
    assert found.left > 10
    assert len(found.I) == 0
    every = gram.candidates(W, 1.0, cap=10**6)
    assert every.left == 40 * 39 // 2


# --------------------------------------------------------------------------- through the API


@pytest.fixture
def screened(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small problems take the screen too (the background structure is still tried first)."""
    monkeypatch.setattr(pairs_module, "PLAIN_WORK", 0)


@given(channels(min_inputs=3, max_inputs=9, max_outputs=7, degenerate=True))
@settings(max_examples=60, deadline=None)
def test_the_api_equals_the_pairwise_path(W: np.ndarray) -> None:
    M = as_mechanism(W).matrix
    I, J = triu(M.shape[0])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pairs_module, "PLAIN_WORK", 0)
        got = [dpcap.kl_dp(W), dpcap.renyi_dp(W, 2.0), dpcap.renyi_dp(W, 0.5), dpcap.tv_dp(W)]
    reps = np.unique(M, axis=0)  # identical rows merged: the same maximum
    I, J = triu(len(reps))
    want = [worst(reps, 1.0, I, J), worst(reps, 2.0, I, J), worst(reps, 0.5, I, J)]
    want.append(worst(reps, gram.TV, I, J))
    assert got == want


def test_hamming_pairs_of_a_database_are_screened(screened: None) -> None:
    """Listed pairs (Hamming on a 6 × 6 × 6 domain): the screen over the pairs they cover."""
    rng = np.random.default_rng(12)
    W = rng.dirichlet(np.ones(30), size=216)
    M = dpcap.Mechanism(W, shape=(6, 6, 6))
    I, J = dpcap.neighbor_pairs((6, 6, 6))
    I, J = np.asarray(I, dtype=np.int64), np.asarray(J, dtype=np.int64)
    M2 = M.matrix
    assert dpcap.kl_dp(M) == worst(M2, 1.0, I, J)
    assert dpcap.renyi_dp(M, 3.0) == worst(M2, 3.0, I, J)
    assert dpcap.tv_dp(M) == worst(M2, gram.TV, I, J)


# --------------------------------------------------------------------------- δ(ε) in place


def direct(W: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """δ(ε) over every ordered pair of distinct rows by broadcasting, one ε at a time."""
    n = len(W)
    P, Q = np.repeat(W, n, axis=0), np.tile(W, (n, 1))
    out = np.empty(len(eps))
    for k, e in enumerate(eps):
        excess = divergence.hockey_stick(P, Q, np.asarray(math.exp(e))).reshape(n, n)
        np.fill_diagonal(excess, 0.0)
        out[k] = excess.max()
    return out


@given(
    channels(max_inputs=9, max_outputs=7, degenerate=True),
    st.sampled_from([1, 2, 4, 1000]),
    st.sampled_from([1, 3, 2**16]),
    st.booleans(),
)
@settings(max_examples=120, deadline=None)
def test_in_place_equals_the_listed_pairs(
    W: np.ndarray, fraction: int, per_chunk: int, logs: bool
) -> None:
    W = as_mechanism(W).matrix  # validated: no -0.0
    eps = np.array([0.0, 0.1, 0.5, 1.0, 3.0, 40.0, 800.0, math.inf])
    L = np.log(np.where(W > 0, W, 1.0)) if logs else None
    if L is not None:
        L[W == 0] = -np.inf
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hockey, "IN_PLACE_FRACTION", fraction)
        patch.setattr(pairwise, "CHUNK_ELEMENTS", per_chunk * 16)
        got = hockey.all_pairs_curve(W, eps, L)
        want = hockey.hockey_curve(W, *triu(len(W)), eps, L)
    np.testing.assert_array_equal(got, want)
    if L is None:
        np.testing.assert_allclose(got[:6], direct(W, eps[:6]), rtol=0, atol=1e-15)


def test_in_place_curve_of_the_benchmark_channel() -> None:
    W = np.random.default_rng(20261123).dirichlet(np.ones(64), size=64)
    eps = np.linspace(0.0, 4.0, 21)
    got = dpcap.dp_delta_curve(W, eps, neighbors="all")
    np.testing.assert_allclose(got, direct(as_mechanism(W).matrix, eps), rtol=0, atol=1e-15)
    assert hockey.all_pairs_curve(W[:1], eps).tolist() == [0.0] * 21
