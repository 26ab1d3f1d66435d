"""``dpcap sweep SPEC.toml``: a parameter sweep described in a TOML file.

The file names a family of mechanisms, a grid of its parameters and the queries to evaluate at
every grid point; :func:`dpcap.sweep` does the work. An example (``examples/sweep_spec.toml``)::

    family = "truncated_geometric"     # a dpcap.mechanisms name, or "module:function"

    [grid]                             # the product of the values, the last varying fastest
    n = {start = 2, stop = 20, step = 2}        # integers 2, 4, ..., 20 (stop included)
    eps = {start = 0.1, stop = 2.0, num = 5}    # numpy.linspace: 5 values, both ends included
    # k = [2, 3, 5]                             # or a list of numbers, strings or booleans

    [[queries]]
    query = "capacity"

    [[queries]]
    query = "renyi_dp"
    alpha = [2.0, 8.0]                 # a list gives one row per value

    [options]                          # optional: passed to dpcap.sweep
    tol = 1e-9
    rtol = 1e-6                        # and a relative target: max(tol, rtol·|upper|)
    unit = "nats"
    chunk_size = 10
    retries = 2

Keys:

``family`` (required)
    A constructor of :mod:`dpcap.mechanisms` by name, or ``"module:function"`` of a module
    given on the command line with ``--allow-module`` (a spec file names no other module, so a
    spec from elsewhere runs nothing but dpcap's mechanisms): ``--allow-module families.py``
    loads the file ``families.py`` alone (the module ``families``; its folder is not put on
    ``sys.path``), ``--allow-module mypackage.families`` imports an installed module (from
    ``sys.path`` as it is: the working directory is never added). The function must be
    defined in that module.
``[grid]`` (required)
    ``parameter = value``: a list of values; a single value; ``{start, stop, num}``, ``num``
    evenly spaced floats from ``start`` to ``stop`` inclusive (``numpy.linspace``); or
    ``{start, stop, step}``, the integers ``start, start + step, …`` up to ``stop`` inclusive.
    At most 10^6 grid points in all (counted before any value is built).
    An array of tables ``[[grid]]`` lists the grid points one by one instead.
``[[queries]]`` (required)
    One table per query: ``query = "name"`` and the query's parameters (a list of values gives
    one row per value). ``queries = ["capacity", "dp_epsilon"]`` is short for queries without
    parameters.
``[options]``
    ``tol``, ``rtol``, ``unit``, ``max_iter``, ``chunk_size``, ``retries`` of
    :func:`dpcap.sweep`.

TOML is read with :mod:`tomllib` (Python ≥ 3.11) or the ``tomli`` package (Python 3.10).
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcap._core import validation as check
from dpcap.errors import DpcapError, ParameterError, ProblemTooLargeError
from dpcap.study.sweeps import EXECUTORS, MAX_POINTS, MAX_WORKERS, SPEC_FILE

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SpecError", "SweepSpec", "add_parser", "load_spec", "parse_spec", "run"]

#: Keys of the spec file's top level and of its ``[options]`` table.
TOP_LEVEL = ("family", "grid", "queries", "options")
OPTIONS = ("tol", "rtol", "unit", "max_iter", "chunk_size", "retries")

#: The spec file's format, shown by ``dpcap sweep --help``.
EPILOG = """\
spec file (TOML):
  family = "truncated_geometric"          a dpcap.mechanisms name, or "module:function"
                                          of a module given with --allow-module
  [grid]                                  the product of the values, the last varying fastest
  n = [2, 4, 8]                           a list of values (numbers, strings, booleans)
  eps = {start = 0.1, stop = 2, num = 5}  5 evenly spaced floats, both ends included
  k = {start = 2, stop = 20, step = 2}    the integers 2, 4, ..., 20 (stop included)
  [[queries]]                             one table per query
  query = "renyi_dp"
  alpha = [2.0, 8.0]                      a list gives one row per value
  [options]                               optional: tol, rtol, unit, max_iter, chunk_size,
                                          retries
"""

#: Rows of the table printed when it is neither stored nor written as CSV.
HEAD = 20


class SpecError(ParameterError):
    """A sweep spec file is not valid TOML or not a valid sweep; the message names the key."""


@dataclass(frozen=True)
class SweepSpec:
    """A sweep read from a spec file: the arguments of :func:`dpcap.sweep`."""

    family: str
    grid: dict[str, list[Any]] | list[dict[str, Any]]
    queries: list[tuple[str, dict[str, Any]]]
    options: dict[str, Any]


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check the spec file at ``path`` (TOML)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    path = Path(path)
    if not path.is_file():
        raise DpcapError(f"no such file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); a spec file is TOML, "
            "which is UTF-8"
        ) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from exc
    return parse_spec(data, str(path))


def parse_spec(data: Mapping[str, Any], source: str = "spec") -> SweepSpec:
    """Check a parsed spec (the TOML document as a dict) and build the sweep's arguments.

    Every error is a :class:`SpecError` whose message starts with ``source`` and names the key.
    """
    unknown = sorted(set(data) - set(TOP_LEVEL))
    if unknown:
        raise SpecError(f"{source}: unknown key {', '.join(unknown)}; a spec has {list(TOP_LEVEL)}")
    for key in ("family", "grid", "queries"):
        if key not in data:
            raise SpecError(f"{source}: missing {key!r} (a spec needs family, [grid], [[queries]])")
    family = data["family"]
    if not isinstance(family, str) or not family.strip():
        raise SpecError(f"{source}: family must be a mechanism name, got {check.show(family)}")
    return SweepSpec(
        family=family.strip(),
        grid=_grid(data["grid"], source),
        queries=_queries(data["queries"], source),
        options=_options(data.get("options", {}), source),
    )


def _grid(grid: Any, source: str) -> dict[str, list[Any]] | list[dict[str, Any]]:
    if isinstance(grid, list):  # [[grid]]: the points one by one
        if not grid:
            raise SpecError(f"{source}: [[grid]] lists no point")
        points = []
        for i, point in enumerate(grid):
            if not isinstance(point, dict) or not point:
                raise SpecError(f"{source}: grid[{i}] must be a table of parameter values")
            points.append({k: _scalar(v, f"{source}: grid[{i}].{k}") for k, v in point.items()})
        _too_many(len(points), f"{source}: [[grid]]")
        return points
    if not isinstance(grid, dict):
        raise SpecError(f"{source}: grid must be a table [grid], got {check.show(grid)}")
    if not grid:
        raise SpecError(f"{source}: [grid] is empty; give each parameter its values")
    axes = {key: _values(value, f"{source}: grid.{key}") for key, value in grid.items()}
    _too_many(math.prod(len(v) for v in axes.values()), f"{source}: [grid]")
    return axes


def _too_many(count: int, what: str) -> None:
    """Refuse more than :data:`MAX_POINTS` values or grid points (counted, never built)."""
    if count > MAX_POINTS:
        shown = str(count) if count < 10**15 else f"~10^{math.log10(count):.1f}"
        raise ProblemTooLargeError(
            f"{what} has {shown} points, above dpcap's limit of {MAX_POINTS} grid points per "
            "sweep; split it into several sweeps"
        )


def _values(value: Any, where: str) -> list[Any]:
    """One grid parameter's values: a list, a scalar, or a range table."""
    if isinstance(value, dict):
        return _range(value, where)
    if isinstance(value, list):
        if not value:
            raise SpecError(f"{where} is an empty list")
        return [_scalar(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return [_scalar(value, where)]


def _range(table: dict[str, Any], where: str) -> list[Any]:
    """``{start, stop, num}`` (a linspace) or ``{start, stop, step}`` (integers), stop included."""
    keys = set(table)
    if keys == {"start", "stop", "num"}:
        start, stop = (_real(table[k], f"{where}.{k}") for k in ("start", "stop"))
        num = table["num"]
        if not _is_int(num) or num < 1:
            raise SpecError(f"{where}.num must be a positive integer, got {check.show(num)}")
        _too_many(num, where)
        return [float(v) for v in np.linspace(start, stop, num)]
    if keys == {"start", "stop", "step"}:
        bad = {k: v for k, v in table.items() if not _is_int(v)}
        if bad:
            raise SpecError(
                f"{where}: a step range is of integers (use num= for evenly spaced floats), got "
                + ", ".join(f"{k} = {check.show(v)}" for k, v in bad.items())
            )
        start, stop, step = table["start"], table["stop"], table["step"]
        if step == 0:
            raise SpecError(f"{where}.step must not be 0")
        count = (stop - start) // step + 1  # counted first: the range may be 10^12 integers
        if count < 1:
            raise SpecError(f"{where}: the range from {start} to {stop} by {step} is empty")
        _too_many(count, where)
        return list(range(start, stop + (1 if step > 0 else -1), step))
    raise SpecError(
        f"{where} must be a list of values, {{start, stop, num}} or {{start, stop, step}}; "
        f"got the keys {sorted(keys)}"
    )


def _queries(queries: Any, source: str) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(queries, str):
        queries = [queries]
    if not isinstance(queries, list) or not queries:
        raise SpecError(
            f'{source}: queries must be [[queries]] tables (query = "name", parameters...) '
            f"or a list of names, got {check.show(queries)}"
        )
    plan: list[tuple[str, dict[str, Any]]] = []
    for i, entry in enumerate(queries):
        where = f"{source}: queries[{i}]"
        if isinstance(entry, str):
            plan.append((entry, {}))
            continue
        if not isinstance(entry, dict):
            raise SpecError(f"{where} must be a table or a name, got {check.show(entry)}")
        name = entry.get("query")
        if not isinstance(name, str) or not name:
            raise SpecError(f'{where} needs query = "name", got {check.show(name)}')
        params = {}
        for key, value in entry.items():
            if key == "query":
                continue
            if isinstance(value, list):
                if not value:
                    raise SpecError(f"{where} ({name}).{key} is an empty list")
                params[key] = [
                    _scalar(v, f"{where} ({name}).{key}[{j}]") for j, v in enumerate(value)
                ]
            else:
                params[key] = _scalar(value, f"{where} ({name}).{key}")
        plan.append((name, params))
    return plan


def _options(options: Any, source: str) -> dict[str, Any]:
    if not isinstance(options, dict):
        raise SpecError(f"{source}: options must be a table [options], got {check.show(options)}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise SpecError(
            f"{source}: unknown option {', '.join(unknown)}; [options] takes {list(OPTIONS)}"
        )
    return dict(options)  # their values are checked by dpcap.sweep, with the other arguments


def _scalar(value: Any, where: str) -> Any:
    """A number, a string or a boolean: TOML's dates, tables and nested arrays are refused here
    (their values, NaN included, are checked by :func:`dpcap.sweep` like any other)."""
    if isinstance(value, (bool, str, int, float)):
        return value
    raise SpecError(f"{where} must be a number, a string or a boolean, got {check.show(value)}")


def _real(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SpecError(f"{where} must be a finite number, got {check.show(value)}")
    return float(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- the command ------------------------------------------------------------------------------


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand to the subparsers ``sub`` of the ``dpcap`` command."""
    cmd: argparse.ArgumentParser = sub.add_parser(
        "sweep",
        help="evaluate queries over a grid of mechanisms described in a TOML file",
        description="Evaluate queries at every point of a parameter grid (dpcap.sweep). With "
        "--store, finished chunks are kept on disk and the same command resumes. Exit status: "
        "0, 1 when a row failed or was too large (the table is written all the same), 2 for "
        "a bad spec, 130 after Ctrl-C.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmd.add_argument("spec", type=Path, help="TOML file: family, [grid], [[queries]], [options]")
    cmd.add_argument("--store", type=Path, help="Parquet store directory (resumable)")
    cmd.add_argument(
        "--break-lock",
        action="store_true",
        help="remove the store's lock first, whoever holds it (when you know no sweep writes it)",
    )
    cmd.add_argument("--executor", choices=EXECUTORS, default="auto", help="default: auto")
    cmd.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:port)")
    cmd.add_argument(
        "--workers",
        type=int,
        help=f"local worker processes (at most {MAX_WORKERS}, or the cores if more)",
    )
    cmd.add_argument(
        "--allow-module",
        action="append",
        metavar="MODULE",
        help='a module whose functions the spec\'s family may name ("module:function"): a '
        "path to a .py file, or an importable module name; repeatable",
    )
    cmd.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    cmd.add_argument("--no-progress", action="store_true", help="no progress bar")
    return cmd


#: Row statuses that make ``dpcap sweep`` exit with status 1 (the table is still written).
FAILED_STATUSES = ("failed", "too_large")


def run(args: argparse.Namespace) -> int:
    """Run ``dpcap sweep``; return the exit status: 0, 1 when a row failed or was too large
    (the table and the store are still written), 130 after Ctrl-C."""
    spec = load_spec(args.spec)
    try:
        from dpcap.study.sweeps import load_sweep, sweep
    except ImportError as exc:  # pragma: no cover - pandas is a dependency
        raise DpcapError(f"dpcap sweep needs pandas: {exc}") from exc
    allowed = _allowed(getattr(args, "allow_module", None))
    _workers(args.workers)
    before = _points_stored(args.store, load_sweep)
    start = time.perf_counter()
    try:
        table = sweep(
            spec.family,
            spec.grid,
            spec.queries,
            store=args.store,
            break_lock=getattr(args, "break_lock", False),
            executor=args.executor,
            progress=False if args.no_progress else None,
            scheduler=args.scheduler,
            workers=args.workers,
            allow_modules=allowed,
            **spec.options,
        )
    except KeyboardInterrupt as exc:
        print(_interrupted(args, exc), file=sys.stderr)
        return 130
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in ("dask", "distributed"):
            raise DpcapError(
                f"{exc}; the dask executor needs the distributed extra "
                "(pip install 'dpcap[distributed]')"
            ) from exc
        raise DpcapError(f"a module is missing: {exc}") from exc
    seconds = time.perf_counter() - start
    if args.csv is not None:
        table.to_csv(args.csv, index=False)
    if args.store is None and args.csv is None:
        print(_head(table))
    print(summary(table, spec.family, before, seconds, args.store, args.csv))
    return 1 if table["status"].isin(FAILED_STATUSES).any() else 0


def _allowed(modules: list[str] | None) -> list[str]:
    """The ``--allow-module`` values: paths of ``.py`` files or dotted module names."""
    for module in modules or []:
        if module.endswith(".py"):
            if not Path(module).is_file():
                raise DpcapError(f"--allow-module: no such file {module!r}")
        elif not module or not all(part.isidentifier() for part in module.split(".")):
            raise DpcapError(
                f"--allow-module: {module!r} is neither a .py file nor a module name "
                "('package.module')"
            )
    return list(modules or [])


def _workers(workers: int | None) -> None:
    """Refuse ``--workers`` above :data:`MAX_WORKERS` (or the cores, if more) or below 1."""
    if workers is None:
        return
    if workers < 1:
        raise DpcapError(f"--workers must be at least 1, got {workers}")
    limit = max(MAX_WORKERS, os.cpu_count() or 1)
    if workers > limit:
        raise ProblemTooLargeError(
            f"--workers must be at most {limit} local processes (dpcap's limit: {MAX_WORKERS}, "
            f"or the number of cores if more), got {workers}"
        )


def summary(
    table: pd.DataFrame,
    family: str,
    before: int,
    seconds: float,
    store: Path | None,
    csv: Path | None,
) -> str:
    """What ``dpcap sweep`` prints when it is done: rows, points, statuses, files, wall time."""
    points = int(table["point"].nunique())
    counts = table["status"].value_counts()
    statuses = ", ".join(f"{status} {int(n)}" for status, n in counts.items())
    resumed = f" ({points - before} computed now, {before} from the store)" if store else ""
    lines = [
        f"dpcap sweep: {family}: {len(table)} rows, {points} grid points{resumed} "
        f"in {seconds:.1f} s",
        f"  status: {statuses}",
    ]
    if store is not None:
        lines.append(f"  store:  {store}")
    if csv is not None:
        lines.append(f"  csv:    {csv}")
    return "\n".join(lines)


def _points_stored(store: Path | None, load: Any) -> int:
    """Grid points already in ``store`` (0 if there is none yet)."""
    if store is None or not (store / SPEC_FILE).is_file():
        return 0
    return int(load(store)["point"].nunique())


def _head(table: pd.DataFrame) -> str:
    text = table.head(HEAD).to_string(index=False)
    if len(table) > HEAD:
        text += f"\n... {len(table) - HEAD} more rows (--csv FILE writes them all)"
    return text


def command_line(args: argparse.Namespace) -> str:
    """The ``dpcap sweep`` command line that ``args`` parse from (to resume it)."""
    words = ["dpcap", "sweep", str(args.spec)]
    for flag in ("store", "executor", "scheduler", "workers", "csv"):
        value = getattr(args, flag)
        if value is not None and not (flag == "executor" and value == "auto"):
            words += [f"--{flag}", str(value)]
    for module in getattr(args, "allow_module", None) or []:
        words += ["--allow-module", module]
    if args.no_progress:
        words.append("--no-progress")
    return shlex.join(words)


def _interrupted(args: argparse.Namespace, exc: KeyboardInterrupt) -> str:
    """The Ctrl-C message: how far the sweep got and how to resume it."""
    done, total = getattr(exc, "done", None), getattr(exc, "total", None)
    progress = "" if done is None else f": {done} of {total} grid points done"
    if args.store is None:
        return (
            f"dpcap: interrupted{progress}; without --store nothing was kept "
            "(add --store DIR to make a sweep resumable)"
        )
    return (
        f"dpcap: interrupted{progress}, kept in {args.store}\n"
        f"dpcap: resume with: {command_line(args)}"
    )
