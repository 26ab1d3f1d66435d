"""Channels and database mechanisms: immutable stochastic matrices that carry a neighbour relation.

A channel is a row-stochastic matrix ``W[x, y] = P(Y=y | X=x)``: rows are inputs. A database
mechanism is a channel whose rows are the databases ``x^n`` of a product domain
``X_1 × … × X_n`` with sizes ``shape = (m_1, …, m_n)``, in C order: the row of ``x^n`` is
``numpy.ravel_multi_index(x^n, shape)`` (``docs/mathematics.rst`` §2). A channel is a one-entry
database: its ``shape`` is ``(n_inputs,)``.

Both classes are immutable value objects that implement the array protocol
(``numpy.asarray(ch)`` is the matrix) and carry the neighbour relation under which their DP
level is meant (:attr:`Channel.neighbors`, in the vocabulary of :mod:`dpcap.neighbors`): the DP
metrics use it unless they are given ``neighbors=``. Every function of dpcap that expects a
channel also takes a plain 2-D array; one that expects a mechanism takes a channel or an array
as a one-entry database.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeAlias

import numpy as np
from numpy.typing import NDArray

from dpcap import _validation as check
from dpcap import neighbors as relations
from dpcap._partial_sums import PartialSums
from dpcap._validation import MAX_DENSE_ELEMENTS
from dpcap.neighbors import MAX_PAIRS, Neighbors, neighbor_pairs
from dpcap.result import ChannelError, MechanismError

__all__ = [
    "MAX_DENSE_ELEMENTS",
    "MAX_PAIRS",
    "AdditiveMechanism",
    "Channel",
    "Mechanism",
    "Neighbors",
    "as_mechanism",
    "neighbor_pairs",
]

IntArray: TypeAlias = NDArray[np.int64]


class _Stochastic:
    """What channels and mechanisms share: an immutable row-stochastic matrix and a relation."""

    __slots__ = ("_matrix", "_neighbors")
    _matrix: NDArray[np.float64]
    _neighbors: Neighbors

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def matrix(self) -> NDArray[np.float64]:
        """The row-stochastic matrix, rows are inputs (read-only)."""
        return self._matrix

    @property
    def shape(self) -> tuple[int, ...]:
        """Domain sizes ``(m_1, …, m_n)``; ``(n_inputs,)`` for a channel (one entry)."""
        return (self.n_inputs,)

    @property
    def n_inputs(self) -> int:
        """Number of inputs (rows): ``prod(shape)`` databases."""
        return int(self._matrix.shape[0])

    @property
    def n_outputs(self) -> int:
        """Number of outputs (columns)."""
        return int(self._matrix.shape[1])

    @property
    def neighbors(self) -> Neighbors:
        """The neighbour relation the DP metrics use by default, on the domain ``shape``.

        A name (``"all"``, ``"line"``, ``"hamming"``), a read-only ``(k, 2)`` array of row-index
        pairs, or a predicate; see :mod:`dpcap.neighbors`.
        """
        return self._neighbors

    def with_neighbors(self, neighbors: Neighbors) -> Any:
        """The same channel or mechanism, carrying the relation ``neighbors`` instead.

        Raises
        ------
        NeighborError
            For an unknown name or malformed pairs (checked against ``shape``).
        """
        carried = relations.relation(neighbors, self.shape)
        twin = object.__new__(type(self))
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if hasattr(self, slot):
                    object.__setattr__(twin, slot, getattr(self, slot))
        object.__setattr__(twin, "_neighbors", carried)
        return twin

    def _same_relation(self, other: _Stochastic) -> bool:
        return relations.same(self._neighbors, other._neighbors)

    def _relation_repr(self, default: str) -> str:
        if isinstance(self._neighbors, str) and self._neighbors == default:
            return ""
        shown = relations.describe(self._neighbors)
        if isinstance(shown, list):
            shown = f"{len(shown)} pairs"
        return f", neighbors={shown!r}"

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        if copy:
            return np.array(self.matrix, dtype=dtype)
        return self.matrix if dtype is None else self.matrix.astype(dtype)


class Channel(_Stochastic):
    """A finite channel ``W[x, y] = P(Y=y | X=x)``, validated and immutable.

    Parameters
    ----------
    W : array_like, shape (n_inputs, n_outputs)
        Non-negative, finite entries; each row sums to 1 within ``1e-9`` and is renormalised.
    neighbors : str, array_like or callable, keyword-only
        The neighbour relation between inputs that the DP metrics use by default
        (:attr:`neighbors`). Default ``"all"``: every pair of inputs, the local-DP reading of a
        channel (and what a plain array gets). The constructors of :mod:`dpcap.mechanisms` set
        the natural one, e.g. ``"line"`` for noise on a line of values.

    Raises
    ------
    ChannelError
        If ``W`` is not 2-D, is empty, has a NaN, infinite or negative entry, or a row whose sum
        is not 1 (the message names the row and its sum).
    NeighborError
        For an unknown relation name or malformed pairs.

    Examples
    --------
    >>> import numpy as np
    >>> ch = Channel([[0.9, 0.1], [0.2, 0.8]])
    >>> ch.shape, ch.n_inputs, ch.n_outputs, ch.neighbors
    ((2,), 2, 2, 'all')
    >>> np.asarray(ch)[1]
    array([0.2, 0.8])
    """

    __slots__ = ()

    def __init__(self, W: Any, /, *, neighbors: Neighbors = "all") -> None:
        matrix = check.stochastic_matrix(W, "W")
        object.__setattr__(self, "_matrix", matrix)
        object.__setattr__(self, "_neighbors", relations.relation(neighbors, (matrix.shape[0],)))

    def compose(self, post: Any) -> Channel:
        """The channel ``X → Y → Z``: this channel followed by ``post[y, z] = P(Z=z | Y=y)``.

        The inputs are the same, so the result carries the same neighbour relation.
        """
        V = check.stochastic_matrix(post, "post")
        if V.shape[0] != self.n_outputs:
            raise ChannelError(
                f"post must have {self.n_outputs} rows (one per output), got {V.shape[0]}"
            )
        return Channel(self._matrix @ V, neighbors=self._neighbors)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Channel)
        return self._same_relation(other) and bool(np.array_equal(self._matrix, other._matrix))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = np.array2string(self._matrix, precision=4, threshold=36, edgeitems=3)
        return (
            f"Channel({self.n_inputs} inputs x {self.n_outputs} outputs"
            f"{self._relation_repr('all')},\n        {body})"
        )


class Mechanism(_Stochastic):
    """A database mechanism on ``X_1 × … × X_n``: one row per database, in C order.

    Parameters
    ----------
    W : array_like, shape (prod(shape), n_outputs)
        Row ``numpy.ravel_multi_index(x, shape)`` is the output law for database ``x``.
    shape : sequence of int
        Domain sizes ``(m_1, …, m_n)``, each at least 1; ``prod(shape)`` must equal the number of
        rows.
    neighbors : str, array_like or callable, keyword-only
        The neighbour relation between databases that the DP metrics use by default
        (:attr:`neighbors`). Default ``"hamming"``: databases that differ in one entry.

    Raises
    ------
    ChannelError
        If ``W`` is not a valid stochastic matrix.
    MechanismError
        If ``shape`` is malformed or does not match the number of rows.
    NeighborError
        For an unknown relation name or malformed pairs.

    Examples
    --------
    >>> import numpy as np
    >>> # Y = X_1 XOR X_2 on two binary entries
    >>> M = Mechanism([[1, 0], [0, 1], [0, 1], [1, 0]], (2, 2))
    >>> M.shape, M.n_inputs, M.n_outputs, M.neighbors
    ((2, 2), 4, 2, 'hamming')
    >>> M.slice(0, context=(1,)).matrix
    array([[0., 1.],
           [1., 0.]])
    """

    __slots__ = ("_shape",)
    _shape: tuple[int, ...]

    def __init__(
        self, W: Any, /, shape: Sequence[int], *, neighbors: Neighbors = "hamming"
    ) -> None:
        matrix = check.stochastic_matrix(W, "W")
        dims = check.domain_shape(shape)
        rows = math.prod(dims)
        if rows != matrix.shape[0]:
            raise MechanismError(
                f"shape {dims} describes {rows} databases but W has {matrix.shape[0]} rows"
            )
        object.__setattr__(self, "_matrix", matrix)
        object.__setattr__(self, "_shape", dims)
        object.__setattr__(self, "_neighbors", relations.relation(neighbors, dims))

    @property
    def shape(self) -> tuple[int, ...]:
        """Domain sizes ``(m_1, …, m_n)``."""
        return self._shape

    @property
    def n_entries(self) -> int:
        """Number of database entries ``n``."""
        return len(self._shape)

    def tensor(self) -> NDArray[np.float64]:
        """The matrix as an array of shape ``(*shape, n_outputs)`` (a read-only view)."""
        return self._matrix.reshape(*self._shape, self.n_outputs)

    def row(self, database: Sequence[int]) -> NDArray[np.float64]:
        """The output law ``P(Y | X^n = database)``."""
        index = self._database(database, "database", self.n_entries)
        row: NDArray[np.float64] = self._matrix[int(np.ravel_multi_index(index, self._shape))]
        return row

    def slice(self, i: int, context: Sequence[int]) -> Channel:
        """The channel from ``X_i`` to ``Y`` when the other entries are fixed to ``context``.

        ``W_{i, x^{-i}}[a, y] = W[(a, x^{-i}), y]`` (Cuff & Yu, Def. 2;
        ``docs/mathematics.rst`` §2). The slice carries the relation of one entry: ``"line"``
        when the mechanism's is ``"line"`` (adjacent values), ``"all"`` otherwise (Hamming
        relates every pair of values of one entry; for explicit pairs or a predicate ``"all"``
        is the conservative choice).

        Parameters
        ----------
        i : int
            The entry, ``0 <= i < n_entries``.
        context : sequence of int
            The values of the other ``n - 1`` entries, in order, skipping entry ``i``.
        """
        entry = self._entry(i)
        others = tuple(s for k, s in enumerate(self._shape) if k != entry)
        ctx = self._database(context, "context", len(others), others)
        index: tuple[Any, ...] = (*ctx[:entry], slice(None), *ctx[entry:])
        relation = "line" if isinstance(self.neighbors, str) and self.neighbors == "line" else "all"
        return Channel(self.tensor()[index], neighbors=relation)

    def group(self, entries: Any) -> tuple[int, ...]:
        """Validate a group of entries (an int or a sequence of distinct ints), sorted."""
        items = (entries,) if isinstance(entries, (int, np.integer)) else entries
        if isinstance(entries, (str, bytes)):
            raise MechanismError(
                f"group must be an entry or a sequence of entries, got {check.show(entries)}"
            )
        try:
            group = tuple(sorted(self._entry(i) for i in items))
        except TypeError as exc:
            raise MechanismError(
                f"group must be an entry or a sequence of entries, got {check.show(entries)}"
            ) from exc
        except MechanismError as exc:
            raise MechanismError(
                f"group must be an entry or a sequence of entries, got {check.show(entries)}: {exc}"
            ) from exc
        if not group or len(set(group)) != len(group):
            raise MechanismError(f"group must list distinct entries, got {check.show(entries)}")
        return group

    def slices(self, group: tuple[int, ...]) -> Slices:
        """Every slice of the mechanism for the entries ``group`` (sorted, validated).

        The slice for a context ``x^{I^c}`` (values of the other entries) is the channel from
        ``X_I`` (its values in C order) to ``Y``. Returns a :class:`Slices` with the stack of
        shape ``(contexts, Π_{i∈I} m_i, n_outputs)`` and a way back to each context.
        """
        rest = tuple(k for k in range(self.n_entries) if k not in group)
        tensor = np.moveaxis(self.tensor(), group, tuple(range(len(rest), self.n_entries)))
        width = math.prod(self._shape[k] for k in group)
        stack = tensor.reshape(-1, width, self.n_outputs)
        others = tuple(self._shape[k] for k in rest)
        return Slices(stack, lambda k: tuple(int(v) for v in np.unravel_index(k, others)))

    def entry_classes(self) -> list[list[int]]:
        """Entries whose slices are known to coincide (each entry alone for a dense matrix)."""
        return [[i] for i in range(self.n_entries)]

    @staticmethod
    def additive(
        scores: Any, noise: Any, /, *, neighbors: Neighbors = "hamming"
    ) -> AdditiveMechanism:
        """A query that adds per-entry integer scores, released through a noise channel.

        ``Y ~ noise[Σ_i s_i(X_i) − lowest]`` with ``lowest = Σ_i min s_i``. It carries the
        relation ``neighbors`` (default ``"hamming"``: databases that differ in one entry,
        which the DP metrics evaluate from the reachable partial sums without enumerating the
        databases).

        Parameters
        ----------
        scores : sequence of 1-D integer arrays
            ``scores[i][a]`` is the score of value ``a`` of entry ``i`` (its length is ``m_i``).
            A count is ``[[0, 1]] * n``; a bounded sum of values in ``{0..k}`` is
            ``[range(k + 1)] * n``; one histogram cell is ``[[1, 0, 0, …]] * n``.
        noise : array_like, shape (Σ_i (max s_i − min s_i) + 1, n_outputs)
            Row ``t`` is the output law of the total ``lowest + t``.
        neighbors : str, array_like or callable, keyword-only
            The relation between databases the DP metrics use by default.

        Returns
        -------
        AdditiveMechanism
            A :class:`Mechanism` that never enumerates databases unless asked for its matrix.

        Examples
        --------
        >>> from dpcap.mechanisms import truncated_geometric
        >>> M = Mechanism.additive([[0, 1]] * 1000, truncated_geometric(1000, 1.0))
        >>> M.shape[:3], M.n_outputs, M.neighbors
        ((2, 2, 2), 1001, 'hamming')
        """
        return AdditiveMechanism(scores, noise, neighbors=neighbors)

    def _entry(self, i: Any) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise MechanismError(f"entry must be an integer, got {check.show(i)}")
        if not 0 <= int(i) < self.n_entries:
            raise MechanismError(
                f"entry must be in [0, {self.n_entries - 1}] for a mechanism with "
                f"{self.n_entries} entries, got {i!r}"
            )
        return int(i)

    def _database(
        self,
        values: Any,
        name: str,
        length: int,
        dims: tuple[int, ...] | None = None,
    ) -> tuple[int, ...]:
        dims = self._shape if dims is None else dims
        try:
            items = tuple(int(v) for v in values)
        except (TypeError, ValueError) as exc:
            raise MechanismError(
                f"{name} must be a sequence of {length} integers, got {check.show(values)}"
            ) from exc
        if len(items) != length:
            raise MechanismError(f"{name} must have {length} values, got {check.show(values)}")
        for value, size in zip(items, dims, strict=True):
            if not 0 <= value < size:
                raise MechanismError(
                    f"{name} {check.show(values)} is outside the domain sizes {dims}"
                )
        return items

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Mechanism)
        return (
            self._shape == other._shape
            and self._same_relation(other)
            and bool(np.array_equal(self._matrix, other._matrix))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Mechanism(shape={self._shape}, {self.n_inputs} databases x {self.n_outputs} outputs"
            f"{self._relation_repr('hamming')})"
        )


class Slices(NamedTuple):
    """The slices of a mechanism for a group of entries: a stack and a map back to contexts."""

    stack: NDArray[np.float64]
    context: Callable[[int], tuple[int, ...]]


class AdditiveMechanism(Mechanism):
    """``Y ~ noise[Σ_i s_i(X_i)]``: a sum of per-entry integer scores, then a noise channel.

    Counts, bounded sums and histogram cells are of this form. Nothing here enumerates the
    ``Π m_i`` databases: slices, MI-DP and the DP metrics under Hamming neighbours work from the
    *reachable partial sums* (a dynamic programme over the entries), and the dense matrix is
    only built, under dpcap's memory limit, when something really needs it.

    Build one with :meth:`Mechanism.additive`.
    """

    __slots__ = ("_lowest", "_noise", "_scores")
    _noise: NDArray[np.float64]
    _scores: tuple[NDArray[np.int64], ...]
    _lowest: int

    def __init__(self, scores: Any, noise: Any, /, *, neighbors: Neighbors = "hamming") -> None:
        try:
            rows = [np.asarray(s) for s in scores]
        except TypeError as exc:
            raise MechanismError(
                f"scores must be a sequence of integer score vectors, got {check.show(scores)}"
            ) from exc
        if not rows:
            raise MechanismError("scores must describe at least one entry, got none")
        for i, r in enumerate(rows):
            if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer):
                raise MechanismError(
                    f"scores[{i}] must be a non-empty 1-D array of integers, got {check.show(r)}"
                )
        matrix = check.stochastic_matrix(noise, "noise")
        lowest = sum(int(r.min()) for r in rows)  # Python integers: no int64 overflow
        span = sum(int(r.max()) - int(r.min()) for r in rows) + 1
        if max(abs(lowest), abs(lowest + span)) >= 2**62:
            raise MechanismError(
                f"scores must keep every total within ±2^62 (the totals are int64), got totals "
                f"from {lowest} to {lowest + span - 1}"
            )
        if matrix.shape[0] != span:
            raise MechanismError(
                f"noise must have one row per possible total ({lowest}..{lowest + span - 1}: "
                f"{span} rows), got {matrix.shape[0]}"
            )
        object.__setattr__(self, "_scores", tuple(r.astype(np.int64) for r in rows))
        object.__setattr__(self, "_noise", matrix)
        object.__setattr__(self, "_lowest", lowest)
        object.__setattr__(self, "_shape", tuple(int(r.size) for r in rows))
        object.__setattr__(self, "_neighbors", relations.relation(neighbors, self._shape))

    @property
    def noise(self) -> NDArray[np.float64]:
        """The noise channel; row ``k`` is the output law of the total ``lowest + k``."""
        return self._noise

    @property
    def scores(self) -> tuple[NDArray[np.int64], ...]:
        """The score vectors ``s_i`` (``s_i[a]`` is the score of value ``a`` of entry i)."""
        return self._scores

    @property
    def n_inputs(self) -> int:
        return math.prod(self._shape)

    @property
    def n_outputs(self) -> int:
        return int(self._noise.shape[1])

    @property
    def matrix(self) -> NDArray[np.float64]:
        """The dense matrix, built on demand (refused above dpcap's memory limit)."""
        try:
            return self._matrix
        except AttributeError:
            pass
        check.dense_size(self.n_inputs, self.n_outputs, f"this additive mechanism {self._shape}")
        totals = np.zeros(self._shape, dtype=np.int64)
        for i, s in enumerate(self._scores):
            view = [1] * len(self._shape)
            view[i] = -1
            totals = totals + s.reshape(view)
        dense = self._noise[totals.ravel() - self._lowest]
        dense.setflags(write=False)
        object.__setattr__(self, "_matrix", dense)
        return dense

    def tensor(self) -> NDArray[np.float64]:
        return self.matrix.reshape(*self._shape, self.n_outputs)

    def row(self, database: Sequence[int]) -> NDArray[np.float64]:
        x = self._database(database, "database", self.n_entries)
        total = sum(int(s[a]) for s, a in zip(self._scores, x, strict=True))
        row: NDArray[np.float64] = self._noise[total - self._lowest]
        return row

    def slice(self, i: int, context: Sequence[int]) -> Channel:
        entry = self._entry(i)
        others = [k for k in range(self.n_entries) if k != entry]
        dims = tuple(self._shape[k] for k in others)
        ctx = self._database(context, "context", len(others), dims)
        base = sum(int(self._scores[k][a]) for k, a in zip(others, ctx, strict=True))
        return Channel(self._noise[base + self._scores[entry] - self._lowest])

    def slices(self, group: tuple[int, ...]) -> Slices:
        """One slice per *reachable total* of the other entries (not per context)."""
        rest = [k for k in range(self.n_entries) if k not in group]
        sums = PartialSums([self._scores[k] for k in rest])
        own = np.zeros(1, dtype=np.int64)
        for k in group:  # totals of the group's values, in C order
            own = (own[:, None] + self._scores[k][None, :]).ravel()
        totals = sums.reachable()
        index = totals[:, None] + own[None, :] - self._lowest
        check.dense_size(index.size, self.n_outputs, "the slices of this additive mechanism")
        stack = self._noise[index]

        def context(k: int) -> tuple[int, ...]:
            return sums.witness(int(totals[k]))

        return Slices(stack, context)

    def entry_classes(self) -> list[list[int]]:
        """Entries with equal score vectors have the same slices: one class each."""
        classes: dict[bytes, list[int]] = {}
        for i, s in enumerate(self._scores):
            classes.setdefault(s.tobytes(), []).append(i)
        return list(classes.values())

    def neighbor_rows(self) -> tuple[IntArray, IntArray]:
        """Pairs of noise rows ``(t, t')`` met by Hamming-neighbouring databases (t < t')."""
        pairs = []
        for members in self.entry_classes():
            i = members[0]
            totals = PartialSums([s for k, s in enumerate(self._scores) if k != i]).reachable()
            own = np.unique(self._scores[i])
            a, b = np.triu_indices(len(own), k=1)
            if not len(a):
                continue
            lo = (totals[:, None] + own[a][None, :]).ravel() - self._lowest
            hi = (totals[:, None] + own[b][None, :]).ravel() - self._lowest
            pairs.append(np.stack([lo, hi], axis=1))
        if not pairs:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty.copy()
        unique = np.unique(np.concatenate(pairs), axis=0)
        return unique[:, 0].copy(), unique[:, 1].copy()

    def reachable_rows(self) -> NDArray[np.float64]:
        """The noise rows of every reachable total (the mechanism's distinct rows)."""
        totals = PartialSums(list(self._scores)).reachable()
        rows: NDArray[np.float64] = self._noise[totals - self._lowest]
        return rows

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, AdditiveMechanism)
        return (
            self._shape == other._shape
            and self._same_relation(other)
            and all(np.array_equal(a, b) for a, b in zip(self._scores, other._scores, strict=True))
            and bool(np.array_equal(self._noise, other._noise))
        )

    def __repr__(self) -> str:
        return (
            f"AdditiveMechanism(shape={self._shape}, {self._noise.shape[0]} totals x "
            f"{self.n_outputs} outputs{self._relation_repr('hamming')})"
        )


def as_mechanism(obj: Any, name: str = "M") -> Mechanism:
    """A :class:`Mechanism` from a mechanism, a :class:`Channel` or a 2-D array.

    A channel or a plain matrix is a one-entry database: its rows are the values of the entry.
    A channel keeps the relation it carries; a plain matrix gets ``"hamming"``, which on one
    entry relates every pair of rows (as ``"all"``).
    """
    if isinstance(obj, Mechanism):
        return obj
    matrix = check.stochastic_matrix(obj, name)
    carried = obj.neighbors if isinstance(obj, Channel) else "hamming"
    return Mechanism(matrix, (matrix.shape[0],), neighbors=carried)
