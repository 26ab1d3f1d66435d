"""Sphinx configuration of the dpcap documentation (``make docs``; warnings are errors)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the source tree, as the tests see it

import dpcap  # noqa: E402

project = "dpcap"
author = "the dpcap developers"
copyright = "2026, the dpcap developers"
release = dpcap.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax shipped with the pages: they render offline
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx_togglebutton",  # the course page's worked solutions fold away
]

exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "auto_examples/*.py",
    "sg_execution_times.rst",
]
templates_path = ["_templates"]
html_static_path = ["_static"]

# --- API reference: one page per public name, from the numpydoc docstrings -----------------
autosummary_generate = True
autodoc_typehints = "none"  # the signatures and the numpydoc sections carry the types
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False


def _result_sources() -> None:
    """Point autodoc at the file that defines each result class.

    The result classes are defined in ``dpcap/result/_*.py`` and published with ``__module__``
    ``"dpcap.result"`` (what users see in reprs and pickles). autodoc reads the documentation of
    dataclass fields from the source of ``__module__``; during the build each class names the
    module that defines it, so the field documentation is found.
    """
    import importlib
    import pkgutil

    import dpcap.result

    for info in pkgutil.iter_modules(dpcap.result.__path__, "dpcap.result."):
        module = importlib.import_module(info.name)
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        for name, obj in vars(module).items():
            defined = f"\nclass {name}(" in source or f"\nclass {name}:" in source
            if isinstance(obj, type) and defined:
                obj.__module__ = info.name


_result_sources()

# --- the gallery: every script in examples/ runs, its asserts check the papers' numbers -----
# The scripts save their figures to $DPCAP_EXAMPLES_OUT as well (for the test suite); here
# that goes to a scratch folder in the build, not into the source tree.
os.environ.setdefault("DPCAP_EXAMPLES_OUT", str(ROOT / "build" / "docs-examples-out"))
os.environ.setdefault("MPLBACKEND", "Agg")
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "show_memory": False,
    "min_reported_time": 1e9,  # timings depend on the machine: not printed in the pages
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "write_computation_times": False,
}

# --- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"dpcap {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
html_css_files = ["dpcap.css"]


# --- the command line page: every subcommand's --help, as the command prints it ---------------
def _cli_help() -> None:
    import re
    import subprocess
    import textwrap

    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "dpcap", *args, "--help"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    top = run()
    names = re.search(r"\{([\w,-]+)\}", top)
    commands = names.group(1).split(",") if names else []
    parts = ["``dpcap``\n-----------\n\n::\n\n" + textwrap.indent(top, "   ")]
    for command in commands:
        title = f"``dpcap {command}``"
        text = textwrap.indent(run(command), "   ")
        parts.append(f"{title}\n{'-' * len(title)}\n\n::\n\n{text}")
    target = DOCS / "generated" / "cli" / "index.rst"
    target.parent.mkdir(parents=True, exist_ok=True)
    content = "\n".join(parts)
    if not target.exists() or target.read_text() != content:
        target.write_text(content)


_cli_help()


# --- the course page: every exercise family, rendered from dpcap.exercises -------------------
def _course() -> None:
    from dpcap.exercises.course import course_rst

    target = DOCS / "generated" / "course" / "index.rst"
    target.parent.mkdir(parents=True, exist_ok=True)
    content = course_rst()
    if not target.exists() or target.read_text() != content:
        target.write_text(content)


_course()
