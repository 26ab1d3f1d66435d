"""Newton steps on the KKT system of the capacity problem: the polish of the batched engine.

The optimal prior of ``max_p I(p, W)`` satisfies ``D_x(p) = C`` on its support and
``D_x(p) ≤ C`` off it (``docs/mathematics.rst`` §1), with ``Σ p = 1``; the Jacobian of the
divergences is ``∂D_x/∂p_z = −Σ_y W_xy W_zy / q_y`` for Shannon's model (an engine model
supplies its own). Two Newton methods solve this system from the prior that Blahut–Arimoto
reached, for the elements of a part of the batch (:func:`dpcap.solvers.blahut.solve`):

* :func:`newton`, on a guessed support with an active-set rule, quadratically convergent once the
  support is right;
* :func:`interior_point`, a primal–dual interior-point method, robust whatever the support.

Each iterate goes through the engine's record of best brackets (``best.update``), so a step only
ever helps: the certificate judges every iterate, and a wrong step costs time, never validity.
The steps work in the array library of ``W`` (:mod:`dpcap.solvers.backend`); the linear solves
are passed in (``solve``), NumPy's being :func:`dpcap.solvers.blahut._solve`, whose systems are
built here a block at a time (:func:`_active_set_matrix`, :func:`_interior_matrix`); another
library's systems are built whole and solved by :func:`solve_stack`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import backend

__all__ = ["STALL", "interior_point", "newton", "solve_stack"]

IntArray = NDArray[np.int64]

#: Newton steps without halving the certified gap after which the active-set polish gives up.
STALL = 4

#: Newton steps solved again from the same point on a smaller support when a step would make
#: masses negative (see :func:`newton`).
RESOLVE = 3

#: The first Newton steps of a polish that may be solved again (far from the optimum, where
#: many inputs leave at once); later ones are clipped, which costs fewer solves there.
RESOLVE_STEPS = 1

#: Halvings of a Newton step that widened the iterate's own bracket (see :func:`newton`).
BACKTRACK = 2

#: A Newton step of one channel is solved on its support (see :func:`_step`) from this many
#: inputs on, when the support holds at most ON_SUPPORT of them.
ON_SUPPORT_FROM = 256
ON_SUPPORT = 0.75

#: Largest Jacobian (entries over a part) that the active-set polish keeps for its re-solves,
#: the engine's block size (4 MiB); above it each re-solve computes it again, so that a large
#: channel's polish holds one system of its size and nothing more.
KEEP_JACOBIAN = 1 << 19

Solve = Callable[[Callable[[slice], Any], Any], Any]


def newton(
    model: Any,
    W: Any,
    aux: Any,
    p: Any,
    best: Any,
    idx: IntArray,
    solve: Solve,
) -> IntArray:
    """Active-set Newton on the KKT system, from prior ``p``; returns the steps per element.

    ``best`` holds each element's best bracket and its stopping rule: an element leaves the
    polish once ``best.open`` says its bracket met ``best.target``.

    On a support ``S`` the residuals are ``D_x − C`` (x ∈ S), ``p_x`` (x ∉ S) and ``Σ p − 1``.
    Support rule: a Newton step that would make some masses negative is not taken; instead the
    negative inputs that the current value ``C`` does not reach (``D_x < C``) leave the support,
    or, if there are none, the single support input with the smallest ``D_x`` (inputs outside
    every optimal support have ``D_x(p*) < C``). Inputs with ``D_x > C`` join the support. An
    element whose certified gap has not halved in :data:`STALL` steps leaves the polish.

    Globalisation (each saves the steps of little progress that a clipped or overshooting full
    step costs far from the optimum): when the step would make masses negative and some of
    those inputs have ``D_x < C``, they leave and the step is solved again from the same point
    on the smaller support (up to :data:`RESOLVE` times, with the same Jacobian, on the first
    :data:`RESOLVE_STEPS` steps, where the support BA left is far from the optimal one; later
    steps are clipped, which costs fewer solves on dense Shannon channels); a step whose
    iterate has a wider gap ``max_x D_x − lower`` than the point it left is halved up to
    :data:`BACKTRACK` times and the best trial kept.
    """
    sp = best.sp
    xp = sp.xp
    nx, count = int(W.shape[1]), len(idx)
    steps = np.zeros(count, dtype=np.int64)
    support = p > 1e-9 * sp.max(p, keepdims=True)
    p = xp.where(support, p, 0.0)
    p = p / sp.sum(p, keepdims=True)
    D = model.divergences(W, aux, p)
    C = model.lower(W, aux, p, D)
    merit = sp.max(D) - C  # the gap of the current iterate
    live = np.arange(count)
    Wl, al = W, aux
    last_gap = best.gap(idx)
    stalled = np.zeros(count, dtype=np.int64)
    inputs = sp.arange(nx)
    build = _active_set_matrix if sp.numpy else _active_set_system
    for step in range(min(2 * nx + 20, 60)):
        Sl, pl, Dl, Cl = (sp.rows(a, live, count) for a in (support, p, D, C))
        # The Jacobian is kept for the re-solves of the first steps when it fits a block.
        kept = step < RESOLVE_STEPS and live.size * nx * nx <= KEEP_JACOBIAN
        G = _jacobian(sp, model, Wl, al, pl, Dl) if kept else None
        delta = _step(sp, solve, build, model, Wl, al, pl, Dl, Cl, Sl, G)
        # A first step that would make masses negative that C does not reach: they leave and
        # the step is solved again from the same point on the smaller support (up to RESOLVE
        # times), rather than taken clipped, which costs steps of little progress.
        # (Sibson's model caches its centre keyed on the identity of the last prior it saw: p
        # is changed in place below only after the model has seen another prior, p_next or a
        # trial, so a stale match cannot happen; keep that order.)
        for _ in range(RESOLVE if step < RESOLVE_STEPS else 0):
            negative = Sl & ~(pl + delta[:, :nx] >= 0)
            leaving = negative & (Dl < Cl[:, None])
            redo = np.flatnonzero(sp.host(sp.any(leaving)))
            if not redo.size:
                break
            Sl = Sl & ~leaving
            L = int(pl.shape[0])
            if _one_large(sp, pl):
                # one channel: solved again from the point without the leaving masses, so that
                # the system is the support's (see _step), not the whole channel's
                pl = xp.where(Sl, pl, 0.0)
                pl = pl / sp.sum(pl, keepdims=True)
                Dl = model.divergences(Wl, al, pl)
                Cl = model.lower(Wl, al, pl, Dl)
                G = None
            Wr, ar, pr, Dr, Cr, Sr = (sp.rows(a, redo, L) for a in (Wl, al, pl, Dl, Cl, Sl))
            Gr = None if G is None else sp.rows(G, redo, L)
            delta = sp.put(delta, redo, _step(sp, solve, build, model, Wr, ar, pr, Dr, Cr, Sr, Gr))
        usable = sp.all(xp.isfinite(delta))  # NaN step: stay put
        delta = xp.where(usable[:, None], delta, 0.0)
        p_new = pl + delta[:, :nx]
        negative = Sl & ~(p_new >= 0)
        blocked = sp.any(negative)
        leaving = negative & (Dl < Cl[:, None])
        fallback = blocked & ~sp.any(leaving)
        weakest = xp.argmin(xp.where(Sl, Dl, xp.inf), axis=-1)
        leaving = leaving | (fallback[:, None] & (inputs[None, :] == weakest[:, None]))
        Sl = Sl & ~leaving
        p_next = xp.where(Sl, xp.maximum(p_new, 0.0), 0.0)
        mass = sp.sum(p_next, keepdims=True)
        good = xp.isfinite(mass[:, 0]) & (mass[:, 0] > 0)
        p_next = xp.where(good[:, None], p_next / xp.where(good[:, None], mass, 1.0), pl)
        D_next = model.divergences(Wl, al, p_next)
        lower_next = model.lower(Wl, al, p_next, D_next)
        at = idx[live]
        best.update(at, p_next, D_next, lower_next)
        C_next = xp.where(blocked | ~good, lower_next, Cl + delta[:, nx])
        gap_next = sp.max(D_next) - lower_next
        worse = np.flatnonzero(sp.host(~(gap_next <= sp.rows(merit, live, count))))
        if worse.size:  # the step widened its own bracket: it overshot, halve it
            L = int(pl.shape[0])
            here = (sp.rows(a, worse, L) for a in (Wl, al, pl, p_next, D_next, lower_next))
            pb, Db, lb, gb = _backtrack(model, best, at[worse], *here)
            p_next, D_next = sp.put(p_next, worse, pb), sp.put(D_next, worse, Db)
            lower_next, C_next = sp.put(lower_next, worse, lb), sp.put(C_next, worse, lb)
            gap_next = sp.put(gap_next, worse, gb)
        merit = sp.put(merit, live, gap_next)
        half = 0.5 * sp.asarray(best.target(at))[:, None]
        Sl = Sl | (D_next > C_next[:, None] + half)  # inputs the current C does not cover
        support, p = sp.put(support, live, Sl), sp.put(p, live, p_next)
        D, C = sp.put(D, live, D_next), sp.put(C, live, C_next)
        steps[live] += 1
        # An element whose certified gap has not halved in STALL steps has the wrong support:
        # it leaves the polish (the interior-point method does not need the support).
        gap = best.gap(at)
        progress = gap < 0.5 * last_gap[live]
        stalled[live] = np.where(progress, 0, stalled[live] + 1)
        last_gap[live] = np.where(progress, gap, last_gap[live])
        keep = best.open(at) & (stalled[live] < STALL)
        live = live[keep]
        if not live.size:
            break
        if not keep.all():
            del Wl  # the smaller working copy is taken from W: never two copies at once
            Wl, al = sp.rows(W, live, count), sp.rows(aux, live, count)
    return steps


def _backtrack(
    model: Any, best: Any, at: IntArray, W: Any, aux: Any, p: Any, target: Any, D: Any, lower: Any
) -> tuple[Any, Any, Any, Any]:
    """The best of ``p + 2^-k (target − p)``, k = 0 … :data:`BACKTRACK`, by its own gap.

    ``D`` and ``lower`` are those of ``target`` (k = 0). Every trial is a point of the simplex
    (a convex combination of two priors) and goes through ``best.update``. Returns ``(prior, D,
    lower, gap)`` of the chosen trial of each element.
    """
    sp = best.sp
    xp = sp.xp
    chosen, gap = target, sp.max(D) - lower
    for k in range(1, BACKTRACK + 1):
        trial = p + 0.5**k * (target - p)
        Dt = model.divergences(W, aux, trial)
        lt = model.lower(W, aux, trial, Dt)
        best.update(at, trial, Dt, lt)
        gt = sp.max(Dt) - lt
        take = gt < gap
        chosen = xp.where(take[:, None], trial, chosen)
        D, lower = xp.where(take[:, None], Dt, D), xp.where(take, lt, lower)
        gap = xp.where(take, gt, gap)
    return chosen, D, lower, gap


def _step(
    sp: backend.Space,
    solve: Solve,
    build: Callable[..., Any],
    model: Any,
    W: Any,
    aux: Any,
    p: Any,
    D: Any,
    C: Any,
    S: Any,
    G: Any,
) -> Any:
    """The Newton step on support ``S``: residuals ``D_x − C`` on it, ``p_x`` off it, ``Σ p − 1``
    (``G``: the Jacobian at ``p``, or None to compute it while the systems are built).

    On the support (one channel, NumPy): the rows off ``U = S ∪ {p > 0}`` are unit rows with a
    zero residual (``p_x = 0``), so their steps are 0 and they drop out; and since ``p`` is 0 off
    ``U``, the output law and every Jacobian entry among ``U`` are those of the channel's rows
    ``U`` alone. Where ``U`` holds at most :data:`ON_SUPPORT` of the inputs, the system is built
    and solved on them: ``|U| + 1`` unknowns instead of ``|X| + 1`` (a 2000 × 2000 Dirichlet
    channel's optimal support has about 180 inputs)."""
    xp = sp.xp
    total = sp.sum(p) - 1
    F = sp.concat([xp.where(S, D - C[:, None], p), total[:, None]], -1)
    if G is None and _one_large(sp, p):
        used = np.flatnonzero(S[0] | (p[0] != 0))
        sub_aux = _inputs(aux, used)
        if used.size <= ON_SUPPORT * p.shape[1] and sub_aux is not None:
            keep = np.append(used, p.shape[1])  # and the row of Σ p
            system = partial(
                build, model, W[:, used], sub_aux, p[:, used], D[:, used], S[:, used], None
            )
            out = np.zeros(F.shape)
            out[:, keep] = solve(system, -F[:, keep])
            return out
    return solve(partial(build, model, W, aux, p, D, S, G), -F)


def _one_large(sp: backend.Space, p: Any) -> bool:
    """Whether the priors ``p`` are those of one NumPy channel of at least
    :data:`ON_SUPPORT_FROM` inputs: its Newton steps are solved on the support."""
    return bool(sp.numpy and p.shape[0] == 1 and p.shape[1] >= ON_SUPPORT_FROM)


def _inputs(aux: Any, idx: IntArray) -> Any:
    """A model's per-element constants of one element restricted to the inputs ``idx``: an
    array ``(L, nx)`` of per-input constants, or an object with ``inputs(idx)``; None if the
    model's constants cannot be restricted."""
    if isinstance(aux, np.ndarray) and aux.ndim == 2:
        return aux[:, idx]
    restrict = getattr(aux, "inputs", None)
    return None if restrict is None else restrict(idx)


def interior_point(
    model: Any,
    W: Any,
    aux: Any,
    p: Any,
    best: Any,
    idx: IntArray,
    solve: Solve,
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
    sp = best.sp
    xp = sp.xp
    n, count = int(W.shape[1]), len(idx)
    steps = np.zeros(count, dtype=np.int64)
    p = 0.999 * p + 0.001 / n
    D = model.divergences(W, aux, p)
    C = sp.max(D)
    lam = xp.maximum(C[:, None] - D, 0.0)
    lam = lam + xp.maximum(C - model.lower(W, aux, p, D), 1e-6)[:, None]
    # An element with an infinite D_x (its centre misses outputs some input reaches) has no
    # finite KKT residual: it keeps the brackets the other steps found.
    live = np.flatnonzero(sp.host(sp.all(xp.isfinite(D))))
    Wl, al = sp.rows(W, live, count), sp.rows(aux, live, count)
    build = _interior_matrix if sp.numpy else _interior_system
    for _ in range(max_steps):
        if not live.size:
            break
        pl, Dl, Cl, ll = (sp.rows(a, live, count) for a in (p, D, C, lam))
        mu = 0.1 * sp.sum(pl * ll) / n
        r1 = Dl + ll - Cl[:, None]
        r2 = pl * ll - mu[:, None]
        rhs = sp.concat([-r1 + r2 / pl, sp.zeros((live.size, 1))], -1)
        delta = solve(partial(build, model, Wl, al, pl, Dl, ll), rhs)
        usable = sp.all(xp.isfinite(delta))  # NaN step: stay put
        delta = xp.where(usable[:, None], delta, 0.0)
        dp, dC = delta[:, :n], delta[:, n]
        dl = (-r2 - ll * dp) / pl
        # the longest steps that keep p and λ non-negative (divisions by negatives only)
        limit_p = sp.min(xp.where(dp < 0, -pl / xp.where(dp < 0, dp, -1.0), xp.inf))
        limit_l = sp.min(xp.where(dl < 0, -ll / xp.where(dl < 0, dl, -1.0), xp.inf))
        t = xp.minimum(0.995 * xp.minimum(limit_p, limit_l), 1.0)
        t = xp.where(usable & xp.isfinite(t), t, 0.0)[:, None]
        pl = xp.maximum(pl + t * dp, 0.0)
        pl = pl / sp.sum(pl, keepdims=True)
        ll = ll + t * dl
        Cl = Cl + t[:, 0] * dC
        Dl = model.divergences(Wl, al, pl)
        at = idx[live]
        best.update(at, pl, Dl, model.lower(Wl, al, pl, Dl))
        p, D = sp.put(p, live, pl), sp.put(D, live, Dl)
        C, lam = sp.put(C, live, Cl), sp.put(lam, live, ll)
        steps[live] += 1
        keep = best.open(at) & sp.host(sp.all(xp.isfinite(Dl)))
        live = live[keep]
        if live.size and not keep.all():
            del Wl  # the smaller working copy is taken from W: never two copies at once
            Wl, al = sp.rows(W, live, count), sp.rows(aux, live, count)
    return steps


def _part(array: Any, k: slice, n: int) -> Any:
    """``array[k]`` for a slice of ``range(n)``; the array itself when ``k`` covers it all."""
    return array if (k.start or 0) == 0 and (k.stop is None or k.stop >= n) else array[k]


def _jacobian(sp: backend.Space, model: Any, W: Any, aux: Any, p: Any, D: Any) -> Any:
    """The model's Jacobian ``∂D_x/∂p_z`` of a part, (L, nx, nx)."""
    if not sp.numpy:
        return model.jacobian(W, aux, p, D)
    L, nx = p.shape
    G = np.empty((L, nx, nx))
    _fill_jacobian(model, W, aux, p, D, G)
    return G


def _fill_jacobian(model: Any, W: Any, aux: Any, p: Any, D: Any, out: Any) -> None:
    """The model's Jacobian written into ``out``: in place if the model can, else copied."""
    into = getattr(model, "jacobian_into", None)
    if into is not None:
        into(W, aux, p, D, out)
    else:
        out[...] = model.jacobian(W, aux, p, D)


def _active_set_matrix(
    model: Any, W: Any, aux: Any, p: Any, D: Any, S: Any, G: Any, k: slice
) -> NDArray[np.float64]:
    """``[[G on S, unit rows off S, −1_S], [1ᵀ, 0]]`` of elements ``k``; the Jacobian ``G``
    is copied from the one given, or (None) written in place."""
    n = p.shape[0]
    W, aux, p, D, S = (_part(a, k, n) for a in (W, aux, p, D, S))
    L, nx = p.shape
    A = np.zeros((L, nx + 1, nx + 1))
    if G is None:
        _fill_jacobian(model, W, aux, p, D, A[:, :nx, :nx])
    else:
        A[:, :nx, :nx] = _part(G, k, n)
    rows = np.nonzero(~S)
    A[rows] = 0.0  # the rows off S become unit rows
    A[(*rows, rows[1])] = 1.0
    A[:, :nx, nx] = np.where(S, -1.0, 0.0)
    A[:, nx, :nx] = 1.0
    return A


def _interior_matrix(
    model: Any, W: Any, aux: Any, p: Any, D: Any, lam: Any, k: slice
) -> NDArray[np.float64]:
    """``[[H − diag(λ/p), −1], [1ᵀ, 0]]`` of elements ``k``, ``H`` written in place."""
    W, aux, p, D, lam = (_part(a, k, p.shape[0]) for a in (W, aux, p, D, lam))
    L, n = p.shape
    K = np.zeros((L, n + 1, n + 1))
    _fill_jacobian(model, W, aux, p, D, K[:, :n, :n])
    K[:, np.arange(n), np.arange(n)] -= lam / p
    K[:, :n, n] = -1.0
    K[:, n, :n] = 1.0
    return K


def _bordered(sp: backend.Space, top: Any, side: Any) -> Any:
    """``[[top, side], [1ᵀ, 0]]`` for a stack ``top`` (L, n, n) and ``side`` (L, n, 1)."""
    L, n = int(top.shape[0]), int(top.shape[1])
    bottom = sp.concat([sp.full((L, 1, n), 1.0), sp.zeros((L, 1, 1))], -1)
    return sp.concat([sp.concat([top, side], -1), bottom], 1)


def _active_set_system(
    model: Any, W: Any, aux: Any, p: Any, D: Any, S: Any, G: Any, k: slice
) -> Any:
    """:func:`_active_set_matrix` in any array library, built whole (no writes into views)."""
    n = p.shape[0]
    W, aux, p, D, S = (_part(a, k, n) for a in (W, aux, p, D, S))
    sp = backend.space(p)
    xp = sp.xp
    G = model.jacobian(W, aux, p, D) if G is None else _part(G, k, n)
    top = xp.where(S[:, :, None], G, sp.eye(int(p.shape[1])))  # the rows off S: unit rows
    side = xp.where(S, sp.full(tuple(S.shape), -1.0), 0.0)
    return _bordered(sp, top, side[:, :, None])


def _interior_system(model: Any, W: Any, aux: Any, p: Any, D: Any, lam: Any, k: slice) -> Any:
    """:func:`_interior_matrix` in any array library, built whole (no writes into views)."""
    W, aux, p, D, lam = (_part(a, k, p.shape[0]) for a in (W, aux, p, D, lam))
    sp = backend.space(p)
    xp = sp.xp
    L, n = int(p.shape[0]), int(p.shape[1])
    H = model.jacobian(W, aux, p, D)
    top = H - xp.where(sp.eye(n) > 0, (lam / p)[:, :, None], 0.0)
    return _bordered(sp, top, sp.full((L, n, 1), -1.0))


def solve_stack(system: Callable[[slice], Any], b: Any) -> Any:
    """Batched ``A x = b`` (``A = system(slice(None))``, (L, m, m); ``b`` (L, m)) in the
    array library of ``b``: one ``linalg.solve`` of the whole stack.

    An element whose system is not finite gets a NaN step (it is solved as the identity and its
    answer discarded). If the library refuses the batch (a singular element: PyTorch and NumPy
    raise), the whole batch is solved by the pseudo-inverse, whose ``A⁺b`` is the least-squares
    solution of minimum norm (the least-squares fallback of NumPy's path); a library that
    returns non-finite numbers instead (CuPy) gives that element a NaN step. Memory: the stack
    of systems and its factors, about ``2 m²`` entries per element (the pseudo-inverse: its
    SVD, about ``4 m²``).
    """
    sp = backend.space(b)
    xp = sp.xp
    A = system(slice(None))
    m = int(b.shape[1])
    finite = xp.all(xp.isfinite(A), axis=(1, 2)) & xp.all(xp.isfinite(b), axis=1)
    A = xp.where(finite[:, None, None], A, sp.eye(m))
    rhs = xp.where(finite[:, None], b, 0.0)[:, :, None]
    try:
        x = xp.linalg.solve(A, rhs)
    except (np.linalg.LinAlgError, RuntimeError, ValueError):
        try:
            x = xp.matmul(xp.linalg.pinv(A), rhs)
        except (np.linalg.LinAlgError, RuntimeError, ValueError):
            return sp.full(tuple(b.shape), np.nan)
    return xp.where(finite[:, None], x[:, :, 0], xp.nan)
