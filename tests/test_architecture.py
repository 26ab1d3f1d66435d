"""The house in wings: the layering rules of the design, checked on the source tree.

dpcap is built in wings, from the bottom up (the docs' architecture page draws them):

====================  ==========================================================================
wing                  modules
====================  ==========================================================================
engines               ``solvers/`` (installed as ``dpcap.solvers``)
errors                ``dpcap.errors``
result                ``dpcap.result`` (a package)
core                  ``dpcap._core`` (private infrastructure shared by two or more families)
model                 ``dpcap.channel``, ``dpcap.neighbors``, ``dpcap.function_mechanism``,
                      ``dpcap.product_channel``, ``dpcap.mechanisms``
families              every other module: ``dpcap.shannon``, ``dpcap.tradeoffs``, ``dpcap.mi_dp``,
                      ``dpcap.renyi``, ``dpcap.privacy``, ...
faces                 ``dpcap.study``, ``dpcap.cli``, ``dpcap.plots`` (and ``dpcap.__main__``)
====================  ==========================================================================

The rules, each with a test that plants a violation and sees it reported:

* **one rule per wing** (:data:`ALLOWED`): engines import nothing of dpcap, ``errors`` nothing,
  ``result`` only ``errors``, ``_core`` only ``errors``, ``result`` and the engines; the model
  adds ``_core`` and itself; families add the model and other families; faces may use
  everything. ``import dpcap`` (the front door) imports no face but :mod:`dpcap.study`;
* **every certificate bound goes through** ``_core``: the engines' rounding model
  (``dpcap.solvers.rounding``) is imported by ``_core`` alone;
* **a private module belongs to its wing**: ``dpcap.W._x`` is imported from inside ``dpcap.W``
  only, and no ``_x.py`` stays at the top of ``dpcap/``;
* **faces reach queries by their public names**: no private name of another module is
  imported (``from dpcap.x import _y``, ``x._y``);
* **no import circle** between modules, lazy imports (inside functions) included;
* **no shadowed module**: no public module is hidden by an attribute of the same name in its
  package (``dpcap.sweep`` is the function; the module is :mod:`dpcap.study.sweeps`);
* and the older rules: no ``typing.overload`` (a return type never depends on the arguments),
  modules stay under 650 lines, nothing cites files that do not ship.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 650

WINGS = ("engines", "errors", "result", "core", "model", "families", "faces", "front")

#: The wings each wing may import from (its own always allowed).
ALLOWED: dict[str, set[str]] = {
    "engines": set(),
    "errors": set(),
    "result": {"errors"},
    "core": {"errors", "result", "engines"},
    "model": {"errors", "result", "engines", "core"},
    "families": {"errors", "result", "engines", "core", "model"},
    "faces": {"errors", "result", "engines", "core", "model", "families", "front"},
    "front": {"errors", "result", "engines", "core", "model", "families", "faces"},
}

MODEL = (
    "dpcap.channel",
    "dpcap.neighbors",
    "dpcap.function_mechanism",
    "dpcap.product_channel",
    "dpcap.line_noise",
)
FACES = ("dpcap.study", "dpcap.cli", "dpcap.plots", "dpcap.__main__", "dpcap.testing")


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def wing(name: str) -> str:
    """The wing of module ``name`` (a dotted ``dpcap`` name)."""
    if name == "dpcap":
        return "front"
    if _inside(name, "dpcap.solvers"):
        return "engines"
    if name == "dpcap.errors":
        return "errors"
    if _inside(name, "dpcap.result"):
        return "result"
    if _inside(name, "dpcap._core"):
        return "core"
    if any(_inside(name, m) for m in (*MODEL, "dpcap.mechanisms")):
        return "model"
    if any(_inside(name, f) for f in FACES):
        return "faces"
    return "families"


# --- the source tree as a graph -------------------------------------------------------------


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """``{dotted name: file}`` of every module of dpcap and its engines."""
    out: dict[str, Path] = {}
    for base, prefix in ((root / "dpcap", ("dpcap",)), (root / "solvers", ("dpcap", "solvers"))):
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            if rel.parts[:1] == ("solvers",):  # the symlink dpcap/solvers -> ../solvers
                continue
            parts = [*prefix, *rel.parts]
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


SOURCES = module_files()


def imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, str, int]]:
    """``(imported module, imported name or "", line)`` of every dpcap import in the file,
    at module level or inside a function (lazy imports count)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*parts, node.module] if node.module else parts)
            else:
                source = node.module or ""
            if not _inside(source, "dpcap"):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in known:
                    found.append((full, "", node.lineno))
                else:
                    found.append((source, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _inside(alias.name, "dpcap"):
                    found.append((alias.name, "", node.lineno))
    return found


def graph(files: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules it imports (lazy imports included; a module's own package is not
    counted as imported by it, though Python runs it first)."""
    out: dict[str, set[str]] = {}
    for name, path in files.items():
        deps = set()
        for target, _, _ in imports(name, path, files):
            while target not in files and "." in target:
                target = target.rpartition(".")[0]
            if target in files and target != name:
                deps.add(target)
        out[name] = deps
    return out


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def longest_chain(edges: dict[str, set[str]]) -> list[str]:
    """The longest import chain (the graph has no circle)."""
    best: dict[str, list[str]] = {}

    def visit(node: str) -> list[str]:
        if node not in best:
            tails = [visit(child) for child in edges.get(node, ())]
            best[node] = [node, *max(tails, key=len, default=[])]
        return best[node]

    return max((visit(n) for n in sorted(edges)), key=len)


# --- the rules ------------------------------------------------------------------------------


def layer_violations(files: dict[str, Path]) -> list[str]:
    """Imports that point up, or across to a wing the importer's rule does not allow."""
    found = []
    for name, deps in graph(files).items():
        mine = wing(name)
        for dep in sorted(deps):
            theirs = wing(dep)
            if theirs != mine and theirs not in ALLOWED[mine]:
                found.append(f"{name} ({mine}) imports {dep} ({theirs})")
        if name == "dpcap":
            found += [
                f"dpcap imports the face {d}"
                for d in sorted(deps)
                if wing(d) == "faces" and not _inside(d, "dpcap.study")
            ]
    return found


def rounding_violations(files: dict[str, Path]) -> list[str]:
    """Modules outside ``_core`` and the engines that use the rounding model directly."""
    return [
        f"{name} imports dpcap.solvers.rounding"
        for name, deps in graph(files).items()
        if "dpcap.solvers.rounding" in deps and wing(name) not in ("core", "engines")
    ]


def _owner(private: str) -> str | None:
    """The wing package owning the private module ``private``, or None when it is public."""
    parts = private.split(".")
    for k in range(1, len(parts)):
        if parts[k].startswith("_") and parts[k] != "__main__":
            return ".".join(parts[:k])
    return None


def privacy_violations(files: dict[str, Path]) -> list[str]:
    """Private modules used outside their wing; ``_x.py`` files at the top of ``dpcap/``;
    private names imported from another module."""
    found = []
    for name, path in files.items():
        owner = _owner(name)
        if owner == "dpcap" and name != "dpcap._core" and not _inside(name, "dpcap._core"):
            found.append(f"{name} is a private module at the top of dpcap/")
        for target, imported, line in imports(name, path, files):
            module = target
            while module not in files and "." in module:
                module = module.rpartition(".")[0]
            owner = _owner(module)
            if owner not in (None, "dpcap") and not _inside(name, owner):
                found.append(f"{name}:{line} imports {module}, private to {owner}")
            if owner == "dpcap" and not _inside(module, "dpcap._core"):
                found.append(f"{name}:{line} imports {module}, a private top-level module")
            private_name = imported.startswith("_") and not imported.startswith("__")
            theirs = _owner(module)
            if private_name and module != name and (theirs is None or not _inside(name, theirs)):
                found.append(f"{name}:{line} imports the private name {target}.{imported}")
        found += _private_attributes(name, path, files)
    return found


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` of a chain of names and attributes (None for anything else)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _private_attributes(name: str, path: Path, files: dict[str, Path]) -> list[str]:
    """``m._y`` where ``m`` (a name, or a dotted chain like ``dpcap.renyi``) stands for another
    public dpcap module: bound by ``import``, ``import ... as``, or ``from ... import`` (relative
    imports resolved)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # local name -> the dotted name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.partition(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*parts, node.module] if node.module else parts)
            else:
                source = node.module or ""
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{source}.{alias.name}"
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            continue
        chain = _dotted(node.value)
        if chain is None:
            continue
        head, _, rest = chain.partition(".")
        if head not in bound:
            continue
        target = bound[head] + (f".{rest}" if rest else "")
        if target in files and _owner(target) is None and target != name:
            found.append(f"{name}:{node.lineno} uses {chain}.{node.attr} (private to {target})")
    return found


def test_each_wing_imports_only_what_its_rule_allows() -> None:
    found = layer_violations(SOURCES)
    assert not found, "imports against the wings' rules:\n" + "\n".join(found)


def test_every_certificate_bound_goes_through_core() -> None:
    found = rounding_violations(SOURCES)
    assert not found, "\n".join(found)


def test_private_modules_and_names_stay_in_their_wing() -> None:
    found = privacy_violations(SOURCES)
    assert not found, "private modules or names used across wings:\n" + "\n".join(found)


def test_no_import_circle() -> None:
    found = circles(graph(SOURCES))
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_engines_import_nothing_of_the_rest() -> None:
    """Also through absolute imports of ``dpcap`` written inside ``solvers/``."""
    for name, path in SOURCES.items():
        if wing(name) == "engines":
            for target, _, line in imports(name, path, SOURCES):
                assert _inside(target, "dpcap.solvers"), f"{name}:{line} imports {target}"


def shadowed(package: str) -> list[str]:
    """Public modules of ``package`` hidden by an attribute of the same name in their package."""
    found = []
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        if _owner(info.name) is not None or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        parent, _, leaf = info.name.rpartition(".")
        if getattr(importlib.import_module(parent), leaf) is not module:
            found.append(f"{info.name} is shadowed by {parent}.{leaf}")
    return found


def test_no_public_module_is_shadowed() -> None:
    """Every public module is the attribute of its package that bears its name."""
    assert shadowed("dpcap") == []


# --- each rule can fail: planted violations --------------------------------------------------


def _plant(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        for parent in path.relative_to(tmp_path).parents:
            init = tmp_path / parent / "__init__.py"
            if parent.parts and parent.parts[0] in ("dpcap", "solvers") and not init.exists():
                init.write_text("", encoding="utf-8")
    return module_files(tmp_path)


@pytest.mark.parametrize(
    ("planted", "expected"),
    [
        ({"solvers/blahut.py": "from dpcap.result import CapacityResult\n"}, "(engines) imports"),
        ({"dpcap/errors.py": "from dpcap.result import CapacityResult\n"}, "(errors) imports"),
        ({"dpcap/result/_x.py": "from dpcap.channel import Channel\n"}, "(result) imports"),
        ({"dpcap/_core/certify.py": "from dpcap.channel import Channel\n"}, "(core) imports"),
        ({"dpcap/channel.py": "from dpcap.renyi import renyi_capacity\n"}, "(model) imports"),
        ({"dpcap/renyi.py": "def f():\n    from dpcap.cli import main\n"}, "(families) imports"),
        ({"dpcap/__init__.py": "from dpcap import plots\n"}, "dpcap imports the face"),
    ],
)
def test_a_planted_layer_violation_is_reported(
    tmp_path: Path, planted: dict[str, str], expected: str
) -> None:
    base = {"dpcap/result/__init__.py": "", "dpcap/plots/__init__.py": "", "dpcap/cli.py": ""}
    base |= {"dpcap/renyi.py": "", "dpcap/channel.py": "", "solvers/rounding.py": ""}
    files = _plant(tmp_path, base | planted)
    found = layer_violations(files)
    assert any(expected in f for f in found), found


def test_a_planted_rounding_bypass_is_reported(tmp_path: Path) -> None:
    files = _plant(
        tmp_path,
        {
            "solvers/rounding.py": "U = 2.0**-53\n",
            "dpcap/gain_capacity.py": "from dpcap.solvers import rounding\n",
            "dpcap/_core/certify.py": "from dpcap.solvers import rounding\n",
        },
    )
    assert rounding_violations(files) == ["dpcap.gain_capacity imports dpcap.solvers.rounding"]


def test_planted_private_violations_are_reported(tmp_path: Path) -> None:
    files = _plant(
        tmp_path,
        {
            "dpcap/_helpers.py": "",
            "dpcap/tradeoffs/_markov.py": "",
            "dpcap/tradeoffs/funnel.py": "from dpcap.tradeoffs import _markov\n",
            "dpcap/renyi.py": "from dpcap.tradeoffs._markov import constant\n",
            "dpcap/mi_dp.py": "from dpcap.renyi import _secret\nimport dpcap.renyi as r\n"
            "r._hidden\n",
            "dpcap/privacy.py": "import dpcap.renyi\ndpcap.renyi._chain\n",
            "dpcap/shannon/cost.py": "from .. import renyi as rr\nrr._relative\n",
        },
    )
    found = privacy_violations(files)
    assert "dpcap._helpers is a private module at the top of dpcap/" in found
    assert "dpcap.renyi:1 imports dpcap.tradeoffs._markov, private to dpcap.tradeoffs" in found
    assert "dpcap.mi_dp:1 imports the private name dpcap.renyi._secret" in found
    assert "dpcap.mi_dp:3 uses r._hidden (private to dpcap.renyi)" in found
    assert "dpcap.privacy:2 uses dpcap.renyi._chain (private to dpcap.renyi)" in found
    assert "dpcap.shannon.cost:2 uses rr._relative (private to dpcap.renyi)" in found
    assert not [f for f in found if f.startswith("dpcap.tradeoffs.funnel")]


def test_a_planted_shadowed_module_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "planted_house"
    (package / "wing").mkdir(parents=True)
    (package / "__init__.py").write_text("from planted_house.sweep import sweep\n")
    (package / "sweep.py").write_text("def sweep():\n    return 1\n")
    (package / "wing" / "__init__.py").write_text("")
    (package / "wing" / "fine.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert shadowed("planted_house") == ["planted_house.sweep is shadowed by planted_house.sweep"]


def test_a_planted_circle_is_reported(tmp_path: Path) -> None:
    files = _plant(
        tmp_path,
        {
            "dpcap/a.py": "from dpcap import b\n",
            "dpcap/b.py": "def f():\n    from dpcap.c import g\n",  # lazy imports count
            "dpcap/c.py": "import dpcap.a\n",
            "dpcap/d.py": "from dpcap import a\n",
        },
    )
    assert circles(graph(files)) == [["dpcap.a", "dpcap.b", "dpcap.c"]]


def test_the_chain_walk_follows_imports(tmp_path: Path) -> None:
    files = _plant(
        tmp_path,
        {"dpcap/a.py": "from dpcap import b\n", "dpcap/b.py": "import dpcap.c\n"}
        | {"dpcap/c.py": ""},
    )
    assert longest_chain(graph(files))[-3:] == ["dpcap.a", "dpcap.b", "dpcap.c"]


# --- older rules ----------------------------------------------------------------------------


def test_no_return_type_depends_on_arguments() -> None:
    for path in SOURCES.values():
        text = path.read_text(encoding="utf-8")
        assert "@overload" not in text, path.name
        assert "typing.overload" not in text, path.name


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_modules_stay_small(name: str) -> None:
    path = SOURCES[name]
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines (> {MAX_LINES})"


def test_no_citation_points_outside_the_repository() -> None:
    for path in [*SOURCES.values(), *sorted((ROOT / "examples").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        for needle in ("DESIGN", "STYLE.md", "shared/", "seeds/"):
            assert needle not in text, f"{path.relative_to(ROOT)} mentions {needle!r}"


def test_cited_mathematics_page_exists() -> None:
    page = ROOT / "docs" / "mathematics.rst"
    text = page.read_text(encoding="utf-8")
    for number in range(1, 13):
        assert f"\n{number}. " in text, f"docs/mathematics.rst has no section {number}"


def test_the_engines_are_a_package_of_dpcap_in_the_source_tree() -> None:
    """``dpcap/solvers`` is the tracked symlink to ``solvers/``: every tool sees one package."""
    link = ROOT / "dpcap" / "solvers"
    assert link.is_symlink()
    assert link.resolve() == (ROOT / "solvers").resolve()
    import dpcap.solvers

    assert Path(dpcap.solvers.__file__).resolve().parent == (ROOT / "solvers").resolve()
