"""A sweep's store: a directory of Parquet parts and the spec that produced them.

Layout::

    store/
      _spec.json                        the sweep's spec and the dpcap version that wrote it
      _lock                             while a sweep writes: who it is (JSON, see below)
      part-00000042-1a2b3c4d.parquet    rows of the grid points of one finished chunk
      ...

A part is written to a temporary name in the same directory, flushed to disk, then renamed
(``os.replace``, atomic on POSIX and Windows): a reader, or a sweep killed at any instant,
sees each part whole or not at all. Parts are never rewritten; resuming reads the ``point``
column of every part to know which grid points are done. Names starting with ``_`` or ``.``
are skipped by Parquet dataset readers, so ``pandas.read_parquet(store)`` reads the rows.

One sweep writes a store at a time. ``_lock`` is created whole (its content written to a
temporary file, then hard-linked into place, which fails if a lock exists): it names its
holder by process id, process start time, host name, boot id and pid namespace. A lock is
taken over only when its holder is provably dead: same host, boot and pid namespace as this
process, and no process of that id and start time. A lock of another host, container or boot,
one without content or one that is not a regular file (it is never read beyond 4 KiB, never
opened through a symbolic link, never waited on) is refused, naming the holder; ``break_lock``
removes it for the user who knows no sweep is writing. A lock written by an earlier dpcap
(a bare process id) is judged by that id on this host. The sweep that holds the lock removes
the temporary files a killed sweep left behind and says so (a :class:`UserWarning`), and
checks before each part that the lock is still its own.

A grid point stored twice (two sweeps at once, a part copied by hand) is found when the store
is read: duplicates whose rows are equal (``seconds`` aside) are read once, with a warning
naming the points; duplicates that differ raise :class:`~dpcap.errors.ParameterError` naming
the points and the parts.

Each part records the digest of the spec that wrote it (:data:`DIGEST_KEY` in its Parquet
metadata; the dpcap version aside). A part is checked before its rows count, when a sweep
resumes as when a store is read: it must be a regular file, record this store's spec (or no
spec: a part written before parts recorded one), have the columns of this sweep's rows with
their types, and hold only grid points of this sweep. Anything else (a part of another sweep
copied in, a hand-made file named ``part-*.parquet``, a FIFO) raises
:class:`~dpcap.errors.ParameterError` naming the part; nothing is read from a FIFO or device.
pyarrow is imported here only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import stat
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcap._core import certify
from dpcap.errors import DpcapError, ParameterError, StoreWarning
from dpcap.study._lock import Foreign, Holder, file_kind, identity, start_time

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPEC_FILE", "Store"]

SPEC_FILE = "_spec.json"
LOCK_FILE = "_lock"
PART_GLOB = "part-*.parquet"
SPEC_KEYS = ("dpcap", "family", "grid", "options", "queries")

#: The version a source tree that was never installed reports: it does not refuse a resume.
UNKNOWN_VERSION = "0+unknown"


#: The key of a part's Parquet metadata that holds :func:`spec_digest` of its sweep.
DIGEST_KEY = b"dpcap.spec"

#: The Arrow type kinds of a part's result columns (``catalogue.RESULT_COLUMNS``).
_RESULT_TYPES = {
    "value": "floating",
    "lower": "floating",
    "upper": "floating",
    "seconds": "floating",
    "iterations": "integer",
    "status": "string",
    "method": "string",
    "unit": "string",
    "message": "string",
}

#: Temporary files of this module (:func:`_tmp_name`): what a killed sweep may leave behind.
_LEFTOVER = re.compile(r"\.(?:_spec\.json|_lock|part-\d+-[0-9a-f]+\.parquet)\.[0-9a-f]{8}\.tmp")


def _tmp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")


def _atomic_write(path: Path, write: Any) -> None:
    """``write(tmp_path)`` then rename onto ``path``; the temporary never outlives a failure."""
    tmp = _tmp_name(path)
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _canonical(value: Any) -> str:
    """JSON text that tells 1, 1.0 and true apart (Python's ``==`` does not)."""
    return json.dumps(value, sort_keys=True)


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Readable names of what differs between two specs (nested keys joined by dots)."""
    out = []
    for key in sorted(set(old) | set(new)):
        name = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{name}.")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            # a long list is named by the elements that differ, not cut at its common prefix
            pairs = {f"[{i}]": (x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))}
            out += _differences(
                {k: x for k, (x, _) in pairs.items()}, {k: y for k, (_, y) in pairs.items()}, name
            )
        elif _canonical(a) != _canonical(b):
            out.append(f"{name} (store: {_brief(a)}; now: {_brief(b)})")
    return out


def spec_digest(spec: dict[str, Any]) -> str:
    """The identity of a sweep recorded in its parts: SHA-256 of the spec's canonical JSON,
    without the dpcap version (a resume by another version is refused at the spec)."""
    body = {key: value for key, value in spec.items() if key != "dpcap"}
    return hashlib.sha256(_canonical(body).encode()).hexdigest()


def _grid_layout(spec: dict[str, Any]) -> tuple[dict[str, str], int | None]:
    """The grid columns of a spec's rows (name -> the kind of Arrow type: ``integer``,
    ``floating``, ``bool``, ``string``) and its number of points; ``({}, None)`` for a grid
    that is not well formed (whoever reads the store refuses it)."""
    grid: Any = spec.get("grid")
    try:
        if "product" in grid:
            axes = dict(grid["product"])
            count = math.prod(len(values) for values in axes.values())
        else:
            points = grid["points"]
            axes = {name: [p[name] for p in points] for name in points[0]}
            count = len(points)
        return {name: _kind_of(values) for name, values in axes.items()}, count
    except (TypeError, KeyError, IndexError, ValueError):
        return {}, None


def _kind_of(values: list[Any]) -> str:
    """The Arrow type kind of a grid column (the rule of ``sweeps._dtype``)."""
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "floating"
    return "string"


def _type_kind(arrow_type: Any) -> str:
    import pyarrow as pa

    for test, name in (
        (pa.types.is_null, "null"),
        (pa.types.is_boolean, "bool"),
        (pa.types.is_integer, "integer"),
        (pa.types.is_floating, "floating"),
        (pa.types.is_string, "string"),
        (pa.types.is_large_string, "string"),
    ):
        if test(arrow_type):
            return name
    return str(arrow_type)


def _fits(found: str, kind: str, nullable: bool) -> bool:
    """Whether a column of type kind ``found`` holds what a sweep writes as ``kind``: the same,
    null (no value in the part) where a column may be empty, or integers where floats are."""
    if found == kind:
        return True
    if found == "null":
        return nullable
    return kind == "floating" and found == "integer"


def _brief(value: Any, limit: int = 80) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the lock -----------------------------------------------------------------------------


class Store:
    """The Parquet store of one sweep; created on first use, checked against its spec.

    ``Store(path)`` opens an existing store to read; ``Store(path, spec)`` creates or resumes
    one to write (hold it with ``with``: the lock is released on exit); ``break_lock=True``
    removes the lock of another sweep first (module docstring).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        spec: dict[str, Any] | None = None,
        *,
        break_lock: bool = False,
    ):
        self.path = Path(path)
        self.locked = False
        if spec is None:  # reading an existing store
            if not (self.path / SPEC_FILE).is_file():
                raise ParameterError(
                    f"path: {str(self.path)!r} is not a sweep store (no {SPEC_FILE})"
                )
            self.spec = self.read_spec()
            self._layout(self.spec)
            return
        if self.path.exists() and not self.path.is_dir():
            raise ParameterError(f"store: {str(self.path)!r} exists and is not a directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ParameterError(f"store: cannot create {str(self.path)!r} ({exc})") from exc
        self._text = json.dumps(
            {
                "pid": os.getpid(),
                "start": start_time(os.getpid()),
                **identity(),
                "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "token": uuid.uuid4().hex,
            }
        )
        notes = self._lock(break_lock)
        try:
            notes += self._clean()
            if notes:
                certify.warn(f"store {str(self.path)!r}: " + "; ".join(notes), StoreWarning)
            self._check_or_write(spec)
        except BaseException:
            self.release()
            raise
        self.spec = spec
        self._layout(spec)

    def _layout(self, spec: dict[str, Any]) -> None:
        """What every part of this sweep holds: its spec's digest, columns and points."""
        self.digest = spec_digest(spec)
        self.grid_columns, self.n_points = _grid_layout(spec)
        try:
            keys = {str(key) for _, params in spec["queries"] for key in params or {}}
        except (TypeError, ValueError, KeyError):  # refused by whoever reads the spec
            keys = set()
        # a query parameter named like a grid parameter has the column query_<name> (sweeps)
        self.query_columns = sorted(
            f"query_{key}" if key in self.grid_columns or key == "point" else key for key in keys
        )

    def _lock(self, break_lock: bool) -> list[str]:
        """Take the lock; returns what was done to stale or broken locks (for the warning)."""
        lock, notes = self.path / LOCK_FILE, list[str]()
        where = f"store {str(self.path)!r}"
        how = (
            f"If no sweep is writing this store, pass break_lock=True (dpcap sweep --break-lock) "
            f"or delete {str(lock)!r}"
        )
        for _ in range(8):
            if self._create(lock):
                return notes
            try:
                holder = Holder.read(lock)
            except Foreign as exc:
                if not break_lock:
                    raise ParameterError(
                        f"{where}: its lock {LOCK_FILE} is {exc}, not a lock dpcap writes; it "
                        f"is not read. {how}"
                    ) from None
                self._unlink(lock)
                notes.append(f"broke its lock {LOCK_FILE} ({exc}) as asked (break_lock=True)")
                break_lock = False
                continue
            if holder is None:  # released meanwhile
                continue
            if break_lock:
                if self._remove(lock, holder):
                    notes.append(f"broke the lock of {holder.describe()} as asked (break_lock)")
                break_lock = False
                continue
            state = holder.state()
            if state == "dead":
                if self._remove(lock, holder):
                    notes.append(f"took over the lock of {holder.describe()}, which no longer runs")
                continue
            if state == "alive":
                raise ParameterError(
                    f"{where} is being written by {holder.describe()}; one sweep writes a store "
                    f"at a time. {how}"
                )
            if holder.info is None:
                raise ParameterError(
                    f"{where}: its lock {LOCK_FILE} names no holder yet (a sweep may be taking "
                    f"it, or one was killed while it did); it is not taken over. {how}"
                )
            raise ParameterError(
                f"{where} is locked by {holder.describe()}, in another {holder.elsewhere()}: "
                f"this process cannot tell whether it still runs, so the lock is not taken "
                f"over. {how}"
            )
        raise ParameterError(
            f"{where}: could not take its lock {LOCK_FILE} (other sweeps keep taking it)"
        )

    def _create(self, lock: Path) -> bool:
        """Create ``lock`` with its content in one step; False if a lock exists."""
        tmp = _tmp_name(lock)
        try:
            with open(tmp, "x") as handle:
                handle.write(self._text)
            try:
                os.link(tmp, lock)
            except (FileExistsError, FileNotFoundError):  # taken; or tmp cleaned by a holder
                return False
            except OSError:  # no hard links on this file system: exclusive create, then write
                try:
                    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                except FileExistsError:
                    return False
                with os.fdopen(fd, "w") as handle:
                    handle.write(self._text)
        except OSError as exc:
            where = f"store {str(self.path)!r}"
            raise ParameterError(f"{where}: cannot write its lock ({exc})") from exc
        finally:
            tmp.unlink(missing_ok=True)
        self.locked = True
        return True

    def _remove(self, lock: Path, holder: Holder) -> bool:
        """Remove ``lock`` if it is still the one judged (moved aside and compared first, so
        that the fresh lock of a sweep that took it meanwhile is put back, not deleted)."""
        moved = _tmp_name(lock)
        try:
            os.rename(lock, moved)
        except FileNotFoundError:
            return False
        try:
            again = Holder.read(moved)
        except Foreign:
            again = None
        if again is not None and (again.text, again.ident) == (holder.text, holder.ident):
            moved.unlink(missing_ok=True)
            return True
        with contextlib.suppress(OSError):  # fails only if a third sweep locked it meanwhile
            os.link(moved, lock)
        moved.unlink(missing_ok=True)
        return False

    def _unlink(self, lock: Path) -> None:
        try:
            lock.unlink(missing_ok=True)
        except OSError as exc:
            raise ParameterError(
                f"store {str(self.path)!r}: cannot remove its lock {LOCK_FILE} ({exc})"
            ) from exc

    def _clean(self) -> list[str]:
        """Remove the temporary files of sweeps killed while writing (the lock is held).

        A lock's temporary may also be another sweep's that is starting now (it then finds
        this lock): those are removed without a word.
        """
        removed = []
        for entry in os.scandir(self.path):
            if _LEFTOVER.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    if not entry.name.startswith(f".{LOCK_FILE}."):
                        removed.append(entry.name)
        if not removed:
            return []
        return [
            f"removed {len(removed)} temporary file(s) left by a sweep that was killed "
            f"({', '.join(sorted(removed)[:5])}{', ...' if len(removed) > 5 else ''})"
        ]

    def _holds(self) -> bool:
        try:
            holder = Holder.read(self.path / LOCK_FILE)
        except Foreign:
            return False
        return holder is not None and holder.text == self._text

    def release(self) -> None:
        """Remove the lock, if it is still this store's own."""
        if self.locked:
            if self._holds():
                (self.path / LOCK_FILE).unlink(missing_ok=True)
            self.locked = False

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _check_or_write(self, spec: dict[str, Any]) -> None:
        if (self.path / SPEC_FILE).is_file():
            stored = self.read_spec()
            if UNKNOWN_VERSION in (stored.get("dpcap"), spec.get("dpcap")):
                stored = {**stored, "dpcap": spec.get("dpcap")}  # a source tree never installed
            diff = _differences(stored, spec)
            if diff:
                raise ParameterError(
                    f"store {str(self.path)!r} holds a different sweep; it differs in: "
                    + "; ".join(diff)
                    + ". Use another store path, or delete this one to start over"
                )
            return
        # a lock's temporary is another sweep's that is starting now (_clean ran)
        if any(
            p.name != LOCK_FILE and not _LEFTOVER.fullmatch(p.name) for p in self.path.iterdir()
        ):
            raise ParameterError(
                f"store: {str(self.path)!r} is a non-empty directory without {SPEC_FILE}; "
                "a sweep store must be a new or empty directory"
            )
        # keys in the order given: the columns of an explicit grid follow its points' keys
        text = json.dumps(spec, indent=2)
        _atomic_write(self.path / SPEC_FILE, lambda p: p.write_text(text + "\n"))

    def read_spec(self) -> dict[str, Any]:
        where = f"store {str(self.path)!r}: {SPEC_FILE}"
        try:
            spec = json.loads((self.path / SPEC_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise ParameterError(f"{where} is unreadable ({exc})") from exc
        except RecursionError:
            raise ParameterError(f"{where} is unreadable (JSON nested too deeply)") from None
        if not isinstance(spec, dict) or sorted(spec) != sorted(SPEC_KEYS):
            raise ParameterError(f"{where} is not a sweep spec (keys {', '.join(SPEC_KEYS)})")
        grid = spec["grid"]
        if not isinstance(grid, dict) or sorted(grid) not in (["product"], ["points"]):
            raise ParameterError(f"{where}: 'grid' must hold 'product' or 'points'")
        return spec

    def parts(self) -> list[Path]:
        return sorted(self.path.glob(PART_GLOB))

    def _table(self, part: Path, columns: list[str] | None = None) -> Any:
        """The rows of ``part`` (``columns`` only), once the part is found to be this sweep's
        (module docstring); :class:`~dpcap.errors.ParameterError` naming it otherwise."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        where = f"store {str(self.path)!r}: part {part.name}"
        try:
            mode = os.stat(part).st_mode
        except OSError as exc:
            raise ParameterError(f"{where} is unreadable ({exc})") from exc
        if not stat.S_ISREG(mode):  # a FIFO or a device would block or never end
            raise ParameterError(
                f"{where} is a {file_kind(mode)}, not a file a sweep writes; it is not read. "
                "Remove it from the store"
            )
        try:
            with pq.ParquetFile(part) as handle:
                self._check_schema(where, handle.schema_arrow)
                table = handle.read(columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise ParameterError(
                f"{where} is unreadable ({exc}); deleting it is safe (a resumed sweep computes "
                "its points again)"
            ) from exc
        self._check_points(where, table.column("point"))
        return table

    def _check_schema(self, where: str, schema: Any) -> None:
        """Refuse a part of another sweep, or one without this sweep's columns and types."""
        delete = "Delete it (a resumed sweep computes the points of this sweep's own parts again)"
        digest = (schema.metadata or {}).get(DIGEST_KEY)
        if digest is not None and digest.decode("utf-8", "replace") != self.digest:
            raise ParameterError(
                f"{where} was written by another sweep (its spec is not this store's "
                f"{SPEC_FILE}): it was copied in. {delete}"
            )
        types = {name: _type_kind(schema.field(name).type) for name in schema.names}
        wanted = {
            "point": "integer",
            **self.grid_columns,
            "query": "string",
            **_RESULT_TYPES,
        }
        missing = [name for name in wanted if name not in types]
        missing += [name for name in self.query_columns if name not in types]
        if missing:
            raise ParameterError(
                f"{where} is not a part of this sweep: it has no column {', '.join(missing)}. "
                f"{delete}"
            )
        never_null = {"point", "query", *self.grid_columns}
        wrong = [
            f"{name} ({types[name]}, not {kind})"
            for name, kind in wanted.items()
            if not _fits(types[name], kind, name not in never_null)
        ]
        if wrong:
            raise ParameterError(
                f"{where} is not a part of this sweep: the column(s) {', '.join(wrong)} do "
                f"not hold what a sweep writes there. {delete}"
            )

    def _check_points(self, where: str, column: Any) -> None:
        """Refuse a part whose ``point`` column has a missing value or a point off the grid."""
        if column.null_count:
            raise ParameterError(f"{where} has rows without a grid point (point is null)")
        if self.n_points is None or not len(column):
            return
        import pyarrow.compute as pc

        low, high = pc.min(column).as_py(), pc.max(column).as_py()
        if low < 0 or high >= self.n_points:
            bad = low if low < 0 else high
            raise ParameterError(
                f"{where} holds rows of grid point {bad}, which this sweep's grid (points 0 to "
                f"{self.n_points - 1}) does not have: it is not a part of this sweep. Delete it"
            )

    def done(self) -> set[int]:
        """Indices of the grid points whose rows are on disk (every part checked)."""
        points: set[int] = set()
        for part in self.parts():
            column = self._table(part, ["point"]).column("point")
            points.update(int(p) for p in column.to_pylist())
        return points

    def write(self, frame: pd.DataFrame) -> Path:
        """Write one chunk's rows as a new part, atomically; returns its path.

        Raises :class:`~dpcap.errors.DpcapError` if this store's lock is no longer its own
        (broken by another sweep): writing on would store points twice.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.locked and not self._holds():
            self.locked = False
            raise DpcapError(
                f"store {str(self.path)!r}: this sweep's lock {LOCK_FILE} was removed or taken "
                "by another sweep (break_lock?); it stops so that no grid point is stored "
                "twice. Its finished chunks are stored: run it again to resume"
            )
        first = int(frame["point"].min()) if len(frame) else 0
        path = self.path / f"part-{first:08d}-{uuid.uuid4().hex[:8]}.parquet"
        table = pa.Table.from_pandas(frame, preserve_index=False)
        metadata = {**(table.schema.metadata or {}), DIGEST_KEY: self.digest.encode()}
        table = table.replace_schema_metadata(metadata)
        _atomic_write(path, lambda p: pq.write_table(table, p))
        return path

    def read(self) -> pd.DataFrame:
        """Every part's rows, concatenated (unordered; the caller sorts), each point once.

        A point found in several parts is read from the first (by name) if its rows are equal
        in every part but for ``seconds`` (with a :class:`UserWarning` naming the points);
        rows that differ raise :class:`~dpcap.errors.ParameterError` naming points and parts.
        """
        import pandas as pd

        parts = [(part, self._table(part).to_pandas()) for part in self.parts()]
        parts = [(part, frame) for part, frame in parts if len(frame)]
        if not parts:
            return pd.DataFrame()
        frames = _once(str(self.path), parts)
        return pd.concat(frames, ignore_index=True)


def _once(where: str, parts: list[tuple[Path, pd.DataFrame]]) -> list[pd.DataFrame]:
    """The parts' frames with each grid point's rows kept in its first part only."""
    first: dict[int, int] = {}
    twice: dict[int, list[int]] = {}
    for i, (_, frame) in enumerate(parts):
        for point in frame["point"].unique().tolist():
            if point in first:
                twice.setdefault(point, [first[point]]).append(i)
            else:
                first[point] = i
    if not twice:
        return [frame for _, frame in parts]
    conflicts = {
        point: where_
        for point, where_ in twice.items()
        if any(not _same(parts[where_[0]][1], parts[j][1], point) for j in where_[1:])
    }
    named = sorted(conflicts or twice)
    shown = ", ".join(str(p) for p in named[:10]) + (", ..." if len(named) > 10 else "")
    names = sorted({parts[j][0].name for p in named for j in (conflicts or twice)[p]})
    files = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    if conflicts:
        raise ParameterError(
            f"store {where!r} holds {len(named)} grid point(s) twice with different rows "
            f"(point {shown}; parts {files}): two sweeps wrote it at once or a part was copied "
            "in. Delete the parts that should not be there (a resumed sweep computes the "
            "missing points again)"
        )
    certify.warn(
        f"store {where!r} holds {len(named)} grid point(s) twice with equal rows (point "
        f"{shown}; parts {files}); each is read once. Deleting the extra parts is safe",
        StoreWarning,
    )
    out = []
    for i, (_, frame) in enumerate(parts):
        extra = [p for p, where_ in twice.items() if i in where_[1:]]
        out.append(frame[~frame["point"].isin(extra)] if extra else frame)
    return out


def _same(a: pd.DataFrame, b: pd.DataFrame, point: int) -> bool:
    """Whether the rows of ``point`` in two parts agree (``seconds`` aside, NaN equal NaN)."""
    keys = [k for k in ("_q", "_k") if k in a.columns]

    def rows(frame: pd.DataFrame) -> pd.DataFrame:
        sel = frame[frame["point"] == point].drop(columns=["seconds"], errors="ignore")
        return sel.sort_values(keys, kind="stable").reset_index(drop=True) if keys else sel

    x, y = rows(a), rows(b)
    return list(x.columns) == list(y.columns) and x.reset_index(drop=True).equals(
        y.reset_index(drop=True)
    )
