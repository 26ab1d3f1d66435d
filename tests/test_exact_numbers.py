"""Numbers that say what they mean (issue 27): exact zeros, exact infinities, accurate tiny
divergences, and one unit rule for DP levels.

Checked here, each against the mathematics (closed forms, mpmath at 50+ digits):

* the Hellinger divergence of order ∞ is the limit of ``(Σ p^α q^{1−α} − 1)/(α − 1)``: 0 if
  ``p = q`` and ∞ otherwise, also for laws one ulp apart at masses near 1e-300; at α = 1e300
  the float answer is ∞ (a lower bound ``p_y (p_y/q_y)^{α−1}`` of the sum overflows);
* KL on nearly equal laws (divergence 1e-25 .. 1e-23) within the stated ``(32 + n)u`` of
  mpmath: ``kl_divergence``, ``f_divergence`` ``"kl"``/``"reverse_kl"``, ``renyi_divergence``
  at α = 1;
* exact zeros with rigorous certificates: δ(ε) from the pure-DP level on (the stored matrix's
  own δ, in mpmath, lies in the stated ``[0, 2ρ]``), capacities of channels with identical rows
  (``[0, 0]`` at every order, 1 × 1 included), the privacy funnel and bottleneck of a release
  independent of X or of S independent of X;
* DP levels (ε, Rényi DP, KL-DP) are in nats on every surface: API, catalogue, sweep, audit.
"""

from __future__ import annotations

import inspect
import math
import re

import mpmath as mp
import numpy as np
import pytest

import dpcap
from dpcap import divergences, measures
from dpcap.cli import audit, demo_mechanism, format_audit
from dpcap.mechanisms import counting_query, randomized_response, truncated_geometric
from dpcap.solvers import pairwise
from dpcap.study.catalogue import QUERIES
from dpcap.tradeoffs import information_bottleneck, privacy_funnel

U = 2.0**-53
LN2 = math.log(2.0)


# --- 14. Hellinger divergence of order ∞ (and huge α) ---------------------------------------

#: Two laws that differ in one mass near 1e-300 by one ulp: p_0/q_0 = 1 + 2⁻⁵², so
#: log p_0 − log q_0 rounds to 0 (|log p_0| ≈ 624, whose ulp is 1.1e-13).
TINY = 2.0**-900
P_ULP = [TINY * (1.0 + 2.0**-52), 1.0]
Q_ULP = [TINY, 1.0]


def test_hellinger_infinity_of_laws_one_ulp_apart_is_infinite() -> None:
    # p ≠ q: some p_y/q_y = r > 1, the sum is ≥ p_y r^{α−1}, geometric in α: H_α → ∞
    assert divergences.hellinger_divergence(P_ULP, Q_ULP, math.inf) == math.inf
    assert divergences.hellinger_divergence(P_ULP, P_ULP, math.inf) == 0.0
    assert divergences.hellinger_divergence([0.3, 0.7], [0.3, 0.7], math.inf) == 0.0
    assert divergences.hellinger_divergence([0.3, 0.7], [0.7, 0.3], math.inf) == math.inf


def test_hellinger_at_a_huge_order_is_the_float_answer() -> None:
    alpha = 1e300
    mp.mp.dps = 50
    p0, q0 = mp.mpf(P_ULP[0]), mp.mpf(Q_ULP[0])
    # (Σ p^α q^{1−α} − 1)/(α − 1) ≥ (p_0 (p_0/q_0)^{α−1} − 1)/(α − 1), beyond the largest double
    bound = (p0 * mp.power(p0 / q0, alpha - 1) - 1) / (alpha - 1)
    assert bound > mp.mpf(np.finfo(np.float64).max)
    assert divergences.hellinger_divergence(P_ULP, Q_ULP, alpha) == math.inf
    assert divergences.hellinger_divergence(P_ULP, P_ULP, alpha) == 0.0


# --- 15. KL without cancellation --------------------------------------------------------------


def nearly_equal(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two laws on n outcomes summing to exactly 1 in floating point, 2⁻⁵⁰·(±1000) apart:
    ``q = k/2³⁰``, ``p = (k·2²⁰ + j)/2⁵⁰`` with ``Σj = 0`` (every value exact)."""
    rng = np.random.default_rng(seed)
    m = 2**30
    k = rng.integers(m // (2 * n), m // n, n)
    k[-1] = m - k[:-1].sum()
    j = rng.integers(-1000, 1000, n)
    j[-1] = -j[:-1].sum()
    q = k / m
    p = (k * 2**20 + j) / 2.0**50
    assert p.sum() == 1.0
    assert q.sum() == 1.0
    return p, q


def mp_kl(p: np.ndarray, q: np.ndarray) -> mp.mpf:
    with mp.workdps(60):
        return mp.fsum(
            mp.mpf(a) * mp.log(mp.mpf(a) / mp.mpf(b)) for a, b in zip(p, q, strict=True) if a > 0
        )


@pytest.mark.parametrize("n", [2, 3, 5, 8, 20])
@pytest.mark.parametrize("seed", [0, 1])
def test_kl_of_nearly_equal_laws_matches_mpmath(n: int, seed: int) -> None:
    p, q = nearly_equal(n, seed)
    forward, backward = mp_kl(p, q), mp_kl(q, p)
    assert 1e-30 < forward < 1e-20  # about Σ (p − q)²/(2q): nothing left of the 1e-16 residue
    bound = (32 + n) * U  # the relative error stated by dpcap.solvers.divergence.kl
    values = {
        "kl_divergence": (measures.kl_divergence(p, q), forward),
        "f kl": (divergences.f_divergence(p, q, "kl"), forward),
        "f reverse_kl": (divergences.f_divergence(p, q, "reverse_kl"), backward),
        "renyi alpha = 1": (measures.renyi_divergence(p, q, 1.0), forward),
        "bits": (measures.kl_divergence(p, q, unit="bits") * LN2, forward),
    }
    for name, (got, want) in values.items():
        assert abs(got - want) <= (bound + 2 * U) * want, (name, got, float(want))


@pytest.mark.parametrize("seed", range(4))
def test_kl_of_far_laws_matches_mpmath(seed: int) -> None:
    """A guard for the closed-form branch (ratios outside [1/3, 3]) and the series beside it,
    on laws with exact float sums (dyadic): the plain sum was accurate here, and stays so."""
    rng = np.random.default_rng(seed)
    m = 2**40
    k = np.maximum(1, (rng.dirichlet(np.full(6, 0.3)) * m).astype(np.int64))
    k[np.argmax(k)] += m - k.sum()
    l = np.maximum(1, (rng.dirichlet(np.full(6, 0.3)) * m).astype(np.int64))
    l[np.argmax(l)] += m - l.sum()
    p, q = k / m, l / m
    assert p.sum() == 1.0
    assert q.sum() == 1.0
    want = mp_kl(p, q)
    assert abs(measures.kl_divergence(p, q) - want) <= (32 + 6) * U * want


@pytest.mark.parametrize("seed", range(4))
def test_mutual_information_of_a_nearly_constant_channel_matches_mpmath(seed: int) -> None:
    """I(X;Y) = Σ_x p_x D(W_x ‖ pW), each D summed from non-negative terms: within the stated
    ``(32 + k)u`` relative plus ``γ_n²/2`` absolute (the mixture's rounding, second order)."""
    rng = np.random.default_rng(seed)
    m, n, k = 2**30, 3, 4
    base = rng.integers(m // (2 * k), m // k, k)
    base[-1] = m - base[:-1].sum()
    j = rng.integers(-1000, 1000, (n, k))
    j[:, -1] = -j[:, :-1].sum(axis=1)
    W = (base[None, :] * 2**20 + j) / 2.0**50  # rows summing to exactly 1
    prior = np.array([0.3, 0.3, 0.4])  # the mixture pW is rounded
    assert (W.sum(axis=1) == 1.0).all()
    assert prior.sum() == 1.0
    with mp.workdps(60):
        total = mp.fsum(mp.mpf(v) for v in prior)
        pm = [mp.mpf(v) / total for v in prior]
        q = [mp.fsum(pm[x] * mp.mpf(W[x, y]) for x in range(n)) for y in range(k)]
        want = mp.fsum(
            pm[x] * mp.mpf(W[x, y]) * mp.log(mp.mpf(W[x, y]) / q[y])
            for x in range(n)
            for y in range(k)
        )
    got = measures.mutual_information(prior, W)
    assert 1e-26 < want < 1e-20
    gamma = n * U / (1 - n * U)
    assert abs(got - want) <= (32 + k) * U * want + gamma**2 / 2


# --- 16. exact zeros ---------------------------------------------------------------------------


def test_delta_is_zero_at_the_level_a_geometric_was_built_with() -> None:
    W = truncated_geometric(8, 1.0)  # ε-DP with ε = 1 under "line": δ(1) = 0
    assert dpcap.dp_delta(W, 1.0) == 0.0
    assert dpcap.dp_delta_curve(W, [1.0, 1.5, math.inf]).tolist() == [0.0, 0.0, 0.0]
    # below the level δ is positive: E_{e^ε} of adjacent rows, the closed form of a pair
    assert dpcap.dp_delta(W, 0.5) > 0.1


def test_the_zero_delta_has_a_rigorous_certificate() -> None:
    """The stored matrix's own δ(1), in mpmath, lies in the stated ``[0, (ε̂ + ρ − ε)_+]``."""
    W = truncated_geometric(8, 1.0).matrix
    rho = pairwise.level_rounding(W)
    level = dpcap.dp_epsilon(truncated_geometric(8, 1.0))
    assert level - rho <= 1.0  # the case of the rule
    with mp.workdps(50):
        e = mp.e
        exact = max(
            mp.fsum(max(mp.mpf(a[y]) - e * mp.mpf(b[y]), 0) for y in range(W.shape[1]))
            for x in range(W.shape[0] - 1)
            for a, b in ((W[x], W[x + 1]), (W[x + 1], W[x]))
        )
        assert 0 <= exact <= mp.mpf(level) + rho - 1 <= 2 * rho
        assert exact > 0  # the float matrix is not exactly 1-DP: the bracket is [0, upper]


def test_the_demo_prints_a_zero_delta_at_eps_one() -> None:
    M = counting_query(8, truncated_geometric(8, 1.0))
    assert dpcap.dp_delta_curve(M, [1.0, 2.0]).tolist() == [0.0, 0.0]
    text = format_audit(audit(demo_mechanism()), "demo")
    assert re.search(r"eps = 1\s+delta = 0\n", text), text


def test_randomized_response_delta_stays_exact_below_its_level() -> None:
    """A guard: zeros only from the level on; just below it, the closed form
    ``(e^ε − e^{ε'})/(e^ε + k − 1)`` (tiny, not zeroed)."""
    k, eps = 3, 1.0
    below = eps - 1e-6
    closed = (math.exp(eps) - math.exp(below)) / (math.exp(eps) + k - 1)
    got = dpcap.dp_delta(randomized_response(k, eps), below)
    assert got == pytest.approx(closed, rel=1e-8)


@pytest.mark.parametrize("unit", ["nats", "bits"])
def test_capacity_of_identical_rows_is_exactly_zero(unit: str) -> None:
    for W in ([[0.5, 0.5], [0.5, 0.5]], [[0.2, 0.3, 0.5]] * 4, [[1.0]], [[1.0], [1.0]]):
        res = dpcap.capacity(W, unit=unit)
        assert (res.lower, res.value, res.upper) == (0.0, 0.0, 0.0), W


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 2.0, 5.0, math.inf])
def test_renyi_capacity_of_identical_rows_is_exactly_zero(alpha: float) -> None:
    # rows W_x = w: Y is independent of X, every α-information is 0 under every prior
    for W in ([[0.5, 0.5], [0.5, 0.5]], [[0.1, 0.2, 0.7]] * 3, [[1.0]]):
        res = dpcap.renyi_capacity(W, alpha)
        assert (res.lower, res.upper) == (0.0, 0.0), (W, alpha, res.upper)
    naive = dpcap.renyi_capacity([[0.5, 0.5], [0.5, 0.5]], alpha, kind="naive")
    assert (naive.lower, naive.upper) == (0.0, 0.0)


#: A joint law whose P_X sums to 0.9999999999999999 in floating point.
JOINT = np.array([[0.05, 0.05, 0.05], [0.2, 0.35, 0.3]])


def test_funnel_at_zero_utility_is_exactly_zero() -> None:
    # R = 0: the constant release, independent of X, so I(X;Y) = I(S;Y) = 0 exactly
    for res in (privacy_funnel(JOINT, R=0.0), information_bottleneck(JOINT, R=0.0)):
        assert (res.lower, res.value, res.upper) == (0.0, 0.0, 0.0), res.problem
        assert (res.utility_achieved, res.leakage_achieved) == (0.0, 0.0)


@pytest.mark.parametrize("R", [0.3, 0.8])
def test_funnel_of_a_secret_independent_of_the_data_is_exactly_zero(R: float) -> None:
    # S ⊥ X: I(S;Y) ≤ I(S;X) = 0 for every mechanism, so PF(R) = IB(R) = 0
    joint = np.outer([0.3, 0.7], [0.1, 0.2, 0.3, 0.4])
    for res in (privacy_funnel(joint, R=R), information_bottleneck(joint, R=R)):
        assert (res.lower, res.value, res.upper, res.leakage_achieved) == (0.0, 0.0, 0.0, 0.0)


# --- 17. DP levels are in nats ------------------------------------------------------------------


def test_dp_levels_take_no_unit() -> None:
    for fn in (dpcap.dp_epsilon, dpcap.renyi_dp, dpcap.kl_dp):
        assert "unit" not in inspect.signature(fn).parameters, fn.__name__
    for name in ("dp_epsilon", "renyi_dp", "kl_dp", "metric_epsilon"):
        assert QUERIES[name].unit == "nats", name
    W = randomized_response(2, 1.0)
    with pytest.raises(TypeError):
        dpcap.renyi_dp(W, 2.0, unit="bits")  # type: ignore[call-arg]
    # (α, ε)-RDP at α = ∞ is ε-DP: the same number, in nats
    assert dpcap.renyi_dp(W, math.inf) == dpcap.dp_epsilon(W) == pytest.approx(1.0, rel=1e-15)


def test_a_sweep_in_bits_reports_dp_levels_in_nats() -> None:
    eps = 1.0
    table = dpcap.sweep(
        "randomized_response",
        {"k": [2], "eps": [eps]},
        ["dp_epsilon", ("renyi_dp", {"alpha": math.inf}), "kl_dp", "capacity"],
        unit="bits",
        progress=False,
    )
    rows = {
        q: (v, u) for q, v, u in zip(table["query"], table["value"], table["unit"], strict=True)
    }
    assert rows["dp_epsilon"] == (pytest.approx(eps, rel=1e-12), "nats")
    assert rows["renyi_dp"] == (pytest.approx(eps, rel=1e-12), "nats")
    # KL-DP of binary RR(ε) is ε·tanh(ε/2) nats (Cuff & Yu, Property 1)
    assert rows["kl_dp"] == (pytest.approx(eps * math.tanh(eps / 2), rel=1e-12), "nats")
    # capacity is information: 1 − h₂(p) bits with p = 1/(1 + e^ε)
    p = 1 / (1 + math.exp(eps))
    h2 = -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    assert rows["capacity"] == (pytest.approx(1 - h2, abs=1e-8), "bits")


def test_audit_in_bits_reports_kl_dp_in_nats() -> None:
    eps = 1.0
    report = audit(randomized_response(2, eps), unit="bits")
    assert report["kl_dp"] == pytest.approx(eps * math.tanh(eps / 2), rel=1e-12)
    assert report["dp_epsilon"] == pytest.approx(eps, rel=1e-12)
    p = math.exp(eps) / (1 + math.exp(eps))
    assert report["max_leakage"] == pytest.approx(math.log2(2 * p), rel=1e-12)  # information
    text = format_audit(report, "rr")
    assert re.search(r"KL-DP\s+0\.46211\d* nats", text), text
