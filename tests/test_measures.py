"""Information measures: closed forms, high-precision references and theorems as properties."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import ParameterError, PriorError
from dpcap.testing import channels, distributions

mp.mp.dps = 40
ALPHAS = [0.0, 0.3, 0.5, 1.0, 1.5, 2.0, 7.0, math.inf]


def h(p: float) -> float:
    return -p * math.log(p) - (1 - p) * math.log(1 - p)


def mp_renyi(p: list[float], q: list[float], alpha: float) -> mp.mpf:
    """Definition of D_α in 40-digit arithmetic (0 < α ≠ 1, full supports).

    The float inputs are renormalised in high precision: near α = 1 a total of 1 ± 1e-17
    would otherwise shift the result by 1e-17 / (α − 1).
    """
    a = mp.mpf(alpha)
    P = [mp.mpf(x) for x in p]
    Q = [mp.mpf(x) for x in q]
    P, Q = [x / mp.fsum(P) for x in P], [x / mp.fsum(Q) for x in Q]
    s = mp.fsum(pi**a * qi ** (1 - a) for pi, qi in zip(P, Q, strict=True))
    return mp.log(s) / (a - 1)


class TestDivergences:
    def test_entropy(self) -> None:
        assert dpcap.entropy([0.25] * 4) == pytest.approx(math.log(4), abs=1e-15)
        assert dpcap.entropy([0.25] * 4, unit="bits") == pytest.approx(2.0, abs=1e-15)
        assert dpcap.entropy([1.0, 0.0]) == 0.0

    def test_kl_closed_form_and_infinity(self) -> None:
        p, q = [0.3, 0.7], [0.6, 0.4]
        expected = 0.3 * math.log(0.5) + 0.7 * math.log(0.7 / 0.4)
        assert dpcap.kl_divergence(p, q) == pytest.approx(expected, rel=1e-14)
        assert dpcap.kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
        assert dpcap.kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(math.log(2), rel=1e-15)

    @pytest.mark.parametrize("alpha", [0.3, 0.5, 0.999, 1.0001, 1.5, 2.0, 7.0, 40.0])
    def test_renyi_matches_its_definition(self, alpha: float) -> None:
        p, q = [0.1, 0.2, 0.7], [0.5, 0.25, 0.25]
        expected = float(mp_renyi(p, q, alpha))
        assert dpcap.renyi_divergence(p, q, alpha) == pytest.approx(expected, rel=1e-12)

    def test_renyi_special_orders(self) -> None:
        p, q = [0.1, 0.0, 0.9], [0.5, 0.25, 0.25]
        assert dpcap.renyi_divergence(p, q, 0.0) == pytest.approx(-math.log(0.75), rel=1e-15)
        assert dpcap.renyi_divergence(p, q, 1.0) == pytest.approx(dpcap.kl_divergence(p, q))
        assert dpcap.renyi_divergence(p, q, math.inf) == pytest.approx(math.log(3.6), rel=1e-15)
        assert dpcap.renyi_divergence([0.5, 0.5], [1.0, 0.0], 2.0) == math.inf
        assert dpcap.renyi_divergence([0.5, 0.5], [1.0, 0.0], 0.5) == pytest.approx(
            -2 * math.log(math.sqrt(0.5)), rel=1e-14
        )
        assert dpcap.renyi_divergence([0.0, 1.0], [1.0, 0.0], 0.5) == math.inf

    @pytest.mark.parametrize("delta", [1e-9, -1e-9, 1e-6])
    def test_renyi_is_continuous_at_order_one(self, delta: float) -> None:
        p, q = [0.1, 0.2, 0.7], [0.5, 0.25, 0.25]
        expected = float(mp_renyi(p, q, float(mp.mpf(1) + delta)))
        assert dpcap.renyi_divergence(p, q, 1 + delta) == pytest.approx(expected, rel=1e-9)

    def test_hockey_stick_and_tv(self) -> None:
        p, q = [0.75, 0.25], [0.25, 0.75]
        assert dpcap.tv_distance(p, q) == 0.5
        assert dpcap.hockey_stick(p, q, 1.0) == 0.5
        assert dpcap.hockey_stick(p, q, 2.0) == pytest.approx(0.25, abs=1e-16)
        np.testing.assert_allclose(dpcap.hockey_stick(p, q, [1.0, 2.0, 3.0]), [0.5, 0.25, 0.0])
        assert dpcap.hockey_stick([0.5, 0.5], [1.0, 0.0], math.inf) == 0.5

    @given(st.data())
    @settings(max_examples=60, deadline=None)
    def test_renyi_is_nondecreasing_in_order(self, data: st.DataObject) -> None:
        n = data.draw(st.integers(2, 5))
        p, q = data.draw(distributions(n)), data.draw(distributions(n))
        values = [dpcap.renyi_divergence(p, q, a) for a in ALPHAS]
        for lo, hi in itertools.pairwise(values):
            assert lo <= hi * (1 + 1e-9) + 1e-12

    @given(st.data())
    @settings(max_examples=60, deadline=None)
    def test_hockey_stick_between_zero_and_tv(self, data: st.DataObject) -> None:
        n = data.draw(st.integers(2, 6))
        p, q = data.draw(distributions(n)), data.draw(distributions(n))
        gamma = data.draw(st.floats(1.0, 50.0))
        value = dpcap.hockey_stick(p, q, gamma)
        assert 0.0 <= value <= dpcap.tv_distance(p, q) + 1e-15

    @given(st.data())
    @settings(max_examples=60, deadline=None)
    def test_data_processing(self, data: st.DataObject) -> None:
        n = data.draw(st.integers(2, 5))
        p, q = data.draw(distributions(n)), data.draw(distributions(n))
        V = data.draw(channels(min_inputs=n, max_inputs=n))
        pv, qv = p @ V, q @ V
        pv, qv = pv / pv.sum(), qv / qv.sum()
        assert dpcap.kl_divergence(pv, qv) <= dpcap.kl_divergence(p, q) + 1e-12
        for a in (0.5, 2.0, math.inf):
            assert dpcap.renyi_divergence(pv, qv, a) <= dpcap.renyi_divergence(p, q, a) + 1e-12
        gamma = data.draw(st.floats(1.0, 20.0))
        assert dpcap.hockey_stick(pv, qv, gamma) <= dpcap.hockey_stick(p, q, gamma) + 1e-12

    @given(st.data())
    @settings(max_examples=40, deadline=None)
    def test_relabelling_invariance(self, data: st.DataObject) -> None:
        n = data.draw(st.integers(2, 6))
        p, q = data.draw(distributions(n)), data.draw(distributions(n))
        perm = np.asarray(data.draw(st.permutations(range(n))))
        for a in (0.0, 0.5, 1.0, 3.0, math.inf):
            assert dpcap.renyi_divergence(p[perm], q[perm], a) == pytest.approx(
                dpcap.renyi_divergence(p, q, a), rel=1e-12, abs=1e-14
            )


class TestChannelInformation:
    @pytest.mark.parametrize("p", [0.01, 0.1, 0.3, 0.5])
    def test_bsc_mutual_information_at_uniform_prior(self, p: float) -> None:
        W = [[1 - p, p], [p, 1 - p]]
        assert dpcap.mutual_information([0.5, 0.5], W) == pytest.approx(
            math.log(2) - h(p), rel=1e-13, abs=1e-16
        )

    def test_conditional_mutual_information_of_the_one_time_pad(self) -> None:
        m = 3
        W = np.zeros((m * m, m))
        for x1 in range(m):
            for x2 in range(m):
                W[x1 * m + x2, (x1 + x2) % m] = 1.0
        M = dpcap.Mechanism(W, (m, m))
        uniform = np.full((m, m), 1 / m**2)
        assert dpcap.conditional_mutual_information(uniform, M, 0) == pytest.approx(math.log(m))
        # ... while X_1 alone is independent of Y under independent uniform entries
        marginal = W.reshape(m, m, m).mean(axis=1)
        assert dpcap.mutual_information(np.full(m, 1 / m), marginal) == pytest.approx(0, abs=1e-15)

    def test_conditional_mutual_information_averages_slices(self) -> None:
        rng = np.random.default_rng(3)
        W = rng.dirichlet(np.ones(3), size=6)
        M = dpcap.Mechanism(W, (2, 3))
        joint = rng.dirichlet(np.ones(6)).reshape(2, 3)
        expected = 0.0
        for c in range(2):  # entry 1 given X_0 = c
            weight = joint[c].sum()
            expected += weight * dpcap.mutual_information(joint[c] / weight, M.slice(1, (c,)))
        assert dpcap.conditional_mutual_information(joint, M, 1) == pytest.approx(expected)

    @pytest.mark.parametrize("alpha", [0.5, 2.0, 5.0])
    @pytest.mark.parametrize("k", [2, 4])
    def test_sibson_symmetric_closed_form(self, alpha: float, k: int) -> None:
        W = dpcap.mechanisms.randomized_response(k, 1.2).matrix
        expected = (
            alpha
            / (alpha - 1)
            * math.log(
                sum((sum(W[x, y] ** alpha for x in range(k)) / k) ** (1 / alpha) for y in range(k))
            )
        )
        assert dpcap.sibson_mi(np.full(k, 1 / k), W, alpha) == pytest.approx(expected, rel=1e-13)

    def test_sibson_limits(self) -> None:
        W = np.array([[0.6, 0.4, 0.0], [0.0, 0.5, 0.5]])
        p = np.array([0.3, 0.7])
        assert dpcap.sibson_mi(p, W, 1.0) == pytest.approx(dpcap.mutual_information(p, W))
        assert dpcap.sibson_mi(p, W, math.inf) == pytest.approx(dpcap.max_leakage(W))
        assert dpcap.sibson_mi(p, W, 0.0) == pytest.approx(-math.log(1.0))  # y=1 always possible
        assert dpcap.sibson_mi(p, W, 1e-6) == pytest.approx(0.0, abs=1e-5)
        for delta in (1e-9, -1e-9):
            assert dpcap.sibson_mi(p, W, 1 + delta) == pytest.approx(
                dpcap.mutual_information(p, W), rel=1e-8
            )

    def test_arimoto_against_its_definition(self) -> None:
        W = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4]])
        p = np.array([0.5, 0.3, 0.2])
        for alpha in (0.5, 2.0, 3.0):
            a = mp.mpf(alpha)
            h_x = mp.log(mp.fsum(mp.mpf(px) ** a for px in p)) / (1 - a)
            joint = [[mp.mpf(p[x]) * mp.mpf(W[x, y]) for y in range(3)] for x in range(3)]
            inner = mp.fsum(
                mp.fsum(joint[x][y] ** a for x in range(3)) ** (1 / a) for y in range(3)
            )
            h_xy = a / (1 - a) * mp.log(inner)
            expected = float(h_x - h_xy)
            assert dpcap.arimoto_mi(p, W, alpha) == pytest.approx(expected, rel=1e-12)
        assert dpcap.arimoto_mi(p, W, math.inf) == pytest.approx(dpcap.min_entropy_leakage(p, W))
        assert dpcap.arimoto_mi(p, W, 1.0) == pytest.approx(dpcap.mutual_information(p, W))

    def test_min_entropy_leakage(self) -> None:
        W = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
        assert dpcap.min_entropy_leakage([0.5, 0.5], W) == pytest.approx(dpcap.max_leakage(W))
        # p = (0.6, 0.4): column maxima of p_x W_xy are 0.42, 0.24, 0.12
        assert dpcap.min_entropy_leakage([0.6, 0.4], W) == pytest.approx(math.log(0.78 / 0.6))
        # the guess "x = 0" is best whatever Y says: no leakage
        assert dpcap.min_entropy_leakage([0.9, 0.1], W) == pytest.approx(0.0, abs=1e-15)

    @given(channels(), st.data())
    @settings(max_examples=50, deadline=None)
    def test_mutual_information_bounds_and_data_processing(
        self, W: np.ndarray, data: st.DataObject
    ) -> None:
        p = data.draw(distributions(W.shape[0]))
        value = dpcap.mutual_information(p, W)
        assert -1e-15 <= value <= math.log(min(W.shape)) + 1e-12
        V = data.draw(channels(min_inputs=W.shape[1], max_inputs=W.shape[1]))
        WV = W @ V
        WV /= WV.sum(axis=1, keepdims=True)
        assert dpcap.mutual_information(p, WV) <= value + 1e-12
        for a in (0.5, 2.0):
            assert dpcap.sibson_mi(p, W, a) >= -1e-15


class TestErrors:
    def test_messages_name_the_argument(self) -> None:
        with pytest.raises(ParameterError, match=r"alpha must be in \[0, inf\], got -1"):
            dpcap.renyi_divergence([0.5, 0.5], [0.5, 0.5], -1)
        with pytest.raises(ParameterError, match=r"alpha must be in \[0, inf\], got nan"):
            dpcap.sibson_mi([0.5, 0.5], np.eye(2), float("nan"))
        with pytest.raises(PriorError, match=r"prior must sum to 1 .* got a total of 0\.8"):
            dpcap.mutual_information([0.4, 0.4], np.eye(2))
        with pytest.raises(PriorError, match=r"prior must have length 2, got length 3"):
            dpcap.mutual_information([0.2, 0.4, 0.4], np.eye(2))
        with pytest.raises(PriorError, match=r"q must have length 2"):
            dpcap.kl_divergence([0.5, 0.5], [1.0])
        with pytest.raises(
            ParameterError, match=r"unit must be one of \['bits', 'nats'\], got 'dits'"
        ):
            dpcap.entropy([1.0], unit="dits")
        with pytest.raises(ParameterError, match=r"gamma must be >= 0"):
            dpcap.hockey_stick([0.5, 0.5], [0.5, 0.5], -1.0)
        with pytest.raises(PriorError, match=r"joint must have shape \(2, 2\), got shape \(4,\)"):
            dpcap.conditional_mutual_information(
                np.full(4, 0.25), dpcap.Mechanism(np.eye(4), (2, 2)), 0
            )


def test_order_is_positional_or_keyword_and_data_positional_only() -> None:
    """The signature rule of issue 9: data positional-only, the parameter α (γ) either way."""
    p, q = [0.25, 0.75], [0.5, 0.5]
    W = [[0.9, 0.1], [0.2, 0.8]]
    assert dpcap.renyi_divergence(p, q, alpha=2.0) == dpcap.renyi_divergence(p, q, 2.0)
    assert dpcap.hockey_stick(p, q, gamma=1.0) == dpcap.hockey_stick(p, q, 1.0)
    for f in (dpcap.sibson_mi, dpcap.arimoto_mi, dpcap.renyi_mi, dpcap.augustin_mi):
        assert f(p, W, alpha=2.0) == f(p, W, 2.0)
    with pytest.raises(TypeError):
        dpcap.renyi_divergence(p=p, q=q, alpha=2.0)  # type: ignore[call-arg]


def test_conditional_mutual_information_of_a_channel_as_one_entry() -> None:
    W = dpcap.Channel([[0.9, 0.1], [0.2, 0.8]], neighbors="line")
    prior = [0.3, 0.7]
    value = dpcap.conditional_mutual_information(prior, W, 0)
    assert value == pytest.approx(dpcap.mutual_information(prior, W), rel=1e-14)


@pytest.mark.parametrize("alpha", [0.3, 0.5])
def test_renyi_divergence_of_equal_laws_is_plus_zero(alpha: float) -> None:
    """D_α(P ‖ P) = 0 as +0.0: below α = 1, log 1/(α − 1) divides 0 by a negative number."""
    value = dpcap.renyi_divergence([0.5, 0.5], [0.5, 0.5], alpha)
    assert value == 0.0
    assert math.copysign(1.0, value) == 1.0
