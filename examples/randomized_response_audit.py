r"""
Randomized response, audited: every DP metric beside its closed form
====================================================================

k-ary randomized response reports the true value with probability
:math:`e^\varepsilon/(e^\varepsilon + k - 1)` and each other value with probability
:math:`1/(e^\varepsilon + k - 1)`. Its privacy metrics all have closed forms, which makes it the
first exercise of any course on differential privacy:

* pure DP level: ε;
* :math:`\delta(\varepsilon')` for :math:`\varepsilon' \le \varepsilon`:
  :math:`(e^\varepsilon - e^{\varepsilon'}) / (e^\varepsilon + k - 1)`, the hockey-stick
  divergence of two rows;
* KL-DP of binary randomized response: :math:`\varepsilon\tanh(\varepsilon/2)`, the tight bound
  of Cuff & Yu's Property 1;
* maximal leakage: :math:`\log(k e^\varepsilon / (e^\varepsilon + k - 1))`.
"""

import math
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dpcap
from dpcap import bounds
from dpcap.mechanisms import randomized_response
from dpcap.plots import plot_privacy_profile

OUT = Path(os.environ.get("DPCAP_EXAMPLES_OUT", "out"))
OUT.mkdir(parents=True, exist_ok=True)

k, eps = 4, 1.0
W = randomized_response(k, eps)
e = math.exp(eps)
# The channel carries its neighbour relation, "all" (local DP: every pair of inputs); the DP
# metrics use it unless they are given neighbors= (a truncated geometric carries "line").
assert W.neighbors == "all"

# %%
# The four metrics, computed and in closed form
# ---------------------------------------------
rows = [
    ("pure DP level", dpcap.dp_epsilon(W), eps),
    ("delta at eps'=0 (TV)", dpcap.dp_delta(W, 0.0), (e - 1) / (e + k - 1)),
    ("delta at eps'=0.5", dpcap.dp_delta(W, 0.5), (e - math.exp(0.5)) / (e + k - 1)),
    ("KL-DP of binary RR", dpcap.kl_dp(randomized_response(2, eps)), eps * math.tanh(eps / 2)),
    ("maximal leakage", dpcap.max_leakage(W), math.log(k * e / (e + k - 1))),
]
print(f"{k}-ary randomized response at eps = {eps}")
print(f"  {'metric':<22} {'dpcap':>12} {'closed form':>12}")
for name, computed, closed in rows:
    print(f"  {name:<22} {computed:12.9f} {closed:12.9f}")
    assert math.isclose(computed, closed, rel_tol=1e-12, abs_tol=1e-15), name

# %%
# The Cuff–Yu sandwich
# --------------------
#
# ε-DP ⇒ KL-DP :math:`\le \varepsilon\tanh(\varepsilon/2)` ⇒ MI-DP ≤ KL-DP ⇒ (0, δ′)-DP.
kl = dpcap.kl_dp(W)
print(f"  KL-DP {kl:.6f} <= Property-1 bound {bounds.kl_dp_bound(eps):.6f}")
print(f"  an MI-DP level of {kl:.4f} nats implies (0, {bounds.delta_from_midp(kl):.4f})-DP")

# %%
# The whole δ(ε′) curve, in one call, and a figure
# ------------------------------------------------
#
# :func:`dpcap.dp_delta_curve` evaluates δ on a grid of ε′ in one pass over the pairs of rows;
# :func:`dpcap.plots.plot_privacy_profile` draws it.

grid = np.linspace(0.0, 1.5 * eps, 61)
curve = dpcap.dp_delta_curve(W, grid)
closed_curve = np.maximum(e - np.exp(grid), 0.0) / (e + k - 1)
assert np.allclose(curve, closed_curve, rtol=0, atol=1e-15)

fig, ax = plt.subplots(figsize=(5.5, 3.8))
plot_privacy_profile(grid, {f"{k}-ary RR, ε = {eps} (dpcap.dp_delta_curve)": curve}, ax=ax)
ax.plot(grid, closed_curve, "k:", label="(e^ε − e^ε′)/(e^ε + k − 1)")
ax.set_title(f"{k}-ary randomized response, ε = {eps}")
ax.legend()
fig.tight_layout()
fig.savefig(OUT / "randomized_response_delta.png", dpi=120)
