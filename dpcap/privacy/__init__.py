"""Differential-privacy metrics of a mechanism under its neighbour relation.

Each metric is a worst case over *ordered* pairs of neighbouring databases ``(x, x')`` of a
divergence between the output laws ``W_x`` and ``W_x'`` (Cuff & Yu §2; Hsu et al. §IV;
``docs/mathematics.rst`` §3):

============  ==============================================================
``dp_epsilon``  ``max log W[x,y]/W[x',y]`` (pure ε-DP; ``math.inf`` if a zero
                meets a positive probability)
``dp_delta``    ``δ(ε) = max E_{e^ε}(W_x ‖ W_x')``, the hockey-stick divergence:
                the mechanism is (ε, δ)-DP iff ``δ ≥ δ(ε)``
``kl_dp``       ``max D(W_x ‖ W_x')`` (KL-DP, Cuff & Yu Def. 7)
``renyi_dp``    ``max D_α(W_x ‖ W_x')`` (Rényi DP, Mironov 2017)
``tv_dp``       ``max TV(W_x, W_x')`` (= ``δ(0)``, the (δ)-DP level)
============  ==============================================================

Units: ε, Rényi DP and KL-DP are DP levels, bounds on log-likelihood ratios of neighbours'
outputs, always in nats (no ``unit=``; ``docs/concepts.rst``, Units); δ and TV are
probabilities; ``max_leakage`` is an information quantity (``C_∞``) and takes ``unit=``.

Which pairs are neighbours: the relation passed as ``neighbors=`` if one is given, otherwise
the one the mechanism carries (:attr:`~dpcap.Channel.neighbors`: ``"line"`` for
``truncated_geometric``, ``"all"`` for ``randomized_response``, ``"hamming"`` for a database
mechanism…). A plain array carries nothing: it is a one-entry database under ``"hamming"``, so
all of its rows are neighbours. ``max_leakage`` needs no relation.

Underflow (``docs/mathematics.rst`` §8): where a mechanism carries a
:attr:`~dpcap.Channel.log_matrix` (its constructor computed the log-probabilities of entries
below the smallest normal double in closed form), every likelihood ratio is taken from it, so
``dp_epsilon(truncated_geometric(1000, 1.0))`` is 1, not ∞; masses still come from the matrix.

Work (``docs/mathematics.rst`` §3): identical rows are merged and only distinct pairs of rows
are compared. Under all pairs (``"all"``, or ``"hamming"`` on one entry) ε is
``max_y (max_x log W[x,y] − min_x log W[x,y])``, in ``O(|X|·|Y|)``, two-output mechanisms
compare their two extreme rows (every metric here is jointly quasi-convex in the pair), and a
matrix whose rows are a common value with a few exceptions (randomised response) is compared
through one pair per *kind* of row: two rows whose exceptions fall in different columns give
the same value for every pair of their kinds. KL-DP, Rényi DP (α < ∞) and TV over many
pairs are screened by matrix products over all rows (:mod:`dpcap.solvers.gram`, up to
:data:`~dpcap.neighbors.MAX_PRODUCT_WORK` multiply-adds): each pair gets an interval that holds
the pair kernel's value, from stated rounding bounds, and the kernel evaluates only the pairs
that may attain the maximum, so the value is the pairwise value, bit for bit (a 1000 × 1000
matrix: KL-DP in 0.2 s, not 14 s); nearly equal or tied rows stay with the kernel. δ(ε) over
every pair reads the rows in place (:func:`dpcap.solvers.hockey.all_pairs_curve`). What
reaches a pair kernel is at most :data:`~dpcap.neighbors.MAX_PAIR_WORK` ``pairs × outputs``;
above it a metric raises :class:`~dpcap.ProblemTooLargeError` at once instead of running for
minutes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import metric_privacy
from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism, as_mechanism
from dpcap.errors import ParameterError
from dpcap.function_mechanism import FunctionMechanism
from dpcap.line_noise import LineNoise
from dpcap.neighbors import Neighbors
from dpcap.privacy import _pairs
from dpcap.solvers import gram, hockey, pairwise

__all__ = [
    "dp_delta",
    "dp_delta_curve",
    "dp_epsilon",
    "kl_dp",
    "max_leakage",
    "renyi_dp",
    "tv_dp",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def dp_epsilon(M: Any, /, *, neighbors: Neighbors | None = None, metric: Any = None) -> float:
    """The pure-DP level ``ε = max_{(x,x') neighbours, y} log W[x,y] / W[x',y]`` (nats).

    ``0/0`` is ignored (an outcome impossible under both databases); ``p/0`` with ``p > 0``
    gives ``math.inf``. A mechanism with no neighbouring pairs has ε = 0. The logarithms come
    from ``M.log_matrix`` where ``M`` has one (entries that underflowed; module docstring).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    metric : array_like (n, n) or callable, keyword-only, optional
        A distance on the inputs instead: the d-privacy level, :func:`~dpcap.metric_epsilon`.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response, truncated_geometric
    >>> round(dp_epsilon(randomized_response(4, 1.5)), 12)
    1.5
    >>> round(dp_epsilon(truncated_geometric(3, 1.0)), 12)  # carries "line"
    1.0
    >>> round(dp_epsilon(truncated_geometric(3, 1.0), neighbors="all"), 12)
    3.0
    """
    if metric is not None:
        return metric_privacy.metric_epsilon(M, metric, neighbors=neighbors)
    line = _pairs.line_pairs(M, neighbors)
    if line is not None:  # consecutive rows of a line noise, in O(n)
        return line.line_epsilon()
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    rows = _pairs.distinct_rows(mech, relation)
    if rows is not None:
        return _epsilon_all_pairs(*rows)
    blocks = _pairs.setup(mech, neighbors, "dp_epsilon")
    return max((pairwise.max_log_ratio(b.W, b.I, b.J, b.L)[0] for b in blocks), default=0.0)


def _epsilon_all_pairs(W: FloatArray, L: FloatArray | None = None) -> float:
    """ε over all pairs of rows in ``O(|X|·|Y|)``: ``max_y log max_x W[x, y] − log min_x W[x, y]``.

    The largest ratio in a column is its largest entry over its smallest; a column of zeros is
    ignored (0/0) and a column with a zero and a positive entry gives ∞. ``fl(log)`` and the
    floating-point difference are monotone, so this is bit for bit the maximum of the pairwise
    differences ``log W[x, y] − log W[x', y]``. With a log matrix ``L`` the same on ``L``.
    """
    if W.shape[0] < 2:
        return 0.0
    if L is not None:
        top_log, bottom_log = L.max(axis=0), L.min(axis=0)
        used = top_log > -np.inf
        if not used.any():
            return 0.0
        return max(float(np.max(top_log[used] - bottom_log[used])), 0.0)
    top, bottom = W.max(axis=0), W.min(axis=0)
    used = top > 0
    if not used.any():
        return 0.0
    if (bottom[used] == 0).any():
        return math.inf
    return max(float(np.max(np.log(top[used]) - np.log(bottom[used]))), 0.0)


def dp_delta(
    M: Any, /, eps: float, *, neighbors: Neighbors | None = None, metric: Any = None
) -> float:
    """The smallest δ for which ``M`` is (ε, δ)-DP at one ε (:func:`dp_delta_curve`: a grid).

    ``δ(ε) = max_{ordered neighbours (x, x')} Σ_y (W[x,y] − e^ε W[x',y])_+`` — the worst
    hockey-stick divergence ``E_{e^ε}`` (Cuff & Yu §3.2; Hsu et al., survey, §IV;
    ``docs/mathematics.rst`` §3). Non-increasing and convex in ``e^ε``; ``δ(0)`` is the
    total-variation level and ``δ(∞)`` the largest probability of an outcome impossible under a
    neighbour.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    eps : float in [0, ∞]
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    metric : array_like (n, n) or callable, keyword-only, optional
        A distance on the inputs instead: the level ``e^{ε d}``, :func:`~dpcap.metric_delta`.

    Returns
    -------
    float
        δ(ε), a probability (ε is in nats). Exactly 0.0 where ``ε ≥ ε̂ − ρ``: ``ε̂`` the pure-DP
        level of the pairs, ``ρ = 32u(1 + max|log W|)`` the rounding of a log-likelihood ratio;
        there the stored matrix's δ lies in ``[0, 2ρ]``, ``[0, 0]`` for ``ε ≥ ε̂ + ρ``
        (:func:`dpcap.solvers.hockey.hockey_curve`), not a one-ulp residue.

    Raises
    ------
    ParameterError
        If ε is negative, NaN or not a single number (a grid goes to :func:`dp_delta_curve`).
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> W = randomized_response(2, 1.0)
    >>> dp_delta(W, 0.0) == tv_dp(W)
    True
    >>> round(dp_delta(W, 0.5), 6)
    0.287649
    """
    level = check.nonnegative(eps, "eps")
    if level.ndim != 0:
        raise ParameterError(
            f"eps must be a single number for dp_delta, got an array of shape {level.shape}; "
            "use dp_delta_curve for a grid of ε"
        )
    if metric is not None:
        return metric_privacy.metric_delta(M, float(level), metric, neighbors=neighbors)
    return float(_curve(M, neighbors, level.reshape(1), "dp_delta")[0])


def dp_delta_curve(
    M: Any, /, eps: Any, *, neighbors: Neighbors | None = None
) -> NDArray[np.float64]:
    """The δ(ε) curve of ``M`` over a grid of ε, in one pass over the neighbour pairs.

    The same quantity as :func:`dp_delta` at every ε of ``eps`` (exactly 0.0 from the pure-DP
    level on, with the certificate stated there): each pair's likelihood ratios are binned
    against the thresholds ``e^{±ε}`` and the curve follows from per-bin sums.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    eps : array_like of float in [0, ∞]
        The grid (a single number is a grid of one).
    neighbors : str, array_like or callable, keyword-only, optional
        As for :func:`dp_delta`.

    Returns
    -------
    numpy.ndarray
        δ at each ε, of the shape of ``numpy.atleast_1d(eps)``.

    Raises
    ------
    ParameterError
        If an ε is negative or NaN.
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> dp_delta_curve(randomized_response(2, 1.0), [0.5, 1.0]).round(6)
    array([0.287649, 0.      ])
    """
    levels = np.atleast_1d(check.nonnegative(eps, "eps"))
    curve: FloatArray = _curve(M, neighbors, levels.ravel(), "dp_delta_curve")
    return curve.reshape(levels.shape)


def _curve(M: Any, neighbors: Neighbors | None, levels: FloatArray, what: str) -> FloatArray:
    out = np.zeros(levels.shape)
    for b in _pairs.setup(M, neighbors, what, _pairs.DELTA):
        if b.screen == "all":  # every pair of rows: the rows are read in place
            part = hockey.all_pairs_curve(b.W, levels, b.L)
        else:
            part = hockey.hockey_curve(b.W, b.I, b.J, levels, b.L)
        np.maximum(out, part, out=out)
    return out


def kl_dp(M: Any, /, *, neighbors: Neighbors | None = None) -> float:
    """KL-DP level ``max_{ordered neighbours} D(W_x ‖ W_x')`` (Cuff & Yu, Def. 7), in nats.

    ε-DP implies KL-DP ≤ ε·tanh(ε/2), attained by binary randomized response (Property 1): a DP
    level, in nats like ε (module docstring). Rényi DP at α = 1 (:func:`renyi_dp`).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> math.isclose(kl_dp(randomized_response(2, 1.0)), math.tanh(0.5))
    True
    """
    return renyi_dp(M, 1.0, neighbors=neighbors)


def renyi_dp(M: Any, /, alpha: float, *, neighbors: Neighbors | None = None) -> float:
    """Rényi-DP level of order α: ``max_{ordered neighbours} D_α(W_x ‖ W_x')``, in nats.

    A mechanism is (α, ε)-RDP iff ``ε ≥`` this level (Mironov 2017); at α = ∞ it is
    :func:`dp_epsilon`. A DP level, in nats like ε (module docstring).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    alpha : float
        The order α ∈ [0, ∞]; α = 1 is KL-DP and α = ∞ is pure ε-DP.
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> W = randomized_response(2, 1.0)
    >>> renyi_dp(W, math.inf) == dp_epsilon(W)   # nats, both
    True
    """
    a = check.order(alpha)
    if math.isinf(a):
        return dp_epsilon(M, neighbors=neighbors)
    what = "kl_dp" if a == 1.0 else "renyi_dp"
    return max((_pairs.worst(b, a, what) for b in _pairs.setup(M, neighbors, what, a)), default=0.0)


def tv_dp(M: Any, /, *, neighbors: Neighbors | None = None) -> float:
    """Total-variation level ``max_{neighbours} TV(W_x, W_x')``: the (δ)-DP level, ``δ(0)``.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

    Raises
    ------
    ProblemTooLargeError
        If more than :data:`~dpcap.neighbors.MAX_PAIR_WORK` pair-outputs remain to compare once
        identical rows and pairs are merged and the structure of all pairs is used (module
        docstring).
    """
    blocks = _pairs.setup(M, neighbors, "tv_dp", gram.TV)
    return max((_pairs.worst(b, gram.TV, "tv_dp") for b in blocks), default=0.0)


def max_leakage(W: Any, /, *, unit: str = "nats") -> float:
    """Maximal leakage ``L(X→Y) = log Σ_y max_x W[x, y]`` (Issa, Wagner, Kamath 2020).

    It equals the Sibson capacity of order ∞ and the min-entropy leakage at the uniform prior,
    its maximum over priors (Hsu et al., survey, §III-A; Ünsal & Önen §4.2–4.3).

    A maximum over rows does not see repeated rows: for an additive mechanism
    (:meth:`~dpcap.Mechanism.additive`) it is evaluated on the noise rows of the reachable
    totals, which are its distinct rows, without enumerating databases.

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> k, eps = 3, 1.0
    >>> math.isclose(max_leakage(randomized_response(k, eps)),
    ...              math.log(k * math.exp(eps) / (math.exp(eps) + k - 1)))
    True
    """
    line = W if isinstance(W, LineNoise) else getattr(W, "line_noise", None)
    if line is not None:  # the largest entry of each column from the structure, in O(n)
        return math.log(line.column_max_sum()) / check.unit_divisor(unit)
    structured = isinstance(W, (AdditiveMechanism, FunctionMechanism))
    rows = W.reachable_rows() if structured else W
    matrix = check.stochastic_matrix(rows, "W")
    return math.log(float(np.sum(np.max(matrix, axis=0)))) / check.unit_divisor(unit)
