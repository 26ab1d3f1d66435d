"""Hypothesis profiles of the fuzz suite and the per-group count of examples run.

``quick`` (default) and ``fuzz`` (``DPCAP_FUZZ=1``, used by ``make fuzz``); see ``_harness``.
With ``DPCAP_FUZZ_REPORT=FILE`` the counts are also written to FILE as JSON (the runner
``run.py`` merges the files of its worker processes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import mpmath
import pytest
from _harness import COUNTS, FUZZ, PROFILE, TARGET_PER_GROUP
from hypothesis import HealthCheck, Phase, settings

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "quick",
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=_SLOW_IS_FINE,
)
settings.register_profile(
    "fuzz",
    max_examples=TARGET_PER_GROUP,
    deadline=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=_SLOW_IS_FINE,
    # no explain phase: it re-runs failing examples many times, which a long run cannot afford
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    """The references evaluate in mpmath at 40 digits, whatever other modules set globally."""
    with mpmath.workdps(40):
        yield


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COUNTS:
        return
    total = sum(sum(c.values()) for c in COUNTS.values())
    write = terminalreporter.write_line
    if not FUZZ:
        write(f"dpcap fuzz ({PROFILE} profile): {total} examples in {len(COUNTS)} groups")
    else:
        terminalreporter.section(f"dpcap fuzz: examples run ({PROFILE} profile)")
        for group in sorted(COUNTS):
            counts = COUNTS[group]
            mark = "" if sum(counts.values()) >= TARGET_PER_GROUP else "  (below target)"
            write(f"{group:<14} {sum(counts.values()):>8}{mark}")
            for name, n in sorted(counts.items()):
                write(f"    {name:<60} {n:>8}")
        write(f"{'total':<14} {total:>8}")
    report = os.environ.get("DPCAP_FUZZ_REPORT")
    if report:
        with open(report, "w", encoding="utf-8") as out:
            json.dump({g: dict(c) for g, c in COUNTS.items()}, out)
