"""The composed privacy loss of one neighbour pair on lattices, with a bracket that holds in
floating point (``docs/mathematics.rst``, Mechanisms in combination).

Composition adds independent losses, so the composed law is the convolution of the parts'
laws (a part used ``k`` times: its ``k``-th convolution power). Each part's finite loss values
are placed on a lattice ``v₀ + h·n``:

* **lattice** parts: every value is within ``τ`` of ``v₀ + h·n`` for an integer ``n`` (a step
  ``h`` shared with other parts where it fits, else the part's own smallest gap divided by
  ``q ≤ 16``): the law is *exact* up to that snap, which is at most a few rounding units;
* **grid** parts (values on no small lattice): every value is rounded *up* to the grid for the
  upper end and *down* for the lower end, one shared grid whose step the work budget fixes.

Parts on different steps are independent coordinates of the composed loss
``base + Σ_d h_d n_d``: each coordinate's law is composed by direct convolutions (never an FFT),
and the cells are their outer product. If each part value's exact loss ``ℓ`` satisfies
``r↓ − s ≤ ℓ ≤ r↑ + s`` for its representatives ``r↑, r↓`` and slack ``s`` (the snap, the
loss rounding ``ρ`` and the arithmetic), the composed exact loss lies within ``t = Σ k_j s_j``
of the composed representatives, and since ``δ(ε) = E[(1 − e^{ε−L})_+]`` is non-decreasing in
``L`` and a shift of ``L`` by ``t`` is a shift of ε::

    δ↓(ε + t↓)  ≤  δ(ε)  ≤  δ↑(ε − t↑),

``δ↑``, ``δ↓`` the hockey-stick divergences of the composed representative laws.

Rounding of the masses: a convolution of non-negative vectors is computed entrywise to a
relative error ``γ_m`` (``m`` terms, any order of summation), plus an absolute ``m·2⁻¹⁰⁷⁴``
for underflowed products; the bounds ``p̂ ∈ [(1 − ρ)p − a, (1 + ρ)p + a]`` are carried through
every convolution and outer product (:func:`_convolve`) and the final sums are moved outward
by ``γ_n`` (:meth:`Composed.delta_upper`, :meth:`Composed.delta_lower`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from dpcap._core import certify
from dpcap.accounting.losses import Law
from dpcap.errors import ProblemTooLargeError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

U = certify.U
#: The absolute rounding of one underflowed product (the smallest subnormal).
TINY = 2.0**-1074
#: Most cells of a composed law (the outer product of its coordinates).
MAX_CELLS = 2**22
#: Most multiply-adds of the convolutions of one pair's composition.
MAX_WORK = 2**31
#: Most lattice points of one part's law (its values' span over the step).
MAX_EXTENT = 2**14
#: Default cells of the grid coordinate (values on no lattice), within MAX_CELLS.
GRID_CELLS = 2**13
#: Steps tried for a part's own lattice: its smallest gap over 1..MAX_DIVISOR.
MAX_DIVISOR = 16


class Mass(NamedTuple):
    """A non-negative vector with its bounds: ``p̂ ∈ [(1 − rel)p − ab, (1 + rel)p + ab]``."""

    p: FloatArray
    rel: float
    ab: float


def _up(x: float) -> float:
    """``x`` moved up by a generous relative rounding (for bounds computed in float)."""
    return x * (1.0 + 8.0 * U) + TINY


def _convolve(a: Mass, b: Mass) -> Mass:
    """Direct convolution with the propagated bounds (``γ_{m+2}``, ``m`` the shorter length)."""
    m = min(len(a.p), len(b.p))
    c = np.convolve(a.p, b.p)
    g = certify.gamma(m + 2)
    rel = _up((1.0 + g) * (1.0 + a.rel) * (1.0 + b.rel) - 1.0)
    ab = _up((1.0 + g) * (a.ab * (1.0 + b.rel) + b.ab * (1.0 + a.rel) + m * a.ab * b.ab) + m * TINY)
    return Mass(c, rel, ab)


def _power(a: Mass, k: int) -> Mass:
    """The ``k``-th convolution power (binary powering)."""
    out: Mass | None = None
    base = a
    while True:
        if k & 1:
            out = base if out is None else _convolve(out, base)
        k >>= 1
        if not k:
            break
        base = _convolve(base, base)
    assert out is not None
    return out


def _power_work(n: int, k: int) -> float:
    """Multiply-adds of :func:`_power` on ``n`` points (lengths ``1 + j(n − 1)``)."""
    work, length, have, size = 0.0, n, 0, 0
    while True:
        if k & 1:
            work += size * length if have else 0.0
            size = size + length - 1 if have else length
            have = 1
        k >>= 1
        if not k:
            break
        work += float(length) * length
        length = 2 * length - 1
    return work


@dataclass
class _Placed:
    """One part's law on a coordinate: indices of its values (up and down), the offset
    ``v₀``, the slacks of its representatives and its count."""

    dim: int  # -1: a point mass (no coordinate)
    up: IntArray
    down: IntArray
    mass: FloatArray
    slack_up: float
    slack_down: float
    count: int
    merge: float  # relative rounding of the masses merged into one lattice point


def _snap(values: FloatArray, step: float, tau: float) -> IntArray | None:
    gaps = values - values[0]
    n = np.rint(gaps / step)
    if n[-1] > MAX_EXTENT:
        return None
    if np.all(np.abs(gaps - n * step) <= tau):
        out: IntArray = n.astype(np.int64)
        return out
    return None


def _slack(values: FloatArray, step: float, n: IntArray, law: Law, side: int) -> float:
    """How far an exact loss can be beyond its representative ``v₀ + h·n``: above it
    (``side = 1``), below it (``−1``); the loss rounding ``ρ`` and the arithmetic included."""
    rep = values[0] + step * n
    beyond = float(np.max(side * (values - rep), initial=0.0))
    scale = 2.0 * float(np.max(np.abs(values))) + float(np.max(np.abs(rep)))
    return _up(max(beyond, 0.0) + law.rounding + 4.0 * U * scale)


class Composed:
    """The composed finite loss law of one pair (up and down representatives) and its
    infinite mass, with the bounds of :func:`_convolve`; evaluates the bracket of δ(ε)."""

    def __init__(
        self,
        up: Mass,
        down: Mass,
        loss_up: FloatArray,
        loss_down: FloatArray,
        shift_up: float,
        shift_down: float,
        infinite: tuple[float, float],
        lattice: bool,
    ) -> None:
        self.up, self.down = up, down
        self.loss_up, self.loss_down = loss_up, loss_down
        self.shift_up, self.shift_down = shift_up, shift_down
        self.infinite_lower, self.infinite_upper = infinite
        self.lattice = lattice
        self.top = float(np.max(loss_up, initial=-math.inf)) + shift_up
        #: How far below its up-representative a cell's exact loss can be (the grid's
        #: rounding up included): set by :func:`compose`.
        self.below = shift_down

    def delta_upper(self, eps: FloatArray) -> FloatArray:
        """An upper bound on δ at each ε (nats)."""
        eps = np.asarray(eps, dtype=np.float64)
        v = self.loss_up[None, :]
        err = 4.0 * U * (np.abs(eps)[:, None] + np.abs(v) + self.shift_up)
        z = (eps[:, None] - v) - (self.shift_up + err)
        f = -np.expm1(np.minimum(z, 0.0)) * (1.0 + 4.0 * U)
        n = len(self.up.p)
        total = (f @ self.up.p) * (1.0 + certify.gamma(n + 2)) + np.sum(f, axis=1) * self.up.ab
        # where every f is 0 (ε past every cell) the sum is exactly 0, and so is δ's finite part
        finite = np.where(total > 0, total / (1.0 - self.up.rel) * (1.0 + 8.0 * U) + TINY, 0.0)
        out: FloatArray = np.minimum(finite + self.infinite_upper, 1.0)
        return out

    def delta_upper_sorted(self, eps: FloatArray) -> FloatArray:
        """:meth:`delta_upper` by suffix sums over the sorted cells, ``O((n + K) log n)``
        for ``K`` levels: ``δ = S_P − e^{ε'} S_Q`` over the cells with ``v > ε'``. The
        subtraction cancels, so the allowance is absolute: ``2(ρ + γ_{n+8})·S_P + n·a``
        (``e^{ε'} S_Q ≤ S_P`` there). For the many levels of a conjugate."""
        eps = np.asarray(eps, dtype=np.float64)
        order = np.argsort(self.loss_up, kind="stable")
        v, p = self.loss_up[order], self.up.p[order]
        n = len(p)
        top = float(np.max(np.abs(v), initial=0.0))
        level = eps - (self.shift_up + 4.0 * U * (np.abs(eps) + top + self.shift_up))
        sp = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        sq = np.concatenate([np.cumsum((p * np.exp(-v))[::-1])[::-1], [0.0]])
        at = np.searchsorted(v, level, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            value = sp[at] - np.exp(level) * sq[at]
        value = np.where(np.isfinite(value), value, sp[at])
        slack = 2.0 * (self.up.rel + certify.gamma(n + 8)) * sp[at] + n * self.up.ab
        finite = np.clip(value + slack, 0.0, None) * (1.0 + 4.0 * U) + TINY
        out: FloatArray = np.minimum(finite + self.infinite_upper, 1.0)
        return out

    def delta_lower(self, eps: FloatArray) -> FloatArray:
        """A lower bound on δ at each ε (nats)."""
        eps = np.asarray(eps, dtype=np.float64)
        v = self.loss_down[None, :]
        err = 4.0 * U * (np.abs(eps)[:, None] + np.abs(v) + self.shift_down)
        z = (eps[:, None] - v) + (self.shift_down + err)
        f = -np.expm1(np.minimum(z, 0.0)) * (1.0 - 4.0 * U)
        n = len(self.down.p)
        total = (f @ self.down.p) * (1.0 - certify.gamma(n + 2)) - np.sum(f, axis=1) * self.down.ab
        finite = np.maximum(total / (1.0 + self.down.rel) * (1.0 - 4.0 * U), 0.0)
        out: FloatArray = finite + self.infinite_lower
        return out


def _infinite(laws: list[Law], counts: list[int]) -> tuple[float, float]:
    """Bounds on ``1 − Π_j (1 − p∞_j)^{k_j}``, the composed mass at ``+∞``."""
    if not any(law.infinite > 0 for law in laws):
        return 0.0, 0.0
    s = 0.0
    for law, k in zip(laws, counts, strict=True):
        s += k * math.log1p(-min(law.infinite, 1.0))
    value = -math.expm1(s)
    # log1p and expm1 to 2u, the merge of each p∞ (γ_m, m ≤ outputs), k·x and the sum
    rel = certify.gamma(len(laws) + 8) + certify.gamma(4 * max(law.outputs for law in laws) + 8)
    return max(value * (1.0 - rel) - TINY, 0.0), min(value * (1.0 + rel) + TINY, 1.0)


def compose(
    laws: list[Law], counts: list[int], what: str, grid_cells: int = GRID_CELLS
) -> Composed:
    """The bracket of the composition of ``counts[j]`` copies of ``laws[j]`` (one pair)."""
    steps: list[float] = []
    placed: list[_Placed] = []
    loose: list[tuple[Law, int]] = []
    base = 0.0
    empty = False  # a part whose every outcome has infinite loss: no finite composed mass
    for law, k in zip(laws, counts, strict=True):
        v = law.loss
        if k == 0:
            continue
        if not len(v):
            empty = True
            continue
        base += k * float(v[0])
        merge = certify.gamma(law.outputs + 2)  # the masses merged per value, then per point
        if len(v) == 1:
            zero = np.zeros(1, dtype=np.int64)
            s = _slack(v, 1.0, zero, law, 1)
            placed.append(_Placed(-1, zero, zero, law.mass, s, s, k, merge))
            continue
        tau = 64.0 * (law.rounding + 4.0 * U * float(np.max(np.abs(v))))
        found = None
        for d, h in enumerate(steps):
            n = _snap(v, h, tau)
            if n is not None:
                found = (d, h, n)
                break
        if found is None:
            h0 = float(np.min(np.diff(v)))
            for q in range(1, MAX_DIVISOR + 1):
                n = _snap(v, h0 / q, tau)
                if n is not None:
                    steps.append(h0 / q)
                    found = (len(steps) - 1, h0 / q, n)
                    break
        if found is None:
            loose.append((law, k))
            continue
        d, h, n = found
        s_up, s_down = _slack(v, h, n, law, 1), _slack(v, h, n, law, -1)
        placed.append(_Placed(d, n, n, law.mass, s_up, s_down, k, merge))
    grid_dim = -1
    if loose:
        grid_dim = _place_loose(loose, steps, placed, grid_cells, what)
    work = sum(_power_work(int(p.up[-1]) + 1, p.count) for p in placed)
    if work > MAX_WORK:
        raise ProblemTooLargeError(
            f"{what}: composing these parts takes about {work:.3g} multiply-adds per neighbour "
            f"pair, above dpcap's limit of {MAX_WORK} (dpcap.accounting._lattice.MAX_WORK)"
        )
    shift_up = _up(sum(p.count * p.slack_up for p in placed))
    shift_down = _up(sum(p.count * p.slack_down for p in placed))
    point_mass, point_rel = 1.0, 0.0
    for p in placed:
        if p.dim == -1:
            point_mass *= float(p.mass[0]) ** p.count
            point_rel = _up((1.0 + point_rel) * (1.0 + p.merge) ** p.count * (1.0 + 4 * U) - 1.0)
    if empty:
        point_mass = 0.0
    one = Mass(np.ones(1), 0.0, 0.0)
    coords_up: list[Mass] = []
    coords_down: list[Mass] = []
    for d in range(len(steps)):
        mine = [p for p in placed if p.dim == d]
        ends: list[Mass] = []
        for end in ("up", "down") if d == grid_dim else ("up",):
            acc = one
            for p in mine:
                idx = p.up if end == "up" else p.down
                vec = np.bincount(idx, weights=p.mass).astype(np.float64)
                acc = _convolve(acc, _power(Mass(vec, p.merge, 0.0), p.count))
            ends.append(acc)
        coords_up.append(ends[0])
        coords_down.append(ends[-1])
    cells = math.prod(len(c.p) for c in coords_up)
    if cells > MAX_CELLS:
        raise ProblemTooLargeError(
            f"{what}: the composed loss has {cells} cells, above dpcap's limit of "
            f"{MAX_CELLS} (dpcap.accounting._lattice.MAX_CELLS)"
        )
    start = Mass(np.array([point_mass]), point_rel, TINY)
    up = _outer(start, coords_up)
    down = up if grid_dim < 0 else _outer(start, coords_down)
    loss_up = _losses(base, steps, [len(c.p) for c in coords_up])
    loss_down = loss_up if grid_dim < 0 else _losses(base, steps, [len(c.p) for c in coords_down])
    scale = abs(base) + sum(h * len(c.p) for h, c in zip(steps, coords_up, strict=True))
    represent = _up(4.0 * U * (len(steps) + 2) * scale)
    out = Composed(
        up,
        down,
        loss_up,
        loss_down,
        shift_up + represent,
        shift_down + represent,
        _infinite(laws, counts),
        grid_dim < 0,
    )
    if grid_dim >= 0:
        rounded_up = sum(p.count for p in placed if p.dim == grid_dim)
        out.below = _up(out.shift_down + rounded_up * steps[grid_dim] * (1.0 + 4.0 * U))
    return out


def _place_loose(
    loose: list[tuple[Law, int]],
    steps: list[float],
    placed: list[_Placed],
    grid_cells: int,
    what: str,
) -> int:
    """Put the parts on no lattice on one shared grid (values rounded up, and down); returns
    the grid's coordinate."""
    others = 1
    for d in range(len(steps)):
        others *= 1 + sum(p.count * int(p.up[-1]) for p in placed if p.dim == d)
    cells = max(min(grid_cells, MAX_CELLS // max(others, 1)), 2)
    span = sum(k * float(law.loss[-1] - law.loss[0]) for law, k in loose)
    folds = sum(k for _, k in loose)
    if cells <= folds + 1:
        raise ProblemTooLargeError(
            f"{what}: the composition needs a grid of more than {cells} cells for {folds} "
            f"releases whose losses lie on no lattice (dpcap.accounting._lattice.MAX_CELLS = "
            f"{MAX_CELLS}); compose fewer releases"
        )
    h = span / (cells - folds - 1)
    steps.append(h)
    dim = len(steps) - 1
    for law, k in loose:
        v = law.loss
        gaps = (v - v[0]) / h
        up = np.ceil(gaps).astype(np.int64)
        down = np.floor(gaps).astype(np.int64)
        merge = certify.gamma(law.outputs + 2)
        s_up, s_down = _slack(v, h, up, law, 1), _slack(v, h, down, law, -1)
        placed.append(_Placed(dim, up, down, law.mass, s_up, s_down, k, merge))
    return dim


def _outer(start: Mass, coords: list[Mass]) -> Mass:
    """The cells of independent coordinates (their outer product), times ``start``."""
    p, rel, ab = start.p, start.rel, start.ab
    for c in coords:
        p = np.multiply.outer(p, c.p).ravel()
        rel, ab = (
            _up((1.0 + rel) * (1.0 + c.rel) * (1.0 + U) - 1.0),
            _up(ab * (1.0 + c.rel + c.ab) + c.ab * (1.0 + rel + ab) + TINY),
        )
    return Mass(p, rel, ab)


def _losses(base: float, steps: list[float], sizes: list[int]) -> FloatArray:
    """The representative loss ``base + Σ_d h_d n_d`` of every cell, in the cells' order."""
    out = np.array([base])
    for h, n in zip(steps, sizes, strict=True):
        out = np.add.outer(out, h * np.arange(n, dtype=np.float64)).ravel()
    return out
