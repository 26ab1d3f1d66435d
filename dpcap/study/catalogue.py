"""The query catalogue: every question dpcap can ask of a mechanism, registered once.

A *query* is a library function together with what it needs from an instance and how its
number is reported. Sweeps (:func:`dpcap.sweep`), calibration (:func:`dpcap.calibrate`) and the
command line (one ``dpcap`` subcommand per query, its options and ``--help`` read from here)
all take their queries from :data:`QUERIES`, so a query registered once is asked everywhere.

Two kinds are catalogued:

* **point queries of a mechanism**: the instance is a mechanism or a channel matrix, passed as
  the function's first argument (``capacity``, ``midp``, ``renyi_capacity``, ``dp_epsilon``,
  ...). A prior, a gain or a metric is a *query parameter*: ``mutual_information`` at
  ``prior=[0.3, 0.7]`` is the mechanism's mutual information at that prior;
* **trade-off queries of a problem**: the instance is a mapping holding the problem's data,
  e.g. ``{"prior": p, "distortion": d}`` for ``rate_distortion`` and ``privacy_distortion``
  (the level ``D`` is the query parameter) or ``{"joint": P}`` for ``privacy_funnel`` at ``R``.
  A sweep's family then returns that mapping.

Register your own with :func:`register_query` (a function of an instance returning a result
or a float)::

    >>> import numpy as np
    >>> import dpcap
    >>> from dpcap.study import register_query, unregister_query
    >>> def smallest_entry(W, /, *, unit="nats"):
    ...     "The smallest probability of the channel (a toy query)."
    ...     return float(np.min(np.asarray(W)))
    >>> spec = register_query("smallest_entry", smallest_entry, unit="")
    >>> spec.parameters, spec.unit
    (('unit',), '')
    >>> table = dpcap.sweep("binary_symmetric", {"p": [0.1, 0.2]}, "smallest_entry",
    ...                     progress=False)
    >>> table["value"].round(12).tolist()
    [0.1, 0.2]
    >>> unregister_query("smallest_entry")

The sweep runs each query in the process that evaluates the grid point (a worker, with
``executor="processes"`` or Dask): a registered function must then be importable by its module
and name (a module-level function, not a lambda).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from dpcap._core import validation as check
from dpcap.errors import ParameterError
from dpcap.gain_capacity import g_capacity
from dpcap.measures import min_entropy_leakage, mutual_information
from dpcap.metric_privacy import metric_epsilon
from dpcap.mi_dp import correlated_leakage, midp, renyi_midp
from dpcap.neighbors import NEIGHBOR_NAMES
from dpcap.privacy import dp_delta, dp_epsilon, kl_dp, max_leakage, renyi_dp, tv_dp
from dpcap.qif import g_leakage
from dpcap.renyi import alpha_leakage, renyi_capacity
from dpcap.shannon import capacity
from dpcap.tradeoffs import (
    information_bottleneck,
    mi_privacy_distortion,
    optimal_mechanism,
    privacy_distortion,
    privacy_funnel,
    rate_distortion,
)

__all__ = [
    "ARRAY_KINDS",
    "KINDS",
    "QUERIES",
    "RESULT_COLUMNS",
    "Query",
    "check_params",
    "query",
    "register_query",
    "unregister_query",
]

#: The columns every row of a sweep has after the grid and query parameters, in this order.
RESULT_COLUMNS = (
    "value",
    "lower",
    "upper",
    "status",
    "iterations",
    "method",
    "unit",
    "message",
    "seconds",
)

#: How a parameter's value is read (the command line) and checked (sweeps, calibration), by
#: name: ``number`` (``≥ 0``), ``order`` (``[0, ∞]``), ``level`` (``≥ 0``, ``∞`` allowed),
#: ``integer``, ``integers``, ``vector`` and ``matrix`` (arrays: one value, never a list of
#: values), ``relation`` (a neighbour relation's name), ``unit``, ``text``. A parameter of a
#: registered function whose name is not here is read by its annotation (``float``: ``real``,
#: any number; ``int``: ``integer``), else as text.
KINDS: dict[str, str] = {
    "alpha": "order",
    "eps": "level",
    "D": "number",
    "R": "number",
    "budget": "number",
    "peak": "number",
    "tol": "number",
    "rtol": "number",
    "time_limit": "number",
    "max_iter": "integer",
    "entry": "integer",
    "seed": "integer",
    "group": "integers",
    "shape": "integers",
    "prior": "vector",
    "cost": "vector",
    "gain": "matrix",
    "loss": "matrix",
    "metric": "matrix",
    "neighbors": "relation",
    "unit": "unit",
    "kind": "text",
    "method": "text",
    "solver": "text",
}

#: The kinds whose value is one array (never expanded into one row per element).
ARRAY_KINDS = ("vector", "matrix", "integers")

#: Checks of values by parameter name (the sweep-wide options), run when a spec is read.
_NAMED: dict[str, Callable[[Any, str], Any]] = {
    "tol": lambda v, n: check.tolerance(v),
    "rtol": lambda v, n: check.rtol(v),
    "max_iter": lambda v, n: check.max_iter(v),
}

#: Checks of values whose kind says how, run when a spec is read (before anything runs).
_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "order": lambda v, n: check.order(v, n),
    "level": lambda v, n: check.nonnegative_scalar(v, n),
    "relation": lambda v, n: check.choice(v, NEIGHBOR_NAMES, n),
    "unit": lambda v, n: check.unit_divisor(v),
    "vector": lambda v, n: check.real_array(v, n),
    "matrix": lambda v, n: check.real_array(v, n),
    "integers": lambda v, n: _integers(v, n),
}


def _integers(value: Any, name: str) -> tuple[int, ...]:
    """One integer or a flat sequence of integers ``>= 0`` (a group of entries, a shape)."""
    array = check.numeric(value, name)
    if array.ndim > 1 or array.dtype.kind not in "iu" or (array.size and array.min() < 0):
        raise ParameterError(f"{name} must be an integer >= 0 or a list of them, got {value!r}")
    return tuple(int(v) for v in np.atleast_1d(array))


@dataclasses.dataclass(frozen=True)
class Query:
    """A catalogued query: its function, what the instance supplies, and its unit.

    Attributes
    ----------
    name : str
        The name sweeps, calibration and the command line use (``dpcap <name>``, with ``-``).
    function : callable
        The library function. Its positional parameters named in ``inputs`` come from the
        instance; every other parameter is a query parameter.
    inputs : tuple of str
        The function's parameters filled from the instance: one (the instance itself, a
        mechanism or a matrix) or several (the instance is a mapping with these keys).
    unit : str
        The unit of a query returning a plain number: ``"option"`` for the ``unit`` argument
        (nats by default), a fixed string otherwise (``""``: a probability or a ratio). A
        result object carries its own unit.
    summary : str
        One line saying what the query computes (its ``--help``).
    sweep_tol : bool
        Whether a sweep's ``tol`` (a certified gap in nats) and ``rtol`` are handed to the
        function; false for a query whose ``tol`` means something else (a relative MILP gap, a
        grid resolution), which then keeps its own defaults unless the query sets them.
    """

    name: str
    function: Callable[..., Any]
    inputs: tuple[str, ...]
    unit: str = "option"
    summary: str = ""
    sweep_tol: bool = True

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.function)

    @functools.cached_property
    def parameters(self) -> tuple[str, ...]:
        """The query parameters (everything but the inputs and ``*args``/``**kwargs``), in
        the function's order."""
        return tuple(
            n
            for n, p in self.signature.parameters.items()
            if n not in self.inputs and p.kind not in _VARIADIC
        )

    @property
    def open(self) -> bool:
        """Whether the function takes ``**kwargs``: any keyword is then a parameter."""
        return any(p.kind is _KEYWORDS for p in self.signature.parameters.values())

    @property
    def required(self) -> tuple[str, ...]:
        """The query parameters without a default."""
        params = self.signature.parameters
        empty = inspect.Parameter.empty
        return tuple(n for n in self.parameters if params[n].default is empty)

    def kind(self, parameter: str) -> str:
        """How ``parameter`` is read and checked (:data:`KINDS`, else its annotation)."""
        if parameter in KINDS:
            return KINDS[parameter]
        if parameter not in self.signature.parameters:
            return "text"  # not a parameter of this query: check_params says so
        annotation = str(self.signature.parameters[parameter].annotation)
        if re.fullmatch(r"(builtins\.)?float|<class 'float'>", annotation):
            return "real"
        if re.fullmatch(r"(builtins\.)?int|<class 'int'>", annotation):
            return "integer"
        return "text"

    def default(self, parameter: str) -> Any:
        if parameter not in self.signature.parameters:
            return None
        value = self.signature.parameters[parameter].default
        return None if value is inspect.Parameter.empty else value

    def help(self, parameter: str) -> str:
        """The parameter's description in the function's numpydoc docstring (its first line)."""
        doc = inspect.getdoc(self.function) or ""
        match = re.search(
            rf"^(?:[\w, ]*\b)?{re.escape(parameter)}\b[\w, ]* :[^\n]*\n((?:    [^\n]*\n?)+)",
            doc,
            re.M,
        )
        if match is None:
            return ""
        text = " ".join(line.strip() for line in match.group(1).splitlines())
        return re.sub(r"``|:\w+:`~?|`", "", text).split(". ")[0].rstrip(".")

    def call(self, instance: Any, params: Mapping[str, Any]) -> Any:
        """The function on ``instance`` with ``params``: ``function(*inputs, **params)``, the
        positional parameters that are not inputs taken from ``params`` by name."""
        values = self._inputs(instance)
        args: list[Any] = []
        kwargs = dict(params)
        for p in self.signature.parameters.values():
            if p.kind is not inspect.Parameter.POSITIONAL_ONLY:
                break
            if p.name in values:
                args.append(values[p.name])
            elif p.name in kwargs:
                args.append(kwargs.pop(p.name))
            elif p.default is not inspect.Parameter.empty:
                args.append(p.default)
            else:
                raise ParameterError(f"queries: {self.name} needs the parameter {p.name}")
        extra = {k: values[k] for k in self.inputs if k not in self._positional_names}
        return self.function(*args, **extra, **kwargs)

    @functools.cached_property
    def _positional_names(self) -> tuple[str, ...]:
        kind = inspect.Parameter.POSITIONAL_ONLY
        return tuple(n for n, p in self.signature.parameters.items() if p.kind is kind)

    def _inputs(self, instance: Any) -> dict[str, Any]:
        if len(self.inputs) == 1 and not (
            isinstance(instance, Mapping) and set(instance) == set(self.inputs)
        ):
            return {self.inputs[0]: instance}
        if not isinstance(instance, Mapping) or not set(self.inputs) <= set(instance):
            have = sorted(instance) if isinstance(instance, Mapping) else type(instance).__name__
            raise ParameterError(
                f"queries: {self.name} takes a mapping with the keys "
                f"{', '.join(self.inputs)} (the problem), got {have}"
            )
        return {k: instance[k] for k in self.inputs}


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_KEYWORDS = inspect.Parameter.VAR_KEYWORD


def _summary(function: Callable[..., Any]) -> str:
    doc = inspect.getdoc(function) or ""
    first = doc.split("\n\n")[0].replace("\n", " ").strip()
    return re.sub(r"``|:\w+:`~?|`", "", first)


#: Every catalogued query by name, in the order they are listed (``dpcap --help``).
QUERIES: dict[str, Query] = {}

#: The names dpcap registers itself (they cannot be unregistered or replaced).
BUILT_IN: frozenset[str] = frozenset()


def register_query(
    name: str,
    function: Callable[..., Any],
    *,
    inputs: tuple[str, ...] | None = None,
    unit: str = "option",
    summary: str | None = None,
    replace: bool = False,
    sweep_tol: bool = True,
) -> Query:
    """Register ``function`` as the query ``name`` for sweeps, calibration and the CLI.

    Parameters
    ----------
    name : str
        A Python identifier, not already registered (unless ``replace``); the built-in
        queries cannot be replaced.
    function : callable
        Takes the instance positionally (a mechanism or a matrix, or the keys of ``inputs``),
        then keyword parameters; returns a dpcap result (its bracket, status and unit are
        reported) or a float (reported with ``unit``, no bracket).
    inputs : tuple of str, optional
        The function's parameters filled from the instance (default: its first parameter).
        With several, the instance is a mapping with these keys.
    unit : str
        ``"option"`` (the default): a float is in the unit of the function's ``unit``
        argument (nats when it has none); any other string is a fixed unit (``""`` for a
        probability or a ratio).
    summary : str, optional
        One line for listings and ``--help`` (default: the docstring's first paragraph).
    replace : bool
        Replace a query registered earlier under ``name`` (not a built-in one).
    sweep_tol : bool
        Whether a sweep hands its ``tol`` (a certified gap in nats) and ``rtol`` to
        ``function`` when the query does not set them; false when ``tol`` means something else
        to ``function``.

    Returns
    -------
    Query
        The registered entry.

    Raises
    ------
    ParameterError
        If ``name`` is not an identifier or is taken, ``function`` is not callable, takes no
        parameter, or ``inputs`` names parameters it does not have.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ParameterError(f"name: a query's name is an identifier, got {check.show(name)}")
    if name in BUILT_IN or (name in QUERIES and not replace):
        raise ParameterError(
            f"name: the query {name!r} is already registered"
            + ("" if name in BUILT_IN else "; pass replace=True to replace it")
        )
    if not callable(function):
        raise ParameterError(f"function: a query is a callable, got {check.show(function)}")
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"function: cannot read the signature of {function!r}") from exc
    if not params:
        raise ParameterError(f"function: {name} must take the instance as its first parameter")
    label = getattr(function, "__name__", None) or repr(function)
    given: Any = inputs  # a str is one name (typed as a tuple, passed as either)
    chosen = (given,) if isinstance(given, str) else tuple(given) if given is not None else ()
    chosen = chosen if inputs is not None else (params[0],)
    if not chosen:
        raise ParameterError(f"inputs: {name} needs at least one input from the instance, got ()")
    unknown = [k for k in chosen if k not in params]
    if unknown:
        raise ParameterError(f"inputs: {label} has no parameter(s) {unknown}")
    if not isinstance(unit, str):
        raise ParameterError(f"unit: a query's unit is a string, got {check.show(unit)}")
    text = _summary(function) if summary is None else summary
    entry = Query(name, function, chosen, unit, text, bool(sweep_tol))
    QUERIES[name] = entry
    return entry


def unregister_query(name: str) -> None:
    """Remove a query registered by :func:`register_query` (not a built-in one)."""
    if name in BUILT_IN:
        raise ParameterError(f"name: {name!r} is a built-in query; it cannot be removed")
    if name not in QUERIES:
        raise ParameterError(f"name: no query {check.show(name)} is registered")
    del QUERIES[name]


def query(name: Any) -> Query:
    """The registered query called ``name``; :class:`ParameterError` naming the known ones."""
    if not isinstance(name, str) or name not in QUERIES:
        raise ParameterError(
            f"queries: unknown query {check.show(name)}; known queries: {', '.join(QUERIES)}"
        )
    return QUERIES[name]


def check_params(name: str, params: dict[str, Any]) -> None:
    """Refuse parameters ``name`` does not take, missing required ones and bad values."""
    spec = query(name)
    known = spec.parameters
    for key, value in params.items():
        if key not in known and not spec.open:
            raise ParameterError(
                f"queries: {name} takes no parameter {key!r}; it takes {', '.join(known)}"
            )
        kind = spec.kind(key)
        array = kind in ARRAY_KINDS
        values = value if isinstance(value, list) and not array else [value]
        for v in values:
            where = f"queries: {name} parameter {key}"
            if key in _NAMED and v is not None:
                try:
                    _NAMED[key](v, where)
                except ParameterError as exc:
                    raise ParameterError(f"{where}: {exc}") from None
            elif kind in _CHECKS and v is not None:
                _CHECKS[kind](v, where)
    missing = [k for k in spec.required if k not in params]
    if missing:
        raise ParameterError(f"queries: {name} needs the parameter(s) {', '.join(missing)}")


def _builtin() -> None:
    mechanism_queries: list[tuple[Callable[..., Any], str]] = [
        (capacity, "option"),
        (midp, "option"),
        (renyi_midp, "option"),
        (correlated_leakage, "option"),
        (renyi_capacity, "option"),
        (alpha_leakage, "option"),
        (max_leakage, "option"),
        (min_entropy_leakage, "option"),
        (mutual_information, "option"),
        (g_leakage, ""),
        (g_capacity, ""),
        (dp_epsilon, "nats"),
        (dp_delta, ""),
        (kl_dp, "nats"),
        (renyi_dp, "nats"),
        (tv_dp, ""),
        (metric_epsilon, "nats"),
    ]
    own_tol = {"g_capacity", "privacy_funnel", "information_bottleneck"}  # tol is not a gap
    for function, unit in mechanism_queries:
        params = list(inspect.signature(function).parameters)
        channel = "W" if "W" in params else params[0]  # min-entropy, MI, g-leakage: (prior, W)
        name = function.__name__
        register_query(name, function, inputs=(channel,), unit=unit, sweep_tol=name not in own_tol)
    problems: list[tuple[Callable[..., Any], tuple[str, ...]]] = [
        (rate_distortion, ("prior", "distortion")),
        (mi_privacy_distortion, ("prior", "distortion")),
        (privacy_distortion, ("prior", "distortion")),
        (optimal_mechanism, ("prior", "loss")),
        (privacy_funnel, ("joint",)),
        (information_bottleneck, ("joint",)),
    ]
    for function, inputs in problems:
        name = function.__name__
        register_query(name, function, inputs=inputs, sweep_tol=name not in own_tol)


_builtin()
BUILT_IN = frozenset(QUERIES)
