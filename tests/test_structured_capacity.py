"""Capacities of additive mechanisms from their reachable totals (:mod:`dpcap.shannon.structured`).

Theorems checked (an additive mechanism releases ``Y ~ N[S(X^n)]``, ``S = Σ_i s_i(X_i)``; ``R``
is the noise restricted to the reachable totals):

* every capacity of the database channel equals that of ``R`` (Shannon, Sibson, Arimoto,
  Augustin, orders 0 and ∞, maximal leakage): the structured bracket overlaps the bracket of the
  dense matrix enumerated here with ``itertools.product``, for counts, non-binary entries,
  negative and repeated scores and totals that are not reachable;
* the structured value *is* the capacity of ``R`` (bit for bit), and ``capacities`` gives the
  same element as ``capacity``;
* the returned law on databases attains the lower end on the enumerated matrix (its mutual,
  Sibson or Arimoto information is inside the bracket) and sits on the lexicographically first
  database of each total;
* closed forms at n = 40 (2^40 databases): a count with randomized-response noise (symmetric:
  the uniform law on totals is optimal, ``C = log k + p log p + (k − 1) q log q``), the same
  noise when only every other total is reachable (``C = p log(p/m) + (k' − 1) q log(q/m)``,
  ``m = (p + (k' − 1) q)/k'``), its Sibson capacity of order 2 and its maximal leakage;
  a count with truncated geometric noise has the capacity of the noise (every total reachable);
* the weak-adversary leakage ``sup I(X_i; Y)`` of a count is the largest capacity of a two-row
  channel ``[N_t; N_t']``, ``t`` a total reachable with ``X_i = 0`` and ``t'`` one with ``X_i = 1``;
* properties: permuting the entries changes nothing; the capacity is at most
  ``log |T|`` and at most the capacity of the whole noise (fewer rows).

Expected values are closed forms written here or capacities of explicitly enumerated matrices,
never the structured code's own output.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

import dpcap
from dpcap import CapacityResult, ProblemTooLargeError, Status, StructuredCapacityResult
from dpcap.channel import AdditiveMechanism
from dpcap.mechanisms import counting_query, randomized_response, truncated_geometric
from dpcap.mi_dp import correlated_leakage
from dpcap.privacy import max_leakage
from dpcap.renyi import renyi_capacity

FloatArray = NDArray[np.float64]

SLACK = 1e-12
TOL = 1e-9


# --------------------------------------------------------------------------- helpers


def dense(scores: list[list[int]], noise: Any) -> tuple[FloatArray, tuple[int, ...], list[int]]:
    """The database channel, enumerated: row ``x`` (C order) is ``noise[Σ_i s_i(x_i) − lowest]``.

    Also returns the reachable totals (increasing).
    """
    N = np.asarray(noise, dtype=np.float64)
    lowest = sum(min(s) for s in scores)
    shape = tuple(len(s) for s in scores)
    totals = [sum(s[a] for s, a in zip(scores, x, strict=True)) for x in np.ndindex(*shape)]
    return N[np.array(totals) - lowest], shape, sorted(set(totals))


def first_database(scores: list[list[int]], total: int) -> tuple[int, ...]:
    """The lexicographically first database with the given total, by brute force."""
    return min(
        x
        for x in itertools.product(*[range(len(s)) for s in scores])
        if sum(s[a] for s, a in zip(scores, x, strict=True)) == total
    )


def overlap(a: Any, b: Any) -> None:
    """Two certified brackets of one number intersect."""
    assert a.lower <= b.upper + SLACK, (a.lower, b.upper)
    assert b.lower <= a.upper + SLACK, (b.lower, a.upper)


def inside(value: float, res: Any) -> None:
    assert res.lower - SLACK <= value <= res.upper + SLACK, (value, res.lower, res.upper)


def dirichlet(seed: int, rows: int, cols: int, *, zeros: bool = False) -> FloatArray:
    rng = np.random.default_rng(seed)
    W: FloatArray = rng.dirichlet(np.ones(cols), size=rows)
    if zeros:  # a zero in most rows, never a whole row
        W[np.arange(0, rows, 2), 0] = 0.0
        W /= W.sum(axis=1, keepdims=True)
    return W


def span(scores: list[list[int]]) -> int:
    return sum(max(s) - min(s) for s in scores) + 1


#: Score sets: a count, non-binary entries, negative and repeated scores, unreachable totals,
#: entries with different score vectors, a single entry.
SCORES = {
    "count": [[0, 1]] * 6,
    "ternary": [[0, 1, 2]] * 4,
    "mixed": [[-1, 0, 2], [0, 3], [1, 1, 2]],
    "even": [[0, 2]] * 5,
    "gaps": [[0, 1], [0, 2], [0, 5]],
    "repeated": [[0, 1, 1]] * 4,
    "one entry": [[0, 0, 1, 3]],
}


def noises(rows: int) -> dict[str, FloatArray]:
    """Noise channels with ``rows`` rows: geometric, randomized response, random, random with
    zeros, and random with two equal rows."""
    equal = dirichlet(7, rows, 4)
    equal[-1] = equal[0]
    return {
        "geometric": np.asarray(truncated_geometric(rows - 1, 0.7)),
        "rr": np.asarray(randomized_response(rows, 1.3)),
        "random": dirichlet(3, rows, 5),
        "zeros": dirichlet(5, rows, 4, zeros=True),
        "equal rows": equal,
    }


CASES = [
    (name, kind) for name in SCORES for kind in ("geometric", "rr", "random", "zeros", "equal rows")
]


# --------------------------------------------------------------------------- against enumeration


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_capacity_against_enumeration(name: str, kind: str) -> None:
    scores = SCORES[name]
    noise = noises(span(scores))[kind]
    W, shape, totals = dense(scores, noise)
    M = dpcap.Mechanism.additive(scores, noise)
    res = dpcap.capacity(M, tol=TOL)
    ref = dpcap.capacity(dpcap.Mechanism(W, shape), tol=TOL)
    assert isinstance(res, StructuredCapacityResult)
    assert isinstance(res, CapacityResult)
    assert res.status is Status.CONVERGED
    overlap(res, ref)
    # the law on databases attains the lower end on the enumerated matrix
    assert res.prior.shape == (W.shape[0],)
    inside(dpcap.mutual_information(res.prior, W), res)
    np.testing.assert_allclose(res.prior @ W, res.output, atol=1e-15)
    # mass only on the lexicographically first database of each total
    assert res.totals.tolist() == totals
    for k, t in enumerate(totals):
        assert tuple(res.databases[k]) == first_database(scores, t)
    rows = np.ravel_multi_index(tuple(res.databases.T), shape)
    assert np.array_equal(res.prior[rows], res.total_prior)
    assert res.prior.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.count_nonzero(res.prior) == np.count_nonzero(res.total_prior)


@pytest.mark.parametrize("name", ["count", "mixed", "even", "repeated"])
@pytest.mark.parametrize(
    ("alpha", "kind"),
    [
        (0.0, "sibson"),
        (0.5, "sibson"),
        (2.0, "sibson"),
        (math.inf, "sibson"),
        (2.0, "arimoto"),
        (0.5, "augustin"),
    ],
)
def test_renyi_capacity_against_enumeration(name: str, alpha: float, kind: str) -> None:
    scores = SCORES[name]
    noise = noises(span(scores))["random"]
    W, shape, _ = dense(scores, noise)
    M = dpcap.Mechanism.additive(scores, noise)
    res = renyi_capacity(M, alpha, kind=kind, tol=TOL)
    ref = renyi_capacity(dpcap.Mechanism(W, shape), alpha, kind=kind, tol=TOL)
    assert isinstance(res, StructuredCapacityResult)
    assert res.status is Status.CONVERGED
    overlap(res, ref)
    if alpha == 2.0 and kind == "sibson":
        inside(dpcap.sibson_mi(res.prior, W, alpha), res)
    if kind == "arimoto":
        inside(dpcap.arimoto_mi(res.prior, W, alpha), res)


@pytest.mark.parametrize("alpha", [3.0, math.inf])
def test_naive_renyi_information_against_enumeration(alpha: float) -> None:
    """``sup_p D_α(P_XY ‖ P_X P_Y)``: the same diameter; both lower ends (searches) below it.

    Small sizes: the enumerated side runs a multi-start local search over its databases.
    """
    scores = [[0, 1], [0, 1, 1]]
    noise = noises(span(scores))["random"]
    W, shape, _ = dense(scores, noise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        res = renyi_capacity(dpcap.Mechanism.additive(scores, noise), alpha, kind="naive")
        ref = renyi_capacity(dpcap.Mechanism(W, shape), alpha, kind="naive")
    assert res.upper == pytest.approx(ref.upper, rel=1e-12)
    assert max(res.lower, ref.lower) <= min(res.upper, ref.upper) + SLACK
    if math.isfinite(alpha):
        inside(dpcap.renyi_mi(res.prior, W, alpha), res)


@pytest.mark.parametrize("name", list(SCORES))
def test_max_leakage_against_enumeration(name: str) -> None:
    scores = SCORES[name]
    noise = noises(span(scores))["random"]
    W, _, _ = dense(scores, noise)
    expected = math.log(float(W.max(axis=0).sum()))
    assert max_leakage(dpcap.Mechanism.additive(scores, noise)) == pytest.approx(
        expected, rel=1e-14
    )


@pytest.mark.parametrize("name", ["count", "ternary", "mixed", "gaps"])
def test_correlated_leakage_against_enumeration(name: str) -> None:
    scores = SCORES[name]
    noise = noises(span(scores))["random"]
    W, shape, _ = dense(scores, noise)
    M = dpcap.Mechanism.additive(scores, noise)
    for entry in (None, 0, len(scores) - 1):
        res = correlated_leakage(M, entry=entry, tol=TOL)
        ref = correlated_leakage(dpcap.Mechanism(W, shape), entry=entry, tol=TOL)
        overlap(res, ref)
        if entry is not None:
            assert res.entry == entry


# --------------------------------------------------------------------------- the reduced channel


@pytest.mark.parametrize("name", list(SCORES))
def test_bit_level_agreement_with_the_reduced_channel(name: str) -> None:
    scores = SCORES[name]
    noise = noises(span(scores))["geometric"]
    _, _, totals = dense(scores, noise)
    lowest = sum(min(s) for s in scores)
    M = dpcap.Mechanism.additive(scores, noise)
    R = M.noise[np.array(totals) - lowest]  # the stored noise rows of the reachable totals
    for unit in ("nats", "bits"):
        a, b = dpcap.capacity(M, unit=unit), dpcap.capacity(R, unit=unit)
        assert (a.value, a.lower, a.upper, a.iterations) == (
            b.value,
            b.lower,
            b.upper,
            b.iterations,
        )
        assert np.array_equal(a.total_prior, b.prior)
        assert np.array_equal(a.output, b.output)
    for alpha, kind in ((2.0, "sibson"), (2.0, "arimoto"), (math.inf, "sibson")):
        a, b = renyi_capacity(M, alpha, kind=kind), renyi_capacity(R, alpha, kind=kind)
        assert (a.value, a.lower, a.upper) == (b.value, b.lower, b.upper)
        assert np.array_equal(a.total_prior, b.prior)
    assert max_leakage(M) == max_leakage(R)


def test_capacities_gives_each_element_as_capacity_does() -> None:
    Ws = [
        counting_query(6, truncated_geometric(6, 0.5)),
        [[0.9, 0.1], [0.2, 0.8]],
        dpcap.Mechanism.additive(SCORES["mixed"], noises(span(SCORES["mixed"]))["random"]),
        counting_query(3, truncated_geometric(3, 0.5)),
    ]
    batch = dpcap.capacities(Ws)
    for i, W in enumerate(Ws):
        one = dpcap.capacity(W)
        got = batch[i]
        assert (got.value, got.lower, got.upper, got.iterations) == (
            one.value,
            one.lower,
            one.upper,
            one.iterations,
        )
        assert np.array_equal(got.prior, one.prior)
        assert np.array_equal(got.output, one.output)
    assert batch.shapes[0] == (64, 7)
    assert batch.shapes[2] == (18, 5)


def test_capacities_refuses_a_law_it_cannot_hold() -> None:
    big = counting_query(40, truncated_geometric(40, 0.5))
    refused = r"Ws\[1\] is a structured mechanism on .* dense prior"
    with pytest.raises(ProblemTooLargeError, match=refused):
        dpcap.capacities([np.eye(2), big])


def test_nothing_is_enumerated(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the dense matrix forbidden, every structured query still answers."""
    M = dpcap.Mechanism.additive(SCORES["mixed"], noises(span(SCORES["mixed"]))["random"])

    def refuse(self: Any) -> None:
        raise AssertionError("the dense matrix was built")

    monkeypatch.setattr(AdditiveMechanism, "matrix", property(refuse))
    monkeypatch.setattr(AdditiveMechanism, "log_matrix", property(refuse))
    assert dpcap.capacity(M).status is Status.CONVERGED
    assert renyi_capacity(M, 2.0).status is Status.CONVERGED
    assert renyi_capacity(M, 0.0).status is Status.CONVERGED
    assert math.isfinite(max_leakage(M))
    assert correlated_leakage(M).status is Status.CONVERGED


# --------------------------------------------------------------------------- n = 40: closed forms


def rr_restricted(K: int, k: int, eps: float) -> tuple[float, float, float]:
    """Capacity, Sibson capacity of order 2 and maximal leakage of ``k`` rows of the K-ary
    randomized response (diagonal p, off-diagonal q) with their diagonal columns.

    The channel is invariant under permuting the k rows together with their columns, so the
    uniform prior is optimal (capacity concave in the prior; for order 2 its Sibson centre
    makes every row's divergence equal, closing the radius bound): with ``m`` the output mass
    of a used column, ``C = p log(p/m) + (k−1) q log(q/m)``, the unused columns adding
    nothing, and ``C_2 = 2 log(√(k (p² + (k−1) q²)) + (K − k) q)``.
    """
    p = 1.0 / (1.0 + (K - 1) * math.exp(-eps))
    q = math.exp(-eps) * p
    m = (p + (k - 1) * q) / k
    shannon = p * math.log(p / m) + (k - 1) * q * math.log(q / m)
    sibson2 = 2.0 * math.log(math.sqrt(k * (p * p + (k - 1) * q * q)) + (K - k) * q)
    leakage = math.log(k * p + (K - k) * q)
    return shannon, sibson2, leakage


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_count_of_forty_with_randomized_response(eps: float) -> None:
    n = 40
    M = counting_query(n, randomized_response(n + 1, eps))
    shannon, sibson2, leakage = rr_restricted(n + 1, n + 1, eps)
    p = 1.0 / (1.0 + n * math.exp(-eps))
    q = math.exp(-eps) * p
    assert shannon == pytest.approx(math.log(n + 1) + p * math.log(p) + n * q * math.log(q))
    inside(shannon, dpcap.capacity(M, tol=TOL))
    inside(sibson2, renyi_capacity(M, 2.0, tol=TOL))
    assert max_leakage(M) == pytest.approx(leakage, rel=1e-14)


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_only_even_totals_reachable(eps: float) -> None:
    """Scores {0, 2} on 40 entries: the 41 even totals of 0..80 (the odd rows are unused)."""
    n = 40
    M = dpcap.Mechanism.additive([[0, 2]] * n, randomized_response(2 * n + 1, eps))
    shannon, sibson2, leakage = rr_restricted(2 * n + 1, n + 1, eps)
    res = dpcap.capacity(M, tol=TOL)
    inside(shannon, res)
    assert res.totals.tolist() == list(range(0, 2 * n + 1, 2))
    inside(sibson2, renyi_capacity(M, 2.0, tol=TOL))
    assert max_leakage(M) == pytest.approx(leakage, rel=1e-14)
    # strictly below the capacity of the whole noise: the odd totals cannot be used
    assert res.upper < dpcap.capacity(randomized_response(2 * n + 1, eps)).lower


def test_count_of_forty_with_geometric_noise() -> None:
    n = 40
    noise = truncated_geometric(n, 0.5)
    M = counting_query(n, noise)
    res = dpcap.capacity(M)
    ref = dpcap.capacity(noise)  # every count 0..n is reachable: the whole noise channel
    assert res.status is Status.CONVERGED
    overlap(res, ref)
    assert res.value == dpcap.capacity(M.noise).value  # the stored noise, bit for bit
    assert res.prior.shape == (0,)  # 2^40 databases: no dense law
    assert res.totals.tolist() == list(range(n + 1))
    for k in range(n + 1):  # the first database with k ones puts them last
        assert res.databases[k].tolist() == [0] * (n - k) + [1] * k
    assert res.total_prior.sum() == pytest.approx(1.0, abs=1e-15)
    inside(dpcap.mutual_information(res.total_prior, noise), res)
    json.dumps(res.to_dict())  # JSON-safe, with its structured law
    assert "41 reachable totals" in res.message
    assert "StructuredCapacityResult" in repr(res)


def test_weak_adversary_of_a_count_of_forty() -> None:
    """``sup I(X_i; Y)``: a value 0 meets totals 0..39, a value 1 totals 1..40."""
    n = 40
    noise = np.asarray(truncated_geometric(n, 0.5))
    res = correlated_leakage(counting_query(n, noise), tol=TOL)
    pairs = np.stack([noise[[t, u]] for t in range(n) for u in range(1, n + 1)])
    each = dpcap.capacities(pairs, tol=TOL)
    assert res.lower <= float(np.max(each.upper)) + SLACK
    assert float(np.max(each.lower)) <= res.upper + SLACK
    assert res.entry == 0


# --------------------------------------------------------------------------- properties


@st.composite
def additive(draw: Any) -> tuple[list[list[int]], FloatArray]:
    n = draw(st.integers(1, 4))
    scores = [draw(st.lists(st.integers(-2, 3), min_size=1, max_size=3)) for _ in range(n)]
    rows = span(scores)
    ny = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    return scores, dirichlet(seed, rows, ny)


@settings(max_examples=30, deadline=None)
@given(additive())
def test_property_structured_equals_enumerated(case: tuple[list[list[int]], FloatArray]) -> None:
    scores, noise = case
    W, shape, totals = dense(scores, noise)
    M = dpcap.Mechanism.additive(scores, noise)
    res = dpcap.capacity(M, tol=TOL)
    overlap(res, dpcap.capacity(dpcap.Mechanism(W, shape), tol=TOL))
    assert res.lower <= math.log(len(totals)) + SLACK
    assert res.lower <= dpcap.capacity(noise, tol=TOL).upper + SLACK
    assert max_leakage(M) == pytest.approx(math.log(float(W.max(axis=0).sum())), rel=1e-14)


@settings(max_examples=30, deadline=None)
@given(additive(), st.randoms(use_true_random=False))
def test_property_entry_order_does_not_matter(
    case: tuple[list[list[int]], FloatArray], rnd: Any
) -> None:
    scores, noise = case
    permuted = list(scores)
    rnd.shuffle(permuted)
    a = dpcap.capacity(dpcap.Mechanism.additive(scores, noise))
    b = dpcap.capacity(dpcap.Mechanism.additive(permuted, noise))
    assert (a.value, a.lower, a.upper) == (b.value, b.lower, b.upper)
    assert np.array_equal(a.totals, b.totals)


def test_dense_law_only_up_to_the_prior_limit() -> None:
    # 2^21 databases > MAX_DENSE_PRIOR: the law is held by totals/databases only
    M = counting_query(21, truncated_geometric(21, 1.0))
    res = dpcap.capacity(M)
    assert res.prior.shape == (0,)
    assert isinstance(res, StructuredCapacityResult)
    assert res.total_prior.sum() == pytest.approx(1.0, abs=1e-12)
    assert res.databases.shape == (22, 21)
    # each representative database has the total it stands for
    assert res.databases.sum(axis=1).tolist() == res.totals.tolist()


def test_representatives_beyond_the_limit_are_refused_before_any_work() -> None:
    # a count of 8000 entries: 8001 totals x 8000 entries > MAX_WITNESS_ENTRIES
    M = counting_query(8000, randomized_response(8001, 1.0))
    with pytest.raises(ProblemTooLargeError, match=r"8001 x 8000 integers"):
        dpcap.capacity(M)
