"""Run every benchmark (``make bench``): timings and ratios against the peers, one process.

Benchmarks are opt-in and never part of the test suite: machines are shared and noisy, so
numbers are printed, not asserted.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bench_capacity
import bench_delta
import bench_funnel
import bench_lp
import bench_midp
import bench_privacy_scale
import bench_renyi
import bench_sweep
import bench_threads

if __name__ == "__main__":
    bench_delta.main()
    print()
    bench_capacity.main()
    bench_midp.main()
    bench_renyi.main()
    bench_lp.main()
    bench_funnel.main()
    bench_privacy_scale.main()
    print()
    bench_threads.main()
    print()
    bench_sweep.main()
