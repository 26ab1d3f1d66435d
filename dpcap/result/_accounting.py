"""Results of the accounting queries: privacy-loss laws, composed δ(ε) and ε(δ), trade-off
curves."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import Status
from dpcap.result._base import ResultBase as _Result
from dpcap.result._base import SequenceBase as _Sequence
from dpcap.result._base import fmt as _fmt
from dpcap.result._base import plain as _plain


@dataclass(frozen=True, repr=False)
class PairLoss:
    """The privacy-loss law of one ordered neighbour pair ``(x, x')`` (and of every pair with
    the same law, merged).

    ``L = log W[x,Y]/W[x',Y]`` with ``Y ~ W[x]``: the distinct finite values ``loss`` (sorted),
    the probability ``mass`` of each under ``W[x]``, and ``infinite``, the mass where
    ``W[x', y] = 0 < W[x, y]`` (loss ``+∞``). ``pairs`` lists the ordered pairs of row indices
    that share this law; ``worst`` is False when another pair's law dominates it (its
    hockey-stick divergence is at least as large at every level, in both orders of the pair:
    such a pair is never the worst one, alone or composed). ``rounding`` bounds
    ``|computed loss − exact loss|`` of every value. ``value`` is the pure-DP level of the pair
    as computed (the largest loss, ``∞`` with infinite mass) and ``[lower, upper]`` its bracket
    for the stored matrix, ``value ∓ rounding``. An exact law, not a solve: it has no status.
    """

    value: float
    lower: float
    upper: float
    pairs: NDArray[np.int64]
    loss: NDArray[np.float64]
    mass: NDArray[np.float64]
    infinite: float
    worst: bool
    rounding: float

    def __repr__(self) -> str:
        first = tuple(int(v) for v in self.pairs[0])
        return (
            f"PairLoss(pair={first} (+{len(self.pairs) - 1} with the same law), "
            f"{len(self.loss)} finite values, infinite mass={_fmt(self.infinite)}, "
            f"level={_fmt(self.value)}, worst={self.worst})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, repr=False)
class PrivacyLoss:
    """The privacy-loss laws of every ordered neighbour pair of a mechanism, identical laws
    merged (:func:`dpcap.privacy_loss`).

    ``laws`` holds one :class:`PairLoss` per distinct law; ``value`` (= ``lower`` = ``upper``)
    is the pure-DP level ε (the largest loss over the pairs). ``candidates`` indexes the laws
    that can be the worst (not dominated by another).
    """

    value: float
    lower: float
    upper: float
    laws: tuple[PairLoss, ...]
    pairs: int
    unit: str

    @property
    def candidates(self) -> tuple[int, ...]:
        """Indices of the laws that can be worst (``laws[i].worst``)."""
        return tuple(i for i, law in enumerate(self.laws) if law.worst)

    def __len__(self) -> int:
        return len(self.laws)

    def __getitem__(self, i: int) -> PairLoss:
        return self.laws[i]

    def __repr__(self) -> str:
        return (
            f"PrivacyLoss(eps={_fmt(self.value)} {self.unit}, {self.pairs} ordered pairs, "
            f"{len(self.laws)} distinct laws, {len(self.candidates)} can be worst)"
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe (the laws as dicts)."""
        out = {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name != "laws"}
        out["laws"] = [law.to_dict() for law in self.laws]
        return out


@dataclass(frozen=True, repr=False)
class CompositionResult(_Result):
    """δ at one ε (``quantity == "delta"``) or ε at one δ (``"epsilon"``) of a composition.

    ``lower ≤ true ≤ upper`` holds in floating point for the stored matrices (their entries
    taken as exact); ``value`` is ``upper``, the conservative end. ``pair`` is the ordered
    neighbour pair ``(x, x')`` whose composed hockey-stick divergence attains the upper end;
    ``eps`` and ``delta`` are the point (one of them the input). ``folds`` counts the
    releases; ``iterations`` the bisection steps of ε(δ) (0 for δ); ``method`` is
    ``"lattice"`` (losses on a lattice: the bracket is rounding only) or ``"grid"`` (losses
    rounded up and down to a grid: the bracket holds the discretisation). ``unit`` is
    ``"probability"`` for δ, ``"nats"`` for ε.
    """

    value: float
    lower: float
    upper: float
    quantity: str
    eps: float
    delta: float
    pair: tuple[int, int]
    folds: int
    status: Status
    iterations: int
    method: str
    unit: str
    message: str
    tol: float

    def __repr__(self) -> str:
        at = f"eps={_fmt(self.eps)}" if self.quantity == "delta" else f"delta={_fmt(self.delta)}"
        return (
            f"CompositionResult({self.quantity}={_fmt(self.value)} at {at}, "
            f"bracket=[{_fmt(self.lower)}, {_fmt(self.upper)}], pair={self.pair}, "
            f"folds={self.folds}, method={self.method}, status={self.status.value})"
        )


@dataclass(frozen=True, repr=False)
class CompositionCurve(_Sequence):
    """δ(ε) of a composition over a grid of ε: the fields of :class:`CompositionResult` as
    arrays (``pair`` is ``(K, 2)``), one status per point."""

    axis: ClassVar[str] = "eps"

    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    eps: NDArray[np.float64]
    pair: NDArray[np.int64]
    folds: int
    status: NDArray[np.object_]
    iterations: int
    method: str
    unit: str
    message: str
    tol: float

    def _point(self, i: int) -> CompositionResult:
        return CompositionResult(
            value=float(self.value[i]),
            lower=float(self.lower[i]),
            upper=float(self.upper[i]),
            quantity="delta",
            eps=float(self.eps[i]),
            delta=float(self.value[i]),
            pair=(int(self.pair[i, 0]), int(self.pair[i, 1])),
            folds=self.folds,
            status=self.status[i],
            iterations=self.iterations,
            method=self.method,
            unit="probability",
            message=self.message,
            tol=self.tol,
        )

    def __repr__(self) -> str:
        return (
            f"CompositionCurve({len(self)} points of delta(eps), eps in "
            f"[{_fmt(float(self.eps.min()))}, {_fmt(float(self.eps.max()))}], "
            f"max gap={_fmt(float(np.max(self.gap)))}, folds={self.folds}, "
            f"method={self.method})"
        )


@dataclass(frozen=True, repr=False)
class TradeoffCurve(_Sequence):
    """The trade-off (f-DP) curve ``β(α)`` of a mechanism or composition (Dong, Roth & Su).

    ``β`` is the lower convex envelope of ``min over ordered neighbours (x, x') of T_{x,x'}``,
    ``T_{x,x'}(α) = inf {1 − E_{W_x'}[φ] : E_{W_x}[φ] ≤ α}`` (the smallest type-II error of a
    test of ``x`` against ``x'`` at type-I error ``α``): the convex conjugate of δ(ε), the
    largest ``f`` for which the mechanism is ``f``-DP. ``lower ≤ β ≤ upper`` at each
    ``alpha``; ``value`` is ``lower``, the conservative end (a smaller β is a stronger
    attacker). ``pair`` is the ordered pair ``(x, x')`` whose δ attains the envelope at the
    conjugate's optimum; the test it describes is of ``x'`` against ``x``.
    ``advantage`` bounds the attacker's advantage ``max_α (1 − α − β(α))`` from above (it is
    the total-variation level, ``δ(0)``).
    """

    axis: ClassVar[str] = "alpha"

    value: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    alpha: NDArray[np.float64]
    pair: NDArray[np.int64]
    advantage: float
    folds: int
    status: NDArray[np.object_]
    iterations: int
    method: str
    unit: str
    message: str
    tol: float

    def _point(self, i: int) -> dict[str, Any]:
        return {
            "alpha": float(self.alpha[i]),
            "value": float(self.value[i]),
            "lower": float(self.lower[i]),
            "upper": float(self.upper[i]),
            "pair": (int(self.pair[i, 0]), int(self.pair[i, 1])),
            "status": self.status[i],
        }

    def to_dict(self) -> dict[str, Any]:
        out = _Result.to_dict(self)
        out["points"] = [
            {k: (v.value if isinstance(v, Status) else v) for k, v in p.items()} for p in self
        ]
        return out

    def __repr__(self) -> str:
        return (
            f"TradeoffCurve({len(self)} points of beta(alpha), advantage <= "
            f"{_fmt(self.advantage)}, max gap={_fmt(float(np.max(self.gap)))}, "
            f"folds={self.folds}, method={self.method})"
        )
