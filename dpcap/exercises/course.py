"""The documentation's course page, rendered from the exercise families themselves.

:func:`course_rst` draws one variant of every family at every level (the key ``("dpcap
documentation", "course", "reader")``) and writes reStructuredText: the prompt, the tolerance,
the hints and the worked solution in collapsible admonitions (``:class: dropdown``, made
collapsible by sphinx-togglebutton), with the data, the dpcap code and the certified reference
answer. The documentation build calls it, so the page cannot drift from the code.

:func:`markdown_to_rst` converts the small Markdown the prompts are written in: paragraphs,
``$...$`` and ``$$...$$`` (a paragraph of its own) LaTeX, ``**bold**``, ``*italic*`` and
```code```.

>>> print(markdown_to_rst("With $k = 3$-ary `answer`:\\n\\n$$x^2$$"))
With :math:`k = 3`\\ -ary ``answer``:
<BLANKLINE>
.. math::
<BLANKLINE>
   x^2
"""

from __future__ import annotations

import re
import textwrap

import numpy as np

from dpcap.exercises.core import Exercise
from dpcap.exercises.registry import FAMILIES, make

__all__ = ["COURSE_KEY", "course_rst", "markdown_to_rst"]

#: The (course, assignment, student) of the variants shown in the documentation.
COURSE_KEY = ("dpcap documentation", "course", "reader")

_INLINE_MATH = re.compile(r"(?<!\$)\$([^$\n]+?)\$(?!\$)")
_CODE = re.compile(r"`([^`\n]+)`")

LEVEL_NAMES = {"by_hand": "by hand", "with_dpcap": "with dpcap"}
KIND_NAMES = {"number": "a number", "matrix": "a matrix (rows are inputs)", "prior": "a prior"}


def _inline(text: str) -> str:
    def math(match: re.Match[str]) -> str:
        start, end = match.span()
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        left = "" if before.isspace() or before in "([{" else "\\ "
        right = "\\ " if (after.isalnum() or after in "-_") else ""
        return f"{left}:math:`{match.group(1)}`{right}"

    code_spans: list[str] = []

    def code(match: re.Match[str]) -> str:
        code_spans.append(f"``{match.group(1)}``")
        return f"\x00{len(code_spans) - 1}\x00"

    text = _CODE.sub(code, text)
    text = _INLINE_MATH.sub(math, text)
    return re.sub("\x00(\\d+)\x00", lambda m: code_spans[int(m.group(1))], text)


def markdown_to_rst(markdown: str) -> str:
    """The prompts' Markdown as reStructuredText (see the module's documentation)."""
    out = []
    for paragraph in markdown.strip().split("\n\n"):
        block = paragraph.strip()
        if block.startswith("$$") and block.endswith("$$") and len(block) > 4:
            out.append(".. math::\n\n" + textwrap.indent(block[2:-2].strip(), "   "))
        else:
            out.append(_inline(block))
    return "\n\n".join(out)


def _admonition(title: str, body: str) -> str:
    return f".. admonition:: {title}\n   :class: dropdown\n\n" + textwrap.indent(body, "   ")


def _answer(ex: Exercise) -> str:
    ref = ex.reference
    unit = f" {ref.unit}" if ref.unit else ""
    if ex.answer_kind == "number":
        return (
            f"Reference answer ({ref.method}): :math:`{ref.value:.12g}`{unit}, certified "
            f"bracket ``[{ref.lower!r}, {ref.upper!r}]``."
        )
    shown = np.array2string(np.asarray(ref.value), precision=6, separator=", ")
    if ex.answer_kind == "prior":
        return (
            f"Reference answer ({ref.method}): the prior ``{shown}``, attaining the capacity "
            f"in ``[{ref.lower!r}, {ref.upper!r}]``{unit}."
        )
    return f"Reference answer: ``{' '.join(shown.split())}``."


def exercise_rst(ex: Exercise) -> str:
    """One exercise: prompt, tolerance, hints and the collapsible worked solution."""
    hints = "\n".join(f"- {_inline(h)}" for h in ex.hints)
    code = ex.data_code() + "\n" + ex.code
    solution = (
        markdown_to_rst(ex.solution)
        + "\n\n.. code-block:: python\n\n"
        + textwrap.indent(code, "   ")
        + "\n\n"
        + _answer(ex)
    )
    parts = [
        markdown_to_rst(ex.prompt),
        f"*Tolerance: {ex.tolerance_text}.*",
        _admonition("Hints", hints),
        _admonition("Worked solution", solution),
    ]
    return "\n\n".join(parts)


def course_rst(key: tuple[str, str, str] = COURSE_KEY) -> str:
    """The course page: every family at every level, in the order of the course."""
    course, assignment, student = key
    sections = []
    for fam in FAMILIES.values():
        title = fam.title
        lines = [title, "-" * len(title), ""]
        levels = ", ".join(LEVEL_NAMES[lv] for lv in fam.levels)
        lines.append(
            f"Family ``{fam.name}`` · topic: {fam.topic} · levels: {levels} · answer: "
            f"{KIND_NAMES[fam.answer_kind]}."
        )
        for lv in fam.levels:
            ex = make(fam.name, level=lv, course=course, assignment=assignment, student=student)
            heading = f"{title}: {LEVEL_NAMES[lv]}"
            lines += ["", heading, "^" * len(heading), "", exercise_rst(ex)]
        sections.append("\n".join(lines))
    return "\n\n\n".join(sections) + "\n"
