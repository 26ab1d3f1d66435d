"""Shared pieces of the exercise families: units, LaTeX of data, the classic mistakes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpcap.exercises.core import Mistake

LN2 = math.log(2.0)

FloatArray = NDArray[np.float64]


def unit_of(rng: np.random.Generator, level: str) -> str:
    """The unit a variant asks for: by hand in bits (pen-and-paper QIF habit) or nats, drawn."""
    return "bits" if rng.random() < 0.5 else "nats"


def to_unit(x: float, unit: str) -> float:
    """A value in nats, expressed in ``unit``."""
    return x / LN2 if unit == "bits" else x


def log_name(unit: str) -> str:
    """The logarithm a unit goes with, in LaTeX."""
    return r"\log_2" if unit == "bits" else r"\ln"


def other_unit(value_in_unit: float, unit: str) -> Mistake:
    """The bits/nats mistake: the same quantity in the other unit."""
    if unit == "bits":
        return Mistake(
            "nats_for_bits",
            "This looks like the right quantity in nats; the question asks for bits "
            "(divide nats by ln 2).",
            value_in_unit * LN2,
        )
    return Mistake(
        "bits_for_nats",
        "This looks like the right quantity in bits; the question asks for nats "
        "(natural logarithm: multiply bits by ln 2).",
        value_in_unit / LN2,
    )


def exp_for_eps(eps: float) -> Mistake:
    """The e^ε-for-ε mistake."""
    return Mistake(
        "exp_eps",
        "You gave e^ε, the bound on the likelihood ratio W[x,y]/W[x',y]; the question asks "
        "for ε itself, its natural logarithm.",
        math.exp(eps),
    )


def eps_in_bits(eps: float) -> Mistake:
    """ε measured with log base 2."""
    return Mistake(
        "bits_for_nats",
        "ε is a natural-log ratio (nats): you seem to have used log base 2.",
        eps / LN2,
    )


def latex_number(x: float, digits: int = 6) -> str:
    """A number for a prompt: at most ``digits`` significant digits, no trailing zeros."""
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def latex_matrix(M: Any, digits: int = 6) -> str:
    """A matrix (or vector, as one row) in LaTeX ``bmatrix`` form."""
    A = np.atleast_2d(np.asarray(M, dtype=np.float64))
    rows = [" & ".join(latex_number(float(v), digits) for v in row) for row in A]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def rational_rows(
    rng: np.random.Generator, n_rows: int, n_cols: int, denominator: int
) -> FloatArray:
    """A random stochastic matrix whose entries are multiples of ``1/denominator`` (easy by
    hand), every entry positive and the rows pairwise distinct."""
    while True:
        cuts = np.sort(rng.choice(np.arange(1, denominator), size=(n_rows, n_cols - 1)), axis=1)
        edges = np.concatenate(
            [np.zeros((n_rows, 1), int), cuts, np.full((n_rows, 1), denominator)], axis=1
        )
        counts = np.diff(edges, axis=1)
        if np.all(counts > 0) and len({tuple(r) for r in counts}) == n_rows:
            W: FloatArray = counts / float(denominator)
            return W


def hockey_stick(W: FloatArray, gamma: float, pairs: str = "all") -> float:
    """``max over ordered pairs (x, x') of Σ_y (W[x,y] − γ W[x',y])_+`` (for the mistakes
    that plug a wrong γ)."""
    n = W.shape[0]
    best = 0.0
    for a in range(n):
        for b in range(n):
            if a != b and (pairs == "all" or abs(a - b) == 1):
                best = max(best, float(np.clip(W[a] - gamma * W[b], 0.0, None).sum()))
    return best


def column_epsilon(W: FloatArray) -> float:
    """The largest ``|log W[x,y] − log W[x,y+1]|``: ε computed with columns as inputs
    (adjacent columns of one row), the transposed reading of a line mechanism."""
    with np.errstate(divide="ignore"):
        logs = np.log(W)
    diff = np.abs(np.diff(logs, axis=1))
    return float(np.max(diff))
