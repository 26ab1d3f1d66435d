"""The Rényi radius at α = 0 by a pair of linear programmes (HiGHS through scipy).

``C_0 = max_p −log max_y Σ_{x: W_xy > 0} p_x = min_Q max_x −log Q(supp W_x)`` depends on the
channel only through its support pattern ``B = 1[W > 0]``:

* primal: ``min t`` s.t. ``Bᵀp ≤ t``, ``Σ p = 1``, ``p ≥ 0`` (a prior spreading its mass so that
  no output is reached by much of it);
* dual: ``max s`` s.t. ``B Q ≥ s``, ``Σ Q = 1``, ``Q ≥ 0`` (an output law that covers every row's
  support).

This engine returns both points; the query layer evaluates the bracket from them
(``lower = −log max_y (Bᵀp)_y``, ``upper = max_x −log (BQ)_x``), never from the solver's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .status import EngineStatus, from_linprog

__all__ = ["ZeroSolution", "solve"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class ZeroSolution:
    """Raw output of :func:`solve`: a prior ``p`` (inputs) and an output law ``Q``, both on the
    simplex (clipped and renormalised), and how the two programmes stopped."""

    prior: FloatArray
    output: FloatArray
    status: EngineStatus
    message: str


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
    if primal.x is None or dual.x is None or not status.usable:
        failed = EngineStatus.FAILED if status.usable else status
        return ZeroSolution(np.full(nx, 1.0 / nx), np.full(ny, 1.0 / ny), failed, message)
    p = np.maximum(primal.x[:nx], 0.0)
    Q = np.maximum(dual.x[:ny], 0.0)
    if not (np.isfinite(p).all() and np.isfinite(Q).all() and p.sum() > 0 and Q.sum() > 0):
        return ZeroSolution(
            np.full(nx, 1.0 / nx), np.full(ny, 1.0 / ny), EngineStatus.FAILED, message
        )
    return ZeroSolution(p / p.sum(), Q / Q.sum(), status, message)
