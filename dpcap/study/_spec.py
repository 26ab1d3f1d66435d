"""What a sweep's spec may say: its family, its grid and its queries, checked and normalised.

Everything here runs before any instance is built, so an invalid spec raises
:class:`~dpcap.errors.ParameterError` naming what is wrong, and the normalised spec is what a
store records (:mod:`dpcap.study._store`) and compares on resume.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import numbers
import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from pathlib import Path
from typing import Any

import numpy as np

from dpcap import mechanisms
from dpcap._core import validation as check
from dpcap.errors import ParameterError, ProblemTooLargeError
from dpcap.study import _run as _sweep_run
from dpcap.study import catalogue

__all__ = [
    "LISTABLE",
    "MAX_POINTS",
    "MAX_WORKERS",
    "RESERVED",
    "allowed_modules",
    "check_signature",
    "family",
    "grid_from_plain",
    "normalise",
    "picklable",
    "plain_grid",
    "points",
    "queries",
    "reference",
    "scalar",
    "too_many",
    "workers",
]

#: Column names a grid parameter may not take.
RESERVED = ("point", "query", "_q", "_k", *catalogue.RESULT_COLUMNS)

#: Query parameters that may be given as a list (one row per value); any other is one value.
LISTABLE = (
    "alpha", "eps", "D", "R", "tol", "unit", "max_iter", "entry", "kind", "method", "solver",
)  # fmt: skip


#: Most grid points of one sweep (a product grid counted from its axes before any point is
#: built; a store's spec likewise): 10^6 points take about 200 MB as parameter dicts.
MAX_POINTS = 10**6

#: Most local worker processes a sweep starts (more only when the machine has more cores).
MAX_WORKERS = 256


def family(family: Any, allow_modules: Any = None) -> tuple[Callable[..., Any], str]:
    """The family's callable and the reference recorded in the spec.

    A string names a family of :mod:`dpcap.mechanisms`, or a function of a module listed in
    ``allow_modules`` (:func:`allowed_modules`); a callable is taken as it is.
    """
    allowed = allowed_modules(allow_modules)
    if isinstance(family, str):
        if ":" not in family and family not in mechanisms.__all__:
            raise ParameterError(
                f"family: unknown mechanism {family!r}; dpcap.mechanisms has "
                f"{', '.join(mechanisms.__all__)} (or give a callable, or "
                "'module:function' of a module in allow_modules)"
            )
        fn = _sweep_run.resolve_family(family, allowed)
        return fn, family if ":" in family else f"dpcap.mechanisms:{family}"
    if not callable(family):
        raise ParameterError(f"family must be a callable or a name, got {check.show(family)}")
    return family, reference(family)


def allowed_modules(allow_modules: Any, name: str = "allow_modules") -> dict[str, str | None]:
    """The modules whose functions a family string may name: module name -> path or None.

    Each entry is a module name (``"mypackage.families"``, imported from ``sys.path`` as it
    is) or the path of a ``.py`` file (a string ending in ``.py`` or a path object; the module
    is named after the file and loaded from it alone). :mod:`dpcap.mechanisms` needs no entry.
    """
    if allow_modules is None:
        return {}
    if isinstance(allow_modules, (str, os.PathLike)):
        items: list[Any] = [allow_modules]
    elif isinstance(allow_modules, Iterable) and not isinstance(allow_modules, (bytes, Mapping)):
        items = list(itertools.islice(allow_modules, 1001))
        if len(items) > 1000:
            raise ParameterError(f"{name} must list at most 1000 modules")
    else:
        raise ParameterError(
            f"{name} must be a module name, a .py path or a list of them, got "
            f"{check.show(allow_modules)}"
        )
    out: dict[str, str | None] = {}
    for item in items:
        if isinstance(item, os.PathLike) or (isinstance(item, str) and item.endswith(".py")):
            path = Path(os.fsdecode(os.fspath(item)))
            if not path.is_file():
                raise ParameterError(f"{name}: no such file {str(path)!r}")
            module, where = path.stem, str(path.resolve())
            if not module.isidentifier():
                raise ParameterError(
                    f"{name}: {str(path)!r} is not named like a module (letters, digits, _)"
                )
        elif isinstance(item, str) and item and all(p.isidentifier() for p in item.split(".")):
            module, where = item, None
        else:
            raise ParameterError(
                f"{name}: each entry is a module name ('package.module') or the path of a .py "
                f"file, got {check.show(item)}"
            )
        if out.get(module, where) != where:
            raise ParameterError(f"{name}: two entries name the module {module!r}")
        out[module] = where
    return out


def too_many(count: int, what: str) -> None:
    """Refuse ``count`` grid points above :data:`MAX_POINTS` (``what`` names the grid)."""
    if count > MAX_POINTS:
        shown = str(count) if count < 10**15 else f"~10^{math.log10(count):.1f}"
        raise ProblemTooLargeError(
            f"{what} has {shown} points, above dpcap's limit of {MAX_POINTS} grid points per "
            "sweep; split it into several sweeps"
        )


def workers(value: Any, name: str = "workers") -> int:
    """A number of local worker processes: at least 1, at most :data:`MAX_WORKERS` (or the
    cores of this machine, if more)."""
    count = check.integer(value, name, 1)
    limit = max(MAX_WORKERS, os.cpu_count() or 1)
    if count > limit:
        raise ProblemTooLargeError(
            f"{name} must be at most {limit} local processes (dpcap's limit: {MAX_WORKERS}, or "
            f"the number of cores if more), got {count}"
        )
    return count


def reference(fn: Any) -> str:
    """``module:qualname`` of a callable; a ``functools.partial`` with its bound arguments."""
    if isinstance(fn, functools.partial):
        return f"{reference(fn.func)}(*{fn.args!r}, **{fn.keywords!r})"
    module = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    if module.startswith("dpcap.mechanisms"):
        module = "dpcap.mechanisms"
    return f"{module}:{name}"


def picklable(family: Any) -> None:
    if isinstance(family, str):
        return
    try:
        pickle.dumps(family)
    except Exception as exc:
        raise ParameterError(
            f"family {check.show(family)} cannot be sent to worker processes ({exc}); define "
            "it at module level, or use executor='serial'"
        ) from exc


def scalar(value: Any, where: str) -> Any:
    """A grid value as a plain Python scalar; NaN, complex, arrays and objects refused."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        if not -(2**63) <= int(value) < 2**63:
            raise ParameterError(f"{where} must fit in a 64-bit integer, got {check.show(value)}")
        return int(value)
    if isinstance(value, numbers.Real):
        if math.isnan(value):
            raise ParameterError(f"{where} must not be NaN")
        return float(value)
    raise ParameterError(
        f"{where} must be a number, a boolean or a string, got {check.show(value)}"
    )


def normalise(grid: Any) -> Any:
    """A product grid's axes as checked lists (iterators consumed once); other grids as given.

    The points are counted before a value is read (from the lengths of the axes that have
    one) and again once the axes are read: above :data:`MAX_POINTS`,
    :class:`~dpcap.errors.ProblemTooLargeError`.
    """
    if isinstance(grid, Mapping) and grid:
        too_many(math.prod(_length(v) or 1 for v in grid.values()), "grid")
        axes = {_key(k): _axis(k, v) for k, v in grid.items()}
        too_many(math.prod(len(v) for v in axes.values()), "grid")
        return axes
    return grid


def _length(values: Any) -> int | None:
    """How many values an axis gives (:func:`_axis`), or None for an iterator."""
    if isinstance(values, np.ndarray):
        return len(values) if values.ndim else 1
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        return 1
    if isinstance(values, range):  # len() of a range beyond sys.maxsize raises
        return max(0, -((values.start - values.stop) // values.step))
    if isinstance(values, Sized):
        try:
            return len(values)
        except (TypeError, ValueError, OverflowError):
            return None
    return None


def points(grid: Any, fn: Callable[..., Any]) -> list[dict[str, Any]]:
    """The grid (as :func:`normalise` returns it) as a list of parameter dicts, checked against
    the family's signature."""
    if isinstance(grid, Mapping):
        if not grid:
            raise ParameterError("grid must name at least one parameter, got an empty mapping")
        too_many(math.prod(len(v) for v in grid.values()), "grid")
        points = [
            dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())
        ]
    elif isinstance(grid, Sequence) and not isinstance(grid, str):
        if not grid:
            raise ParameterError("grid must hold at least one point, got an empty list")
        too_many(len(grid), "grid")
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise ParameterError(
                    f"grid[{i}] must be a dict of parameters, got {check.show(point)}"
                )
            for key in point:  # names first: a name that is not a string is refused as such
                _key(key)
            if set(point) != set(grid[0]):
                raise ParameterError(
                    f"grid[{i}] has parameters {sorted(point)}, grid[0] has {sorted(grid[0])}: "
                    "every point of an explicit grid names the same parameters"
                )
            points.append({_key(k): scalar(v, f"grid[{i}][{k!r}]") for k, v in point.items()})
        for key in points[0]:
            _one_kind(key, [p[key] for p in points])
    else:
        raise ParameterError(
            "grid must be a mapping of parameter -> values or a list of dicts, got "
            f"{check.show(grid)}"
        )
    reserved = [k for k in points[0] if k in RESERVED or k.startswith("query_")]
    if reserved:
        raise ParameterError(
            f"grid: parameter name(s) {reserved} are columns of the sweep table; rename them"
        )
    check_signature(fn, list(points[0]))
    return points


def _key(key: Any) -> str:
    if not isinstance(key, str) or not key:
        raise ParameterError(f"grid parameter names must be non-empty strings, got {key!r}")
    return key


def _axis(key: Any, values: Any) -> list[Any]:
    """One axis of a product grid: plain scalars, at least one, no value twice, one kind."""
    name = _key(key)
    if isinstance(values, np.ndarray) and values.ndim == 0:
        values = [values.item()]
    elif isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        values = [values]
    try:
        vals = [
            scalar(v, f"grid[{name!r}] values")
            for v in itertools.islice(values, MAX_POINTS + 1)  # an endless iterator ends
        ]
    except TypeError as exc:
        raise ParameterError(
            f"grid[{name!r}] must be a list of values, got {check.show(values)}"
        ) from exc
    if not vals:
        raise ParameterError(f"grid[{name!r}] must hold at least one value, got none")
    too_many(len(vals), f"grid[{name!r}]")
    seen: set[Any] = set()  # equal values hash alike: 1, 1.0 and True are one; 0.0 and −0.0
    for v in vals:
        if v in seen:
            raise ParameterError(f"grid[{name!r}] lists the value {v!r} twice")
        seen.add(v)
    _one_kind(name, vals)
    return vals


def _one_kind(name: str, values: list[Any]) -> None:
    """Refuse a column mixing strings, booleans and numbers (ints and floats may mix)."""
    kinds = {
        "string" if isinstance(v, str) else "bool" if isinstance(v, bool) else "number"
        for v in values
    }
    if len(kinds) > 1:
        raise ParameterError(
            f"grid[{name!r}] mixes {' and '.join(sorted(kinds))} values; a column holds one kind"
        )


def check_signature(
    fn: Callable[..., Any],
    names: list[str],
    *,
    where: Callable[[str], str] = lambda name: "grid",
    source: str = "the grid",
) -> None:
    """Refuse a name ``fn`` does not take, or an argument without default that ``names`` lacks;
    ``where(name)`` is the argument an error names, ``source`` what gives the names."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature: the calls will tell
        return
    label = getattr(fn, "__name__", fn)
    takes = [n for n, p in params.items() if p.kind is not inspect.Parameter.POSITIONAL_ONLY]
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        for name in names:
            if name not in takes:
                raise ParameterError(
                    f"{where(name)}: the family {label} takes no parameter {name!r}; "
                    f"it takes {', '.join(takes)}"
                )
    missing = [
        n
        for n, p in params.items()
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and n not in names
    ]
    if missing:
        raise ParameterError(
            f"{where(missing[0])}: the family {label} needs {', '.join(missing)}, which "
            f"{source} does not give"
        )


def queries(queries: Any) -> list[tuple[str, dict[str, Any]]]:
    """Normalised ``[(name, params), ...]``; list-valued parameters expanded into rows."""
    if isinstance(queries, str) or (
        isinstance(queries, (tuple, list))
        and len(queries) == 2
        and isinstance(queries[0], str)
        and isinstance(queries[1], Mapping)
    ):
        items: list[Any] = [queries]  # one name, or one (name, params) pair
    elif isinstance(queries, Mapping):
        items = list(queries.items())
    elif isinstance(queries, Sequence):
        items = list(queries)
    else:
        raise ParameterError(
            f"queries must be a name, a list or a mapping, got {check.show(queries)}"
        )
    if not items:
        raise ParameterError("queries must name at least one query, got none")
    plan: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        name, params = (item, {}) if isinstance(item, str) else _pair(item)
        spec = catalogue.query(name)
        params = {
            k: _query_value(v, f"queries: {name} parameter {k}", k, spec.kind(k))
            for k, v in params.items()
        }
        catalogue.check_params(name, params)
        plan += _expanded(name, params)
    seen = set()
    for name, params in plan:
        key = (name, repr(sorted(params.items())))
        if key in seen:
            raise ParameterError(f"queries: {name} {params or ''} is asked twice")
        seen.add(key)
    return plan


def _pair(item: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], Mapping):
        return item[0], dict(item[1])
    if isinstance(item, (tuple, list)) and len(item) == 2 and item[1] is None:
        return item[0], {}  # {"capacity": None}
    if isinstance(item, Mapping) and "query" in item:
        rest = {k: v for k, v in item.items() if k != "query"}
        return item["query"], rest
    raise ParameterError(
        f"queries: each entry must be a name, a (name, params) pair or a dict with 'query', "
        f"got {check.show(item)}"
    )


def _query_value(value: Any, where: str, key: str, kind: str) -> Any:
    if kind == "integers" and value is not None:  # one group of entries, one domain shape
        ints = check.numeric(value, where)
        if ints.ndim > 1 or ints.dtype.kind not in "iu" or ints.size > MAX_ARRAY_PARAMETER:
            raise ParameterError(f"{where} must be an integer or a list of integers, got {value!r}")
        return tuple(int(v) for v in ints.ravel()) if ints.ndim else int(ints)
    if kind in ("vector", "matrix"):  # one array-valued parameter (a prior, a gain matrix)
        if value is None:
            return None
        array = check.real_array(value, where)
        if array.ndim != (1 if kind == "vector" else 2) or array.size > MAX_ARRAY_PARAMETER:
            raise ParameterError(
                f"{where} must be a {kind} of at most {MAX_ARRAY_PARAMETER} numbers, got "
                f"{check.show(value)}"
            )
        return _frozen(array.tolist())
    if isinstance(value, (list, tuple, np.ndarray)):
        if key not in LISTABLE:
            raise ParameterError(
                f"{where} must be one value in a sweep, got {check.show(value)}; a list gives one "
                f"row per value only for {', '.join(LISTABLE)}"
            )
        values = [scalar(v, where) for v in value]
        if not values:
            raise ParameterError(f"{where} must hold at least one value, got none")
        return values
    return None if value is None else scalar(value, where)


#: Most numbers an array-valued query parameter may hold (it is recorded in the spec).
MAX_ARRAY_PARAMETER = 1 << 16


def _frozen(value: Any) -> Any:
    """Nested lists as nested tuples: one value, never expanded into one row per element."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _expanded(name: str, params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """One query per combination of list-valued parameters (``dp_delta``'s ε stays a list)."""
    lists = {k: v for k, v in params.items() if isinstance(v, list)}
    if name == "dp_delta":
        lists.pop("eps", None)
    if not lists:
        return [(name, params)]
    out = []
    for combo in itertools.product(*lists.values()):
        out.append((name, params | dict(zip(lists, combo, strict=True))))
    return out


def plain_grid(grid: Any, points: list[dict[str, Any]]) -> dict[str, Any]:
    """The grid (as :func:`normalise` returns it) as recorded in the spec: the axes of a
    product as given, or the points."""
    if isinstance(grid, Mapping):
        return {"product": [[k, v] for k, v in grid.items()]}
    return {"points": points}


def grid_from_plain(plain: dict[str, Any], where: str = "grid") -> list[dict[str, Any]]:
    """The points of a grid as :func:`plain_grid` records it (a store's spec), counted first:
    above :data:`MAX_POINTS`, :class:`~dpcap.errors.ProblemTooLargeError`."""
    if "product" in plain:
        axes = plain["product"]
        if not (
            isinstance(axes, list)
            and axes
            and all(
                isinstance(a, list)
                and len(a) == 2
                and isinstance(a[0], str)
                and isinstance(a[1], list)
                and a[1]
                for a in axes
            )
        ):
            raise ParameterError(f"{where}: 'product' must list [name, [values]] pairs")
        too_many(math.prod(len(vals) for _, vals in axes), where)
        names = [name for name, _ in axes]
        values = [vals for _, vals in axes]
        return [dict(zip(names, c, strict=True)) for c in itertools.product(*values)]
    points = plain["points"]
    if not (isinstance(points, list) and points and all(isinstance(p, dict) for p in points)):
        raise ParameterError(f"{where}: 'points' must list parameter tables")
    too_many(len(points), where)
    return points
