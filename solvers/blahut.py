"""Batched, certified Blahut–Arimoto with a KKT–Newton polish: the Shannon-capacity engine.

Everything works on stacks ``W`` of shape ``(B, nx, ny)`` (one channel per element; rows are
inputs). The certificate is the only judge of convergence (``docs/mathematics.rst`` §1): for
any prior ``p`` with output law ``q = pW`` and ``D_x(p) = D(W_x ‖ q)``,

    I(p, W) = Σ_x p_x D_x(p)  ≤  C  ≤  max_x D_x(p),

so every iterate, whoever produced it, gives a valid bracket. The engine keeps, per element, the
best lower bound (with the prior that attains it) and the best upper bound seen, and an element
leaves the working set once ``upper − lower ≤ max(tol, rtol·|upper|)``, the query layer's rule
(:func:`dpcap._core.certify.conclude`) evaluated at the element's current upper end.

Two kinds of step produce iterates:

* **Blahut–Arimoto** (``p ← p·e^{D(p)}``, normalised, in the log domain): globally convergent but
  slow when the optimal prior is sparse or the optimum is flat (near-duplicate rows, DP
  channels), since the mass of an input that carries none decays only like
  ``exp(−t·(C − D_x))``.
* **Newton on the KKT system** of a guessed support (:mod:`dpcap.solvers.kkt_newton`): quadratic
  convergence closes the bracket to ~1e-14 in a few steps once the support is right; when it is
  not, the certificate says so and BA goes on.

Rounds alternate a block of BA iterations (doubling in length) with a Newton polish, until
every element is certified or the iteration budget is spent.

Array libraries. The engine is written against the Python array API standard
(:mod:`dpcap.solvers.backend`): ``W`` may be a NumPy array (the default) or a float64 array of
another library (PyTorch, CuPy, ``array_api_strict``), and it then runs in that library on
``W``'s device, with either model (:class:`Shannon` here, and Sibson's α-capacity,
:class:`dpcap.solvers.renyi.Sibson`). The results (:class:`BatchSolution`) are always host
NumPy arrays, small (``B × nx``), for the certificate, which is evaluated on the host in NumPy
float64 (:mod:`dpcap.solvers.rounding`) whatever produced the priors.

Resources. Memory beyond ``W`` is one ``(nx + 1)²`` Newton system per element being polished
and blocks of about :data:`BLOCK_ELEMENTS` entries: ``W`` is never copied for a single channel
(a batch is worked through in parts of that size), and with NumPy the Jacobian is written into
the system a block of rows at a time and large systems are LU-factorised in place. Channels
with little linear algebra (:data:`SMALL_WORK`) run with one BLAS thread (:func:`blas_threads`).
On other libraries a part's Jacobian is one batched product (a temporary of the part's size)
and its Newton systems one batched ``linalg.solve`` (the systems and their factors: about
``2 (nx + 1)²`` entries per element); their threads are left as the library sets them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import xlogy

from . import backend, kkt_newton, rounding
from .backend import Space
from .status import EngineStatus, batch_message, by_element

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.int64]
ObjectArray = NDArray[np.object_]

__all__ = [
    "SHANNON",
    "BatchSolution",
    "Model",
    "Shannon",
    "blas_threads",
    "bracket",
    "one_blas_thread",
    "solve",
]

#: Floor of a BA iterate's log-mass relative to its largest entry (keeps q_y > 0 for every
#: column that some row reaches; a mass of e^-700 is irrelevant to every bound).
LOG_MASS_FLOOR = -700.0

#: Blahut–Arimoto iterations before the first Newton polish (the blocks then double).
FIRST_BLOCK = 2

#: Newton steps without halving the certified gap after which the active-set polish gives up.
STALL = kkt_newton.STALL

#: Entries of ``W`` per block of the row-chunked kernels and per part of a batch (defined once,
#: in :mod:`~dpcap.solvers.backend`).
BLOCK_ELEMENTS = backend.BLOCK_ELEMENTS

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
    """Raw output of :func:`solve`: host NumPy arrays over the batch, whatever ``W`` was.

    A batched :class:`~dpcap.solvers.status.Solution`: ``status`` has one
    :class:`~dpcap.solvers.status.EngineStatus` per element (``OPTIMAL`` where the engine's
    bracket closed to ``tol``, ``MAX_ITER`` where the budget ran out first), ``message`` one
    summary of the batch and ``iterations`` the BA iterations and Newton steps per element.
    """

    prior: FloatArray  # (B, nx): the prior attaining `lower`
    lower: FloatArray  # (B,): I(prior, W)
    upper: FloatArray  # (B,): min over iterates of max_x D_x
    upper_prior: FloatArray  # (B, nx): the iterate attaining `upper`
    status: ObjectArray  # (B,): EngineStatus per element
    message: str
    iterations: IntArray  # (B,): BA iterations + Newton steps spent on the element

    @property
    def converged(self) -> BoolArray:
        """``(B,)``: where ``status`` is ``OPTIMAL`` (the engine's bracket closed to ``tol``)."""
        return np.asarray(self.status == EngineStatus.OPTIMAL, dtype=np.bool_)


def bracket(W: Any, p: Any, model: Model | None = None) -> tuple[Any, Any, Any]:
    """``(D, lower, upper)`` for priors ``p`` (B, nx) on channels ``W`` (B, nx, ny).

    In ``W``'s array library, in its own floating point: the certified bracket, with its
    rounding bounded, is :func:`dpcap.solvers.rounding.bracket`'s.
    """
    model = SHANNON if model is None else model
    aux = model.prepare(W)
    D = model.divergences(W, aux, p)
    return D, model.lower(W, aux, p, D), backend.space(W).max(D)


#: Smallest positive double: the output mass of an outcome that some input in the support can
#: produce is at least this, even when ``p_x · W_xy`` underflows to 0 (subnormal channels such as
#: far geometric tails). Its term ``W_xy log(W_xy/q_y)`` is then below 1e-320 either way.
TINY = rounding.SMALLEST

#: Floor of ``q_y`` in the Newton Jacobian ``−Σ_y W_xy W_zy / q_y`` (see ``jacobian_into``).
Q_FLOOR = 1e-300


def _divergences(W: Any, neg_entropy: Any, p: Any) -> Any:
    """``D_x(p) = D(W_x ‖ pW)`` for every input; ∞ where ``W_x`` puts mass off ``supp(pW)``."""
    sp = backend.space(W)
    xp = sp.xp
    q = sp.vecmat(p, W)
    positive = q > 0
    if bool(xp.all(positive)):
        return neg_entropy - sp.matvec(W, xp.log(q))
    # q_y = 0 either truly (no input of the support reaches y) or by underflow. W ≥ 0, so
    # Σ_{x: p_x > 0} W_xy > 0 iff some input of the support reaches y (a sum of non-negative
    # numbers never rounds a positive term away to 0).
    reached = sp.vecmat(sp.float64(p > 0), W) > 0
    log_q = xp.log(xp.where(positive, q, TINY))
    D = neg_entropy - sp.matvec(W, xp.where(reached, log_q, 0.0))
    escapes = sp.matvec(W, sp.float64(~reached)) > 0  # W_xy > 0 = q_y exactly: D_x = ∞
    return xp.where(escapes, xp.inf, D)


def _information(p: Any, D: Any) -> Any:
    sp = backend.space(p)
    xp = sp.xp
    value = sp.sum(xp.where(p > 0, p * xp.where(p > 0, D, 0.0), 0.0))
    return xp.maximum(value, 0.0)


class Model(Protocol):
    """What the engine needs from a capacity problem (see :class:`Shannon`).

    ``prepare`` returns per-element constants that the engine indexes like an array
    (``aux[active]``, ``aux[a:b]``); the other methods receive them back. A model may also
    offer ``jacobian_into(W, aux, p, D, out)``, the Jacobian written into ``out`` (a view into
    the Newton system) without a temporary of its size; otherwise ``jacobian`` is copied in.
    A model used with NumPy input sees NumPy arrays only. With another array library it sees
    that library's arrays; constants that are not an array are then indexed with one of its
    integer arrays, and ``jacobian_into`` is not used.
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
    Sibson's α-capacity, so both run through one engine. Every method works on arrays of any
    array-API library (:mod:`dpcap.solvers.backend`).
    """

    def prepare(self, W: FloatArray) -> FloatArray:
        """Per-element constants: the negative row entropies ``Σ_y W log W`` (by row blocks)."""
        sp = backend.space(W)
        if sp.numpy:
            neg_entropy = np.empty(W.shape[:2])
            for b, x in _blocks(W.shape):
                neg_entropy[b, x] = np.sum(xlogy(W[b, x], W[b, x]), axis=-1)
            return neg_entropy
        xp = sp.xp
        out: FloatArray = sp.zeros(tuple(W.shape[:2]))
        for b, x in _blocks(W.shape):
            Wb = W[b, x, :]
            positive = Wb > 0  # 0 · log 0 = 0
            terms = xp.where(positive, Wb * xp.log(xp.where(positive, Wb, 1.0)), 0.0)
            out[b, x] = xp.sum(terms, axis=-1)
        return out

    def divergences(self, W: FloatArray, aux: FloatArray, p: FloatArray) -> FloatArray:
        D: FloatArray = _divergences(W, aux, p)
        return D

    def lower(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        value: FloatArray = _information(p, D)
        return value

    def jacobian(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        """``∂D_x/∂p_z = −Σ_y W_xy W_zy / q_y``."""
        sp = backend.space(W)
        if sp.numpy:
            G = np.empty((W.shape[0], W.shape[1], W.shape[1]))
            self.jacobian_into(W, aux, p, D, G)
            return G
        J: FloatArray = sp.xp.matmul(W * _neg_inv_q(sp, p, W)[:, None, :], sp.mT(W))
        return J

    def jacobian_into(
        self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray, out: FloatArray
    ) -> None:
        """:meth:`jacobian` written into ``out`` (B, nx, nx), a block of rows at a time."""
        sp = backend.space(W)
        if not sp.numpy:
            out[...] = self.jacobian(W, aux, p, D)
            return
        neg_inv_q = _neg_inv_q(sp, p, W)
        Wt = W.transpose(0, 2, 1)
        for b, x in _blocks(W.shape):
            np.matmul(W[b, x] * neg_inv_q[b, None, :], Wt[b], out=out[b, x])


def _neg_inv_q(sp: Space, p: Any, W: Any) -> Any:
    """``−1/q_y`` with ``q_y`` floored at :data:`Q_FLOOR`, 0 where ``q_y = 0``.

    The floor keeps 1/q finite (a subnormal q gave 1/q = ∞ and 0·∞ = NaN, so every Newton step
    was lost). Only entries with q_y < Q_FLOOR change, and for two inputs of masses p_x, p_z
    they are ≤ min(W_zy/p_x, W_xy/p_z) ≤ Q_FLOOR/(p_x p_z) both before and after: negligible,
    unless an input is nearly out of the support, where the step is a guess the certificate
    checks anyway.
    """
    xp = sp.xp
    q = sp.vecmat(p, W)
    return xp.where(q > 0, -1.0 / xp.maximum(q, Q_FLOOR), 0.0)


SHANNON = Shannon()


def _blocks(shape: tuple[int, ...]) -> Iterator[tuple[slice, slice]]:
    """``(batch, rows)`` slices covering a ``(B, nx, ny)`` stack, ~:data:`BLOCK_ELEMENTS` each."""
    B, nx, ny = shape
    if nx * ny <= BLOCK_ELEMENTS:
        step = max(1, BLOCK_ELEMENTS // max(nx * ny, 1))
        for b in range(0, B, step):
            yield slice(b, min(b + step, B)), slice(None)
    else:
        step = max(1, BLOCK_ELEMENTS // max(ny, 1))
        for b in range(B):
            for x in range(0, nx, step):
                yield slice(b, b + 1), slice(x, min(x + step, nx))


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
    with one_blas_thread():
        yield


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """NumPy's and scipy's BLAS limited to one thread (threadpoolctl, imported on first use)."""
    with _controller().limit(limits=1, user_api="blas"):
        yield


class _Best:
    """Best bracket seen so far for each element of the batch, on the batch's device.

    Elements are named by host index arrays (sorted, distinct); :meth:`update` scatters a
    part's improvements back into the batch.
    """

    def __init__(self, sp: Space, p: Any, tol: float = 0.0, rtol: float = 0.0) -> None:
        B = int(p.shape[0])
        self.sp = sp
        self.tol, self.rtol = tol, rtol
        self.size = B
        self.lower = sp.full((B,), -np.inf)
        self.upper = sp.full((B,), np.inf)
        self.prior = sp.copy(p)
        self.upper_prior = sp.copy(p)
        self._at: tuple[IntArray, Any] | None = None

    def _rows(self, a: Any, idx: IntArray) -> Any:
        """``a[idx]`` for reading (a view when ``idx`` is a run of consecutive elements in
        NumPy, or covers the batch in another library)."""
        if self.sp.numpy:
            return a[backend.span(idx)]
        if idx.size == self.size:
            return a
        cached = self._at
        if cached is None or cached[0] is not idx:
            cached = self._at = (idx, self.sp.index(idx))
        return self.sp.take(a, cached[1])

    def update(self, idx: IntArray, p: Any, D: Any, lower: Any) -> None:
        sp = self.sp
        xp = sp.xp
        upper = sp.max(D)
        old = self._rows(self.lower, idx)
        better = lower > old
        self.prior = sp.put(
            self.prior, idx, xp.where(better[:, None], p, self._rows(self.prior, idx))
        )
        self.lower = sp.put(self.lower, idx, xp.where(better, lower, old))
        old = self._rows(self.upper, idx)
        tighter = upper < old
        self.upper_prior = sp.put(
            self.upper_prior, idx, xp.where(tighter[:, None], p, self._rows(self.upper_prior, idx))
        )
        self.upper = sp.put(self.upper, idx, xp.where(tighter, upper, old))

    def gap(self, idx: IntArray) -> FloatArray:
        """The certified gaps of elements ``idx``, on the host."""
        gap = self._rows(self.upper, idx) - self._rows(self.lower, idx)
        return np.asarray(self.sp.host(gap), dtype=np.float64)

    def target(self, idx: IntArray) -> FloatArray:
        """The gap each element of ``idx`` must meet: ``max(tol, rtol·|upper|)`` at its current
        upper end (``tol`` while that end is infinite), on the host."""
        if self.rtol <= 0.0:
            return np.full(idx.shape, self.tol)
        scale = np.abs(np.asarray(self.sp.host(self._rows(self.upper, idx)), dtype=np.float64))
        out: FloatArray = np.where(
            np.isfinite(scale), np.maximum(self.tol, self.rtol * scale), self.tol
        )
        return out

    def open(self, idx: IntArray) -> BoolArray:
        """Elements of ``idx`` whose bracket has not met its :meth:`target`."""
        out: BoolArray = self.gap(idx) > self.target(idx)
        return out


def solve(
    W: Any,
    *,
    tol: float = 1e-9,
    max_iter: int = 100_000,
    newton: bool = True,
    initial: Any | None = None,
    model: Model | None = None,
    rtol: float = 0.0,
) -> BatchSolution:
    """Certified capacities of a stack of channels.

    Parameters
    ----------
    W : (B, nx, ny) array
        Row-stochastic channels without all-zero columns: a NumPy array, or an array of
        another array-API library (solved there, on its device; other real dtypes are
        converted to float64).
    tol : float
        Target certified gap ``upper − lower`` (nats).
    max_iter : int
        Budget of BA iterations per element.
    rtol : float
        Relative target: an element is done once ``upper − lower ≤ max(tol, rtol·|upper|)`` at
        its current upper end (0: ``tol`` alone).
    newton : bool
        Whether to polish with KKT–Newton steps between BA blocks.
    initial : (B, nx) array, optional
        Starting priors (default uniform), e.g. another engine's answer to polish. Entries are
        floored at ``e^-700`` relative to the largest so that every input can regain mass.
    model : engine model, optional
        :class:`Shannon` (default) or :class:`dpcap.solvers.renyi.Sibson`: any :class:`Model`.

    Returns
    -------
    BatchSolution
        Host NumPy arrays; the bounds are the engine's own float64 evaluations, which the
        caller recertifies (:func:`dpcap.solvers.rounding.bracket`).
    """
    sp = backend.space(W)
    _, nx, ny = W.shape
    model = SHANNON if model is None else model
    if not sp.numpy:  # the library's own threads: threadpoolctl sets NumPy's and scipy's BLAS
        if W.dtype != sp.xp.float64:
            W = sp.xp.astype(W, sp.xp.float64)
        return _solve_batch(sp, W, (tol, rtol), max_iter, newton, initial, model)
    with blas_threads(nx, ny):
        return _solve_batch(sp, W, (tol, rtol), max_iter, newton, initial, model)


def _solve_batch(
    sp: Space,
    W: Any,
    rule: tuple[float, float],
    max_iter: int,
    newton: bool,
    initial: Any | None,
    model: Model,
) -> BatchSolution:
    """:func:`solve`, its BLAS threads already set; ``rule`` is ``(tol, rtol)``."""
    tol, rtol = rule
    xp = sp.xp
    B, nx, _ = W.shape
    aux = model.prepare(W)
    if initial is None:
        log_p = sp.full((B, nx), float(-np.log(nx)))
    else:
        start = sp.asarray(initial)
        log_p = xp.where(start > 0, xp.log(xp.where(start > 0, start, 1.0)), -xp.inf)
        log_p = log_p - sp.max(log_p, keepdims=True)
        log_p = xp.maximum(log_p, LOG_MASS_FLOOR)
    best = _Best(sp, _normalise(sp, log_p), tol, rtol)
    iterations = np.zeros(B, dtype=np.int64)
    active = np.arange(B)
    block, spent = FIRST_BLOCK, 0
    polishes = (kkt_newton.newton, kkt_newton.interior_point) if newton else ()
    # The batch is worked through in parts of about BLOCK_ELEMENTS entries of W: a part is a copy
    # of its elements (a single channel, or a batch that fits in one part, is never copied), so
    # every temporary of the engine is bounded by a part, whatever the size of the batch.
    per_part = max(1, BLOCK_ELEMENTS // (nx * W.shape[2]))
    while active.size and spent < max_iter:
        steps = min(block, max_iter - spent)
        for start in range(0, active.size, per_part):
            part = active[start : start + per_part]
            Wp, ap = sp.rows(W, part, B), sp.rows(aux, part, B)
            log_part = _ba_block(model, Wp, ap, sp.rows(log_p, part, B), steps, best, part)
            log_p = sp.put(log_p, part, log_part)
            iterations[part] += steps
            for polish in polishes:
                still = best.open(part)
                if not still.all():
                    part = part[still]
                    del Wp  # before the smaller copy is made: never two copies at once
                    Wp, ap = sp.rows(W, part, B), sp.rows(aux, part, B)
                if not part.size:
                    break
                p_ba = _normalise(sp, sp.rows(log_p, part, B))
                # _solve is looked up here, at each call: the linear solves can be observed
                iterations[part] += polish(model, Wp, ap, p_ba, best, part, _solve)
            del Wp, ap
        spent += steps
        active = active[best.open(active)]
        block *= 2
    lower, upper = _host(sp, best.lower), _host(sp, best.upper)
    closed = ~best.open(np.arange(B))
    return BatchSolution(
        prior=_host(sp, best.prior),
        lower=lower,
        upper=upper,
        upper_prior=_host(sp, best.upper_prior),
        status=by_element(closed),
        message=batch_message(closed, tol, max_iter),
        iterations=iterations,
    )


def _host(sp: Space, a: Any) -> FloatArray:
    """An array of the batch as a host NumPy float64 array (a copy unless it is NumPy's)."""
    if sp.numpy:
        out: FloatArray = a
        return out
    return np.array(sp.host(a), dtype=np.float64)


def _normalise(sp: Space, log_p: Any) -> Any:
    p = sp.xp.exp(log_p - sp.max(log_p, keepdims=True))
    return p / sp.sum(p, keepdims=True)


def _ba_block(
    model: Model,
    W: Any,
    aux: Any,
    log_p: Any,
    steps: int,
    best: _Best,
    idx: IntArray,
) -> Any:
    """``steps`` Blahut–Arimoto iterations in the log domain, recording every bracket."""
    sp = best.sp
    xp = sp.xp
    rate = getattr(model, "step", 1.0)
    for _ in range(steps):
        p = _normalise(sp, log_p)
        D = model.divergences(W, aux, p)
        best.update(idx, p, D, model.lower(W, aux, p, D))
        # An infinite D_x (an input reaching outputs the current output law misses) wants mass:
        # it gets the largest finite step plus one, never ∞ (∞ − ∞ would poison the iterate).
        finite = xp.isfinite(D)
        top = sp.max(xp.where(finite, D, -xp.inf), keepdims=True)
        step = xp.where(finite, D, xp.where(xp.isfinite(top), top + 1.0, 0.0))
        log_p = log_p + rate * step
        log_p = log_p - sp.max(log_p, keepdims=True)
        log_p = xp.maximum(log_p, LOG_MASS_FLOOR)
    p = _normalise(sp, log_p)
    D = model.divergences(W, aux, p)
    best.update(idx, p, D, model.lower(W, aux, p, D))
    return log_p


def _solve(system: Callable[[slice], Any], b: Any) -> Any:
    """Batched ``A x = b`` for ``A = system(slice(None))`` (``system(k)``: elements ``k``).

    Element by element robust: an element whose system is not finite gets a NaN step (the
    callers then leave it where it is); a singular one falls back to its least-squares
    solution. One bad element never stops the batch.

    Memory: systems with more than :data:`IN_PLACE_SOLVE` unknowns are built and LU-factorised
    in place one element at a time (LAPACK ``getrf`` on the transpose, then ``getrs``: no copy
    of the matrix); smaller ones are built and solved in groups of about
    :data:`BLOCK_ELEMENTS` entries. A ``b`` of another array library goes to
    :func:`dpcap.solvers.kkt_newton.solve_stack` (one batched solve of all the systems).
    """
    if not isinstance(b, np.ndarray):
        return kkt_newton.solve_stack(system, b)
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
        if np.isfinite(A).all() and np.isfinite(bk).all():  # the usual case: one pass each
            finite = np.ones(len(A), dtype=bool)
        else:
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
