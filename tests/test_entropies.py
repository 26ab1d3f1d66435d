"""Entropies and conditional α-informations: closed forms and theorems as properties.

Checked here:

* closed forms: every Rényi entropy of the uniform law on n points is log n; two-point laws by
  hand at α = 0, ½, 2, ∞; Tsallis at q = 0, 2, ∞; H(X|Y) of independent and equal variables;
  Arimoto's H_∞^A(X|Y) = −log Σ_y max_x P(x, y) and H_0^A = log max_y |supp P(·, y)|;
* 40-digit mpmath evaluations of the definitions (Rényi 1961, Tsallis 1988, Arimoto 1977),
  near order 1 included;
* theorems: α ↦ H_α non-increasing, H_∞ ≤ H_α ≤ H_0; S_q → Shannon as q → 1 and
  H_q = log(1 + (1−q) S_q)/(1−q); conditioning reduces entropy H(X|Y) ≤ H(X) (and
  H_α^A(X|Y) ≤ H_α(X)); the chain rule H(X,Y) = H(Y) + H(X|Y); Arimoto's
  H_α(X) − H_α^A(X|Y) = I_α^A(p, W) (:func:`dpcap.measures.arimoto_mi`);
* conditional Sibson information (Esposito, Wu & Gastpar 2021): both kinds are I(X;Y|Z)
  (:func:`dpcap.measures.conditional_mutual_information`) at α = 1; with Z constant they are
  Sibson's I_α^S and D_α(P_XY ‖ P_X P_Y); the closed form is a minimum: never above the
  divergence at a random Q, and attained at the stated minimiser;
* bad input: NaN, −0.0 (a zero), complex, strings, bools, ragged lists, wrong shapes, bad orders.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcap import Mechanism, ParameterError, PriorError, measures
from dpcap.testing import channels, distributions, joint_laws, orders

mp.mp.dps = 40
TOL = 1e-12


def mp_renyi_entropy(p: list[float], alpha: float) -> float:
    a = mp.mpf(alpha)
    P = [mp.mpf(x) for x in p if x > 0]
    total = mp.fsum(P)
    P = [x / total for x in P]
    return float(mp.log(mp.fsum(x**a for x in P)) / (1 - a))


def mp_tsallis(p: list[float], q: float) -> float:
    Q = mp.mpf(q)
    P = [mp.mpf(x) for x in p if x > 0]
    total = mp.fsum(P)
    P = [x / total for x in P]
    return float((1 - mp.fsum(x**Q for x in P)) / (Q - 1))


class TestRenyiEntropy:
    @pytest.mark.parametrize("n", [1, 2, 5, 64])
    @pytest.mark.parametrize("alpha", [0.0, 1e-300, 0.5, 1 - 1e-9, 1.0, 1 + 1e-9, 2.0, 50.0, 1e300])
    def test_uniform_law_has_every_order_log_n(self, n: int, alpha: float) -> None:
        value = measures.renyi_entropy(np.full(n, 1.0 / n), alpha)
        assert value == pytest.approx(math.log(n), rel=1e-13, abs=1e-15)
        assert measures.renyi_entropy(np.full(n, 1.0 / n), math.inf) == pytest.approx(
            math.log(n), rel=1e-15, abs=1e-15
        )

    def test_two_point_law_by_hand(self) -> None:
        p = 0.2
        law = [p, 1 - p, 0.0]
        assert measures.renyi_entropy(law, 0.0) == pytest.approx(math.log(2), rel=1e-15)
        half = 2 * math.log(math.sqrt(p) + math.sqrt(1 - p))
        assert measures.renyi_entropy(law, 0.5) == pytest.approx(half, rel=1e-14)
        two = -math.log(p**2 + (1 - p) ** 2)
        assert measures.renyi_entropy(law, 2.0) == pytest.approx(two, rel=1e-14)
        assert measures.renyi_entropy(law, math.inf) == pytest.approx(-math.log(0.8), rel=1e-15)
        shannon = -p * math.log(p) - (1 - p) * math.log(1 - p)
        assert measures.renyi_entropy(law, 1.0) == pytest.approx(shannon, rel=1e-15)
        assert measures.renyi_entropy(law, 2.0, unit="bits") == pytest.approx(
            two / math.log(2), rel=1e-14
        )

    def test_point_mass_has_zero_entropy_at_every_order(self) -> None:
        for alpha in [0.0, 0.5, 1.0, 2.0, 1e6, math.inf]:
            assert measures.renyi_entropy([0.0, 1.0, -0.0], alpha) == 0.0

    @pytest.mark.parametrize("alpha", [1e-6, 0.3, 0.5, 1 - 1e-7, 1 + 1e-7, 1.5, 2.0, 7.0, 40.0])
    def test_matches_its_definition_in_high_precision(self, alpha: float) -> None:
        p = [0.1, 0.2, 0.0, 0.3, 0.4]
        expected = mp_renyi_entropy(p, alpha)
        assert measures.renyi_entropy(p, alpha) == pytest.approx(expected, rel=1e-12)

    def test_order_one_is_shannon_exactly(self) -> None:
        p = [0.1, 0.2, 0.3, 0.4]
        assert measures.renyi_entropy(p, 1.0) == measures.entropy(p)

    def test_huge_order_approaches_the_min_entropy(self) -> None:
        p = [0.5, 0.3, 0.2]
        a = 1e6
        expected = mp_renyi_entropy(p, a)
        assert measures.renyi_entropy(p, a) == pytest.approx(expected, rel=1e-12)
        # α = 1e300: α/(α−1) log max p, the rest below rounding
        assert measures.renyi_entropy(p, 1e300) == pytest.approx(math.log(2), rel=1e-15)

    @settings(max_examples=150, deadline=None)
    @given(
        st.integers(1, 6).flatmap(lambda n: distributions(n, underflow=True)), orders(), orders()
    )
    def test_non_increasing_in_the_order(self, p: np.ndarray, a: float, b: float) -> None:
        lo, hi = min(a, b), max(a, b)
        h_lo, h_hi = measures.renyi_entropy(p, lo), measures.renyi_entropy(p, hi)
        assert h_hi <= h_lo + TOL * (1 + h_lo)
        h0, hinf = measures.renyi_entropy(p, 0.0), measures.renyi_entropy(p, math.inf)
        assert hinf - TOL <= h_hi <= h0 + TOL


class TestTsallis:
    def test_closed_forms(self) -> None:
        p = [0.5, 0.25, 0.25, 0.0]
        assert measures.tsallis_entropy(p, 2.0) == pytest.approx(1 - (0.25 + 2 / 16), rel=1e-15)
        assert measures.tsallis_entropy(p, 0.0) == pytest.approx(2.0, rel=1e-15)  # |supp| − 1
        assert measures.tsallis_entropy(p, math.inf) == 0.0
        assert measures.tsallis_entropy(p, 1.0) == measures.entropy(p)
        assert measures.tsallis_entropy([1.0, 0.0], 3.0) == 0.0

    @pytest.mark.parametrize("q", [1 - 1e-8, 1 + 1e-8, 1 - 1e-12, 1 + 1e-12])
    def test_tends_to_shannon_in_nats(self, q: float) -> None:
        p = [0.1, 0.2, 0.3, 0.4]
        assert measures.tsallis_entropy(p, q) == pytest.approx(measures.entropy(p), rel=1e-7)
        assert measures.tsallis_entropy(p, q) == pytest.approx(mp_tsallis(p, q), rel=1e-12)

    @pytest.mark.parametrize("q", [0.0, 0.3, 2.0, 5.0, 100.0])
    def test_matches_its_definition_in_high_precision(self, q: float) -> None:
        p = [0.05, 0.15, 0.8]
        assert measures.tsallis_entropy(p, q) == pytest.approx(mp_tsallis(p, q), rel=1e-13)

    def test_subnormal_masses_at_index_zero_do_not_overflow(self) -> None:
        p = [5e-324, 1.0]
        assert measures.tsallis_entropy(p, 0.0) == pytest.approx(1.0, rel=1e-15)

    @settings(max_examples=100, deadline=None)
    @given(st.integers(1, 6).flatmap(distributions), orders(max_value=1e6))
    def test_is_a_transform_of_the_renyi_entropy(self, p: np.ndarray, q: float) -> None:
        if q == 1.0:
            return
        s = measures.tsallis_entropy(p, q)
        h = measures.renyi_entropy(p, q)
        assert s >= 0.0
        # S_q = expm1((1−q) H_q)/(1−q), the well-conditioned way round
        assert math.expm1((1 - q) * h) / (1 - q) == pytest.approx(s, rel=1e-9, abs=1e-12)


def joint_of(p: np.ndarray, W: np.ndarray) -> np.ndarray:
    return p[:, None] * W


class TestConditionalEntropy:
    def test_independent_and_equal_variables(self) -> None:
        px, py = np.array([0.2, 0.8]), np.array([0.5, 0.3, 0.2])
        joint = np.outer(px, py)
        assert measures.conditional_entropy(joint) == pytest.approx(measures.entropy(px), rel=1e-14)
        assert measures.conditional_entropy(np.diag([0.2, 0.3, 0.5])) == 0.0
        assert measures.conditional_entropy([[0.25, 0.25], [0.25, 0.25]], unit="bits") == 1.0

    @settings(max_examples=150, deadline=None)
    @given(joint_laws(max_rows=4, max_cols=4, degenerate=True))
    def test_conditioning_reduces_entropy_and_chain_rule(self, joint: np.ndarray) -> None:
        hxy = measures.entropy(joint.ravel())
        hx, hy = measures.entropy(joint.sum(axis=1)), measures.entropy(joint.sum(axis=0))
        h = measures.conditional_entropy(joint)
        assert 0.0 <= h <= hx + 1e-12
        assert hy + h == pytest.approx(hxy, rel=1e-12, abs=1e-12)


class TestArimotoConditionalEntropy:
    def test_closed_forms_at_zero_one_and_infinity(self) -> None:
        joint = np.array([[0.3, 0.0, 0.1], [0.1, 0.2, 0.0], [0.1, 0.1, 0.1]])
        inf = -math.log(0.3 + 0.2 + 0.1)
        assert measures.arimoto_conditional_entropy(joint, math.inf) == pytest.approx(
            inf, rel=1e-15
        )
        assert measures.arimoto_conditional_entropy(joint, 0.0) == pytest.approx(math.log(3))
        assert measures.arimoto_conditional_entropy(joint, 1.0) == pytest.approx(
            measures.conditional_entropy(joint), rel=1e-14
        )

    @pytest.mark.parametrize("alpha", [0.3, 0.5, 1 - 1e-7, 1 + 1e-7, 2.0, 9.0])
    def test_matches_its_definition_in_high_precision(self, alpha: float) -> None:
        joint = [[0.3, 0.0, 0.1], [0.1, 0.2, 0.0], [0.1, 0.1, 0.1]]
        a = mp.mpf(alpha)
        total = mp.fsum(mp.mpf(v) for row in joint for v in row)  # the float law sums to 1 ± ulp
        cols = [
            mp.fsum((mp.mpf(row[y]) / total) ** a for row in joint if row[y] > 0) ** (1 / a)
            for y in range(3)
        ]
        expected = float(a / (1 - a) * mp.log(mp.fsum(cols)))
        value = measures.arimoto_conditional_entropy(joint, alpha)
        assert value == pytest.approx(expected, rel=1e-11)

    @settings(max_examples=150, deadline=None)
    @given(
        st.integers(2, 4).flatmap(distributions),
        channels(max_inputs=4, max_outputs=4),
        orders(max_value=1e3),
    )
    def test_difference_is_arimoto_information(
        self, p: np.ndarray, W: np.ndarray, alpha: float
    ) -> None:
        if W.shape[0] != p.shape[0]:
            W = np.resize(W, (p.shape[0], W.shape[1]))
            W /= W.sum(axis=1, keepdims=True)
        joint = joint_of(p, W)
        h = measures.renyi_entropy(p, alpha)
        h_cond = measures.arimoto_conditional_entropy(joint, alpha)
        assert h_cond <= h + 1e-12 * (1 + h)  # conditioning reduces Rényi entropy (Arimoto)
        assert h - h_cond == pytest.approx(measures.arimoto_mi(p, W, alpha), rel=1e-8, abs=1e-11)


def database_law(
    law: np.ndarray, M: np.ndarray
) -> np.ndarray:  # P[x1, y, x2] from a law on (x1, x2)
    m1, m2 = law.shape
    out = np.zeros((m1, M.shape[1], m2))
    for a in range(m1):
        for b in range(m2):
            out[a, :, b] = law[a, b] * M[np.ravel_multi_index((a, b), (m1, m2))]
    return out


def divergence_at(P: np.ndarray, R: np.ndarray, alpha: float) -> float:
    """D_α(P ‖ R) from its definition (both of full support where P > 0)."""
    keep = P > 0
    return math.log(np.sum(P[keep] ** alpha * R[keep] ** (1 - alpha))) / (alpha - 1)


class TestConditionalSibson:
    @settings(max_examples=60, deadline=None)
    @given(joint_laws(max_rows=3, max_cols=3), channels(min_inputs=4, max_inputs=9))
    def test_order_one_is_the_conditional_mutual_information(
        self, law: np.ndarray, M: np.ndarray
    ) -> None:
        rows = law.size
        M = np.resize(M, (rows, M.shape[1]))
        M /= M.sum(axis=1, keepdims=True)
        P = database_law(law, M)
        cmi = measures.conditional_mutual_information(law, Mechanism(M, law.shape), 0)
        for kind in ("y|z", "z"):
            value = measures.conditional_sibson_mi(P, 1.0, kind=kind)
            assert value == pytest.approx(cmi, rel=1e-10, abs=1e-13)

    @pytest.mark.parametrize("alpha", [0.0, 0.5, 1 + 1e-9, 2.0, 10.0, math.inf])
    def test_constant_z_gives_the_unconditional_informations(self, alpha: float) -> None:
        p = np.array([0.2, 0.5, 0.3])
        W = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
        P = joint_of(p, W)[:, :, None]
        assert measures.conditional_sibson_mi(P, alpha) == pytest.approx(
            measures.sibson_mi(p, W, alpha), rel=1e-12, abs=1e-15
        )
        assert measures.conditional_sibson_mi(P, alpha, kind="z") == pytest.approx(
            measures.renyi_mi(p, W, alpha), rel=1e-12, abs=1e-15
        )

    def test_order_infinity_is_conditional_maximal_leakage(self) -> None:
        W0 = np.array([[0.9, 0.1], [0.2, 0.8]])
        W1 = np.array([[0.5, 0.5], [0.4, 0.6]])
        P = np.stack(
            [0.5 * joint_of(np.array([0.5, 0.5]), W0), 0.5 * joint_of(np.array([0.5, 0.5]), W1)],
            axis=2,
        )
        expected = max(math.log(0.9 + 0.8), math.log(0.5 + 0.6))
        assert measures.conditional_sibson_mi(P, math.inf) == pytest.approx(expected, rel=1e-14)
        assert measures.conditional_sibson_mi(P, math.inf, unit="bits") == pytest.approx(
            expected / math.log(2), rel=1e-14
        )

    @settings(max_examples=60, deadline=None)
    @given(
        joint_laws(min_rows=6, max_rows=6, min_cols=2, max_cols=3, allow_zeros=False),
        st.sampled_from([0.4, 0.8, 1.5, 3.0]),
        st.lists(st.floats(0.05, 1.0), min_size=18, max_size=18),
    )
    def test_closed_forms_are_the_minima(self, flat: np.ndarray, alpha: float, q: list) -> None:
        P = flat.reshape(2, 3, flat.shape[1])  # X of 2 values, Y of 3, Z
        nz = P.shape[2]
        pz = P.sum(axis=(0, 1))
        px_z = P.sum(axis=1) / pz  # (x, z)
        py_z = P.sum(axis=0) / pz  # (y, z)
        Q = np.resize(np.array(q), (3, nz))
        Q_yz = Q / Q.sum(axis=0)
        ref_yz = px_z[:, None, :] * Q_yz[None, :, :] * pz
        value = measures.conditional_sibson_mi(P, alpha)
        assert value <= divergence_at(P, ref_yz, alpha) + 1e-12
        # the minimiser Q(y|z) ∝ (Σ_x P(x|z) P(y|x,z)^α)^{1/α} attains it
        W = P / P.sum(axis=1, keepdims=True)  # P(y | x, z)
        star = np.sum(px_z[:, None, :] * W**alpha, axis=0) ** (1 / alpha)
        star /= star.sum(axis=0)
        attained = divergence_at(P, px_z[:, None, :] * star[None, :, :] * pz, alpha)
        assert value == pytest.approx(attained, rel=1e-10)
        Qz = Q[0] / Q[0].sum()
        value_z = measures.conditional_sibson_mi(P, alpha, kind="z")
        ref_z = px_z[:, None, :] * py_z[None, :, :] * Qz
        assert value_z <= divergence_at(P, ref_z, alpha) + 1e-12


class TestBadInput:
    @pytest.mark.parametrize(
        ("value", "message"),
        [
            ([0.5, float("nan")], r"p contains NaN"),
            ([0.5 + 1j, 0.5], r"p must be real"),
            ("0.5 0.5", r"p must be .* got the string"),
            ([True, False], r"p must hold numbers, got booleans"),
            ([[0.5], [0.25, 0.25]], r"ragged"),
            ([0.6, 0.6], r"p must sum to 1"),
            ([1.2, -0.2], r"p has a negative entry"),
        ],
    )
    def test_distributions_are_refused(self, value: object, message: str) -> None:
        with pytest.raises(PriorError, match=message):
            measures.renyi_entropy(value, 2.0)
        with pytest.raises(PriorError, match=message):
            measures.tsallis_entropy(value, 2.0)

    @pytest.mark.parametrize("alpha", [-0.5, float("nan"), "2", True, None, 1j])
    def test_orders_are_refused(self, alpha: object) -> None:
        with pytest.raises(ParameterError, match=r"alpha must be"):
            measures.renyi_entropy([0.5, 0.5], alpha)
        with pytest.raises(ParameterError, match=r"alpha must be"):
            measures.arimoto_conditional_entropy([[0.5, 0.5]], alpha)
        with pytest.raises(ParameterError, match=r"alpha must be"):
            measures.conditional_sibson_mi(np.full((1, 1, 1), 1.0), alpha)
        with pytest.raises(ParameterError, match=r"q must be"):
            measures.tsallis_entropy([0.5, 0.5], alpha)

    def test_negative_zero_is_a_zero(self) -> None:
        assert measures.renyi_entropy([-0.0, 1.0], 0.0) == 0.0
        assert measures.conditional_entropy([[0.5, -0.0], [-0.0, 0.5]]) == 0.0

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            ([0.5, 0.5], r"joint must be a 2-D array joint\[x, y\] .* shape \(2,\)"),
            ([[0.5, float("nan")], [0.25, 0.25]], r"joint contains NaN at index \(0, 1\)"),
            ([[0.5, 0.5j]], r"joint must be real"),
            ([[True, False]], r"joint must hold numbers, got booleans"),
            ("joint.npy", r"joint must be .* got the string"),
            ([[0.5, 0.5], [0.5]], r"ragged"),
            ([[0.5, 0.6]], r"joint must sum to 1"),
        ],
    )
    def test_joint_laws_are_refused(self, value: object, message: str) -> None:
        with pytest.raises(PriorError, match=message):
            measures.conditional_entropy(value)
        with pytest.raises(PriorError, match=message):
            measures.arimoto_conditional_entropy(value, 2.0)

    def test_conditional_sibson_needs_three_axes_and_a_known_kind(self) -> None:
        with pytest.raises(PriorError, match=r"joint must be a 3-D array joint\[x, y, z\]"):
            measures.conditional_sibson_mi([[0.5, 0.5]], 2.0)
        with pytest.raises(ParameterError, match=r"kind must be one of \('y\|z', 'z'\)"):
            measures.conditional_sibson_mi(np.full((1, 1, 1), 1.0), 2.0, kind="x")
        with pytest.raises(ParameterError, match=r"unit must be one of"):
            measures.conditional_entropy([[1.0]], unit="dits")
