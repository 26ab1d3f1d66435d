"""Fuzz group ``calibrate``: the parameter :func:`dpcap.calibrate` returns meets its target.

Families whose measure is monotone in the parameter — randomized response in ``eps``, the
binary symmetric channel in ``p``, a count with truncated geometric noise (``database=
"counting"``), and randomized response at ``eps = f(θ)`` for random increasing or decreasing
``f`` (the user's own callable) — with random targets inside and outside the measure's range,
tolerances and budgets. Every number is checked against a reference evaluated in mpmath from
the mechanism's own float entries (``_reference``), or from a published closed form
(MI-DP of the counting query, Cuff and Yu, CCS 2016, eq. 98). Properties (the docstrings of
:func:`dpcap.calibrate` and ``dpcap.study.calibration``):

* **certified brackets hold**: every evaluation in ``trace`` brackets the measure's true value
  at its parameter (closed forms with their rounding allowance);
* **the value is feasible**: whatever the status, a returned ``value`` lies in ``bounds`` and its
  true measure is at most the target; a ``threshold`` answer also names a parameter whose
  measure exceeds the target, on the side ``direction`` says, and (converged) the two are at
  most ``max(tol·|value|, atol)`` apart; ``bound`` means the far end meets the target;
  ``infeasible`` means no end does; ``max_iter`` comes with a ConvergenceWarning;
* **never a wrong answer on a measure that is not monotone** or a wrong ``direction=``: the
  value is still feasible, or the status says why not;
* **invalid arguments** (one argument malformed in a valid call) raise
  :class:`~dpcap.ParameterError` whose message names the argument.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
import pytest
from _harness import fuzz
from _reference import eps_pair, hockey_pair, max_leakage_reference, mp_law
from hypothesis import given
from hypothesis import strategies as st

import dpcap
from dpcap import ConvergenceWarning, ParameterError, Status
from dpcap.mechanisms import binary_symmetric, randomized_response
from dpcap.study import catalogue

#: Slack on a closed form's value: above calibrate's own rounding allowance (2^-40 relative,
#: 2^-50 absolute) and a reference's float rounding.
REL, ABS = 2.0**-38, 2.0**-47

# ------------------------------------------------------------------------ the references


def _pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(n) if i != j]


def _rows(mechanism: Any) -> np.ndarray:
    return np.asarray(mechanism.matrix, dtype=np.float64)


def ref_dp_epsilon(mechanism: Any) -> Any:
    W = _rows(mechanism)
    return max((eps_pair(W[i], W[j]) for i, j in _pairs(len(W))), default=0.0)


def ref_max_leakage(mechanism: Any) -> Any:
    return max_leakage_reference(_rows(mechanism))


def ref_tv_dp(mechanism: Any) -> Any:
    rows = [mp_law(row) for row in _rows(mechanism)]
    return max(
        mpmath.fsum(abs(a - b) for a, b in zip(rows[i], rows[j], strict=True)) / 2
        for i, j in _pairs(len(rows))
    )


def ref_dp_delta(level: float) -> Callable[[Any], Any]:
    def delta(mechanism: Any) -> Any:
        W = _rows(mechanism)
        return max(hockey_pair(W[i], W[j], level) for i, j in _pairs(len(W)))

    return delta


def ref_bsc_capacity(mechanism: Any) -> Any:
    """``log 2 − H(row)`` of a channel whose two rows are each other's reverse (exactly)."""
    W = _rows(mechanism)
    assert W.shape == (2, 2)
    assert W[0, 0] == W[1, 1]
    assert W[0, 1] == W[1, 0]
    row = mp_law(W[0])
    return mpmath.log(2) + mpmath.fsum(p * mpmath.log(p) for p in row if p > 0)


def ref_counting_midp(eps: float) -> Any:
    """MI-DP of a count with truncated geometric noise: ``ln 2 − h(1/(1+e^ε))`` (nats)."""
    q = 1 / (1 + mpmath.exp(mpmath.mpf(eps)))
    return mpmath.log(2) + q * mpmath.log(q) + (1 - q) * mpmath.log(1 - q)


# ------------------------------------------------------------------------------- problems


@dataclass
class Problem:
    family: Any
    param: str
    fixed: dict[str, Any]
    measure: str
    kwargs: dict[str, Any]
    bounds: tuple[float, float]
    truth: Callable[[float], float]  # the measure at θ (mpmath, from the built mechanism)
    direction: str  # the true direction ("increasing", "decreasing", "none")
    closed: bool  # a closed form (rounding allowance) or a certified solver bracket
    database: Any = None
    notes: list[str] = field(default_factory=list)

    def build(self, theta: float) -> Any:
        """The family's mechanism at ``theta`` (before any ``database``)."""
        fn = getattr(dpcap.mechanisms, self.family) if isinstance(self.family, str) else self.family
        return fn(**self.fixed, **{self.param: theta})


CLOSED = {
    "dp_epsilon": ref_dp_epsilon,
    "max_leakage": ref_max_leakage,
    "tv_dp": ref_tv_dp,
}

#: Increasing maps of θ ≥ 0 onto ε: (name, f).
MAPS: list[tuple[str, Callable[[float, float], float]]] = [
    ("linear", lambda a, t: a * t),
    ("square", lambda a, t: a * t * t),
    ("root", lambda a, t: a * math.sqrt(t)),
    ("log1p", lambda a, t: a * math.log1p(t)),
]


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    kind = draw(st.sampled_from(["rr", "rr", "mapped", "mapped", "bsc", "counting"]))
    if kind == "bsc":
        high = draw(st.sampled_from([0.5, 0.45, 0.3]))
        low = draw(st.sampled_from([0.0, 1e-3, 0.05]))
        return Problem(
            "binary_symmetric",
            "p",
            {},
            "capacity",
            draw(st.sampled_from([{}, {"tol": 1e-6}, {"tol": 1e-12}])),
            (low, high),
            lambda t: ref_bsc_capacity(binary_symmetric(t)),
            "decreasing",
            closed=False,
        )
    if kind == "counting":
        n = draw(st.integers(1, 4))
        return Problem(
            "truncated_geometric",
            "eps",
            {"n": n},
            "midp",
            {},
            (draw(st.sampled_from([0.01, 0.1])), draw(st.sampled_from([2.0, 5.0]))),
            lambda t: ref_counting_midp(t),
            "increasing",
            closed=False,
            database="counting",
        )
    k = draw(st.integers(2, 4))
    measure = draw(st.sampled_from(["dp_epsilon", "max_leakage", "tv_dp", "dp_delta"]))
    kwargs: dict[str, Any] = {}
    reference = CLOSED.get(measure)
    if measure == "dp_delta":
        level = draw(st.sampled_from([0.0, 0.25, 1.0]))
        kwargs, reference = {"eps": level}, ref_dp_delta(level)
    assert reference is not None
    if kind == "rr":
        low = draw(st.sampled_from([0.0, 1e-6, 0.01, 0.5]))
        high = low + draw(st.sampled_from([0.5, 3.0, 10.0, 30.0]))
        return Problem(
            "randomized_response",
            "eps",
            {"k": k},
            measure,
            kwargs,
            (low, high),
            lambda t: reference(randomized_response(k, t)),
            "increasing",
            closed=True,
        )
    name, f = draw(st.sampled_from(MAPS))
    scale = draw(st.sampled_from([0.1, 1.0, 3.0]))
    decreasing = draw(st.booleans())
    top = draw(st.sampled_from([1.0, 4.0, 10.0]))

    def eps_of(theta: float) -> float:
        return f(scale, top - theta if decreasing else theta)

    def family(theta: float, k: int) -> Any:
        return randomized_response(k, eps_of(theta))

    return Problem(
        family,
        "theta",
        {"k": k},
        measure,
        kwargs,
        (0.0, top),
        lambda t: reference(randomized_response(k, eps_of(t))),
        "decreasing" if decreasing else "increasing",
        closed=True,
        notes=[f"eps = {scale} * {name}({'top - ' if decreasing else ''}theta), top={top}"],
    )


@st.composite
def targets(draw: st.DrawFn, problem: Problem) -> float:
    """Inside the measure's range over ``bounds``, at its ends, or outside it."""
    low, high = (float(problem.truth(b)) for b in problem.bounds)
    low, high = min(low, high), max(low, high)
    u = draw(st.sampled_from([0.0, 1.0, -0.5, 1.5]) | st.floats(0.0, 1.0))
    if math.isinf(high):
        high = low + 10.0
    return max(low + u * (high - low), 0.0)


def slack(value: Any) -> float:
    return REL * abs(float(value)) + ABS


def calibrated(problem: Problem, target: float, **options: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = dpcap.calibrate(
            problem.family,
            problem.param,
            problem.measure,
            target,
            bounds=problem.bounds,
            fixed=problem.fixed,
            measure_kwargs=problem.kwargs,
            database=problem.database,
            **options,
        )
    return result, [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


def check_result(
    problem: Problem, target: float, result: Any, warned: list[str], **opt: Any
) -> None:
    low, high = problem.bounds
    truth = problem.truth
    # every evaluation's bracket holds the true measure at its parameter
    for theta, lower, upper in result.trace:
        true = truth(theta)
        assert lower - slack(true) <= true <= upper + slack(true), (theta, lower, upper, true)
    value = result.value
    if not math.isnan(value):  # the returned parameter meets the target, whatever the status
        assert low <= value <= high
        assert truth(value) <= target + slack(target), (value, truth(value), target)
    status, outcome = result.status, result.outcome
    if status in (Status.MAX_ITER, Status.INACCURATE, Status.FAILED):
        assert warned, f"{status} without a ConvergenceWarning"
    if status is Status.INFEASIBLE:
        assert math.isnan(value)
        if problem.direction != "none":  # no end of bounds meets the target
            assert min(truth(low), truth(high)) > target - slack(target)
        return
    if outcome == "bound":
        assert value in (low, high)
        if problem.direction != "none" and result.direction != "unknown":
            far = high if problem.direction == "increasing" else low
            assert value == far
        return
    if outcome == "threshold" and status is Status.CONVERGED:
        if problem.direction != "none":
            assert result.direction == problem.direction
        far = result.infeasible
        assert low <= far <= high
        assert truth(far) >= target - slack(target), (far, truth(far), target)
        assert result.lower <= value <= result.upper
        assert {result.lower, result.upper} == {value, far}
        width = max(opt.get("tol", 1e-6) * abs(value), opt.get("atol", 0.0))
        assert result.upper - result.lower <= width * (1 + 1e-12), (result.lower, result.upper)
        assert not warned, warned
        if problem.database is None:  # the mechanism is the family's at the value
            np.testing.assert_array_equal(result.mechanism.matrix, problem.build(value).matrix)


@fuzz(examples=10000, quick=12)
@given(data=st.data())
def test_the_calibrated_parameter_meets_its_target(data: st.DataObject) -> None:
    problem = data.draw(problems(), "problem")
    target = data.draw(targets(problem), "target")
    options: dict[str, Any] = data.draw(
        st.fixed_dictionaries(
            {},
            optional={
                "tol": st.sampled_from([1e-3, 1e-6, 1e-9, 1e-13]),
                "atol": st.sampled_from([0.0, 1e-8, 1e-3]),
                "max_evals": st.sampled_from([2, 3, 6, 100]),
            },
        ),
        "options",
    )
    if data.draw(st.integers(0, 5), "say direction") == 0:
        options["direction"] = problem.direction
    result, warned = calibrated(problem, target, **options)
    check_result(problem, target, result, warned, **options)


# ------------------------------------------------------- not monotone, or the wrong direction


@st.composite
def unruly(draw: st.DrawFn) -> tuple[Problem, dict[str, Any]]:
    """A measure that is not monotone in θ (ε = a·(1 + sin(cθ))), or a monotone one with the
    opposite ``direction=``."""
    problem = draw(problems())
    if problem.database is not None or problem.family == "binary_symmetric":
        wrong = "increasing" if problem.direction == "decreasing" else "decreasing"
        return problem, {"direction": wrong}
    k = problem.fixed["k"]
    a, c = draw(st.sampled_from([0.5, 2.0])), draw(st.sampled_from([1.0, 3.0, 10.0]))
    reference = CLOSED.get(problem.measure, ref_dp_epsilon)

    def family(theta: float, k: int) -> Any:
        return randomized_response(k, a * (1 + math.sin(c * theta)))

    wavy = Problem(
        family,
        "theta",
        {"k": k},
        problem.measure if problem.measure in CLOSED else "dp_epsilon",
        {},
        (0.0, draw(st.sampled_from([1.0, 5.0]))),
        lambda t: reference(randomized_response(k, a * (1 + math.sin(c * t)))),
        "none",
        closed=True,
    )
    options = {}
    if draw(st.booleans()):
        options["direction"] = draw(st.sampled_from(["increasing", "decreasing"]))
    return wavy, options


@fuzz(examples=3000, quick=6)
@given(data=st.data())
def test_a_measure_that_is_not_monotone_never_gives_an_infeasible_value(
    data: st.DataObject,
) -> None:
    problem, options = data.draw(unruly(), "problem")
    target = data.draw(targets(problem), "target")
    result, warned = calibrated(problem, target, **options)
    problem.direction = "none"  # nothing is claimed about the direction
    check_result(problem, target, result, warned, **options)


# ---------------------------------------------------------------------------- invalid args

BASE = {
    "family": "randomized_response",
    "param": "eps",
    "measure": "dp_epsilon",
    "target": 0.5,
    "bounds": (0.01, 3.0),
    "fixed": {"k": 2},
    "measure_kwargs": None,
    "tol": 1e-6,
    "atol": 0.0,
    "direction": None,
    "database": None,
    "max_evals": 100,
}

NOT_NUMBERS = [None, "0.5", b"1", True, 1j, [0.5], {"a": 1}, object()]

BAD: dict[str, list[Any]] = {
    "family": [5, None, "nope", "os:system", "dpcap:sweep", b"randomized_response", 1.5, ["rr"]],
    "param": ["", 5, None, "zzz", "k", b"eps", ("eps",)],
    "fixed": [[1], "k=2", {1: 2}, {"zz": 1}, 5, {"k": 2, "eps": 1.0}],
    "measure": ["nope", 5, None, "Capacity", "", "capacity ", ["dp_epsilon"]],
    "measure_kwargs": [
        [1],
        "tol",
        5,
        {"alpha": 2.0},
        {"tol": -1.0},
        {"unit": "furlong"},
        {"eps": [0.1, 0.2]},
        {"zz": 1},
    ],
    "target": [-1.0, math.nan, math.inf, -math.inf, *NOT_NUMBERS],
    "bounds": [
        (1.0,),
        (3.0, 0.01),
        (math.nan, 1.0),
        (0.0, math.inf),
        "ab",
        None,
        (True, 2.0),
        (1.0, 1.0),
        (1.0, 2.0, 3.0),
        5,
        ("0", "1"),
    ],
    "tol": [0.0, -1.0, math.nan, math.inf, *NOT_NUMBERS],
    "atol": [-1.0, math.nan, math.inf, *NOT_NUMBERS],
    "direction": ["up", 5, "", "Increasing", True],
    "database": ["sum", 5, "", 1.5],
    "max_evals": [1, 0, -3, 2.5, "10", True, None, math.inf],
}

#: Random malformed values besides the listed ones.
NEGATIVE = st.floats(max_value=-1e-300) | st.floats(allow_nan=True).filter(math.isnan)
RANDOM_BAD: dict[str, st.SearchStrategy[Any]] = {
    "param": st.text(max_size=5).filter(lambda s: s != "eps"),
    "measure": st.text(max_size=8).filter(lambda s: s not in catalogue.QUERIES),
    "target": NEGATIVE,
    "bounds": st.floats(-10.0, 10.0).flatmap(
        lambda a: st.tuples(st.just(a), st.floats(max_value=a))
    )
    | st.tuples(st.floats(-10.0, 10.0), st.sampled_from([math.inf, math.nan])),
    "tol": st.floats(max_value=0.0) | NEGATIVE,
    "atol": NEGATIVE,
    "direction": st.text(max_size=6).filter(lambda s: s not in ("increasing", "decreasing")),
    "max_evals": st.integers(-(2**40), 1),
}


@fuzz(examples=5000, quick=12)
@given(data=st.data())
def test_an_invalid_argument_is_refused_naming_it(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(BAD)), "argument")
    values = st.sampled_from(BAD[name])
    value = data.draw(values | RANDOM_BAD[name] if name in RANDOM_BAD else values, "value")
    if name == "measure_kwargs":
        measure = data.draw(st.sampled_from(["dp_epsilon", "capacity", "dp_delta"]), "measure")
        args = {**BASE, "measure": measure, name: value}
    else:
        args = {**BASE, name: value}
    call = {k: v for k, v in args.items() if k not in ("family", "param", "measure", "target")}
    with pytest.raises(ParameterError) as error:
        dpcap.calibrate(args["family"], args["param"], args["measure"], args["target"], **call)
    assert isinstance(error.value, ValueError)
    message = str(error.value)
    also = {"fixed": ["param"], "param": ["fixed"], "measure_kwargs": ["unit", "tol", "eps"]}
    assert any(n in message for n in [name, *also.get(name, [])]), (name, value, message)
