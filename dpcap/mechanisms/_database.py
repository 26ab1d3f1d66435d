"""Database mechanisms on ``X_1 × … × X_n``: counting queries, the one-time pad, Cuff–Yu's examples.

Every constructor returns a :class:`~dpcap.channel.Mechanism` whose rows are the databases in C
order (``numpy.ravel_multi_index(x^n, shape)``, ``docs/mathematics.rst`` §2) and that carries
the neighbour relation ``"hamming"`` (databases that differ in one entry; ``per_entry`` lifts
the relation of its local channel instead, so a channel on a line of values gives ``"line"``).
The database comes first in every signature (the number of entries, their alphabet), then
what is applied to it (the noise channel, a probability). The dense matrix has
``Π m_i × |Y|`` entries; its size is checked before anything is allocated, and a problem above
dpcap's dense limit raises :class:`~dpcap.result.ProblemTooLargeError` pointing to the structured
(query followed by noise) form.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import AdditiveMechanism, Channel, Mechanism
from dpcap.errors import ChannelError, ParameterError, ProblemTooLargeError
from dpcap.line_noise import LineNoise

__all__ = ["counting_query", "one_time_pad", "per_entry", "revealing"]

FloatArray = NDArray[np.float64]


def _check_product_size(base: int, n: int, cols_base: int, cols_exp: int, what: str) -> None:
    """Guard a ``base**n × cols_base**cols_exp`` matrix without forming huge integers."""
    log2_size = n * math.log2(base) + cols_exp * math.log2(cols_base)
    if log2_size > 62:
        cols = f"{cols_base}**{cols_exp}" if cols_exp > 1 else f"{cols_base}"
        raise ProblemTooLargeError(
            f"{what} would be a dense {base}**{n} x {cols} matrix, above dpcap's limit of "
            f"{check.MAX_DENSE_ELEMENTS} entries; describe the mechanism by its structure (a query "
            "followed by a noise channel) instead of enumerating every database"
        )
    check.dense_size(base**n, cols_base**cols_exp, what)


def counting_query(n: int, noise: Any) -> AdditiveMechanism:
    r"""A noisy count of ``n`` binary entries: ``W[x^n] = noise[Σ_i x_i]``.

    Parameters
    ----------
    n : int
        Number of entries ``n >= 1``, each in ``{0, 1}``.
    noise : Channel or array_like, shape (n + 1, K)
        Row ``c`` is the output law when the count is ``c`` (e.g. ``truncated_geometric(n, ε)``).

    Returns
    -------
    AdditiveMechanism
        ``shape = (2,) * n``, ``K`` outputs, carrying ``neighbors="hamming"`` (databases that
        differ in one entry: counts that differ by one), in structured form (the count followed
        by the noise): DP metrics and MI-DP never enumerate the ``2^n`` databases; ``.matrix``
        builds the dense matrix on demand, under dpcap's memory limit.

    Raises
    ------
    ParameterError
        If ``n`` is not an integer ``>= 1``.
    ChannelError
        If ``noise`` is not a stochastic matrix with ``n + 1`` rows.

    Notes
    -----
    Changing one entry moves the count by one, so with ``W_c`` the noise rows:

    * ε-DP level (Hamming neighbours) = ``max_c max_y |log W_c[y] − log W_{c+1}[y]|``, the
      line-neighbour level of ``noise``;
    * MI-DP = ``max_{c=0..n−1} C([W_c; W_{c+1}])``: the slice of entry i for a context with
      ``c`` ones is the two-row channel of counts c and c+1 (Cuff & Yu Def. 2);
    * the free-lunch capacity ``sup I(X^n; Y) = C(noise)``: the count takes every value.

    Cuff & Yu, Example 3 is this mechanism with (continuous) Laplace noise: with correlated
    entries ``I(X_i; Y)`` can approach ``log 2`` while the MI-DP stays small.

    References
    ----------
    P. Cuff, L. Yu, "Differential privacy as a mutual information constraint", CCS 2016,
    Def. 2, Example 3.

    Examples
    --------
    >>> import numpy as np
    >>> M = counting_query(2, [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    >>> M.shape
    (2, 2)
    >>> M.matrix  # rows 00, 01, 10, 11 -> counts 0, 1, 1, 2
    array([[1. , 0. ],
           [0.5, 0.5],
           [0.5, 0.5],
           [0. , 1. ]])
    """
    n = check.integer(n, "n", minimum=1)
    line = isinstance(noise, LineNoise)  # kept by its structure, rows on demand
    V = noise if line else check.stochastic_matrix(noise, "noise")
    if V.shape[0] != n + 1:
        raise ChannelError(
            f"noise must have n + 1 = {n + 1} rows (one per count 0..n), got {V.shape[0]}"
        )
    # a channel keeps its log matrix (entries that underflow) into the mechanism
    return Mechanism.additive([[0, 1]] * n, noise if isinstance(noise, Channel) else V)


def one_time_pad(m: int) -> Mechanism:
    r"""The one-time pad with the key as a second entry: ``Y = (X_1 + X_2) mod m``.

    Cuff & Yu, Example 4: ``Y_1 = X_1 ⊕ U``, ``Y_2 = U``. Here the key ``U`` is held as database
    entry ``X_2`` and only the ciphertext is released, deterministically.

    Parameters
    ----------
    m : int
        Alphabet size of both entries and of the output, ``m >= 2``.

    Returns
    -------
    Mechanism
        ``shape = (m, m)``, ``m`` outputs; ``W[(x_1, x_2), y] = [y = (x_1 + x_2) mod m]``;
        carrying ``neighbors="hamming"``.

    Raises
    ------
    ParameterError
        If ``m`` is not an integer ``>= 2``.
    ProblemTooLargeError
        If the ``m² × m`` matrix is above dpcap's dense limit.

    Notes
    -----
    * Every slice (one entry known to the adversary) is a permutation matrix: the strong
      adversary decrypts, ``sup I(X_1; Y | X_2) = log m``. MI-DP = ``log m`` (for both entries),
      ε-DP level ``∞``.
    * With ``X_2`` uniform and independent of ``X_1``, ``Y`` is uniform and independent of
      ``X_1``: ``I(X_1; Y) = 0`` for every law of ``X_1``. Conditioning on the rest of the
      database can *increase* the leakage (Cuff & Yu Property 4).
    * Free-lunch capacity ``sup I(X^n; Y) = log m``.

    References
    ----------
    P. Cuff, L. Yu, "Differential privacy as a mutual information constraint", CCS 2016,
    Example 4 and Property 4.

    Examples
    --------
    >>> one_time_pad(2).matrix  # rows (0,0), (0,1), (1,0), (1,1)
    array([[1., 0.],
           [0., 1.],
           [0., 1.],
           [1., 0.]])
    """
    m = check.integer(m, "m", minimum=2)
    _check_product_size(m, 2, m, 1, f"one_time_pad(m={m})")
    x1, x2 = np.divmod(np.arange(m * m), m)
    W = np.zeros((m * m, m))
    W[np.arange(m * m), (x1 + x2) % m] = 1.0
    return Mechanism(W, (m, m), neighbors="hamming")


def revealing(n: int, m: int, prob: float) -> Mechanism:
    r"""The finite form of Cuff & Yu, Example 5: reveal the common value when all entries agree.

    Outputs ``0, …, m−1`` (a value), then ``e1 = m`` (erasure), then ``e2 = m + 1`` ("the
    entries differ"); ``m + 2`` in all. If every entry equals v: ``Y = v`` w.p. ``prob``, ``e1``
    otherwise. Otherwise: ``Y = e2`` w.p. ``prob``, ``e1`` otherwise (Cuff & Yu eqs. 48–49 with
    ``ε = prob``).

    Parameters
    ----------
    n : int
        Number of entries, ``n >= 2``.
    m : int
        Alphabet size of each entry, ``m >= 2``.
    prob : float
        Probability of an unerased output, in ``[0, 1]``.

    Returns
    -------
    Mechanism
        ``shape = (m,) * n``, ``m + 2`` outputs, carrying ``neighbors="hamming"``.

    Raises
    ------
    ParameterError
        If ``n < 2``, ``m < 2`` or ``prob`` is not in ``[0, 1]``.
    ProblemTooLargeError
        If the ``m^n × (m + 2)`` matrix is above dpcap's dense limit.

    Notes
    -----
    * MI-DP = ``prob · ln 2``: when the other entries all equal v, the slice of entry i is a
      binary erasure channel (input ``X_i = v`` or not) with erasure probability ``1 − prob``;
      when they do not all agree the slice is constant (capacity 0).
    * The free-lunch capacity ``sup I(X^n; Y) = prob · log(m + 1)`` (eq. 51 for ``n = 2``; the
      same for every ``n >= 2``): the rows take ``m + 1`` distinct values, an erasure channel
      with ``m + 1`` unerased symbols. So leakage about a *group* of entries is not bounded by
      the MI-DP (no group privacy property; Cuff & Yu §5).
    * ε-DP level ``∞`` when ``prob > 0`` (a revealed value has probability 0 elsewhere).

    References
    ----------
    P. Cuff, L. Yu, "Differential privacy as a mutual information constraint", CCS 2016,
    Example 5, eqs. (48)–(51).

    Examples
    --------
    >>> revealing(2, 2, 0.5).matrix  # rows (0,0), (0,1), (1,0), (1,1); outputs 0, 1, e1, e2
    array([[0.5, 0. , 0.5, 0. ],
           [0. , 0. , 0.5, 0.5],
           [0. , 0. , 0.5, 0.5],
           [0. , 0.5, 0.5, 0. ]])
    """
    n = check.integer(n, "n", minimum=2)
    m = check.integer(m, "m", minimum=2)
    p = check.probability_scalar(prob, "prob")
    _check_product_size(m, n, m + 2, 1, f"revealing(n={n}, m={m})")
    rows = m**n
    W = np.zeros((rows, m + 2))
    W[:, m] = 1.0 - p
    W[:, m + 1] = p
    # The database (v, v, …, v) has row v · (1 + m + … + m^{n−1}).
    values = np.arange(m)
    constant = values * ((rows - 1) // (m - 1))
    W[constant, m + 1] = 0.0
    W[constant, values] = p
    return Mechanism(W, (m,) * n, neighbors="hamming")


def per_entry(n: int, noise: Any) -> Mechanism:
    r"""The same local channel applied independently to each of ``n`` entries.

    ``W[x^n, y^n] = Π_i noise[x_i, y_i]``: the n-fold Kronecker product of ``noise``, with outputs
    ``y^n`` in C order (row of ``y^n`` = ``ravel_multi_index(y^n, (K,) * n)``).

    Parameters
    ----------
    n : int
        Number of entries ``n >= 1``.
    noise : Channel or array_like, shape (m, K)
        The local channel of one entry.

    Returns
    -------
    Mechanism
        ``shape = (m,) * n``, ``K^n`` outputs. It carries the relation of ``noise`` lifted to
        databases (:func:`dpcap.neighbors.lift`): one entry moves as ``noise``'s relation
        allows. A channel carrying ``"all"`` (randomised response) or a plain array gives
        ``"hamming"``; one carrying ``"line"`` (truncated geometric) gives ``"line"``.

    Raises
    ------
    ParameterError
        If ``n`` is not an integer ``>= 1`` (or the arguments are in the old order,
        ``per_entry(noise, n)``).
    ChannelError
        If ``noise`` is not a stochastic matrix.
    ProblemTooLargeError
        If the ``m^n × K^n`` matrix is above dpcap's dense limit.

    Notes
    -----
    * MI-DP = ``C(noise)``: given ``X^{-i}`` the other outputs ``Y_{-i}`` are independent of
      ``X_i``, so every slice of entry i is ``noise`` followed by an independent output, with
      capacity ``C(noise)``.
    * ε-DP level under the carried relation = the level of ``noise`` under its own relation
      (e.g. the local, all-pairs level for a plain array under ``"hamming"``).
    * Free-lunch capacity ``sup I(X^n; Y^n) = n · C(noise)`` (capacity of a product channel).
    * Where a product of entries underflows, the mechanism keeps ``log W`` (sums of the logs of
      ``noise``; :attr:`~dpcap.channel.Mechanism.log_matrix`) for the DP metrics.

    References
    ----------
    P. Cuff, L. Yu, "Differential privacy as a mutual information constraint", CCS 2016,
    Def. 2 and Cor. 4 (partial queries).

    Examples
    --------
    >>> M = per_entry(2, [[0.75, 0.25], [0.25, 0.75]])
    >>> M.matrix[1]  # x = (0, 1): P(y) for y = 00, 01, 10, 11
    array([0.1875, 0.5625, 0.0625, 0.1875])
    >>> M.neighbors
    'hamming'
    """
    if np.ndim(n) == 2 and isinstance(noise, (int, np.integer)) and not isinstance(noise, bool):
        raise ParameterError(
            "per_entry takes the number of entries first: per_entry(n, noise), "
            f"got per_entry(noise, {noise!r})"
        )
    n = check.integer(n, "n", minimum=1)
    V = check.stochastic_matrix(noise, "noise")
    m, k = V.shape
    _check_product_size(m, n, k, n, f"per_entry(n={n}, noise of shape {V.shape})")
    W: FloatArray = V.copy()
    for _ in range(n - 1):
        W = np.kron(W, V).astype(np.float64, copy=False)
    local = noise.neighbors if isinstance(noise, Channel) else "hamming"
    lifted = relations.lift(local, (m,) * n)
    log_v = getattr(noise, "log_matrix", None)
    if log_v is None and not (W < TINY).any():
        return Mechanism(W, (m,) * n, neighbors=lifted)
    if log_v is None:
        log_v = np.full(V.shape, -np.inf)
        np.log(V, out=log_v, where=V > 0)
    logs = log_v
    for _ in range(n - 1):  # log of the Kronecker product: sums of logs
        logs = (logs[:, None, :, None] + log_v[None, :, None, :]).reshape(
            logs.shape[0] * m, logs.shape[1] * k
        )
    return Mechanism(W, (m,) * n, neighbors=lifted, log_matrix=logs)
