"""An exercise as data, and the check that teaches.

An :class:`Exercise` holds everything a sheet needs: the prompt (Markdown with LaTeX), the data
of one student's variant, the reference answer computed by dpcap with its certified bracket and
unit, hints, a worked solution (prose and the dpcap code that computes the answer from the
data), and the classic mistakes of its family, each with the answer it would produce.

:meth:`Exercise.check` accepts any answer inside the certified bracket widened by the stated
tolerance ``max(rtol·|value|, atol)``; otherwise it names the mistake the answer matches (bits
given for nats, a transposed matrix, ``e^ε`` given for ``ε``, the wrong neighbour relation, a
prior that does not sum to 1, ...). No message ever contains the reference answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap.errors import ParameterError

__all__ = [
    "ANSWER_KINDS",
    "LEVELS",
    "Exercise",
    "Feedback",
    "Mistake",
    "Reference",
    "data_code",
]

#: The levels of an exercise: worked with pen and paper, or with dpcap.
LEVELS = ("by_hand", "with_dpcap")

#: What an answer is: one number, a channel matrix (rows are inputs), or a prior.
ANSWER_KINDS = ("number", "matrix", "prior")

BLANK = (
    "No answer yet: replace the ... in `answer = ...` with your answer (a number, or a NumPy "
    "array where the question asks for a matrix or a prior)."
)
ROWS_ARE_INPUTS = (
    "Rows must be inputs: a channel is W[x, y] = P(Y=y | X=x), one row per input x, and each "
    "row sums to 1. Your matrix looks transposed (columns as inputs)."
)


@dataclass(frozen=True)
class Reference:
    """The answer key of one variant: dpcap's value and its certified bracket.

    ``lower ≤ true value ≤ upper`` holds in floating point. For a closed-form quantity (a DP
    level, a leakage at a given prior) ``lower = upper = value``: dpcap evaluates the formula
    directly, and its rounding (a few ulps) is far inside the check's tolerance. For a
    ``"prior"`` exercise, ``value`` is dpcap's optimal prior and the bracket is that of the
    optimum the prior must attain; for a ``"matrix"`` exercise ``value`` is the matrix.
    """

    value: Any
    lower: Any
    upper: Any
    unit: str
    quantity: str
    status: str = "converged"
    method: str = ""

    @classmethod
    def of(cls, result: Any, quantity: str, method: str) -> Reference:
        """The key of a certified dpcap result: its value, bracket, unit and status."""
        return cls(
            result.value,
            result.lower,
            result.upper,
            result.unit,
            quantity,
            result.status.value,
            method,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields (arrays as lists)."""
        value = self.value.tolist() if isinstance(self.value, np.ndarray) else self.value
        return {
            "value": value,
            "lower": self.lower,
            "upper": self.upper,
            "unit": self.unit,
            "quantity": self.quantity,
            "status": self.status,
            "method": self.method,
        }


@dataclass(frozen=True)
class Mistake:
    """A classic mistake: its name, the answer it produces, and what to tell the student.

    ``value`` is the number the mistake gives (for ``"number"`` exercises) or the matrix (for
    ``"matrix"`` exercises); None for mistakes recognised by the answer's structure (a prior
    that does not sum to 1). ``hint`` never contains the reference answer.
    """

    name: str
    hint: str
    value: Any = None


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: ``correct``, a ``message`` to show, and the ``mistake``
    recognised (its name), if any. ``bool(feedback)`` is ``correct``; ``str`` the message."""

    correct: bool
    message: str
    mistake: str | None = None

    def __bool__(self) -> bool:
        return self.correct

    def __str__(self) -> str:
        return self.message


def _literal(value: Any) -> str:
    """Python source for a datum: floats by their shortest round-trip repr, arrays as
    ``np.array([...])`` of such floats, so the notebook's data equal the exercise's bit for bit."""
    if isinstance(value, np.ndarray):
        return f"np.array({_nested(value.tolist())})"
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)):
        return repr(int(value))
    if isinstance(value, (float, np.floating)):
        return _float(float(value))
    return repr(value)


def _float(x: float) -> str:
    if math.isinf(x):
        return "math.inf" if x > 0 else "-math.inf"
    return repr(x)


def _nested(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    return _float(float(value))


def data_code(data: Mapping[str, Any]) -> str:
    """The Python lines that define an exercise's data (``name = literal``, one a line)."""
    return "\n".join(f"{name} = {_literal(value)}" for name, value in data.items())


@dataclass(frozen=True, eq=False)
class Exercise:
    """One variant of an exercise family, with its answer key and its check.

    Attributes
    ----------
    family, level, title : str
        The family's name (``dpcap.exercises.names()``), ``"by_hand"`` or ``"with_dpcap"``,
        and a title.
    prompt : str
        Markdown with LaTeX (``$...$`` inline, ``$$...$$`` displayed).
    data : mapping
        The variant's data, by the names the prompt and the solution use.
    answer_kind : {"number", "matrix", "prior"}
    reference : Reference
        dpcap's answer with its certified bracket and unit (the key: not for students).
    hints : tuple of str
    solution : str
        The worked solution (Markdown with LaTeX).
    code : str
        Python that computes the answer from the data with dpcap and binds it to ``answer``.
    mistakes : tuple of Mistake
    rtol, atol : float
        The stated tolerance: an answer within ``max(rtol·|value|, atol)`` of the certified
        bracket is accepted.
    variant : str
        The SHA-256 hex digest the variant was drawn from (see :mod:`dpcap.exercises.seeding`).
    """

    family: str
    level: str
    title: str
    prompt: str
    data: Mapping[str, Any]
    answer_kind: str
    reference: Reference
    hints: tuple[str, ...]
    solution: str
    code: str
    mistakes: tuple[Mistake, ...] = ()
    rtol: float = 2e-3
    atol: float = 1e-4
    variant: str = ""
    channel: Any = field(default=None, repr=False)

    def __repr__(self) -> str:  # the key stays out of the repr
        return (
            f"Exercise(family={self.family!r}, level={self.level!r}, "
            f"answer_kind={self.answer_kind!r}, variant={self.variant[:12]!r})"
        )

    @property
    def tolerance(self) -> float:
        """The half-width added to each end of the certified bracket: ``max(rtol·|v|, atol)``
        (for a prior, in the unit of the optimum it must attain)."""
        if self.answer_kind == "matrix":
            return self.atol
        scale = max(abs(float(self.reference.lower)), abs(float(self.reference.upper)))
        return max(self.rtol * scale, self.atol)

    @property
    def tolerance_text(self) -> str:
        """The tolerance as the prompt states it."""
        unit = f" {self.reference.unit}" if self.reference.unit else ""
        if self.answer_kind == "matrix":
            return f"each entry within {self.atol:g}"
        if self.answer_kind == "prior":
            return (
                f"a prior whose value is within {self.tolerance:.2g}{unit} of the optimum "
                "is accepted"
            )
        return (
            f"answers within {self.rtol:.2%} (at least {self.atol:g}{unit}) of the certified "
            "value are accepted"
        )

    def data_code(self) -> str:
        """Python source defining this variant's data (see :func:`data_code`)."""
        return data_code(self.data)

    def check(self, answer: Any) -> Feedback:
        """Check an answer: correct inside the certified bracket widened by the tolerance;
        otherwise the mistake it matches, or a general hint. Never reveals the key."""
        if answer is None or answer is Ellipsis:
            return Feedback(False, BLANK, "blank")
        if self.answer_kind == "number":
            return self._check_number(answer)
        if self.answer_kind == "matrix":
            return self._check_matrix(answer)
        return self._check_prior(answer)

    # --- numbers ----------------------------------------------------------------------------

    def _check_number(self, answer: Any) -> Feedback:
        try:
            x = float(answer)
        except OverflowError:
            return Feedback(False, "Your answer is too large for a number of this kind.", "wrong")
        except (TypeError, ValueError):
            try:
                shape = np.shape(answer) if isinstance(answer, (list, tuple, np.ndarray)) else None
            except ValueError:  # a ragged list has no shape
                shape = None
            what = f"an array of shape {shape}" if shape else f"{type(answer).__name__}"
            return Feedback(False, f"Expected one number, got {what}.", "not_a_number")
        if math.isnan(x):
            return Feedback(False, "Your answer is NaN: check for 0·log 0 or 0/0.", "nan")
        tol = self.tolerance
        if self.reference.lower - tol <= x <= self.reference.upper + tol:
            return Feedback(True, f"Correct ({self.tolerance_text}).")
        for m in self.mistakes:
            if m.value is not None and np.ndim(m.value) == 0 and _near(x, float(m.value), tol):
                return Feedback(False, f"Not quite. {m.hint}", m.name)
        return Feedback(False, self._general(), "wrong")

    def _general(self) -> str:
        hint = f" Hint: {self.hints[0]}" if self.hints else ""
        return f"Not within the tolerance ({self.tolerance_text}).{hint}"

    # --- matrices ---------------------------------------------------------------------------

    def _check_matrix(self, answer: Any) -> Feedback:
        ref = np.asarray(self.reference.value, dtype=np.float64)
        try:
            A = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            return Feedback(False, "Expected a matrix of numbers (a 2-D NumPy array).", "shape")
        if A.ndim != 2:
            return Feedback(False, f"Expected a 2-D matrix, got {A.ndim} dimension(s).", "shape")
        if A.size == 0:
            return Feedback(False, f"Your matrix is empty (shape {A.shape}).", "shape")
        if not np.all(np.isfinite(A)):
            return Feedback(False, "Your matrix has a NaN or infinite entry.", "nan")
        tol = self.atol
        if A.shape == ref.shape and np.allclose(A, ref, rtol=0.0, atol=tol):
            return Feedback(True, f"Correct ({self.tolerance_text}).")
        transposed = A.shape == ref.T.shape and np.allclose(A.T, ref, rtol=0.0, atol=tol)
        columns_sum = np.allclose(A.sum(axis=0), 1.0, atol=tol * A.shape[0])
        rows_sum = np.allclose(A.sum(axis=1), 1.0, atol=tol * A.shape[1])
        if transposed or (columns_sum and not rows_sum):
            return Feedback(False, ROWS_ARE_INPUTS, "transposed")
        if A.shape != ref.shape:
            return Feedback(
                False,
                f"Wrong shape {A.shape}: one row per input and one column per output.",
                "shape",
            )
        if np.any(A < 0):
            return Feedback(False, "Probabilities cannot be negative.", "negative")
        if not rows_sum:
            return Feedback(False, "Each row of W is a distribution: it must sum to 1.", "rows")
        for m in self.mistakes:
            same = m.value is not None and np.shape(m.value) == A.shape
            if same and np.allclose(A, np.asarray(m.value), rtol=0.0, atol=tol):
                return Feedback(False, f"Not quite. {m.hint}", m.name)
        return Feedback(False, self._general(), "wrong")

    # --- priors -----------------------------------------------------------------------------

    def _check_prior(self, answer: Any) -> Feedback:
        from dpcap.measures import mutual_information

        W = np.asarray(self.channel, dtype=np.float64)
        try:
            p = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            return Feedback(False, "Expected a prior: a 1-D array of probabilities.", "shape")
        if p.ndim != 1:
            return Feedback(False, f"Expected a 1-D prior, got {p.ndim} dimension(s).", "shape")
        if not np.all(np.isfinite(p)):
            return Feedback(False, "Your prior has a NaN or infinite entry.", "nan")
        if p.size != W.shape[0]:
            if p.size == W.shape[1]:
                return Feedback(
                    False,
                    "Rows must be inputs: a prior has one entry per row of W (per input x), "
                    f"not one per column; W has {W.shape[0]} rows.",
                    "transposed",
                )
            return Feedback(False, f"A prior on this channel has {W.shape[0]} entries.", "shape")
        if np.any(p < 0):
            return Feedback(False, "Probabilities cannot be negative.", "negative")
        total = float(p.sum())
        if abs(total - 1.0) > 1e-6:
            return Feedback(
                False,
                f"A prior must sum to 1; yours sums to {total:.6g}. Normalise it (p / p.sum()).",
                "prior_sum",
            )
        p = p / total
        value = mutual_information(p, W, unit=self.reference.unit)
        tol = self.tolerance
        if value >= self.reference.lower - tol:
            return Feedback(
                True, f"Correct: your prior attains the optimum ({self.tolerance_text})."
            )
        for m in self.mistakes:
            same = m.value is not None and np.shape(m.value) == p.shape
            if same and np.allclose(p, np.asarray(m.value), rtol=0.0, atol=1e-3):
                return Feedback(False, f"Not quite. {m.hint}", m.name)
        return Feedback(
            False,
            "Your prior is a distribution, but I(X;Y) at it stays below the optimum by more "
            f"than the tolerance ({self.tolerance_text}). "
            + (f"Hint: {self.hints[0]}" if self.hints else ""),
            "wrong",
        )

    # --- soundness and export ---------------------------------------------------------------

    def problems(self) -> list[str]:
        """Why this variant is degenerate (empty when it is sound): a reference that is not
        finite or whose bracket did not converge within the tolerance, or a mistake whose
        answer the check could not tell apart from the key or from another mistake."""
        ref = self.reference
        out = []
        if ref.status != "converged":
            out.append(f"status {ref.status}")
        if not (np.all(np.isfinite(ref.lower)) and np.all(np.isfinite(ref.upper))):
            out.append("reference not finite")
            return out
        tol = self.tolerance
        if np.any(np.subtract(ref.upper, ref.lower) > tol):
            out.append("bracket wider than the tolerance")
        if self.answer_kind == "prior":
            out += self._prior_problems()
        if self.answer_kind != "number":
            return out
        numbers = [(m.name, float(m.value)) for m in self.mistakes if m.value is not None]
        for name, v in numbers:
            if not math.isfinite(v):
                out.append(f"mistake {name} not finite")
            elif ref.lower - 3 * tol <= v <= ref.upper + 3 * tol:
                out.append(f"mistake {name} too close to the key")
        for i, (a, u) in enumerate(numbers):
            for b, v in numbers[i + 1 :]:
                if _near(u, v, 3 * tol):
                    out.append(f"mistakes {a} and {b} coincide")
        return out

    def _prior_problems(self) -> list[str]:
        from dpcap.measures import mutual_information

        out = []
        for m in self.mistakes:
            if m.value is not None:
                value = mutual_information(m.value, self.channel, unit=self.reference.unit)
                if value >= self.reference.lower - 3 * self.tolerance:
                    out.append(f"mistake {m.name} attains the optimum")
        return out

    def to_dict(self, *, key: bool = False) -> dict[str, Any]:
        """The exercise as JSON-safe data; the reference, solution and mistakes only with
        ``key=True``."""
        data = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.data.items()}
        out: dict[str, Any] = {
            "family": self.family,
            "level": self.level,
            "title": self.title,
            "prompt": self.prompt,
            "data": data,
            "answer_kind": self.answer_kind,
            "tolerance": self.tolerance_text,
            "hints": list(self.hints),
            "variant": self.variant,
        }
        if key:
            out["reference"] = self.reference.to_dict()
            out["solution"] = self.solution
            out["code"] = self.code
            out["mistakes"] = [m.name for m in self.mistakes]
        return out


def _near(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol


def level(value: Any, levels: tuple[str, ...], family: str) -> str:
    """Validate a level name for ``family`` (ParameterError naming ``level`` and the value)."""
    if not isinstance(value, str) or value not in levels:
        raise ParameterError(
            f"level must be one of {', '.join(levels)} for the family {family!r}, got {value!r}"
        )
    return value


FloatArray = NDArray[np.float64]
