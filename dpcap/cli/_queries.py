"""``dpcap renyi`` and ``delta``: profiles of one channel or mechanism over a grid of orders
or levels (the point queries are generated from the catalogue: :mod:`dpcap.cli._catalogue`).

Each command reads its file (:func:`dpcap.cli._read.read_input`), calls the library function of
the same name and renders its result: a table with units, or the result's ``to_dict()`` as
JSON. The option names are the library's argument names.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np

from dpcap.cli import _io as io
from dpcap.cli import _read as read
from dpcap.errors import DpcapError
from dpcap.neighbors import NEIGHBOR_NAMES, describe
from dpcap.privacy import dp_delta_curve, dp_epsilon, renyi_dp, tv_dp
from dpcap.renyi import renyi_profile

__all__ = ["DEFAULT_ALPHAS", "add_parsers", "plot_levels"]

#: The orders of the ``dpcap renyi`` table when ``--alpha`` is not given.
DEFAULT_ALPHAS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, math.inf)

FORMAT = io.Formatter
INPUT_HELP = io.INPUT_HELP
SHAPE_HELP = "database domain sizes, e.g. 2,2,2 (default: the file's, else one entry)"
NEIGHBORS_HELP = (
    "neighbour relation (default: the file's, else hamming: databases differing in one "
    "entry; on one entry every pair of rows)"
)


def add_parsers(sub: Any) -> None:
    """Add ``renyi`` and ``delta`` to the subparsers ``sub``."""
    cmd = sub.add_parser(
        "renyi",
        help="Renyi capacities C_alpha over alpha, and the Renyi DP levels",
        description="The alpha-profile of a channel: Sibson's Renyi capacity C_alpha "
        "(the Renyi radius, certified), the diameter max D_alpha(W_x || W_x') and the Renyi DP "
        "level max over neighbours of D_alpha (dpcap.renyi_profile, dpcap.renyi_dp). "
        "alpha = 1 is Shannon, alpha = inf the maximal leakage and the eps-DP level.",
        epilog="examples:\n  dpcap renyi bsc.csv --alpha 0.5,2,inf --unit bits\n"
        "  dpcap renyi bsc.csv --plot profile.png     (orders 0.05..50, log-spaced)",
        formatter_class=FORMAT,
    )
    cmd.add_argument("file", type=Path, help=INPUT_HELP)
    cmd.add_argument(
        "--alpha",
        type=io.numbers("orders", allow_inf=True),
        metavar="A1,A2,..",
        help="orders in [0, inf], e.g. 0.5,2,inf or 0.1:10:25 (default 0.5,1,2,4,8,16,inf)",
    )
    cmd.add_argument("--shape", type=io.integers(1), metavar="M1,M2,..", help=SHAPE_HELP)
    cmd.add_argument("--neighbors", choices=NEIGHBOR_NAMES, help=NEIGHBORS_HELP)
    io.add_solve_options(cmd, tol="default 1e-9, per order")
    io.add_normalize(cmd)
    io.add_output(cmd, plot="C_alpha over alpha", note="without --alpha, 50 orders from 0.05 to 50")
    cmd.set_defaults(run=run_renyi)

    cmd = sub.add_parser(
        "delta",
        help="the privacy profile eps -> delta(eps) of one or several mechanisms",
        description="delta(eps), the smallest delta for which each mechanism is "
        "(eps, delta)-DP, on a grid of eps (dpcap.dp_delta_curve), with the pure DP level "
        "and the total variation delta(0). eps is in nats; delta has no unit.",
        epilog="examples:\n  dpcap delta rr.csv --eps 0,0.5,1\n"
        "  dpcap delta rr.csv geometric.csv --neighbors line --plot profile.png",
        formatter_class=FORMAT,
    )
    cmd.add_argument("files", type=Path, nargs="+", metavar="file", help=INPUT_HELP)
    cmd.add_argument(
        "--eps",
        type=io.numbers("levels eps (nats)", allow_inf=True),
        metavar="E1,E2,..",
        help="levels eps >= 0 in nats, e.g. 0,0.5,1 or 0:2:9 (default 0,0.25,0.5,1,2)",
    )
    cmd.add_argument("--shape", type=io.integers(1), metavar="M1,M2,..", help=SHAPE_HELP)
    cmd.add_argument("--neighbors", choices=NEIGHBOR_NAMES, help=NEIGHBORS_HELP)
    cmd.add_argument("--logy", action="store_true", help="logarithmic delta axis in --plot")
    io.add_normalize(cmd)
    io.add_output(cmd, plot="the delta(eps) curves", note="without --eps, 101 levels")
    cmd.set_defaults(run=run_delta)


# --- the commands -------------------------------------------------------------------------


def run_renyi(args: argparse.Namespace) -> str:
    """``dpcap renyi``: the text or JSON to print; writes ``--plot``."""
    data = read.read_channel(args.file, args.normalize)
    mech = io.mechanism(data, args)
    options = io.given(args, "tol", "rtol", "max_iter", "unit")
    orders = list(args.alpha or DEFAULT_ALPHAS)
    profile = renyi_profile(data.matrix, orders, **options)
    # Renyi DP is a privacy level, (alpha, eps)-RDP with eps a log-likelihood bound: in nats,
    # like eps itself, whatever --unit says (at alpha = inf it is the eps-DP level).
    levels = [renyi_dp(mech, a) for a in orders]
    if args.plot is not None:
        from dpcap.plots import DEFAULT_ALPHAS as PLOT_ALPHAS
        from dpcap.plots import plot_renyi_profile

        drawn = profile if args.alpha else renyi_profile(data.matrix, PLOT_ALPHAS, **options)
        plot_renyi_profile(drawn, path=args.plot)
    relation = describe(mech.neighbors)
    if args.json:
        return io.dump(
            {
                "command": "renyi",
                "input": str(args.file),
                "neighbors": relation,
                "result": profile.to_dict(),
                "renyi_dp": levels,
                "renyi_dp_unit": "nats",
            }
        )
    unit = profile.unit
    rows = [
        [io.fmt(a), io.fmt(v), io.fmt(g, 3), io.fmt(d), io.fmt(r), str(s)]
        for a, v, g, d, r, s in zip(
            profile.alpha, profile.value, profile.gap, profile.diameter, levels, profile.status,
            strict=True,
        )
    ]  # fmt: skip
    return "\n".join(
        [
            f"dpcap renyi: {data.label} ({mech.n_inputs} inputs, {mech.n_outputs} outputs, "
            f"neighbours: {io.relation_text(mech.neighbors)})",
            io.table(
                [
                    "alpha",
                    f"C_alpha [{unit}]",
                    "gap",
                    f"diameter [{unit}]",
                    "Renyi DP [nats]",
                    "status",
                ],
                rows,
            ),
            "  C_alpha: Sibson's Renyi capacity (radius), certified; diameter: max over all "
            "pairs of rows of",
            "  D_alpha(W_x || W_x'); Renyi DP: the max over neighbours, in nats like eps. "
            "alpha = inf:",
            f"  C_alpha is the maximal leakage, Renyi DP the eps-DP level{io.saved(args)}",
        ]
    )


def run_delta(args: argparse.Namespace) -> str:
    """``dpcap delta``: the text or JSON to print; writes ``--plot``."""
    levels = list(args.eps or io.DEFAULT_EPS)
    found = []
    for path in args.files:
        data = read.read_channel(path, args.normalize)
        try:
            mech = io.mechanism(data, args)
            found.append((data, mech, dp_epsilon(mech), tv_dp(mech)))
        except read.UsageError:
            raise
        except (ValueError, DpcapError) as exc:  # name the file among several
            raise read.UsageError(io.blame(exc, args, str(path))) from exc
    curves = [dp_delta_curve(mech, levels) for _, mech, _, _ in found]
    labels = _labels([data for data, _, _, _ in found])
    if args.plot is not None:
        from dpcap.plots import plot_privacy_profile

        grid = levels if args.eps else plot_levels([eps for _, _, eps, _ in found])
        drawn = {
            label: (curve if args.eps else dp_delta_curve(mech, grid))
            for label, curve, (_, mech, _, _) in zip(labels, curves, found, strict=True)
        }
        plot_privacy_profile(grid, drawn, path=args.plot, logy=args.logy)
    if args.json:
        return io.dump(
            {
                "command": "delta",
                "eps": levels,
                "mechanisms": [
                    {
                        "input": str(data.path),
                        "neighbors": describe(mech.neighbors),
                        "dp_epsilon": eps,
                        "tv": tv,
                        "delta": curve.tolist(),
                    }
                    for (data, mech, eps, tv), curve in zip(found, curves, strict=True)
                ],
            }
        )
    lines = ["dpcap delta: delta(eps), the smallest delta for (eps, delta)-DP (eps in nats)"]
    for label, (_, mech, eps, tv) in zip(labels, found, strict=True):
        pure = "no finite eps" if math.isinf(eps) else f"eps = {io.fmt(eps)} nats"
        lines.append(
            f"  {label}: domain shape {io.shape_text(mech.shape)}, {mech.n_outputs} outputs, "
            "neighbours: "
            f"{io.relation_text(mech.neighbors)}; pure DP {pure}; delta(0) = TV = {io.fmt(tv)}"
        )
    rows = [[io.fmt(e), *(io.fmt(c[k]) for c in curves)] for k, e in enumerate(levels)]
    lines.append(io.table(["eps [nats]", *(f"delta ({label})" for label in labels)], rows))
    return "\n".join(lines) + io.saved(args)


# --- shared -------------------------------------------------------------------------------


def plot_levels(pure: list[float], count: int = 101) -> list[float]:
    """A grid of ε for a δ(ε) figure: from 0 past the largest finite pure-DP level."""
    finite = [e for e in pure if math.isfinite(e) and e > 0]
    top = 1.25 * max(finite) if finite else 4.0
    return [float(e) for e in np.linspace(0.0, top, count)]


def _labels(found: list[read.Data]) -> list[str]:
    labels = [data.label for data in found]
    if len(set(labels)) < len(labels):  # the same name twice: use the paths
        labels = [str(data.path) for data in found]
    return labels


def _bracket(res: Any, what: str) -> str:
    return (
        f"{io.fmt(res.lower, 12)} <= {what} <= {io.fmt(res.upper, 12)} {res.unit} "
        f"(gap {io.fmt(res.gap, 3)} {res.unit}, tol {io.fmt(res.tol, 3)} nats)"
    )
