"""Risk–distortion ``R(D)`` (Mir) and mutual-information privacy–distortion (Wang–Ying–Zhang).

For a prior ``p`` on inputs and a distortion ``d[x, y] ≥ 0`` (the cost of releasing y for x),

    R(D) = min { I(p, W) : E_{p,W} d(X, Y) ≤ D },

the least information a mechanism must leak to stay within expected distortion D: Mir's privacy
risk–distortion function (Mir 2012, eq. 4), Shannon's rate–distortion function, and Wang, Ying
and Zhang's mutual-information privacy–distortion function for a database prior. It is convex
and non-increasing on ``[D_min, D_max]`` and 0 from ``D_max`` on, with

    D_min = Σ_x p_x min_y d(x, y),     D_max = min_y Σ_x p_x d(x, y).

At slope ``dR/dD = −s`` the optimal mechanism is the exponential mechanism
``W[x, y] ∝ q_y e^{−s d(x, y)}`` (Mir, Thm 3) for its own output law ``q``; Blahut's algorithm
(:mod:`dpcap.solvers.ratedistortion`) finds it for a given s. Users give D, never s: the slope is
found by a monotone search (:mod:`dpcap.tradeoffs._rd_search`), because the distortion ``D_s`` of
the optimum is non-increasing in s (``docs/mathematics.rst`` §5).

Every answer is a bracket recomputed from the objects the engine returns:

* **upper**: ``I(p, W)`` of a mechanism W whose own expected distortion is ``≤ D`` (feasible,
  so ``R(D) ≤ I(p, W)``); ``value`` is this conservative end (a leakage is never
  under-reported).
* **lower**: Blahut's dual line. For every slope ``s ≥ 0`` and output law ``q``, with
  ``c_x = Σ_y q_y e^{−s d0(x,y)}`` and ``d0`` the distortion less its row minima,
  ``R(D) ≥ −s (D − D_min) − Σ_x p_x log c_x − log max_y Σ_x p_x e^{−s d0(x,y)} / c_x``
  *for every D*, so the lines of all the slopes tried are evaluated at the requested D itself.

Points and curves are separate functions: :func:`rate_distortion` and
:func:`mi_privacy_distortion` return a :class:`~dpcap.result.DistortionResult`,
:func:`rate_distortion_curve` and :func:`mi_privacy_distortion_curve` a
:class:`~dpcap.result.CurveResult`.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ParameterError, Status
from dpcap.privacy import dp_epsilon
from dpcap.result import CurveResult, DistortionResult, curve_arrays
from dpcap.tradeoffs import _rd_search as rd

__all__ = [
    "mi_privacy_distortion",
    "mi_privacy_distortion_curve",
    "rate_distortion",
    "rate_distortion_curve",
]

FloatArray = NDArray[np.float64]

METHOD = "blahut"

#: The stopping rule ``(tol, rtol)`` (:func:`dpcap._core.certify.conclude`).
Rule = tuple[float, float]
DEFAULT_POINTS = 25

#: A requested D this far below D_min (relative to max(1, |D_min|)) is read as D_min: the
#: rounding of ``Σ_x p_x min_y d`` computed by the caller in another order.
D_MIN_SLACK = 1e-12


def _target(D: Any, problem: rd.Problem, curve: str) -> float:
    if isinstance(D, bool) or not isinstance(D, numbers.Real) or not math.isfinite(float(D)):
        hint = f" (for the whole curve, call {curve})" if D is None else ""
        raise ParameterError(f"D must be a finite real number, got {check.show(D)}{hint}")
    value = float(D)
    slack = D_MIN_SLACK * max(1.0, abs(problem.d_min))
    if value < problem.d_min - slack:
        raise ParameterError(
            f"D must be >= D_min = {problem.d_min:.12g}, the least expected distortion of any "
            f"mechanism (R is finite on [D_min, D_max] = [{problem.d_min:.12g}, "
            f"{problem.d_max:.12g}] and 0 beyond); got D={value!r}"
        )
    return max(value, problem.d_min)


def _point_result(
    problem: rd.Problem,
    *,
    mechanism: FloatArray,
    target: float,
    upper: float,
    lower: float,
    slope: float,
    iterations: int,
    tol: float,
    unit: str,
    status: Status,
    message: str,
    details: tuple[tuple[str, float], ...],
) -> DistortionResult:
    divisor = check.unit_divisor(unit)
    lower = max(lower, 0.0)
    upper = max(upper, lower)
    return DistortionResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        mechanism=mechanism,
        target=target,
        distortion_achieved=problem.expected(mechanism),
        dp_level=dp_epsilon(mechanism, neighbors="all"),
        slope=slope,
        status=status,
        iterations=iterations,
        method=METHOD,
        unit=unit,
        message=message,
        tol=tol,
        details=(("d_min", problem.d_min), ("d_max", problem.d_max), *details),
    )


def _at(problem: rd.Problem, D: float, rule: Rule, budget: int, unit: str) -> DistortionResult:
    """``R(D)`` at one distortion level, to the rule ``(tol, rtol)``."""
    tol, rtol = rule
    constant = rd.constant_point(problem)
    if problem.d_max <= D or constant.distortion <= D:
        status, message = _certify.conclude(
            0.0, tol, iterations=0, note="D >= D_max: the constant mechanism, R = 0"
        )
        return _point_result(
            problem,
            mechanism=constant.mechanism,
            target=D,
            upper=0.0,
            lower=0.0,
            slope=0.0,
            iterations=0,
            tol=tol,
            unit=unit,
            status=status,
            message=message,
            details=(("solves", 0.0),),
        )
    if problem.d_min >= D:
        (pt,) = rd.solve(problem, np.array([np.inf]), None, tol, budget, rtol)
        status, message = _certify.conclude(
            pt.information - pt.intercept,
            tol,
            rtol=rtol,
            upper=pt.information,
            iterations=pt.iterations,
            note="D = D_min: slope s = inf (every input released at a distortion-minimising "
            "output)",
        )
        return _point_result(
            problem,
            mechanism=pt.mechanism,
            target=D,
            upper=pt.information,
            lower=pt.intercept,
            slope=math.inf,
            iterations=pt.iterations,
            tol=tol,
            unit=unit,
            status=status,
            message=message,
            details=(("solves", 1.0),),
        )
    answer = rd.search(problem, D, tol, budget, rtol)
    if answer.theta is None:
        note = f"exponential mechanism at slope s = {answer.slope:.12g}"
        extra: tuple[tuple[str, float], ...] = (("solves", float(answer.solves)),)
    else:
        note = (
            f"mixture (weight {answer.theta:.6g}) of the exponential mechanisms on either side "
            f"of D; dual slope s = {answer.slope:.12g}"
        )
        extra = (("solves", float(answer.solves)), ("mixture_weight", answer.theta))
    note += f" after {answer.solves} engine solves"
    # Open with budget to spare: D_s cannot be placed closer to D in floating point (a slope so
    # large that the rounding of D − D_min, times s, exceeds tol).
    status, message = _certify.conclude(
        answer.upper - answer.lower,
        tol,
        rtol=rtol,
        upper=answer.upper,
        iterations=answer.iterations,
        note=note,
        open_status=Status.MAX_ITER if answer.exhausted else Status.INACCURATE,
    )
    return _point_result(
        problem,
        mechanism=answer.mechanism,
        target=D,
        upper=answer.upper,
        lower=answer.lower,
        slope=answer.slope,
        iterations=answer.iterations,
        tol=tol,
        unit=unit,
        status=status,
        message=message,
        details=extra,
    )


def _curve(problem: rd.Problem, n_points: int, rule: Rule, budget: int, unit: str) -> CurveResult:
    """``R`` sampled between ``D_min`` and ``D_max`` where the curve bends."""
    tol, rtol = rule
    results = []
    for pt in rd.sample(problem, n_points, tol, budget, rtol):
        lower = rd.own_lower(pt, problem.d_min)
        status, message = _certify.conclude(
            pt.information - max(lower, 0.0),
            tol,
            rtol=rtol,
            upper=pt.information,
            iterations=pt.iterations,
            note=f"slope s = {pt.slope:.12g}",
            warn_open=False,
        )
        results.append(
            _point_result(
                problem,
                mechanism=pt.mechanism,
                target=pt.distortion,
                upper=pt.information,
                lower=lower,
                slope=pt.slope,
                iterations=pt.iterations,
                tol=tol,
                unit=unit,
                status=status,
                message=message,
                details=(),
            )
        )
    points = tuple(results)
    arrays = curve_arrays(points)
    statuses, message = _certify.conclude_many(
        arrays["status"],
        tol,
        rtol=rtol,
        note=f"on [D_min, D_max] = [{problem.d_min:.6g}, {problem.d_max:.6g}]",
    )
    return CurveResult(
        D=np.array([r.distortion_achieved for r in points]),
        value=arrays["value"],
        lower=arrays["lower"],
        upper=arrays["upper"],
        status=statuses,
        iterations=arrays["iterations"],
        points=points,
        method=METHOD,
        unit=unit,
        message=message,
        tol=tol,
    )


def _rule(rule: tuple[Any, Any]) -> Rule:
    """The validated ``(tol, rtol)``."""
    return check.tolerance(rule[0]), check.rtol(rule[1])


def _point(
    prior: Any,
    distortion: Any,
    D: Any,
    rule: tuple[Any, Any],
    max_iter: Any,
    unit: str,
    joint: bool,
) -> DistortionResult:
    problem = rd.build(prior, distortion, joint=joint)
    checked = _rule(rule)
    budget = check.max_iter(max_iter)
    check.unit_divisor(unit)
    curve = "mi_privacy_distortion_curve" if joint else "rate_distortion_curve"
    return _at(problem, _target(D, problem, curve), checked, budget, unit)


def _sampled(
    prior: Any,
    distortion: Any,
    n_points: Any,
    rule: tuple[Any, Any],
    max_iter: Any,
    unit: str,
    joint: bool,
) -> CurveResult:
    problem = rd.build(prior, distortion, joint=joint)
    checked = _rule(rule)
    budget = check.max_iter(max_iter)
    check.unit_divisor(unit)
    points = check.integer(n_points, "n_points", 2)
    return _curve(problem, points, checked, budget, unit)


def rate_distortion(
    prior: Any,
    distortion: Any,
    /,
    D: float,
    *,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> DistortionResult:
    r"""Mir's risk–distortion function ``R(D) = min_{W: E d ≤ D} I(p, W)``, certified.

    Parameters
    ----------
    prior : (n_inputs,) array_like
        The input law ``p`` (non-negative, summing to 1 within 1e-9).
    distortion : (n_inputs, n_outputs) array_like
        ``distortion[x, y] = d(x, y)``, the cost of releasing y for x: finite, non-negative.
    D : float
        The distortion budget. ``D_min ≤ D``; for ``D ≥ D_max``, ``R(D) = 0`` (the constant
        mechanism). For the whole curve, see :func:`rate_distortion_curve`.
    tol : float
        Target certified gap ``upper − lower`` (nats).
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    max_iter : int, optional
        Budget of Blahut iterations per slope (default 100,000).
    unit : {"nats", "bits"}
        Unit of ``value``, ``lower``, ``upper``. ``slope`` stays in nats per unit distortion
        (it is the exponential mechanism's parameter, like ``dp_level``).

    Returns
    -------
    DistortionResult
        ``value = upper = I(p, mechanism)``, the leakage of a mechanism whose expected
        distortion ``distortion_achieved`` is ``≤ D`` (the conservative end: ``R(D) ≤ upper``),
        ``lower ≤ R(D)`` from Blahut's dual line evaluated at D itself; ``mechanism`` is the
        exponential mechanism ``W[x, y] ∝ q_y e^{−s d(x, y)}`` and ``slope`` its s
        (``dR/dD = −s``); ``dp_level`` its exact ε-DP level over all pairs of inputs
        (``dp_epsilon(mechanism, neighbors="all")``). ``details`` holds ``d_min``, ``d_max``, the
        number of engine ``solves``, and ``mixture_weight`` in the rare case described in Notes.

    Raises
    ------
    PriorError
        If ``prior`` is not a probability vector.
    ParameterError
        If ``distortion`` has the wrong shape or a negative, NaN or infinite entry; if
        ``D < D_min`` (no mechanism is that accurate) or is not a finite number (None
        included); if ``tol``, ``rtol``, ``max_iter`` or ``unit`` is invalid.

    Warns
    -----
    ConvergenceWarning
        If the bracket did not close to ``max(tol, rtol·upper)``: status ``max_iter`` when an
        engine solve spent
        its budget, ``inaccurate`` when floating point cannot place ``D_s`` close enough to D
        (a slope so large that the rounding of ``D − D_min``, times s, exceeds ``tol``: e.g.
        distortions of 1e-11 next to 1). The bracket is valid either way.

    Notes
    -----
    *Optimal mechanism* (Mir 2012, Thm 3; Blahut 1972; ``docs/mathematics.rst`` §5). At slope
    s the minimiser of ``I(p, W) + s E d`` is ``W[x, y] = q_y e^{−s d(x,y)} / c_x`` where
    ``q = pW`` is its own output law; it is found by Blahut's iteration
    ``q_y ← q_y Σ_x p_x e^{−s d(x,y)} / c_x`` (:mod:`dpcap.solvers.ratedistortion`, with a
    Newton polish).

    *Certificate.* With ``d0 = d − min_y d`` (row-wise), for every ``s ≥ 0`` and every ``q``,

    .. math:: R(D) \ge -s (D - D_{min}) - \sum_x p_x \log c_x
              - \log \max_y \sum_x p_x e^{-s d_0(x,y)} / c_x,
              \qquad c_x = \sum_y q_y e^{-s d_0(x,y)},

    for every D (Blahut 1972; Csiszár 1974; Cover & Thomas §10.8): a line of slope −s below the
    convex R. It is evaluated at the requested D, not only at the point ``D_s`` the mechanism
    reaches, so ``lower ≤ R(D) ≤ upper`` holds at D itself (``D − D_min`` is widened by
    ``8ε(|D| + |D_min|)`` for its rounding, which the slope multiplies). The slope is found by a
    search (a grid of slopes, then Illinois regula falsi in ``log s``) on the monotone map
    ``s ↦ D_s`` until a feasible mechanism (``D_s ≤ D``) and the best line meet within
    ``max(tol, rtol·upper)``; the gap is ``(I − line at D_s) + s (D − D_s)``. Where ``D_s`` jumps
    across D (R linear around D), or moves with the engine's rounding rather than with s (near a
    slope at which an output leaves the optimal support), no single slope hits D closely enough: the
    mechanism is then the mixture of the two exponential mechanisms on either side, with the least
    weight on the infeasible one that keeps the distortion ``≤ D`` (the rounding rule of
    ``docs/mathematics.rst`` §8; I is convex in W, so it leaks at most their chord); ``slope`` is
    then the s of the dual line and ``details`` holds the ``mixture_weight`` (the weight of the
    mechanism beyond D).

    *Privacy* (Mir 2012, Thm 4, from McSherry–Talwar): the exponential mechanism at slope s is
    ``2 s Δd``-differentially private, ``Δd = max_y max_{x, x'} |d(x,y) − d(x',y)|`` over the
    pairs of inputs considered neighbours (here all of them). ``dp_level`` is the exact level
    of the returned matrix, ``≤ 2 s Δd`` (for ``s Δd`` beyond ~700 the smallest entries
    underflow to 0 in floating point, and the level of the stored matrix is then ∞).

    References
    ----------
    D. J. Mir, "Information-theoretic foundations of differential privacy", FPS 2012: eq. (4),
    Thm 2 (convex, non-increasing), Thm 3 (exponential form), Thm 4, Fig. 1.
    R. E. Blahut, "Computation of channel capacity and rate-distortion functions", IEEE Trans.
    Inf. Theory 18(4), 1972. I. Csiszár, "On the computation of rate-distortion functions",
    IEEE Trans. Inf. Theory 20(1), 1974. T. M. Cover and J. A. Thomas, *Elements of Information
    Theory*, 2nd ed., §10.3 (binary source, Hamming distortion), §10.8.

    Examples
    --------
    A fair bit with Hamming distortion: ``R(D) = log 2 − h(D)``, the optimal mechanism is
    randomized response with ``ε = s = log((1 − D)/D)``.

    >>> import math
    >>> res = rate_distortion([0.5, 0.5], [[0, 1], [1, 0]], 0.1)
    >>> h = -0.1 * math.log(0.1) - 0.9 * math.log(0.9)
    >>> abs(res.value - (math.log(2) - h)) < 1e-8, res.lower <= math.log(2) - h <= res.upper
    (True, True)
    >>> round(res.slope, 6), round(res.dp_level, 6), round(math.log(9), 6)
    (2.197225, 2.197225, 2.197225)
    """
    return _point(prior, distortion, D, (tol, rtol), max_iter, unit, joint=False)


def rate_distortion_curve(
    prior: Any,
    distortion: Any,
    /,
    *,
    n_points: int = DEFAULT_POINTS,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CurveResult:
    """The whole risk–distortion curve ``D ↦ R(D)`` on ``[D_min, D_max]``, certified per point.

    Parameters
    ----------
    prior, distortion, tol, rtol, max_iter, unit
        As for :func:`rate_distortion` (the rule applies to each point).
    n_points : int
        Number of points (default 25, at least 2: ``D_min`` and ``D_max``). Fewer are returned
        only when the curve is a straight line between points.

    Returns
    -------
    CurveResult
        ``D`` the distortions achieved (increasing, from ``D_min`` to ``D_max``),
        ``value``/``lower``/``upper`` the bracket of ``R`` at each, one status per point, and
        ``curve[k]`` (also ``points[k]``) the :class:`~dpcap.result.DistortionResult` of point
        k (``target`` = its own distortion, ``slope`` its s).

    Raises
    ------
    PriorError, ParameterError
        As for :func:`rate_distortion`; also if ``n_points`` is not an integer ``≥ 2``.

    Warns
    -----
    ConvergenceWarning
        Once, if some point's bracket did not close to its target.

    Notes
    -----
    The points are exponential mechanisms at slopes chosen where the curve bends: starting
    from ``s = ∞`` (``D_min``) and ``s = 0`` (``D_max``), each round solves at the chord slopes
    of the segments whose triangle between the chord (above R, by convexity) and the two dual
    lines (below R) is largest (``docs/mathematics.rst`` §5). Each point is certified at its own
    distortion.

    Examples
    --------
    >>> import math
    >>> curve = rate_distortion_curve([0.5, 0.5], [[0, 1], [1, 0]], n_points=5)
    >>> len(curve), float(curve.D[0]), float(curve.D[-1])
    (5, 0.0, 0.5)
    >>> bool(abs(curve.value[0] - math.log(2)) < 1e-9), curve[-1].value
    (True, 0.0)
    """
    return _sampled(prior, distortion, n_points, (tol, rtol), max_iter, unit, joint=False)


def mi_privacy_distortion(
    prior: Any,
    distortion: Any,
    /,
    D: float,
    *,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> DistortionResult:
    """Wang–Ying–Zhang's mutual-information privacy–distortion function of a database.

    The least mutual-information privacy (MIP) leakage ``I(X; Y)`` of a mechanism on the
    database domain whose expected distortion is at most D (Ünsal & Önen §5, eqs. 53–56):

        min_{P_{Y|X}} I(X; Y)   s.t.   E d(X, Y) ≤ D,

    i.e. the rate–distortion function of the database prior: this is :func:`rate_distortion`
    with the database law as the source, and returns the same results.

    Parameters
    ----------
    prior : array_like
        The law of the database ``X = (X_1, …, X_n)``: a probability vector over the rows of
        ``distortion``, or a joint law of shape ``(m_1, …, m_n)``, whose database ``x^n`` is row
        ``numpy.ravel_multi_index(x^n, shape)`` (C order), as everywhere in dpcap.
    distortion : (n_databases, n_outputs) array_like
        ``d(x, y) ≥ 0``, e.g. the Hamming distance between the database x and a released
        database y (Wang–Ying–Zhang's choice).
    D, tol, rtol, max_iter, unit
        As for :func:`rate_distortion`. For the whole curve, see
        :func:`mi_privacy_distortion_curve`.

    Returns
    -------
    DistortionResult
        As for :func:`rate_distortion`: ``value`` is the conservative (upper) end, the
        mechanism attains it, and ``dp_level`` is its exact ε-DP level over all pairs of
        databases (use :func:`dpcap.dp_epsilon` with ``neighbors="hamming"`` on the mechanism
        for the level under the usual neighbour relation).

    Raises
    ------
    PriorError, ParameterError
        As for :func:`rate_distortion`.

    Notes
    -----
    Wang, Ying and Zhang compare this MIP–distortion trade-off with the ε-DP one,
    ``ε*(D)`` (the least ε of a mechanism with distortion ≤ D, an LP: see
    :func:`dpcap.privacy_distortion`), and with identifiability; with Hamming distortion they
    show that the privacy–distortion functions satisfy ``ε*(D) ≤ ε_i*(D) ≤ ε*(D) + 2 ε_X``
    where ``ε_X`` is the largest log-ratio of the prior on neighbouring databases (Ünsal &
    Önen, eqs. 57–58; Wang, Ying & Zhang 2016). The optimiser here is an exponential
    mechanism (Mir, Thm 3), hence ``2 s Δd``-DP.

    References
    ----------
    W. Wang, L. Ying and J. Zhang, "On the relation between identifiability, differential
    privacy and mutual-information privacy", IEEE Trans. Inf. Theory 62(9), 5018–5029, 2016.
    B. Ünsal and M. Önen, "Information-theoretic approaches to differential privacy", §5.
    D. J. Mir, "Information-theoretic foundations of differential privacy", FPS 2012.

    Examples
    --------
    Two independent fair bits, released as two bits with Hamming distance as the distortion:
    ``R(D) = 2 (log 2 − h(D/2))`` (one binary rate–distortion problem per bit).

    >>> import math
    >>> import numpy as np
    >>> bits = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> hamming = (bits[:, None, :] != bits[None, :, :]).sum(axis=-1)
    >>> res = mi_privacy_distortion(np.full((2, 2), 0.25), hamming, 0.2)
    >>> h = -0.1 * math.log(0.1) - 0.9 * math.log(0.9)
    >>> res.lower <= 2 * (math.log(2) - h) <= res.upper
    True
    """
    return _point(prior, distortion, D, (tol, rtol), max_iter, unit, joint=True)


def mi_privacy_distortion_curve(
    prior: Any,
    distortion: Any,
    /,
    *,
    n_points: int = DEFAULT_POINTS,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int | None = None,
    unit: str = "nats",
) -> CurveResult:
    """The whole mutual-information privacy–distortion curve of a database, certified per point.

    :func:`rate_distortion_curve` with the database law as the source (a probability vector or
    a joint law of shape ``(m_1, …, m_n)``, as in :func:`mi_privacy_distortion`).

    Parameters
    ----------
    prior, distortion
        As for :func:`mi_privacy_distortion`.
    n_points, tol, rtol, max_iter, unit
        As for :func:`rate_distortion_curve`.

    Returns
    -------
    CurveResult
        As for :func:`rate_distortion_curve`.

    Raises
    ------
    PriorError, ParameterError
        As for :func:`rate_distortion_curve`.

    Warns
    -----
    ConvergenceWarning
        Once, if some point's bracket did not close to its target.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> bits = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> hamming = (bits[:, None, :] != bits[None, :, :]).sum(axis=-1)
    >>> curve = mi_privacy_distortion_curve(np.full((2, 2), 0.25), hamming, n_points=5)
    >>> bool(abs(curve.value[0] - 2 * math.log(2)) < 1e-9), float(curve.D[-1])
    (True, 1.0)
    """
    return _sampled(prior, distortion, n_points, (tol, rtol), max_iter, unit, joint=True)
