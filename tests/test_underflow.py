"""Underflow never turns a known DP level into a wrong number (issue 10, item 3).

Mechanisms whose entries fall below the smallest normal double keep their log-probabilities
(computed in closed form by the constructor, ``log_matrix``) and every DP metric takes its
likelihood ratios from them. Each expected value is a closed form evaluated in mpmath, or an
mpmath brute force over the neighbour pairs of the exact log-probabilities: never dpcap's own
output.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import dpcap
from dpcap import Channel, ChannelError, Mechanism
from dpcap.mechanisms import (
    counting_query,
    discrete_gaussian,
    discrete_laplace,
    exponential,
    per_entry,
    randomized_response,
    staircase,
    truncated_geometric,
)

mp.mp.dps = 40
TINY = np.finfo(np.float64).tiny


def underflowed(ch: object) -> bool:
    """The stored matrix lost a positive probability (the premise of every test here)."""
    return bool((np.asarray(ch) < TINY).any())


# --------------------------------------------------------------------------- closed forms


def line_metrics(eps: float) -> dict[str, object]:
    """Metrics of adjacent rows of the truncated geometric (also a counting query under it).

    Rows x and x+1 have likelihood ratio ``e^{±ε}``: ``1/a`` on ``y ≤ x`` (mass ``1/(1+a)``
    under row x) and ``a`` above, ``a = e^{-ε}``. So KL = ε tanh(ε/2), TV = tanh(ε/2),
    ``D_α = log((e^{ε(α−1)} + a e^{−ε(α−1)})/(1 + a))/(α − 1)`` and
    ``δ(ε') = (1 − e^{ε'−ε})/(1 + a)`` for ε' < ε, 0 beyond.
    """
    e = mp.mpf(eps)
    a = mp.e ** (-e)

    def renyi(alpha: float) -> float:
        s = mp.mpf(alpha) - 1
        return float(mp.log((mp.e ** (e * s) + a * mp.e ** (-e * s)) / (1 + a)) / s)

    def delta(level: float) -> float:
        return 0.0 if level >= eps else float((1 - mp.e ** (mp.mpf(level) - e)) / (1 + a))

    return {
        "kl": float(e * mp.tanh(e / 2)),
        "tv": float(mp.tanh(e / 2)),
        "renyi": renyi,
        "delta": delta,
    }


def rr_exact(k: int, eps: float) -> tuple[mp.mpf, mp.mpf]:
    """The two probabilities of randomized response, p (diagonal) and q."""
    p = 1 / (1 + (k - 1) * mp.e ** (-mp.mpf(eps)))
    return p, p * mp.e ** (-mp.mpf(eps))


def brute_force(logs: list[list[mp.mpf]], pairs: list[tuple[int, int]]) -> dict[str, object]:
    """ε, δ(ε'), KL and TV by brute force over ordered pairs of exact log-probabilities."""
    ordered = [*pairs, *((j, i) for i, j in pairs)]
    eps, kl, tv = mp.mpf(0), mp.mpf(0), mp.mpf(0)
    for i, j in ordered:
        terms = [(a, b) for a, b in zip(logs[i], logs[j], strict=True) if a > -mp.inf]
        eps = max(eps, *(a - b for a, b in terms))
        kl = max(kl, mp.fsum(mp.e**a * (a - b) for a, b in terms))
        tv = max(tv, mp.fsum(max(mp.e**a - mp.e**b, 0) for a, b in terms))

    def delta(level: float) -> float:
        gamma = mp.e ** mp.mpf(level)
        return float(
            max(
                mp.fsum(
                    max(mp.e**a - gamma * mp.e**b, 0) for a, b in zip(logs[i], logs[j], strict=True)
                )
                for i, j in ordered
            )
        )

    return {"eps": float(eps), "kl": float(kl), "tv": float(tv), "delta": delta}


def line(n: int) -> list[tuple[int, int]]:
    return [(x, x + 1) for x in range(n)]


# --------------------------------------------------------------------------- the issue's cases


def test_issue_truncated_geometric_line_level_is_one() -> None:
    W = truncated_geometric(1000, 1.0)
    assert underflowed(W)
    assert W.log_matrix is not None
    assert dpcap.dp_epsilon(W, neighbors="line") == pytest.approx(1.0, rel=1e-12)


def test_large_eps_hockey_stick_keeps_tiny_masses() -> None:
    """δ(39) of randomized_response(3, 40) is p − e^39 q = 1 − 1/e: the mass q = 4e-18 above
    e^39 must not vanish next to the mass 1 below it (it did: δ was 1)."""
    p, q = rr_exact(3, 40.0)
    expected = float(p - mp.e**39 * q)
    assert dpcap.dp_delta(randomized_response(3, 40.0), 39.0) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_issue_counting_query_of_5000_entries() -> None:
    M = counting_query(5000, truncated_geometric(5000, 1.0))
    assert dpcap.dp_epsilon(M) == pytest.approx(1.0, rel=1e-12)


# --------------------------------------------------------------------------- geometric family


class TestTruncatedGeometric:
    @pytest.mark.parametrize("eps", [0.8, 1.0, 2.5, 10.0])
    def test_line_level_is_eps(self, eps: float) -> None:
        W = truncated_geometric(1000, eps)
        assert underflowed(W)
        assert dpcap.dp_epsilon(W) == pytest.approx(eps, rel=1e-12)
        assert dpcap.renyi_dp(W, math.inf) == pytest.approx(eps, rel=1e-12)

    @pytest.mark.parametrize("relation", ["all", "hamming"])
    @pytest.mark.parametrize("eps", [1.0, 2.5])
    def test_all_pairs_level_is_n_eps(self, relation: str, eps: float) -> None:
        # the extreme rows: W[0, 0] / W[n, 0] = a^0 / a^n
        W = truncated_geometric(1000, eps)
        assert dpcap.dp_epsilon(W, neighbors=relation) == pytest.approx(1000 * eps, rel=1e-12)

    @pytest.mark.parametrize("eps", [1.0, 3.0])
    def test_every_metric_against_closed_forms(self, eps: float) -> None:
        W = truncated_geometric(1000, eps)
        ref = line_metrics(eps)
        # sums over ~1000 outputs: a relative 1e-11 (1e-10 for δ, a difference of two sums)
        assert dpcap.kl_dp(W) == pytest.approx(ref["kl"], rel=1e-11)
        assert dpcap.tv_dp(W) == pytest.approx(ref["tv"], rel=1e-11)
        for alpha in (0.5, 2.0, 5.0):
            assert dpcap.renyi_dp(W, alpha) == pytest.approx(ref["renyi"](alpha), rel=1e-11)
        grid = [0.0, eps / 3, eps * 0.9, 650.0, 699.0, 800.0]
        expected = [ref["delta"](e) for e in grid]
        np.testing.assert_allclose(dpcap.dp_delta_curve(W, grid), expected, rtol=1e-10, atol=0)

    @pytest.mark.parametrize("level", [2.0, 5.0, 800.0, math.inf])
    def test_delta_is_exactly_zero_beyond_eps(self, level: float) -> None:
        """No outcome is impossible under a neighbour: δ(∞) = 0, not an underflowed mass."""
        assert dpcap.dp_delta(truncated_geometric(1000, 1.0), level) == 0.0

    def test_counting_query_metrics(self) -> None:
        eps = 3.0
        M = counting_query(300, truncated_geometric(300, eps))
        assert underflowed(M.noise)
        ref = line_metrics(eps)
        assert dpcap.dp_epsilon(M) == pytest.approx(eps, rel=1e-12)
        assert dpcap.kl_dp(M) == pytest.approx(ref["kl"], rel=1e-11)
        assert dpcap.renyi_dp(M, 2.0) == pytest.approx(ref["renyi"](2.0), rel=1e-11)
        assert dpcap.tv_dp(M) == pytest.approx(ref["tv"], rel=1e-11)
        for level in (0.5, 2.9):
            assert dpcap.dp_delta(M, level) == pytest.approx(ref["delta"](level), rel=1e-10)
        assert dpcap.dp_delta(M, math.inf) == 0.0

    def test_one_entry_additive_database(self) -> None:
        M = Mechanism.additive([np.arange(1000)], truncated_geometric(999, 1.0))
        assert dpcap.dp_epsilon(M) == pytest.approx(999.0, rel=1e-12)

    def test_dense_additive_mechanism_and_its_slices(self) -> None:
        A = counting_query(12, truncated_geometric(12, 70.0))
        dense = Mechanism(A.matrix, A.shape, log_matrix=A.log_matrix)
        assert underflowed(dense)
        assert dpcap.dp_epsilon(dense) == pytest.approx(70.0, rel=1e-12)
        assert dpcap.dp_epsilon(A.slice(0, context=(1,) * 11)) == pytest.approx(70.0, rel=1e-12)

    def test_staircase_and_discrete_laplace(self) -> None:
        # Δ = 1: the truncated geometric; Δ = 2, r = 1: rows x and x + Δ have ratio exactly e^ε
        assert dpcap.dp_epsilon(staircase(1000, 1.0)) == pytest.approx(1.0, rel=1e-12)
        S = staircase(600, 3.0, sensitivity=2, r=1)
        assert underflowed(S)
        assert dpcap.dp_epsilon(S) == pytest.approx(3.0, rel=1e-12)
        # the tails of the top step carry a factor b = e^-ε that itself underflows
        assert dpcap.dp_epsilon(staircase(50, 800.0, sensitivity=3)) == pytest.approx(800.0)
        L = discrete_laplace(800, 3.0, sensitivity=2)
        assert underflowed(L)
        assert dpcap.dp_epsilon(L) == pytest.approx(3.0, rel=1e-12)

    def test_renormalized_laplace_closed_form(self) -> None:
        n, eps = 1000, 2.0
        a = mp.e ** (-mp.mpf(eps))
        expected = eps + mp.log(1 + (1 - a) * (a - a**n) / (1 - a ** (n + 1)))
        W = discrete_laplace(n, eps, truncation="renormalize")
        assert underflowed(W)
        assert dpcap.dp_epsilon(W) == pytest.approx(float(expected), rel=1e-12)


# --------------------------------------------------------------------------- Gaussian


def gaussian_logs(n: int, sigma: float, truncation: str) -> list[list[mp.mpf]]:
    """Exact log W of the discrete Gaussian on {0..n} (docstring of ``discrete_gaussian``)."""
    two_var = 2 * mp.mpf(sigma) ** 2

    def log_f(z: int) -> mp.mpf:
        return -(mp.mpf(z) ** 2) / two_var

    if truncation == "renormalize":
        out = []
        for x in range(n + 1):
            norm = mp.log(mp.fsum(mp.e ** log_f(y - x) for y in range(n + 1)))
            out.append([log_f(y - x) - norm for y in range(n + 1)])
        return out
    log_s = mp.log(mp.nsum(lambda z: mp.e ** log_f(int(z)), [-mp.inf, mp.inf]))
    tail = [mp.log(mp.nsum(lambda z: mp.e ** log_f(int(z)), [k, mp.inf])) for k in range(n + 1)]
    out = []
    for x in range(n + 1):
        row = [log_f(y - x) - log_s for y in range(n + 1)]
        row[0], row[n] = tail[x] - log_s, tail[n - x] - log_s
        out.append(row)
    return out


@pytest.mark.parametrize("truncation", ["clamp", "renormalize"])
def test_discrete_gaussian_against_mpmath(truncation: str) -> None:
    n, sigma = 50, 1.2  # f(49) = e^-834: below the smallest double
    W = discrete_gaussian(n, sigma, truncation=truncation)
    assert underflowed(W)
    ref = brute_force(gaussian_logs(n, sigma, truncation), line(n))
    assert dpcap.dp_epsilon(W) == pytest.approx(ref["eps"], rel=1e-10)
    assert dpcap.kl_dp(W) == pytest.approx(ref["kl"], rel=1e-10)
    assert dpcap.tv_dp(W) == pytest.approx(ref["tv"], rel=1e-10)
    for level in (1.0, ref["eps"] / 2):
        assert dpcap.dp_delta(W, level) == pytest.approx(ref["delta"](level), rel=1e-10)
    assert dpcap.dp_delta(W, math.inf) == 0.0


# --------------------------------------------------------------------------- categorical


class TestRandomizedResponse:
    @pytest.mark.parametrize("k", [2, 3, 50])
    def test_every_metric_at_eps_800(self, k: int) -> None:
        W = randomized_response(k, 800.0)
        assert underflowed(W)
        p, q = rr_exact(k, 800.0)
        assert dpcap.dp_epsilon(W) == pytest.approx(800.0, rel=1e-14)
        assert dpcap.kl_dp(W) == pytest.approx(float(800 * (p - q)), rel=1e-12)
        assert dpcap.tv_dp(W) == pytest.approx(float(p - q), rel=1e-12)
        for alpha in (0.5, 2.0, 10.0):
            total = p**alpha * q ** (1 - alpha) + q**alpha * p ** (1 - alpha) + (k - 2) * q
            expected = float(mp.log(total) / (alpha - 1))
            assert dpcap.renyi_dp(W, alpha) == pytest.approx(expected, rel=1e-12)
        grid = [0.0, 1.0, 500.0, 650.0, 700.0, 799.0, 800.5, 1000.0, math.inf]
        expected = [float(max(p - mp.e ** mp.mpf(e) * q, 0)) if e < 800 else 0.0 for e in grid]
        np.testing.assert_allclose(dpcap.dp_delta_curve(W, grid), expected, rtol=1e-12, atol=0)


def test_exponential_mechanism_against_brute_force() -> None:
    u = -np.abs(np.subtract.outer(np.arange(4), np.arange(4))).astype(float)
    base = np.array([1.0, 2.0, 0.0, 1.0])
    eps = 2000.0
    W = exponential(u, eps, base)
    assert underflowed(W)
    s = mp.mpf(eps) / (2 * 3)  # Δu = 3
    logs = []
    for x in range(4):
        logits = [
            mp.log(b) + s * int(v) if b > 0 else -mp.inf for b, v in zip(base, u[x], strict=True)
        ]
        norm = mp.log(mp.fsum(mp.e**t for t in logits))
        logs.append([t - norm for t in logits])
    ref = brute_force(logs, [(i, j) for i in range(4) for j in range(i + 1, 4)])
    assert ref["eps"] <= eps
    assert dpcap.dp_epsilon(W) == pytest.approx(ref["eps"], rel=1e-12)
    assert dpcap.kl_dp(W) == pytest.approx(ref["kl"], rel=1e-12)
    for level in (0.5, 400.0, 699.0, 900.0):
        assert dpcap.dp_delta(W, level) == pytest.approx(ref["delta"](level), rel=1e-12)


# --------------------------------------------------------------------------- built from others


class TestOperations:
    def test_per_entry_products_underflow(self) -> None:
        # q = e^-400 p is a normal double, q² is not
        M = per_entry(2, randomized_response(3, 400.0))
        assert underflowed(M)
        assert M.log_matrix is not None
        p, q = rr_exact(3, 400.0)
        assert dpcap.dp_epsilon(M) == pytest.approx(400.0, rel=1e-14)
        assert dpcap.kl_dp(M) == pytest.approx(float(400 * (p - q)), rel=1e-12)
        assert dpcap.dp_delta(M, 399.0) == pytest.approx(float(p - mp.e**399 * q), rel=1e-12)
        assert dpcap.dp_delta(M, math.inf) == 0.0

    def test_slice_keeps_the_log_matrix(self) -> None:
        M = per_entry(2, randomized_response(3, 400.0))
        assert dpcap.dp_epsilon(M.slice(0, context=(1,))) == pytest.approx(400.0, rel=1e-14)

    def test_compose_keeps_the_log_matrix(self) -> None:
        W = truncated_geometric(800, 1.0)
        assert dpcap.dp_epsilon(W.compose(np.eye(801))) == pytest.approx(1.0, rel=1e-12)
        assert dpcap.dp_epsilon(W.compose(np.eye(801)[::-1])) == pytest.approx(1.0, rel=1e-12)

    def test_compose_recomputes_what_the_product_loses(self) -> None:
        """A threshold at 500 after ε = 2: the released bit has line level exactly ε.

        ``P(x + Z ≥ 500) = a^{500−x}/(1 + a)`` below 500 (and symmetrically above): adjacent
        rows have ratio ``a^{±1}``, while ``a^{500}`` = e^-1000 underflows in the matrix product.
        """
        post = np.zeros((1001, 2))
        post[:500, 0] = post[500:, 1] = 1.0
        composed = truncated_geometric(1000, 2.0).compose(post)
        assert underflowed(composed)
        assert dpcap.dp_epsilon(composed) == pytest.approx(2.0, rel=1e-9)

    def test_with_neighbors_and_mechanism_keep_it(self) -> None:
        W = truncated_geometric(1000, 1.0)
        assert dpcap.dp_epsilon(W.with_neighbors("all")) == pytest.approx(1000.0, rel=1e-12)
        assert dpcap.dp_epsilon(Channel(W, neighbors="line")) == pytest.approx(1.0, rel=1e-12)
        as_db = Mechanism(W, (1001,), neighbors="line")
        assert dpcap.dp_epsilon(as_db) == pytest.approx(1.0, rel=1e-12)

    def test_equality_and_the_plain_matrix(self) -> None:
        W = truncated_geometric(1000, 1.0)
        assert truncated_geometric(1000, 1.0) == W
        # the matrix alone reads its zeros as zeros: the conservative side
        assert dpcap.dp_epsilon(Channel(W.matrix, neighbors="line")) == math.inf


# --------------------------------------------------------------------------- the log_matrix rule


class TestLogMatrixValidation:
    def test_plain_matrices_have_none(self) -> None:
        assert Channel([[0.5, 0.5], [0.25, 0.75]]).log_matrix is None
        assert truncated_geometric(10, 1.0).log_matrix is None
        assert randomized_response(5000 // 100, 1.0).log_matrix is None

    def test_a_log_matrix_that_says_nothing_more_is_dropped(self) -> None:
        W = [[1.0, 0.0], [0.5, 0.5]]
        logs = [[0.0, -np.inf], [math.log(0.5), math.log(0.5)]]
        assert Channel(W, log_matrix=logs).log_matrix is None

    def test_a_kept_log_matrix_gives_the_true_level(self) -> None:
        W = [[1.0, 0.0], [0.5, 0.5]]
        logs = [[0.0, -800.0], [math.log(0.5), math.log(0.5)]]
        ch = Channel(W, log_matrix=logs)
        assert ch.log_matrix is not None
        assert not ch.log_matrix.flags.writeable
        assert dpcap.dp_epsilon(ch) == pytest.approx(800.0 + math.log(0.5), rel=1e-14)

    @pytest.mark.parametrize(
        ("logs", "match"),
        [
            ([[0.0, -800.0]], r"log_matrix must have the shape of W \(2, 2\)"),
            ([[0.0, np.nan], [-0.69, -0.69]], "log_matrix disagrees with W at index"),
            ([[0.0, 1.0], [math.log(0.5)] * 2], r"disagrees with W at index \(0, 1\)"),
            ([[0.0, -800.0], [math.log(0.5), math.log(0.4)]], r"index \(1, 1\)"),
            ([[0.0, -10.0], [math.log(0.5)] * 2], r"index \(0, 1\)"),  # W = 0 but e^-10 claimed
            ([[0.0, -800.0], [math.log(0.5), -np.inf]], r"index \(1, 1\)"),  # -inf where W > 0
            ([["a", "b"], ["c", "d"]], "log_matrix must be an array of real numbers"),
            ([[0j, 0j], [0j, 0j]], "log_matrix must be real"),
        ],
    )
    def test_disagreement_is_refused(self, logs: object, match: str) -> None:
        with pytest.raises(ChannelError, match=match):
            Channel([[1.0, 0.0], [0.5, 0.5]], log_matrix=logs)

    def test_mechanism_validates_it_too(self) -> None:
        with pytest.raises(ChannelError, match="log_matrix disagrees"):
            Mechanism([[1.0, 0.0], [0.5, 0.5]], (2,), log_matrix=[[0.0, -800.0], [0.0, 0.0]])
