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
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from dpcap import _sweep_queries
from dpcap.errors import ParameterError

__all__ = ["EXECUTORS", "Job", "default_chunk_size", "execute", "resolve_family"]

EXECUTORS = ("auto", "serial", "processes", "dask")

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
    """What every chunk needs: the family (a callable or its reference), queries, options."""

    family: Callable[..., Any] | str
    queries: list[tuple[str, dict[str, Any]]]
    options: dict[str, Any]

    def __call__(self, chunk: Chunk) -> Rows:
        return _sweep_queries.evaluate(
            resolve_family(self.family), chunk, self.queries, self.options
        )


def run_chunk(job: Job, chunk: Chunk) -> Rows:
    """Module-level entry point for worker processes and Dask (picklable by reference)."""
    return job(chunk)


class _ChunkFailed(Exception):
    pass


def failed_rows(job: Job, chunk: Chunk, message: str) -> Rows:
    """Rows with status ``failed`` for every point and query of a chunk that kept failing."""

    def fail(**_: Any) -> Any:
        raise _ChunkFailed(message)

    return _sweep_queries.evaluate(fail, chunk, job.queries, job.options)


def default_chunk_size(points: int, workers: int) -> int:
    """About 20 chunks in one process (large enough for the batched engine to group channels
    of one size; each is stored as it finishes), 8 per worker otherwise; at most 1000."""
    target = 20 if workers <= 1 else 8 * workers
    return max(1, min(1000, math.ceil(points / target)))


def execute(
    job: Job,
    chunks: list[Chunk],
    *,
    executor: str,
    workers: int,
    scheduler: Any = None,
    retries: int = 2,
) -> Iterator[tuple[Chunk, Rows]]:
    """Run ``chunks`` on ``executor``; yield ``(chunk, rows)`` as each finishes."""
    if executor == "serial":
        yield from _serial(job, chunks, retries)
    elif executor == "processes":
        yield from _processes(job, chunks, workers, retries)
    else:
        yield from _dask(job, chunks, workers, scheduler, retries)


def _serial(job: Job, chunks: list[Chunk], retries: int) -> Iterator[tuple[Chunk, Rows]]:
    for chunk in chunks:
        for attempt in range(retries + 1):
            try:
                rows = job(chunk)
                break
            except Exception as exc:
                if attempt == retries:
                    rows = failed_rows(job, chunk, _after(retries, exc))
        yield chunk, rows


def _after(retries: int, exc: BaseException) -> str:
    return f"chunk failed after {retries + 1} attempts: {type(exc).__name__}: {exc}"


def _processes(
    job: Job, chunks: list[Chunk], workers: int, retries: int
) -> Iterator[tuple[Chunk, Rows]]:
    """Chunks on a pool of ``spawn`` workers (the same start on every platform, no fork).

    A worker that dies breaks the whole pool (:class:`BrokenProcessPool`) and every chunk in
    flight with it, so the culprit is unknown: the unfinished chunks then run in isolation,
    each in a one-worker pool of its own (``workers`` at a time), where a failure is charged
    to the chunk that caused it.
    """
    context = multiprocessing.get_context("spawn")
    attempts = [0] * len(chunks)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    futures: dict[Future[Rows], int] = {}
    for i, chunk in enumerate(chunks):
        futures[pool.submit(run_chunk, job, chunk)] = i
    try:
        while futures:
            finished, _ = wait(futures, return_when=FIRST_COMPLETED)
            if any(isinstance(f.exception(), BrokenProcessPool) for f in finished):
                break
            for fut in finished:
                i = futures.pop(fut)
                exc = fut.exception()
                if exc is None:
                    yield chunks[i], fut.result()
                    continue
                attempts[i] += 1
                if attempts[i] <= retries:
                    futures[pool.submit(run_chunk, job, chunks[i])] = i
                else:
                    yield chunks[i], failed_rows(job, chunks[i], _after(retries, exc))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    yield from _isolated(job, chunks, sorted(futures.values()), attempts, workers, retries)


def _isolated(
    job: Job,
    chunks: list[Chunk],
    todo: list[int],
    attempts: list[int],
    workers: int,
    retries: int,
) -> Iterator[tuple[Chunk, Rows]]:
    """Each chunk of ``todo`` in a one-worker pool of its own, ``workers`` pools at a time."""
    context = multiprocessing.get_context("spawn")
    queue = list(todo)
    running: dict[Future[Rows], tuple[int, ProcessPoolExecutor]] = {}
    try:
        while queue or running:
            while queue and len(running) < workers:
                i = queue.pop(0)
                pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
                running[pool.submit(run_chunk, job, chunks[i])] = (i, pool)
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                i, pool = running.pop(fut)
                pool.shutdown(wait=False)
                exc = fut.exception()
                if exc is None:
                    yield chunks[i], fut.result()
                    continue
                attempts[i] += 1
                if attempts[i] <= retries:
                    queue.append(i)
                else:
                    yield chunks[i], failed_rows(job, chunks[i], _after(retries, exc))
    finally:
        for _, pool in running.values():
            pool.shutdown(wait=False, cancel_futures=True)


def _dask(
    job: Job, chunks: list[Chunk], workers: int, scheduler: Any, retries: int
) -> Iterator[tuple[Chunk, Rows]]:
    """Chunks as Dask futures (``Client.submit``, ``as_completed``), with Dask's own retries.

    ``scheduler``: None starts a :class:`~dask.distributed.LocalCluster` of ``workers``
    single-threaded worker processes (closed at the end); a ``"tcp://host:port"`` address
    connects to a running scheduler; a ``Client`` is used as it is.
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
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        owned += [client, cluster]
    else:
        client = Client(scheduler)
        owned.append(client)
    futures: dict[Any, int] = {}
    try:
        for i, chunk in enumerate(chunks):
            futures[client.submit(run_chunk, job, chunk, retries=retries, pure=False)] = i
        for fut in as_completed(list(futures)):
            i = futures[fut]
            if fut.status == "error":
                yield chunks[i], failed_rows(job, chunks[i], _after(retries, fut.exception()))
            else:
                yield chunks[i], fut.result()
    finally:
        if not owned:  # someone else's cluster: leave nothing of ours running on it
            client.cancel(list(futures))
        for obj in owned:
            obj.close()


def local_workers(workers: int | None) -> int:
    """``workers``, or the number of cores this process may use."""
    if workers is not None:
        return workers
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
