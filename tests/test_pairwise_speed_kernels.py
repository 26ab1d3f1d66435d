"""The δ(ε) kernel's ways of summing bins, its reused chunk buffers and its bin look-up into
given buffers, each against a direct evaluation of ``max Σ_y (a_y − e^ε b_y)_+`` over every
ordered pair of rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcap.solvers import hockey, pairwise


def direct(W: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """δ(ε) over all ordered pairs of distinct rows, by broadcasting, one ε at a time."""
    out = np.empty(len(eps))
    for k, e in enumerate(eps):
        excess = np.maximum(W[:, None, :] - math.exp(e) * W[None, :, :], 0.0).sum(axis=-1)
        np.fill_diagonal(excess, 0.0)
        out[k] = excess.max()
    return out


def pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    I, J = np.triu_indices(n, k=1)
    return I.astype(np.int64), J.astype(np.int64)


def with_ties_and_zeros(seed: int, n: int = 12, k: int = 9) -> np.ndarray:
    """Rows with zeros (0/0 and p/0 ratios) and repeated entries (ratios exactly 1)."""
    rng = np.random.default_rng(seed)
    W = rng.dirichlet(np.full(k, 0.5), size=n)
    W[::3, 0] = 0.0
    W[1::4, 1:3] = 0.0
    W[2::5, 4] = W[0, 4]
    out: np.ndarray = W / W.sum(axis=1, keepdims=True)
    return out


class TestBinSums:
    def test_many_levels_take_the_running_sums(self) -> None:
        W = with_ties_and_zeros(1)
        eps = np.linspace(0.0, 3.0, 200)  # 400 bins: past MATMUL_BINS
        assert 2 * len(eps) > hockey.MATMUL_BINS
        np.testing.assert_allclose(
            hockey.hockey_curve(W, *pairs(len(W)), eps), direct(W, eps), rtol=0, atol=1e-15
        )

    def test_matrix_product_equals_running_sums(self, monkeypatch: pytest.MonkeyPatch) -> None:
        W = with_ties_and_zeros(2)
        eps = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 30.0])
        by_product = hockey.hockey_curve(W, *pairs(len(W)), eps)
        monkeypatch.setattr(hockey, "MATMUL_BINS", 0)
        by_sums = hockey.hockey_curve(W, *pairs(len(W)), eps)
        np.testing.assert_allclose(by_product, by_sums, rtol=0, atol=1e-16)
        np.testing.assert_allclose(by_product, direct(W, eps), rtol=0, atol=1e-15)

    def test_tiny_mass_above_the_threshold_is_kept(self) -> None:
        """Sums run over the bins they need: 1 − e^{ε}·q next to a mass near 1 is not lost."""
        p = 1.0 / (1.0 + 2.0 * math.exp(-40.0))
        q = p * math.exp(-40.0)
        W = np.array([[p, q, q], [q, p, q], [q, q, p]])
        curve = hockey.hockey_curve(W, *pairs(3), np.array([39.0]))
        assert curve[0] == pytest.approx(p - math.exp(39.0) * q, rel=1e-14)


class TestChunkBuffers:
    @pytest.mark.parametrize("per_chunk", [1, 7, 50])
    def test_partial_last_chunk(self, monkeypatch: pytest.MonkeyPatch, per_chunk: int) -> None:
        W = with_ties_and_zeros(3, n=13)  # 78 pairs: the last chunk is short
        eps = np.linspace(0.0, 4.0, 9)
        monkeypatch.setattr(pairwise, "CHUNK_ELEMENTS", per_chunk * 2 * len(eps))
        np.testing.assert_allclose(
            hockey.hockey_curve(W, *pairs(len(W)), eps), direct(W, eps), rtol=0, atol=1e-15
        )

    def test_several_full_chunks(self) -> None:
        rng = np.random.default_rng(6)
        W = rng.dirichlet(np.ones(50), size=60)  # 1770 pairs × 50 outputs: 2 chunks of 2**16
        eps = np.linspace(0.0, 4.0, 21)
        np.testing.assert_allclose(
            hockey.hockey_curve(W, *pairs(len(W)), eps), direct(W, eps), rtol=0, atol=1e-15
        )

    def test_ratios_from_logs(self) -> None:
        rng = np.random.default_rng(4)
        W = rng.dirichlet(np.ones(16), size=20)
        eps = np.linspace(0.0, 3.0, 13)
        curve = hockey.hockey_curve(W, *pairs(len(W)), eps, np.log(W))
        np.testing.assert_allclose(curve, direct(W, eps), rtol=0, atol=1e-15)


class TestBinTableBuffers:
    def test_given_buffers_give_searchsorted(self) -> None:
        rng = np.random.default_rng(5)
        eps = np.array([0.0, 1e-12, 0.3, 1.0, 5.0])
        edges = np.unique(np.concatenate([np.exp(-eps), np.exp(eps)]))
        ratio = np.exp(rng.normal(0.0, 3.0, (6, 40)))
        ratio[0, : len(edges)] = edges
        ratio[1, : len(edges)] = np.nextafter(edges, 0.0)
        ratio[3, : len(edges)] = np.nextafter(edges, np.inf)
        ratio[2, :5] = [0.0, np.inf, np.nan, 5e-324, 1e308]
        out = np.empty(ratio.shape, dtype=np.int64)
        cell = np.empty(ratio.shape, dtype=np.int64)
        spare, flag = np.empty(ratio.shape), np.empty(ratio.shape, dtype=bool)
        got = hockey._BinTable(edges).bins(ratio, out=out, cell=cell, spare=spare, flag=flag)
        assert got is out
        np.testing.assert_array_equal(out, np.searchsorted(edges, ratio, side="right"))
