"""Information measures on finite distributions and channels (nats unless ``unit="bits"``).

Conventions (``docs/mathematics.rst`` §8): ``0 log 0 = 0``; a positive probability against a
zero gives ∞; the orders α = 0, 1 and ∞ of Rényi quantities are exact branches, and orders
near 1 are evaluated without cancellation. Every argument is validated: probability vectors
must be non-negative and sum to 1 within ``1e-9``; channels must be row-stochastic. Data
arguments are positional-only; the order α (or γ) may also be passed by keyword.

Rényi, Tsallis and conditional entropies live in :mod:`dpcap.entropies`, f-divergences in
:mod:`dpcap.divergences` (``docs/mathematics.rst`` §10); both are re-exported here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp, xlogy

from dpcap._core import certify as _certify
from dpcap._core import gains as _gains
from dpcap._core import information as kernel
from dpcap._core import validation as check
from dpcap.channel import as_mechanism
from dpcap.divergences import (
    bhattacharyya_coefficient,
    bhattacharyya_distance,
    chi2_divergence,
    f_divergence,
    hellinger_distance,
    hellinger_divergence,
    jensen_shannon_divergence,
)
from dpcap.entropies import (
    arimoto_conditional_entropy,
    conditional_entropy,
    renyi_entropy,
    tsallis_entropy,
)
from dpcap.errors import ParameterError, SolverError, Status
from dpcap.solvers import divergence
from dpcap.solvers import renyi as renyi_engine

__all__ = [
    "arimoto_conditional_entropy",
    "arimoto_mi",
    "augustin_mi",
    "bhattacharyya_coefficient",
    "bhattacharyya_distance",
    "chi2_divergence",
    "conditional_entropy",
    "conditional_mutual_information",
    "conditional_sibson_mi",
    "entropy",
    "f_divergence",
    "hellinger_distance",
    "hellinger_divergence",
    "hockey_stick",
    "jensen_shannon_divergence",
    "kl_divergence",
    "min_entropy_leakage",
    "mutual_information",
    "renyi_divergence",
    "renyi_entropy",
    "renyi_mi",
    "sibson_mi",
    "tsallis_entropy",
    "tv_distance",
]


def _pair(p: Any, q: Any) -> tuple[check.FloatArray, check.FloatArray]:
    P = check.distribution(p, "p")
    Q = check.distribution(q, "q", size=P.shape[0])
    return P, Q


def entropy(p: Any, /, *, unit: str = "nats") -> float:
    """Shannon entropy ``H(p) = −Σ_x p_x log p_x``.

    Examples
    --------
    >>> entropy([0.5, 0.5], unit="bits")
    1.0
    """
    P = check.distribution(p, "p")
    return float(-np.sum(xlogy(P, P))) / check.unit_divisor(unit)


def kl_divergence(p: Any, q: Any, /, *, unit: str = "nats") -> float:
    """Kullback–Leibler divergence ``D(p‖q) = Σ_y p_y log(p_y/q_y)`` (∞ if p is not ≪ q).

    Summed as ``Σ_y (p_y log(p_y/q_y) − p_y + q_y)``, the same number for two laws, whose terms
    are all ≥ 0 and each computed to a few ulps (:func:`dpcap.solvers.divergence.kl_terms`):
    no cancellation on nearly equal laws, where the plain sum's terms of both signs leave a
    residue of 1e-16 beside a divergence of 1e-24. The relative error is below ``(32 + n)u``
    (``u = 2⁻⁵³``, n outcomes) for vectors whose float sums are 1; otherwise the value is that
    of the laws they stand for within ``|Σp − 1| + (Σp − Σq)²``.

    Examples
    --------
    >>> round(kl_divergence([0.5, 0.5], [0.9, 0.1]), 6)
    0.510826
    """
    P, Q = _pair(p, q)
    return float(divergence.kl(P, Q)) / check.unit_divisor(unit)


def renyi_divergence(p: Any, q: Any, /, alpha: float, *, unit: str = "nats") -> float:
    """Rényi divergence of order ``alpha`` ∈ [0, ∞].

    ``D_α(p‖q) = 1/(α−1) log Σ_y p_y^α q_y^{1−α}``, with the limits ``D_0 = −log q(supp p)``,
    ``D_1 = D(p‖q)`` (KL) and ``D_∞ = log max_y p_y/q_y`` (Hsu et al., survey, §II; van Erven &
    Harremoës 2014). Non-decreasing in α. At α = 1 the sum is :func:`kl_divergence`'s, of
    non-negative terms; likelihood ratios are taken as ``log(p_y/q_y)`` (``log1p`` near 1), not
    as ``log p_y − log q_y``, which loses ``u·|log p_y|`` at tiny masses.

    Raises
    ------
    ParameterError
        If ``alpha`` is negative or NaN.

    Examples
    --------
    >>> round(renyi_divergence([0.5, 0.5], [0.9, 0.1], float("inf")), 6)
    1.609438
    """
    a = check.order(alpha)
    P, Q = _pair(p, q)
    return max(float(divergence.renyi(P, Q, a)), 0.0) / check.unit_divisor(unit)


def hockey_stick(p: Any, q: Any, /, gamma: Any) -> Any:
    """Hockey-stick divergence ``E_γ(p‖q) = Σ_y (p_y − γ q_y)_+ = max_A P(A) − γ Q(A)``.

    ``p`` and ``q`` are (ε, δ)-close in one direction iff ``E_{e^ε}(p‖q) ≤ δ`` (Cuff & Yu §3.2).
    ``gamma`` may be an array: the result has its shape. ``E_∞ = Σ_{y: q_y = 0} p_y``.

    Examples
    --------
    >>> float(hockey_stick([0.75, 0.25], [0.25, 0.75], 1.0))
    0.5
    """
    P, Q = _pair(p, q)
    g = check.nonnegative(gamma, "gamma")
    result = divergence.hockey_stick(P, Q, g)
    return float(result) if result.ndim == 0 else result


def tv_distance(p: Any, q: Any, /) -> float:
    """Total variation distance ``½ Σ_y |p_y − q_y|`` (= ``E_1(p‖q)``)."""
    P, Q = _pair(p, q)
    return float(divergence.tv(P, Q))


def mutual_information(prior: Any, W: Any, /, *, unit: str = "nats") -> float:
    """``I(X;Y) = Σ_x p_x D(W_x ‖ pW)`` for input law ``prior`` and channel ``W``.

    Examples
    --------
    >>> round(mutual_information([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]], unit="bits"), 6)
    0.531004
    """
    p, matrix = check.prior_and_channel(prior, W)
    return kernel.shannon_mi(p, matrix) / check.unit_divisor(unit)


def conditional_mutual_information(
    joint: Any, M: Any, entry: int, /, *, unit: str = "nats"
) -> float:
    """``I(X_i; Y | X^{-i})`` for a law ``joint`` on ``X_1 × … × X_n`` and mechanism ``M``.

    ``I(X_i; Y | X^{-i}) = Σ_{x^n} P(x^n) D(W_{x^n} ‖ P_{Y|X^{-i}=x^{-i}})`` with
    ``P_{Y|x^{-i}} = Σ_a P(a | x^{-i}) W_{(a, x^{-i})}`` (Cuff & Yu, eq. 24).

    Parameters
    ----------
    joint : array_like, shape ``M.shape``
        The law of the database.
    M : Mechanism
        The database mechanism (a plain matrix is a one-entry database).
    entry : int
        The entry ``i`` (0-based).
    """
    M = as_mechanism(M, "M")
    law = check.law(joint, "joint", M.shape)
    i = M._entry(entry)
    tensor = np.moveaxis(M.tensor(), i, -2)  # (..., m_i, |Y|)
    weights = np.moveaxis(law, i, -1)[..., None]  # (..., m_i, 1)
    context_mass = weights.sum(axis=-2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # contexts of mass 0 contribute 0
        posterior = np.where(context_mass > 0, weights / context_mass, 0.0)
    mixture = np.sum(posterior * tensor, axis=-2, keepdims=True)

    def log_mixture() -> Any:  # log P(y | x^{-i}), for the entries that underflowed to 0
        known = context_mass > 0
        log_context = np.log(np.where(known, context_mass, 1.0))
        log_posterior = np.where(known, divergence.log(weights) - log_context, -np.inf)
        return kernel.log_mixture(log_posterior, tensor)

    return kernel.weighted_kl(weights, tensor, mixture, log_mixture) / check.unit_divisor(unit)


def sibson_mi(prior: Any, W: Any, /, alpha: float, *, unit: str = "nats") -> float:
    """Sibson's α-mutual information.

    ``I_α^S(p, W) = α/(α−1) · log Σ_y (Σ_x p_x W_{xy}^α)^{1/α}`` (Hsu et al., survey, §III-A),
    with ``I_1^S = I(X;Y)``, ``I_∞^S = log Σ_y max_{x ∈ supp p} W_{xy}`` and
    ``I_0^S = −log max_y Σ_x p_x 1[W_{xy} > 0]``. Orders near 1 are evaluated stably.

    Examples
    --------
    >>> W = [[0.9, 0.1], [0.1, 0.9]]
    >>> round(sibson_mi([0.5, 0.5], W, float("inf")), 6)  # log 1.8
    0.587787
    """
    a = check.order(alpha)
    p, matrix = check.prior_and_channel(prior, W)
    return kernel.sibson(p, matrix, a) / check.unit_divisor(unit)


def conditional_sibson_mi(
    joint: Any, /, alpha: float, *, kind: str = "y|z", unit: str = "nats"
) -> float:
    """Conditional Sibson α-mutual information ``I_α(X;Y|Z)`` of a joint law ``joint[x, y, z]``.

    Parameters
    ----------
    joint : array_like, shape (n_x, n_y, n_z)
        The joint law ``P(X=x, Y=y, Z=z)``.
    alpha : float
        The order, in [0, ∞].
    kind : {"y|z", "z"}
        Which law is optimised out (Esposito, Wu & Gastpar 2021): ``"y|z"`` minimises
        ``D_α(P_XYZ ‖ P_{X|Z} Q_{Y|Z} P_Z)`` over ``Q_{Y|Z}``; ``"z"`` minimises
        ``D_α(P_XYZ ‖ P_{X|Z} P_{Y|Z} Q_Z)`` over ``Q_Z`` (symmetric in X and Y).
    unit : {"nats", "bits"}
        Unit of the result.

    Returns
    -------
    float
        ``I_α^{Y|Z}(X;Y|Z)`` or ``I_α^{Z}(X;Y|Z)``, ≥ 0.

    Raises
    ------
    PriorError
        If ``joint`` is not a 3-D probability law.
    ParameterError
        If ``alpha`` is negative or NaN, or ``kind`` is unknown.

    Notes
    -----
    Both minimisations have closed forms (Hölder's inequality, per value of z; the minimisers are
    ``Q(y|z) ∝ (Σ_x P(x|z) P(y|x,z)^α)^{1/α}`` and ``Q(z) ∝ P(z) S_z^{1/α}``):

    ``I_α^{Y|Z} = 1/(α−1) · log Σ_z P(z) exp((α−1) I_α^S(P_{X|z}, P_{Y|X,z}))``, an exponential
    mean of the Sibson informations of the slices (:func:`sibson_mi`), and

    ``I_α^{Z} = α/(α−1) · log Σ_z P(z) S_z^{1/α}``, ``S_z = Σ_{x,y} P(x,y|z)^α (P(x|z)
    P(y|z))^{1−α} = exp((α−1) D_α(P_{XY|z} ‖ P_{X|z} P_{Y|z}))`` (:func:`renyi_mi` per slice).

    Both are I(X;Y|Z) at α = 1 (:func:`conditional_mutual_information`). With Z constant,
    ``"y|z"`` is Sibson's ``I_α^S`` and ``"z"`` is ``D_α(P_XY ‖ P_X P_Y)``. At α = ∞, ``"y|z"``
    is the conditional maximal leakage ``max_z log Σ_y max_x P(y|x,z)`` and ``"z"`` is
    ``log Σ_z P(z) max_{x,y} P(x,y|z)/(P(x|z)P(y|z))``; at α = 0 they are
    ``−log Σ_z P(z) e^{−I_0^S(z)}`` and ``min_z D_0(P_{XY|z} ‖ P_{X|z}P_{Y|z})``. Near α = 1 the
    mean is taken with ``expm1``/``log1p`` (``docs/mathematics.rst`` §10).

    References
    ----------
    A. R. Esposito, D. Wu, M. Gastpar, "On conditional Sibson's α-mutual information", Proc.
    IEEE International Symposium on Information Theory (ISIT), 2021 (arXiv:2102.00720).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0.9, 0.1], [0.1, 0.9]])
    >>> joint = np.stack([0.25 * W, 0.25 * W], axis=2)   # Z independent of (X, Y)
    >>> round(conditional_sibson_mi(joint, 2.0), 12) == round(sibson_mi([0.5, 0.5], W, 2.0), 12)
    True
    """
    a = check.order(alpha)
    variant = check.choice(kind, ("y|z", "z"), "kind")
    law = kernel.joint_law(joint, 3, "joint[x, y, z] = P(X=x, Y=y, Z=z)")
    divisor = check.unit_divisor(unit)
    pz = law.sum(axis=(0, 1))
    values = np.zeros(pz.shape)
    for z in np.flatnonzero(pz > 0):
        slab = law[:, :, z]
        px = slab.sum(axis=1)
        seen = px > 0
        rows = slab[seen] / px[seen, None]
        rows /= rows.sum(axis=1, keepdims=True)
        prior = px[seen] / px[seen].sum()
        if variant == "y|z":
            values[z] = kernel.sibson(prior, rows, a)
        else:
            values[z] = kernel.naive_renyi_mi(prior, rows, a)
    if variant == "y|z":
        c = a - 1.0  # ∞ at α = ∞: the maximum over z
    else:
        c = 1.0 if math.isinf(a) else (-math.inf if a == 0.0 else (a - 1.0) / a)
    return max(kernel.exponential_mean(pz, values, c), 0.0) / divisor + 0.0


def arimoto_mi(prior: Any, W: Any, /, alpha: float, *, unit: str = "nats") -> float:
    """Arimoto's α-mutual information ``I_α^A(p, W) = H_α(X) − H_α^A(X|Y)``.

    With ``H_α(X) = 1/(1−α) log Σ_x p_x^α`` and
    ``H_α^A(X|Y) = α/(1−α) log Σ_y (Σ_x P_{XY}(x,y)^α)^{1/α}`` (Hsu et al., survey, §III-A).
    Equivalently ``I_α^A(p, W) = I_α^S(p_α, W)`` with the tilted prior
    ``p_α ∝ p^α``, which is how it is computed. At α = ∞ it is the min-entropy leakage
    ``log Σ_y max_x p_x W_xy − log max_x p_x``; at α = 0 it is
    ``log |supp p| − log max_y #{x ∈ supp p : W_xy > 0}``.

    Examples
    --------
    >>> W = [[0.9, 0.1], [0.1, 0.9]]
    >>> round(arimoto_mi([0.5, 0.5], W, 2.0), 6) == round(sibson_mi([0.5, 0.5], W, 2.0), 6)
    True
    """
    a = check.order(alpha)
    p, matrix = check.prior_and_channel(prior, W)
    divisor = check.unit_divisor(unit)
    if math.isinf(a):
        return _min_entropy_leakage(p, matrix) / divisor
    if a == 0.0:
        support = p > 0
        hits = np.max(np.sum(matrix[support] > 0, axis=0))
        return (math.log(int(support.sum())) - math.log(int(hits))) / divisor
    if a == 1.0:
        return kernel.sibson(p, matrix, 1.0) / divisor
    # the tilted prior p^α / Σ p^α, kept in the log domain (its small masses underflow at
    # large α, and they carry O(1/α) of the value)
    support = p > 0
    log_tilted = np.full(p.shape, -np.inf)
    logs = a * np.log(p[support])
    log_tilted[support] = logs - logsumexp(logs)
    return kernel.sibson(np.exp(log_tilted), matrix, a, log_tilted) / divisor


def _min_entropy_leakage(p: check.FloatArray, matrix: check.FloatArray) -> float:
    posterior = _gains.bayes_posterior(p, matrix)
    return max(math.log(posterior) - math.log(float(np.max(p))), 0.0)


def min_entropy_leakage(prior: Any, W: Any, /, *, unit: str = "nats") -> float:
    """Min-entropy leakage ``H_∞(X) − H_∞(X|Y) = log Σ_y max_x p_x W_xy − log max_x p_x``.

    The multiplicative gain of a one-guess adversary (Smith 2009; Ünsal & Önen §4.3). Its maximum
    over priors, attained at the uniform prior, is the maximal leakage ``log Σ_y max_x W_xy``.

    Examples
    --------
    >>> round(min_entropy_leakage([0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]]), 6)  # log 1.8
    0.587787
    """
    p, matrix = check.prior_and_channel(prior, W)
    return _min_entropy_leakage(p, matrix) / check.unit_divisor(unit)


def renyi_mi(prior: Any, W: Any, /, alpha: float, *, unit: str = "nats") -> float:
    """``D_α(P_XY ‖ P_X P_Y)``: the Rényi divergence between the joint law and the product of
    its marginals (the "naive" α-information of ``docs/mathematics.rst`` §4, not Sibson's).

    By Sibson's identity ``I_α^S(p, W) = min_Q D_α(P_XY ‖ P_X × Q)``, it is never below Sibson's
    α-information; α = 1 is I(X;Y).

    Examples
    --------
    >>> W = [[1.0, 0.0], [0.5, 0.5]]
    >>> renyi_mi([0.6, 0.4], W, 2.0) > sibson_mi([0.6, 0.4], W, 2.0)
    True
    """
    a = check.order(alpha)
    p, matrix = check.prior_and_channel(prior, W)
    return kernel.naive_renyi_mi(p, matrix, a) / check.unit_divisor(unit)


def augustin_mi(
    prior: Any,
    W: Any,
    /,
    alpha: float,
    *,
    tol: float = 1e-9,
    rtol: float = 0.0,
    max_iter: int = 1_000,
    unit: str = "nats",
) -> float:
    """Augustin–Csiszár α-mutual information ``I_α^C(p, W) = min_Q Σ_x p_x D_α(W_x ‖ Q)``.

    ``F(Q) = Σ_x p_x D_α(W_x ‖ Q)`` is convex in Q (Rényi divergence is convex in its second
    argument, van Erven–Harremoës Thm 12; ``docs/mathematics.rst`` §4), so at every iterate
    ``F(Q) ≥ I_α^C ≥ F(Q) − gap(Q)`` with ``gap(Q) = max_y (pA)_y/Q_y − 1``, ``A_xy ∝ W_xy^α
    Q_y^{1−α}`` the tilted rows: zero exactly at Augustin's fixed point ``Q = pA``. Q is found
    by damped Newton steps in ``log Q`` (:func:`dpcap.solvers.renyi.augustin_information`),
    everything in the log domain, so that masses far below 1e-300 keep their digits; Augustin's
    own fixed point ``Q ← pA`` is the fallback step (it alone oscillates for α ≳ 2). The
    iteration stops when the certified gap is below ``max(tol, rtol·F(Q))`` (``rtol`` in
    ``[0, 1)``, default 0: ``tol`` alone); the upper end ``F(Q)`` is returned. α = 1 is I(X;Y);
    α = 0 and ∞ are not defined here (ParameterError).

    Raises
    ------
    ParameterError
        For α ∉ (0, ∞).
    SolverError
        If the certified gap did not close in ``max_iter`` iterations.
    """
    a = check.order(alpha)
    if not 0.0 < a < math.inf:
        raise ParameterError(f"alpha must be in (0, inf) for augustin_mi, got {alpha!r}")
    p, matrix = check.prior_and_channel(prior, W)
    divisor = check.unit_divisor(unit)
    tolerance = check.tolerance(tol)
    relative = check.rtol(rtol)
    budget = check.max_iter(max_iter, default=1_000)
    if a == 1.0:
        return kernel.weighted_kl(p[:, None], matrix, p @ matrix) / divisor
    value, gap, _, _ = renyi_engine.augustin_information(
        p, matrix, a, tol=tolerance, max_iter=budget, rtol=relative
    )
    goal = _certify.target(tolerance, relative, value)
    if gap > goal:
        wanted = f"tol={tolerance:g}" if relative == 0.0 else f"{goal:.3g} (tol, rtol={relative:g})"
        raise SolverError(
            f"augustin_mi did not certify a gap below {wanted} in {budget} iterations "
            f"(gap {gap:.3g})",
            Status.MAX_ITER,
        )
    return max(value, 0.0) / divisor
