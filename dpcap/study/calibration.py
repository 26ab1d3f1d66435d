"""Inverse queries: the parameter of a mechanism family at which a certified measure meets a target.

:func:`calibrate` answers "which ε of geometric noise on a count of 100 people keeps MI-DP below
0.01 nats?": for a family ``θ ↦ M(θ)`` and a point query ``m`` of dpcap (the queries a sweep
asks: ``capacity``, ``midp``, ``renyi_capacity``, ``dp_delta``, ``max_leakage``, ``kl_dp``, …),
it finds the threshold ``θ*`` of the feasible set ``{θ : m(M(θ)) ≤ target}``, assumed to be an
interval that contains one end of ``bounds`` (``m`` monotone in ``θ``).

**Certified decisions.** A parameter θ is *proven feasible* when the certified upper end of its
measure is at most the target, ``upper(θ) ≤ target``, and *proven infeasible* when the lower
end exceeds it, ``lower(θ) > target``; the point estimate never decides. A DP metric
(``dp_epsilon``, ``dp_delta``, ``kl_dp``, ``renyi_dp``, ``tv_dp``, ``max_leakage``) is a closed
form computed in floating point without a rigorous bound on its rounding: its value ``v`` is
widened to ``v ± (CLOSED_FORM_RTOL·|v| + CLOSED_FORM_ATOL)`` (so ``e^ε`` rounding to 1 does not
"prove" 0-DP), and the message says so. A bracket that straddles the target decides nothing: it
is re-evaluated at a 1000× tighter ``tol`` (down to ``1e-13``; and a 1000× tighter ``rtol``
down to ``1e-12``, then 0, when the measure was given one), and a parameter still undecided
is only *not proven feasible*. The answer is a bracket of the parameter between ``θ_F``, proven
feasible (the returned ``value``), and ``θ_I``, proven infeasible: the largest feasible
parameter of an increasing measure (the smallest of a decreasing one) lies between them.

**Search.** The ITP method (Oliveira and Takahashi, "An enhancement of the bisection method
average performance preserving minmax optimality", *ACM TOMS* 47(1), 2020) on
``g(θ) = log(upper(θ)/target)`` (−∞ where ``upper`` is 0, where ITP bisects; ``upper − target``
where a value is infinite or the target 0), in
``log θ`` when ``bounds`` are positive and span a decade or more, in ``θ`` otherwise: regula
falsi moved toward the midpoint and projected near it, so never more than
``⌈log₂(width₀/tol)⌉ + 2`` steps, and superlinear where ``g`` is smooth. A measure that is a
power of θ near the threshold (MI-DP ≈ ε²/8, ε-DP = ε) is a line in these coordinates.

**Monotonicity** is checked at every evaluation against every earlier one: two parameters
``θ < θ'`` whose certified brackets contradict the direction (``lower(θ) > upper(θ')`` for an
increasing measure) stop the search with status ``failed``, a
:class:`~dpcap.ConvergenceWarning`, and both points in the message. For closed forms two values
are compared with an allowance of ``2⁻⁴⁰`` of their size for rounding (this allowance judges
monotonicity only, never feasibility).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpcap._core import validation as check
from dpcap._core.certify import warn
from dpcap.errors import ConvergenceWarning, ParameterError, SolverError, Status
from dpcap.mechanisms import counting_query
from dpcap.result import CalibrationResult
from dpcap.solvers import itp
from dpcap.study import _spec as _sweep_spec
from dpcap.study import catalogue

__all__ = ["calibrate"]

#: The directions a measure may take in the parameter (``direction=``).
DIRECTIONS = ("increasing", "decreasing")

#: Named ways of turning the family's noise channel into a database mechanism (``database=``).
DATABASES = ("counting",)

#: The search runs in ``log θ`` when ``0 < low`` and ``high/low`` is at least this.
LOG_SPAN = 10.0

#: Allowance for the rounding of closed-form values (DP metrics): relative and absolute.
CLOSED_FORM_RTOL = 2.0**-40
CLOSED_FORM_ATOL = 2.0**-50

#: ITP's extra steps over bisection's count (n₀) and truncation κ₁·width₀ (κ₂ = 2): the best
#: of n₀ ∈ {1, 2}, κ₁·width₀ ∈ {0.01, …, 0.5} on 12 calibrations (118 calls in all).
ITP_SLACK, ITP_KAPPA = 2, 0.1

#: Smallest measure ``tol`` asked for when a bracket straddles the target and is re-evaluated.
MIN_RETRY_TOL = 1e-13

#: Smallest measure ``rtol`` asked for on a re-evaluation; below it, 0 (``tol`` alone).
MIN_RETRY_RTOL = 1e-12


@dataclass(frozen=True)
class _Point:
    """The measure at one parameter: its certified ends, or a closed form (both ends)."""

    theta: float
    lower: float
    upper: float
    closed: bool
    mechanism: Any
    result: Any


def calibrate(
    family: Any,
    param: str,
    measure: str,
    target: float,
    *,
    bounds: Sequence[float],
    fixed: Mapping[str, Any] | None = None,
    measure_kwargs: Mapping[str, Any] | None = None,
    tol: float = 1e-6,
    atol: float = 0.0,
    direction: str | None = None,
    database: str | Callable[[Any], Any] | None = None,
    max_evals: int = 100,
    allow_modules: Any = None,
) -> CalibrationResult:
    r"""The largest (or smallest) parameter of a family whose certified measure meets a target.

    Finds ``θ*`` with ``m(M(θ)) ≤ target`` on one side and ``> target`` on the other, for a
    measure ``m`` monotone in ``θ`` on ``bounds``, and returns a bracket ``[θ_F, θ_I]``: ``θ_F``
    with certified ``upper(θ_F) ≤ target`` and ``θ_I`` with ``lower(θ_I) > target``. See the
    module docstring for the rule and the search.

    Parameters
    ----------
    family : callable or str
        Builds a mechanism (or channel) from keyword arguments: a callable, the name of a
        constructor in :mod:`dpcap.mechanisms` (``"truncated_geometric"``) or
        ``"module:function"`` of a module in ``allow_modules``, as for :func:`dpcap.sweep`.
    param : str
        The keyword argument of ``family`` to calibrate (e.g. ``"eps"``, ``"sigma"``).
    measure : str
        A query of the catalogue (:data:`dpcap.study.catalogue.QUERIES`): a point query of a
        mechanism (``capacity``, ``midp``, ``renyi_capacity``, ``dp_delta``, ``max_leakage``,
        ``g_leakage`` at a ``prior``, ...), a trade-off query of the problem the family
        builds (``rate_distortion`` at ``D``, ...) or one registered with
        :func:`dpcap.register_query`.
    target : float
        The level the measure must not exceed, ``≥ 0``, in the measure's unit (``unit`` in
        ``measure_kwargs``, nats by default; a probability for ``dp_delta`` and ``tv_dp``).
    bounds : (float, float), keyword-only
        ``(low, high)``, finite, ``low < high``: the range of ``θ`` searched.
    fixed : mapping, keyword-only, optional
        The family's other keyword arguments (``{"n": 100}``).
    measure_kwargs : mapping, keyword-only, optional
        The measure's own arguments: ``alpha`` for the Rényi queries, ``eps`` for ``dp_delta``,
        ``prior`` (an array) for the queries at a prior, ``tol``, ``unit``, ``neighbors``, …
    tol, atol : float, keyword-only
        Stop when the parameter's bracket is at most ``max(tol·|θ_F|, atol)`` wide: ``tol`` is
        relative (default ``1e-6``), ``atol`` absolute (default 0).
    direction : {"increasing", "decreasing"}, keyword-only, optional
        How the measure moves with ``θ``. By default it is read from the ends: the feasible end
        decides when only one end is feasible; when both are, the end whose certified value is
        larger is the increasing side.
    database : "counting" or callable, keyword-only, optional
        How the family's output becomes the measured mechanism. None (default): measured as
        built. ``"counting"``: the family builds a noise channel ``N`` with ``n + 1`` rows and
        the measure is taken on ``counting_query(n, N)``, a noisy count of ``n`` binary entries.
        A callable: applied to the family's output.
    max_evals : int, keyword-only
        Budget of measure calls, ``≥ 2`` (default 100).
    allow_modules : str, path or list of them, keyword-only, optional
        The modules whose functions a string ``family`` may name, as for :func:`dpcap.sweep`:
        module names, or paths of ``.py`` files. :mod:`dpcap.mechanisms` needs no entry.

    Returns
    -------
    CalibrationResult
        ``value`` (``θ_F``), the parameter's bracket ``lower``/``upper``, the mechanism and the
        measure at ``value``, and a trace of every evaluation.

    Raises
    ------
    ParameterError
        If ``family``, ``param``, ``fixed``, ``measure``, ``measure_kwargs``, ``target``,
        ``bounds``, ``tol``, ``atol``, ``direction``, ``database``, ``max_evals`` or
        ``allow_modules`` is invalid (a family string naming a module not allowed); the
        message names the argument and its value.
    SolverError
        If the measure returns NaN.

    Notes
    -----
    ``status`` is ``infeasible`` (``value`` NaN) when no end of ``bounds`` on the feasible side
    is proven feasible, and ``converged`` with ``outcome == "bound"`` when both ends are (the
    end on the far side is returned: for a monotone measure everything between meets the
    target). With ``database="counting"`` and truncated geometric noise, MI-DP is
    ``ln 2 − h(1/(1+e^ε))``, the capacity of a binary symmetric channel with that crossover
    probability (Cuff and Yu,
    "Differential privacy as a mutual information constraint", CCS 2016, eq. 98).

    Examples
    --------
    Binary randomized response has maximal leakage ``log(2e^ε/(1+e^ε))``, which is ``log 1.5``
    at ``ε = log 3``:

    >>> import math
    >>> from dpcap.study.calibration import calibrate
    >>> r = calibrate("randomized_response", "eps", "max_leakage", math.log(1.5),
    ...               bounds=(0.01, 10), fixed={"k": 2}, tol=1e-9)
    >>> r.status.value, r.direction
    ('converged', 'increasing')
    >>> r.lower <= math.log(3) <= r.upper and r.gap <= 1e-9 * r.value
    True
    """
    fn, reference = _sweep_spec.family(family, allow_modules)
    name, query, kwargs, unit = _measure(measure, measure_kwargs)
    args = _fixed(fixed)
    _takes(fn, param, args)
    low, high = _bounds(bounds)
    goal = check.nonnegative_scalar(target, "target", allow_inf=False)
    rtol = check.tolerance(tol, "relative")
    width = check.nonnegative_scalar(atol, "atol", allow_inf=False)
    if direction is not None:
        check.choice(direction, DIRECTIONS, "direction")
    wrap, database_name = _database(database)
    budget = check.integer(max_evals, "max_evals", minimum=2)

    def build(theta: float) -> Any:
        built = fn(**args, **{param: theta})
        return built if wrap is None else wrap(built)

    search = _Search(build, query, kwargs, name, param, goal)
    stop = _Stop(rtol, width, low > 0 and high / low >= LOG_SPAN, budget)
    run = search.run(low, high, direction, stop)
    note = "; closed-form values carry a rounding allowance" if search.closed else ""
    if search.retries:
        note += f"; {search.retries} re-evaluation(s) at a tighter tol (brackets straddling)"
    if run.status in (Status.MAX_ITER, Status.INACCURATE, Status.FAILED):
        warn(f"calibrate: {run.message}")
    best, far, nan = run.best, run.far, math.nan
    value = best.theta if best is not None else nan
    ends = sorted((value, far.theta)) if best and far else [value, value]
    return CalibrationResult(
        value=value,
        lower=ends[0],
        upper=ends[1],
        feasible=value,
        infeasible=far.theta if far is not None else nan,
        mechanism=best.mechanism if best is not None else None,
        measure_result=best.result if best is not None else None,
        measure=name,
        param=param,
        family=reference,
        database=database_name,
        target=goal,
        direction=run.direction,
        outcome=run.outcome,
        fixed=tuple(args.items()),
        trace=tuple((p.theta, p.lower, p.upper) for p in search.points),
        status=run.status,
        iterations=max(len(search.points) - 2, 0),
        evaluations=search.calls,
        method="itp-log" if stop.log_scale else "itp",
        unit=unit,
        message=run.message + note,
        tol=rtol,
        atol=width,
    )


# --- arguments -----------------------------------------------------------------------------


def _measure(
    measure: Any, measure_kwargs: Mapping[str, Any] | None
) -> tuple[str, catalogue.Query, dict[str, Any], str]:
    """The query, its checked arguments and the unit of its values."""
    if not isinstance(measure, str) or measure not in catalogue.QUERIES:
        raise ParameterError(
            f"measure: unknown measure {check.show(measure)}; known measures: "
            f"{', '.join(catalogue.QUERIES)}"
        )
    if measure_kwargs is None:
        kwargs: dict[str, Any] = {}
    elif isinstance(measure_kwargs, Mapping):
        kwargs = dict(measure_kwargs)
    else:
        raise ParameterError(
            f"measure_kwargs must be a mapping of the measure's arguments, got "
            f"{check.show(measure_kwargs)}"
        )
    query = catalogue.query(measure)
    for key, value in kwargs.items():
        array = key in query.parameters and query.kind(key) in catalogue.ARRAY_KINDS
        if isinstance(value, (list, tuple)) and not array:
            raise ParameterError(
                f"measure_kwargs[{key!r}] must be one value (a calibration is a point query), "
                f"got {check.show(value)}"
            )
    try:
        catalogue.check_params(measure, kwargs)
    except ParameterError as exc:
        text = str(exc).removeprefix("queries: ")
        raise ParameterError(f"measure_kwargs: {text}") from None
    unit = str(kwargs.get("unit", "nats")) if query.unit == "option" else query.unit
    return measure, query, kwargs, unit


def _fixed(fixed: Mapping[str, Any] | None) -> dict[str, Any]:
    if fixed is None:
        return {}
    if not isinstance(fixed, Mapping) or not all(isinstance(k, str) for k in fixed):
        shown = check.show(fixed)
        raise ParameterError(f"fixed must be a mapping of the family's arguments, got {shown}")
    return dict(fixed)


def _takes(fn: Callable[..., Any], param: Any, fixed: dict[str, Any]) -> None:
    """Refuse a parameter the family does not take, one given twice, or one missing."""
    if not isinstance(param, str) or not param:
        raise ParameterError(f"param must be the name of a family argument, got {param!r}")
    if param in fixed:
        raise ParameterError(
            f"fixed gives {param!r} = {check.show(fixed[param])}, the parameter being calibrated"
        )
    _sweep_spec.check_signature(
        fn,
        [param, *fixed],
        where=lambda name: "param" if name == param else "fixed",
        source="fixed",
    )


def _bounds(bounds: Any) -> tuple[float, float]:
    shown = check.show(bounds)
    if (
        not isinstance(bounds, Sequence)
        or isinstance(bounds, str)
        or len(bounds) != 2
        or any(isinstance(b, bool) or not isinstance(b, numbers.Real) for b in bounds)
    ):
        raise ParameterError(f"bounds must be two numbers (low, high), got {shown}")
    low, high = float(bounds[0]), float(bounds[1])
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ParameterError(f"bounds must be finite and not NaN, got {shown}")
    if not low < high:
        raise ParameterError(f"bounds must be (low, high) with low < high, got {shown}")
    return low, high


def _database(database: Any) -> tuple[Callable[[Any], Any] | None, str]:
    if database is None:
        return None, ""
    if callable(database):
        return database, _sweep_spec.reference(database)
    check.choice(database, DATABASES, "database")
    return _counting, "counting"


def _counting(noise: Any) -> Any:
    """``counting_query(n, noise)`` with ``n + 1`` the noise's number of rows."""
    rows = int(noise.n_inputs) if hasattr(noise, "n_inputs") else len(noise)
    return counting_query(rows - 1, noise)


# --- the search ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    best: _Point | None  # proven feasible
    far: _Point | None  # not feasible (proven infeasible unless the status says otherwise)
    direction: str
    outcome: str
    status: Status
    message: str


class _Search:
    """Evaluations of one calibration: the measure at each θ, the checks, and the ITP loop."""

    def __init__(
        self,
        build: Callable[[float], Any],
        query: catalogue.Query,
        kwargs: dict[str, Any],
        name: str,
        param: str,
        target: float,
    ) -> None:
        self.build, self.query, self.kwargs = build, query, kwargs
        self.name, self.param, self.target = name, param, target
        self.points: list[_Point] = []
        self.calls = self.retries = 0
        takes = "tol" in query.parameters  # a measure without tol is never re-evaluated
        self.tol = float(kwargs.get("tol", query.default("tol"))) if takes else 0.0
        relative = takes and "rtol" in query.parameters
        self.rtol = float(kwargs.get("rtol", query.default("rtol")) or 0.0) if relative else 0.0
        self.closed = False

    def _call(self, theta: float, mechanism: Any, kwargs: dict[str, Any]) -> Any:
        self.calls += 1
        with warnings.catch_warnings():  # the bracket is used whatever its width
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = self.query.call(mechanism, kwargs)
        if hasattr(result, "lower") and hasattr(result, "upper"):
            ends = (float(result.lower), float(result.upper))
        else:
            v = float(result)
            slack = CLOSED_FORM_RTOL * abs(v) + CLOSED_FORM_ATOL if math.isfinite(v) else 0.0
            ends = (v - slack, v + slack)
        if math.isnan(ends[0]) or math.isnan(ends[1]):
            raise SolverError(f"calibrate: {self.name} at {self.param}={theta!r} returned NaN")
        return result, *ends

    def evaluate(self, theta: float) -> _Point:
        mechanism = self.build(theta)
        result, lower, upper = self._call(theta, mechanism, self.kwargs)
        tol, rtol = self.tol, self.rtol
        while lower <= self.target < upper:
            # the bracket straddles the target: retry at 1000× tighter tolerances
            tighter = max(tol * 1e-3, MIN_RETRY_TOL)
            relative = rtol * 1e-3 if rtol * 1e-3 >= MIN_RETRY_RTOL else 0.0
            if not (tighter < tol or relative < rtol):
                break
            tol, rtol, self.retries = min(tighter, tol), relative, self.retries + 1
            again = self.kwargs | {"tol": tol} | ({"rtol": rtol} if self.rtol else {})
            result, lower, upper = self._call(theta, mechanism, again)
        closed = not hasattr(result, "upper")
        self.closed |= closed
        self.points.append(_Point(theta, lower, upper, closed, mechanism, result))
        return self.points[-1]

    def feasible(self, p: _Point) -> bool:
        return p.upper <= self.target

    def describe(self, p: _Point) -> str:
        at = f"{self.name}({self.param}={p.theta:.12g})"
        mid = (p.lower + p.upper) / 2 if math.isfinite(p.upper) else p.upper
        return f"{at} = {mid:.12g}" if p.closed else f"{at} in [{p.lower:.12g}, {p.upper:.12g}]"

    def contradiction(self, direction: str, new: _Point) -> str:
        """Two evaluated points whose brackets contradict ``direction`` (``""`` if none)."""
        for old in self.points:
            a, b = (old, new) if old.theta < new.theta else (new, old)
            first, second = (a, b) if direction == "increasing" else (b, a)
            # increasing: m(a) ≤ m(b) needs lower(a) ≤ upper(b); closed forms get the allowance
            closed = first.closed or second.closed
            slack = CLOSED_FORM_RTOL * max(abs(first.lower), abs(second.upper)) if closed else 0.0
            if a.theta < b.theta and first.lower > second.upper + slack:
                return (
                    f"the measure is not {direction} in {self.param}: "
                    f"{self.describe(a)} but {self.describe(b)}"
                )
        return ""

    def run(self, low: float, high: float, direction: str | None, stop: _Stop) -> _Run:
        a, b = self.evaluate(low), self.evaluate(high)
        fa, fb = self.feasible(a), self.feasible(b)
        if direction is None and fa != fb:
            direction = "increasing" if fa else "decreasing"
        elif direction is None and (a.upper < b.lower or b.upper < a.lower):
            direction = "increasing" if a.upper < b.lower else "decreasing"
        shown = f"{self.describe(a)}, {self.describe(b)}"
        if direction is None and fa:  # both ends meet the target, equal within their brackets
            note = "both ends of bounds meet the target and are equal within their brackets "
            note += f"({shown}): the high end is returned; give direction= to choose"
            return _Run(b, None, "unknown", "bound", Status.CONVERGED, note)
        none = f"no parameter in bounds is proven to meet the target {self.target:.12g}: {shown}"
        if direction is None:
            return _Run(None, a, "unknown", "none", Status.INFEASIBLE, none)
        bad = self.contradiction(direction, b)
        if bad:
            return _Run(None, None, direction, "none", Status.FAILED, bad)
        near, far = (a, b) if direction == "increasing" else (b, a)
        if not self.feasible(near):
            return _Run(None, near, direction, "none", Status.INFEASIBLE, none)
        if self.feasible(far):
            note = f"every parameter in bounds meets the target ({shown}): the end is returned"
            return _Run(far, None, direction, "bound", Status.CONVERGED, note)
        return self._bracket(near, far, direction, stop)

    def _bracket(self, best: _Point, far: _Point, direction: str, stop: _Stop) -> _Run:
        """ITP between a feasible ``best`` and a not-feasible ``far``, down to the stop width."""
        coord = math.log if stop.log_scale else float
        width0 = abs(coord(far.theta) - coord(best.theta))
        half = stop.half(best.theta, far.theta) or width0 * 2.0**-52
        # log2 of the ratio as a difference: a subnormal tolerance must not overflow the ratio
        ratio = math.log2(width0) - math.log2(2 * half) if width0 > 0 else 0.0
        steps = max(math.ceil(ratio), 0) + ITP_SLACK
        kappa = ITP_KAPPA / width0
        status, message = Status.CONVERGED, ""
        while not stop.done(best.theta, far.theta):
            if self.calls >= stop.budget:
                status, message = Status.MAX_ITER, f"max_evals={stop.budget} ran out; "
                break
            g_best, g_far = self._g(best, far), self._g(far, best)
            (lo_x, f_lo), (hi_x, f_hi) = sorted(
                [(coord(best.theta), g_best), (coord(far.theta), g_far)]
            )
            x = itp.step(lo_x, hi_x, f_lo, f_hi, 2 * half, steps, kappa)
            steps -= 1
            theta = math.exp(x) if stop.log_scale else x
            lo, hi = sorted((best.theta, far.theta))
            theta = theta if lo < theta < hi else lo + (hi - lo) / 2
            if not lo < theta < hi:
                status, message = Status.INACCURATE, "the parameter's resolution is reached; "
                break
            point = self.evaluate(theta)
            bad = self.contradiction(direction, point)
            if bad:
                return _Run(best, far, direction, "threshold", Status.FAILED, bad)
            best, far = (point, far) if self.feasible(point) else (best, point)
        if status is Status.CONVERGED and far.lower <= self.target:
            status = Status.INACCURATE
            message = f"{self.describe(far)} straddles the target: not proven infeasible; "
        message += (
            f"{self.describe(best)} <= {self.target:.12g} (proven), {self.describe(far)}; "
            f"{self.calls} measure calls"
        )
        return _Run(best, far, direction, "threshold", status, message)

    def _g(self, p: _Point, other: _Point) -> float:
        """``log(upper/target)`` (−∞ at 0: no slope to follow, ITP bisects) where the bracket's
        upper ends are finite and non-negative and the target positive, else ``upper − target``."""
        if self.target > 0 and all(0 <= q.upper < math.inf for q in (p, other)):
            return math.log(p.upper / self.target) if p.upper > 0 else -math.inf
        return p.upper - self.target


@dataclass(frozen=True)
class _Stop:
    """When the parameter's bracket is narrow enough, and the coordinate ITP works in."""

    rtol: float
    atol: float
    log_scale: bool
    budget: int

    def done(self, best: float, far: float) -> bool:
        return abs(far - best) <= max(self.rtol * abs(best), self.atol)

    def half(self, best: float, far: float) -> float:
        """Half the stop width in ITP's coordinate (a lower estimate in ``θ``)."""
        if self.log_scale:
            return math.log1p(self.rtol) / 2
        return max(self.rtol * min(abs(best), abs(far)), self.atol) / 2
