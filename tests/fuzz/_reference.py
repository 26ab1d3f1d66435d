"""Independent references for the fuzz suite, written from the definitions and nothing of dpcap.

* exact evaluation in ``mpmath`` (40 digits) of informations, divergences and the capacity
  bracket ``I(p, W) ≤ C ≤ max_x D(W_x ‖ pW)`` of any prior (``docs/mathematics.rst`` §1);
* a plain Blahut–Arimoto iteration (float64, long) whose prior is certified exactly in mpmath,
  so the reference bracket is rigorous whether or not the iteration converged;
* Sibson's α-capacity of small channels by an exponentiated-gradient iteration, certified by the
  concavity (α > 1) or convexity (α < 1) of ``f(p) = Σ_y (Σ_x p_x W_xy^α)^{1/α}``: the
  Frank–Wolfe gap of any prior bounds ``f*`` (a different certificate from dpcap's radius);
* brute force over neighbouring pairs for ε, δ(ε), KL, Rényi and TV levels.

A reference bracket ``[lo, hi]`` contains the truth up to :data:`MP_SLACK` (mpmath's own
rounding at 40 digits, far below anything float64 resolves).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: Digits of every mpmath evaluation: ``conftest.py`` runs each fuzz test under
#: ``mpmath.workdps(40)`` (the module does not change mpmath's global precision).
MP_DPS = 40

#: Absolute error allowance of an mpmath evaluation at 40 digits of quantities of size ≤ 1e3.
MP_SLACK = 1e-30

LN2 = math.log(2.0)


def normalise(W: Any) -> FloatArray:
    """The channel dpcap solves: rows divided by their float64 sums, ``-0.0`` made ``+0.0``.

    This mirrors the documented input rule (rows summing to 1 within 1e-9 are renormalised),
    so that a reference and dpcap speak of the same matrix to the last bit.
    """
    arr = np.array(W, dtype=np.float64) + 0.0
    out: FloatArray = arr / arr.sum(axis=-1, keepdims=True)
    return out


def as_law(p: Any) -> FloatArray:
    arr = np.array(p, dtype=np.float64) + 0.0
    out: FloatArray = arr / arr.sum()
    return out


# --------------------------------------------------------------------------- exact (mpmath)


def mp_vector(v: Sequence[float]) -> list[Any]:
    return [mpmath.mpf(float(x)) for x in v]


def mp_law(p: Sequence[float]) -> list[Any]:
    """A prior in mpmath, renormalised exactly (any non-negative vector defines a prior)."""
    v = mp_vector(p)
    total = mpmath.fsum(v)
    return [x / total for x in v]


def mp_rows(W: FloatArray) -> list[list[Any]]:
    """The rows of a channel in mpmath, each renormalised exactly (a zero row stays zero)."""
    return [mp_law(row) if float(np.sum(row)) > 0 else mp_vector(row) for row in W]


def mp_kl(P: Sequence[Any], Q: Sequence[Any]) -> Any:
    """``D(P‖Q)`` with ``0 log 0 = 0`` and ``p log(p/0) = ∞`` (P and Q as given: normalise
    them with :func:`mp_law` first)."""
    total = mpmath.mpf(0)
    for a, b in zip(P, Q, strict=True):
        if a == 0:
            continue
        if b == 0:
            return mpmath.inf
        total += a * mpmath.log(a / b)
    return total


def mp_renyi(P: Sequence[Any], Q: Sequence[Any], alpha: float) -> Any:
    """``D_α(P‖Q)`` from its definition, with the limits at α = 0, 1, ∞ (P and Q as given)."""
    P = [mpmath.mpf(x) for x in P]
    Q = [mpmath.mpf(x) for x in Q]
    if alpha == 1.0:
        return mp_kl(P, Q)
    if alpha == 0.0:
        mass = mpmath.fsum(b for a, b in zip(P, Q, strict=True) if a > 0)
        return mpmath.inf if mass == 0 else -mpmath.log(mass)
    if math.isinf(alpha):
        best = mpmath.mpf(0)
        for a, b in zip(P, Q, strict=True):
            if a > 0 and b == 0:
                return mpmath.inf
            if a > 0:
                best = max(best, a / b)
        return mpmath.log(best)
    a_ = mpmath.mpf(alpha)
    if alpha > 1 and any(a > 0 and b == 0 for a, b in zip(P, Q, strict=True)):
        return mpmath.inf
    s = mpmath.fsum(a**a_ * b ** (1 - a_) for a, b in zip(P, Q, strict=True) if a > 0 and b > 0)
    if s == 0:
        return mpmath.inf
    return mpmath.log(s) / (a_ - 1)


def mp_mixture(p: Sequence[Any], W: FloatArray) -> list[Any]:
    """``pW`` with the rows of W renormalised exactly."""
    rows = mp_rows(W)
    nx, ny = W.shape
    return [mpmath.fsum(p[x] * rows[x][y] for x in range(nx)) for y in range(ny)]


def mp_capacity_bracket(W: FloatArray, p: Sequence[float]) -> tuple[Any, Any]:
    """``(I(p, W), max_x D(W_x ‖ pW))`` in mpmath: a bracket of C(W) for *any* prior p."""
    P = mp_law(p)
    rows = [mp_law(W[x]) for x in range(W.shape[0])]
    q = [mpmath.fsum(P[x] * rows[x][y] for x in range(len(P))) for y in range(W.shape[1])]
    D = [mp_kl(row, q) for row in rows]
    info = mpmath.fsum(P[x] * D[x] for x in range(len(P)) if P[x] > 0)
    return info, max(D)


def mp_mutual_information(p: Sequence[float], W: FloatArray) -> Any:
    return mp_capacity_bracket(W, p)[0]


def mp_entropy(p: Sequence[float]) -> Any:
    return -mpmath.fsum(x * mpmath.log(x) for x in mp_vector(p) if x > 0)


def mp_binary_entropy(t: Any) -> Any:
    t = mpmath.mpf(t)
    return -sum((v * mpmath.log(v) for v in (t, 1 - t) if v > 0), mpmath.mpf(0))


def mp_sibson(p: Sequence[float], W: FloatArray, alpha: float) -> Any:
    """Sibson's ``I_α^S(p, W) = α/(α−1) log Σ_y (Σ_x p_x W_xy^α)^{1/α}`` (0 < α < ∞, α ≠ 1)."""
    P = mp_law(p)
    rows = mp_rows(W)
    a = mpmath.mpf(alpha)
    f = mpmath.fsum(
        mpmath.fsum(P[x] * rows[x][y] ** a for x in range(len(P)) if P[x] > 0) ** (1 / a)
        for y in range(W.shape[1])
    )
    return a / (a - 1) * mpmath.log(f)


# --------------------------------------------------------------------------- capacity


def blahut_arimoto(W: FloatArray, *, iterations: int = 4000, gap: float = 1e-13) -> FloatArray:
    """A plain Blahut–Arimoto iteration ``p ← p e^{D(p)}`` from the uniform prior.

    Stops when the float64 bracket ``max_x D_x − I`` is below ``gap`` or after ``iterations``
    steps; only the prior is returned, to be certified exactly by :func:`mp_capacity_bracket`.
    """
    W = W[:, W.sum(axis=0) > 0]
    nx = W.shape[0]
    p = np.full(nx, 1.0 / nx)
    logW = np.log(np.where(W > 0, W, 1.0))
    negH = np.sum(W * logW, axis=1)  # Σ_y W log W per row
    for _ in range(iterations):
        q = p @ W
        D = negH - W @ np.log(np.where(q > 0, q, 1.0))
        if not np.all(np.isfinite(D)):
            break
        top = D.max()
        if top - p @ D < gap:
            break
        w = p * np.exp(D - top)
        p = w / w.sum()
    return p


def capacity_reference(W: Any, *, iterations: int = 4000) -> tuple[float, float]:
    """A rigorous bracket ``[lo, hi]`` of C(W) (float, outward by :data:`MP_SLACK`).

    The bracket is valid whatever the iteration reached; more iterations only narrow it.
    """
    Wn = normalise(W)
    return _capacity_reference(Wn.tobytes(), Wn.shape, iterations)


@functools.lru_cache(maxsize=4096)
def _capacity_reference(
    data: bytes, shape: tuple[int, ...], iterations: int
) -> tuple[float, float]:
    Wn = np.frombuffer(data, dtype=np.float64).reshape(shape)
    lo, hi = mp_capacity_bracket(Wn, blahut_arimoto(Wn, iterations=iterations))
    return float(lo) - MP_SLACK, float(hi) + MP_SLACK


# --------------------------------------------------------------------------- Sibson capacity


def _lse(a: FloatArray, axis: int) -> FloatArray:
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out: FloatArray = np.log(np.sum(np.exp(a - top), axis=axis)) + np.squeeze(top, axis)
    return out


def _log_sibson_parts(logW: FloatArray, p: FloatArray, alpha: float) -> tuple[float, FloatArray]:
    """``log f(p)`` and its gradient, in the log domain (float64, for the iteration only)."""
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    logs = _lse(logp[:, None] + alpha * logW, 0)  # log Σ_x p_x W_xy^α
    logf = float(_lse(logs / alpha, 0))
    weight = np.exp(logs / alpha - logf)  # s_y^{1/α} / f
    grad = (np.exp(alpha * logW - logs[None, :]) * weight[None, :]).sum(axis=1) / alpha
    return logf, grad


def sibson_prior(W: FloatArray, alpha: float, *, iterations: int = 400) -> FloatArray:
    """A prior near the maximiser of Sibson's information.

    ``f`` is concave for α > 1 (maximised) and convex for α < 1 (minimised), so ``±log f`` is
    unimodal along any segment: two inputs are solved by golden-section search on the segment,
    more by exponentiated-gradient steps with a step that grows while the value improves.
    """
    W = W[:, W.sum(axis=0) > 0]
    with np.errstate(divide="ignore"):
        logW = np.log(W)
    nx = W.shape[0]
    sign = 1.0 if alpha > 1 else -1.0
    if nx == 2:
        lo, hi = 0.0, 1.0
        ratio = (math.sqrt(5.0) - 1.0) / 2.0

        def value(t: float) -> float:
            return sign * _log_sibson_parts(logW, np.array([t, 1.0 - t]), alpha)[0]

        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        fa, fb = value(a), value(b)
        for _ in range(90):
            if fa >= fb:
                hi, b, fb = b, a, fa
                a = hi - ratio * (hi - lo)
                fa = value(a)
            else:
                lo, a, fa = a, b, fb
                b = lo + ratio * (hi - lo)
                fb = value(b)
        t = 0.5 * (lo + hi)
        return np.array([t, 1.0 - t]) if 0.0 < t < 1.0 else np.array([0.5, 0.5])
    p = np.full(nx, 1.0 / nx)
    logf, grad = _log_sibson_parts(logW, p, alpha)
    step = 1.0
    for _ in range(iterations):
        g = sign * grad
        g = g - g.max()
        trial = p * np.exp(np.maximum(step * g, -700.0))
        trial = np.maximum(trial / trial.sum(), 1e-300)
        trial /= trial.sum()
        lt, gt = _log_sibson_parts(logW, trial, alpha)
        if np.isfinite(lt) and np.all(np.isfinite(gt)) and sign * lt >= sign * logf:
            p, logf, grad = trial, lt, gt
            step = min(step * 1.5, 1e6)
        else:
            step /= 2.0
        if step < 1e-14:
            break
    return p


def sibson_bracket(W: FloatArray, p: FloatArray, alpha: float) -> tuple[float, float]:
    """A rigorous bracket of ``C_α`` from any full-support prior, by the Frank–Wolfe gap.

    For α > 1, ``f`` is concave: ``f* ≤ f(p) + max_x g_x − p·g``; for α < 1 it is convex:
    ``f* ≥ f(p) − (p·g − min_x g_x)``, and ``C_α = α/(α−1) log f*`` (decreasing in f* when
    α < 1). Evaluated in mpmath; the lower end is Sibson's information of ``p``.
    """
    W = W[:, W.sum(axis=0) > 0]
    P = mp_law(p)
    a = mpmath.mpf(alpha)
    Wa = [[w**a for w in row] for row in mp_rows(W)]
    s = [mpmath.fsum(P[x] * Wa[x][y] for x in range(len(P))) for y in range(W.shape[1])]
    if any(v == 0 for v in s):
        value = a / (a - 1) * mpmath.log(mpmath.fsum(v ** (1 / a) for v in s))
        return float(value) - MP_SLACK, math.inf
    f = mpmath.fsum(v ** (1 / a) for v in s)
    # the radius bound: C_α ≤ max_x D_α(W_x ‖ Q) for any output law, here Q ∝ s^{1/α}
    Q = [v ** (1 / a) / f for v in s]
    rows = mp_rows(W)
    radius = max(mp_renyi(row, Q, alpha) for row in rows)
    g = [
        mpmath.fsum(Wa[x][y] * s[y] ** (1 / a - 1) for y in range(len(s))) / a
        for x in range(len(P))
    ]
    pg = mpmath.fsum(P[x] * g[x] for x in range(len(P)))
    scale = a / (a - 1)
    value = scale * mpmath.log(f)
    if alpha > 1:
        best = scale * mpmath.log(f + max(g) - pg)
    else:
        floor = f - (pg - min(g))
        best = mpmath.inf if floor <= 0 else scale * mpmath.log(floor)
    return float(value) - MP_SLACK, float(min(best, radius)) + MP_SLACK


def sibson_capacity_reference(W: Any, alpha: float) -> tuple[float, float]:
    """A rigorous bracket of Sibson's α-capacity for 0 < α < ∞, α ≠ 1."""
    Wn = normalise(W)
    return sibson_bracket(Wn, sibson_prior(Wn, alpha), alpha)


def max_leakage_reference(W: Any) -> Any:
    """``log Σ_y max_x W_xy`` in mpmath (α = ∞)."""
    rows = mp_rows(normalise(W))
    return mpmath.log(mpmath.fsum(max(col) for col in zip(*rows, strict=True)))


# --------------------------------------------------------------------------- neighbours, DP


def databases(shape: Sequence[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(m) for m in shape)))


def ordered_pairs(shape: Sequence[int], relation: Any) -> list[tuple[int, int]]:
    """Ordered neighbouring pairs ``(i, j)``, ``i ≠ j``, from the definitions of the relations."""
    dbs = databases(shape)
    index = {db: k for k, db in enumerate(dbs)}
    out: set[tuple[int, int]] = set()
    if isinstance(relation, str):
        for x, y in itertools.permutations(dbs, 2):
            diff = [(a, b) for a, b in zip(x, y, strict=True) if a != b]
            if relation == "all":
                ok = True
            elif relation == "hamming":
                ok = len(diff) == 1
            else:  # line
                ok = len(diff) == 1 and abs(diff[0][0] - diff[0][1]) == 1
            if ok:
                out.add((index[x], index[y]))
    elif callable(relation):
        for x, y in itertools.combinations(dbs, 2):
            if relation(x, y):
                out.update({(index[x], index[y]), (index[y], index[x])})
    else:
        arr = np.asarray(relation)
        for pair in arr:
            if arr.ndim == 2:
                i, j = int(pair[0]), int(pair[1])
            else:
                i, j = index[tuple(int(v) for v in pair[0])], index[tuple(int(v) for v in pair[1])]
            if i != j:
                out.update({(i, j), (j, i)})
    return sorted(out)


def eps_pair(P: Sequence[Any], Q: Sequence[Any]) -> float:
    """``max_y log(P_y/Q_y)`` with ``0/0`` ignored and ``p/0 = ∞`` (rows renormalised exactly)."""
    best = mpmath.mpf(0)
    for a, b in zip(mp_law(P), mp_law(Q), strict=True):
        if a > 0 and b == 0:
            return math.inf
        if a > 0:
            best = max(best, mpmath.log(a / b))
    return float(best)


def hockey_pair(P: Sequence[Any], Q: Sequence[Any], eps: float) -> Any:
    """``E_{e^ε}(P‖Q) = Σ_y (P_y − e^ε Q_y)_+`` in mpmath; at ε = ∞ the mass where Q = 0."""
    P, Q = mp_law(P), mp_law(Q)
    if math.isinf(eps):
        return mpmath.fsum(a for a, b in zip(P, Q, strict=True) if b == 0)
    g = mpmath.exp(mpmath.mpf(eps))
    return mpmath.fsum(max(a - g * b, mpmath.mpf(0)) for a, b in zip(P, Q, strict=True))


def worst_pair(
    W: FloatArray, pairs: Sequence[tuple[int, int]], metric: Callable[[Any, Any], Any]
) -> Any:
    """``max`` of ``metric(W_i, W_j)`` over the ordered pairs (0 without pairs)."""
    if not pairs:
        return 0.0
    rows = [mp_law(row) for row in W]
    return max(metric(rows[i], rows[j]) for i, j in pairs)


def close(got: float, want: Any, *, rel: float = 1e-9, abs_: float = 1e-12) -> bool:
    """``got`` agrees with the exact ``want`` (both may be ∞)."""
    want = float(want)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= abs_ + rel * abs(want)
