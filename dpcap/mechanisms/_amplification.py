"""Amplification by subsampling, exactly: the mechanism of "sample, then release", as a matrix.

A mechanism on a sample reads a database in which some records are *absent*. dpcap writes such
a database on the extended domain ``(X_1 ∪ {⊥}) × … × (X_n ∪ {⊥})`` of sizes
``(m_1 + 1, …, m_n + 1)``: value ``m_i`` of entry ``i`` (the last) is ``⊥``, "not in the
sample". A mechanism on a sample is any :class:`~dpcap.channel.Mechanism` on that domain (a
channel with ``m + 1`` rows is one entry), or a mechanism on the population domain together
with the value an absent record is read as (``absent=v``: a count reads it as 0).

Sampling sends the population database ``x`` to a random ``z`` (``z_i = x_i`` if record ``i``
is sampled, ``⊥`` otherwise), so the subsampled mechanism is the exact mixture

``W_sub[x, y] = Σ_z P(z | x) M[z, y]``,

a :class:`~dpcap.channel.Mechanism` like any other: its ε, δ(ε) curve, Rényi and KL levels,
MI-DP and capacity are then exact, not bounds. Its neighbour relation is the one the
amplification theorems are stated for: ``"add_remove"`` (one record present or absent; the
rows are the databases of the extended domain) or ``"replace_one"`` (one record's value
changed; the rows are the population databases ``X_1 × … × X_n``, ``"hamming"``).

Sizes are counted before anything is built: the matrix (rows × outputs) against dpcap's dense
limit, the summation work against :data:`MAX_SAMPLE_WORK` (2^31), the add/remove pairs against
:data:`dpcap.neighbors.MAX_PAIRS`; each refusal is a
:class:`~dpcap.errors.ProblemTooLargeError` that names the sizes.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import Mechanism, as_mechanism
from dpcap.errors import MechanismError, ParameterError, ProblemTooLargeError
from dpcap.neighbors import MAX_PAIRS
from dpcap.product_channel import compose

__all__ = ["poisson_subsample", "sample_without_replacement", "shared_sample"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The neighbour relations a subsampled mechanism can carry.
RELATIONS = ("add_remove", "replace_one")

#: Most probabilities summed to build one subsampled mechanism (samples × rows × outputs for
#: sampling without replacement); above it ``ProblemTooLargeError``.
MAX_SAMPLE_WORK = 2**31


# --------------------------------------------------------------------------- the sample's view


class _Extended:
    """A mechanism on the extended domain: its tensor ``(m_1 + 1, …, m_n + 1, |Y|)``, the
    tensor of its logs (or None when nothing underflowed) and the population sizes ``m_i``."""

    def __init__(self, T: FloatArray, L: FloatArray | None, dims: tuple[int, ...]) -> None:
        self.T, self.L, self.dims = T, L, dims

    def logs(self) -> FloatArray:
        if self.L is not None:
            return self.L
        with np.errstate(divide="ignore"):
            out: FloatArray = np.log(self.T)
        return out


def _extended(mechanism: Any, absent: Any, name: str) -> _Extended:
    """The mechanism on the sample, on the extended domain (``absent`` validated here)."""
    M = as_mechanism(mechanism, name)
    shape, K = M.shape, M.n_outputs
    if absent is None:
        if min(shape) < 2:
            raise MechanismError(
                f"{name} must have at least two values per entry (the last one is the absent "
                f"record ⊥), got domain sizes {shape}; or pass absent= (the value an absent "
                "record is read as)"
            )
        W, logs = M.matrix, M.log_matrix
        T = W.reshape(*shape, K)
        L = None if logs is None else logs.reshape(*shape, K)
        return _Extended(T, L, tuple(s - 1 for s in shape))
    absent = check.integer(absent, "absent", minimum=0)
    if absent >= min(shape):
        raise ParameterError(
            f"absent must be a value of every entry, in [0, {min(shape) - 1}] for domain sizes "
            f"{shape}, got {absent!r}"
        )
    check.dense_size(math.prod(s + 1 for s in shape), K, f"{name} with an absent value per entry")
    index = np.ix_(*(np.r_[0:s, int(absent)] for s in shape), np.arange(K))
    W, logs = M.matrix, M.log_matrix
    T = W.reshape(*shape, K)[index]
    L = None if logs is None else logs.reshape(*shape, K)[index]
    return _Extended(T, L, shape)


# --------------------------------------------------------------------------- relations


def _count_pairs(dims: tuple[int, ...]) -> None:
    """Refuse an add/remove relation of more than :data:`dpcap.neighbors.MAX_PAIRS` pairs."""
    sizes = tuple(m + 1 for m in dims)
    rows = math.prod(sizes)
    count = sum(rows // (m + 1) * m for m in dims)
    if count > MAX_PAIRS:
        raise ProblemTooLargeError(
            f"the add/remove relation on domain sizes {sizes} has {count} pairs of databases, "
            f"above dpcap's limit of {MAX_PAIRS} (dpcap.neighbors.MAX_PAIRS); use fewer "
            "entries or values, or relation='replace_one'"
        )


def _add_remove_pairs(dims: tuple[int, ...]) -> IntArray:
    """Row pairs of the extended domain that differ in one entry, absent on one side."""
    _count_pairs(dims)
    sizes = tuple(m + 1 for m in dims)
    rows = math.prod(sizes)
    grid = np.arange(rows, dtype=np.int64).reshape(sizes)
    firsts, seconds = [], []
    for axis, m in enumerate(dims):
        g = np.moveaxis(grid, axis, -1).reshape(-1, m + 1)
        firsts.append(g[:, :m].ravel())
        seconds.append(np.repeat(g[:, m], m))
    return np.stack([np.concatenate(firsts), np.concatenate(seconds)], axis=1)


def _relation(relation: Any) -> str:
    if not isinstance(relation, str):
        raise ParameterError(f"relation must be one of {RELATIONS}, got {check.show(relation)}")
    return check.choice(relation, RELATIONS, "relation")


def _result(T: FloatArray, L: FloatArray | None, dims: tuple[int, ...], relation: str) -> Mechanism:
    """The Mechanism of the tensor ``T`` on the extended domain, under ``relation``."""
    K = T.shape[-1]
    if relation == "replace_one":
        population = tuple(slice(0, m) for m in dims)
        T = T[population]
        L = None if L is None else L[population]
        rows = math.prod(dims)
        neighbors: Any = "hamming"
        shape = dims
    else:
        rows = math.prod(m + 1 for m in dims)
        neighbors = _add_remove_pairs(dims)
        shape = tuple(m + 1 for m in dims)
    W = np.ascontiguousarray(T).reshape(rows, K)
    logs = None if L is None else np.ascontiguousarray(L).reshape(rows, K)
    return Mechanism(W, shape, neighbors=neighbors, log_matrix=logs)


# --------------------------------------------------------------------------- Poisson


def _poisson(ext: _Extended, q: float, relation: str) -> Mechanism:
    """Poisson sampling as one two-point mixture per axis (no enumeration of the 2^n samples):
    along axis i, ``W[…, v, …] = q W[…, v, …] + (1 − q) W[…, ⊥, …]`` for ``v < m_i``."""
    n, K = len(ext.dims), ext.T.shape[-1]
    if relation == "add_remove":
        _count_pairs(ext.dims)
    work = n * ext.T.size
    if work > MAX_SAMPLE_WORK:
        raise ProblemTooLargeError(
            f"Poisson subsampling of a mechanism with {ext.T.size // K} databases x {K} outputs "
            f"over {n} entries would sum {work} probabilities, above dpcap's limit of "
            f"{MAX_SAMPLE_WORK}; use fewer entries or outputs"
        )
    T = np.array(ext.T, dtype=np.float64)
    for axis, m in enumerate(ext.dims):
        view = np.moveaxis(T, axis, 0)
        view[:m] *= q
        view[:m] += (1.0 - q) * view[m]
    L: FloatArray | None = None
    if ext.L is not None or (T < TINY).any():  # mixtures whose terms may have underflowed
        L = np.array(ext.logs())
        with np.errstate(divide="ignore"):
            log_in, log_out = np.log(q), np.log1p(-q)
        for axis, m in enumerate(ext.dims):
            view = np.moveaxis(L, axis, 0)
            view[:m] = np.logaddexp(log_in + view[:m], log_out + view[m])
        L = np.minimum(L, 0.0)
    return _result(T, L, ext.dims, relation)


def poisson_subsample(
    mechanism: Any, q: float, *, absent: int | None = None, relation: str = "add_remove"
) -> Mechanism:
    r"""The mechanism that samples each record independently with probability ``q``, then
    runs ``mechanism`` on the sample.

    ``W_q[x, y] = Σ_{S ⊆ P(x)} q^{|S|} (1 − q)^{|P(x) \ S|} M[z(x, S), y]``, where ``P(x)`` are
    the records present in ``x`` and ``z(x, S)`` keeps the records of ``S`` and marks the
    others absent (``⊥``). Computed exactly, as one two-point mixture per entry.

    Parameters
    ----------
    mechanism : Mechanism, Channel or array_like
        The mechanism on the sample. With ``absent=None``, on the extended domain
        ``(m_1 + 1, …, m_n + 1)``: the last value of each entry is the absent record ⊥ (a
        channel with ``m + 1`` rows is one entry). With ``absent=v``, on the population domain
        ``(m_1, …, m_n)``, an absent record being read as value ``v``.
    q : float
        Sampling probability of each record, in ``[0, 1]``.
    absent : int, keyword-only, optional
        The value an absent record is read as (e.g. 0 for a count of ones); default None (the
        mechanism has its own ⊥ value).
    relation : {"add_remove", "replace_one"}, keyword-only
        ``"add_remove"`` (default): rows are the databases of the extended domain (records
        present or absent), neighbours differ in one record's presence — explicit pairs.
        ``"replace_one"``: rows are the population databases ``X_1 × … × X_n`` (every record
        present), neighbours differ in one record's value (``"hamming"``).

    Returns
    -------
    Mechanism
        Shape ``(m_1 + 1, …, m_n + 1)`` (``"add_remove"``) or ``(m_1, …, m_n)``
        (``"replace_one"``), the outputs of ``mechanism``, carrying the relation. Where a
        mixture underflows, its log (:attr:`~dpcap.channel.Mechanism.log_matrix`) is kept.

    Raises
    ------
    ChannelError, MechanismError
        If ``mechanism`` is not a stochastic matrix, or has an entry with one value only and
        ``absent`` is None.
    ParameterError
        If ``q`` is not a probability, ``absent`` is not a value of every entry, or
        ``relation`` is not ``"add_remove"`` or ``"replace_one"``.
    ProblemTooLargeError
        Above dpcap's dense limit, the summation limit (2^31 probabilities) or the pair
        limit.

    Notes
    -----
    **Theorem** (Li, Qardaji, Su 2012; Balle, Barthe, Gaboardi 2018): if ``mechanism``
    is ε-DP between a record present and absent, the subsampled mechanism is
    ``ε' = log(1 + q(e^ε − 1))``-DP under add/remove. Proof of the bound here: for the pair
    ``x_i = v`` / ``x_i = ⊥`` and any sample of the others, the rows are ``(1 − q)A + qB`` and
    ``A`` with ``B ≤ e^ε A``; the reverse ratio ``A/((1 − q)A + qB) ≤ 1/(1 − q + qe^{−ε})``
    is smaller. If ``mechanism`` is also ε-DP between two present values (ε-DP on the extended
    domain under ``"hamming"``), the same ``ε'`` bounds the replace-one level: the rows are
    ``(1 − q)A + qB`` and ``(1 − q)A + qB'`` with ``B, B' ∈ [e^{−ε}A, e^ε A]`` and
    ``B ≤ e^ε B'``, whose ratio is largest at ``B = e^ε A``, ``B' = A``.

    It is attained when one output has ratio ``e^ε`` for every sample of the others: binary
    randomized response with ``absent=0`` (``ε' = log(1 + q(e^ε − 1))`` under both relations),
    a count of ones with truncated geometric noise. With ⊥ answered by a fair coin instead, the
    add/remove level is ``−log(1 − q tanh(ε/2))`` (the absent row against the present one, at
    the output the present record makes less likely) and the replace-one level
    ``2 artanh(q tanh(ε/2))``. A mechanism that *shows* who was sampled (each unsampled record
    released as a visible ⊥) is not amplified: the replace-one level stays ε.

    References
    ----------
    N. Li, W. Qardaji, D. Su, "On sampling, anonymization, and differential privacy", ASIACCS
    2012. B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling:
    tight analyses via couplings and divergences", NeurIPS 2018.

    Examples
    --------
    Randomized response on one record, an absent record read as 0:

    >>> import math
    >>> import dpcap
    >>> from dpcap.mechanisms import randomized_response
    >>> M = poisson_subsample(randomized_response(2, 1.0), 0.1, absent=0)
    >>> M.shape  # values 0, 1 and absent
    (3,)
    >>> math.isclose(dpcap.dp_epsilon(M), math.log(1 + 0.1 * (math.e - 1)))
    True
    """
    q = check.probability_scalar(q, "q")
    chosen = _relation(relation)
    return _poisson(_extended(mechanism, absent, "mechanism"), q, chosen)


def shared_sample(
    *mechanisms: Any, q: float, absent: int | None = None, relation: str = "add_remove"
) -> Mechanism:
    r"""Several releases that all read **one** Poisson sample: the joint output's mechanism.

    ``W[x, (y_1, …, y_k)] = Σ_S P(S | x) Π_j M_j[z(x, S), y_j]``, i.e.
    ``poisson_subsample(compose(M_1, …, M_k), q)`` (:func:`dpcap.compose` on the extended
    domain), outputs in C order (``y_1`` slowest).

    Parameters
    ----------
    *mechanisms : Mechanism, Channel or array_like
        The releases, each a mechanism on the sample as for :func:`poisson_subsample`, all on
        the same domain.
    q : float, keyword-only
        Sampling probability of each record, in ``[0, 1]``.
    absent : int, keyword-only, optional
        The value an absent record is read as, for every release (default: each has its ⊥).
    relation : {"add_remove", "replace_one"}, keyword-only
        As for :func:`poisson_subsample`.

    Returns
    -------
    Mechanism
        The joint release, ``Π_j |Y_j|`` outputs, carrying the relation.

    Raises
    ------
    ChannelError, MechanismError
        If no mechanism is given, a part is not a stochastic matrix (named ``mechanisms[j]``),
        or the parts' domains differ.
    ParameterError, ProblemTooLargeError
        As for :func:`poisson_subsample` and :func:`dpcap.compose`.

    Notes
    -----
    Amplification theorems are stated for a fresh sample per release. Composing the amplified
    levels of ``k`` releases, ``k log(1 + q(e^ε − 1))``, is the exact level of ``k``
    independent samples (``compose`` of ``k`` :func:`poisson_subsample`), and it is **not** a
    bound for one shared sample: the ``k`` releases of an ε-DP mechanism on one sample are one
    kε-DP mechanism, amplified once, at most ``log(1 + q(e^{kε} − 1))`` — attained by
    randomized response on one record (``absent=0``), and above ``k log(1 + q(e^ε − 1))``
    for ``0 < q < 1``, ``k ≥ 2``, ``ε > 0`` because ``(1 − q + qe^ε)^k < 1 − q + qe^{kε}``
    (Jensen, ``t ↦ t^k`` convex). The shared sample is not always worse: randomized response
    whose absent record answers with a fair coin, at ``q = 0.2``, ``ε = 1``, has a replace-one
    level below ``k`` times its amplified level for ``k = 2, 3, 4`` and above it from
    ``k = 5``. Only the exact mechanism says which.

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses
    via couplings and divergences", NeurIPS 2018.

    Examples
    --------
    >>> import math
    >>> import dpcap
    >>> from dpcap.mechanisms import randomized_response
    >>> rr = randomized_response(2, 1.0)
    >>> M = shared_sample(rr, rr, q=0.1, absent=0)
    >>> shared = dpcap.dp_epsilon(M)
    >>> math.isclose(shared, math.log(1 + 0.1 * (math.exp(2.0) - 1)))
    True
    >>> shared > 2 * math.log(1 + 0.1 * (math.e - 1))  # composed amplified levels: too small
    True
    """
    q = check.probability_scalar(q, "q")
    chosen = _relation(relation)
    if not mechanisms:
        raise MechanismError("shared_sample needs at least one mechanism, got none")
    parts = []
    for j, part in enumerate(mechanisms):
        ext = _extended(part, absent, f"mechanisms[{j}]")
        sizes = tuple(m + 1 for m in ext.dims)
        K = ext.T.shape[-1]
        flat = ext.T.reshape(-1, K)
        logs = None if ext.L is None else ext.L.reshape(-1, K)
        parts.append(Mechanism(flat, sizes, log_matrix=logs))
    joint = compose(*parts, neighbors="hamming")
    ext = _Extended(
        joint.matrix.reshape(*joint.shape, joint.n_outputs),
        None
        if joint.log_matrix is None
        else joint.log_matrix.reshape(*joint.shape, joint.n_outputs),
        tuple(s - 1 for s in joint.shape),
    )
    return _poisson(ext, q, chosen)


# --------------------------------------------------------------------------- without replacement


def sample_without_replacement(
    mechanism: Any, size: int, *, absent: int | None = None
) -> Mechanism:
    r"""The mechanism that samples ``size`` of the ``n`` records uniformly without replacement,
    then runs ``mechanism`` on the sample.

    ``W[x, y] = C(n, s)^{−1} Σ_{|S| = s} M[z(x, S), y]``, ``z(x, S)`` keeping the records of
    ``S`` and marking the others absent (⊥). Every record of ``x`` is present (the population
    has ``n`` records), so the relation is replace-one.

    Parameters
    ----------
    mechanism : Mechanism, Channel or array_like
        The mechanism on the sample, as for :func:`poisson_subsample`.
    size : int
        Sample size ``s`` in ``[0, n]``.
    absent : int, keyword-only, optional
        The value an absent record is read as; default None (the mechanism has its own ⊥).

    Returns
    -------
    Mechanism
        Shape ``(m_1, …, m_n)``, the outputs of ``mechanism``, carrying ``"hamming"``.

    Raises
    ------
    ChannelError, MechanismError
        As for :func:`poisson_subsample`.
    ParameterError
        If ``size`` is not an integer in ``[0, n]`` or ``absent`` is not a value of every
        entry.
    ProblemTooLargeError
        If ``C(n, s) × rows × outputs`` is above 2^31 probabilities summed, or the matrix is
        above dpcap's dense limit.

    Notes
    -----
    **Theorem** (Balle, Barthe, Gaboardi 2018): if ``mechanism`` depends on the sample
    only through its multiset of records and is ε-DP when one sampled record is replaced, the
    result is ``log(1 + (s/n)(e^ε − 1))``-DP under replace-one. A count of ones with truncated
    geometric noise attains it (the all-zero database against one 1). Computed exactly, one
    sample at a time: ``C(n, s)`` broadcast additions of the mechanism's tensor.

    References
    ----------
    B. Balle, G. Barthe, M. Gaboardi, "Privacy amplification by subsampling: tight analyses
    via couplings and divergences", NeurIPS 2018.

    Examples
    --------
    >>> import math
    >>> import dpcap
    >>> from dpcap.mechanisms import counting_query, truncated_geometric
    >>> count = counting_query(3, truncated_geometric(3, 1.0))
    >>> M = sample_without_replacement(count, 1, absent=0)
    >>> M.shape
    (2, 2, 2)
    >>> math.isclose(dpcap.dp_epsilon(M), math.log(1 + (math.e - 1) / 3))
    True
    """
    ext = _extended(mechanism, absent, "mechanism")
    n, dims, K = len(ext.dims), ext.dims, ext.T.shape[-1]
    s = check.integer(size, "size", minimum=0)
    if s > n:
        raise ParameterError(f"size must be an integer in [0, {n}] (n = {n}), got {size!r}")
    rows = math.prod(dims)
    samples = math.comb(n, s)
    work = samples * rows * K
    if work > MAX_SAMPLE_WORK:
        raise ProblemTooLargeError(
            f"sampling {s} of {n} records: {samples} samples x {rows} databases x {K} outputs "
            f"= {work} probabilities to sum, above dpcap's limit of {MAX_SAMPLE_WORK} "
            "; use fewer entries, a smaller or larger sample, or fewer outputs"
        )
    check.dense_size(rows, K, f"sampling {s} of {n} records")
    T = np.zeros((*dims, K))
    for index in _samples(dims, s):
        T += ext.T[index]
    T /= samples
    L: FloatArray | None = None
    if ext.L is not None or (T < TINY).any():  # sums whose terms may have underflowed
        logs = ext.logs()
        L = np.full((*dims, K), -np.inf)
        for index in _samples(dims, s):
            np.logaddexp(L, logs[index], out=L)
        L = np.minimum(L - math.log(samples), 0.0).reshape(rows, K)
    return Mechanism(T.reshape(rows, K), dims, neighbors="hamming", log_matrix=L)


def _samples(dims: tuple[int, ...], s: int) -> Any:
    """For each sample of ``s`` of the ``n`` records, the index of the extended tensor that
    reads it: every value of a sampled entry, the absent value ⊥ of the others."""
    for S in itertools.combinations(range(len(dims)), s):
        chosen = set(S)
        yield tuple(slice(0, m) if i in chosen else slice(m, m + 1) for i, m in enumerate(dims))
