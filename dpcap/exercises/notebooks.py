"""Problem sets as Jupyter notebooks with nbgrader-compatible metadata, and an answer key.

:func:`notebook` turns exercises into one notebook (``nbformat`` v4): per question a locked
Markdown prompt, a locked data cell, an answer cell (an nbgrader *solution* cell: ``answer =
...`` for the student, the worked dpcap solution between ``### BEGIN SOLUTION`` / ``### END
SOLUTION`` in the key) and an autograded test cell (nbgrader ``grade: true`` with points) that
rebuilds the exercise from its key and asserts :meth:`~dpcap.exercises.Exercise.check`. The key
notebook is an nbgrader *source* notebook; the student one is what ``nbgrader
generate_assignment`` would release.

:func:`build` writes a problem set for a roster: ``OUT/release/STUDENT/ASSIGNMENT.ipynb``,
``OUT/key/STUDENT/ASSIGNMENT.ipynb`` and ``OUT/key/answers.csv`` (one row per student and
question: the reference value, its certified bracket, unit and tolerance).

The test cell rebuilds the exercise from (course, assignment, student): a student with dpcap
installed could do the same and read the key. For graded work keep the ``course`` string
secret (it salts every variant) and run the tests with nbgrader's autograder, which restores
locked cells; for formative feedback none of this matters.

``nbformat`` is imported when a notebook is built (``pip install nbformat``, or the ``teach``
extra), never by ``import dpcap``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcap.errors import ParameterError
from dpcap.exercises.core import Exercise
from dpcap.exercises.registry import family, make

__all__ = ["SETUP", "build", "notebook", "read_roster"]

#: The first code cell of every notebook.
SETUP = "import math\n\nimport numpy as np\n\nimport dpcap"

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,99}$")

KIND_STUB = {
    "number": "answer = ...  # YOUR ANSWER HERE: one number",
    "matrix": "answer = ...  # YOUR ANSWER HERE: a 2-D NumPy array, rows are inputs",
    "prior": "answer = ...  # YOUR ANSWER HERE: a 1-D NumPy array summing to 1",
}


def _nbformat() -> Any:
    try:
        import nbformat
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "building notebooks needs nbformat: pip install nbformat (or dpcap[teach])"
        ) from exc
    return nbformat


def _meta(
    grade_id: str, *, solution: bool, grade: bool, locked: bool, points: int = 0
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        out["points"] = points
    return {"nbgrader": out}


def _call(ex: Exercise, course: str, assignment: str, student: str) -> str:
    args = ", ".join(
        f"{k}={v!r}"
        for k, v in (
            ("level", ex.level),
            ("course", course),
            ("assignment", assignment),
            ("student", student),
        )
    )
    return f"make({ex.family!r}, {args})"


def notebook(
    exercises: Sequence[Exercise],
    /,
    *,
    course: str,
    assignment: str,
    student: str,
    key: bool = False,
    title: str | None = None,
    points: int = 1,
) -> Any:
    """One notebook (an ``nbformat.NotebookNode``) of ``exercises`` for ``student``.

    The exercises must be those :func:`~dpcap.exercises.make` draws for this (course,
    assignment, student): the test cells rebuild them from that key. ``key=True`` writes the
    worked solutions into the answer cells (an nbgrader source notebook).
    """
    nbf = _nbformat()
    v4 = nbf.v4
    heading = title or f"{assignment}"
    cells = [
        v4.new_markdown_cell(
            f"# {heading}\n\nStudent: `{student}` · course: {course}\n\n"
            "Run the cells in order. Write each answer in the cell that says `answer = ...`; "
            "the cell after it checks your answer and tells you what to fix. A channel is "
            "$W[x, y] = P(Y = y \\mid X = x)$: **rows are inputs**. Information is in the unit "
            "each question asks for; ε is in nats.",
            metadata=_meta("header", solution=False, grade=False, locked=True),
        ),
        v4.new_code_cell(
            SETUP + "\nfrom dpcap.exercises import make",
            metadata=_meta("setup", solution=False, grade=False, locked=True),
        ),
    ]
    for i, ex in enumerate(exercises, start=1):
        stem = f"q{i}-{ex.family}"
        cells.append(
            v4.new_markdown_cell(
                f"## {i}. {ex.title}\n\n{ex.prompt}\n\n*Tolerance: {ex.tolerance_text}.*",
                metadata=_meta(f"{stem}-prompt", solution=False, grade=False, locked=True),
            )
        )
        cells.append(
            v4.new_code_cell(
                "# The data of your variant (do not edit)\n" + ex.data_code(),
                metadata=_meta(f"{stem}-data", solution=False, grade=False, locked=True),
            )
        )
        body = (
            f"### BEGIN SOLUTION\n{ex.code}\n### END SOLUTION" if key else KIND_STUB[ex.answer_kind]
        )
        cells.append(
            v4.new_code_cell(
                body, metadata=_meta(f"{stem}-answer", solution=True, grade=False, locked=False)
            )
        )
        cells.append(
            v4.new_code_cell(
                f"feedback = {_call(ex, course, assignment, student)}.check(answer)\n"
                "print(feedback)\n"
                "assert feedback.correct, feedback.message",
                metadata=_meta(
                    f"{stem}-test", solution=False, grade=True, locked=True, points=points
                ),
            )
        )
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["dpcap"] = {"course": course, "assignment": assignment, "student": student}
    return nb


#: Column names that make a first row a header (one without an id column is refused).
_HEADER_WORDS = frozenset(
    {"email", "e-mail", "name", "first name", "last name", "firstname", "lastname", "username"}
)

#: Most students of one roster (a file of more is refused before anything is built).
MAX_STUDENTS = 10_000


def _student_ids(values: Sequence[Any], where: str, first: int = 1) -> list[str]:
    """Validated student ids: each names a folder (letters, digits and ``_ . @ + -``), once,
    compared without case (two ids that differ only in case would share a folder on macOS
    and Windows)."""
    if len(values) > MAX_STUDENTS:
        raise ParameterError(f"{where}: {len(values)} students, above the limit of {MAX_STUDENTS}")
    ids: list[str] = []
    seen: set[str] = set()
    for number, value in enumerate(values, start=first):
        if not isinstance(value, str) or not _SAFE.match(value):
            raise ParameterError(
                f"{where} {number}: student id {value!r} must be a string of letters, digits "
                "and _ . @ + - (it names a folder)"
            )
        if value.casefold() in seen:
            raise ParameterError(
                f"{where} {number}: student id {value!r} twice (ids are compared without case)"
            )
        seen.add(value.casefold())
        ids.append(value)
    return ids


def read_roster(path: Any) -> list[str]:
    """Student ids from a CSV roster: the column ``id``, ``student_id`` or ``student`` (any
    case) if the header names one, otherwise the first column of every row.

    An id must be 1-100 characters of letters, digits and ``_ . @ + -`` (it names a folder),
    not start with punctuation, and appear once (compared without case); at most
    :data:`MAX_STUDENTS`. Raises ParameterError naming the roster and the row.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ParameterError(f"roster: cannot read {str(file)!r}: {exc.strerror}") from exc
    except UnicodeDecodeError:
        raise ParameterError(f"roster {str(file)!r} is not UTF-8 text") from None
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    header = [c.strip().lower() for c in rows[0]] if rows else []
    column = next((header.index(n) for n in ("id", "student_id", "student") if n in header), None)
    headerish = any(c in _HEADER_WORDS for c in header)
    if column is None and rows and (headerish or not _SAFE.match(rows[0][0].strip())):
        raise ParameterError(
            f"roster {str(file)!r}: its header {rows[0]!r} names no column id, student_id or "
            "student"
        )
    start = 1 if column is not None else 0
    column = column or 0
    values = [row[column].strip() if column < len(row) else "" for row in rows[start:]]
    if not values:
        raise ParameterError(f"roster {str(file)!r} has no students")
    return _student_ids(values, f"roster {str(file)!r} row", first=start + 1)


def build(
    students: Sequence[str],
    /,
    *,
    out: Any,
    course: str,
    assignment: str,
    families: Sequence[str],
    level: str = "by_hand",
) -> list[Path]:
    """Write the problem set of ``families`` for every student (see the module's layout).

    Returns the paths written. Raises ParameterError for an unknown family or level, or an
    ``assignment`` that cannot name a file.
    """
    nbf = _nbformat()
    if not _SAFE.match(str(assignment)):
        raise ParameterError(
            f"assignment {assignment!r} must be letters, digits and _ . @ + - (it names a file)"
        )
    chosen = [family(name).name for name in families]
    if not chosen:
        raise ParameterError("families must name at least one exercise family, got none")
    students = _student_ids(list(students), "students")
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise ParameterError(f"out {str(root)!r} is a file, not a folder")
    written: list[Path] = []
    rows: list[dict[str, Any]] = []
    for student in students:
        exercises = [
            make(name, level=_level(name, level), course=course, assignment=assignment,
                 student=student)
            for name in chosen
        ]  # fmt: skip
        for key, folder in ((False, "release"), (True, "key")):
            nb = notebook(exercises, course=course, assignment=assignment, student=student, key=key)
            path = root / folder / student / f"{assignment}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbf.write(nb, str(path))
            written.append(path)
        for i, ex in enumerate(exercises, start=1):
            ref = ex.reference
            rows.append(
                {
                    "student": student,
                    "question": i,
                    "family": ex.family,
                    "level": ex.level,
                    "quantity": ref.quantity,
                    "value": _cell(ref.value),
                    "lower": _cell(ref.lower),
                    "upper": _cell(ref.upper),
                    "unit": ref.unit,
                    "tolerance": ex.tolerance_text,
                    "variant": ex.variant,
                }
            )
    answers = root / "key" / "answers.csv"
    answers.parent.mkdir(parents=True, exist_ok=True)
    with answers.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["student"])
        writer.writeheader()
        writer.writerows(rows)
    written.append(answers)
    return written


def _level(name: str, level: str) -> str:
    """``level``, or the family's only level where it has one (the funnel is with dpcap)."""
    levels = family(name).levels
    return levels[0] if len(levels) == 1 else level


def _cell(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return json.dumps(value.tolist())
    return repr(float(value))
