"""A query with a finite range followed by a noise channel: ``Y ~ N[f(X^n)]``.

A :class:`FunctionMechanism` releases ``Y ~ N[f(x^n)]`` where ``f`` maps each database of
``X_1 × … × X_n`` to a row index of the noise channel ``N`` (``|V|`` rows, ``|Y|`` outputs).
Its row for database ``x^n`` is ``W_{x^n} = N_{f(x^n)}``; it stores the *value table*
``f(x^n)`` (one integer per database, ``Π m_i`` of them) and the noise, never the
``Π m_i × |Y|`` matrix unless asked for it (:attr:`FunctionMechanism.matrix`).

What is read off the structure:

* **Capacities.** With ``V_f = f(X_1 × … × X_n)`` the values the query takes, every capacity
  of ``W`` (Shannon, Sibson, Augustin–Csiszár, Arimoto, orders 0 and ∞, maximal leakage) is
  that of the value channel ``R = (N_v)_{v ∈ V_f}``: a law ``p`` on databases and its image
  ``f_# p`` on ``V_f`` give the row ``W_X = R_{f(X)}`` the same law, and each law on ``V_f`` is
  the image of a law on databases (one database per value). This is the lemma of
  :mod:`dpcap.shannon.structured` with the score ``S`` replaced by ``f``; its proof uses only
  that ``W_x`` is a function of ``S(x)``.
* **DP metrics.** ε, δ(ε), Rényi/KL/TV-DP are maxima over neighbouring pairs ``(x, x')`` of a
  divergence between ``N_{f(x)}`` and ``N_{f(x')}``: they are the same maxima over the set of
  *value pairs* ``{(f(x), f(x')) : x ~ x', f(x) ≠ f(x')}`` (pairs with equal values give 0).
  :meth:`FunctionMechanism.value_channel` is ``R`` carrying those pairs as its relation.
* **MI-DP.** The slice of entry ``i`` at context ``c`` is ``(N_{f(a, c)})_a``: it is fixed by the
  *value pattern* ``(f(a, c))_a``, so :meth:`FunctionMechanism.slices` returns one slice per
  distinct pattern (Cuff & Yu, "Differential privacy as a mutual information constraint",
  CCS 2016, Def. 2).

**Cost.** Building the value table evaluates ``f`` once per database: ``Π m_i`` calls (about
0.3–1 µs each for a simple Python function, far less with ``vectorized=True``) and
``8 · Π m_i`` bytes. Above :data:`MAX_QUERY_EVALUATIONS` databases the constructor raises
:class:`~dpcap.errors.ProblemTooLargeError`: a query that is a sum of per-entry scores should be
described by :meth:`dpcap.Mechanism.additive` instead, which never enumerates databases. The
value pairs of Hamming neighbours take ``O(Π m_i · Σ_i m_i)`` work and the slices of entry
``i`` ``O(Π m_i)`` work plus one noise row per distinct pattern and value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap.channel import Channel, Mechanism, Slices
from dpcap.errors import MechanismError, ProblemTooLargeError
from dpcap.neighbors import Neighbors

__all__ = ["MAX_QUERY_EVALUATIONS", "FunctionMechanism", "from_function"]

#: The most databases whose query value is tabulated (``2^22``: 32 MiB of int64, a few seconds
#: of calls to a plain Python function).
MAX_QUERY_EVALUATIONS = 2**22

#: Databases passed at once to a vectorised query (bounded ``(block, n)`` index arrays).
_BLOCK = 2**16

IntArray = np.ndarray[Any, np.dtype[np.int64]]
FloatArray = NDArray[np.float64]


def _values(
    query: Callable[..., Any], shape: tuple[int, ...], rows: int, vectorized: bool
) -> IntArray:
    """The value table ``f(x)`` of every database in C order, checked against ``[0, rows)``."""
    total = math.prod(shape)
    if total > MAX_QUERY_EVALUATIONS:
        raise ProblemTooLargeError(
            f"from_function would evaluate the query on {total} databases (shape {shape}), "
            f"above dpcap's limit of {MAX_QUERY_EVALUATIONS} "
            "(dpcap.function_mechanism.MAX_QUERY_EVALUATIONS); a sum of per-entry scores is "
            "described without enumeration by dpcap.Mechanism.additive"
        )
    table = np.empty(total, dtype=np.int64)
    for start in range(0, total, _BLOCK):
        stop = min(start + _BLOCK, total)
        dbs = np.stack(np.unravel_index(np.arange(start, stop), shape), axis=1)
        if vectorized:
            raw = np.asarray(query(dbs))
            if raw.shape != (stop - start,):
                raise MechanismError(
                    f"a vectorized query must return one value per database (shape "
                    f"({stop - start},) for a block of {stop - start}), got shape {raw.shape}"
                )
            got = list(raw)
        else:
            got = [query(tuple(int(v) for v in db)) for db in dbs]
        for k, value in enumerate(got):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise MechanismError(
                    f"query must return an integer row index of noise, got {check.show(value)} "
                    f"for database {tuple(int(v) for v in dbs[k])}"
                )
            if not 0 <= int(value) < rows:
                raise MechanismError(
                    f"query must return a row index of noise in [0, {rows - 1}], got "
                    f"{int(value)} for database {tuple(int(v) for v in dbs[k])}"
                )
        table[start:stop] = np.asarray(got, dtype=np.int64)
    table.setflags(write=False)
    return table


class FunctionMechanism(Mechanism):
    """``Y ~ noise[query(X^n)]``: a query with a finite range, then a noise channel.

    Build one with :func:`from_function`; the module docstring states what is computed from the
    structure and what the value table costs.
    """

    __slots__ = ("_log_noise", "_noise", "_values")
    _noise: FloatArray
    _log_noise: FloatArray | None
    _values: IntArray

    def __init__(
        self,
        query: Callable[..., Any],
        noise: Any,
        shape: Sequence[int],
        /,
        *,
        neighbors: Neighbors = "hamming",
        vectorized: bool = False,
    ) -> None:
        if not callable(query):
            raise MechanismError(f"query must be callable, got {check.show(query)}")
        matrix = check.stochastic_matrix(noise, "noise")
        dims = check.domain_shape(shape)
        values = _values(query, dims, matrix.shape[0], bool(vectorized))
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_noise", matrix)
        object.__setattr__(self, "_log_noise", getattr(noise, "log_matrix", None))
        object.__setattr__(self, "_shape", dims)
        object.__setattr__(self, "_neighbors", relations.relation(neighbors, dims))

    @property
    def values(self) -> IntArray:
        """The value table: ``values[x]`` is the noise row of database ``x`` (shape ``shape``)."""
        return self._values.reshape(self._shape)

    @property
    def noise(self) -> FloatArray:
        """The noise channel; row ``v`` is the output law when the query's value is ``v``."""
        return self._noise

    @property
    def log_noise(self) -> FloatArray | None:
        """The :attr:`~dpcap.Channel.log_matrix` of the noise channel (``None`` if it has none)."""
        return self._log_noise

    @property
    def n_inputs(self) -> int:
        return int(self._values.size)

    @property
    def n_outputs(self) -> int:
        return int(self._noise.shape[1])

    @property
    def matrix(self) -> FloatArray:
        """The dense matrix ``noise[values]``, built on demand under dpcap's memory limit."""
        return self._dense(self._noise, "_matrix")

    @property
    def log_matrix(self) -> FloatArray | None:
        """The dense :attr:`~dpcap.Channel.log_matrix`, from the noise's, built on demand."""
        return None if self._log_noise is None else self._dense(self._log_noise, "_log")

    def _dense(self, rows: FloatArray, slot: str) -> FloatArray:
        """``rows[values]`` (one row per database), kept in ``slot`` once built."""
        try:
            kept: FloatArray = getattr(self, slot)
            return kept
        except AttributeError:
            pass
        what = f"this function mechanism {self._shape}"
        check.dense_size(self.n_inputs, self.n_outputs, what, hint=check.EVERY_ROW)
        dense = rows[self._values]
        dense.setflags(write=False)
        object.__setattr__(self, slot, dense)
        return dense

    def tensor(self) -> FloatArray:
        return self.matrix.reshape(*self._shape, self.n_outputs)

    def row(self, database: Sequence[int]) -> FloatArray:
        x = self._database(database, "database", self.n_entries)
        row: FloatArray = self._noise[self._values[int(np.ravel_multi_index(x, self._shape))]]
        return row

    def slice(self, i: int, context: Sequence[int]) -> Channel:
        entry = self._entry(i)
        others = tuple(s for k, s in enumerate(self._shape) if k != entry)
        ctx = self._database(context, "context", len(others), others)
        index: tuple[Any, ...] = (*ctx[:entry], slice(None), *ctx[entry:])
        rows = self.values[index]
        logs = None if self._log_noise is None else self._log_noise[rows]
        return Channel(self._noise[rows], log_matrix=logs)

    def slices(self, group: tuple[int, ...], merged: bool = False) -> Slices:
        """One slice per distinct *value pattern* ``(f(v, c))_v`` of the group (not per context).

        The slice at context ``c`` is ``(noise[f(v, c)])_v`` with ``v`` the group's values in
        C order: contexts with equal patterns have equal slices. The first context of each
        pattern (in C order) is its witness. ``merged`` changes nothing here (see
        :meth:`dpcap.Mechanism.slices`).
        """
        rest = tuple(k for k in range(self.n_entries) if k not in group)
        moved = np.moveaxis(self.values, group, tuple(range(len(rest), self.n_entries)))
        width = math.prod(self._shape[k] for k in group)
        patterns, first = np.unique(moved.reshape(-1, width), axis=0, return_index=True)
        order = np.argsort(first)  # patterns in the order of their first context
        patterns, first = patterns[order], first[order]
        what = "the slices of this function mechanism (one per distinct value pattern)"
        check.dense_size(patterns.size, self.n_outputs, what, hint="fewer entries are needed")
        others = tuple(self._shape[k] for k in rest)

        def context(k: int) -> tuple[int, ...]:
            return tuple(int(v) for v in np.unravel_index(int(first[k]), others))

        return Slices(self._noise[patterns], context)

    def entry_classes(self) -> list[list[int]]:
        """Entries ``i, j`` with ``m_i = m_j`` and ``f`` symmetric in ``(x_i, x_j)`` share a class.

        If ``f`` is unchanged by swapping the two entries, the slice of ``i`` at a context with
        ``x_j = b`` is the slice of ``j`` at the same context with ``x_i = b``: their sets of
        slices, hence their MI-DP, coincide. Each entry is compared with each class's first.
        """
        table = self.values
        classes: list[list[int]] = []
        for i in range(self.n_entries):
            for members in classes:
                j = members[0]
                if self._shape[i] == self._shape[j] and np.array_equal(
                    table, np.swapaxes(table, i, j)
                ):
                    members.append(i)
                    break
            else:
                classes.append([i])
        return classes

    def reachable(self) -> IntArray:
        """The values the query takes (increasing): the mechanism's distinct noise rows."""
        return np.unique(self._values)

    def reachable_rows(self) -> FloatArray:
        """The noise rows of the values the query takes (the mechanism's distinct rows)."""
        rows: FloatArray = self._noise[self.reachable()]
        return rows

    def neighbor_rows(self) -> tuple[IntArray, IntArray]:
        """Value pairs ``(v, v')``, ``v < v'``, met by neighbouring databases (noise rows).

        Under ``"hamming"`` (the default) one pass over each entry's axis of the value table,
        ``O(Π m_i · Σ_i m_i)``; under another relation its database pairs are listed
        (:func:`dpcap.neighbor_pairs`) and mapped through the table.
        """
        relation = self._neighbors
        rows = int(self._noise.shape[0])
        chunks: list[IntArray] = []
        if isinstance(relation, str) and relation == "hamming":
            work = self.n_inputs * sum(m - 1 for m in self._shape)
            if work > check.MAX_DENSE_ELEMENTS:
                raise ProblemTooLargeError(
                    f"the neighbour pairs of this query on {self.n_inputs} databases would take "
                    f"{work} comparisons, above dpcap's limit of {check.MAX_DENSE_ELEMENTS}; "
                    "describe it by a score that adds over entries (Mechanism.additive)"
                )
            table = self.values
            for i, m in enumerate(self._shape):
                axis = np.moveaxis(table, i, 0).reshape(m, -1)
                for a in range(m - 1):
                    chunks.append(_codes(axis[a][None, :], axis[a + 1 :], rows))
        elif isinstance(relation, str) and relation == "all":
            v = self.reachable()
            lo, hi = np.triu_indices(len(v), k=1)
            chunks.append(v[lo] * rows + v[hi])
        else:
            I, J = relations.neighbor_pairs(self._shape, relation)
            chunks.append(_codes(self._values[I], self._values[J], rows))
        codes = np.unique(np.concatenate(chunks)) if chunks else np.zeros(0, dtype=np.int64)
        return codes // rows, codes % rows

    def value_channel(self) -> Channel:
        """The noise rows of the values taken, carrying the value pairs of neighbours.

        Row ``k`` is ``noise[reachable()[k]]``; the relation is :meth:`neighbor_rows`
        re-indexed to these rows. By the module docstring, :func:`dpcap.capacity`,
        :func:`dpcap.dp_epsilon`, :func:`dpcap.dp_delta_curve` (and every capacity and DP
        metric) of this channel equal those of the mechanism, and it has ``|V_f|`` rows
        instead of ``Π m_i``. (Its MI-DP is its capacity, not the mechanism's MI-DP.)
        """
        values = self.reachable()
        I, J = self.neighbor_rows()
        logs = None if self._log_noise is None else self._log_noise[values]
        relation: Neighbors
        if len(I):
            relation = np.stack([np.searchsorted(values, I), np.searchsorted(values, J)], axis=1)
        else:  # no neighbours change the value: every DP metric is 0

            def relation(x: tuple[int, ...], y: tuple[int, ...]) -> bool:
                return False

        return Channel(self._noise[values], neighbors=relation, log_matrix=logs)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, FunctionMechanism)
        a, b = self._log_noise, other._log_noise
        same_log = a is b if a is None or b is None else bool(np.array_equal(a, b))
        return (
            self._shape == other._shape
            and same_log
            and relations.same(self._neighbors, other._neighbors)
            and bool(np.array_equal(self._values, other._values))
            and bool(np.array_equal(self._noise, other._noise))
        )

    def __repr__(self) -> str:
        return (
            f"FunctionMechanism(shape={self._shape}, {self.reachable().size} values x "
            f"{self.n_outputs} outputs{self._relation_repr('hamming')})"
        )


def _codes(a: IntArray, b: IntArray, rows: int) -> IntArray:
    """The distinct unordered pairs of unequal values of ``a`` and ``b``, each as the code
    ``min · rows + max`` (one integer: a 1-D unique instead of a row-wise one)."""
    a, b = np.broadcast_arrays(a, b)
    keep = a != b
    lo, hi = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    codes: IntArray = np.unique(lo.astype(np.int64) * rows + hi)
    return codes


def from_function(
    query: Callable[..., Any],
    noise: Any,
    shape: Sequence[int],
    /,
    *,
    neighbors: Neighbors = "hamming",
    vectorized: bool = False,
) -> FunctionMechanism:
    """A query with a finite range released through a noise channel: ``Y ~ noise[query(X^n)]``.

    Parameters
    ----------
    query : callable
        ``query(x)`` for a database ``x`` (a tuple of ``n`` ints, ``x_i`` in ``range(m_i)``)
        returns the row of ``noise`` to release, an integer in ``[0, noise.shape[0])``. With
        ``vectorized=True`` it is called on an int array of shape ``(k, n)`` (one database per
        row, at most 65,536 at a time) and returns ``k`` row indices.
    noise : Channel or array_like, shape (n_values, n_outputs)
        Row ``v`` is the output law when the query's value is ``v``.
    shape : sequence of int
        Domain sizes ``(m_1, …, m_n)``.
    neighbors : str, array_like or callable, keyword-only
        The relation between databases the DP metrics use by default (``"hamming"``).
    vectorized : bool, keyword-only
        Whether ``query`` takes a block of databases at once.

    Returns
    -------
    FunctionMechanism
        A :class:`~dpcap.Mechanism` holding the value table and the noise, never the dense
        ``Π m_i × |Y|`` matrix unless asked for
        :attr:`~dpcap.function_mechanism.FunctionMechanism.matrix`.

    Raises
    ------
    ProblemTooLargeError
        If ``Π m_i`` exceeds :data:`MAX_QUERY_EVALUATIONS` (``2^22``): the query is evaluated
        once per database.
    MechanismError
        If ``query`` is not callable, returns a non-integer or a value outside the noise's rows,
        or ``shape`` is malformed.
    ChannelError
        If ``noise`` is not a stochastic matrix.

    Notes
    -----
    The rows are ``W_x = noise[f(x)]``. Every capacity is that of
    :meth:`~dpcap.function_mechanism.FunctionMechanism.value_channel` (the
    noise rows at the query's range), and each DP metric is its maximum over the value pairs
    ``(f(x), f(x'))`` of neighbouring databases (module docstring). For the maximum of ``n``
    bits, ``f(x) = max_i x_i``, released exactly (``noise`` the identity on ``{0, 1}``): one
    entry turns the output from 0 to 1 when the others are 0, so the MI-DP is ``log 2`` and
    ``ε = ∞`` (Cuff & Yu, CCS 2016, Def. 2).

    Examples
    --------
    >>> import math, numpy as np
    >>> import dpcap
    >>> M = from_function(max, np.eye(2), (2, 2, 2))
    >>> M.values.ravel().tolist()
    [0, 1, 1, 1, 1, 1, 1, 1]
    >>> math.isclose(dpcap.midp(M).value, math.log(2)), dpcap.dp_epsilon(M.value_channel())
    (True, inf)
    """
    return FunctionMechanism(query, noise, shape, neighbors=neighbors, vectorized=vectorized)
