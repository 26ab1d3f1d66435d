"""Fuzz group ``mechanisms``: the constructors of :mod:`dpcap.mechanisms`, ``Mechanism.additive``
and the methods of :class:`dpcap.Channel` and :class:`dpcap.Mechanism`.

Each matrix is compared entry by entry with its formula evaluated in mpmath, and each stated
property (row sums, carried relation, ε-DP level by brute force over the pairs, closed forms of
δ and capacity) is checked against the reference of the other groups. Underflow (item 3):
where entries underflow the DP levels must still be the closed-form ones.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
from _harness import fuzz
from _reference import close, eps_pair, hockey_pair, normalise, ordered_pairs, worst_pair
from hypothesis import assume, given
from hypothesis import strategies as st

import dpcap
from dpcap import mechanisms as mech
from dpcap.testing import channels, epsilons

mpf = mpmath.mpf


def stochastic(W: np.ndarray) -> None:
    assert np.isfinite(W).all()
    assert (W >= 0).all()
    assert np.abs(W.sum(axis=1) - 1).max() <= 1e-12


def level(W: np.ndarray, shape, relation) -> float:
    return worst_pair(normalise(W), ordered_pairs(shape, relation), eps_pair)


@fuzz(examples=1500, quick=4)
@given(k=st.integers(2, 8), eps=epsilons(), p=st.floats(0.0, 1.0), n=st.integers(1, 6))
def test_local_channels(k: int, eps: float, p: float, n: int) -> None:
    rr = mech.randomized_response(k, eps)
    W = rr.matrix
    stochastic(W)
    assert rr.neighbors == "all"
    assert W.shape == (k, k)
    e = mpmath.exp(-mpf(eps))
    diag, off = 1 / (1 + (k - 1) * e), e / (1 + (k - 1) * e)
    for x, y in itertools.product(range(k), repeat=2):
        assert close(W[x, y], diag if x == y else off, rel=1e-14, abs_=1e-300)
    bsc = mech.binary_symmetric(p).matrix
    np.testing.assert_array_equal(bsc, [[1 - p, p], [p, 1 - p]])
    want = math.inf if p in (0.0, 1.0) else abs(float(mpmath.log((1 - mpf(p)) / mpf(p))))
    assert close(dpcap.dp_epsilon(bsc), want, rel=1e-12, abs_=1e-15)
    er = mech.erasure(n, p)
    stochastic(er.matrix)
    assert er.matrix.shape == (n, n + 1)
    assert close(dpcap.tv_dp(er), p if n >= 2 else 0.0, rel=1e-15, abs_=0.0)
    if n >= 2:
        assert dpcap.dp_epsilon(er) == (math.inf if p > 0 else 0.0)
        assert close(dpcap.dp_delta(er, 1.0), p, rel=1e-15, abs_=0.0)


@fuzz(examples=1500, quick=4)
@given(n=st.integers(1, 12), eps=epsilons(max_value=40.0).filter(lambda e: e == 0 or e > 1e-300))
def test_truncated_geometric_matrix(n: int, eps: float) -> None:
    W = mech.truncated_geometric(n, eps).matrix
    stochastic(W)
    a = mpmath.exp(-mpf(eps))
    for x, y in itertools.product(range(n + 1), repeat=2):
        if y == 0:
            want = a**x / (1 + a)
        elif y == n:
            want = a ** (n - x) / (1 + a)
        else:  # (1 − a)/(1 + a) = tanh(ε/2), without the cancellation of 1 − a
            want = mpmath.tanh(mpf(eps) / 2) * a ** abs(x - y)
        if math.isinf(eps):
            want = 1.0 if x == y else 0.0
        assert close(W[x, y], want, rel=1e-12, abs_=1e-300), (x, y, W[x, y], float(want))
    if 0 < eps < math.inf and n * eps < 700:  # the float matrix resolves ε to ~1e-15
        assert close(dpcap.dp_epsilon(W, neighbors="line"), eps, rel=1e-9, abs_=1e-14)


@fuzz(examples=100, quick=2)
@given(n=st.integers(1, 6), eps=st.floats(5e-324, 1e-300))
def test_subnormal_eps(n: int, eps: float) -> None:
    """Fuzz finding F13: a subnormal ε gave 'math domain error' (truncated_geometric,
    discrete_laplace) or an overflow RuntimeWarning (staircase)."""
    for make in (mech.truncated_geometric, mech.discrete_laplace, mech.staircase):
        stochastic(make(n, eps).matrix)


@fuzz(examples=1500, quick=4)
@given(
    n=st.integers(1, 10),
    eps=epsilons(min_value=1e-3, max_value=20.0, extreme=False),
    sensitivity=st.integers(1, 4),
    truncation=st.sampled_from(["clamp", "renormalize"]),
    sigma=st.floats(0.2, 20.0),
)
def test_noise_channels(n, eps, sensitivity, truncation, sigma) -> None:
    """Discrete Laplace, staircase and Gaussian: stochastic, symmetric under x ↦ n − x, and
    at the documented levels."""
    lap = mech.discrete_laplace(n, eps, sensitivity=sensitivity, truncation=truncation)
    W = lap.matrix
    stochastic(W)
    np.testing.assert_allclose(W, W[::-1, ::-1], rtol=1e-12, atol=1e-300)
    unit = eps / sensitivity
    line = level(W, (n + 1,), "line")
    if truncation == "clamp":
        assert close(line, unit, rel=1e-9, abs_=1e-12)
    else:
        a = mpmath.exp(-mpf(unit))
        want = unit + mpmath.log(1 + (1 - a) * (a - a**n) / (1 - a ** (n + 1)))
        assert close(line, want, rel=1e-9, abs_=1e-12), (line, float(want))
    if sensitivity <= n:
        stair = mech.staircase(n, eps, sensitivity=sensitivity)
        stochastic(stair.matrix)
        within = lambda x, y: abs(x[0] - y[0]) <= sensitivity  # noqa: E731
        assert level(stair.matrix, (n + 1,), within) <= eps * (1 + 1e-9) + 1e-12
    gauss = mech.discrete_gaussian(n, sigma, truncation=truncation)
    G = gauss.matrix
    stochastic(G)
    np.testing.assert_allclose(G, G[::-1, ::-1], rtol=1e-9, atol=1e-300)
    if truncation == "clamp" and (2 * n + 1) / (2 * sigma**2) < 600:
        f = lambda z: mpmath.exp(-(mpf(z) ** 2) / (2 * mpf(sigma) ** 2))  # noqa: E731
        # the tail to 60σ + 40 terms beyond k: the rest is below e^{-1800} of the first term
        T = lambda k: mpmath.fsum(f(z) for z in range(k, k + int(60 * sigma) + 40))  # noqa: E731
        want = mpmath.log(T(n - 1) / T(n))
        # entries that underflow are kept as logs by the channel (docstring): use dpcap's level
        assert close(dpcap.dp_epsilon(gauss, neighbors="line"), want, rel=1e-8, abs_=1e-12)
        if (G > 0).all():
            assert close(level(G, (n + 1,), "line"), want, rel=1e-8, abs_=1e-12)


@fuzz(examples=1500, quick=4)
@given(
    utility=st.integers(1, 4).flatmap(
        lambda nx: st.lists(
            st.lists(st.floats(-50.0, 50.0, allow_subnormal=False), min_size=3, max_size=3),
            min_size=nx,
            max_size=nx,
        )
    ),
    eps=epsilons(max_value=50.0).filter(math.isfinite),
    base=st.lists(st.floats(0.0, 5.0), min_size=3, max_size=3),
)
def test_exponential(utility, eps: float, base: list[float]) -> None:
    assume(sum(base) > 0)
    u = np.array(utility)
    span = float((u.max(axis=0) - u.min(axis=0)).max())
    du = span if span > 0 else 1.0  # a constant utility needs an explicit sensitivity
    ch = mech.exponential(u, eps, base, sensitivity=None if span > 0 else 1.0)
    W = ch.matrix
    stochastic(W)
    for x in range(len(u)):
        terms = [
            mpf(b) * mpmath.exp(mpf(eps) * mpf(float(v)) / (2 * mpf(du)))
            for b, v in zip(base, u[x], strict=False)
        ]
        total = mpmath.fsum(terms)
        for y in range(3):
            assert close(W[x, y], terms[y] / total, rel=1e-9, abs_=1e-300), (x, y)
    # entries that underflow are kept as logs by the channel: dpcap's level, and the matrix's
    # own where nothing underflowed
    assert dpcap.dp_epsilon(ch, neighbors="all") <= eps * (1 + 1e-9) + 1e-12
    if ((W > 0) == (np.asarray(base) > 0)[None, :]).all():
        assert level(W, (len(u),), "all") <= eps * (1 + 1e-9) + 1e-12


@fuzz(examples=50, quick=2)
@given(tiny=st.floats(5e-324, 2e-308), eps=st.floats(0.1, 5.0))
def test_exponential_with_a_subnormal_span(tiny: float, eps: float) -> None:
    """Fuzz finding F15: a subnormal utility span made exponential() build NaN ('ChannelError: W
    contains NaN')."""
    stochastic(mech.exponential([[1.0, 0.0, 1.0], [1.0, tiny, 1.0]], eps).matrix)


@fuzz(examples=1500, quick=4)
@given(
    n=st.integers(1, 4),
    noise=channels(max_inputs=3, max_outputs=3, degenerate=True),
    m=st.integers(2, 3),
    prob=st.floats(0.0, 1.0),
)
def test_database_mechanisms(n: int, noise: np.ndarray, m: int, prob: float) -> None:
    """per_entry is the Kronecker power; one-time pad and revealing have Cuff & Yu's layout."""
    k = noise.shape[0]
    assume(k**n <= 81)
    M = mech.per_entry(n, noise)
    assert M.shape == (k,) * n
    Nn = normalise(noise)
    for db in itertools.islice(itertools.product(range(k), repeat=n), 20):
        row = M.row(db)
        want = Nn[db[0]]
        for v in db[1:]:
            want = np.kron(want, Nn[v])
        np.testing.assert_allclose(row, want, rtol=1e-12, atol=1e-300)
    assert close(dpcap.dp_epsilon(M), level(noise, (k,), "hamming"), rel=1e-9, abs_=1e-12)
    pad = mech.one_time_pad(m)
    for x1, x2 in itertools.product(range(m), repeat=2):
        assert pad.row((x1, x2))[(x1 + x2) % m] == 1.0
    rev = mech.revealing(2, m, prob)
    stochastic(rev.matrix)
    for x in itertools.product(range(m), repeat=2):
        row = rev.row(x)
        assert row[m] == 1 - prob
        assert row[x[0] if x[0] == x[1] else m + 1] == prob


@fuzz(examples=1500, quick=4)
@given(
    scores=st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=3), min_size=1, max_size=3),
    data=st.data(),
)
def test_additive_mechanisms(scores: list[list[int]], data: st.DataObject) -> None:
    """``Y ~ noise[Σ_i s_i(x_i) − lowest]``: structured and dense agree on every metric."""
    span = sum(max(s) - min(s) for s in scores)
    noise = data.draw(channels(min_inputs=span + 1, max_inputs=span + 1, max_outputs=3))
    M = dpcap.Mechanism.additive(scores, noise)
    shape = tuple(len(s) for s in scores)
    assert M.shape == shape
    lowest = sum(min(s) for s in scores)
    Nn = normalise(noise)
    dense = np.array(
        [
            Nn[sum(s[v] for s, v in zip(scores, db, strict=False)) - lowest]
            for db in itertools.product(*(range(len(s)) for s in scores))
        ]
    )
    np.testing.assert_allclose(M.matrix, dense, rtol=1e-12, atol=1e-300)
    D = dpcap.Mechanism(dense, shape)
    assert close(dpcap.dp_epsilon(M), level(dense, shape, "hamming"), rel=1e-9, abs_=1e-12)
    eps = data.draw(epsilons(max_value=12.0))
    want = worst_pair(dense, ordered_pairs(shape, "hamming"), lambda P, Q: hockey_pair(P, Q, eps))
    assert close(dpcap.dp_delta(M, eps), want, rel=1e-9, abs_=1e-15)
    assert close(dpcap.kl_dp(M), dpcap.kl_dp(D), rel=1e-9, abs_=1e-14)
    assert close(dpcap.tv_dp(M), dpcap.tv_dp(D), rel=1e-12, abs_=1e-15)


@fuzz(examples=1500, quick=4)
@given(
    W=channels(max_inputs=4, max_outputs=3, degenerate=True),
    post=channels(min_inputs=3, max_inputs=3, max_outputs=3),
    data=st.data(),
)
def test_channel_and_mechanism_methods(W, post, data: st.DataObject) -> None:
    assume(W.shape[1] == 3)
    ch = dpcap.Channel(W)
    composed = ch.compose(post)
    np.testing.assert_allclose(
        composed.matrix, normalise(normalise(W) @ normalise(post)), rtol=1e-12, atol=1e-300
    )
    # post-processing never increases the ε-DP level (over all pairs) nor the capacity
    assert dpcap.dp_epsilon(composed) <= dpcap.dp_epsilon(ch) * (1 + 1e-12) + 1e-12
    other = ch.with_neighbors("line")
    assert other.neighbors == "line"
    assert np.array_equal(other.matrix, ch.matrix)
    rows = W.shape[0]
    shape = data.draw(
        st.sampled_from([s for s in [(rows,), (2, rows // 2)] if math.prod(s) == rows])
    )
    M = dpcap.Mechanism(W, shape)
    tensor = M.tensor()
    assert tensor.shape == (*shape, W.shape[1])
    for db in itertools.product(*(range(m) for m in shape)):
        np.testing.assert_array_equal(M.row(db), tensor[db])
    for i in range(len(shape)):
        context = tuple(0 for _ in range(len(shape) - 1))
        S = M.slice(i, context).matrix
        for a in range(shape[i]):
            db = list(context)
            db.insert(i, a)
            np.testing.assert_allclose(S[a], tensor[tuple(db)], rtol=1e-12, atol=1e-300)


@fuzz(examples=60, quick=2)
@given(n=st.integers(760, 1500), eps=st.floats(1.0, 2.0))
def test_underflowing_mechanisms_keep_their_levels(n: int, eps: float) -> None:
    """``truncated_geometric(n, ε)`` has entries below 1e-308 once ``nε > 745``; its line level
    is still exactly ε, and a counting query on it has Hamming level ε."""
    tg = mech.truncated_geometric(n, eps)
    assert close(dpcap.dp_epsilon(tg), eps, rel=1e-9)
    assert close(dpcap.dp_epsilon(mech.counting_query(n, tg)), eps, rel=1e-9)
    assert close(dpcap.renyi_dp(tg, math.inf), eps, rel=1e-9)
