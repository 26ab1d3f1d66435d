"""The layering rules of the design, checked on the source tree.

* No query module imports another query module's private names (``from dpcap.x import _y`` or
  ``x._y`` on an imported public dpcap module). Private modules (``dpcap/_certify.py``,
  ``dpcap/_validation.py``, …) are the shared infrastructure and may be used by every query.
* ``solvers/`` (installed as ``dpcap.solvers``) imports nothing from the rest of dpcap.
* No public function changes its return type with its arguments (no ``typing.overload``).
* Modules stay small (by problem): none in ``dpcap/`` or ``solvers/`` is over 650 lines.
* No docstring or comment points at files that do not ship (the design notes).
* Every result type has ``gap``, ``to_dict`` and ``to_frame``.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math
from pathlib import Path

import pytest

import dpcap
from dpcap import result

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "dpcap").rglob("*.py")) + sorted((ROOT / "solvers").rglob("*.py"))
MAX_LINES = 650


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[0] == "solvers":
        parts = ["dpcap", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_private_module(name: str) -> bool:
    return any(part.startswith("_") for part in name.split(".")[1:])


def _is_module(name: str, root: Path) -> bool:
    """Whether ``name`` is a module or package of the tree (not a name inside a module)."""
    parts = name.split(".")
    if parts[0] != "dpcap":
        return False
    rest = parts[1:]
    base = root / "dpcap"
    if rest[:1] == ["solvers"]:
        base, rest = root / "solvers", rest[1:]
    path = base.joinpath(*rest)
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> public dpcap module it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*parent, node.module] if node.module else parent)
            else:
                source = node.module or ""
            if not source.startswith("dpcap"):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if _is_module(full, root):
                    if not _is_private_module(full):
                        aliases[alias.asname or alias.name] = full
                elif (
                    alias.name.startswith("_") and not _is_private_module(source) and source != here
                ):
                    found.append(f"{here}: from {source} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dpcap") and not _is_private_module(alias.name):
                    aliases[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            target = aliases[node.value.id]
            if target != here and target.count(".") >= 1:
                found.append(f"{here}: {node.value.id}.{node.attr} (from {target})")
    return found


def test_no_query_module_imports_private_names_of_another() -> None:
    found = [v for path in SOURCES for v in _violations(path)]
    assert not found, "private names used across modules:\n" + "\n".join(found)


def test_the_walk_catches_a_private_import(tmp_path: Path) -> None:
    """The rule above can fail: a planted violation is reported."""
    fake = tmp_path / "dpcap" / "query.py"
    fake.parent.mkdir()
    fake.write_text(
        "from dpcap.capacity import _secret\n"
        "from dpcap._certify import conclude\n"
        "import dpcap.midp as m\n"
        "m._hidden\n"
    )
    found = _violations(fake, tmp_path)
    assert found == [
        "dpcap.query: from dpcap.capacity import _secret",
        "dpcap.query: m._hidden (from dpcap.midp)",
    ]


def test_solvers_import_nothing_from_the_rest_of_dpcap() -> None:
    for path in sorted((ROOT / "solvers").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert not node.module.startswith("dpcap"), f"{path.name} imports {node.module}"
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("dpcap"), f"{path.name} imports {alias.name}"


def test_no_return_type_depends_on_arguments() -> None:
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        assert "@overload" not in text, path.name
        assert "typing.overload" not in text, path.name


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (> {MAX_LINES})"


def test_no_citation_points_outside_the_repository() -> None:
    for path in [*SOURCES, *sorted((ROOT / "examples").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        for needle in ("DESIGN", "STYLE.md", "shared/", "seeds/"):
            assert needle not in text, f"{path.relative_to(ROOT)} mentions {needle!r}"


def test_cited_mathematics_page_exists() -> None:
    page = ROOT / "docs" / "mathematics.rst"
    text = page.read_text(encoding="utf-8")
    for number in range(1, 13):
        assert f"\n{number}. " in text, f"docs/mathematics.rst has no section {number}"


def _result_types() -> list[type]:
    return [
        obj
        for _, obj in inspect.getmembers(result, inspect.isclass)
        if dataclasses.is_dataclass(obj) and issubclass(obj, result._Result)
    ]


def test_every_result_type_has_the_common_shape() -> None:
    types = _result_types()
    names = {t.__name__ for t in types}
    assert {
        "CapacityResult",
        "CapacitiesResult",
        "CurveResult",
        "DistortionResult",
        "FunnelCurve",
        "FunnelResult",
        "MIDPResult",
        "RenyiProfile",
    } <= names
    for t in types:
        fields = {f.name for f in dataclasses.fields(t)}
        assert {"value", "lower", "upper", "status", "method", "unit", "message", "tol"} <= fields
        assert "iterations" in fields, t.__name__
        for attr in ("gap", "to_dict", "to_frame"):
            assert hasattr(t, attr), f"{t.__name__} has no {attr}"
        if issubclass(t, result._Sequence):
            assert callable(t.__len__)
            assert callable(t.__getitem__)
            if t.axis:
                assert t.axis in fields, f"{t.__name__}.axis names no field"


def test_results_are_exported_from_one_module() -> None:
    for t in _result_types():
        assert t.__module__ == "dpcap.result"
        assert getattr(dpcap, t.__name__) is t


BSC = [[0.9, 0.1], [0.1, 0.9]]
HAMMING_BIT = [[0.0, 1.0], [1.0, 0.0]]
DSBS = [[0.45, 0.05], [0.05, 0.45]]


def _producers() -> list[tuple[str, object]]:
    from dpcap.mechanisms import per_entry, randomized_response

    M = per_entry(2, randomized_response(2, 1.0))
    return [
        ("capacity", lambda: dpcap.capacity(BSC)),
        ("capacities", lambda: dpcap.capacities([BSC, [[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]])),
        ("capacity_cost", lambda: dpcap.capacity(BSC, cost=[0.0, 1.0], budget=0.3)),
        ("g_capacity", lambda: dpcap.g_capacity(BSC, kind="additive")),
        ("risk_capacity", lambda: dpcap.risk_capacity(BSC)),
        ("renyi_capacity", lambda: dpcap.renyi_capacity(BSC, 2.0)),
        ("renyi_profile", lambda: dpcap.renyi_profile(BSC, [0.0, 0.5, 1.0, math.inf])),
        ("alpha_leakage", lambda: dpcap.alpha_leakage(BSC, 2.0)),
        ("midp", lambda: dpcap.midp(M)),
        ("correlated_leakage", lambda: dpcap.correlated_leakage(M)),
        ("rate_distortion", lambda: dpcap.rate_distortion([0.5, 0.5], HAMMING_BIT, 0.1)),
        ("rate_distortion_curve", lambda: dpcap.rate_distortion_curve([0.5, 0.5], HAMMING_BIT)),
        ("optimal_mechanism", lambda: dpcap.optimal_mechanism([0.5, 0.5], HAMMING_BIT, 1.0)),
        ("privacy_distortion", lambda: dpcap.privacy_distortion([0.5, 0.5], HAMMING_BIT, 0.2)),
        (
            "privacy_distortion_curve",
            lambda: dpcap.privacy_distortion_curve([0.5, 0.5], HAMMING_BIT, n_points=3),
        ),
        ("privacy_funnel", lambda: dpcap.privacy_funnel(DSBS, 0.3)),
        ("information_bottleneck_curve", lambda: dpcap.information_bottleneck_curve(DSBS)),
        ("perfect_privacy", lambda: dpcap.perfect_privacy(DSBS)),
        ("inference_privacy", lambda: dpcap.inference_privacy(DSBS, HAMMING_BIT, 0.2)),
    ]


@pytest.mark.parametrize(
    ("name", "make"), _producers(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_result_round_trips_through_strict_json_and_pandas(name: str, make: object) -> None:
    import json

    res = make()  # type: ignore[operator]
    d = res.to_dict()
    text = json.dumps(d, allow_nan=True)
    back = json.loads(text)
    names = {s.value for s in dpcap.Status}
    statuses = back["status"] if isinstance(back["status"], list) else [back["status"]]
    assert statuses
    assert set(statuses) <= names
    assert back["value"] == pytest.approx(_plain_value(res.value), nan_ok=True)
    # strict JSON apart from the infinities the issue keeps: no NaN anywhere
    assert "NaN" not in text
    frame = res.to_frame()
    rows = len(res) if isinstance(res, result._Sequence) else 1
    assert len(frame) == rows
    assert {"value", "lower", "upper", "status", "gap"} <= set(frame.columns)
    if isinstance(res, result._Sequence):
        assert type(res[0]).__name__.endswith("Result")
        assert len(back["points"]) == rows
        if res.axis:
            assert list(frame[res.axis]) == pytest.approx(list(getattr(res, res.axis)))


def _plain_value(value: object) -> object:
    import numpy as np

    return value.tolist() if isinstance(value, np.ndarray) else value
