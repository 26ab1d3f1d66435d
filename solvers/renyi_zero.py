"""The Rényi radius at α = 0 by a pair of linear programmes, and for 0 < α < 1 by the smooth
programme that continues the dual one (``docs/mathematics.rst`` §4).

``C_0 = max_p −log max_y Σ_{x: W_xy > 0} p_x = min_Q max_x −log Q(supp W_x)`` depends on the
channel only through its support pattern ``B = 1[W > 0]``:

* primal: ``min t`` s.t. ``Bᵀp ≤ t``, ``Σ p = 1``, ``p ≥ 0`` (a prior spreading its mass so that
  no output is reached by much of it);
* dual: ``max s`` s.t. ``B Q ≥ s``, ``Σ Q = 1``, ``Q ≥ 0`` (an output law that covers every row's
  support).

This engine returns both points; the query layer evaluates the bracket from them
(``lower = −log max_y (Bᵀp)_y``, ``upper = max_x −log (BQ)_x``), never from the solver's value.

For ``0 < α < 1`` the dual programme becomes ``max t`` s.t. ``Σ_y W_xy^α Q_y^{1−α} ≥ t``: the
same variables and constraints with concave rows instead of linear ones, which
:func:`solve_centre` solves by a primal–dual interior point, returning a prior (its multipliers)
and a centre ``Q``; the query layer again recomputes the bracket from both.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from . import blahut, divergence, renyi
from .status import EngineStatus, from_linprog

__all__ = ["CentreSolution", "ZeroSolution", "solve", "solve_centre"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ZeroSolution:
    """Raw output of :func:`solve`: a prior ``p`` (inputs) and an output law ``Q``, both on the
    simplex (clipped and renormalised), and how the two programmes stopped: the worse of their
    statuses, HiGHS's two messages and the sum of the iterations HiGHS reported (``nit``)."""

    prior: FloatArray
    output: FloatArray
    status: EngineStatus
    message: str
    iterations: int


def solve(W: FloatArray) -> ZeroSolution:
    """Solve the primal and dual α = 0 programmes of a channel ``W`` (rows are inputs)."""
    from scipy.optimize import linprog

    B = (W > 0).astype(np.float64)
    nx, ny = B.shape
    primal = linprog(
        c=np.r_[np.zeros(nx), 1.0],
        A_ub=np.c_[B.T, -np.ones(ny)],
        b_ub=np.zeros(ny),
        A_eq=np.r_[np.ones(nx), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * nx + [(None, None)],
        method="highs",
    )
    dual = linprog(
        c=np.r_[np.zeros(ny), -1.0],
        A_ub=np.c_[-B, np.ones(nx)],
        b_ub=np.zeros(nx),
        A_eq=np.r_[np.ones(ny), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * ny + [(None, None)],
        method="highs",
    )
    status = max(
        (from_linprog(primal.status), from_linprog(dual.status)),
        key=lambda s: list(EngineStatus).index(s),
    )
    message = f"primal: {primal.message}; dual: {dual.message}"
    steps = int(getattr(primal, "nit", 0) or 0) + int(getattr(dual, "nit", 0) or 0)
    uniform = np.full(nx, 1.0 / nx), np.full(ny, 1.0 / ny)
    if primal.x is None or dual.x is None or not status.usable:
        failed = EngineStatus.FAILED if status.usable else status
        return ZeroSolution(*uniform, failed, message, steps)
    p = np.maximum(primal.x[:nx], 0.0)
    Q = np.maximum(dual.x[:ny], 0.0)
    if not (np.isfinite(p).all() and np.isfinite(Q).all() and p.sum() > 0 and Q.sum() > 0):
        return ZeroSolution(*uniform, EngineStatus.FAILED, message, steps)
    return ZeroSolution(p / p.sum(), Q / Q.sum(), status, message, steps)


# ---------------------------------------------------------------------------------------------
# Small orders 0 < α < 1: the same programme, made smooth
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CentreSolution:
    """Raw output of :func:`solve_centre`: a prior ``p`` (the multipliers of the row constraints)
    and a radius centre ``Q`` (an output law), both on the simplex, with the engine's own
    evaluation of the bracket they give (the query layer recomputes it), the iterations spent
    and how the method stopped."""

    prior: FloatArray
    output: FloatArray
    lower: float
    upper: float
    iterations: int
    status: EngineStatus
    message: str


#: Fraction of the distance to the boundary of the positive orthant a step may cover.
TO_BOUNDARY = 0.99

#: Steps without a better lower or upper end after which the interior point stops (rounding).
STALL = 8


@dataclass
class _Point:
    """An iterate: centre ``Q``, ``τ = t − 1``, ``ν`` (``Σ Q = 1`` has multiplier ``β(1 + ν)``),
    multipliers ``p`` of the rows, slacks ``w = φ(Q) − t``, multipliers ``z`` of ``Q ≥ 0``."""

    Q: FloatArray
    tau: float
    nu: float
    p: FloatArray
    w: FloatArray
    z: FloatArray

    def moved(self, s: float, d: _Point) -> _Point:
        return _Point(
            self.Q + s * d.Q,
            self.tau + s * d.tau,
            self.nu + s * d.nu,
            self.p + s * d.p,
            self.w + s * d.w,
            self.z + s * d.z,
        )

    def step_to_boundary(self, d: _Point) -> float:
        """The largest step ``s ≤ 1`` keeping ``Q, p, w, z`` non-negative."""
        s = 1.0
        for x, dx in ((self.Q, d.Q), (self.p, d.p), (self.w, d.w), (self.z, d.z)):
            neg = dx < 0
            if neg.any():
                s = min(s, float(np.min(-x[neg] / dx[neg])))
        return s

    def complementarity(self) -> float:
        return (float(self.w @ self.p) + float(self.Q @ self.z)) / (len(self.p) + len(self.Q))


class _Centre:
    """The programme ``max t`` s.t. ``φ_x(Q) ≥ t``, ``Σ Q = 1``, ``Q ≥ 0`` of one channel."""

    def __init__(self, A: FloatArray, alpha: float) -> None:
        self.A, self.a, self.beta = A, alpha, 1.0 - alpha
        self.n, self.m = A.shape
        self.log_A = divergence.log(A)
        self.support = A > 0
        self.off = (~self.support).astype(np.float64)

    def start(self) -> _Point:
        n, m, a = self.n, self.m, self.a
        Q = np.full(m, 1.0 / m)
        phi = np.exp(a * self.log_A) @ Q**self.beta
        tau = 0.5 * float(phi.min()) - 1.0
        w = phi - 1.0 - tau
        p = np.full(n, 1.0 / n)
        mu = float(w @ p) / n
        return _Point(Q, tau, 0.0, p, w, np.full(m, mu) / Q)

    def certify(self, x: _Point) -> tuple[float, float]:
        """``(I_α^S(p, W), max_x D_α(W_x ‖ Q))`` at the normalised ``p`` and ``Q``."""
        prior = np.maximum(x.p, 0.0)
        centre = np.maximum(x.Q, 0.0)
        prior, centre = prior / prior.sum(), centre / centre.sum()
        lower = float(renyi.sibson_information(self.A[None], prior[None], self.a)[0])
        upper = float(np.max(divergence.renyi(self.A, centre[None, :], self.a)))
        return lower, upper

    def newton(self, x: _Point) -> _Newton:
        """The factored Newton system at ``x`` and the residuals of the KKT conditions.

        Residuals are evaluated relative to their α = 0 values (``E = V Q^{−α} − 1`` by
        expm1), so that the O(α) differences between rows of the same support keep their
        digits; the system is the augmented one in ``(ΔQ, Δp, Δτ, Δν)``: eliminating ``Δp``
        would square its condition number, and rows of the same support have gradients
        within O(α) of each other, which would cost every digit at α ≈ 1e-6.
        """
        a, beta, n, m = self.a, self.beta, self.n, self.m
        Q, p = x.Q, x.p
        log_Q = np.log(Q)
        # a vanishing Q_y (at α near 1, E overflows): K is then not finite and the step refused
        E = np.where(
            self.support, np.expm1(a * (np.where(self.support, self.log_A, 0.0) - log_Q)), 0.0
        )
        G = beta * np.where(self.support, 1.0 + E, 0.0)  # ∂φ_x/∂Q_y = β V_xy Q_y^{−α}
        h = -a * (p @ G) / Q  # Σ_x p_x ∂²φ_x/∂Q_y² (≤ 0)
        r_t = float(p.sum()) - 1.0
        r_e = float(Q.sum()) - 1.0
        r_Q = beta * (x.nu - r_t + p @ self.off - p @ E) - x.z
        r_c = E @ Q - self.off @ Q + r_e - x.tau - x.w  # φ − t − w
        K = np.zeros((m + n + 2, m + n + 2))
        iq, ip = np.arange(m), m + np.arange(n)
        K[iq, iq] = x.z / Q - h
        K[:m, m : m + n] = -G.T
        K[m : m + n, :m] = -G
        K[ip, ip] = -x.w / p
        K[m : m + n, m + n] = K[m + n, m : m + n] = 1.0
        K[:m, m + n + 1] = K[m + n + 1, :m] = beta
        return _Newton(_lu(K), r_Q, r_c, r_t, r_e, beta)

    def step(self, x: _Point) -> _Point | None:
        """One Mehrotra predictor–corrector step from ``x`` (None if the system is singular or
        the step is not finite: a mass that underflowed to 0, say; the caller then stops)."""
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            return self._step(x)

    def _step(self, x: _Point) -> _Point | None:
        try:
            system = self.newton(x)
        except np.linalg.LinAlgError:
            return None
        mu = x.complementarity()
        affine = system.direction(x, x.w * x.p, x.Q * x.z)
        s = x.step_to_boundary(affine)
        mu_aff = x.moved(s, affine).complementarity()
        sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
        d = system.direction(
            x,
            x.w * x.p + affine.w * affine.p - sigma * mu,
            x.Q * x.z + affine.Q * affine.z - sigma * mu,
        )
        s = min(1.0, TO_BOUNDARY * x.step_to_boundary(d))
        if not (np.isfinite(s) and s > 0):
            return None
        moved = x.moved(s, d)
        finite = all(np.isfinite(v).all() for v in (moved.Q, moved.p, moved.w, moved.z))
        return moved if finite and np.isfinite(moved.tau + moved.nu) else None


@dataclass(frozen=True)
class _Newton:
    lu: tuple[FloatArray, NDArray[np.int32]]
    r_Q: FloatArray
    r_c: FloatArray
    r_t: float
    r_e: float
    beta: float

    def direction(self, x: _Point, r_w: FloatArray, r_z: FloatArray) -> _Point:
        """The Newton direction for complementarity residuals ``r_w`` (of ``wp``) and ``r_z``
        (of ``Qz``); ``Δw`` and ``Δz`` are eliminated and recovered."""
        m, n = len(x.Q), len(x.p)
        rhs = np.concatenate(
            [-self.r_Q - r_z / x.Q, self.r_c + r_w / x.p, [-self.r_t, -self.beta * self.r_e]]
        )
        sol = _lu_solve(self.lu, rhs)
        dQ, dp = sol[:m], sol[m : m + n]
        dw = (-r_w - x.w * dp) / x.p
        dz = (-r_z - x.z * dQ) / x.Q
        return _Point(dQ, float(sol[m + n]), float(sol[m + n + 1]), dp, dw, dz)


def solve_centre(W: FloatArray, alpha: float, *, tol: float, max_iter: int = 200) -> CentreSolution:
    r"""The Rényi radius of order ``0 < α < 1`` as a smooth concave programme in the centre ``Q``.

    With ``V = W^α`` (entrywise, ``0^α = 0``) and ``φ_x(Q) = Σ_y V_xy Q_y^{1−α} =
    exp((α−1) D_α(W_x ‖ Q))``,

    .. math:: C_\alpha = \min_Q \max_x D_\alpha(W_x \| Q)
              = -\frac{1}{1-\alpha} \log \max_{Q \in \Delta} \min_x \varphi_x(Q),

    i.e. ``max t`` s.t. ``φ_x(Q) ≥ t`` for every input, ``Σ Q = 1``, ``Q ≥ 0``
    (``docs/mathematics.rst`` §4). Each ``φ_x`` is concave (``Q^{1−α}`` is), and at α = 0 the
    programme *is* the dual linear programme of :func:`solve` (``V = 1[W > 0]``), so it stays
    well posed as α → 0. Its Lagrange multipliers are a prior ``p``, and the dual function at
    ``p`` is ``max_Q Σ_x p_x φ_x(Q) = ‖pV‖_{1/α}`` (Hölder), i.e. Sibson's information: the
    duality gap *is* the certified bracket ``I_α^S(p, W) ≤ C_α ≤ max_x D_α(W_x ‖ Q)``.

    Why not the engine of :mod:`dpcap.solvers.blahut` at small α: it eliminates ``Q`` through
    ``Q_p ∝ (pW^α)^{1/α}``, a soft-max of ``log(pW^α)`` at temperature α. As α → 0 this map
    becomes discontinuous (it tends to the arg-max of ``pW^0``), the divergences ``D_x(p)`` vary
    like ``1/α`` along the simplex, and the Blahut–Arimoto step ``p ← p e^{D(p)}`` and the
    Newton steps overshoot between vertices. Keeping ``Q`` as a variable removes the ``1/α``.

    The method is a primal–dual interior point (Mehrotra predictor–corrector, one step length
    for all variables, fraction to the boundary 0.99) on the variables ``Q, t``, the slacks
    ``w = φ(Q) − t``, the multipliers ``p`` (rows) and ``z`` (``Q ≥ 0``) and ``ν`` (``Σ Q = 1``);
    each step solves one symmetric indefinite system of size ``|X| + |Y| + 2`` (``O((|X| +
    |Y|)³)`` a step; about 10 to 25 steps from the uniform start). The certified gap is evaluated
    at every iterate and the best lower and upper ends are kept; the method stops when the gap
    is at most ``tol``, when neither end has improved for :data:`STALL` steps (rounding) or
    after ``max_iter`` steps. All-zero columns are dropped (``Q`` is 0 there).
    """
    cols = np.flatnonzero(W.max(axis=0) > 0)
    problem = _Centre(W[:, cols], float(alpha))
    size = problem.n + problem.m + 2
    with blahut.blas_threads(size, 0):  # one LU of size N a step: N³ work, as an N × 0 channel
        return _interior_point(problem, W.shape[1], cols, tol, max_iter)


def _interior_point(
    problem: _Centre, ny: int, cols: NDArray[np.intp], tol: float, max_iter: int
) -> CentreSolution:
    x = problem.start()
    best_lower, best_upper = -np.inf, np.inf
    best_p, best_Q = x.p, x.Q
    status, iterations, stalled = EngineStatus.MAX_ITER, 0, 0
    while True:
        lower, upper = problem.certify(x)
        improved = lower > best_lower or upper < best_upper
        if lower > best_lower:
            best_lower, best_p = lower, x.p
        if upper < best_upper:
            best_upper, best_Q = upper, x.Q
        stalled = 0 if improved else stalled + 1
        if best_upper - best_lower <= tol:
            status = EngineStatus.OPTIMAL
            break
        if stalled >= STALL:
            status = EngineStatus.STALLED
            break
        if iterations >= max_iter:
            break
        following = problem.step(x)
        if following is None:
            status = EngineStatus.STALLED
            break
        x, iterations = following, iterations + 1
    prior = np.maximum(best_p, 0.0)
    centre = np.zeros(ny)
    centre[cols] = np.maximum(best_Q, 0.0)
    message = (
        f"interior point on the radius centre: gap {best_upper - best_lower:.3g} after "
        f"{iterations} steps ({status.value})"
    )
    return CentreSolution(
        prior / prior.sum(),
        centre / centre.sum(),
        best_lower,
        best_upper,
        iterations,
        status,
        message,
    )


def _lu(K: FloatArray) -> tuple[FloatArray, NDArray[np.int32]]:
    """LU factors of ``K``; a non-finite or exactly singular ``K`` raises ``LinAlgError``."""
    from scipy.linalg import LinAlgWarning, lu_factor

    if not np.isfinite(K).all():
        raise np.linalg.LinAlgError("non-finite Newton matrix")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LinAlgWarning)
        try:
            lu: tuple[FloatArray, NDArray[np.int32]] = lu_factor(K, check_finite=False)
        except LinAlgWarning as err:
            raise np.linalg.LinAlgError(str(err)) from err
    return lu


def _lu_solve(lu: tuple[FloatArray, NDArray[np.int32]], rhs: FloatArray) -> FloatArray:
    from scipy.linalg import lu_solve

    out: FloatArray = lu_solve(lu, rhs, check_finite=False)
    return out
