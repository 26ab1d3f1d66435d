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

Which pairs are neighbours: the relation passed as ``neighbors=`` if one is given, otherwise
the one the mechanism carries (:attr:`~dpcap.Channel.neighbors`: ``"line"`` for
``truncated_geometric``, ``"all"`` for ``randomized_response``, ``"hamming"`` for a database
mechanism…). A plain array carries nothing: it is a one-entry database under ``"hamming"``, so
all of its rows are neighbours. ``max_leakage`` needs no relation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import _validation as check
from dpcap.channel import AdditiveMechanism, as_mechanism
from dpcap.neighbors import Neighbors, neighbor_pairs
from dpcap.result import ParameterError
from dpcap.solvers import pairwise

__all__ = ["dp_delta", "dp_delta_curve", "dp_epsilon", "kl_dp", "max_leakage", "renyi_dp", "tv_dp"]


def _setup(M: Any, neighbors: Neighbors | None) -> tuple[Any, Any, Any]:
    """The rows to compare and the neighbouring pairs among them.

    The relation is ``neighbors`` if given, else the one ``M`` carries. A structured
    :class:`~dpcap.channel.AdditiveMechanism` under Hamming neighbours compares noise rows of
    totals that one entry can move between (from the reachable partial sums); anything else
    compares the rows of the dense matrix.
    """
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    if isinstance(mech, AdditiveMechanism) and isinstance(relation, str) and relation == "hamming":
        I, J = mech.neighbor_rows()
        return mech.noise, I, J
    I, J = neighbor_pairs(mech.shape, relation)
    return mech.matrix, I, J


def dp_epsilon(M: Any, /, *, neighbors: Neighbors | None = None) -> float:
    """The pure-DP level ``ε = max_{(x,x') neighbours, y} log W[x,y] / W[x',y]`` (nats).

    ``0/0`` is ignored (an outcome impossible under both databases); ``p/0`` with ``p > 0``
    gives ``math.inf``. A mechanism with no neighbouring pairs has ε = 0.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.

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
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    if _all_pairs(relation, mech.shape) and not isinstance(mech, AdditiveMechanism):
        return _epsilon_all_pairs(mech.matrix)
    rows, I, J = _setup(mech, neighbors)
    value, *_ = pairwise.max_log_ratio(rows, I, J)
    return value


def _all_pairs(relation: Any, shape: tuple[int, ...]) -> bool:
    """Whether ``relation`` relates every pair of rows (all pairs, or Hamming on one entry)."""
    if not isinstance(relation, str):
        return False
    return relation == "all" or (relation == "hamming" and len(shape) == 1)


def _epsilon_all_pairs(W: NDArray[np.float64]) -> float:
    """ε over all pairs of rows in ``O(|X|·|Y|)``: ``max_y log max_x W[x, y] − log min_x W[x, y]``.

    The largest ratio in a column is its largest entry over its smallest; a column of zeros is
    ignored (0/0) and a column with a zero and a positive entry gives ∞. ``fl(log)`` and the
    floating-point difference are monotone, so this is bit for bit the maximum of the pairwise
    differences ``log W[x, y] − log W[x', y]``.
    """
    if W.shape[0] < 2:
        return 0.0
    top, bottom = W.max(axis=0), W.min(axis=0)
    used = top > 0
    if not used.any():
        return 0.0
    if (bottom[used] == 0).any():
        return math.inf
    return max(float(np.max(np.log(top[used]) - np.log(bottom[used]))), 0.0)


def dp_delta(M: Any, /, eps: float, *, neighbors: Neighbors | None = None) -> float:
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

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        If ε is negative, NaN or not a single number (a grid goes to :func:`dp_delta_curve`).

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
    rows, I, J = _setup(M, neighbors)
    return float(pairwise.hockey_curve(rows, I, J, level.reshape(1))[0])


def dp_delta_curve(
    M: Any, /, eps: Any, *, neighbors: Neighbors | None = None
) -> NDArray[np.float64]:
    """The δ(ε) curve of ``M`` over a grid of ε, in one pass over the neighbour pairs.

    The same quantity as :func:`dp_delta` at every ε of ``eps``: each pair's likelihood ratios
    are binned against the thresholds ``e^{±ε}`` and the curve follows from per-bin sums.

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

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> dp_delta_curve(randomized_response(2, 1.0), [0.5, 1.0]).round(6)
    array([0.287649, 0.      ])
    """
    levels = np.atleast_1d(check.nonnegative(eps, "eps"))
    rows, I, J = _setup(M, neighbors)
    curve: NDArray[np.float64] = pairwise.hockey_curve(rows, I, J, levels.ravel()).reshape(
        levels.shape
    )
    return curve


def kl_dp(M: Any, /, *, neighbors: Neighbors | None = None, unit: str = "nats") -> float:
    """KL-DP level ``max_{ordered neighbours} D(W_x ‖ W_x')`` (Cuff & Yu, Def. 7).

    ε-DP implies KL-DP ≤ ε·tanh(ε/2), attained by binary randomized response (Property 1).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    unit : {"nats", "bits"}, keyword-only

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> math.isclose(kl_dp(randomized_response(2, 1.0)), math.tanh(0.5))
    True
    """
    return renyi_dp(M, 1.0, neighbors=neighbors, unit=unit)


def renyi_dp(
    M: Any, /, alpha: float, *, neighbors: Neighbors | None = None, unit: str = "nats"
) -> float:
    """Rényi-DP level of order α: ``max_{ordered neighbours} D_α(W_x ‖ W_x')``.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    alpha : float
        The order α ∈ [0, ∞]; α = 1 is KL-DP and α = ∞ is pure ε-DP.
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    unit : {"nats", "bits"}, keyword-only
    """
    a = check.order(alpha)
    divisor = check.unit_divisor(unit)
    rows, I, J = _setup(M, neighbors)
    if math.isinf(a):
        value, *_ = pairwise.max_log_ratio(rows, I, J)
    else:
        value, *_ = pairwise.max_divergence(rows, I, J, a)
    return value / divisor


def tv_dp(M: Any, /, *, neighbors: Neighbors | None = None) -> float:
    """Total-variation level ``max_{neighbours} TV(W_x, W_x')``: the (δ)-DP level, ``δ(0)``.

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`). Default: the one ``M`` carries
        (``M.neighbors``); a plain array is a one-entry database whose rows are all neighbours.
    """
    rows, I, J = _setup(M, neighbors)
    value, *_ = pairwise.max_tv(rows, I, J)
    return value


def max_leakage(W: Any, /, *, unit: str = "nats") -> float:
    """Maximal leakage ``L(X→Y) = log Σ_y max_x W[x, y]`` (Issa, Wagner, Kamath 2020).

    It equals the Sibson capacity of order ∞ and the min-entropy leakage at the uniform prior,
    its maximum over priors (Hsu et al., survey, §III-A; Ünsal & Önen §4.2–4.3).

    Examples
    --------
    >>> import math
    >>> from dpcap.mechanisms import randomized_response
    >>> k, eps = 3, 1.0
    >>> math.isclose(max_leakage(randomized_response(k, eps)),
    ...              math.log(k * math.exp(eps) / (math.exp(eps) + k - 1)))
    True
    """
    matrix = check.stochastic_matrix(W, "W")
    return math.log(float(np.sum(np.max(matrix, axis=0)))) / check.unit_divisor(unit)
