r"""Perfect privacy: the vertices of the posteriors that leak nothing, and the LP over them.

``I(S;Y) = 0`` iff every posterior ``q = P_{X|Y=y}`` satisfies ``T q = T p`` (``T = P_{S|X}``,
``p = P_X``): the feasible posteriors form the polytope ``{q ≥ 0 : T q = T p}``, and the largest
utility is an LP over its vertices (Rassouli & Gündüz; ``docs/mathematics.rst`` §7):
:func:`perfect_privacy_vertices` enumerates them, :func:`perfect_privacy_lp` solves the LP with
HiGHS and returns its dual for the query layer's certificate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

from .envelope_lp import HIGHS_OPTIONS
from .envelope_mesh import entropy_rows
from .status import EngineStatus, from_linprog

FloatArray = NDArray[np.float64]

__all__ = ["PerfectPrivacySolution", "perfect_privacy_lp", "perfect_privacy_vertices"]


def perfect_privacy_vertices(T: FloatArray, p: FloatArray, *, rank: int) -> FloatArray:
    """The vertices of ``{q ≥ 0 : T q = T p}`` (rows), by enumeration of bases.

    A vertex of ``{q ≥ 0 : Tq = b}`` is a basic feasible solution: ``rank`` linearly independent
    columns ``B`` of ``T`` with ``T_B q_B = b``, ``q_B ≥ 0`` and ``q = 0`` off ``B``. All
    ``C(n, rank)`` choices are tried; solutions with a residual above ``1e-10`` or an entry
    below ``−1e-12`` are rejected, the rest clipped at 0, renormalised and deduplicated.
    """
    n = T.shape[1]
    b = T @ p
    found: list[FloatArray] = []
    for B in itertools.combinations(range(n), rank):
        cols = T[:, list(B)]
        if np.linalg.matrix_rank(cols) < rank:
            continue
        qB, *_ = np.linalg.lstsq(cols, b, rcond=None)
        if np.max(np.abs(cols @ qB - b)) > 1e-10 or np.min(qB) < -1e-12:
            continue
        q = np.zeros(n)
        q[list(B)] = np.maximum(qB, 0.0)
        found.append(q / q.sum())
    if not found:
        return p[None, :].copy()
    V = np.array(found)
    _, first = np.unique(np.round(V, 12), axis=0, return_index=True)
    result: FloatArray = V[np.sort(first)]
    return result


@dataclass(frozen=True)
class PerfectPrivacySolution:
    """Raw output of :func:`perfect_privacy_lp`: support posteriors, weights and the LP dual.

    ``status`` is HiGHS's (mapped by :func:`~dpcap.solvers.status.from_linprog`), ``message``
    HiGHS's own and ``iterations`` the iterations HiGHS reported (``nit``; 0 when none).
    """

    posteriors: FloatArray
    weights: FloatArray
    mu: FloatArray
    vertices: FloatArray
    status: EngineStatus
    message: str
    iterations: int


def perfect_privacy_lp(V: FloatArray, p: FloatArray) -> PerfectPrivacySolution:
    """``min Σ_j λ_j H(v_j)`` s.t. ``Σ_j λ_j v_j = p``, ``λ ≥ 0`` over the vertices ``V``.

    The dual ``μ`` (``μ·v_j ≤ H(v_j)`` on the vertices, up to the LP's tolerance) is returned
    for the query layer's certificate, which holds for any ``μ`` once shifted. ``status`` is
    HiGHS's, mapped by :func:`~dpcap.solvers.status.from_linprog`; when HiGHS returns no point
    it is ``FAILED`` and the solution is the trivial one (``p`` alone, ``μ = 0``).
    """
    res = linprog(
        entropy_rows(V),
        A_eq=V.T,
        b_eq=p,
        bounds=(0.0, None),
        method="highs",
        options=HIGHS_OPTIONS,
    )
    status = from_linprog(res.status)
    said, steps = f"HiGHS: {res.message}", int(getattr(res, "nit", 0) or 0)
    if not status.usable or res.x is None or getattr(res, "eqlin", None) is None:
        n = p.shape[0]
        trivial = p[None, :].copy()
        failed = EngineStatus.FAILED
        return PerfectPrivacySolution(trivial, np.ones(1), np.zeros(n), V, failed, said, steps)
    w = np.maximum(np.asarray(res.x, dtype=np.float64), 0.0)
    keep = w > 0
    mu = np.asarray(res.eqlin.marginals, dtype=np.float64)
    return PerfectPrivacySolution(V[keep], w[keep], mu, V, status, said, steps)
