"""Composition of independent releases (:func:`dpcap.product_channel.compose`) and its bounds.

Theorems and closed forms checked:

* the composition is the product channel ``W[x, (y_1, …, y_k)] = Π_j W_j[x, y_j]`` with outputs
  in C order (``y_1`` slowest): equal to an explicit ``numpy.einsum`` construction, for random
  channels and database mechanisms (hypothesis), keeping the shape and the relation;
* k releases of binary randomized response RR(ε) on one bit are the channel
  ``x → (y_1, …, y_k)`` with i.i.d. flips ``q = 1/(1+e^ε)``, whose capacity (= MI-DP) is
  ``C_k = H(Y^k) − k h(q)``, ``H(Y^k) = −Σ_j C(k,j) p_j log p_j``,
  ``p_j = ½(q^j(1−q)^{k−j} + (1−q)^j q^{k−j})``; their ε-DP level is exactly ``kε``;
* on a 2-entry database (RR applied to each entry, Hamming neighbours) k releases have MI-DP
  ``C_k`` (the other entry's outputs are independent of the entry) and group leakage
  ``2 C_k`` (a product of two independent channels);
* Cuff & Yu, Corollary 2 (eq. 43): MI-DP of the composition ≤ Σ_j ε_j; Corollary 3 (an
  adaptive second release); Corollary 4 (eq. 44): releases reading disjoint entries are
  ``max_j ε_j``-MI-DP, with equality here; Corollary 5 (eq. 54) for the group leakage; basic
  composition of ε-DP (Σ_j ε_j), exact for randomized response and for truncated geometric
  noise on a count (every part attains its level on the same pair and the same output);
* k releases of truncated geometric noise on a count: between counts t and t+1 every release
  is, through the sufficient statistic ``1[y ≤ t]``, binary RR(ε), so for every n the MI-DP is
  ``C_k``, ε is ``kε`` and δ(ε') is a binomial hockey-stick sum (checked at n = 100 and 40
  without enumerating databases);
* additive parts on the same scores compose to an additive mechanism whose noise is the
  row-wise Kronecker product of the noises: the same matrix, MI-DP, ε, δ(ε) and capacity as
  the dense composition (small n), and at n = 1000 the MI-DP of a count equals the largest
  capacity of the two-row slices ``[N_t; N_{t+1}]`` of the explicit product noise, and
  δ(ε') the largest hockey-stick divergence between them;
* where products underflow, the log matrix keeps ε exact;
* the size guard fires before anything is built, with the sizes in the message; bad input is
  refused naming the argument.

Expected values are closed forms or explicit constructions written here, never the output of
the code under test.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import bounds, testing
from dpcap.channel import AdditiveMechanism, Mechanism
from dpcap.errors import (
    ChannelError,
    MechanismError,
    NeighborError,
    ParameterError,
    ProblemTooLargeError,
)
from dpcap.mechanisms import counting_query, per_entry, randomized_response, truncated_geometric
from dpcap.product_channel import compose

TOL = 1e-9
LN2 = math.log(2.0)
h = bounds.binary_entropy


def product(*matrices: np.ndarray) -> np.ndarray:
    """The product channel by an explicit einsum, outputs in C order (first factor slowest)."""
    letters = "abcdefgh"[: len(matrices)]
    spec = ",".join(f"x{c}" for c in letters) + "->x" + letters
    out = np.einsum(spec, *[np.asarray(M, dtype=float) for M in matrices])
    return out.reshape(out.shape[0], -1)


def repeated_rr_capacity(eps: float, k: int) -> float:
    """C_k = H(Y^k) − k h(q) of k i.i.d. looks at one bit through RR(ε), in nats."""
    q = 1.0 / (1.0 + math.exp(eps))
    js = np.arange(k + 1)
    p = 0.5 * (q**js * (1 - q) ** (k - js) + (1 - q) ** js * q ** (k - js))
    binom = np.array([math.comb(k, int(j)) for j in js], dtype=float)
    return float(-np.sum(binom * p * np.log(p)) - k * h(q))


def inside(
    res: dpcap.MIDPResult | dpcap.CapacityResult, value: float, slack: float = 1e-12
) -> bool:
    return res.lower - slack <= value <= res.upper + slack


# --------------------------------------------------------------------------------------------
# The product channel


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_product_channel_matches_einsum(data: st.DataObject) -> None:
    W, shape = data.draw(testing.mechanisms(max_rows=8))
    rows = W.shape[0]
    others = [
        data.draw(testing.channels(min_inputs=rows, max_inputs=rows, max_outputs=3))
        for _ in range(data.draw(st.integers(0, 2)))
    ]
    M = compose(Mechanism(W, shape), *[Mechanism(o, shape) for o in others])
    assert M.shape == shape
    assert M.neighbors == "hamming"
    assert M.n_outputs == W.shape[1] * math.prod(o.shape[1] for o in others)
    np.testing.assert_allclose(M.matrix, product(W, *others), rtol=1e-14, atol=1e-300)


def test_output_order_is_c_order() -> None:
    A = np.array([[0.2, 0.8], [0.6, 0.4]])
    B = np.array([[0.1, 0.3, 0.6], [0.5, 0.25, 0.25]])
    M = compose(A, B)
    for x in range(2):
        for a in range(2):
            for b in range(3):
                column = int(np.ravel_multi_index((a, b), (2, 3)))
                assert M.matrix[x, column] == pytest.approx(A[x, a] * B[x, b], rel=1e-15)


def test_one_part_is_the_mechanism_itself() -> None:
    rr = randomized_response(3, 0.7)
    M = compose(rr)
    np.testing.assert_array_equal(M.matrix, rr.matrix)
    assert M.neighbors == "all"
    assert M.shape == (3,)
    P = per_entry(2, rr)
    assert compose(P) is P
    assert compose(P, neighbors="all") == P.with_neighbors("all")


def test_relation_is_carried_over() -> None:
    tg = truncated_geometric(4, 0.5)
    assert compose(tg, tg).neighbors == "line"
    P = per_entry(2, randomized_response(2, 1.0))
    assert compose(P, P, P).neighbors == "hamming"
    # one entry: "hamming" (a plain array) and "all" (randomized response) are the same relation
    rr = randomized_response(2, 1.0)
    assert compose(rr, np.asarray(rr)).neighbors == "all"
    pairs = [[0, 1], [2, 3]]
    M = compose(tg, tg.with_neighbors("all"), neighbors=pairs)
    np.testing.assert_array_equal(np.asarray(M.neighbors), pairs)


# --------------------------------------------------------------------------------------------
# k releases of randomized response: closed form, Cor. 2, basic composition


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_rr_one_bit_closed_form_and_corollary_2(eps: float, k: int) -> None:
    rr = randomized_response(2, eps)
    M = compose(*[rr] * k)
    q = 1.0 / (1.0 + math.exp(eps))
    c1 = LN2 - h(q)
    ck = repeated_rr_capacity(eps, k)
    res = dpcap.midp(M, tol=TOL)
    assert inside(res, ck)
    assert inside(dpcap.capacity(M, tol=TOL), ck)
    # Corollary 2 (eq. 43) holds, with equality only for k = 1 (the looks overlap)
    cor2 = bounds.midp_composition([c1] * k)
    assert cor2 == pytest.approx(k * c1, rel=1e-15)
    assert res.value <= cor2 + 1e-12
    if k > 1:
        assert ck < cor2 * (1 - 1e-3)
    # the chain of Cor. 2 and ln 2 (one bit): C_k ≤ min(k C_1, ln 2)
    assert res.value <= LN2
    # basic composition of ε-DP is exact for randomized response
    assert dpcap.dp_epsilon(M) == pytest.approx(k * eps, rel=1e-12)
    assert bounds.dp_composition([eps] * k) == pytest.approx(k * eps, rel=1e-15)


def test_rr_tightness_of_corollary_2_closed_form() -> None:
    """The ratio C_k / (k C_1) falls with k: at ε = 1, 1, 0.907, 0.831, 0.767, 0.713 (k=1..5),
    and C_k → ln 2 (the bit is revealed) as k → ∞."""
    c1 = repeated_rr_capacity(1.0, 1)
    ratios = [repeated_rr_capacity(1.0, k) / (k * c1) for k in range(1, 6)]
    assert ratios[0] == pytest.approx(1.0, rel=1e-14)
    assert all(b < a for a, b in itertools.pairwise(ratios))
    assert repeated_rr_capacity(1.0, 200) == pytest.approx(LN2, abs=1e-6)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_rr_two_entries_hamming_and_group(k: int) -> None:
    eps = 1.0
    rr = randomized_response(2, eps)
    P = per_entry(2, rr)  # RR on each entry, carries "hamming"
    M = compose(*[P] * k)
    assert M.shape == (2, 2)
    assert M.neighbors == "hamming"
    np.testing.assert_allclose(M.matrix, product(*[P.matrix] * k), rtol=1e-14)
    ck = repeated_rr_capacity(eps, k)
    c1 = LN2 - h(1.0 / (1.0 + math.exp(eps)))
    res = dpcap.midp(M, tol=TOL)
    assert inside(res, ck)
    np.testing.assert_allclose(res.per_entry, ck, atol=TOL)
    assert res.value <= bounds.midp_composition([c1] * k) + 1e-12  # Corollary 2
    assert dpcap.dp_epsilon(M) == pytest.approx(k * eps, rel=1e-12)  # Hamming neighbours
    # group of both entries: two independent copies of the k-look channel, and Corollary 5
    group = dpcap.midp(M, group=[0, 1], tol=TOL)
    assert inside(group, 2 * ck, slack=2e-12)
    cor5 = bounds.group_midp_bound(res.upper, 2, n_outputs=M.n_outputs, max_entry_size=2)
    assert group.value <= cor5
    # ε-DP's group privacy: databases that differ in both entries are 2kε apart
    assert dpcap.dp_epsilon(M, neighbors="all") == pytest.approx(2 * k * eps, rel=1e-12)


def test_corollary_4_partial_queries_is_tight() -> None:
    """Y_1 reads only X_1, Y_2 only X_2: together as private as one release (eq. 44)."""
    rr = randomized_response(2, 1.0).matrix
    first = Mechanism(np.repeat(rr, 2, axis=0), (2, 2))  # row (x1, x2) -> rr[x1]
    second = Mechanism(np.tile(rr, (2, 1)), (2, 2))  # row (x1, x2) -> rr[x2]
    M = compose(first, second)
    np.testing.assert_allclose(M.matrix, np.kron(rr, rr), rtol=1e-15)
    c1 = LN2 - h(1.0 / (1.0 + math.e))
    levels = [dpcap.midp(first, tol=TOL).upper, dpcap.midp(second, tol=TOL).upper]
    assert levels == pytest.approx([c1, c1], abs=TOL)
    res = dpcap.midp(M, tol=TOL)
    assert inside(res, c1)
    cor4 = bounds.midp_partial_composition(levels)
    assert res.value <= cor4 + 1e-12
    assert res.value / cor4 == pytest.approx(1.0, abs=1e-8)  # tight
    assert res.value < 0.51 * bounds.midp_composition(levels)  # Cor. 2 is twice too loose


def test_corollary_3_adaptive_second_release() -> None:
    """RR(ε_1), then RR(ε_a) or RR(ε_b) depending on the first answer (built explicitly)."""
    first = randomized_response(2, 1.0).matrix
    second = {0: randomized_response(2, 0.5).matrix, 1: randomized_response(2, 2.0).matrix}
    W = np.zeros((2, 4))
    for y1 in (0, 1):
        W[:, 2 * y1 : 2 * y1 + 2] = first[:, [y1]] * second[y1]
    c = {e: LN2 - h(1.0 / (1.0 + math.exp(e))) for e in (1.0, 0.5, 2.0)}
    bound = bounds.midp_sequential_composition([c[1.0], max(c[0.5], c[2.0])])
    res = dpcap.midp(W, tol=TOL)
    assert res.value <= bound
    assert 0.5 < res.value / bound < 1.0


# --------------------------------------------------------------------------------------------
# Truncated geometric noise on a count: the structured form


@pytest.mark.parametrize(("n", "eps"), [(3, 1.0), (5, 0.5)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_geometric_count_structured_equals_dense(n: int, eps: float, k: int) -> None:
    A = counting_query(n, truncated_geometric(n, eps))
    S = compose(*[A] * k)
    D = compose(*[Mechanism(A.matrix, A.shape)] * k)
    assert isinstance(S, AdditiveMechanism)
    assert not isinstance(D, AdditiveMechanism)
    assert S.shape == D.shape == (2,) * n
    assert S.neighbors == "hamming"
    np.testing.assert_array_equal(S.scores, A.scores)
    np.testing.assert_allclose(S.noise, product(*[A.noise] * k), rtol=1e-14)
    np.testing.assert_allclose(S.matrix, D.matrix, rtol=1e-14)
    np.testing.assert_allclose(D.matrix, product(*[A.matrix] * k), rtol=1e-14)
    ms, md = dpcap.midp(S, tol=TOL), dpcap.midp(D, tol=TOL)
    assert ms.lower <= md.upper + 1e-12
    assert md.lower <= ms.upper + 1e-12
    # every release attains ε on counts (t, t+1) at the top output: basic composition is exact
    assert dpcap.dp_epsilon(S) == pytest.approx(k * eps, rel=1e-12)
    assert dpcap.dp_epsilon(D) == pytest.approx(k * eps, rel=1e-12)
    for level in (0.0, 0.5 * eps, eps):
        assert dpcap.dp_delta(S, level) == pytest.approx(dpcap.dp_delta(D, level), abs=1e-13)
    cs, cd = dpcap.capacity(S, tol=TOL), dpcap.capacity(D, tol=TOL)
    assert cs.lower <= cd.upper + 1e-12
    assert cd.lower <= cs.upper + 1e-12
    # Corollary 2 against the exact MI-DP of one release
    assert ms.value <= bounds.midp_composition([dpcap.midp(A, tol=TOL).upper] * k) + 1e-12
    # every slice is k looks through RR(ε) (see geometric_count_delta): MI-DP = C_k
    assert inside(ms, repeated_rr_capacity(eps, k))
    # group privacy, Corollary 5
    group = dpcap.midp(S, group=[0, 1], tol=TOL)
    dense_group = dpcap.midp(D, group=[0, 1], tol=TOL)
    assert group.lower <= dense_group.upper + 1e-12
    assert dense_group.lower <= group.upper + 1e-12
    cor5 = bounds.group_midp_bound(ms.upper, 2, n_outputs=S.n_outputs, max_entry_size=2)
    assert group.value <= cor5


def _binned_geometric(n: int, eps: float, bins: int) -> dpcap.Channel:
    """Truncated geometric noise on {0..n}, released as one of ``bins`` equal bins."""
    post = np.zeros((n + 1, bins))
    post[np.arange(n + 1), np.minimum(np.arange(n + 1) * bins // (n + 1), bins - 1)] = 1.0
    return truncated_geometric(n, eps).compose(post)


def test_geometric_count_of_1000_people() -> None:
    """Two releases of binned geometric noise on a count of 1000 (2^1000 databases)."""
    n, eps, bins = 1000, 0.1, 20
    A = counting_query(n, _binned_geometric(n, eps, bins))
    start = time.perf_counter()
    S = compose(A, A)
    res = dpcap.midp(S, tol=TOL)
    epsilon = dpcap.dp_epsilon(S)
    delta = dpcap.dp_delta(S, 0.1)
    elapsed = time.perf_counter() - start
    assert isinstance(S, AdditiveMechanism)
    assert S.n_outputs == bins**2
    N = product(A.noise, A.noise)
    np.testing.assert_allclose(S.noise, N, rtol=1e-14, atol=1e-300)
    # MI-DP of a count = max_t C([N_t; N_{t+1}]) (the slice of an entry given t other ones)
    slices = np.stack([N[:-1], N[1:]], axis=1)
    caps = dpcap.capacities(slices, tol=TOL)
    assert res.lower <= caps.upper.max() + 1e-12
    assert caps.lower.max() <= res.upper + 1e-12
    # δ(ε') = max over neighbouring counts of the hockey-stick divergence, both directions
    hockey = np.maximum(
        np.maximum(N[:-1] - math.exp(0.1) * N[1:], 0).sum(axis=1),
        np.maximum(N[1:] - math.exp(0.1) * N[:-1], 0).sum(axis=1),
    )
    assert delta == pytest.approx(hockey.max(), abs=1e-13)
    # the top bin is a one-sided geometric tail: ratio exactly e^ε between counts t and t+1
    assert epsilon == pytest.approx(2 * eps, rel=1e-12)
    one = dpcap.midp(A, tol=TOL)
    assert res.value <= bounds.midp_composition([one.upper, one.upper]) + 1e-12
    assert elapsed < 30.0  # about 0.15 s on one core


def geometric_count_delta(eps: float, k: int, level: float) -> float:
    """δ(ε') of k releases of truncated geometric noise on a count, in closed form.

    Between counts t and t+1 the likelihood ratio of one release is e^ε if y ≤ t and e^{−ε}
    if y > t, and P(Y ≤ t | t) = p = 1/(1+e^{−ε}), P(Y ≤ t | t+1) = 1 − p: the number J of
    releases at most t is sufficient, Binomial(k, p) against Binomial(k, 1 − p), for every t.
    So δ(ε') = Σ_j C(k, j) (p^j (1−p)^{k−j} − e^{ε'} (1−p)^j p^{k−j})^+ (both directions alike).
    """
    p = 1.0 / (1.0 + math.exp(-eps))
    terms = [
        math.comb(k, j)
        * (p**j * (1 - p) ** (k - j) - math.exp(level) * (1 - p) ** j * p ** (k - j))
        for j in range(k + 1)
    ]
    return sum(max(t, 0.0) for t in terms)


@pytest.mark.parametrize(("n", "k"), [(100, 2), (40, 3)])
def test_geometric_count_closed_forms_without_enumeration(n: int, k: int) -> None:
    """k releases of truncated geometric noise on a count of n (2^n databases): MI-DP = C_k
    (every slice is k looks through RR(ε)), ε = kε and δ(ε') in closed form."""
    eps = 0.5
    A = counting_query(n, truncated_geometric(n, eps))
    S = compose(*[A] * k)
    assert isinstance(S, AdditiveMechanism)
    assert S.noise.shape == (n + 1, (n + 1) ** k)
    assert inside(dpcap.midp(S, tol=TOL), repeated_rr_capacity(eps, k))
    assert dpcap.dp_epsilon(S) == pytest.approx(k * eps, rel=1e-12)
    for level in (0.0, 0.5 * eps, eps, (k - 1) * eps):
        expected = geometric_count_delta(eps, k, level)
        assert dpcap.dp_delta(S, level) == pytest.approx(expected, rel=1e-9, abs=1e-14)


def test_mixed_parts_fall_back_to_dense() -> None:
    A = counting_query(3, truncated_geometric(3, 1.0))
    B = Mechanism.additive([[0, 2]] * 3, truncated_geometric(6, 0.5).matrix)  # other scores
    M = compose(A, B)
    assert not isinstance(M, AdditiveMechanism)
    np.testing.assert_allclose(M.matrix, product(A.matrix, B.matrix), rtol=1e-14)


# --------------------------------------------------------------------------------------------
# Underflow: the log matrix


def test_underflowing_products_keep_their_logs() -> None:
    tiny = 1e-200
    W = np.array([[1 - tiny, tiny], [tiny, 1 - tiny]])
    M = compose(W, W)  # the output (1, 1) has probability 1e-400 under x = 0
    assert M.matrix[0, 3] == 0.0
    assert M.log_matrix is not None
    assert dpcap.dp_epsilon(M) == pytest.approx(-2 * math.log(tiny), rel=1e-12)
    rr = randomized_response(2, 800.0)  # carries its own log matrix (q = e^-800)
    assert dpcap.dp_epsilon(compose(rr, rr, rr)) == pytest.approx(2400.0, rel=1e-12)
    A = counting_query(3, truncated_geometric(3, 400.0))
    S = compose(A, A)
    assert isinstance(S, AdditiveMechanism)
    assert S.log_noise is not None
    assert dpcap.dp_epsilon(S) == pytest.approx(800.0, rel=1e-12)


# --------------------------------------------------------------------------------------------
# The size guard and bad input


def test_size_guard_names_the_sizes() -> None:
    A = counting_query(1000, truncated_geometric(1000, 0.1))
    match = r"\(outputs 1001 x 1001\) would be a dense 1001 x 1002001 matrix"
    with pytest.raises(ProblemTooLargeError, match=match):
        compose(A, A)
    B = Mechanism.additive([[0, 2]] * 1000, np.full((2001, 2), 0.5))
    # 2^1000 databases: refused by the composition's guard, before any part is made dense
    match = (
        r"composition of 2 mechanisms on shape \(2, 2, 2, … \(1000 in all\), 2\) "
        r"\(outputs 1001 x 2\) would be a dense ~10\^301.0 x 2002 matrix "
        r".*not all additive on the same scores"
    )
    with pytest.raises(ProblemTooLargeError, match=match):
        compose(A, B)
    rr = np.asarray(randomized_response(2, 1.0))
    match = r"\(outputs 2 x 2 x 2 x … \(27 in all\) x 2\) would be a dense 2 x 134217728"
    with pytest.raises(ProblemTooLargeError, match=match):
        compose(*[rr] * 27)


def test_bad_input_names_the_argument() -> None:
    rr = randomized_response(2, 1.0)
    with pytest.raises(MechanismError, match="at least one mechanism"):
        compose()
    with pytest.raises(ChannelError, match=r"mechanisms\[1\] must be .*the string 'W.npy'"):
        compose(rr, "W.npy")
    with pytest.raises(ChannelError, match=r"mechanisms\[1\] is not row-stochastic: row 0"):
        compose(rr, [[0.5, 0.6], [1.0, 0.0]])
    with pytest.raises(MechanismError, match=r"mechanisms\[1\] has domain sizes \(3,\).*\(2,\)"):
        compose(rr, np.eye(3))
    P = per_entry(2, rr)
    with pytest.raises(MechanismError, match=r"mechanisms\[2\] has domain sizes \(4,\)"):
        compose(P, P, np.kron(rr.matrix, rr.matrix))
    tg = truncated_geometric(1, 1.0)
    with pytest.raises(MechanismError, match=r"mechanisms\[1\] carries neighbors='line'.*'all'"):
        compose(rr, tg)
    assert compose(rr, tg, neighbors="all").neighbors == "all"
    with pytest.raises(NeighborError, match="neighbors must be one of"):
        compose(rr, rr, neighbors="nearby")
    with pytest.raises(MechanismError, match=r"mechanisms\[0\] is a sequence.*compose\(\*mech"):
        compose([rr, rr])


# --------------------------------------------------------------------------------------------
# The bound functions


def test_bounds_broadcast_and_return_types() -> None:
    assert isinstance(bounds.midp_composition([0.1, 0.2]), float)
    np.testing.assert_allclose(bounds.midp_composition([[0.1, 0.2], 0.3]), [0.4, 0.5])
    np.testing.assert_allclose(bounds.midp_partial_composition([[0.1, 0.4], 0.3]), [0.3, 0.4])
    np.testing.assert_allclose(bounds.midp_sequential_composition(np.array([0.1, 0.2])), 0.3)
    assert bounds.dp_composition([1.0, math.inf]) == math.inf
    grid = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(bounds.dp_composition([grid] * 3), 3 * grid)


@pytest.mark.parametrize(
    "function",
    [
        bounds.midp_composition,
        bounds.midp_sequential_composition,
        bounds.midp_partial_composition,
        bounds.dp_composition,
    ],
)
def test_bounds_refuse_bad_levels(function: object) -> None:
    assert callable(function)
    with pytest.raises(ParameterError, match="levels must be a sequence with one level per"):
        function(0.5)
    with pytest.raises(ParameterError, match="levels must hold at least one level"):
        function([])
    with pytest.raises(ParameterError, match=r"levels\[1\] must be >= 0"):
        function([0.1, -0.2])
    with pytest.raises(ParameterError, match=r"levels\[0\] must not be NaN"):
        function([math.nan])
    with pytest.raises(ParameterError, match=r"must broadcast together, got shapes \(2,\), \(3,\)"):
        function([[0.1, 0.2], [0.1, 0.2, 0.3]])


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_composition_bounds_hold_for_random_mechanisms(data: st.DataObject) -> None:
    """Cor. 2 and basic composition on random mechanisms of the same shape."""
    W, shape = data.draw(testing.mechanisms(max_rows=6, max_outputs=3, allow_zeros=False))
    rows = W.shape[0]
    V = data.draw(testing.positive_channels(min_inputs=rows, max_inputs=rows, max_outputs=3))
    parts = [Mechanism(W, shape), Mechanism(V, shape)]
    M = compose(*parts)
    levels = [dpcap.midp(p, tol=TOL).upper for p in parts]
    assert dpcap.midp(M, tol=TOL).lower <= bounds.midp_composition(levels) + 1e-12
    eps = [dpcap.dp_epsilon(p) for p in parts]
    assert dpcap.dp_epsilon(M) <= bounds.dp_composition(eps) * (1 + 1e-12) + 1e-12
