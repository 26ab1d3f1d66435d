"""Neighbour relations: which pairs of databases a DP metric compares.

A relation is written in one vocabulary everywhere in dpcap (the ``neighbors=`` argument of the
DP metrics, the attribute :attr:`~dpcap.Channel.neighbors` a mechanism carries, the constraint
set of the optimal-mechanism LPs), on a domain ``X_1 × … × X_n`` of sizes ``shape`` whose
databases are numbered in C order (``numpy.ravel_multi_index(x, shape)``;
``docs/mathematics.rst`` §3):

``"hamming"``
    databases that differ in exactly one entry (the usual DP relation). On a one-entry domain
    every pair of values.
``"line"``
    databases that differ in one entry by exactly one (adjacent values: counts, sums).
``"all"``
    every pair of databases (local DP).
pairs
    an integer array of row-index pairs, shape ``(k, 2)``, or of database pairs, shape
    ``(k, 2, n)``.
a predicate
    ``f(x, x') -> bool`` on two databases (tuples of values, 1-tuples on a one-entry domain),
    evaluated on every pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.errors import NeighborError, ProblemTooLargeError

__all__ = ["MAX_PAIRS", "NEIGHBOR_NAMES", "Neighbors", "lift", "neighbor_pairs", "within"]

IntArray: TypeAlias = NDArray[np.int64]

#: Most work a DP metric does, in ``pairs × outputs`` compared after merging identical rows and
#: pairs (about 10–40 s of numpy at 20–70 ns per element); above it ``ProblemTooLargeError``.
MAX_PAIR_WORK = 2**29

#: Most multiply-adds of the matrix products that screen every pair of rows for KL-DP, Rényi DP
#: and TV (``rows² × outputs``, :mod:`dpcap.solvers.gram`; a 3000 × 3000 matrix is 2.7·10¹⁰,
#: about a second). Above it those metrics compare pairs one by one, under MAX_PAIR_WORK.
MAX_PRODUCT_WORK = 2**36

#: Largest number of (unordered) neighbour pairs enumerated for one mechanism.
MAX_PAIRS = 2**24

#: Largest number of pairs a predicate is evaluated on.
MAX_PREDICATE_PAIRS = 2**21

#: A neighbour relation: a name ("hamming", "line", "all"), explicit pairs of row indices
#: (shape ``(k, 2)``) or of databases (shape ``(k, 2, n)``), or a predicate on two databases.
Neighbors: TypeAlias = (
    str
    | Sequence[Sequence[int]]
    | NDArray[Any]
    | Callable[[tuple[int, ...], tuple[int, ...]], bool]
)

NEIGHBOR_NAMES = ("hamming", "line", "all")


def neighbor_pairs(
    shape: Sequence[int], /, neighbors: Neighbors = "hamming"
) -> tuple[IntArray, IntArray]:
    """The neighbouring databases of a domain, as unordered pairs of row indices ``(i, j)``, i < j.

    Parameters
    ----------
    shape : sequence of int
        Domain sizes ``(m_1, …, m_n)`` (a channel's is ``(n_inputs,)``).
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
    dims = check.domain_shape(shape)
    if isinstance(neighbors, str):
        if neighbors == "hamming":
            return _product_pairs(dims, _all_values, "hamming")
        if neighbors == "line":
            return _product_pairs(dims, _adjacent_values, "line")
        if neighbors == "all":
            total = math.prod(dims)
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


def relation(neighbors: Any, shape: Sequence[int]) -> Neighbors:
    """Validate a relation to be carried by a mechanism on ``shape``, without enumerating it.

    A name is checked against :data:`NEIGHBOR_NAMES`, explicit pairs are checked and stored as
    a read-only ``(k, 2)`` array of sorted row-index pairs, a predicate is kept as given.
    """
    if isinstance(neighbors, str):
        if neighbors not in NEIGHBOR_NAMES:
            raise NeighborError(
                f"neighbors must be one of {NEIGHBOR_NAMES}, an array of pairs or a predicate, "
                f"got {neighbors!r}"
            )
        return neighbors
    if callable(neighbors):
        predicate: Callable[[tuple[int, ...], tuple[int, ...]], bool] = neighbors
        return predicate
    I, J = _explicit_pairs(check.domain_shape(shape), neighbors)
    pairs = np.stack([I, J], axis=1)
    pairs.setflags(write=False)
    return pairs


def same(a: Neighbors, b: Neighbors) -> bool:
    """Whether two carried relations are the same (names and pairs by value, predicates by
    identity)."""
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    if isinstance(a, str) or isinstance(b, str) or callable(a) or callable(b):
        return a is b
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def describe(neighbors: Neighbors) -> str | list[list[int]]:
    """A JSON-safe description: the name, the list of row-index pairs, or the predicate's name."""
    if isinstance(neighbors, str):
        return neighbors
    if callable(neighbors):
        return f"predicate {getattr(neighbors, '__name__', type(neighbors).__name__)}"
    return [[int(a), int(b)] for a, b in np.asarray(neighbors)]


def within(n: int, distance: int) -> Neighbors:
    """The values ``0..n`` at distance at most ``distance`` of each other.

    ``"line"`` for distance 1, ``"all"`` once ``distance >= n``, explicit pairs in between: the
    relation under which additive noise of sensitivity Δ = ``distance`` is ε-DP.
    """
    if distance <= 1:
        return "line"
    if distance >= n:
        return "all"
    first, second = np.triu_indices(n + 1, k=1)
    close = second - first <= distance
    pairs = np.stack([first[close], second[close]], axis=1).astype(np.int64)
    pairs.setflags(write=False)
    return pairs


def lift(neighbors: Neighbors, shape: Sequence[int]) -> Neighbors:
    """The relation on databases of ``shape`` where one entry moves under ``neighbors``.

    ``neighbors`` relates the values of one entry (as a channel's relation does): ``"all"`` and
    ``"hamming"`` lift to ``"hamming"``, ``"line"`` to ``"line"``, explicit pairs of values to
    the database pairs that differ in one entry by such a pair, a predicate to a predicate.
    Every entry must have the same number of values.
    """
    dims = check.domain_shape(shape)
    if isinstance(neighbors, str):
        return "line" if neighbors == "line" else "hamming"
    if callable(neighbors):
        moves = neighbors

        def one_entry_moves(x: tuple[int, ...], y: tuple[int, ...]) -> bool:
            changed = [i for i, (a, b) in enumerate(zip(x, y, strict=True)) if a != b]
            return len(changed) == 1 and bool(moves((x[changed[0]],), (y[changed[0]],)))

        return one_entry_moves
    values = np.asarray(relation(neighbors, dims[:1]))
    I, J = _product_pairs(dims, lambda m: (values[:, 0], values[:, 1]), "pairs")
    pairs = np.stack([I, J], axis=1)
    pairs.setflags(write=False)
    return pairs


def _check_pair_count(count: int, what: str) -> None:
    if count > MAX_PAIRS:
        raise ProblemTooLargeError(
            f"neighbors={what!r} gives {count} pairs of databases, above dpcap's limit of "
            f"{MAX_PAIRS}; use a smaller domain or a structured mechanism"
        )


def _all_values(m: int) -> tuple[Any, Any]:
    return np.triu_indices(m, k=1)


def _adjacent_values(m: int) -> tuple[Any, Any]:
    return np.arange(m - 1), np.arange(1, m)


def _product_pairs(
    dims: tuple[int, ...], values: Callable[[int], tuple[Any, Any]], what: str
) -> tuple[IntArray, IntArray]:
    """Databases that differ in one entry, whose two values are a pair of ``values(m)``."""
    total = math.prod(dims)
    # counted before any array is built (a domain of 2^40 values must not reach numpy)
    per_context = [m * (m - 1) // 2 if what == "hamming" else max(m - 1, 0) for m in dims]
    _check_pair_count(sum(total // m * k for m, k in zip(dims, per_context, strict=True)), what)
    grid = np.arange(total, dtype=np.int64).reshape(dims)
    per_axis = [values(m) for m in dims]
    firsts, seconds = [], []
    for axis, (m, (a, b)) in enumerate(zip(dims, per_axis, strict=True)):
        if len(a) == 0:
            continue
        g = np.moveaxis(grid, axis, -1).reshape(-1, m)
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
    if count > MAX_PREDICATE_PAIRS:
        raise ProblemTooLargeError(
            f"a neighbour predicate is evaluated on every pair: {count} pairs is above the "
            f"limit of {MAX_PREDICATE_PAIRS}; pass the pairs as an array instead"
        )
    databases = [tuple(int(v) for v in x) for x in np.ndindex(*dims)]
    I, J = [], []
    for i in range(total):
        for j in range(i + 1, total):
            if predicate(databases[i], databases[j]):
                I.append(i)
                J.append(j)
    return np.asarray(I, dtype=np.int64), np.asarray(J, dtype=np.int64)


def refuse_pairs(
    what: str,
    pairs: int,
    width: int,
    advice: str = "pass fewer neighbour pairs (neighbors=) or a structured mechanism",
) -> ProblemTooLargeError:
    """The refusal of a DP metric above :data:`MAX_PAIR_WORK` (the DP metrics of
    :mod:`dpcap.privacy` and the measures of :mod:`dpcap.metric_privacy` share the limit)."""
    return ProblemTooLargeError(
        f"{what} would compare {pairs} distinct pairs of rows over {width} outputs "
        f"({pairs * width} pair-outputs, after merging identical rows and pairs), above dpcap's "
        f"limit of {MAX_PAIR_WORK} (dpcap.neighbors.MAX_PAIR_WORK); {advice}"
    )
