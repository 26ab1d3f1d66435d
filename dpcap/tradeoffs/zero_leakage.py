r"""Perfect privacy: the largest utility ``g₀ = max I(X;Y)`` with ``I(S;Y) = 0`` (Calmon et al.).

For a Markov chain ``S − X − Y`` given by ``joint[s, x] = P(S=s, X=x)``, a mechanism
``P_{Y|X}`` is perfectly private when Y is independent of S. Utility ``g₀ > 0`` is possible iff
``P_{S|X}`` has a non-trivial null space (Calmon, Makhdoumi & Médard 2015); ``g₀`` itself is an
LP over the extreme points of the posteriors that leak nothing (Rassouli & Gündüz 2021),
solved by :mod:`dpcap.solvers.vertices` and certified here by its dual
(``docs/mathematics.rst`` §7).

References
----------
.. [1] F. P. Calmon, A. Makhdoumi, M. Médard, "Fundamental limits of perfect privacy",
   ISIT 2015.
.. [2] B. Rassouli, D. Gündüz, "On perfect privacy", IEEE JSAIT 2021 (the LP over the extreme
   points).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ProblemTooLargeError, SolverError, Status
from dpcap.result import FunnelResult
from dpcap.solvers.envelope_mesh import entropy_rows
from dpcap.solvers.vertices import perfect_privacy_lp, perfect_privacy_vertices
from dpcap.tradeoffs._markov import constant, informations, joint_problem, mechanism

__all__ = ["perfect_privacy"]

#: perfect_privacy enumerates C(|X|, rank) bases; beyond this many it refuses.
MAX_BASES = 200_000


def perfect_privacy(
    joint: Any, /, *, tol: float = 1e-9, rtol: float = 0.0, unit: str = "nats"
) -> FunnelResult:
    r"""The largest utility under perfect privacy: ``g₀ = max I(X;Y)`` s.t. ``I(S;Y) = 0``.

    Perfect privacy with positive utility (``g₀ > 0``) is possible iff ``T = P_{S|X}``
    (restricted to the values of X with positive probability) has a non-trivial null space,
    i.e. ``rank T < |X|`` — always when ``|S| < |X|`` (Calmon, Makhdoumi & Médard 2015).

    Parameters
    ----------
    joint : array_like, shape (n_private, n_data)
        ``joint[s, x] = P(S=s, X=x)``.
    tol : float
        Target gap of the bracket on ``g₀`` (nats).
    rtol : float
        Relative target in ``[0, 1)``: the bracket has converged once ``upper − lower ≤
        max(tol, rtol·|upper|)`` (default 0: ``tol`` alone).
    unit : {"nats", "bits"}

    Returns
    -------
    FunnelResult
        ``value = lower = g₀`` achieved by ``mechanism`` (``utility_achieved``), whose
        ``leakage_achieved = I(S;Y)`` is 0 up to rounding (≈ 1e-16); ``upper`` is the LP dual
        bound. ``details`` holds ``("rank", rank T)``, ``("nullity", |X| − rank T)`` and
        ``("vertices", number of extreme points)``; ``target`` is 0 and ``problem`` is
        ``"perfect_privacy"``.

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law.
    ProblemTooLargeError
        If the vertex enumeration would try more than 200,000 bases.

    Notes
    -----
    ``I(S;Y) = 0`` iff every posterior ``q = P_{X|Y=y}`` satisfies ``Tq = P_S``: the feasible
    posteriors form the polytope ``Q = {q ≥ 0 : Tq = P_S}`` (``Σ q = 1`` follows), which
    contains ``P_X``. If ``Td = 0`` for some ``d ≠ 0`` then ``P_X ± εd ∈ Q`` and the two-output
    mechanism with these posteriors has ``I(X;Y) > 0``; if T is injective, ``Q = {P_X}`` and
    ``I(X;Y) = 0``. Since ``H`` is concave, splitting each posterior into the vertices of
    ``Q`` only lowers ``Σ λ H(q)``, so ``g₀ = H(X) − min Σ_j λ_j H(v_j)`` over weights on the
    vertices ``v_j`` with ``Σ λ_j v_j = P_X`` (an LP; Rassouli & Gündüz). Its dual ``μ``
    (``μ·v_j ≤ H(v_j)``, shifted until it holds exactly) gives ``H(q) ≥ μ·q`` on all of ``Q``
    and so ``g₀ ≤ H(X) − μ·P_X``; also ``g₀ ≤ H(X|S)``. Vertices are enumerated as basic
    feasible solutions in floating point (rank decided by ``numpy.linalg.matrix_rank``).

    Examples
    --------
    >>> res = perfect_privacy([[0.25, 0.25, 0.0], [0.0, 0.25, 0.25]])
    >>> round(res.value, 6), res.leakage_achieved < 1e-12
    (0.693147, True)
    >>> perfect_privacy([[0.4, 0.1], [0.1, 0.4]]).value
    0.0
    """
    problem = joint_problem(joint)
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    divisor = check.unit_divisor(unit)
    n = problem.p.shape[0]
    rank = int(np.linalg.matrix_rank(problem.T)) if n > 1 else 1
    nullity = n - rank
    details: tuple[tuple[str, float], ...] = (("rank", float(rank)), ("nullity", float(nullity)))
    if nullity == 0:
        W = constant(problem)
        utility, leakage = informations(problem, W)
        lower = upper = 0.0
        iterations, vertices = 0, 1
        note = (
            f"P_(S|X) is injective on the {n} values of X with positive probability (rank {rank}):"
            " only I(X;Y) = 0 is perfectly private"
        )
    else:
        if math.comb(n, rank) > MAX_BASES:
            raise ProblemTooLargeError(
                f"perfect_privacy enumerates the C({n}, {rank}) = {math.comb(n, rank)} bases of "
                f"P_(S|X); more than {MAX_BASES} is too many"
            )
        V = perfect_privacy_vertices(problem.T, problem.p, rank=rank)
        sol = perfect_privacy_lp(V, problem.p)
        if not sol.status.usable:
            raise SolverError("HiGHS failed on the perfect-privacy LP", _certify.status_of(sol))
        W = mechanism(problem, sol.posteriors, sol.weights)
        utility, leakage = informations(problem, W)
        h = entropy_rows(V)
        shift = max(float(np.max(V @ sol.mu - h)), 0.0)
        dual = float(sol.mu @ problem.p) - shift  # ≤ min Σ λ H(q) over all of Q
        lower = utility
        upper = max(min(problem.hx - dual, problem.hx - problem.isx), lower)
        iterations, vertices = 1, V.shape[0]
        note = (
            f"LP over the {vertices} extreme points of {{q : P_(S|X) q = P_S}} (null space of "
            f"dimension {nullity})"
        )
    status, message = _certify.conclude(
        upper - lower,
        tolerance,
        rtol=relative,
        upper=upper,
        iterations=iterations,
        note=note,
        open_status=Status.INACCURATE,
    )
    return FunnelResult(
        value=lower / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        mechanism=W,
        target=0.0,
        utility_achieved=utility / divisor,
        leakage_achieved=leakage / divisor,
        slope=math.nan,
        status=status,
        iterations=iterations,
        problem="perfect_privacy",
        method="vertex-lp",
        unit=unit,
        message=message,
        tol=tolerance,
        details=(*details, ("vertices", float(vertices))),
    )
