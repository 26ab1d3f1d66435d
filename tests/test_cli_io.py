"""The command line's shared parts: one reader for every file format, the option grammar, the
errors (exit status 2, the option or the file and the value named), ``--plot``, ``--help``.

Every format is read through ``dpcap capacity`` of the binary symmetric channel with crossover
1/4, whose capacity is ``ln 2 − h(1/4)`` nats (Cover & Thomas, §7.1.4).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcap import cli
from dpcap.study.catalogue import QUERIES

P = 0.25
BSC = [[1 - P, P], [P, 1 - P]]


def h(p: float) -> float:
    """Binary entropy in nats."""
    return -p * math.log(p) - (1 - p) * math.log(1 - p)


C_BSC = math.log(2) - h(P)


def capacity_of(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> float:
    assert cli.main(["capacity", str(path), "--json", *extra]) == 0, capsys.readouterr().err
    return float(json.loads(capsys.readouterr().out)["result"]["value"])


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("header.csv", "y0,y1\n0.75,0.25\n0.25,0.75\n"),
        ("semicolon.csv", "y0;y1\n0.75;0.25\n0.25;0.75\n"),
        ("decimal_comma.csv", '"y0";"y1"\n0,75;0,25\n0,25;0,75\n'),
        ("trailing.csv", "0.75,0.25,\n0.25,0.75,\n"),
        ("tabs.tsv", "0.75\t0.25\n0.25\t0.75\n"),
        ("spaces.txt", "# a comment\n0.75   0.25\n\n0.25 0.75\n"),
        ("bom.csv", "\ufeffy0,y1\r\n0.75,0.25\r\n0.25,0.75\r\n"),
    ],
)
def test_text_tables(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert capacity_of(path, capsys) == pytest.approx(C_BSC, abs=1e-9)


def test_npy_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "W.npy"
    np.save(path, np.array(BSC))
    assert capacity_of(path, capsys) == pytest.approx(C_BSC, abs=1e-9)
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(BSC))
    assert capacity_of(path, capsys) == pytest.approx(C_BSC, abs=1e-9)
    for key in ("matrix", "W"):
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps({key: BSC, "name": "BSC(1/4)"}))
        assert capacity_of(path, capsys, "--unit", "bits") == pytest.approx(
            C_BSC / math.log(2), abs=1e-9
        )
    assert cli.main(["capacity", str(path)]) == 0
    assert "dpcap capacity: BSC(1/4) (2 inputs, 2 outputs)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "content", "named"),
    [
        ("cell.csv", "0.75,abc\n0.25,0.75\n", "cell.csv, line 1, column 2: 'abc' is not a number"),
        ("empty_cell.csv", "0.5,,0.5\n0.5,0.25,0.25\n", "line 1, column 2: an empty cell"),
        (
            "ragged.csv",
            "y0,y1\n0.5,0.5\n1.0\n",
            "rows have different lengths (line 2: 2, line 3: 1)",
        ),
        ("empty.csv", "# nothing\n\n", "empty.csv: no numbers in the file"),
        ("header.csv", "y0,y1\n", "header.csv: a header row and no numbers"),
        ("rows.csv", "0.5,0.4\n0.5,0.5\n", "rows.csv: W is not row-stochastic: row 0 sums to 0.9"),
        ("nan.csv", "nan,1\n0.5,0.5\n", "nan.csv: W contains NaN at index (0, 0)"),
        ("bad.json", "[[0.5, 0.5], [0.5", "bad.json: not valid JSON"),
        ("key.json", '{"matrix": [[1.0]], "colour": 1}', "key.json: unknown key colour"),
        ("two.json", '{"matrix": [[1.0]], "W": [[1.0]]}', "exactly one of the keys"),
        ("text.json", '{"W": [["a", 0.5]]}', 'text.json: "W" must be an array of real numbers'),
        ("shape.json", '{"W": [[1.0], [1.0]], "shape": [3]}', '"shape" [3] describes 3 databases'),
        ("string.json", '"W"', "string.json: JSON must be a list of rows or an object"),
    ],
)
def test_bad_files_name_the_file_and_the_place(
    name: str, content: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / name
    path.write_text(content)
    command = "midp" if name == "shape.json" else "capacity"
    assert cli.main([command, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcap: error: ")
    assert named in err
    assert "Traceback" not in err


def test_binary_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "W.csv"
    path.write_bytes(bytes(range(128, 256)))
    assert cli.main(["capacity", str(path)]) == 2
    assert "W.csv: not a text file" in capsys.readouterr().err
    path = tmp_path / "W.npy"
    path.write_text("not numpy")
    assert cli.main(["capacity", str(path)]) == 2
    assert "W.npy: not a NumPy .npy array" in capsys.readouterr().err
    np.save(path, np.array([0.5, 0.5]))
    assert cli.main(["capacity", str(path)]) == 2
    assert "W.npy: W must be a 2-D matrix" in capsys.readouterr().err
    assert cli.main(["capacity", str(tmp_path / "missing.csv")]) == 2
    assert f"no such file: {tmp_path / 'missing.csv'}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--tol", "0"], "argument --tol: expected a positive finite number, got '0'"),
        (["--tol", "abc"], "argument --tol: expected a positive number, got 'abc'"),
        (["--max-iter", "1.5"], "argument --max-iter: expected an integer >= 1, got '1.5'"),
        (["--unit", "bytes"], "argument --unit: invalid choice: 'bytes'"),
        (["--method", "conic", "--solver", "nope"], "--solver nope: solver must be one of"),
    ],
)
def test_option_errors_name_the_option_and_the_value(
    argv: list[str], named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if "conic" in argv:
        pytest.importorskip("cvxpy")
    path = tmp_path / "W.csv"
    np.savetxt(path, BSC, delimiter=",")
    assert cli.main(["capacity", str(path), *argv]) == 2
    assert named in capsys.readouterr().err


def test_number_lists_take_ranges_and_inf(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "W.csv"
    np.savetxt(path, BSC, delimiter=",")
    assert cli.main(["delta", str(path), "--eps", "0:1:3,inf", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["eps"] == [0.0, 0.5, 1.0, math.inf]
    assert cli.main(["delta", str(path), "--eps", "0:1:x"]) == 2
    assert "got '0:1:x'" in capsys.readouterr().err
    assert cli.main(["delta", str(path), "--eps", "nan"]) == 2
    assert "levels eps (nats) must be >= 0, got 'nan'" in capsys.readouterr().err


def test_prior_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--prior FILE`` reads a row or a column with the same reader: R(0) = H(prior)."""
    distortion = tmp_path / "d.csv"
    np.savetxt(distortion, [[0, 1], [1, 0]], delimiter=",")
    for name, write in [
        ("p.csv", lambda p: p.write_text("0.3\n0.7\n")),
        ("p.json", lambda p: p.write_text('{"prior": [0.3, 0.7], "matrix": [[1]]}')),
        ("p.npy", lambda p: np.save(p, np.array([0.3, 0.7]))),
    ]:
        prior = tmp_path / name
        write(prior)
        argv = ["rd", str(distortion), "--prior", str(prior), "--D", "0", "--json"]
        assert cli.main(argv) == 0, capsys.readouterr().err
        result = json.loads(capsys.readouterr().out)["result"]
        assert result["value"][0] == pytest.approx(h(0.3), abs=1e-9)


def test_plot_needs_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "W.csv"
    np.savetxt(path, BSC, delimiter=",")
    for name in ("matplotlib", "matplotlib.backend_bases"):
        monkeypatch.setitem(sys.modules, name, None)
    figure = tmp_path / "profile.png"
    assert cli.main(["renyi", str(path), "--plot", str(figure)]) == 2
    err = capsys.readouterr().err
    assert f"--plot {figure}: writing a figure needs matplotlib" in err
    assert "pip install 'dpcap[plot]'" in err
    assert not figure.exists()


def test_plot_path_is_checked_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "W.csv"
    np.savetxt(path, BSC, delimiter=",")
    assert cli.main(["renyi", str(path), "--plot", str(tmp_path / "x.unknown")]) == 2
    assert "the format follows the suffix" in capsys.readouterr().err
    missing = tmp_path / "no" / "x.png"
    assert cli.main(["renyi", str(path), "--plot", str(missing)]) == 2
    assert f"--plot {missing}: no such folder" in capsys.readouterr().err


def test_non_converged_results_warn_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "W.csv"
    np.savetxt(path, BSC, delimiter=",")
    assert cli.main(["capacity", str(path), "--tol", "1e-300"]) == 0
    captured = capsys.readouterr()
    assert re.search(r"status\s+max_iter", captured.out)
    assert captured.err.startswith("dpcap: warning: not converged")


#: The hand-written reports and curves; every catalogued query is a subcommand between them.
REPORTS = ("renyi", "delta", "rd", "pd", "funnel", "compose", "sweep", "exercises", "demo")
SUBCOMMANDS = ("audit", *QUERIES, *REPORTS)


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "{" + ",".join(SUBCOMMANDS) + "}" in out  # the docs read the names from here
    for name in SUBCOMMANDS:
        assert cli.main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert text.startswith(f"usage: dpcap {name}")
        assert max(len(line) for line in text.splitlines()) <= 100


def test_module_docstring_shows_every_subcommand_and_is_valid_rst() -> None:
    doc = cli.__doc__
    assert doc is not None
    for name in ("audit", "capacity", "midp", *REPORTS):
        assert f"``dpcap {name} " in doc
    docutils = pytest.importorskip("docutils.core")
    from docutils import nodes
    from docutils.parsers.rst import roles

    for role in ("func", "mod", "class"):
        roles.register_generic_role(role, nodes.literal)
    docutils.publish_doctree(
        doc, settings_overrides={"halt_level": 2, "report_level": 2, "warning_stream": False}
    )


def test_problem_too_large_is_reported_with_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ProblemTooLargeError (here: more neighbour pairs than allowed) exits with status 2."""
    import dpcap.neighbors

    monkeypatch.setattr(dpcap.neighbors, "MAX_PAIRS", 4)
    path = tmp_path / "M.csv"
    np.savetxt(path, np.full((8, 2), 0.5), delimiter=",")
    assert cli.main(["delta", str(path), "--shape", "2,2,2"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: neighbors='hamming' gives 12 pairs of databases, above dpcap's limit" in err
    # the audit reports what fits (capacity, maximal leakage, MI-DP) and names the rest
    assert cli.main(["audit", str(path), "--shape", "2,2,2", "--neighbors", "hamming"]) == 1
    out = capsys.readouterr().out
    assert out.count("skipped: neighbors='hamming' gives 12 pairs of databases") == 4
    assert "to allow it: fewer neighbour pairs: --neighbors line" in out
    assert "capacity         0.000000000" in out


def test_fractional_neighbour_indices_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"matrix": [[0.9, 0.1], [0.1, 0.9]], "neighbors": [[0.5, 1]]}))
    assert cli.main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert '"neighbors"' in err
    assert "0.5" in err


def test_missing_prior_file_names_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "d.csv"
    path.write_text("0,1\n1,0\n")
    assert cli.main(["rd", str(path), "--prior", str(tmp_path / "missing.csv")]) == 2
    err = capsys.readouterr().err
    assert "--prior" in err
    assert "missing.csv" in err


def test_infinite_brackets_print_no_numpy_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # eps*(0) = inf for a uniform bit under Hamming distortion: [inf, inf], gap 0, no warning
    path = tmp_path / "ham.csv"
    path.write_text("0,1\n1,0\n")
    assert cli.main(["pd", str(path), "--D", "0,0.2"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    assert "inf" in captured.out
