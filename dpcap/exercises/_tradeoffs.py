"""Families on trade-offs: Mir's risk–distortion R(D), Wang–Ying–Zhang's privacy–distortion
ε*(D), and the privacy funnel of a small joint law."""

from __future__ import annotations

import numpy as np

from dpcap.exercises._common import (
    eps_in_bits,
    exp_for_eps,
    latex_matrix,
    latex_number,
    log_name,
    other_unit,
    rational_rows,
    to_unit,
    unit_of,
)
from dpcap.exercises.core import Exercise, Mistake, Reference
from dpcap.measures import entropy, mutual_information
from dpcap.tradeoffs import privacy_distortion as _privacy_distortion
from dpcap.tradeoffs import privacy_funnel as _privacy_funnel
from dpcap.tradeoffs import rate_distortion as _rate_distortion


def rate_distortion(rng: np.random.Generator, level: str) -> Exercise:
    """R(D) of a binary (by hand) or uniform k-ary source under Hamming distortion."""
    unit = unit_of(rng, level)
    if level == "by_hand":
        k = 2
        q = float(rng.choice([0.2, 0.25, 0.3, 0.4, 0.5]))
        prior = np.array([1 - q, q])
        D = float(rng.choice([d for d in (0.05, 0.1, 0.15, 0.2) if d < min(q, 1 - q)]))
        source = f"a binary source with $P(X = 1) = {q:g}$"
    else:
        k = int(rng.integers(3, 6))
        prior = np.full(k, 1.0 / k)
        D = round(float(rng.uniform(0.05, 0.9 * (k - 1) / k)), 2)
        source = f"a uniform source on $k = {k}$ symbols"
    d = 1.0 - np.eye(k)
    result = _rate_distortion(prior, d, D, unit=unit, tol=1e-11)
    log = log_name(unit)
    prompt = (
        f"**Risk–distortion (Mir).** The data $X$ come from {source}. A sanitising mechanism "
        "$W$ releases $Y$ with expected Hamming distortion $E[d(X, Y)] \\le D$, $D = "
        f"{D:g}$. The least leakage any such mechanism must have is\n\n"
        "$$R(D) = \\min_{W:\\ E d(X,Y) \\le D} I(X; Y).$$\n\n"
        f"Compute $R(D)$ in **{unit}**.\n\nData: `prior`, `d` (distortion matrix), `D`. "
        "Answer: one number."
    )
    closed = "h(q) - h(D)" if k == 2 else f"{log} k - h(D) - D {log}(k - 1)"
    solution = (
        f"For Hamming distortion, $R(D) = {closed} \\approx {latex_number(result.value, 6)}$ "
        f"{unit} ($h$ in {unit}); the optimal mechanism is an exponential mechanism "
        "$W[x,y] \\propto q_y e^{-s\\, d(x,y)}$ (Mir).\n\n"
        f"With dpcap: `dpcap.rate_distortion(prior, d, D, unit='{unit}')`."
    )
    H = to_unit(entropy(prior), unit)
    return Exercise(
        family="rate_distortion",
        level=level,
        title="Risk–distortion R(D) (Mir)",
        prompt=prompt,
        data={"prior": prior, "d": d, "D": D},
        answer_kind="number",
        reference=Reference.of(result, "R(D)", "dpcap.rate_distortion"),
        hints=(
            "Lower-bound I(X;Y) = H(X) − H(X|Y) with Fano: H(X|Y) ≤ h(D) + D log(k − 1).",
            "The bound is attained by a test channel from Y back to X.",
        ),
        solution=solution,
        code=f"answer = dpcap.rate_distortion(prior, d, D, unit={unit!r}).value",
        mistakes=(
            other_unit(result.value, unit),
            Mistake(
                "entropy",
                "That is H(X) = R(0), lossless release; a distortion D buys a smaller leakage.",
                H,
            ),
        ),
    )


def privacy_distortion(rng: np.random.Generator, level: str) -> Exercise:
    """ε*(D) of one k-ary entry, uniform prior, Hamming distortion, all pairs neighbours."""
    k = 2 if level == "by_hand" else int(rng.integers(3, 6))
    if level == "by_hand":
        D = float(rng.choice([0.1, 0.2, 0.25, 0.3, 0.4]))
    else:
        D = round(float(rng.uniform(0.05, 0.85 * (k - 1) / k)), 2)
    prior = np.full(k, 1.0 / k)
    d = 1.0 - np.eye(k)
    result = _privacy_distortion(prior, d, D, shape=(k,), neighbors="all")
    line = _privacy_distortion(prior, d, D, shape=(k,), neighbors="line").value
    prompt = (
        f"**Privacy–distortion (Wang, Ying & Zhang).** One person's value $X$ is uniform on "
        f"$k = {k}$ symbols and every two values are neighbours (local DP). A mechanism $W$ "
        f"must keep the expected Hamming distortion $E[d(X, Y)] \\le D = {D:g}$. Compute the "
        "least privacy level it can have,\n\n"
        "$$\\varepsilon^*(D) = \\min\\{\\varepsilon : W \\text{ is } \\varepsilon\\text{-DP and } "
        "E\\, d(X, Y) \\le D\\},$$\n\nin nats.\n\nData: `prior`, `d`, `D`. Answer: one number."
    )
    solution = (
        "Randomized response is optimal here: at level $\\varepsilon$ its distortion is "
        "$(k-1)/(e^\\varepsilon + k - 1)$, so $\\varepsilon^*(D) = \\ln\\frac{(k-1)(1-D)}{D} "
        f"\\approx {latex_number(result.value, 6)}$ nats.\n\n"
        "With dpcap: `dpcap.privacy_distortion(prior, d, D, shape=(k,), neighbors='all')` "
        "(a certified bracket from the LP)."
    )
    mistakes = [exp_for_eps(result.value), eps_in_bits(result.value)]
    if k > 2:
        mistakes.append(
            Mistake(
                "neighbors",
                "You used adjacent values as the only neighbours; here every two values are "
                "neighbours (local DP), a stronger requirement.",
                line,
            )
        )
    return Exercise(
        family="privacy_distortion",
        level=level,
        title="Privacy–distortion ε*(D) (Wang–Ying–Zhang)",
        prompt=prompt,
        data={"k": k, "prior": prior, "d": d, "D": D},
        answer_kind="number",
        reference=Reference.of(result, "ε*(D)", "dpcap.privacy_distortion"),
        hints=(
            "By symmetry an optimal mechanism treats all values alike: try randomized response.",
            "Set the distortion of k-ary randomized response equal to D and solve for ε.",
        ),
        solution=solution,
        code="answer = dpcap.privacy_distortion(prior, d, D, shape=(len(prior),), "
        "neighbors='all').value",
        mistakes=tuple(mistakes),
    )


def privacy_funnel(rng: np.random.Generator, level: str) -> Exercise:
    """PF(R) of a doubly symmetric binary source (only with dpcap)."""
    unit = unit_of(rng, level)
    joint = rational_rows(rng, 1, 6, 20)[0].reshape(2, 3)
    px = joint.sum(axis=0)
    HX = to_unit(entropy(px), unit)
    R = round(float(rng.uniform(0.2, 0.8)) * HX, 3)
    result = _privacy_funnel(joint, R, unit=unit)
    ISX = mutual_information(joint.sum(axis=1), joint / joint.sum(axis=1, keepdims=True), unit=unit)
    prompt = (
        "**Privacy funnel.** A private bit $S$ and data $X \\in \\{0, 1, 2\\}$ have the "
        "joint law "
        f"(rows $s$, columns $x$)\n\n$$P_{{S,X}} = {latex_matrix(joint)}.$$\n\n"
        "A mechanism $P_{Y|X}$ sees only $X$ ($S - X - Y$). Compute the least leakage about "
        f"$S$ compatible with a utility $I(X;Y) \\ge R = {R:g}$ {unit}:\n\n"
        "$$\\mathrm{PF}(R) = \\min_{P_{Y|X}:\\ I(X;Y) \\ge R} I(S; Y),$$\n\n"
        f"in **{unit}**.\n\nData: `joint`, `R`. Answer: one number."
    )
    solution = (
        "With $q_y = P_{X|Y=y}$ both informations are linear in the weights of the posteriors, "
        "so PF is an LP over a grid of posteriors, refined until its bracket closes: "
        f"$\\mathrm{{PF}}(R) \\approx {latex_number(result.value, 6)}$ {unit}, below the "
        "chord $R\\, I(S;X)/H(X)$ of an erasure mechanism: a posterior that moves $X$ "
        "without moving $S$ buys utility for free.\n\n"
        f"With dpcap: `dpcap.privacy_funnel(joint, R, unit='{unit}')`."
    )
    chord = R * ISX / HX
    return Exercise(
        family="privacy_funnel",
        level=level,
        title="The privacy funnel of a small joint law",
        prompt=prompt,
        data={"joint": joint, "R": R},
        answer_kind="number",
        reference=Reference.of(result, "PF(R)", "dpcap.privacy_funnel"),
        hints=(
            "Write I(X;Y) and I(S;Y) through the posteriors P_{X|Y=y}: both are averages.",
            "An erasure mechanism gives a feasible point, hence an upper bound on PF(R).",
        ),
        solution=solution,
        code=f"answer = dpcap.privacy_funnel(joint, R, unit={unit!r}).value",
        mistakes=(
            other_unit(result.value, unit),
            Mistake(
                "erasure",
                "That is what an erasure mechanism achieves (the chord R·I(S;X)/H(X)); the "
                "optimal mechanism leaks less.",
                chord,
            ),
            Mistake(
                "full",
                "That is I(S;X), the leakage of releasing X itself.",
                ISX,
            ),
        ),
        rtol=5e-3,
    )
