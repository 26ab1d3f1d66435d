"""Fuzz group ``cli_readers``: the command line's input files and option values.

The one reader of ``dpcap``'s files (``dpcap.cli._read``: :func:`read_input`,
:func:`read_channel`, :func:`read_prior`) and the option types of ``dpcap.cli._io``, against the
rules their docstrings and ``dpcap --help`` state. Properties:

* **round trip**: a channel written as CSV, TSV, ``;``-separated (decimal comma or point),
  whitespace-separated or pandas ``to_csv`` text, with or without a header, row labels, a UTF-8
  BOM, CRLF ends, ``#`` comments, blank lines, quotes and trailing delimiters; as JSON (a list
  of rows, or an object with ``name``, ``shape``, ``prior``, ``neighbors``); or as ``.npy`` is
  read back exactly (every entry written with ``repr``), and rows rounded within ``--normalize``
  are renormalised with a note;
* **malformed files** (cells changed to words, NaN, ∞, overflow, negative numbers or nothing;
  ragged rows; bytes that are not UTF-8; UTF-16; random bytes or text under any suffix; random
  JSON documents; ``.npy`` arrays of every dtype and shape, truncated or with their header
  changed): the reader returns a ``float64`` array or raises ``UsageError`` (a
  :class:`dpcap.DpcapError` and a ``ValueError``) whose message names the file; what it
  returns makes a channel or is refused with a DpcapError ValueError; no warning, no other
  exception;
* **option values**: ``--eps``-style lists (``START:STOP:NUM`` ranges), numbers, tolerances,
  integers, integer lists and ``--prior`` give values within their documented bounds or an
  ``argparse.ArgumentTypeError`` / ``UsageError`` naming the value;
* **the command** ``dpcap.cli.main([...])`` on those files and options returns 0, 1 or 2 and
  never raises; with 2 its one stderr line names the file or the option.

Findings fixed: R1, a JSON ``"neighbors"`` pair of huge indices (``[[0, 1e300]]``) passed the
check and overflowed its cast to int64 (a RuntimeWarning, garbage indices); R2, an option range
``START:STOP:NUM`` from or to ∞/NaN, or wider than the doubles, let NumPy warnings out and was
refused as "must be >= 0"; R3, a ``.npy`` file whose header length was damaged let
``tokenize.TokenError`` out of the reader, and one starting like a zip ``zipfile.BadZipFile``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import struct
import unicodedata
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _harness import fuzz
from hypothesis import assume, given
from hypothesis import strategies as st

import dpcap
from dpcap.cli import _io as cli_io
from dpcap.cli import _read as read
from dpcap.cli import main as cli_main
from dpcap.testing import channels

SUFFIXES = [".csv", ".tsv", ".txt", ".json", ".npy", ".npz", ".dat", ""]


@pytest.fixture(scope="session")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readers")


@contextlib.contextmanager
def written(folder: Path, suffix: str, content: bytes | str) -> Iterator[Path]:
    """A file of ``content`` named ``*<suffix>``, removed afterwards."""
    path = folder / f"in-{uuid.uuid4().hex[:8]}{suffix}"
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8", "surrogatepass"))
    else:
        path.write_bytes(content)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def read_or_refused(path: Path, normalize: float | None = None) -> read.Data | None:
    """``read_channel(path)``, or None when it raises a UsageError naming ``path``; any other
    exception, and any warning but the reader's own note, fails."""
    error: Exception | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("always", read.InputNote)  # recorded by a caller that asks
            data = read.read_channel(path, normalize)
    except read.UsageError as exc:
        error = exc
    except Exception as exc:  # not a clean refusal
        pytest.fail(f"{path.suffix} file: {type(exc).__name__} escaped the reader: {exc}")
    if error is not None:
        assert isinstance(error, dpcap.DpcapError)
        assert isinstance(error, ValueError)
        message = str(error)
        assert str(path) in message or (normalize is not None and "--normalize" in message)
        return None
    assert isinstance(data.matrix, np.ndarray)
    assert data.matrix.dtype == np.float64
    assert data.path == path
    return data


def channel_or_refused(data: read.Data) -> None:
    """What the reader returned makes a mechanism, or is refused cleanly."""
    args = argparse.Namespace(shape=None, neighbors=None)
    error: Exception | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cli_io.mechanism(data, args)
    except dpcap.DpcapError as exc:
        error = exc
    assert error is None or isinstance(error, ValueError), error


# ------------------------------------------------------------------------------ round trips

#: Row labels and header names: words that are not numbers (float() refuses them).
WORDS = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda w: _float(w) is None)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@dataclass
class Layout:
    delimiter: str  # ",", "\t", ";", " "
    header: bool
    labels: bool
    bom: bool
    crlf: bool
    comments: bool
    quotes: bool
    trailing: bool
    decimal_comma: bool


LAYOUTS = st.builds(
    Layout,
    delimiter=st.sampled_from([",", "\t", ";", " "]),
    header=st.booleans(),
    labels=st.booleans(),
    bom=st.booleans(),
    crlf=st.booleans(),
    comments=st.booleans(),
    quotes=st.booleans(),
    trailing=st.booleans(),
    decimal_comma=st.booleans(),
)


def cell(x: float, layout: Layout, columns: int) -> str:
    text = repr(float(x))
    # a decimal comma needs the delimiter on the line: one bare column of "0,25" reads as two
    seen = columns > 1 or layout.labels or layout.trailing
    if layout.decimal_comma and layout.delimiter in ("\t", ";") and seen and "e" not in text:
        text = text.replace(".", ",")
    return f'"{text}"' if layout.quotes else text


def table_text(W: np.ndarray, layout: Layout, names: list[str], labels: list[str]) -> str:
    sep = layout.delimiter
    end = sep if layout.trailing and sep != " " else ""
    lines = []
    if layout.comments:
        lines += ["# a channel", ""]
    if layout.header:
        head = ([""] if layout.labels else []) + names[: W.shape[1]]
        lines.append(sep.join(head) + end)
    for i, row in enumerate(W):
        cells = ([labels[i]] if layout.labels else []) + [cell(x, layout, W.shape[1]) for x in row]
        lines.append(sep.join(cells) + end)
        if layout.comments and i == 0:
            lines += ["", "#"]
    text = ("\r\n" if layout.crlf else "\n").join(lines) + "\n"
    return ("\ufeff" if layout.bom else "") + text


@st.composite
def channel_files(draw: st.DrawFn) -> tuple[str, bytes | str, np.ndarray, dict[str, Any]]:
    """A channel and a file that holds it: ``(suffix, content, W, extras of a JSON object)``."""
    W = draw(channels(max_inputs=5, max_outputs=5))
    form = draw(st.sampled_from(["table", "table", "pandas", "json list", "json object", "npy"]))
    if form == "table":
        layout = draw(LAYOUTS)
        names = draw(st.lists(WORDS, min_size=W.shape[1], max_size=W.shape[1], unique=True))
        labels = draw(st.lists(WORDS, min_size=W.shape[0], max_size=W.shape[0]))
        suffix = draw(st.sampled_from([".csv", ".tsv", ".txt", ""]))
        return suffix, table_text(W, layout, names, labels), W, {}
    if form == "pandas":
        frame = pd.DataFrame(W)
        if draw(st.booleans()):
            frame.index = [f"x{i}" for i in range(W.shape[0])]
            frame.columns = [f"y{j}" for j in range(W.shape[1])]
        buffer = io.StringIO()
        frame.to_csv(buffer, float_format=lambda x: repr(float(x)))
        return ".csv", buffer.getvalue(), W, {}
    if form == "json list":
        return ".json", json.dumps(W.tolist()), W, {}
    if form == "npy":
        buffer = io.BytesIO()
        np.save(buffer, W)
        return ".npy", buffer.getvalue(), W, {}
    extras: dict[str, Any] = {}
    if draw(st.booleans()):
        extras["name"] = draw(st.text(max_size=8))
    if draw(st.booleans()):
        extras["shape"] = [W.shape[0]]
    if draw(st.booleans()):
        extras["prior"] = [1.0 / W.shape[0]] * W.shape[0]
    if draw(st.booleans()):
        extras["neighbors"] = draw(
            st.sampled_from(["all", "line", "hamming", [[0, W.shape[0] - 1]]])
        )
    key = draw(st.sampled_from(["matrix", "W"]))
    text = json.dumps({key: W.tolist(), **extras})
    return ".json", ("\ufeff" + text) if draw(st.booleans()) else text, W, extras


@fuzz(examples=5000, quick=12)
@given(case=channel_files())
def test_a_channel_in_any_documented_layout_is_read_back_exactly(
    folder: Path, case: tuple[str, bytes | str, np.ndarray, dict[str, Any]]
) -> None:
    suffix, content, W, extras = case
    with written(folder, suffix, content) as path:
        data = read_or_refused(path)
        assert data is not None, f"refused a valid {suffix} file:\n{content!r}"
        np.testing.assert_array_equal(data.matrix, W)
        assert data.name == extras.get("name")
        assert data.shape == (tuple(extras["shape"]) if "shape" in extras else None)
        if "prior" in extras:
            np.testing.assert_array_equal(data.prior, extras["prior"])
        neighbors = extras.get("neighbors")
        if isinstance(neighbors, list):
            assert data.neighbors.tolist() == neighbors
        else:
            assert data.neighbors == neighbors
        dpcap.Channel(data.matrix)  # a channel
        assert all(unicodedata.category(c)[0] != "C" for c in data.label), data.label


@fuzz(examples=2000, quick=6)
@given(
    W=channels(max_inputs=4, max_outputs=4),
    digits=st.integers(4, 12),
    tol=st.sampled_from([1e-3, 1e-4, 1e-6]),
)
def test_rounded_rows_are_renormalised_within_normalize(
    folder: Path, W: np.ndarray, digits: int, tol: float
) -> None:
    """``--normalize TOL``: rows written to ``digits`` decimals sum to 1 within ``TOL`` and are
    divided by their sums (with a note when they are off by more than 1e-9), or refused naming
    ``--normalize`` when a row is off by more."""
    rounded = np.round(W, digits)
    off = float(np.max(np.abs(rounded.sum(axis=1) - 1.0)))
    assume(rounded.sum(axis=1).min() > 0)
    text = "\n".join(",".join(repr(float(x)) for x in row) for row in rounded) + "\n"
    with written(folder, ".csv", text) as path:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", read.InputNote)
            data = read_or_refused(path, tol)
        if off > tol * (1 + 1e-9):
            assert data is None  # refused (named by read_or_refused)
            return
        if off < tol * (1 - 1e-9):
            assert data is not None
        if data is None:
            return  # at the edge of the tolerance, either way
        sums = data.matrix.sum(axis=1)
        np.testing.assert_allclose(sums, 1.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(data.matrix, rounded / rounded.sum(axis=1)[:, None], rtol=1e-12)
        notes = [w for w in caught if issubclass(w.category, read.InputNote)]
        if off > 1e-9 * 1.01:
            assert len(notes) == 1, notes
            assert str(path) in str(notes[0].message)
        elif off < 1e-9 * 0.99:
            assert notes == []


# ---------------------------------------------------------------------------- malformed text

BAD_CELLS = st.sampled_from(
    ["abc", "nan", "NaN", "inf", "-inf", "1e309", "-1e309", "-0.5", "", " ", '"', "0,5,5",
     "1.2.3", "0x10", "1e", "--1", "\x00", "é", "１", "0.5#", "#0.5", "'", "None", "1_0"]
)  # fmt: skip


@st.composite
def malformed_tables(draw: st.DrawFn) -> tuple[str, bytes | str]:
    """A valid table with a few things broken."""
    W = draw(channels(max_inputs=4, max_outputs=4))
    layout = draw(LAYOUTS)
    names = [f"y{j}" for j in range(W.shape[1])]
    text = table_text(W, layout, names, [f"x{i}" for i in range(W.shape[0])])
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        how = draw(
            st.sampled_from(
                ["cell", "drop cell", "add cell", "bytes", "line", "truncate", "utf16", "repeat"]
            )
        )
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        sep = layout.delimiter
        cells = lines[i].split(sep) if lines else [""]
        if how == "cell" and cells:
            cells[draw(st.integers(0, len(cells) - 1))] = draw(BAD_CELLS | st.text(max_size=4))
            lines[i] = sep.join(cells)
        elif how == "drop cell" and len(cells) > 1:
            del cells[draw(st.integers(0, len(cells) - 1))]
            lines[i] = sep.join(cells)
        elif how == "add cell":
            lines[i] = sep.join([*cells, draw(BAD_CELLS | st.just("0.5"))])
        elif how == "line":
            lines.insert(i, draw(st.text(max_size=12)))
        elif how == "truncate":
            lines = lines[:i]
        elif how == "repeat":
            lines.insert(i, sep.join(["0.1"] * draw(st.integers(1, 3000))))
        elif how == "bytes":
            raw = "\n".join(lines).encode("utf-8", "surrogatepass")
            at = draw(st.integers(0, len(raw)))
            bad = draw(st.sampled_from([b"\x80", b"\xff\xfe", b"\xc3", b"\xed\xa0\x80"]))
            return draw(st.sampled_from([".csv", ".txt"])), raw[:at] + bad + raw[at:]
        else:
            return ".csv", "\n".join(lines).encode("utf-16")
    return draw(st.sampled_from([".csv", ".tsv", ".txt", ".dat"])), "\n".join(lines)


@fuzz(examples=5000, quick=10)
@given(case=malformed_tables())
def test_a_broken_table_is_read_or_refused_naming_the_file(
    folder: Path, case: tuple[str, bytes | str]
) -> None:
    suffix, content = case
    with written(folder, suffix, content) as path:
        data = read_or_refused(path)
        if data is not None:
            channel_or_refused(data)


@fuzz(examples=2000, quick=6)
@given(suffix=st.sampled_from(SUFFIXES), content=st.binary(max_size=300) | st.text(max_size=60))
def test_any_bytes_under_any_suffix_are_read_or_refused(
    folder: Path, suffix: str, content: bytes | str
) -> None:
    with written(folder, suffix, content) as path:
        data = read_or_refused(path)
        if data is not None:
            channel_or_refused(data)


# ------------------------------------------------------------------------------------ JSON

JSON_ATOMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.sampled_from([0.5, 0.25, 1.0, 0.0, -1.0, 1e300, 2**53, 2**63]),
)
JSON_KEYS = st.sampled_from([*read.JSON_KEYS, "x"]) | st.text(max_size=3)
JSON_VALUES = st.recursive(
    JSON_ATOMS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_KEYS, inner, max_size=3),
    max_leaves=12,
)


@st.composite
def json_documents(draw: st.DrawFn) -> str:
    """A JSON document: random, or a channel object with one key given a random value."""
    if draw(st.booleans()):
        return json.dumps(draw(JSON_VALUES))
    W = draw(channels(max_inputs=3, max_outputs=3)).tolist()
    doc: dict[str, Any] = {draw(st.sampled_from(read.MATRIX_KEYS)): W}
    for key in draw(st.lists(st.sampled_from([*read.JSON_KEYS, "extra"]), max_size=3)):
        doc[key] = draw(
            JSON_VALUES
            | st.sampled_from(
                [
                    [[0, 1e300]],
                    [[0, 2**63]],
                    [[0.5, 1]],
                    [[-1, 0]],
                    [[0, 1, 2]],
                    "nope",
                    [2] * 64,
                    [10**12],
                    [0],
                    [[0, 0]],
                    [1e308, 1e308],
                ]
            )
        )
    text = json.dumps(doc)
    if draw(st.integers(0, 9)) == 0:
        text = "[" * draw(st.integers(1, 10**5)) + text
    return text


@fuzz(examples=3000, quick=6)
@given(text=json_documents())
def test_any_json_document_is_read_or_refused(folder: Path, text: str) -> None:
    with written(folder, ".json", text) as path:
        data = read_or_refused(path)
        if data is None:
            return
        channel_or_refused(data)
        if data.neighbors is not None and not isinstance(data.neighbors, str):
            assert data.neighbors.dtype == np.int64
            assert (data.neighbors >= 0).all()  # finding R1: overflowed casts


# ------------------------------------------------------------------------------------- .npy

NPY_DTYPES = [
    "f8", "f4", "f2", "g", "i8", "u8", "i1", "?", "c16", "U3", "S2", "O", "M8[D]", "m8[s]",
    "V4", [("a", "f8")],
]  # fmt: skip


@st.composite
def npy_files(draw: st.DrawFn) -> bytes:
    """``np.save`` of an array of any dtype and shape, sometimes damaged."""
    dtype = np.dtype(draw(st.sampled_from(NPY_DTYPES)))
    shape = draw(st.lists(st.integers(0, 4), max_size=3))
    size = math.prod(shape)
    values = draw(st.lists(st.floats(-2, 2) | st.sampled_from([math.nan, math.inf]),
                           min_size=size, max_size=size))  # fmt: skip
    if dtype.kind in "fc":
        array = np.array(values, dtype=dtype).reshape(shape)
    else:
        array = np.zeros(shape, dtype=dtype)
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    raw = buffer.getvalue()
    how = draw(st.sampled_from(["whole", "whole", "truncate", "header", "shape", "npz"]))
    if how == "truncate":
        raw = raw[: draw(st.integers(0, len(raw)))]
    elif how == "header":
        at = draw(st.integers(0, min(len(raw), 128) - 1))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    elif how == "shape":  # a header that claims a huge or odd shape over little data
        claim = draw(st.sampled_from(["(10**12, 10**12)", "(100000000000,)", "(2, -1)",
                                      "(0, 1000000000000)", "()", "(3, 3)"]))  # fmt: skip
        header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': {claim}, }}"
        header = header.replace("10**12", str(10**12)).ljust(117) + "\n"
        raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
        raw += b"\x00" * draw(st.integers(0, 80))
    elif how == "npz":
        out = io.BytesIO()
        np.savez(out, W=np.eye(2))
        raw = out.getvalue()
    return raw


@fuzz(examples=3000, quick=6)
@given(raw=npy_files(), suffix=st.sampled_from([".npy", ".npy", ".NPY", ".npz"]))
def test_any_npy_file_is_read_or_refused(folder: Path, raw: bytes, suffix: str) -> None:
    with written(folder, suffix, raw) as path:
        data = read_or_refused(path)
        if data is not None:
            channel_or_refused(data)


def test_an_empty_complex_array_is_refused_cleanly(folder: Path) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((0, 2), dtype=complex))
    with written(folder, ".npy", buffer.getvalue()) as path:
        assert read_or_refused(path) is None


# ---------------------------------------------------------------------------- option values

ODD_OPTIONS = ["inf", "-inf", "nan", "1e999:2:3", "-1e308:1e308:3", "0:1:100001",
               "0:1:50000,0:1:50001", "1:2:3:4", "0x10", "1_0", "\u0663", "", ",",
               "0,,1"]  # fmt: skip
OPTION_TEXT = st.one_of(
    st.text(max_size=12),
    st.from_regex(
        r"-?[0-9.e+-]{0,6}(:[0-9.e+-]{0,6}(:-?[0-9]{0,7})?)?(,[0-9.:inf]{0,8})?", fullmatch=True
    ),
    st.sampled_from(ODD_OPTIONS),
)


@fuzz(examples=3000, quick=10)
@given(text=OPTION_TEXT, minimum=st.sampled_from([0.0, 1.0, -math.inf]), inf=st.booleans())
def test_option_values_are_in_bounds_or_refused(text: str, minimum: float, inf: bool) -> None:
    parsers: list[tuple[Any, Any]] = [
        (cli_io.numbers("eps", minimum=minimum, allow_inf=inf), "numbers"),
        (cli_io.number("eps", minimum=minimum, allow_inf=inf), "number"),
        (cli_io.positive, "positive"),
        (cli_io.integer(1, 100), "integer"),
        (cli_io.integers(0), "integers"),
    ]
    for parse, kind in parsers:
        error: Exception | None = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                value = parse(text)
        except argparse.ArgumentTypeError as exc:
            error = exc
        if error is not None:
            assert repr(text) in str(error), (kind, error)
            continue
        values = value if kind in ("numbers", "integers") else [value]
        assert 1 <= len(values) <= cli_io.MAX_LIST_VALUES
        for v in values:
            assert not math.isnan(v)
            if kind in ("numbers", "number"):
                assert v >= minimum
                assert inf or math.isfinite(v)
            elif kind == "positive":
                assert 0 < v < math.inf
            elif kind == "integer":
                assert 1 <= v <= 100
            else:
                assert v >= 0


@fuzz(examples=1500, quick=6)
@given(text=OPTION_TEXT | st.sampled_from(["0.5,0.5", "0.3, 0.7", "1,0", "W.csv", "a\x00b"]))
def test_a_prior_option_is_a_distribution_or_refused(text: str) -> None:
    error: Exception | None = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            prior = read.read_prior(text, 2)
    except read.UsageError as exc:
        error = exc
    if error is not None:
        assert str(error).startswith(f"--prior {text!r}"), error
        return
    assert prior.shape == (2,)
    assert abs(prior.sum() - 1) <= 1e-9
    assert (prior >= 0).all()


# ------------------------------------------------------------------------------- the command

COMMANDS = [
    ["max_leakage"],
    ["dp_epsilon"],
    ["tv_dp", "--json"],
    ["capacity", "--unit", "bits"],
    ["mutual_information", "--prior", "0.5,0.5"],
    ["dp_delta", "--eps", "0.5"],
    ["audit", "--eps", "0.5"],
]


@fuzz(examples=3000, quick=6)
@given(
    case=channel_files() | malformed_tables() | json_documents().map(lambda t: (".json", t)),
    command=st.sampled_from(COMMANDS),
    normalize=st.sampled_from([None, "1e-6", "0", "-1", "abc", "1e-2"]),
    prior=st.none() | OPTION_TEXT,
)
def test_the_command_never_raises_and_names_the_file(
    folder: Path, case: Any, command: list[str], normalize: str | None, prior: str | None
) -> None:
    suffix, content = case[0], case[1]
    with written(folder, suffix, content) as path:
        argv = [command[0], str(path), *command[1:]]
        if normalize is not None:
            argv += ["--normalize", normalize]
        if prior is not None and command[0] == "mutual_information":
            argv[argv.index("--prior") + 1] = prior
        out, err = io.StringIO(), io.StringIO()
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")  # the command prints its own on stderr
            code = cli_main(argv)
        message = err.getvalue()
        assert code in (0, 1, 2), (code, message)
        assert "Traceback" not in message
        if code == 0:
            assert out.getvalue().strip()
            return
        if message.startswith("usage:"):  # argparse refused an option value, naming it
            assert re.search(r"error: argument --(normalize|prior)", message), message
            return
        lines = [ln for ln in message.splitlines() if ln.startswith("dpcap: error:")]
        assert len(lines) == 1, message
        assert any(n in lines[0] for n in [str(path), "--normalize", "--prior"]), message


def test_regressions_r1_r2_r3(folder: Path) -> None:
    text = json.dumps({"matrix": [[1.0, 0.0], [0.0, 1.0]], "neighbors": [[0, 1e300]]})
    with (
        written(folder, ".json", text) as path,
        pytest.raises(read.UsageError, match='"neighbors" must be a relation name'),
    ):
        read.read_input(path)
    parse = cli_io.numbers("eps", allow_inf=True)
    for text in ["1e999:2:3", "0:inf:3", "nan:1:2", "-1e308:1e308:3"]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(argparse.ArgumentTypeError, match="START:STOP:NUM"):
                parse(text)
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (), }".ljust(127) + b"\n"
    for raw in [  # a header length of 1 (tokenize.TokenError), a zip that is not one
        b"\x93NUMPY\x01\x00\x01\x00" + header + bytes(8),
        b"PK\x03\x04garbage",
    ]:
        with (
            written(folder, ".npy", raw) as path,
            pytest.raises(read.UsageError, match=r"not a NumPy \.npy array"),
        ):
            read.read_input(path)
