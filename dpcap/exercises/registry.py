"""The exercise families and :func:`make`, which draws one student's variant of one family.

A family is a topic of the standard course on information-theoretic privacy with a draw
function ``(generator, level) -> Exercise``. :func:`make` seeds the generator from SHA-256 of
(course, assignment, student) (:mod:`dpcap.exercises.seeding`) and redraws, from the same
stream, any variant that :meth:`~dpcap.exercises.Exercise.problems` finds degenerate (a
reference whose bracket did not close, a mistake the check could not tell from the key), so a
variant is a deterministic function of its key.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpcap.errors import ConvergenceWarning, DpcapError, ParameterError
from dpcap.exercises import _channels, _leakage, _privacy, _tradeoffs
from dpcap.exercises.core import LEVELS, Exercise
from dpcap.exercises.core import level as check_level
from dpcap.exercises.seeding import variant_digest, variant_rng

__all__ = ["FAMILIES", "Family", "make", "names"]

#: Redraws allowed before a family is reported as unable to produce a sound variant.
MAX_DRAWS = 50


@dataclass(frozen=True)
class Family:
    """An exercise family: its name, title, topic, levels, answer kind and draw function."""

    name: str
    title: str
    topic: str
    levels: tuple[str, ...]
    answer_kind: str
    draw: Callable[[np.random.Generator, str], Exercise]


def _family(
    draw: Callable[[np.random.Generator, str], Exercise],
    title: str,
    topic: str,
    answer_kind: str = "number",
    levels: tuple[str, ...] = LEVELS,
) -> Family:
    return Family(draw.__name__, title, topic, levels, answer_kind, draw)


#: Every family, in the order of the course.
FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        _family(_privacy.forced_response, "The channel of a forced-response survey",
                "channels", "matrix"),
        _family(_privacy.rr_delta, "Randomized response and its δ(ε)", "differential privacy"),
        _family(_privacy.geometric_epsilon, "ε of geometric noise under the right neighbour "
                "relation", "differential privacy"),
        _family(_leakage.min_entropy, "Min-entropy leakage at a prior", "quantitative "
                "information flow"),
        _family(_leakage.maximal_leakage, "Maximal leakage", "quantitative information flow"),
        _family(_leakage.g_leakage, "g-leakage with a given gain", "quantitative information "
                "flow"),
        _family(_channels.binary_capacity, "Capacity of the BSC, BEC and Z channels",
                "channel capacity"),
        _family(_channels.capacity_prior, "A capacity-achieving prior", "channel capacity",
                "prior"),
        _family(_channels.midp_count, "MI-DP of a noisy count (Cuff & Yu)",
                "mutual-information DP"),
        _family(_channels.sandwich, "The Cuff–Yu sandwich", "mutual-information DP"),
        _family(_channels.renyi, "Rényi capacity and its radius/diameter bounds",
                "Rényi information"),
        _family(_tradeoffs.rate_distortion, "Risk–distortion R(D) (Mir)", "trade-offs"),
        _family(_tradeoffs.privacy_distortion, "Privacy–distortion ε*(D) (Wang–Ying–Zhang)",
                "trade-offs"),
        _family(_privacy.composition, "k-fold composition of randomized response",
                "composition"),
        _family(_tradeoffs.privacy_funnel, "The privacy funnel of a small joint law",
                "trade-offs", levels=("with_dpcap",)),
    )
}  # fmt: skip


def names() -> list[str]:
    """The families' names, in the order of the course."""
    return list(FAMILIES)


def family(name: Any) -> Family:
    """The family called ``name`` (ParameterError naming ``family`` and the value)."""
    if not isinstance(name, str) or name not in FAMILIES:
        raise ParameterError(f"family must be one of {', '.join(FAMILIES)}, got {name!r}")
    return FAMILIES[name]


def make(
    name: str,
    /,
    *,
    level: str = "by_hand",
    course: Any = "dpcap",
    assignment: Any = "",
    student: Any = "",
) -> Exercise:
    """One student's variant of the family ``name``.

    Parameters
    ----------
    name : str
        A family (:func:`names`).
    level : {"by_hand", "with_dpcap"}
        Pen and paper (small data, values like ``ln 3``), or sizes that need dpcap.
    course, assignment, student : str or int
        The variant's key: the same key gives the same exercise in every process, on every
        machine, whatever ``PYTHONHASHSEED`` says.

    Returns
    -------
    Exercise
        With its reference answer (certified bracket, unit) and its check.

    Raises
    ------
    ParameterError
        For an unknown family or level, or a key that is not a string or an integer.
    DpcapError
        If no sound variant was drawn in :data:`MAX_DRAWS` tries (never seen in practice).

    Examples
    --------
    >>> from dpcap.exercises import make
    >>> ex = make("rr_delta", course="IT privacy", assignment="sheet 1", student="s001")
    >>> ex.check(...).message[:13]
    'No answer yet'
    >>> bool(ex.check(ex.reference.value))
    True
    """
    fam = family(name)
    lvl = level_of(fam, level)
    digest = variant_digest(course, assignment, student, fam.name, lvl)
    rng = variant_rng(course, assignment, student, fam.name, lvl)
    found: list[str] = []
    for _ in range(MAX_DRAWS):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            try:
                exercise = fam.draw(rng, lvl)
            except ConvergenceWarning as exc:
                found = [f"the reference did not converge: {exc}"]
                continue
        found = exercise.problems()
        if not found:
            return replace(exercise, variant=digest)
    raise DpcapError(
        f"family {fam.name!r} drew no sound variant in {MAX_DRAWS} tries: {'; '.join(found)}"
    )


def level_of(fam: Family, value: Any) -> str:
    """The validated level of ``fam``."""
    return check_level(value, fam.levels, fam.name)
