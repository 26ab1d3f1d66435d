"""``dpcap.capacities`` on a list of channels: element i is ``dpcap.capacity(Ws[i])``, exactly.

A list is reduced channel by channel as :func:`dpcap.capacity` reduces it, solved in batches of
one reduced shape and certified on each original channel, so the contract is equality of every
field, bit for bit, with the loop; and, as for any capacity, ``lower ≤ C ≤ upper`` for a value of
``C`` computed here independently (a one-dimensional search for two-input channels, closed forms
for the identity, constant, ``1×k`` and ``k×1`` channels; ``docs/mathematics.rst`` §1).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import xlogy

import dpcap
from dpcap import CapacitiesResult, ChannelError, ConvergenceWarning, Status
from dpcap.mechanisms import binary_symmetric, randomized_response, truncated_geometric
from dpcap.solvers import blahut
from dpcap.testing import channels

FloatArray = NDArray[np.float64]

#: Rounding slack of an independently computed capacity (≤ log 6 nats, a few dozen roundings).
SLACK = 1e-12
SETTINGS = settings(max_examples=30, deadline=None)


def assert_same(batch: CapacitiesResult, i: int, one: dpcap.CapacityResult) -> None:
    """Element ``i`` of a batch equals a single result, bit for bit."""
    element = batch[i]
    assert (batch.value[i], batch.lower[i], batch.upper[i]) == (one.value, one.lower, one.upper)
    assert (element.value, element.lower, element.upper) == (one.value, one.lower, one.upper)
    assert np.array_equal(element.prior, one.prior)
    assert np.array_equal(element.output, one.output)
    assert element.iterations == one.iterations
    assert element.status is one.status
    assert element.unit == one.unit
    assert element.tol == one.tol
    assert element.message == one.message  # its own conclusion, not the batch's


def ragged_family() -> list[Any]:
    """Every kind of reduction and size, with repeated reduced shapes (batched together)."""
    rng = np.random.default_rng(11)
    dup = rng.dirichlet(np.ones(4), size=3)
    zero_column = np.insert(rng.dirichlet(np.ones(3), size=3), 1, 0.0, axis=1)
    proportional = np.array([[0.1, 0.2, 0.7], [0.3, 0.6, 0.1], [0.05, 0.1, 0.85]])
    return [
        np.eye(4),
        np.full((3, 5), 0.2),  # constant: capacity 0
        np.ones((1, 1)),
        np.full((1, 4), 0.25),  # 1×k
        np.ones((5, 1)),  # k×1
        np.vstack([dup, dup[1], dup[0]]),  # duplicate rows
        zero_column,
        proportional,  # columns 0 and 1 proportional
        [[0.9, 0.1], [0.1, 0.9]],
        binary_symmetric(0.2),  # a Channel
        randomized_response(5, 1.0),  # a mechanism object
        rng.dirichlet(np.ones(6), size=4),
        rng.dirichlet(np.ones(6), size=4),
        np.asfortranarray(rng.dirichlet(np.ones(6), size=4)),  # column-major, solved alone
        np.eye(3),
        *(truncated_geometric(n, eps) for n in (2, 5, 9) for eps in (0.3, 1.0)),
        np.eye(4),  # the same channel twice
    ]


class TestEqualsTheLoop:
    def test_ragged_family_bit_for_bit(self) -> None:
        Ws = ragged_family()
        batch = dpcap.capacities(Ws)
        assert isinstance(batch, CapacitiesResult)
        assert batch.shapes == tuple(np.asarray(W).shape for W in Ws)
        for i, W in enumerate(Ws):
            assert_same(batch, i, dpcap.capacity(W))
            rows, cols = batch.shapes[i]
            assert np.isnan(batch.prior[i, rows:]).all()
            assert np.isnan(batch.output[i, cols:]).all()
            assert not np.isnan(batch.prior[i, :rows]).any()
        assert batch.converged.all(), batch.message

    def test_tuple_tolerance_units_and_budget(self) -> None:
        """An unreachable tol, bits and a budget of 2: every status as the loop's, and one
        warning for the batch."""
        Ws = tuple(ragged_family())
        with pytest.warns(ConvergenceWarning, match=r"channels not converged"):
            batch = dpcap.capacities(Ws, tol=1e-300, max_iter=2, unit="bits")
        assert not batch.converged.all()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for i, W in enumerate(Ws):
                assert_same(batch, i, dpcap.capacity(W, tol=1e-300, max_iter=2, unit="bits"))

    def test_groups_split_into_stacks(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A reduced shape with more channels than one stack holds is solved in several."""
        monkeypatch.setattr(blahut, "BLOCK_ELEMENTS", 40)
        rng = np.random.default_rng(3)
        Ws = [rng.dirichlet(np.ones(5), size=3) for _ in range(7)] + [np.eye(7)]
        batch = dpcap.capacities(Ws)
        for i, W in enumerate(Ws):
            assert_same(batch, i, dpcap.capacity(W))

    def test_screened_reductions_are_reduce_channel(self) -> None:
        """Small channels skip ``reduce_channel`` only when it would return them unchanged."""
        from dpcap.shannon.shannon_capacity import _reductions
        from dpcap.solvers.reduce import reduce_channel

        rng = np.random.default_rng(8)
        Ws = []
        for _ in range(60):
            W = rng.dirichlet(np.ones(4), size=3)
            kind = rng.integers(0, 5)
            if kind == 1:  # an exact duplicate row
                W = np.vstack([W, W[1]])
            elif kind == 2:  # a zero column
                W = np.insert(W, 2, 0.0, axis=1)
            elif kind == 3:  # a column split in two proportional ones
                W = np.hstack([W[:, :3], 0.25 * W[:, 3:], 0.75 * W[:, 3:]])
            elif kind == 4:  # columns proportional up to a rounding of their normalisation
                W = np.hstack([W[:, :3], W[:, 3:] * (1 / 3), W[:, 3:] * (2 / 3)])
            Ws.append(W / W.sum(axis=1, keepdims=True))
        for W, got in zip(Ws, _reductions(Ws), strict=True):
            want = reduce_channel(W)
            assert np.array_equal(got.matrix, want.matrix)
            assert got.matrix.flags.c_contiguous == want.matrix.flags.c_contiguous
            assert np.array_equal(got.rows, want.rows)
            assert got.n_inputs == want.n_inputs

    def test_stack_path_brackets_agree(self) -> None:
        """A 3-D array skips the reductions; its brackets still hold the loop's values."""
        stack = np.array(
            [
                [[0.5, 0.3, 0.2], [0.5, 0.3, 0.2], [0.1, 0.1, 0.8]],  # duplicate rows
                [[0.6, 0.0, 0.4], [0.2, 0.0, 0.8], [0.9, 0.0, 0.1]],  # a zero column
                [[0.1, 0.2, 0.7], [0.3, 0.6, 0.1], [0.05, 0.1, 0.85]],  # proportional columns
            ]
        )
        batch = dpcap.capacities(stack)
        assert batch.shapes == ((3, 3),) * 3
        for i in range(3):
            one = dpcap.capacity(stack[i])
            assert batch.lower[i] - SLACK <= one.upper
            assert one.lower <= batch.upper[i] + SLACK
            assert batch.status[i] is Status.CONVERGED


# --------------------------------------------------------------------------- an independent C


def information(t: float, W: FloatArray) -> float:
    """``I(p, W)`` for ``p = (t, 1 − t)`` on a two-row channel, as ``H(pW) − Σ_x p_x H(W_x)``."""
    p = np.array([t, 1.0 - t])
    q = p @ W
    return float(-xlogy(q, q).sum() + (p[:, None] * xlogy(W, W)).sum())


def two_input_capacity(W: FloatArray) -> float:
    """``max_t I(t)`` by golden-section search (``I`` is concave in ``t ∈ [0, 1]``).

    200 steps shrink the interval below any float spacing; near the maximum ``I`` is flat to
    second order, so the value found is ``C`` to the rounding of one evaluation of ``I`` (a few
    dozen operations on numbers below ``log 6``: well under :data:`SLACK`).
    """
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = 0.0, 1.0
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = information(c, W), information(d, W)
    for _ in range(200):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = information(c, W)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = information(d, W)
    return max(fc, fd, information(0.0, W), information(1.0, W))


@st.composite
def known_channels(draw: Any) -> tuple[FloatArray, float]:
    """A channel and its capacity, computed without dpcap."""
    kind = draw(st.sampled_from(("two", "two", "two", "identity", "constant", "row", "column")))
    if kind == "identity":
        n = draw(st.integers(1, 4))
        return np.eye(n), math.log(n)
    if kind == "constant":
        row = np.asarray(draw(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=4)))
        return np.tile(row / row.sum(), (draw(st.integers(1, 4)), 1)), 0.0
    if kind == "row":
        row = np.asarray(draw(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=5)))
        return (row / row.sum())[None, :], 0.0
    if kind == "column":
        return np.ones((draw(st.integers(1, 5)), 1)), 0.0
    W = draw(channels(min_inputs=2, max_inputs=2, min_outputs=1, max_outputs=5))
    C = two_input_capacity(W)
    if draw(st.booleans()):  # a duplicate input, then shuffled: the capacity is unchanged
        W = np.vstack([W, W[draw(st.integers(0, 1))]])[list(draw(st.permutations(range(3))))]
    if draw(st.booleans()):  # an output no input produces
        W = np.insert(W, draw(st.integers(0, W.shape[1])), 0.0, axis=1)
    return W, C


class TestProperties:
    @SETTINGS
    @given(st.lists(known_channels(), min_size=1, max_size=6))
    def test_brackets_contain_the_capacity(self, cases: list[tuple[FloatArray, float]]) -> None:
        Ws = [W for W, _ in cases]
        batch = dpcap.capacities(Ws)
        assert batch.shapes == tuple(W.shape for W in Ws)
        for i, (W, C) in enumerate(cases):
            assert batch.lower[i] - SLACK <= C <= batch.upper[i] + SLACK
            assert batch.status[i] is Status.CONVERGED
            assert batch.upper[i] - batch.lower[i] <= 1e-9
            assert_same(batch, i, dpcap.capacity(W))

    @SETTINGS
    @given(
        st.lists(
            channels(min_inputs=1, max_inputs=5, min_outputs=1, max_outputs=5, underflow=True),
            min_size=1,
            max_size=6,
        )
    )
    def test_degenerate_channels_equal_the_loop(self, Ws: list[FloatArray]) -> None:
        """Zero, ``-0.0``, subnormal and near-duplicate entries: still the loop, bit for bit."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            batch = dpcap.capacities(Ws)
            for i, W in enumerate(Ws):
                assert_same(batch, i, dpcap.capacity(W))


# --------------------------------------------------------------------------- bad input


class TestBadInput:
    def test_empty_list(self) -> None:
        with pytest.raises(ChannelError, match=r"Ws must hold at least one channel"):
            dpcap.capacities([])
        with pytest.raises(ChannelError, match=r"Ws must hold at least one channel"):
            dpcap.capacities(())

    @pytest.mark.parametrize(
        ("bad", "match"),
        [
            ([[0.3, 0.3], [0.5, 0.5]], r"Ws\[2\] is not row-stochastic: row 0 sums to 0\.6"),
            ([[0.5, np.nan], [0.5, 0.5]], r"Ws\[2\] contains NaN"),
            ([[1.5, -0.5], [0.5, 0.5]], r"Ws\[2\] has a negative entry"),
            (np.ones((2, 2, 1)), r"Ws\[2\] must be a 2-D matrix"),
            ([0.5, 0.5], r"Ws\[2\] must be a 2-D matrix"),
            (np.zeros((0, 3)), r"Ws\[2\] must have at least one row"),
            ("W.npy", r"Ws\[2\] must be an array of real numbers"),
            (None, r"Ws\[2\] must be an array of real numbers, got None"),
        ],
    )
    def test_bad_element_is_named(self, bad: object, match: str) -> None:
        with pytest.raises(ChannelError, match=match):
            dpcap.capacities([np.eye(2), np.eye(3), bad, np.eye(2)])

    def test_not_a_list(self) -> None:
        with pytest.raises(ChannelError, match=r"Ws must be a \(B, n_inputs, n_outputs\) array"):
            dpcap.capacities(np.eye(2))
