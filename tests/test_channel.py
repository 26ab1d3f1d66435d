"""Channels, mechanisms and neighbour relations: validation, structure, error messages, and
the relation a channel or mechanism carries (``dpcap.neighbors``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcap
from dpcap import Channel, ChannelError, Mechanism, MechanismError, NeighborError
from dpcap import neighbors as relations
from dpcap._core import validation as check
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


class TestCarriedRelation:
    """Item 6 of issue 9: a channel or mechanism carries its neighbour relation."""

    def test_defaults_and_shape(self) -> None:
        ch = Channel([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
        assert ch.neighbors == "all"
        assert (ch.shape, ch.n_inputs, ch.n_outputs) == ((3,), 3, 2)
        M = Mechanism(np.full((6, 2), 0.5), (2, 3))
        assert M.neighbors == "hamming"
        assert (M.shape, M.n_inputs, M.n_outputs) == ((2, 3), 6, 2)
        # the carried relation is read on `shape`, the same way for both
        for obj, count in ((ch, 3), (M, 3 * 1 + 2 * 3)):
            I, _ = neighbor_pairs(obj.shape, obj.neighbors)
            assert len(I) == count

    def test_explicit_pairs_are_validated_and_stored_sorted(self) -> None:
        ch = Channel(np.eye(3), neighbors=[[2, 0], [0, 1], [1, 0]])
        assert ch.neighbors.tolist() == [[0, 1], [0, 2]]
        with pytest.raises(ValueError, match="read-only"):
            ch.neighbors[0, 0] = 2
        M = Mechanism(np.eye(4), (2, 2), neighbors=[[[0, 0], [1, 1]]])
        assert M.neighbors.tolist() == [[0, 3]]

    @pytest.mark.parametrize(
        ("neighbors", "message"),
        [
            ("ring", r"neighbors must be one of \('hamming', 'line', 'all'\).*'ring'"),
            ([[0, 3]], r"row index outside \[0, 2\]"),
            ([[1, 1]], r"pairs a database with itself \(row 1\)"),
        ],
    )
    def test_bad_relations_are_refused_at_construction(
        self, neighbors: object, message: str
    ) -> None:
        with pytest.raises(NeighborError, match=message):
            Channel(np.eye(3), neighbors=neighbors)  # type: ignore[arg-type]
        with pytest.raises(NeighborError, match=message):
            Channel(np.eye(3)).with_neighbors(neighbors)  # type: ignore[arg-type]

    def test_with_neighbors_is_a_new_value(self) -> None:
        ch = Channel([[0.9, 0.1], [0.2, 0.8]])
        line = ch.with_neighbors("line")
        assert (ch.neighbors, line.neighbors) == ("all", "line")
        assert line.matrix is ch.matrix
        assert line != ch  # same matrix, another relation: another DP meaning
        assert line == Channel(ch.matrix, neighbors="line")
        M = Mechanism.additive([[0, 1]] * 3, np.eye(4))
        moved = M.with_neighbors("line")
        assert type(moved) is type(M)
        assert moved.neighbors == "line"
        np.testing.assert_array_equal(moved.noise, M.noise)
        assert moved != M
        assert "neighbors='line'" in repr(moved)
        assert "neighbors" not in repr(M)

    def test_compose_and_as_mechanism_keep_the_relation(self) -> None:
        ch = Channel(np.eye(3), neighbors="line")
        assert ch.compose(np.full((3, 2), 0.5)).neighbors == "line"
        assert as_mechanism(ch).neighbors == "line"
        assert as_mechanism(ch).shape == ch.shape
        assert as_mechanism(np.eye(3)).neighbors == "hamming"  # a plain array: today's rule
        assert "neighbors='line'" in repr(ch)

    def test_predicates_are_carried(self) -> None:
        def two_apart(x: tuple[int, ...], y: tuple[int, ...]) -> bool:
            return abs(x[0] - y[0]) == 2

        ch = Channel(np.eye(4), neighbors=two_apart)
        assert ch.neighbors is two_apart
        I, J = neighbor_pairs(ch.shape, ch.neighbors)
        assert list(zip(I.tolist(), J.tolist(), strict=True)) == [(0, 2), (1, 3)]


class TestRelationHelpers:
    def test_within(self) -> None:
        assert relations.within(5, 1) == "line"
        assert relations.within(5, 5) == "all"
        assert relations.within(5, 9) == "all"
        pairs = relations.within(5, 2)
        expected = [(x, y) for x in range(6) for y in range(x + 1, min(5, x + 2) + 1)]
        assert [tuple(p) for p in np.asarray(pairs).tolist()] == expected

    def test_lift_of_names(self) -> None:
        assert relations.lift("all", (3, 3)) == "hamming"
        assert relations.lift("hamming", (3, 3)) == "hamming"
        assert relations.lift("line", (3, 3)) == "line"

    def test_lift_of_pairs_and_predicates_agree(self) -> None:
        shape = (3, 3, 3)
        lifted = relations.lift([[0, 2]], shape)
        predicate = relations.lift(lambda x, y: abs(x[0] - y[0]) == 2, shape)
        I, J = neighbor_pairs(shape, lifted)
        P, Q = neighbor_pairs(shape, predicate)
        np.testing.assert_array_equal(I, P)
        np.testing.assert_array_equal(J, Q)
        a = np.array(np.unravel_index(I, shape))
        b = np.array(np.unravel_index(J, shape))
        assert ((a != b).sum(axis=0) == 1).all()
        assert (np.abs(a - b).sum(axis=0) == 2).all()
        assert len(I) == 3 * 9  # 3 entries x 9 contexts x 1 pair of values

    def test_describe_is_json_safe(self) -> None:
        assert relations.describe("line") == "line"
        assert relations.describe(np.array([[0, 2]])) == [[0, 2]]

        def close(x: tuple[int, ...], y: tuple[int, ...]) -> bool:
            return True

        assert relations.describe(close) == "predicate close"


class TestValidators:
    def test_domain_shape(self) -> None:
        assert check.domain_shape([2, np.int64(3)]) == (2, 3)
        with pytest.raises(MechanismError, match=r"shape must hold positive integers"):
            check.domain_shape((2, True))

    def test_scalars(self) -> None:
        assert check.nonnegative_scalar(2, "eps") == 2.0
        with pytest.raises(dpcap.ParameterError, match=r"eps must be a scalar"):
            check.nonnegative_scalar([1.0], "eps")
        with pytest.raises(dpcap.ParameterError, match=r"sigma must be > 0, got 0"):
            check.nonnegative_scalar(0, "sigma", positive=True)
        assert check.probability_scalar(0.25, "p") == 0.25
        with pytest.raises(dpcap.ParameterError, match=r"p must be in \[0, 1\], got 2"):
            check.probability_scalar(2, "p")

    def test_dense_size(self) -> None:
        check.dense_size(2, 3, "small")
        with pytest.raises(dpcap.ProblemTooLargeError, match=r"huge would be a dense"):
            check.dense_size(2**20, 2**20, "huge")
