"""Fuzz group ``stores``: a sweep's Parquet store never loses, duplicates or invents a row.

The store of :func:`dpcap.sweep` (``dpcap.study._store``; the docstrings of :func:`dpcap.sweep`,
:func:`dpcap.load_sweep` and ``dpcap.study._store``) on tiny sweeps (a family of randomized
response, at most 6 grid points, closed-form queries, this process as executor).
Properties:

* **interrupted** (``KeyboardInterrupt`` in the family, or before or after a part is written)
  any number of times, then resumed: the table is the table of an uninterrupted run (``seconds``
  aside), no stored point is computed again, each point is in one part only, and
  :class:`~dpcap.SweepInterrupted` counts no point that is not stored;
* **killed** (SIGKILL in a forked process: in the family, while the lock is taken, while a part
  or the spec is half written, right after a part is written), then resumed: the same table;
  the dead holder's lock is taken over and its temporary files removed (a
  :class:`~dpcap.StoreWarning` at most), none left behind;
* **two writers**: a sweep in another process holds the store; a second sweep is refused naming
  that process (whatever its spec), and succeeds once the first ended or was killed; with
  ``break_lock`` it runs, and the first stops at its next part instead of writing a point twice;
* **damaged parts** (truncated, overwritten) are named by ``load_sweep`` and by a resume, which
  computes nothing; once they are deleted the resume computes their points and nothing else;
* **foreign files**: files of other names are ignored; a ``part-*.parquet`` that is not a part of
  this sweep (garbage, a directory, a FIFO, a part of another store, a part edited by hand) is
  refused naming it (:class:`~dpcap.ParameterError`); a copy of a part is read once with a
  :class:`~dpcap.StoreWarning`, a copy that differs is refused; nothing hangs;
* **another spec** (one element changed) is refused naming what differs and leaves the store as
  it was; the same spec spelled otherwise resumes and computes nothing; a damaged ``_spec.json``
  is refused naming it;
* **any lock file** (random bytes, JSON holders alive, dead or elsewhere, links, FIFOs,
  directories): the sweep is refused naming the lock or its holder, or takes a provably dead
  holder's lock over with a :class:`~dpcap.StoreWarning`; never another exception.

Findings fixed in ``dpcap/study/_store.py`` (regression cases in the strategies below):
ST1, a ``part-*.parquet`` without a ``point`` column, or with string, float or null points,
raised ``KeyError``/``TypeError``/``ValueError`` from ``load_sweep`` and resumes; ST2, a part
holding points off the grid (``-1``, ``17``) was read as rows of the sweep; ST3, a part copied
from a store of another sweep was read as this sweep's rows (parts now record their spec's
digest); ST4, a lock naming a live process with a ``start`` that is not a number (``"x"``)
was taken over as the lock of a dead holder; ST5, a ``_spec.json`` nested deeply raised
``RecursionError``; ST6, ``load_sweep`` of an explicit grid ordered its columns
alphabetically.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import shutil
import signal
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _harness import fuzz
from hypothesis import given
from hypothesis import strategies as st

import dpcap
from dpcap import ParameterError, StoreWarning, SweepInterrupted
from dpcap.mechanisms import randomized_response
from dpcap.study import _lock, _store, catalogue

POSIX = pytest.mark.skipif(os.name != "posix" or not hasattr(os, "fork"), reason="fork, signals")

#: A value of ε at which the family fails deterministically (its rows are ``failed``, stored).
BAD_EPS = 13.0

#: What the families do, set by each example: builds are logged; ``interrupt``/``kill`` at the
#: build of that number (1-based, counted in this process); ``block`` at that build waits on a
#: pipe (the two-writer test).
STATE: dict[str, Any] = {}


def _reset(**actions: Any) -> None:
    STATE.clear()
    STATE.update({"built": [], "interrupt": None, "kill": None, "block": None, **actions})


def _build(k: int, eps: float) -> Any:
    STATE["built"].append((k, eps))
    n = len(STATE["built"])
    if STATE.get("kill") == n:
        os.kill(os.getpid(), signal.SIGKILL)
    if STATE.get("interrupt") == n:
        raise KeyboardInterrupt
    if STATE.get("block") == n:
        os.write(STATE["ready"], b"b")  # tell the parent this sweep holds the store
        _wait(STATE["go"])
    if eps == BAD_EPS:
        raise ValueError(f"no mechanism at eps={eps}")
    return randomized_response(k, eps)


def rr(k: int, eps: float) -> Any:
    """The family of every sweep here (module level: a store records its name)."""
    return _build(k, eps)


def rr_twin(k: int, eps: float) -> Any:
    """The same mechanisms under another name (another spec's family)."""
    return _build(k, eps)


_reset()

# ------------------------------------------------------------------------------- the specs

QUERIES: list[Any] = [
    "dp_epsilon",
    "max_leakage",
    "tv_dp",
    "kl_dp",
    ("dp_delta", {"eps": [0.0, 0.5]}),
    ("renyi_dp", {"alpha": [2.0]}),
]


@dataclass
class Spec:
    grid: Any
    queries: list[Any]
    points: list[tuple[int, float]]  # (k, eps) of each grid point, in order
    chunk_size: int

    def key(self) -> str:
        return repr((self.grid, self.queries))


@st.composite
def specs(draw: st.DrawFn, *, max_points: int = 6) -> Spec:
    ks = draw(st.lists(st.sampled_from([2, 3, 4]), min_size=1, max_size=3, unique=True))
    eps_values = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, BAD_EPS]) | st.floats(0.0, 3.0)
    most = max(1, max_points // len(ks))
    eps = draw(st.lists(eps_values, min_size=1, max_size=min(3, most), unique=True))
    points = [(k, e) for k in ks for e in eps]
    if draw(st.integers(0, 4)) == 0:
        grid: Any = [{"k": k, "eps": e} for k, e in points]  # an explicit grid
    else:
        grid = {"k": ks, "eps": eps}
    queries = draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=2, unique_by=repr))
    return Spec(grid, queries, points, draw(st.integers(1, 3)))


# ------------------------------------------------------------------------------- helpers


@pytest.fixture(scope="session")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stores")


@contextlib.contextmanager
def fresh(root: Path) -> Iterator[Path]:
    """A path for one example's store, removed afterwards."""
    folder = root / uuid.uuid4().hex[:12]
    folder.mkdir()
    try:
        yield folder / "store"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(
    spec: Spec, store: Path | None = None, family: Any = rr, *, strict: bool = True, **kwargs: Any
) -> pd.DataFrame:
    """The sweep of ``spec``; a StoreWarning is an error when ``strict`` (a test that expects
    one uses :func:`run_warned`), other warnings are ignored (failed rows warn)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if strict:
            warnings.simplefilter("error", StoreWarning)
        return dpcap.sweep(
            family,
            spec.grid,
            spec.queries,
            store=store,
            executor="serial",
            progress=False,
            chunk_size=spec.chunk_size,
            **kwargs,
        )


def run_warned(spec: Spec, store: Path, **kwargs: Any) -> tuple[pd.DataFrame, list[str]]:
    """:func:`run`, returning the StoreWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = dpcap.sweep(
            rr,
            spec.grid,
            spec.queries,
            store=store,
            executor="serial",
            progress=False,
            chunk_size=spec.chunk_size,
            **kwargs,
        )
    return table, [str(w.message) for w in caught if issubclass(w.category, StoreWarning)]


def noted(notes: list[str], text: str, *, once: bool = False) -> None:
    """StoreWarnings were given, each saying ``text`` (exactly one if ``once``)."""
    assert notes, f"no StoreWarning saying {text!r}"
    assert all(text in note for note in notes), notes
    if once:
        assert len(notes) == 1, notes


_REFERENCES: dict[str, pd.DataFrame] = {}


def reference(spec: Spec) -> pd.DataFrame:
    """The table of an uninterrupted sweep without a store (``seconds`` dropped)."""
    key = spec.key()
    if key not in _REFERENCES:
        saved = dict(STATE)
        _reset()
        try:
            _REFERENCES[key] = timeless(run(spec))
        finally:  # the example's log of builds is left as it was
            STATE.clear()
            STATE.update(saved)
    return _REFERENCES[key]


def timeless(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=["seconds"])


def same_table(table: pd.DataFrame, spec: Spec) -> None:
    pd.testing.assert_frame_equal(timeless(table), reference(spec))


def stored(store: Path) -> set[int]:
    """The grid points whose rows are on disk."""
    if not (store / _store.SPEC_FILE).is_file():
        return set()
    return _store.Store(store).done()


def part_points(store: Path) -> list[int]:
    """Every part's points, one entry per (part, point): a point twice means two parts."""
    out: list[int] = []
    for part in sorted(store.glob("part-*.parquet")):
        out += sorted(set(pq.read_table(part, columns=["point"]).column("point").to_pylist()))
    return out


def built_points(spec: Spec) -> set[int]:
    """Indices of the grid points built since the last reset."""
    return {spec.points.index(p) for p in STATE["built"]}


def leftovers(store: Path) -> list[str]:
    return sorted(p.name for p in store.iterdir() if p.name.startswith(".") or p.name == "_lock")


def check_consistent(store: Path, spec: Spec) -> None:
    """The store holds the reference table, each point in one part, nothing left over."""
    points = part_points(store)
    assert len(points) == len(set(points)), f"a point in two parts: {points}"
    assert set(points) == set(range(len(spec.points)))  # failed rows of a family are stored
    assert leftovers(store) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        loaded = dpcap.load_sweep(store)
    same_table(loaded, spec)


def _wait(fd: int, timeout: float = 60.0) -> bytes:
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        raise TimeoutError("no word from the other process within a minute")
    return os.read(fd, 1)


def reap(pid: int, timeout: float = 60.0) -> int:
    """The exit status of child ``pid`` (negative: the signal); killed if it hangs."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"process {pid} hung")
        time.sleep(0.002)


def forked(body: Any) -> int:
    """Run ``body()`` in a forked process; its pid. The child never returns: it exits 0 when
    ``body`` returns, 3 on a DpcapError, 4 on anything else (and SIGKILL kills it)."""
    pid = os.fork()
    if pid:
        return pid
    code = 4
    try:
        with (
            open(os.devnull, "w") as null,
            contextlib.redirect_stderr(null),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            body()
        code = 0
    except dpcap.DpcapError:
        code = 3
    finally:
        os._exit(code)


# ------------------------------------------------------------------------------ interrupted


@contextlib.contextmanager
def patched_writes(where: str | None, at: int | None) -> Iterator[None]:
    """``KeyboardInterrupt`` before or after the ``at``-th atomic write (spec or part)."""
    real = _store._atomic_write
    calls = [0]

    def write(path: Path, body: Any) -> None:
        calls[0] += 1
        if where == "before" and calls[0] == at:
            raise KeyboardInterrupt
        real(path, body)
        if where == "after" and calls[0] == at:
            raise KeyboardInterrupt

    _store._atomic_write = write
    try:
        yield
    finally:
        _store._atomic_write = real


INTERRUPTS = st.tuples(st.sampled_from(["family", "before", "after"]), st.integers(1, 8))


@fuzz(examples=1000, quick=5)
@given(spec=specs(), interrupts=st.lists(INTERRUPTS, max_size=4))
def test_interrupted_sweeps_resume_to_the_uninterrupted_table(
    root: Path, spec: Spec, interrupts: list[tuple[str, int]]
) -> None:
    with fresh(root) as store:
        for where, at in [*interrupts, ("none", 0)]:
            before = stored(store)
            _reset(interrupt=at if where == "family" else None)
            table, stop = None, None
            try:
                with patched_writes(where, at):
                    table = run(spec, store)
            except KeyboardInterrupt as exc:
                stop = exc
            assert not (store / "_lock").exists()  # released on every way out
            assert built_points(spec).isdisjoint(before), "a stored point was computed again"
            after = stored(store)
            assert after >= before
            if isinstance(stop, SweepInterrupted):
                assert stop.total == len(spec.points)
                assert stop.store == str(store)
                if where == "after":  # the part is on disk, not yet counted
                    assert stop.done <= len(after)
                else:
                    assert stop.done == len(after), (stop.done, after)
            elif stop is not None:  # while the store was being created: nothing stored
                assert after == set()
            else:
                same_table(table, spec)
                break
        check_consistent(store, spec)


# ---------------------------------------------------------------------------------- killed

KILLS = st.sampled_from(["family", "lock", "half-written", "written", "before-write"])


@POSIX
@fuzz(examples=500, quick=3)
@given(spec=specs(), kills=st.lists(st.tuples(KILLS, st.integers(1, 8)), min_size=1, max_size=3))
def test_killed_sweeps_resume_to_the_uninterrupted_table(
    root: Path, spec: Spec, kills: list[tuple[str, int]]
) -> None:
    with fresh(root) as store:
        for where, at in kills:
            before = stored(store)

            def body(where: str = where, at: int = at) -> None:
                _reset(kill=at if where == "family" else None)
                die = lambda: os.kill(os.getpid(), signal.SIGKILL)  # noqa: E731
                if where == "lock":
                    os.link = lambda *a, **k: die()  # killed between the lock's two steps
                elif where != "family":
                    real, calls = _store._atomic_write, [0]

                    def write(path: Path, body: Any) -> None:
                        calls[0] += 1
                        if calls[0] == at and where == "before-write":
                            die()
                        if calls[0] == at and where == "half-written":
                            body(_store._tmp_name(path))  # the temporary whole, not renamed
                            die()
                        real(path, body)
                        if calls[0] == at:
                            die()

                    _store._atomic_write = write
                run(spec, store, strict=False)  # a dead holder's lock is taken over

            code = reap(forked(body))
            assert code in (0, -signal.SIGKILL), f"the sweep in the child exited {code}"
            if code == 0:  # it was never killed: a whole store
                check_consistent(store, spec)
                assert stored(store) >= before
            else:
                assert stored(store) >= before  # a kill loses nothing stored
        _reset()
        on_disk = stored(store)
        table, notes = run_warned(spec, store)
        assert built_points(spec).isdisjoint(on_disk), "a stored point was computed again"
        for note in notes:
            assert "no longer runs" in note or "temporary file" in note, note
        same_table(table, spec)
        check_consistent(store, spec)


# ------------------------------------------------------------------------------ two writers


@POSIX
@fuzz(examples=400, quick=3)
@given(
    spec=specs(),
    block_at=st.integers(1, 6),
    how=st.sampled_from(["wait", "kill", "break"]),
    other=st.booleans(),
)
def test_two_writers_never_write_one_point_twice(
    root: Path, spec: Spec, block_at: int, how: str, other: bool
) -> None:
    """A sweep in another process holds the store (blocked in its family at build
    ``block_at``); this one is refused naming it, then resumes as ``how`` says."""
    block_at = min(block_at, len(spec.points))
    with fresh(root) as store:
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        try:
            _reset(block=block_at, ready=ready_w, go=go_r)
            pid = forked(lambda: run(spec, store))
            assert _wait(ready_r) == b"b"
            held = stored(store)
            _reset()
            second = Spec(spec.grid, ["capacity"], spec.points, 1) if other else spec
            with pytest.raises(ParameterError, match=f"being written by process {pid}"):
                run(second, store)
            with pytest.raises(ParameterError, match=f"being written by process {pid}"):
                _store.Store(store, _store.Store(store).spec)
            assert STATE["built"] == []
            assert stored(store) == held
            if how == "wait":
                os.write(go_w, b"g")
                assert reap(pid) == 0
                table = run(spec, store)
                assert STATE["built"] == []  # the first sweep stored everything
            elif how == "kill":
                os.kill(pid, signal.SIGKILL)
                assert reap(pid) == -signal.SIGKILL
                table, notes = run_warned(spec, store)
                assert [n for n in notes if "no longer runs" not in n] == [], notes
                assert built_points(spec).isdisjoint(held)
            else:
                table, notes = run_warned(spec, store, break_lock=True)
                noted(notes, "broke the lock")
                os.write(go_w, b"g")  # the first sweep finds its lock gone at its next part
                assert reap(pid) == 3
            same_table(table, spec)
            check_consistent(store, spec)
        finally:
            for fd in (ready_r, ready_w, go_r, go_w):
                os.close(fd)


# ----------------------------------------------------------------------------- damaged parts


@fuzz(examples=700, quick=3)
@given(spec=specs(), data=st.data())
def test_damaged_parts_are_named_and_their_points_computed_again(
    root: Path, spec: Spec, data: st.DataObject
) -> None:
    with fresh(root) as store:
        _reset()
        run(spec, store)
        parts = sorted(store.glob("part-*.parquet"))
        chosen = data.draw(st.lists(st.sampled_from(parts), min_size=1, unique=True), "parts")
        for part in chosen:
            raw = part.read_bytes()
            how = data.draw(st.sampled_from(["truncate", "tail", "garbage", "empty"]), "how")
            if how == "truncate":  # sizes vary from run to run: a fraction is drawn
                raw = raw[: int(data.draw(st.floats(0.0, 1.0, exclude_max=True)) * len(raw))]
            elif how == "tail":  # the footer's end (its length and magic) overwritten
                cut = data.draw(st.integers(1, 64), "cut")
                raw = raw[:-cut] + data.draw(st.binary(min_size=cut, max_size=cut), "bytes")
                if raw.endswith(b"PAR1"):
                    raw = raw[:-1]
            elif how == "garbage":
                raw = data.draw(st.binary(max_size=200), "garbage").rstrip(b"1")
            else:
                raw = b""
            part.write_bytes(raw)
        names = [p.name for p in chosen]
        lost = {i for p in chosen for i in points_named(p, spec)}
        with pytest.raises(ParameterError, match="unreadable") as error:
            dpcap.load_sweep(store)
        assert any(name in str(error.value) for name in names), error.value
        _reset()
        with pytest.raises(ParameterError, match="unreadable") as error:
            run(spec, store)
        assert any(name in str(error.value) for name in names), error.value
        assert STATE["built"] == []
        assert leftovers(store) == []
        for part in chosen:  # as the message says: deleting it is safe
            part.unlink()
        _reset()
        table = run(spec, store)
        assert built_points(spec) == lost
        same_table(table, spec)
        check_consistent(store, spec)


def points_named(part: Path, spec: Spec) -> range:
    """The points of the (undamaged) part ``part``: its name starts with its first point, and a
    chunk is ``chunk_size`` consecutive points."""
    first = int(part.name.split("-")[1])
    return range(first, min(first + spec.chunk_size, len(spec.points)))


# ----------------------------------------------------------------------------- foreign files

#: Names a sweep never reads.
HARMLESS = [
    "README.txt",
    "notes.csv",
    ".DS_Store",
    "_SUCCESS",
    "part-1.csv",
    "x.parquet",
    "_spec.json.bak",
    "Part-00000001-abc.parquet",
    "part-00000001-abc.parquet.bak",
]


def foreign(draw: st.DrawFn, store: Path, spec: Spec) -> tuple[str, str]:
    """Put one foreign thing in ``store``; returns its name and what must happen
    (``ignored``, ``refused``, ``duplicate``, ``cleaned``)."""
    parts = sorted(store.glob("part-*.parquet"))
    part = draw(st.sampled_from(parts))
    first, tag = draw(st.integers(0, 10**8 - 1)), draw(st.sampled_from(["ffffffff", "x"]))
    name = f"part-{first:08d}-{tag}.parquet"
    target = store / name
    kind = draw(
        st.sampled_from(
            [
                "harmless",
                "subfolder",
                "garbage",
                "directory",
                "fifo",
                "link to fifo",
                "copy",
                "link",
                "copy, seconds changed",
                "copy, value changed",
                "another store's part",
                "no point column",
                "points as text",
                "points as floats",
                "null point",
                "point off the grid",
                "a column dropped",
                "value as text",
                "renamed column",
                "leftover temporary",
            ]
        )
    )
    if kind == "harmless":
        name = draw(st.sampled_from(HARMLESS))
        (store / name).write_bytes(draw(st.binary(max_size=64)) or part.read_bytes())
        return name, "ignored"
    if kind == "subfolder":
        (store / "sub").mkdir()
        shutil.copy(part, store / "sub" / part.name)
        return "sub", "ignored"
    if kind == "leftover temporary":
        name = f".{part.name}.{uuid.uuid4().hex[:8]}.tmp"
        (store / name).write_bytes(part.read_bytes()[: draw(st.integers(0, 100))])
        return name, "cleaned"
    if target.exists():
        target = store / f"part-99999999-{uuid.uuid4().hex[:8]}.parquet"
        name = target.name
    if kind == "garbage":
        target.write_bytes(draw(st.binary(max_size=100)).rstrip(b"1"))
    elif kind == "directory":
        target.mkdir()
        shutil.copy(part, target / part.name)  # a Parquet dataset reader would read it
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "link to fifo":
        os.mkfifo(store.parent / "fifo")
        target.symlink_to(store.parent / "fifo")
    elif kind == "copy":
        shutil.copy(part, target)
        return name, "duplicate"
    elif kind == "link":
        target.symlink_to(part)
        return name, "duplicate"
    elif kind == "another store's part":
        other = store.parent / "other"
        family = draw(st.sampled_from([rr, rr_twin]))  # another query, or another family
        queries = spec.queries if family is rr_twin else [*spec.queries, "capacity"]
        run(Spec(spec.grid, queries, spec.points, spec.chunk_size), other, family=family)
        shutil.copy(draw(st.sampled_from(sorted(other.glob("part-*.parquet")))), target)
    else:
        frame = pq.read_table(part).to_pandas()  # edited by hand: no record of its spec
        edit = {
            "copy, seconds changed": lambda f: f.assign(seconds=f["seconds"] + 1.0),
            "copy, value changed": lambda f: f.assign(value=f["value"] + 0.5),
            "no point column": lambda f: f.drop(columns=["point"]),
            "points as text": lambda f: f.assign(point=f["point"].astype(str)),
            "points as floats": lambda f: f.assign(point=f["point"] + 0.5),
            "null point": lambda f: f.assign(point=pd.array([None] * len(f), dtype="Int64")),
            "point off the grid": lambda f: f.assign(
                point=f["point"] + draw(st.sampled_from([len(spec.points), 10**6, -(10**6)]))
            ),
            "a column dropped": lambda f: f.drop(
                columns=[draw(st.sampled_from([c for c in f.columns if c != "point"]))]
            ),
            "value as text": lambda f: f.assign(value=f["value"].astype(str)),
            "renamed column": lambda f: f.rename(columns={"query": "Query"}),
        }[kind]
        edited = edit(frame)
        pq.write_table(pa.Table.from_pandas(edited, preserve_index=False), target)
        if kind.startswith("copy") and edited.drop(columns="seconds").equals(
            frame.drop(columns="seconds")
        ):
            return name, "duplicate"  # NaN + 0.5 is NaN: the rows of failed points are equal
    return name, "refused"


@POSIX
@fuzz(examples=1200, quick=6)
@given(spec=specs(max_points=4), data=st.data())
def test_foreign_files_are_ignored_or_refused_by_name(
    root: Path, spec: Spec, data: st.DataObject
) -> None:
    with fresh(root) as store:
        _reset()
        run(spec, store)
        name, fate = foreign(data.draw, store, spec)
        _reset()
        if fate == "refused":
            for call in (lambda: dpcap.load_sweep(store), lambda: run(spec, store)):
                with pytest.raises(ParameterError) as error:
                    call()
                assert name in str(error.value), error.value
            assert STATE["built"] == []
            return
        if fate == "duplicate":
            with pytest.warns(StoreWarning, match="twice with equal rows"):
                same_table(dpcap.load_sweep(store), spec)
            table, notes = run_warned(spec, store)
            noted(notes, "twice with equal rows")
        elif fate == "cleaned":
            same_table(dpcap.load_sweep(store), spec)
            table, notes = run_warned(spec, store)
            noted(notes, "temporary file", once=True)
            assert name in notes[0], notes
            assert not (store / name).exists()
        else:
            same_table(dpcap.load_sweep(store), spec)
            table = run(spec, store)
            assert (store / name).exists()
        assert STATE["built"] == []
        same_table(table, spec)


def test_parts_not_of_this_sweep_are_refused(root: Path) -> None:
    """Findings ST1-ST3, one case each: a part without a point column (was a KeyError), with
    points off the grid (were read as rows), of another store (was read as this sweep's)."""
    spec = Spec({"k": [2, 3], "eps": [0.5]}, ["dp_epsilon"], [(2, 0.5), (3, 0.5)], 1)
    edits = {
        "no column point": lambda f: f.drop(columns=["point"]),
        "grid point 12": lambda f: f.assign(point=f["point"] + 12),
    }
    for message, edit in edits.items():
        with fresh(root) as store:
            run(spec, store)
            part = sorted(store.glob("part-*.parquet"))[0]
            frame = edit(pq.read_table(part).to_pandas())
            pq.write_table(pa.Table.from_pandas(frame), store / "part-00000012-ffffffff.parquet")
            with pytest.raises(ParameterError, match=f"part-00000012-ffffffff.parquet.*{message}"):
                dpcap.load_sweep(store)
    with fresh(root) as store:
        run(spec, store)
        run(Spec(spec.grid, ["max_leakage"], spec.points, 1), store.parent / "other")
        for part in store.glob("part-*.parquet"):
            part.unlink()
        for part in (store.parent / "other").glob("part-*.parquet"):
            shutil.copy(part, store / part.name)  # the same points and columns, another sweep
        with pytest.raises(ParameterError, match="written by another sweep"):
            dpcap.load_sweep(store)


# ------------------------------------------------------------------------------ another spec


@st.composite
def changed_specs(draw: st.DrawFn, spec: Spec) -> tuple[Spec, dict[str, Any], list[str]]:
    """``spec`` with one element changed: the new spec, sweep options, and the names one of
    which the refusal must contain."""
    kind = draw(
        st.sampled_from(["eps value", "k added", "query added", "query parameter", "option"])
    )
    grid = {
        "k": list(dict.fromkeys(k for k, _ in spec.points)),
        "eps": list(dict.fromkeys(e for _, e in spec.points)),
    }
    if kind == "eps value":
        grid["eps"] = [*grid["eps"][:-1], max(grid["eps"]) + 0.125]
        return _spec_of(grid, spec.queries), {}, ["grid", "eps", "points"]
    if kind == "k added":
        grid["k"] = [*grid["k"], 5]
        return _spec_of(grid, spec.queries), {}, ["grid", "k", "points"]
    base = _spec_of(grid, spec.queries) if isinstance(spec.grid, dict) else spec
    if kind == "query added":
        return Spec(base.grid, [*base.queries, "capacity"], base.points, 1), {}, ["queries"]
    if kind == "query parameter":  # no spec here asks δ at ε = 0.25
        return Spec(base.grid, [("dp_delta", {"eps": [0.25]})], base.points, 1), {}, ["queries"]
    option = draw(st.sampled_from([{"tol": 1e-6}, {"unit": "bits"}, {"max_iter": 7}]))
    return base, option, [f"options.{next(iter(option))}"]


def _spec_of(grid: dict[str, list[Any]], queries: list[Any]) -> Spec:
    points = [(k, e) for k in grid["k"] for e in grid["eps"]]
    return Spec(grid, queries, points, 1)


def respelled(draw: st.DrawFn, spec: Spec) -> tuple[Any, Any]:
    """The same spec spelled otherwise: tuples, NumPy arrays, query dicts."""
    import numpy as np

    grid = spec.grid
    if isinstance(grid, dict):
        form = draw(st.sampled_from(["tuple", "array", "same"]))
        if form == "tuple":
            grid = {k: tuple(v) for k, v in grid.items()}
        elif form == "array":
            grid = {k: np.array(v) for k, v in grid.items()}
    entries = [q if isinstance(q, tuple) else (q, {}) for q in spec.queries]
    queries = draw(
        st.sampled_from(
            [
                spec.queries,
                [{"query": name, **params} for name, params in entries],
                dict(entries),
            ]
        )
    )
    return grid, queries


@fuzz(examples=1200, quick=5)
@given(spec=specs(max_points=4), data=st.data())
def test_another_spec_is_refused_naming_what_differs(
    root: Path, spec: Spec, data: st.DataObject
) -> None:
    with fresh(root) as store:
        _reset()
        run(spec, store)
        before = sorted((p.name, p.stat().st_mtime_ns) for p in store.iterdir())
        changed, options, names = data.draw(changed_specs(spec), "changed")
        family = data.draw(st.sampled_from([rr, rr_twin]), "family")
        if family is rr_twin:
            changed, options, names = spec, {}, ["family"]
        _reset()
        with pytest.raises(ParameterError, match="holds a different sweep") as error:
            run(changed, store, family=family, **options)
        assert any(n in str(error.value) for n in names), (names, error.value)
        assert STATE["built"] == []
        assert sorted((p.name, p.stat().st_mtime_ns) for p in store.iterdir()) == before
        grid, queries = respelled(data.draw, spec)
        _reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = dpcap.sweep(rr, grid, queries, store=store, executor="serial", progress=False)
        assert STATE["built"] == []
        same_table(table, spec)


SPEC_DAMAGE = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [
            b"",
            b"{}",
            b"[]",
            b"null",
            b'{"dpcap": "0", "family": "f", "grid": {}, "options": {}, "queries": []}',
            b'{"dpcap": "0", "family": "f", "grid": {"points": 5}, "options": {}, "queries": []}',
            b'{"dpcap": "0", "family": "f", "grid": {"product": [["k", [1]]], "points": []},'
            b' "options": {}, "queries": []}',
        ]
    ),
    st.integers(1, 40).map(lambda n: b"[" * n * 1000),
)


@fuzz(examples=2500, quick=4)
@given(spec=specs(max_points=4), raw=SPEC_DAMAGE, cut=st.integers(0, 400))
def test_a_damaged_spec_file_is_refused_naming_it(
    root: Path, spec: Spec, raw: bytes, cut: int
) -> None:
    with fresh(root) as store:
        _reset()
        run(spec, store)
        text = (store / _store.SPEC_FILE).read_bytes().rstrip()
        damaged = text[:cut] if cut < len(text) else raw  # cut inside the JSON, or replaced
        (store / _store.SPEC_FILE).write_bytes(damaged)
        _reset()
        for call in (lambda: dpcap.load_sweep(store), lambda: run(spec, store)):
            with pytest.raises(dpcap.DpcapError) as error:
                call()
            assert isinstance(error.value, ValueError)
            message = str(error.value)
            assert _store.SPEC_FILE in message or "different sweep" in message, message
        assert STATE["built"] == []
        assert not (store / "_lock").exists()


# ------------------------------------------------------------------------------------ locks


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _holder(**fields: Any) -> dict[str, Any]:
    me = _lock.identity()
    return {
        "pid": os.getpid(),
        "start": _lock.start_time(os.getpid()),
        **me,
        "since": "2026-01-01T00:00:00+0000",
        "token": "0" * 32,
        **fields,
    }


@st.composite
def locks(draw: st.DrawFn) -> tuple[str, Any, str | None]:
    """A lock's kind, its content (None: not a file of bytes), and what a sweep must do with
    it by construction (``refused``, ``taken``; None for random content)."""
    kind = draw(
        st.sampled_from(
            [
                "bytes",
                "text",
                "bare pid, alive",
                "bare pid, dead",
                "holder alive",
                "holder dead",
                "holder reused pid",
                "holder elsewhere",
                "holder fields",
                "symlink",
                "fifo",
                "directory",
                "oversized",
            ]
        )
    )
    if kind == "bytes":
        raw = draw(st.binary(max_size=64))
        return kind, raw, None
    if kind == "text":
        raw = draw(st.text(max_size=30)).encode("utf-8", "surrogatepass")
        return kind, raw, None
    if kind == "bare pid, alive":
        return kind, str(os.getpid()).encode(), "refused"
    if kind == "bare pid, dead":
        return kind, f" {_dead_pid()}\n".encode(), "taken"
    if kind == "holder alive":
        return kind, json.dumps(_holder()).encode(), "refused"
    if kind == "holder dead":
        return kind, json.dumps(_holder(pid=_dead_pid(), start=None)).encode(), "taken"
    if kind == "holder reused pid":
        start = _lock.start_time(os.getpid())
        if start is None:
            return kind, json.dumps(_holder()).encode(), "refused"
        return kind, json.dumps(_holder(start=start + 1)).encode(), "taken"
    if kind == "holder elsewhere":
        key = draw(st.sampled_from(["host", "boot", "pidns"]))
        value = draw(st.sampled_from(["elsewhere", None, "", "pid:[1]"]))
        pid = draw(st.sampled_from([os.getpid(), _dead_pid(), 1, 2**31 - 2]))
        holder = _holder(pid=pid, start=None, **{key: value})
        if holder[key] == _lock.identity()[key]:
            holder[key] = "elsewhere"
        return kind, json.dumps(holder).encode(), "refused"
    if kind == "holder fields":
        fields = draw(
            st.dictionaries(
                st.sampled_from(["pid", "start", "host", "boot", "pidns", "since", "x"]),
                st.one_of(
                    st.integers(-(2**40), 2**40),
                    st.text(max_size=5),
                    st.none(),
                    st.booleans(),
                    st.floats(),
                    st.lists(st.integers(), max_size=2),
                ),
                max_size=4,
            )
        )
        raw = json.dumps(fields).encode()
        return kind, raw, None
    return kind, None, "refused"


def _fate_of(raw: bytes) -> str:
    """What the documented rule (``dpcap.study._store``'s docstring) makes of a lock with these
    bytes: ``taken`` only when it names a holder (a bare process id, or dpcap's JSON with a
    positive pid below 2^31) that is provably dead: on this host, boot and pid namespace (when
    it names them), and no process of that id, or one that started at another time."""
    text = raw.decode("utf-8", "replace").strip()
    if text.isascii() and text.isdigit():
        info: Any = {"pid": int(text)}
    else:
        try:
            info = json.loads(text)
        except ValueError:
            return "refused"
    if not isinstance(info, dict):
        return "refused"
    pid, start = info.get("pid"), info.get("start")
    if type(pid) is not int or not 0 < pid < 2**31:
        return "refused"
    if start is not None and type(start) is not int:
        return "refused"  # not a lock dpcap writes: nothing is proven by it
    mine = _identity()
    if any(k in info and not isinstance(info[k], (str, type(None))) for k in mine):
        return "refused"
    if "host" in info and any(info.get(k) != v for k, v in mine.items()):
        return "refused"
    state = _proc_state(pid)
    if state is None or state == "Z":
        return "taken"
    return "taken" if start is not None and start != _proc_start(pid) else "refused"


def _identity() -> dict[str, Any]:
    """Host name, boot id and pid namespace of this process, read here (not by dpcap)."""
    import socket

    boot = Path("/proc/sys/kernel/random/boot_id")
    try:
        pidns: str | None = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = None
    return {
        "host": socket.gethostname(),
        "boot": boot.read_text().strip() if boot.exists() else None,
        "pidns": pidns,
    }


def _proc_state(pid: int) -> str | None:
    """The state letter of process ``pid`` (None: no such process)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def _proc_start(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


@POSIX
@fuzz(examples=3000, quick=6)
@given(spec=specs(max_points=2), lock=locks(), break_lock=st.integers(0, 4))
def test_any_lock_file_is_refused_or_taken_over_from_the_dead(
    root: Path, spec: Spec, lock: tuple[str, Any, str | None], break_lock: int
) -> None:
    kind, raw, intended = lock
    fate = _fate_of(raw) if raw is not None else "refused"  # judged now: pids come and go
    assert intended in (None, fate), (kind, raw, intended, fate)
    with fresh(root) as store:
        store.mkdir()
        path = store / "_lock"
        if kind == "symlink":
            path.symlink_to("/dev/zero")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "directory":
            path.mkdir()
        elif kind == "oversized":
            path.write_bytes(b"1" * (_lock.LOCK_BYTES + 1))
        else:
            path.write_bytes(raw)
        _reset()
        if break_lock == 0 and kind == "directory":  # never removed with what it holds
            with pytest.raises(ParameterError, match="cannot remove its lock"):
                run(spec, store, break_lock=True)
            assert path.is_dir()
            return
        if break_lock == 0:  # the user who knows: any lock goes, with a warning
            table, notes = run_warned(spec, store, break_lock=True)
            noted(notes, "broke", once=True)
        elif fate == "refused":
            with pytest.raises(ParameterError) as error:
                run(spec, store)
            message = str(error.value)
            assert "_lock" in message or "process" in message, message
            assert "break_lock=True" in message, message
            assert STATE["built"] == []
            assert not (store / _store.SPEC_FILE).exists()
            assert os.path.lexists(path)  # left alone
            return
        else:
            table, notes = run_warned(spec, store)
            noted(notes, "no longer runs", once=True)
        same_table(table, spec)
        assert not os.path.lexists(path)
        check_consistent(store, spec)


# ---------------------------------------------------------------- the table of a resumed sweep


def test_an_explicit_grid_loads_with_its_own_column_order(root: Path) -> None:
    """Finding ST6: ``_spec.json`` was written with sorted keys, so ``load_sweep`` of an
    explicit grid ``[{"k": .., "eps": ..}]`` put ``eps`` before ``k``, unlike the sweep."""
    spec = Spec([{"k": 2, "eps": 0.5}, {"k": 3, "eps": 0.0}], ["dp_epsilon"], [], 1)
    with fresh(root) as store:
        table = run(spec, store)
        assert list(table.columns[:3]) == ["point", "k", "eps"]
        pd.testing.assert_frame_equal(dpcap.load_sweep(store), table)


def test_a_malformed_lock_or_spec_is_refused(root: Path) -> None:
    """Findings ST4 and ST5, one case each."""
    spec = Spec({"k": [2], "eps": [0.5]}, ["dp_epsilon"], [(2, 0.5)], 1)
    with fresh(root) as store:
        store.mkdir()
        (store / "_lock").write_text(json.dumps({"pid": os.getpid(), "start": "x"}))
        with pytest.raises(ParameterError, match="names no holder"):
            run(spec, store)
    with fresh(root) as store:
        run(spec, store)
        (store / _store.SPEC_FILE).write_text("[" * 100_000)
        with pytest.raises(ParameterError, match=r"_spec\.json is unreadable .*nested too deeply"):
            dpcap.load_sweep(store)


def test_every_result_column_has_its_type_in_the_store() -> None:
    assert set(_store._RESULT_TYPES) == set(catalogue.RESULT_COLUMNS)


def test_the_reference_is_a_table_of_every_point() -> None:
    """The reference the properties compare with: one row per point and query row, failed
    rows where the family refuses ε (not read off the store)."""
    spec = Spec({"k": [2], "eps": [0.5, BAD_EPS]}, ["dp_epsilon"], [(2, 0.5), (2, BAD_EPS)], 1)
    table = reference(spec)
    assert table["point"].tolist() == [0, 1]
    assert table["status"].tolist() == ["converged", "failed"]
    assert math.isclose(table["value"][0], 0.5, rel_tol=1e-12)
