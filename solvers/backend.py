"""The array library and device of an engine's input, and the few operations it needs spelled out.

The batched engine (:mod:`dpcap.solvers.blahut`) is written against the Python array API
standard: ``W`` may be a NumPy array (the default, and the only one dpcap ever creates) or an
array of any library that ``array_api_compat.array_namespace`` recognises (PyTorch, CuPy,
``array_api_strict``, …); the engine then runs in that library, on the array's device. A
:class:`Space` is that namespace and device. It adds what the standard leaves to the caller:
creating arrays on the input's device, gathering and scattering rows by index arrays kept on the
host, and moving results back to host NumPy, where every certificate is evaluated.

A NumPy input gets :data:`NUMPY`, whose namespace is ``numpy`` itself (not the
``array_api_compat`` wrapper): NumPy keeps its own calls and its exact arithmetic, and neither
``array_api_compat`` nor any other array library is imported for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BLOCK_ELEMENTS", "NUMPY", "Space", "is_foreign_array", "space", "span", "to_host"]

#: Entries per block of the engines' blocked passes (4 MiB of float64): the row-chunked kernels
#: and the parts of a batch (:mod:`~dpcap.solvers.blahut`), the fingerprint passes of the exact
#: reductions (:mod:`~dpcap.solvers.reduce`). No temporary has the size of the channel or batch.
BLOCK_ELEMENTS = 1 << 19

IntArray = NDArray[np.int64]


#: Longest last axis that :class:`Space`'s reductions take column by column in NumPy.
SHORT_AXIS = 8


class Space:
    """An array namespace ``xp`` and a device: where an engine's arrays are created and live.

    Index arrays (which elements of a batch are still being solved) stay host NumPy integer
    arrays; :meth:`index` moves one to the device, :meth:`take` and :meth:`put` gather and
    scatter whole rows (the first axis) with it.
    """

    __slots__ = ("device", "numpy", "scatter", "xp")

    def __init__(self, xp: Any, device: Any, *, numpy: bool = False, scatter: bool = False) -> None:
        self.xp = xp
        self.device = device
        self.numpy = numpy  # xp is numpy itself: NumPy's own calls, no device arguments
        self.scatter = scatter  # ``a[int_index] = v`` works (NumPy, PyTorch, CuPy)

    def __repr__(self) -> str:
        return f"Space({getattr(self.xp, '__name__', self.xp)!r}, device={self.device!r})"

    # -- creation on the device --------------------------------------------------------------
    def _on(self) -> dict[str, Any]:
        return {} if self.numpy else {"device": self.device}

    def full(self, shape: tuple[int, ...], value: float) -> Any:
        return self.xp.full(shape, value, dtype=self.xp.float64, **self._on())

    def zeros(self, shape: tuple[int, ...]) -> Any:
        return self.xp.zeros(shape, dtype=self.xp.float64, **self._on())

    def eye(self, n: int) -> Any:
        return self.xp.eye(n, dtype=self.xp.float64, **self._on())

    def arange(self, n: int) -> Any:
        return self.xp.arange(n, **self._on())

    def asarray(self, value: Any) -> Any:
        """``value`` (host NumPy, or an array of this space) as a float64 array on the device."""
        if self.numpy:
            return np.asarray(value, dtype=np.float64)
        return self.xp.asarray(value, dtype=self.xp.float64, **self._on())

    def float64(self, mask: Any) -> Any:
        """A boolean array as 0.0/1.0."""
        if self.numpy:
            return mask
        return self.xp.astype(mask, self.xp.float64)

    # -- what the standard spells differently from NumPy 1.x ---------------------------------
    def concat(self, arrays: Sequence[Any], axis: int) -> Any:
        if self.numpy:
            return np.concatenate(arrays, axis=axis)
        return self.xp.concat(list(arrays), axis=axis)

    def mT(self, x: Any) -> Any:
        """The stack of transposes ``(…, n, m) → (…, m, n)``."""
        if self.numpy:
            return np.swapaxes(x, -1, -2)
        return self.xp.matrix_transpose(x)

    # -- reductions over the last axis --------------------------------------------------------
    # NumPy reduces a short last axis row by row, at some 40 ns a row: on a (16384, 4) array
    # ``max(axis=-1)`` costs as much as 40 elementwise operations on it. Up to SHORT_AXIS entries
    # the reduction is written as elementwise operations on its columns instead (20x faster
    # there). The choice depends on the length of the axis only, never on the number of rows,
    # so an element of a batch is reduced exactly as the same channel alone.
    def _columns(self, ufunc: Any, x: Any, keepdims: bool) -> Any:
        out = x[..., 0].copy()
        for i in range(1, x.shape[-1]):
            ufunc(out, x[..., i], out=out)
        return out[..., None] if keepdims else out

    def _short(self, x: Any, boolean: bool = False) -> bool:
        """Whether ``x`` takes the column path: NumPy, a short last axis, and booleans for
        any/all (``boolean``) or numbers for the others (a bool sum would be a logical or)."""
        return self.numpy and 0 < x.shape[-1] <= SHORT_AXIS and (x.dtype == np.bool_) == boolean

    def max(self, x: Any, keepdims: bool = False) -> Any:
        """The maximum over the last axis."""
        if self._short(x):
            return self._columns(np.maximum, x, keepdims)
        return self.xp.max(x, axis=-1, keepdims=keepdims)

    def min(self, x: Any, keepdims: bool = False) -> Any:
        """The minimum over the last axis."""
        if self._short(x):
            return self._columns(np.minimum, x, keepdims)
        return self.xp.min(x, axis=-1, keepdims=keepdims)

    def sum(self, x: Any, keepdims: bool = False) -> Any:
        """The sum over the last axis (in column order where the axis is short)."""
        if self._short(x):
            # ∞ − ∞ is NaN without a warning: the engine's callers handle non-finite sums
            with np.errstate(invalid="ignore", over="ignore"):
                return self._columns(np.add, x, keepdims)
        return self.xp.sum(x, axis=-1, keepdims=keepdims)

    def any(self, x: Any) -> Any:
        """Whether any entry of the last axis is true."""
        if self._short(x, boolean=True):
            return self._columns(np.logical_or, x, False)
        return self.xp.any(x, axis=-1)

    def all(self, x: Any) -> Any:
        """Whether every entry of the last axis is true."""
        if self._short(x, boolean=True):
            return self._columns(np.logical_and, x, False)
        return self.xp.all(x, axis=-1)

    # -- the engine's products over stacks --------------------------------------------------
    def vecmat(self, p: Any, W: Any) -> Any:
        """``(pW)_by = Σ_x p_bx W_bxy`` for priors (B, nx) and channels (B, nx, ny).

        NumPy's einsum: 30 % faster than its batched matmul on stacks of small channels."""
        if self.numpy:
            return np.einsum("bx,bxy->by", p, W)
        return self.xp.matmul(p[:, None, :], W)[:, 0, :]

    def matvec(self, W: Any, v: Any) -> Any:
        """``Σ_y W_bxy v_by`` (B, nx); see :meth:`vecmat`."""
        if self.numpy:
            return np.einsum("bxy,by->bx", W, v)
        return self.xp.matmul(W, v[:, :, None])[:, :, 0]

    def copy(self, x: Any) -> Any:
        return x.copy() if self.numpy else self.xp.asarray(x, copy=True)

    # -- rows by host index arrays ------------------------------------------------------------
    def index(self, idx: IntArray) -> Any:
        """A host index array as an index array of this space."""
        return idx if self.numpy else self.xp.asarray(idx, **self._on())

    def take(self, a: Any, idx: Any) -> Any:
        """``a[idx]`` along the first axis (``idx`` from :meth:`index`); a copy."""
        return a[idx] if self.numpy else self.xp.take(a, idx, axis=0)

    def rows(self, a: Any, idx: IntArray, n: int) -> Any:
        """``a[idx]`` for a sorted subset ``idx`` (host) of ``range(n)``; ``a`` itself, no copy,
        when ``idx`` is all of it. ``a`` is an array, or an object that is indexed by an index
        array of this space (a model's per-element constants)."""
        if idx.size == n:
            return a
        if self.numpy:
            return a[idx]
        at = self.index(idx)
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            return self.xp.take(a, at, axis=0)
        return a[at]

    def put(self, a: Any, idx: IntArray, values: Any) -> Any:
        """``a`` with rows ``idx`` (host, sorted, distinct) replaced by ``values``.

        In place where the library scatters by integer arrays; otherwise through a boolean mask
        of the first axis (the rows of a mask are visited in order, as ``idx`` is sorted).
        Returns the array to use from now on.
        """
        if self.numpy:
            a[span(idx)] = values
            return a
        if idx.size == a.shape[0]:
            return values
        if self.scatter:
            a[self.index(idx)] = values
            return a
        mask = np.zeros(a.shape[0], dtype=bool)
        mask[idx] = True
        a[self.xp.asarray(mask, **self._on())] = values
        return a

    def host(self, x: Any) -> Any:
        """``x`` as a host NumPy array (no copy when it is one already)."""
        return x if self.numpy else to_host(x)

    def flag(self, x: Any) -> bool:
        """A 0-d boolean array as a Python bool."""
        return bool(x)


#: The space of NumPy input: ``numpy`` itself, on the host.
NUMPY = Space(np, "cpu", numpy=True, scatter=True)


def span(idx: IntArray) -> slice | IntArray:
    """A sorted, distinct host index array as a slice when it is a run of consecutive indices
    (a view instead of a gather or scatter), else itself."""
    if idx.size and int(idx[-1]) - int(idx[0]) + 1 == idx.size:
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def space(W: Any) -> Space:
    """The :class:`Space` of an array: :data:`NUMPY` for NumPy, else its array-API namespace.

    Raises
    ------
    TypeError
        If ``W`` is neither a NumPy array nor an array that ``array_api_compat`` recognises.
    """
    if isinstance(W, np.ndarray):
        return NUMPY
    import array_api_compat as compat

    xp = compat.array_namespace(W)
    if compat.is_numpy_namespace(xp):
        return NUMPY
    scatter = compat.is_torch_namespace(xp) or compat.is_cupy_namespace(xp)
    return Space(xp, compat.device(W), scatter=scatter)


def to_host(x: Any) -> NDArray[Any]:
    """An array of any array-API library as a host NumPy array (copied off a GPU)."""
    if isinstance(x, np.ndarray):
        return x
    import array_api_compat as compat

    if compat.is_torch_array(x):
        return np.asarray(x.detach().cpu().numpy())
    if compat.is_cupy_array(x):
        return np.asarray(x.get())
    try:  # DLPack: the exchange protocol of the standard, no copy for host memory
        return np.from_dlpack(x)
    except (TypeError, RuntimeError, BufferError, ValueError):
        return np.asarray(x)


def is_foreign_array(x: Any) -> bool:
    """Whether ``x`` is an array of an array-API library other than NumPy.

    Imports no array library: ``array_api_compat`` recognises PyTorch and CuPy arrays only when
    their library is already imported (an array of it could not exist otherwise).
    """
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        return False
    import array_api_compat as compat

    return bool(compat.is_array_api_obj(x))
