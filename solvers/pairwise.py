"""Worst cases over pairs of rows: the kernels behind every DP metric.

A DP metric of a mechanism is a maximum, over ordered neighbour pairs ``(x, x')``, of a
divergence between rows ``W_x`` and ``W_x'``. The pairs come as two index arrays ``I < J``
(unordered); every kernel here evaluates both orders (the δ(ε) curve is :mod:`.hockey`'s; the
screen of all pairs by matrix products, :mod:`.gram`'s). Work is done in chunks of pairs whose
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

import numpy as np
from numpy.typing import NDArray

from . import divergence, rounding

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "CHUNK_ELEMENTS",
    "level_rounding",
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
