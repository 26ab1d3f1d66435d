"""Entropies of finite laws: Rényi, Tsallis, and conditional (Shannon and Arimoto) entropies.

Conventions (``docs/mathematics.rst`` §8 and §10): ``0 log 0 = 0`` and ``0^α = 0`` (outcomes of
probability 0 do not count, at every order, α = 0 included); the orders 0, 1 and ∞ are exact
branches, and orders near 1 are evaluated without cancellation. A joint law ``joint[x, y] =
P(X=x, Y=y)`` has X on the rows and Y on the columns, as a channel does: for a prior ``p`` and a
channel ``W``, ``p[:, None] * W`` is the joint law of the input and the output.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp, rel_entr, xlogy

from dpcap._core import information as kernel
from dpcap._core import validation as check

__all__ = [
    "arimoto_conditional_entropy",
    "conditional_entropy",
    "renyi_entropy",
    "tsallis_entropy",
]

_JOINT = "joint[x, y] = P(X=x, Y=y) (X on the rows)"


def _power_sum_minus_one(P: check.FloatArray, alpha: float) -> check.FloatArray:
    """``Σ_x P_x^α − 1`` down each column of ``P`` (laws on axis 0), without cancellation.

    Each term is ``P^α − P = P expm1((α − 1) log P)``, of one sign for all x, so the sum keeps
    full relative accuracy as α → 1; where ``(α − 1) log P > 1`` (α < 1 and P small) the term is
    ``P^α − P`` itself, which does not overflow. Zero entries contribute 0.
    """
    positive = P > 0
    logs = np.log(np.where(positive, P, 1.0))
    with np.errstate(over="ignore"):  # (α − 1) log P → −∞ for huge α: expm1 is then −1
        z = (alpha - 1.0) * logs
    near = z <= 1.0
    terms = np.zeros(P.shape)
    terms[near] = P[near] * np.expm1(z[near])
    terms[~near] = np.exp(alpha * logs[~near]) - P[~near]
    result: check.FloatArray = np.sum(terms, axis=0)
    return result


def _renyi(P: check.FloatArray, alpha: float) -> check.FloatArray:
    """``H_α`` (nats) of each column of ``P`` (laws on axis 0)."""
    positive = P > 0
    if alpha == 0.0:
        result: check.FloatArray = np.log(np.sum(positive, axis=0).astype(np.float64))
        return result
    if alpha == 1.0:
        result = -np.sum(xlogy(P, P), axis=0)
    elif math.isinf(alpha):
        result = -np.log(np.max(P, axis=0))
    else:
        x = _power_sum_minus_one(P, alpha)  # Σ P^α − 1 ∈ (−1, 0] for α > 1
        safe = np.maximum(x, -0.5)
        result = np.log1p(safe) / (1.0 - alpha)
        far = (alpha > 1.0) & (x < -0.5)
        if np.any(far):  # Σ P^α ≪ 1: log1p would cancel; take log Σ P^α in the log domain
            logs = np.where(positive, np.log(np.where(positive, P, 1.0)), -np.inf)
            top = np.max(logs, axis=0)
            with np.errstate(over="ignore"):  # α (log P − max) → −∞ for huge α: e^{−∞} = 0
                spread = logsumexp(alpha * (logs - top), axis=0)
            direct = alpha / (1.0 - alpha) * top + spread / (1.0 - alpha)
            result = np.where(far, direct, result)
    return np.maximum(result, 0.0) + 0.0


def renyi_entropy(p: Any, /, alpha: float, *, unit: str = "nats") -> float:
    """Rényi entropy of order ``alpha`` ∈ [0, ∞].

    Parameters
    ----------
    p : array_like, shape (n,)
        A probability vector.
    alpha : float
        The order, in [0, ∞] (``math.inf`` is the min-entropy).
    unit : {"nats", "bits"}
        Unit of the result.

    Returns
    -------
    float
        ``H_α(p)``, in ``[0, log |supp p|]``.

    Raises
    ------
    PriorError
        If ``p`` is not a probability vector.
    ParameterError
        If ``alpha`` is negative or NaN, or ``unit`` is unknown.

    Notes
    -----
    ``H_α(p) = 1/(1−α) · log Σ_x p_x^α`` (Rényi 1961), with its limits ``H_0 = log |supp p|``
    (the Hartley entropy; zero masses are not counted), ``H_1 = −Σ p log p`` (Shannon, the same
    number as :func:`dpcap.measures.entropy`) and ``H_∞ = −log max_x p_x`` (min-entropy). It is
    non-increasing in α. Near α = 1, ``Σ p^α − 1 = Σ_x p_x expm1((α−1) log p_x)`` (terms of one
    sign) and ``log1p`` keep every digit; for α > 1 with ``Σ p^α < 1/2`` the sum is taken in the
    log domain (``docs/mathematics.rst`` §10).

    References
    ----------
    A. Rényi, "On measures of entropy and information", Proc. 4th Berkeley Symposium on
    Mathematical Statistics and Probability, vol. 1, 547–561, 1961.

    Examples
    --------
    >>> round(renyi_entropy([0.25, 0.25, 0.25, 0.25], 2.0, unit="bits"), 12)   # log2 4
    2.0
    >>> round(renyi_entropy([0.5, 0.25, 0.25], 2.0), 6)   # −log(1/4 + 1/16 + 1/16) = log(8/3)
    0.980829
    """
    a = check.order(alpha)
    P = check.distribution(p, "p")
    divisor = check.unit_divisor(unit)
    if a == 1.0:  # the very expression of dpcap.measures.entropy
        return float(-np.sum(xlogy(P, P))) / divisor
    return float(_renyi(P[:, None], a)[0]) / divisor


def tsallis_entropy(p: Any, /, q: float) -> float:
    """Tsallis entropy of index ``q`` ∈ [0, ∞] (dimensionless; nats at q = 1).

    Parameters
    ----------
    p : array_like, shape (n,)
        A probability vector.
    q : float
        The index, in [0, ∞].

    Returns
    -------
    float
        ``S_q(p) ≥ 0``.

    Raises
    ------
    PriorError
        If ``p`` is not a probability vector.
    ParameterError
        If ``q`` is negative or NaN.

    Notes
    -----
    ``S_q(p) = (1 − Σ_x p_x^q)/(q − 1)`` (Tsallis 1988), with ``S_1 = −Σ p log p`` (Shannon,
    in nats), ``S_0 = |supp p| − 1`` and ``S_∞ = 0``; ``S_2 = 1 − Σ p²`` is the Gini–Simpson
    index. There is no ``unit=``: for q ≠ 1 the value is not a logarithm, and changing the base
    of the logarithm does not rescale it; only its limit q → 1 is Shannon's entropy in nats.
    It is a monotone transform of Rényi's entropy: ``H_q = log(1 + (1−q) S_q)/(1−q)``. The sum
    is taken as ``Σ_x p_x (1 − p_x^{q−1})/(q−1)``, terms of one sign, with ``expm1``: no
    cancellation near q = 1 (``docs/mathematics.rst`` §10).

    References
    ----------
    C. Tsallis, "Possible generalization of Boltzmann–Gibbs statistics", Journal of Statistical
    Physics 52, 479–487, 1988.

    Examples
    --------
    >>> tsallis_entropy([0.5, 0.5], 2.0)   # 1 − (1/4 + 1/4)
    0.5
    """
    index = check.order(q, "q")
    P = check.distribution(p, "p")
    if index == 1.0:
        return float(-np.sum(xlogy(P, P)))
    if math.isinf(index):
        return 0.0
    return max(float(_power_sum_minus_one(P[:, None], index)[0]) / (1.0 - index), 0.0) + 0.0


def conditional_entropy(joint: Any, /, *, unit: str = "nats") -> float:
    """Conditional entropy ``H(X|Y)`` of a joint law ``joint[x, y] = P(X=x, Y=y)``.

    Parameters
    ----------
    joint : array_like, shape (n_x, n_y)
        The joint law, X on the rows (for a prior ``p`` and a channel ``W``, ``p[:, None] * W``
        gives the equivocation ``H(X|Y)``; its transpose gives ``H(Y|X)``).
    unit : {"nats", "bits"}
        Unit of the result.

    Returns
    -------
    float
        ``H(X|Y) ∈ [0, H(X)]``.

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law.

    Notes
    -----
    ``H(X|Y) = −Σ_{x,y} P(x,y) log (P(x,y)/P_Y(y)) = H(X,Y) − H(Y)``, each term computed as
    ``−rel_entr(P(x,y), P_Y(y)) ≥ 0`` (no difference of two entropies is formed)
    (Cover & Thomas, *Elements of Information Theory*, 2nd ed., eq. 2.10).

    Examples
    --------
    >>> conditional_entropy([[0.25, 0.25], [0.25, 0.25]], unit="bits")   # X ⊥ Y, H(X) = 1 bit
    1.0
    >>> conditional_entropy([[0.5, 0.0], [0.0, 0.5]])   # X = Y
    0.0
    """
    P = kernel.joint_law(joint, 2, _JOINT)
    divisor = check.unit_divisor(unit)
    py = P.sum(axis=0, keepdims=True)
    return max(float(-np.sum(rel_entr(P, py))), 0.0) / divisor + 0.0


def arimoto_conditional_entropy(joint: Any, /, alpha: float, *, unit: str = "nats") -> float:
    """Arimoto's conditional Rényi entropy ``H_α^A(X|Y)`` of a joint law ``joint[x, y]``.

    Parameters
    ----------
    joint : array_like, shape (n_x, n_y)
        The joint law ``P(X=x, Y=y)``, X on the rows.
    alpha : float
        The order, in [0, ∞].
    unit : {"nats", "bits"}
        Unit of the result.

    Returns
    -------
    float
        ``H_α^A(X|Y) ∈ [0, H_α(X)]``.

    Raises
    ------
    PriorError
        If ``joint`` is not a 2-D probability law.
    ParameterError
        If ``alpha`` is negative or NaN.

    Notes
    -----
    ``H_α^A(X|Y) = α/(1−α) · log Σ_y (Σ_x P(x,y)^α)^{1/α}`` (Arimoto 1977; Hsu et al., survey,
    §III-A), so that Arimoto's α-information is ``I_α^A = H_α(X) − H_α^A(X|Y)``
    (:func:`dpcap.measures.arimoto_mi`). With the posteriors ``P_{X|Y=y}`` it is the exponential
    mean ``α/(1−α) log Σ_y P_Y(y) exp((1−α)/α · H_α(X|Y=y))`` of the Rényi entropies of the
    posteriors, evaluated with ``expm1``/``log1p`` near α = 1. Limits: ``H_1^A = H(X|Y)``,
    ``H_∞^A = −log Σ_y max_x P(x,y)`` (the conditional min-entropy, whose difference from
    ``H_∞(X)`` is the min-entropy leakage) and ``H_0^A = log max_y |{x : P(x,y) > 0}|``
    (``docs/mathematics.rst`` §10).

    References
    ----------
    S. Arimoto, "Information measures and capacity of order α for discrete memoryless channels",
    in *Topics in Information Theory*, Colloquia Mathematica Societatis János Bolyai 16, 41–52,
    1977.

    Examples
    --------
    >>> joint = [[0.45, 0.05], [0.05, 0.45]]   # uniform bit through a BSC(0.1)
    >>> round(arimoto_conditional_entropy(joint, float("inf")), 6)   # −log(0.45 + 0.45)
    0.105361
    """
    a = check.order(alpha)
    P = kernel.joint_law(joint, 2, _JOINT)
    divisor = check.unit_divisor(unit)
    py = P.sum(axis=0)
    seen = py > 0
    P, py = P[:, seen], py[seen]
    if a == 0.0:
        return math.log(int(np.max(np.sum(P > 0, axis=0)))) / divisor
    posterior = P / py
    posterior /= posterior.sum(axis=0)
    h = _renyi(posterior, a)
    c = -1.0 if math.isinf(a) else (1.0 - a) / a
    return max(kernel.exponential_mean(py, h, c), 0.0) / divisor + 0.0
