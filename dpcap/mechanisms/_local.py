"""Single-entry channels on categories: randomised response, the BSC, erasure, exponential.

Every constructor returns a :class:`~dpcap.channel.Channel` ``W[x, y] = P(Y=y | X=x)`` (rows are
inputs) whose inputs have no order: each carries the neighbour relation ``"all"`` (every pair of
inputs, local DP; ``docs/mathematics.rst`` §3), so :func:`dpcap.dp_epsilon` gives the local
level stated in each docstring.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import Channel
from dpcap.errors import ParameterError

__all__ = ["binary_symmetric", "erasure", "exponential", "randomized_response"]

FloatArray = NDArray[np.float64]


# --------------------------------------------------------------------------- categorical


def randomized_response(k: int, eps: float) -> Channel:
    r"""The k-ary randomised response channel (Warner; Kairouz–Oh–Viswanath).

    ``W[x, y] = e^ε / (e^ε + k − 1)`` if ``y = x`` and ``1 / (e^ε + k − 1)`` otherwise.

    Parameters
    ----------
    k : int
        Number of inputs and of outputs, ``k >= 2``.
    eps : float
        Privacy level ε in ``[0, ∞]``. ``eps = inf`` gives the identity channel (no noise);
        ``eps = 0`` gives the constant uniform channel.

    Returns
    -------
    Channel
        Shape ``(k, k)``, carrying ``neighbors="all"``: every pair of inputs (local DP), under
        which its level is exactly ε.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``eps`` is not a scalar in ``[0, ∞]``.

    Notes
    -----
    With ``p = 1 / (1 + (k−1)e^{−ε})`` (the diagonal) and ``q = e^{−ε} p`` (off the diagonal):

    * ε-DP over all pairs of inputs (local DP) at exactly level ``ε = log(p / q)``;
    * the channel is symmetric, so its capacity (= its MI-DP as a one-entry database) is attained
      by the uniform prior: ``C = log k + p log p + (k − 1) q log q`` nats.

    It is the optimal ε-LDP mechanism in the high-privacy regime for many utilities (Kairouz, Oh
    and Viswanath 2016). Entries are computed from ``e^{−ε}`` so large ε does not overflow; where
    ``q`` underflows (ε ≳ 708) the channel keeps ``log p = −log1p((k − 1)e^{−ε})`` and
    ``log q = log p − ε`` (:attr:`~dpcap.channel.Channel.log_matrix`).

    References
    ----------
    S. L. Warner, "Randomized response", JASA 60 (1965). P. Kairouz, S. Oh, P. Viswanath,
    "Extremal mechanisms for local differential privacy", JMLR 17 (2016).

    Examples
    --------
    >>> import numpy as np
    >>> W = randomized_response(3, np.log(2.0)).matrix
    >>> W
    array([[0.5 , 0.25, 0.25],
           [0.25, 0.5 , 0.25],
           [0.25, 0.25, 0.5 ]])
    """
    k = check.integer(k, "k", minimum=2)
    eps = check.nonnegative_scalar(eps, "eps")
    check.dense_size(k, k, f"randomized_response(k={k})")
    q_over_p = 0.0 if math.isinf(eps) else math.exp(-eps)
    p = 1.0 / (1.0 + (k - 1) * q_over_p)
    W = np.full((k, k), q_over_p * p)
    np.fill_diagonal(W, p)
    if math.isinf(eps) or q_over_p * p >= TINY:
        return Channel(W, neighbors="all")
    log_p = -math.log1p((k - 1) * q_over_p)
    logs = np.full((k, k), log_p - eps)
    np.fill_diagonal(logs, log_p)
    return Channel(W, neighbors="all", log_matrix=logs)


def binary_symmetric(p: float) -> Channel:
    r"""The binary symmetric channel with crossover probability ``p``.

    ``W = [[1 − p, p], [p, 1 − p]]``.

    Parameters
    ----------
    p : float
        Crossover probability in ``[0, 1]``.

    Returns
    -------
    Channel
        Shape ``(2, 2)``, carrying ``neighbors="all"`` (its two inputs are neighbours; with two
        inputs ``"all"``, ``"line"`` and ``"hamming"`` are the same relation).

    Raises
    ------
    ParameterError
        If ``p`` is not a scalar in ``[0, 1]``.

    Notes
    -----
    * ε-DP level ``|log((1 − p) / p)|`` (``∞`` at ``p ∈ {0, 1}``, 0 at ``p = 1/2``); for
      ``p ≤ 1/2`` it is binary randomised response with ``ε = log((1 − p)/p)``.
    * Capacity ``C = log 2 − h(p)`` nats, ``h`` the binary entropy in nats, attained by the
      uniform prior.

    References
    ----------
    T. M. Cover, J. A. Thomas, *Elements of Information Theory*, 2nd ed., §7.1.4.

    Examples
    --------
    >>> binary_symmetric(0.25).matrix
    array([[0.75, 0.25],
           [0.25, 0.75]])
    """
    p = check.probability_scalar(p, "p")
    return Channel([[1.0 - p, p], [p, 1.0 - p]], neighbors="all")


def erasure(n: int, delta: float) -> Channel:
    r"""The n-ary erasure channel of Cuff & Yu, Example 2.

    Inputs ``{0, …, n−1}``, outputs ``{0, 1, …, n}``: output 0 is the erasure symbol, output
    ``x + 1`` reveals input ``x``. ``W[x, 0] = 1 − δ``, ``W[x, x + 1] = δ``, zero elsewhere
    (Cuff & Yu eq. 36, with the input relabelled from ``[N]`` to ``{0..N−1}``).

    Parameters
    ----------
    n : int
        Number of inputs ``N >= 1``.
    delta : float
        Probability of revealing the input, in ``[0, 1]``.

    Returns
    -------
    Channel
        Shape ``(n, n + 1)``, carrying ``neighbors="all"``: its inputs are categories (Cuff & Yu
        read it as a one-entry database, every pair of values neighbours).

    Raises
    ------
    ParameterError
        If ``n`` is not an integer ``>= 1`` or ``delta`` is not a scalar in ``[0, 1]``.

    Notes
    -----
    * Capacity ``C = δ log n`` nats (Cuff & Yu eq. 37), attained by the uniform prior; as a
      one-entry database this is also its MI-DP (eq. 38).
    * It is ``(0, δ)``-DP and no better: the total variation between two rows is δ, and
      ``δ(ε) = δ`` for every finite ε. Its ε-DP level is ``∞`` when ``δ > 0`` and ``n >= 2`` (a
      revealed symbol has probability 0 under every other input), 0 when ``δ = 0``.

    It shows that the δ-DP ⇒ MI-DP bound (Cuff & Yu eq. 35) is within a factor of about two of
    the truth for large alphabets.

    References
    ----------
    P. Cuff, L. Yu, "Differential privacy as a mutual information constraint", CCS 2016,
    Example 2, eqs. (36)–(38).

    Examples
    --------
    >>> erasure(3, 0.25).matrix
    array([[0.75, 0.25, 0.  , 0.  ],
           [0.75, 0.  , 0.25, 0.  ],
           [0.75, 0.  , 0.  , 0.25]])
    """
    n = check.integer(n, "n", minimum=1)
    delta = check.probability_scalar(delta, "delta")
    check.dense_size(n, n + 1, f"erasure(n={n})")
    W = np.zeros((n, n + 1))
    W[:, 0] = 1.0 - delta
    W[np.arange(n), np.arange(1, n + 1)] = delta
    return Channel(W, neighbors="all")


# --------------------------------------------------------------------------- exponential


def _real_matrix(value: Any, name: str) -> FloatArray:
    arr = check.real_array(value, name)  # complex, strings, bools, ragged: refused, named
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ParameterError(
            f"{name} must be a non-empty 2-D array (inputs x outputs), got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        where = tuple(int(v) for v in np.argwhere(~np.isfinite(arr))[0])
        raise ParameterError(
            f"{name} has a non-finite entry {float(arr[where])!r} at index {where}"
        )
    return arr


def exponential(
    utility: Any,
    eps: float,
    base: Any = None,
    *,
    sensitivity: float | None = None,
) -> Channel:
    r"""The exponential mechanism of McSherry & Talwar.

    ``W[x, y] = base[y] · exp(ε u(x, y) / (2Δu)) / Σ_{y'} base[y'] · exp(ε u(x, y') / (2Δu))``.

    Parameters
    ----------
    utility : array_like, shape (n_inputs, n_outputs)
        Finite real utilities ``u(x, y)`` (higher is better).
    eps : float
        ε in ``[0, ∞)``.
    base : array_like, shape (n_outputs,), optional
        Base measure μ on outputs: finite, non-negative, not all zero (need not sum to 1).
        Outputs with ``base[y] = 0`` get probability 0. Default: uniform.
    sensitivity : float, keyword-only, optional
        Δu ``> 0``. Default ``Δu = max_y (max_x u(x, y) − min_x u(x, y))``, the sensitivity over
        all pairs of inputs.

    Returns
    -------
    Channel
        Shape ``(n_inputs, n_outputs)``, carrying ``neighbors="all"``: with the default Δu the
        level is ε over every pair of inputs. With a smaller explicit ``sensitivity``, pass the
        pairs it bounds to the DP metrics (``neighbors=``) or to :meth:`Channel.with_neighbors`.

    Raises
    ------
    ParameterError
        If ``utility`` is not a finite 2-D array, ``eps`` is not in ``[0, ∞)``, ``base`` is not a
        valid measure of length ``n_outputs``, ``sensitivity`` is not in ``(0, ∞)``, or it is
        left to default and the utility does not depend on the input (Δu = 0).

    Notes
    -----
    ``log W[x, y] − log W[x', y] = ε(u(x, y) − u(x', y))/(2Δu) + log(N_{x'}/N_x)`` with both terms
    at most ε/2 when ``max_y |u(x, y) − u(x', y)| ≤ Δu``. Hence the channel is ε-DP for every pair
    of inputs whose utilities differ by at most Δu — with the default Δu, **over all pairs of
    inputs** (local DP). A smaller explicit ``sensitivity`` gives ε-DP only for the pairs it
    bounds (e.g. neighbours of a database).

    With ``u = −d`` a distortion and a prior p, Mir (2012) shows it is the optimiser of the
    risk–distortion problem ``min I(X; Y)`` s.t. ``E d ≤ D`` when ``base`` is the optimal output
    law (slope ``s = ε/(2Δu)``). Computed in the log domain (``logsumexp``), each row shifted by
    its largest utility before the division by Δu: large utilities do not overflow, and a
    subnormal Δu makes probabilities underflow, never NaN; where an entry underflows the channel
    keeps these logs (:attr:`~dpcap.channel.Channel.log_matrix`).

    References
    ----------
    F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007. D. J. Mir,
    "Information-theoretic foundations of differential privacy", FPS 2012, Thm 3–4.

    Examples
    --------
    >>> import numpy as np
    >>> u = -np.abs(np.subtract.outer(np.arange(3), np.arange(3)))  # u(x, y) = -|x - y|
    >>> W = exponential(u, 2 * np.log(2.0)).matrix  # Δu = 2, so weights 2^(u/2)
    >>> W.round(4)
    array([[0.4531, 0.3204, 0.2265],
           [0.2929, 0.4142, 0.2929],
           [0.2265, 0.3204, 0.4531]])
    """
    u = _real_matrix(utility, "utility")
    eps = check.nonnegative_scalar(eps, "eps", allow_inf=False)
    n_out = u.shape[1]
    check.dense_size(u.shape[0], n_out, "exponential(utility)")
    log_base = np.zeros(n_out)
    if base is not None:
        mu = check.nonnegative(base, "base", allow_inf=False)
        if mu.shape != (n_out,):
            raise ParameterError(
                f"base must be a 1-D measure with one entry per output ({n_out}), "
                f"got shape {mu.shape}"
            )
        if not (mu > 0).any():
            raise ParameterError(f"base must have a positive entry, got {check.show(base)}")
        log_base = np.full(n_out, -np.inf)
        log_base[mu > 0] = np.log(mu[mu > 0])
    if sensitivity is None:
        spread = float(np.max(u.max(axis=0) - u.min(axis=0)))
        if spread == 0.0:
            raise ParameterError(
                "utility does not depend on the input (sensitivity 0); pass sensitivity= explicitly"
            )
    else:
        spread = check.nonnegative_scalar(
            sensitivity, "sensitivity", allow_inf=False, positive=True
        )
    logits = log_base[None, :] + _scaled_utility(u, eps, spread)
    logs = logits - logsumexp(logits, axis=1, keepdims=True)
    W = np.exp(logs)
    return Channel(W, neighbors="all", log_matrix=logs if (W < TINY).any() else None)


def _scaled_utility(u: FloatArray, eps: float, spread: float) -> FloatArray:
    """``ε u(x, y)/(2Δu)`` up to a constant per row (which the softmax ignores), never NaN.

    Each row's largest utility is subtracted first, then the result divided by Δu and
    multiplied by ``ε/2``: a subnormal Δu makes ``ε/(2Δu)`` infinite, and ``∞ · 0`` would be
    NaN, whereas ``(u − max u)/Δu`` is ``≤ 0`` and at worst ``−∞`` (a probability that
    underflows). A span ``max u − min u`` above the largest double is halved first.
    """
    if eps == 0.0:
        return np.zeros_like(u)
    shifted = u - u.max(axis=1, keepdims=True)
    if not np.isfinite(shifted).all() or not math.isfinite(spread):
        shifted = 0.5 * u - (0.5 * u).max(axis=1, keepdims=True)
        spread = 0.5 * spread if math.isfinite(spread) else float(np.max(np.ptp(0.5 * u, axis=0)))
    with np.errstate(over="ignore"):
        out: FloatArray = (shifted / spread) * (0.5 * eps)
    return out
