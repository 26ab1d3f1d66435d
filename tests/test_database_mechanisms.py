"""Histograms, bounded sums and query-then-noise mechanisms (issue 13, item 4).

Theorems checked (each mechanism is compared with its dense matrix, built here with
``itertools.product`` from the definition, never from the structured code):

* ``histogram``: the rows are ``⊗_j N_j[c_j(x)]``; ``dpcap.midp``, ``dp_epsilon``,
  ``dp_delta_curve`` and ``capacity`` agree with the enumerated matrix (brackets overlap,
  DP metrics within 1e-12), for equal and per-cell noises and per-entry cell maps;
* closed forms: one entry in two cells with randomized-response noise on each count is an
  erasure channel followed by a binary symmetric channel of crossover ``q²/(p²+q²)``:
  ``C = MI-DP = (p² + q²)(log 2 − h(q²/(p²+q²)))``, ``ε = 2ε₀``, ``δ(ε) = (p² − e^ε q²)_+``;
  with truncated geometric noise on every cell, ``ε = 2ε₀`` (L1 sensitivity 2);
* a two-cell histogram is a count with the product noise ``c ↦ N_0[n − c] ⊗ N_1[c]``;
* ``bounded_sum``: equals the enumerated sum; with truncated geometric noise ``ε = max_i Δ_i ε₀``;
* ``from_function``: the value table, the value pairs of Hamming neighbours and the value
  channel agree with enumeration; the value channel has the mechanism's capacity and DP
  metrics (the lemma of :mod:`dpcap.shannon.structured` with the score replaced by the query);
  MI-DP from the value patterns equals the dense MI-DP; closed forms for parity (a BSC:
  ``C = MI-DP = log 2 − h(q)``, ``ε = ε₀``) and the maximum of bits (``log 2``, ``ε = ∞``);
* error messages (pytest.raises with match) and the evaluation guard.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

import dpcap
import dpcap.function_mechanism as fm
from dpcap import Channel, Mechanism
from dpcap.errors import ChannelError, MechanismError, ProblemTooLargeError
from dpcap.mechanisms import (
    bounded_sum,
    counting_query,
    from_function,
    histogram,
    randomized_response,
    truncated_geometric,
)

TOL = 1e-10
EPS_GRID = np.array([0.0, 0.25, 0.5, 1.0, 2.0])


def _h(q: float) -> float:
    return -q * math.log(q) - (1 - q) * math.log(1 - q)


def _dense_histogram(cells: list[list[int]], noises: list[Any]) -> Mechanism:
    mats = [np.asarray(N, dtype=float) for N in noises]
    rows = []
    for x in itertools.product(*[range(len(c)) for c in cells]):
        counts = [0] * len(mats)
        for i, a in enumerate(x):
            counts[cells[i][a]] += 1
        row = np.ones(1)
        for j, N in enumerate(mats):
            row = np.kron(row, N[counts[j]])
        rows.append(row)
    return Mechanism(np.array(rows), tuple(len(c) for c in cells))


def _dense_function(query: Any, noise: Any, shape: tuple[int, ...]) -> Mechanism:
    N = np.asarray(noise, dtype=float)
    rows = [N[query(x)] for x in itertools.product(*[range(m) for m in shape])]
    return Mechanism(np.array(rows), shape)


def _overlap(a: Any, b: Any) -> None:
    assert a.lower <= b.upper + 1e-12, (a, b)
    assert b.lower <= a.upper + 1e-12, (a, b)
    assert a.upper - a.lower <= 1e-8
    assert b.upper - b.lower <= 1e-8


def _agree(structured: Any, dense: Mechanism, *, channel: Any = None) -> None:
    """Every structured metric against the enumerated matrix; ``channel`` replaces the
    structured object for the capacity and DP metrics (the value channel)."""
    target = structured if channel is None else channel
    assert abs(dpcap.dp_epsilon(target) - dpcap.dp_epsilon(dense)) <= 1e-12 or (
        math.isinf(dpcap.dp_epsilon(target)) and math.isinf(dpcap.dp_epsilon(dense))
    )
    np.testing.assert_allclose(
        dpcap.dp_delta_curve(target, EPS_GRID), dpcap.dp_delta_curve(dense, EPS_GRID), atol=1e-12
    )
    _overlap(dpcap.capacity(target, tol=TOL), dpcap.capacity(dense, tol=TOL))
    _overlap(dpcap.midp(structured, tol=TOL), dpcap.midp(dense, tol=TOL))


# --- histogram --------------------------------------------------------------------------------


def test_histogram_one_entry_two_cells_randomized_response_closed_form() -> None:
    eps0 = 0.8
    p, q = math.exp(eps0) / (1 + math.exp(eps0)), 1 / (1 + math.exp(eps0))
    M = histogram([[0, 1]], randomized_response(2, eps0))
    rho = q**2 / (p**2 + q**2)
    closed = (p**2 + q**2) * (math.log(2) - _h(rho))
    cap = dpcap.capacity(M, tol=TOL)
    assert cap.lower - 1e-12 <= closed <= cap.upper + 1e-12
    res = dpcap.midp(M, tol=TOL)
    assert res.lower - 1e-12 <= closed <= res.upper + 1e-12
    assert math.isclose(dpcap.dp_epsilon(M), 2 * eps0, rel_tol=0, abs_tol=1e-12)
    expected = np.maximum(p**2 - np.exp(EPS_GRID) * q**2, 0.0)
    np.testing.assert_allclose(dpcap.dp_delta_curve(M, EPS_GRID), expected, atol=1e-12)


@pytest.mark.parametrize("eps0", [0.3, 1.0])
def test_histogram_truncated_geometric_epsilon_is_twice(eps0: float) -> None:
    n, k = 3, 3
    M = histogram([range(k)] * n, truncated_geometric(n, eps0))
    assert math.isclose(dpcap.dp_epsilon(M), 2 * eps0, rel_tol=0, abs_tol=1e-12)
    dense = _dense_histogram([list(range(k))] * n, [truncated_geometric(n, eps0)] * k)
    assert np.allclose(M.matrix, dense.matrix, rtol=0, atol=1e-15)
    _agree(M, dense)


def test_histogram_per_cell_noise_and_cell_maps_match_enumeration() -> None:
    n = 3
    cells = [[0, 1, 2], [1, 2], [2, 0, 0, 1]]  # entry 1 cannot fall in cell 0
    noises = [randomized_response(n + 1, 0.7), truncated_geometric(n, 1.1), np.eye(n + 1)]
    M = histogram(cells, noises)
    dense = _dense_histogram(cells, noises)
    assert M.shape == (3, 2, 4)
    assert M.n_outputs == 4 * 4 * 4
    assert np.allclose(M.matrix, dense.matrix, rtol=0, atol=1e-15)
    _agree(M, dense)


def test_two_cell_histogram_is_a_count_with_product_noise() -> None:
    n, eps0 = 4, 0.6
    N0, N1 = truncated_geometric(n, eps0).matrix, randomized_response(n + 1, 1.3).matrix
    product = np.array([np.kron(N0[n - c], N1[c]) for c in range(n + 1)])
    M = histogram([[0, 1]] * n, [N0, N1])
    C = counting_query(n, product)
    assert np.allclose(M.matrix, C.matrix, rtol=0, atol=1e-15)
    assert abs(dpcap.dp_epsilon(M) - dpcap.dp_epsilon(C)) <= 1e-12


def test_histogram_keeps_logs_that_underflow() -> None:
    n = 2
    noise = truncated_geometric(n, 400.0)  # rows with entries near e^-800
    M = histogram([[0, 1, 2]] * n, noise)
    assert math.isclose(dpcap.dp_epsilon(M), 800.0, rel_tol=1e-12)


def test_histogram_errors() -> None:
    with pytest.raises(MechanismError, match=r"cells\[1\] must hold cells in \[0, 1\]"):
        histogram([[0, 1], [0, 2]], [np.eye(3), np.eye(3)])
    with pytest.raises(ChannelError, match=r"noise must have n \+ 1 = 3 rows"):
        histogram([[0, 1]] * 2, np.eye(2))
    with pytest.raises(ChannelError, match=r"noise\[1\] must have n \+ 1 = 2 rows"):
        histogram([[0, 1]], [np.eye(2), np.eye(3)])
    with pytest.raises(MechanismError, match="cells must describe at least one entry"):
        histogram([], np.eye(1))
    with pytest.raises(MechanismError, match=r"cells\[0\] must be a non-empty 1-D array"):
        histogram([[0.5, 1.0]], np.eye(2))
    with pytest.raises(ProblemTooLargeError, match="noise table of this histogram"):
        histogram([range(6)] * 30, truncated_geometric(30, 1.0))


# --- bounded sums -----------------------------------------------------------------------------


def test_bounded_sum_matches_enumeration_and_closed_epsilon() -> None:
    sets = [[0, 1, 2], {3, -1}, [5, 5, 6]]  # a set is sorted: entry 1 holds -1 or 3
    span = 2 + 4 + 1
    eps0 = 0.7
    M = bounded_sum(sets, truncated_geometric(span, eps0))
    assert M.shape == (3, 2, 3)
    values = [[0, 1, 2], [-1, 3], [5, 5, 6]]
    lowest = 0 - 1 + 5
    N = truncated_geometric(span, eps0).matrix
    rows = [
        N[sum(v[a] for v, a in zip(values, x, strict=True)) - lowest]
        for x in itertools.product(range(3), range(2), range(3))
    ]
    dense = Mechanism(np.array(rows), (3, 2, 3))
    assert np.array_equal(M.matrix, dense.matrix)
    assert math.isclose(dpcap.dp_epsilon(M), 4 * eps0, rel_tol=0, abs_tol=1e-12)  # Δ = 4
    _agree(M, dense)


def test_bounded_sum_errors() -> None:
    with pytest.raises(MechanismError, match=r"noise must have one row per possible total \(0..4"):
        bounded_sum([[0, 1, 2]] * 2, np.eye(4))
    with pytest.raises(MechanismError, match="score_sets must be a sequence"):
        bounded_sum(3, np.eye(4))
    with pytest.raises(MechanismError, match=r"score_sets\[1\] must be a non-empty 1-D array"):
        bounded_sum([[0, 1], [0.5, 1.5]], np.eye(4))


# --- from_function ----------------------------------------------------------------------------


def _query(x: tuple[int, ...]) -> int:
    return (x[0] + 2 * x[1] * x[2]) % 4


def test_from_function_value_table_and_pairs_match_enumeration() -> None:
    shape = (3, 2, 2)
    M = from_function(_query, randomized_response(4, 1.0), shape)
    dbs = list(itertools.product(*[range(m) for m in shape]))
    assert M.values.ravel().tolist() == [_query(x) for x in dbs]
    pairs = {
        (min(_query(x), _query(y)), max(_query(x), _query(y)))
        for x, y in itertools.combinations(dbs, 2)
        if sum(a != b for a, b in zip(x, y, strict=True)) == 1 and _query(x) != _query(y)
    }
    I, J = M.neighbor_rows()
    assert set(zip(I.tolist(), J.tolist(), strict=True)) == pairs
    assert M.reachable().tolist() == sorted({_query(x) for x in dbs})


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_from_function_metrics_match_enumeration(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (2, 3, 2)
    table = rng.integers(0, 5, size=shape)
    noise = rng.dirichlet(np.ones(4), size=6)  # row 5 never used

    def query(x: tuple[int, ...]) -> int:
        return int(table[x])

    M = from_function(query, noise, shape)
    dense = _dense_function(query, noise, shape)
    assert np.array_equal(M.matrix, dense.matrix)
    V = M.value_channel()
    assert V.n_inputs == len(np.unique(table))
    _agree(M, dense, channel=V)
    _agree(M, dense)  # the mechanism itself (dense fallback of the DP metrics)


def test_from_function_parity_closed_form() -> None:
    eps0, n = 1.2, 4
    q = 1 / (1 + math.exp(eps0))
    M = from_function(lambda x: sum(x) % 2, randomized_response(2, eps0), (2,) * n)
    closed = math.log(2) - _h(q)
    res = dpcap.midp(M, tol=TOL)
    assert res.lower - 1e-12 <= closed <= res.upper + 1e-12
    assert res.slices == 2  # one class of entries; two value patterns, (0, 1) and (1, 0)
    cap = dpcap.capacity(M.value_channel(), tol=TOL)
    assert cap.lower - 1e-12 <= closed <= cap.upper + 1e-12
    assert math.isclose(dpcap.dp_epsilon(M.value_channel()), eps0, rel_tol=0, abs_tol=1e-12)
    assert M.entry_classes() == [[0, 1, 2, 3]]


def test_from_function_max_of_bits() -> None:
    M = from_function(max, np.eye(2), (2, 2, 2))
    assert math.isclose(dpcap.midp(M, tol=TOL).lower, math.log(2), rel_tol=1e-9)
    assert math.isinf(dpcap.dp_epsilon(M.value_channel()))
    assert M.entry_classes() == [[0, 1, 2]]


def test_from_function_asymmetric_query_keeps_entries_apart() -> None:
    M = from_function(lambda x: x[0], np.eye(3), (3, 3))
    assert M.entry_classes() == [[0], [1]]
    res = dpcap.midp(M, tol=TOL)
    assert math.isclose(res.lower, math.log(3), rel_tol=1e-9)
    assert res.entry == 0
    assert res.per_entry[1] <= 1e-12


def test_from_function_vectorized_equals_scalar() -> None:
    shape = (3, 4, 2)
    noise = randomized_response(5, 0.4)
    a = from_function(lambda x: (x[0] * x[1] + x[2]) % 5, noise, shape)
    b = from_function(lambda X: (X[:, 0] * X[:, 1] + X[:, 2]) % 5, noise, shape, vectorized=True)
    assert a == b


def test_from_function_other_relations() -> None:
    shape = (4,)
    M = from_function(lambda x: x[0] // 2, truncated_geometric(1, 1.0), shape, neighbors="line")
    I, J = M.neighbor_rows()
    assert (I.tolist(), J.tolist()) == ([0], [1])
    dense = _dense_function(lambda x: x[0] // 2, truncated_geometric(1, 1.0), shape)
    assert math.isclose(
        dpcap.dp_epsilon(M.value_channel()),
        dpcap.dp_epsilon(dense, neighbors="line"),
        rel_tol=0,
        abs_tol=1e-12,
    )
    constant = from_function(lambda x: 0, np.eye(2), (2, 2))
    assert dpcap.dp_epsilon(constant.value_channel()) == 0.0


def test_from_function_row_and_slice() -> None:
    M = from_function(_query, randomized_response(4, 1.0), (3, 2, 2))
    dense = _dense_function(_query, randomized_response(4, 1.0), (3, 2, 2))
    assert np.array_equal(M.row((2, 1, 1)), dense.row((2, 1, 1)))
    assert M.slice(1, (2, 1)) == dense.slice(1, (2, 1))


def test_from_function_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MechanismError, match=r"row index of noise in \[0, 1\], got 2"):
        from_function(lambda x: 2, np.eye(2), (2,))
    with pytest.raises(MechanismError, match="must return an integer row index"):
        from_function(lambda x: 0.5, np.eye(2), (2,))
    with pytest.raises(MechanismError, match="query must be callable"):
        from_function(3, np.eye(2), (2,))
    with pytest.raises(MechanismError, match="one value per database"):
        from_function(lambda X: np.zeros(3, dtype=int), np.eye(2), (2, 2), vectorized=True)
    monkeypatch.setattr(fm, "MAX_QUERY_EVALUATIONS", 8)
    with pytest.raises(ProblemTooLargeError, match="evaluate the query on 16 databases"):
        from_function(lambda x: 0, np.eye(2), (2,) * 4)


def test_function_mechanism_is_a_channel_free_value_object() -> None:
    M = from_function(max, np.eye(2), (2, 2))
    assert isinstance(M, Mechanism)
    with pytest.raises(AttributeError, match="immutable"):
        M.foo = 1  # type: ignore[attr-defined]
    assert repr(M) == "FunctionMechanism(shape=(2, 2), 2 values x 2 outputs)"
    assert isinstance(M.value_channel(), Channel)


def test_from_function_all_relation_pairs_every_value() -> None:
    M = from_function(lambda x: x[0] + x[1], np.eye(3), (2, 2), neighbors="all")
    I, J = M.neighbor_rows()
    assert (I.tolist(), J.tolist()) == ([0, 0, 1], [1, 2, 2])
    assert math.isinf(dpcap.dp_epsilon(M.value_channel()))


def test_from_function_metrics_never_build_the_dense_matrix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # parity of 4 bits through randomized response: ε = ε0, capacity = MI-DP = ln 2 − h(q)
    eps0, n = 1.2, 4
    q = 1 / (1 + math.exp(eps0))
    M = from_function(lambda x: sum(x) % 2, randomized_response(2, eps0), (2,) * n)

    def refuse(self: Any) -> Any:
        raise AssertionError("the dense matrix was built")

    monkeypatch.setattr(fm.FunctionMechanism, "matrix", property(refuse))
    assert math.isclose(dpcap.dp_epsilon(M), eps0, rel_tol=0, abs_tol=1e-12)
    delta = dpcap.dp_delta_curve(M, EPS_GRID)
    closed = np.maximum(0.0, (1 - q) - np.exp(EPS_GRID) * q)  # RR(2, ε0) rows (1−q, q)
    np.testing.assert_allclose(delta, closed, atol=1e-12)
    cap = dpcap.capacity(M, tol=TOL)
    assert cap.lower - 1e-12 <= math.log(2) - _h(q) <= cap.upper + 1e-12
    # the law sits on the first database of each value: (0,0,0,0) and (0,0,0,1)
    assert cap.databases.tolist() == [[0, 0, 0, 0], [0, 0, 0, 1]]
    assert math.isclose(cap.prior.sum(), 1.0, rel_tol=1e-12)
    assert math.isclose(dpcap.max_leakage(M), math.log(2 * (1 - q)), rel_tol=1e-12)
    ren = dpcap.renyi_capacity(M, 2.0, tol=TOL)
    c2 = math.log(2) + math.log(q**2 + (1 - q) ** 2)  # ln 2 − H_2(q)
    assert ren.lower - 1e-12 <= c2 <= ren.upper + 1e-12


def test_mechanism_from_function_is_the_same_constructor() -> None:
    def parity(x: tuple[int, ...]) -> int:
        return sum(x) % 2

    A = from_function(parity, randomized_response(2, 0.7), (2, 3))
    B = from_function(parity, randomized_response(2, 0.7), (2, 3))
    assert isinstance(A, fm.FunctionMechanism)
    assert A == B
    assert np.array_equal(A.values, B.values)


def test_explicit_relation_keeps_the_structured_path(monkeypatch: pytest.MonkeyPatch) -> None:
    eps0 = 0.9
    M = from_function(lambda x: sum(x) % 2, randomized_response(2, eps0), (2,) * 5)

    def refuse(self: Any) -> Any:
        raise AssertionError("the dense matrix was built")

    monkeypatch.setattr(fm.FunctionMechanism, "matrix", property(refuse))
    # hamming named explicitly: ε0; every pair of databases ("all"): still ε0 (two values)
    assert math.isclose(dpcap.dp_epsilon(M, neighbors="hamming"), eps0, abs_tol=1e-12)
    assert math.isclose(dpcap.dp_epsilon(M, neighbors="all"), eps0, abs_tol=1e-12)
    q = 1 / (1 + math.exp(eps0))
    delta = dpcap.dp_delta_curve(M, [0.0], neighbors="all")
    assert delta[0] == pytest.approx(1 - 2 * q, abs=1e-12)  # the TV of RR(2, ε0)


def test_oversized_histograms_are_refused_not_overflowed() -> None:
    with pytest.raises(ProblemTooLargeError, match="noise table of this histogram"):
        histogram([range(40)] * 3, truncated_geometric(3, 1.0))
    with pytest.raises(ProblemTooLargeError, match="noise table of this histogram"):
        histogram([range(30)] * 1000, truncated_geometric(1000, 1.0))
