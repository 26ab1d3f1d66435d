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
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from dpcap import mechanisms
from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.study import _run as _sweep_run
from dpcap.study import catalogue

__all__ = [
    "LISTABLE",
    "RESERVED",
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
]

#: Column names a grid parameter may not take.
RESERVED = ("point", "query", "_q", "_k", *catalogue.RESULT_COLUMNS)

#: Query parameters that may be given as a list (one row per value); any other is one value.
LISTABLE = ("alpha", "eps", "tol", "unit", "max_iter", "entry", "kind", "method", "solver")


def family(family: Any) -> tuple[Callable[..., Any], str]:
    """The family's callable and the reference recorded in the spec."""
    if isinstance(family, str):
        if ":" not in family and family not in mechanisms.__all__:
            raise ParameterError(
                f"family: unknown mechanism {family!r}; dpcap.mechanisms has "
                f"{', '.join(mechanisms.__all__)} (or give a callable, or "
                "'package.module:function')"
            )
        fn = _sweep_run.resolve_family(family)
        return fn, family if ":" in family else f"dpcap.mechanisms:{family}"
    if not callable(family):
        raise ParameterError(f"family must be a callable or a name, got {check.show(family)}")
    return family, reference(family)


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
    """A product grid's axes as checked lists (iterators consumed once); other grids as given."""
    if isinstance(grid, Mapping) and grid:
        return {_key(k): _axis(k, v) for k, v in grid.items()}
    return grid


def points(grid: Any, fn: Callable[..., Any]) -> list[dict[str, Any]]:
    """The grid (as :func:`normalise` returns it) as a list of parameter dicts, checked against
    the family's signature."""
    if isinstance(grid, Mapping):
        if not grid:
            raise ParameterError("grid must name at least one parameter, got an empty mapping")
        points = [
            dict(zip(grid, combo, strict=True)) for combo in itertools.product(*grid.values())
        ]
    elif isinstance(grid, Sequence) and not isinstance(grid, str):
        if not grid:
            raise ParameterError("grid must hold at least one point, got an empty list")
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, Mapping):
                raise ParameterError(
                    f"grid[{i}] must be a dict of parameters, got {check.show(point)}"
                )
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
        vals = [scalar(v, f"grid[{name!r}] values") for v in values]
    except TypeError as exc:
        raise ParameterError(
            f"grid[{name!r}] must be a list of values, got {check.show(values)}"
        ) from exc
    if not vals:
        raise ParameterError(f"grid[{name!r}] must hold at least one value, got none")
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


def grid_from_plain(plain: dict[str, Any]) -> list[dict[str, Any]]:
    if "product" in plain:
        names = [name for name, _ in plain["product"]]
        values = [vals for _, vals in plain["product"]]
        return [dict(zip(names, c, strict=True)) for c in itertools.product(*values)]
    points: list[dict[str, Any]] = plain["points"]
    return points
