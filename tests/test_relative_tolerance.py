"""The relative stopping rule ``upper − lower ≤ max(tol, rtol·|upper|)`` (issue 27, item 18).

With ``tol`` alone, a small leakage was "converged" with few correct digits (a Z channel: a gap
of 9.1e-10 on a value of 3.7e-4), a near-rank-1 channel was "converged" on a bracket twice as
wide as its lower end, and a ``tol`` below the rounding of the bracket ended with
``max_iter`` after a few iterations, saying nothing of why. Checked here:

* the Z channel ``W = [[1, 0], [p, 1 − p]]`` (input 1 is flipped to 0 with probability p) has
  ``C = log(1 + (1 − p) p^{p/(1−p)})`` (Golomb 1980; Cover & Thomas, Problem 7.8): the formula
  and its orientation are checked against a direct maximisation of ``I(q) = h(q(1 − p)) −
  q h(p)`` over the prior ``q = P(X = 1)``, then the certified bracket holds it and is
  relatively narrower than ``rtol``;
* a near-rank-1 channel (capacity ~3e-14) either converges relatively or says that rounding
  limits it; a ``tol`` below the rounding floor says so ("rounding floor"), for Shannon,
  Rényi and MI-DP;
* ``rtol`` reaches the engines of Rényi capacities, MI-DP, the capacity–cost function and
  rate–distortion (closed form ``R(D) = h(p) − h(D)`` for a binary source with Hamming
  distortion, Cover & Thomas §10.3), sweeps (an option and a query parameter, checked when
  the spec is read), calibration and the command line (``--rtol``);
* ``rtol`` is validated everywhere with a message naming it;
* a hypothesis property: on random channels, a converged result meets the rule.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

import dpcap
from dpcap import cli
from dpcap._core import certify
from dpcap.errors import ConvergenceWarning, ParameterError, Status
from dpcap.mechanisms import per_entry
from dpcap.testing import channels

P = 0.999  # the Z channel's crossover: C ≈ 3.68e-4 nats
TINY_TOL = 1e-300  # tol out of the way: the relative target alone decides


def h(x: float) -> float:
    return -x * math.log(x) - (1 - x) * math.log1p(-x) if 0 < x < 1 else 0.0


def z_channel(p: float = P) -> np.ndarray:
    return np.array([[1.0, 0.0], [p, 1.0 - p]])


def z_capacity(p: float = P) -> float:
    return math.log1p((1.0 - p) * p ** (p / (1.0 - p)))


def near_rank_one() -> np.ndarray:
    """Three rows equal up to 1.5e-7: capacity about 3.2e-14 nats."""
    return np.array(
        [[0.1, 0.2, 0.7], [0.1 + 1.5e-7, 0.2, 0.7 - 1.5e-7], [0.1, 0.2 + 5e-8, 0.7 - 5e-8]]
    )


# --- the three examples of the issue -------------------------------------------------------


def test_z_channel_formula_and_orientation() -> None:
    """The closed form is the maximum of I(q) = h(q(1 − p)) − q h(p) (an independent check)."""
    best = minimize_scalar(
        lambda q: -(h(q * (1 - P)) - q * h(P)),
        bounds=(1e-9, 1 - 1e-9),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert -best.fun == pytest.approx(z_capacity(), rel=1e-9)
    # input 1 is the noisy one: it reaches output 1 with probability 1 − p
    assert z_channel()[1].tolist() == [P, 1 - P]


def test_z_channel_converges_relatively_and_holds_the_closed_form() -> None:
    C = z_capacity()
    res = dpcap.capacity(z_channel(), tol=TINY_TOL, rtol=1e-6)
    assert res.status is Status.CONVERGED
    assert res.upper - res.lower <= 1e-6 * res.upper
    slack = 4 * math.ulp(C)  # the rounding of the closed form itself
    assert res.lower - slack <= C <= res.upper + slack
    assert "rtol 1e-06" in res.message
    # the absolute rule, as before, is untouched by rtol = 0
    plain = dpcap.capacity(z_channel())
    assert plain.upper - plain.lower <= 1e-9
    assert "rtol" not in plain.message


def test_rtol_below_tol_changes_nothing() -> None:
    """``max(tol, rtol·|upper|)``: a relative target below tol leaves tol in charge."""
    a = dpcap.capacity(z_channel(), tol=1e-9)
    b = dpcap.capacity(z_channel(), tol=1e-9, rtol=1e-12)
    assert (a.lower, a.upper, a.status) == (b.lower, b.upper, b.status)


@pytest.mark.parametrize("rtol", [1e-3, 1e-9])
def test_near_rank_one_converges_or_names_the_rounding_floor(rtol: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dpcap.capacity(near_rank_one(), tol=TINY_TOL, rtol=rtol)
    assert 0.0 <= res.lower <= res.upper < 1e-13
    if res.status is Status.CONVERGED:
        assert res.upper - res.lower <= rtol * res.upper
    else:
        assert "rounding floor" in res.message, res.message
    if rtol == 1e-9:  # far below what float64 resolves on values of 3e-14
        assert res.status is not Status.CONVERGED
        assert "rounding floor" in res.message


def test_tol_below_the_rounding_floor_says_so() -> None:
    W = [[0.9, 0.1], [0.1, 0.9]]
    with pytest.warns(ConvergenceWarning, match="rounding floor"):
        res = dpcap.capacity(W, tol=1e-18)
    assert res.status is not Status.CONVERGED
    assert "rounding floor" in res.message
    assert "cannot be met" in res.message
    with pytest.warns(ConvergenceWarning, match="rounding floor"):
        batch = dpcap.capacities([np.array(W)], tol=1e-18)
    assert "rounding floor" in batch.messages[0]
    with pytest.warns(ConvergenceWarning, match="rounding floor"):  # the vectorised stack
        dpcap.capacities(np.array([W, W]), tol=1e-18)


@pytest.mark.parametrize(
    "query",
    [
        lambda **kw: dpcap.renyi_capacity(z_channel(0.9), 2.0, **kw),
        lambda **kw: dpcap.midp(per_entry(2, z_channel(0.9)), **kw),
    ],
    ids=["renyi", "midp"],
)
def test_rounding_floor_of_renyi_and_midp(query: object) -> None:
    with pytest.warns(ConvergenceWarning, match="rounding floor"):
        res = query(tol=1e-19)  # type: ignore[operator]
    assert res.status is not Status.CONVERGED


# --- rtol through the queries ---------------------------------------------------------------


def test_capacities_batch_and_list_honour_rtol() -> None:
    Ws = [z_channel(), z_channel(0.99), [[0.9, 0.1], [0.1, 0.9]]]
    for batch in (
        dpcap.capacities(Ws, tol=TINY_TOL, rtol=1e-7),
        dpcap.capacities(
            np.stack([np.asarray(W, dtype=float) for W in Ws]), tol=TINY_TOL, rtol=1e-7
        ),
    ):
        assert all(s is Status.CONVERGED for s in batch.status)
        assert np.all(batch.upper - batch.lower <= 1e-7 * batch.upper)
    single = dpcap.capacity(Ws[0], tol=TINY_TOL, rtol=1e-7)
    listed = dpcap.capacities(Ws, tol=TINY_TOL, rtol=1e-7)[0]
    assert (listed.lower, listed.upper, listed.message) == (
        single.lower,
        single.upper,
        single.message,
    )


@pytest.mark.parametrize("alpha", [0.5, 2.0, math.inf])
def test_renyi_capacity_honours_rtol(alpha: float) -> None:
    res = dpcap.renyi_capacity(z_channel(), alpha, tol=TINY_TOL, rtol=1e-8)
    assert res.status is Status.CONVERGED
    assert res.upper - res.lower <= 1e-8 * res.upper
    profile = dpcap.renyi_profile(z_channel(), [0.5, 1.0, 2.0], tol=TINY_TOL, rtol=1e-8)
    assert all(s is Status.CONVERGED for s in profile.status)
    assert np.all(profile.upper - profile.lower <= 1e-8 * profile.upper)
    assert "rtol" in profile.message


def test_midp_and_correlated_leakage_honour_rtol() -> None:
    M = per_entry(2, z_channel())
    C = z_capacity()
    for res in (
        dpcap.midp(M, tol=TINY_TOL, rtol=1e-6),
        dpcap.correlated_leakage(M, tol=TINY_TOL, rtol=1e-6),
        dpcap.renyi_midp(M, 2.0, tol=TINY_TOL, rtol=1e-6),
    ):
        assert res.status is Status.CONVERGED
        assert res.upper - res.lower <= 1e-6 * res.upper
    # MI-DP of independent entries through the Z channel: each slice is the Z channel
    mi = dpcap.midp(M, tol=TINY_TOL, rtol=1e-6)
    assert mi.lower - 4 * math.ulp(C) <= C <= mi.upper + 4 * math.ulp(C)


def test_capacity_cost_honours_rtol() -> None:
    res = dpcap.capacity(z_channel(), cost=[0.0, 1.0], budget=5e-4, tol=TINY_TOL, rtol=1e-6)
    assert res.status is Status.CONVERGED
    assert res.upper - res.lower <= 1e-6 * res.upper
    assert res.expected_cost <= 5e-4


@pytest.mark.parametrize("D", [0.1, 0.2999])
def test_rate_distortion_honours_rtol(D: float) -> None:
    """Binary source (0.3, 0.7), Hamming distortion: R(D) = h(0.3) − h(D) for D ≤ 0.3."""
    exact = h(0.3) - h(D)
    res = dpcap.rate_distortion([0.3, 0.7], [[0, 1], [1, 0]], D, tol=TINY_TOL, rtol=1e-6)
    assert res.status is Status.CONVERGED
    assert res.upper - res.lower <= 1e-6 * res.upper
    assert res.lower - 1e-15 <= exact <= res.upper + 1e-15
    curve = dpcap.rate_distortion_curve(
        [0.3, 0.7], [[0, 1], [1, 0]], n_points=5, tol=TINY_TOL, rtol=1e-6
    )
    assert all(s is Status.CONVERGED for s in curve.status)
    assert np.all(curve.upper - curve.lower <= np.maximum(1e-6 * curve.upper, TINY_TOL))


def test_a_relative_rule_loosens_an_lp_query() -> None:
    """optimal_mechanism (one LP): the rule is applied to its certified bracket."""
    loose = dpcap.optimal_mechanism([0.5, 0.5], [[0, 1], [1, 0]], 1.0, tol=1e-300, rtol=0.5)
    assert loose.status is Status.CONVERGED
    assert "rtol 0.5" in loose.message


# --- validation -----------------------------------------------------------------------------

BAD = [math.nan, -0.1, 1.0, 2.0, math.inf, True, "x", 1e-3 + 0j, None]

QUERIES = {
    "capacity": lambda r: dpcap.capacity(z_channel(), rtol=r),
    "capacities": lambda r: dpcap.capacities([z_channel()], rtol=r),
    "capacity_cost": lambda r: dpcap.capacity(z_channel(), cost=[0, 1], budget=0.1, rtol=r),
    "midp": lambda r: dpcap.midp(z_channel(), rtol=r),
    "renyi_midp": lambda r: dpcap.renyi_midp(z_channel(), 2.0, rtol=r),
    "correlated_leakage": lambda r: dpcap.correlated_leakage(z_channel(), rtol=r),
    "renyi_capacity": lambda r: dpcap.renyi_capacity(z_channel(), 2.0, rtol=r),
    "renyi_profile": lambda r: dpcap.renyi_profile(z_channel(), [2.0], rtol=r),
    "alpha_leakage": lambda r: dpcap.alpha_leakage(z_channel(), 2.0, rtol=r),
    "augustin_mi": lambda r: dpcap.augustin_mi([0.5, 0.5], z_channel(), 2.0, rtol=r),
    "rate_distortion": lambda r: dpcap.rate_distortion([0.5, 0.5], np.eye(2), 0.1, rtol=r),
    "privacy_distortion": lambda r: dpcap.privacy_distortion(
        [0.5, 0.5], 1 - np.eye(2), 0.1, rtol=r
    ),
    "optimal_mechanism": lambda r: dpcap.optimal_mechanism([0.5, 0.5], 1 - np.eye(2), 1.0, rtol=r),
    "privacy_funnel": lambda r: dpcap.privacy_funnel([[0.4, 0.1], [0.1, 0.4]], 0.1, rtol=r),
    "perfect_privacy": lambda r: dpcap.perfect_privacy([[0.4, 0.1], [0.1, 0.4]], rtol=r),
    "sweep": lambda r: dpcap.sweep(
        "randomized_response", {"k": [2], "eps": [1.0]}, "capacity", rtol=r, progress=False
    ),
}


@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("value", BAD, ids=repr)
def test_bad_rtol_is_refused_naming_it(name: str, value: object) -> None:
    with pytest.raises(ParameterError, match=r"rtol must be a finite number in \[0, 1\)"):
        QUERIES[name](value)


def test_good_rtol_values() -> None:
    from dpcap._core import validation

    assert validation.rtol(0) == 0.0
    assert validation.rtol(np.float32(1e-3)) == pytest.approx(1e-3)
    assert math.copysign(1.0, validation.rtol(-0.0)) == 1.0
    assert validation.rtol(np.nextafter(1.0, 0.0)) < 1.0


def test_conclude_names_the_rule() -> None:
    status, message = certify.conclude(1e-8, 1e-12, rtol=1e-3, upper=1e-4)
    assert status is Status.CONVERGED
    assert "max(tol 1e-12, rtol 0.001·|upper|)" in message
    with pytest.raises(TypeError, match="upper end"):
        certify.conclude(1e-8, 1e-12, rtol=1e-3)
    calls = []

    def floor() -> float:
        calls.append(1)
        return 1e-20

    certify.conclude(1e-8, 1e-12, rtol=1e-3, upper=1e-4, floor=floor)
    assert not calls  # a floor is evaluated only for an open bracket


# --- sweeps, calibration, command line ------------------------------------------------------


def test_sweep_option_and_query_parameter() -> None:
    grid = {"k": [2], "eps": [0.05, 0.1]}
    by_option = dpcap.sweep(
        "randomized_response", grid, "capacity", tol=TINY_TOL, rtol=1e-7, progress=False
    )
    by_param = dpcap.sweep(
        "randomized_response", grid, {"capacity": {"tol": TINY_TOL, "rtol": 1e-7}}, progress=False
    )
    for table in (by_option, by_param):
        assert (table["status"] == "converged").all()
        assert ((table["upper"] - table["lower"]) <= 1e-7 * table["upper"]).all()
    assert "rtol" not in by_option  # an option, not a query parameter: no column
    assert (by_param["rtol"] == 1e-7).all()
    # other queries take the rule too (MI-DP, Rényi)
    table = dpcap.sweep(
        "randomized_response",
        grid,
        ["midp", ("renyi_capacity", {"alpha": 2.0})],
        tol=TINY_TOL,
        rtol=1e-7,
        progress=False,
    )
    assert ((table["upper"] - table["lower"]) <= 1e-7 * table["upper"]).all()


def test_sweep_refuses_a_bad_rtol_parameter_before_running() -> None:
    with pytest.raises(ParameterError, match=r"capacity parameter rtol: rtol must be"):
        dpcap.sweep(
            "randomized_response",
            {"k": [2], "eps": [1.0]},
            {"capacity": {"rtol": 1.0}},
            progress=False,
        )


def test_sweep_store_spec_is_unchanged_without_rtol(tmp_path: Path) -> None:
    store = tmp_path / "store"
    dpcap.sweep(
        "randomized_response", {"k": [2], "eps": [1.0]}, "capacity", store=store, progress=False
    )
    spec = json.loads((store / "_spec.json").read_text())
    assert "rtol" not in spec["options"]
    with pytest.raises(ParameterError, match="rtol"):
        dpcap.sweep(
            "randomized_response",
            {"k": [2], "eps": [1.0]},
            "capacity",
            store=store,
            rtol=1e-6,
            progress=False,
        )


def test_calibration_checks_and_uses_rtol() -> None:
    with pytest.raises(ParameterError, match="rtol"):
        dpcap.calibrate(
            "randomized_response",
            "eps",
            "capacity",
            1e-3,
            bounds=(0.01, 1.0),
            fixed={"k": 2},
            measure_kwargs={"rtol": 1.5},
        )
    res = dpcap.calibrate(
        "randomized_response",
        "eps",
        "capacity",
        1e-3,
        bounds=(0.01, 1.0),
        fixed={"k": 2},
        measure_kwargs={"tol": TINY_TOL, "rtol": 1e-8},
        tol=1e-6,
    )
    assert res.status is Status.CONVERGED
    found = res.measure_result
    assert found.upper <= 1e-3
    assert found.upper - found.lower <= 1e-8 * found.upper


def _write(tmp_path: Path, W: np.ndarray) -> Path:
    path = tmp_path / "W.csv"
    np.savetxt(path, W, delimiter=",")
    return path


def test_cli_rtol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, z_channel())
    argv = ["capacity", str(path), "--tol", "1e-300", "--rtol", "1e-6", "--json"]
    assert cli.main(argv) == 0
    res = json.loads(capsys.readouterr().out)["result"]
    assert res["status"] == "converged"
    assert res["upper"] - res["lower"] <= 1e-6 * res["upper"]
    for command in (["midp"], ["renyi_capacity", "--alpha", "2"], ["renyi"]):
        assert (
            cli.main(
                [command[0], str(path), *command[1:], "--tol", "1e-300", "--rtol", "1e-6", "--json"]
            )
            == 0
        )
        out = json.loads(capsys.readouterr().out)["result"]
        lower, upper = np.asarray(out["lower"]), np.asarray(out["upper"])
        assert np.all(upper - lower <= 1e-6 * upper)
    assert cli.main(["capacity", str(path), "--rtol", "1.5"]) == 2
    assert "rtol" in capsys.readouterr().err
    assert cli.main(["capacity", str(path), "--rtol", "x"]) == 2
    assert "rtol" in capsys.readouterr().err


def test_cli_tradeoffs_and_help(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, np.array([[0.0, 1.0], [1.0, 0.0]]))
    argv = [
        "rd",
        str(path),
        "--prior",
        "0.3,0.7",
        "--D",
        "0.1,0.2",
        "--tol",
        "1e-300",
        "--rtol",
        "1e-6",
        "--json",
    ]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    curve = out["result"] if "result" in out else out["curve"]
    lower, upper = np.asarray(curve["lower"]), np.asarray(curve["upper"])
    assert np.all(upper - lower <= 1e-6 * upper)
    for command in ("capacity", "midp", "rate_distortion", "rd", "pd", "funnel", "renyi"):
        assert cli.main([command, "--help"]) == 0
        assert "--rtol" in capsys.readouterr().out, command


def test_cli_sweep_spec_takes_rtol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'family = "randomized_response"\n[grid]\nk = [2]\neps = [0.05]\n'
        '[[queries]]\nquery = "capacity"\n[options]\ntol = 1e-300\nrtol = 1e-7\n'
    )
    out = tmp_path / "table.csv"
    assert cli.main(["sweep", str(spec), "--csv", str(out), "--no-progress"]) == 0, (
        capsys.readouterr().err
    )
    import pandas as pd

    table = pd.read_csv(out)
    assert ((table["upper"] - table["lower"]) <= 1e-7 * table["upper"]).all()
    spec.write_text(spec.read_text().replace("rtol = 1e-7", "rtol = 1.0"))
    assert cli.main(["sweep", str(spec), "--no-progress"]) == 2
    assert "rtol" in capsys.readouterr().err


# --- a property ----------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    W=channels(max_inputs=4, max_outputs=4),
    rtol=st.sampled_from([1e-2, 1e-4, 1e-6, 1e-9]),
    tol=st.sampled_from([1e-300, 1e-12, 1e-6]),
)
def test_converged_means_the_rule_holds(W: np.ndarray, rtol: float, tol: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dpcap.capacity(W, tol=tol, rtol=rtol)
    assert 0.0 <= res.lower <= res.upper
    if res.status is Status.CONVERGED:
        assert res.upper - res.lower <= max(tol, rtol * res.upper)
    else:  # open: either the budget or rounding limited it, and the message says which
        assert "not converged" in res.message
