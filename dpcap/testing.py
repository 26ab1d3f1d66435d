"""Hypothesis strategies for random channels, mechanisms and parameters (dpcap's tests, yours).

Requires the ``test`` extra (hypothesis); ``import dpcap`` does not import this module, and this
module imports hypothesis at its top, so it is importable only where hypothesis is installed.

Every strategy draws *valid* input of one kind; the ``degenerate`` flags add the edge cases a
reliability test needs (``docs/mathematics.rst`` §8): zero columns, duplicate and
near-duplicate rows, entries near ``1e-300``, ``-0.0`` in place of zeros, point masses, and
tiny and huge ε and α.

>>> from hypothesis import given
>>> from dpcap.testing import channels
>>> @given(channels(max_inputs=3))
... def test_rows_sum_to_one(W):
...     assert abs(W.sum(axis=1) - 1).max() < 1e-12
>>> test_rows_sum_to_one()
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

__all__ = [
    "TINY_MASSES",
    "UNDERFLOW_MASSES",
    "channels",
    "distortions",
    "distributions",
    "epsilons",
    "joint_laws",
    "mechanisms",
    "neighbor_relations",
    "orders",
    "positive_channels",
]

FloatArray = NDArray[np.float64]

#: Tiny positive masses: near ``1e-300`` and above (``degenerate``).
TINY_MASSES = (1e-300, 3e-300, 1e-250, 1e-200, 1e-100, 1e-30, 1e-17)

#: Masses below ``1e-300``, down to the subnormal range (the smallest normal double is
#: ``2.2e-308``, the smallest positive one ``5e-324``), where products, ratios and
#: logarithms underflow or overflow (``underflow``).
UNDERFLOW_MASSES = (1e-305, 1e-307, 2.2250738585072014e-308, 1e-308, 1e-310, 1e-320, 5e-324)

#: ε values every DP metric must take: the ends of ``[0, ∞]``, values whose ``e^ε`` rounds to 1
#: or overflows, and the high- and low-privacy regimes.
EXTREME_EPSILONS = (
    0.0,
    5e-324,
    1e-300,
    1e-16,
    1e-12,
    1e-8,
    1e-3,
    0.1,
    1.0,
    5.0,
    50.0,
    709.0,
    710.0,
    745.0,
    1e300,
    math.inf,
)

#: Rényi orders at the exact branches (0, 1, ∞), next to 1 on both sides, and at the ends.
EXTREME_ORDERS = (
    0.0,
    1e-6,
    0.01,
    0.05,
    0.5,
    1.0 - 1e-12,
    1.0 - 1e-6,
    1.0,
    1.0 + 1e-12,
    1.0 + 1e-6,
    2.0,
    50.0,
    1e3,
    1e6,
    math.inf,
)


def _normalise(weights: list[float], zeros: list[bool] | None = None) -> FloatArray:
    w = np.asarray(weights, dtype=np.float64)
    if zeros is not None:
        keep = ~np.asarray(zeros)
        if keep.any():
            w = np.where(keep, w, 0.0)
    out: FloatArray = w / w.sum()
    return out


@st.composite
def distributions(
    draw: Any,
    size: int,
    *,
    allow_zeros: bool = True,
    min_mass: float = 1e-3,
    degenerate: bool = False,
    underflow: bool = False,
) -> FloatArray:
    """A probability vector of length ``size``; with ``allow_zeros`` some entries may be 0.

    With ``degenerate``, some entries may also be tiny (:data:`TINY_MASSES`; the vector is then
    a near-point mass or close to a face of the simplex) and (if ``allow_zeros``) zeros may be
    written ``-0.0``; ``underflow`` adds the masses of :data:`UNDERFLOW_MASSES`.
    """
    weights = draw(st.lists(st.floats(min_mass, 1.0), min_size=size, max_size=size))
    zeros = draw(st.lists(st.booleans(), min_size=size, max_size=size)) if allow_zeros else None
    p = _normalise(weights, zeros)
    if (degenerate or underflow) and size > 1 and draw(st.booleans()):
        p = _tiny_entries(draw, p[None, :], allow_zeros=allow_zeros, underflow=underflow)[0]
    if degenerate and allow_zeros and draw(st.booleans()):
        p = np.where(p == 0.0, -0.0, p)
    return p


def _tiny_entries(
    draw: Any, W: FloatArray, *, allow_zeros: bool, underflow: bool = False
) -> FloatArray:
    """Replace some entries of each row by tiny masses and renormalise the row.

    A row keeps at least one entry of ordinary size, so it still sums to 1 within rounding.
    """
    masses = TINY_MASSES + UNDERFLOW_MASSES if underflow else TINY_MASSES
    W = W.copy()
    nx, ny = W.shape
    for x in range(nx):
        big = int(np.argmax(W[x]))
        for y in range(ny):
            if y != big and (allow_zeros or W[x, y] > 0) and draw(st.integers(0, 3)) == 0:
                W[x, y] = draw(st.sampled_from(masses))
        W[x] /= W[x].sum()
    return W


@st.composite
def channels(
    draw: Any,
    *,
    min_inputs: int = 2,
    max_inputs: int = 5,
    min_outputs: int = 2,
    max_outputs: int = 5,
    allow_zeros: bool = True,
    degenerate: bool = False,
    underflow: bool = False,
) -> FloatArray:
    """A row-stochastic matrix ``W[x, y]`` with random sizes in the given ranges.

    With ``degenerate``, each of these may be applied (the result can then exceed the size
    ranges by one row and one column): an inserted zero column (an output no input produces;
    only if ``allow_zeros``), a duplicate row, a near-duplicate row (a copy perturbed at the
    ``1e-13`` relative level and renormalised), entries near ``1e-300``
    (:data:`TINY_MASSES`), and zeros written as ``-0.0``; the rows are then shuffled.
    ``underflow`` (which implies ``degenerate``) also draws the masses of
    :data:`UNDERFLOW_MASSES`, down to the subnormal range.
    """
    degenerate = degenerate or underflow
    nx = draw(st.integers(min_inputs, max_inputs))
    ny = draw(st.integers(min_outputs, max_outputs))
    rows = [draw(distributions(ny, allow_zeros=allow_zeros)) for _ in range(nx)]
    W = np.vstack(rows)
    if not degenerate:
        return W
    if draw(st.booleans()):
        W = _tiny_entries(draw, W, allow_zeros=allow_zeros, underflow=underflow)
    if allow_zeros and draw(st.booleans()):
        at = draw(st.integers(0, W.shape[1]))
        W = np.insert(W, at, 0.0, axis=1)
    kind = draw(st.sampled_from(("none", "duplicate", "near-duplicate")))
    if kind != "none":
        source = W[draw(st.integers(0, W.shape[0] - 1))].copy()
        if kind == "near-duplicate":
            scale = draw(st.sampled_from((1e-13, 1e-10, 1e-15)))
            bump = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=ny, max_size=ny)))
            bump = np.resize(bump, source.shape)
            source = source * (1.0 + scale * bump)
            source /= source.sum()
        W = np.vstack([W, source])
    order = draw(st.permutations(range(W.shape[0])))
    W = W[list(order)]
    if allow_zeros and draw(st.booleans()):
        W = np.where(W == 0.0, -0.0, W)
    return W


def positive_channels(**kwargs: Any) -> Any:
    """Channels with every entry positive (finite ε-DP level)."""
    return channels(allow_zeros=False, **kwargs)


@st.composite
def mechanisms(
    draw: Any,
    *,
    max_entries: int = 3,
    max_size: int = 3,
    max_rows: int = 12,
    min_outputs: int = 2,
    max_outputs: int = 4,
    allow_zeros: bool = True,
    degenerate: bool = False,
) -> tuple[FloatArray, tuple[int, ...]]:
    """A database mechanism as ``(W, shape)``: ``W`` has one row per database of ``shape``.

    ``shape = (m_1, …, m_n)`` with ``1 ≤ n ≤ max_entries``, ``1 ≤ m_i ≤ max_size`` and at most
    ``max_rows`` databases; rows are in C order (``numpy.ravel_multi_index``). Pass the pair to
    :class:`dpcap.Mechanism` (``Mechanism(W, shape)``). ``degenerate`` draws entries near
    ``1e-300`` and repeated rows (identical slices).
    """
    shape: list[int] = []
    for _ in range(draw(st.integers(1, max_entries))):
        size = draw(st.integers(1, max_size))
        if math.prod(shape) * size > max_rows:
            break
        shape.append(size)
    if not shape:
        shape = [draw(st.integers(1, min(max_size, max_rows)))]
    rows = math.prod(shape)
    W = draw(
        channels(
            min_inputs=rows,
            max_inputs=rows,
            min_outputs=min_outputs,
            max_outputs=max_outputs,
            allow_zeros=allow_zeros,
        )
    )
    if degenerate:
        if draw(st.booleans()):
            W = _tiny_entries(draw, W, allow_zeros=allow_zeros)
        if rows > 1 and draw(st.booleans()):
            a, b = draw(st.integers(0, rows - 1)), draw(st.integers(0, rows - 1))
            W[a] = W[b]
    return W, tuple(shape)


def epsilons(*, min_value: float = 0.0, max_value: float = math.inf, extreme: bool = True) -> Any:
    """ε in ``[min_value, max_value]`` (∞ included when ``max_value`` is ∞).

    Ordinary values in ``[0, 20]``, plus with ``extreme`` the ends of the range, subnormals,
    values whose ``e^ε`` rounds to 1 or overflows (709, 710, 745, 1e300) and ∞.
    """
    top = min(max_value, 20.0)
    ordinary = st.floats(min_value, top) if top >= min_value else st.nothing()
    if not extreme:
        return ordinary
    edges = [e for e in EXTREME_EPSILONS if min_value <= e <= max_value]
    return st.one_of(ordinary, st.sampled_from(edges)) if edges else ordinary


def orders(*, min_value: float = 0.0, max_value: float = math.inf, extreme: bool = True) -> Any:
    """Rényi orders α in ``[min_value, max_value]``: ordinary values in ``[0, 20]`` and, with
    ``extreme``, the exact branches 0, 1 and ∞, orders within ``1e-12`` of 1, tiny and huge α."""
    top = min(max_value, 20.0)
    ordinary = st.floats(min_value, top) if top >= min_value else st.nothing()
    if not extreme:
        return ordinary
    edges = [a for a in EXTREME_ORDERS if min_value <= a <= max_value]
    return st.one_of(ordinary, st.sampled_from(edges)) if edges else ordinary


@st.composite
def joint_laws(
    draw: Any,
    *,
    min_rows: int = 2,
    max_rows: int = 3,
    min_cols: int = 2,
    max_cols: int = 3,
    allow_zeros: bool = True,
    degenerate: bool = False,
) -> FloatArray:
    """A joint law ``P[s, x]`` (all entries summing to 1) of shape ``(rows, cols)``."""
    rows = draw(st.integers(min_rows, max_rows))
    cols = draw(st.integers(min_cols, max_cols))
    flat: FloatArray = draw(
        distributions(rows * cols, allow_zeros=allow_zeros, degenerate=degenerate)
    )
    out: FloatArray = flat.reshape(rows, cols)
    return out


@st.composite
def distortions(
    draw: Any, rows: int, cols: int, *, max_value: float = 4.0, integer: bool | None = None
) -> FloatArray:
    """A non-negative distortion (or loss) matrix ``d[x, y]`` of shape ``(rows, cols)``.

    With ``integer`` (drawn when None) the entries are small integers, so ties between outputs
    and between inputs are common (Hamming-like distortions); otherwise floats in
    ``[0, max_value]``.
    """
    if integer is None:
        integer = draw(st.booleans())
    element = st.integers(0, 3).map(float) if integer else st.floats(0.0, max_value)
    values = draw(st.lists(element, min_size=rows * cols, max_size=rows * cols))
    return np.asarray(values, dtype=np.float64).reshape(rows, cols)


@st.composite
def neighbor_relations(draw: Any, shape: tuple[int, ...]) -> Any:
    """A neighbour relation valid on databases of ``shape``, in any of its accepted forms.

    One of the names ``"hamming"``, ``"line"`` and ``"all"``, an explicit ``(k, 2)`` array of
    row-index pairs (possibly with repeats and both orders), an explicit ``(k, 2, n)`` array of
    database pairs, or a predicate on two databases.
    """
    rows = math.prod(shape)
    form = draw(st.sampled_from(("name", "row pairs", "database pairs", "predicate")))
    if form == "name" or rows < 2:
        return draw(st.sampled_from(("hamming", "line", "all")))
    pair = st.tuples(st.integers(0, rows - 1), st.integers(0, rows - 1)).filter(
        lambda ij: ij[0] != ij[1]
    )
    if form == "row pairs":
        return np.array(draw(st.lists(pair, min_size=1, max_size=6)), dtype=np.int64)
    if form == "database pairs":
        index = draw(st.lists(pair, min_size=1, max_size=6))
        return np.array(
            [[np.unravel_index(i, shape), np.unravel_index(j, shape)] for i, j in index],
            dtype=np.int64,
        )
    limit: int = draw(st.integers(1, max(1, max(shape) - 1)))

    def within(x: tuple[int, ...], y: tuple[int, ...]) -> bool:
        return sum(abs(int(a) - int(b)) for a, b in zip(x, y, strict=True)) <= limit

    return within
