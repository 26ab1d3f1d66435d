"""Tests of dpcap.mechanisms: closed forms from the papers, computed here from first principles.

Every expected value is computed in this file (from the defining formula, with plain numpy, Python
floats or mpmath), never taken from the code under test. DP levels are the definition
``max_{pairs, y} log W[x, y] / W[x', y]`` evaluated directly on the matrix.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import mpmath  # type: ignore[import-untyped]
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpcap import mechanisms as mech
from dpcap.channel import Channel, Mechanism
from dpcap.errors import ChannelError, ParameterError, ProblemTooLargeError

# --------------------------------------------------------------------------- helpers


def max_log_ratio(W: np.ndarray, pairs: list[tuple[int, int]]) -> float:
    """The ε-DP level over unordered ``pairs`` (both orders): 0/0 ignored, p/0 = ∞."""
    level = 0.0
    for i, j in pairs:
        for a, b in ((i, j), (j, i)):
            pa, pb = W[a], W[b]
            if np.any((pa > 0) & (pb == 0)):
                return math.inf
            both = (pa > 0) & (pb > 0)
            if both.any():
                level = max(level, float(np.max(np.log(pa[both]) - np.log(pb[both]))))
    return level


def line_pairs(n: int) -> list[tuple[int, int]]:
    return [(x, x + 1) for x in range(n)]


def pairs_within(n: int, dist: int) -> list[tuple[int, int]]:
    return [(x, x2) for x in range(n + 1) for x2 in range(x + 1, min(n, x + dist) + 1)]


def all_pairs(k: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(k), 2))


def mutual_information(p: np.ndarray, W: np.ndarray) -> float:
    """``I(p, W)`` in nats, 0 log 0 = 0."""
    q = p @ W
    total = 0.0
    for x in range(W.shape[0]):
        pos = (W[x] > 0) & (p[x] > 0)
        total += float(p[x] * np.sum(W[x, pos] * np.log(W[x, pos] / q[pos])))
    return total


def check_stochastic(W: np.ndarray, shape: tuple[int, int]) -> None:
    assert W.shape == shape
    assert np.all(W >= 0)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- public surface


def test_all_exports_are_constructors() -> None:
    expected = {
        "basic_rappor",
        "binary_local_hashing",
        "binary_symmetric",
        "bounded_sum",
        "counting_query",
        "discrete_gaussian",
        "discrete_laplace",
        "erasure",
        "exponential",
        "from_function",
        "hadamard_response",
        "histogram",
        "local_hashing",
        "one_time_pad",
        "optimized_local_hashing",
        "optimized_unary_encoding",
        "per_entry",
        "planar_geometric",
        "planar_laplace",
        "poisson_subsample",
        "randomized_response",
        "revealing",
        "sample_without_replacement",
        "shared_sample",
        "staircase",
        "subset_selection",
        "symmetric_unary_encoding",
        "truncated_geometric",
        "unary_encoding",
    }
    assert set(mech.__all__) == expected
    assert all(callable(getattr(mech, name)) for name in expected)


@pytest.mark.parametrize(
    ("ch", "shape"),
    [
        (mech.randomized_response(4, 1.0), (4, 4)),
        (mech.binary_symmetric(0.1), (2, 2)),
        (mech.erasure(5, 0.3), (5, 6)),
        (mech.truncated_geometric(7, 0.5), (8, 8)),
        (mech.discrete_laplace(6, 1.0, sensitivity=2), (7, 7)),
        (mech.discrete_laplace(6, 1.0, truncation="renormalize"), (7, 7)),
        (mech.discrete_gaussian(5, 1.3), (6, 6)),
        (mech.discrete_gaussian(5, 1.3, truncation="renormalize"), (6, 6)),
        (mech.staircase(9, 1.2, sensitivity=3), (10, 10)),
        (mech.exponential(np.arange(12.0).reshape(3, 4), 1.0), (3, 4)),
    ],
)
def test_local_channels_are_stochastic(ch: Channel, shape: tuple[int, int]) -> None:
    assert isinstance(ch, Channel)
    check_stochastic(ch.matrix, shape)


# --------------------------------------------------------------------------- randomized response


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 4.0])
def test_randomized_response_entries_and_level(k: int, eps: float) -> None:
    W = mech.randomized_response(k, eps).matrix
    e = math.exp(eps)
    expected = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(expected, e / (e + k - 1))
    np.testing.assert_allclose(W, expected, rtol=1e-14, atol=0)
    assert max_log_ratio(W, all_pairs(k)) == pytest.approx(eps, abs=1e-12)


def test_randomized_response_capacity_closed_form() -> None:
    # A symmetric channel: the uniform prior is optimal, C = log k + p log p + (k-1) q log q.
    k, eps = 5, 0.7
    W = mech.randomized_response(k, eps).matrix
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    q = 1.0 / (math.exp(eps) + k - 1)
    closed = math.log(k) + p * math.log(p) + (k - 1) * q * math.log(q)
    assert mutual_information(np.full(k, 1.0 / k), W) == pytest.approx(closed, rel=1e-12)


def test_randomized_response_extremes() -> None:
    np.testing.assert_array_equal(mech.randomized_response(3, math.inf).matrix, np.eye(3))
    W = mech.randomized_response(3, 1000.0).matrix  # e^1000 would overflow
    np.testing.assert_allclose(W, np.eye(3), rtol=0, atol=1e-300)
    np.testing.assert_allclose(mech.randomized_response(4, 0.0).matrix, 0.25, rtol=1e-15)


# --------------------------------------------------------------------------- BSC and erasure


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_binary_symmetric(p: float) -> None:
    W = mech.binary_symmetric(p).matrix
    np.testing.assert_array_equal(W, [[1 - p, p], [p, 1 - p]])
    if 0 < p < 1:
        expected = abs(math.log((1 - p) / p))
        assert max_log_ratio(W, [(0, 1)]) == pytest.approx(expected, abs=1e-14)
        h = -p * math.log(p) - (1 - p) * math.log(1 - p)
        assert mutual_information(np.array([0.5, 0.5]), W) == pytest.approx(
            math.log(2) - h, abs=1e-14
        )
    else:
        assert max_log_ratio(W, [(0, 1)]) == math.inf


@pytest.mark.parametrize(("n", "delta"), [(1, 0.4), (2, 0.3), (6, 0.25), (10, 1.0)])
def test_erasure_structure_and_capacity(n: int, delta: float) -> None:
    W = mech.erasure(n, delta).matrix
    check_stochastic(W, (n, n + 1))
    for x in range(n):
        expected = np.zeros(n + 1)
        expected[0] = 1 - delta
        expected[x + 1] += delta
        np.testing.assert_array_equal(W[x], expected)
    # Cuff & Yu eq. (37)-(38): the uniform prior gives I = δ log N.
    assert mutual_information(np.full(n, 1.0 / n), W) == pytest.approx(
        delta * math.log(n), abs=1e-14
    )
    if n >= 2:
        # total variation between any two rows is δ; the ε level is infinite
        assert 0.5 * np.abs(W[0] - W[1]).sum() == pytest.approx(delta, abs=1e-15)
        assert max_log_ratio(W, all_pairs(n)) == math.inf


# --------------------------------------------------------------------------- truncated geometric


def geometric_formula(n: int, eps: float) -> np.ndarray:
    """Ghosh–Roughgarden–Sundararajan, entry by entry in Python floats."""
    a = math.exp(-eps)
    W = np.empty((n + 1, n + 1))
    for x in range(n + 1):
        for y in range(n + 1):
            if y == 0:
                W[x, y] = a**x / (1 + a)
            elif y == n:
                W[x, y] = a ** (n - x) / (1 + a)
            else:
                W[x, y] = (1 - a) / (1 + a) * a ** abs(x - y)
    return W


@pytest.mark.parametrize("n", [1, 2, 5, 12])
@pytest.mark.parametrize("eps", [0.05, 0.5, 1.0, 3.0])
def test_truncated_geometric_entries_and_exact_level(n: int, eps: float) -> None:
    W = mech.truncated_geometric(n, eps).matrix
    np.testing.assert_allclose(W, geometric_formula(n, eps), rtol=1e-12, atol=0)
    assert max_log_ratio(W, line_pairs(n)) == pytest.approx(eps, rel=1e-11)
    # distance d: exactly d·ε; all pairs: n·ε
    assert max_log_ratio(W, [(0, n)]) == pytest.approx(n * eps, rel=1e-11)


def test_truncated_geometric_large_n_small_eps() -> None:
    n, eps = 1000, 0.1
    W = mech.truncated_geometric(n, eps).matrix
    check_stochastic(W, (n + 1, n + 1))
    assert np.all(W > 0)
    # log-domain comparison with the formula (entries down to e^{-100})
    x = np.arange(n + 1)[:, None]
    y = np.arange(n + 1)[None, :]
    log_expected = np.log(np.tanh(eps / 2)) - eps * np.abs(x - y)
    log_expected[:, :1] = -eps * x - np.log1p(math.exp(-eps))
    log_expected[:, -1:] = -eps * (n - x) - np.log1p(math.exp(-eps))
    np.testing.assert_allclose(np.log(W), log_expected, rtol=0, atol=1e-10)
    # exact ε on adjacent rows, vectorised
    ratios = np.abs(np.log(W[1:]) - np.log(W[:-1]))
    assert float(ratios.max()) == pytest.approx(eps, rel=1e-9)


def test_truncated_geometric_eps_zero_and_inf() -> None:
    W0 = mech.truncated_geometric(4, 0.0).matrix
    expected = np.zeros((5, 5))
    expected[:, 0] = expected[:, -1] = 0.5
    np.testing.assert_array_equal(W0, expected)
    np.testing.assert_array_equal(mech.truncated_geometric(4, math.inf).matrix, np.eye(5))
    # tiny ε keeps relative accuracy of the interior: (1-a)/(1+a) ≈ ε/2
    W = mech.truncated_geometric(3, 1e-12).matrix
    assert W[1, 1] == pytest.approx(0.5e-12, rel=1e-9)


# --------------------------------------------------------------------------- discrete Laplace


@pytest.mark.parametrize("n", [1, 4, 9])
@pytest.mark.parametrize("eps", [0.0, 0.3, 2.0, math.inf])
def test_discrete_laplace_clamp_is_truncated_geometric(n: int, eps: float) -> None:
    np.testing.assert_allclose(
        mech.discrete_laplace(n, eps).matrix,
        mech.truncated_geometric(n, eps).matrix,
        rtol=1e-15,
        atol=0,
    )
    np.testing.assert_allclose(
        mech.discrete_laplace(n, eps, sensitivity=3).matrix,
        geometric_formula(n, eps / 3) if math.isfinite(eps) else np.eye(n + 1),
        rtol=1e-12,
        atol=0,
    )


@pytest.mark.parametrize(("n", "eps", "sens"), [(6, 1.5, 3), (10, 0.8, 2), (4, 2.0, 4)])
def test_discrete_laplace_clamp_levels(n: int, eps: float, sens: int) -> None:
    W = mech.discrete_laplace(n, eps, sensitivity=sens).matrix
    assert max_log_ratio(W, line_pairs(n)) == pytest.approx(eps / sens, rel=1e-11)
    assert max_log_ratio(W, pairs_within(n, sens)) == pytest.approx(eps, rel=1e-11)


def renormalized_laplace_level(n: int, step: float) -> float:
    """The closed form of the docstring: ε' + log(1 + (1 − a)(a − a^n)/(1 − a^{n+1}))."""
    a = math.exp(-step)
    return step + math.log1p((1 - a) * (a - a**n) / (1 - a ** (n + 1)))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 25),
    eps=st.floats(0.01, 6.0),
    sens=st.integers(1, 4),
)
def test_discrete_laplace_renormalize_level(n: int, eps: float, sens: int) -> None:
    W = mech.discrete_laplace(n, eps, sensitivity=sens, truncation="renormalize").matrix
    # the matrix is the restricted noise, renormalised row by row
    a = math.exp(-eps / sens)
    d = np.abs(np.subtract.outer(np.arange(n + 1), np.arange(n + 1)))
    expected = a**d / (a**d).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(W, expected, rtol=1e-12, atol=0)
    level = max_log_ratio(W, line_pairs(n))
    step = eps / sens
    assert level == pytest.approx(renormalized_laplace_level(n, step), rel=1e-10, abs=1e-13)
    # at most double, and never more than log(5/4) above the clamped level
    assert level <= 2 * step + 1e-12
    assert level <= step + math.log(1.25) + 1e-12
    assert level >= step - 1e-12


def test_discrete_laplace_renormalize_is_worse_than_clamp_for_n_ge_2() -> None:
    n, eps = 8, 1.0
    clamp = max_log_ratio(mech.discrete_laplace(n, eps).matrix, line_pairs(n))
    renorm = max_log_ratio(
        mech.discrete_laplace(n, eps, truncation="renormalize").matrix, line_pairs(n)
    )
    assert renorm > clamp + 0.1


# --------------------------------------------------------------------------- discrete Gaussian


def gaussian_reference(n: int, sigma: float) -> tuple[list[mpmath.mpf], mpmath.mpf]:
    """Tails T(k) = Σ_{z≥k} e^{−z²/(2σ²)} for k = 0..n and S = Σ_ℤ, by mpmath (50 digits)."""
    with mpmath.workdps(50):
        s2 = 2 * mpmath.mpf(sigma) ** 2
        total = mpmath.jtheta(3, 0, mpmath.exp(-1 / s2))  # Σ_z q^{z²}, q = e^{−1/(2σ²)}
        top = n + 40 * math.ceil(sigma) + 40  # the terms beyond are below e^{−800} relative
        f = [mpmath.exp(-(mpmath.mpf(z) ** 2) / s2) for z in range(top)]
        tails = [mpmath.fsum(f[k:]) for k in range(n + 1)]
        assert abs(2 * tails[0] - 1 - total) <= mpmath.mpf(10) ** -40 * total
        return tails, total


@pytest.mark.parametrize(("n", "sigma"), [(1, 0.8), (3, 1.0), (6, 0.7), (8, 2.5), (30, 1.0)])
def test_discrete_gaussian_clamp_matches_high_precision(n: int, sigma: float) -> None:
    W = mech.discrete_gaussian(n, sigma).matrix
    tails, total = gaussian_reference(n, sigma)
    expected = np.empty((n + 1, n + 1))
    for x in range(n + 1):
        for y in range(n + 1):
            if y == 0:
                v = tails[x] / total
            elif y == n:
                v = tails[n - x] / total
            else:
                v = mpmath.exp(-(mpmath.mpf(y - x) ** 2) / (2 * mpmath.mpf(sigma) ** 2)) / total
            expected[x, y] = float(v)
    np.testing.assert_allclose(W, expected, rtol=1e-12, atol=0)
    # exact line-neighbour level: log(T(n-1) / T(n))
    level = float(mpmath.log(tails[n - 1] / tails[n]))
    assert max_log_ratio(W, line_pairs(n)) == pytest.approx(level, rel=1e-11)
    assert level >= (2 * n - 1) / (2 * sigma**2)


def test_discrete_gaussian_large_sigma_branches_agree() -> None:
    # Below 1e5 the tails are summed directly, above they come from Poisson summation.
    below = mech.discrete_gaussian(4, 1e5 * (1 - 1e-12)).matrix
    above = mech.discrete_gaussian(4, 1e5 * (1 + 1e-12)).matrix
    np.testing.assert_allclose(below, above, rtol=1e-10, atol=0)
    sigma = 3e6
    W = mech.discrete_gaussian(2, sigma).matrix
    with mpmath.workdps(40):
        # Poisson summation: Σ_z e^{−z²/(2σ²)} = σ√(2π) Σ_k e^{−2π²σ²k²}
        s = mpmath.mpf(sigma)
        total = s * mpmath.sqrt(2 * mpmath.pi) * (1 + 2 * mpmath.exp(-2 * mpmath.pi**2 * s**2))
        f1 = mpmath.exp(-1 / (2 * mpmath.mpf(sigma) ** 2))
        t0 = (total + 1) / 2
        t1 = t0 - 1
        t2 = t1 - f1
        expected = [float(t0 / total), float(f1 / total), float(t2 / total)]
    np.testing.assert_allclose(W[0], expected, rtol=1e-12)


@pytest.mark.parametrize(("n", "sigma"), [(1, 0.5), (4, 1.0), (10, 2.0), (20, 6.0)])
def test_discrete_gaussian_renormalize(n: int, sigma: float) -> None:
    W = mech.discrete_gaussian(n, sigma, truncation="renormalize").matrix
    d = np.subtract.outer(np.arange(n + 1), np.arange(n + 1))
    f = np.exp(-(d**2) / (2 * sigma**2))
    np.testing.assert_allclose(W, f / f.sum(axis=1, keepdims=True), rtol=1e-12, atol=0)
    level = max_log_ratio(W, line_pairs(n))
    Z = f.sum(axis=1)
    exact = max((2 * x + 1) / (2 * sigma**2) + math.log(Z[x + 1] / Z[x]) for x in range(n))
    assert level == pytest.approx(exact, rel=1e-11)
    assert level <= (2 * n - 1) / (2 * sigma**2) + math.log(2) + 1e-12


# --------------------------------------------------------------------------- staircase


def staircase_pmf(i: int, eps: float, delta: int, r: int) -> float:
    """Geng–Viswanath discrete staircase pmf at integer i, written from the definition."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * r + 2 * b * (delta - r) - (1 - b))
    k, j = divmod(abs(i), delta)
    return a * b**k * (1.0 if j < r else b)


@pytest.mark.parametrize("n", [1, 3, 10])
@pytest.mark.parametrize("eps", [0.0, 0.4, 1.0, 5.0, math.inf])
def test_staircase_sensitivity_one_is_geometric(n: int, eps: float) -> None:
    np.testing.assert_allclose(
        mech.staircase(n, eps).matrix, mech.truncated_geometric(n, eps).matrix, rtol=1e-13, atol=0
    )
    if math.isfinite(eps):
        np.testing.assert_allclose(
            mech.staircase(n, eps).matrix, geometric_formula(n, eps), rtol=1e-12, atol=0
        )


@pytest.mark.parametrize(
    ("delta", "r", "eps"), [(3, 2, 0.8), (4, 1, 1.5), (5, 5, 0.3), (2, 1, 3.0)]
)
def test_staircase_entries_and_level(delta: int, r: int, eps: float) -> None:
    n = 14
    W = mech.staircase(n, eps, sensitivity=delta, r=r).matrix
    check_stochastic(W, (n + 1, n + 1))
    for x in range(n + 1):
        for y in range(1, n):
            assert W[x, y] == pytest.approx(staircase_pmf(y - x, eps, delta, r), rel=1e-12)
        # clamped ends: the mass of the noise outside the range (summed far out)
        left = math.fsum(staircase_pmf(z, eps, delta, r) for z in range(-4000, -x + 1))
        right = math.fsum(staircase_pmf(z, eps, delta, r) for z in range(n - x, 4000))
        assert W[x, 0] == pytest.approx(left, rel=1e-10)
        assert W[x, n] == pytest.approx(right, rel=1e-10)
    # ε-DP for inputs within distance Δ, attained; kε at distance kΔ
    assert max_log_ratio(W, pairs_within(n, delta)) == pytest.approx(eps, rel=1e-11)
    assert max_log_ratio(W, line_pairs(n)) <= eps * (1 + 1e-12)
    assert max_log_ratio(W, pairs_within(n, 2 * delta)) <= 2 * eps * (1 + 1e-12)


@pytest.mark.parametrize(("delta", "eps"), [(5, 1.0), (20, 3.0), (8, 0.2)])
def test_staircase_default_r_minimises_l1_cost(delta: int, eps: float) -> None:
    def cost(r: int) -> float:
        return math.fsum(
            abs(z) * staircase_pmf(z, eps, delta, r) for z in range(-delta * 400, delta * 400)
        )

    costs = [cost(r) for r in range(1, delta + 1)]
    best = int(np.argmin(costs)) + 1
    np.testing.assert_array_equal(
        mech.staircase(12, eps, sensitivity=delta).matrix,
        mech.staircase(12, eps, sensitivity=delta, r=best).matrix,
    )
    # the continuous optimum γ* = 1/(1 + e^{ε/2}) is close
    assert abs(best - delta / (1 + math.exp(eps / 2))) <= 1.5


@pytest.mark.parametrize("eps", [0.05, 0.7, 2.0, 9.0, math.inf])
def test_staircase_default_r_search_for_large_sensitivity(
    eps: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Above the scan limit the width comes from a ternary search; it must agree with the scan.
    from dpcap.mechanisms import _noise

    scanned = [mech.staircase(3, eps, sensitivity=d) for d in (7, 50, 333)]
    monkeypatch.setattr(_noise, "_STAIRCASE_SCAN_MAX", 1)
    searched = [mech.staircase(3, eps, sensitivity=d) for d in (7, 50, 333)]
    for a, b in zip(scanned, searched, strict=True):
        np.testing.assert_array_equal(a.matrix, b.matrix)


def test_staircase_huge_sensitivity_is_fast() -> None:
    # Δ = 10^9: a scan over every width would need 8 GB; the default r still tracks γ*Δ.
    delta, eps = 10**9, 1.0
    W = mech.staircase(2, eps, sensitivity=delta).matrix
    check_stochastic(W, (3, 3))
    from dpcap.mechanisms._noise import _staircase_best_width

    best = _staircase_best_width(delta, eps)
    assert abs(best / delta - 1 / (1 + math.exp(eps / 2))) < 1e-3


def test_staircase_eps_zero_and_inf() -> None:
    W0 = mech.staircase(5, 0.0, sensitivity=3).matrix
    expected = np.zeros((6, 6))
    expected[:, 0] = expected[:, -1] = 0.5
    np.testing.assert_allclose(W0, expected, rtol=1e-15, atol=0)
    # ε = ∞: Z uniform on {-(r-1)..r-1}; the default r is 1 (noiseless)
    np.testing.assert_array_equal(mech.staircase(4, math.inf, sensitivity=3).matrix, np.eye(5))
    W = mech.staircase(6, math.inf, sensitivity=3, r=2).matrix
    np.testing.assert_allclose(W[3], [0, 0, 1 / 3, 1 / 3, 1 / 3, 0, 0], rtol=1e-15)


# --------------------------------------------------------------------------- exponential


@settings(max_examples=60, deadline=None)
@given(
    u=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=2, max_side=6),
        elements=st.floats(-50, 50),
    ),
    eps=st.floats(0.0, 8.0),
)
def test_exponential_is_eps_dp_over_all_pairs(u: np.ndarray, eps: float) -> None:
    spread = float(np.max(u.max(axis=0) - u.min(axis=0)))
    if spread == 0.0:
        with pytest.raises(ParameterError, match="sensitivity"):
            mech.exponential(u, eps)
        return
    W = mech.exponential(u, eps).matrix
    check_stochastic(W, u.shape)
    assert max_log_ratio(W, all_pairs(u.shape[0])) <= eps + 1e-9


def test_exponential_entries_base_and_sensitivity() -> None:
    rng = np.random.default_rng(20240601)
    u = rng.normal(size=(4, 5))
    base = np.array([1.0, 2.0, 0.0, 0.5, 3.0])
    eps = 1.3
    W = mech.exponential(u, eps, base).matrix
    spread = max(u[:, y].max() - u[:, y].min() for y in range(5))
    weights = base * np.exp(eps * u / (2 * spread))
    np.testing.assert_allclose(W, weights / weights.sum(axis=1, keepdims=True), rtol=1e-13)
    assert np.all(W[:, 2] == 0)
    assert max_log_ratio(W, all_pairs(4)) <= eps + 1e-12
    # an explicit sensitivity replaces Δu
    W2 = mech.exponential(u, eps, sensitivity=2.0).matrix
    w2 = np.exp(eps * u / 4.0)
    np.testing.assert_allclose(W2, w2 / w2.sum(axis=1, keepdims=True), rtol=1e-13)


def test_exponential_large_utilities_do_not_overflow() -> None:
    u = np.array([[1e6, 0.0, -1e6], [0.0, 1e6, 2e6]])
    W = mech.exponential(u, 5.0, sensitivity=1e3).matrix
    check_stochastic(W, (2, 3))
    assert np.isfinite(W).all()
    np.testing.assert_allclose(W, [[1, 0, 0], [0, 0, 1]], rtol=0, atol=1e-300)


def test_exponential_zero_eps_is_base_measure() -> None:
    W = mech.exponential([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], 0.0, [1.0, 1.0, 2.0]).matrix
    np.testing.assert_allclose(W, [[0.25, 0.25, 0.5]] * 2, rtol=1e-15)


# --------------------------------------------------------------------------- database mechanisms


def test_counting_query_rows_are_noise_rows_at_counts() -> None:
    n = 4
    noise = mech.truncated_geometric(n, 0.9)
    M = mech.counting_query(n, noise)
    assert isinstance(M, Mechanism)
    assert M.shape == (2,) * n
    for x in itertools.product(range(2), repeat=n):
        row = int(np.ravel_multi_index(x, M.shape))
        np.testing.assert_allclose(M.matrix[row], noise.matrix[sum(x)], rtol=1e-15, atol=0)
    # Hamming level = line level of the noise = ε
    pairs = [
        (int(np.ravel_multi_index(x, M.shape)), int(np.ravel_multi_index(x2, M.shape)))
        for x in itertools.product(range(2), repeat=n)
        for x2 in itertools.product(range(2), repeat=n)
        if sum(a != b for a, b in zip(x, x2, strict=True)) == 1
    ]
    assert max_log_ratio(M.matrix, pairs) == pytest.approx(0.9, rel=1e-11)


def test_counting_query_accepts_arrays_and_guards_size() -> None:
    M = mech.counting_query(1, [[0.5, 0.5], [0.2, 0.8]])
    np.testing.assert_array_equal(M.matrix, [[0.5, 0.5], [0.2, 0.8]])
    # the count stays structured; only the dense matrix is refused, pointing to the structure
    M = mech.counting_query(40, mech.truncated_geometric(40, 1.0))
    assert M.shape == (2,) * 40
    with pytest.raises(ProblemTooLargeError, match="structure"):
        _ = M.matrix
    huge = mech.counting_query(100_000, np.full((100_001, 3), 1 / 3))
    with pytest.raises(ProblemTooLargeError, match=r"10\^30103\.0 x 3"):
        _ = huge.matrix


@pytest.mark.parametrize("m", [2, 3, 5])
def test_one_time_pad(m: int) -> None:
    M = mech.one_time_pad(m)
    assert M.shape == (m, m)
    check_stochastic(M.matrix, (m * m, m))
    for x1, x2 in itertools.product(range(m), repeat=2):
        row = M.row((x1, x2))
        assert row[(x1 + x2) % m] == 1.0
        assert row.sum() == 1.0
    # I(X_1; Y) = 0 when X_2 is uniform and independent of X_1, for any law of X_1
    rng = np.random.default_rng(7)
    for p1 in (np.full(m, 1.0 / m), rng.dirichlet(np.ones(m))):
        joint = p1[:, None, None] * np.full(m, 1.0 / m)[None, :, None] * M.tensor()
        p_x1_y = joint.sum(axis=1)
        assert mutual_information(p1, p_x1_y / p1[:, None]) == pytest.approx(0.0, abs=1e-15)
    # the strong adversary: every slice is a permutation, I(X_1; Y | X_2 = k) = log m
    for k in range(m):
        S = M.slice(0, (k,)).matrix
        np.testing.assert_array_equal(S @ S.T, np.eye(m))
        assert mutual_information(np.full(m, 1.0 / m), S) == pytest.approx(math.log(m), rel=1e-14)


@pytest.mark.parametrize(("n", "m", "prob"), [(2, 2, 0.5), (2, 4, 0.3), (3, 3, 0.8)])
def test_revealing(n: int, m: int, prob: float) -> None:
    M = mech.revealing(n, m, prob)
    assert M.shape == (m,) * n
    check_stochastic(M.matrix, (m**n, m + 2))
    e1, e2 = m, m + 1
    for x in itertools.product(range(m), repeat=n):
        expected = np.zeros(m + 2)
        expected[e1] = 1 - prob
        if len(set(x)) == 1:
            expected[x[0]] = prob
        else:
            expected[e2] = prob
        np.testing.assert_array_equal(M.row(x), expected)
    # slice with context all equal to v: a binary erasure channel {X_i = v} vs {X_i ≠ v};
    # its capacity prob·ln 2 is attained by mass 1/2 on v, 1/2 on the others.
    v = 1
    S = M.slice(0, (v,) * (n - 1)).matrix
    prior = np.full(m, 0.5 / (m - 1))
    prior[v] = 0.5
    assert mutual_information(prior, S) == pytest.approx(prob * math.log(2), rel=1e-13)
    # free lunch (eq. 51): uniform over the m + 1 distinct rows gives prob·log(m + 1)
    rows = [int(np.ravel_multi_index((c,) * n, M.shape)) for c in range(m)]
    rows.append(int(np.ravel_multi_index((0, 1) + (0,) * (n - 2), M.shape)))
    distinct = M.matrix[rows]
    assert mutual_information(np.full(m + 1, 1 / (m + 1)), distinct) == pytest.approx(
        prob * math.log(m + 1), rel=1e-13
    )


def test_per_entry_product_structure() -> None:
    rng = np.random.default_rng(11)
    noise = rng.dirichlet(np.ones(3), size=2)  # 2 inputs, 3 outputs
    n = 3
    M = mech.per_entry(n, noise)
    assert M.shape == (2, 2, 2)
    check_stochastic(M.matrix, (8, 27))
    for x in itertools.product(range(2), repeat=n):
        for y in itertools.product(range(3), repeat=n):
            expected = math.prod(noise[xi, yi] for xi, yi in zip(x, y, strict=True))
            got = M.matrix[np.ravel_multi_index(x, M.shape), np.ravel_multi_index(y, (3,) * n)]
            assert got == pytest.approx(expected, rel=1e-14)
    # every slice carries exactly the information of `noise` (Y_{-i} is independent of X_i)
    prior = np.array([0.3, 0.7])
    for i in range(n):
        S = M.slice(i, (1, 0)).matrix
        assert mutual_information(prior, S) == pytest.approx(
            mutual_information(prior, noise), rel=1e-12
        )


def test_per_entry_guards_size() -> None:
    with pytest.raises(ProblemTooLargeError, match="structure"):
        mech.per_entry(10, mech.randomized_response(4, 1.0))


# --------------------------------------------------------------------------- dpcap.privacy


def test_levels_agree_with_dp_epsilon() -> None:
    from dpcap.privacy import dp_epsilon

    assert dp_epsilon(mech.randomized_response(5, 1.7), neighbors="all") == pytest.approx(1.7)
    assert dp_epsilon(mech.truncated_geometric(9, 0.6), neighbors="line") == pytest.approx(0.6)
    W = mech.discrete_laplace(7, 1.1, truncation="renormalize")
    assert dp_epsilon(W, neighbors="line") == pytest.approx(
        renormalized_laplace_level(7, 1.1), rel=1e-10
    )
    assert dp_epsilon(mech.counting_query(3, mech.truncated_geometric(3, 0.4))) == pytest.approx(
        0.4
    )
    assert dp_epsilon(mech.one_time_pad(3)) == math.inf
    assert dp_epsilon(mech.per_entry(3, mech.binary_symmetric(0.2))) == pytest.approx(math.log(4.0))


@pytest.mark.parametrize(
    ("ch", "relation"),
    [
        (mech.randomized_response(4, 1.0), "all"),
        (mech.binary_symmetric(0.1), "all"),
        (mech.erasure(5, 0.3), "all"),
        (mech.exponential(np.arange(12.0).reshape(3, 4), 1.0), "all"),
        (mech.truncated_geometric(7, 0.5), "line"),
        (mech.discrete_laplace(6, 1.0), "line"),
        (mech.discrete_laplace(6, 1.0, truncation="renormalize"), "line"),
        (mech.discrete_laplace(4, 1.0, sensitivity=4), "all"),
        (mech.discrete_gaussian(5, 1.3), "line"),
        (mech.discrete_gaussian(5, 1.3, truncation="renormalize"), "line"),
        (mech.staircase(9, 1.2), "line"),
        (mech.counting_query(3, mech.truncated_geometric(3, 1.0)), "hamming"),
        (mech.one_time_pad(3), "hamming"),
        (mech.revealing(2, 2, 0.5), "hamming"),
        (mech.per_entry(2, mech.randomized_response(3, 1.0)), "hamming"),
        (mech.per_entry(2, [[0.5, 0.5], [0.25, 0.75]]), "hamming"),
        (mech.per_entry(2, mech.truncated_geometric(2, 1.0)), "line"),
    ],
)
def test_each_constructor_carries_its_natural_relation(ch: Channel, relation: str) -> None:
    assert ch.neighbors == relation


@pytest.mark.parametrize("n", [2, 3, 10, 50])
@pytest.mark.parametrize("eps", [0.1, 1.0, 2.5])
def test_dp_epsilon_of_a_truncated_geometric_is_eps(n: int, eps: float) -> None:
    """The trap of issue 9: over all pairs of counts the level is n·ε, not ε."""
    from dpcap.privacy import dp_epsilon

    W = mech.truncated_geometric(n, eps)
    assert abs(dp_epsilon(W) - eps) <= 1e-12
    assert dp_epsilon(W, neighbors="all") == pytest.approx(n * eps, rel=1e-12)
    assert dp_epsilon(W.matrix) == pytest.approx(n * eps, rel=1e-12)  # a plain array: all pairs


@pytest.mark.parametrize(("n", "sens"), [(6, 2), (9, 3), (5, 5)])
def test_sensitivity_sets_the_relation_of_the_level(n: int, sens: int) -> None:
    from dpcap.privacy import dp_epsilon

    eps = 1.3
    laplace = mech.discrete_laplace(n, eps, sensitivity=sens)
    assert dp_epsilon(laplace) == pytest.approx(eps, rel=1e-11)
    assert dp_epsilon(laplace) == pytest.approx(
        max_log_ratio(laplace.matrix, pairs_within(n, sens)), rel=1e-12
    )
    stair = mech.staircase(n, eps, sensitivity=sens)
    assert dp_epsilon(stair) == pytest.approx(
        max_log_ratio(stair.matrix, pairs_within(n, sens)), rel=1e-12
    )
    assert dp_epsilon(stair) <= eps * (1 + 1e-12)


def test_per_entry_lifts_the_relation_of_its_channel() -> None:
    from dpcap.privacy import dp_epsilon

    eps = 0.7
    M = mech.per_entry(2, mech.truncated_geometric(2, eps))  # entries in {0, 1, 2}
    assert dp_epsilon(M) == pytest.approx(eps, rel=1e-12)  # one entry moves by one
    assert dp_epsilon(M, neighbors="hamming") == pytest.approx(2 * eps, rel=1e-12)
    # explicit pairs of values lift to the databases that differ in one entry by such a pair
    local = Channel(mech.truncated_geometric(2, eps).matrix, neighbors=[[0, 2]])
    lifted = mech.per_entry(2, local)
    pairs = [
        (int(np.ravel_multi_index(x, (3, 3))), int(np.ravel_multi_index(y, (3, 3))))
        for x in itertools.product(range(3), repeat=2)
        for y in itertools.product(range(3), repeat=2)
        if sorted(abs(a - b) for a, b in zip(x, y, strict=True)) == [0, 2]
    ]
    assert dp_epsilon(lifted) == pytest.approx(max_log_ratio(lifted.matrix, pairs), rel=1e-12)
    assert dp_epsilon(lifted) == pytest.approx(2 * eps, rel=1e-12)


def test_per_entry_takes_the_number_of_entries_first() -> None:
    with pytest.raises(ParameterError, match=r"per_entry takes the number of entries first"):
        mech.per_entry(untyped(mech.binary_symmetric(0.2)), untyped(3))


# --------------------------------------------------------------------------- errors


def untyped(value: Any) -> Any:
    """A deliberately ill-typed argument (for the type checker)."""
    return value


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: mech.randomized_response(1, 1.0), ParameterError, r"k must be an integer >= 2"),
        (lambda: mech.randomized_response(untyped(2.5), 1.0), ParameterError, r"k must be .*2\.5"),
        (lambda: mech.randomized_response(3, -1.0), ParameterError, r"eps must be >= 0, got -1"),
        (lambda: mech.randomized_response(3, math.nan), ParameterError, r"eps must not be NaN"),
        (
            lambda: mech.randomized_response(3, untyped([1, 2])),
            ParameterError,
            r"eps must be a scalar",
        ),
        (
            lambda: mech.randomized_response(3, untyped("big")),
            ParameterError,
            r"eps must be a real",
        ),
        (lambda: mech.binary_symmetric(1.5), ParameterError, r"p must be in \[0, 1\], got 1.5"),
        (lambda: mech.erasure(0, 0.5), ParameterError, r"n must be an integer >= 1, got 0"),
        (lambda: mech.erasure(3, -0.1), ParameterError, r"delta must be >= 0, got -0.1"),
        (lambda: mech.truncated_geometric(0, 1.0), ParameterError, r"n must be .* got 0"),
        (lambda: mech.truncated_geometric(True, 1.0), ParameterError, r"n must be .* got True"),
        (
            lambda: mech.discrete_laplace(3, 1.0, truncation="wrap"),
            ParameterError,
            r"truncation must be one of \('clamp', 'renormalize'\), got 'wrap'",
        ),
        (
            lambda: mech.discrete_laplace(3, 1.0, sensitivity=0),
            ParameterError,
            r"sensitivity must be an integer >= 1, got 0",
        ),
        (lambda: mech.discrete_gaussian(3, 0.0), ParameterError, r"sigma must be > 0, got 0.0"),
        (lambda: mech.discrete_gaussian(3, math.inf), ParameterError, r"sigma must be finite"),
        (
            lambda: mech.discrete_gaussian(3, 1.0, truncation=untyped(None)),
            ParameterError,
            r"truncation must be one of .* got None",
        ),
        (
            lambda: mech.staircase(3, 1.0, sensitivity=2, r=3),
            ParameterError,
            r"r must be an integer in \[1, sensitivity=2\], got 3",
        ),
        (lambda: mech.staircase(3, 1.0, r=0), ParameterError, r"r must be an integer >= 1, got 0"),
        (lambda: mech.exponential([1.0, 2.0], 1.0), ParameterError, r"utility must be .*\(2,\)"),
        (
            lambda: mech.exponential([[1.0, math.nan], [0.0, 1.0]], 1.0),
            ParameterError,
            r"utility has a non-finite entry nan at index \(0, 1\)",
        ),
        (
            lambda: mech.exponential([["a"]], 1.0),
            ParameterError,
            r"utility must be an array of real numbers, got strings",
        ),
        (
            lambda: mech.exponential([[0.0, 1.0], [1.0, 0.0]], math.inf),
            ParameterError,
            r"eps must be finite",
        ),
        (
            lambda: mech.exponential([[0.0, 1.0], [1.0, 0.0]], 1.0, [1.0, 1.0, 1.0]),
            ParameterError,
            r"base must be a 1-D measure with one entry per output \(2\), got shape \(3,\)",
        ),
        (
            lambda: mech.exponential([[0.0, 1.0], [1.0, 0.0]], 1.0, [0.0, 0.0]),
            ParameterError,
            r"base must have a positive entry",
        ),
        (
            lambda: mech.exponential([[0.0, 1.0], [1.0, 0.0]], 1.0, [-1.0, 1.0]),
            ParameterError,
            r"base must be >= 0",
        ),
        (
            lambda: mech.exponential([[0.0, 1.0], [1.0, 0.0]], 1.0, sensitivity=0),
            ParameterError,
            r"sensitivity must be > 0, got 0",
        ),
        (
            lambda: mech.exponential([[0.0, 1.0], [0.0, 1.0]], 1.0),
            ParameterError,
            r"utility does not depend on the input",
        ),
        (
            lambda: mech.counting_query(3, mech.truncated_geometric(2, 1.0)),
            ChannelError,
            r"noise must have n \+ 1 = 4 rows .* got 3",
        ),
        (
            lambda: mech.counting_query(2, [[0.5, 0.6]] * 3),
            ChannelError,
            r"noise is not row-stochastic",
        ),
        (lambda: mech.counting_query(0, [[1.0]]), ParameterError, r"n must be .* got 0"),
        (lambda: mech.one_time_pad(1), ParameterError, r"m must be an integer >= 2, got 1"),
        (lambda: mech.revealing(1, 3, 0.5), ParameterError, r"n must be an integer >= 2, got 1"),
        (lambda: mech.revealing(2, 1, 0.5), ParameterError, r"m must be an integer >= 2, got 1"),
        (lambda: mech.revealing(2, 3, 2.0), ParameterError, r"prob must be in \[0, 1\], got 2.0"),
        (lambda: mech.per_entry(0, [[1.0]]), ParameterError, r"n must be .* got 0"),
        (lambda: mech.per_entry(2, [1.0, 0.0]), ChannelError, r"noise must be a 2-D matrix"),
    ],
)
def test_errors_name_the_argument(
    call: Callable[[], object], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        call()


def test_dense_guard_on_square_channels() -> None:
    # clamped noise is kept by its structure: only its dense matrix is refused
    W = mech.truncated_geometric(20_000, 1.0)
    with pytest.raises(ProblemTooLargeError, match=r"noise channel on \{0..20000\}.*structure"):
        W.matrix  # noqa: B018
    with pytest.raises(ProblemTooLargeError, match=r"discrete_laplace\(n=20000\)"):
        mech.discrete_laplace(20_000, 1.0, truncation="renormalize")
    with pytest.raises(ProblemTooLargeError, match=r"truncated_geometric\(n=16777216\)"):
        mech.truncated_geometric(2**24, 1.0)
