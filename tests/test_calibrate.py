"""Inverse queries (:func:`dpcap.study.calibration.calibrate`).

Theorems and closed forms checked (``h`` the binary entropy in nats):

* binary randomized response has maximal leakage ``log(2e^ε/(1+e^ε))`` (Issa, Wagner and Kamath
  2020; Ünsal and Önen eq. 50 with equality), ``log 1.5`` exactly at ``ε = log 3``; its Sibson
  capacity of order ∞ is the same number;
* ``dp_epsilon`` of ``truncated_geometric(n, ε)`` is ``ε`` (the line-neighbour level);
* binary randomized response has capacity ``ln 2 − h(1/(1+e^ε))`` (a binary symmetric channel),
  KL-DP ``ε·tanh(ε/2)`` (Cuff and Yu, Property 1, attained) and
  ``δ(ε₀) = (e^ε − e^ε₀)/(1 + e^ε)`` for ``ε > ε₀`` (the hockey stick of its two rows);
* a count of ``n`` binary entries with truncated geometric noise has MI-DP
  ``ln 2 − h(1/(1+e^ε))`` whatever ``n`` (each slice is a binary symmetric channel; Cuff and Yu
  eq. 98);
* ``binary_symmetric(p)`` has capacity ``ln 2 − h(p)``, decreasing in ``p`` on ``[0, 1/2]``.

Each is inverted here with :func:`scipy.optimize.brentq` on the closed form, and the true
threshold must lie in the returned parameter bracket: the feasible end is certified
(``upper(θ_F) ≤ target``) and the infeasible one too (``lower(θ_I) > target``), so for a
monotone measure the threshold lies between them whatever the search did. Also checked: the
bracket meets ``tol``; the ITP bound on the number of calls (bisection's count + 2); the outcomes
at the ends of ``bounds``; a non-monotone measure is reported with a warning; every bad argument
is refused naming it; ``to_dict`` is JSON and rebuilds the mechanism.
"""

from __future__ import annotations

import functools
import importlib
import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

import dpcap
from dpcap import ConvergenceWarning, ParameterError, Status
from dpcap.mechanisms import (
    binary_symmetric,
    counting_query,
    randomized_response,
    truncated_geometric,
)
from dpcap.study.calibration import CalibrationResult, calibrate

LN2 = math.log(2.0)
#: Rounding allowance of a closed form and of brentq's root (relative).
ROUND = 1e-12


def h2(p: float) -> float:
    return -p * math.log(p) - (1 - p) * math.log1p(-p)


def bsc_capacity_of_eps(eps: float) -> float:
    """``ln 2 − h(1/(1+e^ε))``: binary RR, and every slice of a geometric count."""
    return LN2 - h2(1.0 / (1.0 + math.exp(eps)))


def inverse(f: Any, target: float, lo: float, hi: float) -> float:
    return float(brentq(lambda x: f(x) - target, lo, hi, xtol=1e-15, rtol=4 * 2.0**-52))


def contains(r: CalibrationResult, theta: float) -> None:
    """The threshold lies in the parameter bracket, which meets the requested width."""
    assert r.status is Status.CONVERGED, r.message
    assert r.outcome == "threshold"
    assert r.lower * (1 - ROUND) <= theta <= r.upper * (1 + ROUND), (r, theta)
    assert r.gap <= max(r.tol * abs(r.value), r.atol)
    assert r.value in (r.lower, r.upper)


def certified(r: CalibrationResult, kwargs: dict[str, Any] | None = None) -> None:
    """upper(θ_F) ≤ target, and the measure re-evaluated at θ_I has lower > target."""
    m = r.measure_result
    assert float(getattr(m, "upper", m)) <= r.target
    fn = getattr(dpcap, r.measure)
    family = getattr(dpcap.mechanisms, r.family.split(":")[1])
    M = family(**dict(r.fixed), **{r.param: r.infeasible})
    if r.database == "counting":
        M = counting_query(M.n_inputs - 1, M)
    far = fn(M, **(kwargs or {}))
    assert float(getattr(far, "lower", far)) > r.target


# --------------------------------------------------------------------------- closed forms


class TestClosedForms:
    def test_max_leakage_of_binary_rr(self) -> None:
        """log(2e^ε/(1+e^ε)) ≤ log 1.5 ⇔ ε ≤ log 3."""
        r = calibrate(
            "randomized_response",
            "eps",
            "max_leakage",
            math.log(1.5),
            bounds=(0.01, 10),
            fixed={"k": 2},
            tol=1e-10,
        )
        contains(r, math.log(3))
        assert r.direction == "increasing"
        assert r.method == "itp-log"
        assert "closed-form values carry a rounding allowance" in r.message
        certified(r)

    def test_sibson_infinity_is_max_leakage(self) -> None:
        r = calibrate(
            randomized_response,
            "eps",
            "renyi_capacity",
            math.log(1.5),
            bounds=(0.01, 10),
            fixed={"k": 2},
            measure_kwargs={"alpha": math.inf},
        )
        contains(r, math.log(3))
        certified(r, {"alpha": math.inf})

    @pytest.mark.parametrize("target", [1e-3, 0.3, 2.5])
    def test_dp_epsilon_of_truncated_geometric_is_eps(self, target: float) -> None:
        r = calibrate(
            "truncated_geometric", "eps", "dp_epsilon", target, bounds=(1e-4, 10), fixed={"n": 10}
        )
        contains(r, target)
        certified(r)

    @pytest.mark.parametrize("target", [1e-4, 0.1, 0.6])
    def test_capacity_of_binary_rr(self, target: float) -> None:
        r = calibrate(
            "randomized_response",
            "eps",
            "capacity",
            target,
            bounds=(1e-3, 20),
            fixed={"k": 2},
            tol=1e-8,
        )
        contains(r, inverse(bsc_capacity_of_eps, target, 1e-3, 20))
        certified(r)

    def test_capacity_in_bits(self) -> None:
        """``unit="bits"``: the target is in bits, ln 2 − h = 0.1·ln 2 nats."""
        r = calibrate(
            "randomized_response",
            "eps",
            "capacity",
            0.1,
            bounds=(1e-3, 20),
            fixed={"k": 2},
            measure_kwargs={"unit": "bits"},
        )
        assert r.unit == "bits"
        contains(r, inverse(bsc_capacity_of_eps, 0.1 * LN2, 1e-3, 20))
        certified(r, {"unit": "bits"})

    def test_kl_dp_of_binary_rr(self) -> None:
        """Cuff and Yu, Property 1: binary RR attains KL-DP = ε·tanh(ε/2)."""
        r = calibrate(
            "randomized_response", "eps", "kl_dp", 0.05, bounds=(1e-3, 10), fixed={"k": 2}
        )
        contains(r, inverse(lambda e: e * math.tanh(e / 2), 0.05, 1e-3, 10))
        certified(r)

    def test_dp_delta_of_binary_rr(self) -> None:
        """δ(1) = (e^ε − e)/(1 + e^ε) = 0.1 at ε = log((e + 0.1)/0.9)."""
        r = calibrate(
            "randomized_response",
            "eps",
            "dp_delta",
            0.1,
            bounds=(0.1, 20),
            fixed={"k": 2},
            measure_kwargs={"eps": 1.0},
        )
        assert r.unit == ""
        contains(r, math.log((math.e + 0.1) / 0.9))
        certified(r, {"eps": 1.0})

    def test_midp_of_a_geometric_count(self) -> None:
        """The issue's question: which ε keeps MI-DP of a noisy count of 100 below 0.01 nats."""
        truth = inverse(bsc_capacity_of_eps, 0.01, 1e-4, 10)
        r = calibrate(
            "truncated_geometric",
            "eps",
            "midp",
            0.01,
            bounds=(1e-4, 10),
            fixed={"n": 100},
            database="counting",
        )
        contains(r, truth)
        certified(r)
        assert r.mechanism.shape == (2,) * 100
        # the same through a family the user writes
        mine = calibrate(
            lambda eps: counting_query(100, truncated_geometric(100, eps)),
            "eps",
            "midp",
            0.01,
            bounds=(1e-4, 10),
        )
        contains(mine, truth)
        assert mine.trace == r.trace  # the same measure at the same points
        assert mine.family.endswith("<lambda>")
        assert mine.database == ""

    def test_decreasing_measure_returns_the_smallest_parameter(self) -> None:
        """C(BSC(p)) = ln 2 − h(p) decreases on [0, 1/2]: the smallest p with C ≤ 0.1."""
        r = calibrate(binary_symmetric, "p", "capacity", 0.1, bounds=(0.01, 0.5), tol=1e-9)
        assert r.direction == "decreasing"
        assert r.method == "itp-log"
        contains(r, inverse(lambda p: LN2 - h2(p), 0.1, 0.01, 0.5))
        assert r.value == r.upper
        assert r.infeasible == r.lower
        c = dpcap.capacity(binary_symmetric(r.infeasible))
        assert c.lower > 0.1

    def test_linear_search_when_bounds_span_less_than_a_decade(self) -> None:
        r = calibrate(
            "randomized_response",
            "eps",
            "capacity",
            0.1,
            bounds=(0.5, 3),
            fixed={"k": 2},
            atol=1e-9,
            tol=1e-12,
        )
        assert r.method == "itp"
        contains(r, inverse(bsc_capacity_of_eps, 0.1, 0.5, 3))

    @settings(max_examples=15, deadline=None)
    @given(target=st.floats(1e-3, 0.9), k=st.integers(2, 5))
    def test_certified_property(self, target: float, k: int) -> None:
        """For any target below log k, both ends of the bracket are certified."""
        r = calibrate(
            "randomized_response",
            "eps",
            "capacity",
            target,
            bounds=(1e-3, 30),
            fixed={"k": k},
            tol=1e-7,
        )
        if r.outcome == "bound":  # log k is above the target only for k ≥ 3 at large targets
            assert dpcap.capacity(randomized_response(k, 30)).upper <= target
            return
        assert r.status is Status.CONVERGED, r.message
        certified(r)
        assert r.value < r.infeasible


# --------------------------------------------------------------------------- the search


class TestSearch:
    def test_itp_never_worse_than_bisection_plus_two(self) -> None:
        """Oliveira and Takahashi: at most ⌈log₂(width₀ / stop)⌉ + n₀ steps (n₀ = 2)."""
        for target, bounds in [(0.01, (1e-4, 10.0)), (1e-6, (1e-4, 10.0)), (0.5, (1e-4, 10.0))]:
            r = calibrate(
                "truncated_geometric",
                "eps",
                "midp",
                target,
                bounds=bounds,
                fixed={"n": 30},
                database="counting",
            )
            width0 = math.log(bounds[1] / bounds[0])
            bisection = math.ceil(math.log2(width0 / math.log1p(r.tol)))
            assert r.iterations <= bisection + 2
            assert r.evaluations == r.iterations + 2 + ("re-evaluated" in r.message)

    def test_superlinear_on_a_power_law(self) -> None:
        """ε-DP = ε is a line in (log θ, log m): a handful of calls, not 25."""
        r = calibrate(
            "truncated_geometric", "eps", "dp_epsilon", 0.3, bounds=(1e-4, 10), fixed={"n": 10}
        )
        assert r.evaluations <= 10

    def test_trace_and_counts(self) -> None:
        r = calibrate(
            "randomized_response", "eps", "capacity", 0.1, bounds=(1e-3, 20), fixed={"k": 2}
        )
        assert len(r.trace) == r.iterations + 2
        assert [t[0] for t in r.trace[:2]] == [1e-3, 20.0]
        for theta, lower, upper in r.trace:
            assert lower <= upper
            assert lower <= bsc_capacity_of_eps(theta) * (1 + ROUND) + 1e-15
            assert bsc_capacity_of_eps(theta) <= upper * (1 + ROUND) + 1e-15

    def test_max_evals(self) -> None:
        with pytest.warns(ConvergenceWarning, match="max_evals=4 ran out"):
            r = calibrate(
                "randomized_response",
                "eps",
                "capacity",
                0.1,
                bounds=(1e-3, 20),
                fixed={"k": 2},
                max_evals=4,
            )
        assert r.status is Status.MAX_ITER
        assert r.evaluations == 4
        assert r.gap > r.tol * r.value
        truth = inverse(bsc_capacity_of_eps, 0.1, 1e-3, 20)
        assert r.lower <= truth <= r.upper  # the bracket is certified even when open
        certified(r)


class TestStraddling:
    """A measure bracket ``lower ≤ target < upper`` decides nothing: it is re-evaluated at a
    1000× tighter ``tol`` (down to 1e-13); if it still straddles, that parameter is only *not
    proven feasible*, and an end of that kind leaves the status ``inaccurate``."""

    W = np.random.default_rng(3).dirichlet(np.full(40, 0.3), size=60)

    def family(self, lam: float) -> Any:
        """Mixing with the uniform law degrades W: capacity decreases in lam."""
        return (1 - lam) * self.W + lam / 40

    def test_loose_measure_tol_is_tightened(self) -> None:
        r = calibrate(
            self.family, "lam", "capacity", 0.3, bounds=(0.0, 1.0), measure_kwargs={"tol": 0.05}
        )
        assert r.status is Status.CONVERGED, r.message
        assert "re-evaluation(s) at a tighter tol" in r.message
        assert r.evaluations > r.iterations + 2
        assert r.direction == "decreasing"
        assert r.value > r.infeasible
        assert dpcap.capacity(self.family(r.value)).lower <= 0.3
        assert dpcap.capacity(self.family(r.infeasible)).upper > 0.3

    def test_undecided_end_is_inaccurate(self, monkeypatch: pytest.MonkeyPatch) -> None:
        module = importlib.import_module("dpcap.study.calibration")
        monkeypatch.setattr(module, "MIN_RETRY_TOL", 1.0)  # no re-evaluation
        with pytest.warns(ConvergenceWarning, match="straddles the target"):
            r = calibrate(
                self.family, "lam", "capacity", 0.3, bounds=(0.0, 1.0), measure_kwargs={"tol": 0.05}
            )
        assert r.status is Status.INACCURATE
        assert r.measure_result.upper <= 0.3  # the returned value is still proven feasible
        far = next(t for t in r.trace if t[0] == r.infeasible)
        assert far[1] <= 0.3 < far[2]  # the end that is only not proven feasible


# --------------------------------------------------------------------------- outcomes


class TestOutcomes:
    def test_infeasible_everywhere(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = calibrate(
                "randomized_response", "eps", "capacity", 1e-9, bounds=(0.5, 10), fixed={"k": 2}
            )
        assert r.status is Status.INFEASIBLE
        assert r.outcome == "none"
        assert math.isnan(r.value)
        assert math.isnan(r.lower)
        assert math.isnan(r.upper)
        assert r.infeasible == 0.5
        assert r.mechanism is None
        assert r.measure_result is None
        assert "no parameter in bounds" in r.message
        json.dumps(r.to_dict())

    def test_feasible_everywhere_returns_the_far_end(self) -> None:
        r = calibrate(
            "randomized_response", "eps", "capacity", 0.7, bounds=(0.5, 10), fixed={"k": 2}
        )
        assert r.status is Status.CONVERGED
        assert r.outcome == "bound"
        assert r.value == r.lower == r.upper == 10.0
        assert math.isnan(r.infeasible)
        r = calibrate(binary_symmetric, "p", "capacity", 0.7, bounds=(0.01, 0.5))
        assert r.direction == "decreasing"
        assert r.value == 0.01

    def test_constant_measure(self) -> None:
        fixed = functools.partial(randomized_response, 2)
        r = calibrate(lambda eps: fixed(1.0), "eps", "dp_epsilon", 2.0, bounds=(0.1, 5))
        assert r.direction == "unknown"
        assert r.outcome == "bound"
        assert r.value == 5.0
        assert "give direction=" in r.message
        r = calibrate(lambda eps: fixed(1.0), "eps", "dp_epsilon", 0.5, bounds=(0.1, 5))
        assert r.status is Status.INFEASIBLE

    def test_non_monotone_measure_is_reported(self) -> None:
        """ε ↦ capacity of RR(2, |ε − 1| + 0.1) falls then rises on [0, 3]."""
        with pytest.warns(ConvergenceWarning, match="not increasing in eps"):
            r = calibrate(
                lambda eps: randomized_response(2, abs(eps - 1) + 0.1),
                "eps",
                "capacity",
                0.2,
                bounds=(0.0, 3.0),
            )
        assert r.status is Status.FAILED
        assert "capacity(eps=0)" in r.message

    def test_stated_direction_contradicted_by_the_ends(self) -> None:
        with pytest.warns(ConvergenceWarning, match="not decreasing in eps"):
            r = calibrate(
                "randomized_response",
                "eps",
                "capacity",
                0.1,
                bounds=(0.5, 10),
                fixed={"k": 2},
                direction="decreasing",
            )
        assert r.status is Status.FAILED
        assert math.isnan(r.value)

    def test_to_dict_is_json_and_rebuilds_the_mechanism(self) -> None:
        r = calibrate(
            "truncated_geometric",
            "eps",
            "midp",
            0.01,
            bounds=(1e-4, 10),
            fixed={"n": 5},
            database="counting",
        )
        d = json.loads(json.dumps(r.to_dict()))
        assert d["status"] == "converged"
        assert d["measure"] == "midp"
        assert d["measure_result"]["upper"] <= 0.01
        assert d["gap"] == pytest.approx(r.upper - r.lower)
        spec = d["mechanism"]
        assert spec["family"] == "dpcap.mechanisms:truncated_geometric"
        rebuilt = counting_query(5, truncated_geometric(**spec["arguments"]))
        np.testing.assert_array_equal(rebuilt.matrix, r.mechanism.matrix)
        assert r.to_frame().shape[0] == 1
        assert "eps=" in repr(r)
        assert "midp <= 0.01 nats" in repr(r)


# --------------------------------------------------------------------------- bad input


RR = {"family": "randomized_response", "param": "eps", "measure": "capacity", "target": 0.1}


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"measure": "entropy"}, "measure: unknown measure 'entropy'; known measures: capacity"),
        ({"param": "sigma"}, "param: the family randomized_response takes no parameter 'sigma'"),
        ({"param": ""}, "param must be the name of a family argument"),
        ({"fixed": {"k": 2, "eps": 1.0}}, "fixed gives 'eps' = 1.0, the parameter being"),
        ({"fixed": {"k": 2, "n": 3}}, "fixed: the family randomized_response takes no parameter"),
        ({"fixed": {}}, "fixed: the family randomized_response needs k"),
        ({"fixed": [2]}, r"fixed must be a mapping .* got \[2\]"),
        ({"bounds": (10, 0.1)}, r"bounds must be \(low, high\) with low < high, got \(10, 0.1\)"),
        ({"bounds": (1.0, 1.0)}, "low < high"),
        ({"bounds": (math.nan, 1.0)}, r"bounds must be finite and not NaN, got \(nan, 1.0\)"),
        ({"bounds": (0.1, math.inf)}, "bounds must be finite"),
        ({"bounds": (0.1,)}, r"bounds must be two numbers \(low, high\), got \(0.1,\)"),
        ({"bounds": "ab"}, "bounds must be two numbers"),
        ({"bounds": (True, 2)}, "bounds must be two numbers"),
        ({"target": math.nan}, "target must not be NaN, got nan"),
        ({"target": -0.1}, "target must be >= 0, got -0.1"),
        ({"target": math.inf}, "target must be finite, got inf"),
        ({"tol": 0.0}, r"tol must be a positive finite number \(relative\), got 0.0"),
        ({"atol": -1.0}, "atol must be >= 0, got -1.0"),
        ({"direction": "up"}, "direction must be one of .*, got 'up'"),
        ({"database": "histogram"}, "database must be one of .*'counting'.*, got 'histogram'"),
        ({"max_evals": 1}, "max_evals must be an integer >= 2, got 1"),
        ({"family": "no_such_mechanism"}, "family: unknown mechanism 'no_such_mechanism'"),
        ({"family": 3}, "family must be a callable or a name, got 3"),
        ({"measure": "renyi_capacity"}, "measure_kwargs: renyi_capacity needs the parameter"),
        ({"measure_kwargs": {"alpha": 2}}, "measure_kwargs: capacity takes no parameter 'alpha'"),
        ({"measure_kwargs": {"tol": -1}}, "tol must be a positive finite number"),
        ({"measure_kwargs": {"tol": [1e-9]}}, r"measure_kwargs\['tol'\] must be one value"),
        ({"measure_kwargs": 3}, "measure_kwargs must be a mapping"),
    ],
)
def test_bad_input_names_argument_and_value(change: dict[str, Any], match: str) -> None:
    args = RR | {"bounds": (0.1, 10), "fixed": {"k": 2}} | change
    with pytest.raises(ParameterError, match=match):
        calibrate(
            args.pop("family"), args.pop("param"), args.pop("measure"), args.pop("target"), **args
        )


def test_counting_database_needs_a_noise_channel() -> None:
    """``database="counting"`` on a one-row channel has no count to make (n = 0)."""
    with pytest.raises(ParameterError, match="n must be an integer >= 1, got 0"):
        calibrate(lambda eps: [[1.0]], "eps", "midp", 0.1, bounds=(0.1, 1), database="counting")


def test_a_closed_form_within_rounding_of_the_target_is_not_proven() -> None:
    # RR(2, ε) is ε-DP; near ε = 0, e^ε rounds to 1 and the computed level is 0: a target of
    # exactly 0 cannot be certified by a closed form (only ε = 0 meets it, and its value 0
    # carries the same rounding allowance), so no parameter is "proven" feasible
    r = calibrate("randomized_response", "eps", "dp_epsilon", 0.0, bounds=(0, 1), fixed={"k": 2})
    assert r.status is Status.INFEASIBLE
    assert math.isnan(r.value)
    assert "rounding allowance" in r.message
