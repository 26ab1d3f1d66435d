"""Clamped noise on a line kept by its structure (dpcap.line_noise, solvers/band.py).

The structured paths are checked against the dense matrix and its own kernels, and against the
closed forms of truncated geometric noise (Ghosh–Roughgarden–Sundararajan; Cuff & Yu Example 3
for the MI-DP of a count: the slice of two neighbouring counts is a binary symmetric channel of
crossover 1/(1 + e^ε) in the interior).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpcap
from dpcap import mechanisms as mech
from dpcap.line_noise import LineNoise
from dpcap.shannon._band import solve_band


def _h(x: float) -> float:
    return -x * math.log(x) - (1 - x) * math.log(1 - x)


NOISES = [
    ("geometric", lambda n: mech.truncated_geometric(n, 1.0)),
    ("geometric-small-eps", lambda n: mech.truncated_geometric(n, 0.3)),
    ("gaussian", lambda n: mech.discrete_gaussian(n, 2.0)),
    ("staircase", lambda n: mech.staircase(n, 1.0)),
    ("geometric-underflow", lambda n: mech.truncated_geometric(n, 12.0)),
]


def test_dense_matrix_is_the_closed_form() -> None:
    n, eps = 7, 0.7
    W = mech.truncated_geometric(n, eps)
    assert isinstance(W, LineNoise)
    a = math.exp(-eps)
    x, y = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    expected = (1 - a) / (1 + a) * a ** np.abs(x - y)
    expected[:, 0] = a ** x[:, 0] / (1 + a)
    expected[:, n] = a ** (n - x[:, 0]) / (1 + a)
    np.testing.assert_allclose(W.matrix, expected, rtol=1e-14)
    np.testing.assert_array_equal(W.rows([0, 3, 7]), W.matrix[[0, 3, 7]])


@pytest.mark.parametrize(("name", "make"), NOISES)
def test_line_metrics_agree_with_the_dense_kernels(name: str, make) -> None:  # type: ignore[no-untyped-def]
    # n large enough that the band is narrower than the line: outputs far from a pair merge
    n = 260
    W = make(n)
    assert W.band() < n or name == "gaussian"
    A = np.asarray(W).copy()
    L = W.log_matrix
    dense = A if L is None else dpcap.Channel(A, neighbors="line", log_matrix=L)
    grid = np.array([0.0, 0.1, 0.5, 1.0, 3.0])
    assert dpcap.dp_epsilon(W) == dpcap.dp_epsilon(dense, neighbors="line")
    tol = 1e-15
    np.testing.assert_allclose(
        dpcap.dp_delta_curve(W, grid), dpcap.dp_delta_curve(dense, grid, neighbors="line"), atol=tol
    )
    assert dpcap.kl_dp(W) == pytest.approx(dpcap.kl_dp(dense, neighbors="line"), abs=tol)
    assert dpcap.renyi_dp(W, 3.0) == pytest.approx(
        dpcap.renyi_dp(dense, 3.0, neighbors="line"), abs=1e-13
    )
    assert dpcap.tv_dp(W) == pytest.approx(dpcap.tv_dp(dense, neighbors="line"), abs=tol)
    assert dpcap.max_leakage(W) == pytest.approx(dpcap.max_leakage(A), rel=1e-14)


@pytest.mark.parametrize("n", [1, 2, 5, 300])
def test_count_midp_against_the_dense_slices(n: int) -> None:
    M = mech.counting_query(n, mech.truncated_geometric(n, 0.9))
    structured = dpcap.midp(M)
    dense = dpcap.midp(dpcap.Mechanism.additive([[0, 1]] * n, M.noise))  # dense noise rows
    assert structured.lower <= dense.upper + 1e-12
    assert dense.lower <= structured.upper + 1e-12
    assert structured.upper - structured.lower <= 1e-9


def test_count_of_a_hundred_thousand() -> None:
    n, eps = 100_000, 1.0
    M = mech.counting_query(n, mech.truncated_geometric(n, eps))
    assert dpcap.dp_epsilon(M) == pytest.approx(eps, abs=1e-10)
    res = dpcap.midp(M)
    closed = math.log(2) - _h(1 / (1 + math.e))  # a BSC(1/(1+e^ε)) slice
    assert res.lower - 1e-12 <= closed <= res.upper + 1e-12
    assert res.upper - res.lower <= 1e-9
    grid = [0.0, 0.5, 1.0]
    a = math.exp(-eps)
    # interior pairs: δ(ε') = P(Z ≤ 0)(1 − e^{ε'−ε}) for ε' ≤ ε, with P(Z ≤ 0) = 1/(1 + a)
    expected = [(1 - math.exp(e - eps)) / (1 + a) for e in grid]
    np.testing.assert_allclose(dpcap.dp_delta_curve(M, grid), expected, atol=1e-14)
    assert dpcap.kl_dp(M) == pytest.approx(math.tanh(eps / 2) * eps, rel=1e-12)
    expected_ml = math.log(2 / (1 + a) + (n - 1) * math.tanh(eps / 2))
    assert dpcap.max_leakage(M) == pytest.approx(expected_ml, rel=1e-13)


@pytest.mark.parametrize(
    "make",
    [lambda n: mech.truncated_geometric(n, 1.0), lambda n: mech.truncated_geometric(n, 0.25)],
)
def test_band_capacity_agrees_with_the_dense_engine(make) -> None:  # type: ignore[no-untyped-def]
    W = make(400)
    band = solve_band(W, 1e-9, 0.0, 400, "nats")
    dense = dpcap.capacity(np.asarray(W))
    assert band.status.value == "converged"
    assert band.lower <= dense.upper + 1e-12
    assert dense.lower <= band.upper + 1e-12
    assert abs(band.prior.sum() - 1) < 1e-12
    assert band.output.shape == (401,)


def test_band_capacity_of_a_long_count() -> None:
    n = 3000  # above BAND_ABOVE: the band engine (it converges within its trial)
    W = mech.truncated_geometric(n, 1.0)
    M = mech.counting_query(n, W)
    res = dpcap.capacity(M)
    assert res.status.value == "converged"
    assert "band" in res.message
    assert res.upper - res.lower <= 1e-9
    # the bracket against Blahut's certificate evaluated here, in plain NumPy on the dense
    # matrix: I(p, W) ≤ C ≤ max_x D(W_x ‖ pW) at the returned law p on the counts
    A, p = np.asarray(W), res.total_prior
    q = p @ A
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(A > 0, A * np.log(A / q), 0.0)
    D = terms.sum(axis=1)
    assert abs(float(p @ D) - res.lower) <= 1e-10  # the lower end is I at the returned law
    assert res.upper <= float(D.max()) + 1e-10  # and the upper end is at least as tight
    assert res.databases.shape == (n + 1, n)
    assert res.databases[2].tolist() == [0] * (n - 2) + [1, 1]


def test_structure_survives_relations_and_equality() -> None:
    W = mech.truncated_geometric(50_000, 1.0)
    V = W.with_neighbors("all")
    assert isinstance(V, LineNoise)
    assert V.neighbors == "all"
    assert mech.truncated_geometric(50_000, 1.0) == W
    assert W != V
    assert mech.discrete_laplace(50_000, 1.0) == W
    with pytest.raises(dpcap.ProblemTooLargeError, match="would be a dense"):
        dpcap.dp_epsilon(W, neighbors="all")  # every pair: the dense matrix is needed
    small = mech.truncated_geometric(4, 1.0)
    assert dpcap.dp_epsilon(small, neighbors="all") == pytest.approx(4.0)


def test_demo_of_a_large_count(capsys: pytest.CaptureFixture[str]) -> None:
    from dpcap.cli import main

    assert main(["demo", "--n", "5000", "--json"]) == 0
    out = capsys.readouterr().out
    import json

    report = json.loads(out)
    assert report["skipped"] == {}
    lo, up = report["midp"]
    assert lo - 1e-12 <= math.log(2) - _h(1 / (1 + math.e)) <= up + 1e-12


def test_sparse_support_and_wide_bands_are_honest() -> None:
    # discrete Gaussian: the optimal prior has gaps; the band engine's bracket stays valid
    W = mech.discrete_gaussian(400, 3.0)
    dense = dpcap.capacity(np.asarray(W))
    with pytest.warns(dpcap.ConvergenceWarning):
        band = solve_band(W, 1e-12, 0.0, 60, "nats")
    assert band.lower <= dense.upper + 1e-12
    assert dense.lower <= band.upper + 1e-12
    # a wide noise on a long line: one banded Newton step is estimated and refused at once
    with pytest.raises(dpcap.ProblemTooLargeError, match=r"Newton step on its band of 1373"):
        dpcap.capacity(mech.truncated_geometric(100_000, 0.1))


@given(
    kind=st.sampled_from(["geometric", "gaussian", "staircase"]),
    n=st.integers(min_value=1, max_value=160),
    scale=st.floats(min_value=0.05, max_value=6.0),
    level=st.floats(min_value=0.0, max_value=4.0),
)
@settings(max_examples=40, deadline=None)
def test_structure_matches_the_dense_kernels(kind: str, n: int, scale: float, level: float) -> None:
    if kind == "geometric":
        W = mech.truncated_geometric(n, scale)
    elif kind == "gaussian":
        W = mech.discrete_gaussian(n, 0.5 / scale)
    else:
        W = mech.staircase(n, scale)
    # the dense kernels on the same channel (Channel renormalises its rows: within 1 ulp)
    dense = dpcap.Channel(np.asarray(W), neighbors="line", log_matrix=W.log_matrix)
    assert dpcap.dp_epsilon(W) == pytest.approx(dpcap.dp_epsilon(dense), rel=1e-13, abs=1e-13)
    for ours, theirs in (
        (dpcap.dp_delta(W, level), dpcap.dp_delta(dense, level)),
        (dpcap.tv_dp(W), dpcap.tv_dp(dense)),
        (dpcap.kl_dp(W), dpcap.kl_dp(dense)),
    ):
        # merged outputs can only lower a value, and hold at most W.outside() of a row
        assert ours <= theirs + 1e-15
        assert theirs - ours <= 1e-14
    M = mech.counting_query(n, W)
    structured = dpcap.midp(M)
    exact = dpcap.midp(dpcap.Mechanism.additive([[0, 1]] * n, np.asarray(W)))
    assert structured.lower <= exact.upper + 1e-12
    assert exact.lower <= structured.upper + 1e-12


@pytest.mark.parametrize("n", [1, 2, 50])
@pytest.mark.parametrize("eps", [0.0, math.inf])
def test_degenerate_levels(n: int, eps: float) -> None:
    W = mech.truncated_geometric(n, eps)
    A = np.asarray(W)
    assert dpcap.dp_epsilon(W) == dpcap.dp_epsilon(A, neighbors="line") == eps
    assert dpcap.tv_dp(W) == dpcap.tv_dp(A, neighbors="line") == (0.0 if eps == 0 else 1.0)
    res = dpcap.midp(mech.counting_query(n, W))
    expected = 0.0 if eps == 0 else math.log(2)  # the identity: each entry's bit is revealed
    assert res.lower - 1e-12 <= expected <= res.upper + 1e-12
    assert dpcap.max_leakage(W) == pytest.approx(dpcap.max_leakage(A), abs=1e-15)


@pytest.mark.parametrize("alpha", [2.0, 20.0, 50.0])
def test_renyi_orders_are_not_merged(alpha: float) -> None:
    # a Gaussian's log ratio grows with the distance: far outputs weigh e^{(α−1)·ratio} in a
    # Rényi divergence, so merging them would lose most of it (10.0 at α = 20, not 8.66)
    ch = mech.discrete_gaussian(60, 1.0)
    dense = dpcap.Channel(np.asarray(ch), log_matrix=ch.log_matrix, neighbors="line")
    expected = dpcap.renyi_dp(dense, alpha)
    assert dpcap.renyi_dp(ch, alpha) == pytest.approx(expected, rel=1e-12)
    count = mech.counting_query(60, ch)
    assert dpcap.renyi_dp(count, alpha) == pytest.approx(expected, rel=1e-12)
    # clamping is post-processing of the discrete Gaussian on ℤ, whose neighbours are at
    # Rényi divergence exactly α/(2σ²) (Canonne, Kamath & Steinke 2020): an upper bound
    assert expected <= alpha / 2.0 + 1e-9


def test_copies_and_pickles_keep_the_structure() -> None:
    import copy
    import pickle

    W = mech.truncated_geometric(100_000, 1.0)  # its dense matrix is refused
    for twin in (copy.copy(W), copy.deepcopy(W), pickle.loads(pickle.dumps(W))):
        assert isinstance(twin, LineNoise)
        assert twin == W
        assert twin.neighbors == "line"
    G = mech.discrete_gaussian(400, 2.0)  # keeps its logs (entries underflow)
    back = pickle.loads(pickle.dumps(G))
    np.testing.assert_array_equal(back.log_matrix, G.log_matrix)
