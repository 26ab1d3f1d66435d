r"""The Markov chain ``S − X − Y`` shared by the funnel, perfect-privacy and inference queries.

A joint law ``joint[s, x] = P(S=s, X=x)`` of a private (or relevant) attribute S and the data X
is given; a mechanism ``W = P_{Y|X}`` releases Y. This private module validates the joint law
once (:func:`joint_problem`), recomputes ``I(X;Y)`` and ``I(S;Y)`` of any mechanism from the
joint laws (:func:`informations`: every value a query reports comes from here, never from a
solver's objective), and turns posteriors with weights back into a mechanism
(:func:`mechanism`). See ``docs/mathematics.rst`` §7.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import rel_entr, xlogy

from dpcap._core import validation as check
from dpcap.errors import PriorError

__all__ = ["Problem", "constant", "informations", "joint_problem", "mechanism"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Problem:
    """A validated joint law and what every query needs from it (entropies in nats)."""

    joint: FloatArray  # (|S|, |X|), as given (validated)
    px: FloatArray  # P_X
    ps: FloatArray  # P_S
    xs: NDArray[np.int64]  # support of P_X
    T: FloatArray  # P_{S|X} on the supports of P_S and P_X
    p: FloatArray  # P_X on its support
    hx: float  # H(X) = I(X;X)
    hs: float  # H(S)
    isx: float  # I(S;X)

    @property
    def reduced(self) -> FloatArray:
        """``joint`` restricted to the supports of ``P_S`` and ``P_X``."""
        ss = np.flatnonzero(self.ps > 0)
        result: FloatArray = self.joint[np.ix_(ss, self.xs)]
        return result


def joint_problem(value: Any) -> Problem:
    """Validate ``joint`` (a 2-D probability law, :class:`~dpcap.result.PriorError` otherwise)."""
    arr = check.numeric(value, "joint", PriorError)  # ragged, complex, strings: named errors
    if arr.ndim != 2:
        raise PriorError(
            f"joint must be a 2-D matrix joint[s, x] = P(S=s, X=x), got an array of shape "
            f"{arr.shape}"
        )
    joint = check.law(arr, "joint")
    px, ps = joint.sum(axis=0), joint.sum(axis=1)
    xs = np.flatnonzero(px > 0)
    ss = np.flatnonzero(ps > 0)
    p = px[xs]
    T = joint[np.ix_(ss, xs)] / p[None, :]
    T = T / T.sum(axis=0, keepdims=True)
    problem = Problem(joint, px, ps, xs, T, p, 0.0, 0.0, 0.0)
    hx, isx = informations(problem, np.eye(joint.shape[1]))
    hs = float(-np.sum(xlogy(ps, ps)))
    return dataclasses.replace(problem, hx=hx, hs=hs, isx=isx)


def informations(problem: Problem, W: FloatArray) -> tuple[float, float]:
    """``(I(X;Y), I(S;Y))`` of the mechanism ``W = P_{Y|X}``, from the joint laws (nats)."""
    py = problem.px @ W
    joint_xy = problem.px[:, None] * W
    joint_sy = problem.joint @ W
    ixy = float(np.sum(rel_entr(joint_xy, np.outer(problem.px, py))))
    isy = float(np.sum(rel_entr(joint_sy, np.outer(problem.ps, py))))
    return max(ixy, 0.0), max(isy, 0.0)


def mechanism(problem: Problem, posteriors: FloatArray, weights: FloatArray) -> FloatArray:
    """``P(Y=j | X=x) = λ_j q_j(x) / P_X(x)`` (rows renormalised), posteriors merged if equal.

    Values of X with probability 0, and rows that cannot be formed (below), get the output law
    as their row (any row would do).
    """
    keys = np.round(posteriors, 13)
    _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    k = int(inverse.max()) + 1
    merged_w = np.bincount(inverse, weights=weights, minlength=k)
    merged_q = np.zeros((k, posteriors.shape[1]))
    np.add.at(merged_q, inverse, weights[:, None] * posteriors)
    merged_q /= merged_w[:, None]
    body = merged_w[None, :] * merged_q.T / problem.p[:, None]  # (n, k)
    sums = body.sum(axis=1)
    # a value of X of mass near 1e-300 can have every posterior q_j(x) rounded to 0 by the LP:
    # its row is 0/0, and it gets the output law of the other rows (any row of mass P_X(x)
    # moves I(X;Y) and I(S;Y) by O(P_X(x) log 1/P_X(x)); the informations are computed from W)
    formed = np.isfinite(sums) & (sums > 0)
    body[formed] /= sums[formed, None]
    output = problem.p[formed] @ body[formed]
    output /= output.sum()
    body[~formed] = output
    W = np.empty((problem.px.shape[0], k))
    W[problem.xs] = body
    off = np.setdiff1d(np.arange(problem.px.shape[0]), problem.xs)
    W[off] = output
    return W


def constant(problem: Problem) -> FloatArray:
    """The constant release (one output): ``I(X;Y) = I(S;Y) = 0``."""
    return np.ones((problem.px.shape[0], 1))
