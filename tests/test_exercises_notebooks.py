"""Problem sets as notebooks, executed offline, and the ``dpcap exercises`` command.

The notebooks run in a real kernel (nbclient with ipykernel) whose interpreter is this test's
own ``sys.executable`` (a kernel spec written to a temporary ``JUPYTER_PATH``, with the source
tree on the kernel's ``PYTHONPATH``), so nothing but ``make install`` is needed:

* the answer key (the nbgrader source notebook with the worked solutions) runs to the end and
  every test cell prints "Correct";
* the students' notebook, untouched, stops at the first test cell with "No answer yet";
* a transposed channel matrix stops with the "Rows must be inputs" hint;
* every cell carries nbgrader metadata (schema 3, unique ``grade_id``, solution cells unlocked,
  graded test cells locked with points) and the notebooks validate against nbformat's schema.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import nbclient
import nbformat
import numpy as np
import pytest

from dpcap.cli import main
from dpcap.errors import ParameterError
from dpcap.exercises import make
from dpcap.exercises.notebooks import build, notebook, read_roster

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ["forced_response", "rr_delta", "capacity_prior"]
KEY = {"course": "nb-test", "assignment": "hw1"}


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernel spec for this interpreter in a temporary JUPYTER_PATH; returns its name."""
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "kernels" / "dpcap-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "dpcap tests",
                "language": "python",
                "env": {"PYTHONPATH": str(ROOT)},
            }
        )
    )
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(base))
    yield "dpcap-test"
    mp.undo()


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sheets")
    build(["ada", "bob"], out=out, families=FAMILIES, **KEY)
    return out


def run(nb: object, kernel: str, cwd: Path) -> object:
    client = nbclient.NotebookClient(
        nb, kernel_name=kernel, timeout=120, resources={"metadata": {"path": str(cwd)}}
    )
    return client.execute()


def test_the_answer_key_runs_and_every_check_passes(kernel: str, sheets: Path) -> None:
    nb = nbformat.read(sheets / "key" / "ada" / "hw1.ipynb", as_version=4)
    done = run(nb, kernel, sheets)
    tests = [c for c in done.cells if c.metadata["nbgrader"].get("grade")]
    assert len(tests) == len(FAMILIES)
    for cell in tests:
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert text.startswith("Correct"), text


def test_the_blank_stub_fails_with_no_answer_yet(kernel: str, sheets: Path) -> None:
    nb = nbformat.read(sheets / "release" / "ada" / "hw1.ipynb", as_version=4)
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="No answer yet"):
        run(nb, kernel, sheets)


def test_a_transposed_matrix_gets_the_rows_must_be_inputs_hint(kernel: str, sheets: Path) -> None:
    nb = nbformat.read(sheets / "release" / "bob" / "hw1.ipynb", as_version=4)
    answer = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"].endswith("answer"))
    ex = make("forced_response", level="by_hand", student="bob", **KEY)
    answer.source = ex.code + "\nanswer = answer.T"
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="Rows must be inputs"):
        run(nb, kernel, sheets)


def test_cells_carry_nbgrader_metadata(sheets: Path) -> None:
    for folder in ("release", "key"):
        nb = nbformat.read(sheets / folder / "ada" / "hw1.ipynb", as_version=4)
        nbformat.validate(nb)
        meta = [c.metadata["nbgrader"] for c in nb.cells]
        assert all(m["schema_version"] == 3 for m in meta)
        ids = [m["grade_id"] for m in meta]
        assert len(ids) == len(set(ids))
        solutions = [c for c in nb.cells if c.metadata["nbgrader"]["solution"]]
        graded = [c for c in nb.cells if c.metadata["nbgrader"]["grade"]]
        assert len(solutions) == len(graded) == len(FAMILIES)
        assert all(not c.metadata["nbgrader"]["locked"] for c in solutions)
        assert all(c.metadata["nbgrader"]["locked"] and c.metadata["nbgrader"]["points"] == 1
                   for c in graded)  # fmt: skip
        marked = all("### BEGIN SOLUTION" in c.source for c in solutions)
        assert marked == (folder == "key")


def test_the_answer_key_table_lists_every_student_and_question(sheets: Path) -> None:
    with (sheets / "key" / "answers.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["student"], r["family"]) for r in rows] == [
        (s, f) for s in ("ada", "bob") for f in FAMILIES
    ]
    rr = rows[1]
    ex = make("rr_delta", level="by_hand", student="ada", **KEY)
    assert float(rr["lower"]) <= ex.reference.value <= float(rr["upper"])


def test_the_notebook_data_are_the_variant_bit_for_bit() -> None:
    ex = make("renyi", level="with_dpcap", student="ada", **KEY)
    nb = notebook([ex], student="ada", **KEY)
    data = next(c for c in nb.cells if c.metadata["nbgrader"]["grade_id"].endswith("data"))
    space: dict[str, object] = {"np": np}
    exec(data.source, space)
    assert (space["W"] == ex.data["W"]).all()
    assert space["alpha"] == ex.data["alpha"]


def test_roster_rules(tmp_path: Path) -> None:
    good = tmp_path / "good.csv"
    good.write_text("name,ID\nAda,s-001\nBob,s.002\n")
    assert read_roster(good) == ["s-001", "s.002"]
    plain = tmp_path / "plain.csv"
    plain.write_text("x1\nx2\n")
    assert read_roster(plain) == ["x1", "x2"]
    bad = tmp_path / "bad.csv"
    bad.write_text("id\nok\n../evil\n")
    with pytest.raises(ParameterError, match=r"row 3: student id '\.\./evil'"):
        read_roster(bad)
    twice = tmp_path / "twice.csv"
    twice.write_text("id\na\na\n")
    with pytest.raises(ParameterError, match=r"row 3: student id 'a' twice"):
        read_roster(twice)


def test_cli_list_show_check_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exercises", "list"]) == 0
    assert "privacy_funnel" in capsys.readouterr().out
    key = ["--course", "c", "--assignment", "a", "--student", "s"]
    assert main(["exercises", "show", "rr_delta", *key]) == 0
    out = capsys.readouterr().out
    assert "randomized response" in out
    assert "Answer key" not in out
    ex = make("rr_delta", course="c", assignment="a", student="s")
    assert main(["exercises", "check", "rr_delta", repr(ex.reference.value), *key]) == 0
    assert capsys.readouterr().out.startswith("Correct")
    assert main(["exercises", "check", "rr_delta", "0", *key]) == 1
    assert "δ is 0 only" in capsys.readouterr().out
    fr = make("forced_response", course="c", assignment="a", student="s")
    transposed = json.dumps(fr.reference.value.T.tolist())
    assert main(["exercises", "check", "forced_response", transposed, *key]) == 1
    assert capsys.readouterr().out.startswith("Rows must be inputs")
    assert main(["exercises", "check", "rr_delta", "abc", *key]) == 2
    assert "answer must be a number or a JSON array, got 'abc'" in capsys.readouterr().err
    assert main(["exercises", "show", "nope"]) == 2
    assert "family must be one of" in capsys.readouterr().err
    roster = tmp_path / "roster.csv"
    roster.write_text("id\nada\n")
    args = ["--roster", str(roster), "--out", str(tmp_path / "out"), "--course", "c"]
    assert main(["exercises", "build", *args, "--assignment", "hw", "--families", "renyi"]) == 0
    assert (tmp_path / "out" / "release" / "ada" / "hw.ipynb").exists()
    assert main(["exercises", "build", *args, "--assignment", "h w"]) == 2
    assert "assignment 'h w' must be" in capsys.readouterr().err


def test_importing_the_wing_imports_no_notebook_library() -> None:
    import subprocess

    code = (
        "import sys, dpcap, dpcap.exercises, dpcap.exercises.notebooks, dpcap.exercises.course\n"
        "print(sorted(m for m in ('nbformat', 'nbclient', 'ipykernel', 'jupyter_client')\n"
        "             if m in sys.modules), 'dpcap.exercises' in sys.modules)"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": ""}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "[] True", done.stderr
    bare = subprocess.run(
        [sys.executable, "-c", "import sys, dpcap; print('dpcap.exercises' in sys.modules)"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert bare.stdout.strip() == "False"
