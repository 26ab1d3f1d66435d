"""Worst divergences over many pairs of rows: a screen by matrix products, then the pair kernel.

A DP metric is a maximum over pairs of rows of a divergence (:mod:`.pairwise`). For the
divergences below, the value of every ordered pair ``(a, b) = (W_x, W_x')`` comes from one
matrix product over all rows (``docs/mathematics.rst`` §3), at BLAS speed instead of one
evaluation per pair and output:

==========  ================================================  ==================================
metric      the pair's value                                  product
==========  ================================================  ==================================
KL          ``Σ a log a − Σ a log b − Σ a + Σ b``             ``W (log W)ᵀ``
Rényi α     ``log(Σ a^α b^{1−α}) / (α − 1)``                  ``e^{α(L−m)} (e^{−(α−1)(L−m)+m})ᵀ``
Rényi 0     ``−log Σ_{y: a_y>0} b_y``                         ``[W > 0] Wᵀ``
TV          ``½ Σ |a − b|``                                   none: SciPy's compiled L1 distances
==========  ================================================  ==================================

(``L = log W``, ``m`` its column maxima: no factor overflows.) These are not the numbers the pair
kernels report: ``Σ a log a − Σ a log b`` cancels where rows nearly agree, which
:func:`.divergence.kl` avoids by summing non-negative terms. So the products only *screen*: each
ordered pair gets an interval ``[lo, hi]`` that holds the value the pair kernel
(:func:`.pairwise.max_divergence`, :func:`.pairwise.max_tv`) computes for it, from the rounding
bounds below, and :func:`candidates` returns the pairs whose ``hi`` reaches the largest ``lo``.
The kernel's maximum over those pairs is, bit for bit, its maximum over all pairs: the pair that
attains it has ``hi ≥`` its value ``≥`` every ``lo``. Its value per pair depends on that pair's
rows only (its branches are chosen row by row), so where it is evaluated does not matter.
Nearly equal rows give wide intervals and stay candidates: they are evaluated by the
cancellation-free kernel, never by the product.

**Rounding** (``u = 2⁻⁵³``, ``γ_n = nu/(1 − nu)``, :mod:`.rounding`; ``log``, ``exp`` and
``expm1`` within 2 ulps, 4u relative, measured ≤ 1.11u; a dot product of ``k`` terms within
``γ_k`` of the sum of its terms' absolute values, in any order and with FMA; ``τ = 4k·2⁻¹⁰⁷⁴``
for products and terms that fall below the normal range). ``k`` is the number of outputs.

* KL, product: ``ê = Σ a log a``, ``Ĉ = Σ a log b`` (a BLAS product) and the row sums
  ``ŝ`` are within ``γ_{k+5}|ê|``, ``γ_{k+5}|Ĉ|``, ``γ_k ŝ`` of their exact values (all terms of
  one sign), so the estimate ``ê − Ĉ − ŝ_a + ŝ_b`` is within
  ``E = γ_{k+11}(|ê| + |Ĉ| + ŝ_a + ŝ_b) + 2τ`` of the exact ``T = Σ (a log(a/b) − a + b)``
  (three more roundings for the combination and three for ``E`` itself). The kernel sums the
  non-negative terms of ``T`` each within ``32u`` (:func:`.divergence.kl_terms`): its value lies
  in ``[(1 − γ_{k+37}) (T − …)₊ − τ, (1 + γ_{k+37}) T + τ]``. With a log matrix the kernel takes
  ``Σ a (log a − log b)`` as it stands (:func:`.pairwise.renyi_logs`), within
  ``γ_{2k+4}(|ê| + |Ĉ|) + τ``.
* Rényi α, product: each factor's exponent is off by at most
  ``Δ = u(7(α + |α − 1|) M + 1)`` (``M`` the largest ``|log W|``), so each product term is
  within ``φ = (Δ + 8u)(1 + 2(Δ + 8u))`` relative, the sum within
  ``ρ = γ_k + 2φ + 2k·2⁻¹⁰⁷⁴/Σ̂`` and the estimate within
  ``E = ρ/((1 − ρ)|α − 1|) + 8u|est|`` of ``F = log(Σ a^α b^{1−α})/(α − 1)``. The kernel
  (:func:`.divergence.renyi`) is within ``κ`` of ``F`` on either of its branches, with ``Λ`` a bound
  on ``Σ a |log(a/b)|`` and ``M_a``, ``M_b`` the rows' largest ``|log|``:
  ``κ = [6(26u + 2γ_k)|α − 1|Λ + 6γ_k + 12|1 − s_a| + u(7M_a + 9|α − 1|(M_a + M_b)) + γ_{k+8}
  + 4u log k] / |α − 1| + 7u(|est| + E)`` (the ``expm1``/``log1p`` branch: terms within
  ``26u|α − 1| a|log(a/b)|``, ``1 + Σ ≥ 0.17``; the log-sum-exp branch: exponents within
  ``5u|log a| + 7u|α − 1||log(a/b)|``). Orders 0: ``Σ̂`` and the kernel's sum are both within
  ``γ_k`` of the exact mass, so both logarithms are within ``γ_{k+2} + 5u|est|`` of it.
* TV: SciPy's ``cityblock`` distance and the kernel both sum ``|a_y − b_y|`` (each rounded
  once) in some order, within ``γ_k`` of ``Σ|a − b|``: the kernel lies within
  ``est·γ_{2k+3} + 2τ`` of the estimate.

Escapes (``a_y > 0 = b_y`` at α ≥ 1) and disjoint supports (α < 1) are counted exactly by 0/1
products: their value is ∞ in the kernel and here. A pair whose interval cannot be bounded (a
sum that vanished to underflow) is always a candidate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.distance import cdist

from . import rounding

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

__all__ = ["BLOCK_ELEMENTS", "TV", "Candidates", "candidates", "intervals", "supports"]

#: The order that names total variation in :func:`candidates` (orders α are floats).
TV = "tv"

#: Entries of each ``rows × rows`` block of intervals (8 MiB of float64 per array): the rows of
#: a block are screened against all rows at once, so memory stays bounded whatever the size.
BLOCK_ELEMENTS = 2**20

#: Largest exponent (in absolute value) of a factor of the Rényi product: no factor overflows.
EXPONENT = 600.0

#: Largest deviation of a row sum from 1 for the Rényi bound (validated channels: 1e-9).
ROW_SUM_SLACK = 0.01

U = rounding.U
gamma = rounding.gamma
_TINY = rounding.SMALLEST  # 2⁻¹⁰⁷⁴


class Candidates(NamedTuple):
    """The pairs the pair kernel must still evaluate after the screen.

    ``I``, ``J``: unordered pairs of rows (the kernels evaluate both orders); ``left``: their
    number, or a number above the ``cap`` given to :func:`candidates` (then ``I`` and ``J`` are
    empty: too many pairs tie or nearly agree for the screen to decide).
    """

    I: IntArray
    J: IntArray
    left: int


class _Model(Protocol):
    symmetric: bool
    rows: int  # most rows per block

    def block(self, rows: slice, cols: slice) -> tuple[FloatArray, FloatArray]: ...


def supports(W: FloatArray, order: float | str, logW: FloatArray | None = None) -> bool:
    """Whether :func:`candidates` can screen ``order`` (an α in [0, ∞), or :data:`TV`) on ``W``.

    Not: α = ∞ (the pure-DP level has its own ``O(|X|·|Y|)`` form), a log matrix except for KL
    and TV, and Rényi orders whose factors would leave the range of doubles (``max(α, |α − 1|)``
    times the spread of ``log W`` above :data:`EXPONENT`, entries below the smallest normal
    double, rows further than :data:`ROW_SUM_SLACK` from summing to 1).
    """
    if isinstance(order, str):
        return order == TV
    if order == 1.0 or order == 0.0:
        return order == 1.0 or logW is None
    if logW is not None or not 0.0 < order < math.inf:
        return False
    low = np.min(W, axis=0, initial=np.inf, where=W > 0)  # each column's least positive entry
    used = low < np.inf
    if not used.any() or float(np.min(low)) < rounding.SMALLEST_NORMAL:
        return False
    if float(np.max(np.abs(W.sum(axis=1) - 1.0))) > ROW_SUM_SLACK:
        return False
    spread = float(np.max(np.log(np.max(W, axis=0)[used]) - np.log(low[used])))
    # the factors' exponents, rounded up by far more than the rounding of these logarithms
    return max(order, abs(order - 1.0)) * spread * (1.0 + 2.0**-40) <= EXPONENT


def _model(W: FloatArray, order: float | str, logW: FloatArray | None) -> _Model:
    if order == TV:
        return _TV(W)
    alpha = float(order)
    if alpha == 1.0:
        return _KL(W, logW)
    if alpha == 0.0:
        return _RenyiZero(W)
    return _Renyi(W, alpha)


def intervals(
    W: FloatArray, order: float | str, logW: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """``(lo, hi)``, each ``(n, n)``: the interval holding the pair kernel's value of every
    ordered pair ``(x, x')`` (the diagonal included), for ``order`` as in :func:`candidates`."""
    n = W.shape[0]
    return _model(W, order, logW).block(slice(0, n), slice(0, n))


def candidates(
    W: FloatArray,
    order: float | str,
    pairs: tuple[IntArray, IntArray] | None = None,
    logW: FloatArray | None = None,
    *,
    cap: int,
) -> Candidates:
    """The pairs among which the pair kernel attains its largest value over ``pairs``.

    Parameters
    ----------
    W : (n, k) row-stochastic array
    order : float or ``"tv"``
        α ∈ [0, ∞) for Rényi divergences (1: KL), :data:`TV` for total variation; one that
        :func:`supports` accepts.
    pairs : (I, J) int arrays, optional
        Unordered pairs of rows; ``None`` for every pair of distinct rows.
    logW : (n, k) array, optional
        ``log W`` where ``W`` underflowed (KL and TV only; TV ignores it, as its kernel does).
    cap : int
        Most pairs to return; past it ``left`` says so and no pair is returned.

    Returns
    -------
    Candidates
        Every ordered pair whose interval (module docstring) reaches the largest lower end, as
        unordered pairs: ``pairwise.max_divergence(W, I, J, α, logW)`` (or ``max_tv``) over them
        equals its value over all ``pairs``, bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from dpcap.solvers import pairwise
    >>> W = np.random.default_rng(0).dirichlet(np.ones(50), size=40)
    >>> left = candidates(W, 1.0, cap=10**6)
    >>> left.left  # one pair of the 780 can attain the largest KL divergence
    1
    >>> I, J = np.triu_indices(40, k=1)
    >>> screened = pairwise.max_divergence(W, left.I, left.J, 1.0)[0]
    >>> screened == pairwise.max_divergence(W, I, J, 1.0)[0]
    True
    """
    model = _model(W, order, logW)
    n = W.shape[0]
    step = max(1, min(BLOCK_ELEMENTS // max(n, 1), model.rows))
    listed = None if pairs is None else _sorted(pairs, model.symmetric)

    def blocks() -> Iterator[_Block]:
        for r0 in range(0, n, step):
            rows = slice(r0, min(n, r0 + step))
            yield (
                _all_block(model, rows, n) if listed is None else _listed_block(model, rows, listed)
            )

    # One pass with a running threshold (the largest lower end so far): a pair kept now may be
    # dropped later, never the reverse. If even the pruned pairs overflow, a second pass with
    # the final threshold counts them exactly.
    best = -math.inf
    found: list[_Picked] = []
    size, overflow = 0, False
    for block in blocks():
        best = max(best, block.top)
        if overflow:
            continue
        found.append(block.pick(best))
        size += len(found[-1].x)
        if size > 2 * cap:
            found = _prune(found, best)
            size = sum(len(f.x) for f in found)
            overflow = size > 2 * cap
    if overflow:
        found, size = [], 0
        for block in blocks():
            found.append(block.pick(best))
            size += len(found[-1].x)
            if size > 2 * cap:  # ordered pairs: more than cap unordered ones
                return Candidates(_EMPTY, _EMPTY, (size + 1) // 2)
    return _unordered(_prune(found, best), n, cap)


_EMPTY = np.zeros(0, dtype=np.int64)


class _Picked(NamedTuple):
    """Ordered pairs ``(x, x')`` kept by a block, with the upper ends of their intervals."""

    x: IntArray
    y: IntArray
    hi: FloatArray


class _Block(NamedTuple):
    """A block's largest lower end, and the pairs whose upper end reaches a threshold."""

    top: float
    pick: Callable[[float], _Picked]


def _all_block(model: _Model, rows: slice, n: int) -> _Block:
    """Every ordered pair ``(x, x')``, ``x`` in ``rows``, ``x' ≠ x`` (``x' > x`` if symmetric)."""
    r0, r1 = int(rows.start), int(rows.stop)
    c0 = r0 if model.symmetric else 0
    lo, hi = model.block(rows, slice(c0, n))
    i = np.arange(r1 - r0)[:, None]
    j = np.arange(n - c0)[None, :] + c0 - r0
    invalid = j <= i if model.symmetric else j == i
    lo[np.broadcast_to(invalid, lo.shape)] = -np.inf
    hi[np.broadcast_to(invalid, hi.shape)] = np.nan  # compares False with every threshold
    top = float(np.max(lo, initial=-np.inf))

    def pick(threshold: float) -> _Picked:
        x, y = np.nonzero(hi >= threshold)
        return _Picked(x + r0, y + c0, hi[x, y])

    return _Block(top, pick)


def _sorted(pairs: tuple[IntArray, IntArray], symmetric: bool) -> list[tuple[IntArray, IntArray]]:
    """The ordered pairs to screen, sorted by their first row: ``(I, J)``, and ``(J, I)``
    unless the divergence is symmetric."""
    I, J = (np.asarray(p, dtype=np.int64) for p in pairs)
    out = []
    for first, second in ((I, J),) if symmetric else ((I, J), (J, I)):
        order = np.argsort(first, kind="stable")
        out.append((first[order], second[order]))
    return out


def _listed_block(model: _Model, rows: slice, listed: list[tuple[IntArray, IntArray]]) -> _Block:
    """The listed ordered pairs whose first row is in ``rows``."""
    r0, r1 = int(rows.start), int(rows.stop)
    parts = []
    for first, second in listed:
        a, b = np.searchsorted(first, [r0, r1])
        parts.append((first[a:b], second[a:b]))
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    if not len(x):
        return _Block(-math.inf, lambda threshold: _Picked(_EMPTY, _EMPTY, np.zeros(0)))
    lo, hi = model.block(rows, slice(0, None))
    lo_v, hi_v = lo[x - r0, y], hi[x - r0, y]
    top = float(np.max(lo_v))

    def pick(threshold: float) -> _Picked:
        keep = hi_v >= threshold
        return _Picked(x[keep], y[keep], hi_v[keep])

    return _Block(top, pick)


def _prune(found: list[_Picked], threshold: float) -> list[_Picked]:
    out = []
    for f in found:
        keep = f.hi >= threshold
        out.append(_Picked(f.x[keep], f.y[keep], f.hi[keep]))
    return out


def _unordered(found: list[_Picked], n: int, cap: int) -> Candidates:
    """The kept ordered pairs as distinct unordered pairs ``I ≤ J``."""
    x = np.concatenate([f.x for f in found]) if found else _EMPTY
    y = np.concatenate([f.y for f in found]) if found else _EMPTY
    codes = np.unique(np.minimum(x, y) * n + np.maximum(x, y))
    if len(codes) > cap:
        return Candidates(_EMPTY, _EMPTY, len(codes))
    return Candidates(codes // n, codes % n, len(codes))


# --- the models: intervals of a block of ordered pairs ------------------------------------


class _KL:
    """KL (α = 1): ``Σ a log a − Σ a log b − Σ a + Σ b`` against the non-negative terms of
    :func:`.divergence.kl`, or ``Σ a (log a − log b)`` against :func:`.pairwise.renyi_logs`."""

    symmetric = False
    rows = BLOCK_ELEMENTS

    def __init__(self, W: FloatArray, logW: FloatArray | None) -> None:
        k = W.shape[1]
        support = W > 0 if logW is None else logW > -np.inf
        self.W = W
        self.L = np.zeros(W.shape)
        np.copyto(
            self.L, np.log(np.where(support, W, 1.0)) if logW is None else logW, where=support
        )
        e = np.einsum("ij,ij->i", W, self.L)  # ê = Σ a log a
        self.plain = logW is None
        self.s = np.sum(W, axis=1) if self.plain else np.zeros(W.shape[0])
        self.own = np.abs(e) + self.s  # the first row's part of |ê| + |Ĉ| + ŝ_a + ŝ_b
        self.shift = e - self.s  # and of the estimate ê − Ĉ − ŝ_a + ŝ_b
        self.signed = bool(np.any(self.L > 0))  # log of an entry above 1 (a row sum's rounding)
        self.P, self.N = _escape_factors(support)
        self.g_est = gamma(k + 11)
        self.g_kernel = gamma(k + 37) if self.plain else gamma(2 * k + 4)
        self.tau = 4.0 * k * _TINY

    def block(self, rows: slice, cols: slice) -> tuple[FloatArray, FloatArray]:
        W, L = self.W, self.L
        est = W[rows] @ L[cols].T  # Ĉ
        np.negative(est, out=est)  # −Ĉ = Σ a |log b| when no log is positive
        size = W[rows] @ np.abs(L[cols]).T if self.signed else est.copy()
        size += self.own[rows, None]
        size += self.s[None, cols]
        est += self.shift[rows, None]
        est += self.s[None, cols]
        err = size
        if self.plain:  # the kernel's error is relative to its (non-negative) value
            err *= self.g_est
            err += 2.0 * self.tau
            hi = est + err
            hi *= 1.0 + self.g_kernel
            hi += self.tau
            lo = np.subtract(est, err, out=err)
            np.maximum(lo, 0.0, out=lo)
            lo *= 1.0 - self.g_kernel
            lo -= self.tau
        else:
            err *= self.g_est + self.g_kernel
            err += 3.0 * self.tau
            hi = est + err
            lo = np.subtract(est, err, out=err)
        return _escapes(self.P, self.N, rows, cols, lo, hi)


class _Renyi:
    """Rényi of order α ∉ {0, 1, ∞}: ``log(Σ a^α b^{1−α})/(α − 1)`` by a scaled product.

    Every bound but the kernel's is one number for all pairs, or a sum of a number per row of
    each side (the kernel's), so a block costs the product, a logarithm and a few passes. A sum
    below :data:`SMALL_SUM` (underflow could dominate it) leaves its pair undecided.
    """

    symmetric = False
    rows = BLOCK_ELEMENTS

    def __init__(self, W: FloatArray, alpha: float) -> None:
        k = W.shape[1]
        support = W > 0
        c = alpha - 1.0
        L = np.full(W.shape, -np.inf)
        np.log(W, out=L, where=support)
        top = np.max(W, axis=0)
        m = np.log(np.where(top > 0, top, 1.0))  # a column of zeros: any scale
        L -= m  # L − m ≤ 0 (−∞ at zeros)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            self.A = np.exp(alpha * L)  # 0 at zeros (α > 0)
            B = L * -c
            B += m
            self.B = np.exp(B, out=B)
        self.B[~support] = 0.0  # e^{+∞} where α > 1
        least = np.min(W, axis=1, initial=np.inf, where=support)
        most = np.max(W, axis=1)
        # each row's largest |log W|, raised by 8u to bound the exact logarithms
        self.M = np.maximum(-np.log(least), np.log(np.maximum(most, 1.0))) * (1.0 + 8.0 * U)
        s = np.sum(W, axis=1)
        dev = np.abs(1.0 - s) + gamma(k) * s  # bounds |1 − Σa|
        smax = float(np.max(s, initial=0.0)) * (1.0 + gamma(k))
        self.c, self.k = c, k
        self.alpha_below_one = alpha < 1.0
        self.support = support.astype(np.float64) if alpha < 1.0 else None
        self.P, self.N = _escape_factors(support) if alpha > 1.0 else (None, None)
        delta = U * (7.0 * (alpha + abs(c)) * float(np.max(self.M, initial=0.0)) + 1.0) + 8.0 * U
        phi = delta * (1.0 + 2.0 * delta)
        rho = gamma(k) + 2.0 * phi + 2.0 * k * _TINY / SMALL_SUM
        self.E = rho / ((1.0 - rho) * abs(c)) * (1.0 + 7.0 * U)  # the product, and 7u of it
        # the kernel's bound κ: a part per first row and a part per second row
        lam = 6.0 * (26.0 * U + 2.0 * gamma(k)) * abs(c) * smax * (1.0 + 8.0 * U) + 9.0 * U * abs(c)
        const = 6.0 * gamma(k) + gamma(k + 8) + 4.0 * U * math.log(k)
        self.first = ((lam + 7.0 * U) * self.M + 12.0 * dev + const) / abs(c)
        self.second = lam * self.M / abs(c)

    def block(self, rows: slice, cols: slice) -> tuple[FloatArray, FloatArray]:
        total = self.A[rows] @ self.B[cols].T
        small = total < SMALL_SUM
        with np.errstate(divide="ignore"):
            est = np.log(total, out=total)
        est /= self.c
        err = np.abs(est)
        err *= 16.0 * U
        err += self.E
        err += self.first[rows, None]
        err += self.second[None, cols]
        err *= 1.0 + 8.0 * U  # the rounding of this sum and of est ± err
        with np.errstate(invalid="ignore"):
            lo, hi = est - err, est + err
        if small.any():  # the scaled terms may have underflowed: no bound
            lo[small], hi[small] = -np.inf, np.inf
            if self.support is not None:  # α < 1: Σ = 0 for disjoint supports (∞)
                apart = small & ((self.support[rows] @ self.support[cols].T) < 0.5)
                lo[apart], hi[apart] = np.inf, np.inf
        return _escapes(self.P, self.N, rows, cols, lo, hi)


#: Sums of the Rényi product below this may have lost all their digits to underflow (each term
#: at most ``2⁻¹⁰⁷⁴`` off): their pairs stay candidates.
SMALL_SUM = 2.0**-900


class _RenyiZero:
    """Order 0: ``−log Σ_{y: a_y > 0} b_y``; the kernel sums the same masses."""

    symmetric = False
    rows = BLOCK_ELEMENTS

    def __init__(self, W: FloatArray) -> None:
        self.W, self.P = W, (W > 0).astype(np.float64)
        self.g = gamma(W.shape[1] + 2)

    def block(self, rows: slice, cols: slice) -> tuple[FloatArray, FloatArray]:
        mass = self.P[rows] @ self.W[cols].T
        with np.errstate(divide="ignore"):
            est = -np.log(mass)
        err = 2.0 * (self.g + 5.0 * U * np.abs(est))
        with np.errstate(invalid="ignore"):
            lo, hi = est - err, est + err
        disjoint = mass == 0.0  # a meeting support has a positive mass, whatever the rounding
        lo[disjoint], hi[disjoint] = np.inf, np.inf
        return lo, hi


class _TV:
    """Total variation ``½ Σ |a − b|``: SciPy's L1 distances against :func:`.divergence.tv`,
    tile by tile (rows that stay in cache: its loops stream the second rows once per first)."""

    symmetric = True
    rows = 64

    def __init__(self, W: FloatArray) -> None:
        self.W = W
        self.g = gamma(2 * W.shape[1] + 3)
        self.slack = 8.0 * W.shape[1] * _TINY
        self.tile = max(64, 2**18 // max(W.shape[1], 1))

    def block(self, rows: slice, cols: slice) -> tuple[FloatArray, FloatArray]:
        first = self.W[rows]
        start, stop = cols.indices(self.W.shape[0])[:2]
        est = np.empty((len(first), stop - start))
        for c0 in range(start, stop, self.tile):
            c1 = min(stop, c0 + self.tile)
            est[:, c0 - start : c1 - start] = cdist(first, self.W[c0:c1], "cityblock")
        est *= 0.5
        lo = est * (1.0 - self.g)
        lo -= self.slack
        est *= 1.0 + self.g
        est += self.slack
        return lo, est


def _escape_factors(support: BoolArray) -> tuple[FloatArray | None, FloatArray | None]:
    """0/1 factors whose product counts the outputs with ``a_y > 0 = b_y`` (None: no zeros)."""
    if bool(support.all()):
        return None, None
    return support.astype(np.float64), (~support).astype(np.float64)


def _escapes(
    P: FloatArray | None,
    N: FloatArray | None,
    rows: slice,
    cols: slice,
    lo: FloatArray,
    hi: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """``[∞, ∞]`` for the pairs where ``a`` puts mass on an output ``b`` cannot produce."""
    if P is not None and N is not None:
        escape = (P[rows] @ N[cols].T) > 0.5  # a count of outputs: exact
        lo[escape], hi[escape] = np.inf, np.inf
    return lo, hi
