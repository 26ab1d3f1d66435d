"""Additive noise on a line of values ``{0, …, n}``: geometric, Laplace, Gaussian, staircase.

Every constructor returns a :class:`~dpcap.channel.Channel` ``W[x, y] = P(Y=y | X=x)`` (rows are
inputs) that releases ``x + Z`` for an integer noise ``Z`` and brings the result back into
``{0, …, n}``; the two ways of doing so (``truncation="clamp"`` and ``truncation="renormalize"``)
have different privacy levels, stated exactly in each docstring. The inputs are values on a
line, so each channel carries the neighbour relation ``"line"`` (``|x − x'| = 1``), or, for a
sensitivity Δ > 1, the pairs at distance at most Δ (:func:`dpcap.neighbors.within`): the
relation under which its ε is meant (``docs/mathematics.rst`` §3). With
``truncation="clamp"`` the channel is a :class:`~dpcap.line_noise.LineNoise`: its masses and tails
are kept, its rows computed on demand, so a line of any length up to :data:`MAX_LINE` values is
written down and audited from its structure (``docs/mathematics.rst`` §14).

Numerics (``docs/mathematics.rst`` §8): geometric weights are formed as ``exp(-ε·d)`` with the
``ε = ∞`` case branched out (no ``0·∞``), prefactors through ``tanh``/``expit``/``expm1`` so
that ``ε → 0`` keeps its relative accuracy, and Gaussian tails in the log domain. A probability
smaller than the smallest normal double (about ``2.2e-308``) is held in the matrix as 0 or a
subnormal; the channel then also keeps every log-probability, in closed form
(:attr:`~dpcap.channel.Channel.log_matrix`), and the DP metrics use those: the level of
``truncated_geometric(1000, 1.0)`` is exactly 1, not ∞.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logsumexp

from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import Channel
from dpcap.errors import ParameterError, ProblemTooLargeError
from dpcap.line_noise import LineNoise
from dpcap.neighbors import Neighbors, within

__all__ = ["discrete_gaussian", "discrete_laplace", "staircase", "truncated_geometric"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The ways an additive-noise release ``x + Z`` is brought back into ``{0, …, n}``.
TRUNCATIONS = ("clamp", "renormalize")

#: Above this σ the discrete Gaussian's normaliser is taken from Poisson summation instead of a
#: direct sum (which would need about 10σ terms).
_GAUSS_DIRECT_MAX_SIGMA = 1e5


# --------------------------------------------------------------------------- helpers


def _square_size(n: int, what: str) -> None:
    check.dense_size(n + 1, n + 1, what)


def _offsets(n: int) -> IntArray:
    """``d[x, y] = y - x`` on ``{0..n}²``."""
    grid = np.arange(n + 1, dtype=np.int64)
    out: IntArray = grid[None, :] - grid[:, None]
    return out


def _channel(W: FloatArray, logs: Any, relation: Neighbors) -> Channel:
    """The channel ``W``, with its closed-form log matrix ``logs()`` if an entry underflows."""
    if not (W < TINY).any():
        return Channel(W, neighbors=relation)
    return Channel(W, neighbors=relation, log_matrix=logs())


def _decay(eps: float, k: IntArray) -> FloatArray:
    """``e^{-ε k}`` for integers ``k ≥ 0``, with ``ε = ∞`` giving ``[k == 0]`` (no ``0·∞``)."""
    if math.isinf(eps):
        return np.where(k == 0, 1.0, 0.0)
    out: FloatArray = np.exp(-eps * k.astype(np.float64))
    return out


#: Most values a noise channel on a line keeps (its masses and tails: 2 x 128 MiB).
MAX_LINE = 2**24


def _line(
    n: int,
    pmf: FloatArray,
    tail: FloatArray,
    logs: tuple[FloatArray, FloatArray] | None,
    relation: Neighbors,
) -> LineNoise:
    """The clamped noise channel ``x ↦ clamp(x + Z, 0, n)`` from a symmetric noise law, kept by
    its structure (:class:`~dpcap.line_noise.LineNoise`).

    ``pmf[k] = P(Z = k) = P(Z = -k)`` and ``tail[k] = P(Z ≥ k)`` for ``k = 0..n``. Interior
    outputs ``0 < y < n`` get ``P(Z = y - x)``; output 0 collects ``P(Z ≤ -x) = P(Z ≥ x)`` and
    output n collects ``P(Z ≥ n - x)``. ``logs``: their closed-form logs (None: exact zeros).
    """
    return LineNoise._make(n, pmf, tail, logs, relation)


def _line_size(n: int, what: str) -> None:
    if n + 1 > MAX_LINE:
        raise ProblemTooLargeError(
            f"{what} keeps n + 1 = {n + 1} masses and tails, above dpcap's limit of {MAX_LINE}"
        )


def _toeplitz(values: FloatArray) -> FloatArray:
    """``T[x, y] = values[|y − x|]`` on ``{0..n}²``, ``n + 1 = len(values)``, copied from
    sliding windows of ``values[n], …, values[1], values[0], …, values[n]`` (no index array)."""
    n = len(values) - 1
    line = np.concatenate([values[:0:-1], values])  # values[|k|] for k = -n..n
    out: FloatArray = np.lib.stride_tricks.sliding_window_view(line, n + 1)[::-1].copy()
    return out


# --------------------------------------------------------------------------- additive noise


def truncated_geometric(n: int, eps: float) -> Channel:
    r"""The range-restricted geometric mechanism on ``{0, …, n}`` (Ghosh–Roughgarden–Sundararajan).

    Release ``clamp(x + Z, 0, n)`` with two-sided geometric noise ``P(Z = z) ∝ a^{|z|}``,
    ``a = e^{−ε}``. With ``0 < y < n``:

    ``W[x, y] = (1 − a)/(1 + a) · a^{|x − y|}``, ``W[x, 0] = a^x / (1 + a)``,
    ``W[x, n] = a^{n − x} / (1 + a)``.

    Parameters
    ----------
    n : int
        Largest value, ``n >= 1``; inputs and outputs are ``{0, …, n}`` (``n + 1`` each).
    eps : float
        ε in ``[0, ∞]``. ``eps = inf`` gives the identity; ``eps = 0`` sends all mass to the two
        ends: every row is ``[1/2, 0, …, 0, 1/2]``.

    Returns
    -------
    LineNoise
        A :class:`~dpcap.Channel` of shape ``(n + 1, n + 1)`` kept by its structure
        (:class:`~dpcap.line_noise.LineNoise`), carrying ``neighbors="line"``
        (``|x − x'| = 1``), under which :func:`dpcap.dp_epsilon` gives exactly ε. Pass
        ``neighbors="all"`` for the level over every pair of inputs, ``n·ε``.

    Raises
    ------
    ParameterError
        If ``n`` is not an integer ``>= 1`` or ``eps`` is not a scalar in ``[0, ∞]``.
    ProblemTooLargeError
        If ``n + 1`` is above :data:`MAX_LINE` (the masses and tails are kept; the dense
        matrix is built only on demand, under dpcap's memory limit).

    Notes
    -----
    * Line neighbours (``|x − x'| = 1``): ε-DP at level exactly ε (for ``0 < ε < ∞``). For
      inputs at distance d the level is exactly ``d·ε``; over all pairs it is ``n·ε``.
    * The prefactors are ``(1 − a)/(1 + a) = tanh(ε/2)`` and ``1/(1 + a) = expit(ε)``, and
      ``a^k = exp(−ε k)``: no cancellation as ``ε → 0`` and no ``0·∞`` at ``ε = ∞``.
    * Entries below the smallest normal double (``ε·k ≳ 708``) are held as 0 or subnormals; the
      channel then keeps ``log W`` in closed form (:attr:`~dpcap.channel.Channel.log_matrix`):
      ``log tanh(ε/2) − ε|x − y|`` inside, ``−log(1 + a) − ε·x`` and ``−log(1 + a) − ε(n − x)``
      at the ends.

    It is universally utility-maximising among ε-DP count mechanisms for Bayesian consumers
    (Ghosh, Roughgarden, Sundararajan 2012). :func:`discrete_laplace` with ``sensitivity=1`` and
    ``truncation="clamp"`` is the same channel, and :func:`staircase` with ``sensitivity=1``.

    References
    ----------
    A. Ghosh, T. Roughgarden, M. Sundararajan, "Universally utility-maximizing privacy
    mechanisms", SIAM J. Comput. 41(6) (2012), §2.

    Examples
    --------
    >>> import numpy as np
    >>> truncated_geometric(2, np.log(2.0)).matrix
    array([[0.66666667, 0.16666667, 0.16666667],
           [0.33333333, 0.33333333, 0.33333333],
           [0.16666667, 0.16666667, 0.66666667]])
    """
    n = check.integer(n, "n", minimum=1)
    eps = check.nonnegative_scalar(eps, "eps")
    _line_size(n, f"truncated_geometric(n={n})")
    return _truncated_geometric(n, eps)


def _truncated_geometric(n: int, eps: float, relation: Neighbors = "line") -> LineNoise:
    k = np.arange(n + 1, dtype=np.int64)
    power = _decay(eps, k)  # a^k (ε = ∞: [k == 0], the identity)
    pmf = (1.0 if math.isinf(eps) else math.tanh(eps / 2.0)) * power  # (1-a)/(1+a) a^k
    tail = float(expit(eps)) * power  # P(Z >= k) = a^k / (1+a)
    if eps == 0.0 or math.isinf(eps):
        return _line(n, pmf, tail, None, relation)  # the zeros of [1/2, 0, …, 0, 1/2], of I
    kf = k.astype(np.float64)
    logs = (_log_tanh_half(eps) - eps * kf, -math.log1p(math.exp(-eps)) - eps * kf)
    return _line(n, pmf, tail, logs, relation)


def _log_tanh_half(eps: float) -> float:
    """``log tanh(ε/2)`` for ``0 < ε < ∞``, also where ``tanh(ε/2)`` underflows to 0.

    Below ``ε = 1e-5`` it is ``log(ε/2) + log(tanh(u)/u)`` with ``u = ε/2`` and
    ``log(tanh(u)/u) = −u²/3 + O(u⁴)`` (error below 1e-21): for a subnormal ε, ``ε/2`` may round
    to 0 but ``log ε − log 2`` does not.
    """
    if eps < 1e-5:
        half = 0.5 * eps
        return math.log(eps) - math.log(2.0) - half * half / 3.0
    return math.log(math.tanh(eps / 2.0))


def discrete_laplace(
    n: int, eps: float, *, sensitivity: int = 1, truncation: str = "clamp"
) -> Channel:
    r"""Discrete Laplace (two-sided geometric) noise on ``{0, …, n}``, clamped or renormalised.

    Noise ``P(Z = z) ∝ e^{−ε|z|/Δ}`` on the integers; release ``x + Z`` brought back into
    ``{0, …, n}``. Write ``ε' = ε/Δ`` (the level per unit step) and ``a = e^{−ε'}``.

    Parameters
    ----------
    n : int
        Largest value, ``n >= 1``; inputs and outputs are ``{0, …, n}``.
    eps : float
        ε in ``[0, ∞]``, the level for inputs at distance Δ. ``inf`` gives the identity.
    sensitivity : int, keyword-only
        Δ ``>= 1``, the largest change of the (integer) query between neighbouring databases.
    truncation : {"clamp", "renormalize"}, keyword-only
        ``"clamp"``: out-of-range mass goes to the nearest end (post-processing of ``x + Z``).
        ``"renormalize"``: ``W[x, y] = a^{|x−y|} / Z_x`` on ``{0..n}``,
        ``Z_x = Σ_{y=0}^{n} a^{|x−y|}`` (the noise conditioned on landing in range).

    Returns
    -------
    Channel
        Shape ``(n + 1, n + 1)`` (with ``"clamp"`` a :class:`~dpcap.line_noise.LineNoise`, kept
        by its structure), carrying the inputs at distance at most Δ as neighbours
        (``"line"`` for Δ = 1, ``"all"`` for Δ ≥ n, explicit pairs in between; see
        :func:`dpcap.neighbors.within`): with ``"clamp"`` its level under that relation is
        ``ε·min(Δ, n)/Δ``, exactly ε when ``Δ <= n``.

    Raises
    ------
    ParameterError
        For ``n``, ``eps``, ``sensitivity`` out of range, or an unknown ``truncation``.
    ProblemTooLargeError
        If ``n + 1`` is above :data:`MAX_LINE`, or, where the matrix is dense (see Returns),
        if the ``(n + 1) × (n + 1)`` matrix is above dpcap's dense limit.

    Notes
    -----
    **clamp**: the channel is ``truncated_geometric(n, ε/Δ)``. Its level for line neighbours
    (``|x − x'| = 1``) is exactly ``ε' = ε/Δ``; for inputs at distance ``d ≤ n`` it is exactly
    ``d·ε/Δ``, so ε for inputs at distance Δ.

    **renormalize**: the level for line neighbours is exactly

    ``ε_line = ε' + log(1 + (1 − a)(a − a^n) / (1 − a^{n+1}))``

    (proof: the ratio of rows x and x+1 at y is ``a^{±1}·Z_{x+1}/Z_x``, the ``a^{−1}`` being
    attained at ``y ≤ x``; ``Z_{x+1} − Z_x = a^{x+1} − a^{n−x}`` so ``Z_{x+1}/Z_x`` is largest at
    ``x = 0``, where it is ``1 + (a − a^n)/Z_0``). Since ``(1 − a)(a − a^n)/(1 − a^{n+1}) ≤
    a(1 − a) ≤ min(1 − a, 1/4)``, renormalising raises the level by at most
    ``min(ε', log(5/4))``: at most double, and never by more than 0.2232 nats. It equals ``ε'``
    for ``n = 1``.

    References
    ----------
    A. Ghosh, T. Roughgarden, M. Sundararajan, "Universally utility-maximizing privacy
    mechanisms", SIAM J. Comput. 41(6) (2012). C. Dwork, A. Roth, *The Algorithmic Foundations
    of Differential Privacy* (2014), §3.3 (Laplace mechanism).

    Examples
    --------
    >>> import numpy as np
    >>> W = discrete_laplace(2, np.log(2.0), truncation="renormalize").matrix
    >>> W
    array([[0.57142857, 0.28571429, 0.14285714],
           [0.25      , 0.5       , 0.25      ],
           [0.14285714, 0.28571429, 0.57142857]])
    >>> float(np.max(np.log(W[0] / W[1])))  # log 2 + log(8/7), the line-neighbour level
    0.82667857
    """
    n = check.integer(n, "n", minimum=1)
    eps = check.nonnegative_scalar(eps, "eps")
    delta = check.integer(sensitivity, "sensitivity", minimum=1)
    mode = check.choice(truncation, TRUNCATIONS, "truncation")
    if mode == "renormalize" or delta > 1:  # (within(n, Δ) lists its pairs)
        _square_size(n, f"discrete_laplace(n={n})")
    _line_size(n, f"discrete_laplace(n={n})")
    step = eps / delta
    relation = within(n, delta)
    if mode == "clamp":
        return _truncated_geometric(n, step, relation)
    W = _toeplitz(_decay(step, np.arange(n + 1, dtype=np.int64)))

    def logs() -> FloatArray | None:
        if math.isinf(step):
            return None  # the identity: its zeros are exact
        log_w = _toeplitz(-step * np.arange(n + 1, dtype=np.float64))
        out: FloatArray = log_w - logsumexp(log_w, axis=1, keepdims=True)
        return out

    return _channel(W / W.sum(axis=1, keepdims=True), logs, relation)


def _gaussian_log_tails(n: int, sigma: float) -> tuple[FloatArray, float]:
    """``log Σ_{z ≥ k} e^{−z²/(2σ²)}`` for ``k = 0..n`` and the log normaliser over ℤ.

    Direct branch: sum up to ``z_max = n + M``, ``M = ⌈cσ⌉``, ``c² = 2(42 + max(0, log σ))``.
    The dropped terms are at most ``∫_{z_max}^∞ e^{−t²/(2σ²)} dt ≤ (σ²/z_max) e^{−z_max²/(2σ²)}``
    (Mills), which relative to ``e^{−n²/(2σ²)} ≤`` every tail needed is at most
    ``(σ/c) e^{−c²/2} ≤ e^{−42}/c`` — below double precision.

    Large-σ branch (``σ > 1e5``): Poisson summation gives the normaliser
    ``S = σ√(2π) Σ_k e^{−2π²σ²k²}``, equal to ``σ√(2π)`` in double precision; the tail beyond n
    is ``(S − 2 Σ_{z=0}^{n} f(z) + 1)/2``, at least ``S/2 − n − 1/2 ≫ 0``: no cancellation (the
    dense-size guard keeps ``n`` below about 11600).
    """
    two_var = 2.0 * sigma * sigma
    if sigma <= _GAUSS_DIRECT_MAX_SIGMA:
        c = math.sqrt(2.0 * (42.0 + max(0.0, math.log(sigma))))
        z = np.arange(n + math.ceil(c * sigma) + 2, dtype=np.float64)
        log_f = -(z * z) / two_var
        log_tails = np.logaddexp.accumulate(log_f[::-1])[::-1]
        log_total = float(np.logaddexp(0.0, math.log(2.0) + log_tails[1]))
        return log_tails[: n + 1].copy(), log_total
    z = np.arange(n + 1, dtype=np.float64)
    f = np.exp(-(z * z) / two_var)
    total = sigma * math.sqrt(2.0 * math.pi)
    beyond = (total - 2.0 * float(f.sum()) + 1.0) / 2.0
    tails = beyond + np.cumsum(f[::-1])[::-1]
    return np.log(tails), math.log(total)


def discrete_gaussian(n: int, sigma: float, *, truncation: str = "clamp") -> Channel:
    r"""Discrete Gaussian noise on ``{0, …, n}`` (Canonne–Kamath–Steinke), clamped or renormalised.

    Noise ``P(Z = z) = e^{−z²/(2σ²)} / S`` on the integers, ``S = Σ_{z∈ℤ} e^{−z²/(2σ²)}``;
    release ``x + Z`` brought back into ``{0, …, n}``. Write ``f(z) = e^{−z²/(2σ²)}`` and
    ``T(k) = Σ_{z ≥ k} f(z)``.

    Parameters
    ----------
    n : int
        Largest value, ``n >= 1``; inputs and outputs are ``{0, …, n}``.
    sigma : float
        Scale σ ``> 0`` (finite).
    truncation : {"clamp", "renormalize"}, keyword-only
        ``"clamp"``: ``W[x, y] = f(y − x)/S`` for ``0 < y < n``, ``W[x, 0] = T(x)/S``,
        ``W[x, n] = T(n − x)/S``. ``"renormalize"``: ``W[x, y] = f(y − x) / Z_x`` with
        ``Z_x = Σ_{y=0}^{n} f(y − x)``.

    Returns
    -------
    Channel
        Shape ``(n + 1, n + 1)`` (with ``"clamp"`` a :class:`~dpcap.line_noise.LineNoise`, kept
        by its structure), carrying ``neighbors="line"`` (``|x − x'| = 1``), the relation of
        the levels below.

    Raises
    ------
    ParameterError
        For ``n`` or ``sigma`` out of range, or an unknown ``truncation``.
    ProblemTooLargeError
        If ``n + 1`` is above :data:`MAX_LINE`, or, where the matrix is dense (see Returns),
        if the ``(n + 1) × (n + 1)`` matrix is above dpcap's dense limit.

    Notes
    -----
    On all of ℤ the discrete Gaussian is not ε-DP for any finite ε (it is
    ``Δ²/(2σ²)``-zCDP, CKS Thm 4). Restricted to ``{0..n}`` every entry is positive, so the
    level is finite for every finite n:

    * **clamp**, line neighbours: exactly ``ε = log(T(n−1)/T(n)) = log(1 + f(n−1)/T(n))``. (The
      tails of a log-concave pmf are log-concave, so ``T(k)/T(k+1)`` is largest at ``k = n−1``;
      it is at least ``f(n−1)/f(n) = e^{(2n−1)/(2σ²)}``, which beats every interior ratio,
      at most ``e^{(2n−3)/(2σ²)}``.) For ``n ≫ σ`` this grows like ``n/σ² + log(n/σ²)``.
    * **renormalize**, line neighbours: ``ε = max_x [(2x + 1)/(2σ²) + log(Z_{x+1}/Z_x)]`` over
      ``x = 0..n−1`` (both orders give the same value by the symmetry ``x ↦ n − x``), and since
      ``Z_0 = min Z_x ≥ max Z_x / 2``, ``ε ≤ (2n − 1)/(2σ²) + log 2``.

    Tails are summed in the log domain (``logaddexp``), with the truncation of the infinite sum
    bounded below double precision (see ``_gaussian_log_tails``). Entries below the smallest
    normal double (``z²/(2σ²) ≳ 708``) are held as 0 or subnormals, and the channel keeps these
    logs (:attr:`~dpcap.channel.Channel.log_matrix`).

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke, "The discrete Gaussian for differential privacy",
    NeurIPS 2020 (Def. 1, Thm 4).

    Examples
    --------
    >>> W = discrete_gaussian(3, 1.0).matrix
    >>> W.round(4)
    array([[0.6995, 0.242 , 0.054 , 0.0046],
           [0.3005, 0.3989, 0.242 , 0.0586],
           [0.0586, 0.242 , 0.3989, 0.3005],
           [0.0046, 0.054 , 0.242 , 0.6995]])
    """
    n = check.integer(n, "n", minimum=1)
    sigma = check.nonnegative_scalar(sigma, "sigma", allow_inf=False, positive=True)
    mode = check.choice(truncation, TRUNCATIONS, "truncation")
    if mode == "renormalize" or sigma > _GAUSS_DIRECT_MAX_SIGMA:
        _square_size(n, f"discrete_gaussian(n={n})")
    _line_size(n, f"discrete_gaussian(n={n})")
    if mode == "clamp":
        log_tails, log_total = _gaussian_log_tails(n, sigma)
        k = np.arange(n + 1, dtype=np.float64)
        log_pmf = -(k * k) / (2.0 * sigma * sigma) - log_total
        log_tail = log_tails - log_total
        return _line(n, np.exp(log_pmf), np.exp(log_tail), (log_pmf, log_tail), "line")
    d = _offsets(n).astype(np.float64)
    log_f = -(d * d) / (2.0 * sigma * sigma)
    log_w = log_f - logsumexp(log_f, axis=1, keepdims=True)
    return _channel(np.exp(log_w), lambda: log_w, "line")


# --------------------------------------------------------------------------- staircase


#: Up to this sensitivity the default staircase width is found by evaluating every r.
_STAIRCASE_SCAN_MAX = 2**16


def _staircase_l1_costs(delta: int, eps: float, r: FloatArray) -> FloatArray:
    """``k(r)``, the part of ``E|Z|`` that depends on the width r (closed form, ``0 < ε``).

    With ``b = e^{−ε}``, ``c = 1 − b``, ``a(r) = c/D(r)``, ``D(r) = 2r + 2b(Δ − r) − c``, block
    mass ``A(r) = r + b(Δ − r)`` and block moment ``B(r) = r(r−1)/2 + b(Δ(Δ−1)/2 − r(r−1)/2)``:
    ``E|Z| = 2 Σ_{k≥0} b^k a (kΔA + B) = 2a(ΔAb/c² + B/c) = bΔ/c + bΔ/2 + c·k(r)`` with
    ``k(r) = (r(r − 1) + bΔ(Δ − r + 1/2)) / D(r)``. Only ``k`` is computed: the terms common to
    every r (``bΔ/c ≈ Δ/ε``) would overflow for a subnormal ε and, for small ε, drown the
    differences between widths in rounding; ``k`` has neither problem (no cancellation, and
    ``D(r) ≥ 1``).
    """
    b = 0.0 if math.isinf(eps) else math.exp(-eps)
    c = 1.0 if math.isinf(eps) else -math.expm1(-eps)
    denom = 2 * r + 2 * b * (delta - r) - c
    costs: FloatArray = (r * (r - 1) + b * delta * (delta - r + 0.5)) / denom
    return costs


def _staircase_best_width(delta: int, eps: float) -> int:
    """The width ``r ∈ {1..Δ}`` of least ℓ1 cost (smallest on ties; ``0 < ε``).

    Large Δ: ``D(r)`` is affine and increasing in r and the numerator quadratic, so in
    ``t = D(r)`` the cost is ``αt + β + γ/t``: convex (γ ≥ 0) or concave (γ ≤ 0) on ``t > 0``.
    An integer ternary search finds the minimiser in the convex case; in the concave case it lies
    at an end, and both ends are candidates too.
    """
    if delta <= _STAIRCASE_SCAN_MAX:
        return int(np.argmin(_staircase_l1_costs(delta, eps, np.arange(1.0, delta + 1)))) + 1

    def cost(width: int) -> float:
        return float(_staircase_l1_costs(delta, eps, np.array([float(width)]))[0])

    lo, hi = 1, delta
    while hi - lo > 2:
        m1 = lo + (hi - lo) // 3
        m2 = hi - (hi - lo) // 3
        if cost(m1) <= cost(m2):
            hi = m2
        else:
            lo = m1
    candidates = sorted({1, delta, *range(lo, hi + 1)})
    best: int = min(candidates, key=lambda w: (cost(w), w))
    return best


#: Largest staircase sensitivity: steps and widths stay exact integers in float64 arithmetic.
MAX_SENSITIVITY = 2**52


def staircase(n: int, eps: float, *, sensitivity: int = 1, r: int | None = None) -> Channel:
    r"""The discrete staircase mechanism of Geng & Viswanath on ``{0, …, n}``, clamped.

    Integer noise with a staircase-shaped pmf: with ``b = e^{−ε}``, Δ the sensitivity and
    ``r ∈ {1, …, Δ}``, for ``i ≥ 0`` written ``i = kΔ + j`` (``0 ≤ j < Δ``):

    ``P(i) = a(r) b^k`` if ``j < r``, ``P(i) = a(r) b^{k+1}`` if ``j ≥ r``, ``P(−i) = P(i)``,

    ``a(r) = (1 − b) / (2r + 2b(Δ − r) − (1 − b))``.

    The release ``x + Z`` is clamped into ``{0, …, n}`` (out-of-range mass to the nearest end).

    Parameters
    ----------
    n : int
        Largest value, ``n >= 1``; inputs and outputs are ``{0, …, n}``.
    eps : float
        ε in ``[0, ∞]``. ``eps = 0`` sends all mass to the ends (rows ``[1/2, 0, …, 0, 1/2]``, for
        every r); ``eps = inf`` makes Z uniform on ``{−(r−1), …, r−1}`` (the identity for r = 1).
    sensitivity : int, keyword-only
        Δ ``>= 1``: the mechanism is ε-DP for inputs at distance at most Δ.
    r : int or None, keyword-only
        Width of the top step, ``1 <= r <= Δ``. ``None`` (default) picks the r that minimises
        the ℓ1 cost ``E|Z|``, from the closed form below evaluated at every ``r = 1..Δ`` (for
        ``Δ > 2^16``, a ternary search that is exact because the cost is convex or concave in
        r). Smallest r on ties; ``⌈Δ/2⌉`` at ``ε = 0``, where every r gives the same channel.

    Returns
    -------
    LineNoise
        A :class:`~dpcap.Channel` of shape ``(n + 1, n + 1)`` kept by its structure
        (:class:`~dpcap.line_noise.LineNoise`), carrying the inputs at distance at most Δ as
        neighbours (``"line"`` for Δ = 1, ``"all"`` for Δ ≥ n, explicit pairs in between; see
        :func:`dpcap.neighbors.within`), under which it is ε-DP.

    Raises
    ------
    ParameterError
        For ``n``, ``eps``, ``sensitivity`` or ``r`` out of range.
    ProblemTooLargeError
        If ``n + 1`` is above :data:`MAX_LINE`, or, where the matrix is dense (see Returns),
        if the ``(n + 1) × (n + 1)`` matrix is above dpcap's dense limit.

    Notes
    -----
    * ``P(i + d) ≥ b P(i)`` for ``0 ≤ d ≤ Δ``, ``i ≥ 0`` and P is even and non-increasing in
      ``|i|``, so the noise is ε-DP for query changes up to Δ; clamping is post-processing, so
      the channel is ε-DP for all inputs at distance ``≤ Δ`` (hence for line neighbours), and
      ``kε``-DP at distance ``≤ kΔ``. Its line-neighbour level is at most ε, and exactly ε for
      ``Δ = 1``.
    * ``Δ = 1`` forces ``r = 1`` and gives two-sided geometric noise: the channel is
      :func:`truncated_geometric` ``(n, ε)``.
    * Tails: for ``k = qΔ + s``, ``P(Z ≥ k) = b^q ((1 − b) t(s) + A b) / D`` with
      ``t(s) = max(r − s, 0) + b(Δ − max(s, r))``, ``A = r + b(Δ − r)``, ``D`` the denominator
      of ``a(r)``.
    * ℓ1 cost: ``E|Z| = 2a(ΔAb/(1 − b)² + B/(1 − b))``, ``B = r(r−1)/2 + b(Δ(Δ−1)/2 −
      r(r−1)/2)``. Geng & Viswanath show that the optimal integer noise for this cost is a
      staircase; the default r is the minimiser of this closed form. (The literature's closed
      form for the optimal r was not checked here; the minimiser is computed instead. It tracks
      ``γ*Δ`` with the continuous optimum ``γ* = 1/(1 + e^{ε/2})``: e.g. ``r = 38`` for
      ``Δ = 100, ε = 1``, where ``γ*Δ ≈ 37.75``.)

    References
    ----------
    Q. Geng, P. Viswanath, "The optimal noise-adding mechanism in differential privacy", IEEE
    Trans. Inf. Theory 62(2) (2016), and "The optimal mechanism in differential privacy",
    arXiv:1212.1186 (discrete setting). Q. Geng, P. Kairouz, S. Oh, P. Viswanath, "The staircase
    mechanism in differential privacy", IEEE JSTSP 9(7) (2015).

    Examples
    --------
    >>> import numpy as np
    >>> W = staircase(4, np.log(4.0), sensitivity=2, r=1).matrix
    >>> W[2] * 7  # a = 3/7, P(0) = a, P(±1) = P(±2) = a/4, P(Z ≥ 2) = 5/28
    array([1.25, 0.75, 3.  , 0.75, 1.25])
    """
    n = check.integer(n, "n", minimum=1)
    eps = check.nonnegative_scalar(eps, "eps")
    delta = check.integer(sensitivity, "sensitivity", minimum=1)
    if delta > MAX_SENSITIVITY:
        raise ParameterError(
            f"sensitivity must be an integer in [1, 2**52] (a staircase step is computed in "
            f"doubles), got {sensitivity!r}"
        )
    if r is None:
        width = (delta + 1) // 2 if eps == 0.0 else _staircase_best_width(delta, eps)
    else:
        width = check.integer(r, "r", minimum=1)
        if width > delta:
            raise ParameterError(f"r must be an integer in [1, sensitivity={delta}], got {r!r}")
    if delta > 1:  # (within(n, Δ) lists its pairs)
        _square_size(n, f"staircase(n={n})")
    _line_size(n, f"staircase(n={n})")
    pmf, tail = _staircase_law(n, eps, delta, width)
    return _line(n, pmf, tail, _staircase_log(n, eps, delta, width), within(n, delta))


def _staircase_law(n: int, eps: float, delta: int, r: int) -> tuple[FloatArray, FloatArray]:
    b = 0.0 if math.isinf(eps) else math.exp(-eps)
    one_minus_b = 1.0 if math.isinf(eps) else -math.expm1(-eps)
    denom = 2 * r + 2 * b * (delta - r) - one_minus_b
    block_mass = r + b * (delta - r)
    i = np.arange(n + 1, dtype=np.int64)
    q, s = np.divmod(i, delta)
    b_q = _decay(eps, q)
    pmf = (one_minus_b / denom) * b_q * np.where(s < r, 1.0, b)
    t = np.maximum(r - s, 0) + b * (delta - np.maximum(s, r))
    tail = b_q * (one_minus_b * t + block_mass * b) / denom
    return pmf.astype(np.float64), tail.astype(np.float64)


def _staircase_log(n: int, eps: float, delta: int, r: int) -> tuple[FloatArray, FloatArray] | None:
    """``log W`` of :func:`staircase` in closed form (``None`` where no positive entry is lost).

    ``log P(i) = log a(r) − εk − ε[j ≥ r]`` and ``log P(Z ≥ i) = −εq + log((1 − b)t(s) + Ab)
    − log D`` (the notation of :func:`staircase`).
    """
    if eps == 0.0 or math.isinf(eps):
        return None  # all mass at the ends, or Z uniform on a window: the zeros are exact
    b, one_minus_b = math.exp(-eps), -math.expm1(-eps)
    log_denom = math.log(2 * r + 2 * b * (delta - r) - one_minus_b)
    i = np.arange(n + 1, dtype=np.int64)
    q, s = np.divmod(i, delta)
    log_pmf = math.log(one_minus_b) - log_denom - eps * q - eps * (s >= r)
    block = r + b * (delta - r)
    # t(s) = r − s + b(Δ − r) below the top step; above it t(s) = b(Δ − s) and the factor b
    # comes out of the log (b itself underflows past ε ≈ 745)
    inner = np.where(s < r, one_minus_b * (r - s + b * (delta - r)) + block * b, 0.0)
    inner = np.where(s < r, inner, one_minus_b * (delta - s) + block)
    log_tail = -eps * (q + (s >= r)) + np.log(inner) - log_denom
    return log_pmf.astype(np.float64), log_tail.astype(np.float64)
