"""A sweep's store: a directory of Parquet parts and the spec that produced them.

Layout::

    store/
      _spec.json                        the sweep's spec and the dpcap version that wrote it
      _lock                             while a sweep writes: the id of its process
      part-00000042-1a2b3c4d.parquet    rows of the grid points of one finished chunk
      ...

A part is written to a temporary name in the same directory, flushed to disk, then renamed
(``os.replace``, atomic on POSIX and Windows): a reader, or a sweep killed at any instant,
sees each part whole or not at all. Parts are never rewritten; resuming reads the ``point``
column of every part to know which grid points are done. Names starting with ``_`` or ``.``
are skipped by Parquet dataset readers, so ``pandas.read_parquet(store)`` reads the rows.
One sweep writes a store at a time (``_lock``, created exclusively; a lock left by a process
that no longer runs, as after a kill, is taken over). pyarrow is imported here only.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpcap.errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPEC_FILE", "Store"]

SPEC_FILE = "_spec.json"
LOCK_FILE = "_lock"
PART_GLOB = "part-*.parquet"
SPEC_KEYS = ("dpcap", "family", "grid", "options", "queries")


def _atomic_write(path: Path, write: Any) -> None:
    """``write(tmp_path)`` then rename onto ``path``; the temporary never outlives a failure."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
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
        elif _canonical(a) != _canonical(b):
            out.append(f"{name} (store: {_brief(a)}; now: {_brief(b)})")
    return out


def _brief(value: Any, limit: int = 80) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class Store:
    """The Parquet store of one sweep; created on first use, checked against its spec.

    ``Store(path)`` opens an existing store to read; ``Store(path, spec)`` creates or resumes
    one to write (hold it with ``with``: the lock is released on exit).
    """

    def __init__(self, path: str | os.PathLike[str], spec: dict[str, Any] | None = None):
        self.path = Path(path)
        self.locked = False
        if spec is None:  # reading an existing store
            if not (self.path / SPEC_FILE).is_file():
                raise ParameterError(
                    f"path: {str(self.path)!r} is not a sweep store (no {SPEC_FILE})"
                )
            self.spec = self.read_spec()
            return
        if self.path.exists() and not self.path.is_dir():
            raise ParameterError(f"store: {str(self.path)!r} exists and is not a directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ParameterError(f"store: cannot create {str(self.path)!r} ({exc})") from exc
        self._lock()
        try:
            self._check_or_write(spec)
        except BaseException:
            self.release()
            raise
        self.spec = spec

    def _lock(self) -> None:
        lock = self.path / LOCK_FILE
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    pid = int(lock.read_text().strip() or "0")
                except (OSError, ValueError):
                    pid = 0
                if pid and pid != os.getpid() and _alive(pid):
                    raise ParameterError(
                        f"store {str(self.path)!r} is being written by process {pid}; one sweep "
                        "writes a store at a time"
                    ) from None
                lock.unlink(missing_ok=True)  # left by a process that no longer runs
                continue
            with os.fdopen(fd, "w") as handle:
                handle.write(str(os.getpid()))
            self.locked = True
            return
        raise ParameterError(f"store {str(self.path)!r}: could not take its lock {LOCK_FILE}")

    def release(self) -> None:
        if self.locked:
            (self.path / LOCK_FILE).unlink(missing_ok=True)
            self.locked = False

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _check_or_write(self, spec: dict[str, Any]) -> None:
        if (self.path / SPEC_FILE).is_file():
            diff = _differences(self.read_spec(), spec)
            if diff:
                raise ParameterError(
                    f"store {str(self.path)!r} holds a different sweep; it differs in: "
                    + "; ".join(diff)
                    + ". Use another store path, or delete this one to start over"
                )
            return
        if any(p.name != LOCK_FILE for p in self.path.iterdir()):
            raise ParameterError(
                f"store: {str(self.path)!r} is a non-empty directory without {SPEC_FILE}; "
                "a sweep store must be a new or empty directory"
            )
        text = json.dumps(spec, indent=2, sort_keys=True)
        _atomic_write(self.path / SPEC_FILE, lambda p: p.write_text(text + "\n"))

    def read_spec(self) -> dict[str, Any]:
        where = f"store {str(self.path)!r}: {SPEC_FILE}"
        try:
            spec = json.loads((self.path / SPEC_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise ParameterError(f"{where} is unreadable ({exc})") from exc
        if not isinstance(spec, dict) or sorted(spec) != sorted(SPEC_KEYS):
            raise ParameterError(f"{where} is not a sweep spec (keys {', '.join(SPEC_KEYS)})")
        grid = spec["grid"]
        if not isinstance(grid, dict) or sorted(grid) not in (["product"], ["points"]):
            raise ParameterError(f"{where}: 'grid' must hold 'product' or 'points'")
        return spec

    def parts(self) -> list[Path]:
        return sorted(self.path.glob(PART_GLOB))

    def _table(self, part: Path, columns: list[str] | None = None) -> Any:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.read_table(part, columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise ParameterError(
                f"store {str(self.path)!r}: part {part.name} is unreadable ({exc}); deleting it "
                "is safe (a resumed sweep computes its points again)"
            ) from exc

    def done(self) -> set[int]:
        """Indices of the grid points whose rows are on disk."""
        points: set[int] = set()
        for part in self.parts():
            column = self._table(part, ["point"]).column("point")
            points.update(int(p) for p in column.to_pylist() if p is not None)
        return points

    def write(self, frame: pd.DataFrame) -> Path:
        """Write one chunk's rows as a new part, atomically; returns its path."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        first = int(frame["point"].min()) if len(frame) else 0
        path = self.path / f"part-{first:08d}-{uuid.uuid4().hex[:8]}.parquet"
        table = pa.Table.from_pandas(frame, preserve_index=False)
        _atomic_write(path, lambda p: pq.write_table(table, p))
        return path

    def read(self) -> pd.DataFrame:
        """Every part's rows, concatenated (unordered; the caller sorts)."""
        import pandas as pd

        frames: list[pd.DataFrame] = [self._table(part).to_pandas() for part in self.parts()]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)
