"""Run every benchmark (``make bench``): timings and ratios against the peers, one process.

Benchmarks are opt-in and never part of the test suite: machines are shared and noisy, so
numbers are printed, not asserted. The output is also written to ``docs/speed/bench_latest.txt``
with a header naming the machine: the speed page of the documentation includes that file, so
its tables come from a run, never typed by hand.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import platform
import sys
from pathlib import Path
from typing import TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bench_accounting
import bench_calibrate
import bench_capacity
import bench_capacity_cost
import bench_delta
import bench_dp_products
import bench_funnel
import bench_line_noise
import bench_lp
import bench_midp
import bench_privacy_scale
import bench_renyi
import bench_sweep
import bench_threads


class _Tee:
    """A stream that writes to the terminal and keeps a copy."""

    def __init__(self, terminal: TextIO, copy: io.StringIO) -> None:
        self.terminal, self.copy = terminal, copy

    def write(self, text: str) -> int:
        self.terminal.write(text)
        self.terminal.flush()
        return self.copy.write(text)

    def flush(self) -> None:
        self.terminal.flush()


def _header() -> str:
    import numpy
    import scipy

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"make bench, {when}\n"
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()}; "
        f"Python {platform.python_version()}, NumPy {numpy.__version__}, "
        f"SciPy {scipy.__version__}\n\n"
    )


def main() -> None:
    bench_delta.main()
    print()
    bench_capacity.main()
    print()
    bench_capacity_cost.main()
    print()
    bench_midp.main()
    bench_renyi.main()
    bench_lp.main()
    bench_funnel.main()
    bench_privacy_scale.main()
    bench_dp_products.main()
    print()
    bench_line_noise.main()
    print()
    bench_threads.main()
    print()
    bench_sweep.main()
    print()
    bench_calibrate.main()
    print()
    bench_accounting.main()


if __name__ == "__main__":
    target = Path(__file__).resolve().parents[2] / "docs" / "speed" / "bench_latest.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    copy = io.StringIO()
    with contextlib.redirect_stdout(_Tee(sys.stdout, copy)):
        print(_header(), end="")
        main()
    target.write_text(copy.getvalue())
    print(f"\n(written to {target})")
