"""The multi-order kernels agree with the one-order kernels they replace in hot loops.

* ``pairwise.max_divergences`` (all orders of a Rényi profile in one pass over the pairs) gives,
  at every order, the value of ``pairwise.max_divergence`` at that order, including the exact
  branches α = 0, 1, ∞, orders next to 1, disjoint supports (∞) and rows with zeros; its
  Gram-matrix screen (channels without zeros) gives the pair pass's diameters, ties included
  (a circulant channel against its closed form).
* ``divergence.logsumexp`` equals ``log Σ exp`` computed in extended precision (mpmath), and is
  −∞ on a row of −∞.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcap.solvers import divergence, pairwise

ORDERS = np.array([0.0, 0.05, 0.5, 0.999999, 1.0, 1.000001, 2.0, 10.0, 50.0, math.inf])


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    I, J = np.triu_indices(n, k=1)
    return I.astype(np.int64), J.astype(np.int64)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("concentration", [0.05, 1.0])
def test_every_order_matches_the_one_order_kernel(seed: int, concentration: float) -> None:
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.full(12, concentration), size=9)
    W[W < 1e-3] = 0.0  # zeros: escapes (∞ above 1) and partial supports
    W /= W.sum(axis=1, keepdims=True)
    I, J = _pairs(len(W))
    together = pairwise.max_divergences(W, I, J, ORDERS)
    for k, alpha in enumerate(ORDERS):
        one = pairwise.max_divergence(W, I, J, float(alpha))[0]
        if math.isinf(one):
            assert math.isinf(together[k])
        else:
            assert together[k] == pytest.approx(one, rel=1e-13, abs=1e-15)


def test_disjoint_rows_have_infinite_diameter_at_every_order() -> None:
    W = np.array([[1.0, 0.0], [0.0, 1.0]])
    I, J = _pairs(2)
    values = pairwise.max_divergences(W, I, J, ORDERS)
    assert np.isinf(values[ORDERS > 0]).all()
    assert values[0] == math.inf  # D_0 = −log Q(supp P) = −log 0


def test_bsc_diameter_is_the_closed_form() -> None:
    # D_α of Bernoulli(0.9) from Bernoulli(0.1): (1/(α−1)) log(0.9^α 0.1^{1−α} + 0.1^α 0.9^{1−α})
    W = np.array([[0.9, 0.1], [0.1, 0.9]])
    I, J = _pairs(2)
    alphas = np.array([0.5, 2.0, 3.0])
    expected = [
        math.log(0.9**a * 0.1 ** (1 - a) + 0.1**a * 0.9 ** (1 - a)) / (a - 1) for a in alphas
    ]
    np.testing.assert_allclose(pairwise.max_divergences(W, I, J, alphas), expected, rtol=1e-14)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-800, 800), st.just(-math.inf)), min_size=1, max_size=8))
def test_logsumexp_is_log_sum_exp(values: list[float]) -> None:
    x = np.array(values)
    got = float(divergence.logsumexp(x[None])[0])
    if np.isneginf(x).all():
        assert got == -math.inf
        return
    exact = float(mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(v)) for v in values)))
    assert got == pytest.approx(exact, rel=1e-14, abs=1e-13)


SCREEN_ORDERS = np.array([0.05, 0.3, 0.94, 1.06, 2.0, 7.5, 30.0, 200.0, math.inf, 0.0, 1.0])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("concentration", [0.3, 1.0, 20.0])
def test_gram_screen_gives_the_pair_pass_diameters(
    seed: int, concentration: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Channels without zeros take the Gram-matrix screen at the orders it can take (the others,
    α = 200 among them, and α ∈ {0, 1, ∞} go pair by pair): every diameter is the pair pass's
    to rounding, which is the one-order kernel's (the test above)."""
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.full(10, concentration), size=14)
    I, J = _pairs(len(W))
    fast = pairwise.max_divergences(W, I, J, SCREEN_ORDERS)
    screened = pairwise._gram_screen(
        W, np.log(W), I, J, SCREEN_ORDERS, np.isfinite(SCREEN_ORDERS) & (SCREEN_ORDERS > 0)
    )
    assert screened  # the screen did take orders
    monkeypatch.setattr(pairwise, "GRAM_ROWS", 0)
    plain = pairwise.max_divergences(W, I, J, SCREEN_ORDERS)
    np.testing.assert_allclose(fast, plain, rtol=1e-13, atol=1e-15)


def test_gram_screen_keeps_every_tied_pair() -> None:
    """A circulant channel: all pairs at the same cyclic distance have the same divergence, so
    the largest value is attained by many pairs; the screen keeps them all (ties sit within its
    margin) and the diameter is the closed form of the farthest shift."""
    base = np.array([0.5, 0.2, 0.1, 0.1, 0.05, 0.05])
    n = len(base)
    W = np.array([np.roll(base, x) for x in range(n)])
    I, J = _pairs(n)
    alphas = np.array([0.5, 2.0, 5.0])
    screened = pairwise._gram_screen(W, np.log(W), I, J, alphas, np.ones(3, dtype=bool))
    assert all(len(first) >= n for first, _ in screened.values())
    expected = [
        max(
            math.log(float(np.sum(base**a * np.roll(base, d) ** (1 - a)))) / (a - 1)
            for d in range(1, n)
        )
        for a in alphas
    ]
    np.testing.assert_allclose(pairwise.max_divergences(W, I, J, alphas), expected, rtol=1e-13)


def test_gram_screen_leaves_tied_pairs_to_the_pair_pass() -> None:
    """Randomized response: every ordered pair has the same divergence, so the screen hands no
    order on (it would have to evaluate all n(n − 1) pairs at once) and the pair pass gives
    the closed form ``(1/(α−1)) log(a^α b^{1−α} + b^α a^{1−α} + (k − 2) b)`` with
    ``a = e^ε/(e^ε + k − 1)``, ``b = 1/(e^ε + k − 1)``."""
    k, eps = 200, 1.0
    z = math.exp(eps) + k - 1
    a, b = math.exp(eps) / z, 1.0 / z
    W = np.full((k, k), b)
    np.fill_diagonal(W, a)
    I, J = _pairs(k)
    alphas = np.array([0.5, 2.0, 5.0])
    assert pairwise._gram_screen(W, np.log(W), I, J, alphas, np.ones(3, dtype=bool)) == {}
    expected = [
        math.log(a**t * b ** (1 - t) + b**t * a ** (1 - t) + (k - 2) * b) / (t - 1) for t in alphas
    ]
    np.testing.assert_allclose(pairwise.max_divergences(W, I, J, alphas), expected, rtol=1e-13)
