"""Fuzz group ``qif``: quantitative information flow against exact arithmetic and its theorems.

:mod:`dpcap.qif` (vulnerabilities, leakages, risks, guessing entropies at a prior), the
capacities over priors (:func:`dpcap.g_capacity`, :func:`dpcap.risk_capacity`),
:func:`dpcap.min_entropy_leakage` and :func:`dpcap.max_leakage`, on channels of at most
4 × 4 and gains of at most 4 guesses. References are exact: every float input is a
:class:`fractions.Fraction`, rows and priors normalised exactly (as dpcap's validators
renormalise them), and the definitions of ``docs/mathematics.rst`` §9 evaluated with no
rounding. Properties:

* **values**: each measure at a prior equals its exact definition (relative ``1e-12``, and
  an absolute ``1e-13`` times the gain's size where a difference cancels);
* **theorems**: ``V_g[π▷W] ≥ V_g(π)``; additive = ``V_g(π)·(multiplicative − 1)``; the
  multiplicative Bayes leakage is at most the Bayes capacity ``Σ_y max_x W`` (equal at the
  uniform prior), so the min-entropy leakage is at most the maximal leakage ``log Σ_y max_x W``;
  for a gain ``≥ 0`` the multiplicative g-leakage is at most ``Σ_y max_x W`` (Alvim et al. 2020,
  Thm 7.5) and the additive at most ``R·(1 − Σ_y min_x W)`` and ``R·(Σ_y max_x W − 1)``; post-
  processing never increases a g-leakage; ``1 ≤ G(π▷W) ≤ G(π) ≤ (n + 1)/2``; a risk leakage
  of the 0-1 loss is at most ``1/(1 − max TV)``;
* **capacity brackets**: ``lower ≤ capacity ≤ upper`` for the exact capacity (two secrets: the
  maximum over the finitely many breakpoints of the piecewise-linear(-fractional) leakage;
  more secrets: every prior of a grid is a lower bound), and the returned prior's exact
  leakage is at least ``lower``;
* **invalid input** (a kind, gain, loss, prior or channel of the wrong kind or shape; a
  multiplicative leakage whose prior vulnerability is not positive) raises a
  :class:`dpcap.DpcapError` that is a ``ValueError`` and names the argument.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from _harness import fuzz
from hypothesis import assume, given
from hypothesis import strategies as st

import dpcap
from dpcap import qif
from dpcap.testing import channels, distributions

F = Fraction
Matrix = list[list[Fraction]]

# ------------------------------------------------------------------------ exact references


def exact_rows(W: np.ndarray) -> Matrix:
    """The channel's rows as exact fractions, each divided by its (exact) sum."""
    out = []
    for row in np.asarray(W, dtype=np.float64):
        cells = [F(float(x)) for x in row]
        total = sum(cells)
        out.append([c / total for c in cells])
    return out


def exact_law(p: np.ndarray) -> list[Fraction]:
    cells = [F(float(x)) for x in p]
    total = sum(cells)
    return [c / total for c in cells]


def exact_gain(G: np.ndarray | None, n: int) -> Matrix:
    if G is None:
        return [[F(int(w == x)) for x in range(n)] for w in range(n)]
    return [[F(float(v)) for v in row] for row in G]


def V(p: list[Fraction], G: Matrix) -> Fraction:
    return max(sum((pi * g for pi, g in zip(p, row, strict=True)), F(0)) for row in G)


def V_post(p: list[Fraction], W: Matrix, G: Matrix) -> Fraction:
    outputs = range(len(W[0]))
    return sum(
        (
            max(sum((p[x] * W[x][y] * row[x] for x in range(len(p))), F(0)) for row in G)
            for y in outputs
        ),
        F(0),
    )


def guessing(masses: list[Fraction]) -> Fraction:
    ordered = sorted(masses, reverse=True)
    return sum((F(i + 1) * m for i, m in enumerate(ordered)), F(0))


def post_guessing(p: list[Fraction], W: Matrix) -> Fraction:
    return sum((guessing([p[x] * W[x][y] for x in range(len(p))]) for y in range(len(W[0]))), F(0))


def bayes_capacity(W: Matrix) -> Fraction:
    return sum((max(W[x][y] for x in range(len(W))) for y in range(len(W[0]))), F(0))


def close(got: float, want: Fraction, *, scale: float = 1.0) -> bool:
    return abs(F(got) - want) <= F(1e-12) * abs(want) + F(1e-13) * F(scale)


# ----------------------------------------------------------------------------- strategies

GAIN_VALUES = st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0, 1.0, 2.0, 0.1, 3.0])
SIGNED_VALUES = GAIN_VALUES | st.sampled_from([-1.0, -0.5, -2.0])


@st.composite
def gains(draw: st.DrawFn, n: int, *, signed: bool = False) -> np.ndarray | None:
    """None (the identity gain) or a gain of 1 to 4 guesses; unsigned ones have a positive
    entry in every column (every prior then has a positive vulnerability)."""
    if draw(st.integers(0, 3)) == 0:
        return None
    rows = draw(st.integers(1, 4))
    values = SIGNED_VALUES if signed else GAIN_VALUES
    G = np.array(draw(st.lists(st.lists(values, min_size=n, max_size=n), min_size=rows,
                               max_size=rows)))  # fmt: skip
    if not signed:
        for x in range(n):
            if not (G[:, x] > 0).any():
                G[draw(st.integers(0, rows - 1)), x] = draw(st.sampled_from([0.5, 1.0]))
    return G


@st.composite
def cases(
    draw: st.DrawFn, *, signed: bool = False, max_inputs: int = 4
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    W = draw(channels(max_inputs=max_inputs, max_outputs=4))
    p = draw(distributions(W.shape[0]))
    return W, p, draw(gains(W.shape[0], signed=signed))


# ------------------------------------------------------------------------------ the values


@fuzz(examples=5000, quick=10)
@given(case=cases(signed=True))
def test_measures_at_a_prior_equal_their_exact_definitions(
    case: tuple[np.ndarray, np.ndarray, np.ndarray | None],
) -> None:
    W, p, G = case
    n = W.shape[0]
    ew, ep, eg = exact_rows(W), exact_law(p), exact_gain(G, n)
    size = 1.0 if G is None else max(1.0, float(np.abs(G).max()))
    prior, post = V(ep, eg), V_post(ep, ew, eg)
    assert close(qif.g_vulnerability(p, G), prior, scale=size)
    assert close(qif.posterior_g_vulnerability(p, W, G), post, scale=size)
    assert close(qif.g_leakage(p, W, G, kind="additive"), post - prior, scale=size)
    if prior > 0:
        assert close(qif.g_leakage(p, W, G), post / prior, scale=size / float(prior))
    else:
        with pytest.raises(dpcap.ParameterError, match=r"V_g\(prior\) > 0"):
            qif.g_leakage(p, W, G)
    # the strategy attains the posterior vulnerability
    guesses = qif.g_strategy(p, W, G)
    attained = sum(
        (sum((ep[x] * ew[x][y] * eg[int(w)][x] for x in range(n)), F(0)) for y, w in
         enumerate(guesses)),
        F(0),
    )  # fmt: skip
    assert close(float(attained), post, scale=size)
    # losses: L = −G shifted to be non-negative when asked for the multiplicative kind
    L = None if G is None else G - G.min()
    el = (
        [[F(int(w != x)) for x in range(n)] for w in range(n)]
        if L is None
        else [[F(float(v)) for v in row] for row in L]
    )
    risk = -V(ep, [[-v for v in row] for row in el])
    post_risk = -V_post(ep, ew, [[-v for v in row] for row in el])
    assert close(qif.bayes_risk(p, L), risk, scale=size)
    assert close(qif.posterior_bayes_risk(p, W, L), post_risk, scale=size)
    assert close(qif.risk_leakage(p, W, L, kind="additive"), risk - post_risk, scale=size)
    if risk > 0:
        got = qif.risk_leakage(p, W, L)
        if post_risk == 0:
            assert got == math.inf
        else:
            assert close(got, risk / post_risk, scale=size / float(post_risk))
    # guessing entropy
    assert close(qif.guessing_entropy(p), guessing(ep), scale=n)
    assert close(qif.posterior_guessing_entropy(p, W), post_guessing(ep, ew), scale=n)


# ------------------------------------------------------------------------------ theorems


@fuzz(examples=5000, quick=10)
@given(case=cases(), post=channels(max_inputs=4, max_outputs=3), data=st.data())
def test_leakages_obey_their_theorems(
    case: tuple[np.ndarray, np.ndarray, np.ndarray | None], post: np.ndarray, data: st.DataObject
) -> None:
    W, p, G = case
    n = W.shape[0]
    ew = exact_rows(W)
    bayes = float(bayes_capacity(ew))
    tiny = 1e-12
    mult = qif.g_leakage(p, W, G)
    add = qif.g_leakage(p, W, G, kind="additive")
    prior = qif.g_vulnerability(p, G)
    assert mult >= 1.0
    assert add >= 0.0
    assert math.isclose(add, prior * (mult - 1.0), rel_tol=1e-9, abs_tol=1e-12)
    # miracle: a gain >= 0 leaks at most the Bayes capacity, multiplicatively
    assert mult <= bayes * (1 + tiny)
    size = 1.0 if G is None else float((G - G.min(axis=0)).max())
    floor = float(sum(min(ew[x][y] for x in range(n)) for y in range(len(ew[0]))))
    assert add <= size * (1 - floor) + tiny
    assert add <= prior * (bayes - 1) + tiny * max(prior, 1.0)
    # Bayes leakage, min-entropy leakage and maximal leakage
    bl = qif.bayes_leakage(p, W)
    assert bl <= bayes * (1 + tiny)
    mel = dpcap.min_entropy_leakage(p, W)
    ml = dpcap.max_leakage(W)
    assert math.isclose(ml, math.log(bayes), rel_tol=1e-12, abs_tol=1e-15)
    assert mel <= ml + 1e-12
    assert math.isclose(mel, math.log(bl), rel_tol=1e-9, abs_tol=1e-12)
    uniform = np.full(n, 1.0 / n)
    assert math.isclose(qif.bayes_leakage(uniform, W), bayes, rel_tol=1e-12)
    assert math.isclose(dpcap.min_entropy_leakage(uniform, W), ml, rel_tol=1e-9, abs_tol=1e-12)
    # post-processing by another channel never increases a g-leakage
    C = post[: W.shape[1]] if post.shape[0] >= W.shape[1] else None
    if C is not None:
        WC = np.asarray(W) @ C
        WC = WC / WC.sum(axis=1, keepdims=True)
        assert qif.g_leakage(p, WC, G) <= mult * (1 + 1e-9) + 1e-12
        assert qif.g_leakage(p, WC, G, kind="additive") <= add + 1e-9 * max(size, 1.0)
    # guessing entropies
    g0, g1 = qif.guessing_entropy(p), qif.posterior_guessing_entropy(p, W)
    assert 1 - tiny <= g1 <= g0 * (1 + tiny)
    assert g0 <= (n + 1) / 2 * (1 + tiny)
    assert qif.guessing_leakage(p, W) >= 1.0
    # the risk leakage of the 0-1 loss is at most 1 / (1 − max TV) (the risk capacity)
    overlap = min(
        sum(min(a, b) for a, b in zip(ew[x], ew[z], strict=True))
        for x, z in itertools.combinations(range(n), 2)
    )
    if qif.bayes_risk(p) > 0:
        risk_leak = qif.risk_leakage(p, W)
        if overlap > 0:
            assert risk_leak <= float(1 / overlap) * (1 + 1e-9)
    cap = dpcap.risk_capacity(W)
    if overlap == 0:
        assert cap.value == math.inf
    else:
        assert cap.lower * (1 - 1e-12) <= float(1 / overlap) <= cap.upper * (1 + 1e-12)


# ------------------------------------------------------------------------------ capacities


def breakpoints(W: Matrix, G: Matrix) -> list[Fraction]:
    """The ``t`` in ``[0, 1]`` where the leakage of the prior ``(t, 1 − t)`` can change slope:
    two guesses tie, in the prior or at an output (two secrets)."""
    ts = {F(0), F(1)}
    lines = [(row[0], row[1]) for row in G]  # prior: t·a + (1 − t)·b
    for y in range(len(W[0])):
        lines += [(W[0][y] * row[0], W[1][y] * row[1]) for row in G]
    for (a1, b1), (a2, b2) in itertools.combinations(lines, 2):
        denom = (a1 - b1) - (a2 - b2)
        if denom != 0:
            t = (b2 - b1) / denom
            if 0 <= t <= 1:
                ts.add(t)
    return sorted(ts)


def exact_leakage(p: list[Fraction], W: Matrix, G: Matrix, kind: str) -> Fraction | None:
    prior, post = V(p, G), V_post(p, W, G)
    if kind == "additive":
        return post - prior
    return post / prior if prior > 0 else None


@fuzz(examples=3000, quick=6)
@given(
    W=channels(max_inputs=3, max_outputs=3),
    data=st.data(),
    kind=st.sampled_from(["multiplicative", "additive"]),
)
def test_capacity_brackets_hold_the_exact_capacity(
    W: np.ndarray, data: st.DataObject, kind: str
) -> None:
    n = W.shape[0]
    G = data.draw(gains(n, signed=kind == "additive"), "gain")
    with warnings.catch_warnings():  # an open bracket (HiGHS's tolerances) still holds
        warnings.simplefilter("ignore", dpcap.ConvergenceWarning)
        result = dpcap.g_capacity(W, G, kind=kind)
    ew, eg = exact_rows(W), exact_gain(G, n)
    assert result.lower <= result.upper
    if n == 2:
        values = [exact_leakage([t, 1 - t], ew, eg, kind) for t in breakpoints(ew, eg)]
        exact = max(v for v in values if v is not None)
    else:  # a grid of priors: each is a lower bound
        grid = [[F(i, 4), F(j, 4), F(4 - i - j, 4)] for i in range(5) for j in range(5 - i)]
        values = [exact_leakage(q, ew, eg, kind) for q in grid]
        exact = max(v for v in values if v is not None)
    size = 1.0 if G is None else max(1.0, float(np.abs(G).max()))
    slack = 1e-9 * max(abs(float(exact)), 1.0) * size
    assert float(exact) <= result.upper + slack, (float(exact), result.upper)
    if n == 2:
        assert result.lower - slack <= float(exact), (result.lower, float(exact))
    # the returned prior attains the lower end
    at = exact_leakage(exact_law(result.prior), ew, eg, kind)
    if at is not None:
        assert float(at) >= result.lower - slack
    if G is None and kind == "multiplicative":
        assert close(result.value, bayes_capacity(ew))


# ------------------------------------------------------------------------------ bad input

BAD_CHANNELS = [
    [[0.5, 0.6], [0.5, 0.5]],
    [[0.5, math.nan], [0.5, 0.5]],
    [[1.0], [0.5, 0.5]],
    "W",
    None,
    [[True, False], [False, True]],
    [[-0.5, 1.5], [0.5, 0.5]],
]
BAD_PRIORS = [[0.5], [0.2, 0.2], [math.nan, 1.0], [-0.5, 1.5], "prior", None, [[0.5, 0.5]], [1j, 0]]
BAD_GAINS = [
    [[1.0, 0.0, 0.0]],
    [[math.nan, 1.0]],
    [[math.inf, 1.0]],
    "gain",
    [1.0, 0.0],
    np.zeros((0, 2)),
    [[1.0, 0.0], [1.0]],
    [[True, False]],
    [[1j, 0.0]],
]

#: A function of dpcap.qif or a capacity, and its arguments with one to break.
CALLS: list[tuple[str, Any, tuple[str, ...]]] = [
    ("g_vulnerability", qif.g_vulnerability, ("prior", "gain")),
    ("posterior_g_vulnerability", qif.posterior_g_vulnerability, ("prior", "W", "gain")),
    ("g_leakage", qif.g_leakage, ("prior", "W", "gain", "kind")),
    ("g_strategy", qif.g_strategy, ("prior", "W", "gain")),
    ("bayes_leakage", qif.bayes_leakage, ("prior", "W", "kind")),
    ("bayes_risk", qif.bayes_risk, ("prior", "loss")),
    ("posterior_bayes_risk", qif.posterior_bayes_risk, ("prior", "W", "loss")),
    ("risk_leakage", qif.risk_leakage, ("prior", "W", "loss", "kind")),
    ("guessing_entropy", qif.guessing_entropy, ("prior",)),
    ("posterior_guessing_entropy", qif.posterior_guessing_entropy, ("prior", "W")),
    ("guessing_leakage", qif.guessing_leakage, ("prior", "W", "kind")),
    ("min_entropy_leakage", dpcap.min_entropy_leakage, ("prior", "W")),
    ("max_leakage", dpcap.max_leakage, ("W",)),
    ("g_capacity", dpcap.g_capacity, ("W", "gain", "kind")),
    ("risk_capacity", dpcap.risk_capacity, ("W", "loss", "kind")),
]
GOOD = {
    "prior": [0.25, 0.75],
    "W": [[0.75, 0.25], [0.25, 0.75]],
    "gain": [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]],
    "loss": [[0.0, 1.0], [1.0, 0.0]],
    "kind": "additive",
}
UNIT = st.floats(-1.0, 2.0)
BAD_BY_NAME = {
    "prior": st.sampled_from(BAD_PRIORS)
    | st.tuples(UNIT, UNIT).filter(lambda q: min(q) < 0 or abs(sum(q) - 1) > 1e-6).map(list),
    "W": st.sampled_from(BAD_CHANNELS)
    | st.tuples(UNIT, UNIT)
    .filter(lambda r: min(r) < 0 or abs(sum(r) - 1) > 1e-6)
    .map(lambda r: [list(r), [0.5, 0.5]]),
    "gain": st.sampled_from(BAD_GAINS)
    | st.integers(1, 4)
    .flatmap(lambda c: st.lists(st.lists(UNIT, min_size=c, max_size=c), min_size=1, max_size=3))
    .filter(lambda g: len(g[0]) != 2),
    "loss": st.sampled_from(BAD_GAINS),
    "kind": st.sampled_from(["mult", "", 5, None, "Additive", ["additive"]])
    | st.text(max_size=8).filter(lambda s: s not in ("multiplicative", "additive")),
}


@fuzz(examples=4000, quick=10)
@given(data=st.data())
def test_invalid_input_is_refused_naming_the_argument(data: st.DataObject) -> None:
    name, fn, params = data.draw(st.sampled_from(CALLS), "function")
    broken = data.draw(st.sampled_from(params), "argument")
    value = data.draw(BAD_BY_NAME[broken], "value")
    assume(not (broken == "kind" and value is None))
    args = [value if p == broken else GOOD[p] for p in params if p != "kind"]
    kwargs = {"kind": value if broken == "kind" else GOOD["kind"]} if "kind" in params else {}
    with pytest.raises(dpcap.DpcapError) as error:
        fn(*args, **kwargs)
    assert isinstance(error.value, ValueError), (name, broken, value, error.value)
    assert broken in str(error.value) or (broken == "W" and "row" in str(error.value)), (
        name,
        broken,
        value,
        str(error.value),
    )


@fuzz(examples=2000, quick=6)
@given(case=cases(signed=True))
def test_a_multiplicative_leakage_needs_a_positive_prior_vulnerability(
    case: tuple[np.ndarray, np.ndarray, np.ndarray | None],
) -> None:
    W, p, G = case
    assume(G is not None)
    shifted = G - G.max() - 1.0  # every entry negative: V_g(π) < 0 for every prior
    with pytest.raises(dpcap.ParameterError, match=r"V_g\(prior\) > 0"):
        qif.g_leakage(p, W, shifted)
    with pytest.raises(dpcap.ParameterError, match="gain"):
        dpcap.g_capacity(W, shifted)
    assert qif.g_leakage(p, W, shifted, kind="additive") >= 0.0
