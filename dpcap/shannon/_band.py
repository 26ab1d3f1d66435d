"""Capacity of a clamped noise channel on a line, from its band (:mod:`dpcap.solvers.band`).

Used by :func:`dpcap.capacity` for a :class:`~dpcap.line_noise.LineNoise` of more than
:data:`BAND_ABOVE` values, where the dense matrix costs more than the band: its rows are cut
at the band ``B`` of :mod:`dpcap.line_noise` (at most ``2·tail[B + 1] ≤ 2⁻⁹⁹`` of each row's
mass left out), solved by Blahut–Arimoto and banded Newton steps, and bracketed with rounding
bounds and the cut's allowance (:func:`dpcap.solvers.band.certified`).
"""

from __future__ import annotations

from typing import Any

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap.errors import ProblemTooLargeError, Status
from dpcap.line_noise import LineNoise
from dpcap.result import CapacityResult
from dpcap.solvers import band

#: Above this many values a line-noise channel's capacity is solved on its band (a count of
#: 2000 with geometric noise: 5.2 s dense; the band engine does 20000 in 1.4 s).
BAND_ABOVE = 512

#: Steps of the band engine where the dense engine can take over (the dense matrix fits): it
#: converges in about 35 where the optimal prior has full support; where it does not (an
#: ill-conditioned system, e.g. discrete Gaussian noise), the dense engine is used.
TRIAL_STEPS = 80

#: Iterations when no budget is given (each is a Blahut–Arimoto or Newton step).
DEFAULT_STEPS = 400

#: Most multiply-adds of one banded Newton step (``(n + 1)·w²`` for a band of ``w`` outputs):
#: about 2 s on one core (n = 10⁵ with geometric noise at ε = 1 is 2·10⁹).
MAX_BAND_WORK = 2**32


def band_work(W: LineNoise) -> int:
    """Multiply-adds of one Newton step on ``W``'s band (estimated before any allocation)."""
    return W.n_inputs * (2 * W.band() + 1) ** 2


def band_capacity(
    W: LineNoise, tol: Any, rtol: Any, max_iter: Any, unit: str
) -> CapacityResult | None:
    """:func:`dpcap.capacity` of ``W`` from its band, or None where the dense engine answers.

    Above :data:`BAND_ABOVE` values, and within :data:`MAX_BAND_WORK` a Newton step. Where the
    dense matrix fits, the band engine gets :data:`TRIAL_STEPS` steps and None is returned if
    its bracket stays open (the dense engine then takes over); where it does not fit, the band
    engine gets the whole budget and its result stands, open or not (it warns), and a Newton
    step above :data:`MAX_BAND_WORK` is refused with :class:`~dpcap.ProblemTooLargeError`.
    """
    if W.n_inputs <= BAND_ABOVE:
        return None
    fits = W.n_inputs * W.n_outputs <= check.MAX_DENSE_ELEMENTS
    work = band_work(W)
    if work > MAX_BAND_WORK:
        if fits:
            return None
        raise ProblemTooLargeError(
            f"the capacity of this noise channel on {{0..{W.n_inputs - 1}}}: a Newton step "
            f"on its band of {2 * W.band() + 1} outputs is {work:.3g} multiply-adds, above "
            f"dpcap's limit of {MAX_BAND_WORK} (a wider noise needs a shorter line)"
        )
    tolerance, relative, budget = (
        check.tolerance(tol),
        check.rtol(rtol),
        check.max_iter(max_iter, DEFAULT_STEPS),
    )
    steps = min(budget, TRIAL_STEPS) if fits else budget
    result = solve_band(W, tolerance, relative, steps, unit, warn=not fits)
    return None if fits and result.status is not Status.CONVERGED else result


def solve_band(
    W: LineNoise, tol: float, rtol: float, steps: int, unit: str, warn: bool = True
) -> CapacityResult:
    """The band engine's certified bracket of ``W`` after at most ``steps`` steps; ``warn``:
    warn if the bracket stays open."""
    divisor = check.unit_divisor(unit)
    Wb, B = W.band_rows()
    solution = band.capacity(Wb, tol, steps)
    rho, outputs = W.outside(), W.n_outputs
    lower = band.certified(Wb, solution.prior, rho, outputs)[0]
    upper = band.certified(Wb, solution.upper_prior, rho, outputs)[1]
    lower, upper = min(lower, upper), max(lower, upper)
    status, message = _certify.conclude(
        upper - lower,
        tol,
        rtol=rtol,
        upper=upper,
        engine_closed=solution.converged,
        iterations=solution.iterations,
        note=(
            f"solved on the band of {2 * B + 1} outputs around each of the {W.n_inputs} inputs "
            f"(at most {rho:.2g} of a row's mass outside it, in the bracket)"
        ),
        open_status=Status.MAX_ITER,
        warn_open=warn,
    )
    output = band.output(Wb, solution.prior)[B : B + W.n_outputs]
    return CapacityResult(
        value=upper / divisor,
        lower=lower / divisor,
        upper=upper / divisor,
        prior=solution.prior,
        output=output / output.sum(),
        status=status,
        iterations=solution.iterations,
        method="ba",
        unit=unit,
        message=message,
        tol=tol,
    )
