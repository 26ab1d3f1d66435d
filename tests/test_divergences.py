"""f-divergences: closed forms, agreement with the existing measures, and theorems as properties.

Checked here:

* closed forms: JS of disjoint supports is log 2; the squared Hellinger distance of disjoint
  supports is 1 and their Bhattacharyya coefficient 0 (distance ∞); χ² of two Bernoulli laws
  is (a − b)²/(b(1 − b)); Le Cam, Neyman χ² and reverse KL by hand; the Hellinger divergence
  of orders 0, ½, 1, 2, ∞ (1 − q(supp p), 2H², KL, χ², 0 or ∞); −log BC = ½ D_{1/2};
  JS(p, q) = I(B; Y) for a fair bit B choosing p or q (Lin 1991);
* "kl" and "tv" agree with :func:`dpcap.measures.kl_divergence` and
  :func:`dpcap.measures.tv_distance` to rounding; a callable f gives the named value;
* theorems (Csiszár 1967): data processing D_f(pW ‖ qW) ≤ D_f(p ‖ q) for every named
  divergence and for user callables, over random channels (W acts on a row vector); joint
  convexity; symmetry of TV, Hellinger, JS, Le Cam and BC (and KL's asymmetry);
* bad input: NaN, −0.0 (a zero), complex, strings, bools, ragged lists, lengths that differ, f
  neither callable nor a known name, f(1) ≠ 0, f failing, a missing slope at infinity.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcap import ParameterError, PriorError, divergences, measures
from dpcap.testing import channels, distributions

NAMES = tuple(divergences.F_DIVERGENCES)


def _xlogx(t: float) -> float:
    return t * math.log(t) if t > 0 else 0.0


#: Each named divergence as a user callable, with its f(0) limit built in and f'(∞).
GENERATORS: dict[str, tuple[Callable[[float], float], float]] = {
    "kl": (_xlogx, math.inf),
    "reverse_kl": (lambda t: -math.log(t) if t > 0 else math.inf, 0.0),
    "tv": (lambda t: abs(t - 1) / 2, 0.5),
    "hellinger": (lambda t: (1 - math.sqrt(t)) ** 2 / 2, 0.5),
    "chi2": (lambda t: (t - 1) ** 2, math.inf),
    "neyman_chi2": (lambda t: (1 - t) ** 2 / t if t > 0 else math.inf, 1.0),
    "jensen_shannon": (
        lambda t: (_xlogx(t) - (1 + t) * math.log((1 + t) / 2)) / 2,
        math.log(2) / 2,
    ),
    "le_cam": (lambda t: (1 - t) ** 2 / (2 * (1 + t)), 0.5),
}

#: Convex functions with f(1) = 0 that are not among the names (with f'(∞)).
USER_GENERATORS: list[tuple[Callable[[float], float], float]] = [
    (lambda t: (t - 1) ** 4, math.inf),
    (lambda t: abs(t - 1) ** 1.5, math.inf),
    (lambda t: max(t - 2.0, 0.0) - max(1 - 2.0, 0.0), 1.0),  # E_2 hockey-stick
    (lambda t: (math.sqrt(t) - 1) ** 2 + (t - 1) ** 2, math.inf),
]


def pairs(n_min: int = 1, n_max: int = 5, **kwargs: bool) -> st.SearchStrategy:
    return st.integers(n_min, n_max).flatmap(
        lambda n: st.tuples(distributions(n, **kwargs), distributions(n, **kwargs))
    )


def close_or_below(small: float, big: float) -> bool:
    return small <= big + 1e-10 * (1 + abs(big)) or math.isinf(big)


class TestClosedForms:
    def test_disjoint_supports(self) -> None:
        p, q = [0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.3, 0.7]
        assert measures.jensen_shannon_divergence(p, q) == pytest.approx(math.log(2), rel=1e-15)
        assert measures.jensen_shannon_divergence(p, q, unit="bits") == pytest.approx(1.0)
        assert measures.f_divergence(p, q, "hellinger") == pytest.approx(1.0, rel=1e-15)
        assert measures.hellinger_distance(p, q) == pytest.approx(1.0, rel=1e-15)
        assert measures.bhattacharyya_coefficient(p, q) == 0.0
        assert measures.bhattacharyya_distance(p, q) == math.inf
        assert measures.f_divergence(p, q, "tv") == 1.0
        assert measures.f_divergence(p, q, "le_cam") == pytest.approx(1.0, rel=1e-15)
        assert measures.chi2_divergence(p, q) == math.inf
        assert measures.f_divergence(p, q, "neyman_chi2") == math.inf

    @pytest.mark.parametrize(("a", "b"), [(0.5, 0.9), (0.1, 0.2), (0.99, 0.01), (0.0, 0.5)])
    def test_chi2_of_two_bernoulli_laws(self, a: float, b: float) -> None:
        expected = (a - b) ** 2 / (b * (1 - b))
        assert measures.chi2_divergence([a, 1 - a], [b, 1 - b]) == pytest.approx(
            expected, rel=1e-14
        )
        # Neyman's χ² swaps the roles: (a − b)²/(a(1 − a)), ∞ when a is 0 or 1
        neyman = measures.f_divergence([a, 1 - a], [b, 1 - b], "neyman_chi2")
        assert neyman == (
            math.inf if a in (0.0, 1.0) else pytest.approx((a - b) ** 2 / (a * (1 - a)))
        )

    def test_pearson_chi2_is_infinite_on_a_zero_of_q(self) -> None:
        assert measures.chi2_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
        assert measures.chi2_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(1.0)

    def test_hellinger_and_bhattacharyya_by_hand(self) -> None:
        p, q = [0.2, 0.8], [0.5, 0.5]
        bc = math.sqrt(0.1) + math.sqrt(0.4)
        assert measures.bhattacharyya_coefficient(p, q) == pytest.approx(bc, rel=1e-15)
        assert measures.f_divergence(p, q, "hellinger") == pytest.approx(1 - bc, rel=1e-13)
        assert measures.hellinger_distance(p, q) == pytest.approx(math.sqrt(1 - bc), rel=1e-13)
        assert measures.bhattacharyya_distance(p, q) == pytest.approx(-math.log(bc), rel=1e-14)
        assert measures.bhattacharyya_distance(p, q, unit="bits") == pytest.approx(
            -math.log2(bc), rel=1e-14
        )
        assert measures.bhattacharyya_distance(p, q) == pytest.approx(
            0.5 * measures.renyi_divergence(p, q, 0.5), rel=1e-13
        )

    def test_le_cam_and_reverse_kl_by_hand(self) -> None:
        p, q = [0.2, 0.8, 0.0], [0.5, 0.25, 0.25]
        expected = 0.5 * (0.09 / 0.7 + 0.3025 / 1.05 + 0.0625 / 0.25)
        assert measures.f_divergence(p, q, "le_cam") == pytest.approx(expected, rel=1e-14)
        assert measures.f_divergence(p, q, "reverse_kl") == math.inf  # q ≫ p fails
        assert measures.f_divergence(q, p, "reverse_kl") == pytest.approx(
            measures.kl_divergence(p, q), rel=1e-15
        )

    @pytest.mark.parametrize("gap", [1e-3, 1e-7, 1e-12])
    def test_nearly_equal_laws_keep_their_digits(self, gap: float) -> None:
        """Hellinger, Bhattacharyya and JS as p → q, against 50-digit evaluations of the
        definitions at the validated (renormalised) inputs."""
        mp.mp.dps = 50
        P, Q = np.array([0.3, 0.7]), np.array([0.3 + gap, 0.7 - gap])
        P, Q = P / P.sum(), Q / Q.sum()  # what validation does to a total of 1 ± ulp
        ps, qs = [mp.mpf(float(x)) for x in P], [mp.mpf(float(x)) for x in Q]
        h2 = mp.fsum((mp.sqrt(a) - mp.sqrt(b)) ** 2 for a, b in zip(ps, qs, strict=True)) / 2
        ms = [(a + b) / 2 for a, b in zip(ps, qs, strict=True)]
        js = mp.fsum(
            a * mp.log(a / c) + b * mp.log(b / c) for a, b, c in zip(ps, qs, ms, strict=True)
        )
        assert measures.f_divergence(P, Q, "hellinger") == pytest.approx(float(h2), rel=1e-13)
        assert measures.bhattacharyya_distance(P, Q) == pytest.approx(
            float(-mp.log(1 - h2)), rel=1e-13
        )
        assert measures.jensen_shannon_divergence(P, Q) == pytest.approx(float(js / 2), rel=1e-12)

    def test_jensen_shannon_is_the_information_of_a_fair_choice(self) -> None:
        p, q = np.array([0.1, 0.6, 0.3]), np.array([0.5, 0.0, 0.5])
        mi = measures.mutual_information([0.5, 0.5], np.vstack([p, q]))
        assert measures.jensen_shannon_divergence(p, q) == pytest.approx(mi, rel=1e-13)
        m = (p + q) / 2
        direct = measures.entropy(m) - (measures.entropy(p) + measures.entropy(q)) / 2
        assert measures.jensen_shannon_divergence(p, q) == pytest.approx(direct, rel=1e-13)

    def test_hellinger_divergence_orders(self) -> None:
        p, q = [0.2, 0.8, 0.0], [0.5, 0.25, 0.25]
        bc = math.sqrt(0.1) + math.sqrt(0.2)
        H = measures.hellinger_divergence
        assert H(p, q, 0.0) == pytest.approx(0.25, rel=1e-14)  # 1 − q(supp p)
        assert H(p, q, 0.5) == pytest.approx(2 * (1 - bc), rel=1e-13)
        assert H(p, q, 1.0) == pytest.approx(measures.kl_divergence(p, q), rel=1e-15)
        assert H(p, q, 2.0) == pytest.approx(measures.chi2_divergence(p, q), rel=1e-13)
        assert H(p, q, 1 + 1e-9) == pytest.approx(measures.kl_divergence(p, q), rel=1e-8)
        assert H(p, q, math.inf) == math.inf
        assert H(p, p, math.inf) == 0.0
        assert H(q, p, 3.0) == math.inf
        assert H([1.0, 0.0], [0.0, 1.0], 0.5) == pytest.approx(2.0)  # 1/(1 − α) when disjoint


class TestAgreement:
    @settings(max_examples=200, deadline=None)
    @given(pairs(degenerate=True))
    def test_kl_and_tv_agree_with_the_existing_measures(self, pq: tuple) -> None:
        p, q = pq
        kl = measures.kl_divergence(p, q)
        assert measures.f_divergence(p, q, "kl") == (
            kl if math.isinf(kl) else pytest.approx(kl, rel=1e-15, abs=1e-300)
        )
        assert measures.f_divergence(p, q, "tv") == measures.tv_distance(p, q)

    @settings(max_examples=150, deadline=None)
    @given(pairs(), st.sampled_from(NAMES))
    def test_a_callable_gives_the_named_value(self, pq: tuple, name: str) -> None:
        p, q = pq
        f, slope = GENERATORS[name]
        named = measures.f_divergence(p, q, name)
        generic = measures.f_divergence(p, q, f, slope_at_infinity=slope)
        if math.isinf(named):
            assert generic == math.inf
        else:
            assert generic == pytest.approx(named, rel=1e-9, abs=1e-14)

    @settings(max_examples=100, deadline=None)
    @given(pairs(degenerate=True, underflow=True))
    def test_named_functions_are_the_named_divergences(self, pq: tuple) -> None:
        p, q = pq
        assert measures.chi2_divergence(p, q) == measures.f_divergence(p, q, "chi2")
        h2 = measures.f_divergence(p, q, "hellinger")
        assert measures.hellinger_distance(p, q) == pytest.approx(math.sqrt(h2), rel=1e-15)
        bc = measures.bhattacharyya_coefficient(p, q)
        assert bc == pytest.approx(1 - h2, abs=1e-14)
        assert measures.jensen_shannon_divergence(p, q) == measures.f_divergence(
            p, q, "jensen_shannon"
        )
        d = measures.bhattacharyya_distance(p, q)
        half = 0.5 * measures.renyi_divergence(p, q, 0.5)
        assert d == (half if math.isinf(half) else pytest.approx(half, rel=1e-9, abs=1e-15))


def push(p: np.ndarray, W: np.ndarray) -> np.ndarray:
    out = p @ W
    return out / out.sum()


def channel_pair(draw_n: int) -> st.SearchStrategy:
    return st.tuples(
        distributions(draw_n, degenerate=True),
        distributions(draw_n, degenerate=True),
        channels(min_inputs=draw_n, max_inputs=draw_n, degenerate=False),
    )


class TestTheorems:
    @settings(max_examples=200, deadline=None)
    @given(st.integers(1, 5).flatmap(channel_pair), st.sampled_from(NAMES))
    def test_data_processing_for_every_named_divergence(self, case: tuple, name: str) -> None:
        p, q, W = case
        before = measures.f_divergence(p, q, name)
        after = measures.f_divergence(push(p, W), push(q, W), name)
        assert close_or_below(after, before)

    @settings(max_examples=120, deadline=None)
    @given(
        st.integers(1, 5).flatmap(
            lambda n: st.tuples(
                distributions(n), distributions(n), channels(min_inputs=n, max_inputs=n)
            )
        ),
        st.sampled_from(range(len(USER_GENERATORS))),
    )
    def test_data_processing_for_user_callables(self, case: tuple, which: int) -> None:
        p, q, W = case
        f, slope = USER_GENERATORS[which]
        before = measures.f_divergence(p, q, f, slope_at_infinity=slope)
        after = measures.f_divergence(push(p, W), push(q, W), f, slope_at_infinity=slope)
        assert before >= -1e-12
        assert close_or_below(after, before)

    @settings(max_examples=120, deadline=None)
    @given(
        st.integers(1, 4).flatmap(lambda n: st.tuples(*(distributions(n) for _ in range(4)))),
        # a subnormal weight makes the float mixture differ from the exact one (λ·p underflows
        # to 0 where λ·q does not), which is the test's own rounding, not the divergence's
        st.floats(0.0, 1.0, allow_subnormal=False),
        st.sampled_from(NAMES),
    )
    def test_joint_convexity(self, laws: tuple, lam: float, name: str) -> None:
        p1, q1, p2, q2 = laws
        mix_p, mix_q = lam * p1 + (1 - lam) * p2, lam * q1 + (1 - lam) * q2
        left = measures.f_divergence(mix_p / mix_p.sum(), mix_q / mix_q.sum(), name)
        right_parts = [measures.f_divergence(p1, q1, name), measures.f_divergence(p2, q2, name)]
        weights = [lam, 1 - lam]
        right = sum(w * d for w, d in zip(weights, right_parts, strict=True) if w > 0)
        assert close_or_below(left, right)

    @settings(max_examples=100, deadline=None)
    @given(pairs(degenerate=True))
    def test_symmetric_divergences(self, pq: tuple) -> None:
        p, q = pq
        for name in ("tv", "hellinger", "jensen_shannon", "le_cam"):
            assert measures.f_divergence(p, q, name) == pytest.approx(
                measures.f_divergence(q, p, name), rel=1e-13, abs=1e-15
            )
        assert measures.bhattacharyya_coefficient(p, q) == pytest.approx(
            measures.bhattacharyya_coefficient(q, p), rel=1e-14, abs=1e-300
        )

    def test_kl_is_not_symmetric(self) -> None:
        p, q = [0.5, 0.5], [0.9, 0.1]
        assert measures.f_divergence(p, q, "kl") != pytest.approx(
            measures.f_divergence(p, q, "reverse_kl"), rel=1e-3
        )

    @settings(max_examples=100, deadline=None)
    @given(st.integers(1, 4).flatmap(lambda n: st.tuples(*(distributions(n) for _ in range(3)))))
    def test_square_roots_of_hellinger_and_js_are_metrics(self, laws: tuple) -> None:
        a, b, c = laws
        for dist in (
            measures.hellinger_distance,
            lambda x, y: math.sqrt(measures.jensen_shannon_divergence(x, y)),
        ):
            assert dist(a, c) <= dist(a, b) + dist(b, c) + 1e-12


class TestBadInput:
    @pytest.mark.parametrize(
        ("p", "message"),
        [
            ([0.5, float("nan")], r"p contains NaN"),
            ([0.5 + 1j, 0.5], r"p must be real"),
            ("0.5 0.5", r"p must be .* got the string"),
            ([True, False], r"p must hold numbers, got booleans"),
            ([[0.5], [0.25, 0.25]], r"ragged"),
            ([0.6, 0.6], r"p must sum to 1"),
        ],
    )
    def test_laws_are_refused(self, p: object, message: str) -> None:
        for call in (
            lambda: measures.f_divergence(p, [0.5, 0.5], "chi2"),
            lambda: measures.hellinger_distance(p, [0.5, 0.5]),
            lambda: measures.jensen_shannon_divergence(p, [0.5, 0.5]),
            lambda: measures.bhattacharyya_distance(p, [0.5, 0.5]),
        ):
            with pytest.raises(PriorError, match=message):
                call()

    def test_lengths_must_agree_and_negative_zero_is_a_zero(self) -> None:
        with pytest.raises(PriorError, match=r"q must have length 2, got length 3"):
            measures.chi2_divergence([0.5, 0.5], [0.2, 0.3, 0.5])
        assert measures.chi2_divergence([1.0, -0.0], [0.5, 0.5]) == pytest.approx(1.0)
        assert measures.f_divergence([0.5, 0.5], [1.0, -0.0], "reverse_kl") == pytest.approx(
            math.log(2)
        )

    @pytest.mark.parametrize("f", ["kullback", 3, True, None, ["kl"]])
    def test_f_must_be_a_callable_or_a_name(self, f: object) -> None:
        with pytest.raises(ParameterError, match=r"^f must be"):
            measures.f_divergence([0.5, 0.5], [0.9, 0.1], f)

    def test_f_must_vanish_at_one(self) -> None:
        with pytest.raises(ParameterError, match=r"f must satisfy f\(1\) = 0 .* f\(1\) = 1.0"):
            measures.f_divergence([0.5, 0.5], [0.9, 0.1], lambda t: t * t)

    def test_f_failures_are_named(self) -> None:
        with pytest.raises(ParameterError, match=r"f raised ValueError at t = 0.0.*math.inf"):
            measures.f_divergence([0.0, 1.0], [0.5, 0.5], lambda t: -math.log(t))
        with pytest.raises(ParameterError, match=r"f must be finite on \(0, inf\)"):
            measures.f_divergence([0.5, 0.5], [0.9, 0.1], lambda t: math.nan if t != 1 else 0.0)
        with pytest.raises(ParameterError, match=r"f must return a real number"):
            measures.f_divergence([0.5, 0.5], [0.9, 0.1], lambda t: "0")

    def test_slope_at_infinity_is_asked_for_only_where_needed(self) -> None:
        f = GENERATORS["tv"][0]
        assert measures.f_divergence([0.5, 0.5], [0.9, 0.1], f) == pytest.approx(0.4)
        with pytest.raises(ParameterError, match=r"needs slope_at_infinity .* q\[1\] = 0"):
            measures.f_divergence([0.5, 0.5], [1.0, 0.0], f)
        assert measures.f_divergence([0.5, 0.5], [1.0, 0.0], f, slope_at_infinity=0.5) == 0.5
        with pytest.raises(ParameterError, match=r"slope_at_infinity must be a real number"):
            measures.f_divergence([0.5, 0.5], [1.0, 0.0], f, slope_at_infinity=math.nan)
        with pytest.raises(ParameterError, match=r"slope_at_infinity is for a callable f"):
            measures.f_divergence([0.5, 0.5], [1.0, 0.0], "tv", slope_at_infinity=0.5)

    @pytest.mark.parametrize("alpha", [-1.0, float("nan"), "2", False])
    def test_hellinger_divergence_orders_are_validated(self, alpha: object) -> None:
        with pytest.raises(ParameterError, match=r"alpha must be"):
            measures.hellinger_divergence([0.5, 0.5], [0.9, 0.1], alpha)
