"""DP metrics of mechanisms: closed forms for randomized response, the δ(ε) engine against a
direct evaluation, and the properties every privacy metric must have."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import ParameterError
from dpcap.solvers import hockey, pairwise
from dpcap.testing import channels


def rr(k: int, eps: float) -> np.ndarray:
    """k-ary randomized response written out from its definition."""
    W = np.ones((k, k))
    np.fill_diagonal(W, math.exp(eps))
    return W / (math.exp(eps) + k - 1)


def direct_delta(W: np.ndarray, pairs: list[tuple[int, int]], eps: float) -> float:
    """max over ordered pairs of Σ_y (W[x,y] − e^ε W[x',y])_+, one pair at a time."""
    gamma = math.exp(eps)
    best = 0.0
    for i, j in pairs:
        for a, b in ((W[i], W[j]), (W[j], W[i])):
            if math.isinf(gamma):
                value = float(a[b == 0].sum())
            else:
                value = float(np.maximum(a - gamma * b, 0.0).sum())
            best = max(best, value)
    return best


class TestRandomizedResponse:
    @pytest.mark.parametrize("k", [2, 3, 7])
    @pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 3.5])
    def test_epsilon_is_exact(self, k: int, eps: float) -> None:
        assert dpcap.dp_epsilon(rr(k, eps)) == pytest.approx(eps, abs=1e-13)

    @pytest.mark.parametrize("k", [2, 5])
    @pytest.mark.parametrize("eps", [0.5, 2.0])
    def test_hockey_stick_closed_form(self, k: int, eps: float) -> None:
        grid = np.linspace(0.0, eps + 1.0, 23)
        expected = np.maximum(math.exp(eps) - np.exp(grid), 0.0) / (math.exp(eps) + k - 1)
        np.testing.assert_allclose(
            dpcap.dp_delta_curve(rr(k, eps), grid), expected, rtol=0, atol=1e-15
        )

    @pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 4.0])
    def test_kl_dp_of_binary_rr(self, eps: float) -> None:
        assert dpcap.kl_dp(rr(2, eps)) == pytest.approx(eps * math.tanh(eps / 2), rel=1e-12)

    @pytest.mark.parametrize("k", [2, 3, 10])
    @pytest.mark.parametrize("eps", [0.0, 0.7, 2.0])
    def test_max_leakage(self, k: int, eps: float) -> None:
        expected = math.log(k * math.exp(eps) / (math.exp(eps) + k - 1))
        assert dpcap.max_leakage(rr(k, eps)) == pytest.approx(expected, abs=1e-14)
        assert dpcap.max_leakage(rr(k, eps), unit="bits") == pytest.approx(expected / math.log(2))

    def test_delta_at_zero_is_total_variation(self) -> None:
        W = rr(4, 1.3)
        assert dpcap.dp_delta(W, 0.0) == pytest.approx(dpcap.tv_dp(W), abs=1e-15)
        assert dpcap.tv_dp(W) == pytest.approx((math.exp(1.3) - 1) / (math.exp(1.3) + 3), abs=1e-15)

    def test_renyi_dp_orders(self) -> None:
        W = rr(3, 1.0)
        assert dpcap.renyi_dp(W, math.inf) == pytest.approx(1.0, abs=1e-14)
        assert dpcap.renyi_dp(W, 1.0) == pytest.approx(dpcap.kl_dp(W))
        a = 2.0
        p, q = W[0], W[1]
        expected = math.log(float(np.sum(p**a * q ** (1 - a)))) / (a - 1)
        assert dpcap.renyi_dp(W, a) == pytest.approx(expected, rel=1e-13)


class TestDatabases:
    def test_hamming_versus_all_pairs_on_two_local_entries(self) -> None:
        eps = 0.8
        local = rr(2, eps)
        W = np.einsum("ay,bz->abyz", local, local).reshape(4, 4)
        M = dpcap.Mechanism(W, (2, 2))
        assert dpcap.dp_epsilon(M) == pytest.approx(eps, abs=1e-13)
        assert dpcap.dp_epsilon(M, neighbors="all") == pytest.approx(2 * eps, abs=1e-13)
        assert dpcap.dp_epsilon(M, neighbors=[[0, 3]]) == pytest.approx(2 * eps, abs=1e-13)

    def test_line_neighbours_of_a_geometric_channel(self) -> None:
        eps, n = 0.5, 6
        a = math.exp(-eps)
        x, y = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        W = (1 - a) / (1 + a) * a ** np.abs(x - y)
        W[:, 0] = a ** x[:, 0] / (1 + a)
        W[:, n] = a ** (n - x[:, 0]) / (1 + a)
        assert dpcap.dp_epsilon(W, neighbors="line") == pytest.approx(eps, abs=1e-12)
        assert dpcap.dp_epsilon(W, neighbors="all") == pytest.approx(n * eps, abs=1e-11)

    def test_zero_against_positive_is_infinite(self) -> None:
        W = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
        assert dpcap.dp_epsilon(W) == math.inf
        assert dpcap.renyi_dp(W, 2.0) == math.inf
        assert dpcap.kl_dp(W) == math.inf
        assert dpcap.dp_delta(W, math.inf) == 0.5
        assert dpcap.dp_delta_curve(W, [1.0, math.inf]).tolist() == [pytest.approx(0.5), 0.5]

    def test_outcomes_impossible_for_both_rows_are_ignored(self) -> None:
        W = [[0.6, 0.4, 0.0], [0.4, 0.6, 0.0]]
        assert dpcap.dp_epsilon(W) == pytest.approx(math.log(1.5), abs=1e-15)

    def test_point_is_a_float_and_curve_an_array(self) -> None:
        W = rr(3, 1.0)
        assert isinstance(dpcap.dp_delta(W, 0.5), float)
        assert dpcap.dp_delta_curve(W, np.zeros((2, 3))).shape == (2, 3)
        one = dpcap.dp_delta_curve(W, 0.5)
        assert isinstance(one, np.ndarray)
        assert one.shape == (1,)
        assert one[0] == dpcap.dp_delta(W, 0.5)
        # RR(3, 1) at ε' = 0.5: (e − e^0.5) / (e + 2)
        e = math.e
        assert dpcap.dp_delta(W, 0.5) == pytest.approx((e - math.exp(0.5)) / (e + 2), abs=1e-15)
        with pytest.raises(ParameterError, match=r"eps must be a single number.*dp_delta_curve"):
            dpcap.dp_delta(W, [0.5, 1.0])


class TestDeltaEngine:
    @given(channels(max_inputs=6, max_outputs=6), st.lists(st.floats(0, 6), max_size=6))
    @settings(max_examples=80, deadline=None)
    def test_curve_equals_direct_evaluation(self, W: np.ndarray, levels: list[float]) -> None:
        eps = np.array([*levels, 0.0, math.inf])
        n = W.shape[0]
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        curve = dpcap.dp_delta_curve(W, eps)
        expected = [direct_delta(W, pairs, e) for e in eps]
        np.testing.assert_allclose(curve, expected, rtol=0, atol=1e-14)

    def test_bin_table_equals_searchsorted(self) -> None:
        rng = np.random.default_rng(11)
        eps = np.array([0.0, 1e-12, 2e-12, 0.3, 0.30000000000000004, 1.0, 5.0, 50.0])
        edges = np.unique(np.concatenate([np.exp(-eps), np.exp(eps)]))
        ratio = np.concatenate(
            [
                np.exp(rng.normal(0, 3, 5000)),
                edges,
                np.nextafter(edges, 0),
                np.nextafter(edges, np.inf),
                [0.0, np.inf, np.nan, 5e-324, 1e308],
            ]
        )
        table = hockey._BinTable(edges)
        np.testing.assert_array_equal(
            table.bins(ratio), np.searchsorted(edges, ratio, side="right")
        )

    def test_chunking_does_not_change_the_answer(self, monkeypatch: pytest.MonkeyPatch) -> None:
        rng = np.random.default_rng(5)
        W = rng.dirichlet(np.full(9, 0.3), size=40)
        eps = np.linspace(0, 3, 7)
        whole = dpcap.dp_delta_curve(W, eps)
        monkeypatch.setattr(pairwise, "CHUNK_ELEMENTS", 10)
        np.testing.assert_allclose(dpcap.dp_delta_curve(W, eps), whole, rtol=0, atol=1e-15)
        assert dpcap.dp_epsilon(W) == pytest.approx(
            float(np.max(np.abs(np.log(W[:, None, :]) - np.log(W[None, :, :])))), rel=1e-14
        )


class TestProperties:
    @given(channels(max_inputs=5, max_outputs=5), st.data())
    @settings(max_examples=60, deadline=None)
    def test_post_processing_cannot_increase_any_metric(
        self, W: np.ndarray, data: st.DataObject
    ) -> None:
        V = data.draw(channels(min_inputs=W.shape[1], max_inputs=W.shape[1]))
        WV = W @ V
        WV /= WV.sum(axis=1, keepdims=True)
        eps = np.array([0.0, 0.5, 2.0])
        assert (dpcap.dp_delta_curve(WV, eps) <= dpcap.dp_delta_curve(W, eps) + 1e-12).all()
        assert dpcap.dp_epsilon(WV) <= dpcap.dp_epsilon(W) + 1e-12
        assert dpcap.kl_dp(WV) <= dpcap.kl_dp(W) + 1e-12
        assert dpcap.renyi_dp(WV, 3.0) <= dpcap.renyi_dp(W, 3.0) + 1e-12
        assert dpcap.max_leakage(WV) <= dpcap.max_leakage(W) + 1e-12

    @given(channels(max_inputs=5, max_outputs=5), st.data())
    @settings(max_examples=40, deadline=None)
    def test_relabelling_inputs_and_outputs(self, W: np.ndarray, data: st.DataObject) -> None:
        rows = np.asarray(data.draw(st.permutations(range(W.shape[0]))))
        cols = np.asarray(data.draw(st.permutations(range(W.shape[1]))))
        P = W[rows][:, cols]
        eps = np.array([0.0, 1.0])
        np.testing.assert_allclose(
            dpcap.dp_delta_curve(P, eps), dpcap.dp_delta_curve(W, eps), atol=1e-14
        )
        assert dpcap.dp_epsilon(P) == pytest.approx(dpcap.dp_epsilon(W), rel=1e-14)
        assert dpcap.kl_dp(P) == pytest.approx(dpcap.kl_dp(W), rel=1e-12, abs=1e-15)

    @given(channels(max_inputs=4, max_outputs=5, allow_zeros=False))
    @settings(max_examples=40, deadline=None)
    def test_pure_dp_implies_approximate_dp_and_kl_bound(self, W: np.ndarray) -> None:
        eps = dpcap.dp_epsilon(W)
        assert dpcap.dp_delta(W, eps) == pytest.approx(0.0, abs=1e-12)
        assert dpcap.kl_dp(W) <= dpcap.bounds.kl_dp_bound(eps) + 1e-12


def test_bad_eps_messages() -> None:
    with pytest.raises(ParameterError, match=r"eps must be >= 0, got -0\.5"):
        dpcap.dp_delta(rr(2, 1.0), -0.5)
    with pytest.raises(ParameterError, match=r"eps must not be NaN"):
        dpcap.dp_delta_curve(rr(2, 1.0), [0.0, float("nan")])
    with pytest.raises(ParameterError, match=r"alpha must be in \[0, inf\], got -2"):
        dpcap.renyi_dp(rr(2, 1.0), -2)
    with pytest.raises(dpcap.ChannelError, match=r"M is not row-stochastic: row 0 sums to 0\.5"):
        dpcap.dp_epsilon([[0.25, 0.25], [0.5, 0.5]])


class TestCarriedRelation:
    """Every DP metric uses the relation the mechanism carries unless ``neighbors=`` is given;
    a plain array keeps the rule of a one-entry database (all rows are neighbours)."""

    def setup_method(self) -> None:
        self.eps, self.n = 0.8, 4
        self.G = dpcap.mechanisms.truncated_geometric(self.n, self.eps)
        self.array = np.asarray(self.G).copy()

    def test_each_metric_follows_the_carried_relation(self) -> None:
        G, A = self.G, self.array
        grid = np.array([0.0, 0.3, 1.0])
        assert dpcap.dp_epsilon(G) == pytest.approx(self.eps, abs=1e-12)
        assert dpcap.dp_epsilon(G) == dpcap.dp_epsilon(A, neighbors="line")
        np.testing.assert_array_equal(
            dpcap.dp_delta_curve(G, grid), dpcap.dp_delta_curve(A, grid, neighbors="line")
        )
        assert dpcap.kl_dp(G) == dpcap.kl_dp(A, neighbors="line")
        assert dpcap.renyi_dp(G, 2.0) == dpcap.renyi_dp(A, 2.0, neighbors="line")
        assert dpcap.tv_dp(G) == dpcap.tv_dp(A, neighbors="line")
        # ... and a plain array is still compared over all pairs, which gives more
        assert dpcap.dp_epsilon(A) == pytest.approx(self.n * self.eps, rel=1e-12)
        assert dpcap.kl_dp(A) > dpcap.kl_dp(G)
        assert dpcap.tv_dp(A) > dpcap.tv_dp(G)
        assert (dpcap.dp_delta_curve(A, grid) >= dpcap.dp_delta_curve(G, grid)).all()

    def test_explicit_neighbors_override_the_carried_relation(self) -> None:
        G, A = self.G, self.array
        assert dpcap.dp_epsilon(G, neighbors="all") == pytest.approx(self.n * self.eps, rel=1e-12)
        assert dpcap.dp_epsilon(G, neighbors=[[0, 2]]) == pytest.approx(2 * self.eps, rel=1e-12)
        assert dpcap.kl_dp(G, neighbors="all") == dpcap.kl_dp(A)
        assert dpcap.renyi_dp(G, 3.0, neighbors="all") == dpcap.renyi_dp(A, 3.0)
        assert dpcap.tv_dp(G, neighbors="all") == dpcap.tv_dp(A)
        assert dpcap.dp_delta(G, 0.5, neighbors="all") == dpcap.dp_delta(A, 0.5)
        assert dpcap.dp_epsilon(G.with_neighbors("all")) == dpcap.dp_epsilon(A)

    def test_randomized_response_and_databases(self) -> None:
        rr_ch = dpcap.mechanisms.randomized_response(4, 1.2)
        assert dpcap.dp_epsilon(rr_ch) == pytest.approx(1.2, abs=1e-13)
        M = dpcap.Mechanism(np.eye(4), (2, 2), neighbors=[[0, 3]])
        assert dpcap.dp_epsilon(M) == math.inf
        assert dpcap.tv_dp(M) == 1.0
        assert dpcap.dp_epsilon(M, neighbors="hamming") == math.inf

    def test_problem_parameter_by_keyword(self) -> None:
        W = rr(3, 1.0)
        assert dpcap.dp_delta(W, eps=0.5) == dpcap.dp_delta(W, 0.5)
        assert dpcap.renyi_dp(W, alpha=2.0) == dpcap.renyi_dp(W, 2.0)
        with pytest.raises(TypeError):
            dpcap.dp_epsilon(M=W)  # type: ignore[call-arg]


class TestAllPairsEpsilon:
    """ε over all pairs is ``max_y log max_x W − log min_x W``: O(|X|·|Y|), not O(|X|²·|Y|)."""

    @given(channels(max_inputs=7, max_outputs=6))
    @settings(max_examples=80, deadline=None)
    def test_equals_the_pairwise_engine(self, W: np.ndarray) -> None:
        n = W.shape[0]
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        explicit = dpcap.dp_epsilon(W, neighbors=pairs) if pairs else 0.0
        assert dpcap.dp_epsilon(W) == explicit  # bit for bit
        assert dpcap.dp_epsilon(dpcap.Channel(W)) == pytest.approx(explicit, rel=1e-14)

    def test_large_randomized_response(self) -> None:
        # k = 2000 took ~50 s through the pairs; ε of RR(k, ε) is ε
        assert dpcap.dp_epsilon(dpcap.mechanisms.randomized_response(2000, 1.0)) == pytest.approx(
            1.0, abs=1e-12
        )

    def test_zero_columns_and_impossible_outcomes(self) -> None:
        assert dpcap.dp_epsilon([[0.5, 0.5, 0.0], [0.25, 0.75, 0.0]]) == pytest.approx(math.log(2))
        assert dpcap.dp_epsilon([[0.5, 0.5, 0.0], [0.5, 0.25, 0.25]]) == math.inf
        assert dpcap.dp_epsilon([[0.2, 0.8]]) == 0.0


def test_a_long_epsilon_grid_needs_no_quadratic_memory() -> None:
    """30,000 values of ε on a 4 × 4 channel: the binned engine allocated (2K+1) × K indicator
    matrices (13.4 GiB, MemoryError); prefix sums over the bins need O(K) per pair."""
    rng = np.random.default_rng(3)
    W = rng.dirichlet(np.ones(4), size=4)
    grid = np.linspace(0.0, 4.0, 30_000)
    curve = dpcap.dp_delta_curve(W, grid)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    for k in (0, 1, 7_500, 29_999):
        assert curve[k] == pytest.approx(direct_delta(W, pairs, grid[k]), abs=1e-14)
    assert np.all(np.diff(curve) <= 1e-15)  # non-increasing in ε


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_renyi_dp_of_equal_rows_is_plus_zero(alpha: float) -> None:
    """D_α(P ‖ P) = 0 exactly, and as +0.0 (at α = 0.5 it was −0.0, which prints as −0)."""
    value = dpcap.renyi_dp(np.array([[0.5, 0.5], [0.5, 0.5]]), alpha)
    assert value == 0.0
    assert math.copysign(1.0, value) == 1.0
