"""The δ(ε) curve of a mechanism: the worst hockey-stick divergence over pairs of rows.

``δ(ε) = max_{ordered pairs} E_{e^ε}(W_x ‖ W_x')`` at every ε of a grid, in one pass over the
pairs (:func:`hockey_curve` for listed pairs, :func:`all_pairs_curve` for every pair of rows):
each pair's likelihood ratios are binned once against the thresholds ``e^{±ε}`` and the curve
follows from per-bin sums (``docs/mathematics.rst`` §3). Work is done in chunks of about
:data:`~.pairwise.CHUNK_ELEMENTS` pair-outputs into buffers allocated once.

Over every pair of rows the rows are read in place: row ``i`` against the block of rows
``i + 1, …`` that follows it is a division of a row by a slice of the matrix, with no gather
of either row per pair; the pure-DP level that certifies δ = 0 comes from running maxima and
minima of the columns (``O(|X|·|Y|)``), not from the chunks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import cast

import numpy as np
from numpy.typing import NDArray

from . import blahut, divergence, rounding
from .pairwise import chunk_rows, chunks, level_rounding, max_log_ratio

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "HUGE_EPS",
    "MATMUL_BINS",
    "SERIAL_PRODUCT",
    "all_pairs_curve",
    "hockey_curve",
    "naive_hockey_curve",
]

#: Most bins whose sums :func:`hockey_curve` combines by a matrix product (``O(bins²)`` per pair,
#: at matrix speed) rather than by running sums (``O(bins)``): measured 2× faster at 256 bins, the
#: two meet near 600.
MATMUL_BINS = 256

#: Products of fewer multiply-adds run on one BLAS thread anyway (OpenBLAS splits from 2^18).
SERIAL_PRODUCT = 2**16

#: Largest ε whose e^ε the binned engine forms (e^709 < DBL_MAX); larger ones go the log way.
HUGE_EPS = 700.0

#: The smallest positive normal double: an entry below it may have lost its value to underflow.
TINY = rounding.SMALLEST_NORMAL


def hockey_curve(
    W: FloatArray, I: IntArray, J: IntArray, eps: FloatArray, logW: FloatArray | None = None
) -> FloatArray:
    """The worst hockey-stick divergence ``δ(ε) = max_{ordered pairs} E_{e^ε}(W_x ‖ W_x')``.

    Parameters
    ----------
    W : (n, k) row-stochastic array
    I, J : int arrays, the unordered pairs
    eps : 1-D array of ε ∈ [0, ∞]
    logW : (n, k) array, optional
        ``log W`` where ``W`` underflowed: the ratios are ``exp(log a − log b)``, and every ε
        whose ``e^ε`` could lift an underflowed mass (``e^ε · k · TINY > 2^-60``) goes the log
        way (``_escaped_mass``).

    Notes
    -----
    For one ordered pair with likelihood ratios ``r_y = a_y / b_y``,
    ``E_γ(a‖b) = Σ_{y: r_y ≥ γ} (a_y − γ b_y)``: δ is piecewise linear in ``γ = e^ε`` between
    the sorted ratios, and only the position of each ``r_y`` relative to the requested thresholds
    matters. The ratios of each pair are therefore binned once against the edges
    ``{e^{±ε_k}}`` (:class:`_BinTable`), the masses ``a`` and ``b`` are summed per bin (two
    ``bincount``), and sums over the bins above ``e^{ε_k}`` and below ``e^{−ε_k}`` give
    ``E_{e^{ε_k}}`` in *both* orders (``x, x'`` uses ``r ≥ e^{ε_k}``, ``x', x`` uses
    ``r < e^{−ε_k}``) at every ε at once (:class:`_BinSums`: one small matrix product with 0/1
    masks per chunk of pairs, or running sums when there are many bins): the cost is
    ``O(pairs × outputs)`` instead of ``O(pairs × outputs × K)`` for ``K`` values of ε.
    An outcome whose ratio sits exactly at an edge contributes ``a_y − γ b_y = 0`` either way,
    and ``0/0`` (both probabilities zero) carries no mass in whatever bin it lands.
    ``ε = ∞`` has its own branch: ``E_∞(a‖b) = Σ_{y: b_y = 0} a_y``.

    **Exact zeros.** At or above the pure-DP level ``ε* = max |log a_y/b_y|`` of the pairs, δ is
    exactly 0: ``E_{e^ε}(a‖b) = Σ_y a_y (1 − e^{ε − ℓ_y})_+ ≤ Σ_y a_y (ℓ_y − ε)_+ ≤ (ε* − ε)_+``
    with ``ℓ_y = log(a_y/b_y)``. The bins compare a rounded ratio with a rounded ``e^ε``, so at
    ``ε = ε*`` (the ε a mechanism was built with) an outcome can land above the edge and leave
    ``a_y − e^ε b_y`` of one ulp, 1.1e-16 where δ is 0. The level ``ε̂`` is therefore read off
    the same ratios (their largest and smallest), and every ``ε ≥ ε̂ − ρ`` gets δ = 0.0, with
    ``ρ = `` :func:`level_rounding` the rounding of a log-likelihood ratio (that of
    :func:`max_log_ratio`, behind ``dp_epsilon``, which it bounds). The certificate: there
    ``ε* ≤ ε̂ + ρ``, so the δ of the stored matrix lies in ``[0, (ε̂ + ρ − ε)_+] ⊆ [0, 2ρ]``
    (``[0, 0]`` from ``ε ≥ ε̂ + ρ`` on).
    """
    n = W.shape[0]
    if len(I) == 0:
        return np.zeros(np.shape(eps))
    if min(int(I.min()), int(J.min())) < 0 or max(int(I.max()), int(J.max())) >= n:
        raise IndexError(f"pair indices must lie in [0, {n}) for a channel of {n} rows")
    return _curve(W, (I, J), eps, logW)


def all_pairs_curve(W: FloatArray, eps: FloatArray, logW: FloatArray | None = None) -> FloatArray:
    """:func:`hockey_curve` over every pair of distinct rows of ``W``, the rows read in place.

    The same curve, with the same certificate of its exact zeros: row ``i`` is divided by the
    slice of rows after it (no row is gathered per pair, except in the short last rows, where
    the slices would be too short to pay), and the pure-DP level ``ε̂`` comes from the
    columns' running maxima and minima, the largest and smallest ratio over ``i < j`` bit for
    bit (``fl(a/b)`` is monotone in ``a``).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.random.default_rng(0).dirichlet(np.ones(8), size=6)
    >>> eps = np.array([0.0, 0.5, 1.0])
    >>> I, J = np.triu_indices(6, k=1)
    >>> bool(np.array_equal(all_pairs_curve(W, eps), hockey_curve(W, I, J, eps)))
    True
    """
    if W.shape[0] < 2:
        return np.zeros(np.shape(eps))
    return _curve(W, None, eps, logW)


_Which = tuple[IntArray, IntArray] | None  # listed pairs, or None for every pair of rows


def _curve(W: FloatArray, pairs: _Which, eps: FloatArray, logW: FloatArray | None) -> FloatArray:
    eps = np.asarray(eps, dtype=np.float64)
    out = np.zeros(eps.shape, dtype=np.float64)
    if eps.size == 0:
        return out
    # e^ε overflows past ε ≈ 709.78: such orders (and ∞) are evaluated directly in log form.
    limit = HUGE_EPS if logW is None else min(HUGE_EPS, math.log(2.0**-60 / (TINY * W.shape[1])))
    binned = np.isfinite(eps) & (eps <= limit)
    levels = np.unique(eps[binned])
    pure: float | None = None
    if levels.size:
        curve, pure = _binned_curve(W, pairs, levels, logW)
        out[binned] = curve[np.searchsorted(levels, eps[binned])]
    for k in np.flatnonzero(~binned):
        level = float(eps.flat[k])
        out.flat[k] = max(_escaped_mass(W, I, J, level, logW) for I, J in _blocks(W, pairs))
    np.clip(out, 0.0, 1.0, out=out)
    if np.any(out > 0.0):
        if pure is None:
            pure = _pure_level(W, pairs, logW)
        if math.isfinite(pure):  # ε*-DP: δ = 0 from ε* on (docstring); ε* = ∞: none
            out[eps >= pure - level_rounding(W, logW)] = 0.0
    return out


def _blocks(W: FloatArray, pairs: _Which) -> Iterator[tuple[IntArray, IntArray]]:
    """The pairs as index arrays: the listed ones, or every ``i < j`` in blocks of rows."""
    if pairs is not None:
        yield pairs
        return
    n = W.shape[0]
    step = max(1, 2**20 // n)
    for start in range(0, n - 1, step):
        firsts = np.arange(start, min(start + step, n - 1), dtype=np.int64)
        counts = n - 1 - firsts
        first = np.repeat(firsts, counts)
        rank = np.arange(len(first), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        yield first, first + 1 + rank


def _pure_level(W: FloatArray, pairs: _Which, logW: FloatArray | None) -> float:
    """:func:`~.pairwise.max_log_ratio` over the pairs; over every pair, column by column."""
    if pairs is not None:
        return max_log_ratio(W, *pairs, logW)[0]
    L = divergence.log(W) if logW is None else logW
    top, bottom = L.max(axis=0), L.min(axis=0)
    used = top > -np.inf  # a column of zeros: 0/0 everywhere, skipped
    if not used.any():
        return 0.0
    return max(float(np.max(top[used] - bottom[used])), 0.0)  # −∞ at the bottom: ∞


def _ratio_range(W: FloatArray, logW: FloatArray | None) -> tuple[float, float]:
    """The largest and smallest ratio ``W[i, y]/W[j, y]`` over ``i < j`` (``exp(log a − log b)``
    with a log matrix), 0/0 skipped, each side starting from 1: those of the chunks' ratios,
    bit for bit, since a ratio is non-decreasing in its numerator."""
    A = W if logW is None else logW
    high = np.maximum.accumulate(A[:-1], axis=0)  # the largest entry above row j, per column
    low = np.minimum.accumulate(A[:-1], axis=0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if logW is None:
            up, down = high / W[1:], low / W[1:]
        else:
            up, down = np.exp(high - logW[1:]), np.exp(low - logW[1:])
    top, bottom = float(np.fmax.reduce(up, None)), float(np.fmin.reduce(down, None))
    if math.isnan(top):  # every ratio is 0/0
        return 1.0, 1.0
    return max(1.0, top), min(1.0, bottom)


def _binned_curve(
    W: FloatArray, pairs: _Which, levels: FloatArray, logW: FloatArray | None = None
) -> tuple[FloatArray, float]:
    """The curve at ``levels`` and the pure-DP level ``max |log r|`` of the ratios binned
    (∞ where some ratio is 0 or ∞; 0/0 is skipped)."""
    gamma = np.exp(levels)
    edges = np.unique(np.concatenate([np.exp(-levels), gamma]))
    n_bins = len(edges) + 1
    n, width = W.shape
    count = n * (n - 1) // 2 if pairs is None else len(pairs[0])
    step = min(chunk_rows(max(width, n_bins)), count)  # the longest chunk
    binner = _Binner(W, logW, _BinTable(edges), (edges, gamma, np.exp(-levels)), step)
    with _one_blas_thread(step * n_bins * 2 * len(levels)):
        if pairs is None:
            last = max(0, n - 1 - step // IN_PLACE_FRACTION)  # rows with enough rows after them
            binner.in_place(range(last))
            I, J = (x.astype(np.int64) + last for x in np.triu_indices(n - last, k=1))
            binner.gathered(I, J, track=False)
            top, bottom = _ratio_range(W, logW)
        else:
            binner.gathered(*pairs, track=True)
            top, bottom = binner.top, binner.bottom
    with np.errstate(divide="ignore"):
        pure = max(float(np.log(top)), -float(np.log(bottom)))  # log 0 = −∞: ε* = ∞
    return binner.sums.best(), pure


#: A row is read in place against the rows after it while they fill at least this fraction of a
#: chunk (1/4); the last rows' few pairs are gathered, fewer and longer chunks.
IN_PLACE_FRACTION = 4


class _Binner:
    """The chunk loop of :func:`_binned_curve`: buffers allocated once, the per-bin sums of the
    pairs it was given, and the largest and smallest ratio it saw (listed pairs)."""

    def __init__(
        self,
        W: FloatArray,
        logW: FloatArray | None,
        table: _BinTable,
        grid: tuple[FloatArray, FloatArray, FloatArray],
        step: int,
    ) -> None:
        edges = grid[0]
        self.W, self.logW, self.table = W, logW, table
        self.n_bins = len(edges) + 1
        self.sums = _BinSums(*grid)  # edges, e^ε and e^{−ε}
        width = W.shape[1]
        self.step = step
        # One set of buffers for every chunk: fresh temporaries cost more than the arithmetic.
        self.a, self.b, self.ratio, self.spare = (np.empty((step, width)) for _ in range(4))
        self.cell, self.index = (np.empty((step, width), dtype=np.int64) for _ in range(2))
        self.flag = np.empty((step, width), dtype=bool)
        self.offsets = np.repeat(np.arange(step, dtype=np.int64) * self.n_bins, width).reshape(
            step, width
        )
        self.top, self.bottom = 1.0, 1.0  # the largest and smallest ratio a/b (0/0 skipped)

    def add(self, a_s: FloatArray, b_s: FloatArray, rows: int) -> None:
        """Bin the ratios in ``ratio[:rows]`` and add the masses of ``a_s``, ``b_s`` per bin."""
        index_s = self.table.bins(
            self.ratio[:rows],
            out=self.index[:rows],
            cell=self.cell[:rows],
            spare=self.spare[:rows],
            flag=self.flag[:rows],
        )
        np.add(index_s, self.offsets[:rows], out=index_s)  # bin j of row p: p * n_bins + j
        flat = index_s.ravel()
        size = rows * self.n_bins
        mass_a = np.bincount(flat, a_s.ravel(), size).reshape(rows, self.n_bins)
        mass_b = np.bincount(flat, b_s.ravel(), size).reshape(rows, self.n_bins)
        self.sums.add(cast(FloatArray, mass_a), cast(FloatArray, mass_b))  # weighted: float64

    def gathered(self, I: IntArray, J: IntArray, track: bool) -> None:
        """The pairs ``(I, J)``, their rows gathered chunk by chunk; ``track``: the range of the
        ratios too."""
        W, logW = self.W, self.logW
        # a/0 = inf, 0/0 = nan, a/subnormal may overflow to inf: all land in the right bin
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for s in chunks(len(I), max(W.shape[1], self.n_bins)):
                rows = s.stop - s.start
                a_s, b_s = self.a[:rows], self.b[:rows]
                ratio_s, spare_s = self.ratio[:rows], self.spare[:rows]
                # mode="wrap" (I, J are row indices): "raise" would copy through a temporary
                W.take(I[s], axis=0, out=a_s, mode="wrap")
                W.take(J[s], axis=0, out=b_s, mode="wrap")
                if logW is None:
                    np.divide(a_s, b_s, out=ratio_s)
                else:
                    logW.take(I[s], axis=0, out=ratio_s, mode="wrap")
                    logW.take(J[s], axis=0, out=spare_s, mode="wrap")
                    np.exp(np.subtract(ratio_s, spare_s, out=ratio_s), out=ratio_s)
                if track:
                    high = float(np.fmax.reduce(ratio_s, None))
                    if not math.isnan(high):  # NaN only if every ratio is 0/0
                        low = float(np.fmin.reduce(ratio_s, None))
                        self.top, self.bottom = max(self.top, high), min(self.bottom, low)
                self.add(a_s, b_s, rows)

    def in_place(self, firsts: range) -> None:
        """Each row ``i`` of ``firsts`` against the rows after it, by slices of the matrix."""
        W, logW, n = self.W, self.logW, self.W.shape[0]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for i in firsts:
                partners = n - 1 - i
                pieces = -(-partners // self.step)
                size = -(-partners // pieces)
                self.a[:size] = W[i]
                for j0 in range(i + 1, n, size):
                    j1 = min(n, j0 + size)
                    rows = j1 - j0
                    ratio_s = self.ratio[:rows]
                    if logW is None:
                        np.divide(W[i], W[j0:j1], out=ratio_s)
                    else:
                        np.exp(np.subtract(logW[i], logW[j0:j1], out=ratio_s), out=ratio_s)
                    self.add(self.a[:rows], W[j0:j1], rows)


def _one_blas_thread(work: int) -> AbstractContextManager[None]:
    """One BLAS thread for the products of :class:`_BinSums` (``work`` multiply-adds each) past
    :data:`SERIAL_PRODUCT`. Split over two threads they ran 10× slower (δ(ε) of a 512 × 64
    channel: 2 s instead of 0.18 s), and slower still when a core is busy elsewhere."""
    return blahut.one_blas_thread() if work > SERIAL_PRODUCT else nullcontext()


class _BinSums:
    """The largest ``E_{e^{ε_k}}`` over the rows of per-bin masses, in both orders, at every ε.

    Bin j holds ratios in ``[edges[j-1], edges[j])``. The forward order (x, x') at ε_k sums the
    bins ``j >= up[k]`` (ratios ``r >= e^{ε_k}``), the backward order (x', x) the bins
    ``j <= down[k]`` (``r < e^{-ε_k}``). Up to :data:`MATMUL_BINS` bins, these sums come from one
    product with 0/1 masks per chunk (``mass_a @ A + mass_b @ B``, ``O(bins × K)`` per row, but
    at matrix speed; the masks hold at most ``2 · MATMUL_BINS²`` numbers); past it, from running
    sums and look-ups (``O(bins + K)`` per row and memory). Either way a sum runs over the masses
    of the bins it needs, never as total − prefix: a mass of 1e-18 above e^ε next to a mass of 1
    below would vanish in the difference (δ(39) of randomized_response(3, 40) is 1 − 1/e, not 1).
    """

    def __init__(self, edges: FloatArray, gamma: FloatArray, inverse: FloatArray) -> None:
        n_bins = len(edges) + 1
        self.gamma = gamma
        self.up = np.searchsorted(edges, gamma) + 1
        self.down = np.searchsorted(edges, inverse)
        self.forward = np.zeros(len(gamma))
        self.backward = np.zeros(len(gamma))
        self.masks: tuple[FloatArray, FloatArray] | None = None
        if n_bins <= MATMUL_BINS:
            j = np.arange(n_bins)[:, None]
            above = (j >= self.up).astype(np.float64)
            below = (j <= self.down).astype(np.float64)
            self.masks = (
                np.concatenate([above, -gamma * below], axis=1),
                np.concatenate([-gamma * above, below], axis=1),
            )

    def add(self, mass_a: FloatArray, mass_b: FloatArray) -> None:
        K = len(self.gamma)
        if self.masks is not None:
            values = mass_a @ self.masks[0]
            values += mass_b @ self.masks[1]
            top = values.max(axis=0)
            np.maximum(self.forward, top[:K], out=self.forward)
            np.maximum(self.backward, top[K:], out=self.backward)
            return
        suffix_a = np.cumsum(mass_a[:, ::-1], axis=1)[:, ::-1]
        suffix_b = np.cumsum(mass_b[:, ::-1], axis=1)[:, ::-1]
        forward = suffix_a[:, self.up] - self.gamma * suffix_b[:, self.up]
        np.maximum(self.forward, forward.max(axis=0), out=self.forward)
        prefix_a = np.cumsum(mass_a, axis=1, out=mass_a)
        prefix_b = np.cumsum(mass_b, axis=1, out=mass_b)
        backward = prefix_b[:, self.down] - self.gamma * prefix_a[:, self.down]
        np.maximum(self.backward, backward.max(axis=0), out=self.backward)

    def best(self) -> FloatArray:
        out: FloatArray = np.maximum(self.forward, self.backward)
        return out


class _BinTable:
    """``searchsorted(edges, r, side="right")`` for positive floats, without a binary search.

    The bit pattern of a non-negative float64, read as an int64, is non-decreasing in its value
    (``+inf`` and NaN come last). Dropping all but ``MANTISSA_BITS`` mantissa bits maps a ratio to
    a *cell* of a logarithmic grid with a cheap shift. Because the map is monotone, every edge in
    a lower cell is ``<= r`` and every edge in a higher cell is ``> r``; so the bin of ``r`` is the
    number of edges in lower cells (a table look-up) plus the edges of its own cell that are
    ``<= r`` (one exact float comparison per edge sharing the cell, usually at most one). The
    tables cover every cell from 0 to +∞ (32,754 entries), so a cell needs no offset: a
    look-up with mode="clip" sends NaN to the last cell (above every edge) and negative bit
    patterns (-0.0, -nan) to cell 0 (below every edge, which are normal numbers). The result
    equals ``searchsorted`` exactly; a test checks it on ties, 0, ∞ and NaN.
    """

    MANTISSA_BITS = 4

    def __init__(self, edges: FloatArray) -> None:
        self.shift = 52 - self.MANTISSA_BITS
        cells = edges.view(np.int64) >> self.shift
        size = int(np.array([np.inf]).view(np.int64)[0] >> self.shift) + 2
        occupancy = np.bincount(cells, minlength=size)
        self.base = np.concatenate([[0], np.cumsum(occupancy)])[:size].astype(np.int64)
        inside = np.full((int(occupancy.max()), size), np.nan)
        inside[np.arange(len(edges)) - self.base[cells], cells] = edges
        self.inside = list(inside)  # one contiguous table per possible edge in a cell

    def bins(
        self,
        ratio: FloatArray,
        out: IntArray | None = None,
        cell: IntArray | None = None,
        spare: FloatArray | None = None,
        flag: NDArray[np.bool_] | None = None,
    ) -> IntArray:
        """The bins of ``ratio`` (C-contiguous); ``out``, ``cell``, ``spare``, ``flag`` are
        optional buffers of its shape (int64, int64, float64, bool)."""
        cell = np.right_shift(ratio.view(np.int64), self.shift, out=cell)
        out = np.take(self.base, cell, out=out, mode="clip")
        for inside in self.inside:
            spare = np.take(inside, cell, out=spare, mode="clip")
            flag = np.greater_equal(ratio, spare, out=flag)  # NaN padding compares False
            np.add(out, flag, out=out)
        return out


def _escaped_mass(
    W: FloatArray,
    I: IntArray,
    J: IntArray,
    eps: float = math.inf,
    logW: FloatArray | None = None,
) -> float:
    """``max Σ_y (a_y − e^ε b_y)_+`` for a huge or infinite ε, without forming ``e^ε``.

    ``e^ε b_y = exp(ε + log b_y)``, capped at e^709 (already far above any ``a_y ≤ 1``); at
    ε = ∞ only outcomes with ``b_y = 0`` count.
    """
    logW = divergence.log(W) if logW is None else logW
    best = 0.0
    for s in chunks(len(I), W.shape[1]):
        for a, log_b in ((W[I[s]], logW[J[s]]), (W[J[s]], logW[I[s]])):
            if math.isinf(eps):
                mass = np.where(np.isneginf(log_b), a, 0.0).sum(axis=1)
            else:
                scaled = np.exp(np.minimum(eps + log_b, 709.0))
                mass = np.maximum(a - scaled, 0.0).sum(axis=1)
            best = max(best, float(mass.max()))
    return best


def naive_hockey_curve(W: FloatArray, I: IntArray, J: IntArray, eps: FloatArray) -> FloatArray:
    """Reference implementation: ``E_{e^ε}`` for every ε by direct broadcasting (tests, bench)."""
    out = np.zeros(np.shape(eps))
    for k, e in enumerate(np.asarray(eps, dtype=np.float64).ravel()):
        gamma = math.exp(e) if math.isfinite(e) else math.inf
        for s in chunks(len(I), W.shape[1]):
            a, b = W[I[s]], W[J[s]]
            both = np.concatenate([a, b]), np.concatenate([b, a])
            value = float(np.max(divergence.hockey_stick(both[0], both[1], np.asarray(gamma))))
            out.flat[k] = max(out.flat[k], value)
    return out
