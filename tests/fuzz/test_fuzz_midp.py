"""Fuzz group ``midp``: :func:`dpcap.midp`, :func:`dpcap.renyi_midp` and
:func:`dpcap.correlated_leakage`.

Reference: the slice decomposition enumerated by brute force from the definition
(``docs/mathematics.rst`` §2: ``max_i max_{x^{-i}} C(W_{i, x^{-i}})``), each slice bracketed by
the independent Blahut–Arimoto (or Sibson) reference; correlated leakage by enumerating every
choice of one context per value; closed forms of Cuff & Yu's examples; the sandwich
``MI-DP ≤ ε tanh(ε/2)`` and ``I(X_i; Y | X^{-i}) ≤ MI-DP`` for every law.
"""

from __future__ import annotations

import itertools
import math
import warnings

import mpmath
import numpy as np
from _harness import fuzz
from _reference import (
    capacity_reference,
    eps_pair,
    max_leakage_reference,
    mp_mutual_information,
    mp_sibson,
    normalise,
    ordered_pairs,
    sibson_capacity_reference,
    worst_pair,
)
from hypothesis import given
from hypothesis import strategies as st

import dpcap
from dpcap import mechanisms as mech
from dpcap.testing import channels, distributions, epsilons, mechanisms, orders

FLOAT_SLACK = 1e-12


def no_deep_tiny(case: tuple[np.ndarray, tuple[int, ...]]) -> bool:
    """Masses near 1e-300 meet the capacity engine's known gap (F1, test_fuzz_capacity)."""
    return not ((case[0] > 0) & (case[0] < 1e-150)).any()


small_mechanisms = mechanisms(max_entries=3, max_size=3, max_rows=9, degenerate=True).filter(
    no_deep_tiny
)


def quietly(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        return call(*args, **kwargs)


def slices(W: np.ndarray, shape: tuple[int, ...], group: tuple[int, ...]):
    """``{context: rows}``: the slice channels over the entries of ``group``, by definition."""
    tensor = normalise(W).reshape(*shape, -1)
    rest = [i for i in range(len(shape)) if i not in group]
    out = {}
    for context in itertools.product(*(range(shape[i]) for i in rest)):
        rows = []
        for values in itertools.product(*(range(shape[i]) for i in group)):
            index = [0] * len(shape)
            for i, v in zip(group, values, strict=True):
                index[i] = v
            for i, v in zip(rest, context, strict=True):
                index[i] = v
            rows.append(tensor[tuple(index)])
        out[context] = np.array(rows)
    return out


def short_reference(S: np.ndarray) -> tuple[float, float]:
    return capacity_reference(S, iterations=800)


def reference(W, shape, group, bracket=short_reference):
    """``(max lo, max hi)`` of the slices' brackets over the contexts."""
    brackets = [bracket(S) for S in slices(W, shape, group).values()]
    return max(b[0] for b in brackets), max(b[1] for b in brackets)


def contains(lower: float, upper: float, ref: tuple[float, float]) -> None:
    lo, hi = ref
    allowance = FLOAT_SLACK * (1 + abs(hi))
    assert lower <= hi + allowance, (lower, upper, ref)
    assert upper >= lo - allowance, (lower, upper, ref)


@fuzz(examples=3000, quick=6)
@given(case=small_mechanisms)
def test_midp_matches_the_slice_decomposition(case) -> None:
    W, shape = case
    M = dpcap.Mechanism(W, shape)
    res = quietly(dpcap.midp, M)
    assert 0 <= res.lower <= res.upper
    assert res.value == res.upper
    overall = []
    for i in range(len(shape)):
        ref = reference(W, shape, (i,))
        contains(res.per_entry_lower[i], res.per_entry[i], ref)
        overall.append(ref)
    contains(res.lower, res.upper, (max(r[0] for r in overall), max(r[1] for r in overall)))
    # the witness: its prior on the slice of (entry, context) attains lower
    S = slices(W, shape, (res.entry,))[tuple(res.context)]
    info = float(mp_mutual_information(res.prior, S))
    assert res.lower <= info + FLOAT_SLACK * (1 + info), (res, info)


@fuzz(examples=1500, quick=4)
@given(
    case=mechanisms(max_entries=3, max_size=2, max_rows=8, degenerate=True).filter(no_deep_tiny),
    data=st.data(),
)
def test_group_leakage(case, data: st.DataObject) -> None:
    W, shape = case
    size = data.draw(st.integers(1, len(shape)))
    group = tuple(sorted(data.draw(st.permutations(range(len(shape))))[:size]))
    res = quietly(dpcap.midp, dpcap.Mechanism(W, shape), group=list(group))
    contains(res.lower, res.upper, reference(W, shape, group))
    if len(group) == len(shape):  # the whole database: the free-lunch capacity C(W)
        contains(res.lower, res.upper, capacity_reference(W))


@fuzz(examples=500, quick=4)
@given(
    case=mechanisms(max_entries=2, max_size=2, max_rows=4, degenerate=True).filter(no_deep_tiny),
    alpha=orders(min_value=0.1, max_value=20.0),
)
def test_renyi_midp(case, alpha: float) -> None:
    W, shape = case
    M = dpcap.Mechanism(W, shape)
    res = quietly(dpcap.renyi_midp, M, alpha)
    assert 0 <= res.lower <= res.upper
    if alpha == 1.0:
        bracket = short_reference
    elif math.isinf(alpha):

        def bracket(S):
            value = float(max_leakage_reference(S))
            return value - 1e-15, value + 1e-15
    else:

        def bracket(S):
            return sibson_capacity_reference(S, alpha)

    refs = [reference(W, shape, (i,), bracket) for i in range(len(shape))]
    contains(res.lower, res.upper, (max(r[0] for r in refs), max(r[1] for r in refs)))
    if 0 < alpha < math.inf and alpha != 1.0:
        S = slices(W, shape, (res.entry,))[tuple(res.context)]
        own = float(mp_sibson(res.prior, S, alpha))
        assert res.lower <= own + FLOAT_SLACK * (1 + own)


@fuzz(examples=1000, quick=4)
@given(case=mechanisms(max_entries=2, max_size=3, max_rows=6, degenerate=True).filter(no_deep_tiny))
def test_correlated_leakage(case) -> None:
    """``sup_P I(X_i; Y)``: the best capacity over choices of one context per value of X_i."""
    W, shape = case
    res = quietly(dpcap.correlated_leakage, dpcap.Mechanism(W, shape))
    refs = []
    for i in range(len(shape)):
        per_value: dict[int, list[np.ndarray]] = {}
        for S in slices(W, shape, (i,)).values():
            for a in range(shape[i]):
                per_value.setdefault(a, []).append(S[a])
        for choice in itertools.product(*(per_value[a] for a in range(shape[i]))):
            refs.append(short_reference(np.array(choice)))
    contains(res.lower, res.upper, (max(r[0] for r in refs), max(r[1] for r in refs)))
    # the witness rows define a channel whose information at the prior is lower
    tensor = normalise(W).reshape(*shape, -1)
    rows = []
    for a, context in enumerate(res.rows):
        index = list(context)
        index.insert(res.entry, a)
        rows.append(tensor[tuple(index)])
    info = float(mp_mutual_information(res.prior, np.array(rows)))
    assert res.lower <= info + FLOAT_SLACK * (1 + info)


@fuzz(examples=2000, quick=4)
@given(case=small_mechanisms, data=st.data())
def test_sandwich_and_conditional_information(case, data: st.DataObject) -> None:
    """ε-DP ⇒ MI-DP ≤ ε tanh(ε/2) (Cuff & Yu, Property 1, Lemma 1), and every law's
    ``I(X_i; Y | X^{-i})`` is at most the entry's MI-DP level."""
    W, shape = case
    M = dpcap.Mechanism(W, shape)
    res = quietly(dpcap.midp, M)
    eps = worst_pair(normalise(W), ordered_pairs(shape, "hamming"), eps_pair)
    if math.isfinite(eps):
        assert res.lower <= eps * math.tanh(eps / 2) * (1 + 1e-12) + FLOAT_SLACK
    law = data.draw(distributions(W.shape[0])).reshape(shape)
    for i in range(len(shape)):
        cmi = dpcap.conditional_mutual_information(law, M, i)
        assert cmi <= res.per_entry[i] + FLOAT_SLACK * (1 + cmi), (i, cmi, res.per_entry)


@fuzz(examples=1500, quick=4)
@given(
    n=st.integers(1, 3),
    k=st.integers(2, 3),
    eps=epsilons(max_value=30.0),
    prob=st.floats(0.0, 1.0),
    m=st.integers(2, 4),
)
def test_closed_forms(n: int, k: int, eps: float, prob: float, m: int) -> None:
    """per_entry(RR): C(RR); revealing: prob·ln 2; one-time pad: log m (Cuff & Yu, Ex. 4, 5)."""
    rr = mech.randomized_response(k, eps)
    e = mpmath.exp(-mpmath.mpf(eps))
    p = 1 / (1 + (k - 1) * e)
    q = e * p
    exact = mpmath.log(k) + p * mpmath.log(p) + ((k - 1) * q * mpmath.log(q) if q > 0 else 0)
    res = quietly(dpcap.midp, mech.per_entry(n, rr))
    assert abs(res.value - float(exact)) <= 1e-9 * float(exact) + 1e-14, (res, float(exact))
    rev = quietly(dpcap.midp, mech.revealing(2, m, prob))
    assert abs(rev.value - prob * math.log(2)) <= 1e-9
    pad = quietly(dpcap.midp, mech.one_time_pad(m))
    assert abs(pad.value - math.log(m)) <= 1e-9
    assert pad.lower <= math.log(m) + FLOAT_SLACK


@fuzz(examples=800, quick=3)
@given(
    n=st.integers(1, 6),
    noise=channels(min_inputs=2, max_inputs=2, max_outputs=4, degenerate=True),
    data=st.data(),
)
def test_counting_query(n: int, noise: np.ndarray, data: st.DataObject) -> None:
    """MI-DP of a counting query is ``max_c C([W_c; W_{c+1}])``; structured and dense agree."""
    rows = [noise[data.draw(st.integers(0, 1))] for _ in range(n + 1)]
    V = np.array(rows)
    M = mech.counting_query(n, V)
    res = quietly(dpcap.midp, M)
    refs = [short_reference(V[c : c + 2]) for c in range(n)]
    contains(res.lower, res.upper, (max(r[0] for r in refs), max(r[1] for r in refs)))
    if n <= 3:
        dense = quietly(dpcap.midp, dpcap.Mechanism(M.matrix, M.shape))
        allowance = FLOAT_SLACK * (1 + res.upper)
        assert dense.lower <= res.upper + allowance
        assert res.lower <= dense.upper + allowance
