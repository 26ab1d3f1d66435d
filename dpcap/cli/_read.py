"""The one reader of ``dpcap``'s input files, with errors naming the file, the line and the cell.

:func:`read_input` reads ``.npy``; ``.json`` (a list of rows, or an object with a matrix and
optional ``shape``, ``prior``, ``neighbors`` and ``name``); any other suffix is text (``.csv``,
``.tsv``, ``.txt``, ...), read by :func:`read_table` with the delimiter, a header row and a
label column detected. :func:`channel_data` reads a channel and applies ``--normalize``.
"""

from __future__ import annotations

import json
import re
import unicodedata
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.errors import DpcapError

FloatArray = NDArray[np.float64]

__all__ = [
    "JSON_KEYS",
    "MATRIX_KEYS",
    "Data",
    "InputNote",
    "UsageError",
    "printable",
    "read_channel",
    "read_input",
    "read_prior",
    "read_table",
]

#: Keys of a JSON input holding the matrix (exactly one of them); ``"joint"`` marks a joint law.
MATRIX_KEYS = ("matrix", "W", "joint", "distortion")
#: Every key a JSON input object may have.
JSON_KEYS = (*MATRIX_KEYS, "shape", "prior", "neighbors", "name")


class UsageError(DpcapError, ValueError):
    """A command-line input is invalid; the message names the option (or the file) and value."""


class InputNote(UserWarning):
    """What the reader did to an input on request (rows renormalised by ``--normalize``);
    the command line prints it on stderr."""


def read_channel(path: Path, normalize: float | None) -> Data:
    """:func:`read_input` of a channel or mechanism, its rows renormalised within
    ``normalize`` (``--normalize TOL``, :func:`dpcap.Channel`'s ``normalize=``) with a note
    saying by how much; without it rows must sum to 1 within ``1e-9``."""
    data = read_input(path)
    if normalize is None or data.matrix.ndim != 2:
        return data
    try:
        matrix, deviation = check.normalized_matrix(data.matrix, normalize, f"{path}")
    except ValueError as exc:
        raise UsageError(f"--normalize {normalize:g}: {exc}") from exc
    if deviation > check.SUM_ATOL:
        warnings.warn(
            f"{path}: rows renormalised (largest |row sum - 1| = {deviation:.3g}, within "
            f"--normalize {normalize:g})",
            InputNote,
            stacklevel=2,
        )
    return replace(data, matrix=matrix)


@dataclass(frozen=True)
class Data:
    """An input file: its matrix and what a JSON object adds (``None`` where absent)."""

    path: Path
    matrix: FloatArray
    key: str = "matrix"
    shape: tuple[int, ...] | None = None
    prior: FloatArray | None = None
    neighbors: Any = None
    name: str | None = None

    @property
    def label(self) -> str:
        """The name to show: the JSON ``name``, else the file name, control characters escaped
        (a name cannot forge report lines or move the terminal's cursor)."""
        return printable(self.name or self.path.name)


def printable(text: str) -> str:
    """``text`` with control and format characters (newlines, escapes, bidi overrides) written
    as Python escapes: echoing input never acts on the terminal."""
    bad = {c for c in text if unicodedata.category(c)[0] == "C"}
    return "".join(c.encode("unicode_escape").decode() if c in bad else c for c in text)


def read_input(path: Path) -> Data:
    """The matrix (and JSON extras) in ``path``: ``.npy``, ``.json`` or a text table."""
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            try:
                array = np.load(path, allow_pickle=False)
            except Exception as exc:  # NumPy's parser of a damaged header raises what it meets
                # (ValueError, EOFError, tokenize.TokenError, zipfile.BadZipFile, ...)
                raise UsageError(
                    f"{path}: not a NumPy .npy array of numbers ({type(exc).__name__}: {exc})"
                ) from exc
            if isinstance(array, np.lib.npyio.NpzFile):
                names = ", ".join(array.files)
                array.close()
                raise UsageError(
                    f"{path}: a NumPy .npz archive (arrays {names}), not a .npy array: save the "
                    "matrix alone with numpy.save"
                )
            return Data(path, check.real_array(array, f"{path}"))
        if suffix == ".json":
            return _read_json(path)
        return Data(path, read_table(path))
    except UsageError:
        raise
    except ValueError as exc:  # a validator's message, which names the file and the key
        raise UsageError(str(exc)) from exc


def read_table(path: Path) -> FloatArray:
    """A matrix from a text file, errors naming the file, the line and the cell.

    Cells are separated by tabs, semicolons, commas or whitespace (the first of these found in
    the first lines); with tabs or semicolons a decimal comma (``0,25``) is read as a point. A
    first row that is not all numbers is a header and is skipped; blank lines and lines starting
    with ``#`` are ignored; quotes around a cell are dropped. A first column of row labels is
    dropped: labels that are not numbers in every row (``x0``, ``x1``, ...), or the index that
    pandas writes with ``DataFrame.to_csv`` (an empty first header cell).
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{path}: not a text file ({exc.reason}); a binary matrix must be a .npy file"
        ) from exc
    lines = [(i + 1, ln.strip()) for i, ln in enumerate(text.splitlines())]
    lines = [(i, ln) for i, ln in lines if ln and not ln.startswith("#")]
    if not lines:
        raise UsageError(f"{path}: no numbers in the file")
    sample = "\n".join(ln for _, ln in lines[:5])
    delimiter = next((d for d in ("\t", ";", ",") if d in sample), None)
    rows = [(i, _cells(ln, delimiter)) for i, ln in lines]
    index = False  # a first column of row labels (pandas' to_csv writes its index there)
    header = rows[0][1]
    if all(_number(cell) is None for cell in header):
        rows = rows[1:]  # a header row: no cell of it is a number
        index = len(header) > 1 and header[0] == "" and all(header[1:])
    elif _pandas_default(rows):
        rows, index = rows[1:], True
    if not rows:
        raise UsageError(f"{path}: a header row and no numbers")
    if not index and all(len(c) > 1 and _number(c[0]) is None for _, c in rows):
        index = all(_number(cell) is not None for _, c in rows for cell in c[1:])
    if index:
        rows = [(i, cells[1:]) for i, cells in rows]
    values = []
    for i, cells in rows:
        row = []
        for j, cell in enumerate(cells):
            number = _number(cell)
            if number is None:
                shown = "an empty cell" if not cell else repr(cell)
                raise UsageError(f"{path}, line {i}, column {j + 1}: {shown} is not a number")
            row.append(number)
        values.append(row)
    widths = {len(row) for row in values}
    if len(widths) != 1:
        lengths = [(i, len(row)) for (i, _), row in zip(rows, values, strict=True)][:8]
        counts = ", ".join(f"line {i}: {n}" for i, n in lengths)
        raise UsageError(f"{path}: rows have different lengths ({counts})")
    return np.array(values, dtype=np.float64)


def _pandas_default(rows: list[tuple[int, list[str]]]) -> bool:
    """Whether ``rows`` are a pandas frame written with its default index and columns: a first
    row ``,0,1,..`` and a first column ``0, 1, ..`` (``DataFrame(W).to_csv(path)``)."""
    header = rows[0][1]
    labels = [cells[0] for _, cells in rows[1:]]
    return (
        len(header) > 1
        and header[0] == ""
        and header[1:] == [str(k) for k in range(len(header) - 1)]
        and labels == [str(k) for k in range(len(labels))]
    )


def _cells(line: str, delimiter: str | None) -> list[str]:
    cells = [c.strip().strip("\"'").strip() for c in line.split(delimiter)]
    if delimiter is not None and len(cells) > 1 and not cells[-1]:
        cells = cells[:-1]  # a trailing delimiter
    if delimiter in ("\t", ";"):
        cells = [re.sub(r"^([+-]?\d*),(\d+)$", r"\1.\2", c) for c in cells]
    return cells


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _read_json(path: Path) -> Data:
    try:
        content = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from exc
    except RecursionError:
        raise UsageError(
            f"{path}: JSON nested too deeply to be a matrix (a matrix is a list of rows)"
        ) from None
    if isinstance(content, list):
        return Data(path, check.real_array(content, f"{path}"))
    if not isinstance(content, dict):
        raise UsageError(
            f"{path}: JSON must be a list of rows or an object with a matrix, got "
            f"{check.show(content)}"
        )
    unknown = sorted(set(content) - set(JSON_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown key {', '.join(unknown)}; the keys are {JSON_KEYS}")
    found = [key for key in MATRIX_KEYS if key in content]
    if len(found) != 1:
        raise UsageError(
            f"{path}: a JSON object needs exactly one of the keys {MATRIX_KEYS}, got "
            f"{found or 'none'}"
        )
    key = found[0]
    shape = content.get("shape")
    if shape is not None:
        shape = check.domain_shape(shape, f'{path}: "shape"')
    prior = content.get("prior")
    if prior is not None:
        prior = check.real_array(prior, f'{path}: "prior"')
    name = content.get("name")
    if name is not None and not isinstance(name, str):
        raise UsageError(f'{path}: "name" must be a string, got {check.show(name)}')
    neighbors = content.get("neighbors")
    if neighbors is not None and not isinstance(neighbors, str):
        pairs = check.real_array(neighbors, f'{path}: "neighbors"')
        # below 2**53 every index is an exact integer and casts to int64 without overflow
        if not np.all((pairs >= 0) & (pairs < 2.0**53) & (pairs == np.round(pairs))):
            raise UsageError(
                f'{path}: "neighbors" must be a relation name or pairs of row indices '
                f"(integers >= 0), got {check.show(neighbors)}"
            )
        neighbors = pairs.astype(np.int64)
    matrix = check.real_array(content[key], f'{path}: "{key}"')
    return Data(path, matrix, key, shape, prior, neighbors, name)


def read_prior(text: str, size: int) -> FloatArray:
    """``--prior``: comma-separated probabilities, or a file holding one row or one column."""
    path = Path(text)
    if path.suffix.lower() in (".npy", ".json", ".csv", ".tsv", ".txt") or path.is_file():
        try:
            data = read_input(path)
        except UsageError as exc:
            raise UsageError(f"--prior {text!r}: {exc}") from exc
        values = data.prior if data.prior is not None else data.matrix
        if values.ndim == 2 and 1 in values.shape:
            values = values.ravel()
    else:
        try:
            values = np.array([float(v) for v in text.split(",") if v.strip()])
        except ValueError:
            raise UsageError(
                f"--prior {text!r}: expected comma-separated probabilities or a file"
            ) from None
    if values.ndim != 1 or values.size != size:
        raise UsageError(
            f"--prior {text!r}: expected {size} probabilities (one per row of the matrix), "
            f"got shape {values.shape}"
        )
    try:
        return check.distribution(values, "prior")
    except ValueError as exc:
        raise UsageError(f"--prior {text!r}: {exc}") from exc
