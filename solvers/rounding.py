"""Certificates that hold in floating point: divergences and brackets with a rounding allowance.

The brackets of the capacity engines (``docs/mathematics.rst`` §1, §2, §4) are re-evaluated here,
at the priors an engine returned, with every end moved outward by a rigorous bound on the
rounding error of the computation that produced it (``docs/mathematics.rst`` §8). The channel
is the one stored in float64, with each row divided by its exact sum; the priors and output laws
are float vectors divided by their exact sums. Nothing is taken on the engine's word.

The divergence of a row ``W_x`` (sum ``s_x``) from an output law ``Q`` (sum ``S``) is written with
the generator ``h_α(r) = (r^α − 1 − α(r − 1)) / (α(α − 1))`` (``h_1(r) = r log r − r + 1``),
which is non-negative and ``≈ (r − 1)²/2`` near ``r = 1``::

    H_x = Σ_y Q_y h_α(W_xy / Q_y) ≥ 0,      d_x = Σ_y (W_xy − Q_y) = s_x − S,
    D_α(W_x/s_x ‖ Q/S) = log1p((α − 1)(αH_x + d_x)/s_x)/(α − 1) + log1p(−d_x/s_x),
    D_1(W_x/s_x ‖ Q/S) = H_x/s_x + d_x/s_x + log1p(−d_x/s_x).

``H_x`` is a sum of non-negative terms, each computed to a few ulps (a Taylor series near
``r = 1``, ``log1p``/``expm1`` elsewhere), so nearly uniform rows keep full relative accuracy:
the cancellation of ``Σ W log W − Σ W log q`` is gone. Every step carries an absolute error
bound built from the unit roundoff ``u = 2⁻⁵³`` and the summation bound ``γ_n = nu/(1 − nu)``
(valid for any order of summation); rows whose ratios leave the safe range (subnormal ``Q_y``,
``r^α`` near overflow) are evaluated in the log domain with a coarser, still rigorous, bound.

Lower ends use exact identities that hold for *any* centre ``Q``, so the centre's own rounding
only costs a second-order term: ``I(p, W) = Σ_x p_x D(W_x ‖ Q) − D(pW ‖ Q)`` (Shannon) and
Sibson's identity ``I_α^S(p, W) = (1/(α−1)) log Σ_x p_x e^{(α−1) D_α(W_x ‖ Q)} − D_α(Q_p ‖ Q)``
with ``Q_p`` the α-response; ``D(· ‖ Q) ≤ χ² ≤ κ²`` (α ≤ 2) or ``≤ (1/(α−1)) log Σ_y Q_y
(1 + κ_y)^α`` (α > 2) when ``|Q_p,y / Q_y − 1| ≤ κ_y``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from . import backend

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

__all__ = [
    "SMALLEST",
    "SMALLEST_NORMAL",
    "U",
    "bracket",
    "divergence_bounds",
    "floor",
    "gamma",
]

#: Unit roundoff of float64 (round to nearest).
U = 2.0**-53
#: The smallest positive normal double (about 2.2e-308): below it a float has lost digits.
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
#: The smallest positive double (a subnormal, about 4.9e-324).
SMALLEST = float(np.nextafter(0.0, 1.0))
#: Absolute slack for subnormal products and sums (far below any tolerance a user can ask for).
_TINY_SLACK = 1e-300
#: Number of Taylor terms of ``h_α`` after ``t²/2`` (|t|·max(1, α) ≤ 1/16: 16⁻¹⁵ < 2⁻⁶⁰).
_TERMS = 15
#: Elements per working block: rows are processed in blocks of about this many entries, so the
#: temporaries (a dozen block-sized arrays) stay small beside the channel itself.
_BLOCK = 1 << 16


#: Reductions over the last axis, column by column where it is short (``backend.Space``): the
#: bounds ``γ_n`` below hold for any order of summation.
_ROWS = backend.NUMPY


def gamma(n: float) -> float:
    """``γ_n = nu / (1 − nu)``: the relative error bound of a sum or dot product of n terms."""
    return n * U / (1.0 - n * U)


def _series(t: FloatArray, alpha: float, m: float) -> tuple[FloatArray, FloatArray]:
    """``h_α(1 + t)`` and its error bound for ``|t| max(1, α) ≤ 1/16``, by its Taylor series.

    ``h = t² Σ_k c_k t^k``, ``c_0 = 1/2``, ``c_k = c_{k−1}(α − k − 1)/(k + 2)``: each term is at
    most ``m = max|t| max(1, α) ≤ 1/16`` times the one before, so ``K`` terms with ``m^K ≤ 2⁻⁶⁰``
    leave a truncation below ``2⁻⁶⁰`` relative, and Horner's rounding stays below ``64u``.
    Elements beyond ``m`` get meaningless values, for the caller to overwrite.
    """
    # Always the full count: a row's value and bound must not depend on the rows it is
    # evaluated with (a batch certifies each channel bit for bit as it would alone), and m
    # is the maximum over a whole block.
    terms = 0 if m == 0.0 else _TERMS
    coefficients = [0.5]
    for k in range(1, terms + 1):
        coefficients.append(coefficients[-1] * (alpha - k - 1.0) / (k + 2.0))
    poly = np.full(t.shape, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        poly *= t
        poly += c
    poly *= t
    poly *= t
    err = np.abs(poly)
    err *= 64.0 * U
    return poly, err


def _closed(t: FloatArray, r: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """``h_α(r)`` and its error bound by the closed form (``r = 1 + t``, both given)."""
    live = r > 0  # r = 0 (W_xy = 0): log r = −∞ and r log r = 0
    # log1p(t) where t is exact (r ∈ [1/2, 2], Sterbenz), log r elsewhere: far below 1, t has
    # lost r's digits to the subtraction, and log1p(t) would carry an error of u/r
    inside = (r >= 0.5) & (r <= 2.0)
    with np.errstate(divide="ignore"):
        L = np.where(inside, np.log1p(t), np.log(np.where(live, r, 1.0)))
    a = alpha
    if a == 1.0:
        rL = r * L
        h = rL - t
        err = 8.0 * U * (np.abs(rL) + np.abs(t) + np.abs(h))
    elif abs(a - 1.0) < 0.5:
        # h = (r·expm1((α−1) log r)/(α−1) − t)/α: no division by a small α − 1 afterwards
        c = a - 1.0
        rE = np.where(live, r * (np.expm1(c * L) / c), 0.0)
        core = rE - t
        h = core / a
        err = 8.0 * U * (np.abs(rE) * (4.0 + np.abs(c * L)) + np.abs(t) + np.abs(core)) / a
    else:
        # h = (expm1(α log r) − αt)/(α(α−1)): every piece is O(α) as α → 0
        e = np.where(live, np.expm1(a * L), -1.0)  # r^α − 1
        numer = e - a * t
        denom = a * (a - 1.0)
        h = numer / denom
        rate = (e + 1.0) * a * np.abs(L)
        err = 8.0 * U * (rate + np.abs(e) + a * np.abs(t) + np.abs(numer)) / abs(denom)
    err += 4.0 * U * np.abs(h)
    # r^α near overflow, or a non-finite piece: the caller redoes the row in the log domain
    err[~np.isfinite(h) | (max(a, 1.0) * L > 600.0)] = np.inf
    return h, err


def _generator(
    W: FloatArray, Q: FloatArray, keep: BoolArray | None, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """``(Σ_y Q_y h_α(W_xy/Q_y), its error bound)`` per row (``W``, ``Q``: (m, ny)).

    Entries outside ``keep`` (a boolean mask; None keeps all) contribute nothing: their ``Q_y``
    must be replaced by a positive placeholder by the caller. ``t = (W − Q)/Q``; the subtraction
    is exact when ``W/Q ∈ [1/2, 2]`` (Sterbenz's lemma). Near ``r = 1`` (``|t| max(1, α) ≤
    1/16``) :func:`_series`, elsewhere :func:`_closed`, whose cancellation is then at most a
    factor 64. An infinite bound marks a row the caller must redo.
    """
    t = W - Q
    t /= Q
    size = np.abs(t)
    size *= max(1.0, alpha)
    near = size <= 1.0 / 16.0
    if keep is not None:
        near |= ~keep  # placeholders: never sent to the closed form
    m = float(np.max(size, initial=0.0, where=near if keep is None else near & keep))
    far = ~near
    count = int(np.count_nonzero(far))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if 2 * count > t.size:  # mostly far from r = 1: the closed form everywhere, no gathers
            h, err = _closed(t, W / Q, alpha)
            if count < t.size:
                h[near], err[near] = _series(t[near], alpha, m)
        else:  # mostly near (nearly uniform rows): the series everywhere, then the few far
            h, err = _series(t, alpha, m)
            if count:
                rows, cols = np.nonzero(far)
                r = W[rows, cols] / Q[rows, cols]
                h[rows, cols], err[rows, cols] = _closed(t[rows, cols], r, alpha)
    np.maximum(h, 0.0, out=h)  # h_α ≥ 0; a negative computed value is within its bound
    h *= Q
    err *= Q
    err += 2.0 * U * h
    if keep is not None:
        h[~keep] = 0.0
        err[~keep] = 0.0
    with np.errstate(invalid="ignore"):
        total = _ROWS.sum(np.where(np.isfinite(h), h, 0.0))
        bound = _ROWS.sum(err)
    return total, np.where(np.isnan(bound), np.inf, bound)


def divergence_bounds(
    W: FloatArray, Q: FloatArray, alpha: float = 1.0
) -> tuple[FloatArray, FloatArray]:
    """Rigorous ``(lo, hi)`` of ``D_α(W_x/s_x ‖ Q/S)`` for every row of a stack.

    ``W`` is ``(B, nx, ny)`` with non-negative rows summing to about 1, ``Q`` is ``(B, ny)``
    non-negative (the law used is ``Q/S``, ``S = Σ_y Q_y``), ``α ∈ (0, ∞)`` (1 is Shannon's
    KL). ``Q`` is first divided by its sum in floating point, and the bounds are for that float
    law (any law is a valid centre of the radius bound; the lower ends of :func:`bracket` account
    for this rounding). ``hi`` is ∞ where the row puts mass on an output with ``Q_y = 0`` and
    α ≥ 1. The rows of all elements are processed together, in blocks of about 2¹⁶ entries.
    """
    B, nx, ny = W.shape
    Q = Q / _ROWS.sum(Q, keepdims=True)  # keeps S = Σ Q near 1
    flat = W.reshape(B * nx, ny)
    owner = np.repeat(np.arange(B), nx)
    lo = np.empty(B * nx)
    hi = np.empty(B * nx)
    rows = max(1, _BLOCK // max(ny, 1))
    for start in range(0, B * nx, rows):
        block = slice(start, min(B * nx, start + rows))
        lo[block], hi[block] = _rows(flat[block], Q[owner[block]], alpha)
    return lo.reshape(B, nx), hi.reshape(B, nx)


def _rows(W: FloatArray, Q: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """:func:`divergence_bounds` for one block of rows ``W (m, ny)`` and their centres ``Q``."""
    ny = W.shape[1]
    g = gamma(ny + 4)
    s = _ROWS.sum(W)
    s_lo, s_hi = s * (1.0 - g), s * (1.0 + g)
    S = _ROWS.sum(Q)
    positive = Q > 0
    normal = SMALLEST_NORMAL <= Q
    support = W > 0
    escapes = _ROWS.any(support & ~positive)
    awkward = _ROWS.any(support & positive & ~normal)  # a subnormal centre: log domain
    # a subnormal ratio r = W/Q (W below TINY·Q) has lost up to half its digits, and at small
    # orders h_α(r) depends on log r: those rows are evaluated from log W − log Q instead
    awkward |= _ROWS.any(support & (W < SMALLEST_NORMAL * Q))
    every = bool(normal.all())
    keep = None if every else normal
    Qs = Q if every else np.where(normal, Q, 1.0)
    H, H_err = _generator(W, Qs, keep, alpha)
    diff = W - Q
    d = _ROWS.sum(diff)
    d_abs = _ROWS.sum(np.abs(diff))
    if not every:
        # Q_y = 0: Q h_α(W/Q) → W/(1 − α) as Q → 0 for α < 1 (for α ≥ 1 the row escapes);
        # subnormal Q_y with W_xy = 0 add Q_y h_α(0) = Q_y/α, left out and bounded here
        zero = ~positive
        if alpha < 1.0:
            extra = _ROWS.sum(np.where(zero, W, 0.0)) / (1.0 - alpha)
            H = H + extra
            H_err = H_err + 2.0 * U * extra
        H_err = H_err + _ROWS.sum(np.where(positive & ~normal, Q, 0.0)) / min(alpha, 1.0)
    awkward |= ~np.isfinite(H_err)
    H_err = np.where(np.isfinite(H_err), H_err + g * H + _TINY_SLACK, 0.0)
    d_abs = np.abs(d) + (g + U) * d_abs + _TINY_SLACK
    v_max = d_abs / s_lo * (1.0 + 2.0 * U)
    lo, hi = _combine(H - H_err, H + H_err, v_max, s_lo, s_hi, alpha)
    awkward |= ~np.isfinite(hi)  # near-disjoint supports at α < 1: the log domain is exact
    awkward |= v_max >= 0.5  # a row far from summing to S: the mean-value bound needs |v| ≪ 1
    if alpha >= 1.0:
        hi = np.where(escapes, np.inf, hi)
        awkward &= ~escapes
    for i in np.flatnonzero(awkward):
        lo[i], hi[i] = _log_domain(W[i], Q[i], float(S[i]), float(s[i]), alpha)
    return np.maximum(lo, 0.0), np.maximum(hi, 0.0)


def _interval_ratio(
    n_lo: FloatArray, n_hi: FloatArray, s_lo: FloatArray, s_hi: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Bounds of ``n/s`` for ``n ∈ [n_lo, n_hi]``, ``s ∈ [s_lo, s_hi] ⊂ (0, ∞)``, rounded out."""
    lo = np.where(n_lo >= 0, n_lo / s_hi, n_lo / s_lo)
    hi = np.where(n_hi >= 0, n_hi / s_lo, n_hi / s_hi)
    return lo - 2.0 * U * np.abs(lo), hi + 2.0 * U * np.abs(hi)


def _log1p_over(y: FloatArray, c: float) -> FloatArray:
    """``log1p(y)/c`` with ``log1p(−1 or less) = −∞``, no warning."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(y > -1.0, np.log1p(np.maximum(y, -1.0)) / c, -np.inf)
    return out


def _combine(
    H_lo: FloatArray,
    H_hi: FloatArray,
    v_max: FloatArray,
    s_lo: FloatArray,
    s_hi: FloatArray,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """Bounds of ``D`` from bounds on ``H``, ``s`` and on ``|v| = |d|/s`` (≪ 1).

    With ``X = αH/s`` and ``c = α − 1``, ``D = log1p(c(X + v))/c + log1p(−v)`` (``X + v +
    log1p(−v)`` at α = 1) is increasing in ``X``, and by the mean value theorem moves by at most
    ``|v|·M`` from its value at ``v = 0``, where ``M`` bounds ``|∂D/∂v| = |1/(1 + c(X + ξ)) −
    1/(1 − ξ)|`` over ``|ξ| ≤ |v|``: the row sums enter at second order, not first.
    """
    H_lo = np.maximum(H_lo, 0.0)
    X_lo = alpha * H_lo / s_hi * (1.0 - 3.0 * U)
    X_hi = alpha * H_hi / s_lo * (1.0 + 3.0 * U)
    if alpha == 1.0:
        with np.errstate(divide="ignore"):
            lo = np.where(v_max < 1.0, X_lo - v_max * v_max / (2.0 * (1.0 - v_max)), 0.0)
        hi = X_hi
    else:
        c = alpha - 1.0
        f_lo, f_hi = _log1p_over(c * X_lo, c), _log1p_over(c * X_hi, c)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            den_lo, den_hi = 1.0 + c * X_lo, 1.0 + c * X_hi
            f_lo = f_lo - 4.0 * U * (np.abs(f_lo) + np.abs(c * X_lo) / (den_lo * abs(c)))
            f_hi = f_hi + 4.0 * U * (np.abs(f_hi) + np.abs(c * X_hi) / (den_hi * abs(c)))
            worst = (den_hi if c < 0 else den_lo) - abs(c) * v_max
            M = abs(c) * (X_hi + v_max) / worst + v_max / (1.0 - v_max)
            shift = np.where(worst > 0, v_max * M, np.inf)
        lo = np.where(den_lo > 0, f_lo - shift, 0.0)
        hi = np.where(den_hi > 0, f_hi + shift, np.inf)
    lo = np.where(np.isfinite(lo), lo - 2.0 * U * np.abs(lo), 0.0)
    hi = np.where(np.isnan(hi), np.inf, hi + 2.0 * U * np.abs(hi))
    return lo, hi


def _log_domain(
    row: FloatArray, Q: FloatArray, S: float, s: float, alpha: float
) -> tuple[float, float]:
    """The coarse, rigorous bounds of one row by plain log sums (subnormal or extreme ratios)."""
    ny = row.size
    g = gamma(ny + 8)
    support = row > 0
    meets = support & (Q > 0)
    if alpha >= 1.0 and (support & (Q <= 0)).any():
        return 0.0, math.inf
    logW = np.log(row[meets])
    logQ = np.log(Q[meets])
    s_lo, s_hi = s * (1.0 - g), s * (1.0 + g)
    if alpha != 1.0 and not meets.any():  # α < 1 with disjoint supports: D_α = ∞
        return math.inf, math.inf
    log_ratio_lo = math.log(S / s_hi) - 4.0 * U * (1.0 + abs(math.log(S / s)))
    log_ratio_hi = math.log(S / s_lo) + 4.0 * U * (1.0 + abs(math.log(S / s)))
    if alpha == 1.0:
        terms = row[meets] * (logW - logQ)
        bound = 8.0 * U * float(np.sum(row[meets] * (np.abs(logW) + np.abs(logQ) + 1.0)))
        raw = float(np.sum(terms))
        raw_err = bound + g * float(np.sum(np.abs(terms))) + _TINY_SLACK
        lo = (raw - raw_err) / (s_hi if raw - raw_err >= 0 else s_lo) + log_ratio_lo
        hi = (raw + raw_err) / (s_lo if raw + raw_err >= 0 else s_hi) + log_ratio_hi
        return lo, hi
    z = alpha * logW + (1.0 - alpha) * logQ
    z_err = 8.0 * U * float(np.max(1.0 + alpha * np.abs(logW) + abs(1.0 - alpha) * np.abs(logQ)))
    top = float(np.max(z))
    lse = top + math.log(float(np.sum(np.exp(z - top))))
    lse_err = z_err + 2.0 * g + 4.0 * U * abs(lse)
    # D = lse/(α − 1) − (α/(α − 1)) log s + log S
    c = alpha - 1.0
    scale = alpha / c
    shift = sorted((-scale * math.log(s_lo), -scale * math.log(s_hi)))
    log_S = math.log(S)
    main_lo = (lse - lse_err) / c if c > 0 else (lse + lse_err) / c
    main_hi = (lse + lse_err) / c if c > 0 else (lse - lse_err) / c
    lo = main_lo + shift[0] + log_S - 4.0 * U * abs(log_S) - 8.0 * U * abs(shift[0])
    hi = main_hi + shift[1] + log_S + 4.0 * U * abs(log_S) + 8.0 * U * abs(shift[1])
    return lo - 4.0 * U * abs(lo), hi + 4.0 * U * abs(hi)


def _shannon_centre(W: FloatArray, p: FloatArray) -> FloatArray:
    """``q = pW`` (B, ny), with the smallest double where only underflow made a reached 0."""
    q: FloatArray = _ROWS.vecmat(p, W)
    if (q > 0).all():
        return q
    tiny = SMALLEST
    for b in np.flatnonzero((q <= 0).any(axis=-1)):
        rows = W[b, p[b] > 0]
        reached = (rows > 0).any(axis=0)  # reached, but every product may have underflowed
        q[b] = np.where(reached & (q[b] <= 0), tiny, q[b])
    return q


def _sibson_centre(W: FloatArray, p: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """The α-response ``Q_p ∝ (Σ_x p_x W_xy^α)^{1/α}`` (B, ny) and its relative error bound (B,).

    Evaluated in the log domain; the bound covers the logs, the log-sum-exp over inputs and the
    exponential, for each element (the normalisation is exact by definition: ``Q/S``).
    """
    B, nx, ny = W.shape
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
    rows = max(1, _BLOCK // max(ny, 1))
    blocks = [(b, slice(i, min(nx, i + rows))) for b in range(B) for i in range(0, nx, rows)]

    def exponents(b: int, block: slice) -> FloatArray:
        with np.errstate(divide="ignore"):
            z: FloatArray = log_p[b, block, None] + alpha * np.log(W[b, block])
        return z  # −∞ off the supports

    top = np.full((B, ny), -np.inf)
    big_W = np.zeros(B)
    for b, block in blocks:
        z = exponents(b, block)
        np.maximum(top[b], z.max(axis=0), out=top[b])
        live = W[b, block] > 0
        if live.any():
            big_W[b] = max(big_W[b], float(np.max(np.abs(np.log(W[b, block][live])))))
    finite_top = np.where(np.isfinite(top), top, 0.0)
    total = np.zeros((B, ny))
    with np.errstate(under="ignore"):
        for b, block in blocks:
            total[b] += np.exp(exponents(b, block) - finite_top[b]).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        ell = np.log(total) + finite_top
        scaled = ell / alpha
        peak = np.max(np.where(np.isfinite(scaled), scaled, -np.inf), axis=-1, keepdims=True)
        Q = np.where(np.isfinite(scaled), np.exp(scaled - peak), 0.0)
    tiny = SMALLEST
    Q = np.where(np.isfinite(scaled) & (Q <= 0), tiny, Q)
    Q = Q / np.sum(Q, axis=-1, keepdims=True)  # one more rounding: inside the 8u slack below
    big_p = np.max(np.where(p > 0, np.abs(np.where(p > 0, log_p, 0.0)), 0.0), axis=-1)
    big_ell = np.max(np.where(np.isfinite(ell), np.abs(ell), 0.0), axis=-1)
    err_ell = 8.0 * U * (1.0 + big_p + alpha * big_W + big_ell) + gamma(nx + 2)
    err = err_ell / alpha + 8.0 * U * (1.0 + 2.0 * big_ell / alpha + np.abs(peak[:, 0]))
    return Q, np.expm1(err)


def _mean_lower(p: FloatArray, D: FloatArray) -> FloatArray:
    """A lower bound on ``Σ_x p_x D_x / Σ_x p_x`` for ``D ≥ 0`` (B,), rounding included."""
    nx = p.shape[-1]
    total = _ROWS.sum(np.where(p > 0, p * np.where(p > 0, D, 0.0), 0.0))
    mass = _ROWS.sum(p)
    out: FloatArray = total * (1.0 - gamma(nx + 2)) / (mass * (1.0 + gamma(nx + 2)))
    return out


def _power_mean_lower(p: FloatArray, D: FloatArray, alpha: float) -> FloatArray:
    """Lower bound on ``F = (1/(α−1)) log Σ_x p̃_x e^{(α−1) D_x}`` (``p̃ = p/Σp``), increasing in D.

    ``F = D̄ + log1p(Σ_x p̃_x expm1((α−1)(D_x − D̄)))/(α−1)`` around a reference ``D̄``: the
    terms are small when the ``D_x`` are close (as at an optimum), so no error is divided by a
    small ``α − 1``. Falls back on ``F ≥ Σ p̃ D`` (α > 1, Jensen) or ``F ≥ min D`` (α < 1).
    """
    nx = p.shape[-1]
    c = alpha - 1.0
    on = p > 0
    Dm = np.where(on, D, 0.0)
    ref = _mean_lower(p, Dm)
    mass = np.sum(p, axis=-1)
    g = gamma(nx + 4)
    with np.errstate(over="ignore", invalid="ignore"):
        gap = np.where(on, Dm - ref[:, None], 0.0)
        e = np.expm1(c * gap)
        a = np.where(on, p * e, 0.0)
        a_err = (
            4.0
            * U
            * np.where(
                on, p * (np.abs(e) + (e + 1.0) * abs(c) * (np.abs(Dm) + np.abs(ref)[:, None])), 0.0
            )
        )
        A = np.sum(a, axis=-1)
        A_err = np.sum(a_err, axis=-1) + g * np.sum(np.abs(a), axis=-1) + _TINY_SLACK
        y_lo, y_hi = _interval_ratio(A - A_err, A + A_err, mass * (1.0 - g), mass * (1.0 + g))
        y = y_lo if c > 0 else y_hi
        f = _log1p_over(y, c)
        slack = 4.0 * U * (np.abs(f) + np.abs(y) / (np.maximum(1.0 + y, 0.0) * abs(c)))
        F = ref + f - slack - 4.0 * U * np.abs(ref + f)
    fallback = ref if c > 0 else np.min(np.where(on, Dm, np.inf), axis=-1)
    out: FloatArray = np.where(np.isfinite(F), np.maximum(F, fallback), fallback)
    return out


def _centre_cost(Q: FloatArray, kappa: FloatArray, nx: int, alpha: float) -> FloatArray:
    """Upper bound on ``D_α(Q_p ‖ Q/S)`` when ``|Q_p,y/Q̃_y − 1| ≤ κ`` (plus subnormal slack).

    ``D_α ≤ D_2 = log(1 + χ²) ≤ χ²`` for α ≤ 2 and ``D_α = (1/(α−1)) log Σ_y Q̃_y (Q_p,y /
    Q̃_y)^α ≤ (1/(α−1)) log Σ_y Q̃_y (1 + κ_y)^α`` for α > 2 (each ``κ_y`` weighted by its own
    mass), with ``κ_y = κ + η/Q_y`` where η bounds the absolute error of a subnormal mass.
    """
    eta = 4.0 * nx * SMALLEST
    S = _ROWS.sum(Q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ky = np.where(Q > 0, kappa[:, None] + eta / np.where(Q > 0, Q, 1.0), 0.0)
        if alpha <= 2.0:
            cost = _ROWS.sum(np.where(Q > 0, ky * ky * Q, 0.0)) / S
        else:
            logs = np.where(Q > 0, np.log(np.where(Q > 0, Q, 1.0)) + alpha * np.log1p(ky), -np.inf)
            top = _ROWS.max(logs)
            total = top + np.log(_ROWS.sum(np.exp(logs - top[:, None]))) - np.log(S)
            cost = np.maximum(total, 0.0) / (alpha - 1.0)
    out: FloatArray = np.where(np.isfinite(cost), cost * 1.01 + _TINY_SLACK, np.inf)
    return out


def bracket(
    W: FloatArray, p: FloatArray, upper_p: FloatArray | None = None, alpha: float = 1.0
) -> tuple[FloatArray, FloatArray]:
    """Rigorous ``(lower, upper)`` of the α-capacity (α = 1: Shannon) of a stack, from priors.

    ``W (B, nx, ny)`` row-stochastic to rounding, ``p (B, nx)`` the prior whose information is
    the lower end (``I(p, W)``, or Sibson's ``I_α^S(p, W)``), ``upper_p`` the prior whose output
    law (``pW``, or the α-response) centres the radius bound ``max_x D_α(W_x ‖ Q)`` (``p`` when
    None). Both ends include the rounding allowance of the module docstring and the trivial
    bound ``C_α ≤ log min(nx, ny)``; ``lower ≤ C_α ≤ upper`` holds for the channel whose rows are
    ``W_x / Σ_y W_xy`` exactly.
    """
    lower, upper, _ = _ends(W, p, upper_p, alpha)
    return lower, upper


def floor(
    W: FloatArray, p: FloatArray, upper_p: FloatArray | None = None, alpha: float = 1.0
) -> FloatArray:
    """The rounding allowance of :func:`bracket` at these priors, per element (B,).

    The part of the gap that is rounding, not optimisation: the upper end's distance above
    ``max_x D̂_x`` plus the lower end's distance below the information ``F(p, D̂)`` (``Σ_x p̃_x
    D̂_x``, or Sibson's power mean), with ``D̂_x`` the midpoint of each divergence's bounds. At an
    optimal prior the rest of the gap vanishes and this is what remains: a target below it
    cannot be met by more iterations. An estimate for messages, never part of a certificate;
    at most the gap itself.
    """
    lower, upper, (mid_p, mid_u) = _ends(W, p, upper_p, alpha)
    with np.errstate(invalid="ignore", over="ignore"):
        on = p > 0
        weights = np.where(on, p, 0.0) / np.sum(np.where(on, p, 0.0), axis=-1, keepdims=True)
        D = np.where(on, mid_p, 0.0)
        if alpha == 1.0:
            information = np.sum(weights * D, axis=-1)
        else:
            c = alpha - 1.0
            z = np.where(on, c * D, -np.inf)
            top = np.max(z, axis=-1, keepdims=True)
            information = (top[:, 0] + np.log(np.sum(weights * np.exp(z - top), axis=-1))) / c
        slack = (upper - np.max(mid_u, axis=-1)) + (information - lower)
    gap = upper - lower
    out: FloatArray = np.where(np.isfinite(slack), np.clip(slack, 0.0, gap), gap)
    return out


def _ends(
    W: FloatArray, p: FloatArray, upper_p: FloatArray | None, alpha: float
) -> tuple[FloatArray, FloatArray, tuple[FloatArray, FloatArray]]:
    """:func:`bracket`, with the midpoints of the divergence bounds at both centres (for
    :func:`floor`)."""
    _, nx, ny = W.shape
    same = upper_p is None or upper_p is p or np.array_equal(upper_p, p)
    sigma = _ROWS.max(np.abs(_ROWS.sum(W) - 1.0) + gamma(ny + 2))
    if alpha == 1.0:
        q = _shannon_centre(W, p)
        # the mixture vs the float centre: its dot products, the row sums, the normalisations
        kappa = 1.1 * (2.0 * gamma(nx + 2) + 3.0 * gamma(ny + 2) + 2.0 * sigma + 4.0 * U)
        D_lo, D_hi = divergence_bounds(W, q, 1.0)
        lower = _mean_lower(p, np.maximum(D_lo, 0.0)) - _centre_cost(q, kappa, nx, 2.0)
        U_lo, U_hi = D_lo, D_hi
        if not same:
            U_lo, U_hi = divergence_bounds(W, _shannon_centre(W, upper_p), 1.0)  # type: ignore[arg-type]
    else:
        Q, rel = _sibson_centre(W, p, alpha)
        rel = rel + 1.01 * sigma + 2.0 * gamma(ny + 2)  # and the normalisation of the centre
        kappa = np.where(rel < 0.25, 2.2 * rel / (1.0 - rel), np.inf)
        D_lo, D_hi = divergence_bounds(W, Q, alpha)
        lower = _power_mean_lower(p, np.maximum(D_lo, 0.0), alpha) - _centre_cost(
            Q, kappa, nx, alpha
        )
        U_lo, U_hi = D_lo, D_hi
        if not same:
            Qu = _sibson_centre(W, upper_p, alpha)[0]  # type: ignore[arg-type]
            U_lo, U_hi = divergence_bounds(W, Qu, alpha)
    trivial = math.log(min(nx, ny)) * (1.0 + 4.0 * U)
    upper = np.minimum(_ROWS.max(U_hi), trivial)
    lower = np.clip(np.where(np.isfinite(lower), lower, 0.0), 0.0, None)
    mids = (0.5 * (D_lo + D_hi), 0.5 * (U_lo + U_hi))
    # ends that cross (they should not: each is a bound) are swapped, not clamped, so that the
    # gap shows the inconsistency instead of reporting a zero-width bracket
    return np.minimum(lower, upper), np.maximum(lower, upper), mids
