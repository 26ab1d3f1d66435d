"""One step of the ITP root-bracketing method, shared by every search over a scalar parameter.

ITP (Oliveira and Takahashi, "An enhancement of the bisection method average performance
preserving minmax optimality", *ACM TOMS* 47(1), 2020, Algorithm 1) keeps bisection's worst
case — the bracket is below ``tol`` after ``⌈log₂(width₀/tol)⌉ + n₀`` steps whatever the
function does — and converges like regula falsi on a smooth one. The callers own the bracket
and the decisions (which end a new point replaces); this module only proposes the next point.
"""

from __future__ import annotations

import math

__all__ = ["step"]


def step(
    lo: float,
    hi: float,
    f_lo: float,
    f_hi: float,
    tol: float,
    steps: int,
    kappa: float,
    *,
    secant_hi: float | None = None,
) -> float:
    """The next point strictly inside ``(lo, hi)`` for a root of ``f`` bracketed there.

    Regula falsi on ``(lo, f_lo)`` and ``(secant_hi, f_hi)`` (``secant_hi`` defaults to ``hi``;
    a caller whose ``hi`` is rounded outward from the point it evaluated passes that point),
    used where ``f_lo`` and ``f_hi`` are finite and of opposite signs (else the midpoint); moved
    toward the midpoint by ``max(κ·width², min(tol, width)/4)`` so that both ends keep moving;
    then projected within ``tol·2^steps/2 − width/2`` of the midpoint. With ``steps`` the steps
    left of ``⌈log₂(width₀/tol)⌉ + n₀``, the bracket is below ``tol`` after that many steps.
    """
    width = hi - lo
    middle = lo + width / 2
    falsi = middle
    if math.isfinite(f_lo) and math.isfinite(f_hi) and (f_lo > 0) != (f_hi > 0):
        x_hi = hi if secant_hi is None else secant_hi
        falsi = min(max(lo + (x_hi - lo) * f_lo / (f_lo - f_hi), lo), hi)
    sign = 1.0 if middle >= falsi else -1.0
    shift = max(kappa * width * width, min(tol, width) / 4)
    truncated = falsi + sign * shift if shift <= abs(middle - falsi) else middle
    reach = max(math.ldexp(tol, steps) / 2 - width / 2, 0.0)
    x = truncated if abs(truncated - middle) <= reach else middle - sign * reach
    return x if lo < x < hi else middle
