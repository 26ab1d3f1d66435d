"""Sweeps: families of mechanisms × parameter grids × queries → one tidy pandas table.

>>> import dpcap
>>> table = dpcap.sweep("randomized_response", {"k": [2, 3], "eps": [0.5, 1.0]},
...                     ["capacity", "dp_epsilon"], progress=False)
>>> table[["k", "eps", "query", "value", "status"]].round(6)
   k  eps       query     value     status
0  2  0.5    capacity  0.030300  converged
1  2  0.5  dp_epsilon  0.500000  converged
2  2  1.0    capacity  0.110944  converged
3  2  1.0  dp_epsilon  1.000000  converged
4  3  0.5    capacity  0.030167  converged
5  3  0.5  dp_epsilon  0.500000  converged
6  3  1.0    capacity  0.123284  converged
7  3  1.0  dp_epsilon  1.000000  converged

The table is tidy (one row per observation, one column per variable): ``point`` (the grid
point's index), one column per grid parameter, ``query``, one column per query parameter
(``eps``, ``alpha``, …; missing where a query does not take it), then ``value``, ``lower``,
``upper`` (the certified bracket; ``lower = upper = value`` for the DP metrics, which are
evaluated in closed form), ``status``, ``iterations``, ``method``, ``unit``, ``message`` and
``seconds`` (the time spent on the row; a batched call's time is shared among its rows).

Work is cut into chunks of consecutive grid points. A chunk is evaluated in one process
(:mod:`dpcap._sweep_queries`: instances built once, capacities batched by size, MI-DP of a
one-entry mechanism read off its capacity), on an executor (:mod:`dpcap._sweep_run`: this
process, local worker processes, or Dask), and with ``store=`` each finished chunk is written
as a Parquet part before it counts as done (:mod:`dpcap._sweep_store`), so a sweep that stops
for any reason resumes where it stopped.
"""

from __future__ import annotations

import inspect
import itertools
import math
import numbers
import os
import pickle
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap import _certify, _sweep_queries, _sweep_run, mechanisms
from dpcap import _validation as check
from dpcap.errors import ConvergenceWarning, ParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SweepInterrupted", "load_sweep", "sweep"]

#: Column names a grid parameter may not take.
_RESERVED = ("point", "query", *_sweep_queries.RESULT_COLUMNS)

#: Statuses of rows that met their tolerance; every other status is counted in the warning.
_GOOD = ("converged",)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`sweep`: ``done`` of ``total`` grid points are in ``store``.

    A :class:`KeyboardInterrupt`, so code that stops on Ctrl-C still stops; calling
    :func:`sweep` again with the same arguments resumes from the store.
    """

    def __init__(self, done: int, total: int, store: str | None) -> None:
        where = f"; they are in {store!r}: run the same sweep again to resume" if store else ""
        super().__init__(f"sweep interrupted: {done} of {total} grid points done{where}")
        self.done, self.total, self.store = done, total, store


def sweep(
    family: Callable[..., Any] | str,
    grid: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    queries: Any,
    *,
    store: str | os.PathLike[str] | None = None,
    executor: str = "auto",
    progress: bool | None = None,
    chunk_size: int | None = None,
    scheduler: Any = None,
    workers: int | None = None,
    retries: int = 2,
    tol: float = 1e-9,
    unit: str = "nats",
    max_iter: int | None = None,
) -> pd.DataFrame:
    """Evaluate ``queries`` on ``family(**point)`` for every point of ``grid``: a tidy table.

    Parameters
    ----------
    family : callable or str
        Returns a channel or mechanism from keyword arguments: a constructor of
        :mod:`dpcap.mechanisms` (or its name, ``"truncated_geometric"``), the user's own
        function, or ``"package.module:function"``. Worker processes and Dask need a function
        importable by name (not a lambda or a local function).
    grid : mapping or sequence of mappings
        ``{parameter: values}`` — the product of the values, the last parameter varying
        fastest — or an explicit list of parameter dicts (all with the same keys). Values are
        numbers, booleans or strings (NaN refused: a point must equal itself to resume).
    queries : str, sequence or mapping
        A query name, a list of names and ``(name, params)`` pairs, or ``{name: params}``.
        Queries: ``capacity``, ``midp``, ``renyi_midp`` (``alpha``), ``correlated_leakage``,
        ``renyi_capacity`` (``alpha``), ``alpha_leakage`` (``alpha``), ``dp_epsilon``,
        ``dp_delta`` (``eps``), ``kl_dp``, ``renyi_dp`` (``alpha``), ``tv_dp``,
        ``max_leakage``, with the keyword parameters of the function of that name. A list of
        values gives one row per value (``dp_delta`` computes a list of ε as one curve).
    store : path, optional
        A directory of Parquet parts (created if missing). Each finished chunk is written
        atomically before it counts as done; calling ``sweep`` again with the same spec and
        store computes only the missing points. A store holding another spec (family, grid,
        queries, options or dpcap version) is refused, naming what differs.
    executor : {"auto", "serial", "processes", "dask"}
        ``"serial"``: this process (batched). ``"processes"``: ``workers`` local processes.
        ``"dask"``: a ``LocalCluster`` of ``workers`` processes, or the cluster of
        ``scheduler``. ``"auto"``: ``"dask"`` if ``scheduler`` is given, ``"processes"`` if
        ``workers`` > 1, otherwise ``"serial"``.
    progress : bool, optional
        A tqdm bar of grid points (rate, ETA); default: on when stderr is a terminal.
    chunk_size : int, optional
        Grid points per chunk (default: about 20 chunks in one process, 8 per worker).
    scheduler : str or dask.distributed.Client, optional
        ``"tcp://host:port"`` of a running Dask scheduler, or a ``Client``.
    workers : int, optional
        Local worker processes (default: the cores available).
    retries : int
        Further attempts of a chunk whose evaluation raised (a worker that died); a chunk
        that still fails gives rows with status ``failed`` and the error.
    tol, unit, max_iter
        Passed to every query that takes them, unless its own parameters set them.

    Returns
    -------
    pandas.DataFrame
        Sorted by grid point, then by query in the order given (module docstring).

    Raises
    ------
    ParameterError
        Before anything runs: an unknown family or query, a parameter the family or a query
        does not take, a missing required parameter, an empty grid, a store of another spec.
    SweepInterrupted
        On Ctrl-C; finished chunks are in the store.

    Warns
    -----
    ConvergenceWarning
        Once, counting the rows whose status is not ``converged`` (``max_iter``,
        ``inaccurate``, ``failed``, ``too_large``, …); each row keeps its own message.
    """
    fn, ref = _family(family)
    points = _points(grid, fn)
    plan = _queries(queries)
    options = {"tol": check.tolerance(tol), "unit": unit, "max_iter": max_iter}
    check.unit_divisor(unit)
    check.max_iter(max_iter)
    kind, n_workers = _executor(executor, scheduler, workers)
    if kind in ("processes", "dask"):
        _picklable(family)
    size = _chunk_size(chunk_size, len(points), n_workers if kind != "serial" else 1)
    retries = check.integer(retries, "retries", 0)
    spec = {
        "family": ref,
        "grid": _plain_grid(grid, points),
        "queries": [[name, params] for name, params in plan],
        "options": options,
        "dpcap": _version(),
    }
    columns = _columns(points, plan)
    job = _sweep_run.Job(family if isinstance(family, str) else fn, plan, options)

    from dpcap._sweep_store import Store

    box = Store(store, spec) if store is not None else None
    done = box.done() if box is not None else set()
    todo = [(i, p) for i, p in enumerate(points) if i not in done]
    chunks = [todo[k : k + size] for k in range(0, len(todo), size)]
    frames = []
    bar = _bar(progress, len(points), len(done))
    finished = len(done)
    try:
        for chunk, rows in _sweep_run.execute(
            job, chunks, executor=kind, workers=n_workers, scheduler=scheduler, retries=retries
        ):
            frame = _frame(rows, dict(chunk), columns)
            if box is not None:
                box.write(frame)
            else:
                frames.append(frame)
            finished += len(chunk)
            bar.update(len(chunk))
    except KeyboardInterrupt:
        raise SweepInterrupted(
            finished, len(points), None if store is None else os.fspath(store)
        ) from None
    finally:
        bar.close()
    table = _sorted(box.read() if box is not None else _concat(frames, columns), columns)
    _report(table)
    return table


def load_sweep(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The table of the sweep stored at ``path``, as :func:`sweep` returned it.

    A store of an unfinished sweep gives the rows of the points done so far.
    """
    from dpcap._sweep_store import Store

    box = Store(path)
    spec = box.spec
    plan = [(name, params) for name, params in spec["queries"]]
    points = _grid_from_plain(spec["grid"])
    return _sorted(box.read(), _columns(points, plan))


# --- the spec -----------------------------------------------------------------------------


def _family(family: Any) -> tuple[Callable[..., Any], str]:
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
    module = getattr(family, "__module__", None) or "?"
    name = getattr(family, "__qualname__", None) or type(family).__qualname__
    if module.startswith("dpcap.mechanisms"):
        module = "dpcap.mechanisms"
    return family, f"{module}:{name}"


def _picklable(family: Any) -> None:
    if isinstance(family, str):
        return
    try:
        pickle.dumps(family)
    except Exception as exc:
        raise ParameterError(
            f"family {check.show(family)} cannot be sent to worker processes ({exc}); define "
            "it at module level, or use executor='serial'"
        ) from exc


def _scalar(value: Any, where: str) -> Any:
    """A grid value as a plain Python scalar; NaN, complex, arrays and objects refused."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if math.isnan(value):
            raise ParameterError(f"{where} must not be NaN")
        return float(value)
    raise ParameterError(
        f"{where} must be a number, a boolean or a string, got {check.show(value)}"
    )


def _points(grid: Any, fn: Callable[..., Any]) -> list[dict[str, Any]]:
    """The grid as a list of parameter dicts, checked against the family's signature."""
    if isinstance(grid, Mapping):
        if not grid:
            raise ParameterError("grid must name at least one parameter, got an empty mapping")
        axes = {}
        for key, values in grid.items():
            vals = values if isinstance(values, (list, tuple, range, np.ndarray)) else [values]
            if len(vals) == 0:
                raise ParameterError(f"grid[{key!r}] must hold at least one value, got none")
            axes[key] = [_scalar(v, f"grid[{key!r}] values") for v in vals]
        points = [
            dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())
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
            points.append({k: _scalar(v, f"grid[{i}][{k!r}]") for k, v in point.items()})
    else:
        raise ParameterError(
            "grid must be a mapping of parameter -> values or a list of dicts, got "
            f"{check.show(grid)}"
        )
    reserved = [k for k in points[0] if k in _RESERVED]
    if reserved:
        raise ParameterError(
            f"grid: parameter name(s) {reserved} are columns of the sweep table; rename them"
        )
    _check_signature(fn, list(points[0]))
    return points


def _check_signature(fn: Callable[..., Any], names: list[str]) -> None:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin without a signature: the calls will tell
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    takes = [n for n, p in params.items() if p.kind is not inspect.Parameter.POSITIONAL_ONLY]
    for name in names:
        if name not in takes:
            raise ParameterError(
                f"grid: the family {getattr(fn, '__name__', fn)} takes no parameter {name!r}; "
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
            f"grid: the family {getattr(fn, '__name__', fn)} needs {', '.join(missing)}, "
            "which the grid does not give"
        )


def _queries(queries: Any) -> list[tuple[str, dict[str, Any]]]:
    """Normalised ``[(name, params), ...]``; list-valued parameters expanded into rows."""
    if isinstance(queries, str):
        items: list[Any] = [queries]
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
        _sweep_queries.query(name)
        params = {k: _query_value(v, f"queries: {name} parameter {k}") for k, v in params.items()}
        _sweep_queries.check_params(name, params)
        plan += _expanded(name, params)
    return plan


def _pair(item: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], Mapping):
        return item[0], dict(item[1])
    if isinstance(item, Mapping) and "query" in item:
        rest = {k: v for k, v in item.items() if k != "query"}
        return item["query"], rest
    raise ParameterError(
        f"queries: each entry must be a name, a (name, params) pair or a dict with 'query', "
        f"got {check.show(item)}"
    )


def _query_value(value: Any, where: str) -> Any:
    if isinstance(value, (list, tuple, np.ndarray)):
        values = [_scalar(v, where) for v in value]
        if not values:
            raise ParameterError(f"{where} must hold at least one value, got none")
        return values
    return None if value is None else _scalar(value, where)


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


def _plain_grid(grid: Any, points: list[dict[str, Any]]) -> dict[str, Any]:
    """The grid as recorded in the spec: the axes of a product, or the explicit points."""
    if isinstance(grid, Mapping):
        axes = [[k, sorted({p[k] for p in points}, key=_order_key(points, k))] for k in points[0]]
        return {"product": axes}
    return {"points": points}


def _order_key(points: list[dict[str, Any]], key: str) -> Callable[[Any], int]:
    first: dict[Any, int] = {}
    for i, p in enumerate(points):
        first.setdefault((type(p[key]).__name__, p[key]), i)
    return lambda v: first[(type(v).__name__, v)]


def _grid_from_plain(plain: dict[str, Any]) -> list[dict[str, Any]]:
    if "product" in plain:
        names = [name for name, _ in plain["product"]]
        values = [vals for _, vals in plain["product"]]
        return [dict(zip(names, c, strict=True)) for c in itertools.product(*values)]
    points: list[dict[str, Any]] = plain["points"]
    return points


def _executor(executor: Any, scheduler: Any, workers: Any) -> tuple[str, int]:
    check.choice(executor, _sweep_run.EXECUTORS, "executor")
    if workers is not None:
        workers = check.integer(workers, "workers", 1)
    if scheduler is not None and executor not in ("auto", "dask"):
        raise ParameterError(f"scheduler is for executor='dask', got executor={executor!r}")
    if executor == "auto":
        if scheduler is not None:
            executor = "dask"
        else:
            executor = "processes" if (workers or 1) > 1 else "serial"
    return executor, _sweep_run.local_workers(workers) if executor != "serial" else 1


def _chunk_size(chunk_size: Any, points: int, workers: int) -> int:
    if chunk_size is None:
        return _sweep_run.default_chunk_size(points, workers)
    return check.integer(chunk_size, "chunk_size", 1)


def _version() -> str:
    import dpcap

    return str(dpcap.__version__)


# --- the table ----------------------------------------------------------------------------


def _columns(
    points: list[dict[str, Any]], plan: list[tuple[str, dict[str, Any]]]
) -> dict[str, str]:
    """Column name -> dtype, in table order (grid parameters typed by their values).

    A query parameter named like a grid parameter (``eps`` of ``dp_delta`` in a sweep over the
    family's ``eps``) gets the column ``query_<name>``.
    """
    columns = {"point": "int64"}
    for key in points[0]:
        columns[key] = _dtype([p[key] for p in points])
    columns["query"] = "object"
    grid = set(points[0])
    for _, params in plan:
        for key in params:
            name = _query_column(key, grid)
            if name not in columns:
                columns[name] = "float64" if key in ("eps", "alpha") else "object"
    for name in _sweep_queries.RESULT_COLUMNS:
        columns[name] = {
            "iterations": "int64",
            "status": "object",
            "method": "object",
            "unit": "object",
            "message": "object",
        }.get(name, "float64")
    return columns


def _query_column(key: str, grid: set[str]) -> str:
    return f"query_{key}" if key in grid or key == "point" else key


def _dtype(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float64"
    return "object"


def _frame(
    rows: list[dict[str, Any]], params: dict[int, dict[str, Any]], columns: dict[str, str]
) -> pd.DataFrame:
    """One chunk's rows as a DataFrame with every column, in order, plus the sort keys."""
    import pandas as pd

    types = columns | {"_q": "int64", "_k": "int64"}
    data: dict[str, list[Any]] = {name: [] for name in types}
    grid = set(next(iter(params.values()), {}))
    for row in rows:
        own = {(_query_column(k, grid) if k in grid else k): v for k, v in row.items()}
        full = params[row["point"]] | own
        for name, values in data.items():
            values.append(full.get(name))
    arrays = {}
    for name, dtype in types.items():
        values = data[name]
        if dtype == "object":  # element by element: a value is never unpacked into a row
            arrays[name] = np.empty(len(values), dtype=object)
            arrays[name][:] = values
            continue
        if dtype == "float64":
            values = [math.nan if v is None else v for v in values]
        arrays[name] = np.array(values, dtype=np.dtype(dtype))
    return pd.DataFrame(arrays)


def _concat(frames: list[pd.DataFrame], columns: dict[str, str]) -> pd.DataFrame:
    import pandas as pd

    if not frames:
        return _frame([], {}, columns)
    return pd.concat(frames, ignore_index=True)


def _sorted(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """Rows ordered by grid point, then query and element; the sort keys dropped."""
    if frame.empty:
        return _frame([], {}, columns).drop(columns=["_q", "_k"])
    frame = frame.sort_values(["point", "_q", "_k"], kind="stable").reset_index(drop=True)
    frame = frame.drop(columns=["_q", "_k"])
    for name, dtype in columns.items():
        if frame[name].dtype != dtype:
            frame[name] = frame[name].astype(np.dtype(dtype))
    return frame[list(columns)]


def _bar(progress: bool | None, total: int, initial: int) -> Any:
    enabled = sys.stderr.isatty() if progress is None else bool(progress)
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="pt", desc="sweep", disable=not enabled)


def _report(table: pd.DataFrame) -> None:
    bad = table[~table["status"].isin(_GOOD)]
    if len(bad):
        counts = ", ".join(f"{s}: {n}" for s, n in bad["status"].value_counts().items())
        _certify.warn(
            f"sweep: {len(bad)} of {len(table)} rows did not converge ({counts}); see their "
            "status and message columns",
            ConvergenceWarning,
        )
