"""``dpcap exercises``: list the exercise families, show a variant, build a problem set for a
roster, and check an answer (:mod:`dpcap.exercises`)."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from dpcap.cli import _io as io
from dpcap.errors import ParameterError
from dpcap.exercises import FAMILIES, LEVELS, make, names
from dpcap.exercises.notebooks import build, read_roster

DESCRIPTION = """\
Exercise sets for a course on information-theoretic privacy. Every family draws a variant per
student from SHA-256 of (course, assignment, student): the same key gives the same exercise on
every machine. A variant has a prompt, data, a reference answer computed by dpcap with its
certified bracket and unit, hints, a worked solution, and a check that accepts the bracket
widened by a stated tolerance and names the classic mistakes (bits for nats, a transposed
matrix, e^eps for eps, the wrong neighbour relation, a prior that does not sum to 1).
"""

EPILOG = """\
examples:
  dpcap exercises list
  dpcap exercises show renyi --student s001 --course "IT privacy" --assignment hw2
  dpcap exercises build --roster roster.csv --out sheets --course "IT privacy" --assignment hw2
  dpcap exercises check binary_capacity 0.531 --student s001 --course "IT privacy" --assignment hw2
"""


def _key(cmd: argparse.ArgumentParser, *, level: bool = True) -> None:
    cmd.add_argument("--course", default="dpcap", help="course name, part of the variant's key")
    cmd.add_argument("--assignment", default="", help="assignment name (default empty)")
    cmd.add_argument("--student", default="", help="student id (default empty)")
    if level:
        cmd.add_argument(
            "--level", choices=LEVELS, default=None, help="by_hand (default) or with_dpcap"
        )


def add_parser(sub: Any) -> None:
    """Register ``dpcap exercises`` and its actions."""
    cmd = sub.add_parser(
        "exercises",
        help="exercise sets with per-student variants, checked answers and notebooks",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=io.Formatter,
    )
    actions = cmd.add_subparsers(dest="action", required=True, title="actions")

    act = actions.add_parser("list", help="the exercise families", formatter_class=io.Formatter)
    act.add_argument("--json", action="store_true", help="print JSON")
    act.set_defaults(run=_list)

    act = actions.add_parser(
        "show",
        help="one student's variant of a family (prompt, data; --key adds the answer key)",
        formatter_class=io.Formatter,
    )
    act.add_argument("family", help="a family (dpcap exercises list)")
    _key(act)
    act.add_argument("--key", action="store_true", help="add the reference answer and solution")
    act.add_argument("--json", action="store_true", help="print JSON")
    act.set_defaults(run=_show)

    act = actions.add_parser(
        "build",
        help="notebooks for every student of a roster, and an answer key",
        description="Write OUT/release/STUDENT/ASSIGNMENT.ipynb (the students' notebooks), "
        "OUT/key/STUDENT/ASSIGNMENT.ipynb (nbgrader source notebooks with the solutions) and "
        "OUT/key/answers.csv (reference values, brackets, units). Needs nbformat.",
        formatter_class=io.Formatter,
    )
    act.add_argument("--roster", type=Path, required=True, help="CSV with a column id")
    act.add_argument("--out", type=Path, required=True, help="output folder")
    act.add_argument("--course", required=True, help="course name, part of every key")
    act.add_argument("--assignment", required=True, help="assignment name (names the files)")
    act.add_argument(
        "--families", metavar="F1,F2,..", default=None, help="families (default: all, in order)"
    )
    act.add_argument("--level", choices=LEVELS, default="by_hand", help="default by_hand")
    act.set_defaults(run=_build)

    act = actions.add_parser(
        "check",
        help="check an answer (exit status 0 if accepted, 1 if not)",
        formatter_class=io.Formatter,
    )
    act.add_argument("family", help="a family (dpcap exercises list)")
    act.add_argument(
        "answer",
        help="a number, or a JSON array for a matrix or a prior, e.g. [[0.8,0.2],[0.1,0.9]]",
    )
    _key(act)
    act.set_defaults(run=_check)


def _level(args: argparse.Namespace) -> str:
    if args.level is not None:
        return str(args.level)
    levels = FAMILIES[args.family].levels if args.family in FAMILIES else LEVELS
    return levels[0]


def _list(args: argparse.Namespace) -> str:
    rows = [
        {
            "family": f.name,
            "title": f.title,
            "topic": f.topic,
            "levels": list(f.levels),
            "answer": f.answer_kind,
        }
        for f in FAMILIES.values()
    ]
    if args.json:
        return io.dump(rows)
    width = max(len(r["family"]) for r in rows)
    lines = [f"{'family':<{width}}  {'answer':<6}  {'levels':<19}  title"]
    lines += [
        f"{r['family']:<{width}}  {r['answer']:<6}  {','.join(r['levels']):<19}  {r['title']}"
        for r in rows
    ]
    return "\n".join(lines)


def _exercise(args: argparse.Namespace) -> Any:
    return make(
        args.family,
        level=_level(args),
        course=args.course,
        assignment=args.assignment,
        student=args.student,
    )


def _show(args: argparse.Namespace) -> str:
    ex = _exercise(args)
    if args.json:
        return io.dump(ex.to_dict(key=args.key))
    parts = [
        f"# {ex.title}  ({ex.family}, {ex.level})",
        ex.prompt,
        f"Tolerance: {ex.tolerance_text}.",
        "Data:\n" + textwrap.indent(ex.data_code(), "    "),
        "Hints:\n" + "\n".join(f"  - {h}" for h in ex.hints),
    ]
    if args.key:
        ref = ex.reference
        unit = f" {ref.unit}" if ref.unit else ""
        if ex.answer_kind == "number":
            answer = f"{ref.value!r}{unit}  [certified: {ref.lower!r} <= . <= {ref.upper!r}]"
        else:
            answer = json.dumps(np.asarray(ref.value).tolist())
        parts += [
            f"Answer key ({ref.quantity}, {ref.method}): {answer}",
            "Worked solution:\n" + ex.solution,
            "Code:\n" + textwrap.indent(ex.code, "    "),
        ]
    return "\n\n".join(parts)


def _build(args: argparse.Namespace) -> str:
    students = read_roster(args.roster)
    chosen = names() if args.families is None else [f.strip() for f in args.families.split(",")]
    written = build(
        students,
        out=args.out,
        course=args.course,
        assignment=args.assignment,
        families=chosen,
        level=args.level,
    )
    return (
        f"dpcap exercises: {len(students)} students x {len(chosen)} exercises; wrote "
        f"{len(written) - 1} notebooks and {written[-1]}"
    )


def _answer(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise ParameterError(f"answer must be a number or a JSON array, got {text!r}") from None
    try:
        if isinstance(value, list):
            return np.asarray(value, dtype=np.float64)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    except (TypeError, ValueError, OverflowError):  # ragged, non-numeric or beyond the doubles
        pass
    raise ParameterError(
        f"answer must be a number or a rectangular JSON array of numbers, got {text!r}"
    )


def _check(args: argparse.Namespace) -> int:
    ex = _exercise(args)
    feedback = ex.check(_answer(args.answer))
    print(feedback.message)
    return 0 if feedback.correct else 1
