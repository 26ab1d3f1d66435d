r"""Metric privacy (d-privacy): the privacy level of a mechanism under a distance on its inputs.

A mechanism ``W`` is ε·d-private for a distance ``d`` on its inputs when
``W[x, y] ≤ e^{ε·d(x, x')} W[x', y]`` for all inputs ``x, x'`` and outputs ``y``
(Chatzikokolakis, Andrés, Bordenabe, Palamidessi 2013, d_X-privacy; ``docs/mathematics.rst``
§11).
With the Euclidean distance between locations it is geo-indistinguishability (Andrés et al.
2013); with the path length of a neighbour graph it is ε-DP under that graph, so ordinary DP is
the case ``d = 1`` on neighbours and ``∞`` elsewhere.

==================  ===============================================================
:func:`metric_epsilon`  the least ε: ``max_{x ≠ x'} max_y log(W[x,y]/W[x',y]) / d(x,x')``
:func:`metric_delta`    ``δ(ε) = max_{(x, x')} E_{e^{ε d(x,x')}}(W_x ‖ W_x')``, the least δ
                        with ``P_x(A) ≤ e^{ε d(x,x')} P_x'(A) + δ`` for every event ``A``
:func:`metric_matrix`   the validated distance matrix of a metric argument
:func:`grid_metric`     Euclidean or Manhattan distances between the points of a grid
==================  ===============================================================

:func:`dpcap.dp_epsilon` and :func:`dpcap.dp_delta` take ``metric=`` and call these.

**Which distances** (:func:`metric_matrix`). A metric is an ``(n, n)`` array or a callable
``d(i, j)`` on row indices: non-negative, symmetric, zero on the diagonal, no NaN, and
satisfying the triangle inequality (checked up to :data:`MAX_TRIANGLE_POINTS` inputs, with a
relative allowance of ``2⁻⁵⁰`` for distances computed in floating point). Two conventions go
beyond a metric, as in Chatzikokolakis et al.: distance 0 between different inputs (a
*pseudo*-metric: the two inputs must have identical rows, else ε = ∞) and distance ``+∞``
(an *extended* metric: the pair is not constrained at all).

**Rényi.** There is no metric Rényi level here: ``max D_α(W_x ‖ W_x')/d(x, x')`` has no
meaning as a privacy guarantee. Its ∞ order is :func:`metric_epsilon`, but for finite α the
Rényi divergence of inputs ``k`` steps apart is not bounded by ``k`` times the one-step value
(Rényi DP's group privacy also loses a factor in the order, Mironov 2017), so
dividing by the distance does not give a level that a path of inputs composes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap.channel import as_mechanism
from dpcap.errors import ParameterError, ProblemTooLargeError
from dpcap.solvers import divergence, pairwise, reduce

__all__ = [
    "grid_metric",
    "grid_points",
    "metric_delta",
    "metric_epsilon",
    "metric_matrix",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: A distance on the inputs: an ``(n, n)`` array, or a callable on two row indices.
Metric: TypeAlias = Any | Callable[[int, int], float]

#: Largest number of inputs whose metric is checked for the triangle inequality (``n³`` work).
MAX_TRIANGLE_POINTS = 512


#: Most pairs a callable metric is evaluated on.
MAX_CALLABLE_PAIRS = 2**21

#: Relative allowance on the triangle inequality, for distances computed in floating point.
TRIANGLE_RTOL = 2.0**-50

_U = 2.0**-53


def metric_matrix(metric: Metric, n: int, name: str = "metric") -> FloatArray:
    """The validated ``(n, n)`` distance matrix of a metric argument (read-only).

    Parameters
    ----------
    metric : array_like, shape (n, n), or callable
        Distances ``d[x, x']`` between the inputs (rows) of a mechanism, or ``d(i, j) -> float``
        on row indices, evaluated on every pair ``i < j`` (and must give 0 at ``i == j``).
    n : int
        The number of inputs.
    name : str
        The argument's name in messages.

    Returns
    -------
    numpy.ndarray
        Non-negative, symmetric, zero on the diagonal; ``+∞`` where two inputs are unrelated.

    Raises
    ------
    ParameterError
        For a wrong shape, NaN, a negative or non-zero diagonal entry, an asymmetric pair, or a
        violated triangle inequality (checked for at most :data:`MAX_TRIANGLE_POINTS` inputs).
    ProblemTooLargeError
        If a callable would be evaluated on more than 2²¹ pairs.

    Examples
    --------
    >>> metric_matrix(lambda i, j: abs(i - j), 3)
    array([[0., 1., 2.],
           [1., 0., 1.],
           [2., 1., 0.]])
    """
    D = _callable_matrix(metric, n, name) if callable(metric) else check.real_array(metric, name)
    if D.shape != (n, n):
        raise ParameterError(
            f"{name} must be a {n} x {n} matrix of distances (one row per input), got shape "
            f"{D.shape}"
        )
    if np.isnan(D).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(D))[0])
        raise ParameterError(f"{name} contains NaN at index {where}")
    if (D < 0).any():
        where = tuple(int(i) for i in np.argwhere(D < 0)[0])
        raise ParameterError(f"{name} has a negative distance {float(D[where])!r} at {where}")
    if (np.diagonal(D) != 0).any():
        i = int(np.flatnonzero(np.diagonal(D) != 0)[0])
        raise ParameterError(f"{name} must be 0 on the diagonal, got {float(D[i, i])!r} at {i}")
    if not np.array_equal(D, D.T):
        i, j = (int(v) for v in np.argwhere(D != D.T)[0])
        raise ParameterError(
            f"{name} must be symmetric, got d[{i}, {j}] = {float(D[i, j])!r} but "
            f"d[{j}, {i}] = {float(D[j, i])!r}"
        )
    if n <= MAX_TRIANGLE_POINTS:
        _check_triangle(D, name)
    D.setflags(write=False)
    return D


def _callable_matrix(metric: Callable[[int, int], float], n: int, name: str) -> FloatArray:
    pairs = n * (n - 1) // 2
    if pairs > MAX_CALLABLE_PAIRS:
        raise ProblemTooLargeError(
            f"{name} is a callable that would be evaluated on {pairs} pairs, above dpcap's limit "
            f"of {MAX_CALLABLE_PAIRS}; pass the distance matrix"
        )
    D = np.zeros((n, n))
    for i in range(n):
        D[i, i] = _distance(metric, i, i, name)
        for j in range(i + 1, n):
            D[i, j] = D[j, i] = _distance(metric, i, j, name)
    return D


def _distance(metric: Callable[[int, int], float], i: int, j: int, name: str) -> float:
    value = metric(i, j)
    arr = check.real_array(value, f"{name}({i}, {j})")
    if arr.ndim != 0:
        raise ParameterError(f"{name}({i}, {j}) must return one number, got {check.show(value)}")
    return float(arr)


def _check_triangle(D: FloatArray, name: str) -> None:
    """``d(i, k) ≤ (d(i, j) + d(j, k))(1 + 2⁻⁵⁰)`` for all ``i, j, k`` (one ``j`` at a time)."""
    with np.errstate(invalid="ignore"):
        for j in range(D.shape[0]):
            through = (D[:, j, None] + D[None, j, :]) * (1.0 + TRIANGLE_RTOL)
            bad = through < D
            if bad.any():
                i, k = (int(v) for v in np.argwhere(bad)[0])
                raise ParameterError(
                    f"{name} violates the triangle inequality: d[{i}, {k}] = {float(D[i, k])!r} "
                    f"> d[{i}, {j}] + d[{j}, {k}] = {float(D[i, j])!r} + {float(D[j, k])!r}"
                )


class _ClassPairs:
    """The distinct rows of a mechanism, their log rows, and the pairs of distinct rows with
    the least distance between their members (pairs at distance ∞ dropped)."""

    def __init__(self, M: Any, metric: Metric, neighbors: Any, what: str) -> None:
        if neighbors is not None:
            raise ParameterError(
                f"{what}: pass either neighbors= or metric=, not both (a metric relates every "
                "pair of inputs at its distance; ∞ leaves a pair unrelated)"
            )
        mech = as_mechanism(M)
        W, L = mech.matrix, mech.log_matrix
        D = metric_matrix(metric, W.shape[0])
        reps, kind = reduce.distinct_rows(W, L)
        c = len(reps)
        least = np.full((c, c), np.inf)
        np.minimum.at(least, (kind[:, None], kind[None, :]), D)
        I, J = np.triu_indices(c, k=1)
        dist = least[I, J]
        keep = dist < np.inf
        self.W = W[reps]
        self.L = divergence.log(self.W) if L is None else L[reps]
        self.I, self.J, self.d = I[keep].astype(np.int64), J[keep].astype(np.int64), dist[keep]
        if len(self.I) * W.shape[1] > relations.MAX_PAIR_WORK:  # every DP metric's limit
            raise relations.refuse_pairs(
                what,
                len(self.I),
                W.shape[1],
                "give pairs that need no comparison the distance inf, or use fewer inputs",
            )


def metric_epsilon(M: Any, /, metric: Metric, *, neighbors: Any = None) -> float:
    r"""The least ε for which ``M`` is ε·d-private: ``max_{x≠x', y} log(W[x,y]/W[x',y])/d(x,x')``.

    ``0/0`` is ignored (an output impossible under both inputs), ``p/0`` with ``p > 0`` gives
    ``math.inf``; a pair at distance ``∞`` is not constrained, and a pair at distance 0 with
    different rows gives ``math.inf`` (identical rows give 0). Nats per unit of distance.

    Parameters
    ----------
    M : Mechanism, Channel or array_like, shape (n, k)
    metric : array_like, shape (n, n), or callable
        The distance between inputs (:func:`metric_matrix`).
    neighbors : None
        Must be None: a metric and a neighbour relation together are an error.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For an invalid metric, or ``neighbors`` given too.
    ProblemTooLargeError
        Above :data:`dpcap.neighbors.MAX_PAIR_WORK` pair-outputs after merging identical rows.

    Notes
    -----
    ``docs/mathematics.rst`` §11. Identical rows are merged first (their ratios are 1); two
    classes of rows are compared once, at the least distance between their members, which
    gives their largest ratio per unit distance. The log-ratios are differences of float64
    logarithms of the matrix, or of its :attr:`~dpcap.Channel.log_matrix` where it carries one
    (entries that underflowed), exactly as :func:`dpcap.dp_epsilon` takes them; the value
    returned is within ``(16u·max|log W| + u·r)/d + u·ε`` of the exact level of the stored
    matrix (``u = 2⁻⁵³``, ``r`` the largest log-ratio, ``d`` the distance of the pair that
    attains the max), which :mod:`dpcap.tradeoffs.mechanism_design` adds when it certifies a level.

    References
    ----------
    K. Chatzikokolakis, M. E. Andrés, N. E. Bordenabe, C. Palamidessi, "Broadening the scope
    of differential privacy using metrics", PETS 2013 (the definition of d_X-privacy).

    Examples
    --------
    The truncated geometric mechanism is ``ε·|x − x'|``-private (Ghosh et al. 2012):

    >>> import numpy as np
    >>> from dpcap.mechanisms import truncated_geometric
    >>> line = np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    >>> round(metric_epsilon(truncated_geometric(3, 0.5), line), 12)
    0.5
    """
    pairs = _ClassPairs(M, metric, neighbors, "metric_epsilon")
    return pairwise.max_scaled_log_ratio(pairs.W, pairs.I, pairs.J, pairs.d, pairs.L)


def metric_delta(M: Any, /, eps: float, metric: Metric, *, neighbors: Any = None) -> float:
    r"""The least δ with ``P_x(A) ≤ e^{ε·d(x,x')} P_x'(A) + δ`` for all inputs and events.

    ``δ(ε) = max_{ordered (x, x')} E_{e^{ε d(x,x')}}(W_x ‖ W_x')`` with the hockey-stick
    divergence ``E_γ(P ‖ Q) = Σ_y (P_y − γ Q_y)_+``: the pairwise form of the (ε, δ)
    characterisation (Barthe and Olmedo 2013; Hsu et al., survey, §IV), with the level of each
    pair scaled by its distance. ``δ(0)`` is the total-variation diameter, ``δ(∞)`` the largest
    mass of an output impossible under another input at finite distance. Pairs at distance ``∞``
    are not constrained; a pair at distance 0 is compared at ``γ = 1`` (also at ε = ∞).

    Parameters
    ----------
    M : Mechanism, Channel or array_like, shape (n, k)
    eps : float
        ε in ``[0, ∞]``, per unit of distance.
    metric : array_like, shape (n, n), or callable
        The distance between inputs (:func:`metric_matrix`).
    neighbors : None
        Must be None (a metric and a neighbour relation together are an error).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For an invalid ε or metric, or ``neighbors`` given too.
    ProblemTooLargeError
        Above :data:`dpcap.neighbors.MAX_PAIR_WORK` pair-outputs after merging identical rows.

    Notes
    -----
    ``docs/mathematics.rst`` §11. Each term is ``W[x,y]·(1 − e^{ε d + log W[x',y] − log W[x,y]})_+``
    (``expm1``; no ``e^{ε d}`` is formed, so large ``ε·d`` cannot overflow), the ratios from the
    log matrix where the mechanism carries one. Unlike ε, δ is not scaled by the distance: a
    pair far apart gets the larger factor ``e^{ε d}``, and the same δ.

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> W = randomized_response(2, 1.0)
    >>> math.isclose(metric_delta(W, 0.5, [[0, 2], [2, 0]]), 0.0, abs_tol=1e-15)
    True
    >>> round(metric_delta(W, 0.25, [[0, 2], [2, 0]]), 6)  # the DP δ at ε = 0.5
    0.287649
    """
    level = check.nonnegative_scalar(eps, "eps")
    pairs = _ClassPairs(M, metric, neighbors, "metric_delta")
    with np.errstate(invalid="ignore"):  # ∞·0: a pair at distance 0 is compared at γ = 1
        log_gamma = np.where(pairs.d == 0.0, 0.0, level * pairs.d)
    return min(pairwise.max_scaled_hockey(pairs.W, pairs.I, pairs.J, log_gamma, pairs.L), 1.0)


# --------------------------------------------------------------------------- grids


def grid_points(grid: Any, *, step: float = 1.0) -> FloatArray:
    """The points of a grid, one row per input: ``(i·step, j·step)`` at row ``i·cols + j``.

    Parameters
    ----------
    grid : (int, int)
        ``(rows, cols)``, each at least 1.
    step : float, keyword-only
        The cell size (distance between neighbouring points), positive and finite.

    Returns
    -------
    numpy.ndarray, shape (rows·cols, 2)

    Examples
    --------
    >>> grid_points((2, 2), step=10.0)
    array([[ 0.,  0.],
           [ 0., 10.],
           [10.,  0.],
           [10., 10.]])
    """
    rows, cols = check.grid_shape(grid, "the metric of the grid")
    size = check.nonnegative_scalar(step, "step", allow_inf=False, positive=True)
    i, j = np.divmod(np.arange(rows * cols), cols)
    return np.stack([i * size, j * size], axis=1).astype(np.float64)


def grid_metric(grid: Any, *, step: float = 1.0, norm: str = "euclidean") -> FloatArray:
    r"""The distance between the points of a grid: ``step·‖(i, j) − (i', j')‖``.

    Parameters
    ----------
    grid : (int, int)
        ``(rows, cols)``.
    step : float, keyword-only
        The cell size.
    norm : {"euclidean", "manhattan"}, keyword-only
        ``step·hypot(Δi, Δj)`` (geo-indistinguishability) or ``step·(|Δi| + |Δj|)``.

    Returns
    -------
    numpy.ndarray, shape (rows·cols, rows·cols)

    Examples
    --------
    >>> grid_metric((1, 3), step=2.0)
    array([[0., 2., 4.],
           [2., 0., 2.],
           [4., 2., 0.]])
    """
    rows, cols = check.grid_shape(grid, "the metric of the grid")
    size = check.nonnegative_scalar(step, "step", allow_inf=False, positive=True)
    kind = check.choice(norm, check.NORMS, "norm")
    i, j = np.divmod(np.arange(rows * cols), cols)
    di, dj = np.abs(np.subtract.outer(i, i)), np.abs(np.subtract.outer(j, j))
    lattice = np.hypot(di, dj) if kind == "euclidean" else (di + dj).astype(np.float64)
    out: FloatArray = lattice * size
    return out
