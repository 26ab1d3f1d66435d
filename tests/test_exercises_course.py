"""The documentation's course page is rendered from the exercise families (no drift).

* every family appears with its title, and at each of its levels with the data and the
  dpcap code of the variant ``make`` draws for the documentation's key, its prompt and the
  certified bracket of its reference answer;
* the page is valid reStructuredText (docutils reports no warning) and its worked solutions
  sit in collapsible (``dropdown``) admonitions;
* the documentation build writes it (``docs/conf.py`` calls :func:`course_rst`) and the
  course page includes it in the table of contents.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import docutils.core

from dpcap.exercises import FAMILIES, make
from dpcap.exercises.course import COURSE_KEY, course_rst, markdown_to_rst

ROOT = Path(__file__).resolve().parent.parent


def test_every_family_and_level_is_on_the_page() -> None:
    page = course_rst()
    course, assignment, student = COURSE_KEY
    for fam in FAMILIES.values():
        assert f"{fam.title}\n{'-' * len(fam.title)}" in page
        for level in fam.levels:
            ex = make(fam.name, level=level, course=course, assignment=assignment, student=student)
            assert textwrap.indent(ex.data_code() + "\n" + ex.code, "      ") in page
            assert markdown_to_rst(ex.prompt) in page
            if ex.answer_kind == "number":
                assert f"[{ex.reference.lower!r}, {ex.reference.upper!r}]" in page
    assert page.count(".. admonition:: Worked solution\n   :class: dropdown") == sum(
        len(f.levels) for f in FAMILIES.values()
    )


def test_the_page_is_valid_restructuredtext() -> None:
    docutils.core.publish_doctree(
        course_rst().replace(".. code-block:: python", ".. code:: python"),
        settings_overrides={"report_level": 2, "halt_level": 2, "warning_stream": False},
    )


def test_markdown_conversion() -> None:
    assert markdown_to_rst("the $k$-ary RR") == "the :math:`k`\\ -ary RR"
    assert markdown_to_rst("(so $x$) and `a = $1$`") == "(so :math:`x`) and ``a = $1$``"
    assert markdown_to_rst("$$\\sum_y W$$") == ".. math::\n\n   \\sum_y W"
    assert markdown_to_rst("a$b$") == "a\\ :math:`b`"


def test_the_docs_build_renders_the_page() -> None:
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert "course_rst()" in conf
    assert "sphinx_togglebutton" in conf
    assert ".. include:: generated/course/index.rst" in (ROOT / "docs" / "course.rst").read_text()
    assert "\n   course\n" in (ROOT / "docs" / "index.rst").read_text()
