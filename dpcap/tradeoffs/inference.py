r"""Privacy against statistical inference with log-loss (Calmon & Fawaz 2012).

For a Markov chain ``S − X − Y`` given by ``joint[s, x] = P(S=s, X=x)``, an adversary who knows
``P_{S,X}`` and the mechanism ``P_{Y|X}`` revises its belief about S after seeing Y; with the
log-loss its average gain is ``I(S;Y)``, which the designer minimises under an expected
distortion budget ``E d(X,Y) ≤ Δ`` (Hsu et al., survey, §III-B2, eq. 14). The problem is convex:
:mod:`dpcap.solvers.inference` solves it with cvxpy, and this module recomputes the leakage of
the returned mechanism and a Lagrangian lower bound from it (``docs/mathematics.rst`` §7).

References
----------
.. [1] F. P. Calmon, N. Fawaz, "Privacy against statistical inference", Allerton 2012.
.. [2] H. Hsu, N. Martinez, M. Bertran, G. Sapiro, F. P. Calmon, "A survey on statistical,
   information and estimation-theoretic views on privacy", §III-B.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import xlogy

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ParameterError, SolverError, Status
from dpcap.privacy import dp_epsilon
from dpcap.result import DistortionResult
from dpcap.solvers import inference, mixing
from dpcap.solvers.ratedistortion import expected_distortion
from dpcap.solvers.status import INFERENCE_SOLVERS
from dpcap.tradeoffs._markov import informations, joint_problem

__all__ = ["inference_privacy"]

FloatArray = NDArray[np.float64]

DEFAULT_TOL = 1e-7


def _budget(Delta: Any) -> float:
    if isinstance(Delta, bool) or not isinstance(Delta, numbers.Real):
        raise ParameterError(f"Delta must be a real number >= 0, got {check.show(Delta)}")
    value = float(Delta)
    if math.isnan(value) or value < 0:
        raise ParameterError(f"Delta must be >= 0, got {Delta!r}")
    if not math.isfinite(value):
        raise ParameterError(f"Delta must be finite, got {Delta!r}")
    return value


def _distortion_of(W: FloatArray, px: FloatArray, d: FloatArray) -> float:
    """The expected distortion of one mechanism (the rate–distortion engine's evaluation)."""
    return float(expected_distortion(px, W[None], d)[0])


def _mix(
    W: FloatArray, nearest: FloatArray, px: FloatArray, d: FloatArray, budget: float, start: float
) -> tuple[FloatArray, float]:
    """``(1−θ) W + θ N`` at the least θ whose expected distortion, recomputed, is ≤ ``budget``.

    The expected distortion is affine in θ, so ``start = (D_W − Δ)/(D_W − D_min)`` is the
    analytic weight; :func:`dpcap.solvers.mixing.least_weight` raises it by its rounding rule
    (``docs/mathematics.rst`` §8). At θ = 1 the nearest-output mechanism N (distortion
    ``D_min ≤ Δ``) is returned.
    """

    def feasible(theta: float) -> bool:
        return _distortion_of((1.0 - theta) * W + theta * nearest, px, d) <= budget

    theta = mixing.least_weight(feasible, start)
    return (nearest, 1.0) if theta >= 1.0 else ((1.0 - theta) * W + theta * nearest, theta)


def inference_privacy(
    joint: Any,
    distortion: Any,
    /,
    Delta: float,
    *,
    solver: str = INFERENCE_SOLVERS[0],
    tol: float = DEFAULT_TOL,
    rtol: float = 0.0,
    unit: str = "nats",
) -> DistortionResult:
    r"""Privacy against statistical inference with log-loss: ``min I(S;Y)`` s.t. ``E d(X,Y) ≤ Δ``.

    Calmon & Fawaz's threat model (Hsu et al., survey, §III-B2, eq. 14): an adversary who knows
    ``P_{S,X}`` and the mechanism revises its belief about S after seeing Y; with the log-loss
    cost its average gain is ``Δc = I(S;Y)``, which the designer minimises subject to an
    expected distortion budget. The problem is convex in ``P_{Y|X}``.

    Parameters
    ----------
    joint : array_like, shape (n_private, n_data)
        ``joint[s, x] = P(S=s, X=x)``.
    distortion : array_like, shape (n_data, n_outputs)
        ``d[x, y] ≥ 0``, the cost of releasing y for x (defines the output alphabet).
    Delta : float
        The distortion budget Δ, ``≥ D_min = Σ_x P_X(x) min_y d(x, y)``.
    solver : {"CLARABEL", "ECOS", "SCS"}
        The cvxpy solver of the exponential-cone program (case-insensitive).
    tol : float
        Target certified gap ``upper − lower`` (nats).
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    unit : {"nats", "bits"}

    Returns
    -------
    DistortionResult
        ``value = upper = I(S;Y)`` of ``mechanism`` (recomputed), whose own
        ``distortion_achieved ≤ Δ``; ``lower`` is a Lagrangian bound (Notes); ``slope`` the
        multiplier s of the distortion constraint attaining it (``dI/dΔ ≈ −s``); ``dp_level``
        the mechanism's ε-DP level over all pairs of inputs. ``details`` holds ``d_min``,
        ``d_max``, ``max_gain`` (``Δc* = H(S) − min_y H(S | Y=y)``, the adversary's largest
        gain for this mechanism) and the solver's own objective.

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law.
    ParameterError
        If ``Delta`` is negative, not finite or below ``D_min``, or ``distortion`` is invalid.
    SolverError
        If the conic solver fails.

    Warns
    -----
    ConvergenceWarning
        If ``upper − lower > max(tol, rtol·upper)``.

    Notes
    -----
    ``I(S;Y) = Σ_y F(W[:, y])`` with ``F`` convex and positively homogeneous; for every law π
    on S the vector ``g_π[x] = Σ_s P(s,x) log(π_s / P_S(s))`` satisfies ``F(c) ≥ g_π·c``. With
    ``π_y`` the posterior of output y under the returned mechanism this gives
    ``I(S;Y) ≥ Σ G[x,y] W[x,y]`` for *every* mechanism W, and, by weak duality on the budget,
    ``min I(S;Y) ≥ max_{s ≥ 0} Σ_x min_y (G[x,y] + s P_X(x) d[x,y]) − s Δ``: ``lower`` is this
    bound (:func:`dpcap.solvers.inference.linearised_bound`), computed here from the mechanism,
    not read from the solver; it closes when the mechanism is optimal.

    Examples
    --------
    Releasing X = S itself under Hamming distortion: rate–distortion of S, ``log 2 − h(Δ)``.

    >>> import math
    >>> res = inference_privacy([[0.5, 0.0], [0.0, 0.5]], [[0, 1], [1, 0]], 0.1)
    >>> exact = math.log(2) + 0.1 * math.log(0.1) + 0.9 * math.log(0.9)
    >>> res.lower - 1e-9 <= exact <= res.upper + 1e-9, res.distortion_achieved <= 0.1
    (True, True)
    """
    problem = joint_problem(joint)
    d = check.cost_matrix(distortion, problem.px.shape[0], "distortion", rows_of="value of X")
    name = check.solver(solver, INFERENCE_SOLVERS)
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    divisor = check.unit_divisor(unit)
    budget = _budget(Delta)
    px = problem.px
    column_cost = px @ d
    d_min = float(px @ d.min(axis=1))
    d_max = float(column_cost.min())
    if budget < d_min - 1e-12 * max(1.0, d_min):
        raise ParameterError(
            f"Delta must be >= D_min = {d_min:.12g}, the least expected distortion of any "
            f"mechanism; got Delta={Delta!r}"
        )
    budget = max(budget, d_min)
    nearest = np.zeros_like(d)
    nearest[np.arange(d.shape[0]), np.argmin(d, axis=1)] = 1.0
    iterations, hint = 0, math.nan
    if budget >= d_max:
        W = np.zeros_like(d)
        W[:, int(np.argmin(column_cost))] = 1.0
        note, tag, objective = (
            "the constant release of the cheapest output meets Delta",
            "exact",
            0.0,
        )
    else:
        raw = inference.inference_conic(
            problem.reduced, d[problem.xs], budget, solver=name, tol=min(1e-9, tolerance)
        )
        if not raw.status.usable:
            raise SolverError(
                f"{name} failed on the inference-privacy program: {raw.message}",
                _certify.status_of(raw),
            )
        W = nearest.copy()
        W[problem.xs] = raw.mechanism
        spent = _distortion_of(W, px, d)
        tag, objective, iterations, hint = f"conic/{name}", raw.objective, 1, raw.slope
        note = f"{name}: {raw.message}, {raw.solve_time:.3g} s"
        if spent > budget:  # mix with the nearest-output mechanism (distortion D_min ≤ Δ)
            W, theta = _mix(W, nearest, px, d, budget, (spent - budget) / (spent - d_min))
            note += f"; mixed with the nearest-output mechanism by θ = {theta:.3g} to meet Delta"
    _, leakage = informations(problem, W)
    reduced = problem.reduced
    d_red = d[problem.xs]
    bound, s_at = inference.linearised_bound(
        reduced, d_red, budget, inference.posteriors_of(reduced, W[problem.xs]), hint
    )
    if leakage - bound > _certify.target(tolerance, relative, leakage) and tag != "exact":
        laws, s_dual, _ = inference.inference_dual_conic(
            reduced, d_red, budget, solver=name, tol=min(1e-9, tolerance)
        )
        if np.all(np.isfinite(laws)):
            other, s_other = inference.linearised_bound(reduced, d_red, budget, laws, s_dual)
            if other > bound:
                bound, s_at = other, s_other
                note += "; lower bound from the solved Lagrangian dual"
    lower = min(max(bound, 0.0), leakage)
    status, message = _certify.conclude(
        leakage - lower,
        tolerance,
        rtol=relative,
        upper=leakage,
        iterations=iterations,
        note=note,
        open_status=Status.INACCURATE,
    )
    py = px @ W
    used = py > 0
    posterior = (problem.joint @ W)[:, used] / py[used]
    post_entropy = -np.sum(xlogy(posterior, posterior), axis=0)
    max_gain = max(problem.hs - float(np.min(post_entropy)), 0.0)
    return DistortionResult(
        value=leakage / divisor,
        lower=lower / divisor,
        upper=leakage / divisor,
        mechanism=W,
        target=float(Delta),
        distortion_achieved=_distortion_of(W, px, d),
        dp_level=dp_epsilon(W, neighbors="all"),
        slope=s_at,
        status=status,
        iterations=iterations,
        method=tag,
        unit=unit,
        message=message,
        tol=tolerance,
        details=(
            ("d_min", d_min),
            ("d_max", d_max),
            ("max_gain", max_gain / divisor),
            ("solver_objective", objective),
        ),
    )
