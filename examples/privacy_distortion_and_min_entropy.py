"""Privacy–distortion ε*(D) and the min-entropy leakage of ε-DP mechanisms.

Two results that Ünsal & Önen, *Information-Theoretic Approaches to Differential Privacy*,
review side by side.

(a) §5, after Wang, Ying and Zhang ("On the relation between identifiability, differential
privacy and mutual-information privacy", IEEE Trans. Inf. Theory 2016): a database is a row of
n entries from {0..m−1}, the output is a database, the distortion is the Hamming distance and
neighbours differ in one entry. The privacy–distortion function ε*(D), the least ε for which
some ε-DP mechanism has expected distortion at most D, is for a uniform prior

    ε*(D) = ln(n/D − 1) + ln(m − 1),     0 < D ≤ n(m − 1)/m     (0 above),

attained by m-ary randomized response on every entry. That mechanism's distortion,
n(m − 1)/(e^ε + m − 1), is the same from every database, so the closed form is an upper bound
on ε*(D) under *every* prior; a skewed prior does better, down to ε* = 0 once D reaches the
distortion of the best constant output, Σ_i (1 − max_v P(x_i = v)).

(b) §4.2–4.3, after Alvim et al.: the min-entropy leakage H_∞(X) − H_∞(X|Y) of a channel is
largest at the uniform prior, where it equals log Σ_y max_x W[x, y] (eq. 51), the maximal
leakage; and an ε-DP channel with two inputs leaks at most log(2e^ε/(1 + e^ε)) (eq. 50), which
binary randomized response attains. Eq. 52 reduces any such channel to a binary one
with the same leakage, log(p̄ + q̄).

Run it with ``python examples/privacy_distortion_and_min_entropy.py``; the figure goes to
``$DPCAP_EXAMPLES_OUT`` (default ``out/``).
"""

# %%
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

import dpcap
from dpcap import bounds
from dpcap.mechanisms import randomized_response

# %% (a) The databases {0, 1, 2}^2 and the Hamming distance between them
n, m = 2, 3
shape = (m,) * n
rows = np.array(np.unravel_index(np.arange(m**n), shape)).T
hamming = (rows[:, None, :] != rows[None, :, :]).sum(axis=-1).astype(float)
top = n * (m - 1) / m  # ε*(D) = 0 from here on under the uniform prior
budgets = np.linspace(0.1, top, 12)


def wyz(budget: float) -> float:
    """Wang–Ying–Zhang's closed form for the uniform prior."""
    return math.log(n / budget - 1) + math.log(m - 1) if budget < top else 0.0


uniform = np.full(m**n, 1.0 / m**n)
curve = dpcap.privacy_distortion_curve(uniform, hamming, budgets, shape=shape)

# A skewed product prior: every entry is 0, 1, 2 with probabilities 0.6, 0.3, 0.1.
marginal = np.array([0.6, 0.3, 0.1])
skewed = np.outer(marginal, marginal).ravel()
skewed_curve = dpcap.privacy_distortion_curve(skewed, hamming, budgets, shape=shape)
d0 = n * (1 - marginal.max())  # the best constant output's distortion: ε* = 0 from here on

print(f"(a) Privacy-distortion on {{0..{m - 1}}}^{n}, Hamming distortion and neighbours")
print(f"  {'D':>6} {'WYZ closed form':>15} {'eps* uniform':>13} {'eps* skewed':>12}")
for k, budget in enumerate(budgets):
    closed = wyz(budget)
    print(f"  {budget:6.3f} {closed:15.9f} {curve.value[k]:13.9f} {skewed_curve.value[k]:12.9f}")
    # The certified bracket holds the closed form (1e-12: the closed form's own rounding).
    assert curve.lower[k] - 1e-12 <= closed <= curve.upper[k] + 1e-12, budget
    assert curve.upper[k] - curve.lower[k] <= 1e-9  # the default tol
    # Per-entry randomized response meets D at the closed-form ε under any prior.
    assert skewed_curve.lower[k] <= closed + 1e-12, budget
    if budget >= d0:
        assert skewed_curve.value[k] == 0.0, budget  # below the closed form wherever D < top
print(
    f"  skewed prior: eps* = 0 from D = {d0:.2f}, where the closed form still asks for "
    f"{wyz(d0):.4f}"
)

# %% (b) Min-entropy leakage of ε-DP channels with two inputs
print("\n(b) Min-entropy leakage (nats) against log(2e^eps/(1+e^eps))")
print(
    f"  {'mechanism':<24} {'eps':>7} {'max leakage':>12} {'bound (50)':>11} {'log(p+q) (52)':>14}"
)


def eq52(W: np.ndarray) -> float:
    """log(p̄ + q̄) of Table 2: merge I = {y : W[0, y] ≤ W[1, y]} into one output."""
    in_I = W[0] <= W[1]
    return math.log(W[0, ~in_I].sum() + W[1, in_I].sum())


rng = np.random.default_rng(12)
sampled = []
for eps in (0.25, 0.5, 1.0, 2.0):
    W = randomized_response(2, eps)
    bound = float(bounds.min_entropy_leakage_bound(eps))
    closed = math.log(2 * math.exp(eps) / (1 + math.exp(eps)))
    assert math.isclose(bound, closed, rel_tol=1e-14)
    # Binary randomized response attains the bound, at the uniform prior (eq. 49).
    ml = dpcap.max_leakage(W)
    assert math.isclose(ml, closed, rel_tol=1e-12)
    assert math.isclose(dpcap.min_entropy_leakage([0.5, 0.5], W), closed, rel_tol=1e-12)
    assert math.isclose(eq52(W.matrix), ml, rel_tol=1e-12)
    print(f"  {'binary RR':<24} {eps:7.3f} {ml:12.9f} {closed:11.9f} {eq52(W.matrix):14.9f}")
for _ in range(300):
    W = rng.dirichlet(np.full(4, 0.7), size=2)  # two inputs, four outputs
    eps = dpcap.dp_epsilon(W)
    if eps > 3.0:
        continue
    ml = dpcap.max_leakage(W)
    # Eq. 51: the maximal leakage is log Σ_y max_x W[x, y], the leakage at the uniform prior.
    assert math.isclose(ml, math.log(W.max(axis=0).sum()), rel_tol=1e-12)
    assert math.isclose(dpcap.min_entropy_leakage([0.5, 0.5], W), ml, rel_tol=1e-12)
    # Any other prior leaks less (eq. 49 is a maximum over priors).
    prior = rng.dirichlet([1.0, 1.0])
    assert dpcap.min_entropy_leakage(prior, W) <= ml + 1e-12
    # Eq. 52: the binary channel that merges I = {y : W[0, y] <= W[1, y]} leaks the same.
    assert math.isclose(ml, eq52(W), rel_tol=1e-12)
    # Eq. 50: the bound for ε-DP channels with two inputs.
    assert ml <= math.log(2 * math.exp(eps) / (1 + math.exp(eps))) + 1e-12
    sampled.append((eps, ml, eq52(W)))
sampled_arr = np.array(sampled)
for eps, ml, merged in sampled[:3]:
    print(
        f"  {'random 2x4 channel':<24} {eps:7.3f} {ml:12.9f} "
        f"{float(bounds.min_entropy_leakage_bound(eps)):11.9f} {merged:14.9f}"
    )
print(f"  ... {len(sampled)} random channels with eps <= 3, all below the bound")

# %% One figure, two panels
out = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpcap.plots import plot_privacy_distortion
except ImportError:  # the `plot` extra is optional
    print("  (matplotlib not installed: no figure)")
else:
    out.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    plot_privacy_distortion(curve, ax=left)
    left.get_lines()[0].set_label(r"$\varepsilon^*(D)$, uniform prior")
    grid = np.linspace(0.08, top, 200)
    left.plot(grid, [wyz(x) for x in grid], "k:", label=r"$\ln(n/D - 1) + \ln(m - 1)$")
    # Markers only: ε* may jump to 0 just below d*(0), between two budgets.
    left.plot(
        budgets,
        skewed_curve.value,
        "s",
        color="C1",
        ms=5,
        label=r"$\varepsilon^*(D)$, prior $(0.6, 0.3, 0.1)^{\otimes 2}$",
    )
    left.axvline(d0, color="C1", lw=0.8, ls="--")
    left.set_title(f"(a) Wang–Ying–Zhang, {{0..{m - 1}}}$^{n}$, Hamming")
    left.legend(frameon=False)

    eps_grid = np.linspace(0.0, 3.0, 200)
    right.plot(
        eps_grid,
        bounds.min_entropy_leakage_bound(eps_grid),
        "k-",
        label=r"$\log(2e^\varepsilon/(1+e^\varepsilon))$, eq. (50)",
    )
    right.plot(
        sampled_arr[:, 0], sampled_arr[:, 1], ".", ms=4, alpha=0.6, label="random 2×4 ε-DP channels"
    )
    rr = [dpcap.max_leakage(randomized_response(2, e)) for e in (0.25, 0.5, 1.0, 2.0)]
    right.plot([0.25, 0.5, 1.0, 2.0], rr, "o", mfc="none", label="binary randomized response")
    right.set_xlabel("ε (dp_epsilon)")
    right.set_ylabel("maximal min-entropy leakage (nats)")
    right.set_title("(b) Alvim et al., Ünsal & Önen §4.3")
    right.legend(frameon=False, loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "privacy_distortion_and_min_entropy.png", dpi=120)
    print(f"  figure: {out / 'privacy_distortion_and_min_entropy.png'}")
