"""Channels, mechanisms and neighbour relations: validation, structure, error messages."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcap
from dpcap import Channel, ChannelError, Mechanism, MechanismError, NeighborError
from dpcap.channel import as_mechanism, neighbor_pairs


class TestChannelValidation:
    def test_accepts_and_renormalises_rows_within_tolerance(self) -> None:
        ch = Channel([[0.5, 0.5 + 1e-12], [0.25, 0.75]])
        np.testing.assert_allclose(ch.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-15)
        assert (ch.n_inputs, ch.n_outputs) == (2, 2)

    def test_array_protocol_and_immutability(self) -> None:
        ch = Channel(np.eye(3))
        assert np.asarray(ch) is ch.matrix
        with pytest.raises(ValueError, match="read-only"):
            ch.matrix[0, 0] = 0.5
        with pytest.raises(AttributeError, match="immutable"):
            ch.foo = 1  # type: ignore[attr-defined]
        assert Channel(np.eye(3)) == ch

    def test_input_array_is_copied(self) -> None:
        W = np.eye(2)
        ch = Channel(W)
        W[0] = [0.5, 0.5]
        assert ch.matrix[0, 0] == 1.0

    @pytest.mark.parametrize(
        ("W", "message"),
        [
            ([[0.5, 0.4], [0.5, 0.5]], r"row 0 sums to 0\.9"),
            ([[0.5, 0.5], [0.25, 0.5]], r"row 1 sums to 0\.75"),
            ([[1.5, -0.5], [0.5, 0.5]], r"negative entry -0\.5 at index \(0, 1\)"),
            ([[np.nan, 1.0], [0.5, 0.5]], r"NaN at index \(0, 0\)"),
            ([[np.inf, 1.0], [0.5, 0.5]], r"infinite entry at index \(0, 0\)"),
            ([0.5, 0.5], r"2-D matrix .* shape \(2,\)"),
            (np.zeros((0, 3)), r"at least one row and one column"),
            ([["a", "b"]], r"array of real numbers"),
        ],
    )
    def test_bad_channels_raise_channel_error_naming_w(self, W: object, message: str) -> None:
        with pytest.raises(ChannelError, match=rf"^W .*{message}|^W {message}"):
            Channel(W)

    def test_channel_error_is_a_value_error(self) -> None:
        assert issubclass(ChannelError, ValueError)
        assert issubclass(ChannelError, dpcap.DpcapError)

    def test_compose_is_post_processing(self) -> None:
        ch = Channel([[0.9, 0.1], [0.2, 0.8]])
        post = [[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]
        np.testing.assert_allclose(ch.compose(post).matrix, np.asarray(ch) @ np.asarray(post))
        with pytest.raises(ChannelError, match="post must have 2 rows"):
            ch.compose(np.eye(3))


class TestMechanism:
    def setup_method(self) -> None:
        rng = np.random.default_rng(7)
        self.W = rng.dirichlet(np.ones(4), size=2 * 3 * 2)
        self.M = Mechanism(self.W, (2, 3, 2))

    def test_rows_are_c_order(self) -> None:
        for x in np.ndindex(2, 3, 2):
            np.testing.assert_allclose(
                self.M.row(x), self.W[np.ravel_multi_index(x, (2, 3, 2))], rtol=1e-15
            )

    def test_slice_fixes_the_other_entries(self) -> None:
        ch = self.M.slice(1, context=(1, 0))
        expected = [self.W[np.ravel_multi_index((1, a, 0), (2, 3, 2))] for a in range(3)]
        np.testing.assert_allclose(ch.matrix, np.array(expected), rtol=1e-15)
        assert isinstance(ch, Channel)

    @pytest.mark.parametrize(
        ("shape", "message"),
        [
            ((2, 3), r"shape \(2, 3\) describes 6 databases but W has 12 rows"),
            ((2, 0, 2), r"shape must hold positive integers"),
            ((), r"shape must name at least one entry"),
            (5, r"shape must be a sequence of domain sizes, got 5"),
        ],
    )
    def test_bad_shapes(self, shape: object, message: str) -> None:
        with pytest.raises(MechanismError, match=message):
            Mechanism(self.W, shape)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("entry", "context", "message"),
        [
            (3, (0, 0), r"entry must be in \[0, 2\] .* got 3"),
            (0, (0,), r"context must have 2 values"),
            (0, (3, 0), r"context \(3, 0\) is outside the domain sizes \(3, 2\)"),
            (0, "ab", r"context must be a sequence of 2 integers"),
        ],
    )
    def test_bad_slices(self, entry: int, context: object, message: str) -> None:
        with pytest.raises(MechanismError, match=message):
            self.M.slice(entry, context)  # type: ignore[arg-type]

    def test_plain_matrix_is_a_one_entry_database(self) -> None:
        M = as_mechanism(np.eye(3))
        assert M.shape == (3,)
        assert as_mechanism(self.M) is self.M


class TestNeighbors:
    def test_hamming_pairs_differ_in_exactly_one_entry(self) -> None:
        shape = (3, 2, 4)
        I, J = neighbor_pairs(shape)
        a = np.array(np.unravel_index(I, shape))
        b = np.array(np.unravel_index(J, shape))
        assert ((a != b).sum(axis=0) == 1).all()
        total = math.prod(shape)
        expected = sum(total // m * m * (m - 1) // 2 for m in shape)
        assert len(I) == expected
        assert (I < J).all()

    def test_line_pairs_are_adjacent_values(self) -> None:
        I, J = neighbor_pairs((5,), "line")
        assert list(zip(I.tolist(), J.tolist(), strict=True)) == [(0, 1), (1, 2), (2, 3), (3, 4)]

    def test_all_pairs(self) -> None:
        I, _ = neighbor_pairs((4,), "all")
        assert len(I) == 6

    def test_explicit_pairs_rows_and_databases(self) -> None:
        I, J = neighbor_pairs((2, 2), [[3, 0], [0, 3], [1, 2]])
        assert list(zip(I.tolist(), J.tolist(), strict=True)) == [(0, 3), (1, 2)]
        I, J = neighbor_pairs((2, 2), [[[0, 0], [1, 1]]])
        assert (I.tolist(), J.tolist()) == ([0], [3])

    def test_predicate(self) -> None:
        I, J = neighbor_pairs((4,), lambda x, y: abs(x[0] - y[0]) == 2)
        assert list(zip(I.tolist(), J.tolist(), strict=True)) == [(0, 2), (1, 3)]

    @pytest.mark.parametrize(
        ("neighbors", "message"),
        [
            ("manhattan", r"neighbors must be one of \('hamming', 'line', 'all'\).*'manhattan'"),
            ([[0, 4]], r"row index outside \[0, 3\]"),
            ([[1, 1]], r"pairs a database with itself \(row 1\)"),
            ([0, 1, 2], r"shape \(k, 2\)"),
            ([[0.5, 1]], r"integer pairs"),
        ],
    )
    def test_bad_relations(self, neighbors: object, message: str) -> None:
        with pytest.raises(NeighborError, match=message):
            neighbor_pairs((4,), neighbors)  # type: ignore[arg-type]

    def test_too_many_pairs_is_a_clear_error(self) -> None:
        with pytest.raises(dpcap.ProblemTooLargeError, match="neighbors='all' gives"):
            neighbor_pairs((2**13,), "all")
