"""Additive noise on a line of values, clamped at the ends, with its rows computed on demand.

``clamp(x + Z, 0, n)`` on ``{0, …, n}`` for a noise ``Z`` on the integers that is symmetric
(``P(Z = k) = P(Z = −k)``) is fixed by ``n + 1`` masses and ``n + 1`` tails
(``docs/mathematics.rst`` §14)::

    W[x, y] = pmf[|y − x|]   (0 < y < n),    W[x, 0] = tail[x],    W[x, n] = tail[n − x],

with ``pmf[k] = P(Z = k)`` and ``tail[k] = P(Z ≥ k)``: ``O(n)`` numbers where the matrix has
``(n + 1)²``. :class:`LineNoise` keeps only those (and their logarithms where entries underflow)
and builds the dense matrix on demand, under dpcap's memory limit, for whatever needs it; the
DP metrics, MI-DP and the capacity work from the structure at any ``n``
(``truncated_geometric(100000, 1.0)`` is 3.2 MB, not 74.5 GiB).

**The band.** ``B`` is the least width with ``tail[B + 1] ≤ 2⁻¹⁰⁰`` (``B = n`` if there is
none): every row has all but ``2·tail[B + 1]`` of its mass within distance ``B + 1`` of its input.

**Pairs of consecutive inputs.** The channel ``[W_c; W_{c+1}]`` of line neighbours, with the
outputs further than ``B`` from both rows merged into one column on each side, has exact entries
(with ``t = tail``)::

    left group  (y ≤ c − B − 1):      (t[B + 1], t[B + 2]),
    right group (y ≥ c + B + 2):      (t[B + 2], t[B + 1]),

since the left group of row ``c`` holds ``P(Z ≤ −c) + P(B + 1 ≤ Z ≤ c − 1) = P(Z ≥ B + 1)``, and
likewise for the others. Merging outputs is post-processing, so every divergence, hockey-stick
δ and capacity of the merged pair is at most that of the pair; it is at least that of the pair
less what the merged outputs carry, a mass of at most ``2·t[B + 1]`` per row (each metric's
bound is stated where it is used). All pairs ``B + 1 ≤ c ≤ n − B − 2`` give the same merged
channel, and pair ``n − 1 − c`` is pair ``c`` with its rows swapped and outputs reversed (``Z``
is symmetric): the ``n`` pairs are ``min(B, n − 1) + 2`` *classes* at most.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import Channel
from dpcap.neighbors import Neighbors
from dpcap.solvers import divergence

__all__ = ["TAIL", "LineNoise", "PairClasses", "clamped"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The band ends where the noise's tail mass falls to this (see the module docstring).
TAIL = 2.0**-100

#: Relative slack on a closed-form tail (its evaluation error is a few ulps).
_TAIL_SLACK = 1e-6


def clamped(n: int, pmf: FloatArray, tail: FloatArray) -> FloatArray:
    """The dense ``(n + 1) × (n + 1)`` matrix ``W[x, y]`` of the module docstring (also of the
    log-masses, which sit in the same places)."""
    line = np.concatenate([pmf[:0:-1], pmf])  # pmf[|k|] for k = -n..n
    W: FloatArray = np.lib.stride_tricks.sliding_window_view(line, n + 1)[::-1].copy()
    x = np.arange(n + 1)
    W[:, 0] = tail[x]
    W[:, n] = tail[n - x]
    return W


class PairClasses(NamedTuple):
    """The merged channels of the classes of consecutive pairs (module docstring).

    ``W`` and ``L`` (log-masses, or None) stack the two rows of each class: rows ``2i`` and
    ``2i + 1`` are the rows ``c`` and ``c + 1`` of class ``i``, ``first[i] = c`` a pair of the
    class, ``mass`` the most mass a row of any pair has in merged outputs (``≤ 2·tail[B + 1]``).
    """

    W: FloatArray
    L: FloatArray | None
    first: IntArray
    mass: float


class LineNoise(Channel):
    """A clamped additive noise channel on ``{0, …, n}`` stored by its masses and tails.

    Made by the noise constructors of :mod:`dpcap.mechanisms` (``truncated_geometric``,
    ``discrete_laplace``, ``discrete_gaussian``, ``staircase`` with ``truncation="clamp"``). It
    is a :class:`~dpcap.channel.Channel`: :attr:`matrix` builds the dense matrix on demand,
    refused with :class:`~dpcap.ProblemTooLargeError` above dpcap's memory limit; the DP
    metrics under line neighbours, MI-DP and the capacity of a count with this noise, the
    capacity and the maximal leakage work from the structure instead (module docstring).
    """

    __slots__ = ("_log_pmf", "_log_tail", "_n", "_pmf", "_tail")
    _structured: ClassVar[bool] = True
    _n: int
    _pmf: FloatArray
    _tail: FloatArray
    _log_pmf: FloatArray | None
    _log_tail: FloatArray | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("LineNoise objects are made by the noise constructors of dpcap.mechanisms")

    @classmethod
    def _make(
        cls,
        n: int,
        pmf: FloatArray,
        tail: FloatArray,
        logs: tuple[FloatArray, FloatArray] | None,
        neighbors: Neighbors,
    ) -> LineNoise:
        """From ``pmf[k]``, ``tail[k]`` (``k = 0..n``) and their closed-form logs (None where
        the zeros of the masses are exact)."""
        self: LineNoise = object.__new__(cls)
        for array in (pmf, tail):
            array.setflags(write=False)
        present = np.concatenate([pmf[:n] if n >= 2 else pmf[:0], tail])
        keep = logs is not None and bool((present < TINY).any())
        values = {
            "_n": n,
            "_pmf": pmf,
            "_tail": tail,
            "_log_pmf": logs[0] if keep and logs is not None else None,
            "_log_tail": logs[1] if keep and logs is not None else None,
            "_renormalized": 0.0,
            "_neighbors": relations.relation(neighbors, (n + 1,)),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # by its structure: copying or pickling never builds the dense matrix
        logs = None if self._log_pmf is None else (self._log_pmf, self._log_tail)
        return (LineNoise._make, (self._n, self._pmf, self._tail, logs, self._neighbors))

    def __getattr__(self, name: str) -> Any:
        # the dense matrix and its logs, built when first asked for (slots left empty)
        W: FloatArray | None
        if name == "_matrix":
            W = self._dense(self._pmf, self._tail)
        elif name == "_log":
            W = None if self._log_pmf is None else self._dense(self._log_pmf, self._log_tail)
        else:
            raise AttributeError(name)
        object.__setattr__(self, name, W)
        return W

    def _dense(self, pmf: FloatArray, tail: Any) -> FloatArray:
        n = self._n
        check.dense_size(
            n + 1,
            n + 1,
            f"this noise channel on {{0..{n}}}",
            hint="its DP metrics, MI-DP and capacity work from its structure without it",
        )
        W = clamped(n, pmf, tail)
        W.setflags(write=False)
        return W

    @property
    def n_inputs(self) -> int:
        return self._n + 1

    @property
    def n_outputs(self) -> int:
        return self._n + 1

    @property
    def largest(self) -> int:
        """``n``: the values are ``{0, …, n}``."""
        return self._n

    def rows(self, index: Any) -> FloatArray:
        """The rows ``W[index]`` (a 1-D integer index), computed from the structure."""
        return self._rows(np.asarray(index, dtype=np.int64), self._pmf, self._tail)

    def log_rows(self, index: Any) -> FloatArray | None:
        """``log W[index]`` from the closed-form logs (None: the channel keeps none)."""
        if self._log_pmf is None or self._log_tail is None:
            return None
        return self._rows(np.asarray(index, dtype=np.int64), self._log_pmf, self._log_tail)

    def _rows(self, x: IntArray, pmf: FloatArray, tail: FloatArray) -> FloatArray:
        n = self._n
        check.dense_size(len(x), n + 1, f"{len(x)} rows of this noise channel on {{0..{n}}}")
        return self._at(x[:, None], np.arange(n + 1)[None, :], pmf, tail)

    def _entries(self, x: int, ys: IntArray, logs: bool) -> FloatArray:
        pmf, tail = (self._log_pmf, self._log_tail) if logs else (self._pmf, self._tail)
        assert pmf is not None
        assert tail is not None
        return self._at(np.int64(x), ys, pmf, tail)

    def _at(self, x: Any, y: Any, pmf: FloatArray, tail: FloatArray) -> FloatArray:
        """``W[x, y]`` (or its log, from the logs given) for broadcast index arrays in
        ``{0..n}``: the one home of the formula of the module docstring."""
        n = self._n
        out: FloatArray = np.where(y == n, tail[n - x], pmf[np.abs(y - x)])
        return np.where(y == 0, tail[x], out)

    def band(self) -> int:
        """``B``: the least width with ``tail[B + 1] ≤ 2⁻¹⁰⁰`` (``n`` if none)."""
        small = np.flatnonzero(self._tail[1:] * (1.0 + _TAIL_SLACK) <= TAIL)
        return int(small[0]) if small.size else self._n

    def outside(self) -> float:
        """An upper bound on the mass a row has further than ``B + 1`` from its input."""
        B = self.band()
        if self._n < B + 1:
            return 0.0
        return 2.0 * float(self._tail[B + 1]) * (1.0 + _TAIL_SLACK)

    def band_rows(self) -> tuple[FloatArray, int]:
        """``Wb[x, j] = W[x, x − B + j]`` for ``j = 0..2B`` (0 off ``{0..n}``) and ``B``."""
        n, B = self._n, self.band()
        check.dense_size(n + 1, 2 * B + 1, f"the band of this noise channel on {{0..{n}}}")
        x = np.arange(n + 1)[:, None]
        y = x - B + np.arange(2 * B + 1)[None, :]
        inside = (y >= 0) & (y <= n)
        Wb = np.where(inside, self._at(x, np.clip(y, 0, n), self._pmf, self._tail), 0.0)
        return Wb, B

    def pair_classes(self) -> PairClasses:
        """The classes of pairs ``(c, c + 1)`` with their merged channels (module docstring)."""
        n, B = self._n, self.band()
        firsts = list(range(min(B, n - 1) + 1))
        if n - B - 2 >= B + 1:
            firsts.append(B + 1)
        width = min(2 * B + 4, n + 1)  # window and merged groups never exceed the outputs
        check.dense_size(2 * len(firsts), width, "the pairs of neighbouring noise rows")
        log_tail = self._log_tail
        W = np.zeros((2 * len(firsts), width))
        L = None if log_tail is None else np.full(W.shape, -np.inf)
        for i, c in enumerate(firsts):
            ys = np.arange(max(0, c - B), min(n, c + 1 + B) + 1)
            for r, x in enumerate((c, c + 1)):
                groups = []
                if ys[0] > 0:
                    groups.append(B + 1 + r)
                if ys[-1] < n:
                    groups.append(B + 2 - r)
                W[2 * i + r, : len(ys)] = self._entries(x, ys, False)
                W[2 * i + r, len(ys) : len(ys) + len(groups)] = self._tail[groups]
                if L is not None and log_tail is not None:
                    L[2 * i + r, : len(ys)] = self._entries(x, ys, True)
                    L[2 * i + r, len(ys) : len(ys) + len(groups)] = log_tail[groups]
        W.setflags(write=False)
        return PairClasses(W, L, np.asarray(firsts, dtype=np.int64), self.outside())

    def count_slices(self, entries: int) -> tuple[FloatArray, Any, float]:
        """The MI-DP slices of a count of ``entries`` binary entries with this noise: one per
        class of pairs, the context of each (the other entries, ``c`` ones last), and the most
        mass a row has in merged outputs (see :func:`dpcap.mi_dp` for what it may hide)."""
        classes = self.pair_classes()
        others = entries - 1

        def ones(k: int) -> tuple[int, ...]:
            c = int(classes.first[k])
            return (0,) * (others - c) + (1,) * c

        return classes.W.reshape(-1, 2, classes.W.shape[1]), ones, classes.mass

    def line_epsilon(self) -> float:
        """``max_{|x − x'| = 1, y} log W[x, y]/W[x', y]``, exactly as the dense kernel gives it,
        in ``O(n)``: interior outputs see the differences ``log pmf[|k|] − log pmf[|k − 1|]``
        for ``2 − n ≤ k ≤ n − 1``, the two ends ``log tail[c] − log tail[c + 1]``."""
        n = self._n
        lp, lt = self._log_pmf, self._log_tail
        if lp is None or lt is None:  # the logarithm the dense kernel takes
            lp, lt = divergence.log(self._pmf), divergence.log(self._tail)
        k = np.arange(2 - n, n) if n >= 2 else np.zeros(0, dtype=np.int64)
        pairs = [(lp[np.abs(k)], lp[np.abs(k - 1)]), (lt[:-1], lt[1:])]
        level = 0.0
        for a, b in pairs:
            both = np.isneginf(a) & np.isneginf(b)  # 0/0: impossible under both
            if (np.isneginf(a) ^ np.isneginf(b)).any():
                return math.inf
            with np.errstate(invalid="ignore"):
                d = np.abs(np.where(both, 0.0, a - b))
            if d.size:
                level = max(level, float(d.max()))
        return level

    def column_max_sum(self) -> float:
        """``Σ_y max_x W[x, y]`` in ``O(n)``: an interior column's largest entry is the largest
        mass within distance ``max(y, n − y)``, an end column's the largest tail."""
        n = self._n
        reach = np.maximum.accumulate(self._pmf)
        y = np.arange(1, n)
        return 2.0 * float(self._tail.max()) + float(reach[np.maximum(y, n - y)].sum())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LineNoise):
            return NotImplemented
        return (
            self._n == other._n
            and relations.same(self._neighbors, other._neighbors)
            and bool(np.array_equal(self._pmf, other._pmf))
            and bool(np.array_equal(self._tail, other._tail))
        )

    def __repr__(self) -> str:
        return (
            f"LineNoise(clamped additive noise on {{0..{self._n}}}, {self._n + 1} inputs x "
            f"{self._n + 1} outputs{self._relation_repr('all')})"
        )
