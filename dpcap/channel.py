"""Channels and database mechanisms: immutable stochastic matrices that carry a neighbour relation.

A channel is a row-stochastic matrix ``W[x, y] = P(Y=y | X=x)``: rows are inputs. A database
mechanism is a channel whose rows are the databases ``x^n`` of a product domain
``X_1 × … × X_n`` with sizes ``shape = (m_1, …, m_n)``, in C order: the row of ``x^n`` is
``numpy.ravel_multi_index(x^n, shape)`` (``docs/mathematics.rst`` §2). A channel is a one-entry
database: its ``shape`` is ``(n_inputs,)``.

Both are immutable, implement the array protocol (``numpy.asarray(ch)`` is the matrix) and
carry the neighbour relation of their DP level (:attr:`Channel.neighbors`, :mod:`dpcap.neighbors`),
used unless a metric is given ``neighbors=``. A plain 2-D array is accepted as a channel, or as
a one-entry database.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeAlias

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap._core.log_matrix import log_probabilities, log_product
from dpcap._core.partial_sums import PartialSums, database_rows, neighbor_totals, slice_rows
from dpcap.errors import ChannelError, MechanismError
from dpcap.neighbors import Neighbors, neighbor_pairs
from dpcap.result.display import channel_html

__all__ = ["AdditiveMechanism", "Channel", "Mechanism", "neighbor_pairs"]

IntArray: TypeAlias = NDArray[np.int64]


class _Stochastic:
    """What channels and mechanisms share: an immutable row-stochastic matrix and a relation."""

    __slots__ = ("_log", "_matrix", "_neighbors", "_renormalized")
    _matrix: NDArray[np.float64]
    _log: NDArray[np.float64] | None
    _neighbors: Neighbors

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def matrix(self) -> NDArray[np.float64]:
        """The row-stochastic matrix, rows are inputs (read-only)."""
        return self._matrix

    @property
    def renormalized(self) -> float:
        """The largest ``|row sum − 1|`` that ``normalize=`` renormalised (0.0 without it)."""
        return float(getattr(self, "_renormalized", 0.0))

    @property
    def log_matrix(self) -> NDArray[np.float64] | None:
        """``log W`` where the matrix underflowed, else ``None`` (``docs/mathematics.rst`` §8).

        A probability below :data:`TINY` (about ``2.2e-308``) is held as 0 or a subnormal; the
        constructors of :mod:`dpcap.mechanisms` keep its closed-form log here (read-only), and
        the DP metrics take their likelihood ratios from it. ``None`` if ``log W`` says the same.
        """
        return self._log

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
        return self._twin(type(self), _neighbors=relations.relation(neighbors, self.shape))

    def _twin(self, cls: type, **changed: Any) -> Any:
        """An object of class ``cls`` sharing this one's (validated) slots, some ``changed``."""
        twin: Any = object.__new__(cls)
        wanted = {slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ())}
        for slot in wanted:
            with contextlib.suppress(AttributeError):  # a slot built on demand stays empty
                object.__setattr__(twin, slot, object.__getattribute__(self, slot))
        for slot, value in changed.items():
            object.__setattr__(twin, slot, value)
        return twin

    def _same_relation(self, other: _Stochastic) -> bool:
        """Same neighbour relation and same log matrix (what the matrix alone does not say)."""
        a, b = (x._log_noise if isinstance(x, AdditiveMechanism) else x._log for x in (self, other))
        same_log = a is b if a is None or b is None else bool(np.array_equal(a, b))
        return same_log and relations.same(self._neighbors, other._neighbors)

    def _relation_repr(self, default: str) -> str:
        if isinstance(self._neighbors, str) and self._neighbors == default:
            return ""
        shown = relations.describe(self._neighbors)
        if isinstance(shown, list):
            shown = f"{len(shown)} pairs"
        return f", neighbors={shown!r}"

    def _repr_html_(self) -> str:  # the matrix up to 16x16, its corner or a summary beyond
        return channel_html(self)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        if copy:
            return np.array(self.matrix, dtype=dtype)
        return self.matrix if dtype is None else self.matrix.astype(dtype)


def _checked(W: Any, log_matrix: Any, normalize: Any) -> tuple[NDArray[np.float64], float]:
    if normalize is not None and log_matrix is not None:  # the given logs' rows sum to 1
        raise ChannelError("normalize cannot be combined with log_matrix")
    return check.normalized_matrix(W, normalize)


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
    log_matrix : array_like, keyword-only, optional
        ``log W`` without underflow (:attr:`log_matrix`; default: ``W``'s if it is a channel):
        within :data:`LOG_ATOL` of ``log W`` where ``W ≥ TINY``, at most ``log TINY`` below.
    normalize : float, keyword-only, optional
        Accept rows that sum to 1 within this tolerance (at most ``1e-3``; default ``1e-9``)
        and renormalise them (rounded entries); the largest deviation is :attr:`renormalized`.

    Raises
    ------
    ChannelError
        If ``W`` is not 2-D, is empty, has a NaN, infinite or negative entry, or a row whose sum
        is not 1 (the message names the row and its sum); if ``log_matrix`` disagrees with it.
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

    def __init__(
        self,
        W: Any,
        /,
        *,
        neighbors: Neighbors = "all",
        log_matrix: Any = None,
        normalize: float | None = None,
    ) -> None:
        matrix, deviation = _checked(W, log_matrix, normalize)
        object.__setattr__(self, "_renormalized", deviation)
        if log_matrix is None and isinstance(W, _Stochastic):
            log_matrix = W.log_matrix
        object.__setattr__(self, "_matrix", matrix)
        object.__setattr__(self, "_log", log_probabilities(log_matrix, matrix))
        object.__setattr__(self, "_neighbors", relations.relation(neighbors, (matrix.shape[0],)))

    def compose(self, post: Any) -> Channel:
        """The channel ``X → Y → Z``: this channel followed by ``post[y, z] = P(Z=z | Y=y)``.

        The inputs are the same, so the result carries the same neighbour relation. Entries
        that underflow get their logs ``log Σ_y exp(log W[x,y] + log post[y,z])`` in
        :attr:`log_matrix` (dropped above 2^26 terms: the zeros then count as zeros).
        """
        V = check.stochastic_matrix(post, "post")
        if V.shape[0] != self.n_outputs:
            raise ChannelError(
                f"post must have {self.n_outputs} rows (one per output), got {V.shape[0]}"
            )
        product, logs = log_product(self._matrix, V, self._log, getattr(post, "log_matrix", None))
        return Channel(product, neighbors=self._neighbors, log_matrix=logs)

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
        Domain sizes ``(m_1, …, m_n)``, each at least 1, as many databases as ``W`` has rows.
    neighbors : str, array_like or callable, keyword-only
        The neighbour relation between databases that the DP metrics use by default
        (:attr:`neighbors`). Default ``"hamming"``: databases that differ in one entry.
    log_matrix, normalize : keyword-only, optional
        ``log W`` computed without underflow, and a row-sum tolerance, as for :class:`Channel`.

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
        self,
        W: Any,
        /,
        shape: Sequence[int],
        *,
        neighbors: Neighbors = "hamming",
        log_matrix: Any = None,
        normalize: float | None = None,
    ) -> None:
        matrix, deviation = _checked(W, log_matrix, normalize)
        object.__setattr__(self, "_renormalized", deviation)
        dims = check.domain_shape(shape)
        rows = math.prod(dims)
        if rows != matrix.shape[0]:
            raise MechanismError(
                f"shape {dims} describes {rows} databases but W has {matrix.shape[0]} rows"
            )
        if log_matrix is None and isinstance(W, _Stochastic):
            log_matrix = W.log_matrix
        object.__setattr__(self, "_matrix", matrix)
        object.__setattr__(self, "_log", log_probabilities(log_matrix, matrix))
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
        logs = self.log_matrix
        part = None if logs is None else logs.reshape(*self._shape, self.n_outputs)[index]
        return Channel(self.tensor()[index], neighbors=relation, log_matrix=part)

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

    def slices(self, group: tuple[int, ...], merged: bool = False) -> Slices:
        """Every slice of the mechanism for the entries ``group`` (sorted, validated).

        The slice for a context ``x^{I^c}`` (values of the other entries) is the channel from
        ``X_I`` (its values in C order) to ``Y``. Returns a :class:`Slices` with the stack of
        shape ``(contexts, Π_{i∈I} m_i, n_outputs)`` and a way back to each context. ``merged``
        (a count with line noise may merge far outputs, see AdditiveMechanism) changes nothing.
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
        return check.entry(i, self.n_entries)

    def _database(
        self, values: Any, name: str, length: int, dims: tuple[int, ...] | None = None
    ) -> tuple[int, ...]:
        return check.database(values, name, length, self._shape if dims is None else dims)

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
    merged: float = 0.0  # the most mass a slice's row has in merged outputs (line noise)


class AdditiveMechanism(Mechanism):
    """``Y ~ noise[Σ_i s_i(X_i)]``: a sum of per-entry integer scores, then a noise channel.

    Counts, bounded sums and histogram cells are of this form. Nothing here enumerates the
    ``Π m_i`` databases: slices, MI-DP and the DP metrics under Hamming neighbours work from the
    *reachable partial sums* (a dynamic programme over the entries), and the dense matrix is
    only built, under dpcap's memory limit, when something really needs it.

    Build one with :meth:`Mechanism.additive`.
    """

    __slots__ = ("_line", "_log_noise", "_lowest", "_noise", "_scores")
    _noise: NDArray[np.float64]
    _log_noise: NDArray[np.float64] | None
    _scores: tuple[NDArray[np.int64], ...]
    _lowest: int

    def __init__(self, scores: Any, noise: Any, /, *, neighbors: Neighbors = "hamming") -> None:
        rows = check.integer_vectors(scores, "scores", "integer score vectors")
        line = noise if getattr(noise, "_structured", False) else None  # rows on demand
        matrix = line if line is not None else check.stochastic_matrix(noise, "noise")
        lowest = sum(int(r.min()) for r in rows)  # Python integers: no int64 overflow
        span = sum(int(r.max()) - int(r.min()) for r in rows) + 1
        if max(abs(lowest), abs(lowest + span)) >= 2**62:
            raise MechanismError(
                f"scores must keep every total within ±2^62 (the totals are int64), got totals "
                f"from {lowest} to {lowest + span - 1}"
            )
        if matrix.shape[0] != span and (line is None or line.n_inputs != span):
            got = matrix.shape[0] if line is None else line.n_inputs
            raise MechanismError(
                f"noise must have one row per possible total ({lowest}..{lowest + span - 1}: "
                f"{span} rows), got {got}"
            )
        object.__setattr__(self, "_scores", tuple(r.astype(np.int64) for r in rows))
        object.__setattr__(self, "_line", line)
        if line is None:
            object.__setattr__(self, "_noise", matrix)
            object.__setattr__(self, "_log_noise", getattr(noise, "log_matrix", None))
        object.__setattr__(self, "_lowest", lowest)
        object.__setattr__(self, "_shape", tuple(int(r.size) for r in rows))
        object.__setattr__(self, "_neighbors", relations.relation(neighbors, self._shape))

    def __getattr__(self, name: str) -> Any:  # a line noise's dense matrix, built on demand
        line = object.__getattribute__(self, "_line") if name in {"_noise", "_log_noise"} else None
        if line is not None:
            value = line.matrix if name == "_noise" else line.log_matrix
            object.__setattr__(self, name, value)
            return value
        raise AttributeError(name)

    @property
    def noise(self) -> NDArray[np.float64]:
        """The noise channel; row ``k`` is the output law of the total ``lowest + k``."""
        return self._noise

    @property
    def line_noise(self) -> Any:  # a count's LineNoise: Hamming neighbours meet rows t, t + 1
        """The :class:`~dpcap.line_noise.LineNoise` of a count (scores ``[0, 1]``), else None."""
        counts = all(s.tolist() == [0, 1] for s in self._scores)
        return self._line if counts else None

    @property
    def log_noise(self) -> NDArray[np.float64] | None:
        """The :attr:`~Channel.log_matrix` of the noise channel (``None`` if it has none)."""
        return self._log_noise

    @property
    def scores(self) -> tuple[NDArray[np.int64], ...]:
        """The score vectors ``s_i`` (``s_i[a]`` is the score of value ``a`` of entry i)."""
        return self._scores

    @property
    def n_inputs(self) -> int:
        return math.prod(self._shape)

    @property
    def n_outputs(self) -> int:
        return int(self._line.n_outputs if self._line else self._noise.shape[1])

    @property
    def matrix(self) -> NDArray[np.float64]:
        """The dense matrix, built on demand (refused above dpcap's memory limit)."""
        try:
            return self._matrix
        except AttributeError:
            pass
        dense = self._noise[self._rows()]
        dense.setflags(write=False)
        object.__setattr__(self, "_matrix", dense)
        return dense

    @property
    def log_matrix(self) -> NDArray[np.float64] | None:
        """The dense :attr:`~Channel.log_matrix`, from the noise's, built on demand."""
        if self._log_noise is None:
            return None
        try:
            return self._log
        except AttributeError:
            pass
        dense = self._log_noise[self._rows()]
        dense.setflags(write=False)
        object.__setattr__(self, "_log", dense)
        return dense

    def _rows(self) -> IntArray:
        """The noise row of every database, in C order (under dpcap's memory limit)."""
        what = f"this additive mechanism {self._shape}"
        check.dense_size(self.n_inputs, self.n_outputs, what, hint=check.EVERY_ROW)
        return database_rows(list(self._scores), self._lowest)

    def tensor(self) -> NDArray[np.float64]:
        return self.matrix.reshape(*self._shape, self.n_outputs)

    def row(self, database: Sequence[int]) -> NDArray[np.float64]:
        x = self._database(database, "database", self.n_entries)
        total = sum(int(s[a]) for s, a in zip(self._scores, x, strict=True))
        index = total - self._lowest
        row: NDArray[np.float64] = self._line.rows([index])[0] if self._line else self._noise[index]
        return row

    def slice(self, i: int, context: Sequence[int]) -> Channel:
        entry = self._entry(i)
        others = [k for k in range(self.n_entries) if k != entry]
        dims = tuple(self._shape[k] for k in others)
        ctx = self._database(context, "context", len(others), dims)
        base = sum(int(self._scores[k][a]) for k, a in zip(others, ctx, strict=True))
        rows = base + self._scores[entry] - self._lowest
        if self._line:
            return Channel(self._line.rows(rows), log_matrix=self._line.log_rows(rows))
        logs = None if self._log_noise is None else self._log_noise[rows]
        return Channel(self._noise[rows], log_matrix=logs)

    def slices(self, group: tuple[int, ...], merged: bool = False) -> Slices:
        """One slice per *reachable total* of the other entries (not per context); ``merged``:
        for a count with line noise, one per class of pairs, far outputs merged (MI-DP)."""
        if self.line_noise is not None and len(group) == 1 and merged:
            return Slices(*self._line.count_slices(self.n_entries))
        sums, totals, index = slice_rows(list(self._scores), group, self._lowest)
        what = "the slices of this additive mechanism (one per total of the other entries)"
        check.dense_size(index.size, self.n_outputs, what, hint="fewer entries are needed")
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
        firsts = [members[0] for members in self.entry_classes()]
        return neighbor_totals(list(self._scores), firsts, self._lowest)

    def reachable_rows(self) -> NDArray[np.float64]:
        """The noise rows of every reachable total (the mechanism's distinct rows)."""
        totals = PartialSums(list(self._scores)).reachable()
        rows: NDArray[np.float64] = self._noise[totals - self._lowest]
        return rows

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, AdditiveMechanism)
        same = self._shape == other._shape and all(
            np.array_equal(a, b) for a, b in zip(self._scores, other._scores, strict=True)
        )
        if self._line is not None or other._line is not None:  # compared by structure
            relation = relations.same(self._neighbors, other._neighbors)
            return same and relation and self._line == other._line
        return same and self._same_relation(other) and np.array_equal(self._noise, other._noise)

    def __repr__(self) -> str:
        return (
            f"AdditiveMechanism(shape={self._shape}, {self.n_outputs} totals x "
            f"{self.n_outputs} outputs{self._relation_repr('hamming')})"
        )


def as_mechanism(obj: Any, name: str = "M") -> Mechanism:
    """A :class:`Mechanism` from a mechanism, a :class:`Channel` or a 2-D array.

    A channel or a plain matrix is a one-entry database: its rows are the values of the entry.
    A channel keeps its relation and log matrix (shared, not copied); a plain matrix gets
    ``"hamming"``, which on one entry relates every pair of rows (as ``"all"``).
    """
    if isinstance(obj, Mechanism):
        return obj
    if isinstance(obj, Channel):
        obj.matrix, obj.log_matrix  # noqa: B018  (built now if kept by structure)
        shared: Mechanism = obj._twin(Mechanism, _shape=(obj.n_inputs,))
        return shared
    matrix = check.stochastic_matrix(obj, name)
    return Mechanism(matrix, (matrix.shape[0],), neighbors="hamming")
