"""The query catalogue: one registration, asked by sweeps, calibration and the command line.

Theorems and closed forms checked through every face:

* g-leakage with the identity gain is the Bayes leakage ``Σ_y max_x π_x W[x,y] / max_x π_x``
  (Alvim et al. 2012): on BSC(p) at the uniform prior ``2(1 − p)``, so the smallest ``p`` with
  leakage ≤ 1.3 is 0.35 (calibration);
* the mutual information at a prior is ``H(Y) − H(Y|X)``;
* the binary source ``(q, 1 − q)`` under Hamming distortion has ``R(D) = h(q) − h(D)`` for
  ``0 ≤ D ≤ min(q, 1 − q)`` (Cover & Thomas, Thm 10.3.1), a family of sources swept at ``D``;
* the privacy funnel of the doubly symmetric binary source at ``R = 0`` is 0;
* a user-registered query is swept (in-process and in worker processes) and calibrated.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import dpcap
from dpcap import cli
from dpcap.errors import ParameterError
from dpcap.study import catalogue
from dpcap.study.catalogue import QUERIES, register_query, unregister_query

LN2 = math.log(2.0)


def h(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log(p) - (1 - p) * math.log(1 - p)


#: Every point query of a mechanism and every trade-off query the catalogue must hold.
POINT_QUERIES = {
    "capacity",
    "midp",
    "renyi_midp",
    "correlated_leakage",
    "renyi_capacity",
    "alpha_leakage",
    "max_leakage",
    "min_entropy_leakage",
    "mutual_information",
    "g_leakage",
    "g_capacity",
    "dp_epsilon",
    "dp_delta",
    "kl_dp",
    "renyi_dp",
    "tv_dp",
    "metric_epsilon",
}
TRADE_OFFS = {"rate_distortion", "privacy_distortion", "privacy_funnel"}


def test_every_query_is_registered_once_with_its_inputs() -> None:
    assert set(QUERIES) >= POINT_QUERIES | TRADE_OFFS
    assert (
        frozenset(QUERIES) - {n for n in QUERIES if n not in catalogue.BUILT_IN}
        == catalogue.BUILT_IN
    )
    for name in POINT_QUERIES:
        spec = QUERIES[name]
        assert len(spec.inputs) == 1, name
        assert spec.summary, name
    assert QUERIES["rate_distortion"].inputs == ("prior", "distortion")
    assert QUERIES["privacy_funnel"].inputs == ("joint",)
    assert QUERIES["mutual_information"].required == ("prior",)
    assert QUERIES["g_leakage"].parameters == ("prior", "gain", "kind")
    assert QUERIES["renyi_capacity"].required == ("alpha",)


def test_a_prior_is_a_query_parameter() -> None:
    W = [[0.9, 0.1], [0.2, 0.8]]
    prior = [0.3, 0.7]
    y = np.array(prior) @ np.array(W)
    truth = -sum(v * math.log(v) for v in y) - sum(
        p * h(row[0]) for p, row in zip(prior, W, strict=True)
    )
    assert QUERIES["mutual_information"].call(W, {"prior": prior}) == pytest.approx(truth, 1e-12)
    bayes = sum(max(p * row[k] for p, row in zip(prior, W, strict=True)) for k in range(2))
    assert QUERIES["g_leakage"].call(W, {"prior": prior}) == pytest.approx(bayes / 0.7, 1e-12)


# --- sweeps ----------------------------------------------------------------------------------


def test_sweep_g_leakage_and_mutual_information_at_a_prior() -> None:
    table = dpcap.sweep(
        "binary_symmetric",
        {"p": [0.1, 0.3]},
        [("g_leakage", {"prior": [0.5, 0.5]}), ("mutual_information", {"prior": [0.5, 0.5]})],
        progress=False,
    )
    g = table[table["query"] == "g_leakage"]
    assert g["value"].tolist() == pytest.approx([2 * 0.9, 2 * 0.7], abs=1e-12)
    assert set(g["prior"]) == {"[0.5, 0.5]"}  # one value, recorded as its JSON text
    mi = table[table["query"] == "mutual_information"]
    assert mi["value"].tolist() == pytest.approx([LN2 - h(0.1), LN2 - h(0.3)], abs=1e-12)
    assert set(mi["unit"]) == {"nats"}


def binary_source(q: float) -> dict[str, object]:
    """A binary source ``(q, 1 − q)`` under Hamming distortion: a rate–distortion problem."""
    return {"prior": [q, 1.0 - q], "distortion": [[0.0, 1.0], [1.0, 0.0]]}


def test_sweep_rate_distortion_at_D_over_a_family_of_sources() -> None:
    qs, D = [0.5, 0.3, 0.2], 0.1
    table = dpcap.sweep(binary_source, {"q": qs}, [("rate_distortion", {"D": D})], progress=False)
    assert table["status"].tolist() == ["converged"] * 3
    for q, lower, upper in zip(table["q"], table["lower"], table["upper"], strict=True):
        assert lower - 1e-12 <= h(q) - h(D) <= upper + 1e-12
        assert upper - lower <= 1e-8


def test_sweep_privacy_funnel_of_a_joint_law() -> None:
    def dsbs(p: float) -> dict[str, object]:
        return {"joint": [[(1 - p) / 2, p / 2], [p / 2, (1 - p) / 2]]}

    table = dpcap.sweep(dsbs, {"p": [0.1]}, [("privacy_funnel", {"R": 0.0})], progress=False)
    assert table["lower"].iloc[0] <= 0.0 <= table["upper"].iloc[0] + 1e-12


def test_a_problem_query_refuses_an_instance_without_its_keys() -> None:
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
        table = dpcap.sweep(
            "binary_symmetric", {"p": [0.1]}, [("rate_distortion", {"D": 0.1})], progress=False
        )
    assert table["status"].iloc[0] == "failed"
    assert "takes a mapping with the keys prior, distortion" in table["message"].iloc[0]


def test_array_parameters_are_checked_when_the_spec_is_read() -> None:
    with pytest.raises(ParameterError, match="queries: mutual_information parameter prior"):
        dpcap.sweep(
            "binary_symmetric",
            {"p": [0.1]},
            [("mutual_information", {"prior": [[0.5], ["a"]]})],
            progress=False,
        )
    with pytest.raises(ParameterError, match="needs the parameter"):
        dpcap.sweep("binary_symmetric", {"p": [0.1]}, ["mutual_information"], progress=False)


def test_a_store_with_an_array_parameter_resumes(tmp_path: Path) -> None:
    store = tmp_path / "s"
    query = [("g_leakage", {"prior": [0.25, 0.75]})]
    first = dpcap.sweep("binary_symmetric", {"p": [0.1, 0.2]}, query, store=store, progress=False)
    again = dpcap.sweep("binary_symmetric", {"p": [0.1, 0.2]}, query, store=store, progress=False)
    assert again["value"].tolist() == first["value"].tolist()
    assert len(dpcap.load_sweep(store)) == 2


# --- user queries ----------------------------------------------------------------------------


def largest_entry(W: object, /, *, unit: str = "nats") -> float:
    """The largest probability of the channel (a toy query: a probability, no unit)."""
    return float(np.max(np.asarray(W.matrix if hasattr(W, "matrix") else W)))


@pytest.fixture
def registered() -> object:
    spec = register_query("largest_entry", largest_entry, unit="")
    yield spec
    unregister_query("largest_entry")


def test_a_user_query_is_swept_in_process_and_in_workers(registered: object) -> None:
    grid = {"p": [0.1, 0.3]}
    table = dpcap.sweep("binary_symmetric", grid, "largest_entry", progress=False)
    assert table["value"].tolist() == pytest.approx([0.9, 0.7], abs=1e-15)
    assert set(table["unit"]) == {""}
    workers = dpcap.sweep(
        "binary_symmetric",
        grid,
        "largest_entry",
        progress=False,
        executor="processes",
        workers=2,
    )
    assert workers["value"].tolist() == table["value"].tolist()


def test_a_user_query_is_calibrated(registered: object) -> None:
    r = dpcap.calibrate("binary_symmetric", "p", "largest_entry", 0.8, bounds=(0.0, 0.5))
    assert r.status.value == "converged"
    assert r.lower <= 0.2 <= r.upper


def test_calibrate_rate_distortion_over_a_family_of_sources() -> None:
    """The largest ``q ≤ 1/2`` with ``R(0.1) = h(q) − h(0.1) ≤ 0.2`` (R increases with q)."""
    target, D = 0.2, 0.1
    lo, hi = D, 0.5  # the closed form's root, by bisection on h (independent of dpcap)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if h(mid) - h(D) <= target else (lo, mid)
    r = dpcap.calibrate(
        binary_source,
        "q",
        "rate_distortion",
        target,
        bounds=(0.15, 0.5),
        measure_kwargs={"D": D},
        tol=1e-8,
    )
    assert r.status.value == "converged"
    assert r.direction == "increasing"
    assert r.lower - 1e-12 <= lo <= r.upper + 1e-12
    assert r.upper - r.lower <= 1e-8 * r.value


def test_calibrate_g_leakage_at_a_prior() -> None:
    r = dpcap.calibrate(
        "binary_symmetric",
        "p",
        "g_leakage",
        1.3,
        bounds=(0.0, 0.45),
        measure_kwargs={"prior": [0.5, 0.5]},
        tol=1e-6,
    )
    assert r.direction == "decreasing"
    assert r.status.value == "converged"
    assert r.lower <= 0.35 <= r.upper
    assert r.upper - r.lower <= 1e-6 * 0.35


def test_a_user_query_is_a_command(
    registered: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "W.csv"
    np.savetxt(path, [[0.9, 0.1], [0.2, 0.8]], delimiter=",")
    assert cli.main(["largest_entry", str(path)]) == 0
    assert "largest_entry  0.9" in capsys.readouterr().out


def test_register_query_refuses_what_it_cannot_serve(registered: object) -> None:
    with pytest.raises(ParameterError, match="name: a query's name is an identifier"):
        register_query("two words", largest_entry)
    with pytest.raises(ParameterError, match="already registered; pass replace=True"):
        register_query("largest_entry", largest_entry)
    with pytest.raises(ParameterError, match=r"'capacity' is already registered$"):
        register_query("capacity", largest_entry, replace=True)
    with pytest.raises(ParameterError, match="function: a query is a callable"):
        register_query("other", 3)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"inputs: largest_entry has no parameter\(s\)"):
        register_query("other", largest_entry, inputs=("joint",))
    with pytest.raises(ParameterError, match="built-in query; it cannot be removed"):
        unregister_query("capacity")
    assert register_query("largest_entry", largest_entry, replace=True).name == "largest_entry"


# --- the command line ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(catalogue.BUILT_IN))
def test_every_catalogued_query_is_a_command_with_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([name, "--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: dpcap {name}")
    for parameter in QUERIES[name].required:
        assert f"--{parameter.replace('_', '-')}" in text


def test_the_command_line_asks_trade_offs_and_priors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hamming = tmp_path / "hamming.csv"
    np.savetxt(hamming, [[0, 1], [1, 0]], delimiter=",")
    assert cli.main(["rate_distortion", str(hamming), "--D", "0.1", "--prior", "0.3,0.7"]) == 0
    out = capsys.readouterr().out
    assert "D = 0.1" in out
    value = float(out.split("rate_distortion")[2].split()[0])
    assert value == pytest.approx(h(0.3) - h(0.1), abs=1e-8)
    bsc = tmp_path / "bsc.csv"
    np.savetxt(bsc, [[0.9, 0.1], [0.1, 0.9]], delimiter=",")
    assert cli.main(["mutual_information", str(bsc), "--prior", "0.5,0.5", "--unit", "bits"]) == 0
    out = capsys.readouterr().out
    assert f"{(LN2 - h(0.1)) / LN2:.9g} bits" in out
    assert cli.main(["mutual_information", str(bsc)]) == 2  # the prior is required
    assert "mutual_information is asked at a prior: give --prior" in capsys.readouterr().err


# --- found by the second reading ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "named"),
    [({"tol": -1.0}, "tol must be a positive"), ({"max_iter": -5}, "max_iter must be an integer")],
)
def test_sweep_options_are_checked_when_the_spec_is_read(params: dict, named: str) -> None:
    with pytest.raises(ParameterError, match=rf"queries: capacity parameter .*{named}"):
        dpcap.sweep("binary_symmetric", {"p": [0.1]}, [("capacity", params)], progress=False)


@pytest.mark.parametrize("tol", [-1.0, "abc"])
def test_calibrate_names_measure_kwargs(tol: object) -> None:
    with pytest.raises(ParameterError, match=r"^measure_kwargs: capacity parameter tol"):
        dpcap.calibrate(
            "randomized_response",
            "eps",
            "capacity",
            0.1,
            bounds=(0.01, 5),
            fixed={"k": 2},
            measure_kwargs={"tol": tol},
        )


def test_a_query_whose_tol_is_not_a_gap_keeps_its_own_default() -> None:
    """g_capacity's tol is a relative MILP gap (default 1e-4): the sweep's 1e-9 (a gap in nats)
    left its bracket open; the row now matches the direct call."""
    from dpcap.mechanisms import randomized_response

    G = [[1.0, 0.2, 0.0], [0.0, 1.0, 0.5], [0.3, 0.0, 1.0], [0.5, 0.5, 0.5]]
    direct = dpcap.g_capacity(randomized_response(3, 1.0), G)
    table = dpcap.sweep(
        "randomized_response", {"k": [3], "eps": [1.0]}, [("g_capacity", {"gain": G})],
        progress=False,
    )  # fmt: skip
    assert table["status"].tolist() == [direct.status.value] == ["converged"]
    assert table["upper"].iloc[0] == direct.upper


def shifted(W: object, /, *args: object, shift: float = 0.0, **kwargs: object) -> float:
    """A toy query with variadic parameters: the largest entry plus ``shift``."""
    return float(np.max(np.asarray(W))) + shift


def test_a_query_with_variadic_parameters_is_registered() -> None:
    spec = register_query("shifted", shifted, unit="")
    try:
        assert spec.parameters == ("shift",)
        assert spec.required == ()
        table = dpcap.sweep(
            "binary_symmetric", {"p": [0.1]}, [("shifted", {"shift": 1.0})], progress=False
        )
        assert table["value"].tolist() == pytest.approx([1.9], abs=1e-15)
    finally:
        unregister_query("shifted")


def test_a_partial_is_registered_and_listed() -> None:
    import functools

    spec = register_query("half_shifted", functools.partial(shifted, shift=0.5), unit="")
    try:
        assert spec.call([[1.0, 0.0], [0.0, 1.0]], {}) == 1.5
        assert cli.main(["half_shifted", "--help"]) == 0
    finally:
        unregister_query("half_shifted")


def test_result_annotations_resolve_in_their_public_module() -> None:
    import typing

    for name in dpcap.result.__all__:
        hints = typing.get_type_hints(getattr(dpcap.result, name))
        assert "value" in hints, name


def pair(w: float) -> object:
    """Two entries, each released through binary randomized response of level ``w``."""
    from dpcap.mechanisms import per_entry, randomized_response

    return per_entry(2, randomized_response(2, w))


def test_integer_lists_and_listed_levels_in_a_sweep_and_a_store(tmp_path: Path) -> None:
    """A group of entries is one value (MI-DP of both entries of two independent binary RR(1)
    releases is twice the BSC capacity, ``2(ln 2 − h(1/(1+e)))``); ``D`` may be a list (one row
    per level, ``R(D) = ln 2 − h(D)`` at q = 1/2); both survive a Parquet store."""
    store = tmp_path / "s"
    table = dpcap.sweep(
        pair, {"w": [1.0]}, [("midp", {"group": [0, 1]})], store=store, progress=False
    )
    p = 1 / (1 + math.e)
    assert table["lower"].iloc[0] - 1e-9 <= 2 * (LN2 - h(p)) <= table["upper"].iloc[0] + 1e-9
    assert dpcap.load_sweep(store)["group"].tolist() == ["[0, 1]"]
    rd = dpcap.sweep(
        binary_source, {"q": [0.5]}, [("rate_distortion", {"D": [0.1, 0.2]})], progress=False
    )
    assert rd["D"].tolist() == [0.1, 0.2]
    assert rd["value"].tolist() == pytest.approx([LN2 - h(0.1), LN2 - h(0.2)], abs=1e-9)
