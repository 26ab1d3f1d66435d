"""What every ``dpcap`` subcommand shares: the option types, the rendering, the errors.

The input files are read by :mod:`dpcap.cli._read`. The option types turn a command-line string into
numbers or raise :class:`argparse.ArgumentTypeError`, so that argparse reports the option
and the value and exits with status 2; :func:`blame` puts the option (or the file) in front
of an error raised by the library.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap._core import validation as check
from dpcap.channel import Mechanism
from dpcap.cli._read import Data, UsageError
from dpcap.neighbors import describe

FloatArray = NDArray[np.float64]

__all__ = [
    "DEFAULT_EPS",
    "INPUT_HELP",
    "Data",
    "Formatter",
    "UsageError",
    "add_output",
    "add_points",
    "add_solve_options",
    "blame",
    "check_plot",
    "check_shape",
    "dump",
    "fmt",
    "given",
    "integer",
    "integers",
    "key_values",
    "mechanism",
    "number",
    "numbers",
    "positive",
    "relation_text",
    "saved",
    "shape_text",
    "status_text",
    "table",
    "vector",
]

#: What an input file may be (the help of every FILE argument).
INPUT_HELP = ".npy, .csv/.tsv/.txt (header and delimiter detected) or .json"


#: Most values one option's list may expand to (``START:STOP:NUM`` included).
MAX_LIST_VALUES = 100_000
#: Most points of a curve asked with ``--n-points``.
MAX_CURVE_POINTS = 10_000


# --- option types -------------------------------------------------------------------------


def numbers(
    what: str = "numbers", *, minimum: float = 0.0, allow_inf: bool = False
) -> Callable[[str], list[float]]:
    """An argparse type: comma-separated numbers, each ``>= minimum``.

    An item may also be ``START:STOP:NUM``, NUM evenly spaced values from START to STOP (both
    included), and ``inf`` where ``allow_inf``.
    """

    def parse(text: str) -> list[float]:
        values: list[float] = []
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            try:
                if ":" in item:
                    start, stop, num = item.split(":")
                    count = int(num)
                    ends = (float(start), float(stop))
                    if count < 1 or not math.isfinite(ends[1] - ends[0]):
                        raise ValueError(num)  # no range from or to inf or nan, or wider
                    if count + len(values) > MAX_LIST_VALUES:
                        raise argparse.ArgumentTypeError(
                            f"{what}: at most {MAX_LIST_VALUES} values, got {text!r} "
                            f"({count} in {item!r})"
                        )
                    values += [float(v) for v in np.linspace(*ends, count)]
                else:
                    values.append(float(item))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"expected comma-separated {what} or START:STOP:NUM, got {text!r}"
                ) from None
        if not values:
            raise argparse.ArgumentTypeError(f"expected at least one number, got {text!r}")
        for v in values:
            if math.isnan(v) or v < minimum or (math.isinf(v) and not allow_inf):
                bound = f">= {minimum:g}" + ("" if allow_inf else " and finite")
                raise argparse.ArgumentTypeError(f"{what} must be {bound}, got {text!r}")
        return values

    return parse


def number(
    what: str = "number", *, minimum: float = 0.0, allow_inf: bool = False
) -> Callable[[str], float]:
    """An argparse type: one number ``>= minimum`` (``inf`` where ``allow_inf``)."""
    parse_list = numbers(what, minimum=minimum, allow_inf=allow_inf)

    def parse(text: str) -> float:
        values = parse_list(text)
        if len(values) != 1 or "," in text or ":" in text:
            raise argparse.ArgumentTypeError(f"expected one {what}, got {text!r}")
        return values[0]

    return parse


def positive(text: str) -> float:
    """An argparse type: one positive finite number (a tolerance)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not 0.0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a positive finite number, got {text!r}")
    return value


def relative(text: str) -> float:
    """An argparse type: one number in ``[0, 1)`` (a relative tolerance)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def integer(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: one integer ``>= minimum`` (and ``<= maximum`` if given)."""
    span = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {text!r}")
        return value

    return parse


def integers(minimum: int) -> Callable[[str], tuple[int, ...]]:
    """An argparse type: comma-separated integers ``>= minimum`` (a shape, a group)."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            values = tuple(int(part) for part in text.split(",") if part.strip())
        except ValueError:
            values = ()
        if not values or min(values) < minimum:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated integers >= {minimum}, got {text!r}"
            )
        return values

    return parse


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text: prose paragraphs wrapped to the terminal, indented blocks (examples) kept.

    A paragraph (text between blank lines) is kept as written when a line of it is indented or
    ends with a colon, as a list of examples does; otherwise it is filled to the width.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in text.split("\n\n"):
            lines = block.splitlines()
            if any(ln[:1].isspace() or ln.endswith(":") for ln in lines):
                blocks.append("\n".join(indent + ln for ln in lines))
            else:
                blocks.append(
                    textwrap.fill(
                        " ".join(lines),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                        break_on_hyphens=False,
                    )
                )
        return "\n\n".join(blocks)


def add_output(
    cmd: argparse.ArgumentParser, *, plot: str | None = None, note: str | None = None
) -> None:
    """``--unit`` and ``--json`` (every subcommand), ``--plot FILE`` where a curve exists."""
    cmd.add_argument(
        "--unit",
        choices=sorted(check.UNITS),
        default="nats",
        help="unit of every information quantity (default nats); eps stays in nats",
    )
    cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    if plot is not None:
        cmd.add_argument(
            "--plot",
            type=Path,
            metavar="FILE.png",
            help=f"write a figure of {plot} (format from the suffix)"
            + (f"; {note}" if note else ""),
        )


def add_normalize(cmd: argparse.ArgumentParser) -> None:
    """``--normalize TOL``: rows of a channel that sum to 1 within TOL are renormalised."""
    cmd.add_argument(
        "--normalize",
        type=number("tolerance"),
        metavar="TOL",
        help="renormalise rows that sum to 1 within TOL (rounded entries; at most 1e-3); "
        "without it rows must sum to 1 within 1e-9",
    )


def check_plot(path: Path) -> None:
    """Refuse ``--plot`` before any work: matplotlib missing, a bad folder or suffix."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError as exc:
        raise UsageError(
            f"--plot {path}: writing a figure needs matplotlib, which is not installed "
            f"(pip install 'dpcap[plot]'): {exc}"
        ) from exc
    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in formats:
        raise UsageError(
            f"--plot {path}: the format follows the suffix, one of "
            f"{', '.join('.' + f for f in sorted(formats))}"
        )
    if not path.parent.is_dir():
        raise UsageError(f"--plot {path}: no such folder {path.parent}")


# --- errors -------------------------------------------------------------------------------

#: The options named by the library's argument names, as they start an error message.
OPTIONS = {
    "D": "--D",
    "R": "--R",
    "alpha": "--alpha",
    "alphas": "--alpha",
    "eps": "--eps",
    "group": "--group",
    "shape": "--shape",
    "neighbors": "--neighbors",
    "max_iter": "--max-iter",
    "rtol": "--rtol",
    "n_points": "--n-points",
    "solver": "--solver",
    "method": "--method",
}


def blame(exc: Exception, args: argparse.Namespace, source: str) -> str:
    """The message of a library error with the option (and its value) it concerns in front.

    An error message starts with the argument's name; when the user gave that option, it is
    named with its value, otherwise the error is about ``source`` (the input file), which is
    put in front unless the message names it already.
    """
    message = str(exc)
    match = re.match(r"([A-Za-z_]+)", message)
    name = match.group(1) if match else ""
    option = OPTIONS.get(name)
    given = getattr(args, option[2:].replace("-", "_"), None) if option else None
    if option is not None and given is not None:
        return f"{option} {_show(given)}: {message}"
    return message if source in message else f"{source}: {message}"


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(fmt(v) if isinstance(v, float) else str(v) for v in value)
    return str(value)


# --- rendering ----------------------------------------------------------------------------


def fmt(x: Any, digits: int = 9) -> str:
    """A number for a table: ``digits`` significant digits, ``inf`` spelled out."""
    if x is None:
        return "-"
    value = float(x)
    if math.isnan(value):
        return "nan"
    return f"{value + 0.0:.{digits}g}"  # + 0.0: −0.0 prints as 0


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: int = 2) -> str:
    """Left-aligned columns under ``headers``."""
    cells = [list(headers), *[list(r) for r in rows]]
    widths = [max(len(row[k]) for row in cells) for k in range(len(headers))]
    pad = " " * indent
    return "\n".join(
        pad + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in cells
    )


def key_values(pairs: Sequence[tuple[str, str]], indent: int = 2) -> str:
    """``label  value`` lines with the values aligned."""
    width = max(len(label) for label, _ in pairs)
    return "\n".join(f"{' ' * indent}{label.ljust(width)}  {value}" for label, value in pairs)


def dump(obj: Any) -> str:
    """JSON text (indented; ``Infinity`` for ∞, as Python's :mod:`json` writes it)."""
    return json.dumps(obj, indent=2)


# --- shared by the subcommands ------------------------------------------------------------

#: The ε grid of δ(ε) tables when ``--eps`` is not given.
DEFAULT_EPS = (0.0, 0.25, 0.5, 1.0, 2.0)


def given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The library options the user gave (``None`` left out, so the library's defaults hold)."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}


def add_points(
    cmd: argparse.ArgumentParser, flag: str, what: str, help: str, *, least: int, count: str
) -> None:
    """The abscissae of a curve: ``flag`` (a list of ``what``) or ``--n-points`` (``count``),
    not both."""
    points = cmd.add_mutually_exclusive_group()
    metavar = f"{flag.lstrip('-')}1,{flag.lstrip('-')}2,.."
    points.add_argument(flag, type=numbers(what), metavar=metavar, help=help)
    points.add_argument(
        "--n-points", type=integer(least, MAX_CURVE_POINTS), metavar="N", help=count
    )


#: The help of ``--rtol``, on every command that takes it.
RTOL_HELP = (
    "relative target in [0, 1): a bracket has converged once upper - lower <= "
    "max(tol, rtol*|upper|) (default 0: tol alone)"
)


def add_solve_options(cmd: argparse.ArgumentParser, *, tol: str, max_iter: bool = True) -> None:
    """``--tol`` (the certified gap, in nats), ``--rtol`` (relative) and ``--max-iter``."""
    cmd.add_argument(
        "--tol",
        type=positive,
        metavar="TOL",
        help=f"target certified gap upper - lower, in nats ({tol})",
    )
    cmd.add_argument(
        "--rtol",
        type=relative,
        metavar="RTOL",
        help=RTOL_HELP,
    )
    if max_iter:
        cmd.add_argument(
            "--max-iter",
            type=integer(1),
            metavar="N",
            help="iteration budget (default: the library's)",
        )


def mechanism(data: Data, args: argparse.Namespace) -> Mechanism:
    """The mechanism in ``data``: ``--shape`` and ``--neighbors`` win over the file's own."""
    shape = getattr(args, "shape", None) or data.shape
    neighbors = getattr(args, "neighbors", None)
    neighbors = data.neighbors if neighbors is None else neighbors
    matrix = data.matrix
    if shape is None:
        shape = (matrix.shape[0],) if matrix.ndim == 2 else (1,)
    elif matrix.ndim == 2:
        check_shape(shape, matrix.shape[0], data, args)
    return Mechanism(matrix, shape, neighbors="hamming" if neighbors is None else neighbors)


def check_shape(shape: tuple[int, ...], rows: int, data: Data, args: argparse.Namespace) -> None:
    """Refuse a domain of ``prod(shape)`` databases for a matrix of ``rows`` rows."""
    if math.prod(shape) != rows:
        where = (
            f"--shape {','.join(map(str, shape))}"
            if getattr(args, "shape", None)
            else f'{data.path}: "shape" {list(shape)}'
        )
        raise UsageError(
            f"{where} describes {math.prod(shape)} databases but {data.path} has {rows} rows"
        )


def shape_text(shape: Sequence[int]) -> str:
    """A domain shape for a title: ``(2, 3)``, or ``(2,) * 40`` for many equal sizes."""
    if len(shape) > 6 and len(set(shape)) == 1:
        return f"({shape[0]},) * {len(shape)}"
    return str(tuple(shape))


def relation_text(relation: Any) -> str:
    """A neighbour relation for a title: its name, or the number of explicit pairs."""
    shown = describe(relation)
    return f"{len(shown)} explicit pairs" if isinstance(shown, list) else shown


def vector(values: Any, limit: int = 10) -> str:
    """A probability vector for a table: 6 decimals, long vectors cut."""
    rounded = np.round(np.asarray(values, dtype=np.float64), 6).tolist()
    if len(rounded) <= limit:
        return str(rounded)
    return f"{str(rounded[:limit])[:-1]}, ... {len(rounded) - limit} more]"


def saved(args: argparse.Namespace) -> str:
    """The line naming the figure written for ``--plot`` (``""`` without one)."""
    return "" if getattr(args, "plot", None) is None else f"\n  figure: {args.plot}"


def status_text(result: Any) -> str:
    """``converged, 12 iterations (ba)``."""
    return f"{result.status}, {result.iterations} iterations ({result.method})"
