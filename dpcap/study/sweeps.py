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
``upper`` (the certified bracket; NaN for the DP metrics, numbers evaluated in closed form
without a bound on their rounding), ``status``, ``iterations``, ``method``, ``unit``,
``message`` and ``seconds`` (the time spent on the row; a batched call's time is shared among
its rows).

Work is cut into chunks of consecutive grid points. A chunk is evaluated in one process
(:mod:`dpcap.study.catalogue`: instances built once, capacities batched by size, MI-DP of a
one-entry mechanism read off its capacity), on an executor (:mod:`dpcap.study._run`: this
process, local worker processes, or Dask), and with ``store=`` each finished chunk is written
as a Parquet part before it counts as done (:mod:`dpcap.study._store`), so a sweep that stops
for any reason resumes where it stopped.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap._core import certify as _certify
from dpcap._core import validation as check
from dpcap._core.version import VERSION
from dpcap.errors import ConvergenceWarning, DpcapError, ParameterError, SweepInterrupted
from dpcap.study import _run as _sweep_run
from dpcap.study import _spec as spec_
from dpcap.study import catalogue
from dpcap.study._run import EXECUTORS as EXECUTORS
from dpcap.study._spec import MAX_POINTS as MAX_POINTS
from dpcap.study._spec import MAX_WORKERS as MAX_WORKERS
from dpcap.study._store import SPEC_FILE as SPEC_FILE

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["load_sweep", "sweep"]

#: Statuses of rows that met their tolerance; every other status is counted in the warning.
_GOOD = ("converged",)


def sweep(
    family: Callable[..., Any] | str,
    grid: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    queries: Any,
    *,
    store: str | os.PathLike[str] | None = None,
    break_lock: bool = False,
    executor: str = "auto",
    progress: bool | None = None,
    chunk_size: int | None = None,
    scheduler: Any = None,
    workers: int | None = None,
    retries: int = 2,
    tol: float = 1e-9,
    rtol: float = 0.0,
    unit: str = "nats",
    max_iter: int | None = None,
    allow_modules: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
) -> pd.DataFrame:
    """Evaluate ``queries`` on ``family(**point)`` for every point of ``grid``: a tidy table.

    Parameters
    ----------
    family : callable or str
        Returns a channel or mechanism from keyword arguments: a constructor of
        :mod:`dpcap.mechanisms` (or its name, ``"truncated_geometric"``), the user's own
        function, or ``"module:function"`` of a module listed in ``allow_modules`` (a
        string names no other module). Worker processes and Dask need a function importable
        by name (not a lambda or a local function).
    grid : mapping or sequence of mappings
        ``{parameter: values}`` — the product of the values, the last parameter varying
        fastest — or an explicit list of parameter dicts (all with the same keys). Values are
        numbers, booleans or strings (NaN refused: a point must equal itself to resume). At
        most :data:`MAX_POINTS` (10^6) points, counted from the axes before any is built.
    queries : str, sequence or mapping
        A query name, a list of names and ``(name, params)`` pairs, or ``{name: params}``.
        Any query of the catalogue (:data:`dpcap.study.catalogue.QUERIES`): the point queries
        of a mechanism (``capacity``, ``midp``, ``renyi_midp`` (``alpha``),
        ``renyi_capacity`` (``alpha``), ``dp_epsilon``, ``dp_delta`` (``eps``),
        ``mutual_information`` and ``g_leakage`` (``prior``), ...), the trade-off queries of a
        problem (``rate_distortion`` and ``privacy_distortion`` at ``D`` of a family returning
        ``{"prior": ..., "distortion": ...}``, ``privacy_funnel`` at ``R`` of one returning
        ``{"joint": ...}``), and any registered with :func:`dpcap.register_query`; the
        parameters are the keyword parameters of the function of that name. A list of values
        gives one row per value (``dp_delta`` computes a list of ε as one curve); an array
        parameter (a prior, a gain) is one value, recorded in the table as its JSON text.
    store : path, optional
        A directory of Parquet parts (created if missing). Each finished chunk is written
        atomically before it counts as done; calling ``sweep`` again with the same spec and
        store computes only the missing points. A store holding another spec (family, grid,
        queries, options or dpcap version) is refused, naming what differs. One sweep writes
        a store at a time (its ``_lock`` file names the process, host, boot and container):
        a store locked by a sweep that runs, or that this process cannot prove dead (one on
        another host or in another container), is refused, naming the holder; the lock of a
        killed sweep on this host is taken over, and its temporary files removed, with a
        warning. A grid point found twice in the store is read once if its rows agree, with a
        warning; rows that differ raise :class:`~dpcap.errors.ParameterError`.
    break_lock : bool
        Remove the lock of the store first, whoever holds it (with a warning): for the user
        who knows that no sweep writes the store any more. A sweep whose lock was broken stops
        before its next part (it would write points twice).
    executor : {"auto", "serial", "processes", "dask"}
        ``"serial"``: this process (batched). ``"processes"``: ``workers`` local processes.
        ``"dask"``: a ``LocalCluster`` of ``workers`` processes, or the cluster of
        ``scheduler``. ``"auto"``: ``"dask"`` if ``scheduler`` is given, ``"processes"`` if
        ``workers`` > 1, otherwise ``"serial"``.
    progress : bool, optional
        A tqdm bar of grid points (rate, ETA); default: on when stderr is a terminal.
    chunk_size : int, optional
        Grid points per chunk (default: about 20 chunks in one process, 32 per worker).
    scheduler : str or dask.distributed.Client, optional
        ``"tcp://host:port"`` of a running Dask scheduler, or a ``Client``.
    workers : int, optional
        Local worker processes (default: the cores available); at most :data:`MAX_WORKERS`
        (256), or the number of cores if more.
    retries : int
        Further attempts of a chunk whose evaluation raised (a worker that died, a transient
        ``MemoryError`` or ``OSError``); a chunk that still fails is tried point by point, and
        a point that still fails gives rows with status ``failed`` and the error, which are
        not stored (a resumed sweep tries it again). A point whose family or query raises a
        deterministic error (``ValueError``, ``TypeError``, …) gives final ``failed`` rows.
    tol, rtol, unit, max_iter
        Passed to every query that takes them, unless its own parameters set them. A bracket
        has converged once ``upper − lower ≤ max(tol, rtol·|upper|)`` (``rtol`` in ``[0, 1)``,
        default 0: ``tol`` alone); ``rtol`` is recorded in a store's spec only when it is not 0
        (a store written without it resumes).
    allow_modules : str, path or list of them, optional
        The modules whose functions a string ``family`` may name (``"module:function"``): a
        module name (``"mypackage.families"``, imported from ``sys.path`` as it is) or the
        path of a ``.py`` file (``"families.py"``: the module ``families``, loaded from that
        file alone). The function must be defined in that module (not imported into it).
        :mod:`dpcap.mechanisms` needs no entry; a callable ``family`` needs none either.

    Returns
    -------
    pandas.DataFrame
        Sorted by grid point, then by query in the order given (module docstring).

    Raises
    ------
    ParameterError
        Before anything runs: an unknown family or query, a parameter the family or a query
        does not take, a missing required parameter, an empty grid, a store of another spec,
        a store locked by another sweep (without ``break_lock``), a family string naming a
        module not in ``allow_modules``.
    ProblemTooLargeError
        A grid of more than :data:`MAX_POINTS` points, more than :data:`MAX_WORKERS` workers.
    SweepInterrupted
        On Ctrl-C; finished chunks are in the store.

    Warns
    -----
    ConvergenceWarning
        Once, counting the rows whose status is not ``converged`` (``max_iter``,
        ``inaccurate``, ``failed``, ``too_large``, …); each row keeps its own message.
    """
    fn, ref = spec_.family(family, allow_modules)
    if store is not None and "<" in ref:  # <lambda>, <locals>: no name tells two of them apart
        raise ParameterError(
            f"family {ref} has no name a store can record (a lambda or a local function): "
            "define it at module level to use store="
        )
    grid = spec_.normalise(grid)
    points = spec_.points(grid, fn)
    plan = spec_.queries(queries)
    check.unit_divisor(unit)
    options: dict[str, Any] = {
        "tol": check.tolerance(tol),
        "unit": str(unit),
        "max_iter": None if max_iter is None else check.max_iter(max_iter),
    }
    if check.rtol(rtol):  # 0 is left out: the spec of a sweep without rtol is as before
        options["rtol"] = check.rtol(rtol)
    if store is not None and not os.fspath(store):
        raise ParameterError("store must be a path, got an empty string")
    kind, n_workers = _executor(executor, scheduler, workers)
    if kind in ("processes", "dask"):
        spec_.picklable(family)
    size = _chunk_size(chunk_size, len(points), n_workers if kind != "serial" else 1)
    retries = check.integer(retries, "retries", 0)
    spec = {
        "family": ref,
        "grid": spec_.plain_grid(grid, points),
        "queries": [[name, params] for name, params in plan],
        "options": options,
        "dpcap": _version(),
    }
    columns = _columns(points, plan)
    catalog = {name: catalogue.query(name) for name, _ in plan}
    job = _sweep_run.Job(fn, plan, options, catalog)  # a FamilyRef for an allowed module

    from dpcap.study._store import Store

    if store is not None:
        _safe_pyarrow()
    break_lock = check.flag(break_lock, "break_lock")
    box = Store(store, spec, break_lock=break_lock) if store is not None else None
    try:
        frames = _run(
            job, points, columns, box, kind, n_workers, scheduler, retries, size, progress
        )
    except KeyboardInterrupt as stop:
        done_now = stop.args[0] if stop.args and isinstance(stop.args[0], int) else 0
        raise SweepInterrupted(
            done_now, len(points), None if store is None else os.fspath(store)
        ) from None
    finally:
        if box is not None:
            box.release()
    if box is not None:
        frames.insert(0, box.read())
    table = _sorted(_concat(frames, columns), columns)
    _report(table)
    return table


def _run(
    job: _sweep_run.Job,
    points: list[dict[str, Any]],
    columns: dict[str, str],
    box: Any,
    kind: str,
    workers: int,
    scheduler: Any,
    retries: int,
    size: int,
    progress: bool | None,
) -> list[pd.DataFrame]:
    """Run the points missing from ``box`` in chunks of ``size``; store each finished chunk.

    Returns the frames not stored (all of them without a store). A ``KeyboardInterrupt`` is
    re-raised carrying the number of grid points done.
    """
    done = box.done() if box is not None else set()
    todo = [(i, p) for i, p in enumerate(points) if i not in done]
    chunks = [todo[k : k + size] for k in range(0, len(todo), size)]
    frames = []
    bar = _bar(progress, len(points), len(done))
    finished = len(done)
    try:
        for chunk, rows, final in _sweep_run.execute(
            job, chunks, executor=kind, workers=workers, scheduler=scheduler, retries=retries
        ):
            frame = _frame(rows, dict(chunk), columns)
            if box is not None and final:
                box.write(frame)
            else:  # no store, or rows of points that kept failing: a resume tries them again
                frames.append(frame)
            finished += len(chunk)
            bar.update(len(chunk))
    except KeyboardInterrupt:
        raise KeyboardInterrupt(finished) from None
    finally:
        bar.close()
    return frames


def load_sweep(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The table of the sweep stored at ``path``, as :func:`sweep` returned it.

    A store of an unfinished sweep gives the rows of the points done so far. A grid point
    stored twice (two sweeps writing at once, a part copied by hand) is read once if its rows
    agree in every part (``seconds`` aside), with a :class:`UserWarning` naming the points;
    rows that differ raise :class:`~dpcap.errors.ParameterError` naming the points and parts.
    """
    from dpcap.study._store import Store

    _safe_pyarrow()
    box = Store(path)
    spec = box.spec
    plan = [(name, params) for name, params in spec["queries"]]
    points = spec_.grid_from_plain(spec["grid"], f"store {os.fspath(path)!r}: {SPEC_FILE} grid")
    return _sorted(box.read(), _columns(points, plan))


def _executor(executor: Any, scheduler: Any, workers: Any) -> tuple[str, int]:
    check.choice(executor, _sweep_run.EXECUTORS, "executor")
    if workers is not None:
        workers = spec_.workers(workers)
    if scheduler is not None and executor not in ("auto", "dask"):
        raise ParameterError(f"scheduler is for executor='dask', got executor={executor!r}")
    if executor == "auto":
        if scheduler is not None:
            executor = "dask"
        else:
            executor = "processes" if (workers or 1) > 1 else "serial"
    return executor, _sweep_run.local_workers(workers) if executor != "serial" else 1


#: The first pyarrow that reads Parquet safely: 14.0.0 and older run code from a crafted file
#: (CVE-2023-47248).
PYARROW_FLOOR = (14, 0, 1)


def _safe_pyarrow() -> None:
    """Refuse to read a store with a pyarrow older than :data:`PYARROW_FLOOR`."""
    import pyarrow

    version = str(getattr(pyarrow, "__version__", ""))
    found = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
    numbers = tuple(int(n or 0) for n in found.groups()) if found else (0, 0, 0)
    if numbers < PYARROW_FLOOR:
        raise DpcapError(
            f"pyarrow {version or '(unknown version)'} can run code from a crafted Parquet file "
            "(CVE-2023-47248); dpcap reads stores with pyarrow 14.0.1 or later: "
            "pip install 'pyarrow>=14.0.1'"
        )


def _chunk_size(chunk_size: Any, points: int, workers: int) -> int:
    if chunk_size is None:
        return _sweep_run.default_chunk_size(points, workers)
    return check.integer(chunk_size, "chunk_size", 1)


def _version() -> str:
    return VERSION


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
    for name in catalogue.RESULT_COLUMNS:
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
    """One chunk's rows as a DataFrame with every column, in order. The rows of a point are
    together and in the order of the spec's queries (as :func:`_evaluate.evaluate` makes
    them), so a stable sort by point orders a table: no sort key is stored in the parts."""
    import pandas as pd

    types = columns
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

    frames = [f for f in frames if len(f)]
    if not frames:
        return _frame([], {}, columns)
    return pd.concat(frames, ignore_index=True)


def _sorted(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """Rows ordered by grid point (stable: a point's rows keep their query order); the sort
    keys that stores of dpcap 0.1 kept in their parts (``_q``, ``_k``) are used, then dropped."""
    if frame.empty:
        return _frame([], {}, columns)
    keys = [k for k in ("_q", "_k") if k in frame.columns]
    if keys and not frame[keys].isna().to_numpy().any():
        frame = frame.sort_values(["point", *keys], kind="stable")
    frame = frame.sort_values("point", kind="stable").reset_index(drop=True)
    frame = frame.drop(columns=keys)
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
