r"""
The privacy–distortion function ε*(D) of Wang, Ying and Zhang
=============================================================

Ünsal & Önen, *Information-Theoretic Approaches to Differential Privacy*, §5, review the
privacy–distortion problem of Wang, Ying and Zhang (*On the relation between identifiability,
differential privacy and mutual-information privacy*, IEEE Trans. Inf. Theory 2016). A database
is a row of n entries from :math:`\{0, \dots, m-1\}`, the output is a database, the distortion
is the Hamming distance and neighbours differ in one entry. The privacy–distortion function
:math:`\varepsilon^*(D)`, the least ε for which some ε-DP mechanism has expected distortion at
most D, is for a uniform prior

.. math::

   \varepsilon^*(D) = \ln\Bigl(\frac{n}{D} - 1\Bigr) + \ln(m - 1), \qquad
   0 < D \le n(m - 1)/m \quad (0 \text{ above}),

attained by m-ary randomized response on every entry. That mechanism's distortion,
:math:`n(m - 1)/(e^\varepsilon + m - 1)`, is the same from every database, so the closed form
is an upper bound on :math:`\varepsilon^*(D)` under *every* prior; a skewed prior does better,
down to :math:`\varepsilon^* = 0` once D reaches the distortion of the best constant output,
:math:`\sum_i (1 - \max_v P(x_i = v))`: there the closed form fails.

The same survey (eqs. 57–58) compares :math:`\varepsilon^*(D)` with the DP level ε of the
mechanism that minimises the mutual information :math:`I(X; Y)` at the same distortion:
:math:`\varepsilon^*(D) \le \varepsilon \le \varepsilon^*(D) + 2\varepsilon_X`, where
:math:`\varepsilon_X` is the largest log-ratio of the prior on two neighbouring databases.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap.plots import plot_privacy_distortion

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

# %%
# The databases :math:`\{0, 1, 2\}^2` and the Hamming distance between them
# --------------------------------------------------------------------------

n, m = 2, 3
shape = (m,) * n
rows = np.array(np.unravel_index(np.arange(m**n), shape)).T
hamming = (rows[:, None, :] != rows[None, :, :]).sum(axis=-1).astype(float)
top = n * (m - 1) / m  # ε*(D) = 0 from here on under the uniform prior
budgets = np.linspace(0.1, top, 12)


def wyz(budget: float) -> float:
    """Wang–Ying–Zhang's closed form for the uniform prior."""
    return math.log(n / budget - 1) + math.log(m - 1) if budget < top else 0.0


# %%
# The uniform prior, and a skewed one
# -----------------------------------
#
# :func:`dpcap.privacy_distortion_curve` solves the ε-DP linear program at each budget and
# returns a certified bracket. The skewed prior is a product: every entry is 0, 1, 2 with
# probabilities 0.6, 0.3, 0.1.

uniform = np.full(m**n, 1.0 / m**n)
curve = dpcap.privacy_distortion_curve(uniform, hamming, budgets, shape=shape)

marginal = np.array([0.6, 0.3, 0.1])
skewed = np.outer(marginal, marginal).ravel()
skewed_curve = dpcap.privacy_distortion_curve(skewed, hamming, budgets, shape=shape)
d0 = n * (1 - marginal.max())  # the best constant output's distortion: ε* = 0 from here on

print(f"Privacy-distortion on {{0..{m - 1}}}^{n}, Hamming distortion and neighbours (nats)")
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
    f"skewed prior: eps* = 0 from D = {d0:.2f}, where the closed form still asks for {wyz(d0):.4f}"
)
# Where the closed form fails: strictly below it at these budgets (by more than the brackets).
fails = [k for k, b in enumerate(budgets) if skewed_curve.upper[k] < wyz(b) - 1e-6]
print(f"closed form not attained under the skewed prior at D = {np.round(budgets[fails], 3)}")
assert fails
assert budgets[fails[0]] < d0

# %%
# The mechanism of least mutual information (Ünsal & Önen, eq. 57)
# ----------------------------------------------------------------
#
# :func:`dpcap.mi_privacy_distortion` finds the mechanism that minimises :math:`I(X; Y)` at
# distortion D; its ε-DP level (neighbours: one entry differs) lies between
# :math:`\varepsilon^*(D)` and :math:`\varepsilon^*(D) + 2\varepsilon_X` (eq. 58 defines
# :math:`\varepsilon_X`). Under the uniform prior :math:`\varepsilon_X = 0` and the two
# problems share their optimum, randomized response.

print(f"\n  {'prior':<8} {'D':>5} {'eps*(D)':>9} {'eps of MI-optimal':>18} {'eps* + 2 eps_X':>15}")
for name, prior in (("uniform", uniform), ("skewed", skewed)):
    eps_x = max(
        abs(math.log(prior[i] / prior[j]))
        for i in range(m**n)
        for j in range(m**n)
        if hamming[i, j] == 1
    )
    for D in (0.2, 0.4):
        eps_star = dpcap.privacy_distortion(prior, hamming, D, shape=shape)
        mip = dpcap.mi_privacy_distortion(prior, hamming, D)
        eps_mip = dpcap.dp_epsilon(dpcap.Mechanism(mip.mechanism, shape))
        hi = eps_star.upper + 2 * eps_x
        print(f"  {name:<8} {D:5.2f} {eps_star.value:9.5f} {eps_mip:18.5f} {hi:15.5f}")
        # The MI-optimal mechanism is found to the solver's accuracy (slope within 1e-6).
        assert eps_star.lower - 1e-6 <= eps_mip <= hi + 1e-6, (name, D)
        if name == "uniform":
            assert math.isclose(eps_mip, wyz(D), abs_tol=1e-6)

# %%
# The figure: ε*(D) for both priors against the closed form
# ----------------------------------------------------------

fig, ax = plt.subplots(figsize=(6, 4))
plot_privacy_distortion(curve, ax=ax)
ax.get_lines()[0].set_label(r"$\varepsilon^*(D)$, uniform prior")
grid = np.linspace(0.08, top, 200)
ax.plot(grid, [wyz(x) for x in grid], "k:", label=r"$\ln(n/D - 1) + \ln(m - 1)$")
# Markers only: ε* may jump to 0 just below d*(0), between two budgets.
ax.plot(
    budgets,
    skewed_curve.value,
    "s",
    color="C1",
    ms=5,
    label=r"$\varepsilon^*(D)$, prior $(0.6, 0.3, 0.1)^{\otimes 2}$",
)
ax.axvline(d0, color="C1", lw=0.8, ls="--")
ax.set_title(f"Wang–Ying–Zhang, databases {{0..{m - 1}}}$^{n}$, Hamming distortion")
ax.legend(frameon=False)
fig.tight_layout()
fig.savefig(OUT / "wang_ying_zhang_privacy_distortion.png", dpi=120)
