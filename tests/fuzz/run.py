"""Run the fuzz profile: every group of ``tests/fuzz`` in its own pytest process, two at a time.

Used by ``make fuzz``. Each group (``test_fuzz_<group>.py``) runs under ``DPCAP_FUZZ=1`` with
BLAS limited to one thread, ``-j`` groups at once (default 2, one per core); the longest groups
start first. At the end the examples run per group are printed (from the counts each process
writes, see ``conftest.py``), with the wall time; the exit status is non-zero if a group failed
or ran fewer than ``TARGET_PER_GROUP`` examples.

    python tests/fuzz/run.py [-j N] [GROUP ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

#: Longest first (measured), so that two workers finish together; unknown groups go last.
ORDER = (
    "stores",
    "renyi",
    "cli_readers",
    "capacity",
    "calibrate",
    "qif",
    "distortion",
    "midp",
    "measures",
    "mechanisms",
    "sweep_specs",
    "funnel",
    "dp_metrics",
    "malformed",
)


def main() -> int:
    sys.path.insert(0, str(HERE))
    from _harness import TARGET_PER_GROUP  # the same target as the conftest's summary

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("groups", nargs="*")
    options = parser.parse_args()
    found = {p.stem.removeprefix("test_fuzz_"): p for p in sorted(HERE.glob("test_fuzz_*.py"))}
    groups = options.groups or sorted(found, key=lambda g: ((*ORDER, g)).index(g))
    env = {
        **os.environ,
        "DPCAP_FUZZ": "1",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        pending = list(groups)
        running: dict[str, tuple[subprocess.Popen[bytes], Path, float]] = {}
        results: dict[str, tuple[int, float, float, str]] = {}
        while pending or running:
            while pending and len(running) < options.jobs:
                group = pending.pop(0)
                report = Path(tmp) / f"{group}.json"
                log = Path(tmp) / f"{group}.log"
                command = [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--no-header",
                    str(found[group].relative_to(ROOT)),
                ]
                with log.open("wb") as out:
                    proc = subprocess.Popen(
                        command,
                        cwd=ROOT,
                        env={**env, "DPCAP_FUZZ_REPORT": str(report)},
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                running[group] = (proc, log, time.perf_counter())
                print(f"[fuzz] {group}: started", flush=True)
            time.sleep(0.5)
            for group, (proc, log, began) in list(running.items()):
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid == 0:
                    continue
                del running[group]
                code = os.waitstatus_to_exitcode(status)
                proc.returncode = code
                text = log.read_text(errors="replace")
                cpu = usage.ru_utime + usage.ru_stime
                results[group] = (code, time.perf_counter() - began, cpu, text)
                tail = [line for line in text.splitlines() if line.strip()][-1:]
                print(f"[fuzz] {group}: exit {code} in {results[group][1]:.0f} s "
                      f"({cpu:.0f} s CPU)  {tail[0] if tail else ''}", flush=True)  # fmt: skip
                if code not in (0, 5):
                    print(text, flush=True)
        counts = {}
        for group in groups:
            report = Path(tmp) / f"{group}.json"
            if report.exists():
                counts.update(json.loads(report.read_text()))
    wall = time.perf_counter() - start
    print("\n[fuzz] examples run per group (fuzz profile)")
    bad = False
    for group in groups:
        per_test = counts.get(group, {})
        total = sum(per_test.values())
        code, seconds, cpu, _ = results[group]
        low = total < TARGET_PER_GROUP
        bad |= low or code != 0
        flag = "FAILED" if code != 0 else ("BELOW TARGET" if low else "ok")
        print(f"  {group:<12} {total:>8} examples  {seconds:>6.0f} s  {cpu:>6.0f} s CPU  {flag}")
        for name, n in sorted(per_test.items()):
            print(f"      {name:<58} {n:>7}")
    total = sum(sum(c.values()) for c in counts.values())
    cpu = sum(r[2] for r in results.values())
    print(
        f"  {'total':<12} {total:>8} examples  {wall:>6.0f} s wall  {cpu:>6.0f} s CPU  "
        f"({options.jobs} workers)"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
