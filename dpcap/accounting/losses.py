"""The privacy loss of a finite mechanism: the law of ``L = log W[x,Y]/W[x',Y]`` per ordered
neighbour pair (``docs/mathematics.rst``, Mechanisms in combination).

For an ordered pair ``(x, x')`` and ``Y ~ W[x]``, the loss takes the value
``log W[x,y] − log W[x',y]`` with probability ``W[x,y]`` (``+∞`` where ``W[x',y] = 0``;
outcomes with ``W[x,y] = 0`` carry no mass). Every DP quantity of the pair is a functional of
this law: the hockey-stick divergence ``δ(ε) = E[(1 − e^{ε−L})_+]`` (Zhu, Dong & Wang 2022,
"Optimal accounting of differential privacy via characteristic function", §2; Dong, Roth &
Su 2022), the pure level
``ess sup L``, KL-DP ``E[L]``. Composition of releases on one database adds independent losses
(:mod:`dpcap.accounting.composition`).

The log-probabilities come from the mechanism's log matrix where its constructor kept one
(entries below the smallest normal double keep their exact logs), and each computed loss is
within ``ρ = 32u(1 + max|log W|)`` of the loss of the stored matrix (the rounding of a
log-likelihood ratio, as for :func:`dpcap.dp_epsilon`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap import neighbors as relations
from dpcap._core import certify
from dpcap.channel import Mechanism, as_mechanism
from dpcap.errors import NeighborError
from dpcap.neighbors import Neighbors, neighbor_pairs
from dpcap.result import PairLoss, PrivacyLoss

__all__ = ["Law", "pair_laws", "privacy_loss"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Above this many distinct laws the dominance between them is not tested (all are candidates).
MAX_DOMINANCE_LAWS = 256


class Law(NamedTuple):
    """One pair's loss law in one part: distinct finite values, their masses, the mass at
    ``+∞`` and the rounding bound of every value."""

    loss: FloatArray
    mass: FloatArray
    infinite: float
    rounding: float
    outputs: int

    def key(self) -> bytes:
        tail = repr(self.infinite).encode()
        return self.loss.tobytes() + b"|" + self.mass.tobytes() + b"|" + tail


def _rows(mech: Mechanism) -> tuple[FloatArray, FloatArray]:
    W = mech.matrix
    L = mech.log_matrix
    if L is None:
        with np.errstate(divide="ignore"):
            L = np.log(W)
    return W, L


def _law(P: FloatArray, lp: FloatArray, lq: FloatArray) -> Law:
    """The loss law of ``P = W[x]`` against the row with logs ``lq``."""
    on = P > 0
    with np.errstate(invalid="ignore"):
        loss = lp[on] - lq[on]
    mass = P[on]
    inf = np.isposinf(loss)
    infinite = float(np.sum(mass[inf])) if inf.any() else 0.0
    logs = np.concatenate([np.abs(lp[on]), np.abs(lq[on][~inf])])
    top = float(np.max(logs[np.isfinite(logs)], initial=0.0))
    rho = 32.0 * certify.U * (1.0 + top)
    # values within 2ρ of the smallest of their run are one value (they differ by rounding
    # only): the run's smallest value stands for all, within 3ρ of each exact loss
    finite = np.sort(loss[~inf])
    order = np.argsort(loss[~inf], kind="stable")
    starts = np.flatnonzero(np.diff(finite, prepend=-np.inf) > 2.0 * rho)
    run = np.cumsum(np.isin(np.arange(len(finite)), starts)) - 1
    drift = finite - finite[starts][run] if len(finite) else finite
    if len(finite) and np.any(drift > 2.0 * rho):  # a long run: keep the exact distinct values
        values, where = np.unique(finite, return_inverse=True)
        rounding = rho
    else:
        values, where = finite[starts], run
        rounding = 3.0 * rho
    masses = np.bincount(where.ravel(), weights=mass[~inf][order], minlength=len(values))
    return Law(
        values.astype(np.float64), masses.astype(np.float64), infinite, rounding, int(on.sum())
    )


def ordered_pairs(mech: Mechanism, neighbors: Neighbors | None) -> tuple[IntArray, IntArray]:
    """Both orders of every neighbouring pair of ``mech``'s rows (its relation unless given)."""
    relation = mech.neighbors if neighbors is None else neighbors
    I, J = neighbor_pairs(mech.shape, relation)
    return np.concatenate([I, J]), np.concatenate([J, I])


def pair_laws(
    parts: list[Mechanism], X: IntArray, Xp: IntArray, what: str
) -> tuple[list[list[Law]], IntArray]:
    """The distinct combinations of per-part laws over the ordered pairs ``(X, Xp)``.

    Returns ``(combos, label)``: ``combos[c][j]`` is part ``j``'s law in combination ``c``, and
    ``label[i]`` the combination of pair ``i``. Pairs whose rows are identical in every part
    (loss 0 everywhere) are kept: they give δ = 0 and ε = 0.
    """
    width = sum(int(p.matrix.shape[1]) for p in parts)
    if len(X) * width > relations.MAX_PAIR_WORK:
        raise relations.refuse_pairs(what, len(X), width)
    rows = [_rows(p) for p in parts]
    cache: list[dict[tuple[int, int], int]] = [{} for _ in parts]
    laws: list[list[Law]] = [[] for _ in parts]
    keys: list[dict[bytes, int]] = [{} for _ in parts]
    combo_of: dict[tuple[int, ...], int] = {}
    label = np.empty(len(X), dtype=np.int64)
    for i, (x, xp) in enumerate(zip(X.tolist(), Xp.tolist(), strict=True)):
        ids: list[int] = []
        for j, (W, L) in enumerate(rows):
            seen = cache[j].get((x, xp))
            if seen is None:
                law = _law(W[x], L[x], L[xp])
                seen = keys[j].setdefault(law.key(), len(laws[j]))
                if seen == len(laws[j]):
                    laws[j].append(law)
                cache[j][(x, xp)] = seen
            ids.append(seen)
        label[i] = combo_of.setdefault(tuple(ids), len(combo_of))
    combos = [[] for _ in combo_of]  # type: list[list[Law]]
    for key, c in combo_of.items():
        combos[c] = [laws[j][k] for j, k in enumerate(key)]
    return combos, label


def hockey(law: Law, eps: FloatArray) -> FloatArray:
    """``E[(1 − e^{ε−L})_+]`` at each ε (plain evaluation)."""
    z = np.minimum(eps[:, None] - law.loss[None, :], 0.0)
    out: FloatArray = (-np.expm1(z)) @ law.mass + law.infinite
    return out


def evaluation_error(law: Law) -> float:
    """A bound on ``|computed − exact|`` of :func:`hockey` for the stored matrix: the loss
    rounding (δ is 1-Lipschitz in a shift of the loss) and the arithmetic."""
    return law.rounding + 8.0 * certify.gamma(len(law.loss) + 8)


def dominated(laws: list[Law]) -> NDArray[np.bool_]:
    """Which laws another law dominates: its hockey-stick divergence at least as large at
    every level ``γ = e^ε ≥ 0`` (the Blackwell order of the pair's experiments), up to the
    evaluation error of both; identical laws were merged before."""
    n = len(laws)
    out = np.zeros(n, dtype=bool)
    if n < 2 or n > MAX_DOMINANCE_LAWS:
        return out
    points = np.unique(np.concatenate([law.loss for law in laws]))
    values = np.stack([hockey(law, points) for law in laws])
    infinite = np.array([law.infinite for law in laws])
    errors = np.array([evaluation_error(law) for law in laws])
    for b in range(n):
        for a in range(n):
            if a == b or out[a]:
                continue
            margin = errors[a] + errors[b]
            if (
                np.all(values[a] >= values[b] - margin)
                and infinite[a] >= infinite[b]
                and (np.any(values[a] > values[b] + margin) or infinite[a] > infinite[b])
            ):
                out[b] = True
                break
    return out


def privacy_loss(M: Any, /, *, neighbors: Neighbors | None = None) -> PrivacyLoss:
    """The privacy-loss laws of every ordered neighbour pair of a finite mechanism.

    For an ordered pair ``(x, x')`` the loss ``L = log W[x,Y]/W[x',Y]``, ``Y ~ W[x]``, takes
    the value ``log W[x,y] − log W[x',y]`` with probability ``W[x,y]`` (``+∞`` where
    ``W[x',y] = 0``). The hockey-stick divergence of the pair is ``δ(ε) = E[(1 − e^{ε−L})_+]``
    and composing releases adds independent losses (Dong, Roth & Su 2022; Zhu, Dong & Wang
    2022).

    Parameters
    ----------
    M : Mechanism, Channel or array_like
    neighbors : str, array_like or callable, keyword-only, optional
        The neighbour relation (:mod:`dpcap.neighbors`); default: the one ``M`` carries.

    Returns
    -------
    PrivacyLoss
        One :class:`~dpcap.result.PairLoss` per distinct law (pairs with identical laws
        merged, their ordered pairs listed), with the pure-DP level ``value`` and the laws
        that can be worst (not dominated by another in every order of the levels, decided up
        to the rounding of the divergences) flagged ``worst``. Losses come from the log matrix
        where the mechanism kept one, so underflowed entries keep their exact logs.

    Raises
    ------
    NeighborError
        If the relation has no pair (a one-row mechanism).
    ProblemTooLargeError
        If ``pairs × outputs`` is above :data:`dpcap.neighbors.MAX_PAIR_WORK`.

    Examples
    --------
    >>> from dpcap.mechanisms import randomized_response
    >>> loss = privacy_loss(randomized_response(3, 1.0))
    >>> len(loss), loss.pairs                       # every ordered pair has the same law
    (1, 6)
    >>> loss[0].loss.round(12), loss[0].mass.round(6)
    (array([-1.,  0.,  1.]), array([0.211942, 0.211942, 0.576117]))
    """
    mech = as_mechanism(M)
    X, Xp = ordered_pairs(mech, neighbors)
    if not len(X):
        raise NeighborError("privacy_loss: the neighbour relation has no pair of inputs")
    combos, label = pair_laws([mech], X, Xp, "privacy_loss")
    laws = [c[0] for c in combos]
    beaten = dominated(laws)
    out = []
    for c, law in enumerate(laws):
        members = np.flatnonzero(label == c)
        top = math.inf if law.infinite > 0 else float(law.loss.max(initial=0.0))
        out.append(
            PairLoss(
                value=top,
                lower=top if math.isinf(top) else top - law.rounding,
                upper=top if math.isinf(top) else top + law.rounding,
                pairs=np.stack([X[members], Xp[members]], axis=1),
                loss=law.loss,
                mass=law.mass,
                infinite=law.infinite,
                worst=not bool(beaten[c]),
                rounding=law.rounding,
            )
        )
    level = max(max(law.value for law in out), 0.0)
    low = max(max(law.lower for law in out), 0.0)
    high = max(max(law.upper for law in out), 0.0)
    return PrivacyLoss(
        value=level, lower=low, upper=high, laws=tuple(out), pairs=len(X), unit="nats"
    )
