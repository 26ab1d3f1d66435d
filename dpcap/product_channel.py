"""Composition: independent releases of several mechanisms on the same database.

Releasing ``Y_1, …, Y_k`` from mechanisms ``W_1, …, W_k`` that read the same database ``x`` and
draw their randomness independently is one mechanism, the *product channel*

    W[x, (y_1, …, y_k)] = Π_j W_j[x, y_j],

with one row per database (the databases, their shape and their neighbour relation are those
of the parts) and one column per tuple of outputs, in C order (``y_1`` slowest: the column of
``(y_1, …, y_k)`` is ``numpy.ravel_multi_index((y_1, …, y_k), (|Y_1|, …, |Y_k|))``).

Its privacy is what Cuff & Yu's composition theorems bound (:mod:`dpcap.bounds`):
MI-DP at most ``Σ_j ε_j`` (Corollary 2), ``max_j ε_j`` when the parts read disjoint entries
(Corollary 4), and ε-DP at most ``Σ_j ε_j`` (basic composition). :func:`compose` builds the
mechanism itself, so the exact numbers sit next to the bounds.

**Structure.** If every part is an additive mechanism on the same scores
(:meth:`dpcap.Mechanism.additive`: ``W_j[x] = N_j[S(x)]`` with the same ``S = Σ_i s_i(x_i)``),
then ``W[x, (y_1, …, y_k)] = Π_j N_j[S(x), y_j] = N[S(x), (y_1, …, y_k)]`` with
``N[t] = N_1[t] ⊗ … ⊗ N_k[t]``, the row-wise Kronecker product of the noises: the composition
is additive on the same scores, and every structured query (MI-DP, the DP metrics, the
capacities) works on the ``|T| × Π_j |Y_j|`` noise instead of the ``Π_i m_i`` databases.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap._core.log_matrix import TINY
from dpcap.channel import AdditiveMechanism, Channel, Mechanism, as_mechanism
from dpcap.errors import MechanismError
from dpcap.neighbors import Neighbors
from dpcap.solvers import divergence

__all__ = ["compose"]

FloatArray = NDArray[np.float64]

_FEWER = "compose fewer releases, or fewer outputs per release"
_ROWS_HINT = (
    "; the parts are not all additive on the same scores (Mechanism.additive), so every "
    "database's row is needed"
)
_NOISE_HINT = (
    "the product noise has one column per tuple of outputs; compose fewer releases, or "
    "post-process each noise channel to fewer outputs (Channel.compose)"
)


def compose(*mechanisms: Any, neighbors: Neighbors | None = None) -> Mechanism:
    r"""Independent releases of several mechanisms on the same database: the product channel.

    ``W[x, (y_1, …, y_k)] = Π_j W_j[x, y_j]``, outputs in C order (``y_1`` slowest).

    Parameters
    ----------
    *mechanisms : Mechanism, AdditiveMechanism, Channel or array_like
        The releases ``W_1, …, W_k`` (at least one), each with one row per database; a channel
        or a plain matrix is a one-entry database. All must have the same domain sizes
        ``shape``.
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation the composition carries (:mod:`dpcap.neighbors`). Default: the
        one the parts carry, which must then be the same for all of them (on a one-entry
        domain ``"hamming"`` and ``"all"`` are the same relation).

    Returns
    -------
    Mechanism
        ``shape`` of the parts, ``Π_j |Y_j|`` outputs, the parts' relation. An
        :class:`~dpcap.channel.AdditiveMechanism` (same scores, the row-wise Kronecker product
        of the noises as noise) when every part is additive on the same scores: nothing then
        enumerates the databases. One part is returned as it is (with ``neighbors`` if given).
        Where a product of probabilities underflows, the result keeps its logarithm, the sum
        of the parts' logs (:attr:`~dpcap.channel.Channel.log_matrix`), for the DP metrics.

    Raises
    ------
    MechanismError
        If no mechanism is given, if a part's domain sizes differ from the first's, or if the
        parts carry different relations and ``neighbors`` is not given (the message names the
        part, ``mechanisms[j]``).
    ChannelError
        If a part is not a stochastic matrix (named ``mechanisms[j]``).
    NeighborError
        For an unknown or malformed ``neighbors``.
    ProblemTooLargeError
        If the product (the dense ``Π_i m_i × Π_j |Y_j|`` matrix, or for additive parts the
        ``|T| × Π_j |Y_j|`` noise) is above dpcap's dense limit; checked before anything is
        built, and the message gives the sizes.

    Notes
    -----
    The parts are conditionally independent given the database, so (Cuff & Yu, Corollary 2,
    eq. 43) the MI-DP of the composition is at most ``Σ_j ε_j`` for ε_j-MI-DP parts, and at
    most ``max_j ε_j`` when part j reads only the entries ``I_j`` of disjoint sets
    (Corollary 4, eq. 44); its ε-DP level is at most ``Σ_j ε_j``, with equality when the parts
    attain their levels on the same ordered pair of databases. See
    :func:`dpcap.bounds.midp_composition`, :func:`dpcap.bounds.midp_partial_composition` and
    :func:`dpcap.bounds.dp_composition`.

    For additive parts with equal scores the composition is additive with the noise
    ``N[t] = N_1[t] ⊗ … ⊗ N_k[t]`` (module docstring): ``k`` releases of noise on a count of
    ``n`` entries cost an ``(n + 1) × Π_j |Y_j|`` matrix, not ``2^n`` rows.

    References
    ----------
    P. Cuff, L. Yu, "Differential privacy as a mutual information constraint", CCS 2016,
    §4.2, Corollaries 2–4. C. Dwork, A. Roth, "The algorithmic foundations of differential
    privacy", Found. Trends TCS 9 (2014), Theorem 3.14.

    Examples
    --------
    Two releases of binary randomized response at ε = ln 3 (flip probability 1/4): the outputs
    ``(y_1, y_2)`` of the input 0 have probabilities ``(3/4)², 3/16, 3/16, (1/4)²``, and the
    level is ``2 ln 3``.

    >>> import math
    >>> import dpcap
    >>> from dpcap.mechanisms import randomized_response
    >>> rr = randomized_response(2, math.log(3))
    >>> M = compose(rr, rr)
    >>> M.shape, M.n_outputs
    ((2,), 4)
    >>> M.matrix[0] * 16
    array([9., 3., 3., 1.])
    >>> math.isclose(dpcap.dp_epsilon(M), 2 * math.log(3))
    True
    """
    parts = _parts(mechanisms)
    shape = parts[0].shape
    for j, part in enumerate(parts[1:], start=1):
        if part.shape != shape:
            raise MechanismError(
                f"mechanisms[{j}] has domain sizes {_shape_text(part.shape)}, but mechanisms[0] "
                f"has {_shape_text(shape)}: "
                "the releases must read the same database (a channel or a matrix is a one-entry "
                "database; give it its shape with dpcap.Mechanism(W, shape))"
            )
    relation = _relation(parts, neighbors)
    if len(parts) == 1:  # one release: the mechanism itself
        return parts[0] if neighbors is None else parts[0].with_neighbors(relation)
    outputs = tuple(part.n_outputs for part in parts)
    sizes = " x ".join(_shorten(outputs))
    if _same_scores(parts):
        first = parts[0]
        assert isinstance(first, AdditiveMechanism)
        noises = [p.noise for p in parts if isinstance(p, AdditiveMechanism)]
        what = f"the noise of {len(parts)} additive releases (outputs {sizes})"
        check.dense_size(noises[0].shape[0], math.prod(outputs), what, hint=_NOISE_HINT)
        logs = [p.log_noise for p in parts if isinstance(p, AdditiveMechanism)]
        W, L = _row_products(noises, logs)
        noise = Channel(W, log_matrix=L)
        return Mechanism.additive(list(first.scores), noise, neighbors=relation)
    domain = _shape_text(shape)
    what = f"the composition of {len(parts)} mechanisms on shape {domain} (outputs {sizes})"
    hint = _FEWER + (_ROWS_HINT if len(shape) > 1 else "")
    check.dense_size(math.prod(shape), math.prod(outputs), what, hint=hint)
    W, L = _row_products([p.matrix for p in parts], [p.log_matrix for p in parts])
    return Mechanism(W, shape, neighbors=relation, log_matrix=L)


def _shorten(sizes: tuple[int, ...]) -> list[str]:
    """The sizes for a message: all of them, or the first three and the last."""
    shown = [str(k) for k in sizes]
    return shown if len(shown) <= 6 else [*shown[:3], f"… ({len(shown)} in all)", shown[-1]]


def _shape_text(shape: tuple[int, ...]) -> str:
    """A domain shape for a message, shortened past six entries."""
    return repr(shape) if len(shape) <= 6 else f"({', '.join(_shorten(shape))})"


def _parts(mechanisms: tuple[Any, ...]) -> list[Mechanism]:
    """The parts as mechanisms, each validated under its own name ``mechanisms[j]``."""
    if not mechanisms:
        raise MechanismError("compose needs at least one mechanism, got none")
    parts = []
    for j, M in enumerate(mechanisms):
        if isinstance(M, (list, tuple)) and any(isinstance(m, (Channel, Mechanism)) for m in M):
            raise MechanismError(
                f"mechanisms[{j}] is a sequence of {len(M)} mechanisms; pass them as separate "
                "arguments: compose(*mechanisms)"
            )
        parts.append(as_mechanism(M, f"mechanisms[{j}]"))
    return parts


def _relation(parts: list[Mechanism], neighbors: Neighbors | None) -> Neighbors:
    """``neighbors`` if given (validated), else the relation every part carries."""
    shape = parts[0].shape
    if neighbors is not None:
        return relations.relation(neighbors, shape)
    first = parts[0].neighbors
    for j, part in enumerate(parts[1:], start=1):
        if not _same_relation(first, part.neighbors, len(shape)):
            raise MechanismError(
                f"mechanisms[{j}] carries neighbors={relations.describe(part.neighbors)!r}, "
                f"but mechanisms[0] carries {relations.describe(first)!r}: pass neighbors= to "
                "choose the relation of the composition"
            )
    return first


def _same_relation(a: Neighbors, b: Neighbors, n_entries: int) -> bool:
    """Same relation; on one entry ``"hamming"`` relates every pair of values, as ``"all"``."""
    if relations.same(a, b):
        return True
    every = ("hamming", "all")
    return n_entries == 1 and isinstance(a, str) and isinstance(b, str) and {a, b} <= set(every)


def _same_scores(parts: list[Mechanism]) -> bool:
    """Whether every part is additive on the scores of the first (value by value)."""
    first = parts[0]
    if not isinstance(first, AdditiveMechanism):
        return False
    return all(
        isinstance(p, AdditiveMechanism)
        and all(np.array_equal(a, b) for a, b in zip(p.scores, first.scores, strict=True))
        for p in parts[1:]
    )


def _row_products(
    factors: list[FloatArray], logs: list[FloatArray | None]
) -> tuple[FloatArray, FloatArray | None]:
    """``P[x, (a, b, …)] = F_1[x, a] F_2[x, b] …`` in C order, and its log matrix if needed.

    The log matrix ``Σ_j log F_j`` (a factor's own where it has one, each capped at 0, the log
    of a probability) is built when a factor carries one or when a product of positive entries
    can fall below :data:`~dpcap._core.log_matrix.TINY` (the least positive entries multiply to
    less); there ``P`` takes the exponential of the log (the best subnormal, or 0).
    """
    product = factors[0]
    for F in factors[1:]:
        product = np.einsum("xa,xb->xab", product, F).reshape(product.shape[0], -1)
    floor = sum(math.log(float(F[F > 0].min(initial=1.0))) for F in factors)
    if all(L is None for L in logs) and floor > math.log(TINY) + 1e-9:
        return product, None
    total: FloatArray | None = None
    for F, L in zip(factors, logs, strict=True):
        term = np.minimum(divergence.log(F) if L is None else np.asarray(L, dtype=np.float64), 0.0)
        total = term if total is None else (total[:, :, None] + term[:, None, :])
        total = total.reshape(term.shape[0], -1)
    assert total is not None
    product = np.array(product)
    thin = product < TINY
    product[thin] = np.exp(total[thin])
    return product, total
