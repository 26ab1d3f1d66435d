"""What a sweep spec may make dpcap do: no code but dpcap's and the modules the user allows,
no import from the working directory, no Parquet read with a vulnerable pyarrow, no work
that explodes before it is counted (issue 27).

What is checked, each written out here rather than read from the code:

* a family string (``dpcap.sweep``, ``dpcap.calibrate``, a TOML spec) names the families of
  :mod:`dpcap.mechanisms` freely and nothing else unless its module is in ``allow_modules``
  (``--allow-module``): ``os:system`` and ``subprocess:getoutput`` with a grid value that
  would create a marker file are refused before anything runs (exit status 2), and the marker
  does not exist; even an allowed module gives only a function defined in it (not ``system``
  of ``os``, not a function it imports, not a submodule, no dotted attribute path);
* an allowed module given by its ``.py`` file or by an importable name runs, in this process
  and in spawned worker processes, and a store records the family as written;
* ``dpcap sweep`` never imports from the working directory: a ``tqdm.py`` and a
  ``pandas.py`` there, which would write a marker, do not run during a sweep of
  ``dpcap.mechanisms:randomized_response``;
* pyproject requires pyarrow 14.0.1 or later, and ``load_sweep`` refuses to read a store with
  a pyarrow reporting 14.0.0 (CVE-2023-47248), naming the version and the fix;
* a grid is counted before it is built: 10^10 points (two axes of 10^5), an axis of 10^10
  values, an endless iterator, a TOML range of 10^12 integers, a linspace of 10^12 values,
  and a 1 KB ``_spec.json`` describing 10^12 points are refused at once with
  :class:`~dpcap.errors.ProblemTooLargeError` naming the count and the limit (10^6), never a
  ``MemoryError``; ``workers`` and ``--workers`` are capped likewise.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpcap
from dpcap import cli
from dpcap.cli._sweep import command_line, parse_spec
from dpcap.errors import DpcapError, ParameterError, ProblemTooLargeError
from dpcap.study import sweeps
from dpcap.study.calibration import calibrate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

FAMILIES = '''
from dpcap.mechanisms import randomized_response
from os import system


def rr(k, eps):
    """Randomized response, the user's own family."""
    return randomized_response(k, eps)


class Box:
    pass
'''


def quiet(*args: Any, **kwargs: Any) -> Any:
    return dpcap.sweep(*args, progress=False, **kwargs)


def spec_file(tmp_path: Path, family: str, grid: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(
        f'family = "{family}"\nqueries = ["dp_epsilon"]\n[grid]\n{grid}\n', encoding="utf-8"
    )
    return path


# --- item 1: a spec runs only dpcap's families and the modules the user allows ----------------


@pytest.mark.parametrize(
    ("family", "param"), [("os:system", "command"), ("subprocess:getoutput", "cmd")]
)
def test_toml_spec_naming_a_shell_function_is_refused_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], family: str, param: str
) -> None:
    marker = tmp_path / "MARKER"
    spec = spec_file(tmp_path, family, f'{param} = ["touch {marker}"]')
    assert cli.main(["sweep", str(spec), "--no-progress", "--executor", "serial"]) == 2
    err = capsys.readouterr().err
    assert "dpcap: error:" in err
    assert family in err
    assert "--allow-module" in err
    assert not marker.exists()


@pytest.mark.parametrize(
    ("family", "param"), [("os:system", "command"), ("subprocess:getoutput", "cmd")]
)
def test_api_family_string_outside_dpcap_mechanisms_is_refused(
    tmp_path: Path, family: str, param: str
) -> None:
    marker = tmp_path / "MARKER"
    with pytest.raises(ParameterError, match="allow_modules"):
        quiet(family, {param: [f"touch {marker}"]}, "dp_epsilon")
    with pytest.raises(ParameterError, match="allow_modules"):
        calibrate(family, param, "dp_epsilon", 1.0, bounds=(0.1, 2.0))
    assert not marker.exists()


def test_allowed_module_gives_only_functions_defined_in_it(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    module = tmp_path / "fams.py"
    module.write_text(FAMILIES, encoding="utf-8")
    grid = {"command": [f"touch {marker}"]}
    # os allowed by name: os.system is a builtin of posix, not a function defined in os
    with pytest.raises(ParameterError, match="not a function defined in os"):
        quiet("os:system", grid, "dp_epsilon", allow_modules=["os"])
    # imported into the allowed module: refused, and so is a dotted attribute walk
    for family in ("fams:system", "fams:randomized_response", "fams:rr.__globals__"):
        with pytest.raises(ParameterError, match="fams"):
            quiet(family, grid, "dp_epsilon", allow_modules=[module])
    with pytest.raises(ParameterError, match="has no 'missing'"):
        quiet("fams:missing", grid, "dp_epsilon", allow_modules=[str(module)])
    # another module than the allowed one
    with pytest.raises(ParameterError, match="'os'"):
        quiet("os:system", grid, "dp_epsilon", allow_modules=[module])
    assert not marker.exists()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nowhere.py", "no such file"),
        ("a b", "module name"),
        (3, "allow_modules"),
        ([b"os"], "allow_modules"),
    ],
)
def test_bad_allow_modules_are_named(value: object, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        quiet("randomized_response", {"k": [2], "eps": [1.0]}, "dp_epsilon", allow_modules=value)


def test_allowed_module_by_file_runs_here_in_workers_and_is_recorded(tmp_path: Path) -> None:
    module = tmp_path / "fams.py"
    module.write_text(FAMILIES, encoding="utf-8")
    grid = {"k": [2, 3], "eps": [0.5, 1.0]}
    store = tmp_path / "store"
    serial = quiet("fams:rr", grid, "dp_epsilon", allow_modules=str(module), store=store)
    assert serial["value"].tolist() == pytest.approx([0.5, 1.0, 0.5, 1.0])
    assert json.loads((store / "_spec.json").read_text())["family"] == "fams:rr"
    # spawned workers load the file again (its folder is not on their sys.path either)
    pooled = quiet(
        "fams:rr", grid, "dp_epsilon", allow_modules=[module], executor="processes", workers=2
    )
    assert pooled["status"].tolist() == ["converged"] * 4
    assert pooled["value"].tolist() == pytest.approx([0.5, 1.0, 0.5, 1.0])
    assert str(tmp_path) not in sys.path


def test_allowed_module_by_importable_name() -> None:
    # tests/ is on sys.path (pytest's rootdir); sweep_families is a module of it
    table = quiet(
        "sweep_families:logged_rr",
        {"k": [2], "eps": [1.0]},
        "dp_epsilon",
        allow_modules="sweep_families",
    )
    assert table["value"].tolist() == pytest.approx([1.0])
    r = calibrate(
        "sweep_families:logged_rr",
        "eps",
        "dp_epsilon",
        1.0,
        bounds=(0.1, 2.0),
        fixed={"k": 2},
        allow_modules=["sweep_families"],
    )
    assert r.lower <= 1.0 <= r.upper


def test_cli_allow_module_runs_the_file_and_resumes_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "fams.py"
    module.write_text(FAMILIES, encoding="utf-8")
    spec = spec_file(tmp_path, "fams:rr", "k = [2, 3]\neps = [1.0]")
    argv = ["sweep", str(spec), "--allow-module", str(module), "--no-progress"]
    assert cli.main(argv) == 0
    assert "fams:rr: 2 rows" in capsys.readouterr().out
    args = cli._parser().parse_args(argv)  # the resume line keeps the permission
    assert shlex.split(command_line(args))[3:5] == ["--allow-module", str(module)]
    assert cli._parser().parse_args(shlex.split(command_line(args))[1:]) == args
    assert cli.main(["sweep", str(spec), "--allow-module", "no such"]) == 2
    assert "--allow-module" in capsys.readouterr().err


# --- item 2: the working directory is not on the import path --------------------------------

HIJACK = "open({marker!r}, 'a').write(__name__ + '\\n')\nraise ImportError('planted')\n"


def test_modules_in_the_working_directory_do_not_run(tmp_path: Path) -> None:
    work, bin_dir = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    marker = tmp_path / "MARKER"
    for name in ("tqdm", "pandas", "pyarrow"):
        (work / f"{name}.py").write_text(HIJACK.format(marker=str(marker)), encoding="utf-8")
    spec = spec_file(work, "dpcap.mechanisms:randomized_response", "k = [2]\neps = [1.0]")
    # like the console script: sys.path starts at the script's folder, not at the cwd
    runner = bin_dir / "dpcap_runner.py"
    runner.write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nfrom dpcap.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(runner), "sweep", str(spec), "--no-progress",
         "--store", str(work / "store")],
        cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert not marker.exists(), marker.read_text()
    assert done.returncode == 0, done.stderr
    assert "1 rows, 1 grid points" in done.stdout


# --- item 3: the Parquet reader's floor -------------------------------------------------------


def test_pyproject_requires_the_fixed_pyarrow() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [d.split("#")[0].strip() for d in deps if d.startswith("pyarrow")] == ["pyarrow>=14.0.1"]


def test_load_sweep_refuses_a_vulnerable_pyarrow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow

    store = tmp_path / "store"
    quiet("randomized_response", {"k": [2], "eps": [1.0]}, "dp_epsilon", store=store)
    monkeypatch.setattr(pyarrow, "__version__", "14.0.0")
    with pytest.raises(DpcapError, match=r"pyarrow 14\.0\.0.*CVE-2023-47248.*14\.0\.1"):
        dpcap.load_sweep(store)
    with pytest.raises(DpcapError, match="CVE-2023-47248"):  # resuming reads the parts too
        quiet("randomized_response", {"k": [2], "eps": [1.0]}, "dp_epsilon", store=store)
    for fixed in ("14.0.1", "14.0.2.dev12", "21.0.0"):
        monkeypatch.setattr(pyarrow, "__version__", fixed)
        assert len(dpcap.load_sweep(store)) == 1


# --- item 4: counted before built ------------------------------------------------------------


def fast_refusal(call: object, *needles: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ProblemTooLargeError) as info:
        call()  # type: ignore[operator]
    assert time.perf_counter() - start < 5.0
    for needle in (*needles, "1000000"):
        assert needle in str(info.value)


def test_grid_of_ten_billion_points_is_refused_before_it_is_built() -> None:
    grid = {"k": range(2, 10**5 + 2), "eps": np.linspace(0.1, 1.0, 10**5)}
    fast_refusal(lambda: quiet("randomized_response", grid, "dp_epsilon"), "10000000000")
    # one axis of 10^10 values is not read; an endless iterator stops at the limit
    axis = {"k": range(10**10), "eps": [1.0]}
    fast_refusal(lambda: quiet("randomized_response", axis, "dp_epsilon"), "10000000000")
    endless = {"k": count(2), "eps": [1.0]}
    fast_refusal(lambda: quiet("randomized_response", endless, "dp_epsilon"), "grid['k']")


def test_toml_ranges_are_counted_before_they_are_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = {"family": "randomized_response", "queries": ["dp_epsilon"]}
    big = {"k": {"start": 0, "stop": 10**12 - 1, "step": 1}}
    fast_refusal(lambda: parse_spec(head | {"grid": big}), "grid.k", "1000000000000")
    wide = {"eps": {"start": 0.0, "stop": 1.0, "num": 10**12}}
    fast_refusal(lambda: parse_spec(head | {"grid": wide}), "grid.eps", "1000000000000")
    square = {"k": {"start": 1, "stop": 10**5, "step": 1}, "eps": {"start": 0, "stop": 1,
              "num": 10**5}}  # fmt: skip
    fast_refusal(lambda: parse_spec(head | {"grid": square}), "[grid]", "10000000000")
    spec = spec_file(tmp_path, "randomized_response", "k = {start = 0, stop = 999999999999, "
                     "step = 1}\neps = [1.0]")  # fmt: skip
    assert cli.main(["sweep", str(spec), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "1000000000000 points" in err
    assert "limit of 1000000" in err


def test_tiny_spec_json_describing_a_trillion_points_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    quiet("randomized_response", {"k": [2], "eps": [1.0]}, "dp_epsilon", store=store)
    path = store / "_spec.json"
    spec = json.loads(path.read_text())
    spec["grid"] = {"product": [[f"p{i}", list(range(10))] for i in range(12)]}
    path.write_text(json.dumps(spec))
    assert path.stat().st_size < 1500
    fast_refusal(lambda: dpcap.load_sweep(store), "_spec.json", "1000000000000")


def test_workers_are_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    limit = max(sweeps.MAX_WORKERS, os.cpu_count() or 1)
    grid = {"k": [2], "eps": [1.0]}
    with pytest.raises(ProblemTooLargeError, match=f"at most {limit}.*{limit + 1}"):
        quiet("randomized_response", grid, "dp_epsilon", workers=limit + 1)
    spec = spec_file(tmp_path, "randomized_response", "k = [2]\neps = [1.0]")
    assert cli.main(["sweep", str(spec), "--workers", "100000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--workers" in err
    assert "100000" in err
