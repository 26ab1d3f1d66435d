r"""Quantitative information flow: g-vulnerability, g-leakage, Bayes risk and guessing entropy.

The measures of Alvim, Chatzikokolakis, Palamidessi and Smith (CSF 2012) and of the book by
Alvim et al., *The Science of Quantitative Information Flow* (Springer 2020), at one prior
(``docs/mathematics.rst`` §9). A channel is ``W[x, y] = P(Y=y | X=x)`` (rows are secrets); a
gain is a matrix ``G[w, x]`` (rows are guesses or actions, columns are secrets), a loss a matrix
``L[w, x]`` with the same layout; ``None`` is the identity gain ``g(w, x) = 1[w = x]`` (Bayes
vulnerability) or the 0-1 loss ``ℓ(w, x) = 1[w ≠ x]`` (Bayes risk).

Vulnerabilities, risks, guessing entropies and their leakages are dimensionless (in the gain's
or loss's own units): no ``unit=`` argument. The capacities over priors are in
:mod:`dpcap.gain_capacity`.

**Signs.** Gains and losses may be any finite numbers. A *multiplicative* leakage is a ratio and
needs a positive denominator: ``V_g(π) > 0`` for the g-leakage (a gain whose prior
vulnerability is 0 or negative raises :class:`~dpcap.result.ParameterError`), a non-negative
loss with ``U_ℓ(π) > 0`` for the risk leakage. Additive leakages take any finite gain or loss.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import gains as _gains
from dpcap._core import validation as check
from dpcap.errors import ParameterError

__all__ = [
    "bayes_leakage",
    "bayes_risk",
    "bayes_vulnerability",
    "g_leakage",
    "g_strategy",
    "g_vulnerability",
    "guessing_entropy",
    "guessing_leakage",
    "posterior_bayes_risk",
    "posterior_bayes_vulnerability",
    "posterior_g_vulnerability",
    "posterior_guessing_entropy",
    "risk_leakage",
]

_KINDS = ("multiplicative", "additive")


def _gain(value: Any, n: int, name: str = "gain") -> check.FloatArray:
    return _gains.identity(n) if value is None else _gains.as_gain(value, n, name)


def _loss(value: Any, n: int, *, nonnegative: bool = False) -> check.FloatArray:
    if value is None:
        return _gains.zero_one_loss(n)
    return _gains.as_gain(value, n, "loss", nonnegative=nonnegative)


def _risk_01(J: check.FloatArray) -> float:
    """``Σ_y (Σ_x J[x, y] − max_x J[x, y])``, the 0-1 risk of the joint (or prior, as one
    column), summed over the entries off each column's first maximum: no cancellation."""
    rest = np.array(J, dtype=np.float64, copy=True)
    rest[np.argmax(rest, axis=0), np.arange(rest.shape[1])] = 0.0
    return float(np.sum(rest))


def _posterior_g(p: check.FloatArray, W: check.FloatArray, G: check.FloatArray) -> float:
    _gains.check_work(G.shape[0], G.shape[1], W.shape[1], "the posterior gain table")
    return _gains.posterior_vulnerability(p, W, G)


def g_vulnerability(prior: Any, gain: Any = None, /) -> float:
    r"""Prior g-vulnerability ``V_g(π) = max_w Σ_x π_x g(w, x)``.

    The expected gain of the adversary's best single action before observing anything
    (Alvim et al. 2012, Def. 3.2; ``docs/mathematics.rst`` §9).

    Parameters
    ----------
    prior : array_like, shape (n_secrets,)
        The prior π.
    gain : array_like, shape (n_guesses, n_secrets), optional
        The gain matrix ``G[w, x]``; None (default) is the identity gain, for which
        ``V_g(π) = max_x π_x`` (Bayes vulnerability).

    Returns
    -------
    float

    Raises
    ------
    PriorError, ParameterError
        For an invalid prior or gain (wrong shape, NaN, infinite, strings, bools, complex).

    References
    ----------
    M. S. Alvim, K. Chatzikokolakis, C. Palamidessi, G. Smith, "Measuring information leakage
    using generalized gain functions", CSF 2012.

    Examples
    --------
    >>> g_vulnerability([0.2, 0.8])  # Bayes vulnerability: max_x π_x
    0.8
    >>> g_vulnerability([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0], [0.6, 0.6]])  # a hedging guess
    0.6
    """
    p = check.distribution(prior, "prior")
    if gain is None:
        return float(np.max(p))
    return _gains.vulnerability(p, _gain(gain, p.shape[0]))


def posterior_g_vulnerability(prior: Any, W: Any, gain: Any = None, /) -> float:
    r"""Posterior g-vulnerability ``V_g[π▷W] = Σ_y max_w Σ_x π_x W[x, y] g(w, x)``.

    The expected gain of the adversary who sees the output y and then takes its best action
    (Alvim et al. 2012, Def. 3.3). It is never below ``V_g(π)`` (ignoring y is one strategy).

    Parameters
    ----------
    prior : array_like, shape (n_secrets,)
    W : array_like, shape (n_secrets, n_outputs)
        Row-stochastic channel.
    gain : array_like, shape (n_guesses, n_secrets), optional
        None (default) is the identity gain (posterior Bayes vulnerability).

    Raises
    ------
    ChannelError, PriorError, ParameterError
        For invalid input; ProblemTooLargeError when ``n_guesses · n_secrets · n_outputs`` is
        above dpcap's dense limit.

    Examples
    --------
    >>> W = [[0.8, 0.2], [0.3, 0.7]]
    >>> round(posterior_g_vulnerability([0.75, 0.25], W), 12)  # 0.6 + 0.175 = 31/40
    0.775
    """
    p, matrix = check.prior_and_channel(prior, W)
    if gain is None:
        return _gains.bayes_posterior(p, matrix)
    return _posterior_g(p, matrix, _gain(gain, p.shape[0]))


def g_leakage(prior: Any, W: Any, gain: Any = None, /, *, kind: str = "multiplicative") -> float:
    r"""g-leakage of a channel at a prior: ``V_g[π▷W] / V_g(π)`` or ``V_g[π▷W] − V_g(π)``.

    ``kind="multiplicative"`` (default) is the ratio (Alvim et al. 2012, Def. 3.4, as a ratio
    rather than its logarithm); ``kind="additive"`` the difference (Alvim et al. 2014). Both are
    at least their no-leakage value (1, resp. 0). The multiplicative ratio needs
    ``V_g(π) > 0``; for a non-negative gain it never exceeds the Bayes capacity
    ``Σ_y max_x W[x, y]`` (the "miracle" theorem, Alvim et al. 2020, Thm 7.5;
    ``docs/mathematics.rst`` §9).

    Parameters
    ----------
    prior : array_like, shape (n_secrets,)
    W : array_like, shape (n_secrets, n_outputs)
    gain : array_like, shape (n_guesses, n_secrets), optional
        None is the identity gain: then the multiplicative leakage is ``exp`` of
        :func:`dpcap.min_entropy_leakage` (in nats).
    kind : {"multiplicative", "additive"}

    Raises
    ------
    ParameterError
        For an unknown ``kind``, an invalid gain, or (multiplicative) ``V_g(π) ≤ 0``.

    Examples
    --------
    >>> W = [[0.8, 0.2], [0.3, 0.7]]
    >>> round(g_leakage([0.5, 0.5], W), 12)  # Σ_y max_x W[x, y] = 0.8 + 0.7
    1.5
    >>> round(g_leakage([0.75, 0.25], W, kind="additive"), 12)  # 31/40 − 3/4
    0.025
    """
    what = check.choice(kind, _KINDS, "kind")
    p, matrix = check.prior_and_channel(prior, W)
    if gain is None:
        prior_v, post = float(np.max(p)), _gains.bayes_posterior(p, matrix)
    else:
        G = _gain(gain, p.shape[0])
        prior_v, post = _gains.vulnerability(p, G), _posterior_g(p, matrix, G)
    if what == "additive":
        return max(post - prior_v, 0.0)
    if not prior_v > 0:
        raise ParameterError(
            f"multiplicative g-leakage needs V_g(prior) > 0, got V_g(prior) = {prior_v!r} for "
            "this gain and prior; use kind='additive', or shift the gain so that it is positive"
        )
    return max(post / prior_v, 1.0)


def g_strategy(prior: Any, W: Any, gain: Any = None, /) -> NDArray[np.int64]:
    """An optimal guess for each output: ``argmax_w Σ_x π_x W[x, y] g(w, x)`` per column y.

    The row index of ``gain`` (for the identity gain: the guessed secret) that attains the
    posterior g-vulnerability; the first maximiser is returned, and 0 for an output of
    probability 0.

    Returns
    -------
    ndarray of int64, shape (n_outputs,)

    Examples
    --------
    >>> g_strategy([0.75, 0.25], [[0.8, 0.2], [0.3, 0.7]]).tolist()
    [0, 1]
    """
    p, matrix = check.prior_and_channel(prior, W)
    if gain is None:
        out: NDArray[np.int64] = np.argmax(p[:, None] * matrix, axis=0).astype(np.int64)
        return out
    G = _gain(gain, p.shape[0])
    _gains.check_work(G.shape[0], G.shape[1], matrix.shape[1], "the posterior gain table")
    return _gains.strategy(p, matrix, G)


def bayes_vulnerability(prior: Any, /) -> float:
    """Bayes vulnerability ``V_1(π) = max_x π_x``: the chance of guessing X in one try
    (:func:`g_vulnerability` with the identity gain).

    Examples
    --------
    >>> bayes_vulnerability([0.1, 0.1, 0.1, 0.7])
    0.7
    """
    return g_vulnerability(prior)


def posterior_bayes_vulnerability(prior: Any, W: Any, /) -> float:
    """Posterior Bayes vulnerability ``V_1[π▷W] = Σ_y max_x π_x W[x, y]``
    (:func:`posterior_g_vulnerability` with the identity gain).

    Examples
    --------
    >>> posterior_bayes_vulnerability([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]])
    1.0
    """
    return posterior_g_vulnerability(prior, W)


def bayes_leakage(prior: Any, W: Any, /, *, kind: str = "multiplicative") -> float:
    """Bayes leakage ``V_1[π▷W] / V_1(π)`` (multiplicative) or ``V_1[π▷W] − V_1(π)`` (additive):
    :func:`g_leakage` with the identity gain.

    The multiplicative one is ``exp`` of the min-entropy leakage (:func:`dpcap.min_entropy_leakage`
    in nats, Smith 2009); its maximum over priors, the Bayes capacity ``Σ_y max_x W[x, y]``,
    is attained by the uniform prior (:func:`dpcap.g_capacity`).

    Examples
    --------
    >>> round(bayes_leakage([0.75, 0.25], [[0.8, 0.2], [0.3, 0.7]], kind="additive"), 12)
    0.025
    """
    return g_leakage(prior, W, kind=kind)


def bayes_risk(prior: Any, loss: Any = None, /) -> float:
    r"""Prior Bayes risk ``U_ℓ(π) = min_w Σ_x π_x ℓ(w, x)``: the least expected loss.

    With the 0-1 loss (``loss=None``), ``U(π) = 1 − max_x π_x``, the chance of a wrong guess
    (Alvim et al. 2020, §3.2.5 on loss functions; ``docs/mathematics.rst`` §9).

    Parameters
    ----------
    prior : array_like, shape (n_secrets,)
    loss : array_like, shape (n_guesses, n_secrets), optional
        The loss matrix ``L[w, x]``; None is the 0-1 loss.

    Examples
    --------
    >>> round(bayes_risk([0.2, 0.8]), 12)
    0.2
    """
    p = check.distribution(prior, "prior")
    if loss is None:
        return _risk_01(p[:, None])
    return float(np.min(_loss(loss, p.shape[0]) @ p))


def posterior_bayes_risk(prior: Any, W: Any, loss: Any = None, /) -> float:
    r"""Posterior Bayes risk ``U_ℓ[π▷W] = Σ_y min_w Σ_x π_x W[x, y] ℓ(w, x)``.

    Examples
    --------
    >>> round(posterior_bayes_risk([0.75, 0.25], [[0.8, 0.2], [0.3, 0.7]]), 12)  # 9/40
    0.225
    """
    p, matrix = check.prior_and_channel(prior, W)
    if loss is None:
        return _risk_01(p[:, None] * matrix)
    return -_posterior_g(p, matrix, -_loss(loss, p.shape[0]))


def risk_leakage(prior: Any, W: Any, loss: Any = None, /, *, kind: str = "multiplicative") -> float:
    r"""Risk leakage: ``U_ℓ(π) / U_ℓ[π▷W]`` (multiplicative) or ``U_ℓ(π) − U_ℓ[π▷W]``.

    How much observing the output lowers the least expected loss. The multiplicative one needs
    a non-negative loss and ``U_ℓ(π) > 0``; it is ``math.inf`` when the posterior risk is 0
    (the output reveals what the adversary needs). The additive one equals the additive
    g-leakage of the gain ``−ℓ``. Over priors, the multiplicative leakage of the 0-1 loss is at
    most ``1 / (1 − max_{x,x'} TV(W_x, W_x'))`` (:func:`dpcap.risk_capacity`).

    Raises
    ------
    ParameterError
        For an unknown ``kind``, an invalid loss, or (multiplicative) a negative loss entry or
        ``U_ℓ(π) = 0``.

    Examples
    --------
    >>> W = [[0.8, 0.2], [0.3, 0.7]]
    >>> round(risk_leakage([0.5, 0.5], W), 12)  # (1/2) / (1/4): 1 / (1 − TV) with TV = 1/2
    2.0
    """
    what = check.choice(kind, _KINDS, "kind")
    p, matrix = check.prior_and_channel(prior, W)
    if loss is None:  # U = 1 − V for the 0-1 loss, summed without cancellation
        prior_u = _risk_01(p[:, None])
        post_u = _risk_01(p[:, None] * matrix)
    else:
        L = _loss(loss, p.shape[0], nonnegative=what == "multiplicative")
        prior_u = float(np.min(L @ p))
        post_u = -_posterior_g(p, matrix, -L)
    if what == "additive":
        return max(prior_u - post_u, 0.0)
    if not prior_u > 0:
        raise ParameterError(
            f"multiplicative risk leakage needs U_loss(prior) > 0, got {prior_u!r}: the prior "
            "risk is already 0, so the ratio 0/0 is undefined; use kind='additive'"
        )
    post_u = max(post_u, 0.0)
    return math.inf if post_u == 0.0 else max(prior_u / post_u, 1.0)


def _guessing(mass: check.FloatArray) -> float:
    """``Σ_i i · m_[i]`` along axis 0 with the masses sorted in decreasing order, summed."""
    ordered = -np.sort(-mass, axis=0)
    ranks = np.arange(1, mass.shape[0] + 1, dtype=np.float64)
    return float(np.sum(ranks @ ordered))


def guessing_entropy(prior: Any, /) -> float:
    r"""Guessing entropy ``G(π) = Σ_{i=1}^n i · π_[i]`` (π sorted in decreasing order).

    The expected number of guesses of ``X`` an adversary needs when it may ask "is X = x?"
    until it is right, trying the most likely secrets first (Massey 1994; Alvim et al. 2020,
    §3.2.6). ``1 ≤ G(π) ≤ (n + 1)/2``, the right end at the uniform prior.

    Examples
    --------
    >>> guessing_entropy([0.25, 0.25, 0.25, 0.25])  # (n + 1) / 2
    2.5
    >>> round(guessing_entropy([0.2, 0.8]), 12)  # 0.8 · 1 + 0.2 · 2
    1.2
    """
    return _guessing(check.distribution(prior, "prior"))


def posterior_guessing_entropy(prior: Any, W: Any, /) -> float:
    r"""Posterior guessing entropy ``Σ_y P(y) G(X | Y = y) = Σ_y Σ_i i · J_[i], y``.

    ``J[x, y] = π_x W[x, y]`` is the joint law; each column is sorted in decreasing order.

    Examples
    --------
    >>> W = [[0.8, 0.2], [0.3, 0.7]]
    >>> round(posterior_guessing_entropy([0.75, 0.25], W), 12)  # (0.6 + 2·0.075) + (0.175 + 2·0.15)
    1.225
    """
    p, matrix = check.prior_and_channel(prior, W)
    return _guessing(p[:, None] * matrix)


def guessing_leakage(prior: Any, W: Any, /, *, kind: str = "multiplicative") -> float:
    r"""Guessing leakage ``G(π) / G(π▷W)`` (multiplicative) or ``G(π) − G(π▷W)`` (additive).

    How many fewer guesses the output saves (the posterior guessing entropy is never above the
    prior one, and never below 1).

    Examples
    --------
    >>> round(guessing_leakage([0.5, 0.5], [[1.0, 0.0], [0.0, 1.0]], kind="additive"), 12)
    0.5
    """
    what = check.choice(kind, _KINDS, "kind")
    p, matrix = check.prior_and_channel(prior, W)
    before = _guessing(p)
    after = _guessing(p[:, None] * matrix)
    return max(before - after, 0.0) if what == "additive" else max(before / after, 1.0)
