"""The evaluation of one chunk of grid points into table rows (the sweep's inner loop).

A chunk is evaluated in one process: its instances are built once, then each query runs over
all of them. Three queries take a faster path than a loop of single calls, each computing
exactly what the single call would certify:

* ``capacity`` (default method) goes through :func:`dpcap.capacities` on the chunk's
  instances, which groups channels by size and runs each group as one batch;
* ``midp`` of a one-entry mechanism (a plain channel) is its Shannon capacity — with a single
  entry there is no context, ``sup_P I(X_1; Y | X^{-1}) = sup_P I(X_1; Y)`` (Cuff & Yu 2016,
  Def. 2 with n = 1) — so it reuses that batch;
* ``dp_delta`` with a list of ε is one :func:`dpcap.dp_delta_curve` call per instance.

An instance whose construction or query raises :class:`~dpcap.errors.ProblemTooLargeError`
becomes a row with status ``too_large``; any other deterministic exception (a
:class:`~dpcap.errors.ParameterError` or other ``ValueError``, a ``TypeError``, a bug of the
family, ``SystemExit``, ...) a row with status ``failed``; both carry the message and a NaN
value, and the sweep goes on. Such rows are final: a store keeps them and a resume does not
compute them again, since the same call fails the same way. A *transient* failure
(:data:`TRANSIENT`: ``MemoryError``, ``OSError``, which another attempt may not meet) is not a
row: it propagates out of :func:`evaluate`, so the executor retries the chunk (``retries``),
then its points one by one, and a point that still fails gives rows that are not stored (a
resumed sweep tries it again).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from dpcap._core import validation as check
from dpcap.channel import Mechanism
from dpcap.errors import ConvergenceWarning, ProblemTooLargeError
from dpcap.mi_dp import midp
from dpcap.privacy import dp_delta_curve
from dpcap.shannon import capacities, capacity
from dpcap.study.catalogue import Query, query

__all__ = ["ChunkError", "evaluate"]

#: Statuses a sweep row can have beyond the engines' own (:class:`dpcap.Status`).
TOO_LARGE = "too_large"
FAILED = "failed"

#: Exceptions that say nothing about the grid point (memory, files, the network): the chunk
#: raises them (it is retried), and a point that keeps meeting one is never stored.
TRANSIENT: tuple[type[BaseException], ...] = (MemoryError, OSError)

#: Sweep-wide options handed to every query that takes them (unless the query sets its own).
OPTIONS = ("tol", "rtol", "unit", "max_iter")


# --- evaluation ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Instance:
    point: int
    obj: Any = None
    status: str = ""  # "" when built, else too_large / failed
    message: str = ""
    seconds: float = 0.0


def _build(family: Callable[..., Any], point: int, params: dict[str, Any]) -> _Instance:
    start = time.perf_counter()
    try:
        obj = family(**params)
    except ProblemTooLargeError as exc:
        return _Instance(point, None, TOO_LARGE, str(exc))
    except TRANSIENT:  # the chunk is tried again (module docstring)
        raise
    except (Exception, SystemExit) as exc:  # one bad instance never stops the sweep
        return _Instance(point, None, FAILED, _describe(exc))
    return _Instance(point, obj, seconds=time.perf_counter() - start)


class ChunkError(Exception):
    """A whole chunk failed (its message says which points and why); raised by the family
    that stands in for the real one when the rows of such a chunk are written."""


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ChunkError) else f"{type(exc).__name__}: {exc}"


def _row(value: Any, unit: str) -> dict[str, Any]:
    """The result columns of one answer: a result object, or a plain number."""
    if hasattr(value, "status") and hasattr(value, "lower"):
        return {
            "value": float(value.value),
            "lower": float(value.lower),
            "upper": float(value.upper),
            "status": value.status.value,
            "iterations": int(value.iterations),
            "method": str(value.method),
            "unit": str(value.unit),
            "message": str(value.message),
        }
    # A DP metric is a number evaluated in closed form, without a bound on its rounding: it
    # gets no bracket (NaN ends) rather than a zero-width one that could miss the truth by ulps.
    return {
        "value": float(value),
        "lower": math.nan,
        "upper": math.nan,
        "status": "converged",
        "iterations": 0,
        "method": "closed form",
        "unit": unit,
        "message": "",
    }


def _failure(status: str, message: str, unit: str) -> dict[str, Any]:
    nan = math.nan
    return {
        "value": nan,
        "lower": nan,
        "upper": nan,
        "status": status,
        "iterations": 0,
        "method": "",
        "unit": unit,
        "message": message,
    }


def _unit_of(spec: Query, kwargs: dict[str, Any]) -> str:
    return str(kwargs.get("unit", "nats")) if spec.unit == "option" else spec.unit


def _kwargs(spec: Query, params: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The query's own parameters, plus the sweep's options it takes and does not set."""
    own = ("tol", "rtol")  # a query whose tol is not a gap in nats keeps its own rule
    takes = spec.parameters if spec.sweep_tol else tuple(k for k in spec.parameters if k not in own)
    out = {k: v for k, v in options.items() if k in takes and v is not None}
    out.update(params)
    return out


def _columns(spec: Query, params: dict[str, Any]) -> dict[str, Any]:
    """The query parameters as table cells: an array (a prior, a gain) as its JSON text."""
    return {
        k: json.dumps(np.asarray(v, dtype=float).tolist())
        if spec.kind(k) in ("vector", "matrix") and v is not None
        else json.dumps(list(v))
        if isinstance(v, tuple)  # a group of entries, a shape
        else v
        for k, v in params.items()
    }


Call = Callable[[Any, dict[str, Any]], Any]


def _of(function: Callable[..., Any]) -> Call:
    """A library function called on an instance as its first argument."""
    return lambda obj, kwargs: function(obj, **kwargs)


def _call(fn: Call, inst: _Instance, kwargs: dict[str, Any]) -> tuple[Any, str]:
    """``fn(instance, kwargs)``, or the failure status and message."""
    try:
        return fn(inst.obj, kwargs), ""
    except ProblemTooLargeError as exc:
        return None, f"{TOO_LARGE}:{exc}"
    except TRANSIENT:
        raise
    except (Exception, SystemExit) as exc:
        return None, f"{FAILED}:{_describe(exc)}"


def _one_entry(obj: Any) -> bool:
    return not (isinstance(obj, Mechanism) and obj.n_entries > 1)


def _size(obj: Any) -> int:
    """Entries of an instance's dense matrix (0 if it is not array-like: the query says why)."""
    try:
        return int(obj.n_inputs) * int(obj.n_outputs)
    except AttributeError:
        pass
    try:
        return int(np.size(obj))
    except Exception:  # a ragged list, an object: the query's validation will name it
        return 0


def _dense_ok(obj: Any) -> bool:
    return 0 < _size(obj) <= check.MAX_DENSE_ELEMENTS


def _capacity_batch(
    instances: list[_Instance], kwargs: dict[str, Any]
) -> dict[int, tuple[Any, str, float]]:
    """Capacities of the instances (all built), batched: ``{point: (result, error, seconds)}``."""
    out: dict[int, tuple[Any, str, float]] = {}
    batch = [i for i in instances if _dense_ok(i.obj)]
    for inst in instances:
        if not _dense_ok(inst.obj):  # refused, or not a channel: its own call says why
            res, err = _call(_of(capacity), inst, kwargs)
            out[inst.point] = (res, err, 0.0)
    if batch:
        start = time.perf_counter()
        try:
            results = list(capacities([i.obj for i in batch], **kwargs))
        except Exception:
            for inst in batch:
                t0 = time.perf_counter()
                res, err = _call(_of(capacity), inst, kwargs)
                out[inst.point] = (res, err, time.perf_counter() - t0)
            return out
        share = (time.perf_counter() - start) / len(batch)
        for inst, res in zip(batch, results, strict=True):
            out[inst.point] = (res, "", share)
    return out


def evaluate(
    family: Callable[..., Any],
    points: list[tuple[int, dict[str, Any]]],
    queries: list[tuple[str, dict[str, Any]]],
    options: dict[str, Any],
    catalog: Mapping[str, Query] | None = None,
) -> list[dict[str, Any]]:
    """Rows for ``points`` (``(index, parameters)``) under every query, grouped by point.

    Each row has ``point``, ``_q`` and ``_k`` (the query's place in the spec and the element's
    in its answer: the row's place within its point, for sorting), the
    query name and parameters, and :data:`RESULT_COLUMNS`; the grid parameters are added by
    the caller. Convergence warnings are silenced here: each row carries its status.
    ``catalog`` holds the queries by name (the job carries them to worker processes, which do
    not see queries registered in the parent); a name it lacks is looked up in
    :data:`dpcap.study.catalogue.QUERIES`.
    """
    specs = {name: (catalog or {}).get(name) or query(name) for name, _ in queries}
    rows: list[dict[str, Any]] = []
    group: list[_Instance] = []
    entries = 0
    for index, params in points:
        group.append(_build(family, index, params))
        entries += _size(group[-1].obj) if not group[-1].status else 0
        if entries >= BATCH_ENTRIES:
            rows += _query_all(group, queries, options, specs)
            group, entries = [], 0
    if group:
        rows += _query_all(group, queries, options, specs)
    return rows


#: A chunk's instances are built and queried in groups of about this many matrix entries
#: (64 MiB of float64): a chunk of large instances never holds them all at once.
BATCH_ENTRIES = 1 << 23


def _query_all(
    instances: list[_Instance],
    queries: list[tuple[str, dict[str, Any]]],
    options: dict[str, Any],
    specs: Mapping[str, Query],
) -> list[dict[str, Any]]:
    """The rows of built instances under every query (see :func:`evaluate`)."""
    built = [i for i in instances if not i.status]
    rows: dict[int, list[dict[str, Any]]] = {i.point: [] for i in instances}
    cache: dict[tuple[str, ...], dict[int, tuple[Any, str, float]]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for order, (name, params) in enumerate(queries):
            spec = specs[name]
            kwargs = _kwargs(spec, params, options)
            unit = _unit_of(spec, kwargs)
            answers = _answers(spec, params, kwargs, built, cache)
            cells = _columns(spec, params)
            for inst in instances:
                for k, (extra, answer, err, seconds) in enumerate(
                    _expand(name, params, inst, answers)
                ):
                    if inst.status:
                        result = _failure(inst.status, inst.message, unit)
                    elif err:
                        status, _, message = err.partition(":")
                        result = _failure(status, message, unit)
                    else:
                        result = _row(answer, unit)
                    result["seconds"] = seconds + (inst.seconds if order == 0 and k == 0 else 0)
                    rows[inst.point].append(
                        {"point": inst.point, "_q": order, "_k": k, "query": name}
                        | cells
                        | extra
                        | result
                    )
    return [row for inst in instances for row in rows[inst.point]]


def _answers(
    spec: Query,
    params: dict[str, Any],
    kwargs: dict[str, Any],
    built: list[_Instance],
    cache: dict[tuple[str, ...], dict[int, tuple[Any, str, float]]],
) -> dict[int, tuple[Any, str, float]]:
    """``{point: (answer, error, seconds)}`` of one query over the built instances."""
    name = spec.name
    batched = {k: v for k, v in kwargs.items() if k in ("tol", "rtol", "max_iter", "unit")}
    key = ("capacity", *(f"{k}={v!r}" for k, v in sorted(batched.items())))
    if name in ("capacity", "midp") and set(kwargs) <= set(batched):
        wanted = built if name == "capacity" else [i for i in built if _one_entry(i.obj)]
        known = cache.setdefault(key, {})
        known |= _capacity_batch([i for i in wanted if i.point not in known], batched)
        if name == "capacity":
            return {i.point: known[i.point] for i in wanted}
        out = {i.point: _as_midp(*known[i.point]) for i in wanted}
        others = [i for i in built if not _one_entry(i.obj)]
        return out | _loop(_of(midp), others, kwargs)
    if name == "dp_delta" and isinstance(params["eps"], list):
        return _loop(_of(dp_delta_curve), built, kwargs)
    return _loop(spec.call, built, kwargs)


def _as_midp(answer: Any, err: str, seconds: float) -> tuple[Any, str, float]:
    """A one-entry mechanism's capacity, reported as its MI-DP (module docstring)."""
    if answer is None:
        return answer, err, seconds
    note = "; MI-DP of a one-entry mechanism: its Shannon capacity"
    return dataclasses.replace(answer, message=answer.message + note), err, seconds


def _loop(
    fn: Call, built: list[_Instance], kwargs: dict[str, Any]
) -> dict[int, tuple[Any, str, float]]:
    out: dict[int, tuple[Any, str, float]] = {}
    for inst in built:
        start = time.perf_counter()
        answer, err = _call(fn, inst, kwargs)
        out[inst.point] = (answer, err, time.perf_counter() - start)
    return out


def _expand(
    name: str,
    params: dict[str, Any],
    inst: _Instance,
    answers: dict[int, tuple[Any, str, float]],
) -> Iterator[tuple[dict[str, Any], Any, str, float]]:
    """``(extra columns, answer, error, seconds)`` per row of one instance and query.

    A query returning an array (``dp_delta`` over a list of ε) gives one row per element,
    its parameter value in the column (the call's time shared among them).
    """
    answer, err, seconds = answers.get(inst.point, (None, "", 0.0))
    if name == "dp_delta" and isinstance(params["eps"], list):
        levels = params["eps"]
        values = list(answer) if answer is not None and not err else [None] * len(levels)
        for level, value in zip(levels, values, strict=True):
            yield {"eps": level}, value, err, seconds / len(levels)
        return
    yield {}, answer, err, seconds
