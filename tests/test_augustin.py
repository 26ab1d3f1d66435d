"""Augustin–Csiszár α-information ``I_α^C(p, W) = min_Q Σ_x p_x D_α(W_x ‖ Q)`` (issue 10, item 9).

``F(Q) = Σ_x p_x D_α(W_x ‖ Q)`` is convex in ``Q`` (docs/mathematics.rst §4), so at any output
law ``Q`` (every ``Q_y > 0`` where some row of positive weight has mass)

    F(Q) + 1 + min_y ∂_yF(Q)  ≤  I_α^C(p, W)  ≤  F(Q),     ∂_yF = −Σ_x p_x W_xy^α Q_y^{−α} / S_x,

(``S_x = Σ_y W_xy^α Q_y^{1−α}``, ``Σ_y Q_y ∂_yF = −1``): a bracket evaluated here in mpmath at 60
digits, at output laws of our own choosing or at the engine's (the bracket holds for every law,
so the truth it certifies does not depend on who chose it). Two-output channels are minimised
directly in mpmath over ``logit(Q_0)``, and α → 1 is compared with Shannon's mutual information.
Every expected value comes from these references, never from dpcap's own output.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence

import mpmath as mp  # type: ignore[import-untyped]
import numpy as np
import pytest
from numpy.typing import NDArray

import dpcap
from dpcap.solvers import renyi as renyi_engine

FloatArray = NDArray[np.float64]
TOL = 1e-9


@pytest.fixture(autouse=True)
def _precision() -> Iterator[None]:
    """60 digits for every reference here, whatever other modules set globally."""
    with mp.workdps(60):
        yield


def mp_objective(p: Sequence[float], W: FloatArray, alpha: float, Q: Sequence[object]) -> mp.mpf:
    """``F(Q) = Σ_x p_x D_α(W_x ‖ Q)`` in mpmath, for the rows and ``Q`` divided by their exact
    sums (rows of zero weight skipped)."""
    a = mp.mpf(alpha)
    Qm = [mp.mpf(q) for q in Q]
    Q_total = mp.fsum(Qm)
    total = mp.mpf(0)
    for x, weight in enumerate(p):
        if weight == 0:
            continue
        row = [mp.mpf(float(v)) for v in W[x]]
        row_total = mp.fsum(row)
        S = mp.fsum(
            (row[y] / row_total) ** a * (Qm[y] / Q_total) ** (1 - a)
            for y in range(W.shape[1])
            if W[x, y] > 0
        )
        total += mp.mpf(float(weight)) * mp.log(S) / (a - 1)
    return total


def mp_bracket(
    p: Sequence[float], W: FloatArray, alpha: float, Q: Sequence[object]
) -> tuple[mp.mpf, mp.mpf]:
    """``(F(Q) + 1 + min_y ∂_yF(Q), F(Q))``: a bracket of ``I_α^C`` valid at every law ``Q``."""
    a = mp.mpf(alpha)
    Qm = [mp.mpf(q) for q in Q]
    total = mp.fsum(Qm)
    Qm = [q / total for q in Qm]
    grad = [mp.mpf(0)] * W.shape[1]
    for x, weight in enumerate(p):
        if weight == 0:
            continue
        row_total = mp.fsum(mp.mpf(float(v)) for v in W[x])
        terms = {
            y: (mp.mpf(float(W[x, y])) / row_total) ** a for y in range(W.shape[1]) if W[x, y] > 0
        }
        S = mp.fsum(t * Qm[y] ** (1 - a) for y, t in terms.items())
        for y, t in terms.items():
            grad[y] -= mp.mpf(float(weight)) * t * Qm[y] ** (-a) / S
    value = mp_objective(p, W, alpha, Qm)
    return value + 1 + min(grad), value


def mp_two_outputs(p: Sequence[float], W: FloatArray, alpha: float) -> mp.mpf:
    """``min_Q F(Q)`` for two outputs: golden section over ``t = logit(Q_0)`` in mpmath.

    ``F`` is convex in ``Q_0``, hence unimodal in ``t`` (a monotone reparametrisation), and
    ``t ∈ [−1500, 1500]`` reaches masses far below the smallest double.
    """
    lo, hi = mp.mpf(-1500), mp.mpf(1500)
    ratio = (mp.sqrt(5) - 1) / 2

    def f(t: mp.mpf) -> mp.mpf:
        q0 = 1 / (1 + mp.exp(-t))
        return mp_objective(p, W, alpha, [q0, 1 / (1 + mp.exp(t))])

    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(260):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - ratio * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + ratio * (hi - lo)
            fd = f(d)
    return min(fc, fd)


def mp_mutual_information(p: Sequence[float], W: FloatArray) -> mp.mpf:
    q = [
        mp.fsum(mp.mpf(float(p[x])) * mp.mpf(float(W[x, y])) for x in range(len(p)))
        for y in range(W.shape[1])
    ]
    return mp.fsum(
        mp.mpf(float(p[x])) * mp.mpf(float(W[x, y])) * mp.log(mp.mpf(float(W[x, y])) / q[y])
        for x in range(len(p))
        for y in range(W.shape[1])
        if p[x] > 0 and W[x, y] > 0
    )


def tiny_entry_case(k: int) -> tuple[FloatArray, FloatArray]:
    """A 3 × 3 Dirichlet(1) channel with about 30% of its entries replaced by 10^U(−300, −20)
    and, for odd k, one prior mass likewise (the family in which item 9's failures show)."""
    rng = np.random.default_rng(k)
    W = rng.dirichlet(np.ones(3), size=3)
    mask = rng.random((3, 3)) < 0.3
    W[mask] = 10.0 ** rng.uniform(-300, -20, mask.sum())
    W /= W.sum(axis=1, keepdims=True)
    p = rng.dirichlet(np.ones(3))
    if k % 2:
        p[rng.integers(0, 3)] = 10.0 ** rng.uniform(-300, -20)
        p /= p.sum()
    return p, W


# --------------------------------------------------------------------------------------------
# The cases of the issue
# --------------------------------------------------------------------------------------------

NEAR_POINT_MASS = 2.86e-184
ZERO_PATTERN = np.array([[0.5, 0.5, 0.0], [0.0, 0.1, 0.9], [0.3, 0.0, 0.7]])


def test_near_point_mass_prior_at_order_5_is_about_zero() -> None:
    """p = (2.86e-184, 1 − 2.86e-184, 0): the value is ≈ 0 (it raised SolverError, gap 1.0).

    ``0 ≤ I^C ≤ F(Q_ε)`` at ``Q_ε = (1 − ε) W_1 + ε W_0``, ε = p_0: ``F(Q_ε) ≈ p_0 log(1/p_0)``.
    """
    p = np.array([NEAR_POINT_MASS, 1.0 - NEAR_POINT_MASS, 0.0])
    with mp.workdps(400):  # F(Q_ε) ≈ 1e-181 next to terms of order 1: 400 digits
        upper = mp_objective(p, ZERO_PATTERN, 5.0, near_point_mass_centre())
    assert 0 < upper < 1e-180
    value = dpcap.augustin_mi(p, ZERO_PATTERN, 5.0)
    assert 0.0 <= value <= float(upper) + TOL


def near_point_mass_centre() -> list[mp.mpf]:
    """``Q_ε = (1 − ε) W_1 + ε W_0`` with ε = p_0."""
    eps = mp.mpf(NEAR_POINT_MASS)
    return [
        (1 - eps) * mp.mpf(float(b)) + eps * mp.mpf(float(a))
        for a, b in zip(*ZERO_PATTERN[:2], strict=True)
    ]


def test_near_point_mass_engine_certifies() -> None:
    p = np.array([NEAR_POINT_MASS, 1.0 - NEAR_POINT_MASS, 0.0])
    F, gap, Q, _ = renyi_engine.augustin_information(p, ZERO_PATTERN, 5.0, tol=TOL, max_iter=1000)
    assert gap <= TOL
    lower, upper = mp_bracket(p, ZERO_PATTERN, 5.0, Q)
    assert upper - lower <= 2 * TOL
    assert float(lower) - 1e-15 <= F <= float(upper) + 1e-15


@pytest.mark.parametrize("k", [245, 191, 295, 399])
def test_tiny_entries_order_2_certified(k: int) -> None:
    """Random 3 × 3 cases with entries near 1e-300 at α = 2: no overflow warning, the gap
    closes and does not grow with the budget (k = 245 stalled at a gap of 1.8)."""
    p, W = tiny_entry_case(k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, gap_small, _, _ = renyi_engine.augustin_information(p, W, 2.0, tol=1e-14, max_iter=100)
        _, gap, Q, _ = renyi_engine.augustin_information(p, W, 2.0, tol=1e-14, max_iter=1000)
        value = dpcap.augustin_mi(p, W, 2.0)
    assert gap <= TOL
    assert gap <= gap_small + 1e-15
    lower, upper = mp_bracket(p, W, 2.0, Q)
    assert upper - lower <= 2 * TOL
    assert float(lower) - 1e-12 <= value <= float(upper) + 1e-12


@pytest.mark.parametrize("k", range(12))
@pytest.mark.parametrize("alpha", [0.3, 2.0, 5.0])
def test_random_channels_bracket_the_truth(k: int, alpha: float) -> None:
    p, W = tiny_entry_case(1000 + k) if k % 3 == 0 else (None, None)
    if p is None:
        rng = np.random.default_rng(k)
        W = rng.dirichlet(np.full(3, 0.3), size=3)
        p = rng.dirichlet(np.ones(3))
    assert W is not None
    _, gap, Q, _ = renyi_engine.augustin_information(p, W, alpha, tol=TOL, max_iter=1000)
    assert gap <= TOL
    lower, upper = mp_bracket(p, W, alpha, Q)
    assert upper - lower <= 2 * TOL
    value = dpcap.augustin_mi(p, W, alpha)
    assert float(lower) - 1e-12 <= value <= float(upper) + 1e-12


# --------------------------------------------------------------------------------------------
# Independent minimisation (two outputs) and the limit α → 1
# --------------------------------------------------------------------------------------------

TWO_OUTPUTS = [
    (np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([0.3, 0.7])),
    (np.array([[1.0, 0.0], [1e-250, 1.0]]), np.array([0.5, 0.5])),
    (np.array([[0.7, 0.3], [1e-30, 1.0], [0.5, 0.5]]), np.array([1e-200, 0.6, 0.4])),
    (np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([NEAR_POINT_MASS, 1 - NEAR_POINT_MASS])),
]


@pytest.mark.parametrize("case", range(len(TWO_OUTPUTS)))
@pytest.mark.parametrize("alpha", [0.3, 0.7, 2.0, 5.0, 20.0])
def test_two_outputs_against_direct_minimisation(case: int, alpha: float) -> None:
    W, p = TWO_OUTPUTS[case]
    expected = float(mp_two_outputs(p, W, alpha))
    value = dpcap.augustin_mi(p, W, alpha)
    assert value == pytest.approx(expected, abs=TOL, rel=1e-9)


@pytest.mark.parametrize("delta", [-1e-7, 1e-7])
def test_order_near_one_is_shannon(delta: float) -> None:
    """``I_α^C → I(X; Y)`` as α → 1; the difference is O(|α − 1|) (here well below 1e-5)."""
    rng = np.random.default_rng(7)
    W = rng.dirichlet(np.ones(4), size=3)
    p = rng.dirichlet(np.ones(3))
    shannon = float(mp_mutual_information(p, W))
    assert dpcap.augustin_mi(p, W, 1.0) == pytest.approx(shannon, abs=1e-13)
    assert dpcap.augustin_mi(p, W, 1.0 + delta) == pytest.approx(shannon, abs=1e-5)
    assert math.isfinite(dpcap.augustin_mi(p, W, 1.0 + delta))


@pytest.mark.parametrize("delta", [1e-12, -1e-12, 1e-10, -1e-10])
def test_orders_next_to_one_are_shannon_to_first_order(delta: float) -> None:
    """``|I_α^C − I| = O(|α − 1|)``: the value divided its rounding by |α − 1| before (−2.1e-7 at
    α = 1 + 1e-10, 1.7e-4 at 1 − 1e-12)."""
    rng = np.random.default_rng(1)
    W = rng.dirichlet(np.ones(3), size=3)
    p = rng.dirichlet(np.ones(3))
    shannon = dpcap.mutual_information(p, W)
    assert abs(dpcap.augustin_mi(p, W, 1.0 + delta) - shannon) <= 10 * abs(delta) + 1e-14
