"""``dpcap rd``, ``pd`` and ``funnel``: the trade-off curves between leakage and utility.

``rd`` is Mir's risk–distortion ``R(D)`` (:func:`dpcap.rate_distortion_curve`), ``pd`` the
Wang–Ying–Zhang privacy–distortion ``ε*(D)`` (:func:`dpcap.privacy_distortion_curve`),
``funnel`` the privacy funnel and the information bottleneck of Hsu et al. §III-B
(:func:`dpcap.privacy_funnel_curve`, :func:`dpcap.information_bottleneck_curve`). Each takes
a whole curve by default, or the points given by ``--D`` / ``--R``, returned as a curve of
the library's own type so that the JSON and the figure have one layout.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from dpcap._core import validation as check
from dpcap.cli import _io as io
from dpcap.cli import _read as read
from dpcap.measures import entropy, mutual_information
from dpcap.neighbors import NEIGHBOR_NAMES
from dpcap.result import CurveResult, FunnelCurve, curve_arrays
from dpcap.solvers.status import LP_SOLVERS
from dpcap.tradeoffs.epsilon_distortion import privacy_distortion_curve
from dpcap.tradeoffs.funnel import METHODS as FUNNEL_METHODS
from dpcap.tradeoffs.funnel import (
    information_bottleneck,
    information_bottleneck_curve,
    privacy_funnel,
    privacy_funnel_curve,
)
from dpcap.tradeoffs.risk_distortion import rate_distortion, rate_distortion_curve

__all__ = ["add_parsers"]

FORMAT = io.Formatter
DISTORTION_HELP = (
    "distortion matrix d[x, y] (rows: inputs, columns: outputs): .npy, .csv/.tsv/.txt or .json"
)
PRIOR_HELP = "the input law: comma-separated probabilities or a file (default: uniform)"
PROBLEMS = {"pf": "privacy_funnel", "ib": "information_bottleneck"}
DEFINITIONS = {
    "pf": "PF(R) = min I(S;Y) s.t. I(X;Y) >= R (privacy funnel)",
    "ib": "IB(R) = max I(S;Y) s.t. I(X;Y) <= R (information bottleneck)",
}


def add_parsers(sub: Any) -> None:
    """Add ``rd``, ``pd`` and ``funnel`` to the subparsers ``sub``."""
    cmd = sub.add_parser(
        "rd",
        help="risk-distortion R(D) = min I(X;Y) s.t. E d <= D (Mir)",
        description="Mir's risk-distortion function R(D) = min I(X;Y) over mechanisms with "
        "expected distortion E d(X,Y) <= D, certified; its optimiser is the exponential "
        "mechanism of slope s = -dR/dD (Mir, Thm 3-4). The whole curve by default "
        "(dpcap.rate_distortion_curve), or the budgets given by --D (dpcap.rate_distortion).",
        epilog="examples:\n  dpcap rd hamming.csv --prior 0.3,0.7 --unit bits\n"
        "  dpcap rd d.json --D 0.05,0.1,0.2 --plot rd.png",
        formatter_class=FORMAT,
    )
    cmd.add_argument("file", type=Path, help=DISTORTION_HELP)
    cmd.add_argument("--prior", metavar="P1,P2,..|FILE", help=PRIOR_HELP)
    io.add_points(
        cmd,
        "--D",
        "budgets D",
        "distortion budgets, e.g. 0.1,0.2 or 0:0.5:6",
        least=2,
        count="points of the curve (default 25)",
    )
    io.add_solve_options(cmd, tol="default 1e-9, per point")
    io.add_output(cmd, plot="R(D) with tangent lines")
    cmd.set_defaults(run=run_rd)

    cmd = sub.add_parser(
        "pd",
        help="privacy-distortion eps*(D): the least eps-DP level within budget D",
        description="Wang-Ying-Zhang's privacy-distortion function eps*(D), the least eps "
        "for which an eps-DP mechanism has expected distortion <= D, with a certified bracket "
        "and the mechanism (dpcap.privacy_distortion_curve). eps is in nats (never converted).",
        epilog="examples:\n  dpcap pd hamming4.csv --shape 2,2 --D 0.1,0.5,0.9\n"
        "  dpcap pd d.csv --neighbors line --n-points 12 --plot pd.png",
        formatter_class=FORMAT,
    )
    cmd.add_argument("file", type=Path, help=DISTORTION_HELP.replace("inputs", "databases"))
    cmd.add_argument(
        "--prior", metavar="P1,P2,..|FILE", help=PRIOR_HELP.replace("input", "database")
    )
    cmd.add_argument(
        "--shape",
        type=io.integers(1),
        metavar="M1,M2,..",
        help="database domain sizes, e.g. 2,2 (default: the file's, else one entry)",
    )
    cmd.add_argument(
        "--neighbors", choices=NEIGHBOR_NAMES, help="neighbour relation (default hamming)"
    )
    io.add_points(
        cmd,
        "--D",
        "budgets D",
        "distortion budgets >= d_min",
        least=1,
        count="budgets spread over (d_min, d*(0)] (default 16)",
    )
    cmd.add_argument("--solver", help=f"LP solver: one of {', '.join(LP_SOLVERS)} (default first)")
    io.add_solve_options(cmd, tol="width of the bracket on eps*, default 1e-9", max_iter=False)
    io.add_output(cmd, plot="eps*(D)")
    cmd.set_defaults(run=run_pd)

    cmd = sub.add_parser(
        "funnel",
        help="privacy funnel PF(R) and information bottleneck IB(R) (Hsu et al.)",
        description="For a Markov chain S - X - Y: the privacy funnel PF(R) = min I(S;Y) s.t. "
        "I(X;Y) >= R and the information bottleneck IB(R) = max I(S;Y) s.t. I(X;Y) <= R, "
        "R in [0, H(X)] (Hsu et al. III-B). The file is the joint law P(S=s, X=x) (rows s); "
        "with --prior (the law of S) it is the channel P(X=x | S=s) instead.",
        epilog="examples:\n  dpcap funnel dsbs.csv --unit bits --plot region.png\n"
        "  dpcap funnel channel.csv --prior 0.5,0.5 --problem ib --R 0.1,0.3",
        formatter_class=FORMAT,
    )
    cmd.add_argument("file", type=Path, help="joint law P(S, X), or channel P(X | S) with --prior")
    cmd.add_argument(
        "--prior", metavar="P1,P2,..|FILE", help="law of S: the file is then the channel P(X | S)"
    )
    cmd.add_argument(
        "--problem",
        choices=("pf", "ib", "both"),
        default="both",
        help="privacy funnel, information bottleneck, or both (default)",
    )
    io.add_points(
        cmd,
        "--R",
        "utilities R",
        "utilities in [0, H(X)], in --unit",
        least=2,
        count="points per curve (default 25)",
    )
    cmd.add_argument("--method", choices=FUNNEL_METHODS, help=f"default {FUNNEL_METHODS[0]}")
    cmd.add_argument(
        "--seed", type=io.integer(0), metavar="N", help="seed of the local method (default 0)"
    )
    io.add_solve_options(cmd, tol="default 1e-7, per point")
    io.add_output(cmd, plot="the achievable region between PF and IB", note="needs --problem both")
    cmd.set_defaults(run=run_funnel)


# --- the commands -------------------------------------------------------------------------


def run_rd(args: argparse.Namespace) -> str:
    """``dpcap rd``: the text or JSON to print; writes ``--plot``."""
    data = read.read_input(args.file)
    prior = _prior(data, args)
    options = io.given(args, "tol", "rtol", "max_iter", "unit")
    if args.D is None:
        curve = rate_distortion_curve(prior, data.matrix, **io.given(args, "n_points"), **options)
    else:
        points = tuple(rate_distortion(prior, data.matrix, D, **options) for D in args.D)
        curve = CurveResult(
            D=np.array(args.D, dtype=np.float64),
            **_as_curve(points, f"R(D) at the {len(points)} budgets of --D"),
        )
    if args.plot is not None:
        from dpcap.plots import plot_rate_distortion

        plot_rate_distortion(curve, path=args.plot)
    if args.json:
        return _json("rd", args, curve, prior)
    unit = curve.unit
    numbers = [
        (p.target, p.value, p.lower, p.slope, p.dp_level, p.distortion_achieved) for p in curve
    ]
    rows = [[*map(io.fmt, row), str(p.status)] for row, p in zip(numbers, curve, strict=True)]
    headers = ["D", f"R(D) [{unit}]", f"lower [{unit}]", "slope s [nats/d]", "eps [nats]"]
    return "\n".join(
        [
            f"dpcap rd: {data.label} ({len(prior)} inputs, {data.matrix.shape[1]} outputs), "
            f"prior {io.vector(prior)}",
            "  risk-distortion R(D) = min I(X;Y) s.t. E d(X,Y) <= D (Mir, Thm 3); the optimal "
            "mechanism is",
            "  exponential, W[x,y] ~ q_y exp(-s d(x,y)), with slope s = -dR/dD; eps is its "
            "eps-DP level over all pairs",
            io.table([*headers, "E d achieved", "status"], rows),
        ]
    ) + io.saved(args)


def run_pd(args: argparse.Namespace) -> str:
    """``dpcap pd``: the text or JSON to print; writes ``--plot``."""
    data = read.read_input(args.file)
    shape = args.shape or data.shape
    neighbors = args.neighbors if args.neighbors is not None else data.neighbors
    prior = _prior(data, args)
    if shape is not None:
        io.check_shape(shape, len(prior), data, args)
    options = io.given(args, "n_points", "solver", "tol", "rtol")
    if neighbors is not None:
        options["neighbors"] = neighbors
    curve = privacy_distortion_curve(prior, data.matrix, args.D, shape=shape, **options)
    if args.plot is not None:
        from dpcap.plots import plot_privacy_distortion

        plot_privacy_distortion(curve, path=args.plot)
    if args.json:
        return _json("pd", args, curve, prior)
    rows = [
        [*map(io.fmt, (p.target, p.value, p.lower, p.distortion_achieved)), str(p.status)]
        for p in curve
    ]
    described = f"domain shape {io.shape_text(shape)}" if shape else f"{len(prior)} databases"
    relation = io.relation_text("hamming" if neighbors is None else neighbors)
    return "\n".join(
        [
            f"dpcap pd: {data.label} ({described}, {data.matrix.shape[1]} outputs, neighbours: "
            f"{relation}), prior {io.vector(prior)}",
            "  privacy-distortion eps*(D) = min eps s.t. an eps-DP mechanism has E d <= D "
            "(Wang-Ying-Zhang)",
            io.table(["D", "eps*(D) [nats]", "lower [nats]", "E d achieved", "status"], rows),
            "  eps is a bound on a natural-log likelihood ratio: always in nats",
        ]
    ) + io.saved(args)


def run_funnel(args: argparse.Namespace) -> str:
    """``dpcap funnel``: the text or JSON to print; writes ``--plot``."""
    if args.plot is not None and args.problem != "both":
        raise read.UsageError(
            f"--plot {args.plot}: the region needs both curves; drop --problem {args.problem}"
        )
    data = read.read_input(args.file)
    joint = _joint(data, args)
    options = io.given(args, "method", "tol", "rtol", "max_iter", "unit", "seed")
    kinds = ["pf", "ib"] if args.problem == "both" else [args.problem]
    curves = {kind: _funnel(kind, joint, args, options) for kind in kinds}
    if args.plot is not None:
        from dpcap.plots import plot_privacy_region

        plot_privacy_region(curves["pf"], curves["ib"], path=args.plot)
    unit = args.unit
    p_s, p_x = joint.sum(axis=1), joint.sum(axis=0)
    h_x = entropy(p_x, unit=unit)
    i_sx = mutual_information(p_s, _conditional(joint, p_s), unit=unit)
    if args.json:
        out = {
            "command": "funnel",
            "input": str(args.file),
            "joint": joint.tolist(),
            "H(X)": h_x,
            "I(S;X)": i_sx,
        }
        out.update({PROBLEMS[kind]: curve.to_dict() for kind, curve in curves.items()})
        return io.dump(out)
    # the achieved value (PF: upper, IB: lower) and the certified other end of the bracket
    columns = {"pf": ("PF(R)", "PF lower", "lower"), "ib": ("IB(R)", "IB upper", "upper")}
    headers = [f"R [{unit}]"]
    for kind in curves:
        name, bound, _ = columns[kind]
        headers += [f"{name} [{unit}]", f"{bound} [{unit}]", f"{name[:2]} status"]
    first = next(iter(curves.values()))
    rows = []
    for k, R in enumerate(first.R):
        row = [io.fmt(R)]
        for kind, curve in curves.items():
            end = getattr(curve, columns[kind][2])[k]
            row += [io.fmt(curve.value[k]), io.fmt(end), str(curve.status[k])]
        rows.append(row)
    return "\n".join(
        [
            f"dpcap funnel: {data.label} (S: {joint.shape[0]} values, X: {joint.shape[1]} values; "
            f"H(X) = {io.fmt(h_x)} {unit}, I(S;X) = {io.fmt(i_sx)} {unit})",
            "  " + "; ".join(DEFINITIONS[kind] for kind in curves),
            io.table(headers, rows),
        ]
    ) + io.saved(args)


# --- shared -------------------------------------------------------------------------------


def _prior(data: read.Data, args: argparse.Namespace) -> Any:
    """``--prior``, else the file's ``prior``, else uniform over the rows."""
    rows = data.matrix.shape[0] if data.matrix.ndim == 2 else 0
    if args.prior is not None:
        return read.read_prior(args.prior, rows)
    if data.prior is not None:
        if data.prior.shape != (rows,):
            raise read.UsageError(
                f'{data.path}: "prior" must have {rows} entries (one per row), got shape '
                f"{data.prior.shape}"
            )
        return check.distribution(data.prior, f'{data.path}: "prior"')
    if rows == 0:
        raise read.UsageError(
            f"{data.path}: expected a 2-D matrix d[x, y], got an array of shape {data.matrix.shape}"
        )
    return np.full(rows, 1.0 / rows)


def _joint(data: read.Data, args: argparse.Namespace) -> Any:
    """The joint law P(S, X): the file's, or ``prior[s] * channel[s, x]`` with a prior."""
    if args.prior is None and data.prior is None:
        matrix = check.real_array(data.matrix, str(data.path))
        total = float(matrix.sum()) if matrix.size else 0.0
        if matrix.ndim == 2 and abs(total - 1.0) > check.SUM_ATOL:
            raise read.UsageError(
                f"{data.path}: the entries sum to {total:.12g}, not 1: a joint law P(S, X) is "
                "expected (for a channel P(X | S), give --prior)"
            )
        return data.matrix
    if data.key == "joint":
        raise read.UsageError(
            f'{data.path}: "joint" is a joint law, which takes no prior; use "matrix" for the '
            "channel P(X | S)"
        )
    channel = check.stochastic_matrix(data.matrix, str(data.path))
    return _prior(data, args)[:, None] * channel


def _conditional(joint: Any, p_s: Any) -> Any:
    """``P(X | S)`` (rows of S with no mass: uniform, they carry no information)."""
    out = np.full(joint.shape, 1.0 / joint.shape[1])
    mass = p_s > 0
    out[mass] = joint[mass] / p_s[mass, None]
    return out


def _funnel(kind: str, joint: Any, args: argparse.Namespace, options: dict[str, Any]) -> Any:
    if args.R is None:
        solve_curve = privacy_funnel_curve if kind == "pf" else information_bottleneck_curve
        return solve_curve(joint, **io.given(args, "n_points"), **options)
    solve = privacy_funnel if kind == "pf" else information_bottleneck
    points = tuple(solve(joint, R, **options) for R in args.R)
    return FunnelCurve(
        R=np.array(args.R, dtype=np.float64),
        utility=np.array([p.utility_achieved for p in points]),
        leakage=np.array([p.leakage_achieved for p in points]),
        problem=PROBLEMS[kind],
        **_as_curve(points, f"{PROBLEMS[kind]} at the {len(points)} levels of --R"),
    )


def _as_curve(points: tuple[Any, ...], what: str) -> dict[str, Any]:
    """The fields a curve of the points given on the command line shares with its points."""
    first = points[0]
    return {
        "points": points,
        "method": first.method,
        "unit": first.unit,
        "message": f"{what}; see each point's message",
        "tol": first.tol,
        **curve_arrays(points),
    }


def _json(command: str, args: argparse.Namespace, curve: Any, prior: Any) -> str:
    return io.dump(
        {
            "command": command,
            "input": str(args.file),
            "prior": np.asarray(prior).tolist(),
            "result": curve.to_dict(),
        }
    )
