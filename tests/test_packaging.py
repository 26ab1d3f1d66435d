"""The package imports the same way from a source checkout and from an installation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = (
    "import sys, dpcap, dpcap.solvers, dpcap.solvers.pairwise; "
    "print(dpcap.__file__); print(dpcap.solvers.__file__); "
    "heavy = ('cvxpy', 'pandas', 'matplotlib', 'dask', 'pyarrow', 'tqdm'); "
    "print(sorted(m for m in heavy if m in sys.modules))"
)


def _probe(cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _installed_files(cwd: Path) -> list[str]:
    """The files of the installed distribution, read from outside the source tree."""
    code = (
        "import importlib.metadata as m\n"
        "try:\n    d = m.distribution('dpcap')\nexcept m.PackageNotFoundError:\n    print('-')\n"
        "else:\n    print('\\n'.join(str(f) for f in d.files or []))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    if lines == ["-"]:  # pragma: no cover - `make test` installs the package first
        pytest.skip("dpcap is not installed in this environment (run `make test`)")
    return lines


def test_source_checkout_maps_solvers_into_dpcap() -> None:
    dpcap_file, solvers_file, heavy = _probe(ROOT)
    assert Path(dpcap_file) == ROOT / "dpcap" / "__init__.py"
    # through the tracked symlink dpcap/solvers -> ../solvers: one package, as installed
    assert Path(solvers_file) == ROOT / "dpcap" / "solvers" / "__init__.py"
    assert Path(solvers_file).resolve() == ROOT / "solvers" / "__init__.py"
    assert heavy == "[]"


def test_installed_package_imports_from_any_directory(tmp_path: Path) -> None:
    _installed_files(tmp_path)
    dpcap_file, solvers_file, heavy = _probe(tmp_path)
    installed = Path(dpcap_file).parent
    assert installed != ROOT / "dpcap"
    assert installed.parent.name == "site-packages"
    assert Path(solvers_file) == installed / "solvers" / "__init__.py"
    assert heavy == "[]"


def test_wheel_has_no_top_level_solvers_package(tmp_path: Path) -> None:
    files = [Path(f) for f in _installed_files(tmp_path)]
    tops = {f.parts[0] for f in files if f.suffix == ".py"}
    assert tops == {"dpcap"}
    assert Path("dpcap/solvers/pairwise.py") in files


def test_wheel_holds_every_module_of_the_source_tree(tmp_path: Path) -> None:
    """Every wing is a package of the wheel: nothing left behind by the package list."""
    files = {Path(f) for f in _installed_files(tmp_path) if f.endswith(".py")}
    source = {Path("dpcap") / p.relative_to(ROOT / "dpcap") for p in (ROOT / "dpcap").rglob("*.py")}
    source |= {
        Path("dpcap/solvers") / p.relative_to(ROOT / "solvers")
        for p in (ROOT / "solvers").rglob("*.py")
    }
    assert source - files == set()


def test_import_dpcap_does_not_import_heavy_modules() -> None:
    code = (
        "import sys, dpcap, dpcap.mechanisms, dpcap.bounds, dpcap.study.sweeps, "
        "dpcap.study.catalogue, dpcap.study.calibration, dpcap.plots, dpcap.cli; "
        "heavy = ('cvxpy', 'pandas', 'matplotlib', 'dask', 'pyarrow', 'tqdm', 'hypothesis'); "
        "bad = [m for m in heavy if m in sys.modules]; print(bad)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
