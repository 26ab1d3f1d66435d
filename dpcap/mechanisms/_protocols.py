"""Local-DP frequency oracles as channels: Hadamard response, subset selection, local hashing.

Each constructor returns a :class:`~dpcap.channel.Channel` whose rows are the ``k`` values a
user may hold and whose columns are the reports, in the order each docstring states, carrying
``neighbors="all"`` (local DP: every pair of values). They are *pure* protocols in the sense
of Wang, Blocki, Li and Jha (USENIX Security 2017): each report ``y`` supports a set of
values ``Supp(y)``, and with

* ``p* = P(v ∈ Supp(Y) | X = v)`` and ``q* = P(v ∈ Supp(Y) | X = u)``, the same for all
  ``u ≠ v``,

the count ``c̃(v) = (Σ_j 1[v ∈ Supp(y_j)] − n q*) / (p* − q*)`` of ``n`` independent reports is
unbiased, and the frequency estimate ``f̂_v = c̃(v)/n`` has variance (their variance of
the count, divided by ``n²``)

``Var[f̂_v] = q*(1 − q*) / (n (p* − q*)²) + f_v (1 − p* − q*) / (n (p* − q*))``.

Each docstring gives its ``p*``, ``q*`` and this variance; the first term (``f_v → 0``) is the
``Var*`` the papers compare. The unary encodings (:mod:`dpcap.mechanisms._unary`) are pure
protocols too; k-ary randomized response (:func:`~dpcap.mechanisms.randomized_response`) is one
with ``Supp(y) = {y}``.

Every channel has one column per report, so the report alphabet is counted before anything is
built and refused above dpcap's dense limit (:class:`~dpcap.errors.ProblemTooLargeError`,
naming the alphabet's size). Probabilities are formed in the log domain from ``e^{−ε}``, so a
large ε does not overflow; where an entry underflows the channel keeps its log
(:attr:`~dpcap.channel.Channel.log_matrix`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_expit

from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import Channel
from dpcap.errors import ParameterError, ProblemTooLargeError

__all__ = [
    "binary_local_hashing",
    "hadamard_response",
    "local_hashing",
    "optimized_local_hashing",
    "subset_selection",
]

FloatArray = NDArray[np.float64]


# --------------------------------------------------------------------------- shared helpers


def refuse_alphabet(k: int, log2_outputs: float, shown: str, what: str, hint: str) -> None:
    """Refuse a ``k × 2**log2_outputs`` channel above dpcap's dense limit.

    Checked on logarithms first, so ``2**k`` reports for ``k = 10**9`` are never formed; then
    on the exact integer (:func:`dpcap._core.validation.dense_size`) when it is small.
    """
    if math.log2(k) + log2_outputs > math.log2(check.MAX_DENSE_ELEMENTS) + 1:
        raise ProblemTooLargeError(
            f"{what} has {shown} reports: a dense {short(k)} x {shown} matrix is above dpcap's "
            f"limit of {check.MAX_DENSE_ELEMENTS} entries; {hint}"
        )


def short(k: int) -> str:
    """An integer for a message: its digits, or its order of magnitude past 10^15."""
    return str(k) if k < 10**15 else f"~10^{len(str(k)) - 1}"


def refuse_values(k: int, what: str) -> None:
    """Refuse ``k`` values when the channel has at least ``k`` reports too: ``k²`` entries above
    the dense limit (checked on the integer, before any logarithm of a huge ``k``)."""
    if k * k > check.MAX_DENSE_ELEMENTS:
        shown = short(k)
        raise ProblemTooLargeError(
            f"{what} has {shown} values and at least as many reports: a dense matrix of at "
            f"least {shown}**2 entries is above dpcap's limit of {check.MAX_DENSE_ELEMENTS} "
            "entries; use fewer values"
        )


def from_logs(L: FloatArray) -> Channel:
    """The channel ``exp(L)`` on categories (``"all"``), keeping ``L`` where an entry
    underflows."""
    W = np.exp(L)
    return Channel(W, neighbors="all", log_matrix=L if (W < TINY).any() else None)


def level(eps: Any, name: str = "eps", *, allow_inf: bool = True) -> float:
    """ε in ``[0, ∞]`` (``[0, ∞)`` unless ``allow_inf``), named in the error."""
    return check.nonnegative_scalar(eps, name, allow_inf=allow_inf)


# --------------------------------------------------------------------------- Hadamard response


def hadamard_response(k: int, eps: float) -> Channel:
    r"""Hadamard response (Acharya, Sun, Zhang 2019), the one-block form.

    With ``K`` the smallest power of two larger than ``k`` and ``H`` the Sylvester–Hadamard
    matrix of order ``K`` (``H[i, j] = (−1)^{popcount(i AND j)}``), value ``x`` owns the
    ``K/2`` reports ``C_x = {y : H[x + 1, y] = +1}`` (row 0, all ones, is skipped) and

    ``W[x, y] = 2e^ε / (K(e^ε + 1))`` if ``y ∈ C_x``, ``2 / (K(e^ε + 1))`` otherwise.

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞]``.

    Returns
    -------
    Channel
        Shape ``(k, K)``, reports ``y = 0, …, K − 1``, carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``eps`` is not a scalar in ``[0, ∞]``.
    ProblemTooLargeError
        If the ``k × K`` matrix is above dpcap's dense limit.

    Notes
    -----
    * ε-LDP at exactly ε: two rows of ``H`` other than row 0 agree on ``K/2`` columns, so
      ``C_x \ C_{x'}`` is never empty.
    * Pure protocol with ``Supp(y) = {v : y ∈ C_v}``: ``p* = e^ε/(e^ε + 1)`` and, since
      ``|C_u ∩ C_v| = K/4``, ``q* = 1/2``. Hence
      ``Var[f̂_v] = (e^ε + 1)² / (n (e^ε − 1)²) − f_v / n``, the estimator
      ``f̂_v = 2(e^ε + 1)/(e^ε − 1) · (#{j : y_j ∈ C_v}/n − 1/2)`` of Acharya et al.
    * Reports take ``log₂ K ≤ log₂ k + 1`` bits, against ``k`` for the unary encodings.

    References
    ----------
    J. Acharya, Z. Sun, H. Zhang, "Hadamard response: Estimating distributions privately,
    efficiently, and with little communication", AISTATS 2019. T. Wang, J. Blocki, N. Li,
    S. Jha, "Locally differentially private protocols for frequency estimation", USENIX
    Security 2017 (pure protocols).

    Examples
    --------
    >>> import numpy as np
    >>> (hadamard_response(3, np.log(3.0)).matrix * 8).round(12)  # K = 4, 2/(K(e^ε + 1)) = 1/8
    array([[3., 1., 3., 1.],
           [3., 3., 1., 1.],
           [3., 1., 1., 3.]])
    """
    k = check.integer(k, "k", minimum=2)
    eps = level(eps)
    refuse_values(k, "hadamard_response")
    K = 1 << k.bit_length()  # the smallest power of two > k
    refuse_alphabet(k, math.log2(K), str(K), f"hadamard_response(k={short(k)})", "use a smaller k")
    check.dense_size(k, K, f"hadamard_response(k={k})")
    rows = np.arange(1, k + 1, dtype=np.uint64)[:, None]
    cols = np.arange(K, dtype=np.uint64)[None, :]
    owned = np.bitwise_count(rows & cols) % 2 == 0
    base = math.log(2.0 / K)
    L = np.where(owned, base + float(log_expit(eps)), base + float(log_expit(-eps)))
    return from_logs(L)


# --------------------------------------------------------------------------- subset selection


def subset_selection(k: int, eps: float, d: int | None = None) -> Channel:
    r"""Subset selection: report ``d`` of the ``k`` values, favouring sets that hold the truth.

    ``W[x, S] = e^ε / Z`` if ``x ∈ S``, ``1 / Z`` otherwise, over the ``C(k, d)`` subsets
    ``S`` of size ``d``, with ``Z = C(k−1, d−1) e^ε + C(k−1, d)`` (Wang et al. 2016's k-subset
    mechanism; Ye & Barg 2018). ``d = 1`` is k-ary randomized response.

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞]``.
    d : int, optional
        Subset size in ``[1, k − 1]``. Default ``⌈k / (e^ε + 1)⌉`` (at least 1), the size
        Ye & Barg show order-optimal (computed in floating point from ``e^ε``).

    Returns
    -------
    Channel
        Shape ``(k, C(k, d))``; report ``j`` is the ``j``-th subset of
        ``itertools.combinations(range(k), d)`` (sorted tuples, lexicographic order);
        carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2``, ``eps`` is not in ``[0, ∞]`` or ``d`` is not an
        integer in ``[1, k − 1]``.
    ProblemTooLargeError
        If the ``k × C(k, d)`` matrix is above dpcap's dense limit.

    Notes
    -----
    * ε-LDP at exactly ε for ``1 ≤ d ≤ k − 1`` (some subset holds ``x`` and not ``x'``).
    * Pure protocol with ``Supp(S) = S``: ``p* = d e^ε / (d e^ε + k − d)`` and
      ``q* = d((d − 1)e^ε + k − d) / ((k − 1)(d e^ε + k − d))``, so
      ``Var[f̂_v] = q*(1 − q*)/(n(p* − q*)²) + f_v(1 − p* − q*)/(n(p* − q*))`` (Wang et al.
      2017, pure protocols; Ye & Barg's estimator is this one).

    References
    ----------
    S. Wang, L. Huang, P. Wang, Y. Nie, H. Xu, W. Yang, X.-Y. Li, C. Qiao, "Mutual information
    optimally local private discrete distribution estimation", arXiv:1607.08025 (2016).
    M. Ye, A. Barg, "Optimal schemes for discrete distribution estimation under locally
    differential privacy", IEEE Trans. Inf. Theory 64(8) (2018). T. Wang, J. Blocki, N. Li,
    S. Jha, USENIX Security 2017 (pure protocols).

    Examples
    --------
    >>> import numpy as np
    >>> W = subset_selection(3, np.log(2.0), 2)  # subsets (0,1), (0,2), (1,2); Z = 2·2 + 1
    >>> W.matrix * 5
    array([[2., 2., 1.],
           [2., 1., 2.],
           [1., 2., 2.]])
    """
    k = check.integer(k, "k", minimum=2)
    eps = level(eps)
    refuse_values(k, "subset_selection")
    if d is None:
        size = max(1, math.ceil(k / (math.exp(eps) + 1.0))) if eps < 709.0 else 1
    else:
        size = check.integer(d, "d", minimum=1)
        if size > k - 1:
            raise ParameterError(f"d must be an integer in [1, k - 1] = [1, {k - 1}], got {d!r}")
    what = f"subset_selection(k={k}, d={size})"
    log2_count = (math.lgamma(k + 1) - math.lgamma(size + 1) - math.lgamma(k - size + 1)) / (
        math.log(2.0)
    )
    refuse_alphabet(k, log2_count, f"C({k}, {size})", what, "use a smaller k or d")
    count = math.comb(k, size)
    check.dense_size(k, count, what)
    members = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(k), size)),
        dtype=np.int64,
        count=count * size,
    ).reshape(count, size)
    holds = np.zeros((k, count), dtype=bool)
    holds[members.T, np.arange(count)[None, :]] = True
    # log(e^ε / Z) = −log(C(k−1, d−1) + C(k−1, d) e^{−ε})
    log_in = -math.log(math.comb(k - 1, size - 1) + math.comb(k - 1, size) * math.exp(-eps))
    return from_logs(np.where(holds, log_in, log_in - eps))


# --------------------------------------------------------------------------- local hashing


def _family(family: Any, k: int, g: int) -> NDArray[np.int64]:
    """A hash family as an ``(m, k)`` array of buckets in ``[0, g)``, or a clear error."""
    arr = check.numeric(family, "family")
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind == "f" and np.isfinite(arr).all() and (arr == np.round(arr)).all()
    ):
        raise ParameterError(f"family must hold integer buckets, got {check.show(family)}")
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != k:
        raise ParameterError(
            f"family must be a 2-D array with one row per hash function and k = {k} columns, "
            f"got shape {arr.shape}"
        )
    if arr.size and ((arr < 0) | (arr >= g)).any():
        bad = arr[(arr < 0) | (arr >= g)].flat[0]
        raise ParameterError(f"family must hold buckets in [0, g - 1] = [0, {g - 1}], got {bad}")
    return arr.astype(np.int64)


def local_hashing(k: int, eps: float, g: int, *, family: Any = None) -> Channel:
    r"""Local hashing: hash the value into ``g`` buckets, then randomized response on the bucket.

    A user draws a hash function ``h_j`` uniformly from a finite family ``{h_0, …, h_{m−1}}``
    (maps ``[k] → [g]``) and reports ``(j, b)`` with ``b = h_j(x)`` w.p.
    ``e^ε/(e^ε + g − 1)`` and each other bucket w.p. ``1/(e^ε + g − 1)``:

    ``W[x, (j, b)] = (1/m) · (e^ε if h_j(x) = b else 1) / (e^ε + g − 1)``.

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞]``.
    g : int
        Number of buckets, ``g >= 2``.
    family : array_like of int, shape (m, k), keyword-only, optional
        ``family[j, x] = h_j(x)`` in ``[0, g)``. Default: **all** ``g^k`` functions, function
        ``j`` being ``h_j(x) = numpy.unravel_index(j, (g,) * k)[x]`` — a universal family:
        ``P_j(h_j(u) = h_j(v)) = 1/g`` exactly for ``u ≠ v``. A seeded draw of functions is
        also a family, but not exactly universal (the variance below then is approximate).

    Returns
    -------
    Channel
        Shape ``(k, m·g)``; report ``(j, b)`` is column ``j·g + b``; carrying
        ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` or ``g`` is not an integer ``>= 2``, ``eps`` is not in ``[0, ∞]``, or
        ``family`` is not an integer ``(m, k)`` array of buckets in ``[0, g)``.
    ProblemTooLargeError
        If the ``k × m·g`` matrix is above dpcap's dense limit (with the default family,
        ``m·g = g^{k+1}``).

    Notes
    -----
    * ε-LDP at exactly ε when every pair of values is separated by some ``h_j`` (the default
      family separates all); a pair no function separates has identical rows.
    * Pure protocol with ``Supp(j, b) = {v : h_j(v) = b}``: ``p* = e^ε/(e^ε + g − 1)`` and, for
      a universal family, ``q* = 1/g``, so (Wang et al. 2017, §4.4)
      ``Var[f̂_v] = q*(1 − q*)/(n(p* − q*)²) + f_v(1 − p* − q*)/(n(p* − q*))``, whose first
      term is ``(e^ε − 1 + g)² / (n (e^ε − 1)² (g − 1))``.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for frequency
    estimation", USENIX Security 2017, §4.4 (BLH, OLH). R. Bassily, A. Smith,
    "Local, private, efficient protocols for succinct histograms", STOC 2015 (the binary form).

    Examples
    --------
    >>> import numpy as np
    >>> W = local_hashing(2, np.log(3.0), 2)  # 4 functions {0,1} -> {0,1}, 8 reports
    >>> W.matrix[1] * 16  # x = 1: h_j(1) = j mod 2
    array([3., 1., 1., 3., 3., 1., 1., 3.])
    """
    k = check.integer(k, "k", minimum=2)
    eps = level(eps)
    g = check.integer(g, "g", minimum=2)
    what = f"local_hashing(k={short(k)}, g={short(g)})"
    if family is None:
        refuse_values(k, what)
        refuse_alphabet(k, (k + 1) * math.log2(g), f"{short(g)}**{k + 1}", what, _HASH_HINT)
        m = g**k
        check.dense_size(k, m * g, what, hint=_HASH_HINT)
        H = np.stack(np.unravel_index(np.arange(m), (g,) * k), axis=1).astype(np.int64)
    else:
        H = _family(family, k, g)
        m = H.shape[0]
        check.dense_size(k, m * g, what, hint="pass fewer hash functions")
    hit = H.T[:, :, None] == np.arange(g)[None, None, :]  # (k, m, g)
    log_in = -math.log(m) - math.log1p((g - 1) * math.exp(-eps))
    return from_logs(np.where(hit, log_in, log_in - eps).reshape(k, m * g))


_HASH_HINT = (
    "the default family lists all g**k hash functions; use a smaller k or g, or pass family= "
    "(e.g. a seeded draw of functions)"
)


def binary_local_hashing(k: int, eps: float) -> Channel:
    r"""Binary local hashing (BLH): :func:`local_hashing` with ``g = 2`` buckets.

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞]``.

    Returns
    -------
    Channel
        Shape ``(k, 2^{k+1})`` over all ``2^k`` functions ``[k] → {0, 1}``, report ``(j, b)``
        at column ``2j + b``, carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``eps`` is not in ``[0, ∞]``.
    ProblemTooLargeError
        If the ``k × 2^{k+1}`` matrix is above dpcap's dense limit.

    Notes
    -----
    ε-LDP at exactly ε; ``p* = e^ε/(e^ε + 1)``, ``q* = 1/2``, so
    ``Var[f̂_v] = (e^ε + 1)² / (n (e^ε − 1)²) − f_v / n`` — the variance of Hadamard response
    (Wang et al. 2017, §4.4, ``Var*`` of BLH).

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, §4.4.

    Examples
    --------
    >>> binary_local_hashing(3, 1.0).shape, binary_local_hashing(3, 1.0).n_outputs
    ((3,), 16)
    """
    return local_hashing(k, eps, 2)


def optimized_local_hashing(k: int, eps: float) -> Channel:
    r"""Optimised local hashing (OLH): :func:`local_hashing` with ``g = round(e^ε + 1)``.

    ``g = ⌊e^ε + 3/2⌋`` (``e^ε + 1`` rounded half up), the bucket count that minimises
    ``Var*`` (Wang et al. 2017, §4.4).

    Parameters
    ----------
    k : int
        Number of values, ``k >= 2``.
    eps : float
        ε in ``[0, ∞)``.

    Returns
    -------
    Channel
        Shape ``(k, g^{k+1})`` over all ``g^k`` functions, carrying ``neighbors="all"``.

    Raises
    ------
    ParameterError
        If ``k`` is not an integer ``>= 2`` or ``eps`` is not finite and ``>= 0``.
    ProblemTooLargeError
        If the ``k × g^{k+1}`` matrix is above dpcap's dense limit (a few values only:
        ``g`` grows as ``e^ε``).

    Notes
    -----
    ε-LDP at exactly ε; ``p* = e^ε/(e^ε + g − 1)``, ``q* = 1/g``; at ``g = e^ε + 1`` exactly,
    ``Var*[f̂_v] = 4e^ε / (n (e^ε − 1)²)``, the variance of optimised unary encoding.

    References
    ----------
    T. Wang, J. Blocki, N. Li, S. Jha, USENIX Security 2017, §4.4.

    Examples
    --------
    >>> optimized_local_hashing(2, 1.0).n_outputs  # g = round(e + 1) = 4: 4**2 functions
    64
    """
    k = check.integer(k, "k", minimum=2)
    eps = level(eps, allow_inf=False)
    if eps > 64.0:  # g = round(e^ε + 1) would be above 2**92
        raise ProblemTooLargeError(
            f"optimized_local_hashing(k={k}, eps={eps!r}) would hash into g = round(e^eps + 1) "
            f"~ 10^{eps / math.log(10.0):.1f} buckets, and list all g**{k} hash functions; "
            "use a smaller eps, or local_hashing with an explicit g and family"
        )
    refuse_values(k, "optimized_local_hashing")
    g = math.floor(math.exp(eps) + 1.5)
    what = f"optimized_local_hashing(k={k}, eps={eps!r}) (g = {g} buckets)"
    refuse_alphabet(k, (k + 1) * math.log2(g), f"{short(g)}**{k + 1}", what, _HASH_HINT)
    return local_hashing(k, eps, g)
