"""The ``dpcap`` command: dpcap's queries on a mechanism, a distortion or a joint law in a file.

``dpcap SUBCOMMAND FILE [options]`` reads the file, calls the library function of the same
name (the options are its arguments: ``--tol``, ``--max-iter``, ``--alpha``, ``--eps``,
``--D``, ``--R``, ``--shape``, ``--neighbors``, ``--prior``, ...) and prints the result as a
table with units, or as JSON with ``--json``. ``dpcap --help`` lists the subcommands and
``dpcap SUBCOMMAND --help`` their options; ``dpcap --version`` prints the version.

.. rubric:: Subcommands

``dpcap audit W.csv --eps 0,0.5,1 --unit bits``
    Every DP metric of a mechanism: pure ε, δ(ε), total variation, KL-DP, maximal leakage,
    capacity and MI-DP (:func:`audit`). A matrix in a file carries no neighbour relation:
    without ``--neighbors`` its rows are databases under ``"hamming"`` (every pair of rows,
    for one entry), so a noise channel on a line of values (a truncated geometric) needs
    ``--neighbors line`` to report its ε. A metric above dpcap's limits is skipped, with the
    reason and the option that would allow it (``--max-pair-work N``, or fewer neighbour
    pairs), and the others are reported; the exit status is then 1.
``dpcap capacity bsc.csv --unit bits``, ``dpcap midp xor.csv --shape 2,2``, ...
    One subcommand per query of the catalogue (:mod:`dpcap.study.catalogue`), generated from
    it with its options and ``--help``: every point query of a mechanism (``capacity``,
    ``midp``, ``renyi_midp``, ``renyi_capacity``, ``max_leakage``, ``mutual_information
    --prior``, ``g_leakage --prior --gain``, ``dp_epsilon``, ``dp_delta --eps``, ``kl_dp``,
    ``renyi_dp --alpha``, ``tv_dp``, ``metric_epsilon --metric``, ...) and every trade-off
    query of a problem (``rate_distortion --D`` and ``privacy_distortion --D`` of a distortion
    matrix and a prior, ``privacy_funnel --R`` of a joint law, ...). The result is printed
    with its unit, certified bracket, status and attaining object.
``dpcap renyi bsc.csv --alpha 0.5,2,inf --plot profile.png``
    Rényi capacities ``C_α``, the diameter and the Rényi DP level over the orders
    (:func:`dpcap.renyi_profile`, :func:`dpcap.renyi_dp`).
``dpcap delta rr.csv geometric.csv --neighbors line --plot delta.png``
    The privacy profile ``ε ↦ δ(ε)`` of one or several mechanisms
    (:func:`dpcap.dp_delta_curve`).
``dpcap rd hamming.csv --prior 0.3,0.7 --plot rd.png``
    Mir's risk–distortion curve ``R(D)`` with its exponential mechanisms
    (:func:`dpcap.rate_distortion_curve`, or :func:`dpcap.rate_distortion` at each ``--D``).
``dpcap pd hamming4.csv --shape 2,2 --D 0.1,0.5,0.9``
    Wang, Ying and Zhang's privacy–distortion function ``ε*(D)``
    (:func:`dpcap.privacy_distortion_curve`).
``dpcap funnel dsbs.csv --unit bits --plot region.png``
    The privacy funnel and the information bottleneck of a joint law ``P(S, X)``, or of a
    channel ``P(X | S)`` with ``--prior`` (:func:`dpcap.privacy_funnel_curve`,
    :func:`dpcap.information_bottleneck_curve`).
``dpcap sweep examples/sweep_spec.toml --store sweep.parquet --csv sweep.csv``
    The spec's queries at every grid point of a family of mechanisms (the file's format:
    ``dpcap sweep --help``); after Ctrl-C the same command resumes from the store.
``dpcap compose rr.csv:100 geometric.csv:5 --delta 1e-6 --plot delta.png``
    Mechanisms released together on one database: certified δ(ε) (``--eps``), ε(δ)
    (``--delta``) and the trade-off curve β(α) (``--alpha``), each with the worst neighbour
    pair; ``FILE:K`` releases a part ``K`` times (:func:`dpcap.composed_delta_curve`,
    :func:`dpcap.composed_epsilon`, :func:`dpcap.tradeoff_curve`).
``dpcap exercises list|show|build|check``
    Exercise sets for teaching (:mod:`dpcap.exercises`): the families, one student's variant,
    notebooks for a roster with an answer key (``build --roster roster.csv --out DIR``), and
    the check of an answer (exit status 0 when accepted).
``dpcap demo --n 40``
    Audits a count of ``n`` binary entries released through truncated geometric noise,
    given by its structure: the ``2^n`` databases are never enumerated.

.. rubric:: Input files

One reader serves every subcommand. ``.npy``: a NumPy array. ``.json``: a list of rows, or an
object with the matrix under ``"matrix"`` (or ``"W"``, ``"distortion"``, ``"joint"``) and
optional keys ``"shape"`` (domain sizes), ``"prior"``, ``"neighbors"`` (``"hamming"``,
``"line"``, ``"all"`` or a list of row-index pairs) and ``"name"``, for example
``{"matrix": [[0.75, 0.25], [0.25, 0.75]], "neighbors": "all", "name": "RR"}``. Any other
suffix is a text table: cells separated by tabs, semicolons, commas or spaces (detected), a
header row skipped, ``#`` comments ignored, a decimal comma read with ``;`` or tab separators.
Options on the command line win over the keys of the file.

.. rubric:: Output, units and errors

Information (capacities, MI-DP, R(D), PF and IB, leakages) is in nats, or in bits with
``--unit bits``; DP levels (ε, KL-DP, Rényi DP) bound a natural-log likelihood ratio and stay
in nats, δ has no unit (``docs/concepts.rst``, Units). ``--json`` prints the library's result
(``to_dict()``) under ``"result"`` (for ``funnel`` under ``"privacy_funnel"`` and
``"information_bottleneck"``; ``delta`` prints one entry per mechanism, ``audit`` and
``demo`` the dictionary of :func:`audit`), with ∞ written
``Infinity`` as Python's :mod:`json` does. ``--plot FILE.png`` writes the curve of
``renyi``, ``delta``, ``rd``, ``pd``, ``funnel``, ``audit`` and ``demo`` with
:mod:`dpcap.plots` (the format follows the suffix; matplotlib is needed). A bad option, file
or value is reported on one line naming the option (or the file) and the value, with exit
status 2; a result whose bracket did not close is printed with a warning.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcap import neighbors as relations
from dpcap._core import validation as check
from dpcap.channel import Mechanism, as_mechanism
from dpcap.cli import _catalogue as _cli_catalogue
from dpcap.cli import _compose as _cli_compose
from dpcap.cli import _exercises as _cli_exercises
from dpcap.cli import _io as io
from dpcap.cli import _queries as _cli_queries
from dpcap.cli import _read as read
from dpcap.cli import _sweep as _cli_sweep
from dpcap.cli import _tradeoffs as _cli_tradeoffs
from dpcap.errors import ConvergenceWarning, DpcapError, ProblemTooLargeError, StoreWarning
from dpcap.mechanisms import counting_query, truncated_geometric
from dpcap.mi_dp import midp
from dpcap.neighbors import NEIGHBOR_NAMES, Neighbors, describe
from dpcap.privacy import dp_delta_curve, dp_epsilon, kl_dp, max_leakage, tv_dp
from dpcap.shannon.shannon_capacity import capacity

__all__ = ["audit", "demo_mechanism", "format_audit", "main"]

DEFAULT_EPS = io.DEFAULT_EPS

#: Warnings of dpcap's own that the command prints on stderr (once each).
ECHOED = (ConvergenceWarning, StoreWarning)


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
    row-index pairs, or ``"predicate <name>"``), ``unit``, ``dp_epsilon`` and ``kl_dp`` (DP
    levels, bounds on natural-log likelihood ratios: nats whatever ``unit`` says), ``delta`` (a
    list of ``[ε, δ(ε)]``), ``tv``, ``max_leakage`` (in ``unit``), ``capacity`` and ``midp``
    (certified ``[lower, upper]`` brackets, in ``unit``) with the MI-DP witness
    ``midp_entry``, ``midp_context`` and ``midp_prior``, and ``skipped``.

    Every metric that fits is reported: one that dpcap refuses as too large
    (:class:`~dpcap.ProblemTooLargeError`: more pairs of rows to compare than
    :data:`dpcap.neighbors.MAX_PAIR_WORK` allows, a relation with too many pairs, a matrix too
    large to build) is ``None``, and ``skipped`` maps its key to ``{"reason": the refusal,
    "option": what would allow it}`` (empty when nothing was skipped).

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
    skipped: dict[str, dict[str, str]] = {}

    def fits(key: str, compute: Callable[[], Any]) -> Any:
        try:
            return compute()
        except ProblemTooLargeError as refusal:
            skipped[key] = {"reason": str(refusal), "option": _allowance(str(refusal))}
            return None

    deltas = fits("delta", lambda: dp_delta_curve(mech, levels, neighbors=relation))
    mi = fits("midp", lambda: midp(mech, unit=unit))
    free_lunch = fits("capacity", lambda: capacity(mech, unit=unit))
    report: dict[str, Any] = {
        "shape": list(mech.shape),
        "outputs": mech.n_outputs,
        "neighbors": describe(relation),
        "unit": unit,
        "dp_epsilon": fits("dp_epsilon", lambda: dp_epsilon(mech, neighbors=relation)),
        "delta": None,
        "tv": fits("tv", lambda: tv_dp(mech, neighbors=relation)),
        "kl_dp": fits("kl_dp", lambda: kl_dp(mech, neighbors=relation)),
        "max_leakage": fits("max_leakage", lambda: max_leakage(mech, unit=unit)),
        "capacity": None if free_lunch is None else [free_lunch.lower, free_lunch.upper],
        "midp": None,
        "midp_entry": None,
        "midp_context": None,
        "midp_prior": None,
    }
    if deltas is not None:
        report["delta"] = [[float(e), float(d)] for e, d in zip(levels, deltas, strict=True)]
    if mi is not None:
        report["midp"] = [mi.lower, mi.upper]
        report["midp_entry"] = mi.entry
        report["midp_context"] = list(mi.context)
        report["midp_prior"] = mi.prior.tolist()
    report["skipped"] = {key: skipped[key] for key in report if key in skipped}
    return report


#: The metrics of :func:`audit` as :func:`format_audit` names them.
_AUDIT_NAMES = {
    "dp_epsilon": "pure DP",
    "delta": "approximate DP",
    "tv": "total variation",
    "kl_dp": "KL-DP",
    "max_leakage": "maximal leakage",
    "capacity": "capacity",
    "midp": "MI-DP",
}


def _allowance(reason: str) -> str:
    """The option that would allow a metric refused for ``reason`` (a refusal's message)."""
    work = re.search(r"\((\d+) pair-outputs", reason)
    if work is not None:  # too many pairs of rows to compare (dpcap.neighbors.refuse_pairs)
        return (
            f"--max-pair-work {work.group(1)} (the pair-outputs it needs), or fewer neighbour "
            "pairs (--neighbors line, or explicit pairs in a JSON file)"
        )
    if "pairs of databases" in reason:  # the relation itself has too many pairs
        return "fewer neighbour pairs: --neighbors line, or explicit pairs in a JSON file"
    return "no option of dpcap audit: a structured mechanism (dpcap.Mechanism.additive)"


@contextlib.contextmanager
def _pair_work_limit(limit: int | None) -> Iterator[None]:
    """:data:`dpcap.neighbors.MAX_PAIR_WORK` raised to ``limit`` for one command (``None``:
    unchanged); restored afterwards. The command line runs one command per process."""
    if limit is None:
        yield
        return
    saved = relations.MAX_PAIR_WORK
    relations.MAX_PAIR_WORK = limit
    try:
        yield
    finally:
        relations.MAX_PAIR_WORK = saved


def format_audit(report: dict[str, Any], title: str) -> str:
    """A human-readable rendering of :func:`audit`'s dictionary (a skipped metric: why, and
    the option that would allow it)."""
    relation = report["neighbors"]
    if isinstance(relation, list):
        relation = f"{len(relation)} explicit pairs"
    lines = [
        title,
        f"  domain shape {io.shape_text(report['shape'])}, {report['outputs']} outputs, "
        f"neighbours: {relation}",
    ]
    skipped = report.get("skipped", {})
    for key, name in _AUDIT_NAMES.items():
        if key in skipped:
            lines += [
                f"  {name:<16s} skipped: {skipped[key]['reason']}",
                f"      to allow it: {skipped[key]['option']}",
            ]
        else:
            lines += _audit_lines(report, key)
    return "\n".join(lines)


def _audit_lines(report: dict[str, Any], key: str) -> list[str]:
    """The lines of one metric of :func:`format_audit`."""
    unit, value = report["unit"], report[key]
    if key == "dp_epsilon":
        return [
            f"  pure DP          eps = {value:.6g} nats"
            + ("  (no finite eps)" if math.isinf(value) else "")
        ]
    if key == "delta":
        return [
            "  approximate DP   delta(eps), the smallest delta for (eps, delta)-DP (eps in nats):",
            *(f"      eps = {e:<6.3g} delta = {d:.6g}" for e, d in value),
        ]
    if key == "tv":
        return [f"  total variation  {value:.6g}  (= delta(0), the (delta)-DP level)"]
    if key == "kl_dp":
        return [f"  KL-DP            {value:.6g} nats  (a DP level, in nats like eps)"]
    if key == "max_leakage":
        return [f"  maximal leakage  {value:.6g} {unit}  (log sum_y max_x W[x,y])"]
    if key == "capacity":
        return [f"  capacity         {_bracket(value)} {unit}  (free-lunch privacy: sup I(X^n; Y))"]
    return [
        f"  MI-DP            {_bracket(value)} {unit}  (Cuff-Yu: max_i sup I(X_i; Y | X^-i))",
        f"      attained at entry {report['midp_entry']}, other entries = "
        f"{_context(report['midp_context'])}, prior on X_i = {_prior(report['midp_prior'])}",
    ]


def _prior(values: list[float], limit: int = 12) -> str:
    """A prior, in full up to ``limit`` values; beyond, its support and largest masses."""
    prior = np.asarray(values, dtype=np.float64)
    if len(prior) <= limit:
        return str(np.round(prior, 6).tolist())
    top = [i for i in np.argsort(-prior, kind="stable")[:5] if prior[i] > 0]
    largest = ", ".join(f"{int(i)}: {prior[i]:.6g}" for i in top)
    return f"mass on {np.count_nonzero(prior)} of {len(prior)} values, largest {{{largest}}}"


def _context(values: list[int], limit: int = 12) -> str:
    if len(values) <= limit:
        return str(tuple(values))
    return f"({', '.join(map(str, values[:limit]))}, ... {len(values) - limit} more)"


def _bracket(pair: list[float]) -> str:
    lower, upper = pair
    return f"{upper:.9f}  [certified: {lower:.12g} <= . <= {upper:.12g}]"


def demo_mechanism(n: int = 8, eps: float = 1.0) -> Mechanism:
    """The default mechanism: a count of ``n`` binary entries plus truncated geometric noise."""
    return counting_query(n, truncated_geometric(n, eps))


# --- audit and demo -----------------------------------------------------------------------


def _run_audit(args: argparse.Namespace) -> tuple[str, int]:
    data = read.read_channel(args.file, args.normalize)
    mech = io.mechanism(data, args)
    return _report(args, mech, f"dpcap audit: {data.label}", data.label)


def _run_demo(args: argparse.Namespace) -> tuple[str, int]:
    mech = demo_mechanism(args.n, args.eps)
    title = (
        f"dpcap demo: count of {args.n} binary entries + truncated geometric noise "
        f"(eps = {args.eps:g})"
    )
    return _report(args, mech, title, f"count of {args.n} + geometric")


def _report(args: argparse.Namespace, mech: Mechanism, title: str, label: str) -> tuple[str, int]:
    """Audit ``mech``, write ``--plot`` (its δ(ε) curve), return the text or JSON and the exit
    status (1 when a metric was skipped)."""
    levels = list(args.eps_grid or DEFAULT_EPS)
    with _pair_work_limit(getattr(args, "max_pair_work", None)):
        report = audit(mech, eps=levels, unit=args.unit)
        plotted = args.plot is not None and report["delta"] is not None
        if plotted:
            from dpcap.plots import plot_privacy_profile

            grid = levels if args.eps_grid else _cli_queries.plot_levels([report["dp_epsilon"]])
            plot_privacy_profile(grid, {label: dp_delta_curve(mech, grid)}, path=args.plot)
    status = 1 if report["skipped"] else 0
    if args.json:
        return io.dump(report), status
    note = "" if plotted or args.plot is None else "\n  no figure: delta(eps) was skipped"
    return format_audit(report, title) + (io.saved(args) if plotted else note), status


# --- the parser ---------------------------------------------------------------------------

EPILOG = """\
examples:
  dpcap audit W.csv --eps 0,0.5,1 --unit bits     every DP metric of a mechanism in a file
  dpcap capacity bsc.npy --json                    one query, as JSON
  dpcap renyi bsc.csv --alpha 0.5,2,inf --plot renyi.png
  dpcap pd hamming4.csv --shape 2,2 --D 0.1,0.5
  dpcap demo --n 40                                a structured mechanism (2^40 databases)

input files: .npy; .csv/.tsv/.txt (delimiter and header row detected); .json, a list of rows
or {"matrix": [[...], ...], "shape": [2, 2], "prior": [...], "neighbors": "hamming"}.
Information is in nats (--unit bits converts it); DP levels (eps, KL-DP, Renyi DP) always in
nats. Errors exit with status 2.
"""


def _version() -> str:
    import dpcap

    return str(dpcap.__version__)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpcap",
        description="How much can a privacy mechanism leak? Certified capacities, MI-DP, Renyi "
        "and (eps, delta) DP, distortion trade-offs and the privacy funnel of a finite "
        "mechanism stored in a file.",
        epilog=EPILOG,
        formatter_class=io.Formatter,
    )
    parser.add_argument("--version", action="version", version=f"dpcap {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, title="subcommands")

    cmd = sub.add_parser(
        "audit",
        help="every DP metric of a mechanism stored in a file",
        description="Every DP metric of a mechanism: pure eps, delta(eps), total variation, "
        "KL-DP, maximal leakage, capacity (free-lunch privacy) and MI-DP. Without "
        "--neighbors a matrix is one entry whose every pair of rows are neighbours.",
        epilog="examples:\n  dpcap audit W.csv --eps 0,0.5,1 --unit bits\n"
        "  dpcap audit geometric.csv --neighbors line\n  dpcap audit M.json --shape 2,2,2 --json",
        formatter_class=io.Formatter,
    )
    cmd.add_argument("file", type=Path, help=_cli_queries.INPUT_HELP)
    cmd.add_argument(
        "--shape", type=io.integers(1), metavar="M1,M2,..", help=_cli_queries.SHAPE_HELP
    )
    cmd.add_argument("--neighbors", choices=NEIGHBOR_NAMES, help=_cli_queries.NEIGHBORS_HELP)
    _eps_grid(cmd)
    cmd.add_argument(
        "--max-pair-work",
        type=io.integer(1),
        metavar="N",
        help="most pairs x outputs a DP metric compares pair by pair (default "
        f"{relations.MAX_PAIR_WORK}, dpcap.neighbors.MAX_PAIR_WORK); a metric above it is "
        "skipped, with the N it needs",
    )
    io.add_normalize(cmd)
    io.add_output(cmd, plot="the delta(eps) curve")
    cmd.set_defaults(run=_run_audit)

    _cli_catalogue.add_parsers(sub)
    _cli_queries.add_parsers(sub)
    _cli_tradeoffs.add_parsers(sub)
    _cli_compose.add_parser(sub)
    sweep = _cli_sweep.add_parser(sub)
    sweep.formatter_class = io.Formatter  # its description wrapped, its spec format kept
    sweep.set_defaults(run=_cli_sweep.run)
    _cli_exercises.add_parser(sub)

    cmd = sub.add_parser(
        "demo",
        help="audit a counting query with geometric noise (no file needed)",
        description="Audit a count of n binary entries released through truncated geometric "
        "noise of level eps, given by its structure (the 2^n databases are never enumerated).",
        epilog="examples:\n  dpcap demo\n  dpcap demo --n 40 --eps 0.5 --unit bits",
        formatter_class=io.Formatter,
    )
    cmd.add_argument(
        "--n", type=io.integer(1), default=8, metavar="N", help="binary entries (default 8)"
    )
    cmd.add_argument(
        "--eps", type=float, default=1.0, metavar="EPS", help="noise level, nats (default 1)"
    )
    _eps_grid(cmd, flag="--delta-eps")
    io.add_output(cmd, plot="the delta(eps) curve")
    cmd.set_defaults(run=_run_demo)
    return parser


def _eps_grid(cmd: argparse.ArgumentParser, flag: str = "--eps") -> None:
    cmd.add_argument(
        flag,
        dest="eps_grid",
        type=io.numbers("levels eps (nats)", allow_inf=True),
        metavar="E1,E2,..",
        help="levels eps >= 0 (nats) of the delta(eps) table, e.g. 0,0.5,1 or 0:2:9 "
        "(default 0,0.25,0.5,1,2)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpcap`` command; returns the exit status (2 for a bad input)."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a bad option (argparse said why)
        return stop.code if isinstance(stop.code, int) else 2
    try:
        if getattr(args, "plot", None) is not None:
            io.check_plot(args.plot)
        with warnings.catch_warnings(record=True) as caught:
            for category in (*ECHOED, read.InputNote):  # dpcap's own: echoed once
                warnings.simplefilter("always", category)
            out = args.run(args)
        for w in caught:
            if issubclass(w.category, read.InputNote):
                print(f"dpcap: note: {w.message}", file=sys.stderr)
        ours = (w for w in caught if issubclass(w.category, ECHOED))
        for message in dict.fromkeys(str(w.message) for w in ours):
            print(f"dpcap: warning: {message}", file=sys.stderr)
    except read.UsageError as exc:
        return _fail(str(exc))
    except (DpcapError, ValueError, OSError, MemoryError) as exc:
        return _fail(io.blame(exc, args, _source(args)))
    except ImportError as exc:
        return _fail(f"a module is missing: {exc}")
    except KeyboardInterrupt:
        print("dpcap: interrupted", file=sys.stderr)
        return 130
    if isinstance(out, int):  # dpcap sweep prints its own output
        return out
    status = 0
    if isinstance(out, tuple):  # the text and the exit status (an audit that skipped)
        out, status = out
    try:
        print(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `dpcap ... | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return status


def _source(args: argparse.Namespace) -> str:
    """What an error that names no option is about: the input file(s), or the demo's size."""
    if args.command == "demo":
        return f"--n {args.n}"
    if args.command == "exercises":
        return f"dpcap exercises {args.action}"
    files = getattr(args, "files", None) or [getattr(args, "file", None) or args.spec]
    return ", ".join(str(f) for f in files)


def _fail(message: str) -> int:
    print(f"dpcap: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
