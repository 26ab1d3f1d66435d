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
from typing import Any, NamedTuple

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
#: Most values of a part that may sit off its lattice (rounded up and down to it).
MAX_EXCEPTIONS = 4


class Mass(NamedTuple):
    """A non-negative vector with its bounds: ``p̂ ∈ [(1 − rel)p − ab, (1 + rel)p + ab]``."""

    p: FloatArray
    rel: float
    ab: float


def _up(x: float) -> float:
    """``x`` moved up by a generous relative rounding (for bounds computed in float)."""
    return x * (1.0 + 8.0 * U) + TINY


def _convolve(a: Mass, b: Mass) -> Mass:
    """Direct N-dimensional convolution with the propagated bounds (``γ_{m+2}``, ``m`` the
    smaller number of cells: at most that many products meet in one output)."""
    from scipy import signal

    m = int(min(a.p.size, b.p.size))
    c = np.convolve(a.p, b.p) if a.p.ndim == 1 else signal.convolve(a.p, b.p, method="direct")
    g = certify.gamma(m + 2)
    rel = _up((1.0 + g) * (1.0 + a.rel) * (1.0 + b.rel) - 1.0)
    ab = _up((1.0 + g) * (a.ab * (1.0 + b.rel) + b.ab * (1.0 + a.rel) + m * a.ab * b.ab) + m * TINY)
    return Mass(np.asarray(c, dtype=np.float64), rel, ab)


def _power(a: Mass, k: int) -> Mass:
    """The ``k``-th convolution power (binary powering)."""
    out: Mass = _binary_power(_convolve, a, k)
    return out


def _binary_power(times: Any, a: Any, k: int) -> Any:
    """``a`` combined with itself ``k`` times by ``times`` (binary powering, ``k ≥ 1``)."""
    out = None
    base = a
    while True:
        if k & 1:
            out = base if out is None else times(out, base)
        k >>= 1
        if not k:
            break
        base = times(base, base)
    assert out is not None
    return out


def _reach(a: FloatArray, b: FloatArray) -> FloatArray:
    """The support of a convolution (0/1 arrays: exact zeros stay zeros)."""
    from scipy import signal

    c = np.convolve(a, b) if a.ndim == 1 else signal.convolve(a, b, method="direct")
    return (np.asarray(c) > 0.5).astype(np.float64)


def _reach_power(a: FloatArray, k: int) -> FloatArray:
    """The support of the ``k``-th convolution power of a 0/1 array."""
    out: FloatArray = _binary_power(_reach, a, k)
    return out


def _power_work(
    shape: tuple[int, ...], k: int, acc: tuple[int, ...]
) -> tuple[float, tuple[int, ...]]:
    """Multiply-adds of :func:`_power` of an array of ``shape`` and of its convolution into an
    accumulator of shape ``acc``; and the accumulator's new shape."""

    def grow(x: tuple[int, ...], y: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i + j - 1 for i, j in zip(x, y, strict=True))

    work, base, out = 0.0, shape, None  # type: float, tuple[int, ...], tuple[int, ...] | None
    while True:
        if k & 1:
            if out is not None:
                work += float(math.prod(out)) * math.prod(base)
            out = base if out is None else grow(out, base)
        k >>= 1
        if not k:
            break
        work += float(math.prod(base)) ** 2
        base = grow(base, base)
    assert out is not None
    work += float(math.prod(acc)) * math.prod(out)
    return work, grow(acc, out)


@dataclass
class _Placed:
    """One part's law on the coordinates: for each value its index on each coordinate (up and
    down ends), the slacks of its representatives, its count."""

    up: IntArray  # (values, coordinates)
    down: IntArray
    mass: FloatArray
    slack_up: float
    slack_down: float
    count: int
    merge: float  # relative rounding of the masses merged into one cell


def _snap(values: FloatArray, step: float, tau: float) -> IntArray | None:
    gaps = values - values[0]
    n = np.rint(gaps / step)
    if n[-1] > MAX_EXTENT:
        return None
    if np.all(np.abs(gaps - n * step) <= tau):
        out: IntArray = n.astype(np.int64)
        return out
    return None


def _slack(values: FloatArray, rep: FloatArray, law: Law, side: int) -> float:
    """How far an exact loss can be beyond its representative ``rep``: above it
    (``side = 1``), below it (``−1``); the loss rounding ``ρ`` and the arithmetic included."""
    beyond = float(np.max(side * (values - rep), initial=0.0))
    scale = 2.0 * float(np.max(np.abs(values))) + float(np.max(np.abs(rep)))
    return _up(max(beyond, 0.0) + law.rounding + 8.0 * U * scale)


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
        support: tuple[NDArray[np.bool_], NDArray[np.bool_]],
    ) -> None:
        self.up, self.down = up, down
        self.loss_up, self.loss_down = loss_up, loss_down
        self.shift_up, self.shift_down = shift_up, shift_down
        self.infinite_lower, self.infinite_upper = infinite
        self.lattice = lattice
        #: the cells that hold mass in exact arithmetic (exact zeros convolve to exact zeros):
        #: the underflow allowance applies there only
        self.support_up, self.support_down = support
        self.top = float(np.max(loss_up[self.support_up], initial=-math.inf)) + shift_up
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
        reach = np.sum(f * self.support_up, axis=1)
        total = (f @ self.up.p) * (1.0 + certify.gamma(n + 2)) + reach * self.up.ab
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
        reach = self.support_up[order].astype(np.float64)
        n = len(p)
        top = float(np.max(np.abs(v), initial=0.0))
        level = eps - (self.shift_up + 4.0 * U * (np.abs(eps) + top + self.shift_up))
        sp = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        with np.errstate(divide="ignore", over="ignore"):
            q = np.minimum(np.exp(np.log(p) - v), 1.0)  # p·e^{−v}, a probability: at most 1
        sq = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])
        cells = np.concatenate([np.cumsum(reach[::-1])[::-1], [0.0]])
        at = np.searchsorted(v, level, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            value = sp[at] - np.exp(level) * sq[at]
        value = np.where(np.isfinite(value), value, sp[at])
        slack = 2.0 * (self.up.rel + certify.gamma(n + 8)) * sp[at] + cells[at] * self.up.ab
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
        reach = np.sum(f * self.support_down, axis=1)
        total = (f @ self.down.p) * (1.0 - certify.gamma(n + 2)) - reach * self.down.ab
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


class _Axes:
    """The coordinates of a composition: their steps, and the offset of the loss."""

    def __init__(self) -> None:
        self.steps: list[float] = []
        self.base = 0.0

    def add(self, step: float) -> int:
        self.steps.append(step)
        return len(self.steps) - 1


def compose(
    laws: list[Law],
    counts: list[int],
    what: str,
    grid_cells: int = GRID_CELLS,
    exact: bool = True,
) -> Composed:
    """The bracket of the composition of ``counts[j]`` copies of ``laws[j]`` (one pair).

    Lattices first (``exact``); when their cells or work would pass :data:`MAX_CELLS` or
    :data:`MAX_WORK`, every part goes to one grid of ``grid_cells`` instead (the certified
    discretisation); only a grid that does not fit either is refused.
    """
    axes = _Axes()
    found: list[tuple[Law, int, list[tuple[int, IntArray, IntArray]], float]] = []
    loose: list[tuple[Law, int]] = []
    empty = False  # a part whose every outcome has infinite loss: no finite composed mass
    for law, k in zip(laws, counts, strict=True):
        v = law.loss
        if k == 0:
            continue
        if not len(v):
            empty = True
            continue
        if len(v) == 1:  # a point mass: an offset, and a factor on every cell
            found.append((law, k, [], float(v[0])))
            continue
        where = _locate(v, law, axes, k) if exact else None
        if where is None:
            loose.append((law, k))
            continue
        found.append((law, k, *where))
    if loose:
        found += _place_loose(loose, axes, grid_cells, what)
    if not axes.steps:  # point masses only: one coordinate on which every index is 0
        axes.add(1.0)
    D = len(axes.steps)
    placed = [_placement(law, k, coords, offset, axes, D) for law, k, coords, offset in found]
    rounded = any(not np.array_equal(p.up, p.down) for p in placed)
    work, shape = 0.0, (1,) * D
    for p in placed:
        extent = tuple(int(e) + 1 for e in np.max(np.maximum(p.up, p.down), axis=0))
        w, shape = _power_work(extent, p.count, shape)
        work += w
    cells = math.prod(shape)
    too_large = cells > MAX_CELLS or work * (2 if rounded else 1) > MAX_WORK
    if too_large and exact and len(found) > len(loose):
        return compose(laws, counts, what, grid_cells, exact=False)
    if cells > MAX_CELLS:
        raise ProblemTooLargeError(
            f"{what}: the composed loss has {cells} cells, above dpcap's limit of "
            f"{MAX_CELLS} (dpcap.accounting._lattice.MAX_CELLS)"
        )
    if work * (2 if rounded else 1) > MAX_WORK:
        raise ProblemTooLargeError(
            f"{what}: composing these parts takes about {work:.3g} multiply-adds per neighbour "
            f"pair, above dpcap's limit of {MAX_WORK} (dpcap.accounting._lattice.MAX_WORK)"
        )
    shift_up = _up(sum(p.count * p.slack_up for p in placed))
    shift_down = _up(sum(p.count * p.slack_down for p in placed))
    start = Mass(np.full((1,) * D, 0.0 if empty else 1.0), 0.0, 0.0)
    ends, reach = [], []
    for end in ("up", "down") if rounded else ("up",):
        acc, held = start, (start.p > 0).astype(np.float64)
        for p in placed:
            idx = p.up if end == "up" else p.down
            extent = tuple(int(e) + 1 for e in np.max(idx, axis=0))
            arr = np.zeros(extent)
            np.add.at(arr, tuple(idx.T), p.mass)
            acc = _convolve(acc, _power(Mass(arr, p.merge, 0.0), p.count))
            held = _reach(held, _reach_power((arr > 0).astype(np.float64), p.count))
        ends.append(acc)
        reach.append(held.ravel() > 0)
    up, down = ends[0], ends[-1]
    if up.rel > 0.5 or down.rel > 0.5:
        raise ProblemTooLargeError(
            f"{what}: {sum(p.count for p in placed)} releases: the masses' rounding bound "
            f"({max(up.rel, down.rel):.2g}, relative) leaves no certificate; compose fewer"
        )
    loss_up, loss_down = _losses(axes, up.p.shape), _losses(axes, down.p.shape)
    up = Mass(up.p.ravel(), up.rel, up.ab)
    down = Mass(down.p.ravel(), down.rel, down.ab)
    scale = abs(axes.base) + sum(h * n for h, n in zip(axes.steps, shape, strict=True))
    represent = _up(4.0 * U * (D + 2) * scale)
    out = Composed(
        up,
        down,
        loss_up,
        loss_down,
        shift_up + represent,
        shift_down + represent,
        _infinite(laws, counts),
        not rounded,
        (reach[0], reach[-1]),
    )
    spread = 0.0
    for p in placed:
        gap = (p.up - p.down) @ np.asarray(axes.steps)
        spread += p.count * float(np.max(gap, initial=0.0))
    out.below = _up(out.shift_down + spread * (1.0 + 4.0 * U))
    return out


def _placement(
    law: Law,
    k: int,
    coords: list[tuple[int, IntArray, IntArray]],
    offset: float,
    axes: _Axes,
    D: int,
) -> _Placed:
    """A part's indices on all ``D`` coordinates (a point mass: index 0 everywhere), and the
    slacks of its representatives."""
    values = law.loss
    up = np.zeros((len(values), D), dtype=np.int64)
    down = np.zeros((len(values), D), dtype=np.int64)
    for d, u, w in coords:
        up[:, d], down[:, d] = u, w
    steps = np.asarray(axes.steps)
    rep_up, rep_down = offset + up @ steps, offset + down @ steps
    axes.base += k * offset
    merge = certify.gamma(law.outputs + 2)
    return _Placed(
        up,
        down,
        law.mass,
        _slack(values, rep_up, law, 1),
        _slack(values, rep_down, law, -1),
        k,
        merge,
    )


def _locate(
    v: FloatArray, law: Law, axes: _Axes, k: int
) -> tuple[list[tuple[int, IntArray, IntArray]], float] | None:
    """Where a part's values sit: ``([(coordinate, up, down), …], offset)``, or None.

    Exactly on a lattice ``v₀ + h·n`` (a step already in use, else the smallest gap over
    ``q ≤`` :data:`MAX_DIVISOR`). Else on a lattice through all but at most
    :data:`MAX_EXCEPTIONS` values (a clamped noise's end columns): each exception ``e`` gets a
    coordinate of its own, step ``r = e − (o + h·⌊(e − o)/h⌋)``, on which it counts 1, so the
    composed loss stays exact.
    """
    tau = 64.0 * (law.rounding + 4.0 * U * float(np.max(np.abs(v))))
    for d, h in enumerate(axes.steps):
        n = _snap(v, h, tau)
        if n is not None:
            return [(d, n, n)], float(v[0])
    gaps = np.diff(v)
    h0 = float(np.min(gaps))
    for q in range(1, MAX_DIVISOR + 1):
        n = _snap(v, h0 / q, tau)
        if n is not None:
            return [(axes.add(h0 / q), n, n)], float(v[0])
    best: tuple[int, int, float, float] | None = None
    candidates = list(enumerate(axes.steps))
    for g in np.unique(gaps[gaps > tau])[:6].tolist():
        candidates += [(-1, g / q) for q in range(1, 5)]
    for d, h in candidates:
        for a in v[:: max(len(v) // 8, 1)].tolist():
            n = np.rint((v - a) / h)
            hits = int(np.sum(np.abs(v - a - n * h) <= tau))
            enough = hits >= max(len(v) - MAX_EXCEPTIONS, 2)
            if enough and (best is None or hits > best[0]):
                best = (hits, d, h, a)
    if best is None:
        return None
    _, d, h, a = best
    exact = np.rint((v - a) / h)
    on = np.abs(v - a - exact * h) <= tau
    n = np.where(on, exact, np.floor((v - a) / h))
    low = float(n.min())
    misses = int(np.sum(~on))
    if (
        float(n.max()) - low > MAX_EXTENT
        or (k + 1.0) ** misses * (k * (float(n.max()) - low) + 1) > MAX_CELLS
    ):
        return None  # the exceptions' coordinates would not fit: the grid takes the part
    offset = a + h * low
    index = (n - low).astype(np.int64)
    if d < 0:
        d = axes.add(h)
    coords = [(d, index, index)]
    for i in np.flatnonzero(~on).tolist():
        r = float(v[i] - (offset + h * index[i]))
        one = np.zeros(len(v), dtype=np.int64)
        one[i] = 1
        coords.append((axes.add(r), one, one))
    return coords, offset


def _place_loose(
    loose: list[tuple[Law, int]], axes: _Axes, grid_cells: int, what: str
) -> list[tuple[Law, int, list[tuple[int, IntArray, IntArray]], float]]:
    """Put the parts on no lattice on one shared grid (values rounded up, and down)."""
    cells = max(grid_cells, 2)
    span = sum(k * float(law.loss[-1] - law.loss[0]) for law, k in loose)
    folds = sum(k for _, k in loose)
    if cells <= folds + 1:
        raise ProblemTooLargeError(
            f"{what}: {folds} releases need a grid of more than {cells} cells, dpcap's grid "
            f"size (dpcap.accounting._lattice.GRID_CELLS); their exact lattice is above "
            f"MAX_CELLS = {MAX_CELLS} or MAX_WORK = {MAX_WORK:.3g}: compose fewer releases"
        )
    h = span / (cells - folds - 1)
    dim = axes.add(h)
    out = []
    for law, k in loose:
        v = law.loss
        gaps = (v - v[0]) / h
        up = np.ceil(gaps).astype(np.int64)
        down = np.floor(gaps).astype(np.int64)
        out.append((law, k, [(dim, up, down)], float(v[0])))
    return out


def _losses(axes: _Axes, shape: tuple[int, ...]) -> FloatArray:
    """The representative loss ``base + Σ_d h_d n_d`` of every cell, in C order."""
    out = np.array(axes.base)
    for h, n in zip(axes.steps, shape, strict=True):
        out = np.add.outer(out, h * np.arange(n, dtype=np.float64))
    flat: FloatArray = np.asarray(out, dtype=np.float64).ravel()
    return flat
