"""Shared machinery of the fuzz suite: the active Hypothesis profile and the example counts.

Each test module ``test_fuzz_<group>.py`` is one group of public functions. A property is
declared with :func:`fuzz`, which gives it its budget of examples in each profile and counts
the examples it actually runs, per group and per test; ``conftest.py`` prints the counts.

Profiles (registered by ``conftest.py``):

``quick``
    The default, used by ``make test``/``pytest``: a few examples per property, derandomised
    (a fixed sequence, so the suite is reproducible), the whole folder in well under a minute.
``fuzz``
    Selected by ``DPCAP_FUZZ=1`` (``make fuzz``): the budgets below, random seeds, no deadline;
    each group runs at least 10,000 examples.

The profiles are applied to each property through :func:`fuzz`, not loaded globally, so the
rest of the test suite keeps Hypothesis's defaults.
"""

from __future__ import annotations

import collections
import functools
import os
from collections.abc import Callable
from typing import Any

from hypothesis import Phase, settings
from hypothesis.errors import UnsatisfiedAssumption

#: Whether the long profile is active (``DPCAP_FUZZ`` set to anything but "" or "0").
FUZZ = os.environ.get("DPCAP_FUZZ", "").strip() not in ("", "0")

#: The Hypothesis profile every property of the folder runs under.
PROFILE = "fuzz" if FUZZ else "quick"

#: Multiplies every fuzz budget (``DPCAP_FUZZ_SCALE=0.1`` for a shorter run while developing).
SCALE = float(os.environ.get("DPCAP_FUZZ_SCALE", "1") or 1)

#: Least number of examples each group must run under the fuzz profile.
TARGET_PER_GROUP = 10_000

#: Examples run, per group and per test (``COUNTS[group][test]``), in this process.
COUNTS: collections.defaultdict[str, collections.Counter[str]] = collections.defaultdict(
    collections.Counter
)


def group_of(module: str) -> str:
    """The group a test module belongs to: ``test_fuzz_capacity`` -> ``capacity``."""
    return module.rsplit(".", 1)[-1].removeprefix("test_fuzz_")


def fuzz(examples: int, quick: int = 4, *, gap: bool = False) -> Callable[[Any], Any]:
    """Budget a ``@given`` property (``examples`` under the fuzz profile, ``quick`` otherwise)
    and count the examples it runs (examples rejected by ``assume`` are not counted).

    ``gap`` marks a property of a known open gap (``xfail``): under the quick profile its
    failing example is not shrunk, which would only spend the suite's time.

    Put it above ``@given``.
    """

    def decorate(test: Any) -> Any:
        handle = test.hypothesis
        inner = handle.inner_test
        group, name = group_of(test.__module__), test.__name__

        @functools.wraps(inner)
        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                result = inner(*args, **kwargs)
            except UnsatisfiedAssumption:
                raise
            except BaseException:
                COUNTS[group][name] += 1
                raise
            COUNTS[group][name] += 1
            return result

        handle.inner_test = counted
        budget = max(1, round(examples * SCALE)) if FUZZ else quick
        profile = settings.get_profile(PROFILE)
        if gap and not FUZZ:
            phases = [p for p in profile.phases if p is not Phase.shrink]
            profile = settings(profile, phases=phases)
        return settings(profile, max_examples=budget)(test)

    return decorate
