"""One subcommand per catalogued query, generated from :data:`dpcap.study.catalogue.QUERIES`.

``dpcap NAME FILE [options]`` reads the file (:func:`dpcap.cli._read.read_input`), builds the
query's instance from it, calls the query with the options (named as the library's arguments:
``--alpha``, ``--eps``, ``--prior``, ``--max-iter``, ...) and prints the result: a table with
its unit, bracket, status and attaining object, or JSON with ``--json``. Nothing here is
written per query: the options, their help and the command's description are read from the
catalogue entry (the function's signature and numpydoc docstring), so a query registered in
the catalogue is a command.

What a query takes from the file:

* a mechanism (the function's first argument ``M``): the matrix as a database mechanism, with
  ``--shape`` (or the file's ``"shape"``) and ``--neighbors`` (or the file's ``"neighbors"``);
* a channel (``W``): the matrix;
* a problem: the matrix as the ``distortion``, ``loss`` or ``joint`` law, the prior from
  ``--prior`` or the file's ``"prior"`` (uniform when neither gives one).

A matrix-valued parameter (``--gain``, ``--metric``, ``--loss``) names a file read the same
way; a vector (``--prior``, ``--cost``) is comma-separated numbers or a file.
"""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dpcap.cli import _io as io
from dpcap.cli import _read as read
from dpcap.neighbors import NEIGHBOR_NAMES
from dpcap.study.catalogue import QUERIES, Query

__all__ = ["add_parsers", "run"]

#: Inputs read as a database mechanism, a channel matrix, or a problem's matrix.
MECHANISM, CHANNEL, PROBLEM = ("M",), ("W",), ("distortion", "loss", "joint")
#: Result fields shown in every table (the attaining object is the rest).
COMMON = {
    "value", "lower", "upper", "status", "iterations", "method", "unit", "message", "tol",
}  # fmt: skip


def _parse(kind: str, name: str) -> Callable[[str], Any] | None:
    """The option type of a parameter of ``kind`` (None: a plain string)."""
    if name in ("tol", "time_limit"):
        return io.positive
    if name == "rtol":
        return io.relative
    if name == "max_iter":
        return io.integer(1)
    readers: dict[str, Callable[[str], Any]] = {
        "number": io.number(name, allow_inf=True),
        "real": io.number(name, minimum=-math.inf, allow_inf=True),
        "order": io.number("order", allow_inf=True),
        "level": io.number(name, allow_inf=True),
        "integer": io.integer(0),
        "integers": io.integers(0),
        "vector": str if name == "prior" else io.numbers(name),  # a prior: numbers or a file
        "matrix": Path,
    }
    return readers.get(kind)


def add_parsers(sub: Any) -> None:
    """Add one subcommand per catalogued query to the subparsers ``sub``."""
    for spec in QUERIES.values():
        _add(sub, spec)


def _add(sub: Any, spec: Query) -> None:
    doc = spec.summary.rstrip(".")
    cmd = sub.add_parser(
        spec.name,
        help=doc or spec.name,
        description=f"{doc} ({_origin(spec)}; a query of the catalogue).",
        epilog=_epilog(spec),
        formatter_class=io.Formatter,
    )
    cmd.add_argument("file", type=Path, help=io.INPUT_HELP)
    if set(spec.inputs) & set(MECHANISM):
        cmd.add_argument(
            "--shape", type=io.integers(1), metavar="M1,M2,..", help="database domain sizes"
        )
    if "neighbors" not in spec.parameters and set(spec.inputs) & set(MECHANISM):
        cmd.add_argument("--neighbors", choices=NEIGHBOR_NAMES, help="the neighbour relation")
    if "prior" in spec.inputs:
        cmd.add_argument("--prior", metavar="P1,P2,..", help="the prior (default: the file's)")
    for name in spec.parameters:
        if name == "unit":
            continue  # the output's --unit
        kind = spec.kind(name)
        option: dict[str, Any] = {"dest": name, "help": _help(spec, name)}
        parse = _parse(kind, name)
        if parse is not None:
            option["type"] = parse
        if kind == "relation":
            option["choices"] = NEIGHBOR_NAMES
        metavars = {"matrix": "FILE", "vector": "V1,V2,..", "integers": "I1,I2,.."}
        option["metavar"] = metavars.get(kind, name.upper())
        if kind == "relation":
            del option["metavar"]
        option["required"] = name in spec.required and name != "prior"
        cmd.add_argument(f"--{name.replace('_', '-')}", **option)
    if set(spec.inputs) & {"M", "W"}:
        io.add_normalize(cmd)
    io.add_output(cmd)
    cmd.set_defaults(run=functools.partial(run, spec))


def _origin(spec: Query) -> str:
    """Where the query's function lives: ``dpcap.capacity``, or a user's ``module.name``."""
    name = getattr(spec.function, "__name__", None)
    module = getattr(spec.function, "__module__", None) or ""
    if name is None:
        return repr(spec.function)
    return f"dpcap.{name}" if module.startswith("dpcap") else f"{module}.{name}"


def _help(spec: Query, name: str, limit: int = 160) -> str:
    """The parameter's description from the docstring (cut at ``limit`` characters), with its
    default unless the description gives it."""
    text = spec.help(name)
    if len(text) > limit:
        text = text[: text.rfind(" ", 0, limit)] + " ..."
    default = spec.default(name)
    if default is not None and name not in spec.required and "default" not in text.lower():
        text += f" (default {default})" if text else f"default {default}"
    return text.replace("%", "%%") or name


def _epilog(spec: Query) -> str:
    needs = " ".join(f"--{n.replace('_', '-')} {n.upper()}" for n in spec.required)
    return f"example:\n  dpcap {spec.name} FILE {needs}".rstrip()


# --- running ---------------------------------------------------------------------------------


def run(spec: Query, args: argparse.Namespace) -> str:
    """``dpcap NAME``: the text or JSON to print."""
    channel = set(spec.inputs) & {"M", "W"}
    normalize = getattr(args, "normalize", None)
    data = read.read_channel(args.file, normalize) if channel else read.read_input(args.file)
    instance = _instance(spec, data, args)
    params = _params(spec, data, args)
    result = spec.call(instance, params)
    unit = getattr(result, "unit", None)
    if unit is None:
        unit = str(params.get("unit", "nats")) if spec.unit == "option" else spec.unit
    shown = {k: _plain(v) for k, v in params.items()}
    if args.json:
        body = result.to_dict() if hasattr(result, "to_dict") else _closed(result, unit)
        return io.dump(
            {"command": spec.name, "input": str(args.file), "parameters": shown, "result": body}
        )
    rows, cols = data.matrix.shape[0], data.matrix.shape[-1]
    size = "inputs, {} outputs" if set(spec.inputs).isdisjoint(PROBLEM) else "rows, {} columns"
    title = f"dpcap {spec.name}: {data.label} ({rows} {size.format(cols)})"
    given = ", ".join(f"{k} = {_text(v)}" for k, v in shown.items() if k != "unit")
    lines = [title + (f"; {given}" if given else ""), io.key_values(_table(spec, result, unit))]
    return "\n".join(lines)


def _instance(spec: Query, data: read.Data, args: argparse.Namespace) -> Any:
    if spec.inputs == MECHANISM:
        return io.mechanism(data, args)
    if len(spec.inputs) == 1 and spec.inputs[0] not in PROBLEM:  # a channel matrix
        if data.shape is not None:  # the file's domain is checked against its rows
            io.check_shape(data.shape, data.matrix.shape[0], data, args)
        return data.matrix
    values: dict[str, Any] = {}
    for name in spec.inputs:
        if name == "prior":
            values[name] = _prior(data, args)
        else:
            values[name] = data.matrix
    return values if len(values) > 1 else values[spec.inputs[0]]


def _prior(data: read.Data, args: argparse.Namespace) -> Any:
    text = getattr(args, "prior", None)
    rows = data.matrix.shape[0]
    if text is not None:
        return read.read_prior(text, rows)
    if data.prior is not None:
        return data.prior
    return np.full(rows, 1.0 / rows)


def _params(spec: Query, data: read.Data, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in spec.parameters:
        value = getattr(args, name, None)
        kind = spec.kind(name)
        if name == "prior" and value is None and name in spec.required:
            if data.prior is None:
                raise read.UsageError(
                    f"{spec.name} is asked at a prior: give --prior P1,P2,.. (or a file), or a "
                    f'"prior" key in the JSON input {data.path}'
                )
            value = data.prior
        elif name == "prior" and value is not None:
            value = read.read_prior(value, data.matrix.shape[0])
        elif kind == "matrix" and value is not None:
            value = read.read_input(value).matrix
        if name == "group" and value is not None:
            value = int(value[0]) if len(value) == 1 else tuple(int(v) for v in value)
        if value is not None:
            out[name] = value
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple):
        return list(value)
    return value


def _text(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return str(value)
    if isinstance(value, list):
        flat = np.asarray(value, dtype=float)
        return io.vector(flat) if flat.ndim == 1 else f"a {flat.shape[0]}x{flat.shape[1]} matrix"
    return io.fmt(value) if isinstance(value, float) else str(value)


def _closed(value: Any, unit: str) -> dict[str, Any]:
    """A float answer as JSON: its value and unit, no bracket (a closed form)."""
    number = float(value)
    return {"value": number if math.isfinite(number) else str(number), "unit": unit}


def _table(spec: Query, result: Any, unit: str) -> list[tuple[str, str]]:
    suffix = f" {unit}" if unit else ""
    if not hasattr(result, "lower"):
        return [(spec.name, f"{io.fmt(result)}{suffix}"), ("method", "closed form")]
    gap = result.upper - result.lower
    pairs = [
        (spec.name, f"{io.fmt(result.value)}{suffix}  (the conservative end)"),
        (
            "certified bracket",
            f"{io.fmt(result.lower, 12)} <= . <= {io.fmt(result.upper, 12)}  (gap {gap:.3g})",
        ),
        ("status", io.status_text(result)),
    ]
    for name, value in _attaining(result):
        pairs.append((name.replace("_", " "), value))
    return pairs


def _attaining(result: Any) -> list[tuple[str, str]]:
    """The result's other fields: the attaining object (a prior, an entry, a mechanism)."""
    out = []
    for name in getattr(result, "__dataclass_fields__", {}):
        if name in COMMON or name.startswith("_"):
            continue
        value = getattr(result, name)
        if isinstance(value, np.ndarray):
            if value.ndim == 1 and value.size:
                out.append((name, io.vector(value)))
            elif value.ndim == 2:
                out.append((name, f"a {value.shape[0]}x{value.shape[1]} array (--json for it)"))
        elif isinstance(value, (int, float, str, tuple)) and not isinstance(value, bool):
            text = io.fmt(value) if isinstance(value, float) else str(value)
            if text and len(text) <= 80:
                out.append((name, text))
    return out
