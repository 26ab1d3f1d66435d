"""Capacities of additive mechanisms from their reachable totals, without enumerating databases.

An additive mechanism (:meth:`dpcap.Mechanism.additive`) releases ``Y ~ N[S(X^n)]``, where
``S(x^n) = Σ_i s_i(x_i)`` is an integer score and ``N`` a noise channel whose row ``t`` is the
output law of the total ``t``. Write ``T = S(X_1 × … × X_n)`` for the reachable totals and
``R = (N_t)_{t ∈ T}`` for the noise channel restricted to them: the *reduced channel*, with one
row per reachable total. The row of database ``x^n`` is ``W_{x^n} = N_{S(x^n)} = R_{S(x^n)}``.

**Lemma.** Let ``F(p, W)`` depend on the input law ``p`` only through the law of the row
``W_X`` (``X ~ p``). Then ``sup_p F(p, W) = sup_r F(r, R)``, the first supremum over laws on
databases and the second over laws on ``T``; if ``r*`` attains the second, the law
``p* = Σ_t r*_t δ_{d(t)}`` attains the first, for any choice of one database ``d(t)`` with
``S(d(t)) = t`` per reachable total.

*Proof.* For a law ``p`` on databases let ``r = S_# p`` (``r_t = Σ_{S(x)=t} p_x``), a law on
``T``. Since ``W_x = R_{S(x)}``, the row ``W_X`` under ``X ~ p`` and the row ``R_S`` under
``S ~ r`` have the same law, so ``F(p, W) = F(r, R)``: the first supremum is at most the second.
Conversely every law ``r`` on ``T`` is the image of ``p = Σ_t r_t δ_{d(t)}`` (``d(t)`` exists
because ``t`` is reachable, and distinct totals have distinct databases), with
``F(p, W) = F(r, R)``: the two suprema are equal and ``p*`` attains the first. ∎

The measures of dpcap that are such an ``F``, with ``q = Σ_x p_x W_x = E[W_X]``:

* Shannon, ``I(p, W) = Σ_x p_x D(W_x ‖ q)`` (equivalently: ``X^n → S → Y`` is a Markov
  chain and ``S`` is a function of ``X^n``, so ``I(X^n; Y) = I(S; Y)``). Hence the free-lunch
  capacity ``sup_{P_{X^n}} I(X^n; Y)`` (Cuff & Yu, "Differential privacy as a mutual
  information constraint", §6.2) is ``C(R)``;
* Sibson, ``I_α^S(p, W) = (α/(α−1)) log Σ_y (Σ_x p_x W_xy^α)^{1/α}``;
* Augustin–Csiszár, ``min_Q Σ_x p_x D_α(W_x ‖ Q)``;
* the naive α-information ``D_α(P_XY ‖ P_X P_Y) = (1/(α−1)) log Σ_{x,y} p_x W_xy^α q_y^{1−α}``
  (its upper end, the diameter ``max_{x,x'} D_α(W_x ‖ W_x')``, is a maximum over pairs of
  rows, and pairs of equal rows add zero);
* order 0, ``−log max_y Σ_x p_x 1[W_xy > 0]``;
* order ∞ and the maximal leakage ``log Σ_y max_x W_xy``: a maximum over the *set* of rows,
  which is the set of rows of ``R``.

Arimoto's α-information is not of this form (it depends on how ``p`` splits the mass of a
total among its databases), but ``I_α^A(p, W) = I_α^S(p_α, W)`` with the tilted law
``p_α ∝ p^α`` (``docs/mathematics.rst`` §4; Verdú, "α-mutual information", ITA 2015), and the
tilt is a bijection of the simplex that keeps supports: its supremum is ``C_α(R)`` as well,
attained by
``p_A ∝ (p*)^{1/α} = Σ_t r_{A,t} δ_{d(t)}`` with ``r_A ∝ (r*)^{1/α}``, the Arimoto law of ``R``
placed on the same databases.

So every capacity of ``W`` is computed on ``R`` (``|T| × |Y|``, e.g. ``(n + 1) × |Y|`` for a
count of ``n`` binary entries) by the ordinary query, and its certified bracket is ``R``'s: the
rows of ``R`` are the stored noise rows that make up ``W``, so the bracket (with its rounding
allowance, ``docs/mathematics.rst`` §8) holds for the mechanism itself. The attaining law on
databases puts ``r*_t`` on ``d(t)``, the lexicographically first database of total ``t`` (the
first row in C order with that total: the row to which the exact reduction of a dense channel,
:mod:`dpcap.solvers.reduce`, gives the mass of a group of equal rows, unless two totals have
bitwise-equal noise rows, which that reduction merges; the value is the same either way).

The representatives cost ``|T| × n`` integers: above :data:`MAX_WITNESS_ENTRIES` (estimated
from the span of the totals before any work) the query is refused with
:class:`~dpcap.ProblemTooLargeError`. The dense law on databases is given in ``prior`` only
up to :data:`MAX_DENSE_PRIOR` databases (and while the dense matrix would fit in memory).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap._core.partial_sums import first_databases
from dpcap.channel import AdditiveMechanism
from dpcap.errors import ProblemTooLargeError
from dpcap.function_mechanism import FunctionMechanism
from dpcap.result import CapacityResult, StructuredCapacityResult

__all__ = [
    "MAX_DENSE_PRIOR",
    "MAX_WITNESS_ENTRIES",
    "Reduced",
    "database_law",
    "dense_fits",
    "lift",
    "reduce_mechanism",
]

#: The most representative-database entries ``|T| × n`` built (256 MiB of int64).
MAX_WITNESS_ENTRIES = 2**25
#: The most databases for which ``prior`` holds the dense law (8 MiB of float64).
MAX_DENSE_PRIOR = 2**20

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class Reduced(NamedTuple):
    """A structured mechanism's reduced channel: one row per reachable total (query value).

    ``rows[k]`` is the noise row of ``totals[k]`` (increasing), and ``databases[k]`` the
    lexicographically first database with that total (shape ``(len(totals), n_entries)``).
    For a count with line noise ``rows`` is that :class:`~dpcap.line_noise.LineNoise` itself
    (every total is reachable), kept by its structure.
    """

    mechanism: AdditiveMechanism | FunctionMechanism
    totals: IntArray
    rows: Any
    databases: IntArray


def reduce_mechanism(M: AdditiveMechanism | FunctionMechanism) -> Reduced:
    """The reachable totals, their noise rows and representative databases of ``M``.

    For a :class:`~dpcap.function_mechanism.FunctionMechanism` the "totals" are the values the
    query takes, read off its value table (the lemma above holds with ``S`` the query).

    One dynamic programme over the entries (``first_databases`` of ``dpcap._core.partial_sums``):
    ``O(span · Σ_i m_i)`` work when the totals span ``span`` values, never ``Π_i m_i``; a count
    with line noise needs none (:func:`_noisy_count`).
    """
    if isinstance(M, AdditiveMechanism) and M.line_noise is not None:
        return _noisy_count(M)
    if isinstance(M, FunctionMechanism):
        values, first = np.unique(M.values.ravel(), return_index=True)
        databases = np.stack(np.unravel_index(first, M.shape), axis=1).astype(np.int64)
        return Reduced(M, values.astype(np.int64), M.noise[values], databases)
    scores = list(M.scores)
    span = sum(int(s.max()) - int(s.min()) for s in scores) + 1  # ≥ the number of totals
    if span * len(scores) > MAX_WITNESS_ENTRIES:
        raise ProblemTooLargeError(
            f"this additive mechanism's {len(scores)} entries reach up to {span} totals: one "
            f"representative database per total is {span} x {len(scores)} integers, above "
            f"dpcap's limit of {MAX_WITNESS_ENTRIES}; midp and the DP metrics work on it"
        )
    totals, databases = first_databases(scores)
    lowest = sum(int(s.min()) for s in scores)
    rows: FloatArray = M.noise[totals - lowest]
    rows.setflags(write=False)
    databases.setflags(write=False)
    totals.setflags(write=False)
    return Reduced(M, totals, rows, databases)


def _noisy_count(M: AdditiveMechanism) -> Reduced:
    """:func:`reduce_mechanism` of a count of ``n`` binary entries with line noise
    (``M.line_noise``): every total ``0..n`` is reachable, the reduced channel is the noise
    itself (kept by its structure), and the first database of total ``t`` is ``n − t`` zeros
    then ``t`` ones: row ``t`` of a read-only sliding window over ``n`` zeros and ``n`` ones
    (``O(n)`` memory, where the table is ``(n + 1) × n``)."""
    n = M.n_entries
    bits = np.concatenate([np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)])
    databases: IntArray = np.lib.stride_tricks.sliding_window_view(bits, n)[: n + 1]
    totals = np.arange(n + 1, dtype=np.int64)
    totals.setflags(write=False)
    return Reduced(M, totals, M.line_noise, databases)


def dense_fits(M: AdditiveMechanism | FunctionMechanism) -> bool:
    """Whether a dense law on ``M``'s databases is given: at most :data:`MAX_DENSE_PRIOR`
    databases, and ``M``'s dense matrix within dpcap's memory limit (``prior @ M.matrix``
    works)."""
    return M.n_inputs <= MAX_DENSE_PRIOR and M.n_inputs * M.n_outputs <= check.MAX_DENSE_ELEMENTS


def database_law(reduced: Reduced, total_prior: FloatArray) -> FloatArray:
    """The law on databases (dense, C order) with mass ``total_prior[k]`` on ``databases[k]``.

    Only for a mechanism that :func:`dense_fits`.
    """
    M = reduced.mechanism
    rows = np.ravel_multi_index(tuple(reduced.databases.T), M.shape)
    law = np.zeros(M.n_inputs)
    law[rows] = total_prior
    return law


def _count(n: int) -> str:
    return str(n) if n < 10**15 else f"~10^{math.log10(n):.1f}"


def lift(result: CapacityResult, reduced: Reduced) -> StructuredCapacityResult:
    """``result`` (a capacity of the reduced channel) as the capacity of the mechanism.

    The bracket and everything else are kept; the prior on the totals becomes the law on
    databases of :class:`StructuredCapacityResult`.
    """
    M = reduced.mechanism
    prior = database_law(reduced, result.prior) if dense_fits(M) else np.zeros(0)
    note = (
        f"solved on the {len(reduced.totals)} reachable totals of the structured mechanism "
        f"({_count(M.n_inputs)} databases, none enumerated; a row index in this message counts "
        "the totals)"
    )
    return StructuredCapacityResult(
        value=result.value,
        lower=result.lower,
        upper=result.upper,
        prior=prior,
        output=result.output,
        status=result.status,
        iterations=result.iterations,
        method=result.method,
        unit=result.unit,
        message=f"{result.message}; {note}",
        tol=result.tol,
        totals=reduced.totals,
        total_prior=result.prior,
        databases=reduced.databases,
    )
