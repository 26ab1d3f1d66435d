"""A sweep's store: a directory of Parquet parts and the spec that produced them.

Layout::

    store/
      spec.json                  the sweep's spec and the dpcap version that wrote it
      part-00000042-1a2b3c4d.parquet   rows of the grid points of one finished chunk
      ...

A part is written to a temporary name in the same directory, flushed to disk, then renamed
(``os.replace``, atomic on POSIX and Windows): a reader, or a sweep killed at any instant,
sees each part whole or not at all. Parts are never rewritten; resuming reads the ``point``
column of every part to know which grid points are done. pyarrow is imported here only.
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

SPEC_FILE = "spec.json"
PART_GLOB = "part-*.parquet"


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


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Readable names of what differs between two specs (nested keys joined by dots)."""
    out = []
    for key in sorted(set(old) | set(new)):
        name = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{name}.")
        elif a != b:
            out.append(f"{name} (store: {_brief(a)}; now: {_brief(b)})")
    return out


def _brief(value: Any, limit: int = 80) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Store:
    """The Parquet store of one sweep; created on first use, checked against its spec."""

    def __init__(self, path: str | os.PathLike[str], spec: dict[str, Any] | None = None):
        self.path = Path(path)
        if spec is None:  # reading an existing store
            if not (self.path / SPEC_FILE).is_file():
                raise ParameterError(
                    f"path: {str(self.path)!r} is not a sweep store (no spec.json)"
                )
            self.spec = self.read_spec()
            return
        if self.path.exists() and not self.path.is_dir():
            raise ParameterError(f"store: {str(self.path)!r} exists and is not a directory")
        self.path.mkdir(parents=True, exist_ok=True)
        if (self.path / SPEC_FILE).is_file():
            old = self.read_spec()
            diff = _differences(old, spec)
            if diff:
                raise ParameterError(
                    f"store {str(self.path)!r} holds a different sweep; it differs in: "
                    + "; ".join(diff)
                    + ". Use another store path, or delete this one to start over"
                )
        elif any(self.path.iterdir()):
            raise ParameterError(
                f"store: {str(self.path)!r} is a non-empty directory without spec.json; "
                "a sweep store must be a new or empty directory"
            )
        else:
            text = json.dumps(spec, indent=2, sort_keys=True)
            _atomic_write(self.path / SPEC_FILE, lambda p: p.write_text(text + "\n"))
        self.spec = spec

    def read_spec(self) -> dict[str, Any]:
        try:
            spec: dict[str, Any] = json.loads((self.path / SPEC_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise ParameterError(f"store {str(self.path)!r}: unreadable spec.json ({exc})") from exc
        return spec

    def parts(self) -> list[Path]:
        return sorted(self.path.glob(PART_GLOB))

    def done(self) -> set[int]:
        """Indices of the grid points whose rows are on disk."""
        import pyarrow.parquet as pq

        points: set[int] = set()
        for part in self.parts():
            column = pq.read_table(part, columns=["point"]).column("point")
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
        import pyarrow.parquet as pq

        frames = [pq.read_table(part).to_pandas() for part in self.parts()]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)
