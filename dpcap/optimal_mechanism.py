r"""Least-loss ε-DP mechanisms: ``d*(ε)``, with a certified bracket and a verified mechanism.

For a prior ``p`` on the databases (rows) and a loss ``ℓ(x, y)``, the least expected loss of an
ε-DP mechanism is a linear program in the mechanism ``W`` (``docs/mathematics.rst`` §6):

.. math:: d^*(\varepsilon) = \min_W \sum_x p_x \sum_y W_{xy}\,\ell(x, y)
          \quad\text{s.t.}\quad W \text{ row-stochastic},\quad
          W_{xy} \le e^{\varepsilon} W_{x'y}\ \ \forall (x, x') \text{ neighbours},\ \forall y.

:func:`optimal_mechanism` returns ``d*(ε)`` with a bracket certified by the query layer, never
taken on the solver's word: ``upper`` is the expected loss of a mechanism whose ε-DP level is
recomputed exactly (repaired when the solver's matrix is not ε-DP), ``lower`` a Lagrangian
bound valid for any multipliers (:mod:`dpcap._mechanism_lp`, :mod:`dpcap.solvers.dplp`). Its
inverse, the privacy–distortion function ``ε*(D)``, is :mod:`dpcap.privacy_distortion`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpcap import _certify
from dpcap import _mechanism_lp as lp
from dpcap import _validation as check
from dpcap.neighbors import Neighbors
from dpcap.result import DistortionResult, ParameterError, SolverError, Status

__all__ = ["optimal_mechanism"]


def optimal_mechanism(
    prior: Any,
    loss: Any,
    /,
    eps: float,
    *,
    shape: Sequence[int] | None = None,
    neighbors: Neighbors = "hamming",
    solver: str | None = None,
    tol: float = 1e-6,
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
        ε in ``[0, ∞]`` (nats). ε = 0 and ε = ∞ are solved in closed form.
    shape : sequence of int, optional
        Domain sizes ``(m_1, …, m_n)`` of the database; default: one entry whose values are the
        rows (then ``"hamming"`` makes every pair of rows neighbours: local DP).
    neighbors : str, array_like or callable
        The neighbour relation, as in :func:`dpcap.neighbor_pairs` (``"hamming"``, ``"line"``
        for counts, ``"all"``, explicit pairs or a predicate).
    solver : {"CLARABEL", "HIGHS", "ECOS", "SCS"}, optional
        The LP backend (:mod:`dpcap.solvers.dplp`), case-insensitive; default Clarabel, the
        fastest accurate one measured.
    tol : float
        Target certified gap ``upper − lower``, absolute, in the loss's units.

    Returns
    -------
    DistortionResult
        ``value = upper``: the expected loss of ``mechanism``, an ε-DP mechanism whose level
        ``dp_level ≤ ε·(1 + 1e-9)`` is recomputed exactly. ``lower`` is a rigorous lower bound
        on the least expected loss of any ε-DP mechanism (see Notes). ``target`` is ε,
        ``distortion_achieved`` equals ``value``, ``slope`` is NaN, ``unit`` is ``"loss"``.
        ``details`` holds ``raw_dp_level`` (the solver's matrix, clipped and renormalised),
        ``distortion_before_repair``, ``lift_mass`` (largest mass added to a row by the lift)
        and ``repair_weight`` (λ of the 0-DP mixture; 0 when not needed).

    Raises
    ------
    PriorError, ParameterError, NeighborError, MechanismError
        For invalid input (the message names the argument).
    ProblemTooLargeError
        If the mechanism or the LP is above dpcap's size limits.
    SolverError
        If the LP solver fails and the closed-form bracket (see Notes) is wider than ``tol``.

    Warns
    -----
    ConvergenceWarning
        If ``upper − lower > tol`` (status ``inaccurate``).

    Notes
    -----
    See ``docs/mathematics.rst`` §6. The LP is ``min Σ c W`` over row-stochastic ``W`` with
    ``c = p_x ℓ(x, y)`` and ``W[x, y] ≤ e^ε W[x', y]`` for ordered neighbours. ``lower`` is
    the Lagrangian bound ``L(μ) = Σ_x min_y (c + Aᵀμ)_{xy}`` of the solver's multipliers
    μ ≥ 0 of the ratio rows: weak duality with the simplex constraints kept gives
    ``L(μ) ≤ Σ c W`` for every feasible W, whatever μ, so no dual feasibility is assumed; the
    floating-point error of its evaluation is subtracted
    (:func:`dpcap.solvers.dplp.lagrangian_bound`); ``d*(∞) = Σ_x p_x min_y ℓ`` bounds it from
    below too. ``upper`` is attained by the returned mechanism: the solver's, repaired if it
    is not ε-DP (:mod:`dpcap._mechanism_lp`), or the ε = ∞ optimum mixed with a 0-DP
    mechanism by the least weight that makes it ε-DP, whichever loses less (the mixture wins
    at large ε, where ``e^ε`` makes the LP ill-conditioned: from about ε = 20 on 32 inputs).
    At ε = 0, neighbours have equal rows, so each connected component of the neighbour graph
    releases its best constant output; at ε = ∞ each row releases its ``argmin_y ℓ``: both
    exact, ``lower = upper``.

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

    Examples
    --------
    Randomised response is optimal for one bit under 0-1 loss: ``d* = 1/(1 + e^ε)``.

    >>> import math
    >>> res = optimal_mechanism([0.5, 0.5], [[0, 1], [1, 0]], 1.0)
    >>> abs(res.value - 1 / (1 + math.e)) < 1e-9, res.dp_level <= 1.0 + 1e-9
    (True, True)
    """
    problem = lp.build(prior, loss, shape, neighbors, solver, "loss")
    level = check.nonnegative(eps, "eps")
    if level.ndim != 0:
        raise ParameterError(f"eps must be a scalar, got {check.show(eps)}")
    epsilon = float(level)
    tolerance = check.tolerance(tol, "loss units")
    point = lp.evaluate(problem, epsilon)
    if point.failure and point.upper - point.lower > tolerance:
        raise SolverError(point.note, Status.FAILED)
    status, message = _certify.conclude(
        point.upper - point.lower,
        tolerance,
        iterations=point.iterations,
        note=point.note,
        open_status=Status.INACCURATE,
        unit="loss units",
    )
    return DistortionResult(
        value=point.upper,
        lower=point.lower,
        upper=point.upper,
        mechanism=point.mechanism,
        target=epsilon,
        distortion_achieved=point.upper,
        dp_level=point.level,
        slope=math.nan,
        status=status,
        iterations=point.iterations,
        method=point.method,
        unit="loss",
        message=message,
        tol=tolerance,
        details=point.details,
    )
