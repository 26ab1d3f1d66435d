"""Make ``dpcap.solvers`` importable from a source checkout.

The numerical engines live in ``solvers/`` beside ``dpcap/`` in the repository and are installed
*inside* dpcap as ``dpcap.solvers`` (pyproject's ``package-dir``); the wheel has no top-level
``solvers`` package. An installed dpcap therefore has ``dpcap/solvers/`` on disk. A source
checkout does not: when ``import dpcap`` resolves to the repository's ``dpcap/`` (running from the
repository root, or with the root on ``sys.path``), this module registers the sibling ``solvers/``
folder under the name ``dpcap.solvers``, so both layouts import the same way.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def register_source_solvers() -> None:
    """Register ``<repo>/solvers`` as ``dpcap.solvers`` when running from a source checkout."""
    name = "dpcap.solvers"
    if name in sys.modules:
        return
    package_dir = Path(__file__).resolve().parent
    if (package_dir / "solvers" / "__init__.py").is_file():
        return  # installed layout: the regular import system finds dpcap/solvers/
    source = package_dir.parent / "solvers"
    init = source / "__init__.py"
    if not init.is_file():
        raise ImportError(
            f"dpcap.solvers is missing: neither {package_dir / 'solvers'} nor {source} exists"
        )
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(source)]
    )
    if spec is None or spec.loader is None:  # pragma: no cover - importlib always gives one
        raise ImportError(f"cannot load {init} as {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    parent = sys.modules.get("dpcap")
    if parent is not None:
        parent.solvers = module  # type: ignore[attr-defined]
