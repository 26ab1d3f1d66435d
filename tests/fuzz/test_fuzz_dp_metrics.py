"""Fuzz group ``dp_metrics``: ε, δ(ε), KL, Rényi and TV levels, maximal leakage, neighbours.

Reference: brute force over the ordered neighbouring pairs enumerated from the definitions of
the relations (``docs/mathematics.rst`` §3), each divergence in mpmath; closed forms of
randomized response and the truncated geometric mechanism; structural properties of δ(ε).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from _harness import fuzz
from _reference import (
    close,
    eps_pair,
    hockey_pair,
    mp_kl,
    mp_renyi,
    normalise,
    ordered_pairs,
    worst_pair,
)
from hypothesis import assume, given
from hypothesis import strategies as st

import dpcap
from dpcap import mechanisms as mech
from dpcap.testing import channels, epsilons, mechanisms, neighbor_relations, orders


@st.composite
def with_relation(draw: st.DrawFn) -> tuple[np.ndarray, tuple[int, ...], object]:
    W, shape = draw(mechanisms(max_rows=9, degenerate=True))
    return W, shape, draw(neighbor_relations(shape))


def subject(W: np.ndarray, shape: tuple[int, ...], how: str) -> object:
    """The same mechanism as a plain array (one-entry shapes only), a Channel or a Mechanism."""
    if how == "array" and len(shape) == 1:
        return W
    if how == "channel" and len(shape) == 1:
        return dpcap.Channel(W, neighbors="hamming")
    return dpcap.Mechanism(W, shape)


@fuzz(examples=3000, quick=8)
@given(case=with_relation(), how=st.sampled_from(["array", "channel", "mechanism"]))
def test_levels_match_brute_force(case, how: str) -> None:
    W, shape, relation = case
    M = subject(W, shape, how)
    Wn = normalise(W)
    pairs = ordered_pairs(shape, relation)
    want_eps = worst_pair(Wn, pairs, eps_pair)
    assert close(dpcap.dp_epsilon(M, neighbors=relation), want_eps)
    want_tv = worst_pair(Wn, pairs, lambda P, Q: hockey_pair(P, Q, 0.0))
    assert close(dpcap.tv_dp(M, neighbors=relation), want_tv)
    want_kl = worst_pair(Wn, pairs, mp_kl)
    assert close(dpcap.kl_dp(M, neighbors=relation), want_kl, rel=1e-9, abs_=1e-13)


@fuzz(examples=2000, quick=6)
@given(case=with_relation(), eps=epsilons(max_value=12.0) | st.sampled_from([700.0, math.inf]))
def test_delta_matches_brute_force(case, eps: float) -> None:
    check_delta(case, eps)


@fuzz(examples=300, quick=4)
@given(case=with_relation(), eps=st.floats(12.0, 60.0))
def test_delta_matches_brute_force_at_large_eps(case, eps: float) -> None:
    """Fuzz finding F5: δ(ε) lost up to 1e-7 (relative) at large ε, and returned 1.0 for 0.31 near
    a level of 690."""
    check_delta(case, eps)


def check_delta(case, eps: float) -> None:
    W, shape, relation = case
    M = dpcap.Mechanism(W, shape)
    Wn = normalise(W)
    pairs = ordered_pairs(shape, relation)
    want = worst_pair(Wn, pairs, lambda P, Q: hockey_pair(P, Q, eps))
    got = dpcap.dp_delta(M, eps, neighbors=relation)
    assert close(got, want, rel=1e-9, abs_=1e-15), (got, float(want))
    curve = dpcap.dp_delta_curve(M, [eps], neighbors=relation)
    assert curve.shape == (1,)
    assert close(float(curve[0]), want, rel=1e-9, abs_=1e-15)


@fuzz(examples=1500, quick=6)
@given(case=with_relation(), alpha=orders())
def test_renyi_matches_brute_force(case, alpha: float) -> None:
    W, shape, relation = case
    M = dpcap.Mechanism(W, shape)
    Wn = normalise(W)
    pairs = ordered_pairs(shape, relation)
    want = worst_pair(Wn, pairs, lambda P, Q: mp_renyi(P, Q, alpha))
    got = dpcap.renyi_dp(M, alpha, neighbors=relation)
    assert close(got, want, rel=1e-8, abs_=1e-12), (got, float(want))


@fuzz(examples=1000, quick=4)
@given(
    W=channels(max_inputs=4, max_outputs=4, degenerate=True),
    grid=st.lists(epsilons(), min_size=1, max_size=6),
)
def test_delta_curve_shape(W: np.ndarray, grid: list[float]) -> None:
    """δ is non-increasing in ε, δ(0) is TV, δ(∞) the mass a neighbour cannot produce, and
    δ(ε) = 0 at the ε-DP level (for a finite level)."""
    eps = np.sort(np.array(grid))
    curve = dpcap.dp_delta_curve(W, eps)
    assert (curve >= 0).all()
    assert (curve <= 1 + 1e-15).all()
    assert (np.diff(curve) <= 1e-15).all(), curve
    ends = dpcap.dp_delta_curve(W, [0.0, math.inf])
    assert ends[0] == pytest.approx(dpcap.tv_dp(W), rel=1e-12, abs=1e-15)
    level = dpcap.dp_epsilon(W)
    if math.isfinite(level):
        assert ends[1] == 0.0
        # rounding of e^ε (a few hundred ulps today: fuzz finding F5) but never more
        assert dpcap.dp_delta(W, level) <= 1e-12
    else:
        assert ends[1] > 0.0


@fuzz(examples=800, quick=4)
@given(W=channels(max_inputs=4, max_outputs=4, degenerate=True), data=st.data())
def test_order_relations(W: np.ndarray, data: st.DataObject) -> None:
    """D_α is non-decreasing in α; order ∞ is ε and order 1 is KL; KL ≤ ε tanh(ε/2)."""
    alphas = sorted(data.draw(st.lists(orders(), min_size=2, max_size=5)))
    levels = [dpcap.renyi_dp(W, a) for a in alphas]
    for a, b, la, lb in zip(alphas, alphas[1:], levels, levels[1:], strict=False):
        assert lb >= la or lb >= la - 1e-9 * (1 + abs(la)), (a, b, la, lb)
    eps = dpcap.dp_epsilon(W)
    assert close(dpcap.renyi_dp(W, math.inf), eps)
    kl = dpcap.kl_dp(W)
    assert close(dpcap.renyi_dp(W, 1.0), kl)
    if math.isfinite(eps):
        assert kl <= eps * math.tanh(eps / 2) * (1 + 1e-9) + 1e-15


@fuzz(examples=600, quick=4)
@given(W=channels(max_inputs=4, max_outputs=4, degenerate=True), data=st.data())
def test_invariances(W: np.ndarray, data: st.DataObject) -> None:
    """Over all pairs, permuting inputs or outputs and duplicating a row change nothing."""
    rows = list(data.draw(st.permutations(range(W.shape[0]))))
    cols = list(data.draw(st.permutations(range(W.shape[1]))))
    dup = data.draw(st.integers(0, W.shape[0] - 1))
    eps = data.draw(epsilons())
    base = (dpcap.dp_epsilon(W), dpcap.dp_delta(W, eps), dpcap.kl_dp(W), dpcap.tv_dp(W))
    for V in (W[rows][:, cols], np.vstack([W, W[dup]])):
        other = (dpcap.dp_epsilon(V), dpcap.dp_delta(V, eps), dpcap.kl_dp(V), dpcap.tv_dp(V))
        for a, b in zip(base, other, strict=True):
            assert close(b, a, rel=1e-12, abs_=1e-15), (base, other)
    assert close(dpcap.max_leakage(W[rows][:, cols]), dpcap.max_leakage(W), rel=1e-12)


@fuzz(examples=700, quick=4)
@given(W=channels(max_inputs=5, max_outputs=5, degenerate=True))
def test_max_leakage(W: np.ndarray) -> None:
    Wn = normalise(W)
    want = mpmath.log(mpmath.fsum(mpmath.mpf(float(v)) for v in Wn.max(axis=0)))
    assert close(dpcap.max_leakage(W), want, rel=1e-12, abs_=1e-15)
    assert close(dpcap.max_leakage(W, unit="bits"), want / mpmath.log(2), rel=1e-12, abs_=1e-15)


@fuzz(examples=600, quick=4)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).filter(lambda s: math.prod(s) <= 24),
    data=st.data(),
)
def test_neighbor_pairs_match_the_definitions(shape: list[int], data: st.DataObject) -> None:
    relation = data.draw(neighbor_relations(tuple(shape)))
    I, J = dpcap.neighbor_pairs(tuple(shape), relation)
    got = sorted(zip(I.tolist(), J.tolist(), strict=True))
    want = sorted({(min(i, j), max(i, j)) for i, j in ordered_pairs(shape, relation)})
    assert got == want
    assert (I < J).all()


@fuzz(examples=800, quick=4)
@given(k=st.integers(2, 9), eps=epsilons(max_value=700.0), eps2=epsilons(max_value=12.0))
def test_randomized_response_closed_forms(k: int, eps: float, eps2: float) -> None:
    W = mech.randomized_response(k, eps)
    # the float matrix resolves ε to about one ulp of its ratio p/q (ε → 0: entries equal)
    assert close(dpcap.dp_epsilon(W), eps, rel=1e-12, abs_=1e-15), (dpcap.dp_epsilon(W), eps)
    # δ(ε') = (e^ε − e^ε')_+ / (e^ε + k − 1)
    E, E2 = mpmath.exp(mpmath.mpf(eps)), mpmath.exp(mpmath.mpf(eps2))
    want = max(E - E2, 0) / (E + k - 1)
    # the float matrix meets the closed form to rounding (ε' > 12: see F5 above)
    assert close(dpcap.dp_delta(W, eps2), want, rel=1e-9, abs_=1e-12)


@fuzz(examples=600, quick=4)
@given(n=st.integers(1, 60), eps=epsilons(min_value=1e-6, max_value=12.0, extreme=False))
def test_truncated_geometric_levels(n: int, eps: float) -> None:
    assume(n * eps < 700)  # entries above the underflow range (see the test of item 3 below)
    W = mech.truncated_geometric(n, eps)
    assert close(dpcap.dp_epsilon(W), eps, rel=1e-9, abs_=1e-12)
    assert close(dpcap.dp_epsilon(W, neighbors="all"), n * eps, rel=1e-9, abs_=1e-12)


@fuzz(examples=100, quick=3)
@given(n=st.integers(100, 1500), eps=st.floats(0.5, 3.0))
def test_truncated_geometric_levels_past_underflow(n: int, eps: float) -> None:
    """Item 3: underflowed entries must not turn a known ε into ∞."""
    assume(n * eps > 760)
    assert close(dpcap.dp_epsilon(mech.truncated_geometric(n, eps)), eps, rel=1e-9)
