"""A sweep store against what kills, races and odd files do to it (issue 27, items 5 to 10).

Properties checked: a ``_lock`` that is a symbolic link to ``/dev/zero`` or a FIFO is refused
without being read; a lock is created with its content in one step (threads starting at once:
one holder) and a lock without content is never taken over; a lock of another host, boot or
pid namespace is refused, naming its holder, unless ``break_lock``; a grid point stored twice
is read once if its rows agree and refused, naming points and parts, if they differ; a
transient failure (``MemoryError``, ``OSError``) is retried and never stored, a deterministic
one is stored; what a sweep killed while creating its store leaves behind is cleaned up; a
worker killed by SIGKILL fails its point alone; workers end with a parent killed by SIGKILL.

The families below are module-level: ``spawn`` workers import them from this module by name.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest

import dpcap
from dpcap import ParameterError, StoreWarning
from dpcap.cli import main as cli_main
from dpcap.mechanisms import randomized_response
from dpcap.study import _lock, _run, _store

ROOT = Path(__file__).parents[1]
GRID = {"k": [2, 3, 4], "eps": [1.0]}
POSIX = pytest.mark.skipif(os.name != "posix", reason="POSIX files and signals")
ONCE = "DPCAP_TEST_ONCE"  # marker file: the flaky family fails while it does not exist
RAISE = "DPCAP_TEST_RAISE"  # the exception the flaky family raises
STORE = "DPCAP_TEST_STORE"  # the store the SIGKILL family watches
PIDS = "DPCAP_TEST_PIDS"  # folder where the sleepy family writes its process id


def flaky(k: int, eps: float) -> Any:
    """Raises ``$DPCAP_TEST_RAISE`` at k == 3 the first time (then creates ``$DPCAP_TEST_ONCE``)."""
    marker = Path(os.environ[ONCE])
    if k == 3 and not marker.exists():
        marker.touch()
        raise {"MemoryError": MemoryError, "OSError": ConnectionResetError}[os.environ[RAISE]]()
    return randomized_response(k, eps)


def refused_at(k: int, eps: float) -> Any:
    """A deterministic failure at k == 3; every call logged in ``$DPCAP_TEST_ONCE``."""
    with open(os.environ[ONCE], "a") as handle:
        handle.write(f"{k}\n")
    if k == 3:
        raise ParameterError("k: 3 is refused by this family")
    return randomized_response(k, eps)


def sigkill_at(k: int, eps: float) -> Any:
    """At k == 3, once a part is in ``$DPCAP_TEST_STORE``: SIGKILL of this worker."""
    if k == 3:
        deadline = time.monotonic() + 60
        while not list(Path(os.environ[STORE]).glob("part-*.parquet")):
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)
    return randomized_response(k, eps)


def sleepy(k: int) -> Any:
    """Writes this worker's id in ``$DPCAP_TEST_PIDS``, then sleeps (up to two minutes)."""
    (Path(os.environ[PIDS]) / str(os.getpid())).touch()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(0.1)
    return randomized_response(k, 1.0)


def _quiet(*args: Any, **kwargs: Any) -> pd.DataFrame:
    return dpcap.sweep(*args, progress=False, **kwargs)


def _lock_json(**change: Any) -> str:
    """A lock as this version writes it, held by this very process, with ``change`` applied."""
    info = {
        "pid": os.getpid(),
        "start": _lock.start_time(os.getpid()),
        **_lock.identity(),
        "since": "2024-01-01T00:00:00+0000",
        "token": "0" * 32,
    }
    return json.dumps(info | change)


def _python(script: str, timeout: float, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ | {"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"} | env,
    )


# --- item 5: a lock that is not a regular file ---------------------------------------------


@POSIX
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_lock_that_is_a_link_to_dev_zero_or_a_fifo_is_refused_unread(tmp_path: Path) -> None:
    # In a child process whose memory is capped: reading /dev/zero whole would fill memory,
    # opening a FIFO would wait for a writer forever (the timeout ends that child).
    zero, fifo, broken = tmp_path / "zero", tmp_path / "fifo", tmp_path / "broken"
    for store in (zero, fifo, broken):
        store.mkdir()
    (zero / "_lock").symlink_to("/dev/zero")
    os.mkfifo(fifo / "_lock")
    os.mkfifo(broken / "_lock")
    script = f"""
        import resource
        import dpcap
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.RLIM_INFINITY))
        for store in ({str(zero)!r}, {str(fifo)!r}):
            try:
                dpcap.sweep("randomized_response", {{"k": [2], "eps": [1.0]}}, "dp_epsilon",
                            store=store, progress=False)
                print("taken")
            except dpcap.ParameterError as exc:
                print("refused:", exc)
        import warnings
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            table = dpcap.sweep("randomized_response", {{"k": [2], "eps": [1.0]}},
                                "dp_epsilon", store={str(broken)!r}, progress=False,
                                break_lock=True)
        print("broken:", len(table), [str(w.message) for w in seen])
    """
    out = _python(script, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("refused:")
    assert "symbolic link" in lines[0]
    assert lines[1].startswith("refused:")
    assert "FIFO" in lines[1]
    assert "break_lock=True" in lines[0]
    assert "--break-lock" in lines[1]
    assert lines[2].startswith("broken: 1")
    assert "broke its lock" in lines[2]
    assert (zero / "_lock").is_symlink()
    assert not (zero / "_spec.json").exists()
    assert not (broken / "_lock").exists()


def test_an_oversized_lock_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store.mkdir()
    (store / "_lock").write_text(" " * 5000)  # never read whole
    with pytest.raises(ParameterError, match="more than 4096 bytes"):
        _quiet("randomized_response", GRID, "dp_epsilon", store=store)


# --- item 6: the lock is created whole ------------------------------------------------------


def test_threads_starting_at_once_get_one_lock(tmp_path: Path) -> None:
    store, n = tmp_path / "s", 8
    spec = {"dpcap": "x", "family": "f", "grid": {"points": []}, "options": {}, "queries": []}
    barrier = threading.Barrier(n)
    held: list[_store.Store] = []
    refused: list[str] = []

    def start() -> None:
        barrier.wait()
        try:
            held.append(_store.Store(store, spec))
        except ParameterError as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=start) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(held) == 1, refused
        assert all("being written by process" in text for text in refused), refused
    finally:
        for box in held:
            box.release()
    assert not (store / "_lock").exists()
    assert sorted(p.name for p in store.iterdir()) == ["_spec.json"]


@pytest.mark.parametrize("content", ["", '{"pid": 12', "not a lock"])
def test_a_lock_without_a_holder_is_not_taken_over(tmp_path: Path, content: str) -> None:
    store = tmp_path / "s"
    store.mkdir()
    (store / "_lock").write_text(content)  # as seen between creating a lock and writing it
    with pytest.raises(ParameterError, match=r"names no holder.*break_lock=True"):
        _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    assert (store / "_lock").read_text() == content
    assert not (store / "_spec.json").exists()


# --- item 7: holders this process cannot see ------------------------------------------------


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"host": "elsewhere.example"}, "another host"),
        ({"boot": "00000000-0000-0000-0000-000000000000"}, "another boot"),
        ({"pidns": "pid:[1]"}, "another container"),
        ({"host": "elsewhere.example", "pid": 2**31 - 2}, "another host"),  # no such pid here
    ],
)
def test_a_lock_of_another_host_or_container_needs_break_lock(
    tmp_path: Path, change: dict[str, Any], where: str
) -> None:
    store = tmp_path / "s"
    _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    lock = _lock_json(**change)
    (store / "_lock").write_text(lock)
    pid = change.get("pid", os.getpid())
    with pytest.raises(ParameterError, match=rf"locked by process {pid} on host .*{where}") as e:
        _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    assert "break_lock=True" in str(e.value)
    assert "--break-lock" in str(e.value)
    assert (store / "_lock").read_text() == lock
    with pytest.warns(StoreWarning, match=f"broke the lock of process {pid}"):
        table = _quiet("randomized_response", GRID, "dp_epsilon", store=store, break_lock=True)
    assert len(table) == 3
    assert not (store / "_lock").exists()


def test_locks_of_this_machine_judged_by_pid_and_start_time(tmp_path: Path) -> None:
    store = tmp_path / "s"
    _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    (store / "_lock").write_text(_lock_json())  # this process, alive: refused
    with pytest.raises(ParameterError, match=f"being written by process {os.getpid()}"):
        _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    start = _lock.start_time(os.getpid())
    if start is not None:  # the same id, started at another time: a reused id, its holder dead
        (store / "_lock").write_text(_lock_json(start=start + 1))
        with pytest.warns(StoreWarning, match="which no longer runs"):
            assert len(_quiet("randomized_response", GRID, "dp_epsilon", store=store)) == 3
    with pytest.raises(ParameterError, match="break_lock must be True or False"):
        _quiet("randomized_response", GRID, "dp_epsilon", store=store, break_lock="yes")


def test_a_sweep_whose_lock_was_broken_stops_and_leaves_the_other_lock(tmp_path: Path) -> None:
    spec = {"dpcap": "x", "family": "f", "grid": {"points": []}, "options": {}, "queries": []}
    first = _store.Store(tmp_path / "s", spec)
    with pytest.warns(StoreWarning, match="broke the lock"):
        second = _store.Store(tmp_path / "s", spec, break_lock=True)
    frame = pd.DataFrame({"point": [0], "value": [1.0]})
    with pytest.raises(dpcap.DpcapError, match=r"lock .* was removed or taken by another sweep"):
        first.write(frame)
    first.release()  # not its lock any more: left alone
    assert (tmp_path / "s" / "_lock").exists()
    second.write(frame)
    second.release()
    assert not (tmp_path / "s" / "_lock").exists()


def test_the_cli_breaks_a_lock_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, store = tmp_path / "spec.toml", tmp_path / "store"
    spec.write_text(
        'family = "randomized_response"\nqueries = ["dp_epsilon"]\n[grid]\nk = [2]\neps = [1.0]\n'
    )
    store.mkdir()
    (store / "_lock").write_text("")
    argv = ["sweep", str(spec), "--store", str(store), "--no-progress"]
    assert cli_main(argv) != 0
    assert "--break-lock" in capsys.readouterr().err
    assert cli_main([*argv, "--break-lock"]) == 0
    assert len(dpcap.load_sweep(store)) == 1


# --- item 7: a point stored twice -----------------------------------------------------------


def test_a_point_stored_twice_is_read_once_or_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = tmp_path / "s"
    table = _quiet("randomized_response", GRID, ["dp_epsilon", "capacity"], store=store,
                   chunk_size=1)  # fmt: skip
    parts = sorted(store.glob("part-*.parquet"))
    shutil.copy(parts[0], store / "part-00000000-ffffffff.parquet")  # a copied part
    rows = pq.read_table(parts[1]).to_pandas()
    rows["seconds"] += 1.0  # the same point computed again by a second writer
    pq.write_table(pa.Table.from_pandas(rows), store / "part-00000001-ffffffff.parquet")
    with pytest.warns(StoreWarning, match=r"2 grid point\(s\) twice with equal rows \(point 0, 1;"):
        loaded = dpcap.load_sweep(store)
    pd.testing.assert_frame_equal(loaded, table)
    with pytest.warns(StoreWarning, match="twice with equal rows"):
        again = _quiet("randomized_response", GRID, ["dp_epsilon", "capacity"], store=store)
    pd.testing.assert_frame_equal(again, table)
    rows["value"] += 1e-3  # a second writer that got another value
    pq.write_table(pa.Table.from_pandas(rows), store / "part-00000001-ffffffff.parquet")
    with pytest.raises(ParameterError, match=r"twice with different rows \(point 1; parts") as e:
        dpcap.load_sweep(store)
    assert parts[1].name in str(e.value)
    assert "part-00000001-ffffffff.parquet" in str(e.value)


# --- item 8: transient failures are not final -----------------------------------------------


@pytest.mark.parametrize("error", ["MemoryError", "OSError"])
def test_a_transient_failure_is_never_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    monkeypatch.setenv(RAISE, error)
    monkeypatch.setenv(ONCE, str(tmp_path / "once"))
    store = tmp_path / "s"
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
        first = _quiet(flaky, GRID, "dp_epsilon", store=store, chunk_size=1, retries=0)
    assert first["status"].tolist() == ["converged", "failed", "converged"]
    assert "failed after 1 attempts" in first["message"][1]
    assert "not stored" in first["message"][1]
    assert sorted(dpcap.load_sweep(store)["k"]) == [2, 4]
    resumed = _quiet(flaky, GRID, "dp_epsilon", store=store, chunk_size=1, retries=0)
    assert (resumed["status"] == "converged").all()
    assert sorted(dpcap.load_sweep(store)["k"]) == [2, 3, 4]
    (tmp_path / "once").unlink()  # and retries=1 gets it in one run, in a chunk of three
    table = _quiet(flaky, GRID, "dp_epsilon", store=tmp_path / "t", chunk_size=3, retries=1)
    assert (table["status"] == "converged").all()


def test_a_deterministic_failure_is_stored_and_not_computed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "calls"
    monkeypatch.setenv(ONCE, str(log))
    store = tmp_path / "s"
    for _ in range(2):
        with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
            table = _quiet(refused_at, GRID, "dp_epsilon", store=store, chunk_size=1)
        assert table["status"].tolist() == ["converged", "failed", "converged"]
        assert "refused by this family" in table["message"][1]
    assert log.read_text().split() == ["2", "3", "4"]  # the second run computed nothing


# --- item 9: what a killed sweep leaves ------------------------------------------------------


@POSIX
def test_leftovers_of_a_sweep_killed_while_creating_its_store_are_removed(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s"
    script = f"""
        import os, signal
        import dpcap
        from dpcap.study import _store

        def killed(path, write):  # kill -9 while _spec.json is written
            write(path.with_name("." + path.name + ".1a2b3c4d.tmp"))
            os.kill(os.getpid(), signal.SIGKILL)

        _store._atomic_write = killed
        dpcap.sweep("randomized_response", {GRID!r}, "dp_epsilon", store={str(store)!r},
                    progress=False)
    """
    out = _python(script, timeout=120)
    assert out.returncode == -signal.SIGKILL, out.stderr
    assert (store / "_lock").exists()
    assert (store / "._spec.json.1a2b3c4d.tmp").exists()
    (store / ".part-00000000-0badf00d.parquet.deadbeef.tmp").write_bytes(b"PAR1")
    mine = store / ".notes.tmp"  # not a name dpcap writes: not removed
    mine.write_text("mine")
    taken = r"took over the lock of process \d+ on host .*; removed 2 temporary file\(s\)"
    with (
        pytest.warns(StoreWarning, match=taken),
        pytest.raises(ParameterError, match="non-empty directory"),
    ):
        _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    assert mine.read_text() == "mine"
    mine.unlink()
    table = _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    assert len(table) == 3
    assert sorted(p.name for p in store.iterdir() if p.name.startswith(".")) == []
    assert not (store / "_lock").exists()


@POSIX
def test_temporary_files_of_a_killed_sweep_are_removed_and_reported(tmp_path: Path) -> None:
    store = tmp_path / "s"
    _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    leftovers = [".part-00000001-0badf00d.parquet.deadbeef.tmp", "._spec.json.01234567.tmp"]
    for name in leftovers:
        (store / name).write_bytes(b"half")
    with pytest.warns(StoreWarning, match=r"removed 2 temporary file\(s\) left by a sweep"):
        _quiet("randomized_response", GRID, "dp_epsilon", store=store)
    assert not [p for p in store.iterdir() if p.name.startswith(".")]


# --- item 10: workers that die, parents that die --------------------------------------------


class _Pools(ProcessPoolExecutor):
    made: ClassVar[list[ProcessPoolExecutor]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _Pools.made.append(self)


@POSIX
@pytest.mark.slow
def test_a_worker_killed_by_sigkill_fails_its_point_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s"
    monkeypatch.setenv(STORE, str(store))
    monkeypatch.setattr(_run, "ProcessPoolExecutor", _Pools)
    _Pools.made = []
    write = _store.Store.write

    def slow_write(self: _store.Store, frame: pd.DataFrame) -> Path:
        # the first part written, wait until the worker that kills itself has broken the pool:
        # the sweep then meets the broken pool when it submits the next chunk, not in a wait
        path = write(self, frame)
        deadline = time.monotonic() + 60
        while not getattr(_Pools.made[0], "_broken", True) and time.monotonic() < deadline:
            time.sleep(0.01)
        return path

    monkeypatch.setattr(_store.Store, "write", slow_write)
    with pytest.warns(dpcap.ConvergenceWarning, match="failed: 1"):
        table = _quiet(sigkill_at, GRID, "dp_epsilon", executor="processes", workers=1,
                       chunk_size=1, retries=0, store=store)  # fmt: skip
    assert table["status"].tolist() == ["converged", "failed", "converged"]
    assert "BrokenProcessPool" in table["message"][1]
    assert "not stored" in table["message"][1]
    assert sorted(dpcap.load_sweep(store)["k"]) == [2, 4]


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_workers_end_with_a_parent_killed_by_sigkill(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    script = f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import dpcap, test_store_hardening as t
        dpcap.sweep(t.sleepy, {{"k": [2, 3, 4, 5]}}, "dp_epsilon", executor="processes",
                    workers=2, chunk_size=1, progress=False)
    """
    with open(tmp_path / "stderr", "w") as stderr:  # its resource tracker's complaints
        parent = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(script)],
            env=os.environ | {"PYTHONPATH": str(ROOT), PIDS: str(pids)},
            stderr=stderr,
        )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline:
            assert parent.poll() is None, "the sweep ended before its workers started"
            workers = [int(p.name) for p in pids.iterdir()]
            time.sleep(0.05)
        assert len(workers) == 2
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 30  # at once with prctl; the watching thread: ~1 s
        while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if _running(pid)]
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pid in workers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
