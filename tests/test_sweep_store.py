"""Sweeps that outlive their process: the Parquet store, resume, executors, a killed sweep.

Properties checked: a finished store read back equals the table the sweep returned; a second
call computes nothing (every instance build is counted through a log); a sweep killed with
SIGKILL halfway resumes to the table of an uninterrupted sweep, computing only the points
missing from the store; a store of another spec is refused, naming what differs; worker
processes and a Dask LocalCluster give the serial table; a chunk whose worker dies becomes rows
with status ``failed`` while the other chunks complete.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import dpcap
from dpcap import ParameterError

sys.path.insert(0, str(Path(__file__).parent))
import sweep_families

GRID = {"k": [2, 3, 4, 5, 6, 7], "eps": [0.5, 1.0, 2.0]}
QUERIES = ["capacity", "dp_epsilon", ("dp_delta", {"eps": [0.0, 0.25]})]


def _quiet(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return dpcap.sweep(*args, progress=False, **kwargs)


def _timeless(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=["seconds"])


def _log(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    monkeypatch.setenv(sweep_families.LOG, str(path))
    return path


def _built(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_store_round_trip_and_resume_computes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _log(monkeypatch, tmp_path / "built.log")
    store = tmp_path / "store"
    first = _quiet(sweep_families.logged_rr, GRID, QUERIES, store=store, chunk_size=4)
    assert len(_built(log)) == 18
    assert len(list(store.glob("part-*.parquet"))) == 5  # 18 points in chunks of 4
    pd.testing.assert_frame_equal(first, dpcap.load_sweep(store))
    again = _quiet(sweep_families.logged_rr, GRID, QUERIES, store=store, chunk_size=7)
    assert len(_built(log)) == 18  # nothing built the second time, whatever the chunking
    pd.testing.assert_frame_equal(first, again)
    memory = _quiet(sweep_families.logged_rr, GRID, QUERIES)
    pd.testing.assert_frame_equal(_timeless(first), _timeless(memory))


def test_changed_spec_refuses_to_resume(tmp_path: Path) -> None:
    store = tmp_path / "store"
    _quiet("randomized_response", GRID, QUERIES, store=store)
    changes: list[tuple[dict[str, Any], str]] = [
        ({"grid": {"k": [2, 3], "eps": [0.5, 1.0, 2.0]}}, "grid.product"),
        ({"queries": ["capacity"]}, "queries"),
        ({"tol": 1e-6}, "options.tol"),
        ({"family": "binary_symmetric", "grid": {"p": [0.1]}}, "family"),
    ]
    for change, what in changes:
        args = {"family": "randomized_response", "grid": GRID, "queries": QUERIES} | change
        with pytest.raises(ParameterError, match=f"differs in: .*{what}"):
            _quiet(args.pop("family"), args.pop("grid"), args.pop("queries"), store=store, **args)
    other = tmp_path / "not_a_store"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ParameterError, match="non-empty directory"):
        _quiet("randomized_response", GRID, QUERIES, store=other)
    with pytest.raises(ParameterError, match="not a sweep store"):
        dpcap.load_sweep(other)


def test_partial_store_resumes_only_the_missing_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    _quiet(sweep_families.logged_rr, GRID, QUERIES, store=store, chunk_size=3)
    parts = sorted(store.glob("part-*.parquet"))
    for part in parts[::2]:  # as if the sweep had stopped before these chunks were stored
        part.unlink()
    kept = set(dpcap.load_sweep(store)["point"])
    log = _log(monkeypatch, tmp_path / "built.log")
    table = _quiet(sweep_families.logged_rr, GRID, QUERIES, store=store, chunk_size=3)
    assert len(_built(log)) == 18 - len(kept)
    assert sorted(set(table["point"])) == list(range(18))


def test_sigkill_halfway_then_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, first_log = tmp_path / "store", tmp_path / "first.log"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import dpcap, sweep_families
        dpcap.sweep(sweep_families.logged_rr, {GRID!r}, {QUERIES!r}, store={str(store)!r},
                    chunk_size=2, progress=False)
        """
    )
    env = os.environ | {
        sweep_families.LOG: str(first_log),
        "DPCAP_SWEEP_SLEEP": "0.15",
        "PYTHONPATH": str(Path(__file__).parents[1]),
    }
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 120
    while len(list(store.glob("part-*.parquet"))) < 3 and time.monotonic() < deadline:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = dpcap.load_sweep(store)  # what the killed sweep left
    stored = set(before["point"])
    stored_params = {(str(r.k), repr(float(r.eps))) for r in before.itertuples()}
    assert 6 <= len(stored) < 18  # killed halfway: some chunks on disk, not all
    assert not list(store.glob(".*.tmp"))  # no half-written part left behind
    second_log = _log(monkeypatch, tmp_path / "second.log")
    table = _quiet(sweep_families.logged_rr, GRID, QUERIES, store=store, chunk_size=2)
    rebuilt = {tuple(line.split(",")) for line in _built(second_log)}
    assert rebuilt.isdisjoint(stored_params)  # no stored chunk computed twice
    assert len(_built(second_log)) == 18 - len(stored)
    fresh = _quiet(sweep_families.logged_rr, GRID, QUERIES)
    pd.testing.assert_frame_equal(_timeless(table), _timeless(fresh))


@pytest.mark.slow
def test_processes_give_the_serial_table() -> None:
    serial = _quiet(
        "truncated_geometric", {"n": [2, 6, 11], "eps": [0.3, 1.5]}, ["capacity", "midp"]
    )
    parallel = _quiet(
        "truncated_geometric",
        {"n": [2, 6, 11], "eps": [0.3, 1.5]},
        ["capacity", "midp"],
        executor="processes",
        workers=2,
        chunk_size=1,
    )
    pd.testing.assert_frame_equal(_timeless(serial), _timeless(parallel))


@pytest.mark.slow
def test_a_dying_worker_fails_its_chunk_only() -> None:
    grid = {"k": [2, 3, 4], "eps": [1.0]}
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 2"):
        table = _quiet(
            sweep_families.crash_at,
            grid,
            ["capacity", "dp_epsilon"],
            executor="processes",
            workers=2,
            chunk_size=1,
            retries=1,
        )
    status = table.set_index(["k", "query"])["status"]
    assert status[(3, "capacity")] == status[(3, "dp_epsilon")] == "failed"
    assert "attempts" in table.set_index(["k", "query"]).loc[(3, "capacity"), "message"]
    for k in (2, 4):
        assert status[(k, "capacity")] == status[(k, "dp_epsilon")] == "converged"


@pytest.mark.slow
def test_dask_local_cluster_gives_the_serial_table(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    serial = _quiet("randomized_response", GRID, QUERIES)
    store = tmp_path / "store"
    dask = _quiet("randomized_response", GRID, QUERIES, executor="dask", workers=2, store=store)
    pd.testing.assert_frame_equal(_timeless(serial), _timeless(dask))
    pd.testing.assert_frame_equal(dask, dpcap.load_sweep(store))
