"""Teaching: exercise families with per-student variants, checked answers and notebooks.

Each family of the standard course on information-theoretic privacy (randomized response,
geometric noise, leakages, capacities, MI-DP and the Cuff–Yu sandwich, Rényi capacity, R(D),
ε*(D), composition, the privacy funnel) draws exercises by :func:`make`: a prompt in Markdown
with LaTeX, the data, the reference answer computed by dpcap with its certified bracket and
unit, hints, a worked solution that uses dpcap, and :meth:`Exercise.check`, which accepts the
bracket widened by a stated tolerance and names the classic mistakes without revealing the key.

Variants are drawn from SHA-256 of (course, assignment, student) (:mod:`.seeding`); problem
sets become Jupyter notebooks with nbgrader metadata (:mod:`.notebooks`, needs ``nbformat``);
the documentation's course page is rendered from the same code (:mod:`.course`).

>>> from dpcap.exercises import make, names
>>> len(names()) >= 12
True
>>> ex = make("binary_capacity", course="demo", assignment="hw1", student="ada")
>>> ex.check(ex.reference.upper).correct
True
"""

from dpcap.exercises.core import (
    ANSWER_KINDS,
    LEVELS,
    Exercise,
    Feedback,
    Mistake,
    Reference,
)
from dpcap.exercises.registry import FAMILIES, Family, make, names
from dpcap.exercises.seeding import variant_digest, variant_rng

__all__ = [
    "ANSWER_KINDS",
    "FAMILIES",
    "LEVELS",
    "Exercise",
    "Family",
    "Feedback",
    "Mistake",
    "Reference",
    "make",
    "names",
    "variant_digest",
    "variant_rng",
]
