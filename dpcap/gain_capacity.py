r"""Capacities of g-leakage and risk leakage: the largest leakage of a channel over all priors.

For one gain matrix ``G[w, x]`` (or loss ``L[w, x]``) and a channel ``W[x, y]``
(``docs/mathematics.rst`` §9):

* :func:`g_capacity` — ``max_π V_g[π▷W] / V_g(π)`` (multiplicative) or
  ``max_π V_g[π▷W] − V_g(π)`` (additive). The identity gain has the closed form
  ``Σ_y max_x W[x, y]`` (the multiplicative Bayes capacity, attained by the uniform prior,
  ``= exp`` of :func:`dpcap.max_leakage`); otherwise the problem is a mixed-integer linear
  programme (the additive Bayes capacity alone is NP-hard, Alvim et al. 2014), solved by HiGHS
  and capped by the miracle theorems;
* :func:`risk_capacity` — ``max_π U_ℓ(π) / U_ℓ[π▷W]`` for the 0-1 loss, in closed form
  ``1 / (1 − max_{x,x'} TV(W_x, W_x'))``, and the additive risk capacity of any loss.

Each returns a :class:`~dpcap.result.GainCapacityResult`: a bracket ``lower ≤ capacity ≤ upper``
that holds in floating point (the lower end re-evaluated by dpcap at the returned prior, with
its rounding bound; the upper end the smallest of the valid bounds), the attaining prior and the
adversary's optimal guess per output.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify as _certify
from dpcap._core import gains as _gains
from dpcap._core import validation as check
from dpcap.errors import ChannelError, ParameterError, ProblemTooLargeError, SolverError, Status
from dpcap.result import GainCapacityResult
from dpcap.solvers.status import EngineStatus

__all__ = [
    "g_capacity",
    "risk_capacity",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Largest number of binary variables (outputs × guesses, after the exact reductions) of the
#: mixed-integer programme; above it :class:`~dpcap.result.ProblemTooLargeError` is raised.
MAX_BINARIES = 10_000

#: Largest number of constraint nonzeros of that programme, counted before it is built (about
#: 100 MB of HiGHS model); above it :class:`~dpcap.result.ProblemTooLargeError` is raised.
MAX_NONZEROS = 4_000_000

_KINDS = ("multiplicative", "additive")
_U = _certify.U
_gamma = _certify.gamma


def _row_slack(W: FloatArray) -> float:
    """``σ``: the stored rows sum to ``1 ± σ``, so the exact channel (each row divided by its
    exact sum) differs from the stored one entrywise by a factor in ``[1/(1+σ), 1/(1−σ)]``."""
    return float(np.max(np.abs(W.sum(axis=1) - 1.0))) + _gamma(W.shape[1] + 2)


def _options(tol: Any, time_limit: Any) -> tuple[float, float]:
    tolerance = check.tolerance(tol, "relative")
    limit = check.nonnegative_scalar(time_limit, "time_limit", positive=True)
    return tolerance, limit


def _reduce(W: FloatArray, G: FloatArray) -> tuple[IntArray, IntArray, IntArray]:
    """The secrets, outputs and guesses the programme keeps (exact reductions, §9).

    Secrets whose gain column is 0 (after the additive shift) never raise the leakage; outputs
    no secret produces contribute nothing; a guess whose row is entrywise below another's (or
    equal to an earlier one) is never needed, since ``W ≥ 0``.
    """
    secrets = np.flatnonzero(G.max(axis=0) > 0)
    outputs = np.flatnonzero(W[secrets].max(axis=0) > 0)
    rows = G[:, secrets]
    keep = []
    for w in range(rows.shape[0]):
        above = np.all(rows >= rows[w], axis=1)
        above[w] = False
        equal = np.all(rows == rows[w], axis=1)
        if not any(above[v] and (not equal[v] or v < w) for v in range(rows.shape[0])):
            keep.append(w)
    return secrets, outputs, np.array(keep, dtype=np.int64)


def _columns(G: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(top, G')``: the column maxima of ``G ≥ 0`` (1 for a zero column) and
    ``G' = G / top``. With ``ρ_x = π_x top_x``, ``ρ_x G'_{wx} = π_x G_{wx}``: every vulnerability
    and guess is the same in the scaled coordinates, which keep their digits when a gain column
    is near 1e-300 or below (the multiplicative programme works in them too)."""
    top = G.max(axis=0)
    top = np.where(top > 0, top, 1.0)
    return top, G / top


def _to_scaled(p: FloatArray, top: FloatArray) -> FloatArray:
    """``ρ ∝ p ∘ top``, formed in the log domain and normalised to a largest entry of 1."""
    with np.errstate(divide="ignore"):
        logs = np.log(p) + np.log(top)
    out: FloatArray = np.exp(logs - logs.max())
    return out


def _to_prior(rho: FloatArray, top: FloatArray) -> FloatArray:
    """``π ∝ ρ / top``, formed in the log domain and normalised."""
    with np.errstate(divide="ignore"):
        logs = np.log(rho) - np.log(top)
    out: FloatArray = np.exp(logs - logs.max())
    prior: FloatArray = out / out.sum()
    return prior


def _ratio_lower(rho: FloatArray, W: FloatArray, Gs: FloatArray, sigma: float) -> float:
    """A lower bound on ``V_g[π▷W] / V_g(π)`` for the exact channel and the prior
    ``π ∝ ρ / top`` (:func:`_columns`), evaluated on ``(ρ, G')``: the γ-bound of the two
    non-negative sums (§8), one rounding per entry of ``G'`` and the row slack ``σ``."""
    n, m = W.shape
    post = _gains.posterior_vulnerability(rho, W, Gs)
    prior_v = _gains.vulnerability(rho, Gs)
    if not prior_v > 0:
        return 1.0
    shrink = (1.0 - _gamma(2 * n + m + 16)) / (1.0 + sigma)
    return max(post / prior_v * shrink, 1.0)


def _prior_ratio_lower(
    prior: FloatArray, top: FloatArray, W: FloatArray, Gs: FloatArray, sigma: float
) -> float:
    """:func:`_ratio_lower` at ``prior`` itself, the prior a result reports.

    ``ρ = _to_scaled(prior)`` is formed through logarithms: each entry carries a relative error
    of at most ``η = 4u(max|log π| + max|log top| + |M| + 2)`` (``M`` the largest log, the exp's
    own rounding in the 2), plus an absolute ``2^-1022`` where it lands among subnormals. Both
    vulnerabilities are non-negative combinations of the entries and at least 1 (a column of
    ``G'`` reaches 1 at the largest entry of ρ), so the ratio at ``prior`` is at least the ratio
    at ρ times ``(1 − η')/(1 + η')`` with ``η' = η + n·2^-1021``."""
    rho = _to_scaled(prior, top)
    used = (prior > 0) & (top > 0)
    if not used.any():
        return 1.0
    with np.errstate(divide="ignore"):
        logs = np.log(prior[used]) + np.log(top[used])
    spread = float(np.max(np.abs(np.log(prior[used])))) + float(np.max(np.abs(np.log(top[used]))))
    eta = 4.0 * _U * (spread + float(np.max(np.abs(logs))) + 2.0) + len(prior) * 2.0**-1021
    return max(_ratio_lower(rho, W, Gs, sigma) * (1.0 - eta) / (1.0 + eta), 1.0)


def _difference_lower(p: FloatArray, W: FloatArray, G: FloatArray, sigma: float) -> float:
    """A lower bound on ``V_g[p̂▷W] − V_g(p̂)`` (``G ≥ 0`` the shifted gain, ``p̂ = p/Σp``) for
    the exact channel: each sum's γ-bound, the row slack, the shift's rounding ``u`` and the
    prior's normalisation ``γ_n``."""
    n, m = W.shape
    R = float(G.max())
    G = G / R  # exact up to one rounding per entry (the u term below): no underflow
    post = _gains.posterior_vulnerability(p, W, G)
    prior_v = _gains.vulnerability(p, G)
    err = (
        _gamma(n + m + 3) * post
        + _gamma(n + 1) * prior_v
        + post * sigma / (1.0 - sigma)
        + 2.0 * _U * (post + prior_v)
    )
    low = (post - prior_v - err) * (1.0 - 4.0 * _U)
    if low <= 0:
        return 0.0
    return R * (low / (float(np.sum(p)) * (1.0 + _gamma(n + 1)))) * (1.0 - 2.0 * _U)


def _padded(prior: FloatArray, where: IntArray, n: int) -> FloatArray:
    full = np.zeros(n)
    full[where] = prior
    return full


def _conclude(
    lower: float,
    upper: float,
    scale: float,
    tol: float,
    *,
    nodes: int,
    note: str,
    open_status: Status,
) -> tuple[float, float, Status, str]:
    lower, upper, _ = _certify.ordered(lower, upper, np.zeros(0))
    gap = 0.0 if upper == lower else (upper - lower) / scale
    status, message = _certify.conclude(
        gap, tol, iterations=nodes, note=note, open_status=open_status, unit="(relative)"
    )
    return lower, upper, status, message


def _bayes_capacity(matrix: FloatArray, tol: float) -> GainCapacityResult:
    """``Σ_y max_x W[x, y]`` with its γ-bound and row slack; the uniform prior attains it."""
    n, m = matrix.shape
    total = float(np.sum(np.max(matrix, axis=0)))
    g, sigma = _gamma(m + 2), _row_slack(matrix)
    lower = max(total * (1.0 - g) / (1.0 + sigma) * (1.0 - 4 * _U), 1.0)
    upper = min(total * (1.0 + g) / (1.0 - sigma) * (1.0 + 4 * _U), float(min(n, m)))
    lower, upper, status, message = _conclude(
        lower,
        upper,
        upper,
        tol,
        nodes=0,
        note="Bayes capacity sum_y max_x W[x, y], attained by the uniform prior",
        open_status=Status.INACCURATE,
    )
    return GainCapacityResult(
        value=upper,
        lower=lower,
        upper=upper,
        prior=np.full(n, 1.0 / n),
        guesses=np.argmax(matrix, axis=0).astype(np.int64),
        kind="multiplicative",
        measure="gain",
        status=status,
        iterations=0,
        method="closed form",
        unit="ratio",
        message=message,
        tol=tol,
    )


def g_capacity(
    W: Any,
    gain: Any = None,
    /,
    *,
    kind: str = "multiplicative",
    tol: float = 1e-4,
    time_limit: float = 60.0,
) -> GainCapacityResult:
    r"""The g-capacity of a channel over all priors, certified, with an attaining prior.

    ``kind="multiplicative"``: ``ML_g^×(W) = max_π V_g[π▷W] / V_g(π)``;
    ``kind="additive"``: ``ML_g^+(W) = max_π V_g[π▷W] − V_g(π)`` (Alvim et al. 2014;
    ``docs/mathematics.rst`` §9).

    Parameters
    ----------
    W : array_like, shape (n_secrets, n_outputs)
        Row-stochastic channel.
    gain : array_like, shape (n_guesses, n_secrets), optional
        The gain matrix ``G[w, x]``; None is the identity gain (Bayes vulnerability). The
        multiplicative capacity needs ``G ≥ 0`` with a positive entry somewhere (a ratio
        ``V_g[π▷W] / V_g(π)`` is not defined where ``V_g(π) ≤ 0``); the additive one takes any
        finite gain.
    kind : {"multiplicative", "additive"}
    tol : float
        Requested certified gap, relative to ``upper`` (multiplicative) or to the range
        ``max_{w,x} (G[w, x] − min_{w'} G[w', x])`` of the gain (additive). The upper end
        from the solver is widened by HiGHS's own tolerances (about ``1e-6`` times the sizes
        involved), so a ``tol`` much below ``1e-5`` can leave the bracket open.
    time_limit : float
        Seconds the branch and bound may take (``math.inf`` for none); when it runs out the
        bracket so far is returned with status ``max_iter`` and a ``ConvergenceWarning``.

    Returns
    -------
    GainCapacityResult
        ``value = upper``; ``prior`` attains ``lower``; ``guesses`` is the optimal guess (row
        of ``gain``) per output at that prior.

    Raises
    ------
    ChannelError, ParameterError
        For invalid input, and for a multiplicative capacity of a gain with a negative entry
        or with no positive entry.
    ProblemTooLargeError
        When the programme would have more than :data:`MAX_BINARIES` binaries or
        :data:`MAX_NONZEROS` constraint nonzeros (counted before anything is built).
    SolverError
        If HiGHS fails outright.

    Notes
    -----
    * Identity gain, multiplicative: the closed form ``Σ_y max_x W[x, y]`` (Braun,
      Chatzikokolakis, Palamidessi 2009), ``= exp(max_leakage(W))``.
    * Otherwise the exact reductions of §9 (secrets with a zero gain column, outputs no secret
      produces, dominated guesses) are applied and, unless the cheap bounds already meet,
      ``V_g[π▷W] = Σ_y max_w Σ_x π_x W[x, y] G[w, x]`` is linearised with one binary per
      (output, guess), each output's choice in Balas's extended (convex-hull) form, and the
      programme solved by HiGHS (``scipy.optimize.milp``); the multiplicative ratio is
      normalised by Charnes–Cooper (``V_g(π) ≤ 1``), in coordinates where every gain column
      has a largest entry of 1 (the capacity is invariant under that scaling).
    * ``lower`` is the leakage of the returned prior (the best of the uniform prior and
      HiGHS's incumbent), re-evaluated by dpcap and moved down by its rounding bound.
    * ``upper`` is the least of: for ``G ≥ 0``, the miracle bound ``Σ_y max_x W[x, y]`` of the
      multiplicative leakage (Alvim et al. 2020, Thm 7.5); for the additive one,
      ``R (1 − Σ_y min_x W[x, y])`` and ``R (Σ_y max_x W[x, y] − 1)`` with ``R`` the gain's range;
      and HiGHS's dual bound widened by its tolerances (feasibility 1e-7 times a bound on
      ``‖x‖_1`` over the feasible set, integrality 1e-6 times the objective's sensitivity to
      the binaries). This last end rests on HiGHS's branch and bound, whose node programmes
      dpcap does not re-solve.

    References
    ----------
    M. S. Alvim, K. Chatzikokolakis, C. Palamidessi, G. Smith, "Measuring information leakage
    using generalized gain functions", CSF 2012. M. S. Alvim, K. Chatzikokolakis, A. McIver,
    C. Morgan, C. Palamidessi, G. Smith, "Additive and multiplicative notions of leakage, and
    their capacities", CSF 2014. M. S. Alvim et al., *The Science of Quantitative Information
    Flow*, Springer 2020, ch. 7.

    Examples
    --------
    >>> W = [[0.8, 0.2], [0.3, 0.7]]
    >>> res = g_capacity(W)  # identity gain: 0.8 + 0.7
    >>> round(res.value, 9), res.prior.tolist(), res.method
    (1.5, [0.5, 0.5], 'closed form')
    >>> add = g_capacity(W, kind="additive")  # two secrets: TV(W_0, W_1)/2 at the uniform prior
    >>> abs(add.value - 0.25) < 1e-4, add.status.value
    (True, 'converged')
    """
    what = check.choice(kind, _KINDS, "kind")
    tolerance, limit = _options(tol, time_limit)
    matrix = check.stochastic_matrix(W, "W")
    n = matrix.shape[0]
    if gain is None:
        G = _gains.identity(n)
    else:
        G = _gains.as_gain(gain, n, "gain", nonnegative=what == "multiplicative")
    if what == "multiplicative" and G.shape == (n, n) and np.array_equal(G, _gains.identity(n)):
        return _bayes_capacity(matrix, tolerance)
    if what == "multiplicative":
        if not (G > 0).any():
            raise ParameterError(
                "gain has no positive entry: V_g(prior) = 0 for every prior, so the "
                "multiplicative g-capacity (a ratio) is undefined"
            )
        return _solve(matrix, G, what, "gain", tolerance, limit)
    return _solve(matrix, G - G.min(axis=0), what, "gain", tolerance, limit)


def _solve(
    matrix: FloatArray, G: FloatArray, kind: str, measure: str, tol: float, limit: float
) -> GainCapacityResult:
    """The capacity of a gain ``G ≥ 0`` (shifted already for the additive kind)."""
    n, m = matrix.shape
    sigma = _row_slack(matrix)
    unit = "ratio" if kind == "multiplicative" else measure
    R = float(G.max())
    if kind == "additive" and R == 0.0:  # every column constant: nothing to gain by looking
        return _result(
            matrix,
            G,
            np.full(n, 1.0 / n),
            0.0,
            0.0,
            Status.CONVERGED,
            "the gain is constant on every secret: no leakage",
            0,
            "closed form",
            kind,
            measure,
            unit,
            tol,
        )
    secrets, outputs, guesses = _reduce(matrix, G)
    C = matrix[np.ix_(secrets, outputs)]
    Gr = G[np.ix_(guesses, secrets)]
    live = matrix[secrets]
    bayes = float(np.sum(np.max(live, axis=0))) * (1.0 + _gamma(m + 2)) / (1.0 - sigma)
    bayes = bayes * (1.0 + 4 * _U)
    uniform = _padded(np.full(len(secrets), 1.0 / len(secrets)), secrets, n)
    colmax, Gcol = _columns(G)
    if kind == "multiplicative":
        upper = min(bayes, float(min(len(secrets), m)))
        lower = _prior_ratio_lower(uniform, colmax, matrix, Gcol, sigma)
    else:
        low_sum = float(np.sum(np.min(live, axis=0))) * (1.0 - _gamma(m + 2)) / (1.0 + sigma)
        R_up = R / (1.0 - _U)
        upper = min(R_up * max(1.0 - low_sum, 0.0), R_up * max(bayes - 1.0, 0.0))
        upper = upper * (1.0 + 4 * _U) + 0.0
        lower = _difference_lower(uniform, matrix, G, sigma)
    scale = max(upper, 1.0) if kind == "multiplicative" else R
    prior, nodes, method, note = uniform, 0, "bounds", "the uniform prior meets the miracle bound"
    open_status = Status.INACCURATE
    if (upper - lower) / scale > tol:
        binaries = len(outputs) * len(guesses)
        if binaries > MAX_BINARIES:
            raise ProblemTooLargeError(
                f"the {kind} capacity programme would have {binaries} binary variables "
                f"({len(outputs)} outputs x {len(guesses)} guesses after the exact reductions), "
                f"above dpcap's limit of {MAX_BINARIES}; merge outputs or guesses first"
            )
        from dpcap.solvers import gain_milp

        count = gain_milp.nonzeros(kind, len(C), len(outputs), len(guesses))
        if count > MAX_NONZEROS:
            raise ProblemTooLargeError(
                f"the {kind} capacity programme would have {count} constraint nonzeros "
                f"({C.shape[0]} secrets, {len(outputs)} outputs, {len(guesses)} guesses after "
                f"the exact reductions), above dpcap's limit of {MAX_NONZEROS}; merge outputs "
                "or guesses first"
            )
        engine = gain_milp.multiplicative if kind == "multiplicative" else gain_milp.additive
        Gs = Gr if kind == "multiplicative" else Gr / R
        solution = engine(C, Gs, time_limit=limit, rel_gap=tol / 10)
        if not solution.status.usable:
            raise SolverError(
                f"HiGHS failed on the {kind} capacity programme: {solution.message}",
                _certify.status_of(solution),
            )
        factor = 1.0 if kind == "multiplicative" else R
        bound = (solution.bound + solution.allowance) * factor
        bound = bound * (1.0 + 8 * _U) + 0.0
        upper = min(upper, bound)
        nodes, method = solution.iterations, "milp/HiGHS"
        note = (
            f"HiGHS: {solution.message.strip()} ({solution.iterations} nodes); its dual bound, "
            f"widened by {solution.allowance * factor:.2g} for its tolerances"
        )
        if solution.prior is not None:
            found = _padded(solution.prior, secrets, n)
            if kind == "multiplicative":  # the engine's point is ρ, in scaled coordinates:
                found = _to_prior(found, colmax)  # the bound is taken at the prior returned
                value = _prior_ratio_lower(found, colmax, matrix, Gcol, sigma)
            else:
                value = _difference_lower(found, matrix, G, sigma)
            if value > lower:
                lower, prior = value, found
        if solution.status is not EngineStatus.OPTIMAL:
            open_status = Status.MAX_ITER
    lower, upper, status, message = _conclude(
        lower, upper, scale, tol, nodes=nodes, note=note, open_status=open_status
    )
    return _result(
        matrix, G, prior, lower, upper, status, message, nodes, method, kind, measure, unit, tol
    )


def _result(
    matrix: FloatArray,
    G: FloatArray,
    prior: FloatArray,
    lower: float,
    upper: float,
    status: Status,
    message: str,
    nodes: int,
    method: str,
    kind: str,
    measure: str,
    unit: str,
    tol: float,
) -> GainCapacityResult:
    top, Gs = _columns(G)
    rho = _to_scaled(prior, top)
    return GainCapacityResult(
        value=upper,
        lower=lower,
        upper=upper,
        prior=prior,
        guesses=_gains.strategy(rho, matrix, Gs),
        kind=kind,
        measure=measure,
        status=status,
        iterations=nodes,
        method=method,
        unit=unit,
        message=message,
        tol=tol,
    )


def risk_capacity(
    W: Any,
    loss: Any = None,
    /,
    *,
    kind: str = "multiplicative",
    tol: float = 1e-4,
    time_limit: float = 60.0,
) -> GainCapacityResult:
    r"""The risk capacity of a channel over all priors, certified, with an attaining prior.

    ``kind="multiplicative"``: ``max_π U(π) / U[π▷W]`` for the 0-1 loss (``loss=None``), whose
    closed form is ``1 / (1 − τ)`` with ``τ = max_{x,x'} TV(W_x, W_x')`` the largest total
    variation between two rows, attained by the uniform prior on the two farthest rows, and ∞
    when two rows have disjoint supports (``docs/mathematics.rst`` §9).
    ``kind="additive"``: ``max_π U_ℓ(π) − U_ℓ[π▷W]`` for any finite loss: the additive
    g-capacity of the gain ``−ℓ`` (:func:`g_capacity`).

    Parameters
    ----------
    W : array_like, shape (n_secrets, n_outputs)
    loss : array_like, shape (n_guesses, n_secrets), optional
        The loss matrix ``L[w, x]``; None is the 0-1 loss. The multiplicative capacity is
        computed for the 0-1 loss only.
    kind : {"multiplicative", "additive"}
    tol, time_limit : float
        As in :func:`g_capacity` (the additive kind only solves a programme).

    Returns
    -------
    GainCapacityResult
        ``measure="loss"``; ``guesses`` holds the optimal guess (row of the loss; for the 0-1
        loss, the guessed secret) per output at ``prior``.

    Raises
    ------
    ChannelError
        For an invalid channel, or a multiplicative capacity of a channel with one row (every
        prior has risk 0: the ratio is undefined).
    ParameterError
        For an invalid loss, or a multiplicative capacity of a loss other than the 0-1 loss.

    Notes
    -----
    For the 0-1 loss ``U[π▷W] = 1 − Σ_y max_x π_x W[x, y]``. With ``x_0`` a most likely secret,
    ``max_x π_x W[x, y] ≤ π_{x_0} W[x_0, y] + Σ_{x ≠ x_0} π_x (W[x, y] − W[x_0, y])_+``, so
    ``U[π▷W] ≥ (1 − τ) U(π)``; the uniform prior on two rows at distance τ attains it. The
    overlap ``1 − τ = min_{x,x'} Σ_y min(W[x, y], W[x', y])`` is computed directly (no
    cancellation), with its γ-bound and row slack (§8). This is libqif's
    ``bayes_risk::mult_capacity``.

    Examples
    --------
    >>> res = risk_capacity([[0.8, 0.2], [0.3, 0.7]])  # TV = 1/2
    >>> round(res.value, 9), res.prior.tolist()
    (2.0, [0.5, 0.5])
    >>> risk_capacity([[1.0, 0.0], [0.0, 1.0]]).value  # disjoint rows: the output reveals X
    inf
    """
    what = check.choice(kind, _KINDS, "kind")
    tolerance, limit = _options(tol, time_limit)
    matrix = check.stochastic_matrix(W, "W")
    n = matrix.shape[0]
    if what == "additive":
        L = _gains.zero_one_loss(n) if loss is None else _gains.as_gain(loss, n, "loss")
        gain = -L
        return _solve(matrix, gain - gain.min(axis=0), what, "loss", tolerance, limit)
    if loss is not None:
        L = _gains.as_gain(loss, n, "loss")
        if not np.array_equal(L, _gains.zero_one_loss(n)):
            raise ParameterError(
                "risk_capacity(kind='multiplicative') is computed for the 0-1 loss only "
                "(loss=None); for another loss use kind='additive'"
            )
    if n < 2:
        raise ChannelError(
            "W has a single row: every prior has Bayes risk 0, so the multiplicative risk "
            "leakage 0/0 is undefined"
        )
    check.dense_size(n * n, matrix.shape[1], "the pairwise overlaps of the rows of W")
    return _risk_closed_form(matrix, tolerance)


def _risk_closed_form(matrix: FloatArray, tol: float) -> GainCapacityResult:
    n, m = matrix.shape
    best, pair = math.inf, (0, 1)
    for x in range(n - 1):
        overlaps = np.sum(np.minimum(matrix[x], matrix[x + 1 :]), axis=1)
        j = int(np.argmin(overlaps))
        if overlaps[j] < best:
            best, pair = float(overlaps[j]), (x, x + 1 + j)
    sigma, g = _row_slack(matrix), _gamma(m + 2)
    if best == 0.0:  # a sum of exact minima of non-negative floats: the supports are disjoint
        lower = upper = math.inf
    else:
        lower = 1.0 / (best * (1.0 + g) / (1.0 - sigma)) * (1.0 - 4 * _U)
        upper = 1.0 / (best * (1.0 - g) / (1.0 + sigma)) * (1.0 + 4 * _U)
        lower = max(lower, 1.0)
    prior = np.zeros(n)
    prior[list(pair)] = 0.5
    a, b = pair
    guesses = np.where(matrix[a] >= matrix[b], a, b).astype(np.int64)
    scale = 1.0 if math.isinf(upper) else upper
    lower, upper, status, message = _conclude(
        lower,
        upper,
        scale,
        tol,
        nodes=0,
        note=f"1/(1 - TV) with TV the largest total variation, between rows {a} and {b}",
        open_status=Status.INACCURATE,
    )
    return GainCapacityResult(
        value=upper,
        lower=lower,
        upper=upper,
        prior=prior,
        guesses=guesses,
        kind="multiplicative",
        measure="loss",
        status=status,
        iterations=0,
        method="closed form",
        unit="ratio",
        message=message,
        tol=tol,
    )
