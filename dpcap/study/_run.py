"""Where a sweep's chunks run: in this process, in local worker processes, or on Dask.

Every executor takes the same :class:`Job` and list of chunks and yields ``(chunk, rows)``
pairs *as chunks finish* (not in order), so the caller can store each one before counting it
done. A chunk whose evaluation raises (a worker that died, a bug) is tried again, up to
``retries`` times; a chunk that keeps failing comes back as rows with status ``failed`` and the
error, never as an exception that ends the sweep. ``KeyboardInterrupt`` is the one exception
that propagates; worker pools and clusters started here are shut down on the way out.
"""

from __future__ import annotations

import importlib
import logging
import math
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from dpcap.errors import ParameterError
from dpcap.study import _evaluate
from dpcap.study.catalogue import Query

__all__ = ["EXECUTORS", "Job", "default_chunk_size", "execute", "resolve_family"]

EXECUTORS = ("auto", "serial", "processes", "dask")

#: Worker processes start fresh (``spawn``): the same on every platform, and no fork of a
#: parent whose threads (BLAS, tqdm, Dask) might hold locks.
_SPAWN = multiprocessing.get_context("spawn")

Chunk = list[tuple[int, dict[str, Any]]]
Rows = list[dict[str, Any]]


def resolve_family(family: Callable[..., Any] | str) -> Callable[..., Any]:
    """The callable behind a family: itself, a ``dpcap.mechanisms`` name or ``"module:name"``."""
    if callable(family):
        return family
    module_name, _, name = family.rpartition(":")
    if not module_name:
        module_name = "dpcap.mechanisms"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ParameterError(f"family: cannot import module {module_name!r} ({exc})") from exc
    found = getattr(module, name, None)
    if not callable(found):
        raise ParameterError(f"family: {module_name} has no callable {name!r}")
    return found  # type: ignore[no-any-return]


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
    to the chunk that caused it. On any exit but completion the workers are terminated.
    """
    waiting = deque((chunk, 0) for chunk in chunks)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_SPAWN)
    flight: dict[Future[Rows], tuple[Chunk, int]] = {}
    broken = False
    try:
        while (waiting or flight) and not broken:
            while waiting and len(flight) < 2 * workers:
                chunk, tries = waiting.popleft()
                flight[pool.submit(run_chunk, job, chunk)] = (chunk, tries)
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
                pool = ProcessPoolExecutor(max_workers=1, mp_context=_SPAWN)
                running[pool.submit(run_chunk, job, chunk)] = (chunk, tries, pool)
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
