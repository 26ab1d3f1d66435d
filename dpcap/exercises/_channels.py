"""Families on channel capacities: BSC, BEC and Z channels, a capacity-achieving prior, Rényi
capacity and its diameter bound, MI-DP of a noisy count, and the Cuff–Yu sandwich."""

from __future__ import annotations

import math

import numpy as np

from dpcap.bounds import binary_entropy, delta_from_midp, kl_dp_bound
from dpcap.exercises._common import (
    LN2,
    latex_matrix,
    latex_number,
    log_name,
    other_unit,
    rational_rows,
    to_unit,
    unit_of,
)
from dpcap.exercises.core import Exercise, Mistake, Reference
from dpcap.measures import mutual_information, renyi_divergence
from dpcap.mechanisms import counting_query, truncated_geometric
from dpcap.mi_dp import midp
from dpcap.renyi import renyi_capacity as _renyi_capacity
from dpcap.shannon.shannon_capacity import capacity

TIGHT = 1e-12  # the tol of the reference solves: far inside every check's tolerance


# --- BSC, BEC, Z ------------------------------------------------------------------------------

CHANNELS = {
    "bsc": "binary symmetric channel BSC($p$): each bit is flipped with probability $p$",
    "bec": "binary erasure channel BEC($p$): each bit is erased (output ?) with probability $p$",
    "z": "Z channel: a 0 is received intact, a 1 is turned into a 0 with probability $p$",
}


def binary_matrix(kind: str, p: float) -> np.ndarray:
    """The channel of ``kind`` (rows: inputs 0, 1; the BEC's middle column is the erasure)."""
    if kind == "bsc":
        return np.array([[1 - p, p], [p, 1 - p]])
    if kind == "bec":
        return np.array([[1 - p, p, 0.0], [0.0, p, 1 - p]])
    return np.array([[1.0, 0.0], [p, 1 - p]])


def binary_capacity(rng: np.random.Generator, level: str) -> Exercise:
    """Capacity of a BSC, a BEC or a Z channel."""
    kind = str(rng.choice(["bsc", "bec", "z"]))
    unit = unit_of(rng, level)
    if level == "by_hand":
        p = float(rng.choice([0.1, 0.2, 0.25, 0.3, 0.4]))
    else:
        p = round(float(rng.uniform(0.05, 0.45)), 2)
    W = binary_matrix(kind, p)
    result = capacity(W, unit=unit, tol=TIGHT)
    log = log_name(unit)
    prompt = (
        f"**Capacity of a binary channel.** The {CHANNELS[kind]}, with $p = {p:g}$. Its matrix "
        f"(rows are the inputs 0, 1) is\n\n$$W = {latex_matrix(W)}.$$\n\n"
        f"Compute its capacity $C = \\max_\\pi I(X; Y)$ in **{unit}**.\n\n"
        "Data: `W`, `p`. Answer: one number."
    )
    closed = {
        "bsc": f"C = {log} 2 - h(p)",
        "bec": f"C = (1 - p) {log} 2",
        "z": f"C = {log}\\bigl(1 + (1-p)\\, p^{{p/(1-p)}}\\bigr)",
    }[kind]
    solution = (
        f"$${closed} \\approx {latex_number(result.value, 6)}\\ \\text{{{unit}}}.$$\n\n"
        + (
            "The uniform prior is optimal by symmetry.\n\n"
            if kind != "z"
            else "The Z channel is not symmetric: the optimal prior puts less mass on the "
            "noisy input 1.\n\n"
        )
        + f"With dpcap: `dpcap.capacity(W, unit='{unit}')` (a certified bracket)."
    )
    mistakes = [other_unit(result.value, unit)]
    if kind == "bsc":
        h = to_unit(binary_entropy(p), unit)
        mistakes.append(
            Mistake("noise_entropy", "That is H(Y|X) = h(p), the noise; C = log 2 − h(p).", h)
        )
    elif kind == "bec":
        mistakes.append(
            Mistake(
                "erased_fraction",
                "A fraction 1 − p of the bits gets through, not p.",
                p * to_unit(LN2, unit),
            )
        )
    else:
        mistakes.append(
            Mistake(
                "uniform_prior",
                "That is I(X;Y) at the uniform prior; the Z channel's optimal prior is not "
                "uniform.",
                mutual_information([0.5, 0.5], W, unit=unit),
            )
        )
    return Exercise(
        family="binary_capacity",
        level=level,
        title="Capacity of the BSC, BEC and Z channels",
        prompt=prompt,
        data={"W": W, "p": p},
        answer_kind="number",
        reference=Reference.of(result, "capacity", "dpcap.capacity"),
        hints=(
            "Write I(X;Y) = H(Y) − H(Y|X) as a function of the prior P(X=1).",
            "For a symmetric channel the uniform prior is optimal.",
        ),
        solution=solution,
        code=f"answer = dpcap.capacity(W, unit={unit!r}).value",
        mistakes=tuple(mistakes),
    )


# --- a capacity-achieving prior (a prior answer) ----------------------------------------------


def capacity_prior(rng: np.random.Generator, level: str) -> Exercise:
    """A prior that attains the capacity of an asymmetric channel."""
    unit = unit_of(rng, level)
    if level == "by_hand":
        p = float(rng.choice([0.2, 0.3, 0.4, 0.5, 0.6]))
        W = binary_matrix("z", p)
        where = f"the Z channel with $p = {p:g}$"
    else:
        W = rational_rows(rng, 3, 3, 10)
        where = "the channel"
    result = capacity(W, unit=unit, tol=TIGHT)
    prompt = (
        f"**A capacity-achieving prior.** For {where} (rows are inputs)\n\n"
        f"$$W = {latex_matrix(W)},$$\n\n"
        "find a prior $\\pi$ on the inputs that attains the capacity $C = \\max_\\pi I(X;Y)$: "
        "a prior whose $I(\\pi, W)$ is within the tolerance of $C$ is accepted.\n\n"
        "Data: `W`. Answer: the prior, a 1-D array with one entry per input (summing to 1)."
    )
    solution = (
        "At the optimum the divergences $D(W_x \\| \\pi W)$ are equal (to $C$) on the support of "
        "$\\pi$ and no larger off it (the KKT conditions); Blahut–Arimoto finds such a prior. "
        f"Here $\\pi^\\star \\approx {latex_matrix(result.prior, 4)}$ and "
        f"$C \\approx {latex_number(result.value, 6)}$ {unit}.\n\n"
        f"With dpcap: `dpcap.capacity(W, unit='{unit}').prior`."
    )
    n = W.shape[0]
    return Exercise(
        family="capacity_prior",
        level=level,
        title="A capacity-achieving prior",
        prompt=prompt,
        data={"W": W},
        answer_kind="prior",
        reference=Reference(
            result.prior,
            result.lower,
            result.upper,
            unit,
            "a prior attaining the capacity",
            result.status.value,
            "dpcap.capacity",
        ),
        hints=(
            "Make D(W_x ‖ πW) the same for every input x with π_x > 0 (the KKT conditions).",
            "Blahut–Arimoto: π_x ← π_x exp(D(W_x ‖ πW)), normalised, converges to the optimum.",
        ),
        solution=solution,
        code=f"answer = dpcap.capacity(W, unit={unit!r}).prior",
        mistakes=(
            Mistake(
                "uniform_prior",
                "The uniform prior is optimal for symmetric channels only: this one is not.",
                np.full(n, 1.0 / n),
            ),
        ),
        rtol=0.0,
        atol=1e-5,
        channel=W,
    )


# --- Rényi capacity and its diameter bound ----------------------------------------------------


def _diameter(W: np.ndarray, alpha: float, unit: str) -> float:
    return max(
        renyi_divergence(W[a], W[b], alpha, unit=unit)
        for a in range(len(W))
        for b in range(len(W))
        if a != b
    )


def renyi(rng: np.random.Generator, level: str) -> Exercise:
    """Sibson's Rényi capacity C_α, with the radius and diameter bounds."""
    unit = unit_of(rng, level)
    if level == "by_hand":
        p = float(rng.choice([0.1, 0.2, 0.25, 0.3]))
        W = binary_matrix("bsc", p)
        alpha = float(rng.choice([2.0, 3.0]))
        where = f"the binary symmetric channel with $p = {p:g}$"
    else:
        W = rational_rows(rng, 3, 3, 10)
        alpha = float(rng.choice([0.5, 2.0, 3.0]))
        where = "the channel"
    result = _renyi_capacity(W, alpha, unit=unit, tol=TIGHT)
    diameter = _diameter(W, alpha, unit)
    shannon = capacity(W, unit=unit, tol=TIGHT).value
    prompt = (
        f"**Rényi capacity.** For {where} (rows are inputs)\n\n$$W = {latex_matrix(W)},$$\n\n"
        f"compute Sibson's capacity of order $\\alpha = {alpha:g}$,\n\n"
        "$$C_\\alpha = \\max_\\pi \\frac{\\alpha}{\\alpha - 1} \\log \\sum_y \\Bigl(\\sum_x \\pi_x "
        "W[x,y]^\\alpha\\Bigr)^{1/\\alpha} = \\min_Q \\max_x D_\\alpha(W_x \\| Q),$$\n\n"
        f"in **{unit}**. It is non-decreasing in $\\alpha$ ($C_1$ is the Shannon capacity) and at "
        "most the diameter $\\max_{x,x'} D_\\alpha(W_x \\| W_{x'})$.\n\nData: `W`, `alpha`. "
        "Answer: one number."
    )
    solution = (
        "Any $Q$ gives the upper bound $\\max_x D_\\alpha(W_x\\|Q)$ (the radius), any $\\pi$ a "
        "lower bound; they meet at the optimum"
        + (
            " — here the uniform prior and the uniform $Q$, by symmetry"
            if level == "by_hand"
            else ""
        )
        + f": $C_{{{alpha:g}}} \\approx {latex_number(result.value, 6)}$ {unit}, below the "
        f"diameter ${latex_number(diameter, 6)}$.\n\n"
        f"With dpcap: `dpcap.renyi_capacity(W, alpha, unit='{unit}')`."
    )
    return Exercise(
        family="renyi",
        level=level,
        title="Rényi capacity and its radius/diameter bounds",
        prompt=prompt,
        data={"W": W, "alpha": alpha},
        answer_kind="number",
        reference=Reference.of(result, f"C_{alpha:g}", "dpcap.renyi_capacity"),
        hints=(
            "For a symmetric channel the uniform prior is optimal for every α.",
            "The diameter is only an upper bound: the capacity is the radius min_Q max_x D_α.",
        ),
        solution=solution,
        code=f"answer = dpcap.renyi_capacity(W, alpha, unit={unit!r}).value",
        mistakes=(
            other_unit(result.value, unit),
            Mistake(
                "diameter",
                "That is the diameter max D_α(W_x ‖ W_x'), an upper bound; the capacity is the "
                "radius min_Q max_x D_α(W_x ‖ Q).",
                diameter,
            ),
            Mistake(
                "shannon",
                "That is the Shannon capacity (α = 1), an upper bound for α < 1 and a lower bound "
                "for α > 1; the question asks for order α.",
                shannon,
            ),
        ),
    )


# --- MI-DP of a noisy count (Cuff & Yu) -------------------------------------------------------


def midp_count(rng: np.random.Generator, level: str) -> Exercise:
    """MI-DP of a count of n binary entries with truncated geometric noise."""
    unit = unit_of(rng, level)
    if level == "by_hand":
        n = 1
        c = int(rng.choice([2, 3, 4]))
        eps, eps_text = math.log(c), f"\\ln {c}"
    else:
        n = int(rng.integers(3, 9))
        eps = round(float(rng.uniform(0.3, 2.0)), 2)
        eps_text = f"{eps:g}"
    M = counting_query(n, truncated_geometric(n, eps))
    result = midp(M, unit=unit, tol=TIGHT)
    free = capacity(M, unit=unit, tol=TIGHT).value
    log = log_name(unit)
    prompt = (
        f"**MI-DP of a noisy count.** A database holds $n = {n}$ binary entries "
        "$x_1, \\dots, x_n$; the mechanism releases their sum through truncated geometric "
        f"noise on $\\{{0, \\dots, {n}\\}}$ at level $\\varepsilon = {eps_text}$ (so it is "
        "$\\varepsilon$-DP). Compute its mutual-information DP level (Cuff & Yu)\n\n"
        "$$\\varepsilon_{\\mathrm{MI}} = \\max_i \\sup_{P_{X^n}} I(X_i; Y \\mid X^{-i})$$\n\n"
        f"in **{unit}**.\n\nData: `n`, `eps`. Answer: one number."
    )
    solution = (
        "The supremum is a capacity: given the others, entry $i$ moves the count from $k$ to "
        "$k+1$, so $\\varepsilon_{\\mathrm{MI}} = \\max_k C(\\text{rows } k, k+1 \\text{ of the "
        "noise})$"
        + (
            f"; with $n = 1$ the noise is a BSC with $p = 1/(1 + e^\\varepsilon)$ and "
            f"$\\varepsilon_{{\\mathrm{{MI}}}} = {log} 2 - h(p)$"
            if n == 1
            else ""
        )
        + f" $\\approx {latex_number(result.value, 6)}$ {unit}.\n\n"
        "With dpcap: `dpcap.midp(dpcap.mechanisms.counting_query(n, "
        f"dpcap.mechanisms.truncated_geometric(n, eps)), unit='{unit}')`."
    )
    code = (
        "M = dpcap.mechanisms.counting_query(n, dpcap.mechanisms.truncated_geometric(n, eps))\n"
        f"answer = dpcap.midp(M, unit={unit!r}).value"
    )
    mistakes = [
        other_unit(result.value, unit),
        Mistake(
            "dp_level",
            "That is ε, the pure DP level: it bounds MI-DP but is not MI-DP.",
            to_unit(eps, unit),
        ),
        Mistake(
            "sandwich_bound",
            "That is Cuff & Yu's upper bound ε·tanh(ε/2) from ε-DP; compute the MI-DP itself.",
            to_unit(kl_dp_bound(eps), unit),
        ),
    ]
    if n > 1:
        mistakes.append(
            Mistake(
                "free_lunch",
                "That is sup I(X^n; Y), the capacity of the whole mechanism (free-lunch "
                "privacy); MI-DP conditions on the other entries X^{-i}.",
                free,
            )
        )
    return Exercise(
        family="midp_count",
        level=level,
        title="MI-DP of a noisy count (Cuff & Yu)",
        prompt=prompt,
        data={"n": n, "eps": eps},
        answer_kind="number",
        reference=Reference.of(result, "MI-DP", "dpcap.midp"),
        hints=(
            "Fix the other entries: X_i then shifts the count by 0 or 1.",
            "The worst context gives a binary-input channel: its capacity is the answer.",
        ),
        solution=solution,
        code=code,
        mistakes=tuple(mistakes),
    )


# --- the Cuff–Yu sandwich ---------------------------------------------------------------------


def sandwich(rng: np.random.Generator, level: str) -> Exercise:
    """ε-DP ⇒ MI-DP ≤ ε·tanh(ε/2) (by hand); MI-DP ⇒ (0, δ')-DP (with dpcap)."""
    if level == "by_hand":
        unit = unit_of(rng, level)
        eps = float(rng.choice([0.2, 0.5, 1.0, 1.5, 2.0]))
        value = to_unit(kl_dp_bound(eps), unit)
        prompt = (
            f"**The Cuff–Yu sandwich, left side.** A mechanism is $\\varepsilon$-DP with "
            f"$\\varepsilon = {eps:g}$. Give the bound of Cuff & Yu's Property 1 on its MI-DP "
            "level (the tight bound on the KL divergence of one ε-DP pair of rows):\n\n"
            "$$\\varepsilon_{\\mathrm{MI}} \\le \\varepsilon\\, \\frac{(e^\\varepsilon - 1)(1 - "
            "e^{-\\varepsilon})}{(e^\\varepsilon - 1) + (1 - e^{-\\varepsilon})},$$\n\n"
            f"in **{unit}**.\n\nData: `eps` (nats). Answer: one number."
        )
        solution = (
            "The right side simplifies to $\\varepsilon \\tanh(\\varepsilon / 2) \\approx "
            f"{latex_number(value, 6)}$ {unit}; the two rows of binary randomized response attain "
            "it as a KL divergence (its MI-DP, the capacity of a BSC, is much smaller).\n\n"
            f"With dpcap: `dpcap.bounds.kl_dp_bound(eps)` (nats)."
        )
        code = "answer = dpcap.bounds.kl_dp_bound(eps)" + (
            " / math.log(2)" if unit == "bits" else ""
        )
        loose = (  # for ε ≥ 1, min(ε, ε²) is ε: one mistake, not two
            (
                Mistake(
                    "loose",
                    "min(ε, ε²) is a valid bound but not the one of Property 1.",
                    to_unit(min(eps, eps * eps), unit),
                ),
            )
            if eps < 1.0
            else ()
        )
        mistakes: tuple[Mistake, ...] = (
            other_unit(value, unit),
            *loose,
            Mistake(
                "eps", "ε itself is a valid but loose bound; use Property 1.", to_unit(eps, unit)
            ),
        )
        quantity, data = "MI-DP bound", {"eps": eps}
    else:
        unit = ""
        eps = round(float(rng.uniform(0.02, 0.6)), 3)
        value = float(delta_from_midp(eps))
        prompt = (
            "**The Cuff–Yu sandwich, right side.** A mechanism is $\\varepsilon$-MI-DP with "
            f"$\\varepsilon = {eps:g}$ nats. By Cuff & Yu's Lemma 2 it is then $(0, "
            "\\delta')$-DP with\n\n$$\\delta' = 1 - 2\\, h^{-1}(\\ln 2 - \\varepsilon),$$\n\n"
            "$h$ the binary entropy in nats and $h^{-1}$ its inverse on $[0, 1/2]$. Compute "
            "$\\delta'$.\n\nData: `eps`. Answer: one number."
        )
        solution = (
            "Solve $h(x) = \\ln 2 - \\varepsilon$ for $x \\le 1/2$ (bisection), then "
            f"$\\delta' = 1 - 2x \\approx {latex_number(value, 6)}$; it is below "
            "$\\sqrt{2\\varepsilon}$.\n\nWith dpcap: `dpcap.bounds.delta_from_midp(eps)`."
        )
        code = "answer = dpcap.bounds.delta_from_midp(eps)"
        root = float((1.0 - value) / 2.0)
        mistakes = (
            Mistake(
                "pinsker",
                "√(2ε) is the looser bound (eq. 27); the lemma's δ' is smaller.",
                math.sqrt(2 * eps),
            ),
            Mistake("h_inverse", "That is h⁻¹(ln 2 − ε) itself; δ' = 1 − 2h⁻¹(ln 2 − ε).", root),
            Mistake(
                "bits",
                "h is the binary entropy in nats here: ln 2 − ε, not 1 − ε.",
                1.0 - 2.0 * _h_inverse_bits(eps),
            ),
        )
        quantity, data = "δ'", {"eps": eps}
    return Exercise(
        family="sandwich",
        level=level,
        title="The Cuff–Yu sandwich",
        prompt=prompt,
        data=data,
        answer_kind="number",
        reference=Reference(value, value, value, unit, quantity, method="dpcap.bounds"),
        hints=(
            "ε-DP bounds the KL divergence between neighbouring rows, hence MI-DP.",
            "(e^ε − 1)(1 − e^{−ε}) / ((e^ε − 1) + (1 − e^{−ε})) = tanh(ε/2).",
        ),
        solution=solution,
        code=code,
        mistakes=mistakes,
    )


def _h_inverse_bits(eps: float) -> float:
    """The root x ≤ 1/2 of h(x)/ln 2 = 1 − ε (the bits-for-nats slip), by bisection."""
    target = 1.0 - eps
    lo, hi = 0.0, 0.5
    for _ in range(200):
        mid = (lo + hi) / 2
        if binary_entropy(mid) / LN2 < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
