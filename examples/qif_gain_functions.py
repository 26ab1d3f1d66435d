r"""
Gain functions: what a randomized-response release is worth to different adversaries
====================================================================================

Alvim, Chatzikokolakis, Palamidessi and Smith (CSF 2012) measure leakage by what the adversary
*gains*: a matrix :math:`g(w, x)` gives the worth of action :math:`w` when the secret is
:math:`x`, and

.. math::

   V_g(\pi) = \max_w \sum_x \pi_x g(w, x), \qquad
   V_g[\pi \triangleright W] = \sum_y \max_w \sum_x \pi_x W_{xy}\, g(w, x).

Here the secret is one of :math:`k = 4` values released by k-ary randomized response
(:math:`W_{xx} = e^\varepsilon / s`, :math:`W_{xy} = 1/s` otherwise,
:math:`s = e^\varepsilon + k - 1`), and three adversaries look at it: one guess (Bayes
vulnerability), two guesses (a gain of 1 when the secret is in the guessed pair), and one that
pays for a *wrong* guess (the 0-1 loss, Bayes
risk). Each number is printed beside its closed form:

* Bayes capacity (the uniform prior is worst): :math:`k e^\varepsilon / s`;
* two-guess leakage at the uniform prior: :math:`V_g = 2/k` before and :math:`(e^\varepsilon + 1)/s`
  after (each output makes its own value and any other one the best pair), a ratio
  :math:`k (e^\varepsilon + 1) / (2s)`;
* Bayes-risk capacity :math:`1/(1 - \tau)`, with the rows' total variation
  :math:`\tau = (e^\varepsilon - 1)/s`: :math:`s / k`;

and the miracle theorem (Alvim et al. 2020, Thm 7.5) says no non-negative gain and no prior
leak more than the Bayes capacity: the two-guess capacity, a mixed-integer programme solved by
HiGHS, stays below it.
"""

import itertools
import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dpcap.gain_capacity import g_capacity, risk_capacity
from dpcap.mechanisms import randomized_response
from dpcap.qif import g_leakage, guessing_entropy, posterior_guessing_entropy

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

k = 4
uniform = np.full(k, 1.0 / k)
# one row per pair of secrets: gain 1 when the secret is in the pair
pairs = list(itertools.combinations(range(k), 2))
TWO_GUESSES = np.array([[1.0 if x in pair else 0.0 for x in range(k)] for pair in pairs])

# %%
# Three adversaries, one mechanism
# --------------------------------
#
# :func:`dpcap.gain_capacity.g_capacity` without a gain is the Bayes capacity (closed form);
# with the two-guess gain it solves the programme and certifies a bracket;
# :func:`dpcap.gain_capacity.risk_capacity` is the multiplicative Bayes-risk capacity.

print(f"k = {k} randomized response: capacities (computed | closed form)")
print(
    f"  {'eps':>5} {'Bayes':>20} {'two guesses @ uniform':>26} {'two-guess cap.':>15} {'risk':>20}"
)
rows = []
for eps in (0.25, 0.5, 1.0, 2.0, 3.0):
    W = randomized_response(k, eps).matrix
    s = math.exp(eps) + k - 1
    bayes = g_capacity(W)
    closed_bayes = k * math.exp(eps) / s
    assert bayes.lower <= closed_bayes * (1 + 1e-14)
    assert closed_bayes <= bayes.upper * (1 + 1e-14)
    two = g_leakage(uniform, W, TWO_GUESSES)
    closed_two = k * (math.exp(eps) + 1) / (2 * s)
    assert math.isclose(two, closed_two, rel_tol=1e-12)
    two_cap = g_capacity(W, TWO_GUESSES)
    assert two_cap.lower <= two_cap.upper
    assert two - 1e-12 <= two_cap.upper  # the uniform prior is one prior among all
    assert two_cap.upper <= bayes.upper * (1 + 1e-12)  # the miracle theorem
    risk = risk_capacity(W)
    closed_risk = s / k
    assert risk.lower <= closed_risk * (1 + 1e-13)
    assert closed_risk <= risk.upper * (1 + 1e-13)
    rows.append((eps, bayes.value, two, two_cap.value, risk.value))
    print(
        f"  {eps:5.2f} {bayes.value:9.6f} | {closed_bayes:8.6f} {two:12.6f} | {closed_two:10.6f}"
        f" {two_cap.value:15.6f} {risk.value:9.6f} | {closed_risk:8.6f}"
    )

# %%
# The additive view, and guessing entropy
# ---------------------------------------
#
# The additive Bayes capacity is NP-hard in general (Alvim et al., CSF 2014), but for two
# secrets it is half the total variation between the rows (``docs/mathematics.rst`` §9):
# for binary randomized response :math:`\tfrac12 \tanh(\varepsilon/2)`. Guessing entropy
# drops from :math:`(k + 1)/2` to :math:`1 + (k(k-1)/2)/s` at the uniform prior (the released
# value is tried first, the others in any order).

for eps in (0.5, 2.0):
    W2 = randomized_response(2, eps).matrix
    add = g_capacity(W2, kind="additive")
    closed_add = 0.5 * math.tanh(eps / 2)
    assert add.lower - 1e-12 <= closed_add <= add.upper + 1e-12
    print(f"binary RR eps={eps}: additive Bayes capacity {add.value:.6f} | {closed_add:.6f}")
    W = randomized_response(k, eps).matrix
    s = math.exp(eps) + k - 1
    before, after = guessing_entropy(uniform), posterior_guessing_entropy(uniform, W)
    assert math.isclose(before, (k + 1) / 2, rel_tol=1e-14)
    assert math.isclose(after, 1 + k * (k - 1) / 2 / s, rel_tol=1e-12)
    print(
        f"  k={k} RR: guessing entropy {before:.3f} -> {after:.6f} | {1 + k * (k - 1) / 2 / s:.6f}"
    )

# %%
# The figure: every multiplicative leakage below the Bayes capacity
# -----------------------------------------------------------------

table = np.array(rows)
fine = np.linspace(0.0, 3.0, 200)
s_fine = np.exp(fine) + k - 1
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(fine, k * np.exp(fine) / s_fine, "k-", label=r"Bayes capacity $k e^\varepsilon / s$")
ax.plot(fine, s_fine / k, "C3--", label=r"Bayes-risk capacity $s / k$")
ax.plot(fine, k * (np.exp(fine) + 1) / (2 * s_fine), "C0:", label="two guesses, uniform prior")
ax.plot(table[:, 0], table[:, 3], "o", color="C0", mfc="none", label="two-guess capacity (MILP)")
ax.plot(table[:, 0], table[:, 1], "k.", ms=8)
ax.set_xlabel("ε of k-ary randomized response (k = 4)")
ax.set_ylabel("multiplicative leakage (ratio)")
ax.set_title("g-leakage of randomized response (Alvim et al. 2012)")
ax.legend(frameon=False, loc="upper left")
fig.tight_layout()
fig.savefig(OUT / "qif_gain_functions.png", dpi=120)
