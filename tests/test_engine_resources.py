"""Resources of the capacity engine: memory (issue 10, item 8) and BLAS threads (item 12).

Memory is measured with :mod:`tracemalloc` (numpy reports its array allocations to it) as the
peak of a whole call over the memory in use before it, in units of the channel's own bytes.
Values are checked against closed forms or against brackets recomputed here with
``scipy.special.rel_entr``; thread counts are read with threadpoolctl (no timing is asserted).
"""

from __future__ import annotations

import math
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy.special import rel_entr

import dpcap
from dpcap.solvers import blahut, kkt_newton, reduce

threadpoolctl = pytest.importorskip("threadpoolctl")


def peak_bytes(fn: Callable[[], Any]) -> tuple[int, Any]:
    """``(peak traced bytes over the bytes in use before, fn())``."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        value = fn()
        return tracemalloc.get_traced_memory()[1] - before, value
    finally:
        tracemalloc.stop()


def rr_capacity(k: int, eps: float) -> float:
    """k-RR capacity ``log k + p log p + (k − 1) q log q`` nats.

    ``p = e^ε/(e^ε + k − 1)``, ``q = 1/(e^ε + k − 1)``; the uniform prior is optimal (symmetry).
    """
    p = math.exp(eps) / (math.exp(eps) + k - 1)
    q = 1.0 / (math.exp(eps) + k - 1)
    return math.log(k) + p * math.log(p) + (k - 1) * q * math.log(q)


def certified_gap(W: np.ndarray, prior: np.ndarray) -> tuple[float, float]:
    """``(I(p), max_x D(W_x ‖ pW))`` recomputed independently of the engine."""
    D = rel_entr(W, prior @ W).sum(axis=1)
    return float(prior @ D), float(D.max())


# --------------------------------------------------------------------------------------------
# Memory: whole calls


def test_capacity_of_a_large_channel_peaks_below_three_matrices() -> None:
    """k-RR, k = 1500 (18 MB): the call allocated 8× the matrix before (the duplicate-row search
    sorted copies of it, the engine copied it per step); the goal is at most 3×, validation
    copy included."""
    k, eps = 1500, 1.0
    W = dpcap.mechanisms.randomized_response(k, eps)
    nbytes = np.asarray(W).nbytes
    peak, res = peak_bytes(lambda: dpcap.capacity(W))
    assert peak < 3 * nbytes, f"peak {peak / nbytes:.2f}x the matrix"
    assert res.status.value == "converged"
    assert abs(res.value - rr_capacity(k, eps)) <= 1e-9


def test_capacities_of_a_stack_peak_below_three_stacks() -> None:
    """A stack of 400 channels 60×60 (11.5 MB), half with a closed form: circulant channels
    (every row a cyclic shift of one law r, capacity ``log n − H(r)``), half random (certified
    by the bracket recomputed here). The batch path allocated 7× the stack before."""
    rng = np.random.default_rng(20261123)
    B, n = 400, 60
    stack = rng.dirichlet(np.full(n, 0.5), size=(B, n))
    base = rng.dirichlet(np.ones(n), size=B // 2)
    shifts = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n  # row x: r shifted by x
    stack[::2] = base[:, shifts]
    peak, res = peak_bytes(lambda: dpcap.capacities(stack))
    assert peak < 3 * stack.nbytes, f"peak {peak / stack.nbytes:.2f}x the stack"
    assert all(s.value == "converged" for s in res.status)
    closed = np.log(n) + np.sum(base * np.log(base), axis=1)
    assert np.max(np.abs(res.value[::2] - closed)) <= 1e-9
    for b in range(1, B, 40):  # I(prior) recomputed here: a lower bound on the capacity
        lower, _ = certified_gap(stack[b], res.prior[b])
        assert lower - 1e-12 <= res.value[b] <= lower + 1e-9 + 1e-12


def test_newton_and_interior_point_build_one_system_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """The truncated geometric mechanism on 300 inputs (a sparse optimal prior: the KKT–Newton
    polish and the interior-point fallback do the work). With blocks far smaller than the
    channel, the solve holds the channel and one (n+1)² system, nothing of its size more: before,
    the Jacobian, its masked copy, the system and a copy of the channel coexisted (≥ 3×). The
    Jacobian the polish keeps for its first step's re-solves is bounded by a block too
    (``KEEP_JACOBIAN``, shrunk with the blocks here)."""
    monkeypatch.setattr(blahut, "BLOCK_ELEMENTS", 1 << 12, raising=False)
    monkeypatch.setattr(kkt_newton, "KEEP_JACOBIAN", 1 << 12, raising=False)
    W = np.asarray(dpcap.mechanisms.truncated_geometric(299, 0.1))
    peak, sol = peak_bytes(lambda: blahut.solve(W[None], tol=1e-9))
    assert peak < 2 * W.nbytes, f"peak {peak / W.nbytes:.2f}x the channel"
    assert sol.converged[0]
    assert sol.iterations[0] < 200  # certified by the polish, not by a long BA run
    lower, upper = certified_gap(W, sol.prior[0])
    _, upper_at = certified_gap(W, sol.upper_prior[0])
    assert min(upper, upper_at) - lower <= 1e-9 + 1e-12


def test_solve_in_place_needs_no_copy_of_the_system() -> None:
    """A 601 × 601 system: the builder allocates it once, the solve adds nothing of its size."""
    rng = np.random.default_rng(7)
    m = 601
    A0 = rng.standard_normal((m, m)) + m * np.eye(m)
    b = rng.standard_normal((1, m))
    expected = np.linalg.solve(A0, b[0])
    peak, x = peak_bytes(lambda: blahut._solve(lambda k: A0[None].copy(), b))
    assert peak < 1.25 * A0.nbytes, f"peak {peak / A0.nbytes:.2f}x the system"
    np.testing.assert_allclose(x[0], expected, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------------------------
# The linear solves: large (in place) and small (batched) paths agree with numpy


@pytest.mark.parametrize("m", [5, 300])
def test_solve_matches_numpy_and_falls_back_to_least_squares(m: int) -> None:
    rng = np.random.default_rng(m)
    A = rng.standard_normal((3, m, m)) + m * np.eye(m)
    A[1, -1] = 0.0  # singular, exactly: a zero row gives a zero pivot
    A[2, 0, 0] = np.nan  # not finite: NaN step
    b = rng.standard_normal((3, m))
    x = blahut._solve(lambda k: A[k].copy(), b)
    np.testing.assert_allclose(x[0], np.linalg.solve(A[0], b[0]), rtol=1e-9, atol=1e-12)
    lstsq = np.linalg.lstsq(A[1], b[1], rcond=None)[0]
    np.testing.assert_allclose(x[1], lstsq, rtol=1e-6, atol=1e-9)
    assert np.isnan(x[2]).all()


def test_in_place_path_solves_a_channel_with_duplicate_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """BSC(0.1) with its first row repeated (not reduced: the engine sees singular KKT systems),
    every system through the in-place path: capacity ``log 2 − h(0.1)``."""
    monkeypatch.setattr(blahut, "IN_PLACE_SOLVE", 1, raising=False)
    W = np.array([[0.9, 0.1], [0.1, 0.9], [0.9, 0.1]])
    sol = blahut.solve(W[None], tol=1e-12)
    truth = math.log(2) + 0.9 * math.log(0.9) + 0.1 * math.log(0.1)
    assert sol.converged[0]
    assert sol.lower[0] - 1e-14 <= truth <= sol.upper[0] + 1e-14


class _NoInPlace:
    """The Shannon model without ``jacobian_into``: the engine must copy its Jacobian in."""

    def __init__(self) -> None:
        self.inner = blahut.Shannon()
        self.prepare = self.inner.prepare
        self.divergences = self.inner.divergences
        self.lower = self.inner.lower
        self.jacobian = self.inner.jacobian


@pytest.mark.parametrize("in_place", [1, 10_000])
def test_models_without_an_in_place_jacobian_give_the_same_capacity(
    monkeypatch: pytest.MonkeyPatch, in_place: int
) -> None:
    monkeypatch.setattr(blahut, "IN_PLACE_SOLVE", in_place, raising=False)
    W = np.asarray(dpcap.mechanisms.truncated_geometric(59, 0.1))
    plain = blahut.solve(W[None], tol=1e-10)
    copied = blahut.solve(W[None], tol=1e-10, model=_NoInPlace())
    assert plain.converged[0]
    assert copied.converged[0]
    assert abs(plain.upper[0] - copied.upper[0]) <= 2e-10
    lower, _ = certified_gap(W, copied.prior[0])
    _, upper = certified_gap(W, copied.upper_prior[0])
    assert upper - lower <= 1e-10 + 1e-12


# --------------------------------------------------------------------------------------------
# Exact reductions without copies


def brute_force_reduction(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows kept, reduced matrix)`` by pairwise comparison (columns in first-member order)."""
    W = W[:, W.sum(axis=0) > 0]
    normalised = W / W.sum(axis=0)
    groups: list[list[int]] = []
    for j in range(W.shape[1]):
        for g in groups:
            if np.array_equal(normalised[:, g[0]], normalised[:, j]):
                g.append(j)
                break
        else:
            groups.append([j])
    merged = np.stack([W[:, g].sum(axis=1) for g in groups], axis=1)
    keep = [
        i
        for i in range(len(merged))
        if not any(np.array_equal(merged[i], merged[j]) for j in range(i))
    ]
    return np.array(keep), merged[keep]


def random_reducible(rng: np.random.Generator) -> np.ndarray:
    """A small channel with dyadic entries (multiples of 2^-10: every sum and every ratio
    below is exact, whatever the order of summation), zero columns, proportional columns and
    duplicate rows planted at random."""
    nx, ny = (int(v) for v in rng.integers(2, 10, size=2))
    counts = rng.multinomial(1024, rng.dirichlet(np.ones(ny)), size=nx).astype(np.float64)
    if rng.random() < 0.5:
        counts[:, rng.integers(ny)] = 0.0
    if ny > 1 and rng.random() < 0.7:
        a, b = rng.choice(ny, 2, replace=False)
        counts[:, b] = counts[:, a] * rng.choice([0.25, 1.0, 2.0])  # exactly proportional
    if rng.random() < 0.7:
        counts[rng.integers(nx)] = counts[rng.integers(nx)]
    if rng.random() < 0.2:
        counts[:] = counts[0]
    counts[counts.sum(axis=1) == 0, 0] = 1.0  # a row emptied by the zero column
    counts *= 2.0 ** -np.ceil(np.log2(counts.sum(axis=1, keepdims=True)))  # row sums ≤ 1, dyadic
    counts[:, -1] += 1.0 - counts.sum(axis=1)  # exact: every partial sum is a multiple of 2^-12
    return counts


def _same_up_to_column_order(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(
        a[:, np.lexsort(a[::-1])], b[:, np.lexsort(b[::-1])]
    )


@pytest.mark.parametrize("collide", [False, True])
def test_reduction_matches_brute_force(monkeypatch: pytest.MonkeyPatch, collide: bool) -> None:
    """Against pairwise comparison; with every fingerprint equal (``collide``), still exact."""
    if collide:
        monkeypatch.setattr(
            reduce, "_weights", lambda start, stop: np.zeros(stop - start, dtype=np.uint64)
        )
    rng = np.random.default_rng(11)
    for _ in range(300):
        W = random_reducible(rng)
        red = reduce.reduce_channel(W)
        keep, matrix = brute_force_reduction(W)
        np.testing.assert_array_equal(red.rows, keep)
        assert _same_up_to_column_order(red.matrix, matrix), (W, red.matrix, matrix)


def test_negative_zero_is_the_same_entry_as_zero() -> None:
    W = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, -0.0], [0.0, 0.5, 0.5]])
    assert reduce.reduce_channel(W).rows.tolist() == [0, 2]


def test_a_channel_that_nothing_reduces_is_not_copied() -> None:
    W = np.asarray(dpcap.mechanisms.randomized_response(50, 1.0))
    assert reduce.reduce_channel(W).matrix is W


# --------------------------------------------------------------------------------------------
# BLAS threads


#: BLAS libraries whose thread count can be set (numpy's and scipy's; a solver's own single-threaded
#: OpenBLAS, such as the one SCS ships and cvxpy loads, stays at 1 whatever is asked)
_SETTABLE: set[str] = set()


def blas_threads() -> set[int]:
    return {
        int(info["num_threads"])
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas" and (not _SETTABLE or info["filepath"] in _SETTABLE)
    }


def _record_threads(monkeypatch: pytest.MonkeyPatch) -> list[set[int]]:
    seen: list[set[int]] = []
    solve = blahut._solve

    def spy(system: Any, b: np.ndarray) -> np.ndarray:
        seen.append(blas_threads())
        return solve(system, b)

    monkeypatch.setattr(blahut, "_solve", spy)
    return seen


@pytest.fixture
def two_blas_threads() -> Any:
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        _SETTABLE.clear()
        _SETTABLE.update(
            info["filepath"]
            for info in threadpoolctl.threadpool_info()
            if info["user_api"] == "blas" and info["num_threads"] == 2
        )
        if not _SETTABLE:
            pytest.skip("no BLAS here can be set to 2 threads")
        try:
            yield
        finally:
            _SETTABLE.clear()


@pytest.mark.usefixtures("two_blas_threads")
def test_small_newton_systems_run_on_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The case of the issue: 15 solves of size 195 ran threaded (1.46 s with a busy core)."""
    seen = _record_threads(monkeypatch)
    W = dpcap.mechanisms.truncated_geometric(193, 0.1)
    res = dpcap.capacity(W)
    assert res.status.value == "converged"
    assert seen
    assert all(s == {1} for s in seen)
    assert blas_threads() == {2}  # restored after the call


@pytest.mark.usefixtures("two_blas_threads")
def test_large_linear_algebra_keeps_the_blas_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _record_threads(monkeypatch)
    monkeypatch.setattr(blahut, "SMALL_WORK", 0, raising=False)  # every channel counts as large
    res = dpcap.capacity(dpcap.mechanisms.truncated_geometric(60, 0.1))
    assert res.status.value == "converged"
    assert seen
    assert all(s == {2} for s in seen)


def test_threadpoolctl_is_not_imported_with_dpcap() -> None:
    code = "import sys, dpcap; print('threadpoolctl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
