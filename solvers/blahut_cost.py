"""Capacity under an input cost: the Lagrangian model for the capacity engine and its certificates.

For costs ``c_x ≥ 0`` and a budget ``P``, the capacity–cost function is
``C(P) = max {I(p, W) : Σ_x p_x c_x ≤ P}`` (``docs/mathematics.rst`` §12). For a multiplier
``s ≥ 0`` the Lagrangian problem

    C_s = max_p [I(p, W) − s Σ_x p_x c_x]

is a capacity problem whose per-input "divergences" are ``D_x(p) − s c_x`` (Blahut 1972, §II):
for every prior ``p``

    Σ_x p_x (D_x(p) − s c_x)  ≤  C_s  ≤  max_x (D_x(p) − s c_x),

the Shannon bracket shifted by the costs, with the same Jacobian (the shift is constant).
:class:`CostShannon` hands these quantities to the shared engine
:func:`dpcap.solvers.blahut.solve`, whose Blahut–Arimoto step is then Blahut's
``p ← p e^{D(p) − s c}``. The dual certificate of ``C(P)`` is, for every ``s ≥ 0`` and every
output law ``Q``,

    C(P)  ≤  s P + max_x [D(W_x ‖ Q) − s c_x],

evaluated with its rounding bounded by :func:`dual_bound`; a prior meets the budget when
:func:`within_budget` says so, in exact rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import blahut, rounding

FloatArray = NDArray[np.float64]

__all__ = ["CostShannon", "dual_bound", "exact_mean", "solve", "within_budget"]

U = rounding.U


class CostShannon:
    """Engine model of the Lagrangian ``C_s = max_p [I(p, W) − s Σ_x p_x c_x]``.

    ``shift`` is ``s·c`` per element of the stack, shape ``(B, nx)`` (or ``(nx,)``, the same
    for every element). Shannon's per-input constants are the negative row entropies
    ``Σ_y W_xy log W_xy`` (:meth:`dpcap.solvers.blahut.Shannon.prepare`), and
    ``D_x(p) = Σ_y W_xy log W_xy − Σ_y W_xy log q_y``: subtracting the shift from the constants
    gives ``D_x(p) − s c_x`` from Shannon's own formula, with its treatment of outputs outside
    the support of ``pW`` (``D_x = ∞``). The lower bound is ``Σ_x p_x (D_x − s c_x)``, not
    clipped at 0 (a Lagrangian may be negative); the Jacobian is Shannon's.
    """

    def __init__(self, shift: FloatArray) -> None:
        self.shift = np.asarray(shift, dtype=np.float64)

    def prepare(self, W: FloatArray) -> FloatArray:
        """Shannon's constants minus the shift, ``(B, nx)``."""
        aux: FloatArray = blahut.SHANNON.prepare(W) - self.shift
        return aux

    def divergences(self, W: FloatArray, aux: FloatArray, p: FloatArray) -> FloatArray:
        """``D(W_x ‖ pW) − s c_x``."""
        D: FloatArray = blahut.SHANNON.divergences(W, aux, p)
        return D

    def lower(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        """``Σ_x p_x (D_x − s c_x)`` over the support of ``p``: the Lagrangian at ``p``."""
        on = p > 0
        value: FloatArray = np.sum(np.where(on, p * np.where(on, D, 0.0), 0.0), axis=-1)
        return value

    def jacobian(self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray) -> FloatArray:
        """Shannon's ``∂D_x/∂p_z = −Σ_y W_xy W_zy / q_y`` (the shift is constant)."""
        J: FloatArray = blahut.SHANNON.jacobian(W, aux, p, D)
        return J

    def jacobian_into(
        self, W: FloatArray, aux: FloatArray, p: FloatArray, D: FloatArray, out: FloatArray
    ) -> None:
        blahut.SHANNON.jacobian_into(W, aux, p, D, out)


def solve(
    W: FloatArray,
    cost: FloatArray,
    slope: float,
    *,
    tol: float,
    max_iter: int,
    initial: FloatArray | None = None,
) -> blahut.BatchSolution:
    """The engine on ``C_s`` of one channel ``W (nx, ny)`` at multiplier ``slope``.

    ``cost (nx,)`` is best shifted so that its least entry is 0 (then ``C_s ≥ 0``, attained by
    the cheapest input); ``initial (nx,)`` a starting prior. The solution is the engine's, for
    a stack of one element; nothing in it is a certificate of ``C(P)``.
    """
    model = CostShannon(slope * np.asarray(cost, dtype=np.float64)[None])
    start = None if initial is None else np.asarray(initial, dtype=np.float64)[None]
    return blahut.solve(W[None], tol=tol, max_iter=max_iter, initial=start, model=model)


def dual_bound(W: FloatArray, cost: FloatArray, budget: float, slope: float, Q: Any) -> float:
    """A rigorous upper bound on ``C(P)``: ``s P + max_x [D(W_x ‖ Q) − s c_x]``, rounded up.

    Valid for every ``s ≥ 0`` and every output law ``Q`` (``docs/mathematics.rst`` §12), here
    the vector ``Q ≥ 0`` divided by its exact sum, for the channel whose rows are the stored rows
    divided by their exact sums. ``D`` is bounded above by
    :func:`dpcap.solvers.rounding.divergence_bounds`. The costs enter through
    ``c'_x = c_x − c_min`` and ``P' = P − c_min`` (``c_min`` cancels exactly); each is rounded
    with a relative error of at most ``u``, and the few products and sums that follow add at
    most ``6u·M_x`` to the term of input ``x``, ``M_x = |D_x| + s c'_x + s P'``: each term is
    raised by ``8u·M_x`` before the maximum (a per-term allowance: an expensive input, whose
    term ``D_x − s c'_x`` is far below the maximum, does not widen the bound), and the value by
    ``2u`` of itself and one ulp. Where ``s c'_x`` overflows, the term is bounded by
    ``D_x(1 + 8u)`` (dropping ``−s c'_x ≤ 0``). ``+∞`` if some row puts mass where ``Q`` has
    none.
    """
    c = np.asarray(cost, dtype=np.float64)
    low = float(np.min(c))
    shifted = c - low
    room = budget - low
    _, high = rounding.divergence_bounds(W[None], np.asarray(Q, dtype=np.float64)[None], 1.0)
    D = high[0]
    if not np.isfinite(D).all():
        return math.inf
    with np.errstate(over="ignore", invalid="ignore"):
        charge = slope * shifted
        allowance = 8.0 * U * (np.abs(D) + charge + slope * abs(room))
        bounds = np.where(np.isfinite(charge), D - charge + allowance, D + 8.0 * U * np.abs(D))
    value = float(np.max(bounds)) + slope * room
    return math.nextafter(value + 2.0 * U * abs(value), math.inf)


def _integers(v: FloatArray) -> tuple[list[int], list[int]]:
    """Each float as ``m · 2^e`` with integers ``m``, ``e`` (exact, subnormals included)."""
    mantissa, exponent = np.frexp(np.asarray(v, dtype=np.float64))
    m = (mantissa * 2.0**53).astype(np.int64)  # |mantissa| < 1 has at most 53 bits: exact
    return m.tolist(), (exponent.astype(np.int64) - 53).tolist()


def _exact_dot(a: FloatArray, b: FloatArray) -> Fraction:
    """``Σ_x a_x b_x`` of float vectors, exactly (a rational with a power-of-two denominator)."""
    ma, ea = _integers(a)
    mb, eb = _integers(b)
    terms = [(x * y, i + j) for x, i, y, j in zip(ma, ea, mb, eb, strict=True) if x and y]
    if not terms:
        return Fraction(0)
    base = min(e for _, e in terms)
    total = sum(m << (e - base) for m, e in terms)
    return Fraction(total) * Fraction(2) ** base


def exact_mean(p: FloatArray, cost: FloatArray) -> Fraction:
    """The exact expected cost ``Σ_x p_x c_x / Σ_x p_x`` of the prior ``p/Σp`` (floats exact)."""
    mass = _exact_dot(p, np.ones_like(p))
    return _exact_dot(p, cost) / mass


def within_budget(p: FloatArray, cost: FloatArray, budget: float) -> bool:
    """Whether the prior ``p/Σp`` meets ``Σ_x p_x c_x ≤ P`` exactly (rational arithmetic on the
    float values of ``p``, ``c`` and ``P``: no rounding can make an infeasible prior pass)."""
    return _exact_dot(p, cost) <= Fraction(budget) * _exact_dot(p, np.ones_like(p))
