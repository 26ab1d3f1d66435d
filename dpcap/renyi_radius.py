"""Sibson's α-capacity below order 1, ``0 < α < 1``: the radius ``min_Q max_x D_α(W_x ‖ Q)``.

The BA/Newton engine eliminates the centre ``Q`` through ``Q_p ∝ (pW^α)^{1/α}``, whose
sensitivity grows like 1/α; the primal–dual interior point on the centre
(:func:`dpcap.solvers.renyi_zero.solve_centre`) does not. :func:`radius_below_one` combines
them (``docs/mathematics.rst`` §4); :func:`dpcap.renyi_capacity`, :func:`dpcap.renyi_profile`
and the Rényi MI-DP of :mod:`dpcap.mi_dp` use it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap.solvers import blahut, reduce, renyi, renyi_zero

__all__ = [
    "CENTRE_LIMIT",
    "CENTRE_STEPS",
    "ENGINE_ORDER",
    "ENGINE_TRIAL",
    "TRIAL_ORDER",
    "radius_below_one",
]

FloatArray = NDArray[np.float64]

#: Largest ``|X| + |Y|`` (distinct rows, all columns) the interior point on the radius centre
#: (:func:`dpcap.solvers.renyi_zero.solve_centre`) is run on: a step is an LU of that size.
CENTRE_LIMIT = 3_000

#: From this order up (to 1), the BA/Newton engine is tried first: it is faster on large
#: channels and converges there, while below it fails on channels whose rows have different
#: supports (or entries far below 1), more often as α decreases (the sharpness of
#: ``Q_p ∝ (pW^α)^{1/α}`` grows like 1/α).
ENGINE_ORDER = 0.5

#: Below :data:`ENGINE_ORDER` the engine still runs first, as a trial of this many iterations
#: (it certifies dense channels in 7 to 25, two to three times faster than the interior point),
#: and the interior point takes over where its bracket is still open.
ENGINE_TRIAL = 40

#: Below this order not even the trial runs: the engine rarely certifies there, and the
#: trial's iterations would be spent for nothing before the interior point.
TRIAL_ORDER = 0.1

#: Most steps of the interior point (it takes about 10 to 25).
CENTRE_STEPS = 200


def radius_below_one(
    matrix: FloatArray,
    alpha: float,
    tol: float,
    budget: int,
    *,
    rtol: float = 0.0,
    reduction: reduce.Reduction | None = None,
    candidates: tuple[_certify.Bracket, ...] = (),
    initial: FloatArray | None = None,
    engine: bool | None = None,
) -> tuple[_certify.Bracket, int, str]:
    """Certified bracket of ``C_α`` for ``0 < α < 1``: ``(bracket, iterations, note)``.

    The interior point on the radius centre (:func:`dpcap.solvers.renyi_zero.solve_centre`)
    returns a prior ``p`` and a centre ``Q``; the bracket ``I_α^S(p, W) ≤ C_α ≤ max_x
    D_α(W_x ‖ Q)`` is recomputed from them (``docs/mathematics.rst`` §4), combined with any
    ``candidates`` (other valid brackets; nothing runs if one is already closed) and clipped at
    the trivial cap; ``initial`` (priors on the reduced channel, shape (1, rows)) starts the
    engine, and ``engine`` overrides the choice below (False: the caller ran it). The BA/Newton
    engine eliminates ``Q`` through ``Q_p ∝ (pW^α)^{1/α}``, whose sensitivity grows like 1/α,
    and may fail to converge at small orders: it runs first with its full budget from
    :data:`ENGINE_ORDER` up, or on channels with more than :data:`CENTRE_LIMIT` distinct inputs
    plus outputs, where the interior point does not run at all; from :data:`TRIAL_ORDER` to
    :data:`ENGINE_ORDER` it runs first as a trial of :data:`ENGINE_TRIAL` iterations (dense
    channels are certified there two to three times faster than by the interior point); below,
    the interior point runs alone. The interior point runs wherever the engine's bracket is
    still open (``upper − lower > max(tol, rtol·|upper|)``; the interior point aims at half).
    """
    if reduction is None:
        reduction = reduce.extreme_rows(reduce.reduce_channel(matrix))
    found = list(candidates)
    iterations = 0
    notes: list[str] = []

    def goal() -> float:
        return _certify.target(tol, rtol, _certify.tightest(found).upper) if found else tol

    def still_open() -> bool:
        return not found or _certify.tightest(found).upper - _certify.tightest(found).lower > goal()

    size = matrix.shape[1] + len(reduction.rows)
    trial = alpha < ENGINE_ORDER and size <= CENTRE_LIMIT  # the interior point backs it up
    if engine is None:
        engine = alpha >= TRIAL_ORDER or size > CENTRE_LIMIT
    if still_open() and engine:
        model = renyi.Sibson(alpha)
        sol = blahut.solve(
            reduction.matrix[None],
            tol=tol,
            rtol=rtol,
            max_iter=min(budget, ENGINE_TRIAL) if trial else budget,
            initial=initial,
            model=model,
        )
        found.append(
            _certify.bracket(
                matrix, sol.prior[0], sol.upper_prior[0], model=model, reduction=reduction
            )
        )
        iterations += int(sol.iterations[0])
        notes.append(f"BA/Newton engine ({iterations} iterations)")
    if still_open() and size <= CENTRE_LIMIT:
        # duplicate rows removed (their prior mass goes to the first of each group); the
        # columns are kept, so that the centre is an output law of the original channel
        rows = reduction.rows
        centre = renyi_zero.solve_centre(
            matrix[rows], alpha, tol=0.5 * goal(), max_iter=min(budget, CENTRE_STEPS)
        )
        prior = np.zeros(matrix.shape[0])
        prior[rows] = centre.prior
        found.append(_certify.bracket_at_centre(matrix, prior, centre.output, alpha))
        iterations += centre.iterations
        notes.append(f"interior point on the radius centre ({centre.iterations} steps)")
    return _certify.capped(matrix, _certify.tightest(found)), iterations, "; ".join(notes)
