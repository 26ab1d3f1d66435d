"""Where a sweep's chunks run: in this process, in local worker processes, or on Dask.

Every executor takes the same :class:`Job` and list of chunks and yields ``(chunk, rows)``
pairs *as chunks finish* (not in order), so the caller can store each one before counting it
done. A chunk whose evaluation raises (a worker that died, a transient error such as
``MemoryError`` or ``OSError``: :data:`dpcap.study._evaluate.TRANSIENT`) is tried again, up to
``retries`` times; a chunk that keeps failing comes back as rows with status ``failed`` and the
error, never as an exception that ends the sweep, and those rows are not final (not stored: a
resumed sweep tries them again). ``KeyboardInterrupt`` is the one exception that propagates;
worker pools and clusters started here are shut down on the way out. Local worker processes
end with the process that started them, even when it is killed (:func:`_die_with_parent`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import math
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from dpcap.errors import ParameterError
from dpcap.study import _evaluate
from dpcap.study.catalogue import Query

__all__ = [
    "EXECUTORS",
    "FamilyRef",
    "Job",
    "default_chunk_size",
    "execute",
    "resolve_family",
]

EXECUTORS = ("auto", "serial", "processes", "dask")

#: Worker processes start fresh (``spawn``): the same on every platform, and no fork of a
#: parent whose threads (BLAS, tqdm, Dask) might hold locks.
_SPAWN = multiprocessing.get_context("spawn")

Chunk = list[tuple[int, dict[str, Any]]]
Rows = list[dict[str, Any]]


def resolve_family(
    family: Callable[..., Any] | str, allowed: Mapping[str, str | None] | None = None
) -> Callable[..., Any]:
    """The callable behind a family: itself, a ``dpcap.mechanisms`` name, or ``"module:name"``.

    A string names a function of :mod:`dpcap.mechanisms` (``"randomized_response"``,
    ``"dpcap.mechanisms:randomized_response"``), or of a module in ``allowed`` (module name ->
    the absolute path of its ``.py`` file, or None for a module imported by name): nothing
    else is imported, and ``name`` is one attribute, never a dotted path. A family of an
    allowed module comes back as a :class:`FamilyRef`, which a worker process resolves again.
    """
    if callable(family):
        return family
    module_name, _, name = family.rpartition(":")
    module_name = module_name.strip() or "dpcap.mechanisms"
    name = name.strip()
    if module_name == "dpcap.mechanisms":
        from dpcap import mechanisms

        if name not in mechanisms.__all__:
            raise ParameterError(
                f"family: dpcap.mechanisms has no family {name!r}; it has "
                f"{', '.join(mechanisms.__all__)}"
            )
        return getattr(mechanisms, name)  # type: ignore[no-any-return]
    allowed = allowed or {}
    if module_name not in allowed:
        raise ParameterError(
            f"family: {family!r} names the module {module_name!r}, which is not allowed: a spec "
            "may name the families of dpcap.mechanisms, and functions of the modules given "
            "in allow_modules= (dpcap sweep --allow-module MODULE or --allow-module FILE.py)"
        )
    ref = FamilyRef(module_name, name, allowed[module_name])
    ref.resolve()  # the errors now, in this process
    return ref


#: Modules loaded from a file, by path (a worker process loads each once).
_FROM_FILE: dict[str, ModuleType] = {}


def _allowed_module(module_name: str, path: str | None) -> ModuleType:
    """An allowed module: imported by name (``sys.path`` as it is), or loaded from its file
    under a private name (its directory is not put on ``sys.path``)."""
    try:
        if path is None:
            return importlib.import_module(module_name)
        if path not in _FROM_FILE:
            digest = hashlib.sha256(path.encode()).hexdigest()[:12]
            private = f"_dpcap_family_{module_name}_{digest}"
            spec = importlib.util.spec_from_file_location(private, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"{path!r} is not a Python source file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[private] = module  # what dataclasses and pickle look up
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[private]
                raise
            _FROM_FILE[path] = module
        return _FROM_FILE[path]
    except Exception as exc:
        where = module_name if path is None else f"{module_name} ({path})"
        raise ParameterError(
            f"family: cannot import the allowed module {where} ({type(exc).__name__}: {exc})"
        ) from exc


class FamilyRef:
    """A family of an allowed module: called like it, pickled as ``(module, name, path)``.

    It resolves in each process on first use (a worker process loads the module as its
    parent did), so a family loaded from a file reaches worker processes and Dask.
    """

    def __init__(self, module: str, name: str, path: str | None = None) -> None:
        self.module, self.name, self.path = module, name, path
        self.__name__ = self.__qualname__ = name
        self._fn: Callable[..., Any] | None = None

    def __reduce__(self) -> tuple[type[FamilyRef], tuple[str, str, str | None]]:
        return FamilyRef, (self.module, self.name, self.path)

    def __repr__(self) -> str:
        return f"{self.module}:{self.name}"

    @property
    def __wrapped__(self) -> Callable[..., Any]:  # inspect.signature reads the family's own
        return self.resolve()

    def resolve(self) -> Callable[..., Any]:
        """The function: a plain attribute of the module, callable, defined in the module."""
        if self._fn is None:
            if not self.name.isidentifier():
                raise ParameterError(
                    f"family: {self.name!r} is not a function name (one attribute of "
                    f"{self.module}, no dots)"
                )
            module = _allowed_module(self.module, self.path)
            found = vars(module).get(self.name)
            if found is None:
                raise ParameterError(f"family: module {self.module} has no {self.name!r}")
            if (
                not callable(found)
                or isinstance(found, ModuleType)
                or getattr(found, "__module__", None) != module.__name__
            ):
                raise ParameterError(
                    f"family: {self.module}:{self.name} is not a function defined in "
                    f"{self.module} (it is a {type(found).__name__} of "
                    f"{getattr(found, '__module__', None) or 'no module'}); a family of an "
                    "allowed module is a function or class defined there, not one it imports"
                )
            self._fn = found
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)


@dataclass(frozen=True)
class Job:
    """What every chunk needs: the family (a callable or its reference), queries, options,
    and the catalogue entries of the queries (a worker process does not see the queries
    registered in its parent)."""

    family: Callable[..., Any] | str
    queries: list[tuple[str, dict[str, Any]]]
    options: dict[str, Any]
    catalog: dict[str, Query] = field(default_factory=dict)

    def __call__(self, chunk: Chunk) -> Rows:
        return _evaluate.evaluate(
            resolve_family(self.family), chunk, self.queries, self.options, self.catalog
        )


def run_chunk(job: Job, chunk: Chunk) -> Rows:
    """Module-level entry point for worker processes and Dask (picklable by reference)."""
    return job(chunk)


def failed_rows(job: Job, chunk: Chunk, message: str) -> Rows:
    """Rows with status ``failed`` for every point and query of a chunk that kept failing."""

    def fail(**_: Any) -> Any:
        raise _evaluate.ChunkError(message)

    return _evaluate.evaluate(fail, chunk, job.queries, job.options, job.catalog)


def default_chunk_size(points: int, workers: int) -> int:
    """About 20 chunks in one process (large enough for the batched engine to group channels
    of one size; each is stored as it finishes), 32 per worker otherwise (grids often grow
    harder along an axis: small chunks keep every worker busy to the end); at most 1000."""
    target = 20 if workers <= 1 else 32 * workers
    return max(1, min(1000, math.ceil(points / target)))


#: What an executor yields: the chunk, its rows, and whether they are final (stored). Rows of a
#: chunk that kept failing are not final: a resumed sweep tries those points again.
Done = tuple[Chunk, Rows, bool]


def execute(
    job: Job,
    chunks: list[Chunk],
    *,
    executor: str,
    workers: int,
    scheduler: Any = None,
    retries: int = 2,
) -> Iterator[Done]:
    """Run ``chunks`` on ``executor``; yield ``(chunk, rows, final)`` as each finishes.

    A chunk that raised ``retries + 1`` times is split into its points, each tried afresh, so
    a point that kills its worker fails alone; a point that keeps failing gives non-final rows
    with status ``failed``.
    """
    if executor == "serial":
        yield from _serial(job, chunks, retries)
    elif executor == "processes":
        yield from _processes(job, chunks, workers, retries)
    else:
        yield from _dask(job, chunks, workers, scheduler, retries)


def _exhausted(job: Job, chunk: Chunk, retries: int, exc: BaseException) -> list[Chunk] | Done:
    """A chunk out of attempts: its points as chunks of one, or the failed rows of one point."""
    if len(chunk) > 1:
        return [[point] for point in chunk]
    message = (
        f"point {chunk[0][0]} failed after {retries + 1} attempts ({type(exc).__name__}: "
        f"{exc}); not stored: a resumed sweep tries it again"
    )
    return chunk, failed_rows(job, chunk, message), False


def _settle(
    job: Job,
    chunk: Chunk,
    tries: int,
    exc: BaseException,
    retries: int,
    queue: deque[tuple[Chunk, int]],
) -> Iterator[Done]:
    """A chunk that raised: queued again, split into its points, or given up (failed rows)."""
    if tries < retries:
        queue.append((chunk, tries + 1))
        return
    out = _exhausted(job, chunk, retries, exc)
    if isinstance(out, list):
        queue.extend((c, 0) for c in out)
    else:
        yield out


def _serial(job: Job, chunks: list[Chunk], retries: int) -> Iterator[Done]:
    queue = deque(chunks)
    while queue:
        chunk = queue.popleft()
        for attempt in range(retries + 1):
            try:
                rows = job(chunk)
            except Exception as exc:
                if attempt < retries:
                    continue
                out = _exhausted(job, chunk, retries, exc)
                if isinstance(out, list):
                    queue.extendleft(reversed(out))
                else:
                    yield out
            else:
                yield chunk, rows, True
            break


def _die_with_parent(parent: int) -> None:
    """Initializer of worker processes: end this worker when process ``parent`` ends.

    On Linux the kernel sends SIGKILL when the thread that started the worker ends
    (``prctl(PR_SET_PDEATHSIG)``; pools are started and fed by the thread that runs the sweep,
    which outlives them); on every POSIX system a daemon thread also checks once a second
    that the worker's parent is still ``parent`` (a worker whose parent was killed is adopted
    by another process). Without this, ``kill -9`` of a sweep leaves its workers computing.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the thread does it
            pass
    if os.name != "posix":  # pragma: no cover - Windows: the pool's own checks only
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="dpcap-watch-parent", daemon=True).start()


def _pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that end with this one."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_SPAWN,
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    )


def _kill(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now, its running work included (``shutdown`` cannot cancel that)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker is not None and worker.is_alive():
            worker.terminate()


def _processes(job: Job, chunks: list[Chunk], workers: int, retries: int) -> Iterator[Done]:
    """Chunks on a pool of ``spawn`` workers (the same start on every platform, no fork).

    At most two chunks per worker are in flight (the rest wait here, not in the pool's queue).
    A worker that dies breaks the whole pool (:class:`BrokenProcessPool`) and every chunk in
    flight with it, so the culprit is unknown: the unfinished chunks then run in isolation,
    each in a one-worker pool of its own (``workers`` at a time), where a failure is charged
    to the chunk that caused it. The pool may break while no chunk is awaited (between two
    waits: ``submit`` raises); that is handled the same way. On any exit but completion the
    workers are terminated.
    """
    waiting = deque((chunk, 0) for chunk in chunks)
    pool = _pool(workers)
    flight: dict[Future[Rows], tuple[Chunk, int]] = {}
    broken = False
    try:
        while (waiting or flight) and not broken:
            while waiting and len(flight) < 2 * workers:
                chunk, tries = waiting.popleft()
                try:
                    flight[pool.submit(run_chunk, job, chunk)] = (chunk, tries)
                except BrokenProcessPool:  # a worker died since the last wait
                    waiting.appendleft((chunk, tries))
                    broken = True
                    break
            if broken:
                break
            finished, _ = wait(flight, return_when=FIRST_COMPLETED)
            for fut in finished:
                chunk, tries = flight.pop(fut)
                exc = fut.exception()
                if isinstance(exc, BrokenProcessPool):
                    broken = True
                    waiting.appendleft((chunk, tries))
                elif exc is None:
                    yield chunk, fut.result(), True
                else:
                    yield from _settle(job, chunk, tries, exc, retries, waiting)
    except BaseException:
        _kill(pool)
        raise
    if broken:
        _kill(pool)
        waiting.extendleft(flight.values())
        yield from _isolated(job, waiting, workers, retries)
    else:
        pool.shutdown(wait=True)


def _isolated(
    job: Job, queue: deque[tuple[Chunk, int]], workers: int, retries: int
) -> Iterator[Done]:
    """Each chunk of ``queue`` in a one-worker pool of its own, ``workers`` pools at a time."""
    running: dict[Future[Rows], tuple[Chunk, int, ProcessPoolExecutor]] = {}
    try:
        while queue or running:
            while queue and len(running) < workers:
                chunk, tries = queue.popleft()
                pool = _pool(1)
                try:
                    running[pool.submit(run_chunk, job, chunk)] = (chunk, tries, pool)
                except (BrokenProcessPool, OSError) as error:  # the worker could not start
                    _kill(pool)
                    yield from _settle(job, chunk, tries, error, retries, queue)
            if not running:
                continue
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                chunk, tries, pool = running.pop(fut)
                exc = fut.exception()
                pool.shutdown(wait=exc is None)
                if exc is None:
                    yield chunk, fut.result(), True
                else:
                    yield from _settle(job, chunk, tries, exc, retries, queue)
    finally:
        for _, _, pool in running.values():
            _kill(pool)


def _dask(
    job: Job, chunks: list[Chunk], workers: int, scheduler: Any, retries: int
) -> Iterator[Done]:
    """Chunks as Dask futures (``Client.submit``, ``as_completed``), with Dask's own retries.

    ``scheduler``: None starts a :class:`~dask.distributed.LocalCluster` of ``workers``
    single-threaded worker processes (closed at the end); a ``"tcp://host:port"`` address
    connects to a running scheduler; a ``Client`` is used as it is (what this sweep submitted
    is cancelled if it stops early).
    """
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as exc:
        raise ParameterError(
            "executor='dask' needs dask.distributed: pip install 'dpcap[distributed]'"
        ) from exc
    owned: list[Any] = []
    if isinstance(scheduler, Client):
        client = scheduler
    elif scheduler is None:
        cluster = _local_cluster(LocalCluster, workers)
        client = Client(cluster)
        owned += [client, cluster]
    else:
        client = Client(scheduler)
        owned.append(client)
    futures: dict[Any, Chunk] = {}

    def submit(chunk: Chunk) -> Any:
        fut = client.submit(run_chunk, job, chunk, retries=retries, pure=False)
        futures[fut] = chunk
        return fut

    try:
        stream = as_completed([submit(chunk) for chunk in chunks])
        for fut in stream:
            chunk = futures.pop(fut)
            if fut.status != "error":
                yield chunk, fut.result(), True
                continue
            out = _exhausted(job, chunk, retries, fut.exception())
            if isinstance(out, list):
                for part in out:
                    stream.add(submit(part))
            else:
                yield out
    finally:
        if futures and not owned:  # someone else's cluster: leave nothing of ours running
            client.cancel(list(futures))
        for obj in owned:
            obj.close()


def _local_cluster(make: Any, workers: int) -> Any:
    """A LocalCluster of ``workers`` single-threaded processes, without two of Dask's habits.

    Dask starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which hands freed memory back to
    the system so eagerly that the engine's temporaries fault their pages in again on every
    iteration (measured: 1.6 million page faults and +50 % time on a chunk of truncated
    geometric channels); it is left unset here. Dask also writes its worker environment into
    this process's ``os.environ`` (``OMP_NUM_THREADS=1``, …); that is undone once the workers
    have started.
    """
    import dask

    saved = dict(os.environ)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            return make(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
    finally:
        os.environ.clear()
        os.environ.update(saved)


def local_workers(workers: int | None) -> int:
    """``workers``, or the number of cores this process may use."""
    if workers is not None:
        return workers
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
