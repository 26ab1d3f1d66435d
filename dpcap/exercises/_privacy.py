"""Families on differential privacy: randomized response and its δ(ε), ε of geometric noise,
the channel of a forced-response survey, and k-fold composition."""

from __future__ import annotations

import math

import numpy as np

from dpcap.accounting import composed_delta
from dpcap.channel import Channel
from dpcap.exercises._common import (
    column_epsilon,
    eps_in_bits,
    exp_for_eps,
    hockey_stick,
    latex_matrix,
    latex_number,
    rational_rows,
)
from dpcap.exercises.core import ROWS_ARE_INPUTS, Exercise, Mistake, Reference
from dpcap.mechanisms import randomized_response, truncated_geometric
from dpcap.privacy import dp_delta, dp_epsilon


def _ln(c: int) -> str:
    return rf"\ln {c}"


# --- randomized response and its δ(ε') ---------------------------------------------------------


def rr_delta(rng: np.random.Generator, level: str) -> Exercise:
    """δ(ε') of k-ary randomized response at level ε (every pair of inputs neighbours)."""
    if level == "by_hand":
        k = int(rng.integers(2, 5))
        c = int(rng.choice([3, 4, 5, 6, 8]))
        c2 = int(rng.integers(2, c))
        eps, eps_prime = math.log(c), math.log(c2)
        eps_text, prime_text = _ln(c), _ln(c2)
    else:
        k = int(rng.integers(4, 11))
        eps = round(float(rng.uniform(0.5, 3.0)), 2)
        eps_prime = round(eps * float(rng.uniform(0.2, 0.8)), 2)
        eps_text, prime_text = f"{eps:g}", f"{eps_prime:g}"
    W = randomized_response(k, eps).matrix
    delta = dp_delta(Channel(W), eps_prime)
    prompt = (
        f"**$k$-ary randomized response.** A respondent holds one of $k = {k}$ values. The "
        "mechanism reports the true value with probability $\\frac{e^\\varepsilon}{e^\\varepsilon"
        " + k - 1}$ and each other value with probability $\\frac{1}{e^\\varepsilon + k - 1}$, "
        f"with $\\varepsilon = {eps_text}$; every pair of inputs are neighbours (local DP).\n\n"
        "The mechanism is $\\varepsilon$-DP. Compute the smallest $\\delta$ for which it is "
        f"$(\\varepsilon', \\delta)$-DP at the smaller level $\\varepsilon' = {prime_text}$:\n\n"
        "$$\\delta(\\varepsilon') = \\max_{x \\ne x'} \\sum_y \\bigl(W[x,y] - e^{\\varepsilon'}"
        " W[x',y]\\bigr)_+ .$$\n\n"
        "Data: `k`, `eps`, `eps_prime` (ε in nats). Answer: one number (δ is a probability)."
    )
    solution = (
        "For $x \\ne x'$ only the output $y = x$ has $W[x,y] > e^{\\varepsilon'} W[x',y]$ "
        "(elsewhere $W[x,y] \\le W[x',y]$), so\n\n"
        "$$\\delta(\\varepsilon') = \\frac{e^\\varepsilon - e^{\\varepsilon'}}{e^\\varepsilon "
        f"+ k - 1}} \\approx {latex_number(delta, 4)}.$$\n\n"
        "With dpcap: `dpcap.dp_delta(dpcap.mechanisms.randomized_response(k, eps), eps_prime)`."
    )
    return Exercise(
        family="rr_delta",
        level=level,
        title="Randomized response and its δ(ε)",
        prompt=prompt,
        data={"k": k, "eps": eps, "eps_prime": eps_prime},
        answer_kind="number",
        reference=Reference(delta, delta, delta, "", "δ(ε')", method="dpcap.dp_delta"),
        hints=(
            "Only outputs where W[x, y] exceeds e^ε' W[x', y] contribute to the sum.",
            "By symmetry every ordered pair x ≠ x' gives the same sum.",
        ),
        solution=solution,
        code="answer = dpcap.dp_delta(dpcap.mechanisms.randomized_response(k, eps), eps_prime)",
        mistakes=(
            Mistake(
                "exp_eps",
                "The hockey-stick sum compares W[x, y] with e^ε' W[x', y]: you seem to have "
                "used ε' where e^ε' belongs.",
                hockey_stick(W, eps_prime),
            ),
            Mistake(
                "tv",
                "That is δ at ε' = 0 (the total variation distance); the question asks at ε'.",
                hockey_stick(W, 1.0),
            ),
            Mistake(
                "pure",
                "δ is 0 only at ε' ≥ ε (pure ε-DP); here ε' < ε, so some mass exceeds the ratio.",
                0.0,
            ),
        ),
    )


# --- ε of truncated geometric noise -----------------------------------------------------------


def geometric_epsilon(rng: np.random.Generator, level: str) -> Exercise:
    """ε of truncated geometric noise on {0..n} under the line relation."""
    if level == "by_hand":
        n = int(rng.integers(2, 4))
        c = int(rng.choice([2, 3, 4]))
        eps = math.log(c)
    else:
        n = int(rng.integers(5, 13))
        eps = round(float(rng.uniform(0.2, 2.0)), 2)
    W = truncated_geometric(n, eps).matrix
    value = dp_epsilon(Channel(W, neighbors="line"))
    shown = latex_matrix(W, 4) if n <= 4 else f"\\text{{({n + 1}×{n + 1}, in the data)}}"
    prompt = (
        f"**Geometric noise on a count.** A count $x \\in \\{{0, \\dots, {n}\\}}$ is released "
        "as $\\mathrm{clamp}(x + Z, 0, " + str(n) + ")$ with two-sided geometric noise $Z$. Its "
        "channel matrix (rows are the true counts $x$, columns the released values $y$) is\n\n"
        f"$$W = {shown}.$$\n\n"
        "Two databases are neighbours when their counts differ by one (adding or removing one "
        "person). Compute the pure DP level\n\n"
        "$$\\varepsilon = \\max_{|x - x'| = 1} \\max_y \\ln \\frac{W[x,y]}{W[x',y]}$$\n\n"
        "in nats. Data: `W` (full precision). Answer: one number."
    )
    solution = (
        "Adjacent rows differ by a factor $e^{\\pm\\varepsilon}$ in every column, including the "
        "clamped end columns, so the level is the noise parameter: "
        f"$\\varepsilon = {latex_number(value, 6)}$ nats.\n\n"
        "With dpcap: `dpcap.dp_epsilon(dpcap.Channel(W, neighbors='line'))`. Without "
        "`neighbors='line'` a plain matrix is read with every pair of rows as neighbours."
    )
    return Exercise(
        family="geometric_epsilon",
        level=level,
        title="ε of geometric noise under the right neighbour relation",
        prompt=prompt,
        data={"W": W},
        answer_kind="number",
        reference=Reference(value, value, value, "nats", "ε", method="dpcap.dp_epsilon"),
        hints=(
            "Compare only rows x and x + 1: a neighbouring database changes the count by one.",
            "Look at the largest log-ratio column by column, the end columns included.",
        ),
        solution=solution,
        code="answer = dpcap.dp_epsilon(dpcap.Channel(W, neighbors='line'))",
        mistakes=(
            Mistake(
                "neighbors",
                "You compared rows that are not neighbours: only counts that differ by one "
                "(adjacent rows) are neighbouring databases, not all pairs.",
                dp_epsilon(Channel(W, neighbors="all")),
            ),
            exp_for_eps(value),
            eps_in_bits(value),
            Mistake(
                "transposed",
                ROWS_ARE_INPUTS + " ε compares rows W[x, ·] and W[x', ·], column by column.",
                column_epsilon(W),
            ),
        ),
    )


# --- the channel of a forced-response survey (a matrix answer) ---------------------------------


def forced_response(rng: np.random.Generator, level: str) -> Exercise:
    """Write the channel matrix of forced response (rows are inputs)."""
    k = 2 if level == "by_hand" else int(rng.integers(3, 5))
    a = float(rng.choice([0.5, 0.6, 0.7, 0.75, 0.8]))
    if k == 2:
        first = int(rng.choice([1, 2, 3, 4, 6, 7, 8, 9]))
        f = np.array([first, 10 - first]) / 10.0
    else:
        f = rational_rows(rng, 1, k, 10)[0]
    W = a * np.eye(k) + (1.0 - a) * np.outer(np.ones(k), f)
    labels = ["no", "yes"] if k == 2 else [f"$c_{i}$" for i in range(k)]
    pairs = zip(labels, f, strict=True)
    forced = ", ".join(f"{lab} with probability {latex_number(v)}" for lab, v in pairs)
    prompt = (
        f"**Forced response.** A survey asks a sensitive question with {k} possible answers "
        f"({', '.join(labels)}). Each respondent privately rolls a die: with probability "
        f"$a = {a:g}$ they answer truthfully; otherwise the die forces the reported answer: "
        f"{forced} (whatever the truth).\n\n"
        "Write the channel matrix $W[x, y] = P(\\text{report } y \\mid \\text{truth } x)$ as a "
        f"${k} \\times {k}$ NumPy array, inputs and outputs in the order listed. Data: `a` and "
        "`f` (the forced distribution). Answer: the matrix."
    )
    solution = (
        "$W = a I + (1 - a) \\mathbf{1} f^\\top$: the truthful branch puts $a$ on the diagonal, "
        "the forced branch adds $(1-a) f_y$ to every row.\n\n"
        f"$$W = {latex_matrix(W, 4)}$$\n\n"
        "Each row sums to 1. With dpcap, `dpcap.Channel(W)` checks that, and "
        "`dpcap.dp_epsilon(dpcap.Channel(W))` gives its local-DP level."
    )
    swapped = a * np.eye(k) + (1.0 - a) * np.outer(np.ones(k), f[::-1])
    return Exercise(
        family="forced_response",
        level=level,
        title="The channel of a forced-response survey",
        prompt=prompt,
        data={"a": a, "f": f},
        answer_kind="matrix",
        reference=Reference(W, W, W, "", "W", method="exact arithmetic"),
        hints=(
            "Condition on the die: W[x, y] = a·[y = x] + (1 − a)·f[y].",
            "Each row W[x, ·] is the law of the report given the truth x: it sums to 1.",
        ),
        solution=solution,
        code="answer = a * np.eye(len(f)) + (1 - a) * np.outer(np.ones(len(f)), f)",
        mistakes=(
            Mistake(
                "forced_order",
                "The forced branch is reversed: check which answer the die forces with which "
                "probability.",
                swapped,
            ),
        ),
        atol=1e-6,
    )


# --- k-fold composition -----------------------------------------------------------------------


def composition(rng: np.random.Generator, level: str) -> Exercise:
    """δ(ε) of the k-fold composition of binary randomized response."""
    if level == "by_hand":
        k = int(rng.integers(2, 4))
        c = int(rng.choice([2, 3, 4]))
        eps0 = math.log(c)
        m = int(rng.integers(1, k))
        eps = m * eps0
        eps0_text, eps_text = _ln(c), (_ln(c) if m == 1 else f"{m}\\ln {c}")
    else:
        k = int(rng.integers(5, 31))
        eps0 = round(float(rng.uniform(0.1, 1.0)), 2)
        eps = round(min(eps0 * math.sqrt(k) * float(rng.uniform(0.8, 2.0)), 0.9 * k * eps0), 2)
        eps0_text, eps_text = f"{eps0:g}", f"{eps:g}"
    W = randomized_response(2, eps0).matrix
    result = composed_delta([Channel(W)] * k, eps)
    one = dp_delta(Channel(W), eps)
    basic = k * dp_delta(Channel(W), eps / k)
    prompt = (
        f"**Composition.** The same bit is released $k = {k}$ times, each time through binary "
        f"randomized response at level $\\varepsilon_0 = {eps0_text}$ (truth with probability "
        "$e^{\\varepsilon_0}/(1 + e^{\\varepsilon_0})$), with independent coins. Compute the "
        f"exact $\\delta$ of the $k$-fold composition at $\\varepsilon = {eps_text}$:\n\n"
        "$$\\delta(\\varepsilon) = \\max_{x \\ne x'} \\sum_{y^k} \\bigl(W^{\\otimes k}[x, y^k] - "
        "e^{\\varepsilon} W^{\\otimes k}[x', y^k]\\bigr)_+ .$$\n\n"
        "Data: `k`, `eps0`, `eps` (nats). Answer: one number."
    )
    solution = (
        "The privacy loss of one release is $\\pm\\varepsilon_0$, with probabilities $p = "
        "e^{\\varepsilon_0}/(1+e^{\\varepsilon_0})$ and $1-p$ under $x$; after $k$ releases it is "
        "$\\varepsilon_0(2j - k)$ with $j \\sim \\mathrm{Bin}(k, p)$, and\n\n"
        "$$\\delta(\\varepsilon) = \\sum_{j=0}^{k} \\binom{k}{j} \\bigl(p^j (1-p)^{k-j} - "
        "e^{\\varepsilon} p^{k-j} (1-p)^{j}\\bigr)_+ "
        f"\\approx {latex_number(result.value, 4)}.$$\n\n"
        "With dpcap: `dpcap.composed_delta([rr] * k, eps).value` with "
        "`rr = dpcap.mechanisms.randomized_response(2, eps0)` (a certified bracket)."
    )
    code = (
        "rr = dpcap.mechanisms.randomized_response(2, eps0)\n"
        "answer = dpcap.composed_delta([rr] * k, eps).value"
    )
    return Exercise(
        family="composition",
        level=level,
        title="k-fold composition of randomized response",
        prompt=prompt,
        data={"k": k, "eps0": eps0, "eps": eps},
        answer_kind="number",
        reference=Reference(
            result.value,
            result.lower,
            result.upper,
            "",
            "δ(ε) of the composition",
            result.status.value,
            "dpcap.composed_delta",
        ),
        hints=(
            "The number j of truthful-looking reports is a sufficient statistic: sum over j.",
            "The composed privacy loss is the sum of k independent losses ±ε₀.",
        ),
        solution=solution,
        code=code,
        mistakes=(
            Mistake(
                "one_release",
                "That is δ(ε) of a single release; the question composes k releases.",
                one,
            ),
            Mistake(
                "basic_composition",
                "k·δ₁(ε/k) is the basic composition bound, an upper bound; the question asks "
                "for the exact δ of the composition.",
                basic,
            ),
        ),
    )
