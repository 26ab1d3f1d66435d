"""Batched, certified Blahut–Arimoto with a KKT–Newton polish: the Shannon-capacity engine.

Everything works on stacks ``W`` of shape ``(B, nx, ny)`` (one channel per element; rows are
inputs). The certificate is the only judge of convergence (``docs/mathematics.rst`` §1): for
any prior ``p`` with output law ``q = pW`` and ``D_x(p) = D(W_x ‖ q)``,

    I(p, W) = Σ_x p_x D_x(p)  ≤  C  ≤  max_x D_x(p),

so every iterate, whoever produced it, gives a valid bracket. The engine keeps, per element, the
best lower bound (with the prior that attains it) and the best upper bound seen, and an element
leaves the working set once ``upper − lower ≤ tol``.

Two kinds of step produce iterates:

* **Blahut–Arimoto** (``p ← p·e^{D(p)}``, normalised, in the log domain): globally convergent but
  slow when the optimal prior is sparse or the optimum is flat (near-duplicate rows, DP
  channels), since the mass of an input that carries none decays only like
  ``exp(−t·(C − D_x))``.
* **Newton on the KKT system** of a guessed support ``S``: ``D_x(p) = C`` for ``x ∈ S``,
  ``p_x = 0`` off ``S``, ``Σ p = 1``. Its Jacobian is ``∂D_x/∂p_z = −Σ_y W_xy W_zy / q_y``.
  Inputs whose Newton mass turns negative leave ``S``; inputs whose ``D_x`` exceeds the current
  ``C`` join it (an active-set rule). Quadratic convergence closes the bracket to ~1e-14 in a
  few steps once the support is right; when it is not, the certificate says so and BA goes on.

Rounds alternate a block of BA iterations (doubling in length) with a Newton polish, until
every element is certified or the iteration budget is spent.

Resources. Memory beyond ``W`` is one ``(nx + 1)²`` Newton system per element being polished
and blocks of about :data:`BLOCK_ELEMENTS` entries: ``W`` is never copied for a single channel
(a batch is worked through in parts of that size), the Jacobian is written into the system a
block of rows at a time, and large systems are LU-factorised in place. Channels with little
linear algebra (:data:`SMALL_WORK`) run with one BLAS thread (:func:`blas_threads`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import xlogy

from . import rounding

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]

__all__ = ["SHANNON", "BatchSolution", "Model", "Shannon", "blas_threads", "bracket", "solve"]

#: Floor of a BA iterate's log-mass relative to its largest entry (keeps q_y > 0 for every
#: column that some row reaches; a mass of e^-700 is irrelevant to every bound).
LOG_MASS_FLOOR = -700.0

#: Newton steps without halving the certified gap after which the active-set polish gives up.
STALL = 4

#: Entries of ``W`` per block of the row-chunked kernels and per part of a batch (4 MiB of
#: float64): no temporary of the engine has the size of the channel or of the batch.
BLOCK_ELEMENTS = 1 << 19

#: Newton systems with more unknowns than this are factorised in place, one element at a time
#: (no copy of the matrix); smaller ones are solved in one batched call.
IN_PLACE_SOLVE = 256

#: Channels with at most this much linear algebra per element (``nx² · (nx + ny)``, the flops of
#: a Jacobian and its solve) run with one BLAS thread: below it, threads cost more in
#: synchronisation than they save, and much more when a core is busy elsewhere (a measured
#: 1.5 s instead of 0.05 s at nx = 194). It is the work of a square channel with nx = 1024.
SMALL_WORK = 2 * 1024**3


@dataclass(frozen=True)
class BatchSolution:
    """Raw output of :func:`solve`: arrays over the batch."""

    prior: FloatArray  # (B, nx): the prior attaining `lower`
    lower: FloatArray  # (B,): I(prior, W)
    upper: FloatArray  # (B,): min over iterates of max_x D_x
    upper_prior: FloatArray  # (B, nx): the iterate attaining `upper`
    converged: BoolArray  # (B,)
    iterations: IntArray  # (B,): BA iterations + Newton steps spent on the element


def bracket(
    W: FloatArray, p: FloatArray, model: Model | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(D, lower, upper)`` for priors ``p`` (B, nx) on channels ``W`` (B, nx, ny)."""
    model = SHANNON if model is None else model
    aux = model.prepare(W)
    D = model.divergences(W, aux, p)
    return D, model.lower(W, aux, p, D), np.max(D, axis=-1)


#: Smallest positive double: the output mass of an outcome that some input in the support can
#: produce is at least this, even when ``p_x · W_xy`` underflows to 0 (subnormal channels such as
#: far geometric tails). Its term ``W_xy log(W_xy/q_y)`` is then below 1e-320 either way.
TINY = rounding.SMALLEST

#: Floor of ``q_y`` in the Newton Jacobian ``−Σ_y W_xy W_zy / q_y`` (see ``jacobian_into``).
Q_FLOOR = 1e-300


def _divergences(W: FloatArray, neg_entropy: FloatArray, p: FloatArray) -> FloatArray:
    """``D_x(p) = D(W_x ‖ pW)`` for every input; ∞ where ``W_x`` puts mass off ``supp(pW)``."""
    q = np.einsum("bx,bxy->by", p, W)
    positive = q > 0
    if positive.all():
        plain: FloatArray = neg_entropy - np.einsum("bxy,by->bx", W, np.log(q))
        return plain
    # q_y = 0 either truly (no input of the support reaches y) or by underflow. W ≥ 0, so
    # Σ_{x: p_x > 0} W_xy > 0 iff some input of the support reaches y (a sum of non-negative
    # numbers never rounds a positive term away to 0).
    reached = np.einsum("bx,bxy->by", (p > 0).astype(np.float64), W) > 0
    log_q = np.log(np.where(positive, q, TINY))
    D = neg_entropy - np.einsum("bxy,by->bx", W, np.where(reached, log_q, 0.0))
    escapes = np.einsum("bxy,by->bx", W, ~reached) > 0  # W_xy > 0 = q_y exactly: D_x = ∞
    result: FloatArray = np.where(escapes, np.inf, D)
    return result


def _information(p: FloatArray, D: FloatArray) -> FloatArray:
    value: FloatArray = np.sum(np.where(p > 0, p * np.where(p > 0, D, 0.0), 0.0), axis=-1)
    return np.maximum(value, 0.0)


class Model(Protocol):
    """What the engine needs from a capacity problem (see :class:`Shannon`).

    ``prepare`` returns per-element constants that the engine indexes like an array
    (``aux[active]``, ``aux[a:b]``); the other methods receive them back. A model may also
    offer ``jacobian_into(W, aux, p, D, out)``, the Jacobian written into ``out`` (a view into
    the Newton system) without a temporary of its size; otherwise ``jacobian`` is copied in.
    """

    def prepare(self, W: FloatArray) -> Any: ...

    def divergences(self, W: FloatArray, aux: Any, p: FloatArray) -> FloatArray: ...

    def lower(self, W: FloatArray, aux: Any, p: FloatArray, D: FloatArray) -> FloatArray: ...

    def jacobian(self, W: FloatArray, aux: Any, p: FloatArray, D: FloatArray) -> FloatArray: ...


class Shannon:
    """The Shannon-capacity problem: ``D_x(p) = D(W_x ‖ pW)``, lower bound ``I(p, W)``.

    An engine *model* supplies, for a stack of channels and priors: the per-input divergences
    whose maximum is an upper bound, the lower bound attained by the prior, and the Jacobian
    ``∂D_x/∂p_z`` for the Newton steps. :mod:`dpcap.solvers.renyi` supplies the same for
    Sibson's α-capacity, so both run through one engine.
    """

    def prepare(self, W: FloatArray) -> FloatArray:
        """Per-element constants: the negative row entropies ``Σ_y W log W`` (by row blocks)."""
        neg_entropy = np.empty(W.shape[:2])
        for b, x in _blocks(W.shape):
            neg_entropy[b, x] = np.sum(xlogy(W[b, x], W[b, x]), axis=-1)
        return neg_entropy

    def divergences(self, W: FloatArray, aux: FloatArray, p: FloatArray) -> FloatArray:
        return _divergences(W, aux, p)

    def lower(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        return _information(p, D)

    def jacobian(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        """``∂D_x/∂p_z = −Σ_y W_xy W_zy / q_y``."""
        G = np.empty((W.shape[0], W.shape[1], W.shape[1]))
        self.jacobian_into(W, aux, p, D, G)
        return G

    def jacobian_into(
        self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray, out: FloatArray
    ) -> None:
        """:meth:`jacobian` written into ``out`` (B, nx, nx), a block of rows at a time."""
        q = np.einsum("bx,bxy->by", p, W)
        # q_y is floored at Q_FLOOR: 1/q stays finite (a subnormal q gave 1/q = ∞ and 0·∞ = NaN,
        # so every Newton step was lost). Only entries with q_y < Q_FLOOR change, and for two
        # inputs of masses p_x, p_z they are ≤ min(W_zy/p_x, W_xy/p_z) ≤ Q_FLOOR/(p_x p_z) both
        # before and after: negligible, unless an input is nearly out of the support, where the
        # step is a guess the certificate checks anyway.
        neg_inv_q = np.where(q > 0, -1.0 / np.maximum(q, Q_FLOOR), 0.0)
        Wt = W.transpose(0, 2, 1)
        for b, x in _blocks(W.shape):
            np.matmul(W[b, x] * neg_inv_q[b, None, :], Wt[b], out=out[b, x])


SHANNON = Shannon()


def _blocks(shape: tuple[int, ...]) -> Iterator[tuple[slice, slice]]:
    """``(batch, rows)`` slices covering a ``(B, nx, ny)`` stack, ~:data:`BLOCK_ELEMENTS` each."""
    B, nx, ny = shape
    if nx * ny <= BLOCK_ELEMENTS:
        step = max(1, BLOCK_ELEMENTS // max(nx * ny, 1))
        for b in range(0, B, step):
            yield slice(b, b + step), slice(None)
    else:
        step = max(1, BLOCK_ELEMENTS // max(ny, 1))
        for b in range(B):
            for x in range(0, nx, step):
                yield slice(b, b + 1), slice(x, x + step)


def _fill_jacobian(
    model: Model, W: FloatArray, aux: Any, p: FloatArray, D: FloatArray, out: FloatArray
) -> None:
    """The model's Jacobian written into ``out``: in place if the model can, else copied."""
    into = getattr(model, "jacobian_into", None)
    if into is not None:
        into(W, aux, p, D, out)
    else:
        out[...] = model.jacobian(W, aux, p, D)


def _take(array: Any, idx: IntArray, n: int) -> Any:
    """``array[idx]`` for a sorted subset ``idx`` of ``range(n)``; no copy when it is all of it."""
    return array if idx.size == n else array[idx]


@cache
def _controller() -> Any:
    """The BLAS libraries of numpy and scipy (threadpoolctl, imported on first use only)."""
    import scipy.linalg.lapack  # noqa: F401  (scipy's own BLAS must be loaded to be found)
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

    return ThreadpoolController()


@contextmanager
def blas_threads(nx: int, ny: int) -> Iterator[None]:
    """One BLAS thread while solving a small channel (see :data:`SMALL_WORK`), else as it is."""
    if nx * nx * (nx + ny) > SMALL_WORK:
        yield
        return
    with _controller().limit(limits=1, user_api="blas"):
        yield


class _Best:
    """Best bracket seen so far for each element of the batch."""

    def __init__(self, p: FloatArray) -> None:
        B = p.shape[0]
        self.lower = np.full(B, -np.inf)
        self.upper = np.full(B, np.inf)
        self.prior = p.copy()
        self.upper_prior = p.copy()

    def update(self, idx: IntArray, p: FloatArray, D: FloatArray, lower: FloatArray) -> None:
        upper = np.max(D, axis=-1)
        better = lower > self.lower[idx]
        self.lower[idx[better]] = lower[better]
        self.prior[idx[better]] = p[better]
        tighter = upper < self.upper[idx]
        self.upper[idx[tighter]] = upper[tighter]
        self.upper_prior[idx[tighter]] = p[tighter]

    def gap(self, idx: IntArray) -> FloatArray:
        gap: FloatArray = self.upper[idx] - self.lower[idx]
        return gap


def solve(
    W: FloatArray,
    *,
    tol: float = 1e-9,
    max_iter: int = 100_000,
    newton: bool = True,
    initial: FloatArray | None = None,
    model: Model | None = None,
) -> BatchSolution:
    """Certified capacities of a stack of channels.

    Parameters
    ----------
    W : (B, nx, ny) array
        Row-stochastic channels without all-zero columns.
    tol : float
        Target certified gap ``upper − lower`` (nats).
    max_iter : int
        Budget of BA iterations per element.
    newton : bool
        Whether to polish with KKT–Newton steps between BA blocks.
    initial : (B, nx) array, optional
        Starting priors (default uniform), e.g. another engine's answer to polish. Entries are
        floored at ``e^-700`` relative to the largest so that every input can regain mass.
    model : engine model, optional
        :class:`Shannon` (default) or :class:`dpcap.solvers.renyi.Sibson`: any :class:`Model`.
    """
    _, nx, ny = W.shape
    model = SHANNON if model is None else model
    with blas_threads(nx, ny):
        return _solve_batch(W, tol, max_iter, newton, initial, model)


def _solve_batch(
    W: FloatArray,
    tol: float,
    max_iter: int,
    newton: bool,
    initial: FloatArray | None,
    model: Model,
) -> BatchSolution:
    """:func:`solve`, its BLAS threads already set."""
    B, nx, _ = W.shape
    aux = model.prepare(W)
    if initial is None:
        log_p = np.full((B, nx), -np.log(nx))
    else:
        with np.errstate(divide="ignore"):
            log_p = np.log(np.asarray(initial, dtype=np.float64))
        log_p -= log_p.max(axis=-1, keepdims=True)
        np.maximum(log_p, LOG_MASS_FLOOR, out=log_p)
    best = _Best(_normalise(log_p))
    iterations = np.zeros(B, dtype=np.int64)
    active = np.arange(B)
    block, spent = 8, 0
    # The batch is worked through in parts of about BLOCK_ELEMENTS entries of W: a part is a copy
    # of its elements (a single channel, or a batch that fits in one part, is never copied), so
    # every temporary of the engine is bounded by a part, whatever the size of the batch.
    per_part = max(1, BLOCK_ELEMENTS // (nx * W.shape[2]))
    while active.size and spent < max_iter:
        steps = min(block, max_iter - spent)
        for start in range(0, active.size, per_part):
            part = active[start : start + per_part]
            Wp, ap = _take(W, part, B), _take(aux, part, B)
            log_p[part] = _ba_block(model, Wp, ap, log_p[part], steps, best, part)
            iterations[part] += steps
            for polish in (_newton, _interior_point) if newton else ():
                still = best.gap(part) > tol
                if not still.all():
                    part = part[still]
                    del Wp  # before the smaller copy is made: never two copies at once
                    Wp, ap = _take(W, part, B), _take(aux, part, B)
                if not part.size:
                    break
                p_ba = _normalise(log_p[part])
                iterations[part] += polish(model, Wp, ap, p_ba, tol, best, part)
            del Wp, ap
        spent += steps
        active = active[best.gap(active) > tol]
        block *= 2
    return BatchSolution(
        prior=best.prior,
        lower=best.lower,
        upper=best.upper,
        upper_prior=best.upper_prior,
        converged=best.upper - best.lower <= tol,
        iterations=iterations,
    )


def _normalise(log_p: FloatArray) -> FloatArray:
    p = np.exp(log_p - log_p.max(axis=-1, keepdims=True))
    out: FloatArray = p / p.sum(axis=-1, keepdims=True)
    return out


def _ba_block(
    model: Model,
    W: FloatArray,
    aux: Any,
    log_p: FloatArray,
    steps: int,
    best: _Best,
    idx: IntArray,
) -> FloatArray:
    """``steps`` Blahut–Arimoto iterations in the log domain, recording every bracket."""
    for _ in range(steps):
        p = _normalise(log_p)
        D = model.divergences(W, aux, p)
        best.update(idx, p, D, model.lower(W, aux, p, D))
        # An infinite D_x (an input reaching outputs the current output law misses) wants mass:
        # it gets the largest finite step plus one, never ∞ (∞ − ∞ would poison the iterate).
        top = np.max(np.where(np.isfinite(D), D, -np.inf), axis=-1, keepdims=True)
        step = np.where(np.isfinite(D), D, np.where(np.isfinite(top), top + 1.0, 0.0))
        log_p = log_p + getattr(model, "step", 1.0) * step
        log_p -= log_p.max(axis=-1, keepdims=True)
        np.maximum(log_p, LOG_MASS_FLOOR, out=log_p)
    p = _normalise(log_p)
    D = model.divergences(W, aux, p)
    best.update(idx, p, D, model.lower(W, aux, p, D))
    return log_p


def _newton(
    model: Model,
    W: FloatArray,
    aux: Any,
    p: FloatArray,
    tol: float,
    best: _Best,
    idx: IntArray,
) -> IntArray:
    """Active-set Newton on the KKT system, from prior ``p``; returns the steps per element.

    Support rule: a Newton step that would make some masses negative is not taken; instead the
    negative inputs that the current value ``C`` does not reach (``D_x < C``) leave the support,
    or, if there are none, the single support input with the smallest ``D_x`` (inputs outside
    every optimal support have ``D_x(p*) < C``). Inputs with ``D_x > C`` join the support.
    """
    nx = W.shape[1]
    steps = np.zeros(len(idx), dtype=np.int64)
    support = p > 1e-9 * p.max(axis=-1, keepdims=True)
    p = np.where(support, p, 0.0)
    p /= p.sum(axis=-1, keepdims=True)
    D = model.divergences(W, aux, p)
    C = model.lower(W, aux, p, D)
    live = np.arange(len(idx))
    Wl, al = W, aux
    last_gap = best.gap(idx)
    stalled = np.zeros(len(idx), dtype=np.int64)
    for _ in range(min(2 * nx + 20, 60)):
        Sl, pl, Dl, Cl = support[live], p[live], D[live], C[live]
        # Residuals: D_x − C on the support, p_x off it, and Σ p − 1.
        F = np.concatenate([np.where(Sl, Dl - Cl[:, None], pl), (pl.sum(-1) - 1)[:, None]], -1)
        delta = _solve(partial(_active_set_matrix, model, Wl, al, pl, Dl, Sl), -F)
        usable: BoolArray = np.asarray(np.isfinite(delta).all(axis=-1))  # NaN step: stay put
        delta = np.where(usable[:, None], delta, 0.0)
        p_new = pl + delta[:, :nx]
        negative = Sl & ~(p_new >= 0)
        blocked = negative.any(axis=-1)
        leaving = negative & (Dl < Cl[:, None])
        fallback = blocked & ~leaving.any(axis=-1)
        weakest = np.argmin(np.where(Sl, Dl, np.inf), axis=-1)
        leaving[fallback, weakest[fallback]] = True
        Sl = Sl & ~leaving
        p_next = np.where(Sl, np.maximum(p_new, 0.0), 0.0)
        total = p_next.sum(axis=-1, keepdims=True)
        good = np.isfinite(total[:, 0]) & (total[:, 0] > 0)
        p_next = np.where(good[:, None], p_next / np.where(good[:, None], total, 1.0), pl)
        D_next = model.divergences(Wl, al, p_next)
        lower_next = model.lower(Wl, al, p_next, D_next)
        best.update(idx[live], p_next, D_next, lower_next)
        C_next = np.where(blocked | ~good, lower_next, Cl + delta[:, nx])
        Sl |= D_next > C_next[:, None] + 0.5 * tol  # inputs the current C does not cover
        support[live], p[live], D[live], C[live] = Sl, p_next, D_next, C_next
        steps[live] += 1
        # An element whose certified gap has not halved in STALL steps has the wrong support:
        # it leaves the polish (the interior-point method does not need the support).
        gap = best.gap(idx[live])
        progress = gap < 0.5 * last_gap[live]
        stalled[live] = np.where(progress, 0, stalled[live] + 1)
        last_gap[live] = np.where(progress, gap, last_gap[live])
        keep = (gap > tol) & (stalled[live] < STALL)
        live = live[keep]
        if not live.size:
            break
        if not keep.all():
            del Wl  # the smaller working copy is taken from W: never two copies at once
            Wl, al = _take(W, live, len(idx)), _take(aux, live, len(idx))
    return steps


def _part(array: Any, k: slice, n: int) -> Any:
    """``array[k]`` for a slice of ``range(n)``; the array itself when ``k`` covers it all."""
    return array if (k.start or 0) == 0 and (k.stop is None or k.stop >= n) else array[k]


def _active_set_matrix(
    model: Model, W: FloatArray, aux: Any, p: FloatArray, D: FloatArray, S: BoolArray, k: slice
) -> FloatArray:
    """``[[G on S, unit rows off S, −1_S], [1ᵀ, 0]]`` of elements ``k``, G written in place."""
    n = p.shape[0]
    W, aux, p, D, S = (_part(a, k, n) for a in (W, aux, p, D, S))
    L, nx = p.shape
    A = np.zeros((L, nx + 1, nx + 1))
    _fill_jacobian(model, W, aux, p, D, A[:, :nx, :nx])
    rows = np.nonzero(~S)
    A[rows] = 0.0  # the rows off S become unit rows
    A[(*rows, rows[1])] = 1.0
    A[:, :nx, nx] = np.where(S, -1.0, 0.0)
    A[:, nx, :nx] = 1.0
    return A


def _interior_point(
    model: Model,
    W: FloatArray,
    aux: Any,
    p: FloatArray,
    tol: float,
    best: _Best,
    idx: IntArray,
    max_steps: int = 100,
) -> IntArray:
    """Primal–dual interior-point Newton on the KKT system; returns the steps per element.

    KKT of ``max I(p)`` over the simplex: ``D_x(p) + λ_x = C``, ``λ ≥ 0``, ``p ≥ 0``,
    ``p_x λ_x = 0``, ``Σ p = 1`` (``λ_x = C − D_x`` is the slack of input x). The complementarity
    is relaxed to ``p_x λ_x = μ`` and μ is driven to 0; with ``H = −W diag(1/q) Wᵀ`` each step
    solves ``(H − diag(λ/p)) Δp − ΔC·1 = −r_1 + r_2/p``, ``1ᵀΔp = 0`` and stays inside the
    positive orthant (fraction to the boundary 0.995). Robust whatever the support, it is used
    for the elements that Blahut–Arimoto and the active-set polish leave uncertified.
    """
    n = W.shape[1]
    steps = np.zeros(len(idx), dtype=np.int64)
    p = 0.999 * p + 0.001 / n
    D = model.divergences(W, aux, p)
    C = np.max(D, axis=-1)
    lam = np.maximum(C[:, None] - D, 0.0)
    lam += np.maximum(C - model.lower(W, aux, p, D), 1e-6)[:, None]
    # An element with an infinite D_x (its centre misses outputs some input reaches) has no
    # finite KKT residual: it keeps the brackets the other steps found.
    live = np.flatnonzero(np.isfinite(D).all(axis=-1))
    Wl, al = _take(W, live, len(idx)), _take(aux, live, len(idx))
    for _ in range(max_steps):
        if not live.size:
            break
        pl, Dl, Cl, ll = p[live], D[live], C[live], lam[live]
        mu = 0.1 * np.sum(pl * ll, axis=-1) / n
        r1 = Dl + ll - Cl[:, None]
        r2 = pl * ll - mu[:, None]
        rhs = np.concatenate([-r1 + r2 / pl, np.zeros((len(live), 1))], axis=-1)
        delta = _solve(partial(_interior_matrix, model, Wl, al, pl, Dl, ll), rhs)
        usable: BoolArray = np.asarray(np.isfinite(delta).all(axis=-1))  # NaN step: stay put
        delta = np.where(usable[:, None], delta, 0.0)
        dp, dC = delta[:, :n], delta[:, n]
        dl = (-r2 - ll * dp) / pl
        with np.errstate(divide="ignore", invalid="ignore"):
            limit_p = np.where(dp < 0, -pl / dp, np.inf).min(axis=-1)
            limit_l = np.where(dl < 0, -ll / dl, np.inf).min(axis=-1)
        t = np.minimum(1.0, 0.995 * np.minimum(limit_p, limit_l))
        t = np.where(usable & np.isfinite(t), t, 0.0)[:, None]
        pl = pl + t * dp
        pl = np.maximum(pl, 0.0)
        pl /= pl.sum(axis=-1, keepdims=True)
        ll = ll + t * dl
        Cl = Cl + t[:, 0] * dC
        Dl = model.divergences(Wl, al, pl)
        best.update(idx[live], pl, Dl, model.lower(Wl, al, pl, Dl))
        p[live], D[live], C[live], lam[live] = pl, Dl, Cl, ll
        steps[live] += 1
        keep = (best.gap(idx[live]) > tol) & np.isfinite(Dl).all(axis=-1)
        live = live[keep]
        if live.size and not keep.all():
            del Wl  # the smaller working copy is taken from W: never two copies at once
            Wl, al = _take(W, live, len(idx)), _take(aux, live, len(idx))
    return steps


def _interior_matrix(
    model: Model, W: FloatArray, aux: Any, p: FloatArray, D: FloatArray, lam: FloatArray, k: slice
) -> FloatArray:
    """``[[H − diag(λ/p), −1], [1ᵀ, 0]]`` of elements ``k``, ``H`` written in place."""
    W, aux, p, D, lam = (_part(a, k, p.shape[0]) for a in (W, aux, p, D, lam))
    L, n = p.shape
    K = np.zeros((L, n + 1, n + 1))
    _fill_jacobian(model, W, aux, p, D, K[:, :n, :n])
    K[:, np.arange(n), np.arange(n)] -= lam / p
    K[:, :n, n] = -1.0
    K[:, n, :n] = 1.0
    return K


def _solve(system: Callable[[slice], FloatArray], b: FloatArray) -> FloatArray:
    """Batched ``A x = b`` for ``A = system(slice(None))`` (``system(k)``: elements ``k``).

    Element by element robust: an element whose system is not finite gets a NaN step (the
    callers then leave it where it is); a singular one falls back to its least-squares
    solution. One bad element never stops the batch.

    Memory: systems with more than :data:`IN_PLACE_SOLVE` unknowns are built and LU-factorised
    in place one element at a time (LAPACK ``getrf`` on the transpose, then ``getrs``: no copy
    of the matrix); smaller ones are built and solved in groups of about
    :data:`BLOCK_ELEMENTS` entries.
    """
    L, m = b.shape
    x = np.full(b.shape, np.nan)
    if m > IN_PLACE_SOLVE:
        for k in range(L):
            x[k] = _solve_in_place(system, k, b[k])
        return x
    step = max(1, BLOCK_ELEMENTS // (m * m))
    for k0 in range(0, L, step):
        part = slice(k0, k0 + step)
        A, bk = system(part), b[part]
        finite = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(bk).all(axis=1)
        if not finite.any():
            continue
        try:
            if finite.all():
                x[part] = np.linalg.solve(A, bk[..., None])[..., 0]
            else:
                x[part][finite] = np.linalg.solve(A[finite], bk[finite][..., None])[..., 0]
        except np.linalg.LinAlgError:
            for j in np.flatnonzero(finite):
                x[k0 + j] = _solve_one(A[j], bk[j])
    return x


def _solve_one(A: FloatArray, b: FloatArray) -> FloatArray:
    """``A x = b``, or the least-squares solution if ``A`` is singular, or NaN."""
    try:
        return np.asarray(np.linalg.solve(A, b), dtype=np.float64)
    except np.linalg.LinAlgError:
        return _least_squares(A, b)


def _least_squares(A: FloatArray, b: FloatArray) -> FloatArray:
    try:
        return np.asarray(np.linalg.lstsq(A, b, rcond=None)[0], dtype=np.float64)
    except np.linalg.LinAlgError:
        return np.full(b.shape, np.nan)


def _solve_in_place(system: Callable[[slice], FloatArray], k: int, b: FloatArray) -> FloatArray:
    """``A x = b`` for element ``k`` of ``system``, factorised in place; see :func:`_solve`."""
    from scipy.linalg.lapack import dgetrf, dgetrs

    A = system(slice(k, k + 1))[0]  # C-ordered
    step = max(1, BLOCK_ELEMENTS // A.shape[1])
    finite = all(np.isfinite(A[i : i + step]).all() for i in range(0, A.shape[0], step))
    if not (finite and np.isfinite(b).all()):
        return np.full(b.shape, np.nan)
    # Aᵀ is Fortran-ordered, so getrf factorises it where it lies; getrs with trans = 1 then
    # solves (Aᵀ)ᵀ x = b.
    lu, piv, info = dgetrf(A.T, overwrite_a=1)
    if info == 0:
        solution, info = dgetrs(lu, piv, b, trans=1)
        if info == 0:
            return np.asarray(solution, dtype=np.float64)
    del A, lu  # singular: least squares on a fresh copy of the system
    return _least_squares(system(slice(k, k + 1))[0], b)
