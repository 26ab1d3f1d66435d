"""Command line: ``dpcap audit`` a mechanism stored in a file, ``dpcap demo`` the default one,
``dpcap sweep`` a grid of mechanisms described in a TOML file.

Examples
--------
``python -m dpcap demo``
    Audits a counting query on 8 binary entries released through truncated geometric noise.
``python -m dpcap audit W.npy --shape 2,2,2 --eps 0,0.5,1 --unit bits``
    Audits a mechanism matrix from a ``.npy``, ``.csv`` or whitespace-separated text file.
``python -m dpcap audit G.csv --neighbors line``
    A matrix in a file carries no neighbour relation: without ``--neighbors`` its rows are
    databases under ``"hamming"`` (every pair of rows, for one entry), so a noise channel on a
    line of values (a truncated geometric) needs ``--neighbors line`` to report its ε.
``python -m dpcap sweep examples/sweep_spec.toml --store sweep.parquet --csv sweep.csv``
    Evaluates the spec's queries at every grid point of a family of mechanisms (the file's
    format: ``dpcap sweep --help``); after Ctrl-C the same command resumes from the store.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcap import _cli_sweep
from dpcap import _validation as check
from dpcap.capacity import capacity
from dpcap.channel import Mechanism, as_mechanism
from dpcap.mechanisms import counting_query, truncated_geometric
from dpcap.midp import midp
from dpcap.neighbors import NEIGHBOR_NAMES, Neighbors, describe
from dpcap.privacy import dp_delta_curve, dp_epsilon, kl_dp, max_leakage, tv_dp
from dpcap.result import DpcapError

__all__ = ["audit", "main"]

DEFAULT_EPS = (0.0, 0.25, 0.5, 1.0, 2.0)


def audit(
    M: Any,
    /,
    *,
    neighbors: Neighbors | None = None,
    eps: Sequence[float] = DEFAULT_EPS,
    unit: str = "nats",
) -> dict[str, Any]:
    """The DP profile of a mechanism as a plain dictionary (what ``dpcap audit`` prints).

    The DP metrics use ``neighbors`` if given, otherwise the relation ``M`` carries (a plain
    array: ``"hamming"`` on one entry, every pair of rows), as :func:`dpcap.dp_epsilon` does.

    Keys: ``shape``, ``outputs``, ``neighbors`` (the relation used: its name, a list of
    row-index pairs, or ``"predicate <name>"``), ``unit``, ``dp_epsilon`` (nats, the natural-log
    privacy-loss bound), ``delta`` (a list of ``[ε, δ(ε)]``), ``tv``, ``kl_dp``,
    ``max_leakage``, ``capacity`` and ``midp`` (certified ``[lower, upper]`` brackets, in
    ``unit``) with the MI-DP witness ``midp_entry``, ``midp_context`` and ``midp_prior``.

    Examples
    --------
    >>> from dpcap.mechanisms import truncated_geometric
    >>> report = audit(truncated_geometric(5, 0.5))
    >>> report["neighbors"], round(report["dp_epsilon"], 12)
    ('line', 0.5)
    """
    mech = as_mechanism(M)
    relation = mech.neighbors if neighbors is None else neighbors
    levels = check.nonnegative(list(eps), "eps")
    deltas = dp_delta_curve(mech, levels, neighbors=relation)
    mi = midp(mech, unit=unit)
    free_lunch = capacity(mech, unit=unit)
    return {
        "shape": list(mech.shape),
        "outputs": mech.n_outputs,
        "neighbors": describe(relation),
        "unit": unit,
        "dp_epsilon": dp_epsilon(mech, neighbors=relation),
        "delta": [[float(e), float(d)] for e, d in zip(levels, deltas, strict=True)],
        "tv": tv_dp(mech, neighbors=relation),
        "kl_dp": kl_dp(mech, neighbors=relation, unit=unit),
        "max_leakage": max_leakage(mech, unit=unit),
        "capacity": [free_lunch.lower, free_lunch.upper],
        "midp": [mi.lower, mi.upper],
        "midp_entry": mi.entry,
        "midp_context": list(mi.context),
        "midp_prior": mi.prior.tolist(),
    }


def format_audit(report: dict[str, Any], title: str) -> str:
    """A human-readable rendering of :func:`audit`'s dictionary."""
    unit = report["unit"]
    eps = report["dp_epsilon"]
    relation = report["neighbors"]
    if isinstance(relation, list):
        relation = f"{len(relation)} explicit pairs"
    lines = [
        title,
        f"  domain shape {tuple(report['shape'])}, {report['outputs']} outputs, "
        f"neighbours: {relation}",
        f"  pure DP          eps = {eps:.6g} nats"
        + ("  (no finite eps)" if math.isinf(eps) else ""),
        "  approximate DP   delta(eps), the smallest delta for (eps, delta)-DP:",
    ]
    lines += [f"      eps = {e:<6.3g} delta = {d:.6g}" for e, d in report["delta"]]
    lines += [
        f"  total variation  {report['tv']:.6g}  (= delta(0), the (delta)-DP level)",
        f"  KL-DP            {report['kl_dp']:.6g} {unit}",
        f"  maximal leakage  {report['max_leakage']:.6g} {unit}  (log sum_y max_x W[x,y])",
        f"  capacity         {_bracket(report['capacity'])} {unit}  "
        "(free-lunch privacy: sup I(X^n; Y))",
        f"  MI-DP            {_bracket(report['midp'])} {unit}  "
        "(Cuff-Yu: max_i sup I(X_i; Y | X^-i))",
        f"      attained at entry {report['midp_entry']}, other entries = "
        f"{tuple(report['midp_context'])}, prior on X_i = "
        f"{np.round(report['midp_prior'], 6).tolist()}",
    ]
    return "\n".join(lines)


def _bracket(pair: list[float]) -> str:
    lower, upper = pair
    return f"{upper:.9f}  [certified: {lower:.12g} <= . <= {upper:.12g}]"


def demo_mechanism(n: int = 8, eps: float = 1.0) -> Mechanism:
    """The default mechanism: a count of ``n`` binary entries plus truncated geometric noise."""
    return counting_query(n, truncated_geometric(n, eps))


def read_table(path: Path) -> np.ndarray:
    """A matrix from a text file: comma, semicolon, tab or whitespace separated, an optional
    header row (a first row that is not all numbers) skipped; errors name the file and line."""
    lines = [ln.strip() for ln in path.read_text().splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    if not lines:
        raise DpcapError(f"{path}: no numbers in the file")
    sample = "\n".join(lines[:5])
    delimiter = next((d for d in (",", ";", "\t") if d in sample), None)
    rows = [ln.split(delimiter) for ln in lines]
    if not _numeric(rows[0]):
        rows = rows[1:]  # a header row
    if not rows:
        raise DpcapError(f"{path}: a header row and no numbers")
    try:
        values = [[float(cell) for cell in row if cell.strip()] for row in rows]
    except ValueError as exc:
        raise DpcapError(f"{path}: not a matrix of numbers ({exc})") from exc
    widths = {len(row) for row in values}
    if len(widths) != 1:
        raise DpcapError(f"{path}: rows have different lengths {sorted(widths)}")
    return np.array(values, dtype=np.float64)


def _numeric(cells: list[str]) -> bool:
    try:
        [float(cell) for cell in cells if cell.strip()]
    except ValueError:
        return False
    return True


def _levels(text: str) -> list[float]:
    """The ``--eps`` list; an error names the option and the value."""
    try:
        return [float(e) for e in text.split(",") if e.strip()]
    except ValueError as exc:
        raise DpcapError(f"--eps must be comma-separated numbers, got {text!r}") from exc


def _load(path: Path, shape: str | None) -> Mechanism:
    if not path.is_file():
        raise DpcapError(f"no such file: {path}")
    matrix = np.load(path, allow_pickle=False) if path.suffix == ".npy" else read_table(path)
    if shape is None:
        return as_mechanism(matrix)
    try:
        dims = tuple(int(s) for s in shape.split(","))
    except ValueError as exc:
        raise DpcapError(f"--shape must be comma-separated integers, got {shape!r}") from exc
    return Mechanism(matrix, dims)


def _version() -> str:
    import dpcap

    return str(dpcap.__version__)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpcap", description="How much can a privacy mechanism leak? (nats unless --unit bits)"
    )
    parser.add_argument("--version", action="version", version=f"dpcap {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="audit the default mechanism (counting query + noise)")
    demo.add_argument("--n", type=int, default=8, help="number of binary entries (default 8)")
    demo.add_argument("--eps", type=float, default=1.0, help="noise level ε (default 1)")
    demo.add_argument("--unit", choices=sorted(check.UNITS), default="nats")
    audit_cmd = sub.add_parser("audit", help="audit a mechanism matrix stored in a file")
    audit_cmd.add_argument("file", type=Path, help=".npy, .csv or whitespace-separated text")
    audit_cmd.add_argument("--shape", help="database domain sizes, e.g. 2,2,2 (default: 1 entry)")
    audit_cmd.add_argument(
        "--neighbors",
        choices=NEIGHBOR_NAMES,
        help="neighbour relation (default: hamming, every pair of rows for one entry)",
    )
    audit_cmd.add_argument(
        "--eps", default=",".join(str(e) for e in DEFAULT_EPS), help="ε grid for δ(ε)"
    )
    audit_cmd.add_argument("--unit", choices=sorted(check.UNITS), default="nats")
    audit_cmd.add_argument("--json", action="store_true", help="print JSON instead of text")
    _cli_sweep.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpcap`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "sweep":
            return _cli_sweep.run(args)
        if args.command == "demo":
            mech = demo_mechanism(args.n, args.eps)
            report = audit(mech, unit=args.unit)
            title = (
                f"dpcap demo: count of {args.n} binary entries + truncated geometric noise "
                f"(eps = {args.eps})"
            )
            print(format_audit(report, title))
            return 0
        mech = _load(args.file, args.shape)
        eps = _levels(args.eps)
        report = audit(mech, neighbors=args.neighbors, eps=eps, unit=args.unit)
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(format_audit(report, f"dpcap audit: {args.file}"))
        return 0
    except (DpcapError, ValueError, OSError) as exc:
        print(f"dpcap: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
