"""Csiszár f-divergences of finite laws, and the named divergences of the family.

``D_f(p‖q) = Σ_y q_y f(p_y/q_y)`` for a convex ``f`` with ``f(1) = 0`` (Csiszár 1967; Ali & Silvey
1966). Zeros follow Csiszár's conventions (``docs/mathematics.rst`` §10): ``0 · f(0/0) = 0``,
``q · f(0/q) = q f(0)`` with ``f(0) = lim_{t↓0} f(t)`` (possibly ∞), and
``0 · f(p/0) = p · f'(∞)`` with ``f'(∞) = lim_{t→∞} f(t)/t`` (possibly ∞). Every f-divergence
satisfies the data-processing inequality ``D_f(pW ‖ qW) ≤ D_f(p ‖ q)`` for every channel W, which
is why the privacy literature uses the whole family (Hsu et al., survey, §II).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
from scipy.special import rel_entr

from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.solvers import divergence

__all__ = [
    "F_DIVERGENCES",
    "bhattacharyya_coefficient",
    "bhattacharyya_distance",
    "chi2_divergence",
    "f_divergence",
    "hellinger_distance",
    "hellinger_divergence",
    "jensen_shannon_divergence",
]

#: The named f-divergences of :func:`f_divergence` (read-only): name → generator ``f``, ``f'(∞)``.
F_DIVERGENCES: Mapping[str, str] = MappingProxyType(
    {
        "kl": "f(t) = t log t, f'(∞) = ∞: Kullback–Leibler D(p‖q), nats",
        "reverse_kl": "f(t) = −log t, f'(∞) = 0: D(q‖p), nats",
        "tv": "f(t) = |t − 1|/2, f'(∞) = 1/2: total variation ½Σ|p − q|",
        "hellinger": "f(t) = (1 − √t)²/2, f'(∞) = 1/2: squared Hellinger distance 1 − Σ√(pq)",
        "chi2": "f(t) = (t − 1)², f'(∞) = ∞: Pearson χ² Σ(p − q)²/q",
        "neyman_chi2": "f(t) = (1 − t)²/t, f'(∞) = 1: Neyman χ² Σ(p − q)²/p",
        "jensen_shannon": "f(t) = (t log(2t/(1+t)) + log(2/(1+t)))/2, f'(∞) = log(2)/2: nats",
        "le_cam": "f(t) = (1 − t)²/(2(1 + t)), f'(∞) = 1/2: Le Cam ½Σ(p − q)²/(p + q)",
    }
)


def _pair(p: Any, q: Any) -> tuple[check.FloatArray, check.FloatArray]:
    P = check.distribution(p, "p")
    Q = check.distribution(q, "q", size=P.shape[0])
    return P, Q


def _hellinger_squared(P: check.FloatArray, Q: check.FloatArray) -> float:
    """``½ Σ (√p − √q)² = 1 − Σ √(pq)``, a sum of squares of ``√p − √q = (p − q)/(√p + √q)``
    (no cancellation as p → q)."""
    seen = (P + Q) > 0
    gaps = (P[seen] - Q[seen]) / (np.sqrt(P[seen]) + np.sqrt(Q[seen]))
    return min(0.5 * float(np.sum(gaps**2)), 1.0)


def _chi2(P: check.FloatArray, Q: check.FloatArray) -> float:
    """``Σ_{q>0} (p − q)²/q``, ∞ if some ``p_y > 0 = q_y`` (or if the sum exceeds the largest
    double, which a subnormal ``q_y`` under a positive ``p_y`` can make it)."""
    if np.any((P > 0) & (Q == 0)):
        return math.inf
    seen = Q > 0
    with np.errstate(over="ignore"):  # p²/q beyond the largest double (q subnormal): ∞
        return float(np.sum((P[seen] - Q[seen]) ** 2 / Q[seen]))


def _jensen_shannon(P: check.FloatArray, Q: check.FloatArray) -> float:
    """``½ Σ_y [p log(p/m) + q log(q/m)]``, ``m = (p + q)/2``, term by term.

    With ``p = m(1 + δ)``, ``q = m(1 − δ)``, a term is ``m [2δ atanh δ + log1p(−δ²)] ≈ m δ²``:
    this form, used where ``|δ| < ½``, has no cancellation as p → q (the two logarithms of the
    plain form nearly cancel there); elsewhere the plain form is exact enough.
    """
    M = 0.5 * P + 0.5 * Q
    seen = M > 0
    m = M[seen]
    delta = (P[seen] - Q[seen]) / (P[seen] + Q[seen])
    near = np.abs(delta) < 0.5
    d = delta[near]
    close = m[near] * (2.0 * d * np.arctanh(d) + np.log1p(-d * d))
    far = rel_entr(P[seen][~near], m[~near]) + rel_entr(Q[seen][~near], m[~near])
    value = 0.5 * (float(np.sum(close)) + float(np.sum(far)))
    return min(max(value, 0.0), math.log(2.0))


def _le_cam(P: check.FloatArray, Q: check.FloatArray) -> float:
    seen = (P + Q) > 0
    return min(0.5 * float(np.sum((P[seen] - Q[seen]) ** 2 / (P[seen] + Q[seen]))), 1.0)


_NAMED: dict[str, Callable[[check.FloatArray, check.FloatArray], float]] = {
    "kl": lambda P, Q: float(divergence.kl(P, Q)),
    "reverse_kl": lambda P, Q: float(divergence.kl(Q, P)),
    "tv": lambda P, Q: float(divergence.tv(P, Q)),
    "hellinger": _hellinger_squared,
    "chi2": _chi2,
    "neyman_chi2": lambda P, Q: _chi2(Q, P),
    "jensen_shannon": _jensen_shannon,
    "le_cam": _le_cam,
}


def _evaluate(f: Callable[[float], Any], t: float) -> float:
    """``f(t)`` as a float, or a :class:`ParameterError` that names f and t."""
    try:
        value = f(t)
    except (ArithmeticError, ValueError, TypeError) as exc:
        hint = " (return its limit at 0, e.g. math.inf)" if t == 0.0 else ""
        raise ParameterError(
            f"f raised {type(exc).__name__} at t = {t!r}: {exc}; f must accept every ratio "
            f"p/q in [0, inf){hint}"
        ) from exc
    arr = np.asarray(value) if isinstance(value, (numbers.Real, np.ndarray)) else None
    if (
        isinstance(value, (bool, np.bool_))
        or arr is None
        or arr.ndim
        or arr.dtype.kind not in "iuf"
    ):
        raise ParameterError(f"f must return a real number, got {check.show(value)} at t = {t!r}")
    number = float(np.asarray(value, dtype=np.float64))
    if math.isnan(number) or number == -math.inf or (number == math.inf and t > 0.0):
        raise ParameterError(f"f must be finite on (0, inf), got f({t!r}) = {number!r}")
    return number


def _slope(value: Any) -> float:
    arr = check.real_array(value, "slope_at_infinity")
    if arr.ndim != 0 or math.isnan(float(arr)) or float(arr) == -math.inf:
        raise ParameterError(
            f"slope_at_infinity must be a real number or inf (lim f(t)/t as t -> inf), "
            f"got {check.show(value)}"
        )
    return float(arr)


def _generic(
    P: check.FloatArray, Q: check.FloatArray, f: Callable[[float], Any], slope: Any
) -> float:
    one = _evaluate(f, 1.0)
    if abs(one) > 1e-12:
        raise ParameterError(f"f must satisfy f(1) = 0 (so that D_f(p||p) = 0), got f(1) = {one!r}")
    both = (P > 0) & (Q > 0)
    total = math.fsum(
        float(q) * _evaluate(f, float(p / q)) for p, q in zip(P[both], Q[both], strict=True)
    )
    off_p = (P == 0) & (Q > 0)
    if off_p.any():  # q · f(0)
        at_zero = _evaluate(f, 0.0)
        total = total + at_zero * float(np.sum(Q[off_p]))
    off_q = (P > 0) & (Q == 0)
    if off_q.any():  # p · f'(∞)
        if slope is None:
            y = int(np.flatnonzero(off_q)[0])
            raise ParameterError(
                f"f_divergence needs slope_at_infinity = lim f(t)/t as t -> inf: q[{y}] = 0 "
                f"while p[{y}] = {float(P[y])!r} > 0 (pass math.inf if f grows faster than t)"
            )
        total = total + _slope(slope) * float(np.sum(P[off_q]))
    return total + 0.0


def f_divergence(p: Any, q: Any, /, f: Any, *, slope_at_infinity: Any = None) -> float:
    """Csiszár's f-divergence ``D_f(p‖q) = Σ_y q_y f(p_y/q_y)``.

    Parameters
    ----------
    p, q : array_like, shape (n,)
        Probability vectors on the same n outcomes.
    f : str or callable
        One of the names of :data:`F_DIVERGENCES` (``"kl"``, ``"reverse_kl"``, ``"tv"``,
        ``"hellinger"``, ``"chi2"``, ``"neyman_chi2"``, ``"jensen_shannon"``, ``"le_cam"``),
        each evaluated by its own cancellation-free formula; or a convex function of one float
        with ``f(1) = 0``, called once per outcome on the ratio ``t = p_y/q_y``, and at
        ``t = 0.0`` where ``p_y = 0 < q_y`` (it must then return its limit
        ``lim_{t↓0} f(t)``, which may be ``math.inf``). Convexity is not checked: without it the
        value is not a divergence (it may be negative, and data processing fails).
    slope_at_infinity : float, optional
        ``f'(∞) = lim_{t→∞} f(t)/t`` (``math.inf`` allowed), for a callable ``f``: needed only
        where ``q_y = 0 < p_y``. It cannot be read off a black-box ``f`` with a guarantee, so
        it is asked for, and a ``ParameterError`` says so when it is missing and needed.

    Returns
    -------
    float
        ``D_f(p‖q)``, in ``[0, f(0) + f'(∞)]``; ∞ where the conventions make it so. It has no
        unit in general; ``"kl"``, ``"reverse_kl"`` and ``"jensen_shannon"`` are in nats.

    Raises
    ------
    PriorError
        If ``p`` or ``q`` is not a probability vector, or their lengths differ.
    ParameterError
        If ``f`` is neither a callable nor a known name, ``f(1) ≠ 0`` (beyond ``1e-12``),
        ``f`` fails or returns NaN, or ``slope_at_infinity`` is needed and missing.

    Notes
    -----
    With ``f(0) = lim_{t↓0} f(t)`` and ``f'(∞) = lim_{t→∞} f(t)/t`` (Csiszár's conventions
    ``0 f(0/0) = 0`` and ``0 f(a/0) = a f'(∞)``),

    ``D_f(p‖q) = Σ_{p,q>0} q f(p/q) + f(0) q(p = 0) + f'(∞) p(q = 0)``.

    A callable's terms ``q f(p/q)`` are formed as written (and summed with ``math.fsum``): where
    ``p/q`` is huge (q near 1e-300) an ``f`` that grows faster than t may overflow, which is
    reported as f failing; the named divergences use forms that do not overflow.

    For every channel W, ``D_f(pW ‖ qW) ≤ D_f(p ‖ q)`` (data processing), and ``D_f`` is jointly
    convex (Csiszár 1967, Thm 1; ``docs/mathematics.rst`` §10). The squared Hellinger distance
    here is ``1 − Σ√(pq) ∈ [0, 1]`` (f(t) = (1 − √t)²/2); the Hellinger divergence of order ½ of
    Sason & Verdú (2016, §II), ``H_{1/2}(p‖q) = 2(1 − Σ√(pq))``, is twice it.

    References
    ----------
    I. Csiszár, "Information-type measures of difference of probability distributions and
    indirect observations", Studia Sci. Math. Hungarica 2, 299–318, 1967. S. M. Ali,
    S. D. Silvey, "A general class of coefficients of divergence of one distribution from
    another", J. Royal Statistical Society B 28(1), 131–142, 1966. I. Sason, S. Verdú,
    "f-divergence inequalities", IEEE Trans. Inf. Theory 62(11), 5973–6006, 2016.

    Examples
    --------
    >>> round(f_divergence([0.5, 0.5], [0.9, 0.1], "chi2"), 12)   # 0.16/0.9 + 0.16/0.1 = 16/9
    1.777777777778
    >>> import math
    >>> kl = lambda t: t * math.log(t) if t > 0 else 0.0
    >>> round(f_divergence([0.5, 0.5], [0.9, 0.1], kl), 6)   # = kl_divergence
    0.510826
    """
    P, Q = _pair(p, q)
    if isinstance(f, str):
        name = check.choice(f, tuple(F_DIVERGENCES), "f")
        if slope_at_infinity is not None:
            raise ParameterError(
                f"slope_at_infinity is for a callable f; the named divergence {name!r} "
                f"knows its own, got {check.show(slope_at_infinity)}"
            )
        return max(_NAMED[name](P, Q), 0.0) + 0.0  # ≥ 0: a negative sum is rounding
    if not callable(f):
        raise ParameterError(
            f"f must be a convex function with f(1) = 0 or one of {tuple(F_DIVERGENCES)}, "
            f"got {check.show(f)}"
        )
    return _generic(P, Q, f, slope_at_infinity)


def hellinger_distance(p: Any, q: Any, /) -> float:
    """Hellinger distance ``H(p, q) = √(1 − Σ_y √(p_y q_y)) = √(½ Σ (√p − √q)²)`` ∈ [0, 1].

    A metric; its square is ``f_divergence(p, q, "hellinger")``, 1 for disjoint supports.
    Computed as a sum of squares: no cancellation as p → q (Hellinger 1909; Le Cam 1986).

    Examples
    --------
    >>> hellinger_distance([1.0, 0.0], [0.0, 1.0])
    1.0
    >>> round(hellinger_distance([0.5, 0.5], [0.9, 0.1]) ** 2, 12)   # 1 − (√.45 + √.05)
    0.105572809
    """
    P, Q = _pair(p, q)
    return math.sqrt(_hellinger_squared(P, Q))


def hellinger_divergence(p: Any, q: Any, /, alpha: float) -> float:
    """Hellinger divergence of order ``alpha`` ∈ [0, ∞]: ``(Σ_y p_y^α q_y^{1−α} − 1)/(α − 1)``.

    The f-divergence of ``f_α(t) = (t^α − 1)/(α − 1)`` (Liese & Vajda 2006; Sason & Verdú 2016,
    §II), also called the Tsallis relative entropy. ``H_1`` is KL (nats), ``H_2`` is Pearson's
    χ², ``H_{1/2} = 2(1 − Σ√(pq))``; ``H_0 = 1 − q(supp p)``, and ``H_∞`` is 0 if p = q and ∞
    otherwise (Notes). It is computed from the Rényi divergence, ``H_α = expm1((α−1) D_α)/(α−1)``,
    accurate near α = 1. Amari's α-divergence of parameter a is ``H_β/β`` with β = (1 − a)/2.

    Notes
    -----
    Order ∞ is the limit α → ∞ of the definition. If ``p = q`` every ``H_α`` is 0. Otherwise,
    as both are laws (``Σp = Σq = 1``), some outcome has ``p_y > q_y``: either ``q_y = 0`` (then
    ``H_α = ∞`` for every α > 1) or ``r = p_y/q_y > 1``, and ``Σ_z p_z^α q_z^{1−α} ≥
    p_y r^{α−1}`` grows geometrically in α while the denominator ``α − 1`` grows linearly, so
    ``H_α → ∞``. Hence ``H_∞(p‖q) = 0`` if ``p = q`` and ``∞`` if ``p ≠ q`` (unlike
    ``D_∞ = log max p/q``, which is finite): decided by comparing the two laws, not by the sign
    of a rounded ``D_∞`` (two laws one ulp apart have ``D_∞ ≈ 2e-16``, and a ``log p − log q`` at
    masses near 1e-300 rounds it to 0). At a finite huge α (1e300) the same growth makes the
    float answer ∞ whenever some ``p_y/q_y > 1``: the ratios are taken as ``log(p_y/q_y)``
    (``log1p`` near 1), so a ratio ``1 + 2⁻⁵²`` is seen.

    Examples
    --------
    >>> round(hellinger_divergence([0.75, 0.25], [0.5, 0.5], 2.0), 12)   # χ² = 0.0625/0.25
    0.25
    >>> hellinger_divergence([0.75, 0.25], [0.5, 0.5], float("inf"))
    inf
    """
    a = check.order(alpha)
    P, Q = _pair(p, q)
    if math.isinf(a):
        return 0.0 if np.array_equal(P, Q) else math.inf
    d = float(divergence.renyi(P, Q, a))
    if a == 1.0:
        return max(d, 0.0) + 0.0
    with np.errstate(over="ignore"):  # e^{(α−1)D} beyond the largest float: H_α = ∞ there
        value = float(np.expm1((a - 1.0) * d)) / (a - 1.0)
    return max(value, 0.0) + 0.0


def chi2_divergence(p: Any, q: Any, /) -> float:
    """Pearson's χ² divergence ``Σ_y (p_y − q_y)²/q_y`` (∞ if some ``p_y > 0 = q_y``).

    The f-divergence of ``f(t) = (t − 1)²`` (Pearson 1900); ``log(1 + χ²) = D_2(p‖q)``.

    Examples
    --------
    >>> round(chi2_divergence([0.3, 0.7], [0.6, 0.4]), 12)   # 0.09/0.6 + 0.09/0.4
    0.375
    """
    P, Q = _pair(p, q)
    return _chi2(P, Q)


def jensen_shannon_divergence(p: Any, q: Any, /, *, unit: str = "nats") -> float:
    """Jensen–Shannon divergence ``½ D(p‖m) + ½ D(q‖m)``, ``m = (p + q)/2``, in [0, log 2].

    Symmetric, finite, and its square root is a metric (Lin 1991; Endres & Schindelin 2003).
    It equals ``H(m) − (H(p) + H(q))/2``, and the mutual information between a fair bit B and
    a draw from ``p`` if B = 0, from ``q`` if B = 1: the weighted divergence of several laws
    ``P_i`` with weights ``w`` is ``mutual_information(w, P)`` (rows ``P_i``).

    References
    ----------
    J. Lin, "Divergence measures based on the Shannon entropy", IEEE Trans. Inf. Theory 37(1),
    145–151, 1991.

    Examples
    --------
    >>> jensen_shannon_divergence([1.0, 0.0], [0.0, 1.0], unit="bits")   # disjoint: log 2
    1.0
    """
    P, Q = _pair(p, q)
    return _jensen_shannon(P, Q) / check.unit_divisor(unit)


def bhattacharyya_coefficient(p: Any, q: Any, /) -> float:
    """Bhattacharyya coefficient ``BC(p, q) = Σ_y √(p_y q_y)`` ∈ [0, 1] (Bhattacharyya 1943).

    1 iff p = q, 0 iff the supports are disjoint; ``BC = 1 − H²`` (squared Hellinger distance).

    Examples
    --------
    >>> round(bhattacharyya_coefficient([0.5, 0.5], [0.9, 0.1]), 12)   # √.45 + √.05
    0.894427191
    """
    P, Q = _pair(p, q)
    return min(float(np.sum(np.sqrt(P) * np.sqrt(Q))), 1.0)


def bhattacharyya_distance(p: Any, q: Any, /, *, unit: str = "nats") -> float:
    """Bhattacharyya distance ``−log BC(p, q) = ½ D_{1/2}(p‖q)`` ∈ [0, ∞] (∞ iff disjoint).

    A logarithm, hence ``unit=``. Evaluated as ``−log1p(−H²)`` from the squared Hellinger
    distance when ``BC ≥ ½`` (no cancellation as p → q) and as ``−log BC`` otherwise
    (Bhattacharyya 1943; Kailath 1967).

    References
    ----------
    A. Bhattacharyya, "On a measure of divergence between two statistical populations defined
    by their probability distributions", Bull. Calcutta Math. Soc. 35, 99–109, 1943.

    Examples
    --------
    >>> import math
    >>> q = [0.9, 0.1]
    >>> d = bhattacharyya_distance([0.5, 0.5], q)
    >>> math.isclose(d, -math.log(math.sqrt(0.45) + math.sqrt(0.05)), rel_tol=1e-14)
    True
    """
    P, Q = _pair(p, q)
    divisor = check.unit_divisor(unit)
    if not np.any((P > 0) & (Q > 0)):
        return math.inf
    bc = float(np.sum(np.sqrt(P) * np.sqrt(Q)))
    value = -math.log1p(-_hellinger_squared(P, Q)) if bc >= 0.5 else -math.log(bc)
    return max(value, 0.0) / divisor + 0.0
