"""``dpcap compose``: certified δ(ε), ε(δ) and trade-off curves of mechanisms released together.

Each part is a channel file, optionally followed by ``:K`` for ``K`` releases; the parts act on
one database (same rows, same neighbour relation). The library functions are
:func:`dpcap.composed_delta_curve`, :func:`dpcap.composed_epsilon` and
:func:`dpcap.tradeoff_curve`; every number printed is a bracket.
"""

from __future__ import annotations

import argparse
import re
import warnings
from pathlib import Path
from typing import Any

from dpcap.accounting import composed_delta_curve, composed_epsilon, tradeoff_curve
from dpcap.cli import _io as io
from dpcap.cli import _read as read
from dpcap.cli._queries import plot_levels
from dpcap.errors import ConvergenceWarning, DpcapError
from dpcap.neighbors import NEIGHBOR_NAMES
from dpcap.privacy import dp_epsilon

__all__ = ["add_parser"]

#: Most releases one part may name on the command line.
MAX_COUNT = 10**6
_PART = re.compile(r"^(?P<path>.+?):(?P<count>[0-9]+)$")


def _part(text: str) -> tuple[Path, int]:
    """``FILE`` or ``FILE:K``."""
    match = _PART.match(text)
    if match is None:
        return Path(text), 1
    count = int(match["count"])
    if not 1 <= count <= MAX_COUNT:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the count after ':' must be an integer in [1, {MAX_COUNT}]"
        )
    return Path(match["path"]), count


def add_parser(sub: Any) -> None:
    """Add ``compose`` to the subparsers ``sub``."""
    cmd = sub.add_parser(
        "compose",
        help="certified delta(eps), eps(delta) and trade-off curves of a composition",
        description="Mechanisms released together on one database (non-adaptive "
        "composition): delta(eps) at each --eps, eps(delta) at each --delta and the f-DP "
        "trade-off beta(alpha) at each --alpha, each as a certified bracket [lower, upper], "
        "maximised over the true neighbour pairs (dpcap.composed_delta_curve, "
        "dpcap.composed_epsilon, dpcap.tradeoff_curve). A part FILE:K is released K times.",
        epilog="examples:\n  dpcap compose rr.csv:100 --delta 1e-6\n"
        "  dpcap compose rr.csv:10 geometric.csv:5 --eps 0:5:11 --plot delta.png\n"
        "  dpcap compose rr.csv:10 --alpha 0:1:11 --json",
        formatter_class=io.Formatter,
    )
    cmd.add_argument(
        "parts", type=_part, nargs="+", metavar="FILE[:K]", help="a channel file, K releases"
    )
    cmd.add_argument(
        "--eps",
        type=io.numbers("levels eps (nats)"),
        metavar="E1,E2,..",
        help="levels eps >= 0 in nats for delta(eps), e.g. 0,1,2 or 0:10:21 "
        "(default 0,0.25,0.5,1,2 unless --delta or --alpha is given)",
    )
    cmd.add_argument(
        "--delta",
        type=io.numbers("delta"),
        metavar="D1,D2,..",
        help="values of delta in [0, 1] for eps(delta)",
    )
    cmd.add_argument(
        "--alpha",
        type=io.numbers("type-I errors alpha"),
        metavar="A1,A2,..",
        help="type-I errors in [0, 1] for the trade-off curve beta(alpha)",
    )
    cmd.add_argument("--neighbors", choices=NEIGHBOR_NAMES, help="neighbour relation")
    cmd.add_argument("--logy", action="store_true", help="logarithmic delta axis in --plot")
    io.add_normalize(cmd)
    io.add_output(
        cmd,
        plot="the delta(eps) bracket",
        note="without --eps, 101 levels up to the composed pure-DP level",
    )
    cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> str:
    """``dpcap compose``: the text or JSON to print; writes ``--plot``."""
    parts = []
    labels = []
    for path, count in args.parts:
        data = read.read_channel(path, args.normalize)
        try:
            mech = io.mechanism(data, args)
        except (ValueError, DpcapError) as exc:
            raise read.UsageError(io.blame(exc, args, str(path))) from exc
        parts.append((mech, count))
        labels.append(f"{data.label} x{count}")
    eps = args.eps
    if eps is None and args.delta is None and args.alpha is None:
        eps = list(io.DEFAULT_EPS)
    neighbors = args.neighbors
    out: dict[str, Any] = {"command": "compose", "parts": labels}
    lines = [f"dpcap compose: {' + '.join(labels)} (non-adaptive, on one database)"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            if eps is not None:
                curve = composed_delta_curve(parts, eps, neighbors=neighbors)
                out["delta"] = curve.to_dict()
                rows = [
                    [io.fmt(e), io.fmt(lo, 12), io.fmt(hi, 12), str(tuple(map(int, p)))]
                    for e, lo, hi, p in zip(
                        curve.eps, curve.lower, curve.upper, curve.pair, strict=True
                    )
                ]
                lines.append(f"  delta(eps), {curve.method}, {curve.folds} releases:")
                lines.append(io.table(["eps [nats]", "lower", "upper", "worst pair"], rows))
            if args.plot is not None:
                drawn = curve if args.eps is not None else _fine(parts, neighbors)
                _plot(args, drawn, " + ".join(labels))
            for d in args.delta or []:
                r = composed_epsilon(parts, d, neighbors=neighbors)
                out.setdefault("epsilon", []).append(r.to_dict())
                lines.append(
                    f"  eps(delta = {io.fmt(d)}): {io.fmt(r.lower, 12)} <= eps <= "
                    f"{io.fmt(r.upper, 12)} nats, worst pair {r.pair}, {r.status}"
                )
            if args.alpha is not None:
                t = tradeoff_curve(parts, args.alpha, neighbors=neighbors)
                out["tradeoff"] = t.to_dict()
                rows = [
                    [io.fmt(a), io.fmt(lo, 12), io.fmt(hi, 12)]
                    for a, lo, hi in zip(t.alpha, t.lower, t.upper, strict=True)
                ]
                lines.append(f"  trade-off beta(alpha) (f-DP), advantage <= {io.fmt(t.advantage)}:")
                lines.append(io.table(["alpha", "beta lower", "beta upper"], rows))
        except (ValueError, DpcapError) as exc:
            raise read.UsageError(f"dpcap compose: {exc}") from exc
    notes = sorted({str(w.message) for w in caught})
    lines += [f"  note: {n}" for n in notes]
    if args.json:
        return io.dump(out)
    return "\n".join(lines) + io.saved(args)


def _fine(parts: list[tuple[Any, int]], neighbors: Any) -> Any:
    """δ(ε) on 101 levels from 0 past the composed pure-DP level (for a figure)."""
    top = sum(count * dp_epsilon(mech, neighbors=neighbors) for mech, count in parts)
    grid = plot_levels([top])
    return composed_delta_curve(parts, grid, neighbors=neighbors)


def _plot(args: argparse.Namespace, curve: Any, label: str) -> None:
    from dpcap.plots import plot_privacy_profile

    drawn = {f"{label}, upper end": curve.upper, f"{label}, lower end": curve.lower}
    plot_privacy_profile(curve.eps, drawn, path=args.plot, logy=args.logy)
