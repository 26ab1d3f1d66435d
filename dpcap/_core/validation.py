"""One validation function per argument kind (the scipy.optimize habit).

Every function returns a clean ``float64`` array or Python number, or raises a ``ValueError``
subclass from :mod:`dpcap.result` whose message names the argument and echoes the value.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import (
    ChannelError,
    MechanismError,
    ParameterError,
    PriorError,
    ProblemTooLargeError,
)

#: Largest tolerated deviation of a row sum (or of a distribution's total) from 1. Inputs inside
#: the tolerance are renormalised exactly; inputs outside it are rejected.
SUM_ATOL = 1e-9

#: Information units accepted by ``unit=`` and the divisor that converts nats into them.
UNITS: dict[str, float] = {"nats": 1.0, "bits": math.log(2.0)}

#: The norms of a grid of points (:func:`dpcap.metric_privacy.grid_metric`,
#: :func:`dpcap.mechanisms.planar_geometric`).
NORMS = ("euclidean", "manhattan")

FloatArray = NDArray[np.float64]

#: Largest dense matrix (``rows × outputs`` float64 entries, 1 GiB) dpcap will materialise.
MAX_DENSE_ELEMENTS = 2**27


def show(value: Any, limit: int = 60) -> str:
    """A short ``repr`` of a user value for error messages."""
    text = repr(value)
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=8, edgeitems=2, precision=6)
        text = f"array of shape {value.shape}: {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def numeric(value: Any, name: str, error: type[ValueError] = ParameterError) -> NDArray[Any]:
    """The one rule for numbers from a user: a real array (any shape), or a clear error.

    Refused, each with a message naming ``name``: ``None``; strings and paths (a file name is
    not a matrix: load it first, or use the command line); bools and boolean arrays (a number
    is meant); complex numbers, even with a zero imaginary part (the imaginary part would be
    dropped silently); ragged nested lists (rows of different lengths); arrays of other
    objects. The array returned still has the caller's dtype; :func:`real_array` converts it.
    """
    what = (
        "a real number (or an array of real numbers)"
        if error is ParameterError
        else "an array of real numbers"
    )
    if value is None:
        raise error(f"{name} must be {what}, got None")
    if isinstance(value, (str, bytes, os.PathLike)):
        hint = (
            "; a file name is not a matrix: load it first (e.g. numpy.load) or use the command "
            "line (dpcap audit FILE)"
            if error in (ChannelError, MechanismError)
            else ""
        )
        raise error(f"{name} must be {what}, got the string {show(value)}{hint}")
    if isinstance(value, (bool, np.bool_)):
        raise error(f"{name} must be {what}, got the bool {value!r}")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise error(
            f"{name} must be a rectangular array of real numbers, got a ragged nested sequence "
            f"(rows of different lengths): {show(value)}"
        ) from exc
    kind = arr.dtype.kind
    if kind == "O":
        for item in arr.flat:
            if item is None or isinstance(item, (str, bytes, bool, np.bool_, complex)):
                raise error(f"{name} must hold real numbers only, got {item!r} in {show(value)}")
            if not isinstance(item, numbers.Real):
                raise error(
                    f"{name} must be a rectangular array of real numbers, got an element "
                    f"{show(item)} in {show(value)}"
                )
        try:
            arr = arr.astype(np.float64)
        except OverflowError:  # an integer beyond the doubles (about 1.8e308)
            big = next(i for i in arr.flat if isinstance(i, int) and abs(i) > 2**1023)
            raise error(
                f"{name} holds an integer too large for a double ({show(big, 30)}, beyond "
                f"1.8e308): {show(value)}"
            ) from None
        kind = "f"
    if kind == "c":
        if not arr.size:  # nothing to show: the dtype alone is the reason
            raise error(f"{name} must be real, got an empty array of complex dtype {arr.dtype}")
        imaginary = np.argwhere(arr.imag != 0)
        where = tuple(int(i) for i in imaginary[0]) if len(imaginary) else (0,) * arr.ndim
        raise error(
            f"{name} must be real, got complex numbers (e.g. {complex(arr[where])!r} at index "
            f"{where}); pass the real part explicitly if that is what you mean"
        )
    if kind == "b":
        raise error(f"{name} must hold numbers, got booleans: {show(value)}")
    if kind in "USV":
        raise error(f"{name} must be an array of real numbers, got strings: {show(value)}")
    if kind not in "iuf":
        raise error(f"{name} must hold real numbers, got dtype {arr.dtype}: {show(value)}")
    return arr


def real_array(value: Any, name: str, error: type[ValueError] = ParameterError) -> FloatArray:
    """:func:`numeric`, as a fresh ``float64`` array in which ``−0.0`` has become ``+0.0``."""
    arr = numeric(value, name, error)
    if arr.size > MAX_DENSE_ELEMENTS:
        raise ProblemTooLargeError(
            f"{name} has {arr.size} entries (shape {arr.shape}), above dpcap's limit of "
            f"{MAX_DENSE_ELEMENTS} entries for a dense array"
        )
    # a fresh float64 copy in one pass, in which −0.0 + 0.0 is +0.0: no sign-dependent
    # arithmetic downstream (1/x, copysign)
    out: FloatArray = np.empty(arr.shape, dtype=np.float64)
    np.add(arr, 0.0, out=out)
    return out


def _as_float_array(value: Any, name: str, error: type[ValueError]) -> FloatArray:
    arr = real_array(value, name, error)
    if arr.size and not np.isfinite(arr).all():  # one pass; the culprit is looked up after
        if np.isnan(arr).any():
            where = tuple(int(i) for i in np.argwhere(np.isnan(arr))[0])
            raise error(f"{name} contains NaN at index {where}")
        where = tuple(int(i) for i in np.argwhere(np.isinf(arr))[0])
        raise error(f"{name} contains an infinite entry at index {where}")
    if arr.size and arr.min() < 0:
        where = tuple(int(i) for i in np.argwhere(arr < 0)[0])
        raise error(f"{name} has a negative entry {float(arr[where])!r} at index {where}")
    return arr


def stochastic_matrix(value: Any, name: str = "W", atol: float = SUM_ATOL) -> FloatArray:
    """Validate a row-stochastic matrix ``W[x, y] = P(Y=y | X=x)`` and renormalise its rows.

    Rows must sum to 1 within ``atol`` (:data:`SUM_ATOL` unless a caller was asked for more,
    see :func:`normalize_tolerance`); they are then divided by their sums so that downstream code
    sees exact distributions. The result is a fresh, read-only array.
    """
    if hasattr(value, "matrix") and not isinstance(value, np.ndarray):
        value = value.matrix
    arr = numeric(value, name, ChannelError)
    if arr.ndim != 2:
        raise ChannelError(
            f"{name} must be a 2-D matrix (rows are inputs), got an array of shape {arr.shape}"
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ChannelError(f"{name} must have at least one row and one column, got {arr.shape}")
    arr = _as_float_array(arr, name, ChannelError)
    sums = arr.sum(axis=1)
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        row = int(np.argmax(bad))
        hint = (
            "; rounded rows: normalize= (--normalize on the command line)"
            if atol == SUM_ATOL
            else ""
        )
        raise ChannelError(
            f"{name} is not row-stochastic: row {row} sums to {float(sums[row])!r} "
            f"(each row must sum to 1 within {atol:g}){hint}"
        )
    arr /= sums[:, None]
    arr.setflags(write=False)
    return arr


#: Largest ``normalize=`` tolerance: rows further than this from 1 are not rounding.
MAX_NORMALIZE = 1e-3


def normalize_tolerance(value: Any) -> float:
    """The row-sum tolerance of ``normalize=``: ``None``/``False`` (the default
    :data:`SUM_ATOL`) or a number in ``[SUM_ATOL, MAX_NORMALIZE]``: rows rounded to a few
    digits (a CSV with 7 decimals) sum to 1 within it and are renormalised exactly."""
    if value is None or value is False:
        return SUM_ATOL
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterError(
            f"normalize must be a tolerance in [{SUM_ATOL:g}, {MAX_NORMALIZE:g}] (or None), "
            f"got {show(value)}"
        )
    tol = float(value)
    if not SUM_ATOL <= tol <= MAX_NORMALIZE:
        raise ParameterError(
            f"normalize must be a tolerance in [{SUM_ATOL:g}, {MAX_NORMALIZE:g}] (or None), "
            f"got {value!r}"
        )
    return tol


def normalized_matrix(value: Any, normalize: Any, name: str = "W") -> tuple[FloatArray, float]:
    """:func:`stochastic_matrix` with rows accepted within ``normalize``
    (:func:`normalize_tolerance`), and the largest ``|row sum − 1|`` found when ``normalize`` was
    given (0.0 otherwise)."""
    tol = normalize_tolerance(normalize)
    if tol == SUM_ATOL:
        return stochastic_matrix(value, name), 0.0
    if hasattr(value, "matrix") and not isinstance(value, np.ndarray):
        value = value.matrix
    given = real_array(value, name, ChannelError)
    deviation = float(np.max(np.abs(given.sum(axis=1) - 1.0))) if given.ndim == 2 else 0.0
    return stochastic_matrix(given, name, tol), deviation


def stochastic_stack(value: Any, name: str = "Ws") -> FloatArray:
    """Validate a stack ``(B, n_inputs, n_outputs)`` of row-stochastic matrices, vectorised.

    Same rules and messages as :func:`stochastic_matrix`, naming the element (``Ws[b]``).
    """
    arr = numeric(value, name, ChannelError)
    if arr.ndim != 3 or 0 in arr.shape:
        raise ChannelError(
            f"{name} must be a non-empty (B, n_inputs, n_outputs) stack, got shape {arr.shape}"
        )
    arr = _as_float_array(arr, name, ChannelError)
    sums = arr.sum(axis=-1)
    bad = np.abs(sums - 1.0) > SUM_ATOL
    if bad.any():
        b, row = (int(i) for i in np.argwhere(bad)[0])
        raise ChannelError(
            f"{name}[{b}] is not row-stochastic: row {row} sums to {float(sums[b, row])!r} "
            f"(each row must sum to 1 within {SUM_ATOL:g})"
        )
    arr /= sums[..., None]
    return arr


def distribution(value: Any, name: str = "prior", size: int | None = None) -> FloatArray:
    """Validate a probability vector (1-D, non-negative, summing to 1) and renormalise it."""
    arr = numeric(value, name, PriorError)
    if arr.ndim != 1:
        raise PriorError(f"{name} must be a 1-D probability vector, got shape {arr.shape}")
    if size is not None and arr.shape[0] != size:
        raise PriorError(f"{name} must have length {size}, got length {arr.shape[0]}")
    return law(arr, name)


def prior_and_channel(prior: Any, W: Any) -> tuple[FloatArray, FloatArray]:
    """``(prior, W)`` validated together: a row-stochastic ``W`` and a prior on its rows."""
    matrix = stochastic_matrix(W, "W")
    return distribution(prior, "prior", size=matrix.shape[0]), matrix


def law(value: Any, name: str = "joint", shape: tuple[int, ...] | None = None) -> FloatArray:
    """Validate a probability law of any shape (e.g. a joint law on ``X_1 × … × X_n``)."""
    arr = numeric(value, name, PriorError)
    if shape is not None and arr.shape != tuple(shape):
        raise PriorError(f"{name} must have shape {tuple(shape)}, got shape {arr.shape}")
    if arr.size == 0:
        raise PriorError(f"{name} must not be empty")
    arr = _as_float_array(arr, name, PriorError)
    total = float(arr.sum())
    if abs(total - 1.0) > SUM_ATOL:
        raise PriorError(f"{name} must sum to 1 (within {SUM_ATOL:g}), got a total of {total!r}")
    return arr / total


def order(alpha: Any, name: str = "alpha") -> float:
    """Validate a Rényi order α ∈ [0, ∞] (∞ is a real value)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise ParameterError(f"{name} must be a real number in [0, inf], got {show(alpha)}")
    value = float(alpha)
    if math.isnan(value) or value < 0:
        raise ParameterError(f"{name} must be in [0, inf], got {show(alpha)}")
    return value


def nonnegative(value: Any, name: str, *, allow_inf: bool = True) -> FloatArray:
    """Validate a scalar or array of parameters in ``[0, ∞]`` (ε, γ, …); returns an array."""
    arr = real_array(value, name)
    if np.isnan(arr).any():
        raise ParameterError(f"{name} must not be NaN, got {show(value)}")
    if (arr < 0).any():
        raise ParameterError(f"{name} must be >= 0, got {show(value)}")
    if not allow_inf and np.isinf(arr).any():
        raise ParameterError(f"{name} must be finite, got {show(value)}")
    return arr


def probability(value: Any, name: str) -> FloatArray:
    """Validate a scalar or array of numbers in [0, 1]; returns an array."""
    arr = nonnegative(value, name)
    if (arr > 1).any():
        raise ParameterError(f"{name} must be in [0, 1], got {show(value)}")
    return arr


def integer(value: Any, name: str, minimum: int = 1) -> int:
    """Validate an integer ``>= minimum`` (bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {show(value)}")
    if int(value) < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def flag(value: Any, name: str) -> bool:
    """Validate a switch: ``True`` or ``False`` (NumPy bools too; not 0/1 or strings)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False, got {show(value)}")
    return bool(value)


def tolerance(tol: Any, unit: str = "nats") -> float:
    """Validate a certified-gap tolerance: a positive, finite real number (bools refused)."""
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
        raise ParameterError(f"tol must be a positive finite number ({unit}), got {show(tol)}")
    value = float(tol)
    if not 0.0 < value < math.inf:
        raise ParameterError(f"tol must be a positive finite number ({unit}), got {show(tol)}")
    return value


def rtol(value: Any) -> float:
    """Validate a relative tolerance: a finite real number in ``[0, 1)`` (bools refused).

    A bracket then converges when ``upper − lower ≤ max(tol, rtol·|upper|)``
    (:func:`dpcap._core.certify.target`); 0 (the default of every query) leaves ``tol`` alone.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"rtol must be a finite number in [0, 1), got {show(value)}")
    number = float(value)
    if not 0.0 <= number < 1.0:  # NaN fails both comparisons
        raise ParameterError(f"rtol must be a finite number in [0, 1), got {show(value)}")
    return number + 0.0  # -0.0 → 0.0


#: Most engine solves of a one-dimensional search of a query (a multiplier, a slope, a level:
#: the capacity–cost multiplier, the rate–distortion slope, the privacy–distortion level).
MAX_SOLVES = 100

#: Default iteration budget of the iterative engines (Blahut–Arimoto and its relatives).
DEFAULT_MAX_ITER = 100_000


def max_iter(value: Any, default: int = DEFAULT_MAX_ITER) -> int:
    """Validate an iteration budget (an integer >= 1); None gives ``default``."""
    return default if value is None else integer(value, "max_iter", 1)


def choice(value: Any, options: tuple[str, ...], name: str) -> str:
    """Validate a name among ``options`` (exact spelling), e.g. ``method`` or ``kind``."""
    if not isinstance(value, str) or value not in options:
        raise ParameterError(f"{name} must be one of {options}, got {show(value)}")
    return value


def solver(value: Any, options: tuple[str, ...], name: str = "solver") -> str:
    """Validate an external solver's name among ``options``, case-insensitively.

    The names and their order live in :mod:`dpcap.solvers.status`; the canonical (upper-case)
    spelling is returned.
    """
    from dpcap.solvers.status import canonical

    found = canonical(value, options)
    if found is None:
        raise ParameterError(
            f"{name} must be one of {options}, got {show(value)} (names are case-insensitive)"
        )
    return found


def conic_solver(method: str, name: Any, options: tuple[str, ...]) -> str | None:
    """The cvxpy solver of ``method="conic"`` (its default, the first of ``options``), or None
    for any other method, where passing ``solver=`` is an error (it would be ignored)."""
    if method != "conic":
        if name is not None:
            raise ParameterError(
                f"solver selects a cvxpy solver for method='conic' only; got solver={name!r} "
                f"with method={method!r}"
            )
        return None
    return solver(options[0] if name is None else name, options)


def grid_shape(grid: Any, what: str) -> tuple[int, int]:
    """A grid's ``(rows, cols)``, each a positive integer, refused (naming ``grid``) otherwise
    or when a dense ``(rows·cols)²`` array for ``what`` would be too large."""
    try:
        dims = tuple(grid)
    except TypeError as exc:
        raise ParameterError(f"grid must be a pair (rows, cols), got {show(grid)}") from exc
    if len(dims) != 2:
        raise ParameterError(f"grid must be a pair (rows, cols), got {show(grid)}")
    rows, cols = (integer(v, "grid", minimum=1) for v in dims)
    dense_size(rows * cols, rows * cols, f"{what} {(rows, cols)}")
    return rows, cols


def cost_matrix(
    value: Any, rows: int, name: str, *, rows_of: str = "input", nonnegative: bool = True
) -> FloatArray:
    """Validate a distortion or loss matrix ``d[x, y]``: 2-D, ``rows`` rows, finite entries.

    ``rows_of`` names what a row stands for in the message (an input of the prior, a database,
    a value of X); ``nonnegative`` also refuses negative entries (a distortion), while a loss
    may be any finite number. The result is a fresh, read-only array.
    """
    arr = numeric(value, name)
    if arr.ndim != 2 or arr.shape[0] != rows or arr.shape[1] == 0:
        raise ParameterError(
            f"{name} must be a 2-D matrix {name}[x, y] with one row per {rows_of} ({rows}) "
            f"and at least one column, got shape {arr.shape}"
        )
    matrix = real_array(arr, name)
    if not np.isfinite(matrix).all():
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(matrix))[0])
        raise ParameterError(
            f"{name} must be finite, got {float(matrix[where])!r} at index {where}"
        )
    if nonnegative and (matrix < 0).any():
        where = tuple(int(i) for i in np.argwhere(matrix < 0)[0])
        raise ParameterError(
            f"{name} has a negative entry {float(matrix[where])!r} at index {where}"
        )
    matrix.setflags(write=False)
    return matrix


def unit_divisor(unit: Any) -> float:
    """The divisor that turns nats into ``unit`` ("nats" or "bits")."""
    if not isinstance(unit, str) or unit not in UNITS:
        raise ParameterError(f"unit must be one of {sorted(UNITS)}, got {show(unit)}")
    return UNITS[unit]


def nonnegative_scalar(
    value: Any, name: str, *, allow_inf: bool = True, positive: bool = False
) -> float:
    """Validate one real number in ``[0, ∞]`` (``(0, ∞]`` if ``positive``; finite unless
    ``allow_inf``): a parameter such as ε, σ or a sensitivity."""
    arr = nonnegative(value, name, allow_inf=allow_inf)
    if arr.ndim != 0:
        raise ParameterError(f"{name} must be a scalar, got {show(value)}")
    out = float(arr)
    if positive and out == 0.0:
        raise ParameterError(f"{name} must be > 0, got {show(value)}")
    return out


def probability_scalar(value: Any, name: str) -> float:
    """Validate one probability in ``[0, 1]``."""
    arr = probability(value, name)
    if arr.ndim != 0:
        raise ParameterError(f"{name} must be a scalar, got {show(value)}")
    return float(arr)


def domain_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    """Validate the domain sizes ``(m_1, …, m_n)`` of a database: at least one entry, each ≥ 1."""
    try:
        dims = tuple(shape)
    except TypeError as exc:
        raise MechanismError(
            f"{name} must be a sequence of domain sizes, got {show(shape)}"
        ) from exc
    if not dims:
        raise MechanismError(f"{name} must name at least one entry, got ()")
    for size in dims:
        if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 1:
            raise MechanismError(
                f"{name} must hold positive integers (domain sizes), got {show(shape)}"
            )
    return tuple(int(s) for s in dims)


def integer_vectors(value: Any, name: str, what: str) -> list[NDArray[Any]]:
    """One non-empty 1-D integer vector per database entry (scores, cell maps, score sets),
    in its own integer dtype (a caller range-checks before any cast to int64); ``what`` names
    a vector in the errors ("integer score vectors")."""
    try:
        rows = [np.asarray(v) for v in value]
    except TypeError as exc:
        raise MechanismError(f"{name} must be a sequence of {what}, got {show(value)}") from exc
    if not rows:
        raise MechanismError(f"{name} must describe at least one entry, got none")
    for i, r in enumerate(rows):
        if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer):
            raise MechanismError(
                f"{name}[{i}] must be a non-empty 1-D array of integers, got {show(r)}"
            )
    return rows


#: The advice when a query needs every row of a structured mechanism.
EVERY_ROW = (
    "this query needs every database's row; capacity, renyi_capacity, max_leakage, midp, "
    "correlated_leakage and the DP metrics work on the structure"
)


def dense_size(rows: int, cols: int, what: str, hint: str | None = None) -> None:
    """Refuse to materialise a ``rows × cols`` float64 matrix above :data:`MAX_DENSE_ELEMENTS`;
    ``hint`` replaces the default advice (describe the mechanism by its structure)."""
    size = rows * cols
    if size > MAX_DENSE_ELEMENTS:
        gib = f"{size * 8 / 2**30:.1f} GiB" if size < 2**70 else "far beyond any memory"
        shown = str(rows) if rows < 10**15 else f"~10^{math.log10(rows):.1f}"
        raise ProblemTooLargeError(
            f"{what} would be a dense {shown} x {cols} matrix ({gib}), above dpcap's "
            f"limit of {MAX_DENSE_ELEMENTS} entries; "
            + (
                hint
                or "describe the mechanism by its structure (a query followed by a noise "
                "channel) instead of enumerating every database"
            )
        )


def entry(i: Any, entries: int) -> int:
    """An entry index of a mechanism with ``entries`` entries (MechanismError otherwise)."""
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise MechanismError(f"entry must be an integer, got {show(i)}")
    if not 0 <= int(i) < entries:
        raise MechanismError(
            f"entry must be in [0, {entries - 1}] for a mechanism with {entries} entries, got {i!r}"
        )
    return int(i)


def database(values: Any, name: str, length: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    """``length`` integer values, each within its domain size ``dims`` (a database or a
    context; MechanismError otherwise)."""
    try:
        items = tuple(int(v) for v in values)
    except (TypeError, ValueError) as exc:
        raise MechanismError(
            f"{name} must be a sequence of {length} integers, got {show(values)}"
        ) from exc
    if len(items) != length:
        raise MechanismError(f"{name} must have {length} values, got {show(values)}")
    for value, size in zip(items, dims, strict=True):
        if not 0 <= value < size:
            raise MechanismError(f"{name} {show(values)} is outside the domain sizes {dims}")
    return items
