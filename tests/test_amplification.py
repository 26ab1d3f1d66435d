"""Amplification by subsampling, built exactly (dpcap.mechanisms.poisson_subsample & co.).

Theorems and hand-derived values checked here, every expected value computed in this file:

* the subsampled matrix equals the mixture over every sample, enumerated here (Poisson: all
  subsets of the present records with weights ``q^|S| (1 − q)^{|P \\ S|}``; without
  replacement: all ``C(n, s)`` samples, uniformly);
* binary randomized response on one record, an absent record read as 0: the level is exactly
  ``log(1 + q(e^ε − 1))`` under add/remove **and** under replace-one (the two rows are
  ``(1 − q)RR(0) + qRR(1)`` against ``RR(0)``: ratio ``1 − q + qe^ε`` at output 1, and the
  reverse ratio ``1/(1 − q + qe^{−ε})`` is smaller);
* with ⊥ read as a fair coin: ``−log(1 − q tanh(ε/2))`` under add/remove (the absent row
  against ``(1 − q)/2 + q(1 − p)``) and ``2 artanh(q tanh(ε/2))`` under replace-one;
* a count of ones with truncated geometric noise attains ``log(1 + q(e^ε − 1))`` (Poisson)
  and ``log(1 + (s/n)(e^ε − 1))`` (``s`` of ``n`` without replacement; Balle, Barthe, Gaboardi
  2018), the bound of the theorem for random mechanisms (seeded) holds;
* one sample shared by ``k`` releases of randomized response: exactly
  ``log(1 + q(e^{kε} − 1))``, strictly above ``k log(1 + q(e^ε − 1))``, which is the exact
  level of ``k`` independent samples (naive composition of amplified guarantees underestimates
  the shared sample);
* a mechanism that shows who was sampled (⊥ as a visible output) is not amplified;
* bad arguments raise errors naming the argument; sizes are refused before any work.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest

import dpcap
from dpcap import mechanisms as mech
from dpcap.channel import Mechanism
from dpcap.errors import ChannelError, MechanismError, ParameterError, ProblemTooLargeError
from dpcap.mechanisms import _amplification

QS = [0.0, 0.05, 0.3, 0.7, 1.0]
EPS = [0.1, 1.0, 3.0]


def rr_rows(eps: float) -> np.ndarray:
    p = math.exp(eps) / (1 + math.exp(eps))
    return np.array([[p, 1 - p], [1 - p, p]])


def amplified(q: float, eps: float) -> float:
    return math.log1p(q * math.expm1(eps))


# --------------------------------------------------------------------------- brute force


def poisson_reference(T: np.ndarray, q: float) -> np.ndarray:
    """``W[x] = Σ_S P(S | x) M[z(x, S)]`` over the extended domain, every sample listed."""
    sizes, K = T.shape[:-1], T.shape[-1]
    W = np.zeros((math.prod(sizes), K))
    for r, x in enumerate(itertools.product(*(range(s) for s in sizes))):
        present = [i for i, v in enumerate(x) if v < sizes[i] - 1]
        for keep in itertools.product((False, True), repeat=len(present)):
            z = list(x)
            weight = 1.0
            for i, kept in zip(present, keep, strict=True):
                weight *= q if kept else 1 - q
                if not kept:
                    z[i] = sizes[i] - 1
            W[r] += weight * T[tuple(z)]
    return W


def wor_reference(T: np.ndarray, s: int) -> np.ndarray:
    sizes, K = T.shape[:-1], T.shape[-1]
    n = len(sizes)
    dims = tuple(m - 1 for m in sizes)
    W = np.zeros((math.prod(dims), K))
    samples = list(itertools.combinations(range(n), s))
    for r, x in enumerate(itertools.product(*(range(m) for m in dims))):
        for S in samples:
            z = tuple(v if i in S else dims[i] for i, v in enumerate(x))
            W[r] += T[z] / len(samples)
    return W


def random_extended(rng: np.random.Generator, sizes: tuple[int, ...], K: int) -> np.ndarray:
    T = rng.dirichlet(np.ones(K), size=math.prod(sizes))
    return T.reshape(*sizes, K)


@pytest.mark.parametrize("q", [0.0, 0.37, 1.0])
@pytest.mark.parametrize("sizes", [(3,), (2, 3), (3, 2, 2)])
def test_poisson_equals_the_enumerated_mixture(sizes: tuple[int, ...], q: float) -> None:
    rng = np.random.default_rng(len(sizes))
    T = random_extended(rng, sizes, 4)
    M = Mechanism(T.reshape(-1, 4), sizes)
    expected = poisson_reference(T, q)
    sub = mech.poisson_subsample(M, q)
    assert sub.shape == sizes
    np.testing.assert_allclose(sub.matrix, expected, rtol=1e-13, atol=1e-16)
    population = mech.poisson_subsample(M, q, relation="replace_one")
    assert population.shape == tuple(s - 1 for s in sizes)
    assert population.neighbors == "hamming"
    rows = [
        r
        for r, x in enumerate(itertools.product(*(range(s) for s in sizes)))
        if all(v < s - 1 for v, s in zip(x, sizes, strict=True))
    ]
    np.testing.assert_allclose(population.matrix, expected[rows], rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("s", [0, 1, 2, 3])
def test_without_replacement_equals_the_enumerated_mixture(s: int) -> None:
    sizes = (3, 2, 3)
    T = random_extended(np.random.default_rng(7), sizes, 3)
    sub = mech.sample_without_replacement(Mechanism(T.reshape(-1, 3), sizes), s)
    assert sub.shape == (2, 1, 2)
    assert sub.neighbors == "hamming"
    np.testing.assert_allclose(sub.matrix, wor_reference(T, s), rtol=1e-13, atol=1e-16)


def test_add_remove_pairs() -> None:
    sizes = (3, 2)  # values {0, 1, ⊥} x {0, ⊥}
    M = mech.poisson_subsample(Mechanism(np.full((6, 2), 0.5), sizes), 0.5)
    databases = list(itertools.product(range(3), range(2)))
    expected = {
        (a, b)
        for a, b in itertools.combinations(range(6), 2)
        if sum(u != v for u, v in zip(databases[a], databases[b], strict=True)) == 1
        and any(
            u != v and (u == s - 1 or v == s - 1)
            for u, v, s in zip(databases[a], databases[b], sizes, strict=True)
        )
    }
    assert {(int(a), int(b)) for a, b in np.asarray(M.neighbors)} == expected


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("q", QS)
def test_randomized_response_absent_as_zero(q: float, eps: float) -> None:
    rr = mech.randomized_response(2, eps)
    add_remove = mech.poisson_subsample(rr, q, absent=0)
    replace = mech.poisson_subsample(rr, q, absent=0, relation="replace_one")
    R = rr_rows(eps)
    np.testing.assert_allclose(replace.matrix[1], (1 - q) * R[0] + q * R[1], rtol=1e-14)
    np.testing.assert_allclose(add_remove.matrix[2], R[0], rtol=1e-14)
    assert dpcap.dp_epsilon(add_remove) == pytest.approx(amplified(q, eps), rel=1e-12, abs=1e-15)
    assert dpcap.dp_epsilon(replace) == pytest.approx(amplified(q, eps), rel=1e-12, abs=1e-15)
    # the total variation is q times that of RR: delta(0) = q tanh(eps/2)
    assert dpcap.dp_delta(replace, 0.0) == pytest.approx(q * math.tanh(eps / 2), abs=1e-14)


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("q", [0.05, 0.3, 0.7, 1.0])
def test_randomized_response_absent_as_a_coin(q: float, eps: float) -> None:
    ext = np.vstack([rr_rows(eps), [0.5, 0.5]])
    t = math.tanh(eps / 2)
    add_remove = dpcap.dp_epsilon(mech.poisson_subsample(ext, q))
    replace = dpcap.dp_epsilon(mech.poisson_subsample(ext, q, relation="replace_one"))
    assert add_remove == pytest.approx(-math.log1p(-q * t), rel=1e-12)
    assert replace == pytest.approx(2 * math.atanh(q * t), rel=1e-12)
    # below the theorem's bound at the add/remove level of the mechanism, log((1 + e^eps)/2)
    assert add_remove <= amplified(q, math.log((1 + math.exp(eps)) / 2)) + 1e-12


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_count_with_geometric_noise_attains_the_bound(q: float, eps: float) -> None:
    count = mech.counting_query(3, mech.truncated_geometric(3, eps))
    for relation in ("add_remove", "replace_one"):
        M = mech.poisson_subsample(count, q, absent=0, relation=relation)
        assert dpcap.dp_epsilon(M) == pytest.approx(amplified(q, eps), rel=1e-12)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("s", [1, 2, 3])
def test_without_replacement_attains_balle_et_al(s: int, eps: float) -> None:
    n = 3
    count = mech.counting_query(n, mech.truncated_geometric(n, eps))
    M = mech.sample_without_replacement(count, s, absent=0)
    assert dpcap.dp_epsilon(M) == pytest.approx(amplified(s / n, eps), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_the_theorem_bounds_random_mechanisms(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = (3, 2) if seed % 2 else (3,)
    ext = Mechanism(random_extended(rng, sizes, 3).reshape(-1, 3), sizes)
    eps = dpcap.dp_epsilon(ext)  # hamming on the extended domain: replace and add/remove
    for q in (0.1, 0.5):
        for relation in ("add_remove", "replace_one"):
            level = dpcap.dp_epsilon(mech.poisson_subsample(ext, q, relation=relation))
            assert level <= amplified(q, eps) + 1e-12


def test_a_visible_sample_is_not_amplified() -> None:
    # each record through RR, an unsampled record released as a visible ⊥ (third output)
    eps, q = 1.0, 0.2
    local = np.zeros((3, 3))
    local[:2, :2] = rr_rows(eps)
    local[2, 2] = 1.0
    M = mech.per_entry(2, local)
    replace = mech.poisson_subsample(M, q, relation="replace_one")
    assert dpcap.dp_epsilon(replace) == pytest.approx(eps, rel=1e-12)
    assert dpcap.dp_epsilon(mech.poisson_subsample(M, q)) == math.inf


def test_every_metric_follows() -> None:
    eps, q = 1.0, 0.3
    M = mech.poisson_subsample(
        mech.randomized_response(2, eps), q, absent=0, relation="replace_one"
    )
    # a binary channel: capacity by a fine search of I(p) (independent of dpcap's solvers)
    W = M.matrix
    best = 0.0
    for a in np.linspace(0, 1, 20001):
        prior = np.array([a, 1 - a])
        out = prior @ W
        terms = prior[:, None] * W * np.log(np.where(W > 0, W / out, 1.0))
        best = max(best, float(terms.sum()))
    result = dpcap.capacity(M)
    assert result.lower - 1e-9 <= best <= result.upper + 1e-12
    assert float(dpcap.midp(M)) == pytest.approx(float(result), abs=1e-8)


# --------------------------------------------------------------------------- shared sample


@pytest.mark.parametrize("eps", [0.5, 1.0])
@pytest.mark.parametrize("q", [0.05, 0.3, 0.8])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_shared_sample_of_randomized_response(k: int, q: float, eps: float) -> None:
    rr = mech.randomized_response(2, eps)
    shared = dpcap.dp_epsilon(mech.shared_sample(*[rr] * k, q=q, absent=0))
    assert shared == pytest.approx(amplified(q, k * eps), rel=1e-12)
    naive = k * amplified(q, eps)
    assert shared > naive + 1e-3 * naive  # composing amplified guarantees: too small
    # ... which is the exact level of k independent samples
    independent = dpcap.compose(*[mech.poisson_subsample(rr, q, absent=0)] * k)
    assert dpcap.dp_epsilon(independent) == pytest.approx(naive, rel=1e-12)


def test_shared_sample_of_a_count() -> None:
    eps, q, k = 1.0, 0.25, 3
    count = mech.counting_query(2, mech.truncated_geometric(2, eps))
    for relation in ("add_remove", "replace_one"):
        shared = dpcap.dp_epsilon(
            mech.shared_sample(*[count] * k, q=q, absent=0, relation=relation)
        )
        assert shared > k * amplified(q, eps)
        assert shared <= amplified(q, k * eps) + 1e-12


def test_shared_sample_is_poisson_of_the_composition() -> None:
    rng = np.random.default_rng(3)
    sizes = (3, 2)
    A = Mechanism(random_extended(rng, sizes, 2).reshape(-1, 2), sizes)
    B = Mechanism(random_extended(rng, sizes, 3).reshape(-1, 3), sizes)
    shared = mech.shared_sample(A, B, q=0.4)
    T = dpcap.compose(A, B).matrix.reshape(*sizes, 6)
    np.testing.assert_allclose(shared.matrix, poisson_reference(T, 0.4), rtol=1e-13, atol=1e-16)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: mech.poisson_subsample(np.eye(3), 1.5), ParameterError, "q must be"),
        (lambda: mech.poisson_subsample(np.eye(3), "a"), ParameterError, "q must be"),
        (lambda: mech.poisson_subsample(np.eye(3), 0.5, relation="x"), ParameterError, "relation"),
        (lambda: mech.poisson_subsample(np.eye(3), 0.5, relation=1), ParameterError, "relation"),
        (lambda: mech.poisson_subsample(np.eye(2), 0.5, absent=2), ParameterError, "absent must"),
        (lambda: mech.poisson_subsample(np.eye(2), 0.5, absent=True), ParameterError, "absent"),
        (lambda: mech.poisson_subsample(np.eye(2), 0.5, absent=-1), ParameterError, "absent"),
        (
            lambda: mech.poisson_subsample(Mechanism(np.eye(2), (1, 2)), 0.5),
            MechanismError,
            "at least two values per entry",
        ),
        (lambda: mech.poisson_subsample([[0.5, 0.4]], 0.5), ChannelError, "mechanism"),
        (lambda: mech.poisson_subsample(3, 0.5), ChannelError, "mechanism"),
        (lambda: mech.sample_without_replacement(np.eye(3), 2), ParameterError, "size must"),
        (lambda: mech.sample_without_replacement(np.eye(3), -1), ParameterError, "size must"),
        (lambda: mech.sample_without_replacement(np.eye(3), 1.0), ParameterError, "size must"),
        (lambda: mech.shared_sample(q=0.5), MechanismError, "at least one mechanism"),
        (
            lambda: mech.shared_sample(np.eye(3), [[1.0, 2.0]], q=0.5),
            ChannelError,
            r"mechanisms\[1\]",
        ),
        (
            lambda: mech.shared_sample(np.eye(3), Mechanism(np.eye(4), (2, 2)), q=0.5),
            MechanismError,
            r"mechanisms\[1\]",
        ),
    ],
)
def test_bad_arguments_are_named(call: Callable[[], object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_sizes_are_refused_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    big = mech.counting_query(30, mech.truncated_geometric(30, 1.0))
    with pytest.raises(ProblemTooLargeError, match="absent value per entry"):
        mech.poisson_subsample(big, 0.5, absent=0)
    count = mech.counting_query(6, mech.truncated_geometric(6, 1.0))
    monkeypatch.setattr(_amplification, "MAX_SAMPLE_WORK", 5_000)
    with pytest.raises(ProblemTooLargeError, match=r"20 samples x 64 databases x 7 outputs"):
        mech.sample_without_replacement(count, 3, absent=0)
    with pytest.raises(ProblemTooLargeError, match="Poisson subsampling"):
        mech.poisson_subsample(count, 0.5, absent=0)
    monkeypatch.setattr(_amplification, "MAX_PAIRS", 100)
    monkeypatch.setattr(_amplification, "MAX_SAMPLE_WORK", 2**31)
    with pytest.raises(ProblemTooLargeError, match="add/remove relation"):
        mech.poisson_subsample(count, 0.5, absent=0)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6])
def test_a_shared_sample_can_be_below_or_above_the_composed_levels(k: int) -> None:
    # RR whose absent record answers with a fair coin, replace-one: the rows of one record at
    # y with j ones among k releases are (1 - q) 2^-k + q p^j (1 - p)^(k - j) and its mirror
    eps, q = 1.0, 0.2
    p = math.exp(eps) / (1 + math.exp(eps))
    coin = np.vstack([rr_rows(eps), [0.5, 0.5]])
    one = [(1 - q) * 2.0**-k + q * p**j * (1 - p) ** (k - j) for j in range(k + 1)]
    zero = [(1 - q) * 2.0**-k + q * (1 - p) ** j * p ** (k - j) for j in range(k + 1)]
    expected = max(abs(math.log(a / b)) for a, b in zip(one, zero, strict=True))
    shared = dpcap.dp_epsilon(mech.shared_sample(*[coin] * k, q=q, relation="replace_one"))
    assert shared == pytest.approx(expected, rel=1e-12)
    composed = k * 2 * math.atanh(q * math.tanh(eps / 2))
    if k == 1:
        assert shared == pytest.approx(composed, rel=1e-12)
    elif k <= 4:
        assert shared < composed
    else:
        assert shared > composed
