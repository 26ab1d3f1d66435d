"""Cuff–Yu conversions: the paper's formulas, their tightness, and their soundness on channels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import ParameterError, bounds
from dpcap.testing import channels


def h(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log(p) - (1 - p) * math.log(1 - p)


def bsc(p: float) -> np.ndarray:
    return np.array([[1 - p, p], [p, 1 - p]])


class TestProperty1:
    @pytest.mark.parametrize("eps", [1e-4, 0.1, 1.0, 3.0])
    def test_formula_and_relaxations(self, eps: float) -> None:
        e = math.exp(eps)
        paper = eps * (e - 1) * (1 - 1 / e) / ((e - 1) + (1 - 1 / e))
        assert bounds.kl_dp_bound(eps) == pytest.approx(paper, rel=1e-12)
        assert bounds.kl_dp_bound(eps) <= min(eps, eps**2)

    def test_small_eps_asymptotics(self) -> None:
        assert bounds.kl_dp_bound(1e-4) == pytest.approx(0.5e-8, rel=1e-6)

    @pytest.mark.parametrize("eps", [0.05, 0.5, 2.0])
    def test_attained_by_binary_randomized_response(self, eps: float) -> None:
        W = dpcap.mechanisms.randomized_response(2, eps)
        assert dpcap.kl_dp(W) == pytest.approx(bounds.kl_dp_bound(eps), rel=1e-12)

    def test_vectorised(self) -> None:
        values = bounds.kl_dp_bound([0.0, 1.0, math.inf])
        assert values[0] == 0.0
        assert values[2] == math.inf


class TestLemma2:
    @pytest.mark.parametrize("p", [0.001, 0.1, 0.3, 0.49])
    def test_round_trip_with_bsc_capacity(self, p: float) -> None:
        capacity = math.log(2) - h(p)  # BSC(p) capacity; its two rows are 1 − 2p apart in TV
        assert bounds.delta_from_midp(capacity) == pytest.approx(1 - 2 * p, abs=1e-12)
        assert dpcap.tv_dp(bsc(p)) == pytest.approx(1 - 2 * p, abs=1e-15)

    def test_range_and_loose_form(self) -> None:
        assert bounds.delta_from_midp(0.0) == 0.0
        assert bounds.delta_from_midp(math.log(2)) == 1.0
        assert bounds.delta_from_midp(5.0) == 1.0
        eps = np.linspace(0, math.log(2), 50)
        assert (bounds.delta_from_midp(eps) <= np.sqrt(2 * eps) + 1e-12).all()

    def test_binary_entropy_inverse(self) -> None:
        x = np.linspace(0, 0.5, 101)
        np.testing.assert_allclose(
            bounds.binary_entropy_inverse(bounds.binary_entropy(x)), x, atol=1e-12
        )
        with pytest.raises(ParameterError, match=r"v must be in \[0, ln 2\]"):
            bounds.binary_entropy_inverse(0.8)


class TestLemma3:
    def test_formula(self) -> None:
        d = 0.1
        assert bounds.midp_from_delta(d, n_outputs=4) == pytest.approx(
            2 * h(d) + 2 * d * math.log(4), rel=1e-14
        )
        assert bounds.midp_from_delta(d, n_outputs=10, max_entry_size=2) == pytest.approx(
            2 * h(d) + 2 * d * math.log(3), rel=1e-14
        )
        assert bounds.midp_from_delta(0.0, n_outputs=3) == 0.0

    @pytest.mark.parametrize("p", [0.01, 0.2, 0.45])
    def test_sound_on_bsc(self, p: float) -> None:
        delta = dpcap.tv_dp(bsc(p))
        capacity = math.log(2) - h(p)
        assert capacity <= bounds.midp_from_delta(delta, n_outputs=2, max_entry_size=2)

    def test_needs_a_cardinality(self) -> None:
        with pytest.raises(ParameterError, match=r"a cardinality bound is needed"):
            bounds.midp_from_delta(0.1)
        with pytest.raises(ParameterError, match=r"delta must be in \[0, 1\], got 1\.5"):
            bounds.midp_from_delta(1.5, n_outputs=2)
        with pytest.raises(ParameterError, match=r"n_outputs must be an integer >= 1, got 0"):
            bounds.midp_from_delta(0.1, n_outputs=0)


class TestProperty3:
    def test_formula_and_identity(self) -> None:
        eps, delta, ep = 1.0, 0.1, 0.4
        paper = 1 - (math.exp(ep) + 1) * (1 - delta) / (math.exp(eps) + 1)
        assert bounds.tradeoff(eps, delta, ep) == pytest.approx(paper, rel=1e-14)
        assert bounds.tradeoff(eps, delta, eps) == pytest.approx(delta, abs=1e-15)
        assert bounds.tradeoff(eps, delta, 0.0) > delta

    @pytest.mark.parametrize("eps", [0.5, 1.5])
    def test_sound_on_a_random_channel(self, eps: float) -> None:
        rng = np.random.default_rng(2)
        W = rng.dirichlet(np.ones(6), size=5)
        delta = dpcap.dp_delta(W, eps)
        for ep in np.linspace(0, eps, 7):
            assert dpcap.dp_delta(W, ep) <= bounds.tradeoff(eps, delta, ep) + 1e-12

    def test_errors(self) -> None:
        with pytest.raises(ParameterError, match=r"eps_prime must be <= eps"):
            bounds.tradeoff(0.5, 0.1, 1.0)
        with pytest.raises(ParameterError, match=r"eps must be finite"):
            bounds.tradeoff(math.inf, 0.1, 1.0)


class TestCorollary5:
    def test_formula(self) -> None:
        eps, k = 0.001, 2
        d = k * math.sqrt(2 * eps)
        m = min(50, 3**k + 1)
        assert bounds.group_midp_bound(eps, k, n_outputs=50, max_entry_size=3) == pytest.approx(
            2 * h(d) + 2 * d * math.log(m), rel=1e-13
        )

    def test_single_entry_is_lemma_2_then_lemma_3(self) -> None:
        eps = 0.01
        assert bounds.group_midp_bound(eps, 1, n_outputs=5) == pytest.approx(
            bounds.midp_from_delta(math.sqrt(2 * eps), n_outputs=5)
        )

    def test_vacuous_delta_is_capped(self) -> None:
        assert bounds.group_midp_bound(1.0, 3, n_outputs=4) == pytest.approx(2 * math.log(4))

    def test_errors(self) -> None:
        with pytest.raises(ParameterError, match=r"k must be an integer >= 1, got 0"):
            bounds.group_midp_bound(0.1, 0, n_outputs=3)


class TestMinEntropy:
    @pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
    def test_attained_by_binary_randomized_response(self, eps: float) -> None:
        W = dpcap.mechanisms.randomized_response(2, eps)
        assert dpcap.max_leakage(W) == pytest.approx(bounds.min_entropy_leakage_bound(eps))
        assert bounds.min_entropy_leakage_bound(eps) == pytest.approx(
            math.log(2 * math.exp(eps) / (1 + math.exp(eps))), rel=1e-14
        )

    @given(channels(min_inputs=2, max_inputs=2, max_outputs=6, allow_zeros=False), st.data())
    @settings(max_examples=50, deadline=None)
    def test_sound_on_two_input_channels(self, W: np.ndarray, data: st.DataObject) -> None:
        eps = dpcap.dp_epsilon(W)
        assert dpcap.max_leakage(W) <= bounds.min_entropy_leakage_bound(eps) + 1e-12


def test_cardinality_bounds_are_keyword_only() -> None:
    """The signature rule of issue 9: the converted quantity positional-only, the conversion's
    parameter (ε', k) positional-or-keyword, the cardinality bounds keyword-only."""
    with pytest.raises(TypeError):
        bounds.midp_from_delta(0.1, 4)  # type: ignore[misc]
    with pytest.raises(TypeError):
        bounds.group_midp_bound(0.01, 2, 4)  # type: ignore[misc]
    assert bounds.group_midp_bound(0.01, k=2, n_outputs=4) == bounds.group_midp_bound(
        0.01, 2, n_outputs=4
    )
    assert bounds.tradeoff(1.0, 0.1, eps_prime=0.5) == bounds.tradeoff(1.0, 0.1, 0.5)
