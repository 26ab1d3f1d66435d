"""Structured database queries beyond counts: histograms and bounded sums.

Both are :class:`~dpcap.channel.AdditiveMechanism` objects (a sum of per-entry integer scores,
then a noise channel), so :func:`dpcap.capacity`, :func:`dpcap.midp`, :func:`dpcap.dp_epsilon`,
:func:`dpcap.dp_delta_curve` and their relatives work on the reachable totals and never
enumerate the ``Π m_i`` databases (:mod:`dpcap.shannon.structured`).
"""

from __future__ import annotations

import math
from collections.abc import Set
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.channel import AdditiveMechanism, Channel, Mechanism
from dpcap.errors import ChannelError, MechanismError

__all__ = ["bounded_sum", "histogram"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def bounded_sum(score_sets: Any, noise: Any) -> AdditiveMechanism:
    """A noisy sum of entries that each take a value in their own finite set of integers.

    ``Y ~ noise[Σ_i x_i − lowest]`` where entry ``i`` takes a value in ``S_i`` (its ``a``-th
    value is ``S_i[a]``; a Python ``set`` is sorted first) and ``lowest = Σ_i min S_i``.
    This is :meth:`dpcap.Mechanism.additive` with ``scores = score_sets``.

    Parameters
    ----------
    score_sets : sequence of sequences of int
        ``score_sets[i]`` lists the values entry ``i`` can hold (``m_i`` of them).
    noise : Channel or array_like, shape (Σ_i (max S_i − min S_i) + 1, n_outputs)
        Row ``t`` is the output law of the sum ``lowest + t``.

    Returns
    -------
    AdditiveMechanism
        ``shape = (|S_1|, …, |S_n|)``, carrying ``"hamming"``.

    Raises
    ------
    MechanismError
        If a score set is empty or holds a non-integer, or ``noise`` does not have one row per
        possible sum.
    ChannelError
        If ``noise`` is not a stochastic matrix.

    Notes
    -----
    Changing entry ``i`` moves the sum by at most ``Δ_i = max S_i − min S_i``, so with noise
    rows ``N_t`` the ε-DP level (Hamming) is the largest ``max_y |log N_t[y] − log N_{t'}[y]|``
    over sums ``t, t'`` that one entry can move between. For the truncated geometric noise of
    parameter ε on ``{0, …, span}`` (Ghosh, Roughgarden, Sundararajan, "Universally
    utility-maximizing privacy mechanisms", STOC 2009) the ratio of rows ``t`` and ``t + d``
    at output 0 is ``e^{dε}``, the largest over all outputs: the level is ``max_i Δ_i · ε``.

    Examples
    --------
    >>> import math, dpcap
    >>> from dpcap.mechanisms import truncated_geometric
    >>> M = bounded_sum([[0, 1, 2], [0, 1, 2], [0, 1]], truncated_geometric(5, 0.5))
    >>> M.shape, math.isclose(dpcap.dp_epsilon(M), 2 * 0.5)
    ((3, 3, 2), True)
    """
    try:
        sets = [sorted(s) if isinstance(s, Set) else s for s in score_sets]
    except TypeError as exc:
        raise MechanismError(
            f"score_sets must be a sequence of integer sets, got {check.show(score_sets)}"
        ) from exc
    scores = check.integer_vectors(sets, "score_sets", "integer sets")
    return Mechanism.additive(scores, noise)


def histogram(cells: Any, noise: Any) -> AdditiveMechanism:
    """Per-cell counts of a database, each released through its own, independent noise.

    Entry ``i`` falls in the cell ``cells[i][x_i]`` of ``{0, …, k−1}``; the output is the tuple
    ``(Y_0, …, Y_{k−1})`` with ``Y_j ~ N_j[c_j(x^n)]`` independent given the counts
    ``c_j = #{i : cells[i][x_i] = j}``, flattened in C order (``Y_0`` varies slowest).

    Parameters
    ----------
    cells : sequence of sequences of int
        ``cells[i][a]`` is the cell of value ``a`` of entry ``i``. ``[range(k)] * n``: ``n``
        entries each holding one of ``k`` categories.
    noise : Channel or array_like, or a sequence of them
        The noise ``N_j`` of each cell, with ``n + 1`` rows (counts ``0..n``); one channel is
        used for every cell, ``k = 1 + max`` cell. A sequence gives one per cell (``k`` is its
        length).

    Returns
    -------
    AdditiveMechanism
        ``shape = (len(cells[0]), …)``, ``Π_j |Y_j|`` outputs, carrying ``"hamming"``.

    Raises
    ------
    MechanismError
        If a cell is negative or ``≥ k``, or a cell map is empty or not integer.
    ChannelError
        If a noise channel does not have ``n + 1`` rows.
    ProblemTooLargeError
        If the noise table below exceeds dpcap's dense limit.

    Notes
    -----
    The counts are a sum of per-entry scores in mixed radix ``B = n + 1``: cell ``j ≥ 1``
    scores ``B^{j−1}`` and cell 0 scores 0, so the total ``t = Σ_{j≥1} c_j B^{j−1}`` has the
    digits ``c_1, …, c_{k−1}`` (each ``≤ n < B``, no carries) and ``c_0 = n − Σ_{j≥1} c_j``.
    The noise row of ``t`` is ``N_0[c_0] ⊗ … ⊗ N_{k−1}[c_{k−1}]``. The table has one row per
    total from the lowest to the highest, ``≤ n·B^{k−2} + 1`` rows (``n + 1`` for two cells),
    of which only the ``≤ C(n+k−1, k−1)`` count vectors are reachable; the others (digits
    summing above ``n``) hold the row of count vector ``(n, 0, …, 0)`` and are never used by a
    metric (they are not reachable totals).

    A neighbour moves one entry from cell ``a`` to cell ``b``: the two laws differ in ``Y_a``
    (counts ``c_a`` vs ``c_a − 1``) and ``Y_b``; a likelihood ratio of a product is the product
    of the ratios, so ``ε = max (ε_a(c_a, c_a − 1) + ε_b(c_b, c_b + 1))`` over the moves and
    counts that occur; with the truncated geometric noise of parameter ε on every cell and
    ``n ≥ 2`` this is ``2ε`` (Dwork & Roth, "The algorithmic foundations of differential
    privacy", 2014, §3.3: a histogram has L1 sensitivity 2 under replacement).

    Examples
    --------
    >>> import math, dpcap
    >>> from dpcap.mechanisms import truncated_geometric
    >>> M = histogram([range(3)] * 4, truncated_geometric(4, 0.5))
    >>> M.shape, M.n_outputs, math.isclose(dpcap.dp_epsilon(M), 2 * 0.5)
    ((3, 3, 3, 3), 125, True)
    """
    maps = [c.astype(np.int64) for c in check.integer_vectors(cells, "cells", "integer cell maps")]
    n = len(maps)
    noises = _noises(noise, n, 1 + max(int(c.max()) for c in maps))
    k = len(noises)
    for i, c in enumerate(maps):
        if int(c.min()) < 0 or int(c.max()) >= k:
            raise MechanismError(
                f"cells[{i}] must hold cells in [0, {k - 1}] (one per noise channel), got "
                f"{check.show(c)}"
            )
    base = n + 1
    # The table has a row per total of the mixed-radix code (about n·(n+1)^(k−2) rows, more
    # than the C(n+k−1, k−1) count vectors): sized with Python integers before any array.
    top = [max(base ** (int(c.max()) - 1) if int(c.max()) > 0 else 0, 0) for c in maps]
    width = math.prod(N.n_outputs for N in noises)
    check.dense_size(
        sum(top) + 1,
        width,
        "the noise table of this histogram (one row per total of its count code)",
        hint="fewer cells or entries are needed",
    )
    weights = np.array([0] + [base**j for j in range(k - 1)], dtype=np.int64)
    scores = [weights[c] for c in maps]
    lowest = sum(int(s.min()) for s in scores)
    span = sum(int(s.max()) - int(s.min()) for s in scores) + 1
    counts = _counts(np.arange(lowest, lowest + span, dtype=np.int64), n, k)
    table = np.ones((span, 1))
    logs: FloatArray | None = None
    log_noises = [_log_of(N) for N in noises]
    if any(L is not None for L in log_noises):
        logs = np.zeros((span, 1))
    for j, N in enumerate(noises):
        rows = counts[:, j]
        table = (table[:, :, None] * N.matrix[rows][:, None, :]).reshape(span, -1)
        if logs is not None:
            L = log_noises[j]
            with np.errstate(divide="ignore"):
                part = np.log(N.matrix[rows]) if L is None else L[rows]
            logs = (logs[:, :, None] + part[:, None, :]).reshape(span, -1)
    channel = Channel(table, log_matrix=logs) if logs is not None else table
    return Mechanism.additive(scores, channel)


def _noises(noise: Any, n: int, k: int) -> list[Channel]:
    """One validated channel per cell, each with ``n + 1`` rows (counts 0..n)."""
    single = isinstance(noise, (Channel, np.ndarray))
    if not single:
        try:
            parts = list(noise)
        except TypeError as exc:
            raise ChannelError(
                f"noise must be a channel or a sequence of them, got {check.show(noise)}"
            ) from exc
        single = not all(isinstance(N, Channel) or np.ndim(N) == 2 for N in parts) or not parts
    items = [noise] * k if single else parts
    out = []
    for j, N in enumerate(items):
        name = "noise" if single else f"noise[{j}]"
        ch = N if isinstance(N, Channel) else Channel(check.stochastic_matrix(N, name))
        if ch.n_inputs != n + 1:
            raise ChannelError(
                f"{name} must have n + 1 = {n + 1} rows (one per count 0..{n}), got {ch.n_inputs}"
            )
        out.append(ch)
    return out


def _counts(totals: IntArray, n: int, k: int) -> IntArray:
    """The count vector ``(c_0, …, c_{k−1})`` of each total in radix ``n + 1``; an invalid
    total (digits summing above ``n``) gets ``(n, 0, …, 0)``."""
    counts = np.zeros((len(totals), k), dtype=np.int64)
    rest = totals.copy()
    for j in range(1, k):
        counts[:, j] = rest % (n + 1)
        rest //= n + 1
    counts[:, 0] = n - counts[:, 1:].sum(axis=1)
    bad = counts[:, 0] < 0
    counts[bad] = 0
    counts[bad, 0] = n
    return counts


def _log_of(N: Channel) -> FloatArray | None:
    logs = N.log_matrix
    return None if logs is None else np.asarray(logs)
