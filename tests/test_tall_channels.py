"""Tall channels (issue 26): a capacity is carried by the extreme rows, so two-output channels
of any height are two-row problems, certified over every row.

Expected values are independent of the engine: the mutual information of the full tall matrix,
maximised over the weight of its two extreme rows by golden-section search (a lower bound
attained by a concrete prior), and the upper bound ``max_x D(W_x ‖ q)`` over every row at the
output law of that prior.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap


def _information(W: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    q = p @ W
    with np.errstate(divide="ignore", invalid="ignore"):
        D = np.sum(np.where(W > 0, W * np.log(W / q), 0.0), axis=1)
    return float(p @ D), float(D.max())


def _golden(W: np.ndarray) -> tuple[float, float]:
    lo_row, hi_row = int(np.argmin(W[:, 0])), int(np.argmax(W[:, 0]))

    def info(t: float) -> float:
        p = np.zeros(len(W))
        p[lo_row] += t
        p[hi_row] += 1 - t
        return _information(W, p)[0]

    a, b = 0.0, 1.0
    g = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        c, d = b - g * (b - a), a + g * (b - a)
        if info(c) < info(d):
            a = c
        else:
            b = d
    t = (a + b) / 2
    p = np.zeros(len(W))
    p[lo_row] += t
    p[hi_row] += 1 - t
    return _information(W, p)


@pytest.mark.parametrize("n", [3, 1000, 100_000])
def test_two_output_channels_of_any_height(n: int) -> None:
    W = np.random.default_rng(n).dirichlet([1.0, 1.0], size=n)
    r = dpcap.capacity(W)
    assert r.status is dpcap.Status.CONVERGED
    inner, outer = _golden(W)
    assert r.lower <= outer + 1e-12
    assert inner <= r.upper + 1e-12
    assert abs(r.value - inner) < 1e-9
    assert int(np.count_nonzero(r.prior)) <= 2


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 60), st.integers(0, 2**32 - 1), st.floats(0.5, 4.0))
def test_interior_rows_never_change_capacity(n: int, seed: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    W = rng.dirichlet([1.0, 1.0], size=n)
    ends = W[[int(np.argmin(W[:, 0])), int(np.argmax(W[:, 0]))]]
    full, two = dpcap.capacity(W), dpcap.capacity(ends)
    assert full.lower <= two.upper + 1e-12
    assert two.lower <= full.upper + 1e-12
    sib_full, sib_two = dpcap.renyi_capacity(W, alpha), dpcap.renyi_capacity(ends, alpha)
    assert sib_full.lower <= sib_two.upper + 1e-12
    assert sib_two.lower <= sib_full.upper + 1e-12


def test_a_cost_keeps_every_row() -> None:
    # under an input cost the interior rows matter: the cheap middle row is the one to use
    W = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    r = dpcap.capacity(W, cost=[1.0, 0.0, 1.0], budget=0.0)
    assert r.value == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("n", "m", "seed"), [(700, 6, 1), (800, 3, 2), (1200, 10, 3), (600, 200, 4)]
)
def test_tall_channels_on_a_working_set_agree_with_the_conic_engine(
    n: int, m: int, seed: int
) -> None:
    W = np.random.default_rng(seed).dirichlet(np.ones(m), size=n)
    r = dpcap.capacity(W)
    assert r.status is dpcap.Status.CONVERGED
    assert "working set" in r.message
    conic = dpcap.capacity(W, method="conic")
    assert r.lower <= conic.upper + 1e-12
    assert conic.lower <= r.upper + 1e-12
    # the radius bound over every row at the returned output law
    _, outer = _information(W, r.prior)
    assert outer <= r.upper + 1e-9


def test_ten_thousand_by_eight_is_solved_without_a_dense_system() -> None:
    W = np.random.default_rng(7).dirichlet(np.ones(8), size=10_000)
    r = dpcap.capacity(W)
    assert r.status is dpcap.Status.CONVERGED
    assert np.count_nonzero(r.prior > 1e-9) <= 8 + 8  # at most |Y| in an optimal support
    inner, outer = _information(W, r.prior)
    assert r.lower <= inner + 1e-9
    assert outer <= r.upper + 1e-9


@pytest.mark.parametrize(("alpha", "n", "m", "seed"), [(0.5, 700, 20, 5), (2.0, 900, 40, 6),
                                                       (10.0, 600, 12, 7)])  # fmt: skip
def test_tall_sibson_capacities_on_a_working_set_agree_with_the_full_engine(
    alpha: float, n: int, m: int, seed: int
) -> None:
    from dpcap.solvers import blahut, renyi

    W = np.random.default_rng(seed).dirichlet(np.ones(m), size=n)
    r = dpcap.renyi_capacity(W, alpha)
    assert r.status is dpcap.Status.CONVERGED
    assert "working set" in r.message
    # the engine on every row, with its own (uncertified) bracket
    full = blahut.solve(W[None], tol=1e-10, model=renyi.Sibson(alpha))
    assert r.lower <= full.upper[0] + 1e-9
    assert full.lower[0] <= r.upper + 1e-9
    # the lower end is Sibson's information of the returned prior, over the whole channel
    lower, _ = dpcap.solvers.rounding.bracket(W[None], r.prior[None], alpha=alpha)
    assert lower[0] == pytest.approx(r.lower, abs=1e-9)
