"""Sweeps: the table against single calls and closed forms, the spec rules, the statuses.

Theorems and facts checked:

* randomized response RR_k(ε) is ε-DP exactly; its δ(ε') is ``(e^ε − e^ε')_+ / (e^ε + k − 1)``
  (one hockey-stick term survives); it is a symmetric channel, so its capacity is
  ``log k − H(row)`` (Cover & Thomas, Thm 7.2.1);
* MI-DP of a one-entry mechanism is its capacity (Cuff & Yu, Def. 2 with n = 1);
* a count of n binary entries with truncated geometric noise of level ε is ε-DP under Hamming
  neighbours (Ghosh, Roughgarden & Sundararajan 2012).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpcap
from dpcap import ParameterError
from dpcap.mechanisms import randomized_response, truncated_geometric

sys.path.insert(0, str(Path(__file__).parent))
import sweep_families

GRID = {"k": [2, 3, 5], "eps": [0.25, 1.0, 3.0]}


def _rr_capacity(k: int, eps: float) -> float:
    z = math.exp(eps) + k - 1
    row = [math.exp(eps) / z] + [1 / z] * (k - 1)
    return math.log(k) + sum(p * math.log(p) for p in row)


def _quiet(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return dpcap.sweep(*args, progress=False, **kwargs)


def test_layout_columns_order_and_types() -> None:
    table = _quiet("randomized_response", GRID, ["capacity", ("dp_delta", {"eps": [0.0, 0.5]})])
    assert list(table.columns) == [
        "point", "k", "eps", "query", "query_eps", "value", "lower", "upper", "status",
        "iterations", "method", "unit", "message", "seconds",
    ]  # fmt: skip
    assert len(table) == 9 * 3  # one capacity row and two δ rows per grid point
    assert table["point"].tolist() == [p for p in range(9) for _ in range(3)]
    # the product in C order: the last parameter varies fastest
    assert table.drop_duplicates("point")[["k", "eps"]].values.tolist() == [
        [k, e] for k in GRID["k"] for e in GRID["eps"]
    ]
    assert table["k"].dtype == np.int64
    assert table["eps"].dtype == np.float64
    assert table["iterations"].dtype == np.int64
    assert (table["seconds"] >= 0).all()


def test_values_are_the_closed_forms() -> None:
    table = _quiet(
        "randomized_response", GRID, ["capacity", "dp_epsilon", ("dp_delta", {"eps": 0.5})]
    )
    for row in table.itertuples():
        k, eps = row.k, row.eps
        if row.query == "capacity":
            truth = _rr_capacity(k, eps)
            assert row.lower <= truth * (1 + 1e-12)
            assert truth <= row.upper * (1 + 1e-12)
            assert row.upper - row.lower <= 1e-9
        elif row.query == "dp_epsilon":
            assert row.value == pytest.approx(eps, rel=1e-12)
        else:
            z = math.exp(eps) + k - 1
            assert row.value == pytest.approx(max(math.exp(eps) - math.exp(0.5), 0) / z, abs=1e-15)
        assert row.status == "converged"


def test_table_equals_a_loop_of_single_calls() -> None:
    grid = {"n": [2, 5, 9], "eps": [0.1, 1.0]}
    queries = ["capacity", "dp_epsilon", "tv_dp", ("renyi_capacity", {"alpha": 2.0}), "midp"]
    table = _quiet("truncated_geometric", grid, queries)
    i = 0
    for n in grid["n"]:
        for eps in grid["eps"]:
            W = truncated_geometric(n, eps)
            cap = dpcap.capacity(W)
            single = [
                cap,
                dpcap.dp_epsilon(W),
                dpcap.tv_dp(W),
                dpcap.renyi_capacity(W, 2.0),
                dpcap.midp(W),
            ]
            for answer in single:
                row = table.iloc[i]
                i += 1
                if isinstance(answer, float):  # closed forms: to the last bit
                    assert row["value"] == answer
                    assert math.isnan(row["lower"])  # no bracket claimed for a closed form
                    assert math.isnan(row["upper"])
                    continue
                if row["query"] == "midp":
                    # read off the capacity: the same bracket as capacity(), which must overlap
                    # midp()'s own bracket (both certify the same number)
                    assert (row["lower"], row["upper"]) == (cap.lower, cap.upper)
                    assert max(row["lower"], answer.lower) <= min(row["upper"], answer.upper)
                    continue
                assert (row["value"], row["lower"], row["upper"]) == (
                    answer.value,
                    answer.lower,
                    answer.upper,
                )
                assert row["status"] == answer.status.value
                assert row["iterations"] == answer.iterations
                assert row["method"] == answer.method
    assert i == len(table)


def test_database_family_and_structured_queries() -> None:
    table = _quiet(sweep_families.count, {"n": [3, 40], "eps": [0.5]}, ["dp_epsilon", "capacity"])
    eps_rows = table[table["query"] == "dp_epsilon"]
    assert eps_rows["value"].tolist() == pytest.approx([0.5, 0.5], rel=1e-12)
    cap = table[table["query"] == "capacity"].set_index("n")
    # n = 40: 2^40 databases, solved on the 41 reachable counts (every law on the counts is the
    # image of a law on databases), so the capacity is that of the noise on {0..40}
    assert (cap["status"] == "converged").all()
    ref = dpcap.capacity(truncated_geometric(40, 0.5))
    assert cap.loc[40, "lower"] <= ref.upper
    assert ref.lower <= cap.loc[40, "upper"]


def test_failing_and_too_large_instances_are_rows() -> None:
    with pytest.warns(dpcap.ConvergenceWarning, match=r"6 of 8 rows.*failed: 4, too_large: 2"):
        table = _quiet(
            "truncated_geometric", {"n": [3, 2**24], "eps": [-1.0, 1.0]}, ["capacity", "dp_epsilon"]
        )
    by = {(r.n, r.eps, r.query): r for r in table.itertuples()}
    assert by[(3, -1.0, "capacity")].status == "failed"
    assert "eps" in by[(3, -1.0, "capacity")].message
    assert by[(2**24, 1.0, "capacity")].status == "too_large"
    assert by[(3, 1.0, "dp_epsilon")].value == pytest.approx(1.0)
    assert len(table) == 8


def test_list_valued_query_parameters_give_one_row_each() -> None:
    table = _quiet(
        "binary_symmetric", {"p": [0.1, 0.3]}, [("renyi_capacity", {"alpha": [0.5, 2.0, math.inf]})]
    )
    assert table["alpha"].tolist() == [0.5, 2.0, math.inf] * 2
    for p in (0.1, 0.3):  # C_∞ of a BSC = log Σ_y max_x W = log(2(1 − p))
        inf_row = table[(table["p"] == p) & (table["alpha"] == math.inf)].iloc[0]
        assert inf_row["lower"] <= math.log(2 * (1 - p)) * (1 + 1e-12)
        assert math.log(2 * (1 - p)) <= inf_row["upper"] * (1 + 1e-12)


def test_explicit_list_of_points() -> None:
    points = [{"k": 2, "eps": 1.0}, {"k": 4, "eps": 0.5}]
    table = _quiet(randomized_response, points, "dp_epsilon")
    assert table[["k", "eps"]].values.tolist() == [[2, 1.0], [4, 0.5]]
    assert table["value"].tolist() == pytest.approx([1.0, 0.5], rel=1e-12)


@pytest.mark.parametrize(
    ("family", "grid", "queries", "match"),
    [
        ("no_such_mechanism", {"k": [2]}, "capacity", "unknown mechanism"),
        (42, {"k": [2]}, "capacity", "family must be"),
        ("randomized_response", {"k": [2], "eps": [1.0]}, "no_such_query", "unknown query"),
        ("randomized_response", {"k": [2], "epsilon": [1.0]}, "capacity", "no parameter 'epsilon'"),
        ("randomized_response", {"k": [2]}, "capacity", "needs eps"),
        ("randomized_response", {}, "capacity", "at least one parameter"),
        ("randomized_response", {"k": [], "eps": [1.0]}, "capacity", "at least one value"),
        ("randomized_response", [], "capacity", "at least one point"),
        ("randomized_response", {"k": [2], "eps": [math.nan]}, "capacity", "NaN"),
        ("randomized_response", {"k": [2], "eps": [1j]}, "capacity", "number, a boolean"),
        ("randomized_response", {"k": [2], "eps": [1.0]}, [("renyi_capacity", {})], "needs"),
        ("randomized_response", {"k": [2], "eps": [1.0]}, [("renyi_dp", {"alpha": -1})], "alpha"),
        ("randomized_response", {"k": [2], "eps": [1.0]}, [("dp_delta", {"eps": "x"})], "eps"),
        ("randomized_response", {"k": [2], "eps": [1.0]}, [("capacity", {"beta": 1})], "beta"),
        ("randomized_response", {"k": [2], "eps": [1.0]}, [], "at least one query"),
        ("randomized_response", [{"k": 2, "eps": 1.0}, {"k": 3}], "capacity", "same parameters"),
    ],
)
def test_invalid_specs_are_refused_before_anything_runs(
    family: Any, grid: Any, queries: Any, match: str
) -> None:
    with pytest.raises(ParameterError, match=match):
        _quiet(family, grid, queries)


def test_invalid_options() -> None:
    for kwargs, match in [
        ({"executor": "threads"}, "executor"),
        ({"executor": "serial", "scheduler": "tcp://x:1"}, "scheduler"),
        ({"chunk_size": 0}, "chunk_size"),
        ({"workers": 0}, "workers"),
        ({"tol": -1.0}, "tol"),
        ({"unit": "hartleys"}, "unit"),
        ({"retries": -1}, "retries"),
    ]:
        with pytest.raises(ParameterError, match=match):
            _quiet("randomized_response", {"k": [2], "eps": [1.0]}, "capacity", **kwargs)
    with pytest.raises(ParameterError, match="worker processes"):
        _quiet(lambda k: randomized_response(k, 1.0), {"k": [2]}, "capacity", executor="processes")


def test_units_reach_every_query_that_takes_them() -> None:
    table = _quiet("binary_symmetric", {"p": [0.11]}, ["capacity", "dp_epsilon"], unit="bits")
    cap, eps = table.iloc[0], table.iloc[1]
    h = -(0.11 * math.log2(0.11) + 0.89 * math.log2(0.89))
    assert cap["unit"] == "bits"
    assert cap["lower"] <= 1 - h + 1e-12 <= cap["upper"] + 2e-12
    assert eps["unit"] == "nats"  # ε is a natural-log ratio whatever the information unit
