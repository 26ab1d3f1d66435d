"""Capacities of tall channels on a working set of rows (column generation).

A capacity of a radius kind, Shannon's ``C = min_Q max_x D(W_x ‖ Q)`` or Sibson's
``C_α = min_Q max_x D_α(W_x ‖ Q)`` (``docs/mathematics.rst`` §1, §4), has an optimal prior with
at most ``|Y|`` inputs in its support (Carathéodory), so on a channel with many more inputs
than outputs the engine runs on a few rows. :func:`solve` starts from the ``|Y|/2`` rows that
a uniform prior's centre is farthest from and each column's largest entry; after each solve
every row's divergence from the solution's centre is computed (``O(|X|·|Y|)``, no
``|X| × |X|`` system) and the rows above the working set's upper end join it, until none
does. The certificate is taken over every row of the channel by the caller, so a working set
that missed a row could only leave the bracket open, never wrong.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpcap.solvers import blahut, reduce

__all__ = ["MAX_ROUNDS", "TALL_INPUTS", "TALL_RATIO", "solve", "tall"]

#: A channel with more distinct inputs than this, and more than TALL_RATIO times its outputs,
#: is solved on a working set of rows: the engine's systems stay near |Y| × |Y| (1024 × 256
#: Dirichlet: Shannon 0.82 s -> 0.04 s, Sibson at α = 0.5, 2, 10 0.6-0.8 s -> 0.05-0.08 s).
TALL_INPUTS = 512
TALL_RATIO = 2
#: Most rounds of the working set.
MAX_ROUNDS = 50


def tall(M: Any) -> bool:
    """Whether ``M`` (a reduced channel) is solved on a working set."""
    return bool(M.shape[0] > TALL_INPUTS and M.shape[0] > TALL_RATIO * M.shape[1])


def _divergences(model: Any, M: Any, aux: Any, prior: Any) -> Any:
    """Every row's divergence from ``prior``'s centre, by the engine's own model (a screen,
    not a certificate)."""
    return model.divergences(M[None], aux, prior[None])[0]


def _on_all_rows(prior: Any, rows: Any, n: int) -> Any:
    """A working set's prior on all ``n`` rows (zero off the set)."""
    out = np.zeros(n)
    out[rows] = prior
    return out


def solve(
    reduction: reduce.Reduction,
    tol: float,
    rtol: float,
    budget: int,
    model: Any = None,
) -> tuple[reduce.Reduction, blahut.BatchSolution, int]:
    """The capacity of the tall channel ``reduction.matrix`` for the engine ``model`` (Shannon
    by default, or :class:`dpcap.solvers.renyi.Sibson`) on a working set of its rows: the
    reduction restricted to the set, the engine's solution on it, and the rounds taken."""
    model = blahut.SHANNON if model is None else model
    M = reduction.matrix
    nx, ny = M.shape
    aux = model.prepare(M[None])
    first = np.argsort(-_divergences(model, M, aux, np.full(nx, 1.0 / nx)))[: max(ny // 2, 1)]
    rows = np.unique(np.concatenate([first, np.argmax(M, axis=0)])).astype(np.int64)
    rounds = 0
    while True:
        rounds += 1
        sub = reduce.Reduction(
            matrix=M[rows], rows=reduction.rows[rows], n_inputs=reduction.n_inputs
        )
        solution = blahut.solve(sub.matrix[None], tol=tol, rtol=rtol, max_iter=budget, model=model)
        top = float(solution.upper[0])
        D = _divergences(model, M, aux, _on_all_rows(solution.upper_prior[0], rows, nx))
        outside = np.setdiff1d(np.flatnonzero(top + 0.5 * tol < D), rows)
        if not outside.size or rounds >= MAX_ROUNDS:
            return sub, solution, rounds
        worst = outside[np.argsort(-D[outside])][: max(ny, 1)]
        rows = np.union1d(rows, worst).astype(np.int64)
