"""Fuzz group ``sweep_specs``: a sweep's spec is checked before anything runs, and runs nothing.

The spec normaliser is what :func:`dpcap.sweep` does to its arguments before any instance is
built (``dpcap.study._spec``: :func:`~dpcap.study._spec.family`, ``normalise``, ``points`` and
``queries``, in that order); the spec file's reader (``dpcap.cli._sweep.parse_spec`` and
``load_spec``) stands in front of it on the command line. Properties (the contracts of
:func:`dpcap.sweep`'s docstring and ``docs/mathematics.rst`` §8, none read off the code's output):

* any spec is accepted or refused with a :class:`dpcap.DpcapError` that is a ``ValueError``
  (:class:`~dpcap.ParameterError`, :class:`~dpcap.ProblemTooLargeError`), never another
  exception;
* one malformed element in a valid spec is refused with a message naming it (its grid
  parameter, query, query parameter, or ``family``); a valid spec is accepted as documented:
  the product of its axes, the last varying fastest, one query row per listed value;
* a family string that names anything but a family of :mod:`dpcap.mechanisms` is refused
  without ``allow_modules``, and a spec never imports or runs anything: a module on ``sys.path``
  that writes a marker file when imported is named in every way a spec can name it, and the
  marker never appears;
* :func:`dpcap.sweep` on tiny valid specs (values the family may refuse included) returns every
  grid point exactly once, with one row per query row (a refused point gives ``failed`` rows).

Findings fixed: S1, a spec file that is not UTF-8 let a bare ``UnicodeDecodeError`` out of
``load_spec``; S2, an explicit grid with a parameter name that is not a string in a later point
raised ``TypeError`` (``dpcap/study/_spec.py``).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import re
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _harness import fuzz
from hypothesis import assume, given
from hypothesis import strategies as st

import dpcap
from dpcap import mechanisms
from dpcap.cli import _sweep as cli_sweep
from dpcap.cli import main as cli_main
from dpcap.study import _spec, catalogue

#: The functions a family string may resolve to without ``allow_modules``.
MECHANISM_FUNCTIONS = [getattr(mechanisms, name) for name in mechanisms.__all__]

#: The module that must never be imported: it writes its marker file when it is.
EVIL = "dpcap_fuzz_evil"

#: Column names of the sweep table that no grid parameter may take (the docstring's list).
RESERVED = ["point", "query", "value", "lower", "upper", "status", "message", "seconds"]

#: Families with small grids of valid values: parameter -> one valid value.
FAMILIES: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "randomized_response": {"k": st.integers(2, 4), "eps": st.floats(0.0, 3.0)},
    "binary_symmetric": {"p": st.floats(0.0, 0.5)},
    "truncated_geometric": {"n": st.integers(1, 4), "eps": st.floats(0.0, 3.0)},
    "erasure": {"n": st.integers(2, 3), "delta": st.floats(0.0, 1.0)},
}

#: Valid query entries, no two alike once expanded, with the rows each gives per grid point
#: (a list of a listable parameter gives one row per value; an array parameter is one value).
VALID_QUERIES: list[tuple[str, dict[str, Any], int]] = [
    ("capacity", {}, 1),
    ("capacity", {"tol": 1e-6, "unit": "bits"}, 1),
    ("dp_epsilon", {}, 1),
    ("max_leakage", {}, 1),
    ("kl_dp", {"neighbors": "all"}, 1),
    ("tv_dp", {}, 1),
    ("renyi_dp", {"alpha": [2.0, 8.0]}, 2),
    ("renyi_dp", {"alpha": 0.5}, 1),
    ("dp_delta", {"eps": [0.0, 0.5, 1.0]}, 3),
    ("renyi_capacity", {"alpha": 2.0, "method": "sibson"}, 1),
    ("mutual_information", {"prior": [0.5, 0.5]}, 1),
    ("midp", {"group": [0]}, 1),
]

# ------------------------------------------------------------------------------ the helpers


def normalised(
    family: Any, grid: Any, queries: Any, allow_modules: Any = None
) -> tuple[Any, list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    """The spec as :func:`dpcap.sweep` reads it before anything runs."""
    fn, _ = _spec.family(family, allow_modules)
    points = _spec.points(_spec.normalise(grid), fn)
    return fn, points, _spec.queries(queries)


def names(message: str, candidates: list[Any]) -> bool:
    """Whether ``message`` names one of ``candidates`` (a name as a word, anything else as its
    text or its repr)."""
    for c in candidates:
        text = c if isinstance(c, str) else repr(c)
        if text.isidentifier():
            if re.search(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", message):
                return True
        elif text in message or repr(text) in message:
            return True
    return False


def outcome(call: Any) -> tuple[Any, dpcap.DpcapError | None]:
    """``(value, None)`` if ``call()`` returns, ``(None, error)`` if it raises a DpcapError
    that is a ValueError; any other exception fails the test."""
    try:
        return call(), None
    except dpcap.DpcapError as exc:
        error = exc
    except Exception as exc:
        pytest.fail(f"raised {type(exc).__name__} (not a DpcapError): {exc}")
    if not isinstance(error, ValueError):
        pytest.fail(f"{type(error).__name__} is not a ValueError: {error}")
    return None, error


def refused(call: Any, candidates: list[Any] | None = None) -> str:
    """``call()`` must raise a DpcapError that is a ValueError (naming a candidate)."""
    _, error = outcome(call)
    if error is None:
        pytest.fail(f"accepted; should have been refused naming {candidates}")
    if candidates is not None:
        assert names(str(error), candidates), f"the message names none of {candidates}: {error}"
    return str(error)


def accepted_or_refused(call: Any) -> Any:
    """``call()``'s value, or None when it raised a DpcapError that is a ValueError."""
    return outcome(call)[0]


@dataclass
class Evil:
    """A module on ``sys.path`` that writes ``marker`` when imported or called."""

    folder: Path
    marker: Path
    other: Path  # a harmless module file an ``allow_modules`` may list

    def check(self) -> None:
        assert not self.marker.exists(), f"{EVIL} was imported: {self.marker.read_text()}"
        assert EVIL not in sys.modules
        assert not any(EVIL in name for name in sys.modules)


@pytest.fixture(scope="session")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evil]:
    folder = tmp_path_factory.mktemp("evil")
    marker = folder / "MARKER"
    body = (
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('imported')\n"
        "def run(*args, **kwargs):\n"
        f"    pathlib.Path({str(marker)!r}).write_text('called')\n"
        "randomized_response = run\n"
    )
    (folder / f"{EVIL}.py").write_text(body)
    (folder / EVIL).mkdir()
    (folder / EVIL / "__init__.py").write_text(body)
    (folder / EVIL / "sub.py").write_text(body)
    other = folder / "harmless_family.py"
    other.write_text("def family(k, eps):\n    return None\n")
    sys.path.insert(0, str(folder))  # importable by name, were a spec ever to import it
    try:
        yield Evil(folder, marker, other)
    finally:
        sys.path.remove(str(folder))


def quiet_sweep(*args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpcap.sweep(*args, progress=False, executor="serial", **kwargs)


# ------------------------------------------------------------------------- valid specs


@dataclass
class Spec:
    family: Any
    grid: Any
    queries: Any
    axes: dict[str, list[Any]]  # the grid's axes as plain lists
    points: list[dict[str, Any]]  # the grid's points, as documented
    rows: int  # query rows per grid point
    entries: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def product(axes: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The documented product grid: the values of each axis, the last varying fastest."""
    keys = list(axes)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes.values())]


def family_spelling(name: str) -> st.SearchStrategy[Any]:
    """The ways a spec may name a family of dpcap.mechanisms."""
    return st.sampled_from(
        [
            name,
            f"dpcap.mechanisms:{name}",
            f" dpcap.mechanisms : {name} ",
            getattr(mechanisms, name),
        ]
    )


def axis_container(values: list[Any]) -> st.SearchStrategy[Any]:
    """One axis as a list, a tuple, a NumPy array, or a bare scalar (one value)."""
    forms: list[Any] = [list(values), tuple(values)]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        forms.append(np.array(values))
    if len(values) == 1:
        forms.append(values[0])
    return st.sampled_from(forms)


def render_queries(
    entries: list[tuple[str, dict[str, Any], int]],
) -> st.SearchStrategy[Any]:
    """The documented forms of a query list: a name, a (name, params) pair, a list of names and
    pairs, a list of ``{"query": name, ...}`` dicts, or ``{name: params}``."""
    forms: list[Any] = [
        [name if not params else (name, params) for name, params, _ in entries],
        [(name, params) for name, params, _ in entries],
        [{"query": name, **params} for name, params, _ in entries],
    ]
    if len({name for name, _, _ in entries}) == len(entries):
        forms.append({name: params for name, params, _ in entries})
    if len(entries) == 1:
        name, params, _ = entries[0]
        forms.append((name, params))
        if not params:
            forms.append(name)
    return st.sampled_from(forms)


@st.composite
def valid_specs(draw: st.DrawFn, *, explicit: bool = True) -> Spec:
    name = draw(st.sampled_from(sorted(FAMILIES)))
    axes: dict[str, list[Any]] = {}
    for key, values in FAMILIES[name].items():
        axes[key] = draw(st.lists(values, min_size=1, max_size=3, unique=True))
    order = draw(st.permutations(list(axes)))
    axes = {k: axes[k] for k in order}
    points = product(axes)
    if explicit and draw(st.integers(0, 3)) == 0:
        grid: Any = [dict(p) for p in points]  # an explicit grid is its points, in order
    else:
        grid = {k: draw(axis_container(v)) for k, v in axes.items()}
    chosen = draw(
        st.lists(st.sampled_from(range(len(VALID_QUERIES))), min_size=1, max_size=3, unique=True)
    )
    entries = [VALID_QUERIES[i] for i in chosen]
    return Spec(
        family=draw(family_spelling(name)),
        grid=grid,
        queries=draw(render_queries(entries)),
        axes=axes,
        points=points,
        rows=sum(r for _, _, r in entries),
        entries=[(n, p) for n, p, _ in entries],
    )


def check_accepted(spec: Spec, result: Any) -> None:
    fn, points, plan = result
    assert any(fn is f for f in MECHANISM_FUNCTIONS)
    assert points == spec.points
    for point in points:
        assert all(type(v) in (int, float, bool, str) for v in point.values()), point
    # one query per listed value; dp_delta's list of ε is one curve (one row per ε)
    rows = sum(
        len(params["eps"]) if name == "dp_delta" and isinstance(params["eps"], list) else 1
        for name, params in plan
    )
    assert rows == spec.rows, (spec.queries, plan)
    assert all(name in catalogue.QUERIES for name, _ in plan)


@fuzz(examples=1500, quick=6)
@given(spec=valid_specs())
def test_valid_specs_are_accepted_as_documented(spec: Spec) -> None:
    result = accepted_or_refused(lambda: normalised(spec.family, spec.grid, spec.queries))
    assert result is not None, f"a valid spec was refused: {spec}"
    check_accepted(spec, result)


# ------------------------------------------------------------------- one malformed element

#: Grid values no axis may hold (not a plain number, boolean or string; NaN; beyond int64).
BAD_GRID_VALUES = [
    math.nan,
    np.float64("nan"),
    None,
    [1, [2]],
    [0.5],
    {"a": 1},
    1j,
    b"eps",
    2**63,
    -(2**63) - 1,
    10**30,
    np.array([1.0, 2.0]),
    object(),
]


@st.composite
def one_malformed(draw: st.DrawFn) -> tuple[Any, Any, Any, list[Any]]:
    """A valid spec with one malformed element, and what the refusal must name."""
    spec = draw(valid_specs(explicit=False))
    family, grid, queries = spec.family, {k: list(v) for k, v in spec.axes.items()}, spec.queries
    key = draw(st.sampled_from(sorted(grid)))
    kind = draw(
        st.sampled_from(
            [
                "bad value",
                "mixed kinds",
                "duplicate",
                "empty axis",
                "bare bad value",
                "unknown parameter",
                "reserved name",
                "bad name",
                "missing parameter",
                "too many points",
                "unknown query",
                "unknown query parameter",
                "bad query value",
                "missing query parameter",
                "query asked twice",
                "no queries",
                "bad query entry",
                "unknown family",
                "family outside",
                "family not a name",
            ]
        )
    )
    if kind == "bad value":
        value = draw(st.sampled_from(BAD_GRID_VALUES))
        grid[key].insert(draw(st.integers(0, len(grid[key]))), value)
        return family, grid, queries, [key]
    if kind == "mixed kinds":
        numeric = all(isinstance(v, (int, float)) for v in grid[key])
        other = draw(st.sampled_from(["a", "os:system", ""] if numeric else [1.5]))
        other = draw(st.sampled_from([other, True, False]))
        grid[key].insert(draw(st.integers(0, len(grid[key]))), other)
        return family, grid, queries, [key]
    if kind == "duplicate":
        value = draw(st.sampled_from(grid[key]))
        twin = draw(st.sampled_from([value, float(value), -0.0 if value == 0 else value]))
        grid[key].insert(draw(st.integers(0, len(grid[key]))), twin)
        return family, grid, queries, [key]
    if kind == "empty axis":
        grid[key] = draw(st.sampled_from([[], (), np.array([])]))
        return family, grid, queries, [key]
    if kind == "bare bad value":
        grid[key] = draw(st.sampled_from([math.nan, None, 1j, np.array(math.nan), b"x"]))
        return family, grid, queries, [key]
    if kind == "unknown parameter":
        name = draw(st.text("abcdefxyz_", min_size=1, max_size=6).filter(lambda s: s not in grid))
        grid[name] = [1.0]
        return family, grid, queries, [name]
    if kind == "reserved name":
        name = draw(st.sampled_from(RESERVED) | st.text("abc", max_size=3).map("query_".__add__))
        grid[name] = [1.0]
        return family, grid, queries, [name]
    if kind == "bad name":
        name = draw(st.sampled_from(["", 3, None, 1.5, b"k", (1, 2), True]))
        grid[name] = [1.0]  # type: ignore[index]
        return family, grid, queries, [name, repr(name)]
    if kind == "missing parameter":
        del grid[key]
        return family, grid, queries, [key, "grid"]
    if kind == "too many points":
        grid[key] = draw(st.sampled_from([range(10**7), range(-(10**12), 0), np.arange(1_000_001)]))
        if len(grid) > 1 or draw(st.booleans()):
            grid["zz_extra"] = range(1, 10**6)  # a product above the limit, axes below it
        return family, grid, queries, ["grid"]
    if kind == "unknown query":
        name = draw(
            st.text(max_size=8).filter(lambda s: s not in catalogue.QUERIES)
            | st.sampled_from([5, None, 1.5, "Capacity", "capacity ", "os:system"])
        )
        queries = [*spec.entries, (name, {})] if draw(st.booleans()) else [(name, {})]
        return family, grid, queries, [name, repr(name)]
    if kind == "unknown query parameter":
        query = draw(st.sampled_from(["capacity", "dp_epsilon", "renyi_dp", "kl_dp"]))
        name = draw(
            st.text("abcxyz_", min_size=1, max_size=5).filter(
                lambda s: s not in catalogue.QUERIES[query].parameters
            )
        )
        params = {"alpha": 2.0} if query == "renyi_dp" else {}
        return family, grid, [(query, {**params, name: 1.0})], [name]
    if kind == "bad query value":
        query, param, value = draw(st.sampled_from(BAD_QUERY_VALUES))
        params = {"alpha": 2.0} if query in ("renyi_dp", "renyi_capacity") else {}
        params = {"eps": 0.5} if query == "dp_delta" else params
        return family, grid, [(query, {**params, param: value})], [param]
    if kind == "missing query parameter":
        query = draw(
            st.sampled_from(["renyi_dp", "dp_delta", "renyi_capacity", "mutual_information"])
        )
        required = catalogue.QUERIES[query].required
        return family, grid, [*spec.entries, (query, {})], list(required)
    if kind == "query asked twice":
        name, params = draw(st.sampled_from(spec.entries))
        return family, grid, [*spec.entries, (name, params)], [name]
    if kind == "no queries":
        return family, grid, draw(st.sampled_from([[], {}, (), 5, None, 1.5])), ["queries"]
    if kind == "bad query entry":
        entry = draw(
            st.sampled_from([("capacity", {}, 3), {"name": "capacity"}, ("capacity", 5), 5, None])
        )
        return family, grid, [entry], ["queries"]
    if kind == "unknown family":
        name = draw(
            st.text(max_size=10).filter(lambda s: ":" not in s and s not in mechanisms.__all__)
            | st.sampled_from(["Randomized_response", "randomized_response ", "mechanisms"])
        )
        return name, grid, queries, ["family"]
    if kind == "family outside":
        return draw(OUTSIDE_FAMILIES), grid, queries, ["family"]
    name = draw(st.sampled_from([5, None, 1.5, b"randomized_response", ["binary_symmetric"]]))
    return name, grid, queries, ["family"]


#: Query parameters no query may take: (query, parameter, value).
BAD_QUERY_VALUES: list[tuple[str, str, Any]] = [
    ("renyi_dp", "alpha", -1.0),
    ("renyi_dp", "alpha", math.nan),
    ("renyi_dp", "alpha", "two"),
    ("renyi_dp", "alpha", []),
    ("renyi_dp", "alpha", [2.0, [3.0]]),
    ("renyi_dp", "alpha", [2.0, math.nan]),
    ("renyi_dp", "alpha", True),
    ("renyi_dp", "alpha", 1j),
    ("dp_delta", "eps", -0.5),
    ("dp_delta", "eps", "x"),
    ("dp_delta", "eps", [0.5, -1.0]),
    ("capacity", "tol", 0.0),
    ("capacity", "tol", -1e-3),
    ("capacity", "tol", math.inf),
    ("capacity", "tol", True),
    ("capacity", "tol", "1e-9"),
    ("capacity", "max_iter", 0),
    ("capacity", "max_iter", 1.5),
    ("capacity", "max_iter", True),
    ("capacity", "unit", "furlongs"),
    ("capacity", "unit", 2),
    ("capacity", "cost", "abc"),
    ("capacity", "cost", [[0.5]]),
    ("kl_dp", "neighbors", "nope"),
    ("kl_dp", "neighbors", ["all", "line"]),
    ("kl_dp", "neighbors", 3),
    ("mutual_information", "prior", "abc"),
    ("mutual_information", "prior", [[[0.5]]]),
    ("mutual_information", "prior", [0.5, None]),
    ("dp_epsilon", "metric", [1.0, 2.0]),
    ("dp_epsilon", "metric", "euclid"),
    ("midp", "group", [0.5]),
    ("midp", "group", [[0, 1]]),
    ("midp", "group", "0"),
    ("renyi_capacity", "kind", ["sibson", 1j]),
    ("renyi_capacity", "method", {"a": 1}),
]

#: Family strings naming something other than a family of dpcap.mechanisms.
OUTSIDE_FAMILIES = st.one_of(
    st.sampled_from(
        [
            "os:system",
            "subprocess:run",
            "builtins:eval",
            "builtins:__import__",
            "dpcap:sweep",
            "dpcap.study.sweeps:sweep",
            "dpcap.mechanisms._local:randomized_response",
            "dpcap.mechanisms:np",
            "dpcap.mechanisms:__builtins__",
            "dpcap.mechanisms:randomized_response.__globals__",
            "dpcap.mechanisms:_local",
            "dpcap.mechanisms:randomized_response:x",
            "numpy:ones",
            "math:sqrt",
            "json:loads",
            "/etc/passwd:root",
            "./families.py:family",
            "families.py:family",
            "::",
            ":",
        ]
    ),
    st.tuples(
        st.text(max_size=8).filter(lambda s: s.strip() not in ("", "dpcap.mechanisms")),
        st.sampled_from([*mechanisms.__all__, "system", "run", ""]) | st.text(max_size=6),
    ).map(":".join),
)


@fuzz(examples=4000, quick=12)
@given(case=one_malformed())
def test_one_malformed_element_is_refused_naming_it(case: tuple[Any, Any, Any, list[Any]]) -> None:
    family, grid, queries, candidates = case
    refused(lambda: normalised(family, grid, queries), candidates)


# --------------------------------------------------------------------------- random specs

ATOMS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.booleans(),
    st.text(max_size=6),
    st.none(),
    st.binary(max_size=4),
    st.complex_numbers(max_magnitude=2.0, allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            "os:system",
            f"{EVIL}:run",
            "__import__('os').system('true')",
            "nan",
            "inf",
            "randomized_response",
            np.float64("nan"),
            np.int64(3),
            np.array(2.0),
            np.bool_(True),
            range(3),
            range(0),
        ]
    ),
)

VALUES = st.recursive(
    ATOMS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=6,
)

PARAMETER_NAMES = st.one_of(
    st.sampled_from(["k", "eps", "p", "n", "delta", "sigma", *RESERVED, "query_eps", "_q"]),
    st.text(max_size=4),
    st.sampled_from([3, None, 1.5, b"k", True]),
)

QUERY_NAMES = st.one_of(st.sampled_from(list(catalogue.QUERIES)), st.text(max_size=6), ATOMS)
QUERY_PARAMETERS = st.one_of(
    st.sampled_from(sorted(catalogue.KINDS)), st.text(max_size=4), st.sampled_from(["query"])
)

RANDOM_FAMILIES = st.one_of(
    st.sampled_from(mechanisms.__all__),
    st.sampled_from(mechanisms.__all__).map("dpcap.mechanisms:".__add__),
    OUTSIDE_FAMILIES,
    st.text(max_size=12),
    ATOMS,
    st.sampled_from([mechanisms.randomized_response, lambda k, eps: None, print, len]),
)


def random_grids() -> st.SearchStrategy[Any]:
    huge = st.sampled_from([range(10**7), range(-(10**15), 10**15, 3)])  # refused, never built
    return st.one_of(
        st.dictionaries(PARAMETER_NAMES, VALUES | huge, max_size=3),
        st.lists(st.dictionaries(PARAMETER_NAMES, ATOMS, max_size=3), max_size=3),
        VALUES,
    )


def random_queries() -> st.SearchStrategy[Any]:
    params = st.dictionaries(QUERY_PARAMETERS, VALUES, max_size=3)
    entry = st.one_of(
        QUERY_NAMES,
        st.tuples(QUERY_NAMES, params),
        st.tuples(QUERY_NAMES, st.none()),
        st.builds(lambda name, rest: {"query": name, **rest}, QUERY_NAMES, params),
        VALUES,
    )
    return st.one_of(
        QUERY_NAMES,
        st.lists(entry, max_size=3),
        st.dictionaries(
            st.sampled_from(list(catalogue.QUERIES)) | st.text(max_size=4),
            params | st.none(),
            max_size=3,
        ),
        VALUES,
    )


@fuzz(examples=4000, quick=10)
@given(family=RANDOM_FAMILIES, grid=random_grids(), queries=random_queries(), how=st.integers(0, 9))
def test_random_specs_are_accepted_or_refused(
    evil: Evil, family: Any, grid: Any, queries: Any, how: int
) -> None:
    allow = {0: [], 1: ["json"], 2: "math", 3: [evil.other]}.get(how)
    result = accepted_or_refused(lambda: normalised(family, grid, queries, allow))
    if result is not None and isinstance(family, str) and not allow:
        assert any(result[0] is f for f in MECHANISM_FUNCTIONS), family
    evil.check()


# --------------------------------------------------------------------- family references


def evil_references(evil: Evil) -> st.SearchStrategy[str]:
    path = evil.folder / f"{EVIL}.py"
    return st.sampled_from(
        [
            f"{EVIL}:run",
            f"{EVIL}:randomized_response",
            f"{EVIL}",
            f" {EVIL} : run ",
            f"{EVIL}.sub:run",
            f"{EVIL}:run:x",
            f"{EVIL}:__init__",
            f"{EVIL}:",
            f":{EVIL}",
            f"{path}:run",
            f"{path}",
            f"{evil.folder}/{EVIL}:run",
            f"dpcap.mechanisms:{EVIL}",
            f"dpcap.mechanisms.{EVIL}:run",
            f"dpcap.mechanisms:../{EVIL}",
            f"dpcap.mechanisms:{EVIL}.run",
            f"{EVIL}.py:run",
            f"importlib:import_module({EVIL!r})",
        ]
    )


@fuzz(examples=1000, quick=6)
@given(data=st.data(), how=st.integers(0, 19))
def test_family_strings_outside_the_mechanisms_are_refused_and_import_nothing(
    evil: Evil, data: st.DataObject, how: int
) -> None:
    """A family string names a family of dpcap.mechanisms or is refused (``allow_modules``
    absent, empty, or naming other modules); the module it names is never imported. The same
    through :func:`dpcap.sweep`, :func:`dpcap.calibrate` and ``dpcap sweep`` on 1 in 20
    examples each."""
    family = data.draw(evil_references(evil) | OUTSIDE_FAMILIES, label="family")
    allow = data.draw(st.sampled_from([None, [], ["json"], [str(evil.other)], "math"]))
    if family.rpartition(":")[0].strip() in ("json", "math", evil.other.stem):
        allow = None  # a module allowed here may be named; the others never
    grid = {"k": [2], "eps": [0.5]}
    refused(lambda: _spec.family(family, allow), ["family", "allow_modules"])
    if how == 0:
        refused(lambda: quiet_sweep(family, grid, "dp_epsilon", allow_modules=allow), ["family"])
    elif how == 1:
        refused(
            lambda: dpcap.calibrate(
                family, "eps", "dp_epsilon", 0.5, bounds=(0.1, 1.0), fixed={"k": 2}
            ),
            ["family"],
        )
    elif how == 2:
        spec = evil.folder / "spec.toml"
        grid_text = '[grid]\nk = [2]\neps = [0.5]\n[[queries]]\nquery = "dp_epsilon"\n'
        spec.write_text(f"family = {json.dumps(family)}\n{grid_text}")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["sweep", str(spec), "--no-progress"])
        assert code == 2, (code, out.getvalue(), err.getvalue())
    evil.check()


# -------------------------------------------------------------------- the spec file (TOML)

TOML_ATOMS = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.floats(),
    st.booleans(),
    st.text(max_size=6),
    st.datetimes(),
    st.dates(),
    st.times(),
)
TOML_VALUES = st.recursive(
    TOML_ATOMS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def toml_ranges(draw: st.DrawFn) -> dict[str, Any]:
    """``{start, stop, num}`` or ``{start, stop, step}`` of at most 20 values or above the
    limit (a range in between would be built, which only spends time), sometimes malformed."""
    huge = draw(st.integers(10**6 + 1, 10**15))
    count = draw(st.integers(-3, 20) | st.just(huge))
    if draw(st.booleans()):
        start = draw(st.floats(-5, 5) | st.sampled_from([math.nan, math.inf, True, "0"]))
        stop = draw(st.floats(-5, 5) | st.sampled_from([math.nan, -math.inf, None]))
        table: dict[str, Any] = {"start": start, "stop": stop, "num": count}
    else:
        start = draw(st.integers(-50, 50))
        step = draw(st.integers(-5, 5))
        stop = start + (count - 1) * step + draw(st.integers(0, max(abs(step) - 1, 0)))
        table = {"start": start, "stop": stop, "step": step}
        if draw(st.integers(0, 4)) == 0:
            table[draw(st.sampled_from(["start", "stop", "step"]))] = draw(TOML_ATOMS)
    if draw(st.integers(0, 9)) == 0:
        table[draw(st.text(max_size=4))] = 1
    return table


def toml_specs() -> st.SearchStrategy[dict[str, Any]]:
    grid_value = st.one_of(st.lists(TOML_ATOMS, max_size=4), TOML_ATOMS, toml_ranges(), TOML_VALUES)
    grid_keys = st.sampled_from(["k", "eps", "p", "n", "delta", "point"]) | st.text(max_size=4)
    grid = st.one_of(
        st.dictionaries(grid_keys, grid_value, max_size=3),
        st.lists(st.dictionaries(grid_keys, TOML_ATOMS, max_size=3), max_size=3),
        TOML_ATOMS,
    )
    query_table = st.builds(
        lambda name, rest: {"query": name, **rest},
        st.sampled_from(list(catalogue.QUERIES)) | st.text(max_size=5),
        st.dictionaries(QUERY_PARAMETERS, TOML_VALUES, max_size=2),
    )
    queries = st.one_of(
        st.lists(query_table | st.sampled_from(list(catalogue.QUERIES)), max_size=3),
        st.sampled_from(list(catalogue.QUERIES)),
        TOML_VALUES,
    )
    options = st.dictionaries(
        st.sampled_from(list(cli_sweep.OPTIONS)) | st.text(max_size=5), TOML_ATOMS, max_size=3
    )
    family = st.one_of(
        st.sampled_from(sorted(FAMILIES)), OUTSIDE_FAMILIES, st.text(max_size=8), TOML_ATOMS
    )
    known = st.fixed_dictionaries(
        {}, optional={"family": family, "grid": grid, "queries": queries, "options": options}
    )
    extra = st.dictionaries(st.text(max_size=6), TOML_VALUES, max_size=1)
    return st.builds(lambda a, b: {**b, **a}, known, st.one_of(st.just({}), extra))


@fuzz(examples=1200, quick=6)
@given(data=toml_specs())
def test_spec_tables_are_accepted_or_refused_naming_the_key(
    evil: Evil, data: dict[str, Any]
) -> None:
    """``parse_spec`` (the spec file as a dict) accepts or refuses with a DpcapError ValueError;
    an unknown top-level key is refused naming it; what it accepts goes on to the normaliser."""
    unknown = sorted(set(data) - set(cli_sweep.TOP_LEVEL))
    parsed = accepted_or_refused(lambda: cli_sweep.parse_spec(data, "spec.toml"))
    if unknown:
        assert parsed is None
        refused(lambda: cli_sweep.parse_spec(data, "spec.toml"), unknown)
        return
    if parsed is None:
        return
    assert set(parsed.options) <= set(cli_sweep.OPTIONS)
    accepted_or_refused(lambda: normalised(parsed.family, parsed.grid, parsed.queries))
    evil.check()


TOML_LINES = st.sampled_from(
    [
        'family = "randomized_response"',
        'family = "binary_symmetric"',
        'family = "os:system"',
        f'family = "{EVIL}:run"',
        "[grid]",
        "[[grid]]",
        "k = [2, 3]",
        "k = 2",
        'k = "2"',
        "eps = {start = 0.1, stop = 2.0, num = 3}",
        "eps = {start = 0.1, stop = 2.0, num = 100000000000}",
        "n = {start = 0, stop = 1000000000000, step = 1}",
        "n = {start = 5, stop = 0, step = 1}",
        "p = [0.1, nan]",
        "p = [0.1, 0.1]",
        "p = [[0.1], [0.2]]",
        "p = 1979-05-27T07:32:00Z",
        "point = [1]",
        "[[queries]]",
        'query = "capacity"',
        'query = "renyi_dp"',
        'query = "nope"',
        "alpha = [2.0, inf]",
        "alpha = -1",
        "tol = 0",
        'queries = ["capacity", "dp_epsilon"]',
        "queries = []",
        "[options]",
        "tol = 1e-9",
        "chunk_size = 0",
        "bogus = 1",
        "[evil]",
        'k = """',
        "= broken",
        "x = [1, 2",
        "",
        "# comment",
    ]
)


def is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@fuzz(examples=800, quick=4)
@given(
    lines=st.lists(TOML_LINES | st.text(max_size=12), max_size=12),
    raw=st.one_of(st.none(), st.binary(max_size=24)),
)
def test_spec_files_load_or_are_refused(evil: Evil, lines: list[str], raw: bytes | None) -> None:
    """``load_spec`` on any file: a spec, or a DpcapError ValueError (``SpecError`` names the
    file and the key); never another exception, and nothing named in it runs."""
    path = evil.folder / "fuzz-spec.toml"
    if raw is not None:
        path.write_bytes(raw)
    else:  # lone surrogates replaced (a file that is not UTF-8: the test below)
        path.write_text("\n".join(lines), encoding="utf-8", errors="replace")
    parsed = accepted_or_refused(lambda: cli_sweep.load_spec(path))
    if parsed is not None:
        accepted_or_refused(lambda: normalised(parsed.family, parsed.grid, parsed.queries))
    evil.check()


@fuzz(examples=300, quick=2)
@given(
    head=st.sampled_from([b"", b'family = "', b"# \xc3\xa9\n", b"\xef\xbb\xbf"]),
    bad=st.sampled_from([b"\x80", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf"]),
    tail=st.binary(max_size=16),
)
def test_spec_files_that_are_not_utf8_are_refused(
    evil: Evil, head: bytes, bad: bytes, tail: bytes
) -> None:
    """Finding S1 (fixed): a spec file that is not UTF-8 let a bare UnicodeDecodeError out of
    ``load_spec``; it is a :class:`SpecError` naming the file (minimal example ``b"\\x80"``),
    and ``dpcap sweep`` on it exits 2 with that message."""
    raw = head + bad + tail
    assume(not is_utf8(raw))  # a tail may complete the bad byte's sequence
    path = evil.folder / "fuzz-spec-bytes.toml"
    path.write_bytes(raw)
    message = refused(lambda: cli_sweep.load_spec(path), [str(path)])
    assert "not UTF-8" in message, message
    with pytest.raises(cli_sweep.SpecError, match="not UTF-8"):
        cli_sweep.load_spec(path)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert cli_main(["sweep", str(path), "--no-progress"]) == 2
    assert str(path) in err.getvalue(), err.getvalue()
    assert "not UTF-8" in err.getvalue(), err.getvalue()


def test_an_explicit_grid_with_a_name_that_is_not_a_string_is_refused() -> None:
    """Finding S2 (fixed): an explicit grid whose second point has a name that is not a string
    (``[{}, {"k": 0, 3: 0}]``) raised TypeError while sorting the names for its message."""
    for grid in ([{}, {"k": 0, 3: 0}], [{"k": 1}, {"k": 1, None: 2}], [{3: 1}, {"k": 1}]):
        refused(lambda grid=grid: normalised("randomized_response", grid, "capacity"), ["grid"])


# ------------------------------------------------------------------- dpcap.sweep (a subset)

#: The statuses a row may have (``dpcap.Status`` and the two of a point that was not built).
STATUSES = {s.value for s in dpcap.Status} | {"failed", "too_large"}


@st.composite
def tiny_sweeps(draw: st.DrawFn) -> Spec:
    """At most 3 grid points of a cheap family; values the family refuses are allowed (a spec
    does not check them: the point gives ``failed`` rows)."""
    name = draw(st.sampled_from(["randomized_response", "binary_symmetric"]))
    odd = st.sampled_from([-1.0, 1e300, -(2**62), "os:system", "", True, math.inf])
    axes: dict[str, list[Any]] = {}
    if name == "randomized_response":
        axes["k"] = draw(st.lists(st.integers(1, 3) | odd, min_size=1, max_size=2, unique=True))
        axes["eps"] = [draw(st.floats(0.0, 2.0) | odd)]
    else:
        axes["p"] = draw(st.lists(st.floats(0.0, 1.0) | odd, min_size=1, max_size=3, unique=True))
    for key, values in axes.items():  # one kind per column (strings, bools, numbers)
        if len({type(v) if isinstance(v, (str, bool)) else float for v in values}) > 1:
            axes[key] = values[:1]
    cheap = [q for q in VALID_QUERIES if q[0] not in ("capacity", "renyi_capacity", "midp")]
    chosen = draw(st.lists(st.sampled_from(range(len(cheap))), min_size=1, max_size=2, unique=True))
    entries = [cheap[i] for i in chosen]
    return Spec(
        family=name,
        grid=axes,
        queries=[(n, p) for n, p, _ in entries],
        axes=axes,
        points=product(axes),
        rows=sum(r for _, _, r in entries),
    )


@fuzz(examples=500, quick=3)
@given(spec=tiny_sweeps())
def test_tiny_sweeps_give_each_grid_point_once(evil: Evil, spec: Spec) -> None:
    table = quiet_sweep(spec.family, spec.grid, spec.queries)
    points = spec.points
    assert sorted(set(table["point"])) == list(range(len(points)))
    counts = table["point"].value_counts()
    assert (counts == spec.rows).all(), counts
    for i, point in enumerate(points):
        rows = table[table["point"] == i]
        for key, value in point.items():
            got = rows[key].tolist()
            assert all(g == value or (g != g and value != value) for g in got), (key, got, value)
    assert set(table["status"]) <= STATUSES
    evil.check()
