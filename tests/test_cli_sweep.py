"""``dpcap sweep SPEC.toml``: the spec file, its errors, and the command end to end.

What is checked, each written out here rather than read from the code:

* a spec's ranges expand as documented: ``{start, stop, step}`` to the integers from start to
  stop inclusive, ``{start, stop, num}`` to ``num`` evenly spaced floats with both ends; lists
  and single values are kept; ``[[grid]]`` lists points; queries keep their parameters;
* every malformed spec is refused with a message naming the offending key, and the command
  exits with status 2 and ``dpcap: error:``;
* the command writes a store and a CSV with one row per (grid point, query, parameter value):
  the product of the grid's values; a truncated geometric of level ε is ε-DP on its line of
  values (adjacent rows differ by at most a factor e^ε, attained), so ``dp_epsilon`` = ε;
* the same command again computes nothing (the store's parts are untouched), and a sweep
  stopped by Ctrl-C exits 130, says how far it got and how to resume, and resumes.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcap import cli
from dpcap.cli import _sweep as _cli_sweep
from dpcap.cli._sweep import SpecError, command_line, load_spec, parse_spec
from dpcap.errors import DpcapError

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
family = "truncated_geometric"

[grid]
n = {start = 2, stop = 6, step = 2}
eps = {start = 0.5, stop = 1.5, num = 3}

[[queries]]
query = "capacity"

[[queries]]
query = "dp_epsilon"

[[queries]]
query = "renyi_dp"
alpha = [2.0, 8.0]

[options]
chunk_size = 1
"""


def write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- the spec file ----------------------------------------------------------------------------


def test_example_spec_expands_as_documented() -> None:
    spec = load_spec(ROOT / "examples" / "sweep_spec.toml")
    assert spec.family == "truncated_geometric"
    assert isinstance(spec.grid, dict)
    assert spec.grid["n"] == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    assert all(type(v) is int for v in spec.grid["n"])
    eps = spec.grid["eps"]
    assert len(eps) == 5
    assert eps[0] == 0.1
    assert eps[-1] == 2.0
    np.testing.assert_allclose(np.diff(eps), (2.0 - 0.1) / 4, rtol=1e-12)
    names = [name for name, _ in spec.queries]
    assert names == ["capacity", "dp_epsilon", "renyi_dp", "tv_dp"]
    assert dict(spec.queries)["renyi_dp"] == {"alpha": [2.0, 8.0]}
    assert spec.options == {"tol": 1e-9, "unit": "nats", "chunk_size": 10}


def test_grid_forms() -> None:
    spec = parse_spec(
        {
            "family": "pkg.mod:fn",
            "grid": {
                "k": [2, 3, 5],
                "name": "x",
                "down": {"start": 5, "stop": 1, "step": -2},
                "one": {"start": 0.25, "stop": 0.25, "num": 1},
            },
            "queries": ["capacity", {"query": "dp_delta", "eps": 0.5}],
        }
    )
    assert spec.grid == {"k": [2, 3, 5], "name": ["x"], "down": [5, 3, 1], "one": [0.25]}
    assert spec.queries == [("capacity", {}), ("dp_delta", {"eps": 0.5})]
    assert spec.options == {}


def test_grid_points_listed_one_by_one() -> None:
    spec = parse_spec(
        {
            "family": "randomized_response",
            "grid": [{"k": 2, "eps": 0.5}, {"k": 3, "eps": 1.0}],
            "queries": "capacity",
        }
    )
    assert spec.grid == [{"k": 2, "eps": 0.5}, {"k": 3, "eps": 1.0}]
    assert spec.queries == [("capacity", {})]


BAD_SPECS = [
    ('family = "f"\n[grid]\nn = [1]\n[[queries]]\nquery = "capacity"\n[extra]\n', "extra"),
    ('[grid]\nn = [1]\n[[queries]]\nquery = "capacity"\n', "'family'"),
    ('family = "f"\n[[queries]]\nquery = "capacity"\n', "'grid'"),
    ('family = "f"\n[grid]\nn = [1]\n', "'queries'"),
    ("family = 3\n[grid]\nn = [1]\nqueries = ['capacity']\n", "family"),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\n', "[grid] is empty"),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\nn = []\n', "grid.n"),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\nn = {start = 1, stop = 5}\n', "grid.n"),
    (
        'family = "f"\nqueries = ["capacity"]\n[grid]\nn = {start = 1, stop = 5, step = 0.5}\n',
        "step = 0.5",
    ),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\nn = {start = 1, stop = 5, step = 0}\n', "step"),
    (
        'family = "f"\nqueries = ["capacity"]\n[grid]\nn = {start = 5, stop = 1, step = 1}\n',
        "empty",
    ),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\ne = {start = 0, stop = 1, num = 0}\n', "num"),
    (
        'family = "f"\nqueries = ["capacity"]\n[grid]\ne = {start = 0, stop = inf, num = 3}\n',
        "grid.e.stop",
    ),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\nd = 1979-05-27\n', "grid.d"),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\nn = [[1, 2]]\n', "grid.n[0]"),
    ('family = "f"\nqueries = []\n[grid]\nn = [1]\n', "queries"),
    ('family = "f"\n[grid]\nn = [1]\n[[queries]]\neps = 1.0\n', "queries[0]"),
    ('family = "f"\n[grid]\nn = [1]\n[[queries]]\nquery = "dp_delta"\neps = []\n', "eps"),
    ('family = "f"\nqueries = ["capacity"]\n[grid]\nn = [1]\n[options]\nstore = "x"\n', "store"),
    ('family = "f"\n[grid\n', "not valid TOML"),
]


#: Well-formed TOML whose values dpcap.sweep refuses (its one rule for bad input), through main.
BAD_VALUES = [
    ("[grid]\nk = [2]\neps = [0.5, nan]\n", "NaN"),
    ("[grid]\nk = [2]\neps = [1.0]\n[options]\nunit = 'bytes'\n", "unit"),
    ("[grid]\nk = [2]\neps = [1.0]\n[options]\nretries = -1\n", "retries"),
    ("[grid]\nk = [2]\neps = [1.0]\n[options]\ntol = 0\n", "tol"),
    ("[grid]\nk = [2]\neps = [1.0]\n[options]\nchunk_size = 2.5\n", "chunk_size"),
]


@pytest.mark.parametrize(("text", "named"), BAD_VALUES)
def test_bad_values_exit_2_naming_the_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, named: str
) -> None:
    head = 'family = "randomized_response"\nqueries = ["capacity"]\n'
    path = write(tmp_path, head + text)
    assert cli.main(["sweep", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcap: error: ")
    assert named in err


@pytest.mark.parametrize(("text", "named"), BAD_SPECS)
def test_malformed_specs_are_refused_naming_the_key(tmp_path: Path, text: str, named: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SpecError, match=None) as info:
        load_spec(path)
    assert named in str(info.value)
    assert str(path) in str(info.value)
    assert isinstance(info.value, DpcapError)
    assert isinstance(info.value, ValueError)


def test_the_command_reports_a_bad_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, 'family = "f"\nqueries = ["capacity"]\n[grid]\nn = []\n')
    assert cli.main(["sweep", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcap: error:")
    assert "grid.n" in err
    assert cli.main(["sweep", str(tmp_path / "missing.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_resume_command_repeats_the_arguments() -> None:
    argv = ["sweep", "my spec.toml", "--store", "out.parquet", "--workers", "3", "--no-progress"]
    args = cli._parser().parse_args(argv)
    line = command_line(args)
    assert shlex.split(line) == ["dpcap", *argv]
    assert cli._parser().parse_args(shlex.split(line)[1:]) == args


# --- end to end -------------------------------------------------------------------------------


def parts(store: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in sorted(store.glob("part-*.parquet"))}


def test_sweep_writes_store_and_csv_then_resumes_without_computing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, store, csv = write(tmp_path, SMALL), tmp_path / "out.parquet", tmp_path / "out.csv"
    argv = ["sweep", str(spec), "--store", str(store), "--csv", str(csv), "--no-progress"]
    assert cli.main([*argv, "--executor", "serial"]) == 0
    out = capsys.readouterr().out
    assert "9 grid points (9 computed now, 0 from the store)" in out
    assert str(store) in out
    assert "point  n" not in out  # stored: the table is not printed

    table = pd.read_csv(csv)
    # 3 values of n × 3 of eps, each with capacity, dp_epsilon and renyi_dp at 2 orders
    assert len(table) == 9 * 4
    assert out.count("36 rows") == 1
    grid = {(n, e) for n in (2, 4, 6) for e in (0.5, 1.0, 1.5)}
    assert {(int(n), float(e)) for n, e in zip(table["n"], table["eps"], strict=True)} == grid
    assert sorted(table["point"].unique()) == list(range(9))
    per_point = table.groupby("point")["query"].apply(sorted)
    assert all(q == ["capacity", "dp_epsilon", "renyi_dp", "renyi_dp"] for q in per_point)
    assert sorted(table.loc[table["query"] == "renyi_dp", "alpha"].unique()) == [2.0, 8.0]
    dp = table[table["query"] == "dp_epsilon"]
    np.testing.assert_allclose(dp["value"], dp["eps"], rtol=1e-12)
    cap = table[table["query"] == "capacity"]
    assert (cap["lower"] <= cap["upper"]).all()
    assert (cap["upper"] <= np.log(cap["n"] + 1) + 1e-12).all()  # at most log |outputs|
    assert (table["status"] == "converged").all()
    assert "converged 36" in out

    written = parts(store)
    assert written
    csv.unlink()
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "(0 computed now, 9 from the store)" in out
    assert parts(store) == written  # no part added, none rewritten
    pd.testing.assert_frame_equal(pd.read_csv(csv), table)


def test_without_store_the_table_is_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write(tmp_path, SMALL.replace("alpha = [2.0, 8.0]", "alpha = 2.0"))
    assert cli.main(["sweep", str(spec), "--executor", "serial", "--no-progress"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = lines[0].split()
    assert header[:5] == ["point", "n", "eps", "query", "alpha"]
    assert lines[_cli_sweep.HEAD + 1].startswith("... 7 more rows")  # 27 rows, 20 shown
    assert "27 rows, 9 grid points in" in out
    assert "store" not in out

    csv = tmp_path / "t.csv"
    assert cli.main(["sweep", str(spec), "--csv", str(csv), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dpcap sweep:")  # written, not printed
    assert len(pd.read_csv(csv)) == 27


STOPPING_FAMILY = '''
from pathlib import Path

from dpcap.mechanisms import truncated_geometric

FLAG = Path(__file__).with_name("stop")


def family(n, eps):
    """A truncated geometric, except that it presses Ctrl-C at n = 6 while the flag exists."""
    if n == 6 and FLAG.exists():
        raise KeyboardInterrupt
    return truncated_geometric(n, eps)
'''


def test_ctrl_c_tells_how_to_resume_and_the_command_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "stopping_family_cli.py"
    module.write_text(STOPPING_FAMILY, encoding="utf-8")
    (tmp_path / "stop").touch()
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = write(tmp_path, SMALL.replace('"truncated_geometric"', '"stopping_family_cli:family"'))
    store = tmp_path / "out.parquet"
    argv = ["sweep", str(spec), "--store", str(store), "--executor", "serial"]
    argv += ["--allow-module", "stopping_family_cli", "--no-progress"]

    assert cli.main(argv) == 130
    err = capsys.readouterr().err
    # chunks of one point, n varying slowest: the points with n = 2 and n = 4 finished
    assert "6 of 9 grid points done" in err
    assert f"resume with: {shlex.join(['dpcap', *argv])}" in err
    first = parts(store)
    assert len(first) == 6

    (tmp_path / "stop").unlink()
    assert cli.main(argv) == 0
    assert "(3 computed now, 6 from the store)" in capsys.readouterr().out
    last = parts(store)
    assert {k: last[k] for k in first} == first  # the finished parts are kept as they were
    assert len(last) == 9


def test_ctrl_c_without_store_says_nothing_was_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "stopping_family_cli2.py").write_text(STOPPING_FAMILY, encoding="utf-8")
    (tmp_path / "stop").touch()
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = write(tmp_path, SMALL.replace('"truncated_geometric"', '"stopping_family_cli2:family"'))
    argv = ["sweep", str(spec), "--executor", "serial", "--allow-module", "stopping_family_cli2"]
    assert cli.main([*argv, "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "6 of 9 grid points done" in err
    assert "without --store nothing was kept" in err
