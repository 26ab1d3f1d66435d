"""Sweeps at their edges: what a demanding user or an attacker feeds them (one test each).

Every case here was a silent wrong row, a lost grid point or a traceback from deep inside
pandas or pyarrow before it was handled; the assertion is the behaviour the docs promise.
"""

from __future__ import annotations

import functools
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpcap
from dpcap import ParameterError
from dpcap.mechanisms import one_time_pad, randomized_response

sys.path.insert(0, str(Path(__file__).parent))
import sweep_families


def _quiet(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return dpcap.sweep(*args, progress=False, **kwargs)


@pytest.mark.parametrize(
    ("grid", "match"),
    [
        ({"k": [2], "eps": [0.5, 1.0, 0.5]}, "twice"),
        ({"k": [2], "eps": [0.0, -0.0]}, "twice"),
        ({"k": [2, 2.0], "eps": [1.0]}, "twice"),
        ({"k": [2, "3"], "eps": [1.0]}, "mixes"),
        ({"k": [True, 2], "eps": [1.0]}, "mixes"),
        ({"k": [2, 2**64], "eps": [1.0]}, "64-bit"),
        ({"k": [2], "eps": [1.0], "_q": [1]}, "columns of the sweep table"),
        ({"k": [2], "eps": [1.0], "query_eps": [1.0]}, "columns of the sweep table"),
        ({1: [2], "eps": [1.0]}, "non-empty strings"),
        ({"k": np.array(2), "eps": [1.0]}, None),  # a 0-d array is one value: allowed
    ],
)
def test_grid_values_that_would_lose_or_merge_points(grid: Any, match: str | None) -> None:
    if match is None:
        assert len(_quiet("randomized_response", grid, "dp_epsilon")) == 1
        return
    with pytest.raises(ParameterError, match=match):
        _quiet("randomized_response", grid, "dp_epsilon")


def test_grid_values_as_pandas_and_generators() -> None:
    grid = {"k": pd.Series([2, 3]), "eps": (e for e in (0.5, 1.0))}
    table = _quiet("randomized_response", grid, "dp_epsilon")
    assert table[["k", "eps"]].values.tolist() == [[2, 0.5], [2, 1.0], [3, 0.5], [3, 1.0]]


def test_resume_tells_int_float_and_bool_apart(tmp_path: Path) -> None:
    store = tmp_path / "s"
    _quiet("randomized_response", {"k": [2], "eps": [1, 2]}, "dp_epsilon", store=store)
    with pytest.raises(ParameterError, match="differs in: grid"):
        _quiet("randomized_response", {"k": [2], "eps": [1.0, 2.0]}, "dp_epsilon", store=store)


def test_families_without_a_recordable_name(tmp_path: Path) -> None:
    two = functools.partial(randomized_response, 2)
    five = functools.partial(randomized_response, 5)
    _quiet(two, {"eps": [1.0]}, "capacity", store=tmp_path / "p")
    with pytest.raises(ParameterError, match="differs in: family"):
        _quiet(five, {"eps": [1.0]}, "capacity", store=tmp_path / "p")
    with pytest.raises(ParameterError, match="lambda or a local function"):
        _quiet(
            lambda eps: randomized_response(2, eps),
            {"eps": [1.0]},
            "capacity",
            store=tmp_path / "l",
        )


def test_one_writer_at_a_time_and_stale_locks(tmp_path: Path) -> None:
    store = tmp_path / "s"
    args = ("randomized_response", {"k": [2], "eps": [1.0]}, "dp_epsilon")
    _quiet(*args, store=store)
    (store / "_lock").write_text(str(os.getppid()))  # a live process holds it
    with pytest.raises(ParameterError, match="being written by process"):
        _quiet(*args, store=store)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    (store / "_lock").write_text(gone.stdout.strip())  # left by a process that has ended
    assert len(_quiet(*args, store=store)) == 1
    assert not (store / "_lock").exists()


def test_capacity_after_midp_on_database_mechanisms() -> None:
    table = _quiet("one_time_pad", {"m": [2, 3]}, ["midp", "capacity"])
    assert (table["status"] == "converged").all()
    for m in (2, 3):
        cap = table[(table["m"] == m) & (table["query"] == "capacity")].iloc[0]
        direct = dpcap.capacity(one_time_pad(m))
        assert (cap["lower"], cap["upper"]) == (direct.lower, direct.upper)


def test_a_non_channel_fails_its_own_row_only() -> None:
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
        table = _quiet(
            sweep_families.ragged_or_rr, {"kind": ["ok", "ragged"]}, "capacity", chunk_size=2
        )
    status = dict(zip(table["kind"], table["status"], strict=True))
    assert status == {"ok": "converged", "ragged": "failed"}


def test_system_exit_in_a_family_is_a_failed_row() -> None:
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
        table = _quiet(sweep_families.exits, {"k": [2, 3, 4]}, "dp_epsilon")
    assert table["status"].tolist() == ["converged", "failed", "converged"]
    assert "SystemExit" in table["message"][1]


@pytest.mark.parametrize(
    ("queries", "match"),
    [
        ([("dp_epsilon", {"neighbors": ["all", "line"]})], "one value in a sweep"),
        (["capacity", "capacity"], "asked twice"),
        ([("dp_epsilon", {"neighbors": "bogus"})], "neighbors"),
    ],
)
def test_query_specs_refused_up_front(queries: Any, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        _quiet("randomized_response", {"k": [2], "eps": [1.0]}, queries)


def test_query_spec_shorthands() -> None:
    grid = {"k": [2], "eps": [1.0]}
    assert _quiet("randomized_response", grid, {"capacity": None})["query"].tolist() == ["capacity"]
    table = _quiet("randomized_response", grid, ("renyi_dp", {"alpha": 2}))
    assert table["alpha"].tolist() == [2.0]


def test_options_of_numpy_types_and_bad_store_paths(tmp_path: Path) -> None:
    table = _quiet(
        "randomized_response", {"k": [2], "eps": [1.0]}, "capacity",
        store=tmp_path / "s", max_iter=np.int64(500), tol=np.float64(1e-9),
    )  # fmt: skip
    assert table["status"].tolist() == ["converged"]
    with pytest.raises(ParameterError, match="empty"):
        _quiet("randomized_response", {"k": [2], "eps": [1.0]}, "capacity", store="")
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(ParameterError, match=r"not a directory|cannot create"):
        _quiet("randomized_response", {"k": [2], "eps": [1.0]}, "capacity", store=afile / "s")


def test_store_reads_as_a_parquet_dataset_and_reports_damage(tmp_path: Path) -> None:
    store = tmp_path / "s"
    table = _quiet(
        "randomized_response", {"k": [2, 3], "eps": [1.0]}, "dp_epsilon", store=store, chunk_size=1
    )
    rows = pd.read_parquet(store)  # _spec.json and _lock are skipped by Parquet readers
    assert sorted(rows["point"]) == [0, 1]
    part = sorted(store.glob("part-*.parquet"))[0]
    part.write_bytes(b"not parquet")
    with pytest.raises(ParameterError, match=f"part {part.name} is unreadable"):
        dpcap.load_sweep(store)
    part.unlink()
    again = _quiet("randomized_response", {"k": [2, 3], "eps": [1.0]}, "dp_epsilon", store=store)
    pd.testing.assert_frame_equal(again.drop(columns="seconds"), table.drop(columns="seconds"))
    (store / "_spec.json").write_text("[1, 2]")
    with pytest.raises(ParameterError, match="not a sweep spec"):
        dpcap.load_sweep(store)


def test_interrupt_survives_pickling() -> None:
    exc = dpcap.SweepInterrupted(3, 10, "/tmp/x")
    back = pickle.loads(pickle.dumps(exc))
    assert (back.done, back.total, back.store) == (3, 10, "/tmp/x")
    assert isinstance(back, KeyboardInterrupt)


@pytest.mark.slow
def test_a_dying_point_fails_alone_and_is_retried_on_resume(tmp_path: Path) -> None:
    store = tmp_path / "s"
    grid = {"k": [2, 3, 4], "eps": [1.0]}
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
        table = _quiet(
            sweep_families.crash_at, grid, "dp_epsilon", executor="processes", workers=2,
            chunk_size=3, retries=0, store=store,
        )  # fmt: skip
    assert table["status"].tolist() == ["converged", "failed", "converged"]
    assert "not stored" in table["message"][1]
    assert math.isnan(table["value"][1])
    assert sorted(dpcap.load_sweep(store)["k"]) == [2, 4]  # the failed point is not stored
