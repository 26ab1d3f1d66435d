"""The certificate layer: solutions → certified brackets → statuses, messages and warnings.

Every query goes through this module, because a certificate is never taken on a solver's word
(``docs/mathematics.rst`` §1, §8):

* :func:`bracket` and :func:`batch_bracket` recompute, from the priors an engine returns, the
  bracket ``lower ≤ C ≤ upper`` of any engine model (Shannon, Sibson), mapping the exact
  reductions back to the original channel first (see ``docs/mathematics.rst`` §1);
* :func:`bracket_at_centre` pairs a prior's lower end with the radius bound at a centre of the
  solver's own, :func:`tightest` keeps the best ends of several valid brackets, :func:`capped`
  clips an upper end at ``C_∞`` (valid for every order), and :func:`radius_zero` and
  :func:`radius_infinity` certify the orders 0 and ∞; a channel whose rows are all equal
  (:func:`constant_rows`) gets the exact bracket ``[0, 0]`` from each of them;
* :func:`status_of` is the one reader of an engine's result: it maps the
  :class:`~dpcap.solvers.status.EngineStatus` of a :class:`~dpcap.solvers.status.Solution` (or
  a bare engine status) to the user's :class:`~dpcap.result.Status`, and :func:`statuses_of`
  does it per element for a batch;
* :func:`conclude` turns a bracket into a status and a message, :func:`conclude_many` does it
  for curves and batches (one status per element);
* :func:`warn` raises a :class:`~dpcap.result.ConvergenceWarning` attributed to the first frame
  outside dpcap: the user's call of the public function, whatever the depth of the call chain.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import ConvergenceWarning, Status
from dpcap.solvers import blahut, renyi, rounding
from dpcap.solvers.reduce import Reduction
from dpcap.solvers.status import EngineStatus, Solution, statuses

__all__ = [
    "Bracket",
    "U",
    "batch_bracket",
    "batch_floor",
    "bracket",
    "bracket_at_centre",
    "capped",
    "conclude",
    "conclude_many",
    "constant_rows",
    "floor",
    "gamma",
    "met",
    "ordered",
    "rounding_floor",
    "status_of",
    "statuses_of",
    "target",
    "targets",
    "tightest",
    "warn",
]

FloatArray = NDArray[np.float64]

#: The rounding model every certificate bound is written in (``docs/mathematics.rst`` §8): the
#: unit roundoff ``u = 2⁻⁵³`` of float64 and ``γ_n = n·u / (1 − n·u)``, the relative error of
#: a sum or product of ``n`` terms in any order. A query family bounds its own rounding with
#: these, never with constants of its own.
U = rounding.U
gamma = rounding.gamma

_STATUS: dict[EngineStatus, Status] = {
    EngineStatus.OPTIMAL: Status.INACCURATE,
    EngineStatus.MAX_ITER: Status.MAX_ITER,
    EngineStatus.MAX_CELLS: Status.MAX_ITER,
    EngineStatus.STALLED: Status.INACCURATE,
    EngineStatus.LOCAL: Status.INACCURATE,
    EngineStatus.INACCURATE: Status.INACCURATE,
    EngineStatus.INFEASIBLE: Status.INFEASIBLE,
    EngineStatus.FAILED: Status.FAILED,
}


def status_of(engine: EngineStatus | Solution) -> Status:
    """The status a result reports when its bracket did *not* close, given how the engine stopped.

    ``engine`` is an engine's result (a single-problem :class:`~dpcap.solvers.status.Solution`:
    its ``status`` is read) or an :class:`~dpcap.solvers.status.EngineStatus` itself. A closed
    bracket is ``converged`` whatever the engine said (the certificate decides); an open one
    says why: the engine's budget (``max_iter``, also for a mesh out of cells), its accuracy
    (``inaccurate``: stalled, local, a backend's inaccurate point, or an engine that met its
    own stopping rule while the recomputed bracket is still open), or a failure.

    Raises
    ------
    TypeError
        If ``engine`` is a batch (one status per element: use :func:`statuses_of`).
    """
    if isinstance(engine, EngineStatus):
        return _STATUS[engine]
    status = engine.status
    if not isinstance(status, EngineStatus):
        raise TypeError("a batch has one status per element: read it with statuses_of")
    return _STATUS[status]


def statuses_of(solution: Solution) -> NDArray[np.object_]:
    """:func:`status_of` per element: a ``(B,)`` object array of :class:`~dpcap.result.Status`
    for a batch's ``B`` elements (one element for a single problem)."""
    engines = statuses(solution)
    out = np.empty(engines.shape[0], dtype=object)
    out[:] = [_STATUS[engine] for engine in engines]
    return out


def _outside_dpcap() -> int:
    """The ``stacklevel`` of the first frame outside the dpcap package, seen from :func:`warn`."""
    frame: FrameType | None = sys._getframe(2)  # the caller of warn
    level = 2
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (isinstance(name, str) and (name == "dpcap" or name.startswith("dpcap."))):
            return level
        frame = frame.f_back
        level += 1
    return level


def warn(message: str, category: type[Warning] = ConvergenceWarning) -> None:
    """Warn, attributing the warning to the user's code that called the public function."""
    warnings.warn(message, category, stacklevel=_outside_dpcap())


def target(tol: float, rtol: float, upper: float) -> float:
    """The gap a bracket must meet: ``max(tol, rtol·|upper|)`` (``tol`` where ``upper`` is not
    finite, or ``rtol`` is 0). See :func:`conclude`."""
    scale = abs(upper)
    return max(tol, rtol * scale) if rtol > 0.0 and math.isfinite(scale) else tol


def targets(tol: float, rtol: float, upper: Any) -> FloatArray:
    """:func:`target` per element of an array of upper ends."""
    scale = np.abs(np.asarray(upper, dtype=np.float64))
    if rtol <= 0.0:
        return np.full(scale.shape, tol)
    out: FloatArray = np.where(np.isfinite(scale), np.maximum(tol, rtol * scale), tol)
    return out


def met(gap: Any, tol: float, rtol: float, upper: Any) -> NDArray[np.bool_]:
    """The stopping rule, per element: ``gap ≤ max(tol, rtol·|upper|)`` (see :func:`conclude`).

    The one test of a certified bracket; an engine that stops on the same rule gets its targets
    from :func:`targets`.
    """
    out: NDArray[np.bool_] = np.asarray(gap, dtype=np.float64) <= targets(tol, rtol, upper)
    return out


def _wanted(goal: float, tol: float, rtol: float) -> str:
    """The target of a message: ``tol 1e-09``, or ``max(tol 1e-09, rtol 1e-12·|upper|) = …``."""
    if rtol <= 0.0:
        return f"tol {tol:.3g}"
    return f"{goal:.3g} = max(tol {tol:.3g}, rtol {rtol:.3g}·|upper|)"


def _floor_note(gap: float, goal: float, floor: float, unit: str, absolute: bool) -> str:
    """What a message says when the target is below the bracket's rounding floor."""
    what = "tol" if absolute else "a target"
    if gap <= 2.0 * floor:
        return (
            f"the gap is at its rounding floor (~{floor:.2g} {unit}): {what} below it cannot be met"
        )
    return (
        f"the gap's rounding floor is ~{floor:.2g} {unit}: {what} below it ({goal:.3g}) cannot "
        "be met, whatever the iterations"
    )


def conclude(
    gap: float,
    tol: float,
    *,
    rtol: float = 0.0,
    upper: float | None = None,
    floor: float | Callable[[], float] | None = None,
    engine_closed: bool = False,
    iterations: int | None = None,
    note: str = "",
    open_status: Status = Status.MAX_ITER,
    unit: str = "nats",
    warn_open: bool = True,
) -> tuple[Status, str]:
    """Status and message of one certified bracket; warns when it did not close.

    The stopping rule of every certified query: a bracket ``[lower, upper]`` has converged when

        upper − lower ≤ max(tol, rtol·|upper|),

    ``tol`` an absolute target, ``rtol ∈ [0, 1)`` a relative one (0: ``tol`` alone); a
    non-finite ``upper`` leaves ``tol`` alone. Under the relative part the conservative end
    ``upper`` of a non-negative bracket is within ``rtol/(1 − rtol)`` of the true value,
    relatively (``lower ≥ (1 − rtol)·upper``). ``converged`` iff the rule holds, otherwise
    ``open_status`` and a :class:`~dpcap.result.ConvergenceWarning` (unless ``warn_open`` is
    False, for the points of a curve, which :func:`conclude_many` reports once) saying by how
    much. ``gap``, ``tol``, ``upper`` and ``floor`` are in ``unit``; ``note`` is appended to the
    message. ``upper`` is required when ``rtol`` is not 0.

    When the target is below the bracket's rounding floor (its own rounding allowance: the
    gap no iteration can remove, ``floor`` when the caller knows it, e.g. from
    :func:`floor`, and at least one ulp of ``upper``, about ``2u·|upper|``), an open message
    says so: rounding, not iterations, limits the gap. The status stays ``open_status``.
    ``floor`` may be a function of no arguments, called only when the bracket is open (a
    floor costs a bracket evaluation). ``engine_closed`` says that the engine stopped because
    its own bracket, in its own float64 arithmetic, met the rule while the certified one did
    not: its iterates resolve the gap no further, so the gap itself is the floor it reaches.
    """
    if rtol > 0.0 and upper is None:
        raise TypeError("conclude: a relative tolerance needs the bracket's upper end")
    scale = 0.0 if upper is None or not math.isfinite(upper) else abs(upper)
    goal = target(tol, rtol, scale)
    wanted = _wanted(goal, tol, rtol)
    if gap <= goal:
        status = Status.CONVERGED
        head = f"certified gap {gap:.3g} {unit} <= {wanted}"
    else:
        status = open_status
        after = "" if iterations is None else f" after {iterations} iterations"
        head = f"not converged: certified gap {gap:.3g} {unit} > {wanted}{after}"
        known = floor() if callable(floor) else floor
        bottom = float(
            rounding_floor(gap, scale, math.nan if known is None else known, engine_closed)
        )
        if goal < bottom:
            head += "; " + _floor_note(gap, goal, bottom, unit, goal == tol)
    message = f"{head}; {note}" if note else head
    if warn_open and status is not Status.CONVERGED:
        warn(message)
    return status, message


def rounding_floor(gap: Any, upper: Any, floor: Any, engine_closed: Any) -> FloatArray:
    """Per element, the least gap more iterations could reach (the test of :func:`conclude`).

    The largest of the bracket's rounding floor ``floor`` (NaN: unknown, left out), the gap
    itself where the engine closed its own bracket (``engine_closed``: its arithmetic resolves
    no further) and one ulp of ``upper`` (``2u·|upper|``). A target below it cannot be met.
    """
    known = np.asarray(floor, dtype=np.float64)
    known = np.where(np.isfinite(known), known, 0.0)
    reached = np.where(
        np.asarray(engine_closed, dtype=bool), np.asarray(gap, dtype=np.float64), 0.0
    )
    scale = np.abs(np.asarray(upper, dtype=np.float64))
    ulp = np.where(np.isfinite(scale), 2.0 * U * scale, 0.0)
    out: FloatArray = np.maximum(np.maximum(known, reached), ulp)
    return out


def conclude_many(
    status: Sequence[Status] | NDArray[np.object_],
    tol: float,
    *,
    rtol: float = 0.0,
    what: str = "points",
    note: str = "",
    rounding: int = 0,
) -> tuple[NDArray[np.object_], str]:
    """The status array and the one message of a curve or batch; warns once if any is open.

    Each element's status is decided by the rule of :func:`conclude` (by :func:`conclude`
    itself, or by :func:`met`); ``rtol`` is named in the message when it is not 0. ``rounding``
    counts the open elements whose target is below their :func:`rounding_floor`: the message
    says that rounding, not iterations, limits them.
    """
    array = np.empty(len(status), dtype=object)
    array[:] = list(status)
    total = len(array)
    open_count = sum(s is not Status.CONVERGED for s in array)
    rule = f"tol {tol:.3g}" if rtol <= 0.0 else f"max(tol {tol:.3g}, rtol {rtol:.3g}·|upper|)"
    if open_count == 0:
        head = f"all {total} {what} certified to {rule}"
    else:
        head = f"{open_count} of {total} {what} not converged to {rule}"
        if rounding:
            head += (
                f" ({rounding} of them with a target below their rounding floor: rounding, not "
                "iterations, limits them)"
            )
    message = f"{head}; {note}" if note else head
    if open_count:
        warn(message)
    return array, message


class Bracket(NamedTuple):
    """A certified bracket and the prior attaining its lower end (on the original inputs)."""

    lower: float
    upper: float
    prior: FloatArray


def bracket(
    matrix: FloatArray,
    prior: FloatArray,
    upper_prior: FloatArray | None = None,
    *,
    model: blahut.Model | None = None,
    reduction: Reduction | None = None,
) -> Bracket:
    """The certified bracket of one channel from an engine's priors, recomputed here.

    ``lower = I(prior, W)`` (Shannon) or the model's information at ``prior``; ``upper =
    max_x D(W_x ‖ q)`` at ``upper_prior`` (``prior`` when None): the radius bound, valid for
    any prior (``docs/mathematics.rst`` §1), both with their rounding allowance (§8). Priors
    given on a ``reduction``'s channel are first mapped back to ``matrix``'s inputs; ``upper``
    is never below ``lower``.
    """
    if reduction is not None:
        prior = reduction.prior_back(prior)
        upper_prior = None if upper_prior is None else reduction.prior_back(upper_prior)
    lower, upper = batch_bracket(
        matrix[None], prior[None], None if upper_prior is None else upper_prior[None], model=model
    )
    return Bracket(float(lower[0]), float(upper[0]), prior)


def batch_bracket(
    stack: FloatArray,
    prior: FloatArray,
    upper_prior: FloatArray | None = None,
    *,
    model: blahut.Model | None = None,
) -> tuple[FloatArray, FloatArray]:
    """``(lower, upper)`` arrays of a stack ``(B, nx, ny)`` from the engine's priors ``(B, nx)``.

    Evaluated by :func:`dpcap.solvers.rounding.bracket`: both ends carry a rigorous bound on
    their own rounding, so ``lower ≤ C ≤ upper`` holds in floating point, for the channel whose
    rows are the stored rows divided by their exact sums (``docs/mathematics.rst`` §8).
    """
    model = blahut.SHANNON if model is None else model
    alpha = 1.0 if isinstance(model, blahut.Shannon) else getattr(model, "alpha", None)
    if alpha is None:  # a model without an order: its own float64 formulas, no allowance
        _, lower, upper = blahut.bracket(stack, prior, model)
        if upper_prior is not None:
            *_, upper = blahut.bracket(stack, upper_prior, model)
        return lower, np.maximum(upper, lower)
    lower, upper = rounding.bracket(stack, prior, upper_prior, float(alpha))
    same = constant_rows(stack)  # C_α = 0 exactly: [0, 0], not [0, rounding slack]
    return np.where(same, 0.0, lower), np.where(same, 0.0, upper)


def floor(
    matrix: FloatArray,
    prior: FloatArray,
    upper_prior: FloatArray | None = None,
    *,
    model: blahut.Model | None = None,
    reduction: Reduction | None = None,
) -> float:
    """The rounding floor of :func:`bracket`'s bracket at these priors (same arguments).

    The part of its gap that is the rounding allowance of its two ends
    (:func:`dpcap.solvers.rounding.floor`): what remains at an optimal prior, the smallest gap
    more iterations could reach. :func:`conclude` names it when a target is below it. NaN for
    a model without an order (no allowance is known), 0 for identical rows.
    """
    if reduction is not None:
        prior = reduction.prior_back(prior)
        upper_prior = None if upper_prior is None else reduction.prior_back(upper_prior)
    return float(
        batch_floor(
            matrix[None],
            prior[None],
            None if upper_prior is None else upper_prior[None],
            model=model,
        )[0]
    )


def batch_floor(
    stack: FloatArray,
    prior: FloatArray,
    upper_prior: FloatArray | None = None,
    *,
    model: blahut.Model | None = None,
) -> FloatArray:
    """:func:`floor` of each element of a stack ``(B, nx, ny)`` (NaN: no allowance known)."""
    model = blahut.SHANNON if model is None else model
    alpha = 1.0 if isinstance(model, blahut.Shannon) else getattr(model, "alpha", None)
    if alpha is None:
        return np.full(stack.shape[0], np.nan)
    out = rounding.floor(stack, prior, upper_prior, float(alpha))
    result: FloatArray = np.where(constant_rows(stack), 0.0, out)
    return result


def constant_rows(stack: FloatArray) -> NDArray[np.bool_]:
    """Per channel of a stack ``(B, nx, ny)`` (or one channel ``(nx, ny)``, a 0-d answer): are
    all its rows the same float vector?

    Then every capacity is exactly 0, and its bracket ``[0, 0]``: rows ``W_x = w`` for every x
    (still equal once divided by their exact sums, the channel a certificate speaks of) make Y
    independent of X under every prior, so every α-information (Shannon, Sibson, Arimoto,
    Augustin) is 0, and the radius ``max_x D_α(W_x ‖ w)`` is 0 too. A 1 × n channel, and an
    n × 1 one (every row is ``[1]``), are the simplest cases. The general bounds would give
    ``[0, 1e-300]`` (an absolute slack for subnormal rounding) or ``[0, 5e-324]`` (the float
    above ``log 1``) there.
    """
    same: NDArray[np.bool_] = np.all(stack == stack[..., :1, :], axis=(-2, -1))
    return same


def ordered(lower: float, upper: float, prior: FloatArray) -> Bracket:
    """A bracket from two bounds, swapped if they cross.

    Each end is a bound of its own, so crossing ends mean a rounding allowance fell short
    somewhere: swapping keeps both numbers and makes the gap show the inconsistency (which
    :func:`conclude` then reports if it exceeds the tolerance), where clamping would report a
    zero-width, "converged" bracket.
    """
    return Bracket(min(lower, upper), max(lower, upper), prior)


def capped(matrix: FloatArray, bracket: Bracket) -> Bracket:
    """``bracket`` with its upper end clipped at :func:`dpcap.solvers.renyi.radius_cap`.

    ``C_α ≤ C_∞ ≤ log min(|X|, |Y|)`` for every order (``docs/mathematics.rst`` §4), so the cap
    is a certificate of its own; a lower end above it (rounding) is lowered to it. A channel
    with identical rows has ``C_α = 0`` exactly (:func:`constant_rows`): ``[0, 0]``.
    """
    if constant_rows(matrix):
        return Bracket(0.0, 0.0, bracket.prior)
    return ordered(bracket.lower, min(bracket.upper, renyi.radius_cap(matrix)), bracket.prior)


def bracket_at_centre(
    matrix: FloatArray, prior: FloatArray, centre: FloatArray, alpha: float
) -> Bracket:
    """``I_α^S(p, W) ≤ C_α ≤ max_x D_α(W_x ‖ Q)`` at a prior and a centre of their own.

    The radius bound holds for every output law ``Q`` (``docs/mathematics.rst`` §4); it is
    evaluated with its rounding allowance by :func:`dpcap.solvers.rounding.divergence_bounds`,
    the lower end by :func:`bracket` (which centres its own upper end on
    ``Q_p ∝ (pW^α)^{1/α}``, a map whose rounding is amplified by 1/α: hence a centre here).
    """
    lower, upper, prior = bracket(matrix, prior, model=renyi.Sibson(alpha))
    _, high = rounding.divergence_bounds(matrix[None], centre[None], alpha)
    upper = min(upper, float(np.max(high)))
    return ordered(lower, upper, prior)


def tightest(brackets: list[Bracket]) -> Bracket:
    """The tightest bracket from several valid ones: the largest lower end (with its prior)
    and the smallest upper end."""
    top = max(brackets, key=lambda b: b.lower)
    upper = min(b.upper for b in brackets)
    return ordered(top.lower, upper, top.prior)


def radius_infinity(matrix: FloatArray) -> Bracket:
    """The bracket of ``C_∞ = log Σ_y max_x W_xy`` (``docs/mathematics.rst`` §4), rounded out.

    The upper end is :func:`dpcap.solvers.renyi.radius_cap`; the lower end divides the float
    sum of the column maxima by its summation bound ``1 + γ_k`` and by the largest row sum
    ``1 + σ`` (§8). The uniform prior attains ``C_∞``. Identical rows (:func:`constant_rows`,
    a 1 × 1 channel among them): ``C_∞ = log Σ_y w_y = log 1 = 0`` exactly, ``[0, 0]``.
    """
    nx, ny = matrix.shape
    if constant_rows(matrix):
        return Bracket(0.0, 0.0, np.full(nx, 1.0 / nx))
    g = rounding.gamma(ny + 2)
    total = float(np.sum(np.max(matrix, axis=0)))
    sigma = float(np.max(np.abs(matrix.sum(axis=1) - 1.0))) + g
    log_total = float(np.log(total))
    lower = log_total + float(np.log1p(-g)) - float(np.log1p(sigma))
    lower = max(lower - 4.0 * rounding.U * abs(log_total), 0.0)
    return ordered(lower, renyi.radius_cap(matrix), np.full(nx, 1.0 / nx))


def radius_zero(matrix: FloatArray) -> Bracket:
    """The certified bracket of the Rényi radius at α = 0 (``docs/mathematics.rst`` §4).

    From the primal prior ``p`` and dual output law ``Q`` of :mod:`dpcap.solvers.renyi_zero`,
    re-evaluated here: ``lower = −log max_y P_p(supp W_{·y})`` (a value attained by ``p``) and
    ``upper = max_x −log Q(supp W_x)`` (a radius bound valid for any ``Q``), each moved outward
    by the rounding of its sums and log (§8).

    Raises
    ------
    SolverError
        If either linear programme returned no point.
    """
    from dpcap.errors import SolverError
    from dpcap.solvers import renyi_zero

    solution = renyi_zero.solve(matrix)
    if not solution.status.usable:
        raise SolverError(
            f"the α = 0 linear programme failed: {solution.message}", status_of(solution)
        )
    B = (matrix > 0).astype(np.float64)
    nx, ny = matrix.shape
    g = rounding.gamma(max(nx, ny) + 2)  # the sums below, and the normalisations of p and Q
    reached = (
        float(np.max(solution.prior @ B)) * (1.0 + g) / (float(solution.prior.sum()) * (1.0 - g))
    )
    lower = max(-np.log(reached) - 4.0 * rounding.U * abs(np.log(reached)), 0.0) + 0.0
    covered = (B @ solution.output) * (1.0 - g) / (float(solution.output.sum()) * (1.0 + g))
    if (covered <= 0).any():
        upper = np.inf
    else:
        worst = -np.log(float(np.min(covered)))
        upper = worst + 4.0 * rounding.U * abs(worst) + 0.0  # + 0.0 turns −0.0 into 0.0
    return ordered(float(lower), float(upper), solution.prior)
