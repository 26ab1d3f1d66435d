"""Per-student variants: a generator seeded by SHA-256 of (course, assignment, student).

Python's ``hash()`` of a string changes with ``PYTHONHASHSEED`` and between processes; the
variant of a student must not. The key is the JSON text of
``[course, assignment, student, family, level]`` (UTF-8, no whitespace, so that no two keys
share a text), hashed with SHA-256; the first 16 bytes of the digest seed a PCG64 generator.
The family and level are part of the key so that the exercises of one sheet are drawn
independently of each other and of the order they appear in.

>>> len(variant_digest("IT-privacy 2026", "sheet 1", "s123", "binary_capacity", "by_hand"))
64
>>> a = variant_rng("course", "hw1", "alice", "rr_delta", "by_hand").random()
>>> a == variant_rng("course", "hw1", "alice", "rr_delta", "by_hand").random()
True
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from dpcap.errors import ParameterError

__all__ = ["variant_digest", "variant_rng"]


def _text(value: Any, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ParameterError(f"{name} must be a string (or an integer id), got {value!r}")
    return str(value)


def variant_digest(
    course: Any, assignment: Any, student: Any, family: str = "", level: str = ""
) -> str:
    """The SHA-256 hex digest of a variant's key (see the module's documentation)."""
    key = [
        _text(course, "course"),
        _text(assignment, "assignment"),
        _text(student, "student"),
        _text(family, "family"),
        _text(level, "level"),
    ]
    text = json.dumps(key, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def variant_rng(
    course: Any, assignment: Any, student: Any, family: str = "", level: str = ""
) -> np.random.Generator:
    """A PCG64 generator seeded by the first 16 bytes of :func:`variant_digest`."""
    digest = variant_digest(course, assignment, student, family, level)
    return np.random.Generator(np.random.PCG64(int(digest[:32], 16)))
