"""Rényi capacities at small orders 0 < α ≤ 0.05 (issue 10, item 5).

``C_α = max_p I_α^S(p, W) = min_Q max_x D_α(W_x ‖ Q)`` (docs/mathematics.rst §4) is
non-decreasing in α, with ``C_0 = −log min_p max_y p(supp W_·y)`` (a linear programme) and
``C_∞ = log Σ_y max_x W_xy``; so ``C_0 ≤ C_α ≤ C_∞ ≤ log min(|X|, |Y|)``. The references:

* the channel ``[[1, 0], [0.3, 0.7], [0, 1]]`` has ``C_0 = C_∞ = log 2``, hence ``C_α = log 2`` for
  every α (checked below in mpmath: the prior (½, 0, ½) attains log 2, a grid never exceeds it);
* channels with two or three inputs are maximised directly in mpmath: ``I_α^S(p) = α/(α−1) log
  N(p)``, ``N(p) = Σ_y (Σ_x p_x W_xy^α)^{1/α}`` convex in ``p``, by (nested) golden sections;
  the prior found gives a certified lower end, and the radius at its ``Q_p ∝ (pW^α)^{1/α}`` an
  upper end;
* a direct sum of channels (block diagonal) has ``C_α = log(e^{C_α(W_1)} + e^{C_α(W_2)})`` (split
  the centre's mass between the blocks and equalise the two radii);
* 4 × 4 channels with zeros are checked against a grid of priors (a lower end) and a grid of
  centres (an upper end), both evaluated in mpmath.

Every expected value comes from these references, never from dpcap's own output.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Iterator

import mpmath as mp  # type: ignore[import-untyped]
import numpy as np
import pytest
from numpy.typing import NDArray

import dpcap
from dpcap import Status
from dpcap.mechanisms import per_entry
from dpcap.solvers import conic

FloatArray = NDArray[np.float64]
TOL = 1e-9
LN2 = math.log(2.0)
LN2_UP = math.nextafter(LN2, math.inf)  # the float just above log 2 (≥ the true value)
SMALL = [1e-6, 3e-6, 1e-5, 1e-4, 1e-3, 3e-3, 0.01, 0.011, 0.02, 0.05]
W3 = np.array([[1.0, 0.0], [0.3, 0.7], [0.0, 1.0]])


@pytest.fixture(autouse=True)
def _precision() -> Iterator[None]:
    """40 digits for every reference here, whatever other modules set globally."""
    with mp.workdps(40):
        yield


needs_cvxpy = pytest.mark.skipif(
    not hasattr(conic, "renyi_capacity_conic"), reason="the power-cone engine is not there"
)


# --------------------------------------------------------------------------------------------
# Independent references (mpmath)
# --------------------------------------------------------------------------------------------


def mp_rows(W: FloatArray, alpha: float) -> list[list[mp.mpf]]:
    """``W_xy^α`` in mpmath (rows divided by their exact sums; ``0^α = 0``)."""
    a = mp.mpf(alpha)
    out = []
    for row in W:
        total = mp.fsum(mp.mpf(float(v)) for v in row)
        out.append([(mp.mpf(float(v)) / total) ** a if v > 0 else mp.mpf(0) for v in row])
    return out


def mp_log_norm(V: list[list[mp.mpf]], p: list[mp.mpf], alpha: float) -> mp.mpf:
    """``log N(p) = log Σ_y (Σ_x p_x V_xy)^{1/α}``."""
    r = 1 / mp.mpf(alpha)
    logs = []
    for y in range(len(V[0])):
        s = mp.fsum(p[x] * V[x][y] for x in range(len(V)))
        if s > 0:
            logs.append(r * mp.log(s))
    top = max(logs)
    return top + mp.log(mp.fsum(mp.exp(v - top) for v in logs))


def mp_sibson(V: list[list[mp.mpf]], p: list[mp.mpf], alpha: float) -> mp.mpf:
    a = mp.mpf(alpha)
    return a / (a - 1) * mp_log_norm(V, p, alpha)


def mp_radius(W: FloatArray, alpha: float, Q: list[mp.mpf]) -> mp.mpf:
    """``max_x D_α(W_x ‖ Q)`` (an upper end for every output law ``Q``)."""
    a = mp.mpf(alpha)
    V = mp_rows(W, alpha)
    total = mp.fsum(Q)
    worst = mp.mpf("-inf")
    for row in V:
        S = mp.fsum(v * (q / total) ** (1 - a) for v, q in zip(row, Q, strict=True) if v > 0)
        worst = max(worst, mp.log(S) / (a - 1))
    return worst


def mp_response(V: list[list[mp.mpf]], p: list[mp.mpf], alpha: float) -> list[mp.mpf]:
    """``Q_p ∝ (pW^α)^{1/α}``, computed in the log domain."""
    r = 1 / mp.mpf(alpha)
    logs = []
    for y in range(len(V[0])):
        s = mp.fsum(p[x] * V[x][y] for x in range(len(V)))
        logs.append(r * mp.log(s) if s > 0 else None)
    top = max(v for v in logs if v is not None)
    return [mp.exp(v - top) if v is not None else mp.mpf(0) for v in logs]


def golden(f, lo: mp.mpf, hi: mp.mpf, steps: int) -> tuple[mp.mpf, mp.mpf]:  # type: ignore[no-untyped-def]
    """``(argmin, min)`` of a unimodal ``f`` on ``[lo, hi]``."""
    ratio = (mp.sqrt(5) - 1) / 2
    c, d = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - ratio * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + ratio * (hi - lo)
            fd = f(d)
    return (c, fc) if fc < fd else (d, fd)


def mp_capacity(W: FloatArray, alpha: float) -> tuple[float, float]:
    """Certified ``(lower, upper)`` of ``C_α`` for 2 or 3 inputs, by golden sections on the
    convex ``log N(p)`` (minimised, since α/(α−1) < 0)."""
    V = mp_rows(W, alpha)
    one = mp.mpf(1)
    if W.shape[0] == 2:
        t, _ = golden(lambda t: mp_log_norm(V, [t, one - t], alpha), mp.mpf(0), one, 90)
        p = [t, one - t]
    else:
        assert W.shape[0] == 3

        def inner(t: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
            return golden(
                lambda s: mp_log_norm(V, [t, s, one - t - s], alpha), mp.mpf(0), one - t, 70
            )

        t, _ = golden(lambda t: inner(t)[1], mp.mpf(0), one, 70)
        s, _ = inner(t)
        p = [t, s, one - t - s]
    lower = mp_sibson(V, p, alpha)
    upper = mp_radius(W, alpha, mp_response(V, p, alpha))
    return float(lower), float(upper)


def assert_brackets_truth(res: dpcap.CapacityResult, lower: float, upper: float) -> None:
    """``res`` is certified to TOL and overlaps the certified reference ``[lower, upper]``."""
    assert res.status is Status.CONVERGED, res.message
    assert res.upper - res.lower <= TOL
    assert res.upper >= lower - 1e-12, (res.upper, lower)
    assert res.lower <= upper + 1e-12, (res.lower, upper)


def sparse_channel(seed: int, n: int = 4) -> FloatArray:
    """A random n × n channel with about 40% zeros (the family that failed at small α)."""
    rng = np.random.default_rng(seed)
    W = rng.random((n, n)) * (rng.random((n, n)) < 0.6)
    W[:, 0] += 1e-3 * (W.sum(axis=1) == 0)
    out: FloatArray = W / W.sum(axis=1, keepdims=True)
    return out


# --------------------------------------------------------------------------------------------
# The 3 × 2 channel of the issue: C_α = log 2 for every α
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1e-6, 0.01, 0.05, 0.5])
def test_three_by_two_closed_form_in_mpmath(alpha: float) -> None:
    """``I_α^S((½, 0, ½)) = log 2`` and ``C_∞ = log Σ_y max_x W_xy = log 2``; a grid of priors
    never exceeds log 2 (and reaches it only at the vertex pair)."""
    V = mp_rows(W3, alpha)
    half = mp.mpf(1) / 2
    assert abs(mp_sibson(V, [half, mp.mpf(0), half], alpha) - mp.log(2)) < mp.mpf(10) ** -35
    assert mp.log(mp.fsum(max(mp.mpf(float(v)) for v in col) for col in W3.T)) == mp.log(2)
    grid = [mp.mpf(k) / 20 for k in range(21)]
    best = max(mp_sibson(V, [a, b, 1 - a - b], alpha) for a in grid for b in grid if a + b <= 1)
    assert best <= mp.log(2) + mp.mpf(10) ** -30


@pytest.mark.parametrize("alpha", SMALL)
def test_three_by_two_is_log_two(alpha: float) -> None:
    """It ran 11–30 s to max_iter and returned [0.41, 0.93] (above log 2) at α = 0.01."""
    res = dpcap.renyi_capacity(W3, alpha)
    assert res.status is Status.CONVERGED, res.message
    assert mp.mpf(res.lower) <= mp.log(2) <= mp.mpf(res.upper)
    assert res.upper - res.lower <= TOL
    assert res.upper <= LN2_UP  # never above log min(|X|, |Y|)


@pytest.mark.parametrize("alpha", [1e-6, 0.01])
def test_three_by_two_arimoto_and_units(alpha: float) -> None:
    res = dpcap.renyi_capacity(W3, alpha, kind="arimoto")
    assert res.status is Status.CONVERGED
    assert mp.mpf(res.lower) <= mp.log(2) <= mp.mpf(res.upper) <= LN2_UP
    bits = dpcap.renyi_capacity(W3, alpha, unit="bits")
    assert bits.lower <= 1.0 + 1e-15
    assert bits.upper >= 1.0 - 1e-15


@needs_cvxpy
@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
@pytest.mark.parametrize("alpha", [1e-6, 1e-3, 0.01, 0.05])
def test_three_by_two_conic(alpha: float, solver: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # cvxpy's own notices
        res = dpcap.renyi_capacity(W3, alpha, method="conic", solver=solver)
    assert res.status is Status.CONVERGED, res.message
    assert mp.mpf(res.lower) <= mp.log(2) <= mp.mpf(res.upper) <= LN2_UP


@needs_cvxpy
@pytest.mark.parametrize("alpha", [1e-6, 0.01, 0.3])
def test_conic_centre_form_is_accurate(alpha: float) -> None:
    """Below α = 1/2 the power-cone program is the radius-centre form: its objective is within
    the solver's tolerance of C_α (the prior form was 0.2–0.3 nats off at α = 1e-3)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        raw = conic.renyi_capacity_conic(W3, alpha)
    assert raw.output is not None
    assert raw.objective == pytest.approx(LN2, abs=1e-7)
    assert float(raw.output.sum()) == pytest.approx(1.0)


def test_profile_over_small_orders() -> None:
    """It decreased in α (impossible) and left the small orders open."""
    alphas = [0.05, 1e-6, 0.011, 0.01, 1e-3, 0.0, 0.5]
    prof = dpcap.renyi_profile(W3, alphas)
    assert all(s is Status.CONVERGED for s in prof.status), prof.message
    for lower, upper in zip(prof.lower, prof.upper, strict=True):
        assert mp.mpf(lower) <= mp.log(2) <= mp.mpf(upper) <= LN2_UP


def test_renyi_midp_small_orders() -> None:
    """A plain matrix (its radius) and two entries through W3 (every slice is W3 ⊗ a fixed row,
    whose radius is W3's; its entries are rounded products, so C_∞ of a slice is log 2 only to
    within a few ulps, and the cap is rounded up)."""
    for alpha in (1e-6, 0.01, 0.05):
        for M, cap in ((W3, LN2_UP), (per_entry(2, W3), LN2 + 1e-14)):
            res = dpcap.renyi_midp(M, alpha)
            assert res.status is Status.CONVERGED, res.message
            assert mp.mpf(res.lower) <= mp.log(2) <= mp.mpf(res.upper) <= cap


# --------------------------------------------------------------------------------------------
# Random channels against mpmath
# --------------------------------------------------------------------------------------------

TWO_INPUTS = [
    np.array([[0.6, 0.4, 0.0], [0.0, 0.3, 0.7]]),
    np.array([[0.9, 0.1], [0.2, 0.8]]),
    np.array([[0.5, 0.5, 0.0, 0.0], [0.1, 0.0, 0.2, 0.7]]),
    np.array([[1.0, 1e-200], [1e-150, 1.0]]),
]


@pytest.mark.parametrize("case", range(len(TWO_INPUTS)))
@pytest.mark.parametrize("alpha", [1e-6, 1e-4, 0.01, 0.05])
def test_two_inputs_against_golden_section(case: int, alpha: float) -> None:
    W = TWO_INPUTS[case]
    lower, upper = mp_capacity(W, alpha)
    assert upper - lower <= 1e-9
    assert_brackets_truth(dpcap.renyi_capacity(W, alpha), lower, upper)


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("alpha", [1e-6, 0.01, 0.05])
def test_three_inputs_against_nested_golden_section(seed: int, alpha: float) -> None:
    W = sparse_channel(seed, 3)
    lower, upper = mp_capacity(W, alpha)
    assert upper - lower <= 1e-8
    res = dpcap.renyi_capacity(W, alpha)
    assert_brackets_truth(res, lower, upper)
    assert res.lower >= lower - 1e-9  # at least as good as the reference prior


@pytest.mark.parametrize("alpha", [1e-6, 0.01, 0.05])
def test_direct_sum_closed_form(alpha: float) -> None:
    """``C_α(W_1 ⊕ W_2) = log(e^{C_1} + e^{C_2})``, each block's radius by golden section."""
    W1, W2 = TWO_INPUTS[0], TWO_INPUTS[1]
    (l1, u1), (l2, u2) = mp_capacity(W1, alpha), mp_capacity(W2, alpha)
    W = np.zeros((4, 5))
    W[:2, :3], W[2:, 3:] = W1, W2
    lower = math.log(math.exp(l1) + math.exp(l2))
    upper = math.log(math.exp(u1) + math.exp(u2))
    assert_brackets_truth(dpcap.renyi_capacity(W, alpha), lower, upper)


def grid_bracket(W: FloatArray, alpha: float, steps: int = 8) -> tuple[float, float]:
    """A coarse certified bracket: the best Sibson information over a grid of priors and the
    least radius over a grid of centres (mpmath)."""
    V = mp_rows(W, alpha)
    n, k = W.shape
    points = [
        [mp.mpf(c) / steps for c in combo]
        for combo in itertools.product(range(steps + 1), repeat=max(n, k) - 1)
        if sum(combo) <= steps
    ]
    lower = max(mp_sibson(V, [*pt[: n - 1], 1 - mp.fsum(pt[: n - 1])], alpha) for pt in points)
    upper = min(
        mp_radius(W, alpha, [*pt[: k - 1], 1 - mp.fsum(pt[: k - 1])])
        for pt in points
        if 1 - mp.fsum(pt[: k - 1]) >= 0
    )
    return float(lower), float(upper)


@pytest.mark.parametrize("seed", [0, 4, 9])
@pytest.mark.parametrize("alpha", [1e-6, 0.01])
def test_sparse_four_by_four(seed: int, alpha: float) -> None:
    """Seeds 0, 4 and 9 gave upper ends of 4e5, 1.1e6 and 6.9e5 nats at α = 1e-6."""
    W = sparse_channel(seed)
    res = dpcap.renyi_capacity(W, alpha)
    assert res.status is Status.CONVERGED, res.message
    assert res.upper - res.lower <= TOL
    assert res.upper <= math.nextafter(math.log(4), math.inf)
    lower, upper = grid_bracket(W, alpha)
    assert res.lower >= lower - 1e-12  # at least as good as every prior of the grid
    assert res.upper <= upper + 1e-12  # and as every centre of the grid
    # the lower end is attained: Sibson's information of the returned prior, in mpmath
    prior = [mp.mpf(float(v)) for v in res.prior]
    assert res.lower <= mp_sibson(mp_rows(W, alpha), prior, alpha) + 1e-14


@pytest.mark.parametrize("seed", [0, 2, 3, 4, 5, 7, 9])
def test_profile_non_decreasing_on_sparse_channels(seed: int) -> None:
    alphas = [0.05, 0.02, 0.011, 0.01, 1e-3, 1e-5, 1e-6, 0.0]
    prof = dpcap.renyi_profile(sparse_channel(seed), alphas)
    assert all(s is Status.CONVERGED for s in prof.status), prof.message
    order = np.argsort(prof.alpha)
    assert np.all(np.diff(prof.value[order]) >= 0)
    assert np.all(prof.upper <= math.nextafter(math.log(4), math.inf))


@pytest.mark.parametrize("alpha", [0.15, 0.3, 0.45])
def test_the_engine_trial_agrees_with_the_interior_point(alpha: float) -> None:
    """Between TRIAL_ORDER and ENGINE_ORDER the BA/Newton engine runs first as a bounded trial.
    On a dense channel it certifies the order alone, and its bracket must overlap the interior
    point's (two independent methods: Q eliminated through Q_p, or kept as a variable); on a
    channel whose rows have different supports, the interior point still closes it."""
    from dpcap.renyi_radius import radius_below_one

    dense = np.random.default_rng(11).dirichlet(np.ones(24), size=24)
    res = dpcap.renyi_capacity(dense, alpha)
    assert res.status is Status.CONVERGED
    assert "BA/Newton engine" in res.message
    (low, up, _), _, how = radius_below_one(dense, alpha, 1e-9, 10_000, engine=False)
    assert "interior point" in how
    assert max(low, res.lower) <= min(up, res.upper) + 1e-15
    sparse = np.random.default_rng(12).dirichlet(np.full(10, 0.05), size=10)
    assert dpcap.renyi_capacity(sparse, alpha).status is Status.CONVERGED
