"""Families on quantitative information flow: min-entropy leakage, maximal leakage and
g-leakage with a given gain."""

from __future__ import annotations

import math

import numpy as np

from dpcap.exercises._common import (
    FloatArray,
    latex_matrix,
    latex_number,
    log_name,
    other_unit,
    rational_rows,
    to_unit,
    unit_of,
)
from dpcap.exercises.core import ROWS_ARE_INPUTS, Exercise, Mistake, Reference
from dpcap.measures import min_entropy_leakage as _min_entropy_leakage
from dpcap.privacy import max_leakage as _max_leakage
from dpcap.qif import g_leakage as _g_leakage
from dpcap.shannon.shannon_capacity import capacity


def _prior(rng: np.random.Generator, n: int, denominator: int) -> FloatArray:
    while True:
        p: FloatArray = rational_rows(rng, 1, n, denominator)[0]
        if len(set(p.tolist())) > 1:
            return p


def min_entropy(rng: np.random.Generator, level: str) -> Exercise:
    """Min-entropy leakage of a channel at a given prior."""
    unit = unit_of(rng, level)
    if level == "by_hand":
        n, m, den = int(rng.integers(2, 4)), int(rng.integers(2, 4)), 10
    else:
        n, m, den = int(rng.integers(4, 6)), int(rng.integers(4, 7)), 20
    W = rational_rows(rng, n, m, den)
    prior = _prior(rng, n, den)
    value = _min_entropy_leakage(prior, W, unit=unit)
    log = log_name(unit)
    prompt = (
        "**Min-entropy leakage.** A secret $X$ with prior "
        f"$\\pi = {latex_matrix(prior)}$ goes through the channel (rows are inputs)\n\n"
        f"$$W = {latex_matrix(W)}.$$\n\n"
        "Compute the min-entropy leakage $\\mathcal{L}(\\pi, W) = H_\\infty(X) - H_\\infty(X\\mid"
        f" Y) = {log} \\frac{{\\sum_y \\max_x \\pi_x W[x,y]}}{{\\max_x \\pi_x}}$ in **{unit}**."
        "\n\nData: `prior`, `W`. Answer: one number."
    )
    solution = (
        "The posterior vulnerability is $\\sum_y \\max_x \\pi_x W[x,y]$, the prior one "
        f"$\\max_x \\pi_x$; their ratio's logarithm is ${latex_number(value, 5)}$ {unit}.\n\n"
        f"With dpcap: `dpcap.min_entropy_leakage(prior, W, unit='{unit}')`."
    )
    mistakes = [
        other_unit(value, unit),
        Mistake(
            "uniform_prior",
            "That is the leakage at the uniform prior (the maximal leakage); use the given "
            "prior π.",
            _max_leakage(W, unit=unit),
        ),
        Mistake(
            "no_log",
            "That is the multiplicative leakage V(π▷W)/V(π); min-entropy leakage is its logarithm.",
            math.exp(value * (math.log(2) if unit == "bits" else 1.0)),
        ),
    ]
    if n == m:
        wrong = np.log(np.max(prior[None, :] * W, axis=1).sum() / prior.max())
        mistakes.append(Mistake("transposed", ROWS_ARE_INPUTS, to_unit(float(wrong), unit)))
    return Exercise(
        family="min_entropy",
        level=level,
        title="Min-entropy leakage at a prior",
        prompt=prompt,
        data={"prior": prior, "W": W},
        answer_kind="number",
        reference=Reference(
            value, value, value, unit, "min-entropy leakage", method="dpcap.min_entropy_leakage"
        ),
        hints=(
            "For each output y keep the largest joint probability π_x W[x, y], then add.",
            "Divide by the prior vulnerability max_x π_x and take the logarithm "
            + ("base 2." if unit == "bits" else "(natural)."),
        ),
        solution=solution,
        code=f"answer = dpcap.min_entropy_leakage(prior, W, unit={unit!r})",
        mistakes=tuple(mistakes),
    )


def maximal_leakage(rng: np.random.Generator, level: str) -> Exercise:
    """Maximal leakage ``log Σ_y max_x W[x,y]`` (Sibson's capacity at α = ∞)."""
    unit = unit_of(rng, level)
    if level == "by_hand":
        n, m, den = 2, 3, 10
    else:
        n, m, den = int(rng.integers(4, 7)), int(rng.integers(5, 8)), 20
    W = rational_rows(rng, n, m, den)
    value = _max_leakage(W, unit=unit)
    shannon = capacity(W, unit=unit, tol=1e-12)
    log = log_name(unit)
    prompt = (
        "**Maximal leakage.** For the channel (rows are inputs)\n\n"
        f"$$W = {latex_matrix(W)}$$\n\n"
        f"compute the maximal leakage $\\mathcal{{L}}(X \\to Y) = {log} \\sum_y \\max_x W[x,y]$ "
        f"in **{unit}**: the min-entropy leakage maximised over priors, and Sibson's capacity "
        "at $\\alpha = \\infty$.\n\nData: `W`. Answer: one number."
    )
    solution = (
        "Add the column maxima of $W$ and take the logarithm: "
        f"${latex_number(value, 5)}$ {unit}. It is at least the Shannon capacity "
        f"(${latex_number(shannon.value, 5)}$ {unit} here).\n\n"
        f"With dpcap: `dpcap.max_leakage(W, unit='{unit}')`."
    )
    wrong = np.log(W.max(axis=1).sum())
    return Exercise(
        family="maximal_leakage",
        level=level,
        title="Maximal leakage",
        prompt=prompt,
        data={"W": W},
        answer_kind="number",
        reference=Reference(
            value, value, value, unit, "maximal leakage", method="dpcap.max_leakage"
        ),
        hints=(
            "Take the largest entry of each column (each output y), then add them up.",
            "The uniform prior attains the maximum of min-entropy leakage over priors.",
        ),
        solution=solution,
        code=f"answer = dpcap.max_leakage(W, unit={unit!r})",
        mistakes=(
            other_unit(value, unit),
            Mistake(
                "transposed",
                ROWS_ARE_INPUTS + " Take the maximum over inputs x in each column y.",
                to_unit(float(wrong), unit),
            ),
            Mistake(
                "no_log",
                "That is Σ_y max_x W[x,y] itself (the multiplicative Bayes capacity); maximal "
                "leakage is its logarithm.",
                float(W.max(axis=0).sum()),
            ),
            Mistake(
                "shannon",
                "That is the Shannon capacity, which is smaller; maximal leakage is the α = ∞ "
                "member of the Rényi family.",
                shannon.value,
            ),
        ),
    )


def g_leakage(rng: np.random.Generator, level: str) -> Exercise:
    """Multiplicative g-leakage with a gain that rewards a cautious guess."""
    n = 3 if level == "by_hand" else 4
    den = 10 if level == "by_hand" else 20
    m = int(rng.integers(2, 4)) if level == "by_hand" else int(rng.integers(3, 6))
    W = rational_rows(rng, n, m, den)
    prior = _prior(rng, n, den)
    safe = float(rng.choice([0.4, 0.5, 0.6, 0.7]))
    G = np.vstack([np.eye(n), np.full((1, n), safe)])
    value = _g_leakage(prior, W, G)
    prior_v = float(np.max(G @ prior))
    post_v = float(np.sum(np.max(G @ (prior[:, None] * W), axis=0)))
    prompt = (
        f"**g-leakage.** A secret $X \\in \\{{0, \\dots, {n - 1}\\}}$ has prior "
        f"$\\pi = {latex_matrix(prior)}$ and is observed through\n\n$$W = {latex_matrix(W)}.$$"
        f"\n\nThe adversary either guesses the secret (gain 1 if right, 0 if wrong) or plays "
        f"safe (gain {safe:g} whatever the secret): the gain matrix $G[w, x]$ has rows "
        f"$w = 0, \\dots, {n - 1}$ (the guesses) and a last row for the safe play,\n\n"
        f"$$G = {latex_matrix(G)}.$$\n\n"
        "Compute the multiplicative g-leakage $\\mathcal{L}^\\times_g(\\pi, W) = "
        "\\frac{V_g[\\pi \\triangleright W]}{V_g(\\pi)}$ with $V_g(\\pi) = \\max_w \\sum_x \\pi_x "
        "G[w,x]$ and $V_g[\\pi \\triangleright W] = \\sum_y \\max_w \\sum_x \\pi_x W[x,y] G[w,x]$."
        "\n\nData: `prior`, `W`, `G`. Answer: one number (a ratio, no unit)."
    )
    solution = (
        f"$V_g(\\pi) = {latex_number(prior_v, 5)}$ and $V_g[\\pi \\triangleright W] = "
        f"{latex_number(post_v, 5)}$, so the leakage is ${latex_number(value, 5)}$.\n\n"
        "With dpcap: `dpcap.g_leakage(prior, W, G)`."
    )
    return Exercise(
        family="g_leakage",
        level=level,
        title="g-leakage with a given gain",
        prompt=prompt,
        data={"prior": prior, "W": W, "G": G},
        answer_kind="number",
        reference=Reference(
            value, value, value, "", "multiplicative g-leakage", method="dpcap.g_leakage"
        ),
        hints=(
            "For each output y, the adversary picks the row w of G maximising "
            "Σ_x π_x W[x,y] G[w,x].",
            "The prior vulnerability may be attained by the safe play.",
        ),
        solution=solution,
        code="answer = dpcap.g_leakage(prior, W, G)",
        mistakes=(
            Mistake(
                "identity_gain",
                "That is the Bayes (identity-gain) leakage: use the gain G with its safe play.",
                _g_leakage(prior, W),
            ),
            Mistake(
                "additive",
                "That is the additive leakage V_g[π▷W] − V_g(π); the question asks for the ratio.",
                post_v - prior_v,
            ),
            Mistake(
                "log",
                "The multiplicative leakage is the ratio itself, not its logarithm.",
                math.log(value),
            ),
        ),
    )
