"""Channels, database mechanisms and neighbour relations.

A channel is a row-stochastic matrix ``W[x, y] = P(Y=y | X=x)``: rows are inputs. A database
mechanism is a channel whose rows are the databases ``x^n`` of a product domain
``X_1 × … × X_n`` with sizes ``shape = (m_1, …, m_n)``, in C order: the row of ``x^n`` is
``numpy.ravel_multi_index(x^n, shape)`` (DESIGN §1).

Both classes are immutable value objects that implement the array protocol
(``numpy.asarray(ch)`` is the matrix). Every function of dpcap that expects a channel also takes a
plain 2-D array; one that expects a mechanism takes a channel or an array as a one-entry database.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from dpcap import _validation as check
from dpcap.result import ChannelError, MechanismError, NeighborError, ProblemTooLargeError

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

#: Largest dense matrix (``rows × outputs`` float64 entries, 1 GiB) dpcap will materialise.
MAX_DENSE_ELEMENTS = 2**27

#: Largest number of (unordered) neighbour pairs enumerated for one mechanism.
MAX_PAIRS = 2**24

#: A neighbour relation: a name ("hamming", "line", "all"), explicit pairs of row indices
#: (shape ``(k, 2)``) or of databases (shape ``(k, 2, n)``), or a predicate on two databases.
Neighbors: TypeAlias = (
    str
    | Sequence[Sequence[int]]
    | NDArray[Any]
    | Callable[[tuple[int, ...], tuple[int, ...]], bool]
)

NEIGHBOR_NAMES = ("hamming", "line", "all")


def check_dense_size(rows: int, cols: int, what: str) -> None:
    """Refuse to materialise a ``rows × cols`` float64 matrix above :data:`MAX_DENSE_ELEMENTS`."""
    size = rows * cols
    if size > MAX_DENSE_ELEMENTS:
        gib = f"{size * 8 / 2**30:.1f} GiB" if size < 2**70 else "far beyond any memory"
        shown = str(rows) if rows < 10**15 else f"~10^{math.log10(rows):.1f}"
        raise ProblemTooLargeError(
            f"{what} would be a dense {shown} x {cols} matrix ({gib}), above dpcap's "
            f"limit of {MAX_DENSE_ELEMENTS} entries; describe the mechanism by its structure "
            "(a query followed by a noise channel) instead of enumerating every database"
        )


class _Stochastic:
    """What channels and mechanisms share: an immutable row-stochastic matrix."""

    __slots__ = ("_matrix",)
    _matrix: NDArray[np.float64]

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def matrix(self) -> NDArray[np.float64]:
        """The row-stochastic matrix, rows are inputs (read-only)."""
        return self._matrix

    @property
    def n_inputs(self) -> int:
        """Number of inputs (rows)."""
        return int(self._matrix.shape[0])

    @property
    def n_outputs(self) -> int:
        """Number of outputs (columns)."""
        return int(self._matrix.shape[1])

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

    Raises
    ------
    ChannelError
        If ``W`` is not 2-D, is empty, has a NaN, infinite or negative entry, or a row whose sum
        is not 1 (the message names the row and its sum).

    Examples
    --------
    >>> import numpy as np
    >>> ch = Channel([[0.9, 0.1], [0.2, 0.8]])
    >>> ch.n_inputs, ch.n_outputs
    (2, 2)
    >>> np.asarray(ch)[1]
    array([0.2, 0.8])
    """

    __slots__ = ()

    def __init__(self, W: Any) -> None:
        object.__setattr__(self, "_matrix", check.stochastic_matrix(W, "W"))

    def compose(self, post: Any) -> Channel:
        """The channel ``X → Y → Z``: this channel followed by ``post[y, z] = P(Z=z | Y=y)``."""
        V = check.stochastic_matrix(post, "post")
        if V.shape[0] != self.n_outputs:
            raise ChannelError(
                f"post must have {self.n_outputs} rows (one per output), got {V.shape[0]}"
            )
        return Channel(self._matrix @ V)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(np.array_equal(self._matrix, np.asarray(other)))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = np.array2string(self._matrix, precision=4, threshold=36, edgeitems=3)
        return f"Channel({self.n_inputs} inputs x {self.n_outputs} outputs,\n        {body})"


class Mechanism(_Stochastic):
    """A database mechanism on ``X_1 × … × X_n``: one row per database, in C order.

    Parameters
    ----------
    W : array_like, shape (prod(shape), n_outputs)
        Row ``numpy.ravel_multi_index(x, shape)`` is the output law for database ``x``.
    shape : sequence of int
        Domain sizes ``(m_1, …, m_n)``, each at least 1; ``prod(shape)`` must equal the number of
        rows.

    Raises
    ------
    ChannelError
        If ``W`` is not a valid stochastic matrix.
    MechanismError
        If ``shape`` is malformed or does not match the number of rows.

    Examples
    --------
    >>> import numpy as np
    >>> # Y = X_1 XOR X_2 on two binary entries
    >>> M = Mechanism([[1, 0], [0, 1], [0, 1], [1, 0]], shape=(2, 2))
    >>> M.slice(0, context=(1,)).matrix
    array([[0., 1.],
           [1., 0.]])
    """

    __slots__ = ("_shape",)
    _shape: tuple[int, ...]

    def __init__(self, W: Any, shape: Sequence[int]) -> None:
        matrix = check.stochastic_matrix(W, "W")
        dims = _domain_shape(shape)
        rows = math.prod(dims)
        if rows != matrix.shape[0]:
            raise MechanismError(
                f"shape {dims} describes {rows} databases but W has {matrix.shape[0]} rows"
            )
        object.__setattr__(self, "_matrix", matrix)
        object.__setattr__(self, "_shape", dims)

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

        ``W_{i, x^{-i}}[a, y] = W[(a, x^{-i}), y]`` (Cuff & Yu, Def. 2; DESIGN §4 "MI-DP").

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
        return Channel(self.tensor()[index])

    def group(self, entries: Any) -> tuple[int, ...]:
        """Validate a group of entries (an int or a sequence of distinct ints), sorted."""
        items = (entries,) if isinstance(entries, (int, np.integer)) else entries
        try:
            group = tuple(sorted(self._entry(i) for i in items))
        except TypeError as exc:
            raise MechanismError(
                f"group must be an entry or a sequence of entries, got {check.show(entries)}"
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
    def additive(scores: Any, noise: Any) -> AdditiveMechanism:
        """A query that adds per-entry integer scores, released through a noise channel.

        ``Y ~ noise[Σ_i s_i(X_i) − lowest]`` with ``lowest = Σ_i min s_i``.

        Parameters
        ----------
        scores : sequence of 1-D integer arrays
            ``scores[i][a]`` is the score of value ``a`` of entry ``i`` (its length is ``m_i``).
            A count is ``[[0, 1]] * n``; a bounded sum of values in ``{0..k}`` is
            ``[range(k + 1)] * n``; one histogram cell is ``[[1, 0, 0, …]] * n``.
        noise : array_like, shape (Σ_i (max s_i − min s_i) + 1, n_outputs)
            Row ``t`` is the output law of the total ``lowest + t``.

        Returns
        -------
        AdditiveMechanism
            A :class:`Mechanism` that never enumerates databases unless asked for its matrix.

        Examples
        --------
        >>> from dpcap.mechanisms import truncated_geometric
        >>> M = Mechanism.additive([[0, 1]] * 1000, truncated_geometric(1000, 1.0))
        >>> M.shape[:3], M.n_outputs
        ((2, 2, 2), 1001)
        """
        return AdditiveMechanism(scores, noise)

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
        return self._shape == other._shape and bool(np.array_equal(self._matrix, other._matrix))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Mechanism(shape={self._shape}, {self.n_inputs} databases x {self.n_outputs} outputs)"
        )


class Slices:
    """The slices of a mechanism for a group of entries: a stack and a map back to contexts."""

    __slots__ = ("context", "stack")

    def __init__(
        self, stack: NDArray[np.float64], context: Callable[[int], tuple[int, ...]]
    ) -> None:
        self.stack = stack
        self.context = context


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

    def __init__(self, scores: Any, noise: Any) -> None:
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
        lowest = int(sum(int(r.min()) for r in rows))
        span = int(sum(int(r.max() - r.min()) for r in rows)) + 1
        if matrix.shape[0] != span:
            raise MechanismError(
                f"noise must have one row per possible total ({lowest}..{lowest + span - 1}: "
                f"{span} rows), got {matrix.shape[0]}"
            )
        object.__setattr__(self, "_scores", tuple(r.astype(np.int64) for r in rows))
        object.__setattr__(self, "_noise", matrix)
        object.__setattr__(self, "_lowest", lowest)
        object.__setattr__(self, "_shape", tuple(int(r.size) for r in rows))

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
        check_dense_size(self.n_inputs, self.n_outputs, f"this additive mechanism {self._shape}")
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
        sums = _PartialSums([self._scores[k] for k in rest])
        own = np.zeros(1, dtype=np.int64)
        for k in group:  # totals of the group's values, in C order
            own = (own[:, None] + self._scores[k][None, :]).ravel()
        totals = sums.reachable()
        index = totals[:, None] + own[None, :] - self._lowest
        check_dense_size(index.size, self.n_outputs, "the slices of this additive mechanism")
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
            totals = _PartialSums([s for k, s in enumerate(self._scores) if k != i]).reachable()
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
        totals = _PartialSums(list(self._scores)).reachable()
        rows: NDArray[np.float64] = self._noise[totals - self._lowest]
        return rows

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, AdditiveMechanism)
        return (
            self._shape == other._shape
            and all(np.array_equal(a, b) for a, b in zip(self._scores, other._scores, strict=True))
            and bool(np.array_equal(self._noise, other._noise))
        )

    def __repr__(self) -> str:
        return (
            f"AdditiveMechanism(shape={self._shape}, {self._noise.shape[0]} totals x "
            f"{self.n_outputs} outputs)"
        )


class _PartialSums:
    """Reachable totals of a list of integer score vectors, with a witness for each total.

    A forward dynamic programme over the entries: ``reach[t]`` says whether the total
    ``lowest + t`` is reachable, and ``choice[j][t]`` which value of entry j first reached it,
    so a database attaining any total is recovered by walking back (``witness``).
    """

    def __init__(self, scores: list[NDArray[np.int64]]) -> None:
        self.scores = scores
        self.lowest = int(sum(int(s.min()) for s in scores))
        reach = np.ones(1, dtype=bool)
        self.choices: list[NDArray[np.int64]] = []
        for s in scores:
            shift = s - s.min()
            nxt = np.zeros(len(reach) + int(shift.max()), dtype=bool)
            choice = np.full(len(nxt), -1, dtype=np.int64)
            for a, d in enumerate(shift):
                fresh = reach & ~nxt[d : d + len(reach)]
                choice[d : d + len(reach)][fresh] = a
                nxt[d : d + len(reach)] |= reach
            self.choices.append(choice)
            reach = nxt
        self.reach = reach

    def reachable(self) -> NDArray[np.int64]:
        """Every reachable total (absolute values, increasing)."""
        totals: NDArray[np.int64] = np.flatnonzero(self.reach).astype(np.int64) + self.lowest
        return totals

    def witness(self, total: int) -> tuple[int, ...]:
        """Values of the entries (in order) whose scores add up to ``total``."""
        t = total - self.lowest
        values = []
        for s, choice in zip(reversed(self.scores), reversed(self.choices), strict=True):
            a = int(choice[t])
            values.append(a)
            t -= int(s[a] - s.min())
        return tuple(reversed(values))


def _domain_shape(shape: Any) -> tuple[int, ...]:
    try:
        dims = tuple(shape)
    except TypeError as exc:
        raise MechanismError(
            f"shape must be a sequence of domain sizes, got {check.show(shape)}"
        ) from exc
    if not dims:
        raise MechanismError("shape must name at least one entry, got ()")
    for size in dims:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise MechanismError(
                f"shape must hold positive integers (domain sizes), got {check.show(shape)}"
            )
    return tuple(int(s) for s in dims)


def as_mechanism(obj: Any, name: str = "M") -> Mechanism:
    """A :class:`Mechanism` from a mechanism, a :class:`Channel` or a 2-D array.

    A channel or a plain matrix is a one-entry database: its rows are the values of the entry.
    """
    if isinstance(obj, Mechanism):
        return obj
    matrix = check.stochastic_matrix(obj, name)
    return Mechanism(matrix, (matrix.shape[0],))


def neighbor_pairs(
    shape: Sequence[int], neighbors: Neighbors = "hamming"
) -> tuple[IntArray, IntArray]:
    """The neighbouring databases of a domain, as unordered pairs of row indices ``(i, j)``, i < j.

    Parameters
    ----------
    shape : sequence of int
        Domain sizes ``(m_1, …, m_n)``.
    neighbors : str, array_like or callable
        ``"hamming"`` (default): databases that differ in exactly one entry. ``"line"``:
        databases that differ in one entry by exactly one (adjacent values, e.g. counts).
        ``"all"``: every pair (local DP). An array of row-index pairs, shape ``(k, 2)``, or of
        database pairs, shape ``(k, 2, n)``. A predicate ``f(x, x') -> bool`` on two databases
        (multi-indices), evaluated on every pair.

    Returns
    -------
    (I, J) : tuple of int64 arrays
        Sorted, duplicate-free pairs with ``I < J``. DP metrics consider both orders.

    Raises
    ------
    NeighborError
        For an unknown name, malformed or out-of-range pairs, or a self-pair.
    ProblemTooLargeError
        If more than :data:`MAX_PAIRS` pairs would be enumerated.

    Examples
    --------
    >>> I, J = neighbor_pairs((2, 2))
    >>> [(int(i), int(j)) for i, j in zip(I, J)]
    [(0, 1), (0, 2), (1, 3), (2, 3)]
    """
    dims = _domain_shape(shape)
    total = math.prod(dims)
    if isinstance(neighbors, str):
        if neighbors == "hamming":
            return _product_pairs(dims, adjacent=False)
        if neighbors == "line":
            return _product_pairs(dims, adjacent=True)
        if neighbors == "all":
            _check_pair_count(total * (total - 1) // 2, "all")
            I, J = np.triu_indices(total, k=1)
            return I.astype(np.int64), J.astype(np.int64)
        raise NeighborError(
            f"neighbors must be one of {NEIGHBOR_NAMES}, an array of pairs or a predicate, "
            f"got {neighbors!r}"
        )
    if callable(neighbors):
        return _predicate_pairs(dims, neighbors)
    return _explicit_pairs(dims, neighbors)


def _check_pair_count(count: int, what: str) -> None:
    if count > MAX_PAIRS:
        raise ProblemTooLargeError(
            f"neighbors={what!r} gives {count} pairs of databases, above dpcap's limit of "
            f"{MAX_PAIRS}; use a smaller domain or a structured mechanism"
        )


def _product_pairs(dims: tuple[int, ...], adjacent: bool) -> tuple[IntArray, IntArray]:
    total = math.prod(dims)
    grid = np.arange(total, dtype=np.int64).reshape(dims)
    per_axis = [(m - 1) if adjacent else m * (m - 1) // 2 for m in dims]
    count = sum(total // m * c for m, c in zip(dims, per_axis, strict=True))
    _check_pair_count(count, "line" if adjacent else "hamming")
    firsts, seconds = [], []
    for axis, m in enumerate(dims):
        if m < 2:
            continue
        g = np.moveaxis(grid, axis, -1).reshape(-1, m)
        if adjacent:
            a, b = np.arange(m - 1), np.arange(1, m)
        else:
            a, b = np.triu_indices(m, k=1)
        firsts.append(g[:, a].ravel())
        seconds.append(g[:, b].ravel())
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    return _canonical(np.concatenate(firsts), np.concatenate(seconds))


def _canonical(I: IntArray, J: IntArray) -> tuple[IntArray, IntArray]:
    lo, hi = np.minimum(I, J), np.maximum(I, J)
    pairs = np.unique(np.stack([lo, hi], axis=1), axis=0)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def _explicit_pairs(dims: tuple[int, ...], neighbors: Any) -> tuple[IntArray, IntArray]:
    total = math.prod(dims)
    try:
        raw = np.asarray(neighbors)
        if raw.size and not np.issubdtype(raw.dtype, np.integer):
            raise TypeError
        arr = raw.astype(np.int64)
    except (TypeError, ValueError) as exc:
        raise NeighborError(
            f"neighbors must be a name, a predicate or integer pairs, got {check.show(neighbors)}"
        ) from exc
    if arr.ndim == 3 and arr.shape[1:] == (2, len(dims)):
        for k, size in enumerate(dims):
            if ((arr[..., k] < 0) | (arr[..., k] >= size)).any():
                raise NeighborError(f"neighbors has a database outside the domain sizes {dims}")
        arr = np.ravel_multi_index(tuple(np.moveaxis(arr, -1, 0)), dims).astype(np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise NeighborError(
            f"neighbors pairs must have shape (k, 2) (row indices) or (k, 2, {len(dims)}) "
            f"(databases), got shape {arr.shape}"
        )
    if ((arr < 0) | (arr >= total)).any():
        raise NeighborError(f"neighbors has a row index outside [0, {total - 1}]")
    if (arr[:, 0] == arr[:, 1]).any():
        row = int(arr[np.argmax(arr[:, 0] == arr[:, 1]), 0])
        raise NeighborError(f"neighbors pairs a database with itself (row {row})")
    return _canonical(arr[:, 0], arr[:, 1])


def _predicate_pairs(
    dims: tuple[int, ...], predicate: Callable[[tuple[int, ...], tuple[int, ...]], bool]
) -> tuple[IntArray, IntArray]:
    total = math.prod(dims)
    count = total * (total - 1) // 2
    limit = 2**21
    if count > limit:
        raise ProblemTooLargeError(
            f"a neighbour predicate is evaluated on every pair: {count} pairs is above the "
            f"limit of {limit}; pass the pairs as an array instead"
        )
    databases = [tuple(int(v) for v in x) for x in np.ndindex(*dims)]
    I, J = [], []
    for i in range(total):
        for j in range(i + 1, total):
            if predicate(databases[i], databases[j]):
                I.append(i)
                J.append(j)
    return np.asarray(I, dtype=np.int64), np.asarray(J, dtype=np.int64)
