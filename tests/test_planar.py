"""Planar geometric and planar Laplace mechanisms on a grid: closed forms and d-privacy levels.

Checked against (never against the code's own output):

* Manhattan planar geometric = the Kronecker product of two truncated geometric mechanisms,
  written here from Ghosh et al.'s formula; its level is exactly ε for the Manhattan metric and
  exactly √2·ε for the Euclidean one (diagonal neighbours).
* Euclidean planar geometric: level exactly ε for the Euclidean metric once ``rows, cols ≥ 2``
  and one of them is at least 3 (triangle inequality + post-processing for ≤, the output
  ``y = x`` for =), at most ε on 2 × 2 and on a single row; entries against a brute-force sum
  over the lattice with the clamping written out.
* Planar Laplace (Andrés et al. 2013): cells against ``scipy.integrate`` of the density
  ``ε²/(2π)·e^{−ε r}``; level at most ε (post-processing) and close to it; symmetric under the
  grid's reflections; rows sum to 1.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import integrate

from dpcap.errors import ParameterError, ProblemTooLargeError
from dpcap.mechanisms import planar_geometric, planar_laplace
from dpcap.metric_privacy import grid_metric, grid_points, metric_epsilon

FloatArray = NDArray[np.float64]


def geometric_closed_form(n: int, a: float) -> FloatArray:
    """Ghosh et al.: ``(1−q)/(1+q)·q^{|x−y|}`` inside, ``q^x/(1+q)`` and ``q^{n−x}/(1+q)`` at the
    ends, ``q = e^{−a}``, on ``{0..n}`` (``[[1]]`` for n = 0)."""
    if n == 0:
        return np.ones((1, 1))
    q = math.exp(-a)
    x = np.arange(n + 1)
    W = (1 - q) / (1 + q) * q ** np.abs(np.subtract.outer(x, x))
    W[:, 0] = q**x / (1 + q)
    W[:, n] = q ** (n - x) / (1 + q)
    return W


@pytest.mark.parametrize("grid", [(1, 3), (2, 2), (3, 4)])
@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_manhattan_planar_geometric_is_a_product_of_geometrics(
    grid: tuple[int, int], eps: float
) -> None:
    step = 0.5
    W = planar_geometric(grid, eps, step=step, norm="manhattan").matrix
    a = eps * step
    expected = np.kron(geometric_closed_form(grid[0] - 1, a), geometric_closed_form(grid[1] - 1, a))
    np.testing.assert_allclose(W, expected, rtol=1e-13, atol=0)
    manhattan = grid_metric(grid, step=step, norm="manhattan")
    assert metric_epsilon(W, manhattan) == pytest.approx(eps, rel=1e-12)
    if min(grid) >= 2:
        euclid = grid_metric(grid, step=step)
        assert metric_epsilon(W, euclid) == pytest.approx(math.sqrt(2) * eps, rel=1e-12)


def lattice_brute_force(grid: tuple[int, int], a: float, reach: int) -> FloatArray:
    """Sum ``e^{−a√(i²+j²)}`` over ``|i|, |j| ≤ reach``, each offset clamped onto the grid."""
    rows, cols = grid
    i, j = np.meshgrid(np.arange(-reach, reach + 1), np.arange(-reach, reach + 1), indexing="ij")
    weight = np.exp(-a * np.hypot(i, j)).ravel()
    W = np.zeros((rows * cols, rows * cols))
    for x1 in range(rows):
        for x2 in range(cols):
            y1 = np.clip(x1 + i.ravel(), 0, rows - 1)
            y2 = np.clip(x2 + j.ravel(), 0, cols - 1)
            np.add.at(W[x1 * cols + x2], y1 * cols + y2, weight)
    return W / W.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("eps", [0.7, 2.0])
def test_euclidean_planar_geometric_entries(eps: float) -> None:
    grid = (3, 4)
    W = planar_geometric(grid, eps).matrix
    np.testing.assert_allclose(W, lattice_brute_force(grid, eps, 150), rtol=1e-11, atol=0)


@pytest.mark.parametrize("grid", [(2, 3), (3, 3), (4, 5), (3, 2)])
@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_euclidean_planar_geometric_is_exactly_eps_private(
    grid: tuple[int, int], eps: float
) -> None:
    step = 2.0
    W = planar_geometric(grid, eps, step=step)
    assert metric_epsilon(W, grid_metric(grid, step=step)) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("grid", [(2, 2), (1, 3), (1, 2), (4, 1)])
def test_corner_only_and_single_row_grids_are_below_eps(grid: tuple[int, int]) -> None:
    W = planar_geometric(grid, 1.0)
    level = metric_epsilon(W, grid_metric(grid))
    assert 0.5 < level < 1.0 - 1e-3


def test_large_eps_keeps_the_log_matrix() -> None:
    W = planar_geometric((3, 3), 400.0)
    assert W.log_matrix is not None
    assert metric_epsilon(W, grid_metric((3, 3))) == pytest.approx(400.0, rel=1e-12)
    V = planar_laplace((3, 3), 400.0)
    assert 0.9 * 400 < metric_epsilon(V, grid_metric((3, 3))) <= 400 * (1 + 1e-12)


def test_infinite_eps_is_the_identity() -> None:
    assert np.array_equal(planar_geometric((2, 3), math.inf).matrix, np.eye(6))
    assert np.array_equal(planar_laplace((2, 3), math.inf).matrix, np.eye(6))


def density(a: float) -> object:
    return lambda v, u: a * a / (2 * math.pi) * math.exp(-a * math.hypot(u, v))


@pytest.mark.parametrize("eps", [0.05, 0.8, 6.0])
def test_planar_laplace_cells_are_the_integrals_of_the_density(eps: float) -> None:
    grid, step = (4, 4), 1.5
    W = planar_laplace(grid, eps, step=step).matrix
    points = grid_points(grid, step=step)
    x = 5  # the input at (1, 1)
    f = density(eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for y in (5, 6, 10):  # interior cells: its own, one step right, one diagonal step
            lo = points[y] - points[x] - step / 2
            hi = lo + step
            cell, _ = integrate.dblquad(f, lo[0], hi[0], lo[1], hi[1], epsrel=1e-13)
            assert W[x, y] == pytest.approx(cell, rel=1e-9)
        # the corner (3, 3) collects everything beyond the last half-cell on both axes
        lo = points[15] - points[x] - step / 2
        if eps < 0.1:  # dblquad misses by 7e-7 on the wide tail; mpmath.quad over [2.25, ∞)²
            corner, rel = 0.21627625358727857406, 1e-14  # split at +20, +100; 20 digits (30 s)
        else:  # dblquad on an infinite range: about 1e-8
            corner, rel = integrate.dblquad(f, lo[0], np.inf, lo[1], np.inf, epsrel=1e-12)[0], 1e-7
        assert W[x, 15] == pytest.approx(corner, rel=rel)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-15)


@pytest.mark.parametrize("grid", [(3, 3), (2, 5), (1, 4)])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_planar_laplace_level_is_at_most_eps(grid: tuple[int, int], eps: float) -> None:
    W = planar_laplace(grid, eps, step=0.5)
    level = metric_epsilon(W, grid_metric(grid, step=0.5))
    assert level <= eps * (1 + 1e-12)
    if min(grid) >= 2:
        assert level > 0.9 * eps  # the border cells reach the ray where the ratio is e^{εd}


def test_planar_laplace_is_symmetric_under_reflections() -> None:
    rows, cols = 3, 4
    W = planar_laplace((rows, cols), 0.9).matrix.reshape(rows, cols, rows, cols)
    np.testing.assert_allclose(W, W[::-1, :, ::-1, :], rtol=1e-13)
    np.testing.assert_allclose(W, W[:, ::-1, :, ::-1], rtol=1e-13)


def test_invalid_arguments_are_named() -> None:
    with pytest.raises(ParameterError, match=r"grid must be a pair \(rows, cols\), got 3"):
        planar_geometric(3, 1.0)
    with pytest.raises(ParameterError, match=r"grid must be an integer >= 1, got 0"):
        planar_laplace((0, 2), 1.0)
    with pytest.raises(ParameterError, match=r"eps must be > 0, got 0.0"):
        planar_geometric((2, 2), 0.0)
    with pytest.raises(ParameterError, match=r"step must be > 0"):
        planar_laplace((2, 2), 1.0, step=0.0)
    with pytest.raises(ParameterError, match=r"norm must be one of"):
        grid_metric((2, 2), norm="chebyshev")
    with pytest.raises(ProblemTooLargeError, match=r"eps\*step=0.001 would sum the lattice"):
        planar_geometric((2, 2), 0.001)
