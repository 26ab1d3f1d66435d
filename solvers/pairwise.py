"""Worst cases over pairs of rows: the kernels behind every DP metric.

A DP metric of a mechanism is a maximum, over ordered neighbour pairs ``(x, x')``, of a
divergence between rows ``W_x`` and ``W_x'``. The pairs come as two index arrays ``I < J``
(unordered); every kernel here evaluates both orders. Work is done in chunks of pairs whose
``pairs × outputs`` size stays near :data:`CHUNK_ELEMENTS`, so memory is bounded whatever the
number of pairs.

Every kernel but :func:`max_tv` takes an optional ``logW``: the log-probabilities of the rows
where the matrix underflowed (``docs/mathematics.rst`` §8). Likelihood ratios are then taken
from it (``log a − log b``), never from the 0 or subnormal the matrix holds; masses still come
from ``W``, where an underflowed entry weighs less than the smallest normal double.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import cast

import numpy as np
from numpy.typing import NDArray

from . import blahut, divergence, rounding

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "CHUNK_ELEMENTS",
    "hockey_curve",
    "max_divergence",
    "max_divergences",
    "max_log_ratio",
    "max_scaled_hockey",
    "max_scaled_log_ratio",
    "max_tv",
]

#: Target number of ``pair × output`` elements per chunk (512 KiB of float64): large enough to
#: amortise numpy's per-call overhead, small enough for the temporaries to stay in cache
#: (measured on the δ(ε) benchmark: 2**15–2**16 is fastest, 2**20 is 20% slower).
CHUNK_ELEMENTS = 2**16

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


def chunk_rows(width: int) -> int:
    """Pairs per chunk of :func:`chunks` for rows of ``width`` entries."""
    return max(1, CHUNK_ELEMENTS // max(1, width))


def chunks(n_pairs: int, width: int) -> Iterator[slice]:
    """Slices of ``range(n_pairs)`` holding about :data:`CHUNK_ELEMENTS` elements each."""
    step = chunk_rows(width)
    for start in range(0, n_pairs, step):
        yield slice(start, min(start + step, n_pairs))


def max_log_ratio(
    W: FloatArray, I: IntArray, J: IntArray, logW: FloatArray | None = None
) -> tuple[float, int, int, int]:
    """``ε = max_{ordered pairs, y} log W[x,y]/W[x',y]`` and a witness ``(x, x', y)``.

    ``0/0`` is skipped (both rows give the outcome probability 0) and ``p/0`` with ``p > 0`` is
    ∞. With no pairs the value is 0 and the witness ``(-1, -1, -1)``.
    """
    logW = divergence.log(W) if logW is None else logW
    best, witness = 0.0, (-1, -1, -1)
    for s in chunks(len(I), W.shape[1]):
        with np.errstate(invalid="ignore"):  # -inf - -inf = nan marks 0/0, skipped below
            diff = logW[I[s]] - logW[J[s]]
        size = np.nan_to_num(np.abs(diff), nan=-1.0, posinf=np.inf)
        k = int(np.argmax(size))
        if size.flat[k] > best or witness[0] < 0:
            row, y = divmod(k, W.shape[1])
            x, xp = int(I[s][row]), int(J[s][row])
            if diff.flat[k] < 0:
                x, xp = xp, x
            best, witness = max(float(size.flat[k]), 0.0), (x, xp, y)
    return best, *witness


def max_scaled_log_ratio(
    W: FloatArray, I: IntArray, J: IntArray, scale: FloatArray, logW: FloatArray | None = None
) -> float:
    """``max_{pairs} max_y |log W[i, y] − log W[j, y]| / d_ij``: the d-privacy level.

    ``0/0`` is skipped and ``p/0`` is ∞, as in :func:`max_log_ratio`; a pair at distance
    ``d = 0`` gives ∞ if its rows differ and 0 if they are equal.
    """
    logW = divergence.log(W) if logW is None else logW
    best = 0.0
    for s in chunks(len(I), W.shape[1]):
        with np.errstate(invalid="ignore"):  # -inf - -inf = nan: 0/0, skipped
            diff = np.abs(logW[I[s]] - logW[J[s]])
        ratio = np.max(np.where(np.isnan(diff), 0.0, diff), axis=1, initial=0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            per_unit = np.where(ratio == 0.0, 0.0, ratio / scale[s])
        best = max(best, float(np.max(per_unit, initial=0.0)))
    return best


def max_scaled_hockey(
    W: FloatArray, I: IntArray, J: IntArray, log_gamma: FloatArray, logW: FloatArray | None = None
) -> float:
    """``max_{ordered pairs} E_{γ_ij}(W_i ‖ W_j)`` with a level ``log γ_ij`` per pair.

    Each term is ``W[i,y]·(1 − e^{log γ + log W[j,y] − log W[i,y]})_+`` (``expm1``; no ``γ`` is
    formed, so a large level cannot overflow); an output with ``W[j, y] = 0`` counts whole.
    """
    logW = divergence.log(W) if logW is None else logW
    best = 0.0
    for s in chunks(len(I), W.shape[1]):
        level = log_gamma[s][:, None]
        for a, b in ((I[s], J[s]), (J[s], I[s])):
            log_p, log_q = logW[a], logW[b]
            with np.errstate(invalid="ignore"):
                exponent = level + log_q - log_p  # nan where ∞ meets −∞: handled below
            escaped = np.isneginf(log_q)  # Q_y = 0: the whole P_y counts, whatever γ
            exponent = np.where(
                escaped | np.isnan(exponent), np.where(escaped, -np.inf, np.inf), exponent
            )
            terms = np.where(log_p > -np.inf, W[a] * np.maximum(0.0, -np.expm1(exponent)), 0.0)
            best = max(best, float(np.max(np.sum(terms, axis=1), initial=0.0)))
    return best


def max_divergence(
    W: FloatArray, I: IntArray, J: IntArray, alpha: float, logW: FloatArray | None = None
) -> tuple[float, int, int]:
    """``max_{ordered pairs} D_α(W_x ‖ W_x')`` with its witness pair ``(x, x')``."""
    best, witness = 0.0, (-1, -1)
    for s in chunks(len(I), W.shape[1]):
        a, b = W[I[s]], W[J[s]]
        la, lb = (None, None) if logW is None else (logW[I[s]], logW[J[s]])
        for first, second, logs, rows in (
            (a, b, (la, lb), (I[s], J[s])),
            (b, a, (lb, la), (J[s], I[s])),
        ):
            if logs[0] is None or logs[1] is None:
                values = divergence.renyi(first, second, alpha)
            else:
                values = renyi_logs(first, logs[0], logs[1], alpha)
            values = np.where(np.isnan(values), np.inf, values)  # never under-report
            k = int(np.argmax(values))
            if values[k] > best or witness[0] < 0:
                best, witness = float(values[k]), (int(rows[0][k]), int(rows[1][k]))
    return max(best, 0.0) + 0.0, *witness  # max(−0.0, 0.0) is −0.0


def max_divergences(
    W: FloatArray, I: IntArray, J: IntArray, alphas: FloatArray, logW: FloatArray | None = None
) -> FloatArray:
    """``max_{ordered pairs} D_α(W_x ‖ W_x')`` at every order of ``alphas``, in one pass.

    The values of :func:`max_divergence` at each order (witnesses aside), with the logarithms of
    each chunk of pairs taken once for all the orders instead of once per order: a Rényi
    profile's diameters cost one ``exp`` per entry and order, not a ``log`` and an ``exp``. On a
    channel without zeros most orders are first screened by one matrix product over all pairs
    (:func:`_gram_screen`) and only the pairs that may attain the maximum are evaluated
    (a 64 × 64 channel at 50 orders: 0.11 s → 0.015 s).
    """
    orders = np.asarray(alphas, dtype=np.float64).ravel()
    best = np.zeros(orders.shape)
    logs = divergence.log(W) if logW is None else logW
    special = ~np.isfinite(orders) | (orders == 0.0) | (orders == 1.0)
    plain = ~special
    screened = _gram_screen(W, logs, I, J, orders, plain)
    for k, (first, second) in screened.items():  # at most max(SCREEN_PAIRS, n) pairs
        values = renyi_logs(W[first], logs[first], logs[second], float(orders[k]))
        best[k] = _top(values)
    plain &= ~np.isin(np.arange(orders.size), list(screened))
    if plain.any() or special.any():
        _pair_pass(W, logs, I, J, orders, plain, special, best)
    out: FloatArray = np.maximum(best, 0.0) + 0.0
    return out


def _pair_pass(
    W: FloatArray,
    logs: FloatArray,
    I: IntArray,
    J: IntArray,
    orders: FloatArray,
    plain: NDArray[np.bool_],
    special: NDArray[np.bool_],
    best: FloatArray,
) -> None:
    """:func:`max_divergences` over chunks of pairs: ``best`` raised in place at the orders
    ``plain`` (by :class:`_RenyiTerms`) and ``special``, α ∈ {0, 1, ∞} (by
    :func:`renyi_logs`)."""
    for s in chunks(len(I), W.shape[1]):
        a, b, la, lb = W[I[s]], W[J[s]], logs[I[s]], logs[J[s]]
        for first, log_first, log_second in ((a, la, lb), (b, lb, la)):
            for k in np.flatnonzero(special):
                values = renyi_logs(first, log_first, log_second, float(orders[k]))
                best[k] = max(best[k], _top(values))
            if plain.any():
                terms = _RenyiTerms(first, log_first, log_second)
                for k in np.flatnonzero(plain):
                    best[k] = max(best[k], _top(terms.divergence(float(orders[k]))))


#: Largest number of rows whose Gram matrices :func:`_gram_screen` forms (n² entries per order).
GRAM_ROWS = 2048

#: Largest exponent (in absolute value) of a factor of the screen's products: no factor
#: overflows, and none underflows beyond the scale ``e^m`` of its column.
GRAM_EXPONENT = 600.0

#: Most candidate pairs (or the number of rows, if larger) the screen hands on for an order;
#: with more (channels whose pairs tie, as randomized response's all do) the order goes
#: through the pair pass, in chunks, instead.
SCREEN_PAIRS = 256


def _gram_screen(
    W: FloatArray,
    logs: FloatArray,
    I: IntArray,
    J: IntArray,
    orders: FloatArray,
    plain: NDArray[np.bool_],
) -> dict[int, tuple[IntArray, IntArray]]:
    """For each order it can take, the few ordered pairs that may attain the largest ``D_α``.

    ``Σ_y W_xy^α W_x'y^{1−α}`` for every pair of rows is one matrix product,
    ``(e^{α(L − m)}) (e^{(1−α)(L − m)} e^m)ᵀ`` with ``L = log W`` and ``m`` its column maxima,
    whose factors neither overflow nor underflow when ``max(α, |1 − α|) · max(m − L)`` is at most
    :data:`GRAM_EXPONENT`. A sum of positive terms in floating point is within ``γ_{k+4}`` of
    its value, and each factor within a few ulps times its exponent, so the estimate
    ``log Σ/(α − 1)`` is within a bound computed here (``margin``) of ``D_α``: every pair
    within twice that margin, plus 1e-9 relative, of the largest estimate is returned, and the
    caller evaluates just those exactly with :func:`renyi_logs` (the pair pass's formulas; its
    choice between the expm1 and log-sum-exp forms is made over the rows it is given, so a
    value may differ from the pair pass's in the last bit). Only channels without zeros, pair
    sets covering an eighth of all pairs of at most :data:`GRAM_ROWS` rows, orders at least
    0.05 away from 1, and at most :data:`SCREEN_PAIRS` candidates (or ``n``) per order.
    """
    n, k = W.shape
    if n > GRAM_ROWS or n * n > 8 * len(I) or not len(I) or not np.all(W > 0):
        return {}
    m = np.max(logs, axis=0)
    spread = float(np.max(m - logs))
    first = np.concatenate([I, J])
    second = np.concatenate([J, I])
    out: dict[int, tuple[IntArray, IntArray]] = {}
    for index in np.flatnonzero(plain):
        alpha = float(orders[index])
        c = alpha - 1.0
        if abs(c) < 0.05 or max(alpha, abs(c)) * spread > GRAM_EXPONENT:
            continue
        A = np.exp(alpha * (logs - m))
        B = np.exp(-c * (logs - m) + m)
        with np.errstate(divide="ignore"):
            estimate = np.log((A @ B.T)[first, second]) / c
        top = float(np.max(estimate))
        if not math.isfinite(top):
            continue
        # each factor is exp of an argument of at most |α|·spread + |c|·spread + |m| computed
        # with a relative error of a few u: the product of two within 2·factor of its value
        factor = 8.0 * rounding.U * (2.0 + (abs(alpha) + abs(c)) * spread + float(np.max(abs(m))))
        margin = 1e-9 * max(1.0, abs(top)) + 2.0 * (rounding.gamma(k + 4) + 2.0 * factor) / abs(c)
        near = np.flatnonzero(estimate >= top - margin)
        if near.size > max(SCREEN_PAIRS, n):  # many pairs tie (k-RR: all of them): pair pass
            continue
        out[int(index)] = (first[near], second[near])
    return out


def _top(values: FloatArray) -> float:
    """The largest value, NaN read as ∞ (a divergence is never under-reported)."""
    return float(np.max(np.where(np.isnan(values), np.inf, values), initial=0.0))


class _RenyiTerms:
    """The order-free parts of :func:`renyi_logs` for rows ``p`` against rows ``q``, so that
    each order α ∉ {0, 1, ∞} costs one ``exp`` per entry; the same branches and values."""

    def __init__(self, p: FloatArray, log_p: FloatArray, log_q: FloatArray) -> None:
        support = log_p > -np.inf
        meet = support & (log_q > -np.inf)
        self.meet, self.p = meet, p
        self.escapes = np.any(support & ~meet, axis=-1)
        self.any_meet = np.any(meet, axis=-1)
        with np.errstate(invalid="ignore"):
            self.ratio = np.where(meet, log_p - log_q, 0.0)
        self.widest = float(np.max(np.abs(self.ratio), initial=0.0))
        self.off_terms = np.where(support & ~meet, -p, 0.0)
        self.near = float(np.max(-np.sum(self.off_terms, axis=-1), initial=0.0)) <= 0.5
        self.log_p = np.where(meet, log_p, -np.inf)

    def divergence(self, alpha: float) -> FloatArray:
        z = (alpha - 1.0) * self.ratio
        with np.errstate(divide="ignore", invalid="ignore"):
            if abs(alpha - 1.0) * self.widest <= 1.0 and self.near:
                terms = np.where(self.meet, self.p * np.expm1(z), self.off_terms)
                value = np.log1p(np.sum(terms, axis=-1)) / (alpha - 1.0)
            else:
                value = divergence.logsumexp(self.log_p + z) / (alpha - 1.0)
        if alpha < 1.0:
            result: FloatArray = np.where(self.any_meet, value, np.inf)
        else:
            result = np.where(self.escapes, np.inf, value)
        return result + 0.0


def renyi_logs(p: FloatArray, log_p: FloatArray, log_q: FloatArray, alpha: float) -> FloatArray:
    """``D_α(p‖q)`` (nats) with the likelihood ratios taken from ``log p − log q``.

    The formulas and branches of ``divergence.renyi`` (α = 0, 1, ∞ exact; ``expm1``/``log1p``
    near α = 1; ``logsumexp`` elsewhere), with ``p`` the masses (an underflowed one weighs
    nothing) and the logs ``−∞`` exactly at zeros: a ratio never comes from an underflowed 0.
    """
    support = log_p > -np.inf
    meet = support & (log_q > -np.inf)
    escapes = np.any(support & ~meet, axis=-1)  # p_y > 0 = q_y somewhere
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0 = -inf is meant below
        ratio = np.where(meet, log_p - log_q, 0.0)
        if alpha == 0.0:
            return np.asarray(-divergence.logsumexp(np.where(support, log_q, -np.inf)))
        if alpha == 1.0:
            value = np.sum(np.where(meet, p * ratio, 0.0), axis=-1)
        elif math.isinf(alpha):
            value = np.max(np.where(meet, ratio, -np.inf), axis=-1, initial=-np.inf)
        else:
            z = (alpha - 1.0) * ratio
            off = np.sum(np.where(support & ~meet, p, 0.0), axis=-1)
            if np.max(np.abs(z), initial=0.0) <= 1.0 and np.max(off, initial=0.0) <= 0.5:
                terms = np.where(meet, p * np.expm1(z), np.where(support, -p, 0.0))
                value = np.log1p(np.sum(terms, axis=-1)) / (alpha - 1.0)
            else:
                value = divergence.logsumexp(np.where(meet, log_p + z, -np.inf)) / (alpha - 1.0)
    if alpha < 1.0:  # D_α = ∞ exactly when the supports do not meet
        result: FloatArray = np.where(np.any(meet, axis=-1), value, np.inf)
    else:
        result = np.where(escapes, np.inf, value)
    return result + 0.0  # 0/(α − 1) < 0 is −0.0


def max_tv(W: FloatArray, I: IntArray, J: IntArray) -> tuple[float, int, int]:
    """``max_{pairs} TV(W_x, W_x')`` with its witness pair."""
    best, witness = 0.0, (-1, -1)
    for s in chunks(len(I), W.shape[1]):
        values = divergence.tv(W[I[s]], W[J[s]])
        k = int(np.argmax(values))
        if values[k] > best or witness[0] < 0:
            best, witness = float(values[k]), (int(I[s][k]), int(J[s][k]))
    return best, *witness


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
    eps = np.asarray(eps, dtype=np.float64)
    out = np.zeros(eps.shape, dtype=np.float64)
    if len(I) == 0 or eps.size == 0:
        return out
    n = W.shape[0]
    if min(int(I.min()), int(J.min())) < 0 or max(int(I.max()), int(J.max())) >= n:
        raise IndexError(f"pair indices must lie in [0, {n}) for a channel of {n} rows")
    # e^ε overflows past ε ≈ 709.78: such orders (and ∞) are evaluated directly in log form.
    limit = HUGE_EPS if logW is None else min(HUGE_EPS, math.log(2.0**-60 / (TINY * W.shape[1])))
    binned = np.isfinite(eps) & (eps <= limit)
    levels = np.unique(eps[binned])
    pure: float | None = None
    if levels.size:
        curve, pure = _binned_curve(W, I, J, levels, logW)
        out[binned] = curve[np.searchsorted(levels, eps[binned])]
    for k in np.flatnonzero(~binned):
        out.flat[k] = _escaped_mass(W, I, J, float(eps.flat[k]), logW)
    np.clip(out, 0.0, 1.0, out=out)
    if np.any(out > 0.0):
        if pure is None:
            pure = max_log_ratio(W, I, J, logW)[0]
        if math.isfinite(pure):  # ε*-DP: δ = 0 from ε* on (docstring); ε* = ∞: none
            out[eps >= pure - level_rounding(W, logW)] = 0.0
    return out


def level_rounding(W: FloatArray, logW: FloatArray | None = None) -> float:
    """``ρ = 32u(1 + M)``: a bound on the rounding of a log-likelihood ratio of ``W``'s rows.

    ``M`` is the largest ``|log W[x, y]|`` over the positive entries (over the finite entries
    of ``logW`` where given). ``fl(log a) − fl(log b)`` is within ``u(|log a| + |log b|)`` of
    each logarithm's own error (1 ulp from ``log``, a few from a constructor's closed form) and
    ``u`` of the difference: at most ``6uM`` with faithful logarithms, and ``32u(1 + M)`` leaves
    room for closed forms of a few operations. A ratio ``a/b`` rounded once (the bins) is within
    ``u`` of its value, far inside ``ρ``.
    """
    if logW is None:
        positive = W[W > 0]
        M = -math.log(float(positive.min())) if positive.size else 0.0
    else:
        finite = logW[np.isfinite(logW)]
        M = float(np.max(np.abs(finite))) if finite.size else 0.0
    return 32.0 * rounding.U * (1.0 + max(M, 0.0))


def _binned_curve(
    W: FloatArray, I: IntArray, J: IntArray, levels: FloatArray, logW: FloatArray | None = None
) -> tuple[FloatArray, float]:
    """The curve at ``levels`` and the pure-DP level ``max |log r|`` of the ratios binned
    (∞ where some ratio is 0 or ∞; 0/0 is skipped)."""
    gamma = np.exp(levels)
    edges = np.unique(np.concatenate([np.exp(-levels), gamma]))
    n_bins = len(edges) + 1
    table = _BinTable(edges)
    sums = _BinSums(edges, gamma, np.exp(-levels))
    width = W.shape[1]
    step = min(len(I), chunk_rows(max(width, n_bins)))  # the longest chunk of the loop below
    # One set of buffers for every chunk: fresh temporaries cost more than the arithmetic.
    a, b, ratio, spare = (np.empty((step, width)) for _ in range(4))
    cell, index = (np.empty((step, width), dtype=np.int64) for _ in range(2))
    flag = np.empty((step, width), dtype=bool)
    offsets = np.repeat(np.arange(step, dtype=np.int64) * n_bins, width).reshape(step, width)
    top, bottom = 1.0, 1.0  # the largest and smallest ratio a/b (0/0 skipped)
    with _one_blas_thread(step * n_bins * 2 * len(levels)):
        for s in chunks(len(I), max(width, n_bins)):
            rows = s.stop - s.start
            a_s, b_s, ratio_s, spare_s = a[:rows], b[:rows], ratio[:rows], spare[:rows]
            cell_s, index_s, flag_s = cell[:rows], index[:rows], flag[:rows]
            # mode="wrap" (I, J are row indices): "raise" would copy through a temporary
            np.take(W, I[s], axis=0, out=a_s, mode="wrap")
            np.take(W, J[s], axis=0, out=b_s, mode="wrap")
            # a/0 = inf, 0/0 = nan, a/subnormal may overflow to inf: all land in the right bin
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                if logW is None:
                    np.divide(a_s, b_s, out=ratio_s)
                else:
                    np.take(logW, I[s], axis=0, out=ratio_s, mode="wrap")
                    np.take(logW, J[s], axis=0, out=spare_s, mode="wrap")
                    np.exp(np.subtract(ratio_s, spare_s, out=ratio_s), out=ratio_s)
            table.bins(ratio_s, out=index_s, cell=cell_s, spare=spare_s, flag=flag_s)
            high, low = float(np.fmax.reduce(ratio_s, None)), float(np.fmin.reduce(ratio_s, None))
            if not math.isnan(high):  # NaN only if every ratio is 0/0
                top, bottom = max(top, high), min(bottom, low)
            np.add(index_s, offsets[:rows], out=index_s)  # bin j of row p: p * n_bins + j
            flat = index_s.ravel()
            mass_a = np.bincount(flat, a_s.ravel(), rows * n_bins).reshape(rows, n_bins)
            mass_b = np.bincount(flat, b_s.ravel(), rows * n_bins).reshape(rows, n_bins)
            sums.add(cast(FloatArray, mass_a), cast(FloatArray, mass_b))  # weighted: float64
    with np.errstate(divide="ignore"):
        pure = max(float(np.log(top)), -float(np.log(bottom)))  # log 0 = −∞: ε* = ∞
    return sums.best(), pure


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
    result equals ``searchsorted`` exactly; a test checks it on ties, 0, ∞ and NaN.
    """

    MANTISSA_BITS = 4

    def __init__(self, edges: FloatArray) -> None:
        self.shift = 52 - self.MANTISSA_BITS
        cells_of_edges = edges.view(np.int64) >> self.shift
        self.first = int(cells_of_edges[0])
        cells = cells_of_edges - self.first
        self.n_cells = int(cells[-1]) + 1
        occupancy = np.bincount(cells, minlength=self.n_cells)
        below = np.concatenate([[0], np.cumsum(occupancy)])
        # Row c + 1 describes cell c; row 0 is "below every edge", the last row "above": a
        # look-up with mode="clip" sends every cell outside the edges' range to one of those two.
        self.base = np.concatenate([[0], below[: self.n_cells], [len(edges)]]).astype(np.int64)
        inside = np.full((int(occupancy.max()), self.n_cells + 2), np.nan)
        inside[np.arange(len(edges)) - below[cells], cells + 1] = edges
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
        np.subtract(cell, self.first - 1, out=cell)  # negative bits (-0.0, -nan) clip to row 0
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
