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
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

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
#: name: ``number``, ``order`` (``[0, ∞]``), ``level`` (``≥ 0``, ``∞`` allowed), ``integer``,
#: ``integers`` (a tuple), ``vector`` and ``matrix`` (arrays: one value, never a list of
#: values), ``relation`` (a neighbour relation's name), ``unit``, ``text``. A parameter of a
#: registered function whose name is not here is read by its annotation (``float``, ``int``),
#: else as text.
KINDS: dict[str, str] = {
    "alpha": "order",
    "eps": "level",
    "D": "number",
    "R": "number",
    "budget": "number",
    "peak": "number",
    "tol": "number",
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

#: Checks of values whose kind says how, run when a spec is read (before anything runs).
_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "order": lambda v, n: check.order(v, n),
    "level": lambda v, n: check.nonnegative_scalar(v, n),
    "relation": lambda v, n: check.choice(v, NEIGHBOR_NAMES, n),
    "unit": lambda v, n: check.unit_divisor(v),
    "vector": lambda v, n: check.real_array(v, n),
    "matrix": lambda v, n: check.real_array(v, n),
}


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
    """

    name: str
    function: Callable[..., Any]
    inputs: tuple[str, ...]
    unit: str = "option"
    summary: str = ""

    @property
    def signature(self) -> inspect.Signature:
        return inspect.signature(self.function)

    @property
    def parameters(self) -> tuple[str, ...]:
        """The query parameters (everything but the inputs), in the function's order."""
        return tuple(n for n in self.signature.parameters if n not in self.inputs)

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
            return "number"
        if re.fullmatch(r"(builtins\.)?int|<class 'int'>", annotation):
            return "integer"
        return "text"

    def default(self, parameter: str) -> Any:
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
        extra = {k: values[k] for k in self.inputs if k in values and k not in self._positional()}
        return self.function(*args, **extra, **kwargs)

    def _positional(self) -> tuple[str, ...]:
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
    chosen = tuple(inputs) if inputs is not None else (params[0],)
    unknown = [k for k in chosen if k not in params]
    if not chosen or unknown:
        raise ParameterError(f"inputs: {function.__name__} has no parameter(s) {unknown}")
    if not isinstance(unit, str):
        raise ParameterError(f"unit: a query's unit is a string, got {check.show(unit)}")
    entry = Query(name, function, chosen, unit, _summary(function) if summary is None else summary)
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
        if key not in known:
            raise ParameterError(
                f"queries: {name} takes no parameter {key!r}; it takes {', '.join(known)}"
            )
        kind = spec.kind(key)
        array = kind in ("vector", "matrix")
        values = value if isinstance(value, list) and not array else [value]
        for v in values:
            if kind in _CHECKS and v is not None:
                _CHECKS[kind](v, f"queries: {name} parameter {key}")
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
        (kl_dp, "option"),
        (renyi_dp, "option"),
        (tv_dp, ""),
        (metric_epsilon, "nats"),
    ]
    for function, unit in mechanism_queries:
        params = list(inspect.signature(function).parameters)
        channel = "W" if "W" in params else params[0]  # min-entropy, MI, g-leakage: (prior, W)
        register_query(function.__name__, function, inputs=(channel,), unit=unit)
    problems: list[tuple[Callable[..., Any], tuple[str, ...]]] = [
        (rate_distortion, ("prior", "distortion")),
        (mi_privacy_distortion, ("prior", "distortion")),
        (privacy_distortion, ("prior", "distortion")),
        (optimal_mechanism, ("prior", "loss")),
        (privacy_funnel, ("joint",)),
        (information_bottleneck, ("joint",)),
    ]
    for function, inputs in problems:
        register_query(function.__name__, function, inputs=inputs)


_builtin()
BUILT_IN = frozenset(QUERIES)
