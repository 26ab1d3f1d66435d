r"""Least-loss ε-DP mechanisms: ``d*(ε)``, with a certified bracket and a verified mechanism.

For a prior ``p`` on the databases (rows) and a loss ``ℓ(x, y)``, the least expected loss of an
ε-DP mechanism is a linear program in the mechanism ``W`` (``docs/mathematics.rst`` §6):

.. math:: d^*(\varepsilon) = \min_W \sum_x p_x \sum_y W_{xy}\,\ell(x, y)
          \quad\text{s.t.}\quad W \text{ row-stochastic},\quad
          W_{xy} \le e^{\varepsilon} W_{x'y}\ \ \forall (x, x') \text{ neighbours},\ \forall y.

:func:`optimal_mechanism` returns ``d*(ε)`` with a bracket certified by the query layer, never
taken on the solver's word, that holds in floating point: ``upper`` is the expected loss,
rounded up, of a mechanism verified ε-DP despite rounding (repaired when the solver's matrix
is not), ``lower`` a Lagrangian bound valid for any multipliers or a closed form rounded down
(:mod:`dpcap.tradeoffs._mechanism_lp`, :mod:`dpcap.solvers.dplp`). Its inverse, the
privacy–distortion function ``ε*(D)``, is :mod:`dpcap.tradeoffs.epsilon_distortion`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ParameterError, Status
from dpcap.neighbors import Neighbors
from dpcap.result import DistortionResult
from dpcap.tradeoffs import _mechanism_lp as lp

__all__ = ["optimal_mechanism"]


def optimal_mechanism(
    prior: Any,
    loss: Any,
    /,
    eps: float,
    *,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors | None = None,
    metric: Any = None,
    solver: str | None = None,
    tol: float = 1e-9,
    rtol: float = 0.0,
) -> DistortionResult:
    r"""The ε-DP mechanism of least expected loss, with a certified bracket on that loss.

    Parameters
    ----------
    prior : array_like, shape (n_databases,) or ``shape``
        The law of the database: rows of the mechanism, in C order over the domain.
    loss : array_like, shape (n_databases, n_outputs)
        ``loss[x, y] = ℓ(x, y)``, the cost of releasing ``y`` when the database is ``x``; finite.
        The outputs are whatever the columns stand for (databases, counts, labels).
    eps : float
        ε in ``[0, ∞]`` (nats). ε = 0 and ε = ∞ are solved in closed form. A finite ε whose
        factor ``e^{εd}`` overflows a double (``εd > 709.78``, ``d = 1`` without a metric) is
        refused with a :class:`~dpcap.result.ParameterError` naming the largest usable ε.
    shape : sequence of int, optional
        Domain sizes ``(m_1, …, m_n)`` of the database; default: one entry whose values are the
        rows (then ``"hamming"`` makes every pair of rows neighbours: local DP).
    neighbors : str, array_like or callable, optional
        The neighbour relation, as in :func:`dpcap.neighbor_pairs` (``"hamming"``, the
        default, ``"line"`` for counts, ``"all"``, explicit pairs or a predicate).
    metric : array_like (n_databases, n_databases) or callable, optional
        A distance on the databases instead (:func:`dpcap.metric_matrix`), positive between
        different ones (``∞``: unconstrained): the constraints become
        ``W[x, y] ≤ e^{ε·d(x, x')} W[x', y]`` (metric privacy; geo-indistinguishability for a
        Euclidean ``d``), and ``dp_level`` is the d-privacy level. Not with ``neighbors``.
    solver : {"CLARABEL", "HIGHS", "ECOS", "SCS"}, optional
        The LP backend (:mod:`dpcap.solvers.dplp`), case-insensitive; default Clarabel, the
        fastest accurate one measured.
    tol : float
        Target certified gap ``upper − lower``, absolute, in the loss's units; default 1e-9,
        as every query. The LP's accuracy allows it on most problems. Measured for ε from 1e-9
        to 23, gaps after the rounding allowances of Notes: Clarabel 3e-13 to 8e-10 on Hamming
        problems of up to 64 databases, random problems of up to 5 × 4, line neighbours with
        ``|x − y|`` on up to 32 databases, and randomised response on up to 32 symbols for
        ε ∈ [1e-6, 14]; HiGHS 1e-15 to 1e-10 on the same Hamming and random problems, and on
        randomised response for ε ∈ [1e-5, 20] (simplex vertices). 1e-9 is *not* met (status
        ``inaccurate``, a warning) on three classes: line neighbours with ``|x − y|`` (Clarabel
        from 64 databases, 1.5e-9 to 3e-8 on 128; HiGHS from 32, up to 3e-7, its dual
        feasibility tolerance, 1e-10 at least, loosening the Lagrangian bound); ε ≲ 1e-7 with 3
        outputs or more (up to 9e-9 with either solver: the LP, with ``e^ε ≈ 1 + ε``, is
        ill-conditioned, and the closed-form bound is within about ``ε·r·(d*(0) − d_min)``
        only, ``r`` the graph's radius); and, with Clarabel, ε ≳ 16 on 8 outputs or more (up to
        5e-7 on 32), where it may also fail outright (then the closed-form bracket of Notes is
        returned, status ``inaccurate`` with a warning naming the failure; HiGHS does well
        there).
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).

    Returns
    -------
    DistortionResult
        ``value = upper``: the expected loss of ``mechanism`` rounded up by a bound on its
        rounding, so ``d*(ε) ≤ upper`` exactly; ``mechanism`` is ε-DP exactly (its level,
        rounded up by a bound on the rounding of the log-ratios, is at most ε: see Notes), and
        ``dp_level`` is its level as :func:`dpcap.dp_epsilon` computes it. ``lower`` is a
        rigorous lower bound on the least expected loss of any ε-DP mechanism (see Notes), so
        ``lower ≤ d*(ε) ≤ upper`` for the prior and loss as stored. ``target`` is ε,
        ``distortion_achieved`` the mechanism's expected loss as computed (``upper`` less the
        allowance), ``slope`` is NaN, ``unit`` is ``"loss"``. ``details`` holds ``raw_dp_level``
        (the solver's matrix, clipped and renormalised), ``distortion_before_repair``,
        ``lift_mass`` (largest mass added to a row by the lift), ``repair_weight`` (λ of the 0-DP
        mixture; 0 when not needed) and ``rounding_repair_loss`` (the loss added by the final
        repair that makes the level hold despite rounding; 0 when none was needed).

    Raises
    ------
    PriorError, ParameterError, NeighborError, MechanismError
        For invalid input (the message names the argument).
    ProblemTooLargeError
        If the mechanism or the LP is above dpcap's size limits.

    Warns
    -----
    ConvergenceWarning
        If ``upper − lower > max(tol, rtol·upper)`` (status ``inaccurate``), also when the LP
        solver failed and the certified closed-form bracket is returned (the message says so).

    Notes
    -----
    See ``docs/mathematics.rst`` §6. The LP is ``min Σ c W`` over row-stochastic ``W`` with
    ``c = p_x ℓ(x, y)`` and ``W[x, y] ≤ e^ε W[x', y]`` for ordered neighbours. ``lower`` is
    the Lagrangian bound ``L(μ) = Σ_x min_y (c + Aᵀμ)_{xy}`` of the solver's multipliers
    μ ≥ 0 of the ratio rows: weak duality with the simplex constraints kept gives
    ``L(μ) ≤ Σ c W`` for every feasible W, whatever μ, so no dual feasibility is assumed; the
    floating-point error of its evaluation is subtracted
    (:func:`dpcap.solvers.dplp.lagrangian_bound`); ``d*(∞) = Σ_x p_x min_y ℓ`` bounds it from
    below too. ``upper`` is the loss of the returned mechanism (rounded up, below): the
    solver's, repaired if it is not ε-DP (:mod:`dpcap.tradeoffs._mechanism_lp`), or the ε = ∞
    optimum mixed with a 0-DP mechanism by the least weight that makes it ε-DP, whichever loses less
    (the mixture wins at large ε, where ``e^ε`` makes the LP ill-conditioned: from about
    ε = 20 on 32 inputs).
    At ε = 0, neighbours have equal rows, so each connected component of the neighbour graph
    releases its best constant output; at ε = ∞ each row releases its ``argmin_y ℓ``: both
    exact up to the rounding below. Below ε ≈ 1.1e-16, where ``e^ε`` rounds to 1 and the LP
    cannot be stated, the best 0-DP mechanism (ε-DP for every ε) and the closed-form bound
    ``Σ_K (e^{−ε r_K} d*_K(0) + (1 − e^{−ε r_K}) d*_K(∞))`` over the components ``K`` (radius
    ``r_K``) bracket ``d*(ε)`` within about ``ε·r·(d*(0) − d_min)`` without a solve.

    *Rounding* (``docs/mathematics.rst`` §6, §8). The certificates hold for the exact problem
    on the stored floats. ``upper`` adds to the computed loss ``Σ_x Σ_y (p_x ℓ) W`` the bound
    ``γ_{k+3}·Σ|p_x ℓ| W`` (``k`` outputs, ``γ_n = nu/(1 − nu)``, ``u = 2⁻⁵³``): the products
    and the row sums round, the sum of the rows is exact (``math.fsum``). The returned
    mechanism must be ε-DP with its level rounded up as :func:`dpcap.privacy_distortion` reads
    it, ``level + 16u·max|log W| + 2u·level`` (float64 ``log`` is within 4 ulps): a solver's
    mechanism at ``e^ε`` on the nose (randomised response, say) is lifted to that, then mixed
    with a 0-DP row if the lift does not do (``rounding_repair_loss``, a few 1e-15 at most on
    the measured problems). The closed forms are moved outward by bounds on the rounding of
    the sums that made them (:func:`dpcap.tradeoffs._mechanism_lp.rounding_slack`): ``d*(∞)`` by
    ``γ_{k+3}·Σ_x |p_x min_y ℓ|``, ``d*(0)`` and the closed-form bound by
    ``γ_{3N+k+8}`` times the sums in absolute values (``N`` databases), which also covers the
    choice of each component's best column among rounded sums.

    *Metric privacy* (``docs/mathematics.rst`` §11). Under ``metric`` a ratio row is kept only
    for pairs with no database ``z`` between them (``d(x, z) + d(z, x') ≤ d(x, x')``, decided
    exactly on the stored floats; up to 1024 databases): chaining through ``z`` implies the
    others, so the LP is exact and small (adjacent values under ``|x − x'|``, the 4-neighbour
    grid under the Manhattan distance). Bordenabe et al. [3]_ state this LP and shrink it with a
    spanner, which costs a stretch factor in ε; no such approximation is made here. The lift,
    the mixing weight and the Lagrangian bound use each pair's factor ``e^{ε d}`` (rounded
    outward), the closed-form bound the weighted radius, and the level is read as
    ``level + 16u·max|log W|/d_min + 3u·level`` (``d_min`` the least distance).

    For counting queries (line neighbours on ``{0..n}``) and a loss non-decreasing in
    ``|x − y|``, the optimum is the truncated geometric mechanism followed by the consumer's
    optimal remap (Ghosh, Roughgarden and Sundararajan) — a test of this function.

    References
    ----------
    .. [1] A. Ghosh, T. Roughgarden and M. Sundararajan, "Universally utility-maximizing privacy
       mechanisms", *SIAM J. Comput.* 41(6), 2012.
    .. [2] W. Wang, L. Ying and J. Zhang, "On the relation between identifiability, differential
       privacy and mutual-information privacy", *IEEE Trans. Inf. Theory* 62(9), 2016 (the LP
       in W; Ünsal & Önen §5).
    .. [3] N. E. Bordenabe, K. Chatzikokolakis and C. Palamidessi, "Optimal
       geo-indistinguishable mechanisms for location privacy", *CCS* 2014, §4 (the LP under
       ``d``-privacy constraints, and its spanner approximation).

    Examples
    --------
    Randomised response is optimal for one bit under 0-1 loss: ``d* = 1/(1 + e^ε)``.

    >>> import math
    >>> res = optimal_mechanism([0.5, 0.5], [[0, 1], [1, 0]], 1.0)
    >>> abs(res.value - 1 / (1 + math.e)) < 1e-9, res.dp_level <= 1.0 + 1e-9
    (True, True)
    >>> res.lower <= 1 / (1 + math.e) <= res.upper
    True
    """
    if neighbors is not None and metric is not None:
        raise ParameterError("pass either neighbors= or metric= to optimal_mechanism, not both")
    relation = "hamming" if neighbors is None else neighbors
    problem = lp.build(prior, loss, shape, relation, solver, "loss", metric)
    level = check.nonnegative(eps, "eps")
    if level.ndim != 0:
        raise ParameterError(f"eps must be a scalar, got {check.show(eps)}")
    epsilon = float(level)
    tolerance = check.tolerance(tol, "loss units")
    relative = check.rtol(rtol)
    solved = _writable(problem, epsilon)
    point = _below_rounding(problem, solved) or lp.evaluate(problem, solved)
    # the certificates, with rounding: the mechanism's exact level ≤ ε, its loss rounded up
    W, dp_level = lp.private_within(problem, point.mechanism, solved)
    achieved = problem.expected(W)
    upper = achieved + problem.expected_error(W)
    lower = min(lp.lower_end(problem, point), upper)
    extra = achieved - point.upper if W is not point.mechanism else 0.0
    note = point.note
    if point.failure and upper - lower > _certify.target(tolerance, relative, upper):
        note += "; the bracket is the closed form's: try another solver or a larger tol"
    if extra:
        note += f"; repaired to meet eps despite rounding (loss {extra:+.3g})"
    status, message = _certify.conclude(
        upper - lower,
        tolerance,
        rtol=relative,
        upper=upper,
        iterations=point.iterations,
        note=note,
        open_status=Status.INACCURATE,
        unit="loss units",
    )
    return DistortionResult(
        value=upper,
        lower=lower,
        upper=upper,
        mechanism=W,
        target=epsilon,
        distortion_achieved=achieved,
        dp_level=dp_level,
        slope=math.nan,
        status=status,
        iterations=point.iterations,
        method=point.method,
        unit="loss",
        message=message,
        tol=tolerance,
        details=(*point.details, ("rounding_repair_loss", extra)),
    )


#: ``log(DBL_MAX)``: past it ``e^{εd}`` is not a double and a ratio row cannot be written.
OVERFLOW = math.log(sys.float_info.max)


def _writable(problem: lp.Problem, eps: float) -> float:
    """``ε``, checked to give every constrained pair a finite factor ``e^{εd}``.

    Past ``εd ≈ 709.78`` the factor overflows. The constraint is then nearly, but not exactly,
    a support constraint (``W[x', y] = 0 ⇒ W[x, y] = 0``, which ε = ∞ does not impose: every
    mechanism is ∞-DP), and neither end of the bracket could be certified from one LP: such ε
    are refused, naming the largest one that works.
    """
    if math.isinf(eps) or eps * problem.largest_scale <= OVERFLOW:
        return eps
    what = "e^eps" if problem.scale is None else "e^(eps·d) for the farthest constrained pair"
    raise ParameterError(
        f"eps={eps!r} is too large: {what} overflows a double; use "
        f"eps <= {OVERFLOW / problem.largest_scale:.6g}, or eps=inf (no constraint)"
    )


def _below_rounding(problem: lp.Problem, eps: float) -> lp.Point | None:
    """``0 < ε`` with ``e^ε`` rounding to 1: the best 0-DP mechanism, and no LP (see Notes).

    The LP's ratio rows cannot be written there (:class:`dpcap.solvers.dplp.MechanismLP`
    refuses it), and the repair's mixing weight divides by ``e^ε − 1``. The best 0-DP
    mechanism is ε-DP, and :meth:`dpcap.tradeoffs._mechanism_lp.Problem.closed_lower` is within
    ``(1 − e^{−ε r})(d*(0) − d_min)`` of it, about 1e-16 relative; the lower end is made
    rigorous by :func:`dpcap.tradeoffs._mechanism_lp.lower_end`. None for any other ε.
    """
    if not (eps > 0.0 and math.exp(eps * problem.least_scale) == 1.0):
        return None
    zero = lp.evaluate(problem, 0.0)
    floor = max(problem.d_min, problem.closed_lower(eps))
    note = f"closed form at eps={eps!r}: e^eps rounds to 1 (a best 0-DP mechanism)"
    return replace(zero, eps=eps, lower=min(floor, zero.upper), note=note)
